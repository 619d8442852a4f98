"""PDTP at scale (leakaudit.dtp.screening): the reference-model estimate, the screened measurement, the bounds.

Known truth: a learner that memorises exactly the flagged records (last feature 1) and knows nothing else
(:class:`FlagMemoriser`): a flagged record's own output moves from bin 99.5 to 50 when it is removed (PDTP
ln(0.505 / 0.005) = 4.6, binned); no other record moves. And a real one: a mislabelled outlier far from the data, learnt
by a fully grown forest without bootstrap (bin 99 to bin 0: PDTP ln(0.995 / 0.005)).
"""

from __future__ import annotations

import numpy as np
import pytest
from _dtp_helpers import outlier_data

from leakaudit.dtp import (
    pdtp,
    reference_loo_shift,
    sample_for_allowance,
    screen_plan,
    screened_pdtp,
    tail_exceeds_sample,
    unmeasured_bound,
)
from leakaudit.dtp.pdtp import apply_binning
from leakaudit.exceptions import InvalidInputError
from leakaudit.learners import RandomForest
from leakaudit.learners._base import Learner
from leakaudit.membership import fit_reference_models, paired_half_masks


class FlagMemoriser(Learner):
    """p(y | x) = 0.995 for the label of a flagged training record at x, 0.5 everywhere else."""

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        keep = X[:, -1] == 1
        return _Lookup({tuple(r): int(c) for r, c in zip(X[keep], y[keep])})


class _Lookup:
    def __init__(self, table):
        self.table = table

    def predict_proba(self, X):
        out = np.full((len(X), 2), 0.5)
        for i, r in enumerate(np.asarray(X)):
            c = self.table.get(tuple(r))
            if c is not None:
                out[i] = 0.005
                out[i, c] = 0.995
        return out


def _flagged(n=200, flagged=(3, 50, 120), seed=0):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=(n, 2)), np.zeros(n)]
    X[list(flagged), -1] = 1
    return X, rng.integers(0, 2, n)


FOREST = RandomForest(n_estimators=10, max_features=None, bootstrap=False)
MEMORY = FlagMemoriser()
FLAG_PDTP = float(np.abs(np.diff(np.log(apply_binning(np.array([0.005, 0.5]), 0.01))))[0])  # ln(0.505 / 0.005)


def test_reference_loo_shift_is_the_in_out_difference_of_binned_log_outputs():
    rng = np.random.default_rng(1)
    P = rng.dirichlet([1, 1, 1], size=(6, 5))
    M = paired_half_masks(5, 6, 0)
    got = reference_loo_shift(P, M)
    L = np.log(apply_binning(P, 0.01))
    want = [np.abs(L[M[:, i], i].mean(0) - L[~M[:, i], i].mean(0)).max() for i in range(5)]
    np.testing.assert_allclose(got, want)
    M2 = M.copy()
    M2[:, 0] = True
    with pytest.raises(InvalidInputError, match="at least one reference model"):
        reference_loo_shift(P, M2)
    with pytest.raises(InvalidInputError, match="shape"):
        reference_loo_shift(P[0], M)


def test_memorised_records_rank_first_by_the_reference_models():
    X, y = _flagged()
    ref = fit_reference_models(MEMORY, X, y, 8, n_classes=2, random_state=0)
    est = reference_loo_shift(ref.probs, ref.in_mask)
    np.testing.assert_allclose(est[[3, 50, 120]], FLAG_PDTP)
    assert np.delete(est, [3, 50, 120]).max() == 0


def test_forest_outlier_ranks_first_by_the_reference_models():
    X, y = outlier_data()
    ref = fit_reference_models(FOREST, X, y, 8, n_classes=2, random_state=0)
    est = reference_loo_shift(ref.probs, ref.in_mask)
    assert np.argmax(est) == 0 and est[0] > 3


def test_screen_plan_top_and_a_uniform_sample_of_the_rest():
    est = np.r_[np.arange(10.0), np.zeros(90)]
    order, top, sample = screen_plan(est, n_top=5, n_sample=20, random_state=0)
    assert list(top) == [9, 8, 7, 6, 5] and list(order[:5]) == list(top)
    assert list(order[10:15]) == [10, 11, 12, 13, 14]  # ties by record number
    assert len(sample) == 20 and not set(sample) & set(top) and list(sample) == sorted(sample)
    np.testing.assert_array_equal(sample, screen_plan(est, n_top=5, n_sample=20, random_state=0)[2])
    assert len(screen_plan(est, n_top=95, n_sample=20, random_state=0)[2]) == 5
    counts = np.zeros(100)  # uniform: every record of the rest is drawn about equally often
    for s in range(400):
        counts[screen_plan(est, n_top=5, n_sample=19, random_state=s)[2]] += 1
    rest = order[5:]
    assert counts[top].sum() == 0 and counts[rest].mean() == pytest.approx(80) and counts[rest].min() > 45


def test_screened_pdtp_measures_the_top_and_the_sample_with_the_exact_values():
    X, y = outlier_data()
    ref = fit_reference_models(FOREST, X, y, 8, n_classes=2, random_state=0)
    est = reference_loo_shift(ref.probs, ref.in_mask)
    sc = screened_pdtp(FOREST, X, y, est, fraction=0.05, n_sample=10, n_classes=2, random_state=3, sample_state=0)
    assert 0 in sc.records and sc.n_top == 4 and sc.records.size == 4 + 10 and sc.sample.size == 10
    exact = pdtp(FOREST, X, y, records=sc.records, n_classes=2, seed_policy="paired", random_state=3).values
    np.testing.assert_allclose(sc.values, exact)
    assert sc.value([0])[0] == pytest.approx(np.log(0.995 / 0.005))  # bin 99 -> bin 0


def test_the_top_grows_while_its_tail_holds_more_exceedances_than_the_sample():
    """An estimate that ranks six memorised records in the bottom half of the first top block (16 records): the
    block doubles once, then its new tail is clean and it stops. An honest ranking stops at once."""
    flagged = (3, 30, 50, 90, 120, 150)
    X, y = _flagged(n=160, flagged=flagged)
    est = np.zeros(len(y))
    ordinary = [r for r in range(160) if r not in flagged][:10]
    est[ordinary] = np.arange(20.0, 10.0, -1)  # ranks 0..9
    est[list(flagged)] = 5.0  # ranks 10..15
    sc = screened_pdtp(MEMORY, X, y, est, fraction=0.1, n_sample=30, n_classes=2, random_state=3, sample_state=0)
    assert sc.extensions == 1 and sc.n_top == 32 and set(flagged) <= set(sc.records)
    np.testing.assert_allclose(sc.value(list(flagged)), FLAG_PDTP)
    assert not set(sc.sample) & set(sc.order[:32])
    est2 = np.zeros(len(y))
    est2[list(flagged)] = 5.0
    sc2 = screened_pdtp(MEMORY, X, y, est2, fraction=0.1, n_sample=30, n_classes=2, random_state=3, sample_state=0)
    assert sc2.extensions == 0 and sc2.n_top == 16


def test_tail_test_and_unmeasured_bound():
    assert tail_exceeds_sample(8, 10, 0, 100)
    assert not tail_exceeds_sample(1, 10, 10, 100)
    assert not tail_exceeds_sample(0, 10, 0, 0)
    assert tail_exceeds_sample(1, 10, 0, 0)
    b = unmeasured_bound(0, 100, 10_000, confidence=0.95)
    assert b["share"] == 0 and b["share_interval"][0] == 0
    assert b["share_interval"][1] == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-6)  # two-sided Clopper-Pearson
    assert b["count_upper"] == int(np.ceil(b["share_interval"][1] * 10_000))
    assert unmeasured_bound(0, 0, 50)["share"] is None


@pytest.mark.parametrize("n,allowance,confidence", [(31_861, 163, 0.996), (8_000, 40, 0.95), (500, 1, 0.99),
                                                     (200, 60, 0.9958)])
def test_sample_for_allowance_is_the_smallest_sample_that_meets_it(n, allowance, confidence):
    m = sample_for_allowance(n, allowance, confidence=confidence)
    assert unmeasured_bound(0, m, n, confidence=confidence)["count_upper"] <= allowance
    assert unmeasured_bound(0, m - 1, n, confidence=confidence)["count_upper"] > allowance


def test_sample_for_allowance_edges_and_scale():
    assert sample_for_allowance(100, 100) == 0 and sample_for_allowance(100, 0) is None
    # about ln(2 / (1 - c)) / share members, whatever the number of records
    sizes = [sample_for_allowance(n, n // 200, confidence=0.99) for n in (10_000, 100_000, 1_000_000)]
    assert max(sizes) - min(sizes) <= 3 and abs(sizes[0] - np.log(200) / 0.005) < 10
    with pytest.raises(Exception, match="allowance"):
        sample_for_allowance(10, -1)


def test_the_top_stops_at_max_fraction_and_says_so():
    """The 60 top-ranked of 200 records are memorised: the top keeps doubling past the cap (25 %: 50 records) and
    stops there, capped; without a cap it grows until its tail is clean."""
    X, y = _flagged(n=200, flagged=tuple(range(60)))
    est = -np.arange(200.0)
    sc = screened_pdtp(MEMORY, X, y, est, fraction=0.05, n_sample=20, max_fraction=0.25, n_classes=2,
                       random_state=3, sample_state=0)
    assert sc.capped and sc.n_top == 50
    free = screened_pdtp(MEMORY, X, y, est, fraction=0.05, n_sample=20, n_classes=2, random_state=3, sample_state=0)
    assert not free.capped and free.n_top > 60 and set(range(60)) <= set(free.records)


def test_the_top_grows_by_significant_records_when_a_test_is_given():
    """Six memorised records ranked in the tail of the first top (as above). Counting records above the threshold,
    the top doubles; told by ``significant`` that none of them is significant (what the DTP-1 test says of
    training noise), it stays; told that they are, it doubles as before. The test sees only candidates (records
    above the threshold) of the tail, then of the sample, and is not asked when the tail holds none."""
    flagged = (3, 30, 50, 90, 120, 150)
    X, y = _flagged(n=160, flagged=flagged)
    est = np.zeros(len(y))
    ordinary = [r for r in range(160) if r not in flagged][:10]
    est[ordinary] = np.arange(20.0, 10.0, -1)
    est[list(flagged)] = 5.0
    asked = []

    def noise(recs, vals):
        asked.append((sorted(recs.tolist()), vals.tolist()))
        return np.zeros(recs.size, bool)

    kw = {"fraction": 0.1, "n_sample": 30, "n_classes": 2, "random_state": 3, "sample_state": 0}
    raw = screened_pdtp(MEMORY, X, y, est, **kw)
    quiet = screened_pdtp(MEMORY, X, y, est, significant=noise, **kw)
    assert raw.extensions == 1 and raw.counted == "above" and raw.last_look["tail_hits"] == 0
    assert quiet.extensions == 0 and quiet.n_top == 16 and quiet.counted == "significant"
    assert asked == [(sorted(flagged), [pytest.approx(FLAG_PDTP)] * 6)]  # the tail's; the sample was not needed
    assert quiet.last_look == {"n_top": 16, "tail_hits": 0, "tail_n": 8, "sample_hits": None, "sample_n": 30,
                               "grow": False}
    loud = screened_pdtp(MEMORY, X, y, est, significant=lambda recs, vals: np.ones(recs.size, bool), **kw)
    assert loud.extensions == 1 and loud.n_top == 32 and set(flagged) <= set(loud.records)
    np.testing.assert_array_equal(loud.records, raw.records)
