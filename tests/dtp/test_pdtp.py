import numpy as np
import pytest

from leakaudit.dtp import pdtp, pdtp_from_probabilities
from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.learners.naive_bayes import BayesInference, NaiveBayes

from _dtp_helpers import NoisyMeanLearner, NoLOO

LN199 = np.log(199)


def test_binning_floor_and_ceiling():
    # p = 0 -> 0.005 and p = 1 -> 0.995: the largest PDTP is ln 199
    assert pdtp_from_probabilities([[0.0, 1.0]], [[1.0, 0.0]])[0] == pytest.approx(LN199)
    # one bin at the bottom: ln 3 > 1; one bin at the top: ln(0.995/0.985)
    assert pdtp_from_probabilities([[0.004, 0.996]], [[0.011, 0.989]])[0] == pytest.approx(np.log(3))
    assert pdtp_from_probabilities([[0.5, 0.5]], [[0.5, 0.5]])[0] == 0.0
    v = pdtp_from_probabilities([[0.3, 0.7]], [[0.2, 0.8]], bin_width=None)[0]
    assert v == pytest.approx(max(abs(np.log(0.3 / 0.2)), abs(np.log(0.7 / 0.8))))
    assert pdtp_from_probabilities([[0.0, 1.0]], [[0.1, 0.9]], bin_width=None)[0] == np.inf


def test_pdtp_from_probabilities_errors():
    with pytest.raises(InvalidInputError, match="p_loo has shape"):
        pdtp_from_probabilities([[0.5, 0.5]], [[0.5, 0.5], [0.1, 0.9]])
    with pytest.raises(InvalidInputError, match="p_full must hold probabilities"):
        pdtp_from_probabilities([[1.5, -0.5]], [[0.5, 0.5]])


@pytest.mark.parametrize("bin_width", [0.01, None, 0.05])
def test_closed_form_equals_retraining(rng, bin_width):
    X = rng.integers(0, 3, size=(40, 3)).astype(float)
    y = rng.integers(0, 2, size=40)
    nb = NaiveBayes(n_values=[3, 3, 3])
    a = pdtp(nb, X, y, bin_width=bin_width)
    b = pdtp(NoLOO(inner=nb), X, y, bin_width=bin_width)
    assert a.method.startswith("closed-form") and b.method.startswith("retraining")
    np.testing.assert_allclose(a.values, b.values, atol=1e-12)
    if bin_width == 0.01:
        assert np.all((np.asarray(a.values) >= 0) & (np.asarray(a.values) <= LN199 + 1e-12))
        # binned PDTP only takes values ln((2i+1)/(2j+1))
        odd = np.arange(1, 200, 2)
        allowed = np.unique(np.round(np.abs(np.log(odd[:, None] / odd[None, :])), 9))
        assert np.all(np.isin(np.round(np.asarray(a.values), 9), allowed))


def test_bayes_inference_pdtp_by_hand():
    X = np.array([[0], [0], [0], [1]], dtype=float)
    y = np.array([0, 0, 1, 1])
    with pytest.warns(RuntimeWarning, match="infinite"):
        r = pdtp(BayesInference(), X, y, bin_width=None, records=[0, 2, 3])
    # t=0: p(.|0) (2/3, 1/3) -> (1/2, 1/2): max(ln(4/3), ln(3/2)); t=2: (2/3,1/3)->(1,0): inf; t=3: (0,1)->(1/2,1/2): inf
    assert r.values[0] == pytest.approx(np.log(1.5))
    assert np.isinf(r.values[1]) and np.isinf(r.values[2])


def test_seed_policies_and_repeats():
    X = np.linspace(-1, 1, 12)[:, None]
    y = np.array([0, 1] * 6)
    lr = NoisyMeanLearner(a=3.0, noise=0.5)
    paired = pdtp(lr, X, y, bin_width=None, seed_policy="paired", random_state=3)
    # paired: same noise in both models, so PDTP is the data effect only: a*(mean(y) - mean(y without t))
    for i, t in enumerate(paired.records):
        keep = np.arange(12) != t
        b_full = 3.0 * y.mean()
        b_loo = 3.0 * y[keep].mean()
        x = X[t, 0]
        p = lambda b: np.array([1 - 1 / (1 + np.exp(-(b + x))), 1 / (1 + np.exp(-(b + x)))])  # noqa: E731
        noise = paired.p_full[i][1]  # recover the common noise from the full model's output
        z = np.log(noise / (1 - noise)) - b_full - x
        expect = np.max(np.abs(np.log(p(b_full + z)) - np.log(p(b_loo + z))))
        assert paired.values[i] == pytest.approx(expect, rel=1e-9)
    indep = pdtp(lr, X, y, bin_width=None, seed_policy="independent", random_state=3, n_repeats=4)
    assert np.asarray(indep.per_repeat).shape == (4, 12)
    np.testing.assert_allclose(indep.values, np.mean(indep.per_repeat, axis=0))
    # independent seeds add training noise: larger PDTP on average than paired
    assert np.mean(indep.values) > np.mean(paired.values)
    again = pdtp(lr, X, y, bin_width=None, seed_policy="independent", random_state=3, n_repeats=4)
    np.testing.assert_array_equal(indep.values, again.values)


def test_pdtp_batches_equal_one_batch(rng):
    X = rng.normal(size=(10, 1))
    y = rng.integers(0, 2, size=10)
    a = pdtp(NoisyMeanLearner(), X, y, random_state=1, batch_size=3)
    b = pdtp(NoisyMeanLearner(), X, y, random_state=1, batch_size=100)
    np.testing.assert_array_equal(a.values, b.values)


def test_pdtp_errors(rng):
    X = rng.integers(0, 2, size=(5, 2)).astype(float)
    y = np.array([0, 1, 0, 1, 0])
    with pytest.raises(InvalidParameterError, match="seed_policy"):
        pdtp(NaiveBayes(), X, y, seed_policy="bogus")
    with pytest.raises(InvalidInputError, match="records"):
        pdtp(NaiveBayes(), X, y, records=[7])
    with pytest.raises(InvalidParameterError, match="closed-form"):
        pdtp(NoisyMeanLearner(), X, y, method="closed-form")
    r = pdtp(NaiveBayes(), X, y)
    assert type(r).from_json(r.to_json()) == r


def test_lowest_bins_ignore_drops_only_moves_between_the_two_lowest_bins():
    # known truth at bin width 0.01: centres 0.005, 0.015, 0.025, ...; top centre 0.995
    pf = np.array([[0.004, 0.996], [0.004, 0.996], [0.30, 0.70], [0.012, 0.988]])
    pl = np.array([[0.011, 0.989], [0.021, 0.979], [0.45, 0.55], [0.003, 0.997]])
    keep = pdtp_from_probabilities(pf, pl)
    ign = pdtp_from_probabilities(pf, pl, lowest_bins="ignore")
    assert keep[0] == pytest.approx(np.log(3)) and keep[3] == pytest.approx(np.log(3))
    # the ln 3 step is gone; what is left is the other class's move between its own bins
    assert ign[0] == pytest.approx(np.log(0.995 / 0.985)) and ign[3] == pytest.approx(np.log(0.995 / 0.985))
    # lowest to third bin (0.005 -> 0.025) is a real move: ln 5 in both readings
    assert ign[1] == pytest.approx(np.log(5)) == keep[1]
    assert ign[2] == keep[2]  # nothing near the bottom: unchanged
    for w in (0.05, 0.001):  # the step is ln 3 at every width, and removed at every width
        a, b = np.array([[0.9 * w, 1 - 0.9 * w]]), np.array([[1.1 * w, 1 - 1.1 * w]])
        assert pdtp_from_probabilities(a, b, bin_width=w)[0] == pytest.approx(np.log(3))
        assert pdtp_from_probabilities(a, b, bin_width=w, lowest_bins="ignore")[0] < 0.2
    with pytest.raises(InvalidParameterError, match="lowest_bins"):
        pdtp_from_probabilities(pf, pl, bin_width=None, lowest_bins="ignore")
    with pytest.raises(InvalidParameterError, match="lowest_bins"):
        pdtp_from_probabilities(pf, pl, lowest_bins="drop")


def test_pdtp_lowest_bins_ignore_matches_the_probability_form():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(60, 4)).astype(float)
    y = rng.integers(0, 2, size=60)
    nb = NaiveBayes(n_values=[3] * 4, alpha=0.0, prior_smoothing=False)
    keep = pdtp(nb, X, y, keep_outputs=True)
    ign = pdtp(nb, X, y, lowest_bins="ignore")
    expect = pdtp_from_probabilities(keep.p_full, keep.p_loo, lowest_bins="ignore")
    np.testing.assert_allclose(ign.values, expect)
    assert np.all(np.asarray(ign.values) <= np.asarray(keep.values) + 1e-12)
    assert "lowest bins ignored" in ign.method


@pytest.mark.parametrize("policy", ["paired", "independent"])
def test_a_records_value_does_not_depend_on_the_records_measured_with_it(policy):
    # a screened run measures a few records, an exact run all of them: the same record must get the same PDTP
    from leakaudit.learners import TorchMLP

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    mlp = TorchMLP(hidden=(5,), epochs=3)
    every = pdtp(mlp, X, y, seed_policy=policy, random_state=9, bin_width=None)
    for recs, batch in (([7], 256), ([3, 7, 31], 2), ([31, 7], 1)):
        part = pdtp(mlp, X, y, records=recs, seed_policy=policy, random_state=9, bin_width=None, batch_size=batch)
        assert np.array_equal(np.asarray(part.values), np.asarray(every.values)[recs])
        assert np.array_equal(np.asarray(part.p_loo), np.asarray(every.p_loo)[recs])
