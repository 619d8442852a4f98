"""leakaudit.audit(): the audit in memory, its argument checks, and the same result as the command line's files."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

import leakaudit
from leakaudit.exceptions import LeakauditError, NotEstimableWarning


def _tables(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=2 * n) > 0)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(colour=rng.choice(["red", "blue"], 2 * n),
                                                         label=np.where(y, "yes", "no"))
    return df.iloc[:n], df.iloc[n:]


def test_audit_in_memory_equals_the_command_line_on_the_same_files(tmp_path):
    """The library call and `leakaudit audit` over the same records and model give the same checks and scores."""
    import skops.io as sio
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from leakaudit.cli import main

    mem, non = _tables()
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["colour"]), remainder="passthrough"),
                          LogisticRegression()).fit(mem.drop(columns="label"), mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", cache_dir=str(tmp_path / "c1"))
    assert res.records is not None and len(res.records) == len(mem) + len(non)
    assert set(res.records["source"]) == {"members", "nonmembers"}
    # a record is named by its DataFrame's index label, as pandas selects it (members.loc[label])
    assert "row" not in res.records and list(res.records["index"]) == list(mem.index) + list(non.index)
    assert not any(re.search(r"\brow \d+", c.sentence) for c in res.checks)
    # the settings given; no file behind the records or the model
    assert all(res.config[k] is None for k in ("train", "test", "data", "model", "population"))
    assert res.config["label"] == "label" and res.config["profile"] == "smoke"
    mem.to_csv(tmp_path / "train.csv", index=False)
    non.to_csv(tmp_path / "test.csv", index=False)
    sio.dump(model, tmp_path / "model.skops")
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
               "label", "--model", str(tmp_path / "model.skops"), "--profile", "smoke", "--out",
               str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c2"), "--quiet"])
    assert rc in (0, None)
    cli = pd.read_csv(tmp_path / "out" / "records.csv")
    for col in ("score_loss", "score_lira", "score_shadow", "pdtp"):
        np.testing.assert_allclose(res.records[col].to_numpy(float), cli[col].to_numpy(float), equal_nan=True)
    import json

    cli_checks = json.loads((tmp_path / "out" / "results.json").read_text())["verdict"]["checks"]
    assert [(c["id"], c["status"]) for c in cli_checks] == [(c.id, c.status) for c in res.checks]
    out = res.save(tmp_path / "saved")
    # the command line's records.csv also gives the line each record starts on in its file (a table in memory has none)
    assert pd.read_csv(out / "records.csv").shape == cli.drop(columns="line").shape


@pytest.mark.parametrize("kwargs, words", [
    (dict(members=[[1, 2]]), "members must be a pandas DataFrame"),
    (dict(label=3), "label must be the name"),
    (dict(profile="fast"), "profile"),
    (dict(train="x.csv"), "unknown or file-only argument(s) train"),
    (dict(n_reference=3), "unknown or file-only argument(s) n_reference"),
    (dict(model_input="raw"), "model_input must be"),
    (dict(sensitive="colour"), "sensitive must be a list"),
])
def test_bad_arguments_are_named(kwargs, words):
    mem, non = _tables(50)
    model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
    args = dict(model=model, members=mem, nonmembers=non, label="label", profile="smoke")
    args.update(kwargs)
    with pytest.raises(LeakauditError, match=words.replace("(", r"\(").replace(")", r"\)")):
        leakaudit.audit(**args)


def test_a_model_without_probabilities_is_refused_by_name():
    mem, non = _tables(50)
    with pytest.raises(LeakauditError, match="model must be a fitted scikit-learn classifier"):
        leakaudit.audit(SVC().fit(mem[["a", "b", "c"]], mem["label"]), mem, non, label="label")


def test_predictions_only_in_memory(tmp_path):
    import leakaudit.audit.pipeline as pipeline

    mem, non = _tables(200)
    rng = np.random.default_rng(1)
    # said before the audit runs: without the model DTP-1 cannot be measured, so "publish" is out of reach
    warned_before, plan = [], pipeline._run_plan

    def run_plan(*args, **kwargs):  # the analyses start here: the warning is out already
        warned_before.append(len(caught.list))
        return plan(*args, **kwargs)

    said = r"predictions only \(predictions\), not the model \(model\): the DTP-1 check .* never \"publish\""
    with pytest.MonkeyPatch.context() as mp, pytest.warns(NotEstimableWarning, match=said) as caught:
        mp.setattr(pipeline, "_run_plan", run_plan)
        res = leakaudit.audit(members=mem, nonmembers=non, label="label", profile="smoke",
                              predictions=(rng.dirichlet([1, 1], 200), rng.dirichlet([1, 1], 200)))
    assert warned_before and warned_before[0] >= 1
    assert res.outcome != "publish"
    assert set(res.membership) == {"loss", "quantile"}
    skipped = {s["name"]: s for s in res.skipped}
    assert any(s.get("missing") == ["model"] for s in skipped.values())
    # a library call is told the argument, never a flag: in the result and in its saved report
    fixes = [s.fix for s in res.skipped] + [c.fix for c in res.checks]
    assert any("the model itself (model)" in f for f in fixes) and not any("--" in f or "`" in f for f in fixes)
    html = (res.save(tmp_path / "out") / "report.html").read_text()
    assert "the model itself (model)" in html and "--model" not in html
    with pytest.raises(LeakauditError, match=r"predictions\[0\] has shape"):
        leakaudit.audit(members=mem, nonmembers=non, label="label", predictions=(np.ones((3, 2)) / 2, np.ones((200, 2)) / 2))


def test_learner_validation_runs_on_every_training_path():
    """SklearnLearner(SVC()) has no predict_proba: refused with the same message by fit, fit_many, fit_predict_many
    and the engine (fit_predict_many and the engine used to end in a raw AttributeError)."""
    from leakaudit.engine import Engine
    from leakaudit.learners import SklearnLearner

    X = np.random.default_rng(0).normal(size=(20, 2))
    y = (X[:, 0] > 0).astype(int)
    learner = SklearnLearner(SVC())
    calls = [lambda: learner.fit(X, y), lambda: learner.fit_many(X, y, [np.arange(20)], [0]),
             lambda: learner.fit_predict_many(X, y, [np.arange(20)], [0], X),
             lambda: Engine().predict_many(learner, X, y, [np.arange(20)], [0], X)]
    for call in calls:
        with pytest.raises(LeakauditError, match="has no predict_proba"):
            call()


def test_a_class_too_scarce_to_refit_is_refused_in_memory_as_from_files(tmp_path):
    """One member of a class: scikit-learn cannot refit the members less that record. The library call refuses it
    before any training, naming the table, as the command line does for a file."""
    mem, non = _tables()
    mem = mem.copy()
    mem["label"] = "no"
    mem.iloc[0, mem.columns.get_loc("label")] = "yes"
    model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
    with pytest.raises(LeakauditError, match="occurs once among the members .row 1 of the members table"):
        leakaudit.audit(model, mem.drop(columns="colour"), non.drop(columns="colour"), label="label",
                        profile="standard", cache_dir=str(tmp_path / "c"))


def test_a_torch_module_in_memory_with_its_recipe(tmp_path):
    """A trained torch module is audited in memory: queried on the table's numeric columns (model_input
    "columns"), retrained by the learner given (its recipe) for the reference and leave-one-out models; without a
    learner, the attacks that need retraining say why they did not run."""
    pytest.importorskip("torch")
    from leakaudit.learners import TorchModuleLearner

    mem, non = _tables(150)
    mem, non = mem.drop(columns="colour"), non.drop(columns="colour")
    learner = TorchModuleLearner(module="torch.nn:Linear", module_kwargs={"in_features": 3, "out_features": 2},
                                 epochs=20, lr=0.05, batch_size=32)
    y = (mem["label"] == "yes").to_numpy(int)
    module = learner.fit(mem[["a", "b", "c"]].to_numpy(float), y, random_state=0, n_classes=2).module
    res = leakaudit.audit(module, mem, non, label="label", learner=learner, model_input="columns", profile="smoke",
                          cache_dir=str(tmp_path / "c"))
    assert res.target["kind"] == "torch" and "retrained" in res.target["description"]
    assert {"loss", "lira"} <= set(res.membership) and res.dtp is not None
    alone = leakaudit.audit(module, mem, non, label="label", model_input="columns", profile="smoke")
    assert "lira" not in alone.membership and alone.dtp is None
    assert any("retrain" in s["reason"] for s in alone.skipped)
    with pytest.raises(LeakauditError, match="learner must be a leakaudit Learner"):
        leakaudit.audit(module, mem, non, label="label", learner=object(), model_input="columns")
    with pytest.raises(LeakauditError, match="learner is for a torch module"):
        leakaudit.audit(LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"]), mem, non, label="label",
                        learner=learner)


def test_a_record_in_memory_is_named_as_pandas_selects_it():
    from leakaudit._results import record_name

    assert record_name("members", index=np.int64(5)) == "members.loc[5]"
    assert record_name("members", index="ann") == "members.loc['ann']"
    assert record_name("train.csv", np.int64(248)) == "train.csv, row 248"


def test_a_deterministic_recipe_that_gives_the_model_itself_is_not_set_against_it():
    """A 1-nearest-neighbour rule: its seed does not matter, and retraining it on the members gives the given model
    exactly, so a DTP-1 finding of the recipe is a finding of the given model (no test of its outputs is run, and
    the recipe and the model are not set against each other)."""
    from sklearn.compose import make_column_transformer
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    mem, non = _tables(150)
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["colour"]), remainder="passthrough"),
                          KNeighborsClassifier(n_neighbors=1)).fit(mem.drop(columns="label"), mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", random_state=0)
    dtp = next(c for c in res.checks if c.id == "dtp.dtp1")
    assert dtp.status == "exceeded" and dtp.describes == "model", dtp.sentence
    assert res.dtp["retrains_exactly"] is True and "confirmation" not in res.dtp
    assert "gives the given model's outputs exactly" in dtp.sentence and "do not show" not in dtp.sentence
    assert res.outcome == "do not publish"
