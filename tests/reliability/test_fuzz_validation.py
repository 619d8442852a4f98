"""Fuzz the boundary checks: they return arrays meeting their contract or raise our error naming the argument."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from leakaudit import _validation as V

from ._fuzz import BUDGET_PARAMS, run_fuzz, valid_or_clear_error
from ._strategies import any_array, probability_matrix


@BUDGET_PARAMS
def test_check_array_family(budget):
    def prop(case):
        x, ndim, allow_nan, allow_empty = case
        a = valid_or_clear_error(V.check_array, x, name="xarg", ndim=ndim, allow_nan=allow_nan,
                                 allow_empty=allow_empty, names=("xarg",))
        if a is not None:
            assert a.dtype == np.float64
            if ndim is not None:
                assert a.ndim == ndim
            if not allow_empty:
                assert a.size > 0
            if not allow_nan:
                assert np.isfinite(a).all()
        v = valid_or_clear_error(V.check_vector, x, name="vec", names=("vec",))
        if v is not None:
            assert v.ndim == 1 and v.size and np.isfinite(v).all()

    strat = st.tuples(any_array(), st.sampled_from([None, 0, 1, 2, 3]), st.booleans(), st.booleans())
    run_fuzz("validation.check_array", strat, prop, budget)


@BUDGET_PARAMS
def test_check_labels_indices_probabilities(budget):
    def prop(case):
        y, n_classes, p, n = case
        lab = valid_or_clear_error(V.check_labels, y, name="yarg", n_classes=n_classes, names=("yarg",))
        if lab is not None:
            assert lab.dtype == np.int64 and lab.ndim == 1 and lab.min() >= 0
            assert np.array_equal(lab, np.asarray(y).astype(np.int64))  # no silent rounding or wrap-around
            if n_classes is not None:
                assert lab.max() < n_classes
        idx = valid_or_clear_error(V.check_indices, y, name="idx", n=n, names=("idx",))
        if idx is not None:
            assert idx.dtype == np.int64 and (idx.size == 0 or (idx.min() >= 0 and idx.max() < n))
        pr = valid_or_clear_error(V.check_probabilities, p, name="probs", names=("probs",))
        if pr is not None:
            assert pr.min() >= 0 and np.allclose(pr.sum(1), 1, atol=1e-3) and pr.shape[1] >= 2

    strat = st.tuples(any_array(max_dims=2), st.one_of(st.none(), st.integers(1, 5)), probability_matrix(),
                      st.integers(1, 8))
    run_fuzz("validation.labels_indices_probabilities", strat, prop, budget)


@BUDGET_PARAMS
def test_check_scalar_and_choice(budget):
    def prop(case):
        x, lo, hi = case
        r = valid_or_clear_error(V.check_scalar, x, name="param", min_val=lo, max_val=hi, names=("param",))
        if r is not None:
            assert np.isfinite(float(r)) and lo <= r <= hi
        valid_or_clear_error(V.check_choice, x, name="opt", choices=("a", 1), names=("opt",))

    scal = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.booleans(), st.none(),
                     st.text(max_size=2), st.just([1.0]), st.just(np.float32(0.5)), st.just(np.int64(3)))
    run_fuzz("validation.scalar_choice", st.tuples(scal, st.floats(-10, 0), st.floats(0, 10)), prop, budget)
