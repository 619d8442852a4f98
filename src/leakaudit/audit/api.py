"""``leakaudit.audit(model, members, nonmembers, label=...)``: the whole audit as one library call, in memory.

The command line (``leakaudit audit``) reads files and calls the same core (:func:`~leakaudit.audit.pipeline.
audit_core`); here the records are pandas DataFrames and the model is the object itself, and nothing is read or
written until :meth:`AuditResult.save <leakaudit.audit.result.results.AuditResult.save>`.
"""

from __future__ import annotations

import inspect
from contextvars import ContextVar
from pathlib import PurePath
from typing import Any

import numpy as np
from pydantic import ValidationError

from .._validation import check_choice, check_probabilities, shown
from ..exceptions import InvalidParameterError
from .config import AuditConfig, Thresholds, check_seed
from .result.results import AuditResult

__all__ = ["audit", "estimate"]

#: what a call runs once its arguments are checked and its inputs built: None, the audit
#: (:func:`~leakaudit.audit.pipeline.audit_core`); :func:`estimate` sets the estimate's core
_CORE: ContextVar = ContextVar("leakaudit_core", default=None)

#: AuditConfig fields that describe files or the bundled demo: the in-memory call takes objects instead
_FILE_KEYS = ("train", "test", "data", "membership_column", "population", "model", "module", "module_kwargs",
              "model_input", "predictions_train", "predictions_test", "model_dir", "text_column", "tokenizer",
              "logprobs_column", "reference_dir", "dataset", "n_members", "n_nonmembers", "hidden", "activation",
              "epochs", "exit_code", "label", "sensitive")


def _config(label: str | None, sensitive, options: dict) -> AuditConfig:
    """The audit's settings from keyword arguments; an unknown or file-only one is refused by name."""
    bad = sorted(k for k in options if k in _FILE_KEYS or k not in AuditConfig.model_fields)
    if bad:
        known = sorted(k for k in AuditConfig.model_fields if k not in _FILE_KEYS)
        raise InvalidParameterError(f"leakaudit.{'estimate' if _CORE.get() else 'audit'}() got unknown or file-only "
                                    f"argument(s) {', '.join(bad)}; settings it takes: {', '.join(known)}")
    try:
        if isinstance(options.get("thresholds"), dict):
            options["thresholds"] = _thresholds(options["thresholds"])
        return AuditConfig(label=label, sensitive=list(sensitive) if sensitive else None, **options)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "settings"
        raise InvalidParameterError(f"{where}: {err.get('msg').removeprefix('Value error, ')}; got "
                                    f"{shown(err.get('input'))}") from None


def _thresholds(given: dict) -> Thresholds:
    """``thresholds=`` given as a dict, its keys named ``thresholds.KEY`` in a refusal."""
    bad = sorted(str(k) for k in given if k not in Thresholds.model_fields)
    if bad:
        raise InvalidParameterError(f"thresholds: unknown key(s) {', '.join(bad)}; keys it takes: "
                                    f"{', '.join(Thresholds.model_fields)}")
    try:
        return Thresholds(**given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(["thresholds", *(str(p) for p in err.get("loc", ()))])
        raise InvalidParameterError(f"{where}: {err.get('msg')}; got {shown(err.get('input'))}") from None


#: the arguments that hold records, predictions or models: the recorded call names their type and shape only
_DATA_ARGUMENTS = ("members", "nonmembers", "population", "predictions", "references")

#: arguments whose default is not None: left out of the recorded call at that default
_NON_NONE_DEFAULTS = {"model_input": "auto"}


def _plain_setting(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool, PurePath))


def _shown_argument(value: Any, *, data: bool = False, depth: int = 0) -> str:
    """An argument as the recorded call shows it: a table or an array by its type and shape, a list of records or
    texts by its length, a model or any other object by its type; with ``data`` False, a plain setting (text, a
    number, a path, a list of column names, a dict of thresholds) as written."""
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return f"<DataFrame {value.shape[0]}x{value.shape[1]}>"
    if isinstance(value, pd.Series):
        return f"<Series {len(value)}>"
    if isinstance(value, np.ndarray):
        return f"<ndarray {'x'.join(map(str, value.shape))} {value.dtype}>"
    if isinstance(value, (list, tuple)):
        return _shown_sequence(value, data=data, depth=depth)
    if not data and (_plain_setting(value) or isinstance(value, dict) and all(map(_plain_setting, value.values()))):
        return shown(value, 200)
    return f"<{type(value).__name__}>"


def _shown_sequence(value: list | tuple, *, data: bool, depth: int) -> str:
    """A list or tuple: plain settings as written; texts by their number; up to four records or models item by
    item (a pair of prediction arrays, two levels deep at most); more by their number."""
    kind = type(value).__name__
    if not data and all(map(_plain_setting, value)):
        return shown(value, 200)
    if value and all(isinstance(v, str) for v in value):
        return f"<{kind} of {len(value)} texts>"
    if len(value) > 4 or depth >= 2:
        return f"<{kind} of {len(value)}>"
    inner = ", ".join(_shown_argument(v, data=True, depth=depth + 1) for v in value)
    return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"


def _call_text(model: Any, arguments: dict) -> str:
    """``leakaudit.audit(...)`` as it was called: the model, then every argument given (one left at its default is
    not shown), each as :func:`_shown_argument` shows it, records and models summarised, never their values."""
    parts = [] if model is None else [_shown_argument(model, data=True)]
    for name, value in arguments.items():
        default = _NON_NONE_DEFAULTS.get(name)
        if value is None or (type(value) is type(default) and value == default):
            continue
        parts.append(f"{name}={_shown_argument(value, data=name in _DATA_ARGUMENTS)}")
    return f"leakaudit.audit({', '.join(parts)})"


def _tabular_inputs(model, members, nonmembers, population, predictions) -> dict:
    """The objects of a tabular audit given in memory, by the role the evidence record names them with."""
    out = {"model": model, "members": members, "non-members": nonmembers, "population": population}
    if isinstance(predictions, (tuple, list)) and len(predictions) == 2:
        out.update({"predictions on the members": predictions[0], "predictions on the non-members": predictions[1]})
    return {k: v for k, v in out.items() if v is not None}


def _predictions_target(data, predictions):
    from .inputs.target import Target

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


def audit(model: Any = None, members=None, nonmembers=None, *, label: str | None = None, population=None,
          sensitive=None, unit: str | None = None, predictions=None, learner=None, model_input: str = "auto",
          text_column: str | None = None,
          tokenizer: Any = None, references: Any = None, verbose: bool | None = None,
          memory_budget: int | str | None = None, random_state: int | None = None, **settings) -> AuditResult:
    """Audit a fitted model on its members and non-members, in memory: membership attacks, PDTP and the DTP-1
    rule, attribute and property inference, MIP; a verdict. For a causal language model: the attacks on its texts'
    token scores, the blind baseline, (n, p)-extraction of the members' suffixes (``extraction=False`` skips it;
    ``extraction_prefix``, ``extraction_n``, ... as ``leakaudit audit --extraction-*``) and, with
    ``dataset_inference=True``, the members as a set (as ``leakaudit audit --model-dir``).

    Parameters
    ----------
    model : fitted scikit-learn estimator or Pipeline, an XGBoost or LightGBM model (``XGBClassifier``, \
``LGBMClassifier`` or a native ``Booster``), a trained ``torch.nn.Module``, or a transformers causal language model, \
optional
        The model to audit, fitted on ``members``. It is queried on every record. A scikit-learn model is cloned
        and refitted for the reference and leave-one-out models; an XGBoost or LightGBM model is retrained by
        leakaudit's learner of its library with the recipe the model records (or by ``learner``); a torch module is
        retrained by ``learner`` (its recipe). None with ``predictions``: only the attacks that need no retraining. A language model (a
        transformers ``PreTrainedModel``, e.g. ``AutoModelForCausalLM``, with ``tokenizer``) is put in evaluation
        mode and scored on every text.
    members : pandas.DataFrame of shape (n_members, n_columns)
        The records the model was trained on, with the label column. For a language model: its member texts, a
        DataFrame with ``text_column`` or a list of str.
    nonmembers : pandas.DataFrame of shape (n_nonmembers, n_columns)
        Records of the same distribution the model never saw; the same columns (for a language model: texts).
    label : str
        The label column (required, except for a language model).
    population : pandas.DataFrame, optional
        Other records of the same distribution, neither members nor non-members (InfoRMIA needs them).
    sensitive : list of str, optional
        Feature columns for attribute and property inference.
    unit : str, optional
        The privacy unit: a column of ``members`` and ``nonmembers`` naming the person (or group) each row belongs
        to; not a feature (dropped before the model sees the records). Membership attacks then score units (the
        mean of a unit's rows' scores) and PDTP, DTP-1 and the removal analysis leave out whole units
        (docs/config.md, "The privacy unit"). A unit among both the members and the non-members is refused.
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
    text_column : str, optional
        For a language model with DataFrames of texts: the column of the texts.
    tokenizer : transformers tokenizer
        For a language model: its tokenizer.
    references : list, optional
        For a language model: reference models (e.g. the base before fine-tuning) for the reference-ratio, LiRA and
        RMIA attacks; each a model sharing ``tokenizer``, or a ``(model, tokenizer)`` pair.
    verbose : bool, optional
        Progress on stderr: each stage and the models trained of the total, with the time left; in a notebook, a
        progress bar (tqdm's; a widget with ipywidgets). None (the default): shown in a notebook or at a terminal,
        not elsewhere (a script's log); False: quiet; True: always.
    memory_budget : int or str, optional
        Memory trained models' outputs may take before they are kept on disk (e.g. "4GB"); a language model's audit
        trains none.
    random_state : int, optional
        The audit's seed, under scikit-learn's name (the same as ``seed``; give one of them). Every random choice
        of the audit derives from it and is recorded in the result; the same seed gives the same result.
    **settings
        Any audit setting of :class:`~leakaudit.audit.config.AuditConfig` that is not about files: ``profile``
        ("smoke", "standard", "thorough"), ``seed``, ``thresholds`` (a dict or
        :class:`~leakaudit.audit.config.Thresholds`), ``confidence``, ``dtp_rule``, ``epsilon_budget``,
        ``claimed_epsilon``, ``tiers`` ("auto": the checks that train no model first at profile "standard", the
        reference models and PDTP only when those leave the verdict open; "off": run everything), ``backend``,
        ``cache_dir``, ... Nothing is written to disk unless asked: the trained
        reference models are cached (so that an interrupted audit resumes) only in ``cache_dir``, or in
        ``$LEAKAUDIT_CACHE`` where that is set; without either, nothing is cached.

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
    from .inputs.data import data_from_frames
    from .pipeline import audit_core
    from ..learners import Learner, is_torch_module
    from .inputs.boosted import boosted_from_memory, boosted_library
    from .inputs.target import _check_refittable_classes, boosted_target, sklearn_target, torch_target

    call = _call_text(model, {"members": members, "nonmembers": nonmembers, "label": label, "population": population,
                              "sensitive": sensitive, "unit": unit, "predictions": predictions, "learner": learner,
                              "model_input": model_input, "text_column": text_column, "tokenizer": tokenizer,
                              "references": references, "verbose": verbose, "memory_budget": memory_budget,
                              "random_state": random_state, **settings})
    if random_state is not None:
        random_state = check_seed(random_state, "random_state")
        if "seed" in settings and check_seed(settings["seed"]) != random_state:
            raise InvalidParameterError(f"random_state={random_state!r} and seed={settings['seed']!r} disagree: they "
                                        "are one setting (scikit-learn's name and leakaudit's); give one")
        settings["seed"] = random_state
    if members is None or nonmembers is None:
        raise InvalidParameterError("members and nonmembers are required: the records the model was trained on, "
                                    "and records of the same distribution it never saw")
    _check_run_options(verbose, memory_budget)
    if verbose is None:  # shown in a notebook or at a terminal
        import sys

        from .progress import in_notebook

        verbose = sys.stderr.isatty() or in_notebook()
    lm_only = {"text_column": text_column, "tokenizer": tokenizer, "references": references}
    if is_causal_lm(model):
        return _audit_language_model(model, members, nonmembers, text_column=text_column, tokenizer=tokenizer,
                                     references=references, verbose=verbose,
                                     other={"label": label, "population": population, "sensitive": sensitive,
                                            "unit": unit, "predictions": predictions, "learner": learner},
                                     settings=dict(settings), call=call)
    given = sorted(k for k, v in lm_only.items() if v is not None)
    if given:
        raise InvalidParameterError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for a language model "
                                    f"(a transformers causal language model as model); got model "
                                    f"{type(model).__name__}")
    if not isinstance(label, str) or not label:
        raise InvalidParameterError(f"label must be the name of the label column; got {shown(label)}")
    if (model is None) == (predictions is None):
        raise InvalidParameterError("give model (a fitted estimator or torch module) or predictions (its "
                                    "probabilities), not both and not neither")
    check_choice(model_input, name="model_input", choices=("auto", "columns", "encoded"))
    if sensitive is not None and (not isinstance(sensitive, (list, tuple))
                                  or not all(isinstance(c, str) and c for c in sensitive)):
        raise InvalidParameterError(f"sensitive must be a list of column names; got {shown(sensitive)}")
    if unit is not None and not (isinstance(unit, str) and unit):
        raise InvalidParameterError(f"unit must be the name of a column of members and nonmembers; got {shown(unit)}")
    cfg = _config(label, sensitive, {**settings, **({"unit": unit} if unit is not None else {})})
    data = data_from_frames(members, nonmembers, label=label, population=population, sensitive=sensitive, unit=unit)
    if learner is not None and not isinstance(learner, Learner):
        raise InvalidParameterError(f"learner must be a leakaudit Learner (e.g. leakaudit.learners.TorchModuleLearner"
                                    f"); got {type(learner).__name__}")
    if predictions is not None:
        target = _predictions_target(data, predictions)
    elif is_torch_module(model):
        how = "the table's feature columns as they are" if model_input == "columns" else "leakaudit's encoding"
        desc = (f"{type(model).__name__} (torch) from memory, on {how}; "
                + (f"retrained for reference and leave-one-out models as {_learner_words(learner)} (the recipe is an "
                   "assumption: the weights do not carry it)" if learner is not None
                   else "not retrained (no learner given)"))
        target = torch_target(data, model, learner, model_input="columns" if model_input == "columns" else "encoded",
                              description=desc, where=f"the given {type(model).__name__}")
    elif boosted_library(model) is not None:
        b = boosted_from_memory(model)
        if learner is not None:
            b.learner, b.recipe = learner, f"the learner given ({type(learner).__name__})"
        target = boosted_target(data, b, model_input=model_input)
    elif hasattr(model, "predict_proba") and hasattr(model, "get_params"):
        if learner is not None:
            raise InvalidParameterError("learner is for a torch module; a scikit-learn model is cloned and refitted "
                                        "as it is")
        target = sklearn_target(data, model, model_input=model_input)
        _check_refittable_classes(cfg, data, target.learner)  # as for a model file: refused before any training
    else:
        raise InvalidParameterError(
            f"model must be a fitted scikit-learn classifier or Pipeline with predict_proba, a torch.nn.Module, or a "
            f"transformers causal language model; got {type(model).__name__}")
    return (_CORE.get() or audit_core)(cfg, data=data, target=target, command=call, verbose=verbose,
                                       memory_budget=memory_budget, default_cache=None,
                                       inputs=_tabular_inputs(model, members, nonmembers, population, predictions))


def estimate(*args, **kwargs):
    """How long :func:`audit` with these arguments will take, before it trains any audit model: the models each
    analysis of the plan trains, times a fit of the retraining recipe timed on these inputs (two calls of the
    recipe, as the engine trains it; :mod:`leakaudit.audit.estimate` says what the estimate ignores). The arguments
    are :func:`audit`'s, checked and refused as it checks them; the inputs are read as it reads them, and nothing is
    written.

    Returns
    -------
    leakaudit.audit.estimate.Estimate
        ``steps`` (each analysis's ``name``, ``models`` and ``seconds``), ``seconds`` (the total; None with
        ``not_measurable`` saying why: a model the audit cannot retrain, or a language model), ``cores``,
        ``fit_seconds`` (per model, as timed); ``str(estimate)`` gives the plan in lines.

    Examples
    --------
    >>> est = leakaudit.estimate(pipeline, train_df, test_df, label="income", profile="smoke")  # doctest: +SKIP
    >>> print(est)  # doctest: +SKIP
    """
    from functools import partial

    from .pipeline import audit_core

    token = _CORE.set(partial(audit_core, estimate=True))
    try:
        return audit(*args, **kwargs)
    finally:
        _CORE.reset(token)


estimate.__signature__ = inspect.signature(audit).replace(return_annotation="Estimate")


def _learner_words(learner) -> str:
    """A torch module's training algorithm in words: its recipe (the class by name, its arguments as a call) where
    the learner says it (:meth:`~leakaudit.learners.TorchModuleLearner.recipe_words`), else its class's name."""
    words = getattr(learner, "recipe_words", None)
    return words() if callable(words) else f"leakaudit's {type(learner).__name__}"


def _check_run_options(verbose, memory_budget) -> None:
    """``verbose`` and ``memory_budget`` refused by name, before any work."""
    from ..engine import parse_memory_size

    if verbose is not None and not isinstance(verbose, bool):
        raise InvalidParameterError(f"verbose must be True, False or None; got {shown(verbose)}")
    if memory_budget is not None:
        parse_memory_size(memory_budget, name="memory_budget")


def is_causal_lm(model: Any) -> bool:
    """A transformers (or peft) model object: what ``--model-dir`` loads, given in memory."""
    root = type(model).__module__.split(".")[0]
    return root in ("transformers", "peft") and hasattr(model, "get_input_embeddings")


def _texts(given, text_column: str | None, name: str) -> list[str]:
    """The texts of ``members`` or ``nonmembers``: a DataFrame's ``text_column``, or a list of str; checked as the
    command line checks a file's."""
    import pandas as pd

    from ..lm.texts import read_texts

    if isinstance(given, pd.DataFrame):
        if text_column is None:
            raise InvalidParameterError(f"{name} is a DataFrame: name the column of its texts with text_column")
        frame = given
    elif isinstance(given, str) or not hasattr(given, "__iter__"):
        raise InvalidParameterError(f"{name} must be a DataFrame with text_column, or a list of str; got "
                                    f"{type(given).__name__}")
    else:
        frame = pd.DataFrame({"text": list(given)}, dtype=object)
        text_column = "text"
    return read_texts(name, text_column, frame=frame, argument="text_column")


def _audit_language_model(model, members, nonmembers, *, text_column, tokenizer, references, verbose, other: dict,
                          settings: dict, call: str) -> AuditResult:
    """:func:`audit` of a causal language model given in memory: the command line's language-model audit
    (:func:`leakaudit.audit.pipeline.audit_core`) on these texts and models; ``call``: the call as the record shows
    it."""
    from ..lm.load import check_reference, wrap_causal_lm
    from .inputs.text import LMTexts
    from .pipeline import audit_core

    bad = sorted(k for k, v in other.items() if v is not None)
    if bad:
        raise InvalidParameterError(f"{', '.join(bad)} cannot be given with a language model (its audit reads the "
                                    "texts' token scores)")
    if tokenizer is None:
        raise InvalidParameterError("tokenizer is required with a language model: the one it was trained with")
    if settings.get("release") not in (None, "scores"):
        raise InvalidParameterError(f"release {settings['release']!r}: a language model's audit reads its token "
                                    "log-probabilities (a scores release); give release='scores', or leave it out")
    dataset_inference = settings.pop("dataset_inference", False)
    if not isinstance(dataset_inference, bool):
        raise InvalidParameterError(f"dataset_inference must be True or False; got {dataset_inference!r}")
    cfg = _config(None, None, settings)
    cfg = cfg.model_copy(update={"text_column": text_column, "dataset_inference": dataset_inference})
    mem, non = _texts(members, text_column, "members"), _texts(nonmembers, text_column, "nonmembers")
    texts = LMTexts(mem, non, ["members"] * len(mem) + ["nonmembers"] * len(non),
                    np.r_[np.arange(len(mem)), np.arange(len(non))] + 1,
                    {"members": "the members given in memory", "nonmembers": "the non-members given in memory"})
    lm = wrap_causal_lm(model, tokenizer, device=cfg.device, source="from memory",
                        mismatch=("tokenizer", "the model", "give the model's own tokenizer"))
    refs = []
    pairs = [] if references is None else list(references) if isinstance(references, (list, tuple)) else [references]
    for i, r in enumerate(pairs):
        ref_model, ref_tok = r if isinstance(r, (tuple, list)) and len(r) == 2 else (r, tokenizer)
        if not is_causal_lm(ref_model):
            raise InvalidParameterError(f"references[{i}] is a {type(ref_model).__name__}, not a transformers causal "
                                        "language model (or a (model, tokenizer) pair)")
        refs.append(wrap_causal_lm(ref_model, ref_tok, device=cfg.device, source="from memory (a reference model)",
                                   mismatch=(f"the tokenizer of references[{i}]", f"references[{i}]",
                                             "give each reference model with its own tokenizer as a pair")))
        check_reference(lm, refs[-1], f"references[{i}]", "model")
    memory = {"model": model, "tokenizer": tokenizer, "members": members, "non-members": nonmembers,
              **{f"reference model {i + 1}": r.model for i, r in enumerate(refs)},
              **{f"tokenizer of reference model {i + 1}": r.tokenizer for i, r in enumerate(refs)
                 if r.tokenizer is not tokenizer}}
    return (_CORE.get() or audit_core)(cfg, data=texts, target=(lm, refs), command=call, verbose=verbose,
                                       inputs=memory)
