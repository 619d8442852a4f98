"""Smoke profiles of the Chase et al. reproductions (synthetic stand-ins; slow)."""

import pytest

from leakaudit import reproduce as rep

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", ["chase-fig1", "chase-fig5-6"])
def test_smoke_profiles_run(name, tmp_path):
    rep.load_all()
    res = rep.run(name, profile="smoke", out=tmp_path, random_state=0)
    assert res["rows"] and (tmp_path / f"{name}.md").exists()
    # smoke runs on synthetic data: no row may claim a comparison with the paper
    assert all(r["status"] == "no-paper-value" for r in res["rows"])


def test_all_chase_reproductions_are_registered():
    rep.load_all()
    want = {"chase-fig1", "chase-fig1-mlp", "chase-fig2", "chase-fig3", "chase-fig4", "chase-fig5-6", "chase-gender",
            "chase-table2", "chase-table3"}
    assert want <= set(rep.names())

