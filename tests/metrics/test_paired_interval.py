"""The paired-difference interval shared by the removal and MIP accuracy costs."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError


def test_paired_mean_interval_matches_the_t_free_normal_formula_and_covers_the_truth():
    from leakaudit.metrics import paired_mean_interval

    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(400):
        a = rng.random(200) < 0.8
        b = rng.random(200) < 0.7
        m, (lo, hi) = paired_mean_interval(a, b)
        d = a.astype(float) - b.astype(float)
        assert m == pytest.approx(d.mean())
        assert hi - m == pytest.approx(1.959964 * d.std(ddof=1) / np.sqrt(200), rel=1e-5)
        covered += lo <= 0.1 <= hi
    assert 0.92 <= covered / 400 <= 0.98
    assert paired_mean_interval([1.0], [0.0])[1] == (float("-inf"), float("inf"))
    with pytest.raises(InvalidInputError, match="shapes"):
        paired_mean_interval([1, 0], [1])
