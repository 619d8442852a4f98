"""Hostile and careless scikit-learn model files: each refused in one line before scikit-learn's compiled code or
an unbounded computation touches it, and HistGradientBoosting audited once its predictors are checked.

1. crafted trees that omit or fake what the check compares against (the input width, the node count, the classes),
   as a single tree, inside a forest, in gradient boosting's grid and loose in an attribute (two of them segfaulted
   the process before: run through the CLI in a child process, where a crash fails the test instead of pytest);
2. HistGradientBoostingClassifier: audited end to end; crafted predictors (children, features, categorical
   bitsets, the iteration layout) refused;
3. sizes a file declares: an archive inflating past the memory budget (refused from its central directory, before
   any memory is taken), a forest declaring 10^8 trees, a network declaring 10^9 iterations or hidden layers that
   are not its weights, a layer too wide for the memory budget, a model over the work budget; a model missing a
   fitted attribute, refused by name.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pandas as pd
import pytest

from leakaudit.exceptions import UnsafeFileError

sio = pytest.importorskip("skops.io")


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120), "label": rng.integers(0, 2, 120)})
    df.iloc[:60].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[60:].to_csv(tmp_path / "test.csv", index=False)
    return df


def _xy(df):
    return df[["a", "b"]], df["label"]


def _cli(tmp_path, model, *extra, timeout=300):
    """The CLI in a child process (a segfault is a return code, not a dead test run): (status, stderr, seconds)."""
    code = textwrap.dedent(f"""
        import sys
        from leakaudit.cli import main
        sys.exit(main(["audit", "--train", {str(tmp_path / "train.csv")!r}, "--test", {str(tmp_path / "test.csv")!r},
                       "--label", "label", "--model", {str(model)!r}, "--profile", "smoke", "--quiet",
                       "--out", {str(tmp_path / "out")!r}, *{list(extra)!r}]))
    """)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stderr, time.perf_counter() - t0


def _main(tmp_path, model, capsys):
    """The CLI in this process, for files that cannot crash it: (status, stderr, seconds)."""
    from leakaudit.cli import main

    t0 = time.perf_counter()
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
               "label", "--model", str(model), "--profile", "smoke", "--quiet", "--out", str(tmp_path / "out")])
    return rc, capsys.readouterr().err, time.perf_counter() - t0


def _assert_one_line_refusal(rc, err, *words):
    assert rc == 2, (rc, err[-2000:])  # -11 / 139: the segfault
    assert err.count("\n") == 1 and err.startswith("leakaudit: error:") and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def _retree(est, n_features):
    """``est.tree_`` rebuilt with ``n_features`` as the tree's own feature count (its nodes unchanged)."""
    from sklearn.tree._tree import Tree

    _, args, state = est.tree_.__reduce__()
    t = Tree(n_features, args[1], args[2])
    t.__setstate__(state)
    return t


def _tree_far_feature(df):
    """A fitted tree whose root splits on feature 500,000 of a claimed 1,000,000."""
    from sklearn.tree import DecisionTreeClassifier

    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(*_xy(df))
    est.tree_.feature[0] = 500_000
    est.tree_ = _retree(est, 10**6)
    return est


def _forest(df, n=3):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=n, max_depth=3, random_state=0).fit(*_xy(df))


def _set_node_count(path, value):
    """Rewrite the first tree's node_count in a skops file's schema."""
    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i.filename) for i in z.infolist()}
    schema = json.loads(members["schema.json"])
    stack = [schema]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            if "node_count" in o:
                o["node_count"]["content"] = str(value)
                break
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    members["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


# --- 1. crafted trees ------------------------------------------------------------------------------------------------

def _tree_without_width(df):
    est = _tree_far_feature(df)
    del est.n_features_in_
    return est


def _tree_width_faked(df):
    return _tree_far_feature(df)  # the estimator records 2 columns, its tree claims 1,000,000


def _forest_tree_without_width(df):
    rf = _forest(df)
    e = rf.estimators_[1]
    e.tree_.feature[0] = 500_000
    e.tree_ = _retree(e, 10**6)
    del e.n_features_in_
    return rf


def _forest_tree_width_faked(df):
    rf = _forest(df)
    e = rf.estimators_[1]
    e.tree_.feature[0] = 500_000
    e.tree_ = _retree(e, 10**6)
    e.n_features_in_ = 10**6
    return rf


def _forest_without_width(df):
    rf = _forest(df)
    del rf.n_features_in_
    return rf


def _tree_classes_faked(df):
    from sklearn.tree import DecisionTreeClassifier

    est = DecisionTreeClassifier(max_depth=3, random_state=0).fit(*_xy(df))
    est.n_classes_ = 5
    return est


def _tree_loose_in_an_attribute(df):
    from sklearn.preprocessing import StandardScaler

    holder = StandardScaler().fit(_xy(df)[0])
    holder.kept_ = [_forest(df).estimators_[0].tree_]
    return holder


def _gradient_boosting_grid_widened(df):
    """Binary gradient boosting (one tree per stage) relabelled as two trees per stage: the compiled prediction
    would add the second column's trees to a column the initial predictions do not have."""
    from sklearn.ensemble import GradientBoostingClassifier

    gb = GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0).fit(*_xy(df))
    gb.estimators_ = gb.estimators_.reshape(2, 2)
    gb.n_trees_per_iteration_ = 2
    return gb


def _width_not_its_names(df):
    """Fitted on the columns a and b, recording a width of 1,000,000: scikit-learn would check the data against it."""
    est = _tree_far_feature(df)
    est.n_features_in_ = 10**6
    return est


CRAFTED = {
    "tree_without_width": (_tree_without_width, "lacks the fitted attribute n_features_in_"),
    "tree_width_faked": (_tree_width_faked, "1000000 features; its input has 2"),
    "forest_tree_without_width": (_forest_tree_without_width, "lacks the fitted attribute n_features_in_"),
    "forest_tree_width_faked": (_forest_tree_width_faked, "takes 2 features, one of its trees 1000000"),
    "forest_without_width": (_forest_without_width, "lacks the fitted attribute n_features_in_"),
    "tree_classes_faked": (_tree_classes_faked, "n_classes_ 5"),
    "tree_loose_in_an_attribute": (_tree_loose_in_an_attribute, "outside any estimator"),
    "gradient_boosting_grid_widened": (_gradient_boosting_grid_widened, "initial predictions of shape (1,)"),
    "width_not_its_names": (_width_not_its_names, "records an input width of 1000000; the data it will be given "
                                                  "has 2 columns"),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_crafted_tree_is_refused_before_inference(case, tmp_path, tables):
    from leakaudit.audit.inputs.target import load_skops_model

    make, words = CRAFTED[case]
    sio.dump(make(tables.iloc[:60]), tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError) as err:
        load_skops_model(tmp_path / "m.skops")
    msg = str(err.value)
    assert words in msg and "m.skops" in msg and "\n" not in msg, msg


def test_node_count_past_the_allocation_is_refused_before_any_array_is_read(tmp_path, tables):
    """The node arrays are views of node_count entries over an allocation of the file's node array: a larger count
    would make even the check read out of bounds, so the count is compared with the allocation first. (This
    scikit-learn clamps a file's count to the allocation as it loads; the check does not rely on it.)"""
    from sklearn.tree import DecisionTreeClassifier

    from leakaudit.audit.inputs import model_safety
    from leakaudit.audit.inputs.target import load_skops_model

    sio.dump(DecisionTreeClassifier(max_depth=3, random_state=0).fit(*_xy(tables)), tmp_path / "m.skops")
    _set_node_count(tmp_path / "m.skops", 10**9)
    t = load_skops_model(tmp_path / "m.skops").tree_
    assert t.node_count <= t.capacity

    class Past:
        node_count, capacity, n_features, n_outputs, max_n_classes = 10**9, 15, 2, 1, 2

        def __getattr__(self, name):
            raise AssertionError(f"the check read {name} before comparing the node count with the allocation")

    with pytest.raises(UnsafeFileError, match=r"1000000000 nodes in an allocation of 15"):
        model_safety._check_tree(Past(), "model file m.skops", 2)


@pytest.mark.parametrize("case", ["tree_without_width", "forest_tree_without_width"])
def test_crafted_trees_that_crashed_the_process_are_one_line_through_the_cli(case, tmp_path, tables):
    """Were: exit 139 (a segmentation fault in scikit-learn's tree inference)."""
    sio.dump(CRAFTED[case][0](tables.iloc[:60]), tmp_path / "m.skops")
    rc, err, _ = _cli(tmp_path, tmp_path / "m.skops")
    _assert_one_line_refusal(rc, err, "n_features_in_", "m.skops")
    assert not (tmp_path / "out" / "results.json").exists()


def test_sound_models_of_every_checked_family_still_load_and_predict(tmp_path, tables):
    from sklearn.ensemble import (AdaBoostClassifier, BaggingClassifier, ExtraTreesClassifier,
                                  GradientBoostingClassifier, HistGradientBoostingClassifier)
    from sklearn.tree import DecisionTreeClassifier

    from leakaudit.audit.inputs.target import load_skops_model

    X, y = _xy(tables)
    models = [GradientBoostingClassifier(n_estimators=3, random_state=0),
              HistGradientBoostingClassifier(max_iter=4, random_state=0),
              ExtraTreesClassifier(n_estimators=3, random_state=0),
              BaggingClassifier(DecisionTreeClassifier(), n_estimators=3, max_features=1, random_state=0),
              AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=3, random_state=0)]
    for i, est in enumerate(models):
        est.fit(X, y)
        sio.dump(est, tmp_path / f"m{i}.skops")
        loaded = load_skops_model(tmp_path / f"m{i}.skops", n_rows=len(X), n_features=2)
        np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


# --- 2. HistGradientBoosting ----------------------------------------------------------------------------------------

def test_hist_gradient_boosting_is_audited_through_the_cli(tmp_path, tables, capsys):
    from sklearn.ensemble import HistGradientBoostingClassifier

    sio.dump(HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(*_xy(tables.iloc[:60])),
             tmp_path / "hgb.skops")
    rc, err, _ = _main(tmp_path, tmp_path / "hgb.skops", capsys)
    assert rc == 0, err[-2000:]
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "HistGradientBoostingClassifier" in res["target"]["description"]
    assert res["membership"], "no membership attack ran on the model"


def _hgb(df, **kw):
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=3, random_state=0, **kw).fit(*_xy(df))


def _internal(nodes):
    return int(np.flatnonzero(nodes["is_leaf"] == 0)[0])


def _hgb_child_out_of_range(df):
    m = _hgb(df)
    nodes = m._predictors[0][0].nodes
    nodes["left"][_internal(nodes)] = 10**6
    return m


def _hgb_child_cycle(df):
    m = _hgb(df)
    nodes = m._predictors[1][0].nodes
    nodes["right"][_internal(nodes)] = 0
    return m


def _hgb_feature_out_of_range(df):
    m = _hgb(df)
    nodes = m._predictors[0][0].nodes
    nodes["feature_idx"][_internal(nodes)] = 500_000
    return m


def _hgb_categorical_split_on_a_numeric_feature(df):
    m = _hgb(df)
    nodes = m._predictors[0][0].nodes
    i = _internal(nodes)
    nodes["is_categorical"][i], nodes["bitset_idx"][i] = 1, 10**6
    return m


def _hgb_iteration_missing_a_tree(df):
    m = _hgb(df)
    m._predictors[1] = []
    return m


HGB_CRAFTED = {
    "child_out_of_range": (_hgb_child_out_of_range, "children, a feature or a categorical bitset out of range"),
    "child_cycle": (_hgb_child_cycle, "children, a feature or a categorical bitset out of range"),
    "feature_out_of_range": (_hgb_feature_out_of_range, "children, a feature or a categorical bitset out of range"),
    "categorical_split_on_numeric": (_hgb_categorical_split_on_a_numeric_feature, "categorical bitset"),
    "iteration_missing_a_tree": (_hgb_iteration_missing_a_tree, "iteration 1 has 0 predictors, not 1"),
}


@pytest.mark.parametrize("case", list(HGB_CRAFTED))
def test_crafted_hist_gradient_boosting_predictor_is_refused(case, tmp_path, tables):
    from leakaudit.audit.inputs.target import load_skops_model

    make, words = HGB_CRAFTED[case]
    sio.dump(make(tables), tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError) as err:
        load_skops_model(tmp_path / "m.skops")
    assert words in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_crafted_hist_gradient_boosting_is_one_line_through_the_cli(tmp_path, tables):
    sio.dump(_hgb_feature_out_of_range(tables.iloc[:60]), tmp_path / "m.skops")
    rc, err, _ = _cli(tmp_path, tmp_path / "m.skops")
    _assert_one_line_refusal(rc, err, "malformed predictor", "_predictors[0][0]")


# --- 3. declared sizes and fitted attributes -------------------------------------------------------------------------

def test_archive_inflating_past_the_memory_budget_is_refused_from_its_directory(tmp_path, tables):
    """64 MiB of zeros in a skops file of about 64 KiB: refused from the central directory's sizes, naming them and
    the budget, before the file's content is read (no memory taken)."""
    from sklearn.linear_model import LogisticRegression

    from leakaudit._resources import peak_rss_mb
    from leakaudit.audit.inputs.target import load_skops_model
    from leakaudit.engine import using_memory_budget

    est = LogisticRegression().fit(*_xy(tables))
    est.padding_ = np.zeros(8 * 2**20)
    sio.dump(est, tmp_path / "m.skops", compression=zipfile.ZIP_DEFLATED, compresslevel=9)
    assert (tmp_path / "m.skops").stat().st_size < 2**20
    before = peak_rss_mb()
    with using_memory_budget("32MB"), pytest.raises(UnsafeFileError) as err:
        load_skops_model(tmp_path / "m.skops")
    assert peak_rss_mb() - before < 16
    msg = str(err.value)
    assert "unpacks to 64.0 MiB" in msg and "over the memory budget of 32.0 MiB" in msg, msg
    with using_memory_budget("1GB"):
        assert load_skops_model(tmp_path / "m.skops").padding_.shape == (8 * 2**20,)


def test_forest_declaring_a_hundred_million_trees_is_refused(tmp_path, tables):
    from leakaudit.audit.inputs.target import load_skops_model

    rf = _forest(tables)
    rf.n_estimators = 10**8
    sio.dump(rf, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match="n_estimators 100000000 but 3 trees held"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)


def _mlp(df, **kw):
    from sklearn.neural_network import MLPClassifier

    with pytest.warns(Warning):  # not converged in so few iterations
        return MLPClassifier(hidden_layer_sizes=(4,), max_iter=3, random_state=0, **kw).fit(*_xy(df))


def test_network_declaring_a_billion_iterations_is_refused_quickly_by_the_cli(tmp_path, tables, capsys):
    """n_iter_ is the epochs leakaudit's retraining runs: 10^9 of them would run until killed."""
    est = _mlp(tables.iloc[:60])
    est.max_iter = est.n_iter_ = 10**9
    sio.dump(est, tmp_path / "m.skops")
    rc, err, seconds = _main(tmp_path, tmp_path / "m.skops", capsys)
    _assert_one_line_refusal(rc, err, "1,000,000,000 iterations", "over the work budget of 1e+13 steps")
    assert seconds < 60


def test_network_iterations_past_its_max_iter_are_malformed(tmp_path, tables):
    from leakaudit.audit.inputs.target import load_skops_model

    est = _mlp(tables)
    est.n_iter_ = 10**9
    sio.dump(est, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match="n_iter_ 1000000000 with max_iter 3"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)


def test_network_declaring_layers_its_weights_do_not_have_is_refused(tmp_path, tables):
    from leakaudit.audit.inputs.target import load_skops_model

    est = _mlp(tables)
    est.hidden_layer_sizes = (10**11,)
    sio.dump(est, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match=r"malformed network \(hidden_layer_sizes \(100000000000,\)"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)


def test_network_too_wide_for_the_memory_budget_is_refused_with_the_estimate(tmp_path, tables):
    """A real layer of 10^6 units (24 MiB of weights): predicting 120 rows holds two 120 x 10^6 activations."""
    from leakaudit.audit.inputs.target import load_skops_model
    from leakaudit.engine import using_memory_budget

    est = _mlp(tables)
    w = 10**6
    est.hidden_layer_sizes = (w,)
    est.coefs_ = [np.zeros((2, w)), np.zeros((w, 1))]
    est.intercepts_ = [np.zeros(w), np.zeros(1)]
    sio.dump(est, tmp_path / "m.skops", compression=zipfile.ZIP_DEFLATED)
    with using_memory_budget("1GB"), pytest.raises(UnsafeFileError) as err:
        load_skops_model(tmp_path / "m.skops", n_rows=120)
    assert "would take about 1.8 GiB" in str(err.value) and "memory budget of 1.0 GiB" in str(err.value)


def test_work_budget_bounds_a_forest_and_is_named(tmp_path, tables, monkeypatch):
    from leakaudit.audit.inputs.target import load_skops_model
    from leakaudit.engine import using_work_budget

    sio.dump(_forest(tables, n=20), tmp_path / "m.skops")
    assert load_skops_model(tmp_path / "m.skops", n_rows=120) is not None
    with using_work_budget("1e6"), pytest.raises(UnsafeFileError, match=r"about 2\.\d e\+06 steps|over the work "
                                                                       r"budget of 1e\+06 steps"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)
    monkeypatch.setenv("LEAKAUDIT_WORK_BUDGET", "1000000")
    with pytest.raises(UnsafeFileError, match="over the work budget of 1e\\+06 steps"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)


def test_work_budget_setting_is_validated(monkeypatch):
    from leakaudit.engine import DEFAULT_WORK_BUDGET, parse_work_amount, using_work_budget, work_budget
    from leakaudit.exceptions import InvalidParameterError

    assert work_budget() == DEFAULT_WORK_BUDGET
    assert parse_work_amount("2e12") == 2 * 10**12 and parse_work_amount(5) == 5
    with using_work_budget(10**9):
        assert work_budget() == 10**9
    for bad in ("lots", 0, "-1", True, "inf"):
        with pytest.raises(InvalidParameterError, match="work_budget"):
            parse_work_amount(bad)
    monkeypatch.setenv("LEAKAUDIT_WORK_BUDGET", "ten")
    with pytest.raises(InvalidParameterError, match="LEAKAUDIT_WORK_BUDGET"):
        work_budget()


def test_linear_model_without_intercept_is_refused_by_name_through_the_cli(tmp_path, tables, capsys):
    from sklearn.linear_model import LogisticRegression

    est = LogisticRegression().fit(*_xy(tables.iloc[:60]))
    del est.intercept_
    sio.dump(est, tmp_path / "m.skops")
    rc, err, _ = _main(tmp_path, tmp_path / "m.skops", capsys)
    _assert_one_line_refusal(rc, err, "LogisticRegression lacks the fitted attribute intercept_")


def _svc(df, **kw):
    from sklearn.svm import SVC

    return SVC(**kw).fit(*_xy(df))


def _svc_dual_truncated(m):
    m._dual_coef_ = m._dual_coef_[:, :3].copy()


def _svc_intercept_truncated(m):
    m._intercept_ = m._intercept_[:0].copy()


def _svc_counts_past_the_vectors(m):
    m._n_support = np.array([1, m.support_vectors_.shape[0]], dtype=m._n_support.dtype)


def _svc_vectors_narrower_than_the_input(m):
    m.support_vectors_ = np.ascontiguousarray(m.support_vectors_[:, :1])


def _svc_probabilities_too_long(m):
    m._probA = np.zeros(5)


@pytest.mark.parametrize("case", [_svc_dual_truncated, _svc_intercept_truncated, _svc_counts_past_the_vectors,
                                  _svc_vectors_narrower_than_the_input, _svc_probabilities_too_long])
def test_crafted_support_vector_machine_is_refused_before_libsvm_reads_it(case, tmp_path, tables):
    """libsvm sizes its loops by the counts the file supplies and reads the coefficient and intercept arrays by
    them without bounds checks: a truncated array was read past its end and a prediction came back (exit 0)."""
    from leakaudit.audit.inputs.target import load_skops_model

    m = _svc(tables.iloc[:60])
    case(m)
    sio.dump(m, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match="malformed support vector machine"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)


def test_sound_support_vector_machines_load(tmp_path, tables):
    from leakaudit.audit.inputs.target import load_skops_model

    for kw in ({}, {"kernel": "linear"}, {"kernel": "poly", "degree": 2}):
        sio.dump(_svc(tables.iloc[:60], **kw), tmp_path / "m.skops")
        assert load_skops_model(tmp_path / "m.skops", n_rows=120) is not None


def test_linear_and_neighbours_and_svm_costs_are_estimated_against_the_budget(tmp_path, tables):
    """A linear model declaring 10^12 iterations is refused by the work budget; a neighbours model's and an SVM's
    prediction and refit are estimated and bounded by the budget in force."""
    from sklearn.linear_model import SGDClassifier
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.audit.inputs.model_budget import model_costs
    from leakaudit.audit.inputs.target import load_skops_model
    from leakaudit.engine import using_work_budget

    sgd = SGDClassifier(random_state=0).fit(*_xy(tables))
    sgd.max_iter = 10**12
    sio.dump(sgd, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match="SGDClassifier of up to 1,000,000,000,000 iterations.*over the work"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)
    knn = KNeighborsClassifier(algorithm="brute").fit(*_xy(tables))
    (cost,) = model_costs(knn, "m", 1000)
    assert cost.what == "KNeighborsClassifier of 120 stored records" and cost.work == 1000 * 1000 * 2
    sio.dump(knn, tmp_path / "k.skops")
    with using_work_budget("1e3"), pytest.raises(UnsafeFileError, match="KNeighborsClassifier.*over the work budget"):
        load_skops_model(tmp_path / "k.skops", n_rows=120)
    svc = _svc(tables, probability=True)
    (cost,) = model_costs(svc, "m", 1000)
    assert cost.work == 6 * 1000 * 1000 * 2 and "support vectors" in cost.what


@pytest.mark.parametrize("kw", [{}, {"algorithm": "kd_tree", "n_neighbors": 1}, {"algorithm": "ball_tree",
                                                                               "metric": "manhattan"}, {"p": 3}])
def test_neighbours_models_with_a_search_tree_are_loaded_with_the_tree_built_anew(tmp_path, tables, kw):
    """scikit-learn's default neighbours model holds a KD-tree (skops leaves it untrusted): its records are loaded,
    the tree is not, and the tree built from the records gives the model's own predictions."""
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.audit.inputs.target import load_skops_model

    X, y = _xy(tables)
    m = KNeighborsClassifier(**kw).fit(X, y)
    assert m._fit_method in ("kd_tree", "ball_tree")
    sio.dump(m, tmp_path / "m.skops")
    assert sio.get_untrusted_types(file=tmp_path / "m.skops")
    got = load_skops_model(tmp_path / "m.skops", n_rows=120)
    np.testing.assert_array_equal(got.predict_proba(X), m.predict_proba(X))


def test_a_neighbours_model_on_fewer_records_than_its_leaf_size_loads(tmp_path):
    """scikit-learn's default leaf size (30) above the records' number (12) is a sound tree: one leaf."""
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.audit.inputs.target import load_skops_model

    X = np.random.default_rng(0).normal(size=(12, 2))
    y = np.r_[np.zeros(6), np.ones(6)].astype(int)
    m = KNeighborsClassifier(n_neighbors=3).fit(X, y)
    assert m._fit_method == "kd_tree" and m.leaf_size > len(X)
    sio.dump(m, tmp_path / "m.skops")
    np.testing.assert_array_equal(load_skops_model(tmp_path / "m.skops", n_rows=12).predict_proba(X),
                                  m.predict_proba(X))


def test_a_neighbours_models_lying_search_tree_is_never_used(tmp_path, tables):
    """A file whose tree was built on other records: scikit-learn would answer from that tree; leakaudit never loads
    it and answers from the model's own records."""
    from sklearn.neighbors import KDTree, KNeighborsClassifier

    from leakaudit.audit.inputs.target import load_skops_model

    X, y = _xy(tables)
    honest = KNeighborsClassifier(n_neighbors=1, algorithm="kd_tree").fit(X, y)
    lying = KNeighborsClassifier(n_neighbors=1, algorithm="kd_tree").fit(X, y)
    lying._tree = KDTree(X.to_numpy()[::-1] + 5.0)
    assert not np.array_equal(lying.predict(X), honest.predict(X))
    sio.dump(lying, tmp_path / "m.skops")
    np.testing.assert_array_equal(load_skops_model(tmp_path / "m.skops", n_rows=120).predict(X), honest.predict(X))


@pytest.mark.parametrize("edit, words", [
    (lambda m: setattr(m, "n_samples_fit_", 10**6), "stored records"),
    (lambda m: setattr(m, "effective_metric_params_", {"p": 0.5}), "metric"),
    (lambda m: setattr(m, "leaf_size", 0), "leaf size"),
])
def test_a_neighbours_model_whose_records_or_metric_do_not_hold_is_refused(tmp_path, tables, edit, words):
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.audit.inputs.target import load_skops_model

    m = KNeighborsClassifier(algorithm="kd_tree").fit(*_xy(tables))
    edit(m)
    sio.dump(m, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match=f"malformed neighbours model.*{words}"):
        load_skops_model(tmp_path / "m.skops", n_rows=120)
