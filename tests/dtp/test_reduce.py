"""Reducing DTP (§8): the paper's sorted removal, greedy re-ranking, group removal."""

import numpy as np
import pytest

from leakaudit.dtp import pdtp, reduce_dtp
from leakaudit.exceptions import InvalidParameterError
from leakaudit.learners.naive_bayes import NaiveBayes


def _sawtooth_data():
    """Unsmoothed NB, one attribute. Class 1 holds value 2 once (a singleton cell) and value 3 twice (a pair).

    Removing the singleton drops the maximum; removing one of the pair turns the other into a
    singleton, so the maximum rebounds (the paper's sawtooth, spec §7).
    """
    x = [0] * 40 + [1] * 10 + [2] * 10 + [3] * 10 + [1] * 30 + [2] + [3, 3]
    y = [0] * 70 + [1] * 33
    return np.array(x, dtype=float)[:, None], np.array(y)


def test_sorted_removal_sawtooth_and_bookkeeping():
    X, y = _sawtooth_data()
    nb = NaiveBayes(n_values=[4], alpha=0.0, prior_smoothing=False)
    init = np.asarray(pdtp(nb, X, y).values)
    r = reduce_dtp(nb, X, y, strategy="sorted", max_removals=3)
    assert r.max_values[0] == pytest.approx(init.max())
    assert r.removed == list(np.argsort(-init, kind="stable")[:3])  # fixed initial order
    assert r.removed[0] == 100  # the singleton (value 2, class 1)
    # after each step, the max equals the max PDTP recomputed on the remaining records
    keep = np.ones(len(X), bool)
    for s, t in enumerate(r.removed, start=1):
        keep[t] = False
        nb_s = NaiveBayes(n_values=[4], alpha=0.0, prior_smoothing=False)
        assert r.max_values[s] == pytest.approx(np.max(pdtp(nb_s, X[keep], y[keep]).values))
    # drop after removing the singleton, rebound after removing one of the pair
    assert r.max_values[1] < 1.0 < r.max_values[0]
    assert r.max_values[2] > 1.0
    assert len(r.accuracy) == len(r.max_values)
    assert r.stopped_at == 1


def test_greedy_and_group_and_stop():
    X, y = _sawtooth_data()
    nb = NaiveBayes(n_values=[4], alpha=0.0, prior_smoothing=False)
    g = reduce_dtp(nb, X, y, strategy="greedy", max_removals=3)
    assert g.removed[0] == int(g.argmax_records[0])
    assert all(g.removed[s] == g.argmax_records[s] for s in range(3))
    grp = reduce_dtp(nb, X, y, strategy="group", max_removals=2)
    # the first group is the singleton, the second the whole (3, class 1) pair
    assert grp.removed[:1] == [100] and sorted(grp.removed[1:3]) == [101, 102]
    assert max(grp.max_values[2:]) < 1.0
    st = reduce_dtp(nb, X, y, strategy="greedy", max_removals=10, stop_at_threshold=True)
    assert st.stopped_at == 1 and len(st.removed) == 1
    with pytest.raises(InvalidParameterError, match="strategy"):
        reduce_dtp(nb, X, y, strategy="random")
