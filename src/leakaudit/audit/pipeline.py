"""The audit pipeline: data -> target -> attacks and metrics -> verdict -> files.

Each stage returns plain results; a capability that cannot run (no training
algorithm, no sensitive column, a missing optional dependency) is recorded as
skipped with its reason, never silently dropped. Outputs are written to a
temporary folder beside ``out`` and moved in only when complete, so a failed
audit leaves an existing output folder as it was.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import shutil
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from .._random import spawn_seeds
from .._resources import peak_rss_mb
from .._results import write_json_atomic
from ..exceptions import LeakauditError, NotEstimableWarning
from ..metrics import evaluate_membership
from .config import AuditConfig
from .data import AuditData, prepare_data
from .results import AuditResult
from .target import Target, prepare_target
from .verdict import decide

__all__ = ["run_audit"]

# Child seeds of the audit seed, one per stage, so stages do not share streams.
# New slots go at the end: the seeds of the earlier ones do not change (spawn_seeds is prefix-stable).
_SEED_SLOTS = ("target", "reference", "pdtp", "noise_floor", "attribute", "property", "bootstrap", "mip", "shadow")


class _Stages:
    """Timing and progress lines for each stage (quiet when not on a terminal)."""

    def __init__(self, verbose: bool):
        self.timings: dict[str, float] = {}
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
        try:
            yield
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


def _cache_dir(engine) -> str | None:
    return str(engine.cache_dir) if getattr(engine, "cache_dir", None) else None


def _output_votes(learner) -> int | None:
    """T when the models' outputs are means of T trees' votes (a random forest), else None.

    LiRA then scales confidences by the empirical logit of the votes (``LiRA(votes=T)``), which stays finite when
    every tree agrees; the floored logit would put those records at +-103.6.
    """
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    from ..learners import RandomForest
    from ..learners.sklearn import SklearnLearner

    if isinstance(learner, RandomForest):
        return int(learner.n_estimators)
    if isinstance(learner, SklearnLearner) and isinstance(learner.estimator, (RandomForestClassifier,
                                                                               ExtraTreesClassifier)):
        return int(learner.estimator.n_estimators)
    return None


def _membership_stage(cfg: AuditConfig, data: AuditData, target: Target, seeds: dict, skipped: list,
                      resources: dict, engine) -> tuple[dict, dict]:
    """Run every applicable membership attack; return (metrics per attack, scores per attack)."""
    from ..membership._base import AttackInputs, cross_entropy_loss, fit_reference_models, paired_half_masks
    from ..membership.shadow import ShadowModelAttack
    from ..membership.threshold import LossThresholdAttack

    probs = np.vstack([target.probs_mem, target.probs_non])
    X_mem, X_non, X_pop = target.inputs(data)
    X_audit = np.vstack([X_mem, X_non])
    y = data.y_audit
    m = data.is_member
    train_loss = float(np.mean(cross_entropy_loss(target.probs_mem, data.y_mem)))
    inputs = AttackInputs(probs=probs, y=y, X=X_audit, train_loss=train_loss)
    attacks = [LossThresholdAttack()]
    # The shadow attack's record features are the encoded columns (a table-taking estimator's own inputs are
    # row numbers, which carry nothing about a record).
    X_features = np.vstack([data.X_mem, data.X_non])
    if target.learner is None:
        skipped.append({"name": "LiRA, RMIA, shadow (reference-model attacks)",
                        "reason": f"the training algorithm is not available for a {target.kind} target; "
                                  "give a skops estimator, a torch module class with its state_dict, or the demo "
                                  "learner to retrain reference models"})
    else:
        from ..membership.lira import LiRA
        from ..membership.rmia import RMIA

        n_audit = len(y)
        n_pop = len(data.y_pop) if target.probs_pop is not None else 0
        X_all = np.vstack([X_audit, X_pop]) if n_pop else X_audit
        y_all = np.concatenate([y, data.y_pop]) if n_pop else y
        mask = paired_half_masks(n_audit, cfg.settings.n_reference, seeds["reference"])
        if n_pop:  # population records are never trained on: RMIA's z samples
            mask = np.hstack([mask, np.zeros((mask.shape[0], n_pop), bool)])
        ref = fit_reference_models(target.learner, X_all, y_all, cfg.settings.n_reference, in_mask=mask,
                                   n_classes=data.n_classes, random_state=seeds["reference"], engine=engine)
        st = engine.stats
        resources["reference_models"] = {
            "n_models": int(st.n_models), "trained": int(st.models_trained), "chunks_from_cache": int(st.chunks_cached),
            "chunks_trained": int(st.chunks_trained), "corrupt_cache_entries": int(st.corrupt_entries),
            "cache_dir": _cache_dir(engine),
            "backend": cfg.backend,
        }
        inputs = AttackInputs(
            probs=probs, y=y, X=X_audit, train_loss=train_loss, reference=ref.subset(np.arange(n_audit)),
            population_probs=target.probs_pop if n_pop else None, population_y=data.y_pop if n_pop else None,
            population_reference=ref.subset(np.arange(n_audit, n_audit + n_pop)) if n_pop else None,
        )
        attacks += [LiRA(votes=_output_votes(target.learner)), RMIA(),
                    ShadowModelAttack(batch_size=_shadow_plan(cfg)[1], random_state=seeds["shadow"])]
    metrics, scores = {}, {}
    for atk in attacks:
        missing = atk.missing(inputs)
        if missing:
            skipped.append({"name": atk.name, "reason": f"needs {', '.join(missing)}"})
            continue
        if isinstance(atk, ShadowModelAttack):
            res = _shadow_attack(cfg, atk, inputs, X_features, resources)
        else:
            res = atk.run(inputs)
        s = res.scores_array
        scores[atk.name] = s
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotEstimableWarning)
            metrics[atk.name] = evaluate_membership(m, s, n_boot=cfg.settings.n_boot, confidence=cfg.confidence,
                                                    random_state=seeds["bootstrap"]).model_dump()
    return metrics, scores


def _shadow_attack(cfg: AuditConfig, atk, inputs, X_features: np.ndarray, resources: dict):
    """Shokri et al.'s shadow-model attack, with the first reference models as its shadow models.

    The reference models already trained for LiRA and RMIA are exactly what Long et al.'s Algorithm 1
    needs: models of the same training algorithm, each trained on a known half of the audited records.
    The first ``shadow_attack_models`` of them (whole complementary pairs, so every record is seen "in"
    and "out" equally often) give the attack network ``shadow_attack_models * n`` training rows
    ``(x, onehot(y), bin(q))`` labelled in/out; the network then scores the target's outputs.
    """
    ref = inputs.reference
    k, _, note = _shadow_plan(cfg)
    k = ref.n_models if k is None else min(int(k), ref.n_models)
    cap = max(2, int(cfg.settings.shadow_attack_max_rows) // max(1, inputs.n))
    if k > cap:
        k = cap
        capped = (f"{k} of {ref.n_models} reference models used as shadow models: the attack network's training "
                  f"rows are capped at shadow_attack_max_rows = {cfg.settings.shadow_attack_max_rows:,}")
        note = f"{note}; {capped}" if note else capped
    k = max(2, k - k % 2)  # whole pairs
    t0 = time.perf_counter()
    res = atk.run(dataclasses.replace(inputs, X=X_features, reference=ref.models(slice(0, k))))
    resources["shadow_attack"] = {
        "n_shadow_models": int(k),
        "n_reference_models": int(ref.n_models),
        "attack_training_rows": int(k * inputs.n),
        "network": f"{atk.hidden} ReLU units, SGD lr {atk.learning_rate}, batch {atk.batch_size}, {atk.epochs} epochs"
                   + (f", trainer {atk.get_params().get('backend')}" if "backend" in atk.get_params() else ""),
        "uses_record_features": bool(atk.use_features),
        "seconds": round(time.perf_counter() - t0, 3),
        **({"note": note} if note else {}),
    }
    return res


def _shadow_plan(cfg: AuditConfig) -> tuple[int | None, int, str | None]:
    """(shadow models, attack batch, note): the profile's, or the fallback without the compiled trainer."""
    from ..membership import shadow
    from .config import SHADOW_FALLBACK_BATCH, SHADOW_FALLBACK_MODELS

    k, batch = cfg.settings.shadow_attack_models, cfg.settings.shadow_attack_batch
    if batch == 1 and not shadow._numba_ready():  # per-example SGD in scikit-learn: ~1,000x slower
        k = SHADOW_FALLBACK_MODELS if k is None else min(k, SHADOW_FALLBACK_MODELS)
        return k, SHADOW_FALLBACK_BATCH, ("the compiled per-example trainer is not available: scikit-learn "
                                          f"mini-batches of {SHADOW_FALLBACK_BATCH}, at most "
                                          f"{SHADOW_FALLBACK_MODELS} shadow models")
    return k, batch, None


class _CountingEngine:
    """Forwards ``predict_many`` to an engine and adds up its stats over every call (for results.json)."""

    def __init__(self, engine):
        self.engine = engine
        self.totals = {"n_models": 0, "trained": 0, "chunks_from_cache": 0, "chunks_trained": 0,
                       "corrupt_cache_entries": 0}

    def predict_many(self, *args, **kwargs):
        out = self.engine.predict_many(*args, **kwargs)
        st = self.engine.stats
        for k, v in (("n_models", st.n_models), ("trained", st.models_trained), ("chunks_from_cache", st.chunks_cached),
                     ("chunks_trained", st.chunks_trained), ("corrupt_cache_entries", st.corrupt_entries)):
            self.totals[k] += int(v)
        return out


def _dtp_stage(cfg: AuditConfig, data: AuditData, target: Target, seeds: dict, skipped: list, resources: dict,
               engine):
    """PDTP of the training records (paired seeds) and the seed noise floor, every model through the engine's
    cache (chunked exactly as one call: see :class:`leakaudit.dtp.pdtp.SharedOrderBlock`)."""
    if target.learner is None:
        skipped.append({"name": "PDTP / DTP-1", "reason": "needs the training algorithm to retrain leave-one-out models"})
        return None, None
    from ..dtp.noise_floor import seed_noise_floor
    from ..dtp.pdtp import pdtp

    n = len(data.y_mem)
    X_mem = target.inputs(data)[0]
    k = cfg.settings.pdtp_records
    rng = np.random.default_rng(seeds["pdtp"])
    records = np.arange(n) if k is None or k >= n else np.sort(rng.choice(n, size=k, replace=False))
    # "paired": each leave-one-out model shares the full model's seed and row order, skipping t, so the
    # measured change is t's own influence; the seed noise floor beside it shows what init noise alone does.
    counted = _CountingEngine(engine)
    res = pdtp(target.learner, X_mem, data.y_mem, records=records, n_classes=data.n_classes,
               seed_policy="paired", n_repeats=cfg.settings.pdtp_repeats, random_state=seeds["target"],
               engine=counted, keep_outputs=False)
    values = np.asarray(res.values, float)
    resources["pdtp_models"] = {**counted.totals, "cache_dir": _cache_dir(engine)}
    counted = _CountingEngine(engine)
    nf = seed_noise_floor(target.learner, X_mem, data.y_mem, queries=records[: min(200, len(records))],
                          n_models=cfg.settings.noise_floor_models, n_classes=data.n_classes,
                          random_state=seeds["noise_floor"], engine=counted)
    resources["noise_floor_models"] = {**counted.totals, "cache_dir": _cache_dir(engine)}
    std = np.asarray(nf.max_std_log_p, float)
    std = std[np.isfinite(std)]
    floor = {"median": float(np.median(std)) if std.size else float("nan"),
             "p90": float(np.quantile(std, 0.9)) if std.size else float("nan"),
             "n_models": int(cfg.settings.noise_floor_models),
             "what": "std over retrainings with other seeds of the largest-class ln p (binned), Long et al. Fig 7"}
    thr = cfg.thresholds.max_dtp
    summary = {
        "n_records": int(len(records)),
        "max": float(np.max(values)),
        "mean": float(np.mean(values)),
        "n_above": int(np.sum(values > thr)),
        "records_above": [int(r) for r in records[values > thr]],
        "seed_policy": "paired",
        "bin_width": 0.01,
        "noise_floor": floor,
        "kind": "PDTP (a lower bound on DTP: direct queries only)",
    }
    per_record = np.full(n, np.nan)
    per_record[records] = values
    return summary, per_record


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
    if out.exists() and not out.is_dir():
        raise LeakauditError(f"--out {out} exists and is not a folder")
    verbose = sys.stderr.isatty() if verbose is None else verbose
    from threadpoolctl import threadpool_limits

    # One BLAS thread for the whole audit: OpenBLAS splits some products differently over threads (1 ulp
    # apart on AVX2), so the same seed would give results that depend on OMP_NUM_THREADS and on the
    # machine's core count. The heavy work runs on leakaudit's own threads (numba, native kernels, engine).
    with threadpool_limits(limits=1, user_api="blas"):
        st = _Stages(verbose)
        seeds = dict(zip(_SEED_SLOTS, spawn_seeds(cfg.seed, len(_SEED_SLOTS))))
        skipped: list[dict] = []
        resources: dict = {}
        with st.stage("data", "loading and encoding records"):
            data = prepare_data(cfg)
        with st.stage("target", "training or loading the audited model"):
            if target is None:
                target = prepare_target(cfg, data, random_state=seeds["target"])
        engine = _engine(cfg)
        try:
            return _run_stages(cfg, out, command, st, seeds, skipped, resources, data, target, engine)
        finally:
            engine.close()


def _run_stages(cfg, out, command, st, seeds, skipped, resources, data, target, engine) -> AuditResult:
    with st.stage("membership", "membership attacks"):
        membership, scores = _membership_stage(cfg, data, target, seeds, skipped, resources, engine)
    with st.stage("dtp", "leave-one-out PDTP of the training records"):
        dtp, pdtp = _dtp_stage(cfg, data, target, seeds, skipped, resources, engine)
    with st.stage("attribute", "attribute inference of the sensitive columns"):
        from .attribute_stage import attribute_stage

        attribute = attribute_stage(cfg, data, target, seeds, skipped)
    with st.stage("property", "estimating each sensitive group's share of the training data"):
        from .property_stage import property_stage

        prop = property_stage(cfg, data, target, seeds, skipped, engine)
    with st.stage("mip", "MIP noise for eta = 0.05 and its accuracy cost"):
        from .mip_stage import mip_stage

        mip = mip_stage(cfg, data, target, seeds, skipped)
    verdict = decide(cfg, membership=membership, dtp=dtp, attribute=attribute)
    n_m, n_n = len(data.y_mem), len(data.y_non)
    rec = pd.DataFrame({
        "record": np.r_[np.arange(n_m), np.arange(n_n)],
        "is_member": data.is_member,
        "label": data.y_audit,
    })
    if pdtp is not None:
        rec["pdtp"] = np.r_[pdtp, np.full(n_n, np.nan)]
    for name, s in scores.items():
        rec[f"score_{name}"] = s
    rec["risk_rank"] = _risk_rank(rec)
    peak_mb = peak_rss_mb()
    result = AuditResult(
        leakaudit_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        command=command or "leakaudit audit",
        config=cfg.model_dump(mode="json"),
        data=data.summary(),
        target=target.summary(data),
        membership=membership,
        dtp=dtp,
        attribute=attribute,
        property=prop,
        mip=mip,
        skipped=skipped,
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
    st = cfg.settings
    out = {"profile": cfg.profile, **st.model_dump()}
    k, batch, _ = _shadow_plan(cfg)
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
