"""``leakaudit.audit(model, members, nonmembers, label=...)``: the whole audit as one library call, in memory.

The command line (``leakaudit audit``) reads files and calls the same core (:func:`~leakaudit.audit.pipeline.
audit_core`); here the records are pandas DataFrames and the model is the object itself, and nothing is read or
written until :meth:`AuditResult.save <leakaudit.audit.results.AuditResult.save>`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import ValidationError

from .._validation import check_probabilities
from ..exceptions import InvalidParameterError
from .config import AuditConfig, Thresholds
from .results import AuditResult

__all__ = ["audit"]

#: AuditConfig fields that describe files or the bundled demo: the in-memory call takes objects instead
_FILE_KEYS = ("train", "test", "data", "membership_column", "population", "model", "module", "module_kwargs",
              "model_input", "predictions_train", "predictions_test", "model_dir", "text_column", "tokenizer",
              "logprobs_column", "reference_dir", "dataset", "n_members", "n_nonmembers", "hidden", "activation",
              "epochs", "exit_code", "label", "sensitive")


def _config(label: str, sensitive, options: dict) -> AuditConfig:
    """The audit's settings from keyword arguments; an unknown or file-only one is refused by name."""
    bad = sorted(k for k in options if k in _FILE_KEYS or k not in AuditConfig.model_fields)
    if bad:
        known = sorted(k for k in AuditConfig.model_fields if k not in _FILE_KEYS)
        raise InvalidParameterError(f"leakaudit.audit() got unknown or file-only argument(s) {', '.join(bad)}; "
                                    f"settings it takes: {', '.join(known)}")
    if isinstance(options.get("thresholds"), dict):
        options["thresholds"] = Thresholds(**options["thresholds"])
    try:
        return AuditConfig(label=label, sensitive=list(sensitive) if sensitive else None, **options)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "settings"
        raise InvalidParameterError(f"{where}: {err.get('msg')}") from None


def _predictions_target(data, predictions):
    from .target import Target

    if not (isinstance(predictions, (tuple, list)) and len(predictions) == 2):
        raise InvalidParameterError("predictions must be a pair (probabilities on the members, probabilities on the "
                                    "non-members), each of shape (n, n_classes)")
    pm = check_probabilities(np.asarray(predictions[0], dtype=float), name="predictions[0] (members)")
    pn = check_probabilities(np.asarray(predictions[1], dtype=float), name="predictions[1] (non-members)")
    for p, n, what in ((pm, len(data.y_mem), "predictions[0]"), (pn, len(data.y_non), "predictions[1]")):
        if p.shape != (n, data.n_classes):
            raise InvalidParameterError(f"{what} has shape {p.shape}; expected ({n}, {data.n_classes}): one row per "
                                        f"record, one column per class in sorted order {data.class_names}")
    return Target("predictions", "predictions only (no model): attacks that need retraining are skipped",
                  pm, pn, None, None)


def audit(model: Any = None, members=None, nonmembers=None, *, label: str, population=None, sensitive=None,
          predictions=None, learner=None, model_input: str = "auto", verbose: bool = False,
          memory_budget: int | str | None = None, **settings) -> AuditResult:
    """Audit a fitted model on its members and non-members, in memory: membership attacks, PDTP and the DTP-1
    rule, attribute and property inference, MIP; a verdict.

    Parameters
    ----------
    model : fitted scikit-learn estimator or Pipeline, or a trained ``torch.nn.Module``, optional
        The model to audit, fitted on ``members``. It is queried on every record. A scikit-learn model is cloned
        and refitted for the reference and leave-one-out models; a torch module is retrained by ``learner`` (its
        recipe). None with ``predictions``: only the attacks that need no retraining.
    members : pandas.DataFrame of shape (n_members, n_columns)
        The records the model was trained on, with the label column.
    nonmembers : pandas.DataFrame of shape (n_nonmembers, n_columns)
        Records of the same distribution the model never saw; the same columns.
    label : str
        The label column.
    population : pandas.DataFrame, optional
        Other records of the same distribution, neither members nor non-members (RMIA needs them).
    sensitive : list of str, optional
        Feature columns for attribute and property inference.
    predictions : (ndarray of shape (n_members, n_classes), ndarray of shape (n_nonmembers, n_classes)), optional
        Instead of ``model``: its class probabilities on the members and on the non-members (classes in sorted
        order).
    learner : leakaudit Learner, optional
        With a torch module: the training algorithm that retrains it for the reference and leave-one-out models,
        e.g. ``leakaudit.learners.TorchModuleLearner(module="pkg.mod:Net", epochs=..., lr=...)`` (the recipe is an
        assumption the audit cannot check from the weights). None: no retraining (the attacks that need it are
        skipped, each saying so). Not taken with a scikit-learn model, which is cloned.
    model_input : {"auto", "columns", "encoded"}, default="auto"
        What the model takes: "auto" (a model fitted on a DataFrame gets the columns it names; a torch module gets
        leakaudit's encoding), "columns" (the table's feature columns as they are), "encoded" (leakaudit's encoding;
        docs/input.md).
    verbose : bool, default=False
        Progress on stderr.
    memory_budget : int or str, optional
        Memory trained models' outputs may take before they are kept on disk (e.g. "4GB").
    **settings
        Any audit setting of :class:`~leakaudit.audit.config.AuditConfig` that is not about files: ``profile``
        ("smoke", "standard", "thorough"), ``seed``, ``thresholds`` (a dict or
        :class:`~leakaudit.audit.config.Thresholds`), ``confidence``, ``dtp_rule``, ``epsilon_budget``,
        ``claimed_epsilon``, ``backend``, ``cache_dir``, ...

    Returns
    -------
    AuditResult
        ``result.outcome``, ``result.verdict``, ``result.checks``, ``result.records`` (a DataFrame, one row per
        record), ``result.save(out)`` (results.json, records.csv and report.html as the command line writes them).

    Examples
    --------
    >>> import leakaudit
    >>> result = leakaudit.audit(pipeline, train_df, test_df, label="income", profile="smoke")  # doctest: +SKIP
    >>> result.outcome  # doctest: +SKIP
    'do not publish'
    """
    from .data import data_from_frames
    from .pipeline import audit_core
    from ..learners import Learner, is_torch_module
    from .target import _check_refittable_classes, sklearn_target, torch_target

    if not isinstance(label, str) or not label:
        raise InvalidParameterError(f"label must be the name of the label column; got {label!r}")
    if members is None or nonmembers is None:
        raise InvalidParameterError("members and nonmembers are required: the records the model was trained on, "
                                    "and records of the same distribution it never saw")
    if (model is None) == (predictions is None):
        raise InvalidParameterError("give model (a fitted estimator or torch module) or predictions (its "
                                    "probabilities), not both and not neither")
    if model_input not in ("auto", "columns", "encoded"):
        raise InvalidParameterError(f"model_input must be 'auto', 'columns' or 'encoded'; got {model_input!r}")
    cfg = _config(label, sensitive, dict(settings))
    data = data_from_frames(members, nonmembers, label=label, population=population, sensitive=sensitive)
    if learner is not None and not isinstance(learner, Learner):
        raise InvalidParameterError(f"learner must be a leakaudit Learner (e.g. leakaudit.learners.TorchModuleLearner"
                                    f"); got {type(learner).__name__}")
    if predictions is not None:
        target = _predictions_target(data, predictions)
    elif is_torch_module(model):
        how = "the table's feature columns as they are" if model_input == "columns" else "leakaudit's encoding"
        desc = (f"{type(model).__name__} (torch) from memory, on {how}; "
                + (f"retrained for reference and leave-one-out models by {learner!r} (the recipe is an assumption: "
                   "the weights do not carry it)" if learner is not None else "not retrained (no learner given)"))
        target = torch_target(data, model, learner, model_input="columns" if model_input == "columns" else "encoded",
                              description=desc, where=f"the given {type(model).__name__}")
    elif hasattr(model, "predict_proba") and hasattr(model, "get_params"):
        if learner is not None:
            raise InvalidParameterError("learner is for a torch module; a scikit-learn model is cloned and refitted "
                                        "as it is")
        target = sklearn_target(data, model, model_input=model_input)
        _check_refittable_classes(cfg, data, target.learner)  # as for a model file: refused before any training
    else:
        raise InvalidParameterError(
            f"model must be a fitted scikit-learn classifier or Pipeline with predict_proba, or a torch.nn.Module; got "
            f"{type(model).__name__} (a language model: use the command line's --model-dir for now)")
    return audit_core(cfg, data=data, target=target, command="leakaudit.audit()", verbose=verbose,
                      memory_budget=memory_budget)
