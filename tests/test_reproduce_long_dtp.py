"""Helpers of the reproductions: per-seed rows with intervals."""

import pytest

from leakaudit.reproduce import _seeds, long_dtp
from leakaudit.reproduce._registry import row


def test_seed_row_judges_the_interval_and_lists_every_seed():
    vals, seeds = [0.50, 0.52, 0.48, 0.51, 0.49], [0, 1, 2, 3, 4]
    r = long_dtp._seed_row("q", 0.53, vals, seeds, 0.0)
    m, lo, hi = _seeds.interval(vals)
    assert r.ours == pytest.approx(0.5) and lo < 0.5 < hi
    assert r.status == ("match" if lo <= 0.53 <= hi else "differs")
    assert long_dtp._seed_row("q", 0.60, vals, seeds, 0.0).status == "differs"
    assert long_dtp._seed_row("q", 0.60, vals, seeds, 0.1).status == "match"
    assert long_dtp._seed_row("q", None, vals, seeds).status == "no-paper-value"
    assert all(f"{v:.4g}" in r.note for v in vals) and "seeds 0-4" in r.note


def test_merge_seed_rows_averages_each_quantity():
    per_seed = [[row("a", 1.0, v, 0.5, "n"), row("b", None, 2 * v)] for v in (1.0, 2.0, 3.0, 4.0, 5.0)]
    merged = long_dtp._merge_seed_rows(per_seed, list(range(5)))
    assert [r.quantity for r in merged] == ["a", "b"]
    assert merged[0].ours == pytest.approx(3.0) and merged[1].ours == pytest.approx(6.0)
    assert merged[0].note.startswith("n; seeds 0-4")


def test_seed_row_leaves_out_seeds_without_a_value():
    r = long_dtp._seed_row("q", None, [0.5, float("nan"), 0.7], [0, 1, 2])
    assert r.ours == pytest.approx(0.6) and "of the 2 seeds with a value" in r.note and "nan" in r.note
    assert long_dtp._seed_row("q", 0.6, [float("nan")] * 3, [0, 1, 2]).status == "differs"
