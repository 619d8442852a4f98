"""LMT (Weka's Logistic Model Trees) and the SimpleLogistic it builds on, against the independent oracle's
(benchmarks/_lmt_oracle.py and long_table2_oracle.py's SimpleLogisticLearner, checked against Weka 3.6.14 itself by
benchmarks/long_table2_oracle_weka_check.py) on Adult halves and small cases; against Weka itself (slow, where Java and
Weka's jar are installed) on three classes, which the oracle does not cover."""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from leakaudit.learners import LMT, SimpleLogistic


@pytest.fixture(scope="module")
def oracle():
    import importlib.util
    import sys

    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    mods = {}
    for name in ("long_table2_oracle", "_lmt_oracle"):
        spec = importlib.util.spec_from_file_location(name, bench / f"{name}.py")
        mods[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[name])
    return mods["long_table2_oracle"], mods["_lmt_oracle"]


@pytest.fixture(scope="module")
def adult(oracle):
    o, _ = oracle
    if not (o.DATA / "adult.data.gz").exists():
        pytest.skip(f"Adult's files are not at {o.DATA}")
    return o.load_adult()


def _half(o, adult, seed):
    """The oracle's D for a seed (its encoding: one-hot categoricals, z-scored numerics) and its attributes."""
    num, cat, y, vocab = adult
    D = np.sort(np.random.default_rng(seed).choice(len(y), o.N_D, replace=False))
    return o.lr_design(num[D], cat[D], vocab), y[D], o.weka_attrs(vocab)


def _ours(attrs):
    """The oracle's attributes ('num', column) / ('nom', columns) as LMT's."""
    return [c if kind == "num" else list(c) for kind, c in attrs]


# seed 0 less its first record and seed 2's first 1,000 grow 2-leaf trees; seed 0's first 1,000 one leaf
@pytest.mark.parametrize("seed, first, leaves", [(0, 1, 2), (2, 0, 2), (0, 0, 1)])
def test_lmt_equals_the_oracles_on_adult(oracle, adult, seed, first, leaves):
    o, lmt = oracle
    X, y, attrs = _half(o, adult, seed)
    rows = np.arange(first, o.N_TRAIN)
    ref = lmt.LMTLearner(o.SimpleLogisticLearner(200), attrs)
    want = ref.fit_predict(X[rows], y[rows], X)
    m = LMT(attributes=_ours(attrs)).fit(X[rows], y[rows], n_classes=2)
    assert m.n_leaves_ == len(lmt.leaves(ref.root)) == leaves
    assert m.k_ == ref.k
    np.testing.assert_allclose(m.predict_proba(X), want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [1, 3, 4])
def test_simplelogistic_equals_the_oracles_on_adult(oracle, adult, seed):
    """Weka's LogisticBase (weights (y - p) / z, Instances.stratify's folds, error rates summed from round 0,
    heuristicStop on the running sum): leakaudit's SimpleLogistic was already exact, to rounding."""
    o, _ = oracle
    X, y, _ = _half(o, adult, seed)
    for rows in (np.arange(o.N_TRAIN), np.arange(1, o.N_TRAIN)):
        ref = o.SimpleLogisticLearner()
        m = SimpleLogistic().fit(X[rows], y[rows], n_classes=2)
        assert m.n_rounds_ == ref.n_rounds(X[rows], y[rows])
        np.testing.assert_allclose(m.predict_proba(X), ref.fit_predict(X[rows], y[rows], X), rtol=0, atol=1e-12)


def _band(rng, n=400):
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, (np.abs(X[:, 0]) > 0.5).astype(int)


def test_lmt_splits_a_band_simplelogistic_cannot_fit(oracle, rng):
    """y = [|x_0| > 0.5]: no one logistic model fits it; LMT cuts x_0 and its leaves fit the rest, as the oracle's."""
    o, lmt = oracle
    X, y = _band(rng)
    Xt, yt = _band(rng)
    m = LMT().fit(X, y)
    assert (m.predict(Xt) == yt).mean() > 0.95
    assert (SimpleLogistic().fit(X, y).predict(Xt) == yt).mean() < 0.8
    assert m.root.attr == 0 and abs(abs(m.root.cut) - 0.5) < 0.05 and m.n_leaves_ >= 2
    ref = lmt.LMTLearner(o.SimpleLogisticLearner(200), [("num", 0), ("num", 1)])
    np.testing.assert_allclose(m.predict_proba(Xt), ref.fit_predict(X, y, Xt), rtol=0, atol=1e-9)


def test_one_leaf_lmt_is_simplelogistic(rng):
    """Data from one logistic model: pruning leaves the root alone, whose model is SimpleLogistic's at LMT's 200
    rounds at most, bit for bit."""
    X = rng.normal(size=(300, 3))
    y = (rng.random(300) < 1 / (1 + np.exp(-2 * X[:, 0] + X[:, 1]))).astype(int)
    m = LMT().fit(X, y)
    assert m.n_leaves_ == 1 and m.k_ > 0
    np.testing.assert_array_equal(m.predict_proba(X), SimpleLogistic(max_iterations=200).fit(X, y).predict_proba(X))


def test_nominal_attributes_and_nodes_that_choose_their_own_rounds(oracle):
    """A symmetric band on a grid (no linear function of x_0 helps: the root's cross-validation picks no rounds, so
    every node chooses its own from its parent's function) beside a 0/1 and a 3-valued nominal attribute: the
    oracle's tree, the 0/1 attribute given to it as two one-hot columns."""
    o, lmt = oracle
    n = 300
    x0 = np.linspace(-1, 1, n)[(np.arange(n) * 37) % n]
    a, b = (np.arange(n) * 5 // 3) % 2, (np.arange(n) * 11) % 3
    y = (np.abs(x0) > 0.5).astype(int)
    m = LMT(attributes=[0, [1], [2, 3, 4]]).fit(np.column_stack([x0, a, np.eye(3)[b]]), y)
    Xo = np.column_stack([x0, 1 - a, a, np.eye(3)[b]])
    ref = lmt.LMTLearner(o.SimpleLogisticLearner(200), [("num", 0), ("nom", np.array([1, 2])),
                                                         ("nom", np.arange(3, 6))])
    want = ref.fit_predict(Xo, y, Xo)
    assert ref.k == m.k_ == 0 and m.n_leaves_ == len(lmt.leaves(ref.root)) == 2
    got = m.predict_proba(np.column_stack([x0, a, np.eye(3)[b]]))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert (got.argmax(1) == y).all()


DRIVER = """
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;
public class Driver {
  public static void main(String[] a) throws Exception {
    Instances d = DataSource.read(a[0]); d.setClassIndex(d.numAttributes() - 1);
    weka.classifiers.trees.LMT c = new weka.classifiers.trees.LMT();
    c.buildClassifier(d);
    for (int i = 0; i < d.numInstances(); i++) {
      double[] p = c.distributionForInstance(d.instance(i));
      StringBuilder s = new StringBuilder();
      for (int j = 0; j < p.length; j++) s.append(j > 0 ? "," : "").append(Double.toString(p[j]));
      System.out.println(s);
    }
  }
}
"""


@pytest.mark.slow
def test_lmt_equals_wekas_on_three_classes(rng, tmp_path):
    """Weka's own LMT (default options) on three classes with a numeric, a 0/1 and a 3-valued attribute: the same
    probabilities at every training record."""
    jar = os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar")
    if not (shutil.which("java") and shutil.which("javac") and Path(jar).exists()):
        pytest.skip(f"needs java, javac and Weka's jar at {jar}")
    n = 240
    x1, x2, a, b = rng.normal(size=n), rng.normal(size=n), rng.integers(0, 2, n), rng.integers(0, 3, n)
    y = np.where(x1 > 0.3, np.where(b == 2, 0, 1), np.where(x2 + a > 0.5, 2, 0))
    y = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), y)
    lines = ["@relation t", "@attribute x1 numeric", "@attribute a {p,q}", "@attribute x2 numeric",
             "@attribute b {u,v,w}", "@attribute y {c0,c1,c2}", "@data"]
    lines += [f"{float(x1[i])!r},{'pq'[a[i]]},{float(x2[i])!r},{'uvw'[b[i]]},c{y[i]}" for i in range(n)]
    (tmp_path / "t.arff").write_text("\n".join(lines) + "\n")
    (tmp_path / "Driver.java").write_text(DRIVER)
    subprocess.run(["javac", "-cp", jar, "-d", str(tmp_path), str(tmp_path / "Driver.java")], check=True)
    out = subprocess.run(["java", "-cp", f"{jar}{os.pathsep}{tmp_path}", "Driver", str(tmp_path / "t.arff")],
                         capture_output=True, text=True, check=True).stdout
    weka = np.loadtxt(out.splitlines(), delimiter=",")
    X = np.column_stack([x1, a, x2, np.eye(3)[b]])  # Weka's NominalToBinary: a 0/1 column, a one-hot group
    m = LMT(attributes=[0, [1], 2, [3, 4, 5]]).fit(X, y, n_classes=3)
    assert m.n_leaves_ > 1
    np.testing.assert_allclose(m.predict_proba(X), weka, rtol=0, atol=1e-9)


def test_bad_attributes_and_queries_are_refused_in_one_line():
    from leakaudit.exceptions import InvalidInputError, InvalidParameterError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    for bad in ([5], [[0, 7]], ["x"], [0, 0], [[]], 3):
        with pytest.raises(InvalidParameterError, match="attributes"):
            LMT(attributes=bad).fit(X, y, random_state=0)
    model = LMT().fit(X, y, random_state=0)
    with pytest.raises(InvalidInputError, match="X has 2 features; the model was fitted on 3"):
        model.predict_proba(X[:, :2])
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        model.predict_proba(X_nan)
