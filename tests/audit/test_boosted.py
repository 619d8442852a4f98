"""XGBoost, LightGBM and CatBoost models as audit targets (issue 67): their own model files (XGBoost JSON/UBJSON,
LightGBM text, CatBoost JSON/cbm; never a pickle) and in memory (the scikit-learn wrappers and native Boosters), retrained by leakaudit's learner
of each library with the recipe the model records; crafted files refused in one line, exit status 2."""

import copy
import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from leakaudit.exceptions import InvalidInputError, UnsafeFileError, UnsupportedError


def _data(n=240, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    z = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n)
    y = (z > 0).astype(int) if classes == 2 else np.digitize(z, [-0.5, 0.5])
    return X, y


@pytest.fixture(scope="module")
def xgb_model():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    return xgb.XGBClassifier(n_estimators=6, max_depth=3, learning_rate=0.2, reg_lambda=2.0, random_state=7,
                             n_jobs=1).fit(X, y), X, y


@pytest.fixture(scope="module")
def lgb_model():
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    return lgb.LGBMClassifier(n_estimators=6, num_leaves=5, learning_rate=0.2, reg_lambda=1.5, min_child_samples=10,
                              random_state=7, n_jobs=1, verbose=-1).fit(X, y), X, y


# --- files: round trip, recipe -------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["json", "ubj"])
def test_xgboost_file_round_trip(tmp_path, xgb_model, suffix):
    from leakaudit.audit.inputs.boosted import load_boosted_file

    m, X, y = xgb_model
    m.save_model(tmp_path / f"m.{suffix}")
    b = load_boosted_file(tmp_path / f"m.{suffix}")
    assert b.library == "xgboost" and b.num_feature == 4
    np.testing.assert_allclose(b.model.predict_proba(X), m.predict_proba(X), atol=1e-6)
    # what the file records: objective, rounds, the trees' depth; the rest is stated as XGBoost's defaults
    learner = b.learner
    assert (learner.objective, learner.n_rounds, learner.params["max_depth"]) == ("binary:logistic", 6, 3)
    assert "defaults" in b.recipe
    assert b.model.tree_parameters() > 0


def test_xgboost_file_with_its_training_configuration(tmp_path, xgb_model):
    """A model saved with its configuration as an attribute (booster.set_attr(training_config=save_config())) is
    retrained with its whole recipe; a configuration that is not XGBoost's CPU training's is refused in one line."""
    from leakaudit.audit.inputs.boosted import load_boosted_file

    m, X, y = xgb_model
    booster = copy.deepcopy(m.get_booster())
    booster.set_attr(training_config=booster.save_config())
    booster.save_model(tmp_path / "m.json")
    b = load_boosted_file(tmp_path / "m.json")
    assert float(b.learner.params["eta"]) == pytest.approx(0.2) and float(b.learner.params["lambda"]) == 2.0
    assert "defaults" not in b.recipe
    np.testing.assert_allclose(b.learner.fit(X, y, random_state=1).predict_proba(X), m.predict_proba(X), atol=1e-6)
    d = json.loads((tmp_path / "m.json").read_text())
    for key, value, words in (("eta", "nan", "eta"), ("tree_method", "gpu_hist", "tree_method is not one of")):
        config = json.loads(d["learner"]["attributes"]["training_config"])
        config["learner"]["gradient_booster"]["tree_train_param" if key == "eta" else "gbtree_train_param"][key] = value
        bad = copy.deepcopy(d)
        bad["learner"]["attributes"]["training_config"] = json.dumps(config)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises((UnsafeFileError, UnsupportedError), match=words) as err:
            load_boosted_file(tmp_path / "bad.json")
        assert "\n" not in str(err.value)


def test_lightgbm_file_round_trip_and_recipe(tmp_path, lgb_model):
    from leakaudit.audit.inputs.boosted import load_boosted_file

    m, X, y = lgb_model
    m.booster_.save_model(tmp_path / "m.txt")
    b = load_boosted_file(tmp_path / "m.txt")
    assert b.library == "lightgbm"
    np.testing.assert_allclose(b.model.predict_proba(X), m.predict_proba(X), atol=1e-12)
    p = b.learner.params
    assert b.learner.objective == "binary" and b.learner.n_rounds == 6
    assert (p["learning_rate"], p["num_leaves"], p["lambda_l2"], p["min_data_in_leaf"]) == (0.2, 5, 1.5, 10)
    assert "seed 7" in b.recipe
    # retrained with the recipe on the same records: the same model (no sampling, so the seed does not matter)
    again = b.learner.fit(X, y, random_state=123)
    np.testing.assert_allclose(again.predict_proba(X), m.predict_proba(X), atol=1e-12)
    assert not b.learner.capabilities.stochastic
    # leaf records as LightGBM counted them: every tree's leaves hold all the training rows
    leaves = b.model.tree_leaf_records()
    assert len(leaves) == 6 and all(int(r.sum()) == len(X) for r in leaves)


# --- in memory: wrappers and Boosters, the recipe from the library's own record --------------------------------------

def test_xgboost_in_memory_recipe_read_from_params(xgb_model):
    from leakaudit.audit.inputs.boosted import boosted_from_memory

    m, X, y = xgb_model
    for obj in (m, m.get_booster()):
        b = boosted_from_memory(obj)
        p = b.learner.params
        assert b.learner.n_rounds == 6 and b.learner.objective == "binary:logistic"
        assert float(p["eta"]) == pytest.approx(0.2) and int(p["max_depth"]) == 3 and float(p["lambda"]) == 2.0
        refit = b.learner.fit(X, y, random_state=7)
        np.testing.assert_allclose(refit.predict_proba(X), m.predict_proba(X), atol=1e-6)
    from leakaudit.learners.xgb import xgboost_recipe

    assert xgboost_recipe(json.loads(m.get_booster().save_config()), rounds=6, n_features=4)["seed"] == 7


def test_in_memory_wrappers_audit_as_targets(xgb_model, lgb_model):
    """boosted_target feeds each wrapper leakaudit's encoding (stated) or its columns by name, maps its classes
    to the data's, and its learner retrains it; a class-count mismatch and a bare array without a stated input are
    refused in one line."""
    from leakaudit.audit.inputs.boosted import boosted_from_memory
    from leakaudit.audit.inputs.target import boosted_target
    from leakaudit.audit.inputs.data import data_from_frames

    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=np.where(y == 1, "yes", "no"))
    members, non = df.iloc[:120], df.iloc[120:]
    data = data_from_frames(members, non, label="label")
    named = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, n_jobs=1, verbose=-1).fit(members[["a", "b", "c", "d"]],
                                                                                          members["label"])
    t = boosted_target(data, boosted_from_memory(named))
    assert t.kind == "lightgbm" and "columns by name" in t.description
    np.testing.assert_allclose(t.probs_mem, named.predict_proba(members[["a", "b", "c", "d"]]), atol=1e-12)
    models = t.learner.fit_many(t.X_mem, data.y_mem, [np.arange(60), np.arange(60, 120)], [1, 2])
    assert models.predict_proba(t.X_non).shape == (2, 120, 2)
    m, _, _ = xgb_model
    with pytest.raises(InvalidInputError, match="bare array"):
        boosted_target(data, boosted_from_memory(m))
    t = boosted_target(data, boosted_from_memory(m), model_input="columns")
    assert t.kind == "xgboost" and t.model.leaf_records_ and sum(int(r.sum()) for r in t.model.leaf_records_) == 6 * 120
    m3, X3, y3 = _three_class()
    with pytest.raises(InvalidInputError, match="predicts 3 classes"):
        boosted_target(data, boosted_from_memory(m3), model_input="columns")


def _three_class():
    xgb = pytest.importorskip("xgboost")
    X, y = _data(classes=3)
    return xgb.XGBClassifier(n_estimators=2, max_depth=2, n_jobs=1).fit(X, y), X, y


def test_multiclass_models_and_learners():
    from leakaudit.audit.inputs.boosted import boosted_from_memory

    lgb = pytest.importorskip("lightgbm")
    m3, X, y = _three_class()
    b = boosted_from_memory(m3)
    np.testing.assert_allclose(b.model.predict_proba(X), m3.predict_proba(X), atol=1e-6)
    assert b.learner.fit(X, y, random_state=0).predict_proba(X[:3]).shape == (3, 3)
    l3 = lgb.LGBMClassifier(n_estimators=2, n_jobs=1, verbose=-1).fit(X, y)
    b = boosted_from_memory(l3)
    np.testing.assert_allclose(b.model.predict_proba(X), l3.predict_proba(X), atol=1e-12)
    # a subset missing classes still gives probabilities over all of them
    assert b.learner.fit(X[y == 0], y[y == 0], random_state=0, n_classes=3).predict_proba(X[:2]).shape == (2, 3)


def test_structural_checks_read_boosted_trees(lgb_model):
    from leakaudit.audit.inputs.boosted import boosted_from_memory
    from leakaudit.audit.inputs.structural import describe_structure, structural_checks

    m, X, y = lgb_model
    model = boosted_from_memory(m).model
    checks = {c.id: c for c in structural_checks(model, len(X), min_leaf_records=5)}
    assert checks["structural.leaf_size"].value == min(int(r.min()) for r in model.tree_leaf_records())
    assert checks["structural.parameters_per_record"].value == pytest.approx(model.tree_parameters() / len(X))
    assert describe_structure(model, len(X))["n_trees"] == 6


# --- hostile files -----------------------------------------------------------------------------------------------

def _xgb_json(xgb_model, tmp_path):
    m, _, _ = xgb_model
    m.save_model(tmp_path / "ok.json")
    return json.loads((tmp_path / "ok.json").read_text())


def _tree(d, k=0):
    return d["learner"]["gradient_booster"]["model"]["trees"][k]


XGB_CRAFTS = {
    "feature out of range": (lambda d: _tree(d)["split_indices"].__setitem__(0, 10**6), "splits on feature"),
    "child past the arrays": (lambda d: _tree(d)["left_children"].__setitem__(0, 10**6), "child"),
    "cycle": (lambda d: _tree(d)["left_children"].__setitem__(1, 0) if _tree(d)["left_children"][1] != -1
              else _tree(d)["right_children"].__setitem__(0, 0), "child"),
    "absurd node count": (lambda d: _tree(d)["tree_param"].__setitem__("num_nodes", str(10**12)), "num_nodes"),
    "wrong type": (lambda d: _tree(d)["split_conditions"].__setitem__(0, "x"), "holds a str"),
    "array too short": (lambda d: _tree(d)["parents"].pop(), "entries for"),
    "tree count": (lambda d: d["learner"]["gradient_booster"]["model"]["gbtree_model_param"].__setitem__(
        "num_trees", "7"), "num_trees"),
    "not a model": (lambda d: d.pop("learner"), "learner"),
}


def _refused_in_one_line(path, words):
    """Loading the model file at ``path`` raises UnsafeFileError: one line naming the file and ``words``."""
    from leakaudit.audit.inputs.boosted import load_boosted_file

    with pytest.raises(UnsafeFileError) as err:
        load_boosted_file(path)
    assert words in str(err.value) and path.name in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("craft", sorted(XGB_CRAFTS))
def test_crafted_xgboost_json_is_refused(tmp_path, xgb_model, craft):
    d = _xgb_json(xgb_model, tmp_path)
    change, words = XGB_CRAFTS[craft]
    change(d)
    (tmp_path / "bad.json").write_text(json.dumps(d))
    _refused_in_one_line(tmp_path / "bad.json", words)


def test_crafted_ubjson_is_refused(tmp_path, xgb_model):
    from leakaudit.audit.inputs.boosted import decode_ubjson, load_boosted_file

    m, _, _ = xgb_model
    m.save_model(tmp_path / "ok.ubj")
    blob = (tmp_path / "ok.ubj").read_bytes()
    assert decode_ubjson(blob)["learner"]["objective"]["name"] == "binary:logistic"
    (tmp_path / "cut.ubj").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(UnsafeFileError, match="truncated|beyond"):
        load_boosted_file(tmp_path / "cut.ubj")
    # an array declaring 2^40 float64s in a file of a few bytes: refused before anything is allocated
    (tmp_path / "huge.ubj").write_bytes(b"{U\x01a[$D#L" + (2**40).to_bytes(8, "big") + b"\x00" * 16 + b"}")
    with pytest.raises(UnsafeFileError, match="beyond the file"):
        load_boosted_file(tmp_path / "huge.ubj")


def _lgb_text(lgb_model, tmp_path):
    m, _, _ = lgb_model
    return m.booster_.model_to_string()


LGB_CRAFTS = {
    "feature out of range": (lambda s: s.replace("split_feature=", "split_feature=1000000 ", 1), "entries|feature"),
    "child out of range": (lambda s: s.replace("left_child=", "left_child=99999 ", 1).replace(
        "left_child=99999 ", "left_child=99999 ", 1), "entries|child"),
    "absurd leaves": (lambda s: s.replace("num_leaves=", "num_leaves=99999999", 1), "num_leaves"),
    "wrong type": (lambda s: s.replace("leaf_value=", "leaf_value=abc ", 1), "not a number|entries"),
    "nan": (lambda s: s.replace("leaf_value=", "leaf_value=nan ", 1), "not a number|entries"),
    "no end": (lambda s: s.replace("end of trees", ""), "end of trees"),
}


@pytest.mark.parametrize("craft", sorted(LGB_CRAFTS))
def test_crafted_lightgbm_text_is_refused(tmp_path, lgb_model, craft):
    from leakaudit.audit.inputs.boosted import load_boosted_file

    change, words = LGB_CRAFTS[craft]
    (tmp_path / "bad.txt").write_text(change(_lgb_text(lgb_model, tmp_path)))
    with pytest.raises(UnsafeFileError) as err:
        load_boosted_file(tmp_path / "bad.txt")
    import re

    assert re.search(words, str(err.value)) and "bad.txt" in str(err.value) and "\n" not in str(err.value)


def test_lightgbm_feature_index_past_the_width_is_refused(tmp_path, lgb_model):
    """The same number of entries, one split on a feature the model does not have."""
    import re

    from leakaudit.audit.inputs.boosted import load_boosted_file

    text = _lgb_text(lgb_model, tmp_path)
    text = re.sub(r"split_feature=(\d+)", "split_feature=4000", text, count=1)
    (tmp_path / "bad.txt").write_text(text)
    with pytest.raises(UnsafeFileError, match="splits on feature 4000 of 4"):
        load_boosted_file(tmp_path / "bad.txt")


# --- the command line ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def adult_slice(tmp_path_factory):
    """80 members and 80 non-members of Adult, and an XGBoost model trained on leakaudit's encoding of the members,
    saved as XGBoost JSON."""
    xgb = pytest.importorskip("xgboost")
    from leakaudit.data import TabularEncoder, load_adult

    d = tmp_path_factory.mktemp("adult")
    ds = load_adult()
    table = ds.frame.assign(income=np.asarray(ds.class_names)[ds.y])
    rows = np.random.default_rng(0).permutation(len(table))
    mem, non = table.iloc[rows[:80]], table.iloc[rows[80:160]]
    mem.to_csv(d / "train.csv", index=False)
    non.to_csv(d / "test.csv", index=False)
    enc = TabularEncoder().fit(pd.concat([mem, non]).drop(columns="income"))
    classes = sorted(mem["income"].unique())
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, random_state=0, n_jobs=1)
    model.fit(enc.transform(mem.drop(columns="income")), mem["income"].map(classes.index))
    model.save_model(d / "model.json")
    return d


def test_cli_audits_an_xgboost_json_model_on_adult(adult_slice, capsys):
    from leakaudit.cli import main

    d = adult_slice
    rc = main(["audit", "--train", str(d / "train.csv"), "--test", str(d / "test.csv"), "--label", "income",
               "--model", str(d / "model.json"), "--model-input", "encoded", "--profile", "smoke", "--no-removal",
               "--out", str(d / "out")])
    assert rc == 0, capsys.readouterr().err[-2000:]
    res = json.loads((d / "out" / "results.json").read_text())
    assert res["target"]["kind"] == "xgboost" and res["target"]["retrainable"]
    assert "XGBoost" in res["target"]["description"]
    assert res["dtp"] and res["membership"]


def test_cli_refuses_a_crafted_xgboost_model_in_one_line(adult_slice, tmp_path):
    d = adult_slice
    model = json.loads((d / "model.json").read_text())
    _tree(model)["split_indices"][0] = 2**31 - 1
    (tmp_path / "crafted.json").write_text(json.dumps(model))
    code = textwrap.dedent(f"""
        import sys
        from leakaudit.cli import main
        sys.exit(main(["audit", "--train", {str(d / "train.csv")!r}, "--test", {str(d / "test.csv")!r},
                       "--label", "income", "--model", {str(tmp_path / "crafted.json")!r}, "--model-input", "encoded",
                       "--profile", "smoke", "--out", {str(tmp_path / "out")!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    err = proc.stderr
    assert err.count("\n") == 1 and err.startswith("leakaudit: error:") and "crafted.json" in err, err
    assert "splits on feature 2147483647" in err
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_model_over_the_work_budget_is_refused(tmp_path, lgb_model, monkeypatch):
    from leakaudit.audit.inputs.boosted import boosted_from_memory
    from leakaudit.audit.inputs.data import data_from_frames
    from leakaudit.audit.inputs.target import boosted_target

    m, X, y = lgb_model
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=y)
    data = data_from_frames(df.iloc[:120], df.iloc[120:], label="label")
    monkeypatch.setenv("LEAKAUDIT_WORK_BUDGET", "1e4")
    with pytest.raises(UnsafeFileError, match="over the work budget"):
        boosted_target(data, boosted_from_memory(m), model_input="columns")


def test_a_pickle_named_json_is_refused(tmp_path):
    import pickle

    from leakaudit.audit.inputs.boosted import load_boosted_file

    (tmp_path / "m.json").write_bytes(pickle.dumps({"learner": 1}))
    with pytest.raises(UnsafeFileError, match="not an XGBoost JSON/UBJSON, LightGBM text or CatBoost JSON/cbm model"):
        load_boosted_file(tmp_path / "m.json")


# --- the missing extra ------------------------------------------------------------------------------------------------

MISSING = r"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("xgboost", "lightgbm", "catboost"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name.split(".")[0])
sys.meta_path.insert(0, Block())
from leakaudit.audit.inputs.boosted import load_boosted_file
from leakaudit.exceptions import UnsupportedError
for path in sys.argv[1:]:
    try:
        load_boosted_file(path)
    except UnsupportedError as e:
        print(e)
"""


def test_missing_extra_says_which_in_one_line(tmp_path):
    (tmp_path / "m.json").write_text('{"learner": {}, "version": [3, 2, 0]}')
    (tmp_path / "m.txt").write_text("tree\nversion=v4\n")
    (tmp_path / "m.cbm").write_bytes(b"CBM1\x04\x00\x00\x00abcd")
    files = [str(tmp_path / f) for f in ("m.json", "m.txt", "m.cbm")]
    out = subprocess.run([sys.executable, "-c", MISSING, *files], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == [
        "an XGBoost model file needs xgboost, which is not installed: pip install 'leakaudit[xgboost]'",
        "a LightGBM model file needs lightgbm, which is not installed: pip install 'leakaudit[lightgbm]'",
        "a CatBoost model file needs catboost, which is not installed: pip install 'leakaudit[catboost]'"]


# --- CatBoost -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cb_model():
    cb = pytest.importorskip("catboost")
    X, y = _data()
    return cb.CatBoostClassifier(iterations=6, depth=3, learning_rate=0.2, l2_leaf_reg=2.0, random_seed=7,
                                 thread_count=1, verbose=False, allow_writing_files=False).fit(X, y), X, y


@pytest.mark.parametrize("fmt", ["json", "cbm"])
def test_catboost_file_round_trip_and_recipe(tmp_path, cb_model, fmt):
    """CatBoost's JSON and cbm files: the same probabilities, the recipe its recorded parameters give (and so the
    same model when retrained on the same records with its seed), leaf records from its trees' leaf weights."""
    from leakaudit.audit.inputs.boosted import load_boosted_file

    m, X, y = cb_model
    m.save_model(str(tmp_path / f"m.{fmt}"), format=fmt if fmt == "json" else "cbm")
    b = load_boosted_file(tmp_path / f"m.{fmt}")
    assert b.library == "catboost" and b.num_feature == 4
    np.testing.assert_allclose(b.model.predict_proba(X), m.predict_proba(X), atol=1e-12)
    p = b.learner.params
    assert (b.learner.objective, b.learner.n_rounds, p["depth"], p["l2_leaf_reg"]) == ("Logloss", 6, 3, 2)
    assert p["learning_rate"] == pytest.approx(0.2) and "random_seed 7" in b.recipe
    assert b.learner.capabilities.stochastic and not b.learner.capabilities.fits_one_class
    again = b.learner.fit(X, y, random_state=7)
    np.testing.assert_allclose(again.predict_proba(X), m.predict_proba(X), atol=1e-12)
    leaves = b.model.tree_leaf_records()
    assert len(leaves) == 6 and all(int(r.sum()) == len(X) and (r > 0).all() for r in leaves)
    assert b.model.tree_parameters() == 6 * (2 * 3 + 8)


def test_catboost_in_memory_classifier_and_native_model(cb_model):
    """A CatBoostClassifier and a native CatBoost model (three classes): the recipe and the class mapping from the
    model itself; the learner trains every class even on a subset missing one, refuses a one-class subset."""
    cb = pytest.importorskip("catboost")
    from leakaudit.audit.inputs.boosted import boosted_from_memory

    m, X, y = cb_model
    b = boosted_from_memory(m)
    assert b.learner.n_rounds == 6 and list(b.classes) == [0, 1]
    X3, y3 = _data(classes=3)
    native = cb.CatBoost({"loss_function": "MultiClass", "iterations": 3, "depth": 2, "random_seed": 1,
                          "thread_count": 1, "logging_level": "Silent", "allow_writing_files": False})
    native.fit(cb.Pool(X3, label=y3))
    b3 = boosted_from_memory(native)
    assert b3.library == "catboost" and b3.model.n_classes_ == 3 and b3.learner.objective == "MultiClass"
    np.testing.assert_allclose(b3.model.predict_proba(X3), native.predict(X3, prediction_type="Probability"))
    two = y3 != 2
    assert b3.learner.fit(X3[two], y3[two], random_state=0, n_classes=3).predict_proba(X3[:2]).shape == (2, 3)
    with pytest.raises(InvalidInputError, match="at least two classes"):
        b3.learner.fit(X3[y3 == 0], y3[y3 == 0], random_state=0, n_classes=3)
    with pytest.raises(InvalidInputError, match="is not fitted"):
        boosted_from_memory(cb.CatBoostClassifier())


def _cb_json(cb_model, tmp_path):
    m, _, _ = cb_model
    m.save_model(str(tmp_path / "ok.json"), format="json")
    return json.loads((tmp_path / "ok.json").read_text())


def _split(d, k=0):
    return d["oblivious_trees"][k]["splits"][0]


CB_CRAFTS = {
    "feature out of range": (lambda d: _split(d).__setitem__("float_feature_index", 10**6), "split on feature"),
    "border not the feature's": (lambda d: _split(d).__setitem__("border", 1e300), "borders"),
    "absurd depth": (lambda d: d["oblivious_trees"][0]["splits"].extend([_split(d)] * 40), "at most 16"),
    "leaf values short": (lambda d: d["oblivious_trees"][0]["leaf_values"].pop(), "leaf values"),
    "leaf weights long": (lambda d: d["oblivious_trees"][0]["leaf_weights"].append(1), "leaf weights"),
    "wrong type": (lambda d: d["oblivious_trees"][0]["leaf_values"].__setitem__(0, "x"), "finite numbers"),
    "not a model": (lambda d: d.pop("features_info"), "features_info"),
}


@pytest.mark.parametrize("craft", sorted(CB_CRAFTS))
def test_crafted_catboost_json_is_refused(tmp_path, cb_model, craft):
    d = _cb_json(cb_model, tmp_path)
    change, words = CB_CRAFTS[craft]
    change(d)
    body = json.dumps(d)
    if craft == "not a model":  # still read as CatBoost's JSON by its first key
        body = '{"model_info": ' + json.dumps(d.pop("model_info")) + ", " + json.dumps(d)[1:]
    (tmp_path / "bad.json").write_text(body)
    _refused_in_one_line(tmp_path / "bad.json", words)


def test_crafted_catboost_recipe_and_cbm_frame_are_refused(tmp_path, cb_model):
    """A recorded parameter leakaudit would train with must be a finite number or one of CatBoost's CPU choices;
    a cbm file's header must declare a length inside the file; categorical features are unsupported."""
    from leakaudit.audit.inputs.boosted import load_boosted_file

    m, _, _ = cb_model
    d = _cb_json(cb_model, tmp_path)
    d["model_info"]["params"]["tree_learner_options"]["grow_policy"] = "Depthwise"
    (tmp_path / "g.json").write_text(json.dumps(d))
    with pytest.raises((UnsupportedError, UnsafeFileError), match="grow_policy|Depthwise|could not be loaded"):
        load_boosted_file(tmp_path / "g.json")
    m.save_model(str(tmp_path / "ok.cbm"))
    blob = (tmp_path / "ok.cbm").read_bytes()
    (tmp_path / "long.cbm").write_bytes(blob[:4] + (2**31).to_bytes(4, "little") + blob[8:])
    with pytest.raises(UnsafeFileError, match="declares 2,147,483,648 bytes"):
        load_boosted_file(tmp_path / "long.cbm")
    (tmp_path / "cut.cbm").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(UnsafeFileError, match="declares"):
        load_boosted_file(tmp_path / "cut.cbm")
    d = _cb_json(cb_model, tmp_path)
    d["features_info"]["categorical_features"] = [{"feature_index": 4}]
    (tmp_path / "cat.json").write_text(json.dumps(d))
    with pytest.raises(UnsupportedError, match="categorical"):
        load_boosted_file(tmp_path / "cat.json")
