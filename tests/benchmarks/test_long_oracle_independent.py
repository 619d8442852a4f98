"""benchmarks/long_table2_oracle.py (issue 65): it imports nothing from leakaudit, and its core functions give the
numbers the paper's definitions give on tiny hand-checkable cases (seconds, no Adult data)."""

import ast
import math

import numpy as np
import pytest

from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "long_table2_oracle.py"
LMT = SCRIPT.with_name("_lmt_oracle.py")  # the oracle's LMT, imported by it
ALLOWED = {"argparse", "json", "os", "time", "pathlib", "numpy", "pandas", "scipy", "sklearn"}


def _imported_modules(path):
    tree = ast.parse(path.read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import in the oracle"
            mods.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__"):
            raise AssertionError("dynamic import in the oracle")
    return mods


@pytest.mark.parametrize("path, siblings", [(SCRIPT, {"_lmt_oracle"}), (LMT, set())])
def test_oracle_imports_nothing_from_leakaudit(path, siblings):
    mods = _imported_modules(path)
    assert mods, "no imports parsed"
    assert not [m for m in mods if m.split(".")[0] == "leakaudit"]
    assert {m.split(".")[0] for m in mods} <= ALLOWED | siblings, mods - ALLOWED - siblings


def test_the_import_check_catches_leakaudit(tmp_path):
    for src in ("import leakaudit\n", "from leakaudit.dtp import pdtp\n", "import leakaudit.membership as m\n"):
        p = tmp_path / "x.py"
        p.write_text(src)
        assert any(m.split(".")[0] == "leakaudit" for m in _imported_modules(p))


@pytest.fixture
def oracle(load_benchmark):
    return load_benchmark("long_table2_oracle")


def test_binning_and_pdtp_by_hand(oracle):
    np.testing.assert_allclose(oracle.bin_probs([0.0, 1.0, 0.5, 0.0149, 0.0099]), [0.005, 0.995, 0.505, 0.015, 0.005])
    # p_full = (0.5, 0.5) -> (0.505, 0.505); p_loo = (0.7, 0.3) -> (0.705, 0.305)
    assert oracle.pdtp(np.array([0.5, 0.5]), np.array([0.7, 0.3])) == pytest.approx(math.log(0.505 / 0.305))
    assert oracle.pdtp(np.array([0.3, 0.7]), np.array([0.3, 0.7])) == 0.0
    assert oracle.pdtp(np.array([0.0, 1.0]), np.array([1.0, 0.0])) == pytest.approx(math.log(199))


def test_distance_decision(oracle):
    q = oracle.bin_probs(np.array([0.9, 0.1]))
    p_in = oracle.bin_probs(np.array([[0.9, 0.1]] * 5))
    p_out = oracle.bin_probs(np.array([[0.6, 0.4]] * 5))
    assert oracle.distance_decision(q, p_in, p_out)
    assert not oracle.distance_decision(q, p_out, p_in)
    assert not oracle.distance_decision(q, p_in, p_in)  # a tie says 'out'


def _nb_by_hand(num, cat, y, vocab, x_num, x_cat, floor):
    """Gaussian / Laplace NB written out plainly, for one query."""
    logp = []
    for c in (0, 1):
        m = y == c
        lp = math.log((m.sum() + 1) / (len(y) + 2))
        for i, v in enumerate(vocab):
            lp += math.log((np.sum(cat[m, i] == x_cat[i]) + 1) / (m.sum() + v))
        for j in range(num.shape[1]):
            mu, sd = num[m, j].mean(), max(num[m, j].std(), floor)
            lp += -0.5 * ((x_num[j] - mu) / sd) ** 2 - math.log(sd)
        logp.append(lp)
    e = np.exp(np.array(logp) - max(logp))
    return e / e.sum()


def test_nb_from_sums_is_nb_retrained_and_its_pdtp(oracle, rng):
    n = 40
    num = rng.normal(size=(n, 2)) * [1, 10]
    vocab = np.array([3, 4])
    cat = np.stack([rng.integers(0, 3, n), rng.integers(0, 4, n)], axis=1)
    y = (num[:, 0] + rng.normal(size=n) > 0).astype(int)
    nb = oracle.NBDesign(num, cat, y, vocab, std_floor=1e-3)
    T = np.arange(30)
    t = 7
    ind = np.zeros(n)
    ind[T] = 1
    full = nb.fit(ind)
    sel = nb.select([t])[0]
    p_full = nb.proba(full[sel], num[t])
    p_loo = nb.proba(full[sel] - nb.G[t, sel], num[t])
    keep = T[T != t]
    np.testing.assert_allclose(p_full, _nb_by_hand(num[T], cat[T], y[T], vocab, num[t], cat[t], 1e-3), rtol=1e-9)
    np.testing.assert_allclose(p_loo, _nb_by_hand(num[keep], cat[keep], y[keep], vocab, num[t], cat[t], 1e-3),
                               rtol=1e-9)
    expected = np.max(np.abs(np.log(oracle.bin_probs(p_full)) - np.log(oracle.bin_probs(p_loo))))
    assert oracle.pdtp(p_full, p_loo) == pytest.approx(expected)
    # every record's prediction from predict_all matches the by-hand model
    allp = nb.predict_all(full)
    np.testing.assert_allclose(allp[3], _nb_by_hand(num[T], cat[T], y[T], vocab, num[3], cat[3], 1e-3), rtol=1e-9)


def test_pdtp_zero_for_a_record_whose_duplicate_stays(oracle):
    """Removing one of 50 identical copies of a record barely moves LR: its PDTP is 0 after binning."""
    X = np.array([[0.0], [1.0]] * 50 + [[0.5]])
    y = np.array([0, 1] * 50 + [1])
    lr = oracle.LRLearner(C=1.0)
    p_full = lr.fit_predict(X, y, X[:1])[0]
    p_loo = lr.fit_predict(X[1:], y[1:], X[:1])[0]
    assert oracle.pdtp(p_full, p_loo) == 0.0


def test_shadow_sets_exclude_the_target(oracle, rng):
    ind = oracle.sample_shadow_sets(rng, 2000, 17, 4)
    assert ind.shape == (4, 2000)
    assert (ind.sum(1) == oracle.N_TRAIN - 1).all()
    assert (ind[:, 17] == 0).all()


def test_simplelogistic_learns_a_separable_rule(oracle, rng):
    X = rng.normal(size=(120, 3))
    y = (X[:, 1] > 0).astype(int)
    sl = oracle.SimpleLogisticLearner(max_iter=40, heuristic_stop=10)
    p = sl.fit_predict(X, y, X)
    assert np.allclose(p.sum(1), 1)
    assert (p.argmax(1) == y).mean() > 0.9


def test_summarise_counts(oracle):
    correct = np.array([[True, False], [True, True], [False, False]])
    member = np.array([[True, False]] * 3)
    said_in = np.where(correct, member, ~member)
    pd_ = np.array([[0.1] * 10, [0.3] * 10, [0.0] * 10])
    m = oracle.summarise(pd_, correct, member, said_in, [0.9], [0.8])
    assert m["attack_acc"] == pytest.approx(0.5)
    assert m["per_target"]["accuracy"] == [0.5, 1.0, 0.0]
    assert m["avg_pdtp"] == pytest.approx(0.4 / 3)
    assert m["attack_recall"] == pytest.approx(2 / 3)


def _nll(params, x, y):
    W1t, b1, W2, b2 = params
    z = np.tanh(x @ W1t + b1) @ W2.T + b2
    return -(z[y] - np.log(np.exp(z).sum()))


def test_nn_one_step_is_an_sgd_step_on_the_nll(oracle, rng):
    """One epoch on one record moves every weight by -lr x the gradient of -log softmax (finite differences)."""
    X = np.array([[0.7, 0.0, 1.0, -1.2]])
    y = np.array([1])
    init = [a[0] for a in oracle.NNLearner(epochs=0, hidden=3, seed=5).fit_many(X, y, [np.arange(1)])]
    after = [a[0] for a in oracle.NNLearner(epochs=1, lr=0.01, hidden=3, seed=5).fit_many(X, y, [np.arange(1)])]
    for i, a in enumerate(init):
        grad = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            up = [b.copy() for b in init]
            down = [b.copy() for b in init]
            up[i][j] += 1e-6
            down[i][j] -= 1e-6
            grad[j] = (_nll(up, X[0], 1) - _nll(down, X[0], 1)) / 2e-6
        np.testing.assert_allclose(after[i], a - 0.01 * grad, atol=1e-9)


def test_nn_models_trained_side_by_side_are_each_trained_alone(oracle, rng):
    X = np.where(rng.random((12, 6)) < 0.5, 0.0, rng.normal(size=(12, 6)))
    y = rng.integers(0, 2, 12)
    sets = [np.arange(5), np.arange(3, 7), np.arange(12)]  # different sizes: the shorter skip their last steps
    together = oracle.NNLearner(epochs=3, lr=0.1, hidden=4, seed=2).fit_predict_many(X, y, sets, [slice(None)] * 3)
    alone = oracle.NNLearner(epochs=3, lr=0.1, hidden=4, seed=2)
    for s, p in zip(sets, together):
        np.testing.assert_allclose(p, alone.fit_predict(X[s], y[s], X), rtol=1e-12)
    assert not np.allclose(together[0], together[2])
