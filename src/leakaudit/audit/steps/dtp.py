"""Audit analysis: PDTP of the training records, the DTP-1 rule as a statistical test, and the noise floor.

Stage 1 is Long et al.'s measurement: one paired leave-one-out model per record (the full model's seed and row
order, skipping the record), outputs binned at 0.01, PDTP = the largest |ln ratio| over classes. Long et al.'s raw
rule counts every record above the threshold; a single measurement of a randomised training algorithm is noisy
(a forest's seed noise alone moves many records past 1) and binning near 0 turns a tiny move into ln 3.

The default rule (``dtp_rule = "statistical"``) counts a record only when its change is larger than training
randomness and binning can explain: every stage-1 candidate is re-measured with fresh paired repeats and kept only
if its systematic change is significantly above the threshold after correction for the candidates tested
(:func:`leakaudit.dtp.dtp1_test`). Both counts are always reported.
"""

from __future__ import annotations

import numpy as np

from ...exceptions import TrainingFailedError
from ...learners import capabilities
from ..result.checks import BELOW, EXCEEDED, GIVE_MODEL, NOT_MEASURABLE, PASSED, UNDECIDED, Analysis, Check, Skipped
from ..config import phrase
from ..context import AuditContext, engine_stats
from ..inputs.units import member_units, rows_of_units, unit_names

__all__ = ["dtp_analysis"]


def out_scores(probs: np.ndarray, y: np.ndarray, reference, votes: int | None = None) -> np.ndarray:
    """Each record's output against its own reference models that did not train on it: the prediction t-statistic
    ``(φ - mean_out) / (sd_out · sqrt(1 + 1/m))`` of the given model's LiRA statistic φ
    (:func:`~leakaudit.membership.lira.logit_scaled_confidence`) among the ``m`` out models' (LiRA offline, per
    record). Where the out models agree exactly (a deterministic learner: a nearest-neighbour rule, a grown tree),
    an output equal to theirs scores 0 and any other lies beyond all of them (±inf). NaN with fewer than 2 out
    models.

    ``probs``: the given model's outputs, shape (n, C); ``reference``: a
    :class:`~leakaudit.membership.ReferenceSet` on the same n records (extra columns, such as population records,
    are ignored)."""
    from ...membership.lira import logit_scaled_confidence

    n = len(y)
    phi = logit_scaled_confidence(probs, y, votes=votes)
    ref = logit_scaled_confidence(np.asarray(reference.probs[:, :n]), y, votes=votes)  # (K, n)
    out = ~np.asarray(reference.in_mask[:, :n], bool)
    m = out.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(out, ref, 0.0).sum(axis=0) / m
        var = np.where(out, (ref - mean) ** 2, 0.0).sum(axis=0) / (m - 1)
        t = (phi - mean) / np.sqrt(var * (1 + 1 / m))
    flat = ~(var > 0)
    t[flat] = np.where(np.isclose(phi, mean), 0.0, np.where(phi > mean, np.inf, -np.inf))[flat]
    t[m < 2] = np.nan
    return t


def _confirm_on_model(records: list[int], scores_members: np.ndarray, scores_nonmembers: np.ndarray) -> float:
    """p-value of "the given model did not train on these records": their scores against the non-members'
    (one-sided Mann-Whitney U test; NaN scores left out).

    PDTP retrains the recipe; the given model enters only here. The DTP-1 records are selected by the recipe, and
    that selection favours records whose outputs behave unlike the others' (rare-class records, which retraining
    barely moves), so a raw membership score of the selected records would stand above all non-members' with no
    training at all. The scores compared are therefore each record's own out-model statistic
    (:func:`out_scores`): how far the given model's output on the record lies above the outputs of reference models
    that did not train on it. A non-member is scored the same way, so like is compared with like: had the model
    never trained on the members, the selected records' scores would be exchangeable with the non-members'.
    """
    from scipy import stats

    sig = np.asarray(scores_members, float)[np.asarray(records, int)]
    sig, non = sig[np.isfinite(sig)], np.asarray(scores_nonmembers, float)
    non = non[np.isfinite(non)]
    if sig.size == 0 or non.size == 0:
        return 1.0
    return float(stats.mannwhitneyu(sig, non, alternative="greater").pvalue)


# the out-of-bag screen's forests and its per-record miss probability (leakaudit.dtp.screening.forest_oob_shift)
OOB_FORESTS, OOB_MISS_RATE = 16, 0.05


def _stage2(ctx: AuditContext, X_mem: np.ndarray, records: np.ndarray, values: np.ndarray, known_deltas=None):
    """The DTP-1 test (:func:`leakaudit.dtp.dtp1_test`) of ``records`` (stage-1 candidates with their PDTP
    ``values``) at the check's confidence, with the profile's repeats, budget and cap and the audit's stage-2 seed."""
    from ...dtp import dtp1_test

    st = ctx.cfg.settings
    return dtp1_test(ctx.target.learner, X_mem, ctx.data.y_mem, records=records, threshold=ctx.cfg.thresholds.max_dtp,
                     n_repeats=st.dtp_test_repeats, max_repeats=st.dtp_test_max_repeats, stage1_values=values,
                     confidence=ctx.check_confidence, max_records=st.dtp_test_max_records, n_classes=ctx.data.n_classes,
                     random_state=ctx.seeds["dtp_test"], engine=ctx.engine, known_deltas=known_deltas,
                     groups=member_units(ctx.data))



def screen_sizes(ctx: AuditContext, n: int) -> tuple[float, int, int | None]:
    """A screened stage 1 on ``n`` members: the share of them its ranked top starts at, its random sample, and the
    sample the allowance on unmeasured members needs (:func:`leakaudit.dtp.sample_for_allowance`; None: no sample
    short of every member)."""
    from ...dtp.screening import sample_for_allowance

    st = ctx.cfg.settings
    # The ranked top starts at pdtp_screen_fraction of pdtp_exact_max members, not of n: a leave-one-out model
    # costs time in proportion to n, so a top in proportion to n would make stage 1 grow as n^2. The records at
    # risk, not n, set its size: it doubles while its tail holds more exceedances than the sample.
    start = st.pdtp_screen_fraction * min(1.0, st.pdtp_exact_max / n) if st.pdtp_exact_max else st.pdtp_screen_fraction
    # the random sample is as large as the allowance on unmeasured members needs (if none of it exceeds), within
    # the profile's budget: the DTP-1 check passes only when the sample bounds them within the allowance
    needed = sample_for_allowance(n, _allowance(ctx, n), confidence=ctx.check_confidence)
    n_sample = st.pdtp_screen_sample_max if needed is None else max(st.pdtp_screen_sample, needed)
    return start, min(n_sample, st.pdtp_screen_sample_max), needed


def _screened_pdtp(ctx: AuditContext, X_mem: np.ndarray, reference, known_deltas=None) -> tuple[
        np.ndarray, np.ndarray, dict, np.ndarray, dict]:
    """Stage 1 for many members (:func:`leakaudit.dtp.screened_pdtp`): the top of a ranking and a random sample
    of the rest. A bagged ensemble ranks by its own out-of-bag estimate and measures every member whose change
    may reach the threshold (:func:`leakaudit.dtp.screening.forest_oob_shift`); any other learner by the reference
    models' (:func:`leakaudit.dtp.reference_loo_shift`), the top doubling while its tail holds more members that
    the DTP-1 check counts than the sample does. Under the statistical rule those are the significant ones: the
    tail's and then the sample's candidates are tested (:func:`_stage2`, their deltas kept in ``known_deltas``
    for the test of every candidate afterwards), and a member counts when its own p-value is at most the check's
    level (no multiplicity correction: the looser count grows the top more often, never less). Returns the
    measured records (sorted), their PDTP, the screening's account for results.json, every member's estimate, and
    the engine's counters."""
    from ...dtp.screening import (
        forest_oob_shift,
        oob_ensemble,
        reference_loo_shift,
        screened_pdtp,
    )

    data, st, thr = ctx.data, ctx.cfg.settings, ctx.cfg.thresholds.max_dtp
    n = len(data.y_mem)
    learner = ctx.target.learner
    if oob_ensemble(learner) is not None and ctx.data.unit is None:  # out-of-bag is per row, not per unit
        oob = forest_oob_shift(learner, X_mem, data.y_mem, n_forests=OOB_FORESTS, miss_rate=OOB_MISS_RATE,
                               n_classes=data.n_classes, random_state=[ctx.seeds["pdtp"], 1])
        est, cut, ranking = oob.upper, thr, "oob"
        method = (f"out-of-bag screen: every member whose change may reach {thr:g} (one-sided {1 - OOB_MISS_RATE:.0%} "
                  f"t bound over {OOB_FORESTS} forests of the bin-aware ln ratio of a forest's output to its "
                  "out-of-bag output) is measured; a member whose systematic change exceeds the threshold is left "
                  f"unmeasured with probability at most {OOB_MISS_RATE:g} (leakaudit.dtp.screening)")
    else:
        est = reference_loo_shift(reference.probs[:, :n], reference.in_mask[:, :n])
        cut, ranking = None, "reference"
        method = ("reference-model ranking: max over classes of |mean ln bin p over the reference models that "
                  "trained on the record - mean over those that did not| (leakaudit.dtp.screening)")
    start, n_sample, needed = screen_sizes(ctx, n)
    def significant(recs, vals):
        t = _stage2(ctx, X_mem, recs, vals, known_deltas)
        hit = {int(r) for r, p in zip(t.records, t.p_value) if p <= 1 - ctx.check_confidence}
        return np.isin(recs, list(hit))  # untested candidates (beyond the cap) do not count

    sc = screened_pdtp(learner, X_mem, data.y_mem, est, threshold=thr, fraction=start,
                       n_sample=n_sample, max_fraction=max(st.pdtp_screen_max_fraction,
                                                                        st.pdtp_screen_fraction),
                       cut=cut, n_classes=data.n_classes, n_repeats=st.pdtp_repeats,
                       random_state=ctx.seeds["target"], sample_state=ctx.seeds["pdtp"],
                       significant=significant if ctx.cfg.dtp_rule == "statistical" and known_deltas is not None
                       else None, engine=ctx.engine, groups=member_units(ctx.data))
    screening = {
        "method": method, "ranking": ranking,
        "n_members": int(n), "n_top": sc.n_top, "n_sample": int(sc.sample.size),
        "n_measured": int(sc.records.size), "n_unmeasured": int(n - sc.records.size), "extensions": sc.extensions,
        "capped": sc.capped, "doubling": None if cut is not None else {"counted": sc.counted, **(sc.last_look or {})},
        "sample_planned": int(n_sample), "sample_needed": needed, "sample_budget": int(st.pdtp_screen_sample_max),
        "sample_records": [int(r) for r in sc.sample],
        "sample_above": int(np.sum(sc.value(sc.sample) > thr)),
    }
    if sc.sample.size > 2:
        from scipy.stats import spearmanr

        rho = spearmanr(est[sc.sample], sc.value(sc.sample)).statistic
        screening["sample_spearman"] = float(rho) if np.isfinite(rho) else None
    return sc.records, sc.values, screening, est, engine_stats(ctx.engine, sc.engine_stats)


def dtp_analysis(ctx: AuditContext, *, recipe: dict | None, lira: np.ndarray | None = None,
                 reference=None) -> Analysis:
    """PDTP (stage 1), the DTP-1 check under ``cfg.dtp_rule``, and the seed noise floor.

    Records significant for DTP-1 count against the given model only when its own outputs show it trained on them
    (:func:`_confirm_on_model` on :func:`out_scores` from ``reference``, at the check's level); otherwise the
    finding describes the recipe. ``lira`` (LiRA's scores of the audited records, members first, shape
    (n_members + n_nonmembers,)): the raw-score version of that test is recorded beside it, for comparison.
    ``reference`` (the reference models on the audited records, members first): with more members than the
    profile's ``pdtp_exact_max``, stage 1 is screened by them, or for a bagged ensemble by its out-of-bag
    outputs (:func:`_screened_pdtp`).
    """
    if ctx.target.learner is None:
        return _unmeasured(ctx, Skipped(name="PDTP / DTP-1", reason="needs the training algorithm to retrain "
                                        "leave-one-out models", fix=GIVE_MODEL, missing=["model"]),
                           "the training algorithm is not available")
    try:
        return _dtp_measured(ctx, recipe=recipe, lira=lira, reference=reference)
    except TrainingFailedError as exc:  # a leave-one-out model's training set is fixed: it cannot be redrawn
        reason = f"the learner's library failed to train a model on a fixed training set ({exc})"
        return _unmeasured(ctx, Skipped(name="PDTP / DTP-1", reason=reason, fix=""), reason)


def _unmeasured(ctx: AuditContext, skipped: Skipped, why: str) -> Analysis:
    """The DTP stage when it measured nothing: DTP-1 not measurable, and why."""
    check = Check(id="dtp.dtp1", analysis="dtp", name="DTP-1 rule (PDTP)", status=NOT_MEASURABLE,
                  sentence=f"the DTP-1 rule could not be checked: {why}", fix=skipped.fix_parts or "",
                  threshold=ctx.cfg.thresholds.max_dtp)
    return Analysis(name="dtp", checks=(check,), skipped=(skipped,))


def _dtp_measured(ctx: AuditContext, *, recipe: dict | None, lira: np.ndarray | None,
                  reference) -> Analysis:
    """:func:`dtp_analysis` with a learner: every model it trains has a fixed training set."""
    cfg, data, target = ctx.cfg, ctx.data, ctx.target
    from ...dtp.noise_floor import seed_noise_floor
    from ...dtp.pdtp import pdtp
    from ...dtp.significance import DTP1Deltas, seed_free_deltas

    n = len(data.y_mem)
    X_mem = target.inputs(data)[0]
    k, exact_max = cfg.settings.pdtp_records, cfg.settings.pdtp_exact_max
    resources, screening, estimate = {}, None, None
    from ...dtp.screening import oob_ensemble

    # a closed-form leave-one-out (naive Bayes, logistic regression's Newton step) is cheap: every member, exactly
    screenable = (reference is not None or (oob_ensemble(target.learner) is not None and data.unit is None)) and (
        capabilities(target.learner).loo is None or data.unit is not None)
    known = DTP1Deltas()  # stage-2 deltas of the members the screen tested, reused by the test below
    if k is None and exact_max is not None and n > exact_max and screenable:
        records, values, screening, estimate, resources["pdtp_models"] = _screened_pdtp(ctx, X_mem, reference,
                                                                                        known)
    else:
        rng = np.random.default_rng(ctx.seeds["pdtp"])
        records = np.arange(n) if k is None or k >= n else np.sort(rng.choice(n, size=k, replace=False))
        seed_free = not capabilities(target.learner).stochastic  # stage 2 reuses its models (seed_free_deltas)
        res = pdtp(target.learner, X_mem, data.y_mem, records=records, n_classes=data.n_classes,
                   seed_policy="paired", n_repeats=cfg.settings.pdtp_repeats, random_state=ctx.seeds["target"],
                   engine=ctx.engine, keep_outputs=seed_free, groups=member_units(ctx.data))
        if seed_free and cfg.dtp_rule == "statistical":
            seed_free_deltas(target.learner, res, ctx.seeds["dtp_test"], into=known)
        values = np.asarray(res.values, float)
        resources["pdtp_models"] = engine_stats(ctx.engine, res.engine_stats)
        if len(records) < n:  # a uniform sample only (a profile's pdtp_records): it vouches for the others by a bound
            screening = {"ranking": "none", "n_members": n, "n_top": 0, "n_sample": len(records),
                         "sample_budget": len(records), "n_measured": len(records), "n_unmeasured": n - len(records),
                         "sample_records": [int(r) for r in records],
                         "sample_above": int(np.sum(values > cfg.thresholds.max_dtp))}
    thr = cfg.thresholds.max_dtp
    above = records[values > thr]
    test = None
    if cfg.dtp_rule == "statistical" and above.size:
        test = _stage2(ctx, X_mem, above, values[values > thr], known)
        resources["dtp_test_models"] = engine_stats(ctx.engine, test.engine_stats)
    nf = seed_noise_floor(target.learner, X_mem, data.y_mem, queries=records[: min(200, len(records))],
                          n_models=cfg.settings.noise_floor_models, n_classes=data.n_classes,
                          random_state=ctx.seeds["noise_floor"], engine=ctx.engine)
    resources["noise_floor_models"] = engine_stats(ctx.engine, nf.engine_stats)
    std = np.asarray(nf.max_std_log_p, float)
    std = std[np.isfinite(std)]
    floor = {"median": float(np.median(std)) if std.size else None,
             "p90": float(np.quantile(std, 0.9)) if std.size else None,
             "n_models": int(cfg.settings.noise_floor_models),
             "what": "std over retrainings with other seeds of the largest-class ln p (binned), Long et al. Fig 7"}
    summary = {
        "n_records": len(records),
        "max": float(np.max(values)),
        "mean": float(np.mean(values)),
        "n_above": int(above.size),
        "records_above": ctx.names(above),
        "seed_policy": "paired",
        "bin_width": 0.01,
        "noise_floor": floor,
        "kind": "PDTP (a lower bound on DTP: direct queries only)",
        "rule": cfg.dtp_rule,
    }
    if screening is not None:
        summary["screening"] = screening
    significant = [int(r) for r, s in zip(test.records, test.significant) if s] if test is not None else []
    if test is not None:
        summary["test"] = {**test.model_dump(exclude={"stage1_values", "engine_stats"}),
                           "records": ctx.names(test.records), "untested": ctx.names(test.untested)}
        summary["n_significant"] = int(test.n_significant)
        summary["records_significant"] = ctx.names(significant)
        summary["records_untested"] = ctx.names(test.untested)
        if significant and _retrains_exactly(ctx, X_mem):
            summary["retrains_exactly"] = True  # the recipe gives the given model itself: nothing to confirm
        elif reference is not None and significant:
            y_all = np.concatenate([data.y_mem, data.y_non])
            z = out_scores(np.vstack([target.probs_mem, target.probs_non]), y_all, reference,
                           votes=capabilities(target.learner).votes)
            p = _confirm_on_model(significant, z[:n], z[n:])
            summary["confirmation"] = {
                "p_value": p, "confirmed": p <= 1 - ctx.check_confidence,
                "test": "one-sided Mann-Whitney U test of the significant records' out-model scores against the "
                        "non-members' (each record's output against reference models that did not train on it: "
                        "did the given model train on them?)"}
            if lira is not None:  # the test before it compared the selected records' raw LiRA scores (biased)
                summary["confirmation"]["p_value_raw_lira"] = _confirm_on_model(significant, lira[:n], lira[n:])
    remove = significant if cfg.dtp_rule == "statistical" else [int(r) for r in above]
    if data.unit is not None:  # a unit counts when any of its rows does; removing it removes all of its rows
        summary.update(leave_out="unit", n_units=len(unit_names(ctx.data, records)),
                       units_above=unit_names(ctx.data, above))
        if test is not None:
            summary["units_significant"] = unit_names(ctx.data, significant)
        remove = [int(r) for r in rows_of_units(member_units(ctx.data), remove)] if remove else []
    if screening is not None:
        _bound_unmeasured(ctx, screening, test)
        screening["sample_records"] = ctx.names(screening["sample_records"])
    rest = values[~np.isin(records, test.records)] if test is not None else values  # not re-measured
    check = _dtp_check(ctx, summary, test, recipe, float(np.max(rest, initial=-np.inf)))
    per_record = np.full(n, np.nan)
    per_record[records] = values
    cols = {"pdtp": np.r_[per_record, np.full(len(data.y_non), np.nan)]}
    if estimate is not None:
        cols["pdtp_screen_estimate"] = np.r_[estimate, np.full(len(data.y_non), np.nan)]
    if test is not None:
        lb = np.full(n, np.nan)
        lb[np.asarray(test.records, int)] = test.lower_bound
        cols["pdtp_lower_bound"] = np.r_[lb, np.full(len(data.y_non), np.nan)]
    return Analysis(name="dtp", summary=summary, checks=(check,), resources=resources, per_record=cols,
                    flagged=remove)


def _retrains_exactly(ctx: AuditContext, X_mem) -> bool:
    """Whether the recipe, retrained on the members, gives the given model's outputs on them exactly (to 1e-9): a
    learner that declares its seed does not matter (``Capabilities.stochastic`` False), checked by one fit. Then what
    DTP-1 finds of the recipe is found of the given model, and no test of the model's outputs is needed."""
    learner, data = ctx.target.learner, ctx.data
    if capabilities(learner).stochastic:
        return False
    model = learner.fit(X_mem, data.y_mem, random_state=ctx.seeds["target"], n_classes=data.n_classes)
    p = np.asarray(model.predict_proba(X_mem), float)
    return p.shape == ctx.target.probs_mem.shape and bool(np.allclose(p, ctx.target.probs_mem, rtol=0.0, atol=1e-9))


def _allowance(ctx: AuditContext, n: int) -> int:
    """Unmeasured members that a screened DTP-1 check may leave possible (the sample's upper bound): the thresholds'
    ``max_unmeasured_dtp_share`` of the ``n`` members, and at least ``max_records_above_dtp``."""
    t = ctx.cfg.thresholds
    return max(int(t.max_records_above_dtp), int(np.floor(t.max_unmeasured_dtp_share * n)))


def _bound_unmeasured(ctx: AuditContext, screening: dict, test) -> None:
    """What the random sample says about the members not measured: how many of the sampled ones are significant
    (under the statistical rule; above the threshold under Long et al.'s), and the implied upper count."""
    from ...dtp import unmeasured_bound

    sample = set(screening["sample_records"])
    if ctx.cfg.dtp_rule == "statistical":
        sig = {int(r) for r, s in zip(test.records, test.significant) if s} if test is not None else set()
        k, what = len(sample & sig), "significant"
    else:
        k, what = screening["sample_above"], f"above {ctx.cfg.thresholds.max_dtp:g}"
    u = unmeasured_bound(k, len(sample), screening["n_unmeasured"], confidence=ctx.check_confidence)
    allowance = _allowance(ctx, screening["n_members"])
    within = u["count_upper"] is not None and u["count_upper"] <= allowance
    if screening["n_unmeasured"] == 0:
        within = True
    screening["unmeasured"] = {**u, "what": what, "allowance": allowance, "within_allowance": within}


def _coverage(s: dict) -> str:
    """The screened stage 1 in words, for the check's sentence (empty when every member was measured)."""
    sc = s.get("screening")
    if sc is None:
        return ""
    u = sc.get("unmeasured") or {}
    who = ("whose change the forests' out-of-bag outputs say may reach the threshold" if sc.get("ranking") == "oob"
           else "the reference models rank riskiest")
    if sc.get("ranking") == "none":
        text = f"; PDTP measured for a random {sc['n_sample']:,} of the {sc['n_members']:,} members (the profile's)"
    else:
        text = (f"; PDTP measured exactly for the {sc['n_top']:,} members {who} and a "
                f"random {sc['n_sample']:,} of the other {sc['n_members'] - sc['n_top']:,}")
    if sc.get("capped") and sc.get("ranking") == "oob":
        text += " (the measured top stopped at its cap while more members could reach the threshold)"
    elif sc.get("capped"):
        what = ("were significant" if (sc.get("doubling") or {}).get("counted") == "significant"
                else "exceeded the threshold")
        text += (f" (the ranked top stopped at its cap while its last records still {what} more often than the "
                 "sample's)")
    if u.get("m"):
        _lo, hi = u["share_interval"]
        text += (f"; {u['k']} of the sampled members {'is' if u['k'] == 1 else 'are'} {u['what']}, so at most "
                 f"{hi * 100:.2g}% of the {u['n_unmeasured']:,} unmeasured members (about {u['count_upper']:,}) may be"
                 f", against {u['allowance']:,} allowed")
    return text


def _beyond_allowance(ctx: AuditContext, s: dict, common: dict, raw: str) -> Check | None:
    """A screened check that would pass, made "not measurable" when its random sample cannot bound the unmeasured
    members within the allowance (:func:`_allowance`): it never ran on them, and the sample cannot vouch for them.
    None when every member was measured or the bound is within the allowance."""
    u = (s.get("screening") or {}).get("unmeasured")
    if u is None or u.get("within_allowance", True):
        return None
    t, sc = ctx.cfg.thresholds, s["screening"]
    why = (f"the random sample of {u['m']:,} members (the profile's budget: {sc['sample_budget']:,}) bounds the "
           f"unmeasured members {u['what']} only at about {u['count_upper']:,}, more than the {u['allowance']:,} "
           f"allowed" if u.get("m") else "no unmeasured member was sampled")
    return Check(name=common.pop("name"), status=NOT_MEASURABLE, **{"value": s["max"], **common},
                 sentence=f"{raw}; not measurable: {why}",
                 fix=phrase(f"measure every member ({{0}}: PDTP of all {sc['n_members']:,} members, now "
                            f"{sc['n_measured']:,}), or allow more unmeasured members ({{1}}, now "
                            f"{t.max_unmeasured_dtp_share:g})",
                            ("profile", "standard" if sc.get("ranking") == "none" else "thorough"),
                            "thresholds.max_unmeasured_dtp_share"))


def _exact_words(test) -> str | None:
    """How the stage-2 test measured a learner whose seed does not move its leave-one-out outputs (one model per
    record, or repeats that all agree), in the check's words; None for a learner the seed moves."""
    if test.n_repeats == 1:
        return ("measured exactly: the recipe's seed does not matter, so one leave-one-out model per record gives "
                "the value that every seed would")
    if not np.any(np.asarray(test.sd, float)):
        return f"measured exactly: its {test.n_repeats} re-measurements with fresh seeds agree, the seed moving none"
    return None


def _more_repeats(test) -> str:
    """The sequential re-measurement in words, for the check's sentence (empty with one look)."""
    if len(test.looks) < 2:
        return ""
    return (f", each record still undecided re-measured up to {test.looks[-1]} times in {len(test.looks)} looks at "
            f"level {test.look_level:.2g} each, Bonferroni over the looks")


def _dtp_check(ctx: AuditContext, s: dict, test, recipe: dict | None, rest: float) -> Check:
    """The DTP-1 check. Its value is the largest change a member's removal makes, in nats: each record re-measured
    at its re-measured mean, the others at their single PDTP (``rest``: the largest of those, -inf for none); its
    interval, where records were re-measured, is one-sided: at least their largest simultaneous lower bound."""
    cfg, cc = ctx.cfg, ctx.check_confidence
    thr, allowed = cfg.thresholds.max_dtp, cfg.thresholds.max_records_above_dtp
    describes = "recipe" if recipe is not None and recipe.get("reproduces") is False else "model"
    common = {"id": "dtp.dtp1", "analysis": "dtp", "threshold": thr, "confidence": cc, "describes": describes}
    raw = (f"{s['n_above']:,} of {s['n_records']:,} records measured have a single PDTP above {thr:g} "
           f"(max {s['max']:.2f}{_coverage(s)})")
    if s.get("leave_out") == "unit":
        raw += (f", each record's leave-out model leaving out all of its unit's rows ({len(s['units_above']):,} of "
                f"the {s['n_units']:,} units measured have a row above {thr:g})")
    name = "DTP-1 rule (Long et al., raw)" if cfg.dtp_rule == "long" else "DTP-1 rule (significant records)"
    if cfg.dtp_rule == "long" or test is None:  # Long et al.'s raw rule, or no candidate even in stage 1
        exceeded = cfg.dtp_rule == "long" and s["n_above"] > allowed
        if not exceeded and (c := _beyond_allowance(ctx, s, {**common, "name": name}, raw)):
            return c
        some = "measured " if "screening" in s else ""
        return Check(name=name, status=EXCEEDED if exceeded else PASSED, value=s["max"], **common, sentence=(
            f"{raw}: the DTP-1 rule (Long et al., raw) says not to publish" if exceeded else f"{raw}, within the "
            f"{allowed} allowed" if s["n_above"] else f"no {some}training record has PDTP above {thr:g} (max "
            f"{s['max']:.2f} over {s['n_records']:,}{_coverage(s)})"))
    # with a unit, the units with a significant row count against the allowance
    k = len(s["units_significant"]) if "units_significant" in s else int(test.n_significant)
    best = float(np.max(test.lower_bound)) if len(test.lower_bound) else 0.0
    largest = float(max(np.max(test.stage2_mean, initial=-np.inf), rest))
    common.update(value=largest, interval=(best, np.inf) if len(test.lower_bound) else None)
    if len(test.p_adjusted):
        common["p_value"] = float(np.min(test.p_adjusted))
    untested = len(test.untested)
    exact = _exact_words(test)
    at = f"at {cc * 100:.4g}% confidence{_more_repeats(test)}" if exact is None else exact
    conf = s.get("confirmation")
    if k > allowed:
        worst = int(np.argmax(test.lower_bound))
        if conf is not None and not conf["confirmed"] and describes == "model":
            # significant for the recipe, but the given model's outputs do not show it trained on those records
            common["describes"] = "recipe"
        verb = "changes" if k == 1 else "change"
        who = (f"{'unit' if k == 1 else 'units'} (of {s['n_units']:,} measured; {int(test.n_significant):,} of "
               f"their rows)" if "units_significant" in s else f"of {s['n_records']:,} training records")
        explains = "binning explains" if exact else "training randomness and binning explain"
        sentence = (f"{k:,} {who} {verb} the retrained model's output by more than e^{thr:g} when removed, beyond "
                    f"what {explains}: the largest change is {largest:.2f} nats, and "
                    f"{ctx.record_name(int(test.records[worst]))} changes it by at least {best:.2f} ({at}"
                    + (f"; adjusted p = {common['p_value']:.2g} against the level {1 - cc:.2g}"
                       if "p_value" in common and exact is None else "") + f"); {raw}")
        if s.get("retrains_exactly"):
            sentence += ("; retraining this recipe on the members gives the given model's outputs exactly (its seed "
                         "does not matter), so this holds for the given model")
        elif conf is not None:
            shows = "show" if conf["confirmed"] else "do not show"
            sentence += (f"; the given model's outputs {shows} that it trained on these records, each record's output "
                         "scored against the reference models that did not train on it and compared with the "
                         f"non-members' scored alike: p = {conf['p_value']:.2g} against the level {1 - cc:.2g}")
        return Check(name=name, status=EXCEEDED, **common, sentence=sentence)
    if untested:
        return Check(name=name, status=NOT_MEASURABLE, **common,
                     sentence=(f"{raw}; {len(test.records):,} were re-measured and {k} is significant, but "
                               f"{untested:,} were not re-measured"),
                     fix=phrase(f"raise the re-measured records ({{0}}) above {cfg.settings.dtp_test_max_records} "
                                f"({{1}})", "dtp_test_max_records", ("profile", "thorough")))
    if c := _beyond_allowance(ctx, s, {**common, "name": name}, raw):
        return c
    # shown below only when the re-measured records' means fall within the allowance; a mean above the threshold that
    # is not significant leaves DTP-1 undecided (more repeats would decide it)
    over = int(np.sum(np.asarray(test.stage2_mean, float) > thr))
    shown = over <= allowed
    few = "none of them changes" if k == 0 else f"{k} of them {'changes' if k == 1 else 'change'}"
    within = "" if k == 0 else f", within the {allowed} allowed"
    if exact:  # a mean above the threshold is significant when measured exactly: shown
        how = f"binning explains{within}, a bin edge crossed in rounding ({exact})"
    else:
        how = (f"training randomness and binning explain{within} after re-measuring each {test.n_repeats} times"
               + _more_repeats(test)
               + ("" if shown else f"; {over} re-measured mean{'s' if over > 1 else ''} above {thr:g}, so not shown "
                                   "below it either"))
    return Check(name=name, status=BELOW if shown else UNDECIDED, **common,
                 sentence=f"{raw}, but {few} by more than {how}: the largest change is then {largest:.2f} nats, "
                          f"at least {best:.2f} at {cc * 100:.4g}% confidence",
                 fix="" if shown else phrase(f"re-measure with more repeats (dtp_test_max_repeats, now "
                                            f"{cfg.settings.dtp_test_max_repeats}; {{0}})", ("profile", "thorough")))
