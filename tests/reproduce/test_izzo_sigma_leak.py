"""izzo-adult's sigma-leak rows: the same quantities in every seed, so that rows merge over seeds even when a seed's
sample holds no record with a unique category (the full profile's larger samples)."""

import numpy as np

from leakaudit.reproduce.izzo import sigma_leak_rows


def test_a_sample_without_unique_categories_gives_the_same_rows_without_values():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # every column non-zero in two rows
    rows = sigma_leak_rows(X, np.array([0, 1, 0, 1]), tr=None, games=2, B=4)
    assert [r.quantity for r in rows] == [
        f"sigma leak, Algorithm 1 with sigma_split={s}, eta=0.1: attack acc - 1/2 (95% CI lower)"
        for s in ("half_of_train", "half_of_full")]
    assert all(r.ours is None and "not measurable in this seed" in r.note for r in rows)
