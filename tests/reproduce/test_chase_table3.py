"""chase-table3: shadow counts per profile, the derived time ratio's precision, and the rows judged by the seed rule.

The white box and the sweeps are replaced by recorders, so these tests check what the reproduction asks for and how
it reports it, without training.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from leakaudit.property import game, whitebox
from leakaudit.reproduce import chase
from leakaudit.reproduce._judge import paper_rounding


@pytest.fixture
def calls(monkeypatch):
    seen = {"wb": [], "bb": []}

    def fake_whitebox(data, *, t0, t1, n_train, hidden, epochs, n_shadow, n_targets, random_state, **kw):
        seen["wb"].append({"k": n_shadow, "epochs": epochs, "targets": n_targets, "seed": random_state})
        stats = SimpleNamespace(n_models=2 * n_shadow + n_targets, seconds=10.0)
        # WB seconds 30 s a seed (sorted), so that the ratio's values are known
        return {m: SimpleNamespace(accuracy=0.5, auc=0.5, seconds=30.0 if m == "sorted" else 40.0,
                                   engine_stats=stats) for m in whitebox.META_CLASSIFIERS}

    def fake_sweep(setting, cfg, p_grid, *, k=None, seed=0, **kw):
        seen["bb"].append({"setting": setting, "p": tuple(p_grid), "k": k})
        res = SimpleNamespace(accuracy=0.75, seconds_fit=4.0, seconds_targets=1.0)
        return {p: [(res, 1.0 + i) for i in range(cfg["reps"])] for p in p_grid}  # BB seconds 5, 6, 7, ...

    monkeypatch.setattr(whitebox, "whitebox_attack", fake_whitebox)
    monkeypatch.setattr(chase, "_sweep", fake_sweep)
    monkeypatch.setattr(chase, "_data", lambda *a, **k: np.zeros(30))
    monkeypatch.setattr(game, "split_pools", lambda n, random_state: (np.arange(10), np.arange(10, 30)))
    return seen


def test_ratio_precision_is_half_a_second_on_each_printed_time_propagated():
    # 1533.5 / 160.5 - 1533 / 161 = 0.03278 (the larger side; 1533 / 161 - 1532.5 / 161.5 = 0.03257)
    assert chase._ratio_precision(1533, 161) == pytest.approx(0.032778, abs=1e-6)
    # first order: ratio * (0.5 / 1533 + 0.5 / 161) = 0.03268, so the exact bound is close to the linear one
    assert chase._ratio_precision(1533, 161) == pytest.approx(1533 / 161 * (0.5 / 1533 + 0.5 / 161), rel=0.01)
    assert chase._ratio_precision(10, 10, half_unit=0.0) == 0.0


def test_full_uses_the_papers_shadow_counts_per_world(calls):
    chase.table3("full", 0)
    assert {c["k"] for c in calls["wb"]} == {1000} and {c["epochs"] for c in calls["wb"]} == {20}
    assert {c["targets"] for c in calls["wb"]} == {chase.CONFIG["full"]["targets"]}
    per_row = {(c["setting"], c["p"][0]): c["k"] for c in calls["bb"]}
    assert per_row == {(s, p): k for s, cells in chase.TABLE3_BB.items() for (p, k) in cells}


def test_reduced_keeps_a_tenth_without_poison_and_half_with(calls):
    chase.table3("reduced", 0)
    assert {c["k"] for c in calls["wb"]} == {100}
    assert [c["seed"] for c in calls["wb"]] == [0, 1, 2, 3, 4] * 3
    assert {c["p"][0]: c["k"] for c in calls["bb"]} == {0.0: 100, 0.03: 50, 0.05: 50, 0.10: 25}


def test_rows_are_over_seeds_and_the_ratio_carries_its_precision(calls):
    rows = {r.quantity: r for r in chase.table3("reduced", 0)}
    ratio = rows["census-gender WB/BB time ratio"]
    want = chase._ratio_precision(1533, 161)
    assert ratio.paper == pytest.approx(1533 / 161)
    assert ratio.precision == pytest.approx(want) and ratio.tolerance == pytest.approx(want)
    # WB 30 s against BB 5, 6, 7, 8, 9 s (ensemble 1-5 s plus 4 s of shadows and M_A)
    assert ratio.values == pytest.approx(tuple(30.0 / b for b in (5, 6, 7, 8, 9)))
    assert "precision 0.033" in ratio.note
    for q, r in rows.items():
        assert r.seeds == (0, 1, 2, 3, 4), q
        if q != "census-gender WB/BB time ratio":
            # no row keeps a tolerance of its own: the paper's rounding is the only widening
            assert r.precision is None and r.tolerance == pytest.approx(paper_rounding(r.paper)), q
