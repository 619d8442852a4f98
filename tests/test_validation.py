import numpy as np
import pytest

from leakaudit._validation import (
    check_array,
    check_choice,
    check_consistent_length,
    check_indices,
    check_labels,
    check_probabilities,
    check_scalar,
)
from leakaudit.exceptions import InvalidInputError, InvalidParameterError, LeakauditError


def test_check_array_names_argument_and_problem():
    with pytest.raises(InvalidInputError, match=r"X must be a 2D array; got 1D .*reshape"):
        check_array([1.0, 2.0], name="X", ndim=2)
    with pytest.raises(InvalidInputError, match=r"X contains NaN \(at index \(1, 0\)\)"):
        check_array([[1.0], [np.nan]], name="X", ndim=2)
    with pytest.raises(InvalidInputError, match="inf"):
        check_array([1.0, np.inf], name="s", ndim=1)
    with pytest.raises(InvalidInputError, match="X is empty"):
        check_array(np.zeros((0, 3)), name="X", ndim=2)
    with pytest.raises(InvalidInputError, match="could not be read"):
        check_array([["a", "b"]], name="X", ndim=2)
    assert check_array(np.zeros((0, 3)), name="X", ndim=2, allow_empty=True).shape == (0, 3)


def test_errors_are_value_errors():
    assert issubclass(InvalidInputError, ValueError) and issubclass(InvalidInputError, LeakauditError)
    assert issubclass(InvalidParameterError, TypeError)


def test_check_probabilities():
    p = check_probabilities([[0.2, 0.8], [0.5, 0.5]], name="probs")
    assert p.shape == (2, 2)
    with pytest.raises(InvalidInputError, match=r"rows of probs must sum to 1; row 1 sums to 0.93"):
        check_probabilities([[0.2, 0.8], [0.5, 0.43]], name="probs")
    with pytest.raises(InvalidInputError, match="non-negative"):
        check_probabilities([[1.2, -0.2]], name="probs")
    with pytest.raises(InvalidInputError, match="one column per class"):
        check_probabilities([[1.0]], name="probs")


def test_check_labels():
    assert check_labels([0, 1, 2.0], name="y").dtype == np.int64
    with pytest.raises(InvalidInputError, match="integer"):
        check_labels([0.5, 1], name="y")
    with pytest.raises(InvalidInputError, match="unseen at fit time"):
        check_labels([0, 3], name="y", n_classes=3)
    with pytest.raises(InvalidInputError, match="single class"):
        check_labels([1, 1, 1], name="y", min_classes=2)
    with pytest.raises(InvalidInputError, match=">= 0"):
        check_labels([-1, 0], name="y")


def test_consistent_length_scalar_choice_indices():
    with pytest.raises(InvalidInputError, match="X=3, y=2"):
        check_consistent_length(X=np.zeros((3, 1)), y=np.zeros(2))
    with pytest.raises(InvalidParameterError, match=r"alpha must be in \(0.0, 1.0\]; got 2"):
        check_scalar(2, name="alpha", min_val=0.0, max_val=1.0, include_min=False)
    with pytest.raises(InvalidParameterError, match="alpha must be Real"):
        check_scalar("x", name="alpha")
    with pytest.raises(InvalidParameterError, match="alpha must be Real"):
        check_scalar(True, name="alpha")
    with pytest.raises(InvalidParameterError, match="mode must be one of 'a', 'b'; got 'c'"):
        check_choice("c", name="mode", choices=("a", "b"))
    assert list(check_indices(np.array([True, False, True]), name="s", n=3)) == [0, 2]
    with pytest.raises(InvalidInputError, match="index 5, out of range for 3 rows"):
        check_indices([0, 5], name="s", n=3)
    with pytest.raises(InvalidInputError, match="duplicate"):
        check_indices([0, 0], name="s", n=3, unique=True)


def test_check_indices_keeps_int64_arrays_and_converts_others():
    # an audit validates K index subsets: an int64 array is returned as is (no K-sized copy), others become int64
    a = np.array([2, 0, 1], dtype=np.int64)
    assert check_indices(a, name="s", n=3) is a
    b = np.array([2, 0], dtype=np.int32)
    out = check_indices(b, name="s", n=3)
    assert out.dtype == np.int64 and list(out) == [2, 0]
    assert check_indices([1, 2], name="s", n=3).dtype == np.int64
    strided = np.arange(6, dtype=np.int64)[::2]  # a view: returned as a contiguous copy, as before
    got = check_indices(strided, name="s", n=6)
    assert got.flags.c_contiguous and list(got) == [0, 2, 4]
