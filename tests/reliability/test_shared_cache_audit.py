"""Two audits sharing one cache folder at the same time do not corrupt it (issue #11, "Killed runs").

Two ``leakaudit audit`` processes run the same small demo audit with the same ``--cache-dir`` at once.
Both must finish, give results.json equal (apart from timestamps, durations, memory and cache counts)
to a solo run with its own cache, and leave a cache whose every entry loads and passes its checksum:
a third run reads every chunk from it and trains nothing. (tests/engine covers two processes sharing
an Engine cache; this covers the whole audit, whose membership and property stages both write to it.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import pytest

from leakaudit.audit import load_config, run_audit
from leakaudit.engine import CacheWarning, ChunkCache

from ._audit_runs import CONFIG, comparable


@pytest.mark.slow
def test_two_audits_share_one_cache_at_once(tmp_path):
    cfg_file = tmp_path / "audit.toml"
    cfg_file.write_text(CONFIG)
    shared = tmp_path / "shared-cache"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("LEAKAUDIT_CACHE", None)
    procs = [subprocess.Popen([sys.executable, "-W", "always::UserWarning", "-m", "leakaudit.cli", "audit",
                               "--config", str(cfg_file), "--cache-dir", str(shared), "--out", str(tmp_path / f"run{i}")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    # Both must be running at the same time (neither may finish before the other has started).
    time.sleep(0.5)
    assert all(p.poll() is None for p in procs), "an audit finished before the other started; make it bigger"
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err.decode()[-3000:]
        assert b"CacheWarning" not in err and b"corrupt" not in err, err.decode()[-3000:]

    solo = run_audit(load_config(cfg_file, cache_dir=tmp_path / "solo-cache"), tmp_path / "solo", verbose=False)
    assert solo.resources["reference_models"]["trained"] == solo.resources["reference_models"]["n_models"]
    want = comparable(tmp_path / "solo" / "results.json")
    for i in range(2):
        res = json.loads((tmp_path / f"run{i}" / "results.json").read_text())
        assert res["resources"]["reference_models"]["corrupt_cache_entries"] == 0
        assert comparable(tmp_path / f"run{i}" / "results.json") == want, f"run{i} differs from the solo run"

    # Every entry of the shared cache is sound, and no temporary file is left behind.
    cache = ChunkCache(shared)
    entries = cache.entries()
    assert entries
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        for p in entries:
            payload, corrupt = cache.read(p.stem)
            assert payload is not None and not corrupt, p
    assert not list(shared.rglob("*.tmp")), "temporary files left in the shared cache"

    # A third run finds every reference chunk in the shared cache and gives the same results.
    third = run_audit(load_config(cfg_file, cache_dir=shared), tmp_path / "third", verbose=False)
    ref = third.resources["reference_models"]
    assert ref["trained"] == 0 and ref["corrupt_cache_entries"] == 0
    assert ref["chunks_trained"] == 0 and ref["chunks_from_cache"] >= 1
    assert comparable(tmp_path / "third" / "results.json") == want
