"""The audit pipeline: data -> target -> plan of analyses (each with its checks) -> verdict -> result -> files.

:func:`audit_core` runs an audit in memory: it prepares (reads, or is given) the inputs of one modality (a table's
records and model, or a language model's texts, model and per-token scores: :func:`prepare`), takes the plan of
that modality's analyses (:mod:`leakaudit.audit.plan`), derives from it the confidence at which each check is
judged (Bonferroni, so that together they hold at ``cfg.confidence``), runs it, and hands every check to the pure
:func:`~leakaudit.audit.result.verdict.decide`. Each analysis returns an
:class:`~leakaudit.audit.result.checks.Analysis`: its section of results.json, its checks and what it could not run
(with the reason and the input that would enable it), never silently dropped. :func:`run_audit` is the command
line's: the same, then the files (:meth:`AuditResult.save <leakaudit.audit.result.results.AuditResult.save>`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from .._results import record_name, write_json_atomic
from ..exceptions import AuditInterrupted
from .config import AuditConfig, Phrase, check_outputs_spare_inputs, phrase
from .context import AuditContext, Prepared, engine_stats
from .inputs.data import AuditData, file_names, prepare_data, row_lines
from .inputs.text import LMTexts, prepare_text, text_inputs
from .result.output import check_out_writable
from .assemble import assemble
from .plan import PLAN, check_confidence, plan_for, run_plan
from .progress import StageProgress as _Stages
from .progress import in_notebook
from .result.results import AuditResult
from .inputs.target import Target, on_device, prepare_target

__all__ = ["run_audit", "audit_core", "check_inputs", "prepare"]

DEFAULT_CACHE = ".leakaudit-cache"

#: the evidence record's role for the model the demo trains
DEMO_MODEL_ROLE = "model trained by the audit from its seed"


def _engine(cfg: AuditConfig, default_cache: str | None = DEFAULT_CACHE):
    """The engine that trains reference models: cfg's backend, and an on-disk cache so a killed audit resumes.

    The cache folder is ``cfg.cache_dir``, else ``$LEAKAUDIT_CACHE``, else ``default_cache``: the command line's
    ``.leakaudit-cache`` inside the output folder; None (the library's :func:`leakaudit.audit`, which writes
    nothing unless asked): no cache. Its keys cover the learner, its parameters, the data, the subsets and the
    seeds, so a changed setting never reads a stale entry.
    """
    from ..engine import Engine

    cache = cfg.cache_dir or os.environ.get("LEAKAUDIT_CACHE") or default_cache
    return Engine(backend=cfg.backend, address=cfg.address, cache_dir=cache)


def run_audit(cfg: AuditConfig, out: str | Path, *, command: str | None = None, verbose: bool | None = None,
              target: Target | None = None, memory_budget: int | str | None = None,
              work_budget: int | str | None = None, flags: bool = False, redact: bool = False) -> AuditResult:
    """Run the audit described by ``cfg`` and write results.json, records.csv and report.html to ``out``.

    The files are :meth:`AuditResult.save <leakaudit.audit.result.results.AuditResult.save>`'s (``redact`` as there);
    :func:`audit_core` runs the same audit in memory. ``verbose``, ``target``, ``memory_budget``, ``work_budget``
    and ``flags`` as there.
    """
    out = Path(out)
    check_out_writable(out)
    check_outputs_spare_inputs(cfg, out)
    result = audit_core(cfg, command=command, verbose=verbose, target=target, memory_budget=memory_budget,
                        work_budget=work_budget, written_to=out, flags=flags)
    result.save(out, redact=redact)
    return result


def audit_core(cfg: AuditConfig, *, data: AuditData | LMTexts | None = None, target: Target | tuple | None = None,
               command: str | None = None, verbose: bool | None = None, memory_budget: int | str | None = None,
               work_budget: int | str | None = None, written_to: Path | None = None,
               default_cache: str | None = DEFAULT_CACHE, inputs: Mapping[str, Any] | None = None,
               flags: bool = False, estimate: bool = False) -> AuditResult:
    """The audit in memory: prepare the inputs (:func:`prepare`), run the plan of their modality's analyses, decide;
    nothing is written.

    ``data``: the records, already read and encoded (:func:`leakaudit.audit.inputs.data.data_from_frames`), or a
    language model's texts (:class:`~leakaudit.audit.inputs.text.LMTexts`); None: read as ``cfg`` says.
    ``target``: an already prepared :class:`~leakaudit.audit.inputs.target.Target` (its model, its outputs on the
    members and non-members, and the learner that retrains it), or the audited :class:`~leakaudit.lm.load.LoadedLM`
    and a list of reference ones; None: the one ``cfg`` describes.

    ``verbose``: progress on stderr (:class:`~leakaudit.audit.progress.StageProgress`: stage lines, models trained
    of the total with the time left; plain lines when stderr is not a terminal, a tqdm bar in a notebook); None:
    only when stderr is a terminal or the process is a notebook's kernel; False: silent.

    ``memory_budget`` (bytes, or a size such as ``"4GB"``; None: a quarter of physical memory): trained models'
    outputs past it are kept in a temporary file on disk (:func:`leakaudit.engine.output_array`), with the same
    results; it also bounds what a model file may ask to load. ``work_budget`` (steps; None: ``$LEAKAUDIT_WORK_BUDGET``,
    else :data:`leakaudit.engine.DEFAULT_WORK_BUDGET`): a model file asking more work of one model is refused.
    ``written_to``: where the caller will write the result (named when the audit is interrupted).
    ``default_cache``: the cache folder when neither ``cfg.cache_dir`` nor ``$LEAKAUDIT_CACHE`` names one (None:
    no cache; :func:`_engine`). ``inputs``: the objects given in memory by role (the records, the predictions, the
    model), fingerprinted in the evidence record; the model the demo trains is added as
    :data:`DEMO_MODEL_ROLE`. ``flags``: notes name settings as the command line's flags (``--model``), else as
    the library's arguments (``model``). ``estimate``: return the plan's time estimate
    (:class:`~leakaudit.audit.estimate.Estimate`) once the inputs are read, instead of running it (nothing is cached
    or written; a language model's, which trains no model, before its texts are scored); with progress shown, an
    audit says it before its first analysis.

    An audit that cannot conclude "publish" whatever it finds (:func:`outcome_limit`: no training algorithm, so
    DTP-1 is not measurable) says so before the work: before reading its inputs where the settings or ``target``
    say so (predictions only), else once they are read, before the analyses; a note among the progress lines, or,
    with ``verbose`` off, one line on stderr (``flags``: the command line) or a
    :class:`~leakaudit.exceptions.NotEstimableWarning`.

    Returns
    -------
    AuditResult
        With its per-record table (``result.records``); ``result.save(out)`` writes the files.
    """
    verbose = (sys.stderr.isatty() or in_notebook()) if verbose is None else verbose
    if estimate and (cfg.is_lm or isinstance(data, LMTexts)):
        from .estimate import language_model_estimate

        return language_model_estimate()
    from ..learners import resolve_device

    resolve_device(cfg.device, name="device")  # a GPU that is not there: one line before any data is read
    with _limits(cfg.is_lm or isinstance(data, LMTexts), memory_budget, work_budget):
        st = _Stages(verbose)
        cache = None if default_cache is None or estimate else Path(written_to or ".") / default_cache
        p = prepare(cfg, st, data=data, target=target, inputs=inputs, flags=flags, cache=cache)
        try:
            return _run_plan(cfg, command, st, p, estimate)
        except KeyboardInterrupt:
            if p.engine is None:
                raise
            done = ", ".join(st.done) or "none"
            where = (f"during the {st.current} stage" if st.current else
                     f"after the {st.done[-1]} stage, while deciding and writing the results" if st.done else "")
            written = f"; nothing was written to {written_to}" if written_to is not None else ""
            cache = engine_stats(p.engine)["cache_dir"]
            kept = (f"the models trained so far are kept in the cache {cache}: run the same command to resume from "
                    "them" if cache else "no model was cached (give cache_dir to resume an interrupted audit)")
            raise AuditInterrupted(f"interrupted {where} (stages finished: {done}){written}; {kept}") from None
        finally:
            if p.engine is not None:
                p.engine.close()


def _run_plan(cfg: AuditConfig, command: str | None, st: _Stages, p: Prepared, estimate: bool = False):
    """The plan of ``p``'s modality run on ``p`` (its checks judged at the corrected confidence), and its result;
    ``estimate``: its time estimate instead, which progress lines of a tabular audit give before it runs."""
    from .estimate import estimate_plan

    plan = plan_for(p.modality)
    planned = plan.planned_checks(cfg, *p.checks_of)
    ctx = p.context(check_confidence(cfg.confidence, sum(planned.values())))
    if estimate or (st.verbose and p.modality == "tabular"):
        est = estimate_plan(plan, ctx)
        if estimate:
            return est
        if est.models:  # (none: the audit trains no model, and a model it cannot retrain had its note)
            st.note(f"estimate: {est.headline}")
        st.per_model = est.fit_seconds
    done = run_plan(plan, ctx, st, planned, tiers=cfg.tiered)
    return assemble(plan, done, p, cfg=cfg, command=command, planned=planned, check_confidence=ctx.check_confidence,
                    timings=st.timings)


@contextmanager
def _limits(text: bool, memory_budget: int | str | None, work_budget: int | str | None):
    """A tabular audit's bounds: one BLAS thread, and the memory and work budgets (which cover the model file's
    loading too); a language model's audit (``text``) runs without them."""
    if text:
        yield
        return
    from threadpoolctl import threadpool_limits

    from ..engine import using_memory_budget, using_work_budget

    # One BLAS thread for the whole audit: OpenBLAS splits some products differently over threads (1 ulp
    # apart on AVX2), so the same seed would give results that depend on OMP_NUM_THREADS and on the
    # machine's core count. The heavy work runs on leakaudit's own threads (the compiled kernels, the engine).
    with threadpool_limits(limits=1, user_api="blas"), using_memory_budget(memory_budget), \
            using_work_budget(work_budget):
        yield


def prepare(cfg: AuditConfig, st: _Stages, *, data=None, target=None, inputs: Mapping[str, Any] | None = None,
            flags: bool = False, cache: Path | None = None) -> Prepared:
    """The inputs of ``cfg``'s modality, read (or given: ``data``, ``target``, as :func:`audit_core` takes them)
    and checked, each stage a progress line of ``st``: a table's records and model, or a language model's texts,
    loaded model and per-token scores. ``cache``: the tabular engine's cache folder when ``cfg`` names none."""
    if cfg.is_lm or isinstance(data, LMTexts):
        return prepare_text(cfg, st, data, target, inputs)
    seeds = PLAN.seeds(cfg.seed)
    in_memory = data is not None
    limit = outcome_limit(cfg, target)  # the model given as predictions: said before any input is read
    if limit is not None:
        _say_limit(limit.words(flags=flags), st, flags)
    with st.stage("data", "loading and encoding records"):
        if data is None:
            data = prepare_data(cfg)
    with st.stage("target", "training or loading the audited model"):
        if target is None:
            target = prepare_target(cfg, data, random_state=seeds["target"])
        target.learner = on_device(target.learner, cfg.device)
    if limit is None and (limit := outcome_limit(cfg, target)) is not None:  # before any analysis spends time
        _say_limit(limit.words(flags=flags), st, flags)
    sources = _record_sources(cfg, data)
    lines = sources["line"] if sources["line"] is not None else [None] * len(sources["row"])
    names = tuple(record_name(s, r, index=i, line=k)
                  for s, r, i, k in zip(sources["source"], sources["row"], sources["index"], lines))
    records, value_cols = _records(data, sources, reserved={"pdtp", "pdtp_lower_bound", "risk_rank", "flagged_by"})
    engine = _engine(cfg, cache)
    st.attach(engine)  # models trained of the total, on stderr (never the engine's own bar on stdout)
    return Prepared("tabular", (data, target), lambda cc: AuditContext(
        cfg=cfg, data=data, target=target, seeds=seeds, engine=engine, check_confidence=cc, record_names=names),
        data={**data.summary(), "files": sources["files"], "record_columns": value_cols},
        target=target.summary(data), settings=_settings(cfg, target), records=records, in_memory=in_memory,
        memory=_memory_inputs(inputs, target), engine=engine)


def outcome_limit(cfg: AuditConfig, target: Target | None) -> Phrase | None:
    """Why this audit cannot conclude "publish", with the settings it names; None when nothing rules it out (without
    ``target``, before the inputs are read: when ``cfg`` alone does not say so, the model given as predictions).

    Without a training algorithm (the model's predictions only, or a torch module given without a learner) the
    DTP-1 check, which retrains the model without each record, is "not measurable" whenever the release shows
    scores; a check that is not measurable keeps the verdict from "publish" under either burden of proof."""
    kind = ("predictions" if cfg.predictions_train is not None else None) if target is None else \
        (None if target.learner is not None else target.kind)
    if kind is None or cfg.release == "labels":
        return None
    what = ("the audit has the model's predictions only ({0}), not the model ({1})" if kind == "predictions" else
            f"the audit cannot retrain this {kind} model (no training algorithm was given)")
    return phrase(f"{what}: the DTP-1 check retrains the model without each record, so it will be not measurable, "
                  "and the verdict can be \"do not publish\" or \"inconclusive\" but never \"publish\"; give the "
                  "model itself to measure it", *(["predictions_train", "model"] if kind == "predictions" else []))


def _say_limit(text: str, st: _Stages, flags: bool) -> None:
    """``text`` (:func:`outcome_limit`) as a note among the progress lines; when those are off, as one line on
    stderr at once on the command line (``flags``: a warning about the outcome, said before the work, never among
    the warnings summed up when the command ends), else as a warning."""
    if st.verbose:
        st.note(text)
    elif flags:
        print(f"leakaudit: warning: NotEstimableWarning: {text}", file=sys.stderr, flush=True)
    else:
        import warnings

        from ..exceptions import NotEstimableWarning

        warnings.warn(text, NotEstimableWarning, stacklevel=_outside_leakaudit())


def _outside_leakaudit() -> int:
    """The ``stacklevel`` of the first caller outside the leakaudit package (a warning names the user's line)."""
    root = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(root):
        frame, level = frame.f_back, level + 1
    return level

def check_inputs(cfg: AuditConfig, out: str | Path, *, memory_budget: int | str | None = None,
                 work_budget: int | str | None = None) -> dict:
    """Stages 1 and 2 only: read and reconcile the records, load (or train) the model and compute its outputs,
    then write ``out/inputs.json`` (the data and the model as the audit would see them, with the model's
    accuracy on the members and on the non-members). Refuses exactly what :func:`run_audit` refuses, in seconds."""
    out = Path(out)
    check_out_writable(out)
    with _limits(cfg.is_lm, memory_budget, work_budget):
        summary = text_inputs(cfg) if cfg.is_lm else _tabular_inputs(cfg, out)
    summary = {"leakaudit_version": __version__, "config": cfg.model_dump(mode="json"), **summary}
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "inputs.json", summary)
    return summary


def _tabular_inputs(cfg: AuditConfig, out: Path) -> dict:
    """The records and the model as a tabular audit would see them, and the quick recipe test."""
    seeds = PLAN.seeds(cfg.seed)
    data = prepare_data(cfg)
    target = prepare_target(cfg, data, random_state=seeds["target"])
    recipe = _quick_recipe_test(cfg, data, target, seeds, out) if target.learner is not None else None
    return {"data": data.summary(), "target": target.summary(data), **({} if recipe is None else {"recipe": recipe}),
            "estimate": _estimate(cfg, data, target, seeds).to_dict()}


def _estimate(cfg: AuditConfig, data: AuditData, target: Target, seeds: dict):
    """The audit's time estimate on these inputs (:func:`leakaudit.audit.estimate.estimate_plan`)."""
    from .context import AuditContext
    from .estimate import estimate_plan

    plan = plan_for("tabular")
    cc = check_confidence(cfg.confidence, sum(plan.planned_checks(cfg, data, target).values()))
    return estimate_plan(plan, AuditContext(cfg=cfg, data=data, target=target, seeds=seeds, check_confidence=cc))


def _quick_recipe_test(cfg: AuditConfig, data: AuditData, target: Target, seeds: dict, out: Path) -> dict:
    """Does retraining reproduce the given model on these members
    (:func:`leakaudit.audit.inputs.recipe.recipe_test`), with the smoke profile's reference models: the check of
    the inputs that a wrong member file fails. Its models are the ones a smoke audit of the same inputs, seed and
    cache trains first (the cache, in ``out`` unless named, keeps them)."""
    import time

    from .config import PROFILES
    from .context import AuditContext
    from .steps.membership import _reference_models
    from .inputs.recipe import recipe_test

    t0 = time.perf_counter()
    X_mem, X_non, _ = target.inputs(data)
    X, y = np.vstack([X_mem, X_non]), data.y_audit
    k = PROFILES["smoke"].n_reference
    # the membership stage's own reference models, as a smoke audit trains them (so its cache serves that audit)
    ctx = AuditContext(cfg=cfg.model_copy(update={"profile": "smoke"}), data=data, target=target, seeds=seeds,
                       engine=_engine(cfg, Path(out) / DEFAULT_CACHE), check_confidence=cfg.confidence)
    ref = _reference_models(ctx, X, y)[0].subset(slice(0, len(y)))
    r = recipe_test(target.probs_mem, target.probs_non, data.y_mem, data.y_non, ref.probs, ref.in_mask, y,
                    confidence=cfg.confidence)
    return {**r, "n_reference": k, "seconds": round(time.perf_counter() - t0, 2)}

def _memory_inputs(inputs: Mapping[str, Any] | None, target: Target) -> dict:
    """The inputs the evidence record fingerprints as objects: those given in memory, and the model the demo
    trained (it has no file; its digest identifies the model audited)."""
    out = dict(inputs or {})
    if target.kind == "demo":
        out[DEMO_MODEL_ROLE] = target.model
    return out


def _records(data: AuditData, sources: dict, *, reserved: set[str]) -> tuple[pd.DataFrame, list[str]]:
    """One row per audited record, members first, built in one step (a table of thousands of columns included):
    ``record`` (unique; a member's equals its index in results.json's DTP lists), ``source`` and ``row`` (where it
    is; row 1 = the first row after the header) and, for a text table's, ``line`` (its first line in its file) or,
    for tables given in memory with unique indexes, ``index`` (the DataFrame's index label) in place of ``row``,
    ``is_member``, ``label``, with a privacy unit ``unit`` (the record's unit as read), then the record's own
    values (the label as its class name, every feature column; one named like a column of ours, ``reserved``, or
    like an attack's score gets the prefix ``value_``). Returns the table and the names of the value columns."""
    n = len(data.y_mem) + len(data.y_non)
    values = pd.concat([data.frame_mem, data.frame_non], ignore_index=True)
    ours = {"record", "source", "row", "line", "index", "is_member", "label"} | reserved
    where = ({"index": pd.array(data.index_labels, dtype=object)} if data.index_labels is not None
             else {"row": sources["row"]} | ({} if sources["line"] is None else {"line": sources["line"]}))
    # with a privacy unit: each record's unit as read (its column is no feature, so it is ours, beside the label)
    unit = {} if data.unit is None else {"unit": np.r_[data.units_mem, data.units_non]}
    ours |= set(unit)
    columns = {"record": np.arange(n), "source": sources["source"], **where,
               "is_member": data.is_member, "label": data.y_audit, **unit,
               data.label: np.asarray(data.class_names, dtype=object)[data.y_audit]}
    if str(data.label) in ours or str(data.label).startswith(("score_", "p_")):
        columns[f"value_{data.label}"] = columns.pop(data.label)
    for col in values.columns:
        name = str(col) if str(col) not in ours and not str(col).startswith(("score_", "p_")) else f"value_{col}"
        columns[name] = values[col].to_numpy()
    table = pd.DataFrame(columns)
    return table, list(table.columns[4 + len(where) + len(unit):])

def _lines(lines: np.ndarray | None) -> str:
    """Where a row of a table file is among its lines (``lines``: :func:`row_lines`; None for Parquet, which has
    none): its line N + 1 where no blank line or cell holding a line break comes before it, else records.csv's
    ``line``."""
    if lines is None:
        return ""
    if np.array_equal(lines, np.arange(2, len(lines) + 2)):
        return ": row N is its line N + 1, after the header"
    return (": row N is not always its line N + 1 (a blank line or a cell holding a line break comes before some): "
            "records.csv's line gives each record's")


def _file_lines(path, ids: np.ndarray) -> np.ndarray | None:
    """The line of the file ``path`` on which each of its rows ``ids`` (0-based) starts; None for a table without
    lines, or where counting its lines does not give every row one."""
    lines = row_lines(path)
    return lines if lines is not None and (not len(ids) or int(ids.max()) < len(lines)) else None


def _record_sources(cfg: AuditConfig, data: AuditData) -> dict:
    """Where each audited record comes from: ``source`` (which file), ``row`` (1 = the first row after its header;
    for the demo, the record's row in the bundled data set), ``line`` (for the records of the user's text tables,
    each one's first line in its file, by which sentences name it; else None) and ``files`` (what each source
    names)."""
    n_m, n_n = len(data.y_mem), len(data.y_non)
    ids_m, ids_n = np.asarray(data.record_ids_mem, int), np.asarray(data.record_ids_non, int)
    line = None
    if data.sources is not None:  # tables given in memory: "members" and "nonmembers"
        src = ["members"] * n_m + ["nonmembers"] * n_n
        files = dict(data.sources)
    elif cfg.is_demo:  # the bundled files: adult.data.gz has no header, adult.test.gz one line before its records
        src = list(data.record_files)
        files = {f"adult.{p}.gz": f"adult/adult.{p}.gz, shipped with leakaudit (evidence.json gives its SHA-256): "
                                  f"row N is its line N{skip}" for p, skip in (("data", ""), ("test", " + 1"))}
    elif cfg.data is not None:  # record_ids are the rows of the --data file
        mc = cfg.membership_column
        name = Path(cfg.data).name
        src = [name] * (n_m + n_n)
        lines = _file_lines(cfg.data, np.r_[ids_m, ids_n])
        line = None if lines is None else lines[np.r_[ids_m, ids_n]]
        files = {name: f"{cfg.data} (members: {mc} = 1, non-members: {mc} = 0){_lines(lines)}"}
    else:
        tr, te = file_names(cfg)
        src = [tr] * n_m + [te] * n_n
        l_tr, l_te = _file_lines(cfg.train, ids_m), _file_lines(cfg.test, ids_n)
        if l_tr is not None and l_te is not None:
            line = np.r_[l_tr[ids_m], l_te[ids_n]]
        files = {tr: f"{cfg.train} (members){_lines(l_tr)}",
                 te: f"{cfg.test} (non-members){_lines(l_te)}"}
    rows = np.r_[ids_m, ids_n] + 1
    labels = data.index_labels
    return {"source": src, "row": rows, "index": labels if labels is not None else [None] * len(rows),
            "line": line, "files": files}


def _plain(v):
    """A parameter value as JSON writes it: numbers, text, booleans and null (never a Python repr of a dict)."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return ", ".join(str(_plain(x)) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={_plain(x)}" for k, x in v.items()) or "none"
    return str(v)


def _settings(cfg: AuditConfig, target: Target) -> dict:
    """What the profile made each analysis do, and the recipe that retrains the audited model.

    ``retraining_recipe`` (every retrainable target): ``algorithm`` (what trains the reference, shadow and
    leave-one-out models) and its ``parameters``, as plain values: the torch module's ``[training]`` recipe, the demo
    network's, leakaudit's RandomForest's (a scikit-learn forest's parameters), or the given scikit-learn
    estimator as scikit-learn writes it (one entry per step of a Pipeline; it is cloned and refitted, with a fresh
    seed per model).
    """
    from .steps.membership import shadow_plan

    from ..learners import capabilities, resolve_device

    st = cfg.settings
    out = {"profile": cfg.profile, **st.model_dump(), "device": resolve_device(cfg.device)}
    k, batch, _ = shadow_plan(cfg)
    out["shadow_attack_models"], out["shadow_attack_batch"] = (st.n_reference if k is None else k), batch
    out["shadow_attack"] = ("Shokri et al.'s attack as Long et al. run it (Algorithm 1): attack network of 32 ReLU "
                            "units on (x, onehot(y), binned outputs), SGD lr 0.01 (scaled by the batch), 30 epochs; "
                            "its shadow models are the first reference models")
    learner = target.learner
    if learner is None:
        return out
    recipe = getattr(learner, "recipe", None)
    if callable(recipe):  # a torch module's class, retrained: named by its class, its arguments as "name=value"
        r = dict(recipe())
        kwargs = r.pop("module_kwargs", None) or {}
        cls = (str(r.get("module") or "").rpartition(":")[2]
               or (type(target.model).__name__ if target.model is not None else "the given module"))
        r = {"algorithm": f"fresh instances of {cls}, trained by leakaudit", "module": r.pop("module", None),
             "module_arguments": ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) or None, "parameters": r}
    else:
        est = getattr(learner, "estimator", None)
        if est is not None:  # a scikit-learn estimator, cloned and refitted
            steps = getattr(est, "steps", None)  # a Pipeline: one entry per step, in order; else its repr
            r = {"algorithm": f"scikit-learn's {type(est).__name__}, cloned from the given model and refitted",
                 "parameters": {f"step {i + 1}: {name}": repr(step) for i, (name, step) in enumerate(steps)}
                 if steps else {"estimator": repr(est)}}
        else:
            skip = ("n_threads", "batched", "device", "backend", "sparse_input")  # how, not what
            params = {k: v for k, v in learner.get_params(deep=False).items() if k not in skip}
            if params.get("mode") == "faithful":  # TorchMLP: per-example SGD; batch size and optimizer do not apply
                params.pop("batch_size", None)
                params["optimizer"] = "per-example SGD (batch 1, fixed row permutation)"
            implements = capabilities(learner).implements
            r = {"algorithm": f"leakaudit's {type(learner).__name__}" + (f" ({implements})" if implements else ""),
                 "parameters": params}
    # a parameter left unset (None) takes the algorithm's default: not listed
    r["parameters"] = {k: _plain(v) for k, v in r["parameters"].items() if v is not None}
    out["retraining_recipe"] = {**r, "seeds": "a fresh seed per model, derived from the audit seed"}
    return out
