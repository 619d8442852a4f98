"""Input integrity of the audited model and its outputs (issue 28): a wrong input gets a clear refusal, never a
wrong answer or a crash.

1. a crafted scikit-learn tree is found and refused however deep a skops file nests it (a segfault before);
2. a model's probability columns are matched to the data's classes by name, not position;
3. a predictions file's header names its columns' classes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from leakaudit.exceptions import InvalidInputError, UnsafeFileError

sio = pytest.importorskip("skops.io")


# --- 1. crafted trees at any depth ---------------------------------------------------------------------------------

def _bad_tree_estimator(rng):
    from sklearn.tree import DecisionTreeClassifier

    X, y = rng.normal(size=(60, 2)), rng.integers(0, 2, 60)
    est = DecisionTreeClassifier(random_state=0).fit(X, y)
    est.tree_.children_left[0] = 10**6  # node 0 is internal: its left child points far past the node arrays
    return est


def _deep_pipeline(est, depth: int):
    from sklearn.pipeline import Pipeline

    for i in range(depth):
        est = Pipeline([(f"level{i}", est)])
    return est


def _deep_containers(est, depth: int):
    """``est`` inside ``depth`` alternating dicts and lists, kept in an estimator's attribute."""
    from sklearn.preprocessing import StandardScaler

    obj = est
    for i in range(depth):
        obj = {f"k{i}": obj} if i % 2 else [obj, i]
    holder = StandardScaler().fit(np.zeros((3, 2)))
    holder.extra_ = obj
    return holder


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "label": rng.integers(0, 2, 60)})
    df.iloc[:30].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[30:].to_csv(tmp_path / "test.csv", index=False)
    return tmp_path / "train.csv", tmp_path / "test.csv"


def test_crafted_tree_35_pipelines_deep_is_refused_by_the_cli_in_a_subprocess(tmp_path, tables):
    """Was: the walk stopped at depth 20, the file passed as fine and inference segfaulted the process.
    Run in a subprocess so that a segfault fails this test instead of killing pytest."""
    train, test = tables
    path = tmp_path / "deep.skops"
    sio.dump(_deep_pipeline(_bad_tree_estimator(np.random.default_rng(0)), 35), path)
    code = textwrap.dedent(f"""
        import sys
        from leakaudit.cli import main
        sys.exit(main(["audit", "--train", {str(train)!r}, "--test", {str(test)!r}, "--label", "label",
                       "--model", {str(path)!r}, "--profile", "smoke", "--out", {str(tmp_path / "out")!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])  # -11 would be the segfault
    err = proc.stderr
    assert err.count("\n") == 1 and err.startswith("leakaudit: error:") and "Traceback" not in err, err
    assert "malformed tree" in err and "deep.skops" in err
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.parametrize("how", ["pipelines", "containers", "both"])
def test_crafted_tree_is_refused_at_any_depth(tmp_path, how):
    from leakaudit.audit.inputs.target import load_skops_model

    bad = _bad_tree_estimator(np.random.default_rng(1))
    obj = {"pipelines": lambda: _deep_pipeline(bad, 40), "containers": lambda: _deep_containers(bad, 40),
           "both": lambda: _deep_pipeline(_deep_containers(_deep_pipeline(bad, 15), 15), 15)}[how]()
    sio.dump(obj, tmp_path / "m.skops")
    with pytest.raises(UnsafeFileError, match="malformed tree") as err:
        load_skops_model(tmp_path / "m.skops")
    assert "\n" not in str(err.value) and len(str(err.value)) < 600


def test_sound_trees_deep_inside_are_loaded_checked_and_counted(tmp_path):
    from sklearn.ensemble import RandomForestClassifier

    from leakaudit.audit.inputs.model_safety import checked_trees
    from leakaudit.audit.inputs.target import _schema_tree_count, load_skops_model

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 2, 60)
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    model = _deep_pipeline(rf, 30)
    model.steps[0][1].shared_ = [rf.estimators_[0], {"again": rf.estimators_[0]}]  # a shared reference
    sio.dump(model, tmp_path / "m.skops")
    loaded = load_skops_model(tmp_path / "m.skops")
    inner = loaded
    while hasattr(inner, "steps"):  # (scikit-learn's own predict through 30 pipelines is very slow: not run)
        inner = inner.steps[0][1]
    np.testing.assert_array_equal(inner.predict_proba(X), rf.predict_proba(X))
    assert len(checked_trees(loaded)) == 3 and _schema_tree_count(tmp_path / "m.skops") == 3


def test_a_tree_the_walk_cannot_reach_fails_closed(tmp_path, monkeypatch):
    """Fail closed: trees skops constructed but the check never reached (a container type the walk does not know,
    simulated here by a walk that sees nothing) refuse the file instead of passing it unchecked."""
    from sklearn.tree import DecisionTreeClassifier

    from leakaudit.audit.inputs import model_safety, target

    rng = np.random.default_rng(3)
    sio.dump(DecisionTreeClassifier(random_state=0).fit(rng.normal(size=(40, 2)), rng.integers(0, 2, 40)),
             tmp_path / "m.skops")
    assert target.load_skops_model(tmp_path / "m.skops") is not None
    monkeypatch.setattr(model_safety, "walk_objects", lambda obj, where="model": iter(()))
    with pytest.raises(UnsafeFileError, match="1 scikit-learn tree.*cannot reach them"):
        target.load_skops_model(tmp_path / "m.skops")


# --- 2. class labels matched by name ---------------------------------------------------------------------------------

def _yes_no_tables(tmp_path):
    from sklearn.datasets import load_breast_cancer

    df = load_breast_cancer(as_frame=True).frame.iloc[:, [0, 1, 2, 3, -1]].sample(300, random_state=0)
    df = df.reset_index(drop=True)
    df["target"] = np.where(df["target"] == 1, "yes", "no")
    df.columns = [c.replace(" ", "_") for c in df.columns]
    df.iloc[:150].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[150:].to_csv(tmp_path / "test.csv", index=False)
    return df.iloc[:150], df.iloc[150:]


@pytest.mark.parametrize("order", ["same", "reversed"])
def test_string_class_model_accuracy_is_the_models_own(tmp_path, order):
    """Was: columns assigned by position, so a model whose classes_ are ordered unlike the data's classes got its
    probabilities assigned to the wrong classes (a wrong accuracy and wrong attack scores)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from leakaudit.audit import make_config, run_audit

    train, test = _yes_no_tables(tmp_path)
    X = train.drop(columns=["target"])
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, train["target"])
    if order == "reversed":  # the same model with its classes listed in the other order
        pipe[-1].classes_ = pipe[-1].classes_[::-1].copy()
        pipe[-1].coef_, pipe[-1].intercept_ = -pipe[-1].coef_, -pipe[-1].intercept_
    sio.dump(pipe, tmp_path / "model.skops")
    if sio.get_untrusted_types(file=tmp_path / "model.skops"):
        pytest.skip("this skops version does not trust a plain pipeline")
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="target",
                      model=tmp_path / "model.skops", profile="smoke")
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.inputs.target import prepare_target

    data = prepare_data(cfg)
    summary = prepare_target(cfg, data, random_state=0).summary(data)
    assert summary["train_accuracy"] == pytest.approx(pipe.score(X, train["target"]))
    assert summary["test_accuracy"] == pytest.approx(pipe.score(test.drop(columns=["target"]), test["target"]))
    if order == "same":  # the whole audit once
        res = run_audit(cfg, tmp_path / "out", verbose=False)
        assert res.target["test_accuracy"] == pytest.approx(summary["test_accuracy"])


def test_class_mapping_rule():
    from leakaudit.audit.inputs.target import _class_columns

    assert list(_class_columns(np.array(["yes", "no"]), ["no", "yes"])) == [1, 0]
    assert list(_class_columns(np.array([10, 2]), ["2", "10"])) == [1, 0]  # by name, not by sort order
    assert list(_class_columns(np.array([0, 1]), ["<=50K", ">50K"])) == [0, 1]  # label codes
    with pytest.raises(InvalidInputError, match="class.*c that the model does not predict"):
        _class_columns(np.array(["a", "b"]), ["a", "b", "c"])  # was: "c" silently got probability 0
    with pytest.raises(InvalidInputError, match=r"\(no, maybe\).*\(no, yes\).*unknown to the data: maybe"):
        _class_columns(np.array(["no", "maybe"]), ["no", "yes"])
    with pytest.raises(InvalidInputError, match="do not match"):
        _class_columns(np.array([0, 1]), ["1", "2"])  # ambiguous: codes or names


# --- 3. prediction files' headers ------------------------------------------------------------------------------------

def test_prediction_file_headers_name_the_classes(tmp_path):
    """Was: the header was ignored, so columns headed ``1,0`` were read as classes 0, 1."""
    from leakaudit.audit.inputs.target import _read_predictions

    p = np.random.default_rng(0).dirichlet([1, 1], size=5)
    for header, cols, expected in ((["no", "yes"], [0, 1], p), (["yes", "no"], [1, 0], p), (["p1", "p0"], [1, 0], p),
                                   (["p0", "p1"], [0, 1], p), (["a", "b"], [0, 1], None)):
        path = tmp_path / "pred.csv"
        pd.DataFrame(p[:, cols], columns=header).to_csv(path, index=False)
        if expected is None:
            with pytest.raises(InvalidInputError, match=r"\['a', 'b'\].*\['no', 'yes'\]"):
                _read_predictions(path, 5, 2, "predictions_train", ["no", "yes"])
        else:
            np.testing.assert_allclose(_read_predictions(path, 5, 2, "predictions_train", ["no", "yes"]), expected)
    pd.DataFrame(p[:, [1, 0]], columns=["1", "0"]).to_csv(path, index=False)  # class names that are integers
    np.testing.assert_allclose(_read_predictions(path, 5, 2, "predictions_test", ["0", "1"]), p)


# --- 4. what the model takes (docs/input.md, "The model's input") ---------------------------------------------------

def _numeric_tables(tmp_path, n=240):
    rng = np.random.default_rng(3)
    X = rng.normal(loc=[50.0, 3.0, -20.0, 1000.0], scale=[10.0, 1.0, 5.0, 300.0], size=(n, 4))
    y = (X[:, 0] / 10 + X[:, 1] - X[:, 3] / 300 + rng.normal(scale=0.5, size=n) > 4).astype(int)
    df = pd.DataFrame(X, columns=["age", "score", "temp", "income"]).assign(label=y)
    df.iloc[:n // 2].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[n // 2:].to_csv(tmp_path / "test.csv", index=False)
    return df.iloc[:n // 2], df.iloc[n // 2:]


def _check_inputs(tmp_path, capsys, *extra):
    import json

    from leakaudit.cli import main

    rc = main(["audit", "--check-inputs", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
               "--label", "label", "--model", str(tmp_path / "model.skops"), "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    if rc:
        return rc, err, None
    return rc, err, json.loads((tmp_path / "out" / "inputs.json").read_text())["target"]


def test_bare_array_model_is_refused_unless_its_input_is_stated(tmp_path, capsys):
    """Was: a model fitted on a bare array of the raw columns was fed leakaudit's z-scored encoding because the
    column count matched (reported accuracy 0.49 against a true 0.86). Now ``auto`` refuses it with a message that
    says how to save it, and ``--model-input columns`` feeds it the raw columns: the reported accuracy is the
    model's own."""
    from sklearn.ensemble import RandomForestClassifier

    train, test = _numeric_tables(tmp_path)
    Xtr, Xte = train.drop(columns="label").to_numpy(), test.drop(columns="label").to_numpy()
    est = RandomForestClassifier(n_estimators=20, random_state=0).fit(Xtr, train["label"])
    sio.dump(est, tmp_path / "model.skops")
    rc, err, _ = _check_inputs(tmp_path, capsys)
    assert rc == 2 and err.count("\n") == 1 and "bare array" in err and "--model-input columns" in err
    assert "DataFrame" in err and "skops.io.dump" in err
    rc, err, t = _check_inputs(tmp_path, capsys, "--model-input", "columns")
    assert rc == 0, err
    assert t["train_accuracy"] == pytest.approx(est.score(Xtr, train["label"]))
    assert t["test_accuracy"] == pytest.approx(est.score(Xte, test["label"]))
    assert t["test_accuracy"] > 0.7
    # --model-input encoded with the wrong width is refused naming both widths
    est5 = RandomForestClassifier(n_estimators=5, random_state=0).fit(np.c_[Xtr, Xtr[:, :1]], train["label"])
    sio.dump(est5, tmp_path / "model.skops")
    rc, err, _ = _check_inputs(tmp_path, capsys, "--model-input", "encoded")
    assert rc == 2 and "takes 5 input features" in err and "has 4" in err


def test_model_fitted_on_named_encoded_columns_gets_the_encoding(tmp_path, capsys):
    """A model fitted on a DataFrame of leakaudit's encoded columns is recognised by its feature names."""
    from sklearn.linear_model import LogisticRegression

    from leakaudit.audit import make_config
    from leakaudit.audit.inputs.data import prepare_data

    train, test = _numeric_tables(tmp_path)
    for df, name in ((train, "train"), (test, "test")):  # a text column: its one-hot names mark the encoding
        df.assign(city=np.where(df["score"] > 3, "north", "south")).to_csv(tmp_path / f"{name}.csv", index=False)
    data = prepare_data(make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="label"))
    names = list(data.encoder.feature_names_out)[::-1]  # any order: matched by name
    Xm = pd.DataFrame(data.X_mem, columns=data.encoder.feature_names_out)[names]
    Xn = pd.DataFrame(data.X_non, columns=data.encoder.feature_names_out)[names]
    est = LogisticRegression(max_iter=500).fit(Xm, data.y_mem)
    sio.dump(est, tmp_path / "model.skops")
    rc, err, t = _check_inputs(tmp_path, capsys)
    assert rc == 0, err
    assert "encoding" in t["description"]
    assert t["train_accuracy"] == pytest.approx(est.score(Xm, data.y_mem))
    assert t["test_accuracy"] == pytest.approx(est.score(Xn, data.y_non))
    # all-numeric encoded columns carry the table's own names: read as the table's columns unless stated
    num = [c for c in names if "=" not in c]
    est = LogisticRegression(max_iter=500).fit(Xm[num], data.y_mem)
    sio.dump(est, tmp_path / "model.skops")
    rc, err, t = _check_inputs(tmp_path, capsys, "--model-input", "encoded")
    assert rc == 0, err
    assert t["test_accuracy"] == pytest.approx(est.score(Xn[num], data.y_non))
    rc, err, t = _check_inputs(tmp_path, capsys)
    assert rc == 0 and "own columns" in t["description"]


def test_model_that_never_predicts_a_class_of_the_data_is_refused(tmp_path, capsys):
    """Was: a data class unknown to the model silently got probability 0 (its records always misclassified)."""
    from sklearn.linear_model import LogisticRegression

    train, test = _numeric_tables(tmp_path)
    cls = lambda df: np.where(df["age"] > 55, "c", np.where(df["label"] == 1, "b", "a"))  # noqa: E731
    train, test = train.assign(label=cls(train)), test.assign(label=cls(test))
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    keep = train["label"] != "c"
    est = LogisticRegression(max_iter=500).fit(train.drop(columns="label")[keep], train["label"][keep])
    sio.dump(est, tmp_path / "model.skops")
    rc, err, _ = _check_inputs(tmp_path, capsys)
    assert rc == 2 and err.count("\n") == 1 and "class(es) c that the model does not predict" in err
    est = LogisticRegression(max_iter=500).fit(train.drop(columns="label"), train["label"].replace("c", "z"))
    sio.dump(est, tmp_path / "model.skops")
    rc, err, _ = _check_inputs(tmp_path, capsys)
    assert rc == 2 and "unknown to the data: z" in err


def test_model_raising_type_error_on_the_records_is_refused_in_one_line(tmp_path, capsys):
    """Found by tests/reliability/test_fuzz_audit.py. Was: a traceback out of ``main`` (only ValueError was caught)
    when the model raised TypeError on the records, e.g. a OneHotEncoder fitted on text given the file's numbers."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    train, _ = _numeric_tables(tmp_path)
    X = train.drop(columns="label").round().astype(int).astype(str)  # fitted on text, the files hold numbers
    est = Pipeline([("prep", ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), list(X.columns))])),
                    ("clf", LogisticRegression(max_iter=200))]).fit(X, train["label"])
    with pytest.raises(TypeError):
        est.predict_proba(train.drop(columns="label"))
    sio.dump(est, tmp_path / "model.skops")
    rc, err, _ = _check_inputs(tmp_path, capsys)
    assert rc == 2 and err.count("\n") == 1 and err.startswith("leakaudit: error: the model rejected the member")


def test_prediction_file_without_a_header_is_read_whole(tmp_path):
    """docs/input.md allows a predictions file without a header. Was: pandas took its first record for a header,
    so a file of n records was refused as holding n - 1 (found by tests/reliability/test_fuzz_audit.py)."""
    from leakaudit.audit.inputs.target import _read_predictions

    p = np.random.default_rng(1).dirichlet([1, 1, 1], size=6)
    path = tmp_path / "pred.csv"
    pd.DataFrame(p).to_csv(path, index=False, header=False)
    np.testing.assert_allclose(_read_predictions(path, 6, 3, "predictions_train", ["a", "b", "c"]), p)
    np.testing.assert_allclose(_read_predictions(path, 6, 3, "predictions_train", ["1", "2", "5"]), p)
    with pytest.raises(InvalidInputError, match="has 5 rows; the data has 7"):  # a record short: refused
        _read_predictions(path, 7, 3, "predictions_train", ["a", "b", "c"])
    # a first line of bare integers is a header of class codes, whatever the row count
    pd.DataFrame(p, columns=["0", "1", "2"]).to_csv(path, index=False)
    np.testing.assert_allclose(_read_predictions(path, 6, 3, "predictions_train", ["a", "b", "c"]), p)
    with pytest.raises(InvalidInputError, match="has 6 rows; the data has 7"):
        _read_predictions(path, 7, 3, "predictions_train", ["a", "b", "c"])


def test_prediction_headers_of_digits_beside_integer_classes_are_refused(tmp_path):
    """Columns headed 0, 1 while the classes are the integers 1, 2: column "1" could be class 1 (its name) or
    class 2 (code 1). Was: read as codes, silently. Now refused as ambiguous (found by the audit fuzz suite)."""
    from leakaudit.audit.inputs.target import _read_predictions

    p = np.random.default_rng(2).dirichlet([1, 1], size=4)
    path = tmp_path / "pred.csv"
    pd.DataFrame(p, columns=["0", "1"]).to_csv(path, index=False)
    with pytest.raises(InvalidInputError, match="could be class names or class codes"):
        _read_predictions(path, 4, 2, "predictions_train", ["1", "2"])
    np.testing.assert_allclose(_read_predictions(path, 4, 2, "predictions_train", ["5", "7"]), p)  # no overlap
    pd.DataFrame(p, columns=["2", "1"]).to_csv(path, index=False)  # exactly the class names: by name
    np.testing.assert_allclose(_read_predictions(path, 4, 2, "predictions_train", ["1", "2"]), p[:, [1, 0]])


def test_model_classes_match_whole_float_labels_by_value(tmp_path, capsys):
    """A label written 1, 5 in one file and 1.0, 5.0 in another is a float column (class names "1.0", "5.0"). Was:
    a model fitted on the integers (classes 1, 5) was refused as predicting unknown classes, while one with classes
    0, 1 was read as label codes although 1 is also a value of the label (found by the audit fuzz suite). Now
    classes match by value, and integer classes beside whole-number labels that do not match are refused."""
    from sklearn.linear_model import LogisticRegression

    from leakaudit.audit.inputs.target import _class_columns

    assert list(_class_columns(np.array([1, 5]), ["1.0", "5.0"])) == [0, 1]
    assert list(_class_columns(np.array([2, 0, 1]), ["0.0", "1.0", "2.0"])) == [2, 0, 1]
    with pytest.raises(InvalidInputError, match="do not match"):
        _class_columns(np.array([0, 1]), ["1.0", "5.0"])  # codes or values: ambiguous, as for 1, 5
    assert list(_class_columns(np.array([0, 1]), ["no", "yes"])) == [0, 1]  # text labels: codes
    train, test = _numeric_tables(tmp_path)
    train, test = train.assign(label=train["label"] * 4 + 1), test.assign(label=(test["label"] * 4 + 1).astype(float))
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)  # the label as 1.0 / 5.0
    X, y = train.drop(columns="label"), train["label"]
    est = LogisticRegression(max_iter=500).fit(X, y)
    sio.dump(est, tmp_path / "model.skops")
    rc, err, t = _check_inputs(tmp_path, capsys)
    assert rc == 0, err
    assert t["train_accuracy"] == pytest.approx(est.score(X, y))
    assert t["test_accuracy"] == pytest.approx(est.score(test.drop(columns="label"), test["label"].astype(int)))
    sio.dump(LogisticRegression(max_iter=500).fit(X, (y > 1).astype(int)), tmp_path / "model.skops")
    rc, err, _ = _check_inputs(tmp_path, capsys)
    assert rc == 2 and "do not match" in err


def test_prediction_headers_of_digits_beside_whole_float_classes_are_refused(tmp_path):
    from leakaudit.audit.inputs.target import _read_predictions

    p = np.random.default_rng(4).dirichlet([1, 1], size=4)
    path = tmp_path / "pred.csv"
    pd.DataFrame(p, columns=["0", "1"]).to_csv(path, index=False)
    with pytest.raises(InvalidInputError, match="could be class names or class codes"):
        _read_predictions(path, 4, 2, "predictions_train", ["1.0", "2.0"])
    pd.DataFrame(p, columns=["1", "0"]).to_csv(path, index=False)  # the class values written as integers
    np.testing.assert_allclose(_read_predictions(path, 4, 2, "predictions_train", ["0.0", "1.0"]), p[:, [1, 0]])
    pd.DataFrame(p, columns=["5.0", "1.0"]).to_csv(path, index=False)  # and the other way round
    np.testing.assert_allclose(_read_predictions(path, 4, 2, "predictions_train", ["1", "5"]), p[:, [1, 0]])
