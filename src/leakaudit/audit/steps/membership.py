"""Audit analysis: membership attacks, their checks, their empirical epsilon, and the recipe test.

Attacks come from the registry (:func:`leakaudit.membership.make_attack`): the loss threshold always, and with a
training algorithm LiRA, InfoRMIA (with population records; RMIA is not run: see the registry) and the shadow-model
attack, all on one set of reference models trained in complementary pairs; without one (predictions only), quantile
regression (:class:`leakaudit.membership.quantile.QuantileRegressionAttack`), which learns the non-members' scores
from their features and needs no retraining. Each attack gives three checks at the corrected confidence: its AUC,
its TPR at the owner's low FPR, and (with ``epsilon_budget``) its empirical epsilon lower bound. A check whose data could
never show the threshold exceeded (too few records for its interval) is "not measurable", with the size it needs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...dpaudit.risk import risk_bounds
from ...exceptions import InvalidParameterError, NotEstimableWarning
from ...membership import (ATTACKS, AttackInputs, audit_attacks, audit_reference_models, cross_entropy_loss,
                          display_name, make_attack)
from ...metrics import (
    DEFAULT_FPRS,
    auc_ci_can_exceed,
    empirical_epsilon,
    evaluate_membership,
    min_nonmembers_for_tpr,
    min_records_for_auc,
    tpr_ci_can_exceed,
    tpr_entry,
    wide_interval_reason,
)
from ..result.checks import (EXCEEDED, GIVE_MODEL, NOT_MEASURABLE, PASSED, Analysis, Check, Skipped, undecided_fix,
                     within_sentence)
from ..config import escaped, phrase
from ..context import AuditContext, engine_stats
from ..inputs.recipe import recipe_test

__all__ = ["membership_analysis", "planned_attacks", "attack_plan", "available_inputs", "access_of"]

#: What the audit can give an attack (fields of :class:`~leakaudit.membership.AttackInputs`) besides the target's
#: outputs and the labels: always, with reference models (a retrainable target), and with population records too
_ALWAYS = frozenset({"probs", "y", "X", "train_loss"})
_WITH_REFERENCE = frozenset({"reference"})
_WITH_POPULATION = frozenset({"population_probs", "population_y", "population_reference"})


def available_inputs(target, data) -> frozenset[str]:
    """The attack inputs the audit has for this target and data (:data:`_ALWAYS` and, as they apply, reference
    models and population records)."""
    have = set(_ALWAYS)
    if target.learner is not None:
        have |= _WITH_REFERENCE
        if target.probs_pop is not None and len(data.y_pop):
            have |= _WITH_POPULATION
    return frozenset(have)


def access_of(cfg) -> str:
    """What the release lets an adversary read of the model: "labels" for ``release = "labels"``, else "scores"."""
    return "labels" if cfg.release == "labels" else "scores"


def attack_plan(target, data, access: str = "scores") -> tuple[list[str], list[Skipped]]:
    """The registered attacks the audit runs for this target and data (:func:`leakaudit.membership.audit_attacks`
    of this ``access``, in registry order), and those it cannot, each as a :class:`Skipped` naming the missing
    inputs."""
    retrainable = target.learner is not None
    have = available_inputs(target, data)
    run, skipped = [], []
    if access == "labels" and target.predict_inputs is None:
        return [], [Skipped(name=", ".join(display_name(n) for n in audit_attacks(retrainable, access)),
                            reason=f"a label-only attack queries the model on perturbed copies of the records; this "
                                   f"{target.kind} target answers no queries",
                            fix=GIVE_MODEL, missing=["model"])]
    for name in audit_attacks(retrainable, access):
        missing = sorted(set(make_attack(name).needs) - have)
        if not missing:
            run.append(name)
        elif "reference" not in missing and set(missing) <= _WITH_POPULATION:
            skipped.append(Skipped(name=display_name(name), reason="needs population records (other records of the "
                                   "same distribution, never trained on)",
                                   fix=phrase("give {0}", ("population", "FILE")),
                                   missing=["population"]))
        else:
            skipped.append(Skipped(name=display_name(name), reason=f"needs {', '.join(missing)}", missing=missing))
    if not retrainable and access == "scores":
        names = [display_name(n) for n in audit_attacks(True) if n not in audit_attacks(False)]
        skipped.insert(0, Skipped(
            name=f"{', '.join(names)} (reference-model attacks)",
            reason=f"the training algorithm is not available for a {target.kind} target",
            fix=phrase("give the model itself ({0}: a skops estimator, or a torch state_dict with {1}) so that "
                       "reference models can be retrained", "model", "module"), missing=["model"]))
    return run, skipped


def planned_attacks(target, data, access: str = "scores") -> list[str]:
    """Registry names of the attacks the audit runs for this target and data, reading ``access``."""
    return attack_plan(target, data, access)[0]


def shadow_plan(cfg) -> tuple[int | None, int, str | None]:
    """(shadow models, attack batch, note): the profile's, or the fallback without the compiled trainer."""
    from ...membership.shadow import shadow_plan as plan

    return plan(cfg.settings.shadow_attack_models, cfg.settings.shadow_attack_batch)


def _stage(used: dict) -> dict:
    """An attack's ``audit_run`` resources as results.json's closed stage entry: the counters it declares, the rest
    (a plug-in's own) under ``values``."""
    from ..result.sections import StageResources

    known = {k: v for k, v in used.items() if k in StageResources.model_fields}
    return {**known, **({"values": {k: v for k, v in used.items() if k not in known}} if len(known) < len(used) else {})}


def _reference_models(ctx: AuditContext, X_audit: np.ndarray, y: np.ndarray):
    """Reference models on complementary halves of the audited records, queried on them and the population."""
    cfg, data, target, engine = ctx.cfg, ctx.data, ctx.target, ctx.engine
    n_pop = len(data.y_pop) if target.probs_pop is not None else 0
    with engine.counting() as counted:  # one engine call, or one per pair when a pair was redrawn
        ref = audit_reference_models(target.learner, X_audit, y, cfg.settings.n_reference,
                                     X_population=target.inputs(data)[2] if n_pop else None,
                                     y_population=data.y_pop if n_pop else None, n_classes=data.n_classes,
                                     random_state=ctx.seeds["reference"], engine=engine, groups=data.unit_groups)
    from ...engine import is_disk_backed

    # past the memory budget the outputs are held in a temporary file (engine/_store.py): the numbers are the same
    used = {**engine_stats(engine, counted.stats), "backend": cfg.backend, "outputs_on_disk": is_disk_backed(ref.probs)}
    if ref.redrawn:  # the library failed on some drawn halves: those pairs were drawn again (their seeds recorded)
        used["note"] = redraw_note(ref.redrawn)
    return ref, n_pop, used


def redraw_note(redrawn) -> str:
    """The reference models' redraws (:attr:`~leakaudit.membership.ReferenceSet.redrawn`) in one sentence."""
    pairs = sorted({r["pair"] for r in redrawn})
    return (f"{len(redrawn)} redraw{'s' if len(redrawn) > 1 else ''} of the training halves of reference model "
            f"pair{'s' if len(pairs) > 1 else ''} {', '.join(map(str, pairs))} (the learner's library failed to train "
            f"on the halves drawn: {redrawn[0]['reason']}); redraw seeds "
            f"{', '.join(str(r['seed']) for r in redrawn)}")


def membership_analysis(ctx: AuditContext, *, reference_models: bool = True) -> Analysis:
    """Run every applicable membership attack; checks on their AUC, TPR at low FPR and empirical epsilon.

    ``reference_models=False`` (a tiered audit's cheap tier, :mod:`leakaudit.audit.plan`): only the attacks that
    need no reference models, with the same checks as in the whole analysis; the others are named, in words, in
    ``extras["deferred"]`` (empty: nothing was left out), and no model is trained."""
    cfg, data, target = ctx.cfg, ctx.data, ctx.target
    probs = np.vstack([target.probs_mem, target.probs_non])
    X_mem, X_non, _ = target.inputs(data)
    X_audit = np.vstack([X_mem, X_non])
    y = data.y_audit
    m = data.is_member
    n_audit = len(y)
    train_loss = float(np.mean(cross_entropy_loss(target.probs_mem, data.y_mem)))
    access = access_of(cfg)
    extra, X_query = {}, X_audit
    if access == "labels" and target.predict_inputs is not None:
        extra = {"predict_labels": lambda Z: np.argmax(target.predict_inputs(Z), axis=1)}
        X_query = np.vstack(target.query_inputs(data)[:2])
    inputs = AttackInputs(probs=probs, y=y, X=X_query, train_loss=train_loss, extra=extra)
    resources, recipe = {}, None
    names, skipped = attack_plan(target, data, access)
    deferred = [n for n in names if not reference_models and "reference" in make_attack(n).needs]
    names = [n for n in names if n not in deferred]
    if reference_models and target.learner is not None and access == "scores":  # label-only attacks need none
        ref, n_pop, resources["reference_models"] = _reference_models(ctx, X_audit, y)
        # slices: views of the reference outputs, which may be a disk-backed array (engine/_store.py), not copies
        inputs = AttackInputs(
            probs=probs, y=y, X=X_audit, train_loss=train_loss, reference=ref.subset(slice(0, n_audit)),
            population_probs=target.probs_pop if n_pop else None, population_y=data.y_pop if n_pop else None,
            population_reference=ref.subset(slice(n_audit, n_audit + n_pop)) if n_pop else None,
        )
        recipe = recipe_test(target.probs_mem, target.probs_non, data.y_mem, data.y_non,
                             inputs.reference.probs, inputs.reference.in_mask, y, confidence=cfg.confidence)
    metrics, checks, per_record = {}, [], {}
    groups = data.unit_groups
    if groups is not None:  # the attack is judged on units: each scored by the mean of its rows' scores
        from ..inputs.units import unit_membership, unit_scores

        m = unit_membership(groups, len(data.y_mem))
    for name in names:
        spec = ATTACKS.get(name)
        atk = make_attack(name, **(spec.audit_params(ctx) if spec.audit_params else {}))
        own = spec.audit_inputs(ctx, inputs) if spec.audit_inputs else inputs
        unmet = atk.unmet(own)
        if unmet is not None:
            skipped.append(Skipped(name=display_name(name), reason=unmet.reason, fix=unmet.fix,
                                   missing=list(unmet.missing)))
            continue
        if spec.audit_run:
            res, used = spec.audit_run(ctx, atk, own)
            resources.update({k: _stage(v) for k, v in used.items()})
        else:
            res = atk.run(own)
        s = res.scores_array
        per_record[f"score_{name}"] = s
        if groups is not None:
            s = unit_scores(s, groups)
        mm, eps = measure_attack(ctx, m, s)
        if groups is not None:
            mm = {"n_members": mm.pop("n_members"), "n_nonmembers": mm.pop("n_nonmembers"), "counts": "units", **mm}
        mm["display"], mm["description"] = display_name(name), spec.description
        metrics[name] = mm
        checks += attack_checks(name, mm, eps, thresholds=cfg.thresholds, confidence=ctx.check_confidence,
                                epsilon_budget=cfg.epsilon_budget)
    return Analysis(name="membership", summary=metrics, checks=tuple(checks), skipped=tuple(skipped),
                    resources=resources, per_record=per_record, recipe=recipe,
                    extras={"reference": inputs.reference, "deferred": [display_name(n) for n in deferred]})


def audit_fprs(cfg) -> tuple[float, ...]:
    """The false-positive rates an attack's TPR is measured at: the defaults and the owner's low FPR."""
    return tuple(sorted(set(DEFAULT_FPRS) | {cfg.thresholds.low_fpr}, reverse=True))


def measure_attack(ctx: AuditContext, m: np.ndarray, s: np.ndarray, *, epsilon: bool = True) -> tuple[dict, Any]:
    """The membership measures of scores ``s`` (``m``: 1 = member) at the checks' confidence and :func:`audit_fprs`,
    with (``epsilon``) its empirical epsilon, also under ``["epsilon"]``: the measures and the epsilon's result."""
    cfg = ctx.cfg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        mm = evaluate_membership(m, s, fprs=audit_fprs(cfg), n_boot=cfg.settings.n_boot,
                                 confidence=ctx.check_confidence, random_state=ctx.seeds["bootstrap"]).model_dump()
    if not epsilon:
        return mm, None
    eps = empirical_epsilon(m, s, delta=cfg.epsilon_delta, confidence=ctx.check_confidence,
                            random_state=ctx.seeds["epsilon"])
    mm["epsilon"] = eps.model_dump()
    if eps.measurable:  # what the shown epsilon means for re-identification, attribute inference, reconstruction
        mm["epsilon"]["risk"] = risk_bounds(eps.epsilon_lb, eps.delta, ctx.risk_baselines, claimed=False)
    return mm, eps


def _why_wide(interval, n1: int, n0: int, fpr: float | None = None) -> str:
    """' (the whole range: too few records for ...)' after an interval that spans nearly all of 0 to 1, else ''
    (:func:`leakaudit.metrics.wide_interval_reason`)."""
    why = wide_interval_reason(interval, n_members=n1, n_nonmembers=n0, fpr=fpr)
    return f" ({why})" if why else ""


def attack_checks(name: str, mm: dict, eps, *, thresholds, confidence: float, epsilon_budget: float | None,
                  display: str | None = None) -> list[Check]:
    """An attack's checks (ids ``membership.NAME.auc``, ``.tpr_at_low_fpr`` and, with ``epsilon_budget``,
    ``.epsilon``) from its measures ``mm`` (:func:`leakaudit.metrics.evaluate_membership`'s, as a dict) and its
    empirical epsilon ``eps``, each judged at ``confidence`` against ``thresholds``; ``display``: the attack's name
    in words (default: the registry's). Tabular and language-model audits both judge their attacks here."""
    th, cc = thresholds, confidence
    n1, n0 = mm["n_members"], mm["n_nonmembers"]
    # with a privacy unit the counts are units
    members, nonmembers = (("member units", "non-member units") if mm.get("counts") == "units" else
                           ("members", "non-members"))
    who = display or display_name(name)
    out = []
    # AUC
    lo, hi = mm["auc_ci"]
    common = dict(analysis="membership", threshold=th.max_auc, confidence=cc)
    if not auc_ci_can_exceed(n1, n0, th.max_auc, confidence=cc):
        need = min_records_for_auc(th.max_auc, confidence=cc)
        out.append(Check(id=f"membership.{name}.auc", name=f"{who}: AUC", status=NOT_MEASURABLE, value=mm["auc"],
                         interval=(lo, hi), **common,
                         sentence=f"{who}: AUC {mm['auc']:.3f} cannot be judged: with {n1} {members} and {n0} "
                                  f"{nonmembers} even a perfect attack's AUC interval would not clear {th.max_auc:g}",
                         fix=phrase(f"give at least {need} {members} and {need} {nonmembers} ({{0}})", "records")))
    else:
        exceeded = lo > th.max_auc
        out.append(Check(
            id=f"membership.{name}.auc", name=f"{who}: AUC", status=EXCEEDED if exceeded else PASSED,
            value=mm["auc"], interval=(lo, hi), **common,
            sentence=(f"the {who} separates {members} from {nonmembers} with AUC {mm['auc']:.3f} "
                      f"(interval [{lo:.3f}, {hi:.3f}], above {th.max_auc:g})") if exceeded else
                     within_sentence(f"{who}: AUC {mm['auc']:.3f} measured",
                                     f"[{lo:.3f}, {hi:.3f}]" + _why_wide((lo, hi), n1, n0), hi < th.max_auc,
                                     f"{th.max_auc:g}"),
            fix="" if exceeded else undecided_fix("AUC", mm["auc"], hi, th.max_auc, n1, n0)))
    # TPR at the owner's low FPR
    f = th.low_fpr
    pct = f"{f * 100:g}%"
    t = tpr_entry(mm["tpr_at_fpr"], f)
    common = dict(analysis="membership", threshold=th.max_tpr_at_low_fpr, confidence=cc)
    tid, tname = f"membership.{name}.tpr_at_low_fpr", f"{who}: TPR at {pct} FPR"
    if t is None or t["tpr"] != t["tpr"] or not tpr_ci_can_exceed(n1, n0, f, th.max_tpr_at_low_fpr, confidence=cc):
        try:
            need = min_nonmembers_for_tpr(f, th.max_tpr_at_low_fpr, confidence=cc, n_members=n1)
            fix = phrase(f"TPR at {pct} FPR needs at least {need:,} {nonmembers}; {n0:,} given (or raise {{0}})",
                         "thresholds.low_fpr")
        except InvalidParameterError as exc:  # too few members for any number of non-members
            fix = phrase(escaped(str(exc)) + " ({0})", "records")
        value = None if t is None or t["tpr"] != t["tpr"] else t["tpr"]
        out.append(Check(id=tid, name=tname, status=NOT_MEASURABLE, **common, value=value,
                         sentence=f"{who}: TPR at {pct} FPR"
                                  + ("" if value is None else f" {value * 100:.2f}% measured, but it")
                                  + f" cannot be judged with {n1} {members} and {n0} {nonmembers}: "
                                  f"no interval from them could exclude {th.max_tpr_at_low_fpr * 100:g}%",
                         fix=fix))
    else:
        lo_t, hi_t = t["ci"]
        exceeded = lo_t > th.max_tpr_at_low_fpr
        out.append(Check(
            id=tid, name=tname, status=EXCEEDED if exceeded else PASSED, value=t["tpr"], interval=(lo_t, hi_t),
            **common,
            sentence=(f"the {who} identifies {t['tpr'] * 100:.1f}% of {members} at {pct} FPR (interval from "
                      f"{lo_t * 100:.1f}%, above {th.max_tpr_at_low_fpr * 100:g}%)") if exceeded else
                     within_sentence(f"{who}: TPR at {pct} FPR {t['tpr'] * 100:.2f}% measured",
                                     f"[{lo_t * 100:.2f}%, {hi_t * 100:.2f}%]" + _why_wide((lo_t, hi_t), n1, n0, f),
                                     hi_t < th.max_tpr_at_low_fpr, f"{th.max_tpr_at_low_fpr * 100:g}%"),
            fix="" if exceeded else undecided_fix(f"TPR at {pct} FPR", t["tpr"], hi_t, th.max_tpr_at_low_fpr, n1, n0)))
    # empirical epsilon against the owner's budget
    budget = epsilon_budget
    if budget is not None:
        common = dict(analysis="membership", threshold=budget, confidence=cc, shows="leakage only")
        eid, ename = f"membership.{name}.epsilon", f"{who}: empirical epsilon"
        if not eps.measurable:
            out.append(Check(id=eid, name=ename, status=NOT_MEASURABLE, **common,
                             sentence=f"{who}: the empirical epsilon cannot be bounded: {eps.reason}",
                             fix=phrase("give more members and non-members ({0})", "records")))
        else:
            exceeded = eps.epsilon_lb > budget
            out.append(Check(
                id=eid, name=ename, status=EXCEEDED if exceeded else PASSED, value=eps.epsilon_lb, **common,
                sentence=(f"the {who} shows epsilon of at least {eps.epsilon_lb:.2f} (delta {eps.delta:g}), above "
                          f"the budget {budget:g}") if exceeded else
                         (f"{who}: empirical epsilon lower bound {eps.epsilon_lb:.2f} (delta {eps.delta:g}) is within "
                          f"the budget {budget:g}")))
    return out
