"""Hypothesis strategies for hostile inputs: odd shapes, dtypes, NaN/inf, huge values, bad probabilities."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Floats from every corner: NaN, +-inf, subnormals, huge magnitudes, signed zeros.
nasty_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 1e300, -1e300, 5e-324, np.nan, np.inf, -np.inf]),
)
plain_floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)

DTYPES = st.sampled_from(["float64", "float32", "float16", "int64", "int8", "uint8", "bool", "complex128", "<U3"])


@st.composite
def any_array(draw, *, max_dims: int = 3, max_side: int = 6, dtype=None):
    """An array of a random shape (including 0-d and empty) and dtype, with hostile values."""
    dt = np.dtype(draw(DTYPES) if dtype is None else dtype)
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side))
    if dt.kind == "f":
        elems = nasty_floats.filter(lambda v: np.isnan(v) or np.isinf(v) or abs(v) <= float(np.finfo(dt).max))
    elif dt.kind == "c":
        elems = st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False)
    elif dt.kind == "U":
        elems = st.text(alphabet="01ab.-", max_size=3)
    elif dt.kind == "b":
        elems = st.booleans()
    else:
        info = np.iinfo(dt)
        elems = st.integers(int(info.min), int(info.max))
    return draw(hnp.arrays(dt, shape, elements=elems))


@st.composite
def membership_inputs(draw, *, max_n: int = 40):
    """(is_member, scores): mostly well-formed, often with one thing wrong."""
    n = draw(st.integers(0, max_n))
    kind = draw(st.sampled_from(["good", "good", "good", "one_class", "bad_labels", "nan", "length", "weird"]))
    m = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
    s = draw(hnp.arrays(np.float64, n, elements=st.one_of(plain_floats, st.sampled_from([0.0, 1.0, 1e300, -1e300]))))
    if kind == "good" and n >= 2:
        m[0], m[1] = 1, 0
    elif kind == "one_class":
        m[:] = draw(st.integers(0, 1))
    elif kind == "bad_labels" and n:
        m[draw(st.integers(0, n - 1))] = draw(st.sampled_from([2, -1]))
    elif kind == "nan" and n:
        s[draw(st.integers(0, n - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    elif kind == "length":
        s = np.append(s, 0.5)
    elif kind == "weird":
        return draw(any_array(max_dims=2)), draw(any_array(max_dims=2))
    return m, s


@st.composite
def probability_matrix(draw, *, max_n: int = 12, max_c: int = 5, n=None, c=None, hostile: bool = True):
    """(n, C) class probabilities; with ``hostile``, sometimes unnormalised, negative, NaN, or of one column."""
    n = draw(st.integers(0, max_n)) if n is None else n
    c = draw(st.integers(1, max_c)) if c is None else c
    raw = draw(hnp.arrays(np.float64, (n, c), elements=st.floats(0, 1, allow_nan=False)))
    raw = raw + 1e-12
    p = raw / raw.sum(axis=1, keepdims=True) if n else raw
    if hostile and n:
        how = draw(st.sampled_from(["ok", "ok", "unnormalised", "negative", "nan", "huge", "onehot"]))
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, c - 1))
        if how == "unnormalised":
            p = p * draw(st.sampled_from([0.5, 2.0, 10.0]))
        elif how == "negative":
            p[i, j] = -draw(st.floats(1e-6, 1.0))
        elif how == "nan":
            p[i, j] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        elif how == "huge":
            p[i, j] = 1e300
        elif how == "onehot":
            p = np.eye(c)[draw(hnp.arrays(np.int64, n, elements=st.integers(0, c - 1)))]
    return p
