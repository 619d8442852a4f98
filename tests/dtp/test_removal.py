"""The measured effect of removing records (dtp.removal): cases whose truth is known by construction."""

import numpy as np
import pytest
from test_reduce import _sawtooth_data

from leakaudit.dtp import pdtp, removal_effect
from leakaudit.exceptions import InvalidParameterError
from leakaudit.learners.naive_bayes import NaiveBayes


def _nb():
    return NaiveBayes(n_values=[4], alpha=0.0, prior_smoothing=False)


def test_removing_the_singleton_leaves_no_record_above_the_threshold():
    X, y = _sawtooth_data()
    assert np.max(pdtp(_nb(), X, y).values) > 1.0  # the singleton (row 100) breaks DTP-1 before
    r = removal_effect(_nb(), X, y, [100], X_eval=X, y_eval=y, random_state=0)
    keep = np.arange(len(X)) != 100
    assert r.max_after == pytest.approx(np.max(pdtp(_nb(), X[keep], y[keep]).values))
    assert r.max_after < 1.0
    assert r.records_above_after == [] and r.records_significant_after == []
    assert r.records_measured == len(X) - 1 and r.removed == [100]


def test_removing_one_of_a_pair_exposes_the_other_under_its_original_index():
    """Long et al.'s sawtooth: rows 101 and 102 share a cell; without 101, row 102 is a singleton."""
    X, y = _sawtooth_data()
    r = removal_effect(_nb(), X, y, [101], X_eval=X, y_eval=y, random_state=0)
    assert 102 in r.records_above_after
    assert r.records_significant_after is not None and 102 in r.records_significant_after
    assert r.argmax_after in r.records_above_after
    assert all(i != 101 for i in r.records_above_after)
    # Long et al.'s single-measurement rule: no test, the same records above the threshold
    raw = removal_effect(_nb(), X, y, [101], X_eval=X, y_eval=y, statistical=False, random_state=0)
    assert raw.records_significant_after is None and raw.records_above_after == r.records_above_after


def test_records_restrict_the_measurement_and_removed_rows_are_dropped_from_them():
    X, y = _sawtooth_data()
    r = removal_effect(_nb(), X, y, [101], X_eval=X, y_eval=y, records=[0, 1, 101, 102], random_state=0)
    assert r.records_measured == 3
    assert r.records_above_after == [102]


def test_accuracy_cost_is_the_paired_difference_of_the_two_models():
    X, y = _sawtooth_data()
    rng = np.random.default_rng(0)
    Xe = rng.integers(0, 4, size=(200, 1)).astype(float)
    ye = (Xe[:, 0] >= 2).astype(int)
    remove = np.arange(70, 85)  # class-1 rows of value 1: the retrained model changes its mind about value 1
    r = removal_effect(_nb(), X, y, remove, X_eval=Xe, y_eval=ye, n_seeds=2, random_state=0)
    keep = np.setdiff1d(np.arange(len(X)), remove)
    before = np.mean(_nb().fit(X, y).predict_proba(Xe).argmax(1) == ye)
    after = np.mean(_nb().fit(X[keep], y[keep]).predict_proba(Xe).argmax(1) == ye)
    assert r.accuracy_before == pytest.approx(before) and r.accuracy_after == pytest.approx(after)
    assert r.accuracy_cost == pytest.approx(before - after)
    lo, hi = r.accuracy_cost_interval
    assert lo <= r.accuracy_cost <= hi
    assert r.n_eval == 200 and r.n_seeds == 2


@pytest.mark.parametrize("remove, match", [([], "remove must hold"), ([200], "remove must hold"),
                                           ([-1], "remove must hold"), (list(range(102)), "at least 2 must remain")])
def test_bad_removals_are_refused_naming_the_argument(remove, match):
    X, y = _sawtooth_data()
    with pytest.raises(InvalidParameterError, match=match):
        removal_effect(_nb(), X, y, remove, X_eval=X, y_eval=y)


def test_one_seed_is_refused():
    X, y = _sawtooth_data()
    with pytest.raises(InvalidParameterError, match="n_seeds"):
        removal_effect(_nb(), X, y, [100], X_eval=X, y_eval=y, n_seeds=1)


def test_screened_remeasurement_measures_the_top_of_the_ranking_and_a_sample():
    X, y = _sawtooth_data()
    before = np.asarray(pdtp(_nb(), X, y).values)
    r = removal_effect(_nb(), X, y, [101], X_eval=X, y_eval=y, estimate=before, screen_fraction=0.1,
                       screen_sample=20, screen_max_fraction=0.5, random_state=0)
    sc = r.screening
    assert sc["n_top"] >= 11 and sc["n_sample"] <= 20
    assert r.records_measured + sc["n_unmeasured"] == len(X) - 1
    # row 102 had the second largest PDTP before (it shared a cell with 101): measured, and exposed
    assert 102 in r.records_above_after
    u = sc["unmeasured_above"]
    assert u["m"] == sc["n_sample"] and 0 <= u["share_interval"][0] <= u["share_interval"][1] <= 1
    with pytest.raises(InvalidParameterError, match="estimate"):
        removal_effect(_nb(), X, y, [101], X_eval=X, y_eval=y, estimate=before[:5])
