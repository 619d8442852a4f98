"""The same seed gives the same audit whatever the BLAS thread count (the audit pins BLAS to one thread).

OpenBLAS splits some products over its threads in another summation order (1 ulp apart on AVX2): before
the audit pinned BLAS, an audit under OMP_NUM_THREADS=1 (as Ray leaves it in its driver) and one with
two BLAS threads differed in the 9th digit of the property estimate.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ._audit_runs import CONFIG, comparable


@pytest.mark.slow  # two standard audits in subprocesses (about 27 s)
def test_audit_results_do_not_depend_on_blas_threads(tmp_path):
    cfg = tmp_path / "audit.toml"
    cfg.write_text(CONFIG)
    outs = []
    for threads in ("1", "2"):
        env = {**os.environ, "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        env.pop("LEAKAUDIT_CACHE", None)
        out = tmp_path / f"t{threads}"
        res = subprocess.run([sys.executable, "-m", "leakaudit.cli", "audit", "--config", str(cfg), "--cache-dir",
                              str(tmp_path / f"cache{threads}"), "--out", str(out)], env=env, capture_output=True,
                             text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        outs.append(comparable(out / "results.json"))
    assert outs[0] == outs[1]
