import numpy as np

from leakaudit.reproduce import yeom_attribute as ya


def test_full_profile_loo_is_computed_once_per_data_and_depth(monkeypatch):
    # the full profile's seeds share one LOO R_cv per depth (tree seed 0) instead of refitting 4,819 trees each
    calls = []
    real = ya._r_emp_r_cv

    def counting(X, y, depth, cv, seed):
        calls.append((depth, cv, seed))
        return real(X, y, depth, cv, seed)

    monkeypatch.setattr(ya, "_r_emp_r_cv", counting)
    monkeypatch.setattr(ya, "_LOO_CACHE", {})
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    first = ya._shared_loo(X, y, 2)
    assert ya._shared_loo(X, y, 2) == first and calls == [(2, "loo", 0)]
    # the cached value is the direct LOO computation of depth-2 trees with tree seed 0
    assert first == real(X, y, 2, "loo", 0)
    ya._shared_loo(X, y, 3)
    ya._shared_loo(X[:-1], y[:-1], 2)  # other data: computed again
    assert calls == [(2, "loo", 0), (3, "loo", 0), (2, "loo", 0)]
