"""RandomForest: scikit-learn's forests, grown many at once (the compiled kernel, or scikit-learn itself).

The oracle is scikit-learn itself. Our trees follow its algorithm and random
streams step by step, so with the same seed a forest must predict exactly what
``RandomForestClassifier(random_state=seed)`` predicts (1e-12), ties included;
one tree without bootstrap and with all features must equal
``DecisionTreeClassifier`` seeded as the forest seeds its trees.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.learners import RandomForest, SklearnLearner

MAX_INT = np.iinfo(np.int32).max


def _continuous(n=300, d=5, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, y, rng.normal(size=(200, d))


def _one_hot(n=400, seed=1):
    """Categorical attributes one-hot encoded plus one integer column: many tied values and tied splits."""
    rng = np.random.default_rng(seed)
    cats = [rng.integers(0, m, n) for m in (3, 5, 2, 7)]
    X = np.hstack([np.eye(m)[c] for m, c in zip((3, 5, 2, 7), cats)] + [rng.integers(0, 6, (n, 1))])
    y = ((cats[0] == 1) ^ (cats[1] > 2) | (rng.random(n) < 0.2)).astype(int)
    return X.astype(float), y


def _tree_seed(seed):
    """The seed RandomForestClassifier(random_state=seed) gives its first tree."""
    return np.random.RandomState(seed).randint(MAX_INT)


# -- one tree: DecisionTreeClassifier ----------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"max_depth": 3}, {"min_samples_leaf": 5}, {"min_samples_split": 20},
                                {"criterion": "entropy"}, {"min_samples_leaf": 0.02, "min_samples_split": 0.1}])
@pytest.mark.parametrize("k", [2, 3])
def test_one_tree_equals_decision_tree(kw, k):
    X, y, Xf = _continuous(k=k)
    m = RandomForest(n_estimators=1, bootstrap=False, max_features=None, **kw).fit(X, y, random_state=3)
    sk = DecisionTreeClassifier(random_state=_tree_seed(3), **kw).fit(X, y)
    for Z in (X, Xf):
        np.testing.assert_allclose(m.predict_proba(Z), sk.predict_proba(Z), rtol=0, atol=1e-12)
    assert m.tree_leaf_counts()[0] == sk.get_n_leaves()
    assert m.bank_.depth[0] == sk.get_depth()


# -- forests: RandomForestClassifier -----------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"max_features": "log2"}, {"max_features": 2}, {"max_features": 0.5},
                                {"max_features": None}, {"bootstrap": False}, {"max_samples": 0.5},
                                {"max_samples": 50}, {"max_depth": 4, "min_samples_leaf": 3},
                                {"criterion": "log_loss"}])
def test_forest_equals_random_forest_classifier(kw):
    X, y, Xf = _continuous(k=3)
    m = RandomForest(n_estimators=15, **kw).fit(X, y, random_state=7)
    sk = RandomForestClassifier(n_estimators=15, random_state=7, **kw).fit(X, y)
    for Z in (X, Xf):
        np.testing.assert_allclose(m.predict_proba(Z), sk.predict_proba(Z), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(m.tree_leaf_counts(), [e.get_n_leaves() for e in sk.estimators_])


def test_forest_equals_sklearn_on_one_hot_data_with_ties():
    """Tied values and tied splits: equal too, since the feature order and tie rule are sklearn's."""
    X, y = _one_hot()
    for seed in (0, 5):
        m = RandomForest(n_estimators=25).fit(X, y, random_state=seed)
        sk = RandomForestClassifier(n_estimators=25, random_state=seed).fit(X, y)
        np.testing.assert_allclose(m.predict_proba(X), sk.predict_proba(X), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(m.tree_leaf_counts(), [e.get_n_leaves() for e in sk.estimators_])


def test_forest_equals_sklearn_on_adult():
    """Real data (Adult, one-hot + z-scored): the forests of one shadow-model setting are sklearn's."""
    from leakaudit.data import load_adult

    d = load_adult(drop_missing=True)
    X, _ = d.encode()
    X = np.asarray(X, np.float64)
    y = np.asarray(d.y, np.int64)
    idx = np.random.default_rng(0).permutation(len(y))[:1500]
    tr, te = idx[:1000], idx[1000:]
    m = RandomForest(n_estimators=20).fit(X[tr], y[tr], random_state=11)
    sk = RandomForestClassifier(n_estimators=20, random_state=11).fit(X[tr], y[tr])
    for rows in (tr, te):
        np.testing.assert_allclose(m.predict_proba(X[rows]), sk.predict_proba(X[rows]), rtol=0, atol=1e-12)


def test_fit_many_equals_sklearn_learner():
    """The bank is SklearnLearner(RandomForestClassifier()).fit_many's, model for model."""
    X, y, Xf = _continuous(n=200)
    subsets = [np.arange(0, 150), np.arange(50, 200), np.arange(0, 200, 2)]
    ours = RandomForest(n_estimators=10).fit_many(X, y, subsets, [1, 2, 3])
    ref = SklearnLearner(RandomForestClassifier(n_estimators=10)).fit_many(X, y, subsets, [1, 2, 3])
    np.testing.assert_allclose(ours.predict_proba(Xf), ref.predict_proba(Xf), rtol=0, atol=1e-12)


# -- the Learner protocol --------------------------------------------------------------------------------
def test_fit_equals_fit_many_model():
    X, y, Xf = _continuous(n=250)
    s = np.arange(20, 220)
    bank = RandomForest(n_estimators=12).fit_many(X, y, [np.arange(100), s], [9, 4])
    one = RandomForest(n_estimators=12).fit(X[s], y[s], random_state=4)
    np.testing.assert_array_equal(one.predict_proba(Xf), bank.model(1).predict_proba(Xf))
    np.testing.assert_array_equal(one.predict_proba(Xf), bank.predict_proba(Xf)[1])


def test_same_seed_same_forest_whatever_the_threads():
    X, y, Xf = _continuous(n=250)
    subsets = [np.arange(0, 200), np.arange(50, 250), np.arange(0, 250, 2), np.arange(1, 250, 2)]
    a = RandomForest(n_estimators=8, n_threads=1).fit_many(X, y, subsets, [1, 2, 3, 4])
    b = RandomForest(n_estimators=8, n_threads=2).fit_many(X, y, subsets, [1, 2, 3, 4])
    for name in ("node_off", "leaf_off", "feature", "threshold", "left", "leaf", "value"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.predict_proba(Xf), b.predict_proba(Xf))
    c = RandomForest(n_estimators=8).fit_many(X, y, subsets, [1, 2, 3, 5])
    np.testing.assert_array_equal(c.predict_proba(Xf)[:3], a.predict_proba(Xf)[:3])
    assert not np.array_equal(c.predict_proba(Xf)[3], a.predict_proba(Xf)[3])


def test_bank_shapes_and_single_class_subset():
    X, y, Xf = _continuous(n=120, k=3)
    only0 = np.flatnonzero(y == 0)
    bank = RandomForest(n_estimators=4).fit_many(X, y, [np.arange(120), only0], [0, 1], n_classes=4)
    P = bank.predict_proba(Xf)
    assert P.shape == (2, len(Xf), 4) and len(bank) == 2
    np.testing.assert_allclose(P.sum(-1), 1.0)
    np.testing.assert_array_equal(P[1], np.tile([1.0, 0, 0, 0], (len(Xf), 1)))
    assert np.all(P[0][:, 3] == 0)
    assert bank.predict_proba(np.zeros((0, X.shape[1]))).shape == (2, 0, 4)


def test_threshold_rounding_keeps_every_decision():
    """float32 thresholds (rounded down) send every float32 input where the float64 threshold does."""
    from leakaudit.learners.forest import round_down_f32 as _round_down_f32

    rng = np.random.default_rng(0)
    t64 = np.concatenate([rng.normal(size=2000), rng.normal(size=2000).astype(np.float32).astype(np.float64)])
    t32 = _round_down_f32(t64)
    x = t64.astype(np.float32)
    for xs in (np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))):
        np.testing.assert_array_equal(xs.astype(np.float64) <= t64, xs <= t32)
    assert np.any(t32.astype(np.float64) != t64)  # some thresholds were rounded (the test has teeth)


# -- bad input -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    ({"n_estimators": 0}, "n_estimators"), ({"n_estimators": 2.0}, "n_estimators"),
    ({"criterion": "mse"}, "criterion"), ({"max_depth": 0}, "max_depth"),
    ({"min_samples_split": 1}, "min_samples_split"), ({"min_samples_split": 1.5}, "min_samples_split"),
    ({"min_samples_leaf": 0}, "min_samples_leaf"), ({"min_samples_leaf": 1.0}, "min_samples_leaf"),
    ({"max_features": "auto"}, "max_features"), ({"max_features": 0}, "max_features"),
    ({"max_features": 99}, "max_features"), ({"max_features": 1.5}, "max_features"),
    ({"max_features": True}, "max_features"), ({"bootstrap": "yes"}, "bootstrap"),
    ({"bootstrap": False, "max_samples": 0.5}, "max_samples"), ({"max_samples": 0}, "max_samples"),
    ({"max_samples": -0.5}, "max_samples"), ({"n_threads": 0}, "n_threads"),
])
def test_bad_parameters_raise_naming_them(kw, match):
    X, y, _ = _continuous(n=50)
    with pytest.raises(InvalidParameterError, match=match):
        RandomForest(**kw).fit(X, y, random_state=0)


def test_bad_inputs_raise_our_errors():
    X, y, _ = _continuous(n=50)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="X contains NaN"):
        RandomForest(n_estimators=2).fit(Xn, y)
    Xb = X.copy()
    Xb[4, 0] = 1e39  # finite in float64, inf in float32
    with pytest.raises(InvalidInputError, match="float32"):
        RandomForest(n_estimators=2).fit(Xb, y)
    with pytest.raises(InvalidInputError, match="y"):
        RandomForest(n_estimators=2).fit(X, y[:-1])
    with pytest.raises(InvalidInputError, match="y"):
        RandomForest(n_estimators=2).fit(X, y + 0.5)
    with pytest.raises(InvalidParameterError, match="random_states"):
        RandomForest(n_estimators=2).fit_many(X, y, [np.arange(50)], [2**33])
    m = RandomForest(n_estimators=2).fit(X, y, random_state=0)
    with pytest.raises(InvalidInputError, match="features"):
        m.predict_proba(X[:, :3])
    with pytest.raises(InvalidInputError, match="X contains inf"):
        m.predict_proba(np.where(X > 1, np.inf, X))
    with pytest.raises(InvalidInputError, match="float32"):
        m.predict_proba(np.where(X > 1, 1e300, X))


def test_parameters_are_kept_and_clone_works():
    from sklearn.base import clone

    rf = RandomForest(n_estimators=3, max_features=2, max_depth=5)
    X, y, _ = _continuous(n=60)
    rf.fit(X, y, random_state=0)
    assert rf.get_params()["max_features"] == 2 and rf.max_depth == 5
    assert clone(rf).get_params() == rf.get_params()


def test_from_sklearn_keeps_the_estimator_settings_and_refuses_the_others():
    from leakaudit.exceptions import UnsupportedError

    est = RandomForestClassifier(n_estimators=7, max_depth=4, max_features=0.5, min_samples_leaf=2, random_state=3)
    rf = RandomForest.from_sklearn(est)
    assert (rf.n_estimators, rf.max_depth, rf.max_features, rf.min_samples_leaf) == (7, 4, 0.5, 2)
    X, y, Xf = _continuous(n=150)
    np.testing.assert_allclose(rf.fit(X, y, random_state=3).predict_proba(Xf), est.fit(X, y).predict_proba(Xf),
                               rtol=0, atol=1e-12)
    for bad in ({"class_weight": "balanced"}, {"ccp_alpha": 0.01}, {"max_leaf_nodes": 8}):
        with pytest.raises(UnsupportedError, match=next(iter(bad))):
            RandomForest.from_sklearn(RandomForestClassifier(**bad))
    with pytest.raises(UnsupportedError, match="RandomForestClassifier"):
        RandomForest.from_sklearn(DecisionTreeClassifier())


def test_many_chunks_give_the_bank_of_one_chunk(monkeypatch):
    """Trees grown in many small chunks (reused build buffers, compacted straight into the bank's arrays, which grow
    when a chunk's trees are bigger than the estimate) make the same bank, bit for bit, as one chunk."""
    from leakaudit.learners import forest

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    # models of very different sizes: the first chunks' trees are small, so the arrays must grow
    subsets = [np.arange(20), np.arange(30), np.arange(300), np.arange(0, 300, 2), np.arange(250)]
    L = RandomForest(n_estimators=7, n_threads=1)
    one = L.fit_many(X, y, subsets, [1, 2, 3, 4, 5])
    monkeypatch.setattr(forest, "_BUFFER_BYTES", 1)  # chunks of n_threads trees
    many = L.fit_many(X, y, subsets, [1, 2, 3, 4, 5])
    for name in ("node_off", "leaf_off", "feature", "threshold", "left", "leaf", "value", "depth"):
        np.testing.assert_array_equal(getattr(many, name), getattr(one, name), err_msg=name)
    np.testing.assert_array_equal(many.predict_proba(X), one.predict_proba(X))


@pytest.mark.parametrize("n_threads, buffer_bytes", [(1, None), (2, None), (2, 1), (1, 5000)])
def test_fit_predict_many_equals_the_bank_bit_for_bit(monkeypatch, n_threads, buffer_bytes):
    """Trees queried as they are grown (no bank) give fit_many(...).predict_proba's numbers exactly, with chunks of
    any size (a model's trees split over chunks), on query rows not a multiple of the 8 that descend together."""
    from leakaudit.learners import forest

    X, y = _one_hot(n=300, seed=5)
    Xq = np.vstack([X[:37], np.random.default_rng(0).integers(0, 2, (20, X.shape[1])).astype(float)])
    subsets = [np.arange(120), np.arange(60, 300), np.arange(0, 300, 3)]
    L = RandomForest(n_estimators=6, n_threads=n_threads)
    bank = L.fit_many(X, y, subsets, [3, 4, 5])
    if buffer_bytes is not None:
        monkeypatch.setattr(forest, "_BUFFER_BYTES", buffer_bytes)  # chunks of n_threads trees / ~5 trees
    got = L.fit_predict_many(X, y, subsets, [3, 4, 5], Xq)
    assert got.shape == (3, len(Xq), 2)
    np.testing.assert_array_equal(got, bank.predict_proba(Xq))
    assert L.fit_predict_many(X, y, subsets, [3, 4, 5], X[:0]).shape == (3, 0, 2)
    with pytest.raises(InvalidInputError, match="X_query has 3 features"):
        L.fit_predict_many(X, y, subsets, [3, 4, 5], X[:, :3])


@pytest.mark.parametrize("n_query", [1, 63, 64, 65, 200])
def test_query_rows_as_bitsets_give_the_row_by_row_numbers(monkeypatch, n_query):
    """fit_predict_many's trees cut the query rows as bitsets (a set per node, P[f, j] = the rows with x_f <= the
    j-th distinct value): the same sums as each row descending each tree (the bank's predict_proba, and the
    row-by-row path forced by a zero memory budget), on continuous, tied and one-hot features, query values equal
    to split thresholds, -0.0 beside 0.0, and query sets that fill 1, 2 or 4 words or part of one."""
    from leakaudit.learners import _forest_native, forest

    if _forest_native.library() is None:
        pytest.skip(f"the compiled forest kernel is not available: {_forest_native.KERNEL.reason}")
    rng = np.random.default_rng(7)
    Xoh, y = _one_hot(n=240, seed=9)
    X = np.hstack([rng.normal(size=(240, 2)), np.round(rng.normal(size=(240, 1)), 1), Xoh])
    subsets = [np.arange(150), np.arange(60, 240), np.arange(0, 240, 2)]
    L = RandomForest(n_estimators=5, n_threads=1)
    bank = L.fit_many(X, y, subsets, [1, 2, 3])
    thr = bank.threshold[bank.leaf < 0].astype(np.float64)
    Xq = np.vstack([X, X[:40]])  # training rows (their thresholds' neighbours) and duplicates
    Xq[:30, 0] = thr[:30]  # values exactly at float32 thresholds: x <= t goes left
    Xq[30:40, 2] = -0.0
    Xq[40:50, 2] = 0.0
    Xq = Xq[rng.permutation(len(Xq))[:n_query]]
    want = bank.predict_proba(Xq)
    bits = L.fit_predict_many(X, y, subsets, [1, 2, 3], Xq)
    on, P, pptr, qv, qvptr = forest._query_sets(Xq.astype(np.float32))
    monkeypatch.setattr(forest, "_BITSET_BYTES", 0)
    assert on and not forest._query_sets(Xq.astype(np.float32))[0]
    rows = L.fit_predict_many(X, y, subsets, [1, 2, 3], Xq)
    np.testing.assert_array_equal(bits, want)
    np.testing.assert_array_equal(rows, want)
    # the sets themselves: P[pptr[f] + j] holds the rows whose value of f is <= the j-th smallest distinct value
    X32 = Xq.astype(np.float32)
    for f in (0, 2, 5):
        vals = qv[qvptr[f]:qvptr[f + 1]]
        np.testing.assert_array_equal(vals, np.unique(X32[:, f]))
        for j in (0, 1, len(vals)):
            members = [i for i in range(n_query) if P[pptr[f] + j, i >> 6] >> np.uint64(i & 63) & np.uint64(1)]
            assert members == [i for i in range(n_query) if j and X32[i, f] <= vals[j - 1]]
    with pytest.raises(ValueError, match="fewer distinct values"):  # a miscounted qvptr stops, not overruns
        _forest_native.query_bitsets(np.array([[0.0], [1.0]], np.float32), np.array([0, 1], np.int64))


@pytest.mark.parametrize("n_query", [4096, 4161, 9000])
def test_bitset_query_of_many_rows_and_deep_trees_gives_the_bank_numbers(n_query):
    """The bitset query keeps, beside a node's set, which of its words are non-zero (a word of flags per 64 words
    of the set): query sets of 64 words, of more (a second flag word, partly used), and a chain-like tree deeper
    than the query's first stack (66 nodes), which it grows; the same sums as the bank's predict_proba."""
    from leakaudit.learners import _forest_native

    if _forest_native.library() is None:
        pytest.skip(f"the compiled forest kernel is not available: {_forest_native.KERNEL.reason}")
    # alternating labels along one feature: every split peels off an end row, so the trees are chains
    x = np.arange(300, dtype=float)
    X = x[:, None]
    y = (np.arange(300) % 2).astype(int)
    L = RandomForest(n_estimators=3, max_features=None, bootstrap=False, n_threads=1)
    subsets = [np.arange(300), np.arange(20, 300)]
    bank = L.fit_many(X, y, subsets, [1, 2])
    assert bank.depth.max() > 70
    rng = np.random.default_rng(5)
    Xq = rng.uniform(-5, 305, (n_query, 1))
    Xq[: len(x), 0] = x  # the training values too
    np.testing.assert_array_equal(L.fit_predict_many(X, y, subsets, [1, 2], Xq), bank.predict_proba(Xq))


def test_query_on_the_training_rows_reuses_their_column_order(monkeypatch):
    """Queried on its own training rows (reference models on their pool), the call sorts the columns once and the
    kernel reads a split's rows off the rank codes (no sets built): the same numbers as the bank's, -0.0 beside 0.0
    and ties included."""
    from leakaudit.learners import _forest_native, forest

    if _forest_native.library() is None:
        pytest.skip(f"the compiled forest kernel is not available: {_forest_native.KERNEL.reason}")
    X, y = _one_hot(n=300, seed=2)
    X[:40, -1] = -0.0
    X[40:80, -1] = 0.0
    subsets = [np.arange(200), np.arange(100, 300)]
    L = RandomForest(n_estimators=5, n_threads=1)
    given = []
    sets = forest._query_sets
    monkeypatch.setattr(forest, "_query_sets", lambda Xq, order=None, from_codes=False:
                        given.append((order is not None, from_codes)) or sets(Xq, order, from_codes))
    got = L.fit_predict_many(X, y, subsets, [1, 2], X.copy())
    other = L.fit_predict_many(X, y, subsets, [1, 2], X[::-1].copy())
    assert given == [(True, True), (False, False)]
    bank = L.fit_many(X, y, subsets, [1, 2])
    np.testing.assert_array_equal(got, bank.predict_proba(X))
    np.testing.assert_array_equal(other, bank.predict_proba(X[::-1]))


def test_fit_predict_many_equals_sklearn():
    X, y = _one_hot(n=200, seed=2)
    got = RandomForest(n_estimators=9).fit_predict_many(X, y, [np.arange(200)], [11], X)[0]
    ref = RandomForestClassifier(n_estimators=9, random_state=11).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_tree_seeds_are_the_ones_sklearn_hands_its_trees():
    from leakaudit.learners.forest import tree_seeds

    seeds = np.array([0, 7, 2**31 - 1, 2**32 - 1])
    want = np.concatenate([np.random.RandomState(int(s)).randint(np.iinfo(np.int32).max, size=13) for s in seeds])
    np.testing.assert_array_equal(tree_seeds(seeds, 13), want)


def test_tree_seeds_without_the_kernel_are_numpys(monkeypatch):
    """Where no compiled kernel opened, the trees' seeds come from numpy's RandomState itself: the same seeds."""
    from leakaudit.learners import forest

    seeds = [0, 7, 2**32 - 1]
    with_kernel = forest.tree_seeds(seeds, 9)
    monkeypatch.setattr(forest, "_compiled", lambda: None)
    np.testing.assert_array_equal(forest.tree_seeds(seeds, 9), with_kernel)
    np.testing.assert_array_equal(forest.tree_seeds(seeds, 9)[9:18], np.random.RandomState(7).randint(MAX_INT, size=9))


#: the reference trainer, then the compiled kernel
_BACKENDS = ("sklearn", "compiled")


def _native_available() -> bool:
    from leakaudit.learners import _forest_native

    return _forest_native.library() is not None


def _banks_equal(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f))
               for f in ("node_off", "leaf_off", "depth", "feature", "threshold", "left", "leaf", "value"))


def _same_trees_as_reference(got, ref) -> bool:
    """The same nodes and thresholds bit for bit, and leaf fractions within 1e-15: scikit-learn's trees hold
    s_c / w and its predict_proba divides them by their sum once more (one rounding more than the kernel's)."""
    return (all(np.array_equal(getattr(got, f), getattr(ref, f))
                for f in ("node_off", "leaf_off", "depth", "feature", "threshold", "left", "leaf"))
            and np.allclose(got.value, ref.value, rtol=0, atol=1e-15))


@pytest.mark.skipif(not _native_available(), reason="no C compiler: the native tree kernel is not built")
@pytest.mark.parametrize("data, kw", [
    ("one_hot", {}),  # two classes: packed counters, node sums of the one-hot columns
    ("one_hot", {"criterion": "entropy", "min_samples_leaf": 3}),
    ("continuous2", {"bootstrap": False, "max_features": None}),  # every row once; the sort path on wide nodes
    ("continuous3", {}),  # three classes: class sums, no packed counters
    ("continuous3", {"criterion": "entropy", "max_depth": 4, "max_samples": 0.5}),
])
def test_native_kernel_grows_scikit_learns_trees_node_for_node(data, kw):
    """The compiled kernel's banks are scikit-learn's forests (``backend="sklearn"`` trains RandomForestClassifier and
    converts its trees): the same nodes, thresholds and leaf fractions, bit for bit, and the same predictions
    whether queried as they grow or from the bank."""
    if data == "one_hot":
        X, y = _one_hot()
        Xq = X[:50]
    else:
        X, y, Xq = _continuous(k=2 if data == "continuous2" else 3)
    subsets = [np.arange(len(y)), np.arange(0, len(y), 2), np.arange(1, len(y), 3)]
    n_classes = int(y.max()) + 1
    banks = [RandomForest(n_estimators=7, backend=b, **kw).fit_many(X, y, subsets, [0, 5, 2**32 - 1],
                                                                   n_classes=n_classes) for b in _BACKENDS]
    assert _same_trees_as_reference(banks[1], banks[0])
    probs = [RandomForest(n_estimators=7, backend=b, n_threads=2, **kw).fit_predict_many(
        X, y, subsets, [0, 5, 2**32 - 1], Xq, n_classes=n_classes) for b in _BACKENDS]
    np.testing.assert_allclose(probs[1], probs[0], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(probs[1], banks[1].predict_proba(Xq))


@pytest.mark.skipif(not _native_available(), reason="no C compiler: the native tree kernel is not built")
def test_native_kernel_radix_sorts_nodes_of_many_distinct_values():
    """A node of more than 64 rows whose feature has over 8 times more distinct values than it has rows sorts its
    (code, position) keys by a radix sort on the 16-bit codes (both bytes, or one when they share the high one):
    3,000 distinct values a column make such nodes, and the trees are still scikit-learn's, node for node."""
    X, y, _ = _continuous(n=3000, d=3, k=2, seed=4)
    subsets = [np.arange(len(y)), np.arange(0, len(y), 3)]
    banks = [RandomForest(n_estimators=4, backend=b).fit_many(X, y, subsets, [3, 8]) for b in _BACKENDS]
    assert _same_trees_as_reference(banks[1], banks[0])


def _numeric_codes(n=600, seed=6):
    """Two classes and numeric columns of 40 distinct values (the histogram's occupied codes in one word), 100 (two
    words) and about 600 (ten words), and one of values grouped closer than scikit-learn's FEATURE_THRESHOLD
    (1e-7: ~200 distinct float32 values, 50 thresholds) spread over four words."""
    rng = np.random.default_rng(seed)
    near = (rng.integers(0, 50, n) * 0.01 + rng.integers(0, 4, n) * 2e-8).astype(np.float32)
    X = np.column_stack([rng.integers(0, 40, n), rng.integers(0, 100, n), np.round(rng.normal(size=n), 2), near])
    y = ((X[:, 0] > 20) ^ (X[:, 2] > 0.3) | (rng.random(n) < 0.2)).astype(int)
    return X.astype(float), y


@pytest.mark.skipif(not _native_available(), reason="no C compiler: the native tree kernel is not built")
@pytest.mark.parametrize("kw", [{}, {"min_samples_leaf": 3, "max_features": None}])
def test_native_kernel_histograms_through_the_occupied_codes_are_scikit_learns(kw):
    """A node's numeric feature with at most 64 codes a row takes packed class sums over its codes, the occupied
    ones visited through a bitmap (a register up to 64 codes, words beyond): one, two, four and ten words of codes,
    values grouped within 1e-7, bootstrap weights and a leaf minimum give scikit-learn's trees node for node."""
    from leakaudit.learners.forest import feature_codes

    X, y = _numeric_codes()
    nv = np.diff(feature_codes(X.astype(np.float32))[2])
    assert nv[0] == 40 and nv[1] == 100 and nv[2] > 300 and 150 < nv[3] < 256
    subsets = [np.arange(len(y)), np.arange(0, len(y), 2)]
    banks = [RandomForest(n_estimators=4, backend=b, **kw).fit_many(X, y, subsets, [1, 7]) for b in _BACKENDS]
    assert banks[1].depth.max() > 6
    assert _same_trees_as_reference(banks[1], banks[0])


@pytest.mark.slow
@pytest.mark.skipif(not _native_available(), reason="the native tree kernel was not built with the package")
def test_histogram_path_grows_the_sort_paths_trees(tmp_path, monkeypatch):
    """The kernel built with ``-DLEAKAUDIT_FOREST_HIST_ROWS=0`` sorts every numeric node's keys (the histogram
    path never taken); the installed one histograms most of them: the same banks, and the same numbers queried
    on the training rows, bit for bit, on one-hot data with an integer column and on numeric columns."""
    import subprocess

    from leakaudit.learners import _forest_native
    from leakaudit.learners._kernel_flags import compile_with

    installed = _forest_native.KERNEL.load()
    try:
        path = compile_with("forest", installed.variant, ["-DLEAKAUDIT_FOREST_HIST_ROWS=0"], tmp_path / "sort.so")
    except (RuntimeError, subprocess.CalledProcessError) as e:
        pytest.skip(f"the kernel does not compile here: {e}")
    sorting = _forest_native.KERNEL.open_file(path, installed.variant)
    for X, y in (_one_hot(), _numeric_codes()):
        subsets = [np.arange(len(y)), np.arange(1, len(y), 2)]
        L = RandomForest(n_estimators=8, n_threads=2)
        runs = []
        for lib in (installed, sorting):
            monkeypatch.setattr(_forest_native.KERNEL, "load", lambda lib=lib: lib)
            runs.append((L.fit_many(X, y, subsets, [3, 4]), L.fit_predict_many(X, y, subsets, [3, 4], X.copy())))
        assert _banks_equal(runs[0][0], runs[1][0])
        np.testing.assert_array_equal(runs[0][1], runs[1][1])


@pytest.fixture(scope="module")
def every_forest_variant(tmp_path_factory) -> dict:
    """{variant: library} of each forest kernel variant this CPU runs: the one installed, the others (an editable
    install builds only this CPU's best: setup.py) compiled here as setup.py compiles them."""
    import subprocess

    from leakaudit.learners import _forest_native
    from leakaudit.learners._kernel_flags import CPU_LEVEL, compile_with
    from leakaudit.learners._native import VARIANTS, cpu_level, library_path

    libs = {}
    for variant in (v for v in VARIANTS if CPU_LEVEL[v] <= cpu_level()):
        path = library_path(f"_forest_kernel_{variant}")
        if path is None:
            try:
                path = compile_with("forest", variant, [], tmp_path_factory.mktemp(variant) / "forest.so")
            except (RuntimeError, subprocess.CalledProcessError) as e:
                pytest.skip(f"the {variant} variant is not installed and does not compile here: {e}")
        libs[variant] = _forest_native.KERNEL.open_file(path, variant)
    return libs


@pytest.mark.skipif(not _native_available(), reason="the native tree kernel was not built with the package")
def test_every_compiled_variant_grows_the_same_trees(monkeypatch, every_forest_variant):
    """The portable, AVX2 and AVX-512 builds (those this CPU runs) grow the same trees, node for node: no fused
    multiply-add in any of them (-ffp-contract=off), so the CPU dispatch never changes a model."""
    from leakaudit.learners import _forest_native

    X, y, Xq = _continuous(k=3)
    subsets = [np.arange(len(y)), np.arange(0, len(y), 2)]
    kw = {"n_estimators": 5, "criterion": "entropy"}
    runs = {}
    for variant, lib in every_forest_variant.items():
        monkeypatch.setattr(_forest_native.KERNEL, "load", lambda lib=lib: lib)
        runs[variant] = (RandomForest(**kw).fit_many(X, y, subsets, [0, 5], n_classes=3),
                         RandomForest(n_threads=2, **kw).fit_predict_many(X, y, subsets, [0, 5], Xq, n_classes=3))
    assert "portable" in runs
    for bank, probs in runs.values():
        assert _banks_equal(bank, runs["portable"][0]) and np.array_equal(probs, runs["portable"][1])


@pytest.mark.skipif(not _native_available(), reason="the native tree kernel was not built with the package")
@pytest.mark.parametrize("n", [64, 130, 257])
def test_every_variant_reads_the_training_rows_splits_off_the_codes(monkeypatch, n, every_forest_variant):
    """Queried on the training rows, each build (portable: a loop; AVX2 and AVX-512: 64 codes compared at once, the
    last partial word of rows without reading past the column) routes them as the bank does."""
    from leakaudit.learners import _forest_native

    X, y = _one_hot(n=n, seed=5)
    X = np.hstack([np.random.default_rng(1).normal(size=(n, 2)), X])
    subsets = [np.arange(n), np.arange(0, n, 2), np.arange(n // 3, n)]
    L = RandomForest(n_estimators=6, n_threads=2)
    want = L.fit_many(X, y, subsets, [4, 5, 6]).predict_proba(X)
    ran = []
    for variant, lib in every_forest_variant.items():
        monkeypatch.setattr(_forest_native.KERNEL, "load", lambda lib=lib: lib)
        np.testing.assert_array_equal(L.fit_predict_many(X, y, subsets, [4, 5, 6], X.copy()), want)
        ran.append(variant)
    assert "portable" in ran


def _ragged_binary(n, n_binary, seed):
    """Two-valued columns whose rows hold different numbers of ones (a category left blank, multi-hot columns), one
    integer column and one of many distinct values: the rows of the binary table differ in length."""
    rng = np.random.default_rng(seed)
    cats = rng.integers(0, 4, n)
    onehot = np.eye(5)[cats][:, :4]  # category 4 is blank: a row of zeros in this group
    multi = (rng.random((n, n_binary)) < rng.uniform(0.02, 0.4, n_binary)).astype(float)
    X = np.hstack([onehot, multi, rng.integers(0, 9, (n, 1)), rng.normal(size=(n, 1))])
    y = ((cats == 1) ^ (multi[:, 0] > 0) | (rng.random(n) < 0.15)).astype(int)
    return X, y


@pytest.mark.skipif(not _native_available(), reason="no C compiler: the native tree kernel is not built")
@pytest.mark.parametrize("n_binary", [12, 300])
def test_native_kernel_binary_sums_from_either_table_are_scikit_learns(n_binary):
    """A node's two-valued column sums are added from a fixed-width table of uint8 slots (rows padded to the longest
    with an unused slot) when there are under 256 such columns, else from the CSR lists: rows of unequal
    lengths, and 300 columns (the CSR lists), give scikit-learn's trees node for node either way."""
    X, y = _ragged_binary(300, n_binary, seed=n_binary)
    subsets = [np.arange(len(y)), np.arange(0, len(y), 2)]
    banks = [RandomForest(n_estimators=6, backend=b).fit_many(X, y, subsets, [2, 9]) for b in _BACKENDS]
    assert banks[1].depth.max() > 4  # trees deep enough that children's sums come by subtraction
    assert _same_trees_as_reference(banks[1], banks[0])


@pytest.mark.skipif(not _native_available(), reason="no C compiler: the native tree kernel is not built")
def test_native_kernel_on_int32_codes():
    """More than 65,536 distinct values in a column: int32 rank codes, the C kernel's other entry point."""
    from leakaudit.learners.forest import feature_codes

    rng = np.random.default_rng(3)
    X = np.column_stack([np.arange(70_000) * 1e-3, rng.integers(0, 2, 70_000)]).astype(float)
    y = (X[:, 0] % 7 < 3).astype(int) ^ X[:, 1].astype(int)
    assert feature_codes(X.astype(np.float32))[0].dtype == np.int32
    banks = [RandomForest(n_estimators=2, max_depth=5, backend=b).fit_many(X, y, [np.arange(70_000)], [1],
                                                                         n_classes=2) for b in _BACKENDS]
    assert _same_trees_as_reference(banks[1], banks[0])


def test_backend_parameter_is_validated():
    X, y = _one_hot()
    with pytest.raises(InvalidParameterError, match="backend"):
        RandomForest(n_estimators=2, backend="yes").fit(X, y, random_state=0)
    with pytest.raises(InvalidParameterError, match="native= was removed.*backend='sklearn'"):
        RandomForest(n_estimators=2, native=False)
    with pytest.raises(InvalidParameterError, match="unexpected keyword"):
        RandomForest(n_estimators=2, n_trees=3)


def test_backend_compiled_is_refused_without_the_kernel(monkeypatch):
    from leakaudit.learners import forest

    monkeypatch.setattr(forest, "_compiled", lambda: None)
    X, y = _one_hot()
    with pytest.raises(InvalidParameterError, match="backend='compiled' needs the forest kernel"):
        RandomForest(n_estimators=2, backend="compiled").fit(X, y, random_state=0)
    bank = RandomForest(n_estimators=2).fit_many(X, y, [np.arange(len(y))], [0])  # auto: scikit-learn's trees
    assert _same_trees_as_reference(bank, RandomForest(n_estimators=2, backend="sklearn").fit_many(
        X, y, [np.arange(len(y))], [0]))


@pytest.mark.skipif(not _native_available(), reason="no C compiler: the native tree kernel is not built")
def test_native_kernel_grows_its_node_sum_rows(monkeypatch):
    """A kernel worker starts with rows of node sums for 64 stacked nodes and doubles them for a deeper stack:
    with 2 rows every tree needs more, and the trees must still be scikit-learn's, node for node."""
    from leakaudit.learners import forest

    X, y = _one_hot(n=400)
    L = RandomForest(n_estimators=4, max_features=3, n_threads=2)
    want = RandomForest(n_estimators=4, max_features=3, backend="sklearn").fit_many(X, y, [np.arange(len(y))], [0])
    monkeypatch.setattr(forest, "_HST_ROWS", 2)
    got = L.fit_many(X, y, [np.arange(len(y))], [0])
    assert got.depth.max() > 4  # trees deep enough to push more than 2 stacked nodes
    assert _same_trees_as_reference(got, want)


def test_native_kernel_disabled_by_environment_falls_back_to_scikit_learn(monkeypatch):
    from leakaudit.learners import _forest_native

    X, y = _one_hot()
    with_default = RandomForest(n_estimators=3).fit_many(X, y, [np.arange(len(y))], [4], n_classes=2)
    monkeypatch.setenv("LEAKAUDIT_NATIVE", "0")
    assert _forest_native.library() is None
    assert "LEAKAUDIT_NATIVE=0" in _forest_native.KERNEL.reason
    reference = RandomForest(n_estimators=3).fit_many(X, y, [np.arange(len(y))], [4], n_classes=2)
    assert _same_trees_as_reference(with_default, reference)
    ref = RandomForestClassifier(n_estimators=3, random_state=4).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(reference.predict_proba(X)[0], ref)


def test_the_draws_remainder_by_products_is_the_divisions(tmp_path):
    """The splitters' feature draws (forest and gradient-boosting kernels) take rand_int's remainder x % d by
    mod_by's two products (_sklearn_rand.h): equal to the division for every divisor up to 2**16 (a draw's divisor
    is at most the number of features) on ~1,500 31-bit states each: every state below 1,024, ~500 spread over the
    rest, and the largest."""
    import shutil
    import subprocess
    from pathlib import Path

    from leakaudit.learners import _forest_native

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    header = Path(_forest_native.__file__).with_name("_sklearn_rand.h")
    (tmp_path / "mod_check.c").write_text(f"""#include <stdio.h>
#include "{header}"
int main(void) {{
    unsigned long long n = 0, bad = 0;
    for (uint32_t d = 1; d <= 65536; d++) {{
        const uint64_t m = mod_magic(d);
        for (uint64_t x = 0; x < 0x80000000ull; x = x < 1024 ? x + 1 : x + 4194301 + d) {{
            n++;
            bad += mod_by((uint32_t)x, d, m) != (uint32_t)x % d;
        }}
        n++;
        bad += mod_by(0x7FFFFFFFu, d, m) != 0x7FFFFFFFu % d;
    }}
    printf("%llu checked, %llu differ\\n", n, bad);
    return 0;
}}
""")
    exe = tmp_path / "mod_check"
    subprocess.run([cc, "-O2", "-std=gnu11", "-o", str(exe), str(tmp_path / "mod_check.c")], check=True)
    report = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert report.endswith(" 0 differ\n") and int(report.split()[0]) > 9 * 10**7, report
