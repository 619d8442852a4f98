"""MLflow: an audit logged as a run, and a model registered in MLflow audited by its URI (the ``mlflow`` extra;
docs/api.md, "Logging to MLflow", and docs/input.md, "Models registered in MLflow").

:func:`log_to_mlflow` (``AuditResult.log_to_mlflow``, ``leakaudit audit --mlflow [URI]``) logs one run: the verdict
and each check's status as tags, each check's value, interval ends and p-value as metrics (``<check id>``,
``<check id>.low``, ``<check id>.high``, ``<check id>.p_value``), the settings as parameters (:func:`run_contents`),
and results.json, evidence.json and report.html as artifacts (under ``leakaudit/``); not records.csv, which holds
the audited records' own values. :func:`check_store` checks the store (and the run logged into) before an audit.

:func:`model_from_uri` makes a ``models:/...`` or ``runs:/...`` URI a local model file, deciding from the model's
MLmodel file alone (YAML, ``yaml.safe_load``) before anything else is fetched: a flavour whose file is a pickle is
refused in one line saying why (loading it would run code the file chooses); nothing is unpickled.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import tempfile
from pathlib import Path, PurePosixPath

from ..._extras import require
from ..._validation import clip
from ...exceptions import InvalidParameterError, LeakauditError, UnsafeFileError, UnsupportedError

__all__ = ["log_to_mlflow", "log_audit_folder", "check_store", "quiet_mlflow", "model_from_uri", "is_model_uri",
           "ARTIFACTS"]

#: the audit's files logged as artifacts (records.csv is not: it holds the records' own values)
ARTIFACTS = ("results.json", "evidence.json", "report.html")
#: the artifact folder of a run they are logged under
ARTIFACT_DIR = "leakaudit"
_URI = re.compile(r"(?:models|runs):/\S+")
#: an MLmodel file is a few hundred bytes of YAML; far more is not one
_MAX_MLMODEL = 1 << 20


def is_model_uri(text) -> bool:
    """Whether ``text`` is an MLflow model URI leakaudit resolves (``models:/...`` or ``runs:/...``)."""
    return isinstance(text, str) and _URI.fullmatch(text) is not None


@contextlib.contextmanager
def _backend(what: str, error=InvalidParameterError):
    """Any error of MLflow or of its backends (SQLAlchemy's, the HTTP client's, the file system's) as ``error``:
    ``what`` and the backend's whole message on one line (it often names the fix); leakaudit's own pass."""
    try:
        yield
    except LeakauditError:
        raise
    except Exception as exc:
        raise error(f"{what} ({' '.join(str(exc).split()) or type(exc).__name__})") from None


@contextlib.contextmanager
def _env(**values: str):
    """The environment variables ``values`` set while the block runs (MLflow reads its settings there)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


@contextlib.contextmanager
def quiet_mlflow():
    """MLflow's own INFO lines off (``leakaudit audit -q``): its logger at WARNING, and so set up by MLflow should
    it be imported meanwhile."""
    logger = logging.getLogger("mlflow")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with _env(MLFLOW_LOGGING_LEVEL="WARNING"):
            yield
    finally:
        logger.setLevel(level)


def check_store(tracking_uri: str | None = None, *, run_id: str | None = None, name: str = "tracking_uri") -> str:
    """The tracking store at ``tracking_uri``, checked before anything is run or written; returns its URI. None:
    ``MLFLOW_TRACKING_URI`` (or ``mlflow.set_tracking_uri``'s), refused when neither is set (MLflow's own default
    would create mlflow.db in the working folder). MLflow opens the store and lists one experiment (a server is
    asked once, with a 10-second timeout, not retried for minutes); a SQLite file whose folder does not exist is
    refused, not created. ``run_id``: a run the audit logs into or under, which must exist and not be deleted.
    ``name``: the argument the messages name (``--mlflow`` on the command line)."""
    require("mlflow", "an MLflow tracking store")
    import sqlite3

    from mlflow.tracking import MlflowClient, get_tracking_uri, is_tracking_uri_set

    if tracking_uri is None:
        if not is_tracking_uri_set():
            raise InvalidParameterError(f"no MLflow tracking store is named: give one with {name} (or set "
                                        "MLFLOW_TRACKING_URI); MLflow's own default would create mlflow.db in the "
                                        "working folder")
        tracking_uri = get_tracking_uri()
    if not str(tracking_uri).strip():  # MLflow would take it for its own default
        raise InvalidParameterError(f"{name} is empty: name a tracking store (sqlite:///PATH/mlflow.db, "
                                    "http://HOST:PORT)")
    where = f"{name} {clip(str(tracking_uri), 200)}"
    with _backend(f"{where}: MLflow cannot use this tracking store"):
        db = _sqlite_file(str(tracking_uri))
        if db is not None:  # MLflow would create a missing folder, and retry a file it cannot open for 100 s
            if db.name in ("", ":memory:"):
                raise InvalidParameterError(f"{where}: a SQLite store in memory is lost when the process ends: name "
                                            "its file, sqlite:///PATH/mlflow.db")
            if not db.parent.is_dir():
                raise InvalidParameterError(f"{where}: the folder {db.parent} does not exist (leakaudit does not "
                                            "create it): correct the path, or create the folder")
            with contextlib.closing(sqlite3.connect(db)) as con:
                con.execute("pragma schema_version")
        with _env(MLFLOW_HTTP_REQUEST_MAX_RETRIES="0", MLFLOW_HTTP_REQUEST_TIMEOUT="10"):
            client = MlflowClient(tracking_uri=tracking_uri)
            client.search_experiments(max_results=1)
    if run_id is not None:
        with _backend(f"{where}: no run {clip(str(run_id), 80)!r} to log into"):
            stage = client.get_run(run_id).info.lifecycle_stage
        if stage != "active":
            raise InvalidParameterError(f"{where}: the run {run_id} is {stage}; MLflow logs nothing into it")
    return tracking_uri


def _sqlite_file(uri: str) -> Path | None:
    """The database file of a SQLite tracking URI (None: another store; named "" or ":memory:": SQLite in memory)."""
    from sqlalchemy.engine import make_url

    return Path(make_url(uri).database or "") if uri.startswith("sqlite:") else None


# -- logging ----------------------------------------------------------------------------------------------------------

def _metric_key(check_id: str) -> str:
    """A check id as an MLflow metric name (letters, digits, ``_ - . /`` and spaces; anything else becomes ``_``)."""
    return re.sub(r"[^A-Za-z0-9_\-./ ]", "_", check_id)[:240]


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def run_contents(result, evidence: dict) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """(metrics, tags, params) of the run ``result`` is logged as: each check's value, interval ends and p-value
    (finite ones), the verdict and each check's status as tags; as parameters (each ``leakaudit.<name>``, apart
    from a training run's own): the policy, every threshold (``threshold.<key>``), profile, seed, the numbers of
    members and non-members, and the model's SHA-256 as ``evidence`` (evidence.json) records it."""
    metrics: dict[str, float] = {}
    tags = {"leakaudit.verdict": result.verdict.outcome, "leakaudit.version": str(result.leakaudit_version),
            "leakaudit.target": str(result.target.kind), "leakaudit.created": str(result.created)}
    for c in result.verdict.checks:
        key = _metric_key(c.id)
        tags[f"leakaudit.check.{key}"] = c.status
        ends = (None, None) if c.interval is None else tuple(c.interval)
        for suffix, v in (("", c.value), (".low", ends[0]), (".high", ends[1]), (".p_value", c.p_value)):
            if _finite(v):
                metrics[key + suffix] = float(v)
    v, config = result.verdict, result.config
    params = {"policy": v.policy, "profile": config.profile, "seed": config.seed,
              "n_members": result.data.n_members, "n_nonmembers": result.data.n_nonmembers,
              **{f"threshold.{k}": t for k, t in v.thresholds.items()},
              "model_sha256": next((f.get("sha256") for f in evidence.get("files", []) if f.get("role") == "model"),
                                   None)}
    return metrics, tags, {f"leakaudit.{k}": str(p) for k, p in params.items() if p is not None}


def log_audit_folder(result, folder, *, tracking_uri: str | None = None, experiment: str = "leakaudit",
                     run_name: str | None = None, run_id: str | None = None, nested: bool = False) -> str:
    """Log ``result`` (an :class:`~leakaudit.audit.result.results.AuditResult`) to MLflow, its files read from ``folder``
    (the audit's output folder, as ``leakaudit audit --out`` or ``AuditResult.save`` wrote it); return the run's id.
    ``tracking_uri``: the tracking store (:func:`check_store`, checked first). The run: a new one in
    ``experiment`` (created if missing; in a SQLite store, with its artifacts in ``mlartifacts`` beside the
    database, not in the working folder), else the existing run ``run_id`` (it stays as it was, running or
    finished), else with ``nested``, a new child run of ``run_id``, in its experiment."""
    import json

    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    folder = Path(folder)
    missing = [f for f in ARTIFACTS if not (folder / f).is_file()]
    if missing:
        raise InvalidParameterError(f"the audit's folder {folder} has no {', '.join(missing)}")
    if not isinstance(experiment, str) or not experiment.strip():
        raise InvalidParameterError(f"experiment must be a non-empty name; got {experiment!r}")
    if nested and run_id is None:
        raise InvalidParameterError("nested=True makes the audit's run a child of run_id: give run_id")
    tracking_uri = check_store(tracking_uri, run_id=run_id)
    metrics, tags, params = run_contents(result, json.loads((folder / "evidence.json").read_text(encoding="utf-8")))
    with _backend(f"MLflow refused the run at tracking URI {clip(tracking_uri, 200)}", UnsupportedError):
        client = MlflowClient(tracking_uri=tracking_uri)
        new = run_id is None or nested
        if run_id is None:
            exp, db = client.get_experiment_by_name(experiment), _sqlite_file(tracking_uri)
            exp_id = exp.experiment_id if exp is not None else client.create_experiment(
                experiment, db and (db.resolve().parent / "mlartifacts").as_uri())
        elif nested:
            exp_id = client.get_run(run_id).info.experiment_id
        if new:
            run = client.create_run(exp_id, run_name=run_name or f"leakaudit audit: {result.verdict.outcome}",
                                    tags={"mlflow.parentRunId": run_id} if run_id else {})
            run_id = run.info.run_id
        client.log_batch(run_id, metrics=[Metric(k, v, 0, 0) for k, v in metrics.items()],
                         params=[Param(k, v) for k, v in params.items()],
                         tags=[RunTag(k, v) for k, v in tags.items()])
        for f in ARTIFACTS:
            client.log_artifact(run_id, str(folder / f), artifact_path=ARTIFACT_DIR)
        if new:
            with _env(MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT="true"):  # a server's "View run" lines: stdout is ours
                client.set_terminated(run_id)
    return run_id


def log_to_mlflow(result, *, tracking_uri: str | None = None, experiment: str = "leakaudit",
                  run_name: str | None = None, run_id: str | None = None, nested: bool = False) -> str:
    """Log ``result`` to MLflow (see the module docstring and :func:`log_audit_folder`); return the run's id. Its
    files are written as ``AuditResult.save`` writes them (:func:`~leakaudit.audit.result.output.save_result`), in a
    temporary folder."""
    from .output import save_result

    with tempfile.TemporaryDirectory(prefix="leakaudit-mlflow-") as tmp:
        folder = save_result(result, Path(tmp) / "audit")
        return log_audit_folder(result, folder, tracking_uri=tracking_uri, experiment=experiment, run_name=run_name,
                                run_id=run_id, nested=nested)


# -- models by URI ----------------------------------------------------------------------------------------------------

def _data_path(conf: dict, key: str, where: str) -> str:
    """The model file a flavour names (``data``, ``pickled_model``): a relative path inside the model's folder."""
    v = conf.get(key)
    if not isinstance(v, str) or not v or len(v) > 500:
        raise UnsafeFileError(f"{where}: its flavour names no model file ({key})")
    p = PurePosixPath(v)
    if p.is_absolute() or ".." in p.parts or "\\" in v:
        raise UnsafeFileError(f"{where}: its model file {clip(v, 60)!r} is not a path inside the model's folder")
    return v


def choose_flavour(mlmodel: dict, where: str) -> tuple[str, str]:
    """(flavour, model file) of a model's MLmodel file (parsed): the flavour leakaudit reads, and the file it reads
    it from; UnsupportedError naming the flavours and why (a pickle) otherwise."""
    flavors = mlmodel.get("flavors") if isinstance(mlmodel, dict) else None
    if not isinstance(flavors, dict) or not flavors:
        raise UnsafeFileError(f"{where}: its MLmodel file names no flavours")
    for name in ("xgboost", "catboost"):
        conf = flavors.get(name)
        if isinstance(conf, dict):
            return name, _data_path(conf, "data", where)
    conf = flavors.get("lightgbm")
    if isinstance(conf, dict) and str(conf.get("model_class", "lightgbm.basic.Booster")).endswith(".Booster"):
        return "lightgbm", _data_path(conf, "data", where)
    # a scikit-learn model (LightGBM's wrapper among them): safe only when serialised with skops
    for name, key, what, fix in (("lightgbm", "data", "LightGBM scikit-learn model",
                                  "register its booster (model.booster_) or log it with serialization_format='skops'"),
                                 ("sklearn", "pickled_model", "scikit-learn model",
                                  "log it with mlflow.sklearn.log_model(..., serialization_format='skops')")):
        conf = flavors.get(name)
        if isinstance(conf, dict):
            fmt = conf.get("serialization_format", "cloudpickle")
            if fmt == "skops":
                return "skops", _data_path(conf, key, where)
            raise UnsupportedError(f"{where} is a {what} registered as a {clip(str(fmt), 20)} file; leakaudit never "
                                   f"unpickles a model (loading a pickle runs code the file chooses): {fix}")
    names = ", ".join(sorted(k for k in flavors if k != "python_function")) or "python_function only"
    raise UnsupportedError(f"{where} has flavour(s) {clip(names, 80)}; leakaudit audits models registered in a safe "
                           "flavour: xgboost, catboost, lightgbm (a Booster) or sklearn with skops (other flavours "
                           "load pickles or code)")


def _model_location(name: str, tracking_uri: str | None, where: str) -> str:
    """Where the artifacts of the model ``models:/<name>`` lie: a registered model's version (``NAME/VERSION``) or
    alias (``NAME@ALIAS``), or MLflow 3's logged-model id (``m-<32 hex>``), asked of the registry at
    ``tracking_uri`` (MLflow's own resolution of a models:/ URI would ask the process's default registry)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)
    with _backend(f"{where}: MLflow has no such model"):
        if re.fullmatch(r"m-[0-9a-f]{32}", name):
            return client.get_logged_model(name).artifact_location
        m = re.fullmatch(r"(.+)/(\d+)", name) or re.fullmatch(r"(.+)@([\w\-]+)", name)
        if m is None:
            raise InvalidParameterError(f"{where}: not models:/NAME/VERSION, models:/NAME@ALIAS or models:/m-<id>")
        version = m.group(2) if m.group(2).isdigit() else client.get_model_version_by_alias(m.group(1),
                                                                                          m.group(2)).version
        return client.get_model_version_download_uri(m.group(1), version)


def _run_model_location(rest: str, tracking_uri: str | None, where: str) -> str:
    """Where the artifacts of the model ``runs:/<rest>`` (``RUN_ID/PATH``) lie: the run's artifacts under PATH, or
    (MLflow 3, which logs a model apart from its run) the model the run logged under the name PATH."""
    from mlflow.tracking import MlflowClient

    run_id, _, path = rest.partition("/")
    if not run_id or not path:
        raise InvalidParameterError(f"{where}: not runs:/RUN_ID/PATH")
    client = MlflowClient(tracking_uri=tracking_uri)
    with _backend(f"{where}: MLflow has no such run or model"):
        run = client.get_run(run_id)
        search = getattr(client, "search_logged_models", None)  # MLflow 3
        models = [] if search is None else search(experiment_ids=[run.info.experiment_id],
                                                  filter_string=f"source_run_id = '{run_id}'")
        named = [m for m in models if m.name == path]
        if len(named) == 1:
            return named[0].artifact_location
        return f"{run.info.artifact_uri.rstrip('/')}/{path}"  # MLflow 2: the run's own artifacts


def model_from_uri(uri: str, dst, *, tracking_uri: str | None = None) -> tuple[Path, str]:
    """The local model file of the MLflow model at ``uri``, downloaded into the folder ``dst``, and its flavour
    (:func:`choose_flavour`): the store is checked (:func:`check_store`), the MLmodel file is fetched and read
    first, the model file only when its flavour is safe."""
    if not is_model_uri(uri):
        raise InvalidParameterError(f"model URI {clip(str(uri), 80)!r} is not models:/NAME/VERSION, models:/NAME@ALIAS "
                                    "or runs:/RUN_ID/PATH")
    tracking_uri = check_store(tracking_uri)
    import yaml
    from mlflow.artifacts import download_artifacts

    where = f"the MLflow model {uri}"
    base = uri.rstrip("/")
    dst = Path(dst)
    if base.startswith("models:/"):
        base = _model_location(base[len("models:/"):], tracking_uri, where)
    else:
        base = _run_model_location(base[len("runs:/"):], tracking_uri, where)

    def fetch(sub: str) -> Path:
        # MLflow's progress bars off: they would write to stderr, where an error is one line
        with _backend(f"{where}: MLflow could not fetch {sub}"), _env(MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false"):
            return Path(download_artifacts(artifact_uri=f"{base}/{sub}", dst_path=str(dst), tracking_uri=tracking_uri))

    mlmodel = fetch("MLmodel")
    if mlmodel.stat().st_size > _MAX_MLMODEL:
        raise UnsafeFileError(f"{where}: its MLmodel file takes {mlmodel.stat().st_size:,} bytes; refusing to read it")
    try:
        conf = yaml.safe_load(mlmodel.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise UnsafeFileError(f"{where}: its MLmodel file is not YAML ({clip(str(exc), 120)})") from None
    flavour, data = choose_flavour(conf, where)
    path = fetch(data)
    if path.is_dir():  # a flavour whose data is a folder holding one model file
        files = [p for p in path.iterdir() if p.is_file()]
        if len(files) != 1:
            raise UnsafeFileError(f"{where}: its model folder {data} holds {len(files)} files, not one model file")
        path = files[0]
    return path, flavour
