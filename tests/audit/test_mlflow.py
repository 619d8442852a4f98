"""MLflow (issue 67): an audit logged as a run, read back through MLflow's own client from a real local tracking store
(a SQLite file), and models registered in MLflow audited by their URI: safe flavours read from their own files,
pickled ones refused in one line saying why, from the MLmodel file alone."""

import json

import numpy as np
import pandas as pd
import pytest

from leakaudit.exceptions import UnsafeFileError, UnsupportedError


# --- the flavour decision: the MLmodel file alone (no MLflow needed) ---------------------------------------------

SAFE = {
    "xgboost": ({"xgboost": {"data": "model.ubj", "model_class": "xgboost.sklearn.XGBClassifier"},
                 "python_function": {"loader_module": "mlflow.xgboost"}}, ("xgboost", "model.ubj")),
    "catboost": ({"catboost": {"data": "model.cb", "model_type": "CatBoostClassifier"}}, ("catboost", "model.cb")),
    "lightgbm booster": ({"lightgbm": {"data": "model.lgb", "model_class": "lightgbm.basic.Booster"}},
                         ("lightgbm", "model.lgb")),
    "lightgbm skops": ({"lightgbm": {"data": "model.skops", "model_class": "lightgbm.sklearn.LGBMClassifier",
                                     "serialization_format": "skops"}}, ("skops", "model.skops")),
    "sklearn skops": ({"sklearn": {"pickled_model": "model.skops", "serialization_format": "skops"}},
                      ("skops", "model.skops")),
}
REFUSED = {
    "sklearn pickle": ({"sklearn": {"pickled_model": "model.pkl", "serialization_format": "pickle"}}, "pickle"),
    "sklearn cloudpickle": ({"sklearn": {"pickled_model": "model.pkl", "serialization_format": "cloudpickle"}},
                            "cloudpickle"),
    "sklearn of old MLflow (no format: cloudpickle)": ({"sklearn": {"pickled_model": "model.pkl"}}, "cloudpickle"),
    "lightgbm wrapper pickled": ({"lightgbm": {"data": "model.pkl", "model_class": "lightgbm.sklearn.LGBMClassifier",
                                               "serialization_format": "cloudpickle"}}, "never unpickles"),
    "pytorch": ({"pytorch": {"model_data": "data"}, "python_function": {}}, "pytorch"),
    "pyfunc only": ({"python_function": {"loader_module": "x"}}, "python_function only"),
}


@pytest.mark.parametrize("case", sorted(SAFE))
def test_safe_flavours_are_read_from_their_own_files(case):
    from leakaudit.audit.mlflow_log import choose_flavour

    flavors, expected = SAFE[case]
    assert choose_flavour({"flavors": flavors}, "m") == expected


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_pickled_and_unknown_flavours_are_refused_in_one_line(case):
    from leakaudit.audit.mlflow_log import choose_flavour

    flavors, words = REFUSED[case]
    with pytest.raises(UnsupportedError) as err:
        choose_flavour({"flavors": flavors}, "the MLflow model models:/m/1")
    msg = str(err.value)
    assert words in msg and "models:/m/1" in msg and "\n" not in msg


@pytest.mark.parametrize("data", ["../../etc/passwd", "/etc/passwd", "", 7])
def test_a_model_file_outside_the_models_folder_is_refused(data):
    from leakaudit.audit.mlflow_log import choose_flavour, is_model_uri

    with pytest.raises(UnsafeFileError, match="model file|names no model file"):
        choose_flavour({"flavors": {"xgboost": {"data": data}}}, "m")
    assert is_model_uri("models:/m/1") and is_model_uri("runs:/abc/model") and not is_model_uri("model.json")


# --- a real tracking store ----------------------------------------------------------------------------------------

def _tables(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=2 * n) > 0).astype(int)
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    return df.iloc[:n], df.iloc[n:]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A SQLite tracking store whose artifacts live beside it, and MLflow's client on it."""
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    d = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{d / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    client.create_experiment("leakaudit", artifact_location=(d / "artifacts").as_uri())
    return uri, client, d


@pytest.mark.slow
def test_log_to_mlflow_read_back_through_mlflows_client(store, tmp_path, monkeypatch):
    """The verdict as a tag, each check's value and interval as metrics, the three files as artifacts: read back
    from the SQLite store, equal to the result's own."""
    import leakaudit
    from sklearn.linear_model import LogisticRegression

    uri, client, _ = store
    monkeypatch.chdir(tmp_path)  # MLflow writes nothing of its own defaults into the checkout
    mem, non = _tables()
    model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", random_state=0, removal=False)
    run_id = res.log_to_mlflow(uri, run_name="unit")
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "unit"
    assert run.data.tags["leakaudit.verdict"] == res.outcome
    measured = [c for c in res.checks if c.value is not None and np.isfinite(c.value)]
    assert measured
    for c in measured:
        assert run.data.metrics[c.id] == pytest.approx(c.value)
        assert run.data.tags[f"leakaudit.check.{c.id}"] == c.status
        if c.interval is not None and all(np.isfinite(c.interval)):
            assert (run.data.metrics[f"{c.id}.low"], run.data.metrics[f"{c.id}.high"]) == pytest.approx(c.interval)
    assert run.data.params["profile"] == "smoke"
    names = sorted(a.path for a in client.list_artifacts(run_id, "leakaudit"))
    assert names == ["leakaudit/evidence.json", "leakaudit/report.html", "leakaudit/results.json"]
    res.save(tmp_path / "saved")
    for name in ("results.json", "evidence.json"):  # the files `save` writes, byte for byte
        got = client.download_artifacts(run_id, f"leakaudit/{name}", str(tmp_path))
        assert open(got, "rb").read() == (tmp_path / "saved" / name).read_bytes()


@pytest.mark.slow
def test_cli_audits_registered_models_by_uri_and_logs_the_run(store, tmp_path, capsys, monkeypatch):
    """`--model models:/NAME/VERSION` (an XGBoost model registered in its own flavour) and `runs:/...` (a
    scikit-learn model logged with skops) are audited; a pickled scikit-learn model is refused in one line, exit
    status 2, before anything is fetched but its MLmodel file; `--mlflow URI` logs the run there."""
    import mlflow
    import xgboost
    from sklearn.linear_model import LogisticRegression

    from leakaudit.cli import main

    uri, client, d = store
    monkeypatch.chdir(tmp_path)
    mem, non = _tables()
    mem.to_csv(tmp_path / "train.csv", index=False)
    non.to_csv(tmp_path / "test.csv", index=False)
    X = mem[["a", "b", "c"]]
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("leakaudit")
    try:
        with mlflow.start_run() as run:
            mlflow.xgboost.log_model(xgboost.XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1).fit(X, mem["label"]),
                                     name="xgb", registered_model_name="xgb-model", pip_requirements=[])
            lr = LogisticRegression().fit(X, mem["label"])
            mlflow.sklearn.log_model(lr, name="lr-skops", serialization_format="skops", pip_requirements=[])
            mlflow.sklearn.log_model(lr, name="lr-pickle", serialization_format="pickle", pip_requirements=[])
    finally:
        mlflow.set_tracking_uri(None)
    common = ["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
              "label", "--profile", "smoke", "--no-removal", "--seed", "0"]
    rc = main(common + ["--model", "models:/xgb-model/1", "--out", str(tmp_path / "x"), "--mlflow", uri])
    out = capsys.readouterr()
    assert rc == 0, out.err[-2000:]
    res = json.loads((tmp_path / "x" / "results.json").read_text())
    assert res["target"]["kind"] == "xgboost"
    logged = [r for r in client.search_runs([client.get_experiment_by_name("leakaudit").experiment_id])
              if r.data.tags.get("leakaudit.target") == "xgboost"]
    assert len(logged) == 1 and logged[0].data.tags["leakaudit.verdict"] == res["verdict"]["outcome"]
    assert logged[0].info.run_id in out.out
    # --mlflow alone (before another option): MLflow's default store, MLFLOW_TRACKING_URI
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    rc = main(common + ["--mlflow", "--model", f"runs:/{run.info.run_id}/lr-skops", "--out", str(tmp_path / "s")])
    out = capsys.readouterr()
    assert rc == 0, out.err[-2000:]
    assert json.loads((tmp_path / "s" / "results.json").read_text())["target"]["kind"] == "sklearn"
    assert any(r.data.tags.get("leakaudit.target") == "sklearn" and r.info.run_id in out.out
               for r in client.search_runs([client.get_experiment_by_name("leakaudit").experiment_id]))
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    rc = main(common + ["--model", f"runs:/{run.info.run_id}/lr-pickle", "--out", str(tmp_path / "p"),
                        "--mlflow", uri])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "never unpickles" in err and "pickle" in err, err
    assert not (tmp_path / "p").exists()
    assert not list(tmp_path.glob("mlflow.db")) and not (tmp_path / "mlruns").exists()  # only the store named
