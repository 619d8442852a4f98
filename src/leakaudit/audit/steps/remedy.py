"""Audit analysis: what a boosted-tree recipe's own settings would change, measured by retraining (for "What to do
next").

A boosted tree singles a member out where a leaf or a histogram bin holds few records: the member's own value then
sets a split's threshold or a bin's edge. For an XGBoost, LightGBM or CatBoost model whose membership or DTP-1 check
is exceeded, each setting of :data:`SETTINGS` that coarsens those (larger leaves or shallower trees; fewer bins) is
applied to the recipe alone, and the recipe is retrained on the members with it and without it over paired seeds (one
seed when the recipe's seed does not matter). Measured for each setting:

* the loss attack's AUC (Yeom et al.'s threshold adversary: a record's score is the log-probability of its label),
  members against non-members, before and after, and the paired change with DeLong's interval (each record's
  placements averaged over the seeds: the records are the sampling unit);
* the accuracy on the non-members before and after, and the paired cost (:func:`leakaudit.dtp.removal.accuracy_cost`);
* when DTP-1 is exceeded, the PDTP of its records under the setting (paired seeds as the DTP step measures it, their
  mean over the profile's repeats; not re-tested for significance, and the other members not re-measured).

Informational: it adds no check and does not change the verdict.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from ..._random import spawn_seeds
from ...dtp import pdtp
from ...dtp.removal import accuracy_cost
from ...exceptions import TrainingFailedError
from ...learners import capabilities
from ...metrics import delong_placements
from ..context import AuditContext, engine_stats
from ..inputs.units import member_units
from ..result.checks import Analysis, Skipped

__all__ = ["SETTINGS", "remedy_analysis", "remedy_applies", "remedy_models"]

#: per boosted library (the target's kind), the settings that make a member's own leaf or bin less likely: (what,
#: parameter, the library's default, the value tried from the recipe's ``v`` and the members' count ``n`` (a leaf
#: minimum 5 times the recipe's, at least the library's default, at most n), and whether the recipe uses the parameter)
_EIGHTH, _ALWAYS = (lambda v, n: max(4, int(v) // 8)), (lambda params: True)
SETTINGS = {
    "xgboost": (("larger leaves", "min_child_weight", 1.0, lambda v, n: min(max(5 * v, 1.0), n), _ALWAYS),
                ("coarser bins", "max_bin", 256, _EIGHTH, lambda params: params.get("tree_method") != "exact")),
    "lightgbm": (("larger leaves", "min_data_in_leaf", 20, lambda v, n: min(max(5 * int(v), 20), n), _ALWAYS),
                 ("coarser bins", "max_bin", 255, _EIGHTH, _ALWAYS)),
    "catboost": (("shallower trees", "depth", 6, lambda v, n: max(1, int(v) - 2), _ALWAYS),
                 ("coarser bins", "border_count", 254, _EIGHTH, _ALWAYS)),
}


def _exceeded(done, analysis: str) -> bool:
    return any(c.analysis == analysis and c.status == "exceeded" for a in done.values() for c in a.checks)


def remedy_applies(ctx: AuditContext, done) -> bool:
    """A boosted-tree target whose recipe can be retrained, the profile measures remedies (``dtp_removal_seeds``),
    and a membership or DTP-1 check is exceeded."""
    return (ctx.target.kind in SETTINGS and ctx.target.learner is not None
            and ctx.cfg.settings.dtp_removal_seeds is not None
            and (_exceeded(done, "membership") or _exceeded(done, "dtp")))


def _flagged(ctx: AuditContext, done) -> list[int]:
    """DTP-1's records when its check is exceeded, at most the profile's ``dtp_test_max_records``."""
    dtp = done.get("dtp")
    if dtp is None or not any(c.id == "dtp.dtp1" and c.status == "exceeded" for c in dtp.checks):
        return []
    return list(dtp.flagged or [])[: ctx.cfg.settings.dtp_test_max_records]


def _n_seeds(ctx: AuditContext) -> int:
    return ctx.cfg.settings.dtp_removal_seeds if capabilities(ctx.target.learner).stochastic else 1


def _settings(ctx: AuditContext) -> list[tuple[str, str, float, float]]:
    """(what, parameter, the recipe's value, the value tried) of each setting that applies to the recipe and coarsens
    it (a leaf minimum up, bins or depth down: a recipe as coarse already has nothing to measure)."""
    params, n = ctx.target.learner.params or {}, len(ctx.data.y_mem)
    out = []
    for what, name, default, tried, applies in SETTINGS[ctx.target.kind]:
        now = params.get(name, default)
        new = tried(now, n)
        if applies(params) and new != now and (new > now) == (what == "larger leaves"):
            out.append((what, name, now, new))
    return out


def remedy_models(ctx: AuditContext, done) -> int:
    """The paired models of the recipe as it is and with each setting, and each setting's leave-one-out models of
    DTP-1's records."""
    if not done or not remedy_applies(ctx, done):
        return 0
    n_settings, k = len(_settings(ctx)), len(_flagged(ctx, done))
    repeats = ctx.cfg.settings.pdtp_repeats if capabilities(ctx.target.learner).stochastic else 1
    return _n_seeds(ctx) * (1 + n_settings) + n_settings * (k + 1) * repeats * bool(k)


def auc_change(member: np.ndarray, before: np.ndarray, after: np.ndarray, confidence: float) -> dict:
    """The AUCs of scores ``before`` and ``after`` (shape (n_seeds, n_records); ``member`` 1 for the positives) and
    their paired change with DeLong's interval: Var(A1 - A2) from the difference of each record's placements
    (DeLong et al. 1988, Sec. 3), each placement the mean over the seeds."""
    (b10, b01), (a10, a01) = ([np.mean([delong_placements(member, s)[i] for s in scores], axis=0) for i in (1, 2)]
                              for scores in (before, after))
    d10, d01 = a10 - b10, a01 - b01
    change = float(d10.mean())
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * np.sqrt(d10.var(ddof=1) / d10.size + d01.var(ddof=1) / d01.size)
    return {"auc_before": float(b10.mean()), "auc_after": float(a10.mean()), "auc_change": change,
            "auc_change_interval": [max(-1.0, change - half), min(1.0, change + half)]}


def remedy_analysis(ctx: AuditContext, done) -> Analysis:
    """The measured effect of each of the target library's :data:`SETTINGS` on the recipe."""
    data, target, st, learner = ctx.data, ctx.target, ctx.cfg.settings, ctx.target.learner
    X_mem, X_non, _ = target.inputs(data)
    X_query, y_query = np.vstack([X_mem, X_non]), np.concatenate([data.y_mem, data.y_non])
    member = np.r_[np.ones(len(X_mem), int), np.zeros(len(X_non), int)]
    n_seeds, n = _n_seeds(ctx), len(X_mem)
    seeds = [int(s) for s in spawn_seeds(ctx.seeds["remedy"], n_seeds)]
    flagged = _flagged(ctx, done)
    before_pdtp = np.asarray(done["dtp"].per_record["pdtp"], float)[flagged] if flagged else np.array([])

    def scores(lrn) -> tuple[np.ndarray, np.ndarray]:
        """Each seed's loss-attack scores of every record and whether each non-member is classified correctly."""
        p = np.asarray(ctx.engine.predict_many(lrn, X_mem, data.y_mem, [np.arange(n)] * n_seeds, seeds, X_query,
                                               n_classes=data.n_classes))
        p_label = p[:, np.arange(len(y_query)), y_query]
        return np.log(np.clip(p_label, 1e-300, None)), p[:, n:].argmax(axis=2) == data.y_non

    s_before, correct_before = scores(learner)
    out, skipped = [], []
    for what, name, now, new in _settings(ctx):
        lrn = _with(learner, name, new)
        try:
            s_after, correct_after = scores(lrn)
        except TrainingFailedError as exc:  # the library refused the changed recipe: said, not measured
            skipped.append(Skipped(name=f"{what} ({name} {now:g} -> {new:g})", reason=str(exc)))
            continue
        row = {"what": what, "parameter": name, "value": float(now), "tried": float(new),
               **auc_change(member, s_before, s_after, ctx.check_confidence),
               **accuracy_cost(correct_before, correct_after, ctx.check_confidence)}
        if flagged:
            res = pdtp(lrn, X_mem, data.y_mem, records=flagged, seed_policy="paired", n_repeats=st.pdtp_repeats,
                       n_classes=data.n_classes, random_state=ctx.seeds["remedy"], engine=ctx.engine,
                       keep_outputs=False, groups=member_units(data))
            after = np.asarray(res.values)
            row |= {"pdtp_before": before_pdtp.tolist(), "pdtp_after": after.tolist(),
                    "records_above_after": ctx.names(np.asarray(flagged)[after > ctx.cfg.thresholds.max_dtp])}
        out.append(row)
    summary = {"settings": out, "n_seeds": n_seeds, "confidence": ctx.check_confidence,
               "records": ctx.names(flagged), "threshold": ctx.cfg.thresholds.max_dtp}
    return Analysis(name="remedy", summary=summary, skipped=tuple(skipped),
                    resources={"remedy_models": engine_stats(ctx.engine)})


def _with(learner, name: str, value):
    """A copy of the boosted ``learner`` whose recipe sets ``name`` to ``value``."""
    from sklearn.base import clone

    return clone(learner).set_params(params={**(learner.params or {}), name: value})
