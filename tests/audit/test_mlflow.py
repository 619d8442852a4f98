"""MLflow (issue 67): an audit logged as a run, read back through MLflow's own client from a real local tracking store
(a SQLite file), and models registered in MLflow audited by their URI: safe flavours read from their own files,
pickled ones refused in one line saying why, from the MLmodel file alone. Issue 83: the store checked before the
audit starts (one line, exit status 2, the backend's whole message), nothing written outside --out, the settings as
parameters, logging into or under an existing run, a logging failure after the audit (exit status 5, the verdict
still said), and -q silencing MLflow's own lines."""

import json
import socket
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from leakaudit.exceptions import InvalidParameterError, UnsafeFileError, UnsupportedError


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
    from leakaudit.audit.result.mlflow_log import choose_flavour

    flavors, expected = SAFE[case]
    assert choose_flavour({"flavors": flavors}, "m") == expected


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_pickled_and_unknown_flavours_are_refused_in_one_line(case):
    from leakaudit.audit.result.mlflow_log import choose_flavour

    flavors, words = REFUSED[case]
    with pytest.raises(UnsupportedError) as err:
        choose_flavour({"flavors": flavors}, "the MLflow model models:/m/1")
    msg = str(err.value)
    assert words in msg and "models:/m/1" in msg and "\n" not in msg


@pytest.mark.parametrize("data", ["../../etc/passwd", "/etc/passwd", "", 7])
def test_a_model_file_outside_the_models_folder_is_refused(data):
    from leakaudit.audit.result.mlflow_log import choose_flavour, is_model_uri

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
    assert run.data.params["leakaudit.profile"] == "smoke"
    names = sorted(a.path for a in client.list_artifacts(run_id, "leakaudit"))
    assert names == ["leakaudit/evidence.json", "leakaudit/report.html", "leakaudit/results.json"]
    res.save(tmp_path / "saved")
    for name in ("results.json", "evidence.json"):  # the files `save` writes, byte for byte
        got = client.download_artifacts(run_id, f"leakaudit/{name}", str(tmp_path))
        assert open(got, "rb").read() == (tmp_path / "saved" / name).read_bytes()
    training = client.create_run(client.get_experiment_by_name("leakaudit").experiment_id)
    assert res.log_to_mlflow(uri, run_id=training.info.run_id) == training.info.run_id  # the method's run_id too
    assert client.get_run(training.info.run_id).data.tags["leakaudit.verdict"] == res.outcome


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
    # --mlflow alone (before another option): MLFLOW_TRACKING_URI's store; logged into the run that logged the model
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    rc = main(common + ["--mlflow", "--mlflow-run", run.info.run_id, "--model", f"runs:/{run.info.run_id}/lr-skops",
                        "--out", str(tmp_path / "s")])
    out = capsys.readouterr()
    assert rc == 0, out.err[-2000:]
    assert json.loads((tmp_path / "s" / "results.json").read_text())["target"]["kind"] == "sklearn"
    assert client.get_run(run.info.run_id).data.tags["leakaudit.target"] == "sklearn"
    assert f"logged MLflow run {run.info.run_id} at {uri}" in out.out
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    rc = main(common + ["--model", f"runs:/{run.info.run_id}/lr-pickle", "--out", str(tmp_path / "p"),
                        "--mlflow", uri])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "never unpickles" in err and "pickle" in err, err
    assert not (tmp_path / "p").exists()
    assert not list(tmp_path.glob("mlflow.db")) and not (tmp_path / "mlruns").exists()  # only the store named


# --- the store, checked before the audit (issue 83) ---------------------------------------------------------------

def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unusable_stores(tmp_path):
    """(URI, words of the one line) of stores MLflow cannot use, and what each must not create."""
    (tmp_path / "junk.db").write_bytes(b"not a database " * 100)
    return {
        "unknown scheme": ("bogus://x", "unsupported URI 'bogus://x'"),
        # MLflow 3 refuses a file store: its whole message, the fix it names at the end included
        "file store": ((tmp_path / "store").as_uri(), "set `MLFLOW_ALLOW_FILE_STORE=true` to opt out"),
        "sqlite, no folder": (f"sqlite:///{tmp_path / 'missing' / 'dir' / 'm.db'}", "the folder"),
        "sqlite, not a database": (f"sqlite:///{tmp_path / 'junk.db'}", "file is not a database"),
        "server not listening": (f"http://127.0.0.1:{_closed_port()}", "Connection refused"),
        "sqlite in memory": ("sqlite:///:memory:", "in memory is lost"),
        "sqlite, no file": ("sqlite://", "in memory is lost"),
        "empty": ("", "--mlflow is empty"),  # MLflow would take it for its default store, in the working folder
    }


@pytest.mark.parametrize("case, model", [("unknown scheme", []), ("file store", []), ("sqlite, no folder", []),
                                         ("sqlite, not a database", []), ("server not listening", []),
                                         ("sqlite in memory", []), ("sqlite, no file", []), ("empty", []),
                                         ("unknown scheme", ["--model", "models:/m/1"]),
                                         ("file store", ["--model", "models:/m/1"])])
def test_an_unusable_store_is_refused_before_the_audit(case, model, tmp_path, capsys, monkeypatch):
    """One line naming --mlflow and its URI with the backend's whole message, exit status 2, within seconds (a
    server is not retried for minutes), before any record is read or a model URI resolved: no --out folder,
    nothing in the working folder, no folder of a mistyped SQLite path created."""
    pytest.importorskip("mlflow")
    from leakaudit.cli import main

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    uri, words = _unusable_stores(tmp_path)[case]
    start = time.monotonic()
    rc = main(["audit", "--profile", "smoke", "--out", str(tmp_path / "out"), "-q", "--mlflow", uri] + model)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and f"--mlflow {uri}".strip() in err and words in err, err
    assert time.monotonic() - start < 60
    assert not (tmp_path / "out").exists() and not (tmp_path / "missing").exists() and not list(work.iterdir())


def test_a_model_uri_without_a_store_is_refused_not_created(tmp_path, capsys, monkeypatch):
    """MLflow 3's default store would be a new mlflow.db in the working folder: refused, saying to pass --mlflow."""
    pytest.importorskip("mlflow")
    from leakaudit.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    for args in (["--model", "models:/m/1"], ["--mlflow"]):
        rc = main(["audit", "--profile", "smoke", "--out", str(tmp_path / "out"), "-q"] + args)
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and "give one with --mlflow" in err, err
    assert not list(tmp_path.iterdir())


def test_run_options_name_a_run_only_with_a_store():
    """--mlflow-run and --mlflow-nested say where in a store the audit goes: without --mlflow (or nested without
    a run) they are refused, as the TOML keys are."""
    from leakaudit.audit.config import make_run_options

    for kwargs, words in (({"mlflow_run": "abc"}, "give `mlflow`"), ({"mlflow_run": ""}, "give `mlflow`"),
                          ({"mlflow_nested": True}, "give `mlflow`"),
                          ({"mlflow": "sqlite:///m.db", "mlflow_nested": True}, "give `mlflow_run`")):
        with pytest.raises(InvalidParameterError, match=words):
            make_run_options(**kwargs)
    assert make_run_options(mlflow="sqlite:///m.db", mlflow_run="abc", mlflow_nested=True).mlflow_nested


def _cli(tmp_path, *args):
    """``leakaudit audit`` in a fresh process (MLflow sets up its loggers when first imported): (status, stderr)."""
    code = "import sys; from leakaudit.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "audit", "--profile", "smoke", "--out", str(tmp_path / "out"),
                           *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr


def test_quiet_silences_mlflows_own_lines_and_an_unknown_run_is_refused(tmp_path):
    """A new SQLite store makes MLflow log INFO lines while it creates its tables (test_without_quiet_mlflow_speaks):
    not under -q. A --mlflow-run that the store does not hold is one line, exit status 2, before the audit."""
    pytest.importorskip("mlflow")
    rc, err = _cli(tmp_path, "-q", "--mlflow", f"sqlite:///{tmp_path / 'm.db'}", "--mlflow-run", "nope")
    assert rc == 2 and err.count("\n") == 1 and "no run 'nope' to log into" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_without_quiet_mlflow_speaks(tmp_path):
    """What -q silences (test_quiet_silences_mlflows_own_lines_and_an_unknown_run_is_refused) is there without it."""
    pytest.importorskip("mlflow")
    rc, err = _cli(tmp_path, "--mlflow", f"sqlite:///{tmp_path / 'm.db'}", "--mlflow-run", "nope")
    assert rc == 2 and "INFO mlflow" in err, err


# --- what a run holds, and where it goes (issue 83) ---------------------------------------------------------------

@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """An audit of a logistic regression on 150 members and 150 non-members, saved: (result, folder, model)."""
    import leakaudit
    from sklearn.linear_model import LogisticRegression

    mem, non = _tables()
    model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", random_state=0, removal=False)
    return res, res.save(tmp_path_factory.mktemp("audit") / "saved"), model


@pytest.mark.slow
def test_the_settings_sizes_and_models_digest_are_parameters(store, audited):
    from leakaudit.audit.inputs.digests import model_digest
    from leakaudit.audit.result.mlflow_log import log_audit_folder

    uri, client, _ = store
    res, folder, model = audited
    params = client.get_run(log_audit_folder(res, folder, tracking_uri=uri)).data.params
    assert {k: params[f"leakaudit.{k}"] for k in ("policy", "profile", "seed", "n_members", "n_nonmembers")} == {
        "policy": res.verdict.policy, "profile": "smoke", "seed": "0", "n_members": "150", "n_nonmembers": "150"}
    thresholds = {k: v for k, v in res.verdict.thresholds.items() if v is not None}
    assert thresholds and {k: float(params[f"leakaudit.threshold.{k}"]) for k in thresholds} == thresholds
    assert params["leakaudit.model_sha256"] == model_digest(model)


@pytest.mark.slow
def test_an_audit_is_logged_into_the_training_run_or_under_it(store, audited):
    """--mlflow-run: into the run itself, which keeps its own parameters (a "seed" of its own too) and status;
    nested: a new child run in its experiment. A deleted run is refused before anything is logged."""
    from leakaudit.audit.result.mlflow_log import check_store, log_audit_folder

    uri, client, _ = store
    res, folder, _ = audited
    exp = client.get_experiment_by_name("leakaudit").experiment_id
    train = client.create_run(exp, run_name="training").info.run_id
    client.log_param(train, "seed", "42")
    assert log_audit_folder(res, folder, tracking_uri=uri, run_id=train) == train
    run = client.get_run(train)
    assert run.info.status == "RUNNING" and run.data.params["seed"] == "42"
    assert run.data.params["leakaudit.seed"] == "0" and run.data.tags["leakaudit.verdict"] == res.outcome
    assert [a.path for a in client.list_artifacts(train, "leakaudit")] == [
        "leakaudit/evidence.json", "leakaudit/report.html", "leakaudit/results.json"]
    child = client.get_run(log_audit_folder(res, folder, tracking_uri=uri, run_id=train, nested=True))
    assert child.info.run_id != train and child.data.tags["mlflow.parentRunId"] == train
    assert child.info.experiment_id == exp and child.info.status == "FINISHED"
    with pytest.raises(InvalidParameterError, match="nested=True"):
        log_audit_folder(res, folder, tracking_uri=uri, nested=True)
    client.delete_run(train)
    with pytest.raises(InvalidParameterError, match=f"the run {train} is deleted"):
        check_store(uri, run_id=train)


@pytest.mark.slow
def test_a_new_sqlite_store_keeps_artifacts_beside_it(audited, tmp_path, monkeypatch):
    """A store leakaudit's logging creates the experiment in keeps its artifacts beside the database, not in the
    working folder (MLflow's ./mlruns)."""
    from leakaudit.audit.result.mlflow_log import log_audit_folder

    res, folder, _ = audited
    (tmp_path / "store").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    log_audit_folder(res, folder, tracking_uri=f"sqlite:///{tmp_path / 'store' / 'm.db'}")
    assert not list((tmp_path / "work").iterdir())
    assert len(list((tmp_path / "store" / "mlartifacts").rglob("results.json"))) == 1


@pytest.mark.slow
def test_a_logging_failure_after_the_audit_still_says_the_verdict(tmp_path, capsys, monkeypatch):
    """The store breaks while the audit runs (its file overwritten): the folder is written, the verdict said on
    stdout, the failure in one line on stderr, exit status 5 (not 2: the audit itself stands)."""
    pytest.importorskip("mlflow")
    import leakaudit.audit.pipeline as pipeline
    from leakaudit.cli import main

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "m.db"
    real = pipeline.run_audit

    def breaks_the_store(*args, **kwargs):
        res = real(*args, **kwargs)
        db.write_bytes(b"not a database " * 100)
        return res

    monkeypatch.setattr(pipeline, "run_audit", breaks_the_store)
    rc = main(["audit", "--profile", "smoke", "--no-removal", "--n-members", "150", "--n-nonmembers", "150", "--out",
               str(tmp_path / "out"), "-q", "--mlflow", f"sqlite:///{db}"])
    out = capsys.readouterr()
    assert rc == 5, out.err
    assert "verdict: " in out.out and (tmp_path / "out" / "results.json").is_file()
    lines = out.err.splitlines()
    assert len(lines) == 1 and "logging it to MLflow failed" in lines[0] and "file is not a database" in lines[0]


@pytest.mark.slow
def test_a_server_that_does_not_answer_is_asked_once(tmp_path):
    """A server that takes the connection but never replies: one try, a 10-second timeout (MLflow's own default is
    7 retries of 120 s each)."""
    pytest.importorskip("mlflow")
    from leakaudit.audit.result.mlflow_log import check_store

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        start = time.monotonic()
        with pytest.raises(InvalidParameterError, match="Read timed out"):
            check_store(f"http://127.0.0.1:{silent.getsockname()[1]}", name="--mlflow")
        assert time.monotonic() - start < 40


@pytest.mark.slow
def test_logged_to_a_tracking_server_without_its_lines_on_stdout(audited, tmp_path, capsys):
    """A real `mlflow server` (SQLite behind it, its own artifact folder): the run and its files arrive; MLflow's
    "View run" lines do not reach stdout, where the command says the verdict."""
    import urllib.request

    from mlflow.tracking import MlflowClient

    from leakaudit.audit.result.mlflow_log import log_audit_folder

    res, folder, _ = audited
    port = _closed_port()
    server = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
                               f"sqlite:///{tmp_path / 'm.db'}", "--artifacts-destination", str(tmp_path / "art"),
                               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        uri, start = f"http://127.0.0.1:{port}", time.monotonic()
        while time.monotonic() - start < 180:
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        capsys.readouterr()
        run_id = log_audit_folder(res, folder, tracking_uri=uri)
        assert capsys.readouterr().out == ""
        client = MlflowClient(uri)
        assert client.get_run(run_id).data.tags["leakaudit.verdict"] == res.outcome
        assert len(client.list_artifacts(run_id, "leakaudit")) == 3
    finally:
        server.terminate()
        server.wait(30)
