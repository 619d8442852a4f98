"""Game, Algorithm 1 and Algorithm 2 pieces, and the logistic learner, on small synthetic data."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.property import game, poison, predicates, queries
from leakaudit.property.synthetic import make_property_data


@pytest.fixture(scope="module")
def data():
    return make_property_data(3000, 4, bias=-1.5, random_state=0)[0]


def test_accounting():
    assert game.n_poison(1000, 0.05) == 50
    assert game.n_clean(1000, 0.05, "replace") == 950
    assert game.n_clean(1000, 0.05, "add") == 1000
    with pytest.raises(InvalidParameterError, match="poison_accounting"):
        game.n_clean(1000, 0.05, "both")


def test_sample_world_exact_and_binomial():
    pos, neg = np.arange(0, 500), np.arange(500, 2000)
    s = game.sample_world(pos, neg, 400, 0.15, random_state=0)
    assert s.size == 400 and np.unique(s).size == 400
    assert (s < 500).sum() == 60  # round(0.15 * 400)
    counts = [(game.sample_world(pos, neg, 400, 0.15, sampling="binomial", random_state=i) < 500).sum()
              for i in range(300)]
    # Binomial(400, 0.15): mean 60, sd 7.14; the mean of 300 draws is within 4 sd/sqrt(300) = 1.65
    assert abs(np.mean(counts) - 60) < 1.65 and np.std(counts) > 4


def test_sample_world_warns_when_pool_too_small():
    from leakaudit.exceptions import ApproximationWarning

    with pytest.warns(ApproximationWarning, match="D\\+ pool has 5 records"):
        game.sample_world(np.arange(5), np.arange(5, 100), 50, 0.5, random_state=0)


def test_property_data_validation():
    with pytest.raises(InvalidInputError, match="both values"):
        game.PropertyData(X=np.zeros((4, 2)), y=np.array([0, 1, 0, 1]), f=np.ones(4, bool))
    with pytest.raises(InvalidInputError, match="binary labels"):
        game.PropertyData(X=np.zeros((4, 2)), y=np.array([0, 2, 0, 1]), f=np.array([0, 1, 0, 1]))


def test_algorithm1_rules(data):
    pool = np.arange(len(data))
    rare = poison.choose_poison(data, pool, t0=0.05, t1=0.15, poison_rate=0.1, n_train=300, random_state=0)
    assert len(rare) == 30 and rare.subpopulation == "f" and data.f[rare.indices].all()
    assert rare.alpha == pytest.approx(data.y[rare.indices].mean())
    assert rare.label == (0 if rare.alpha > 0.5 else 1) and rare.variant == f"X+{rare.label}"
    common = poison.choose_poison(data, pool, t0=0.4, t1=0.6, poison_rate=0.1, n_train=300, random_state=0)
    assert common.subpopulation == "1-f" and not data.f[common.indices].any()
    forced = poison.choose_poison(data, pool, t0=0.4, t1=0.6, poison_rate=0.1, n_train=300, variant="X+0",
                                  random_state=0)
    assert forced.label == 0 and forced.subpopulation == "f" and (forced.y == 0).all()
    # Labels flipped so that alpha > 0.5: the poison label becomes 0.
    flipped = game.PropertyData(X=data.X, y=1 - data.y, f=data.f)
    assert poison.choose_poison(flipped, pool, t0=0.05, t1=0.15, poison_rate=0.1, n_train=300,
                                random_state=0).label == 0
    empty = poison.choose_poison(data, pool, t0=0.05, t1=0.15, poison_rate=0.0, n_train=300, random_state=0)
    assert len(empty) == 0 and np.isnan(empty.alpha)


def test_certainty_and_stream():
    votes = np.array([[1, 0, 1], [1, 0, 0], [1, 1, 0], [1, 0, 0]])
    assert np.allclose(queries.estimated_certainty(votes), [-1.0, 0.5, 0.5])
    pos, neg = np.arange(10), np.arange(10, 100)
    s = queries.candidate_stream(pos, neg, random_state=0)
    assert np.unique(s).size == s.size and (s < 10).sum() <= 10
    # the stream stops once D+ (10 records) is used up: about 20 draws at mixture 1/2
    assert 10 <= s.size < 60 and (s < 10).sum() == 10 or s.size == 100


def test_select_queries(data):
    pool = np.arange(1500)
    pz = poison.choose_poison(data, pool, t0=0.05, t1=0.15, poison_rate=0.1, n_train=200, random_state=0)
    q = queries.select_queries(game.logistic_learner(), data, pool, n_train=200, n_ensemble=15, n_queries=60,
                               band=0.4, poison=pz, random_state=1)
    assert q.indices.size == 60 and np.all(np.abs(q.crt) <= 0.4) and not q.exhausted
    assert q.X.shape == (80, data.X.shape[1]) and np.array_equal(q.X[60:], pz.X)
    q2 = queries.select_queries(game.logistic_learner(), data, pool, n_train=200, n_ensemble=15, n_queries=60,
                                band=0.4, poison=pz, random_state=1)
    assert np.array_equal(q.indices, q2.indices)
    # A narrow band on a small pool runs out: exhausted is reported, not an error.
    q3 = queries.select_queries(game.logistic_learner(), data, np.arange(100), n_train=50, n_ensemble=5,
                                n_queries=90, band=0.0, random_state=1)
    assert q3.exhausted and q3.indices.size < 90


def test_logistic_learner_is_sklearns_default_logistic_regression(data):
    # The paper's learner: scikit-learn's LogisticRegression() (lbfgs, C = 1, tol 1e-4), on sparse rows too.
    subsets = [np.arange(0, 300), np.arange(300, 700)]
    bank = game.logistic_learner().fit_many(sp.csr_matrix(data.X), data.y, subsets, [0, 1])
    for k, s in enumerate(subsets):
        ref = LogisticRegression(max_iter=1000).fit(data.X[s], data.y[s])
        np.testing.assert_allclose(bank.predict_proba(data.X[:50])[k], ref.predict_proba(data.X[:50]), atol=1e-12)


def test_mlp_learner_is_the_papers_network(data):
    bank = game.mlp_learner((8, 4), epochs=2).fit_many(sp.csr_matrix(data.X), data.y, [np.arange(200)], [0])
    assert [w.shape for w in bank.weights_] == [(1, data.X.shape[1], 8), (1, 8, 4), (1, 4, 2)]
    assert bank.activation == "relu" and bank.info["optimizer"] == "adam" and bank.info["mode"] == "fast"


def test_predicates():
    import pandas as pd

    frame = pd.DataFrame({"sex": [" Female", "Male", "Female"], "age": [1, 2, 3]})
    assert predicates.parse_predicate("sex=Female", frame).tolist() == [True, False, True]
    assert predicates.parse_predicate("sex!=Female", frame).tolist() == [False, True, False]
    with pytest.raises(InvalidParameterError, match="values of 'sex' include"):
        predicates.parse_predicate("sex=Other", frame)
    with pytest.raises(InvalidParameterError, match="not in the data"):
        predicates.parse_predicate("gender=Female", frame)
    bits = predicates.random_feature(10000, rate=0.3, random_state=0)
    assert abs(bits.mean() - 0.3) < 0.02
    X2 = predicates.append_feature(np.zeros((3, 2)), np.array([1, 0, 1]))
    assert X2[:, -1].tolist() == [1, 0, 1]
    Xs = predicates.append_feature(sp.csr_matrix(np.zeros((3, 2))), np.array([1, 0, 1]))
    assert sp.issparse(Xs) and Xs.toarray()[:, -1].tolist() == [1, 0, 1]


def test_negative_sentiment():
    pytest.importorskip("vaderSentiment")
    f = predicates.negative_sentiment(["I hate this terrible awful spam", "What a wonderful lovely day", "ok"])
    assert f.tolist() == [True, False, False]
    s = predicates.vader_scores(["I hate this terrible awful spam"])
    assert s[0, 3] <= -0.05 and s[0, 0] > s[0, 2]


def test_out_of_bag_certainty_hand_computed():
    # 3 models x 4 candidates; crt = 1 - 2 * mean vote over the models that did not train on the candidate
    votes = np.array([[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 0, 1]])
    in_train = np.array([[True, False, False, True], [False, False, True, True], [False, True, False, True]])
    crt = queries.out_of_bag_certainty(votes, in_train)
    # col 0: models 1, 2 -> votes 1, 0 -> 0; col 1: models 0, 1 -> 0, 1 -> 0;
    # col 2: models 0, 2 -> 1, 0 -> 0; col 3: no model left out -> NaN
    np.testing.assert_array_equal(crt[:3], [0.0, 0.0, 0.0])
    assert np.isnan(crt[3])
    # all models voting: the paper's estimate
    np.testing.assert_allclose(queries.estimated_certainty(votes), [-1 / 3, -1 / 3, 1 / 3, -1.0], atol=1e-15)
    crt = queries.out_of_bag_certainty(votes, in_train, min_models=2)
    np.testing.assert_array_equal(np.isnan(crt), [False, False, False, True])
    assert np.isnan(queries.out_of_bag_certainty(votes[:1], in_train[:1], min_models=2)).all()
    with pytest.raises(InvalidInputError, match="same shape"):
        queries.out_of_bag_certainty(votes, in_train[:2])


def test_select_queries_out_of_bag_uses_only_unseen_models(data):
    # Every accepted query's certainty must equal the out-of-bag estimate recomputed from the same ensemble.
    pool = np.arange(1200)
    kw = dict(n_train=600, n_ensemble=12, n_queries=40, band=0.4, random_state=5)
    q = queries.select_queries(game.logistic_learner(), data, pool, out_of_bag=True, min_out_of_bag=3, **kw)
    rng = np.random.default_rng(5)
    pos, neg = pool[data.f[pool]], pool[~data.f[pool]]
    sets = [game.sample_mixture(pos, neg, 600, random_state=rng) for _ in range(12)]
    bank = game.logistic_learner().fit_many(data.X, data.y, sets, list(range(12)))
    votes = bank.predict_proba(data.X[q.indices]).argmax(axis=-1)
    inside = np.stack([np.isin(q.indices, s) for s in sets])
    ref = queries.out_of_bag_certainty(votes, inside, min_models=3)
    np.testing.assert_allclose(q.crt, ref)
    assert np.all(np.abs(q.crt) <= 0.4) and np.all((~inside).sum(0) >= 3)
