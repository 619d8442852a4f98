"""Every registered reproduction runs its smoke profile and writes the documented JSON shape.

Each smoke run is meant to take under a minute; together they take several, so they are marked slow
(`make test-slow`). The papers' own modules test their reproductions' numbers.
"""

import json

import pytest

from leakaudit import reproduce as rep

rep.load_all()


@pytest.mark.slow
@pytest.mark.parametrize("name", rep.names())
def test_smoke_profile_shape(name, tmp_path):
    res = rep.run(name, profile="smoke", out=tmp_path, random_state=0)
    d = json.loads((tmp_path / f"{name}.json").read_text())
    assert d["name"] == name and d["profile"] == "smoke" and d["seconds"] == res["seconds"]
    assert d["rows"], "a reproduction must report at least one quantity"
    for r in d["rows"]:
        assert set(r) == {"quantity", "paper", "ours", "tolerance", "status", "note"}
        assert r["status"] in ("match", "differs", "no-paper-value")
        assert (r["paper"] is None) == (r["status"] == "no-paper-value")
    assert (tmp_path / f"{name}.md").read_text().startswith(f"## {name}")


def test_every_reproduction_is_listed_once():
    names = rep.names()
    assert len(names) == len(set(names)) and len(names) >= 10
