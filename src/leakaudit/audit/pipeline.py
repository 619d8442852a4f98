"""The audit pipeline: data -> target -> analyses (each with its checks) -> verdict -> files.

Each analysis returns an :class:`~leakaudit.audit.checks.Analysis`: its section of results.json, its checks and
what it could not run (with the reason and the flag that would enable it), never silently dropped. The verdict is
computed from the checks alone; each check is judged at a Bonferroni-corrected confidence so that together they
hold at ``cfg.confidence``. Outputs are written to a
temporary folder beside ``out`` and moved in only when complete, so a failed
audit leaves an existing output folder as it was.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from .._random import spawn_seeds
from .._resources import peak_rss_mb
from .._results import write_json_atomic
from ..exceptions import AuditInterrupted, LeakauditError
from .config import AuditConfig
from .context import AuditContext, engine_stats
from .data import AuditData, prepare_data
from .results import AuditResult
from .target import Target, prepare_target
from .verdict import decide

__all__ = ["run_audit", "check_inputs"]

# Child seeds of the audit seed, one per stage, so stages do not share streams.
# New slots go at the end: the seeds of the earlier ones do not change (spawn_seeds is prefix-stable).
_SEED_SLOTS = ("target", "reference", "pdtp", "noise_floor", "attribute", "property", "bootstrap", "mip", "shadow",
               "dtp_test", "epsilon")


class _Stages:
    """Timing and progress lines for each stage (quiet when not on a terminal)."""

    def __init__(self, verbose: bool):
        self.timings: dict[str, float] = {}
        self.current: str | None = None
        self.done: list[str] = []
        self.verbose = verbose
        self._console = None
        if verbose:
            from rich.console import Console

            self._console = Console(stderr=True)

    @contextmanager
    def stage(self, name: str, what: str):
        t0 = time.perf_counter()
        if self._console:
            self._console.print(f"[bold]{name}[/bold]: {what} ...")
        self.current = name
        try:
            yield
            self.done.append(name)
        finally:
            self.timings[name] = round(time.perf_counter() - t0, 3)
            if self._console:
                self._console.print(f"  {name} done in {self.timings[name]:.1f} s")


DEFAULT_CACHE = ".leakaudit-cache"


def _engine(cfg: AuditConfig):
    """The engine that trains reference models: cfg's backend, and an on-disk cache so a killed audit resumes.

    The cache folder is ``cfg.cache_dir``, else ``$LEAKAUDIT_CACHE``, else ``.leakaudit-cache`` in the
    working directory. Its keys cover the learner, its parameters, the data, the subsets and the seeds,
    so a changed setting never reads a stale entry.
    """
    from ..engine import Engine

    cache = cfg.cache_dir or os.environ.get("LEAKAUDIT_CACHE") or DEFAULT_CACHE
    return Engine(backend=cfg.backend, address=cfg.address, cache_dir=cache)


def _check_out_writable(out: Path) -> None:
    """Refuse an output folder that cannot be written before any work is done (not after every stage has run)."""
    if out.exists() and not out.is_dir():
        raise LeakauditError(f"--out {out} exists and is not a folder")
    p = out
    while not p.exists():
        p = p.parent
    if not p.is_dir():
        raise LeakauditError(f"--out {out} cannot be created: {p} is a file, not a folder")
    try:  # what the audit will do at the end: a temporary folder beside (or inside) the output, then a rename
        os.rmdir(tempfile.mkdtemp(prefix=".leakaudit-write-check-", dir=p))
    except OSError as exc:
        raise LeakauditError(f"--out {out} cannot be written ({exc.strerror or exc} in {p})") from None


def _write_outputs(tmp: Path, result: AuditResult, records: pd.DataFrame) -> None:
    write_json_atomic(tmp / "results.json", result.to_dict())
    records.to_csv(tmp / "records.csv", index=False)
    from ..report import write_report

    write_report(tmp)


def _move_into(tmp: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for f in tmp.iterdir():
        os.replace(f, out / f.name)
    shutil.rmtree(tmp, ignore_errors=True)


def run_audit(cfg: AuditConfig, out: str | Path, *, command: str | None = None, verbose: bool | None = None,
              target: Target | None = None) -> AuditResult:
    """Run the audit described by ``cfg`` and write results.json, records.csv and report.html to ``out``.

    ``target`` (library use): an already prepared :class:`~leakaudit.audit.target.Target` (its model, its outputs
    on the members and non-members, and the learner that retrains it) instead of the one ``cfg`` describes; the
    calibration suite audits models trained on other records this way.
    """
    out = Path(out)
    _check_out_writable(out)
    verbose = sys.stderr.isatty() if verbose is None else verbose
    from threadpoolctl import threadpool_limits

    # One BLAS thread for the whole audit: OpenBLAS splits some products differently over threads (1 ulp
    # apart on AVX2), so the same seed would give results that depend on OMP_NUM_THREADS and on the
    # machine's core count. The heavy work runs on leakaudit's own threads (numba, native kernels, engine).
    with threadpool_limits(limits=1, user_api="blas"):
        st = _Stages(verbose)
        seeds = dict(zip(_SEED_SLOTS, spawn_seeds(cfg.seed, len(_SEED_SLOTS))))
        with st.stage("data", "loading and encoding records"):
            data = prepare_data(cfg)
        with st.stage("target", "training or loading the audited model"):
            if target is None:
                target = prepare_target(cfg, data, random_state=seeds["target"])
        engine = _engine(cfg)
        try:
            return _run_stages(cfg, out, command, st, seeds, data, target, engine)
        except KeyboardInterrupt:
            done = ", ".join(st.done) or "none"
            raise AuditInterrupted(
                f"interrupted during the {st.current} stage (stages finished: {done}); nothing was written to {out}; "
                f"the models trained so far are kept in the cache {engine_stats(engine)['cache_dir']}: run the same command to "
                "resume from them") from None
        finally:
            engine.close()


def check_inputs(cfg: AuditConfig, out: str | Path) -> dict:
    """Stages 1 and 2 only: read and reconcile the records, load (or train) the model and compute its outputs,
    then write ``out/inputs.json`` (the data and the model as the audit would see them, with the model's
    accuracy on the members and on the non-members). Refuses exactly what :func:`run_audit` refuses, in seconds."""
    out = Path(out)
    _check_out_writable(out)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        seeds = dict(zip(_SEED_SLOTS, spawn_seeds(cfg.seed, len(_SEED_SLOTS))))
        data = prepare_data(cfg)
        target = prepare_target(cfg, data, random_state=seeds["target"])
    summary = {"leakaudit_version": __version__, "config": cfg.model_dump(mode="json"), "data": data.summary(),
               "target": target.summary(data)}
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "inputs.json", summary)
    return summary


def _n_checks(cfg: AuditConfig, data: AuditData, target: Target) -> int:
    """How many checks the verdict may rest on, counted before any is run (for the Bonferroni correction).

    Per attack: AUC and TPR at the low FPR (and the empirical epsilon with a budget); one per sensitive column;
    DTP-1. Counting a check that later cannot run only makes the correction more conservative.
    """
    from .membership_stage import planned_attacks

    per_attack = 2 + (cfg.epsilon_budget is not None)
    return len(planned_attacks(target, data)) * per_attack + len(data.sensitive or []) + 1


def _run_stages(cfg, out, command, st, seeds, data, target, engine) -> AuditResult:
    from .attribute_stage import attribute_analysis
    from .dtp_stage import dtp_analysis
    from .membership_stage import membership_analysis
    from .mip_stage import mip_analysis
    from .property_stage import property_analysis

    k = _n_checks(cfg, data, target)
    ctx = AuditContext(cfg=cfg, data=data, target=target, seeds=seeds, engine=engine,
                       check_confidence=1 - (1 - cfg.confidence) / k)
    with st.stage("membership", "membership attacks"):
        membership = membership_analysis(ctx)
    recipe = membership.extras.get("recipe")
    with st.stage("dtp", "leave-one-out PDTP of the training records"):
        dtp = dtp_analysis(ctx, recipe=recipe, lira=membership.per_record.get("score_lira"))
    with st.stage("attribute", "attribute inference of the sensitive columns"):
        attribute = attribute_analysis(ctx)
    with st.stage("property", "estimating each sensitive group's share of the training data"):
        prop = property_analysis(ctx)
    with st.stage("mip", "MIP noise for eta = 0.05 and its accuracy cost"):
        mip = mip_analysis(ctx)
    analyses = (membership, dtp, attribute, prop, mip)
    verdict = decide(cfg, [c for a in analyses for c in a.checks], recipe=recipe,
                     check_confidence=ctx.check_confidence)
    n_m, n_n = len(data.y_mem), len(data.y_non)
    rec = pd.DataFrame({
        "record": np.r_[np.arange(n_m), np.arange(n_n)],
        "is_member": data.is_member,
        "label": data.y_audit,
    })
    for a in (dtp, membership):
        for col, values in a.per_record.items():
            rec[col] = values
    rec["risk_rank"] = _risk_rank(rec)
    peak_mb = peak_rss_mb()
    resources = {k: v for a in analyses for k, v in a.resources.items()}
    result = AuditResult(
        leakaudit_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        command=command or "leakaudit audit",
        config=cfg.model_dump(mode="json"),
        data=data.summary(),
        target=target.summary(data),
        membership=membership.summary or {},
        dtp=dtp.summary,
        attribute=attribute.summary or {},
        property=prop.summary or {},
        mip=mip.summary,
        skipped=[s.model_dump() for a in analyses for s in a.skipped],
        verdict=verdict,
        timings=st.timings,
        resources={"peak_memory_mb": round(peak_mb, 1), **resources},
        settings=_settings(cfg, target),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _write_outputs(tmp, result, rec)
        _move_into(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def _settings(cfg: AuditConfig, target: Target) -> dict:
    """What the profile made each analysis do, and how a torch module target is retrained."""
    from .membership_stage import shadow_plan

    st = cfg.settings
    out = {"profile": cfg.profile, **st.model_dump()}
    k, batch, _ = shadow_plan(cfg)
    out["shadow_attack_models"], out["shadow_attack_batch"] = (st.n_reference if k is None else k), batch
    out["shadow_attack"] = ("Shokri et al.'s attack as Long et al. run it (Algorithm 1): attack network of 32 ReLU "
                            "units on (x, onehot(y), binned outputs), SGD lr 0.01 (scaled by the batch), 30 epochs; "
                            "its shadow models are the first reference models")
    recipe = getattr(target.learner, "recipe", None)
    if callable(recipe):
        out["retraining_recipe"] = recipe()
    return out


def _risk_rank(rec: pd.DataFrame) -> np.ndarray:
    """Rank of each record by its mean percentile over PDTP and every attack score (1 = riskiest)."""
    cols = [c for c in rec.columns if c.startswith("score_") or c == "pdtp"]
    if not cols:
        return np.arange(1, len(rec) + 1)
    pct = pd.concat([rec[c].rank(pct=True) for c in cols], axis=1).mean(axis=1, skipna=True)
    return pct.rank(ascending=False, method="first").to_numpy(int)
