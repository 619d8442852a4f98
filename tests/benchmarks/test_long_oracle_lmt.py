"""The oracle's Weka LMT (benchmarks/_lmt_oracle.py) and the LogitBoost it shares with SimpleLogistic
(benchmarks/long_table2_oracle.py), piece by piece on cases with a known answer (seconds, no Adult data)."""

import math

import numpy as np
import pytest


@pytest.fixture
def oracle(load_benchmark):
    return load_benchmark("long_table2_oracle")


@pytest.fixture
def lmt(load_benchmark):
    return load_benchmark("_lmt_oracle")


def test_weka_stratify_and_folds_by_hand(oracle):
    """Instances.stratify's swaps group the first record's class first and reorder the other class ([4, 5, 1], not
    [1, 4, 5]); stratStep deals every 3rd; testCV's blocks are 3, 2, 2."""
    y = np.array([1, 0, 1, 1, 0, 0, 1])
    sl = oracle.SimpleLogisticLearner
    assert sl.stratified_order(y, 3).tolist() == [0, 6, 1, 2, 4, 3, 5]
    folds = [(tr.tolist(), te.tolist()) for tr, te in sl.cv_folds(y, 3)]
    assert folds == [([2, 4, 3, 5], [0, 6, 1]), ([0, 6, 1, 3, 5], [2, 4]), ([0, 6, 1, 2, 4], [3, 5])]


def test_logitboost_round_is_wekas_weighted_simple_regression(oracle, rng):
    """One round against LogisticBase.performIteration written out plainly: z = 1/p or -1/(1-p) clipped at 3,
    w = (y - p) / z (not p(1-p) where z is clipped), the attribute of least weighted SSE, its WLS line."""
    n = 60
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, 2, n)
    g = rng.normal(scale=3, size=n)  # many records far from p = 1/2, so the clip matters
    p0 = 1 / (1 + np.exp(-g))
    act = (y == 0).astype(float)
    z = np.where(act == 1, np.minimum(1 / p0, 3), np.maximum(-1 / (1 - p0), -3))
    w = (act - p0) / z
    assert np.any(np.abs(w - p0 * (1 - p0)) > 1e-3)
    best = None
    for a in range(4):
        xm, zm = np.average(X[:, a], weights=w), np.average(z, weights=w)
        b1 = np.sum(w * (X[:, a] - xm) * (z - zm)) / np.sum(w * (X[:, a] - xm) ** 2)
        b0 = zm - b1 * xm
        sse = np.sum(w * (z - b0 - b1 * X[:, a]) ** 2)
        if best is None or sse < best[0]:
            best = (sse, a, b0, b1)
    a, b0, b1 = oracle.SimpleLogisticLearner._round(X, np.hstack([X, X * X]), y, g)
    assert a == best[1]
    assert (b0, b1) == pytest.approx(best[2:], rel=1e-10)


def test_logitboost_stops_where_no_attribute_varies(oracle):
    X = np.ones((8, 2))
    y = np.array([0, 1] * 4)
    assert oracle.SimpleLogisticLearner._round(X, np.hstack([X, X]), y, np.zeros(8)) is None
    c0, coef, g, done = oracle.SimpleLogisticLearner()._boost(X, y, 5)
    assert done == 0 and c0 == 0 and not coef.any()


def test_c45_numeric_split_by_hand(lmt):
    """x = 1..20, y = [x > 12]: 17 cuts leave 2 records a side (minSplit 2); the pure cut's gain H(0.4) loses
    log2(17)/20 (MDL); the midpoint 12.5; the gain ratio divides by the split's entropy, H(0.4) too."""
    x = np.arange(1.0, 21.0)
    y = (x > 12).astype(int)
    s = lmt.numeric_split(x, y, attr=3)
    h = -(0.4 * math.log2(0.4) + 0.6 * math.log2(0.6))
    assert s.attr == 3 and s.n_sub == 2 and s.point == 12.5
    assert s.info_gain == pytest.approx(h - math.log2(17) / 20, rel=1e-12)
    assert s.gain_ratio == pytest.approx((h - math.log2(17) / 20) / h, rel=1e-12)
    assert lmt.numeric_split(x, np.zeros(20, int), attr=0) is None  # no gain: no valid split


def test_c45_nominal_split_by_hand(lmt):
    """Three values (the third absent: an empty bag); info gain and gain ratio from the 2 x 2 table."""
    codes = np.array([0] * 6 + [1] * 4)
    y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 0])
    s = lmt.nominal_split(codes, 3, y, attr=1)

    def H(*p):
        return -sum(q * math.log2(q) for q in p if q)

    gain = H(0.6, 0.4) - 0.6 * H(5 / 6, 1 / 6) - 0.4 * H(0.75, 0.25)
    assert s.n_sub == 3
    assert s.info_gain == pytest.approx(gain, rel=1e-12)
    assert s.gain_ratio == pytest.approx(gain / H(0.6, 0.4), rel=1e-12)
    assert lmt.nominal_split(np.array([0] * 9 + [1]), 3, y, attr=1) is None  # one bag with >= 2 records


def _node(lmt, wrong, n_rounds=1, sons=None):
    nd = lmt.Node(0.0, np.zeros(1), n_rounds, wrong, 100)
    if sons:
        nd.leaf, nd.sons = False, sons
    return nd


def test_cart_alpha_counts_empty_leaves_as_one_and_prunes_useless_splits(lmt):
    """alpha = (model errors - subtree errors) / n / (leaves - 1); two empty leaves (no rounds of their own) count
    as one; a split that does not lower the training errors is pruned at once."""
    root = _node(lmt, 10, sons=[_node(lmt, 3), _node(lmt, 2)])
    lmt.tree_errors(root)
    lmt.calculate_alphas(root)
    assert root.alpha == pytest.approx(0.05)
    root = _node(lmt, 10, sons=[_node(lmt, 3), _node(lmt, 0, 0), _node(lmt, 1, 0), _node(lmt, 2)])
    lmt.tree_errors(root)
    lmt.calculate_alphas(root)
    assert lmt.num_leaves(root) == 3 and root.alpha == pytest.approx(0.04 / 2)
    useless = _node(lmt, 5, sons=[_node(lmt, 3), _node(lmt, 2)])
    lmt.tree_errors(useless)
    lmt.calculate_alphas(useless)
    assert useless.leaf and useless.sons is None


def _band(rng, n=400):
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, (np.abs(X[:, 0]) > 0.5).astype(int)


def test_lmt_splits_where_one_logistic_model_cannot(oracle, lmt, rng):
    """y = [|x_0| > 0.5]: no single logistic model fits it (at best the majority's ~0.5 or one side's 0.75); LMT cuts
    x_0 near -0.5 or 0.5 and its leaves' models take the rest."""
    X, y = _band(rng)
    Xt, yt = _band(rng)
    m = lmt.LMTLearner(oracle.SimpleLogisticLearner(200), [("num", 0), ("num", 1)])
    p = m.fit_predict(X, y, Xt)
    sl = oracle.SimpleLogisticLearner(200).fit_predict(X, y, Xt)
    assert (p.argmax(1) == yt).mean() > 0.95
    assert (sl.argmax(1) == yt).mean() < 0.8
    assert m.root.split.attr == 0 and abs(abs(m.root.split.point) - 0.5) < 0.05
    assert m.root.split.point in X[:, 0]  # moved down to a training value
    assert len(lmt.leaves(m.root)) >= 2


def test_children_continue_their_parents_boosting(oracle, lmt, rng):
    """Each child of the band tree starts from its parent's function and runs the root's k rounds more on its own
    records; a child of fewer than 5 records keeps its parent's model."""
    X, y = _band(rng)
    m = lmt.LMTLearner(oracle.SimpleLogisticLearner(200), [("num", 0), ("num", 1)])
    m.fit(X, y)
    root = m.build(np.arange(len(y)), 0.0, np.zeros(2), np.zeros(len(y)), len(y))  # unpruned, on all the data

    def walk(node, rows):
        if node.sons is None:
            return 0
        sub = node.split.route(m.vals[node.split.attr][rows])
        checked = 0
        for j, son in enumerate(node.sons):
            r = rows[sub == j]
            if len(r) < 5:
                assert son.n_rounds == 0 and son.c0 == node.c0 and np.array_equal(son.coef, node.coef)
            else:
                g = node.c0 + X[r] @ node.coef
                c0, coef, _, done = m.lb._boost(X[r], y[r], m.k, g, None, node.c0, node.coef)
                assert done == son.n_rounds == m.k
                assert son.c0 == pytest.approx(c0) and son.coef == pytest.approx(coef)
            checked += 1 + walk(son, r)
        return checked

    assert m.k > 0 and walk(root, np.arange(len(y))) >= 2


def test_lmt_on_logistic_data_is_one_leaf_equal_to_simplelogistic(oracle, lmt, rng):
    """Data from one logistic model: pruning leaves the root alone, and the root is SimpleLogistic's model (the same
    CV'd number of rounds, at most 200) to the last bit."""
    X = rng.normal(size=(300, 3))
    y = (rng.random(300) < 1 / (1 + np.exp(-2 * X[:, 0] + X[:, 1]))).astype(int)
    m = lmt.LMTLearner(oracle.SimpleLogisticLearner(200), [("num", 0), ("num", 1), ("num", 2)])
    p = m.fit_predict(X, y, X)
    assert m.root.leaf and m.root.n_rounds == m.k > 0
    np.testing.assert_array_equal(p, oracle.SimpleLogisticLearner(200).fit_predict(X, y, X))


def test_weka_attrs_follow_the_adult_file(oracle):
    vocab = np.array([9, 16, 7, 15, 6, 5, 2, 42])
    attrs = oracle.weka_attrs(vocab)
    assert [k for k, _ in attrs] == ["num", "nom", "nom", "num", "nom", "nom", "nom", "nom", "nom", "num", "num",
                                     "num", "nom"]
    assert attrs[0] == ("num", 0) and attrs[3] == ("num", 1)
    assert attrs[1][1].tolist() == list(range(5, 14)) and attrs[12][1].tolist() == list(range(102 - 42 + 5, 107))
