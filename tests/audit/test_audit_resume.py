"""A killed audit resumes from its cache: finished reference models and PDTP leave-one-out models are read,
not retrained, and the results equal those of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from leakaudit.audit import make_config, run_audit

SETTINGS = dict(profile="standard", n_members=150, n_nonmembers=150, epochs=4, seed=11)


def _args(cache, out):
    return [sys.executable, "-m", "leakaudit.cli", "audit", "--profile", "standard", "--n-members", "150",
            "--n-nonmembers", "150", "--seed", "11", "--cache-dir", str(cache), "--out", str(out)]


def test_sigkill_then_resume_matches_uninterrupted(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # the demo learner's epochs are not a flag; run it through a tiny config file instead
    cfg_file = tmp_path / "audit.toml"
    cfg_file.write_text('epochs = 4\n')
    proc = subprocess.Popen(_args(cache, tmp_path / "killed") + ["--config", str(cfg_file)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        if cache.exists() and any(p.suffix == ".npz" for p in cache.rglob("*")):
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the audit finished before it could be killed; make it bigger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_entries = sum(p.suffix == ".npz" for p in cache.rglob("*"))
    assert n_entries >= 1
    assert not (tmp_path / "killed" / "results.json").exists()  # nothing half-written

    resumed = run_audit(make_config(**SETTINGS, cache_dir=cache), tmp_path / "resumed", verbose=False)
    ref = resumed.resources["reference_models"]
    assert ref["chunks_from_cache"] >= 1
    assert ref["trained"] < ref["n_models"]

    fresh = run_audit(make_config(**SETTINGS, cache_dir=tmp_path / "other-cache"), tmp_path / "fresh", verbose=False)
    assert fresh.resources["reference_models"]["trained"] == fresh.resources["reference_models"]["n_models"]
    a = json.loads((tmp_path / "resumed" / "results.json").read_text())
    b = json.loads((tmp_path / "fresh" / "results.json").read_text())
    for d in (a, b):
        for k in ("created", "timings", "resources", "config"):
            d.pop(k)
    assert a == b


def _entries(cache):
    return sum(p.suffix == ".npz" for p in cache.rglob("*")) if cache.exists() else 0


@pytest.mark.slow
def test_sigkill_during_pdtp_then_resume(tmp_path):
    """Killed while the PDTP leave-one-out models train: the finished chunks are read, the rest trained."""
    cache = tmp_path / "cache"
    cfg_file = tmp_path / "audit.toml"
    cfg_file.write_text("epochs = 30\n")
    args = [sys.executable, "-m", "leakaudit.cli", "audit", "--profile", "standard", "--n-members", "300",
            "--n-nonmembers", "300", "--seed", "5", "--cache-dir", str(cache), "--config", str(cfg_file)]
    # 64 reference models in 8 chunks; then PDTP: the full model (1 chunk), then 300 leave-one-out models
    # in blocks of 256 records (chunks of 32 and 6 models)
    n_ref_chunks = 8
    proc = subprocess.Popen(args + ["--out", str(tmp_path / "killed")], env=dict(os.environ, PYTHONUNBUFFERED="1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 900
    while time.time() < deadline and proc.poll() is None and _entries(cache) < n_ref_chunks + 2:
        time.sleep(0.01)
    assert proc.poll() is None, "the audit finished before it could be killed; make it bigger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_at_kill = _entries(cache)
    assert not (tmp_path / "killed" / "results.json").exists()

    settings = dict(profile="standard", n_members=300, n_nonmembers=300, epochs=30, seed=5)
    resumed = run_audit(make_config(**settings, cache_dir=cache), tmp_path / "resumed", verbose=False)
    r = resumed.resources
    assert r["reference_models"]["trained"] == 0 and r["reference_models"]["chunks_from_cache"] == n_ref_chunks
    pd_ = r["pdtp_models"]
    assert pd_["n_models"] == 301
    assert pd_["chunks_from_cache"] >= 2 and 0 < pd_["trained"] < pd_["n_models"]
    # every chunk finished before the kill was read, none retrained
    cached = sum(r[k]["chunks_from_cache"] for k in ("reference_models", "pdtp_models", "noise_floor_models"))
    assert cached == n_at_kill

    fresh = run_audit(make_config(**settings, cache_dir=tmp_path / "other-cache"), tmp_path / "fresh", verbose=False)
    assert fresh.resources["pdtp_models"]["trained"] == 301
    a = json.loads((tmp_path / "resumed" / "results.json").read_text())
    b = json.loads((tmp_path / "fresh" / "results.json").read_text())
    for d in (a, b):
        for k in ("created", "timings", "resources", "config"):
            d.pop(k)
    assert a["dtp"]["n_records"] == 300
    assert a == b
