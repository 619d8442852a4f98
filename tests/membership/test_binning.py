import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.membership.binning import MAX_BINNED_LOG_RATIO, bin_index, bin_probabilities


def test_spec_examples():
    # long-dtp.md §2.5: p = 0 -> 0.005, p = 1 -> 0.995
    out = bin_probabilities([0.0, 1.0, 0.5, 0.009999, 0.01, 0.0149, 0.015, 0.99, 0.98999])
    np.testing.assert_allclose(out, [0.005, 0.995, 0.505, 0.005, 0.015, 0.015, 0.015, 0.995, 0.985])


def test_boundaries_exact_for_all_bins():
    # every bin boundary i/100 lands in bin i despite floating point (0.29 / 0.01 = 28.999...)
    edges = np.arange(100) / 100.0
    np.testing.assert_array_equal(bin_index(edges), np.arange(100))
    np.testing.assert_allclose(bin_probabilities(edges), (np.arange(100) + 0.5) / 100)


def test_values_set_and_pdtp_consequences():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(10), size=500)
    b = bin_probabilities(p)
    assert b.shape == p.shape
    assert b.min() >= 0.005 and b.max() <= 0.995
    np.testing.assert_allclose((b * 200 - 1) / 2, np.round((b * 200 - 1) / 2), atol=1e-9)
    assert MAX_BINNED_LOG_RATIO == pytest.approx(np.log(0.995 / 0.005))
    assert np.log(0.015 / 0.005) == pytest.approx(1.0986, abs=1e-4)


def test_3d_and_renormalize():
    p = np.array([[[0.0, 1.0], [0.5, 0.5]]])
    b = bin_probabilities(p, renormalize=True)
    np.testing.assert_allclose(b.sum(-1), 1.0)
    np.testing.assert_allclose(b[0, 0], [0.005, 0.995])


def test_other_width():
    np.testing.assert_allclose(bin_probabilities([0.0, 0.3, 1.0], bin_width=0.1), [0.05, 0.35, 0.95])


def test_errors():
    with pytest.raises(InvalidInputError, match="p must hold probabilities"):
        bin_probabilities([0.5, 1.2])
    with pytest.raises(InvalidInputError, match="p contains NaN"):
        bin_probabilities([np.nan])
    with pytest.raises(InvalidInputError, match="bin_width must divide 1"):
        bin_probabilities([0.5], bin_width=0.3)
    with pytest.raises(InvalidParameterError, match="bin_width"):
        bin_probabilities([0.5], bin_width=0)
