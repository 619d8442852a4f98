"""MLflow: an audit logged as a run, and a model registered in MLflow audited by its URI (the ``mlflow`` extra).

:func:`log_to_mlflow` (``AuditResult.log_to_mlflow``, ``leakaudit audit --mlflow [URI]``) logs one run: the verdict
as the tag ``leakaudit.verdict``, each check's status as a tag, its value, interval ends and p-value as metrics
(``<check id>``, ``<check id>.low``, ``<check id>.high``, ``<check id>.p_value``; a check without a value logs none),
the profile and seed as parameters, and results.json, evidence.json and report.html as artifacts (under
``leakaudit/``). records.csv is not logged: it holds the audited records' own values, and a tracking server is
often shared more widely than the audit's folder.

:func:`model_from_uri` makes a ``models:/NAME/VERSION`` (or ``models:/NAME@ALIAS``) or ``runs:/RUN_ID/PATH`` URI a
local model file leakaudit reads, deciding from the model's MLmodel file alone, before anything else is fetched:
the ``xgboost`` and ``catboost`` flavours (the libraries' own files), ``lightgbm`` holding a native Booster (its
text file), and ``sklearn`` / ``lightgbm`` serialised with skops are audited from that file, with the checks
every such file gets (docs/input.md). A flavour whose file is a pickle (``serialization_format`` pickle or
cloudpickle; a LightGBM scikit-learn model so saved; any flavour leakaudit does not read, torch's included) is
refused in one line saying why: loading it would run code the file chooses. The MLmodel file is YAML read with
``yaml.safe_load``; nothing is unpickled.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import tempfile
from pathlib import Path, PurePosixPath

from .._extras import require
from .._validation import clip
from ..exceptions import InvalidParameterError, UnsafeFileError, UnsupportedError

__all__ = ["log_to_mlflow", "log_audit_folder", "model_from_uri", "is_model_uri", "ARTIFACTS"]

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


def _first_line(exc: Exception) -> str:
    """An MLflow error's first line, clipped, for a one-line message."""
    return clip(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 200)


def _mlflow(feature: str):
    return require("mlflow", feature)


# -- logging ----------------------------------------------------------------------------------------------------------

def _metric_key(check_id: str) -> str:
    """A check id as an MLflow metric name (letters, digits, ``_ - . /`` and spaces; anything else becomes ``_``)."""
    return re.sub(r"[^A-Za-z0-9_\-./ ]", "_", check_id)[:240]


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def run_contents(result) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """(metrics, tags, params) of the run ``result`` is logged as: each check's value, interval ends and p-value
    (finite ones), the verdict and each check's status as tags, the profile and seed as parameters."""
    metrics: dict[str, float] = {}
    tags = {"leakaudit.verdict": result.verdict.outcome, "leakaudit.version": str(result.leakaudit_version),
            "leakaudit.target": str(result.target.get("kind", "")), "leakaudit.created": str(result.created)}
    for c in result.verdict.checks:
        key = _metric_key(c.id)
        tags[f"leakaudit.check.{key}"] = c.status
        ends = (None, None) if c.interval is None else tuple(c.interval)
        for suffix, v in (("", c.value), (".low", ends[0]), (".high", ends[1]), (".p_value", c.p_value)):
            if _finite(v):
                metrics[key + suffix] = float(v)
    config = result.config
    params = {"profile": str(config.get("profile")), "seed": str(config.get("seed"))}
    return metrics, tags, params


def log_audit_folder(result, folder, *, tracking_uri: str | None = None, experiment: str = "leakaudit",
                     run_name: str | None = None) -> str:
    """Log ``result`` (an :class:`~leakaudit.audit.results.AuditResult`) as a new MLflow run, its files read from
    ``folder`` (the audit's output folder, as ``leakaudit audit --out`` or ``AuditResult.save`` wrote it); return
    the run's id. ``tracking_uri``: the tracking store (None: MLflow's own default, ``MLFLOW_TRACKING_URI``);
    ``experiment``: created if missing."""
    _mlflow("logging an audit to MLflow")
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    folder = Path(folder)
    missing = [f for f in ARTIFACTS if not (folder / f).is_file()]
    if missing:
        raise InvalidParameterError(f"the audit's folder {folder} has no {', '.join(missing)}")
    if not isinstance(experiment, str) or not experiment.strip():
        raise InvalidParameterError(f"experiment must be a non-empty name; got {experiment!r}")
    metrics, tags, params = run_contents(result)
    try:
        client = MlflowClient(tracking_uri=tracking_uri)
        exp = client.get_experiment_by_name(experiment)
        exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
        run = client.create_run(exp_id, run_name=run_name or f"leakaudit audit: {result.verdict.outcome}")
        run_id = run.info.run_id
        client.log_batch(run_id, metrics=[Metric(k, v, 0, 0) for k, v in metrics.items()],
                         params=[Param(k, v) for k, v in params.items()],
                         tags=[RunTag(k, v) for k, v in tags.items()])
        for f in ARTIFACTS:
            client.log_artifact(run_id, str(folder / f), artifact_path=ARTIFACT_DIR)
        client.set_terminated(run_id)
    except MlflowException as exc:
        raise UnsupportedError(f"MLflow refused the run ({_first_line(exc)}) "
                               f"at tracking URI {tracking_uri or 'MLflow default'}") from None
    return run_id


def log_to_mlflow(result, *, tracking_uri: str | None = None, experiment: str = "leakaudit",
                  run_name: str | None = None) -> str:
    """Log ``result`` as a new MLflow run (see the module docstring); return the run's id. Its files are written as
    ``AuditResult.save`` writes them (:func:`~leakaudit.audit.output.save_result`), in a temporary folder."""
    from .output import save_result

    with tempfile.TemporaryDirectory(prefix="leakaudit-mlflow-") as tmp:
        folder = save_result(result, Path(tmp) / "audit")
        return log_audit_folder(result, folder, tracking_uri=tracking_uri, experiment=experiment, run_name=run_name)


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
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)
    try:
        if re.fullmatch(r"m-[0-9a-f]{32}", name):
            return client.get_logged_model(name).artifact_location
        m = re.fullmatch(r"(.+)/(\d+)", name) or re.fullmatch(r"(.+)@([\w\-]+)", name)
        if m is None:
            raise InvalidParameterError(f"{where}: not models:/NAME/VERSION, models:/NAME@ALIAS or models:/m-<id>")
        version = m.group(2) if m.group(2).isdigit() else client.get_model_version_by_alias(m.group(1),
                                                                                          m.group(2)).version
        return client.get_model_version_download_uri(m.group(1), version)
    except MlflowException as exc:
        raise InvalidParameterError(f"{where}: MLflow has no such model "
                                    f"({_first_line(exc)})") from None


def _run_model_location(rest: str, tracking_uri: str | None, where: str) -> str:
    """Where the artifacts of the model ``runs:/<rest>`` (``RUN_ID/PATH``) lie: the run's artifacts under PATH, or
    (MLflow 3, which logs a model apart from its run) the model the run logged under the name PATH."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    run_id, _, path = rest.partition("/")
    if not run_id or not path:
        raise InvalidParameterError(f"{where}: not runs:/RUN_ID/PATH")
    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        run = client.get_run(run_id)
        search = getattr(client, "search_logged_models", None)  # MLflow 3
        models = [] if search is None else search(experiment_ids=[run.info.experiment_id],
                                                  filter_string=f"source_run_id = '{run_id}'")
        named = [m for m in models if m.name == path]
        if len(named) == 1:
            return named[0].artifact_location
        return f"{run.info.artifact_uri.rstrip('/')}/{path}"  # MLflow 2: the run's own artifacts
    except MlflowException as exc:
        raise InvalidParameterError(f"{where}: MLflow has no such run or model "
                                    f"({_first_line(exc)})") from None


@contextlib.contextmanager
def _no_progress_bars():
    """MLflow's download progress bars off (they would write to stderr, where an error is one line)."""
    key = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
    old = os.environ.get(key)
    os.environ[key] = "false"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def model_from_uri(uri: str, dst, *, tracking_uri: str | None = None) -> tuple[Path, str]:
    """The local model file of the MLflow model at ``uri``, downloaded into the folder ``dst``, and its flavour
    (:func:`choose_flavour`): the MLmodel file is fetched and read first, the model file only when its flavour is
    safe."""
    if not is_model_uri(uri):
        raise InvalidParameterError(f"model URI {clip(str(uri), 80)!r} is not models:/NAME/VERSION, models:/NAME@ALIAS "
                                    "or runs:/RUN_ID/PATH")
    _mlflow("auditing a model by its MLflow URI")
    import yaml
    from mlflow.artifacts import download_artifacts
    from mlflow.exceptions import MlflowException

    where = f"the MLflow model {uri}"
    base = uri.rstrip("/")
    dst = Path(dst)
    if base.startswith("models:/"):
        base = _model_location(base[len("models:/"):], tracking_uri, where)
    else:
        base = _run_model_location(base[len("runs:/"):], tracking_uri, where)

    def fetch(sub: str) -> Path:
        try:
            with _no_progress_bars():
                got = download_artifacts(artifact_uri=f"{base}/{sub}", dst_path=str(dst), tracking_uri=tracking_uri)
            return Path(got)
        except MlflowException as exc:
            raise InvalidParameterError(f"{where}: MLflow could not fetch {sub} "
                                        f"({_first_line(exc)})") from None
        except OSError as exc:
            raise InvalidParameterError(f"{where}: {sub} could not be fetched ({clip(str(exc), 200)})") from None

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
