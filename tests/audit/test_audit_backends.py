"""The audit gives the same results on the in-process, process and Ray backends (a local 2-CPU Ray instance)."""

import json

import pytest

from leakaudit.audit import make_config, run_audit

SMALL = dict(profile="smoke", n_members=120, n_nonmembers=120, epochs=2, seed=5)


def _strip(path):
    d = json.loads(path.read_text())
    for k in ("created", "timings", "resources", "config"):
        d.pop(k)
    return d


@pytest.mark.ray
def test_process_and_ray_backends_match_inprocess(tmp_path):
    pytest.importorskip("ray")
    outs = {}
    for backend in ("inprocess", "process", "ray"):
        res = run_audit(make_config(**SMALL, backend=backend, cache_dir=tmp_path / f"cache-{backend}"),
                        tmp_path / backend, verbose=False)
        assert res.resources["reference_models"]["backend"] == backend
        assert res.resources["reference_models"]["trained"] == res.resources["reference_models"]["n_models"]
        outs[backend] = _strip(tmp_path / backend / "results.json")
    assert outs["process"] == outs["inprocess"]
    assert outs["ray"] == outs["inprocess"]
