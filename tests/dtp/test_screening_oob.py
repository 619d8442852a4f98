"""The out-of-bag screen for bagged forests (leakaudit.dtp.screening.forest_oob_shift) and the ``cut`` top.

Known truth: a mislabelled outlier far from the data (``outlier_data``, row 0). A fully grown bootstrapped forest
predicts its label only from the trees whose sample held it (about 63 %), and the other label from every other
tree, so its leave-one-out change is large (bin 63 to bin 0: ln 63); a record inside its class's blob does not
move. The screen's estimand is the DTP-1 test's (the mean over paired seeds of the bin-aware ln ratio), so the two
are compared record by record.
"""

from __future__ import annotations

import numpy as np
import pytest
from _dtp_helpers import outlier_data
from sklearn.ensemble import BaggingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from leakaudit.dtp import dtp1_test
from leakaudit.dtp.screening import forest_oob_shift, oob_ensemble, screened_pdtp
from leakaudit.exceptions import InvalidInputError
from leakaudit.learners import RandomForest, SklearnLearner

BAGGED = RandomForest(n_estimators=30)


def test_oob_ensemble_trains_what_the_learner_trains():
    rf = oob_ensemble(RandomForest(n_estimators=7, max_depth=3, min_samples_leaf=2, max_features=None))
    assert isinstance(rf, RandomForestClassifier) and rf.oob_score is True
    assert (rf.n_estimators, rf.max_depth, rf.min_samples_leaf, rf.max_features) == (7, 3, 2, None)
    bag = oob_ensemble(SklearnLearner(BaggingClassifier(n_estimators=5)))
    assert isinstance(bag, BaggingClassifier) and bag.oob_score is True and bag.n_estimators == 5
    assert oob_ensemble(RandomForest(bootstrap=False)) is None  # every tree saw every record: no out-of-bag
    assert oob_ensemble(SklearnLearner(RandomForestClassifier(bootstrap=False))) is None
    assert oob_ensemble(SklearnLearner(LogisticRegression())) is None
    X, y = outlier_data()
    with pytest.raises(InvalidInputError, match="forest_oob_shift needs a bootstrapped forest"):
        forest_oob_shift(SklearnLearner(LogisticRegression()), X, y)
    with pytest.raises(ValueError, match="n_forests"):
        forest_oob_shift(BAGGED, X, y, n_forests=1)
    with pytest.raises(ValueError, match="miss_rate"):
        forest_oob_shift(BAGGED, X, y, miss_rate=1.0)


def test_oob_shift_ranks_the_outlier_first_and_matches_the_dtp1_test():
    X, y = outlier_data()
    sh = forest_oob_shift(BAGGED, X, y, n_forests=8, n_classes=2, random_state=0)
    assert np.argmax(sh.estimate) == 0 and sh.estimate[0] > 3
    assert (sh.upper >= sh.estimate).all() and sh.upper[0] > 1
    again = forest_oob_shift(BAGGED, X, y, n_forests=8, n_classes=2, random_state=0)
    np.testing.assert_array_equal(again.upper, sh.upper)
    # the DTP-1 test's own estimate of the same quantity, from paired leave-one-out forests
    inner = np.setdiff1d(np.flatnonzero(np.abs(X[:, 0]) > 1.5), [0])[:6]  # deep inside a blob: no change
    recs = np.r_[0, inner]
    test = dtp1_test(BAGGED, X, y, records=recs, n_repeats=8, n_classes=2, random_state=1)
    assert test.significant[0] and sh.upper[0] >= test.stage2_mean[0]  # the bound covers the test's mean change
    assert (np.asarray(test.stage2_mean[1:]) < 1).all() and (sh.estimate[inner] < 1).all()


def test_a_tighter_miss_rate_widens_the_bound():
    X, y = outlier_data()
    loose = forest_oob_shift(BAGGED, X, y, n_forests=6, miss_rate=0.2, n_classes=2, random_state=0)
    tight = forest_oob_shift(BAGGED, X, y, n_forests=6, miss_rate=0.01, n_classes=2, random_state=0)
    np.testing.assert_array_equal(loose.estimate, tight.estimate)
    assert (tight.upper >= loose.upper).all() and (tight.upper > loose.upper).any()


def test_cut_measures_every_record_at_or_above_it_up_to_the_cap():
    X, y = outlier_data(n=60)
    est = np.zeros(len(y))
    est[[0, 5, 9]] = [4.0, 1.0, 2.0]
    sc = screened_pdtp(BAGGED, X, y, est, cut=1.0, fraction=0.05, n_sample=10, n_classes=2, random_state=3,
                       sample_state=0)
    assert sc.n_top == 3 and sc.extensions == 0 and not sc.capped
    assert {0, 5, 9} <= set(sc.records) and sc.records.size == 3 + 10 and not {0, 5, 9} & set(sc.sample)
    capped = screened_pdtp(BAGGED, X, y, est, cut=1.0, fraction=0.01, max_fraction=1 / 30, n_sample=5,
                           n_classes=2, random_state=3, sample_state=0)
    assert capped.capped and capped.n_top == 2 and list(capped.order[:2]) == [0, 9]
    none = screened_pdtp(BAGGED, X, y, est, cut=10.0, fraction=0.05, n_sample=5, n_classes=2, random_state=3,
                         sample_state=0)
    assert none.n_top == 0 and none.records.size == 5 and not none.capped
