"""Commands on a full file system and under a memory limit (issue 51): one line, exit status 2, nothing partial.

The full file system is a small tmpfs mounted for the test and filled to the last block (mounting needs root;
the tests are skipped, saying why, where it cannot be mounted). The memory limit is ``RLIMIT_AS`` set in the
child process that runs the command.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leakaudit.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def full_fs(tmp_path):
    """A folder on a tmpfs of 256 KiB with no block left (files can still be created, not written)."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here ({' '.join((r.stderr or 'mount failed').split())}); "
                    "the full-disk tests need root")
    try:
        with open(mnt / "filler", "wb", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"\0" * 4096)
            except OSError:
                pass
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _one_line_exit_2(capsys, argv, *, warned_first: bool = False) -> str:
    """The error's one line (exit 2); ``warned_first``: after the one warning line a predictions-only audit prints
    before any work, under --quiet too."""
    rc = main(argv)
    err = capsys.readouterr().err
    if warned_first:
        first, _, err = err.partition("\n")
        assert first.startswith("leakaudit: warning: NotEstimableWarning: ") and "publish" in first, first
    assert rc == 2 and err.startswith("leakaudit: error: ") and err.count("\n") == 1, (rc, err)
    assert "Traceback" not in err
    return err


def _left(folder: Path) -> list[str]:
    """Everything under ``folder`` but the filler: what a failed command left behind."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.name != "filler")


def test_dtp_result_on_a_full_disk(full_fs, capsys):
    out = full_fs / "pdtp.json"
    err = _one_line_exit_2(capsys, ["dtp", "pdtp", "--data", "adult-proxy", "--model", "nb", "--rows", "40",
                                    "--out", str(out)])
    assert str(out) in err and "no space left" in err
    assert _left(full_fs) == []


def test_membership_outputs_on_a_full_disk(full_fs, capsys, tmp_path):
    out = full_fs / "m"
    err = _one_line_exit_2(capsys, ["membership", "--dataset", "adult", "--model", "logreg", "--attacks", "loss",
                                    "--n-members", "40", "--n-nonmembers", "40", "--n-population", "0",
                                    "--n-reference", "2", "--n-boot", "10", "--out", str(out)])
    assert "membership.json" in err and "no space left" in err
    assert [p for p in _left(full_fs) if p != "m"] == []  # the empty folder at most


def test_cache_on_a_full_disk_stays_consistent(full_fs, capsys, tmp_path):
    cache = full_fs / "cache"
    err = _one_line_exit_2(capsys, ["membership", "--dataset", "adult", "--model", "logreg", "--attacks", "lira",
                                    "--n-members", "40", "--n-nonmembers", "40", "--n-population", "0",
                                    "--n-reference", "2", "--n-boot", "10", "--out", str(tmp_path / "m"),
                                    "--cache-dir", str(cache)])
    assert "cache entry" in err and "no space left" in err
    assert not list(cache.rglob("*.tmp"))
    for entry in cache.rglob("*.npz"):  # whatever is there is whole
        with np.load(entry, allow_pickle=False) as z:
            assert "__checksum__" in z.files
    assert not (tmp_path / "m" / "membership.json").exists()


def test_audit_outputs_on_a_full_disk(full_fs, capsys, tmp_path):
    rng = np.random.default_rng(0)
    for name in ("mem", "non"):
        x = rng.normal(size=(60, 2))
        pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": (x[:, 0] > 0).astype(int)}).to_csv(tmp_path / f"{name}.csv",
                                                                                         index=False)
    pd.DataFrame(np.full((60, 2), 0.5), columns=["0", "1"]).to_csv(tmp_path / "p.csv", index=False)
    base = ["audit", "--train", str(tmp_path / "mem.csv"), "--test", str(tmp_path / "non.csv"), "--label", "y",
            "--predictions-train", str(tmp_path / "p.csv"), "--predictions-test", str(tmp_path / "p.csv"),
            "--cache-dir", str(tmp_path / "cache")]
    err = _one_line_exit_2(capsys, [*base, "--out", str(full_fs / "c"), "--check-inputs"])
    assert "inputs.json" in err and "no space left" in err
    err = _one_line_exit_2(capsys, [*base, "--out", str(full_fs / "o"), "--profile", "smoke", "--quiet"],
                           warned_first=True)
    assert "no space left" in err
    assert [p for p in _left(full_fs) if p not in ("c", "o")] == []  # no results, no half-written temp folder
    assert not any((full_fs / d).exists() and any((full_fs / d).iterdir()) for d in ("c", "o"))


def _limited(argv: list[str], limit_bytes: int) -> subprocess.CompletedProcess:
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "leakaudit.cli", *argv], capture_output=True, text=True,
                          preexec_fn=limit, env=env, timeout=300)


@pytest.mark.parametrize("argv", [
    ["mip", "calibrate", "--eta", "0.1", "--dim", "1000000000"],
    pytest.param(["dtp", "pdtp", "--data", "purchase-like", "--rows", "100000000", "--model", "logreg"],
                 marks=pytest.mark.slow),  # about 21 s
])
def test_a_command_past_its_memory_limit_ends_in_one_line(argv, tmp_path):
    r = _limited(argv, 3 * 2**30)
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    assert r.stderr.startswith("leakaudit: error: ") and r.stderr.count("\n") == 1, r.stderr[-500:]
    assert "memory" in r.stderr.lower()
