"""The audit end to end on small settings: files, schema, verdict, model formats, bad input."""

import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit import make_config, run_audit
from leakaudit.cli import main
from leakaudit.exceptions import InvalidInputError, InvalidParameterError, UnsafeFileError

SMALL = dict(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "run"
    res = run_audit(make_config(**SMALL), out, verbose=False)
    return out, res


def test_demo_writes_three_files_with_schema(demo):
    out, res = demo
    d = json.loads((out / "results.json").read_text())
    assert d["schema_version"] == 4 and d["type"] == "AuditResult"
    assert d["config"]["n_members"] == 150 and d["config"]["seed"] == 3
    assert set(d["membership"]) == {"loss", "lira", "informia", "shadow"}
    sh = d["resources"]["shadow_attack"]  # smoke: 4 of the 8 reference models feed the attack network
    assert sh["n_shadow_models"] == 4 and sh["attack_training_rows"] == 4 * 300
    assert d["resources"]["pdtp_models"]["n_models"] == 101 and d["resources"]["noise_floor_models"]["n_models"] == 4
    for m in d["membership"].values():
        assert m["auc_ci"][0] <= m["auc"] <= m["auc_ci"][1]
        assert set(m["tpr_at_fpr"]) == {"0.01", "0.001", "0.0001"}
    assert d["dtp"]["n_records"] == 100 and 0 <= d["dtp"]["max"] <= np.log(199) + 1e-9
    v = d["verdict"]
    assert isinstance(v["publish"], bool) and v["headline"]
    assert v["outcome"] in ("publish", "do not publish", "inconclusive") and v["publish"] == (v["outcome"] == "publish")
    ids = {c["id"] for c in v["checks"]}
    for a in ("loss", "lira", "informia", "shadow"):
        assert {f"membership.{a}.auc", f"membership.{a}.tpr_at_low_fpr"} <= ids
        e = d["membership"][a]["epsilon"]
        assert 0 <= e["epsilon_lb"] or not e["measurable"]
        # the joint-beta bound on the same test's counts, shown beside the Clopper-Pearson one in the report
        assert not e["measurable"] or e["epsilon_lb_joint_beta"] >= e["epsilon_lb"]
    html = (out / "report.html").read_text()
    assert "joint-beta" in html and "never deciding a check" in html
    assert {"dtp.dtp1", "attribute.sex.advantage"} <= ids
    assert all(c["status"] in ("exceeded", "shown below", "undecided", "not measurable") for c in v["checks"])
    assert sum(v["counts"].values()) == v["n_checks"] == len(v["checks"])
    # 5 attacks x 2 + 3 sensitive columns + DTP-1 = 14 checks, each at 1 - 0.05 / 14
    assert v["n_checks"] == 12 and v["check_confidence"] == pytest.approx(1 - 0.05 / 12)
    assert v["recipe"]["reproduces"] in (True, False) and 0 <= v["recipe"]["p_value"] <= 1
    for col in ("sex", "race", "marital_status"):  # attribute inference of the demo's sensitive columns
        a = d["attribute"][col]
        assert a["advantage_ci"][0] <= a["advantage"] <= a["advantage_ci"][1]
        assert a["advantage"] == pytest.approx(a["member_accuracy"] - a["nonmember_accuracy"])
    assert d["property"] and all(0 <= p["estimate"] <= 1 for p in d["property"].values())
    assert d["mip"]["eta"] == 0.05 and 0 <= d["mip"]["test_accuracy_with_noise"] <= 1
    assert d["skipped"] == []
    rec = pd.read_csv(out / "records.csv")
    assert len(rec) == 300 and rec["is_member"].sum() == 150
    assert {"score_loss", "score_lira", "score_informia", "score_shadow", "pdtp", "risk_rank"} <= set(rec.columns)
    assert rec["score_shadow"].between(0, 1).all()
    html = (out / "report.html").read_text()
    assert "Verdict:" in html and "<svg" in html and "<script" not in html and "http://" not in html.split("<svg")[0]


def test_same_seed_same_results(demo, tmp_path):
    out, _ = demo
    run_audit(make_config(**SMALL), tmp_path / "again", verbose=False)
    a = json.loads((out / "results.json").read_text())
    b = json.loads((tmp_path / "again" / "results.json").read_text())
    for d in (a, b):
        d.pop("created"), d.pop("timings"), d.pop("resources")
    assert a == b


def _small_tables(tmp_path):
    from leakaudit.data import load_adult

    ds = load_adult()
    df = ds.to_frame().sample(400, random_state=0).reset_index(drop=True)
    train, test = df.iloc[:200], df.iloc[200:]
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    return train, test


def test_predictions_only_skips_retraining_attacks_and_says_why(tmp_path):
    _small_tables(tmp_path)
    rng = np.random.default_rng(0)
    for name in ("ptrain", "ptest"):
        p = rng.dirichlet([1, 1], size=200)
        pd.DataFrame(p, columns=["p0", "p1"]).to_csv(tmp_path / f"{name}.csv", index=False)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      predictions_train=tmp_path / "ptrain.csv", predictions_test=tmp_path / "ptest.csv",
                      profile="smoke")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    # without a recipe: the loss threshold and quantile regression, which needs no retraining
    assert set(res.membership) == {"loss", "quantile"}
    lo, hi = res.membership["quantile"]["auc_ci"]
    assert lo < 0.5 < hi  # random predictions: nothing to find
    assert any("shadow" in s["name"] for s in res.skipped)
    reasons = " ".join(s["reason"] for s in res.skipped)
    assert "training algorithm" in reasons
    # DTP-1 cannot be checked without the training algorithm: never a silent pass
    dtp = next(c for c in res.verdict.checks if c.id == "dtp.dtp1")
    # the result names the setting as the library's argument (model); the command line and its report the flag
    assert dtp.status == "not measurable" and "(model)" in dtp.fix and dtp.fix_parts.settings[0].key == "model"
    assert "give the model itself (--model)" in (tmp_path / "out" / "report.html").read_text()
    assert res.verdict.outcome in ("inconclusive", "do not publish")
    # random predictions: no leakage to find
    assert res.membership["loss"]["auc_ci"][0] < 0.5 < res.membership["loss"]["auc_ci"][1] or \
        abs(res.membership["loss"]["auc"] - 0.5) < 0.1


def test_predictions_only_quantile_attack_finds_an_overfit_model(tmp_path):
    """A 1-nearest-neighbour model's predictions (members at 100%): quantile regression, with no recipe, finds it."""
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.audit.inputs.data import prepare_data

    _small_tables(tmp_path)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income", profile="smoke")
    data = prepare_data(cfg)
    knn = KNeighborsClassifier(n_neighbors=1).fit(data.X_mem, data.y_mem)
    for name, X in (("ptrain", data.X_mem), ("ptest", data.X_non)):
        p = 0.9 * knn.predict_proba(X) + 0.05
        pd.DataFrame(p, columns=["p0", "p1"]).to_csv(tmp_path / f"{name}.csv", index=False)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      predictions_train=tmp_path / "ptrain.csv", predictions_test=tmp_path / "ptest.csv",
                      profile="smoke")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    q = res.membership["quantile"]
    assert q["auc_ci"][0] > 0.5
    assert "membership.quantile.auc" in {c.id for c in res.verdict.checks}
    assert "quantile regression" in (tmp_path / "out" / "report.html").read_text()


def test_skops_pipeline_model(tmp_path):
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    train, _ = _small_tables(tmp_path)
    X = train.drop(columns=["income"])
    cats = list(X.select_dtypes(exclude="number").columns)
    nums = list(X.select_dtypes(include="number").columns)
    pipe = make_pipeline(
        ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), cats), ("n", StandardScaler(), nums)]),
        LogisticRegression(max_iter=500),
    )
    pipe.fit(X.fillna("?"), (train["income"] == ">50K").astype(int))
    sio.dump(pipe, tmp_path / "model.skops")
    untrusted = sio.get_untrusted_types(file=tmp_path / "model.skops")
    if untrusted:
        pytest.skip(f"this skops version does not trust {untrusted}")
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      model=tmp_path / "model.skops", profile="smoke")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    assert {"loss", "lira"} <= set(res.membership)
    assert res.target["kind"] == "sklearn"
    # no --population: InfoRMIA's reference points z are missing, and the report says so
    assert any(s["name"] == "InfoRMIA" and "population" in s["reason"] and s["fix"] == "give population"
               and s.said("fix", flags=True) == "give --population FILE" for s in res.skipped)
    # Izzo et al.'s noise covers one parameter vector: a Pipeline's fitted preprocessing is not in it
    assert res.mip is None
    assert any(s["name"] == "MIP noise (Izzo et al.)" and "Pipeline" in s["reason"] for s in res.skipped)


def test_skops_mlp_classifier_target_is_loaded_and_retrained_by_torch_mlp(tmp_path):
    """A fitted MLPClassifier carries scikit-learn's AdamOptimizer, which skops does not trust by default:
    leakaudit trusts that one internal class, and retrains the target's recipe with TorchMLP."""
    import warnings

    import skops.io as sio
    from sklearn.neural_network import MLPClassifier

    from leakaudit.audit.inputs.data import prepare_data

    _small_tables(tmp_path)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income", profile="smoke")
    data = prepare_data(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MLPClassifier(hidden_layer_sizes=(16,), max_iter=20, random_state=0).fit(data.X_mem, data.y_mem)
    sio.dump(est, tmp_path / "model.skops")
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      model=tmp_path / "model.skops", model_input="encoded", profile="smoke")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    assert res.target["kind"] == "sklearn" and "TorchMLP" in res.target["description"]
    assert {"loss", "lira"} <= set(res.membership)
    # its retrained nets are TorchMLP's: the MIP noise and its cost are measured
    assert res.mip is not None and res.mip["parameters"] == 16 * (data.X_mem.shape[1] + 1) + 2 * 17
    assert -1 <= res.mip["accuracy_cost"] <= 1


@pytest.mark.parametrize("kind", ["logistic", "forest"])
def test_mip_cost_of_a_bare_linear_model_and_why_not_for_a_forest(tmp_path, kind):
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    from leakaudit.audit.inputs.data import prepare_data

    _small_tables(tmp_path)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income", profile="smoke")
    data = prepare_data(cfg)
    est = (LogisticRegression(max_iter=500) if kind == "logistic"
           else RandomForestClassifier(n_estimators=10, random_state=0)).fit(data.X_mem, data.y_mem)
    sio.dump(est, tmp_path / "model.skops")
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      model=tmp_path / "model.skops", model_input="encoded", profile="smoke")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    if kind == "logistic":  # coef_ and intercept_: one vector of d + 1 parameters
        assert res.mip is not None and res.mip["parameters"] == data.X_mem.shape[1] + 1
        lo, hi = res.mip["accuracy_cost_interval"]
        assert lo <= res.mip["accuracy_cost"] <= hi
        assert "MIP noise (Izzo et al.)" not in {s["name"] for s in res.skipped}
    else:
        assert res.mip is None
        assert any(s["name"] == "MIP noise (Izzo et al.)" and "forest" in s["reason"] for s in res.skipped)


class _Boom:
    def __reduce__(self):
        return (open, ("/tmp/leakaudit-pwned-by-pickle", "w"))


def test_pickle_model_is_refused_and_runs_no_code(tmp_path):
    import os

    marker = "/tmp/leakaudit-pwned-by-pickle"
    if os.path.exists(marker):
        os.unlink(marker)
    _small_tables(tmp_path)
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(_Boom()))
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      model=tmp_path / "model.pkl", profile="smoke")
    with pytest.raises(UnsafeFileError, match="pickle and joblib files are refused"):
        run_audit(cfg, tmp_path / "out", verbose=False)
    assert not os.path.exists(marker)


def test_torch_checkpoint_with_code_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    import os

    marker = "/tmp/leakaudit-pwned-by-pickle"
    if os.path.exists(marker):
        os.unlink(marker)
    torch.save({"w": _Boom()}, tmp_path / "m.pt")
    from leakaudit.audit.inputs.target import load_torch_model

    with pytest.raises(UnsafeFileError, match="weights_only=True"):
        load_torch_model("torch.nn:Identity", tmp_path / "m.pt")
    assert not os.path.exists(marker)


def test_bad_config_is_one_line_exit_2_and_leaves_out_untouched(tmp_path, capsys):
    _small_tables(tmp_path)
    out = tmp_path / "existing"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
               "--label", "no_such_column", "--out", str(out), "--profile", "smoke"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "no_such_column" in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_config_validation_messages(tmp_path):
    with pytest.raises(InvalidParameterError, match="give both train"):
        make_config(train=tmp_path / "a.csv")
    with pytest.raises(InvalidParameterError, match="profile"):
        make_config(profile="huge")
    bad = tmp_path / "c.toml"
    bad.write_text("profile = [unclosed")
    from leakaudit.audit import load_config

    with pytest.raises(InvalidParameterError, match="not valid TOML"):
        load_config(bad)
    good = tmp_path / "g.toml"
    good.write_text('profile = "smoke"\nseed = 5\n[thresholds]\nmax_dtp = 2.0\n')
    cfg = load_config(good)
    assert cfg.seed == 5 and cfg.thresholds.max_dtp == 2.0


def test_shadow_plan_profiles_and_fallback(monkeypatch):
    """Standard and thorough feed every reference model to the attack network at per-example SGD; without the
    compiled trainer (no compiled MLP kernel) the audit falls back to 8 shadow models in batches of 32."""
    import leakaudit.membership.shadow as shadow_mod
    from leakaudit.audit.steps.membership import shadow_plan as _shadow_plan

    assert _shadow_plan(make_config(profile="standard")) == (None, 1, None)
    assert _shadow_plan(make_config(profile="smoke")) == (4, 1, None)

    monkeypatch.setattr(shadow_mod, "_compiled_ready", lambda hidden=32: False)
    k, batch, note = _shadow_plan(make_config(profile="standard"))
    assert (k, batch) == (8, 32) and "not available" in note
    assert _shadow_plan(make_config(profile="smoke"))[:2] == (4, 32)


def test_shadow_attack_rows_are_capped(monkeypatch, tmp_path):
    """With more audited records than the row cap allows, fewer shadow models (whole pairs, at least one) feed
    the attack network, and results.json says so."""
    import leakaudit.audit.config as config_mod

    capped = config_mod.PROFILES["smoke"].model_copy(update={"shadow_attack_max_rows": 700})
    monkeypatch.setitem(config_mod.PROFILES, "smoke", capped)
    res = run_audit(make_config(**SMALL), tmp_path / "out", verbose=False)
    sa = res.resources["shadow_attack"]
    n = SMALL["n_members"] + SMALL["n_nonmembers"]
    assert sa["n_shadow_models"] == 2 == 2 * (700 // n // 2) and sa["attack_training_rows"] == 2 * n
    assert "shadow_attack_max_rows" in sa["note"]
    assert "shadow" in res.membership


def test_mlp_targets_are_retrained_by_torch_mlp_with_their_recipe():
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    from leakaudit.audit.inputs.target import _sklearn_learner
    from leakaudit.data import load_adult
    from leakaudit.learners import SklearnLearner, TorchMLP

    d = load_adult()
    X, _ = d.encode()
    X, y = np.asarray(X, float)[:3000], np.asarray(d.y)[:3000]
    tr, te = np.arange(1000), np.arange(1000, 3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", max_iter=40, random_state=0).fit(X[tr], y[tr])
    learner, desc = _sklearn_learner(est)
    assert isinstance(learner, TorchMLP) and "TorchMLP" in desc and "40 epochs" in desc
    assert (learner.hidden, learner.activation, learner.mode, learner.epochs, learner.batch_size) == ((32,), "relu",
                                                                                                       "fast", 40, 200)
    assert (learner.init, learner.output, learner.lr, learner.weight_decay) == ("sklearn", "logistic", 1e-3, 1e-4 / 200)
    # the recipe learns what scikit-learn's training learns: accuracies within 0.02 (measured: 0.001-0.004)
    p = learner.fit(X[tr], y[tr], random_state=0).predict_proba(X)
    for rows in (tr, te):
        assert abs((p[rows].argmax(1) == y[rows]).mean() - est.score(X[rows], y[rows])) < 0.02
    for odd, word in ((dict(solver="sgd"), "solver"), (dict(activation="logistic"), "activation"),
                      (dict(early_stopping=True), "early_stopping"), (dict(beta_1=0.8), "beta_1")):
        learner, desc = _sklearn_learner(MLPClassifier(**odd))
        assert isinstance(learner, SklearnLearner) and word in desc


def test_random_forest_targets_are_retrained_by_our_forest():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    from leakaudit.audit.inputs.target import _sklearn_learner
    from leakaudit.learners import RandomForest, SklearnLearner

    rf = RandomForestClassifier(n_estimators=7, min_samples_leaf=2, max_features=0.5)
    learner, desc = _sklearn_learner(rf)
    assert isinstance(learner, RandomForest) and "RandomForest" in desc
    assert (learner.n_estimators, learner.min_samples_leaf, learner.max_features) == (7, 2, 0.5)
    # the same trees as the estimator it stands for, for the same seed
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(80, 4)), rng.integers(0, 2, 80)
    ours = learner.fit(X, y, random_state=5, n_classes=2).predict_proba(X)
    np.testing.assert_allclose(ours, rf.set_params(random_state=5).fit(X, y).predict_proba(X), atol=1e-12)
    weighted, desc = _sklearn_learner(RandomForestClassifier(class_weight="balanced"))
    assert isinstance(weighted, SklearnLearner) and "class_weight" in desc
    # a logistic regression is retrained by ours when it solves the same objective, else by scikit-learn, saying why
    from leakaudit.learners import LogisticRegression as OurLogisticRegression

    assert isinstance(_sklearn_learner(LogisticRegression().fit(X, y))[0], OurLogisticRegression)
    for est, why in [(LogisticRegression(), "an unfitted estimator"),
                     (LogisticRegression(solver="liblinear").fit(X, y), "solver='liblinear'")]:
        learner, desc = _sklearn_learner(est)
        assert isinstance(learner, SklearnLearner) and why in desc


def test_forest_targets_get_lira_on_the_votes():
    """A learner declares that its outputs are votes (capabilities.votes); the audit's LiRA parameters come from it."""
    from types import SimpleNamespace

    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    from leakaudit.learners import RandomForest, SklearnLearner
    from leakaudit.membership._registry import ATTACKS

    assert RandomForest(n_estimators=37).capabilities.votes == 37
    assert SklearnLearner(RandomForestClassifier(n_estimators=12, class_weight="balanced")).capabilities.votes == 12
    assert SklearnLearner(ExtraTreesClassifier(n_estimators=5)).capabilities.votes == 5
    assert SklearnLearner(LogisticRegression()).capabilities.votes is None
    params = ATTACKS.get("lira").audit_params
    assert params(SimpleNamespace(target=SimpleNamespace(learner=RandomForest(n_estimators=9)))) == {"votes": 9}
    assert params(SimpleNamespace(target=SimpleNamespace(learner=None))) == {"votes": None}


def test_skops_random_forest_target_is_audited_with_lira_on_its_votes(tmp_path, monkeypatch):
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier

    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.membership.lira import LiRA

    _small_tables(tmp_path)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income", profile="smoke")
    data = prepare_data(cfg)
    est = RandomForestClassifier(n_estimators=9, random_state=0).fit(data.X_mem, data.y_mem)
    sio.dump(est, tmp_path / "model.skops")
    used = []
    score = LiRA.score
    monkeypatch.setattr(LiRA, "score", lambda self, *a: used.append(self.votes) or score(self, *a))
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="income",
                      model=tmp_path / "model.skops", model_input="encoded", profile="smoke")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    assert "RandomForest" in res.target["description"] and "lira" in res.membership
    assert used == [9]


def test_skops_tree_models_are_loaded_and_their_trees_checked(tmp_path):
    """skops leaves scikit-learn's Tree untrusted (its node indices are used without bounds checks); leakaudit
    loads it and checks every tree's children and features, refusing a crafted file before any inference."""
    import skops.io as sio
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    from leakaudit.audit.inputs.model_safety import checked_trees
    from leakaudit.audit.inputs.target import load_skops_model

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 2, 60)
    models = {"rf": (RandomForestClassifier(n_estimators=3, random_state=0), 3),
              "gb": (GradientBoostingClassifier(n_estimators=2, random_state=0), 2),
              "pipe": (make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)), 1)}
    for name, (est, n_trees) in models.items():
        est.fit(X, y)
        sio.dump(est, tmp_path / f"{name}.skops")
        loaded = load_skops_model(tmp_path / f"{name}.skops")
        np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
        assert len(checked_trees(loaded)) == n_trees
    for field, value, what in (("children_left", 10**6, "out of range"), ("children_left", 0, "out of range"),
                               ("feature", 7, "out of range")):
        est = DecisionTreeClassifier(random_state=0).fit(X, y)
        getattr(est.tree_, field)[0] = value  # node 0 is internal: a child past the end, a cycle, a feature
        sio.dump(est, tmp_path / "bad.skops")
        with pytest.raises(UnsafeFileError, match=f"malformed tree.*{what}"):
            load_skops_model(tmp_path / "bad.skops")


def test_exit_code_carries_the_verdict_and_bad_thresholds_exit_2(tmp_path, capsys):
    """--exit-code: 4 for an inconclusive verdict (predictions only: DTP-1 cannot be checked); without the flag 0;
    an epsilon budget below 0 or an FPR of 1 is one line and status 2."""
    _small_tables(tmp_path)
    rng = np.random.default_rng(1)
    for name in ("ptrain", "ptest"):
        pd.DataFrame(rng.dirichlet([1, 1], size=200), columns=["p0", "p1"]).to_csv(tmp_path / f"{name}.csv",
                                                                                  index=False)
    args = ["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
            "income", "--predictions-train", str(tmp_path / "ptrain.csv"), "--predictions-test",
            str(tmp_path / "ptest.csv"), "--profile", "smoke"]
    assert main(args + ["--out", str(tmp_path / "a"), "--exit-code"]) == 4
    out = capsys.readouterr().out
    assert "verdict: INCONCLUSIVE." in out and "not measurable: DTP-1" in out
    assert json.loads((tmp_path / "a" / "results.json").read_text())["verdict"]["exit_code"] == 4
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    for bad in (["--epsilon-budget", "-1"], ["--dtp-rule", "never"]):
        assert main(args + ["--out", str(tmp_path / "c")] + bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err
    assert not (tmp_path / "c").exists()


def test_long_rule_and_epsilon_budget_add_their_checks(tmp_path):
    """--dtp-rule long judges Long et al.'s raw count; --epsilon-budget adds one epsilon check per attack, judged
    against each attack's empirical lower bound (always reported)."""
    res = run_audit(make_config(**SMALL, dtp_rule="long", epsilon_budget=0.0), tmp_path / "out", verbose=False)
    v = res.verdict
    dtp = next(c for c in v.checks if c.id == "dtp.dtp1")
    assert dtp.name.startswith("DTP-1 rule (Long et al., raw)")
    assert (dtp.status == "exceeded") == (res.dtp["n_above"] > 0) and "test" not in res.dtp
    eps = {c.id.split(".")[1]: c for c in v.checks if c.id.endswith(".epsilon")}
    assert set(eps) == {"loss", "lira", "informia", "shadow"}
    for name, c in eps.items():
        e = res.membership[name]["epsilon"]
        assert c.threshold == 0.0 and c.status == ("exceeded" if e["epsilon_lb"] > 0 else "undecided")
    # 4 attacks x 3 checks + 3 sensitive columns + DTP-1
    assert v.n_checks == 16 and v.check_confidence == pytest.approx(1 - 0.05 / 16)


def test_out_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    for bad in (tmp_path / "afile" / "sub", "/proc/leakaudit/out"):
        assert main(["audit", "--profile", "smoke", "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--out" in err and "Traceback" not in err


def test_ctrl_c_stops_cleanly_says_what_finished_and_exits_130(tmp_path):
    """SIGINT during the demo audit: exit 130, one message naming the finished stages and the cache, no output
    (--quiet: no progress lines before it)."""
    import os
    import signal
    import time

    cache, out = tmp_path / "cache", tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", "import sys; from leakaudit.cli import main; sys.exit(main())",
                          "audit", "--quiet", "--out", str(out), "--cache-dir", str(cache)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # a crash (CI once saw SIGSEGV after the line) prints its threads' stacks into the message
                         env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONFAULTHANDLER": "1"},
                         # as under a terminal: a suite started as a background job ignores SIGINT, and the child
                         # would inherit that (the CLI leaves an ignored Ctrl-C ignored)
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.time()
    # wait until the first trained models' outputs are written (the cache's folders appear earlier, before the
    # membership stage has started, and an interrupt there lands between stages)
    while time.time() - t0 < 120 and p.poll() is None and not any(cache.rglob("*.npz")):
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, err[-2000:])
    assert err.startswith("leakaudit: interrupted during the ") and "stages finished:" in err
    assert str(cache) in err and "Traceback" not in err and err.count("\n") == 1
    assert not out.exists()
