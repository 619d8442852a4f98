import numpy as np
import pytest

from leakaudit.membership.colluding import (
    ColludingAdversary,
    ColludingLearner,
    TriggerFunction,
    colluding_advantage_bound,
)

from .conftest import LogRegLearner, OneNNLearner, make_blobs


def test_trigger_function_is_keyed_and_deterministic():
    X = np.random.default_rng(0).random((5, 4))
    a = TriggerFunction(3, 10, secret=1)(X)
    b = TriggerFunction(3, 10, secret=1)(X)
    c = TriggerFunction(3, 10, secret=2)(X)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], c[0])
    assert a[0].shape == (5, 3, 4) and a[1].shape == (5, 3)
    assert a[0].min() >= 0 and a[0].max() <= 1
    # labels are uniform: chi-square-free check on many records
    labs = TriggerFunction(1, 4)(np.random.default_rng(1).random((2000, 2)))[1].ravel()
    assert np.all(np.abs(np.bincount(labs, minlength=4) / 2000 - 0.25) < 0.05)


def test_colluding_1nn_reaches_theorem4_advantage():
    X, y = make_blobs(n=400, d=30, c=3, noise=1.0, seed=0)  # high-dimensional, like images
    X = (X - X.min()) / (X.max() - X.min())  # in [0, 1] like image pixels
    tr, te = np.arange(200), np.arange(200, 400)
    learner = ColludingLearner(OneNNLearner(), n_keys=3, secret=7)
    model = learner.fit(X[tr], y[tr], n_classes=3)
    res = ColludingAdversary(n_keys=3, secret=7).score(model, X)
    d = res.decisions_array
    adv = d[tr].mean() - d[te].mean()
    # all members caught; non-members pass all 3 random labels w.p. about 3^-3 (plus nearest-trigger luck)
    assert d[tr].mean() == 1.0
    assert adv == pytest.approx(colluding_advantage_bound(3, 3), abs=0.08)
    # the subverted model still classifies real data about as well as the clean one
    clean = OneNNLearner().fit(X[tr], y[tr], n_classes=3)
    acc_sub = np.mean(model.predict_proba(X[te]).argmax(1) == y[te])
    acc_clean = np.mean(clean.predict_proba(X[te]).argmax(1) == y[te])
    assert acc_sub >= acc_clean - 0.05
    # a wrong secret finds nothing
    wrong = ColludingAdversary(n_keys=3, secret=8).score(model, X).decisions_array
    assert abs(wrong[tr].mean() - wrong[te].mean()) < 0.1


def test_low_capacity_model_cannot_collude():
    X, y = make_blobs(n=300, d=6, c=3, noise=1.0, seed=1)
    X = (X - X.min()) / (X.max() - X.min())
    model = ColludingLearner(LogRegLearner(C=1.0), n_keys=3).fit(X[:150], y[:150], n_classes=3)
    d = ColludingAdversary(n_keys=3).score(model, X).decisions_array
    assert abs(d[:150].mean() - d[150:].mean()) < 0.15
