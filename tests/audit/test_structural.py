"""Structural checks read from fitted models: records kept, small leaves, parameters per record."""

import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC, NuSVC
from sklearn.tree import DecisionTreeClassifier

from leakaudit.audit.result.checks import Check
from leakaudit.audit.inputs.structural import (
    count_parameters,
    describe_structure,
    leaf_sizes,
    stored_records,
    structural_checks,
)
from leakaudit.exceptions import InvalidInputError, InvalidParameterError

N = 300


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 5))
    y = ((X[:, 0] + rng.normal(size=N)) > 0).astype(int)
    return X, y


def _by_id(checks):
    assert all(isinstance(c, Check) and c.analysis == "structural" for c in checks)
    return {c.id: c for c in checks}


@pytest.mark.parametrize("model, stored", [
    (KNeighborsClassifier(5), N),
    (make_pipeline(StandardScaler(), KNeighborsClassifier(1)), N),
])
def test_nearest_neighbours_keep_every_record(data, model, stored):
    checks = _by_id(structural_checks(model.fit(*data), N))
    c = checks["structural.instance_based"]
    assert c.status == "exceeded" and c.value == stored and c.threshold == 0
    assert f"{N:,} training records" in c.sentence and c.fix
    assert c.interval is None and c.confidence is None  # read exactly, no sampling
    assert "structural.leaf_size" not in checks


@pytest.mark.parametrize("cls", [SVC, NuSVC])
def test_svm_keeps_its_support_vectors(data, cls):
    model = cls().fit(*data)
    c = _by_id(structural_checks(model, N))["structural.instance_based"]
    assert c.status == "exceeded"
    assert c.value == model.support_vectors_.shape[0] == model.n_support_.sum()
    # the stored rows are training rows, verbatim
    np.testing.assert_array_equal(model.support_vectors_, data[0][model.support_])


def test_other_models_that_keep_their_inputs(data):
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.neighbors import KernelDensity
    from sklearn.semi_supervised import LabelSpreading

    X, y = data
    y3 = np.arange(N) % 3  # three classes: the Gaussian process is one-vs-rest inside
    for model, labels in ((GaussianProcessClassifier(), y3), (LabelSpreading(), y), (KernelDensity(), None)):
        model.fit(X[:60], None if labels is None else labels[:60])
        kept = stored_records(model)
        assert [k["n_stored"] for k in kept] == [60], (type(model).__name__, kept)


@pytest.mark.parametrize("model", [LogisticRegression(), LinearSVC(), GaussianNB(),
                                   DecisionTreeClassifier(min_samples_leaf=10)])
def test_models_keeping_no_records_pass(data, model):
    c = _by_id(structural_checks(model.fit(*data), N))["structural.instance_based"]
    assert c.status == "shown below" and c.value == 0


def test_fully_grown_tree_has_leaves_of_one_record(data):
    model = DecisionTreeClassifier(random_state=0).fit(*data)
    c = _by_id(structural_checks(model, N))["structural.leaf_size"]
    t = model.tree_
    leaf = t.children_left == -1
    assert c.status == "exceeded" and c.value == 1 == t.n_node_samples[leaf].min() and c.threshold == 5
    assert f"{int((t.n_node_samples[leaf] < 5).sum())} of the {int(leaf.sum())} leaves" in c.sentence
    assert "min_samples_leaf=5" in c.fix
    # the records in the leaves are the training records: the leaves' counts add up to n
    assert leaf_sizes(model)[0]["records"].sum() == N


def test_leaf_minimum_is_a_policy_setting(data):
    model = DecisionTreeClassifier(min_samples_leaf=8, random_state=0).fit(*data)
    assert _by_id(structural_checks(model, N, min_leaf_records=8))["structural.leaf_size"].status == "shown below"
    c = _by_id(structural_checks(model, N, min_leaf_records=9))["structural.leaf_size"]
    assert c.status == "exceeded" and c.value >= 8 and c.threshold == 9


def test_forest_in_a_pipeline_counts_distinct_records_of_each_bootstrap(data):
    forest = RandomForestClassifier(n_estimators=7, min_samples_leaf=5, random_state=0)
    model = make_pipeline(StandardScaler(), forest).fit(*data)
    trees = leaf_sizes(model)
    assert len(trees) == 7 and all("steps[1]" in t["path"] for t in trees)
    for t, est in zip(trees, forest.estimators_):
        # a bootstrap sample's repeated draws count once: records <= weighted draws, and the tree's root sees
        # only the distinct records it drew
        assert np.all(t["records"] <= t["weighted"]) and est.tree_.n_node_samples[0] < N
    c = _by_id(structural_checks(model, N))["structural.leaf_size"]
    assert c.status == "shown below" and c.value >= 5
    grown = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=7, random_state=0)).fit(*data)
    assert _by_id(structural_checks(grown, N))["structural.leaf_size"].status == "exceeded"


@pytest.mark.parametrize("model", [GradientBoostingClassifier(n_estimators=5, random_state=0),
                                   ExtraTreesClassifier(n_estimators=5, random_state=0),
                                   HistGradientBoostingClassifier(max_iter=5, min_samples_leaf=1,
                                                                  max_leaf_nodes=200, random_state=0)])
def test_ensembles_and_histogram_boosting_are_read(data, model):
    model.fit(*data)
    trees = leaf_sizes(model)
    assert len(trees) == 5
    c = _by_id(structural_checks(model, N, min_leaf_records=N))["structural.leaf_size"]
    assert c.status == "exceeded" and c.value == min(t["records"].min() for t in trees)


def test_histogram_boosting_with_large_leaves_passes(data):
    model = HistGradientBoostingClassifier(max_iter=5, min_samples_leaf=20).fit(*data)
    c = _by_id(structural_checks(model, N))["structural.leaf_size"]
    assert c.status == "shown below" and c.value >= 20


def test_parameter_counts(data):
    X, y = data
    lr = LogisticRegression().fit(X, y)
    assert count_parameters(lr)[0] == X.shape[1] + 1
    mlp = MLPClassifier((40,), max_iter=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp.fit(X, y)
    assert count_parameters(mlp)[0] == 5 * 40 + 40 + 40 * 1 + 1
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    internal = int((tree.tree_.children_left != -1).sum())
    assert count_parameters(tree)[0] == 2 * internal + (tree.tree_.node_count - internal) * 1  # 2 classes: 1 free
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    total, parts = count_parameters(pipe)
    # a scaler's fitted arrays (mean_, var_, scale_) are counted as stored: 3 numbers per column
    assert total == 3 * 5 + 6 and [p["kind"] for p in parts] == ["StandardScaler", "LogisticRegression"]


def test_more_parameters_than_records(data):
    X, y = data
    mlp = MLPClassifier((100,), max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp.fit(X, y)
    c = _by_id(structural_checks(mlp, N))["structural.parameters_per_record"]
    assert c.status == "exceeded" and c.value == pytest.approx(701 / N) and c.threshold == 1
    assert "701 fitted parameters for 300 training records" in c.sentence
    lr = _by_id(structural_checks(LogisticRegression().fit(X, y), N))["structural.parameters_per_record"]
    assert lr.status == "shown below" and lr.value == pytest.approx(6 / N)
    looser = _by_id(structural_checks(mlp, N, max_parameters_per_record=3.0))["structural.parameters_per_record"]
    assert looser.status == "shown below"


def test_torch_module_parameters():
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(10, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    checks = _by_id(structural_checks(net, 1000))
    assert checks["structural.parameters_per_record"].value == pytest.approx((10 * 8 + 8 + 8 * 2 + 2) / 1000)
    assert checks["structural.instance_based"].status == "shown below"


def test_column_transformer_steps_are_walked(data):
    X, y = data
    ct = ColumnTransformer([("num", StandardScaler(), [0, 1, 2]), ("rest", "passthrough", [3, 4])])
    model = make_pipeline(ct, KNeighborsClassifier(1)).fit(X, y)
    assert [s["kind"] for s in stored_records(model)] == ["KNeighborsClassifier"]


def test_describe_structure_is_plain(data):
    import json

    model = make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)).fit(*data)
    d = describe_structure(model, N)
    assert d["model"] == "Pipeline(StandardScaler, DecisionTreeClassifier)"
    assert d["n_trees"] == 1 and d["smallest_leaf"] == 1 and d["stored_records"] == []
    json.dumps(d)  # plain values only


def test_bad_input_is_one_clear_error(data):
    with pytest.raises(InvalidInputError, match="no fitted estimator"):
        structural_checks(make_pipeline(StandardScaler(), LogisticRegression()), N)
    model = LogisticRegression().fit(*data)
    with pytest.raises(InvalidParameterError, match="n_records"):
        structural_checks(model, 0)
    with pytest.raises(InvalidParameterError, match="min_leaf_records"):
        structural_checks(model, N, min_leaf_records=0)
    with pytest.raises(InvalidParameterError, match="max_parameters_per_record"):
        structural_checks(model, N, max_parameters_per_record=0)


def test_uncountable_model_is_not_measurable():
    class Opaque:
        """Fitted state with no numeric array."""

        def __init__(self):
            self.rules_ = ["if age > 40 then 1"]

    c = _by_id(structural_checks(Opaque(), N))["structural.parameters_per_record"]
    assert c.status == "not measurable" and c.value is None and c.fix
