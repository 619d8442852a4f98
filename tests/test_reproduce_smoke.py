"""Every registered reproduction runs its smoke profile and writes the documented JSON shape.

Each smoke run is meant to take under a minute; together they take several, so they are marked slow
(`make test-slow`). The papers' own modules test their reproductions' numbers.
"""

import json

import pytest

from leakaudit import reproduce as rep
from leakaudit.reproduce._judge import STATUSES

rep.load_all()


@pytest.mark.slow
@pytest.mark.parametrize("name", rep.names())
def test_smoke_profile_shape(name, tmp_path):
    res = rep.run(name, profile="smoke", out=tmp_path, random_state=0)
    d = json.loads((tmp_path / f"{name}.json").read_text())
    assert d["name"] == name and d["profile"] == "smoke" and d["seconds"] == res["seconds"]
    assert d["rows"], "a reproduction must report at least one quantity"
    for r in d["rows"]:
        assert set(r) == {"quantity", "paper", "ours", "tolerance", "status", "note", "values", "seeds", "bound",
                          "precision", "reference", "quantity_kind", "points", "verdict"}
        assert r["status"] in STATUSES
        if r["values"] is not None:  # a randomised row: the page re-judges it from these, so they must agree
            assert len(r["values"]) >= 2 and (r["seeds"] is None or len(r["seeds"]) == len(r["values"]))
        assert (r["paper"] is None) == (r["status"] == "no-paper-value")
    assert (tmp_path / f"{name}.md").read_text().startswith(f"## {name}")


def test_every_reproduction_is_listed_once():
    names = rep.names()
    assert len(names) == len(set(names)) and len(names) >= 10
