"""The audit's plan: every analysis it may run, in order, each declaring the checks it plans before any runs.

An analysis (a :class:`Step`) has a name (its section of results.json), the stage its progress line shows, the
number of checks it plans for these inputs, whether it runs given what ran before it, how it runs and the seed
slots it draws. A :class:`Plan` is the steps in order: :data:`PLAN` is the tabular audit's,
:data:`leakaudit.audit.steps.lm.LM_PLAN` a language model's (:func:`plan_for`). The pipeline counts the plan's
checks, derives the multiple-testing correction from them in one place (:func:`check_confidence`), runs the steps
with the one runner (:func:`run_plan`) and hands them to the one assembler
(:func:`leakaudit.audit.assemble.assemble`), which gives every check and the planned family to the pure
:func:`~leakaudit.audit.result.verdict.decide`. A step that does not run returns an empty
:class:`~leakaudit.audit.result.checks.Analysis`; one that cannot run what it planned says why in its ``skipped``
entries.

Counting a planned check that later cannot run only makes the correction more conservative; a check that runs
without being planned would make it too liberal, so :func:`run_plan` refuses that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ..exceptions import InvalidInputError, InvalidParameterError, LeakauditError
from .result.checks import Analysis, Skipped
from .inputs.duplicates import duplicates_analysis
from .steps import Plan, Step
from .steps.attribute import attribute_analysis
from .steps.dp import dp_analysis
from .steps.dtp import dtp_analysis, screen_sizes
from .steps.membership import access_of, membership_analysis, planned_attacks
from .steps.mip import mip_analysis
from .steps.property import property_analysis
from .steps.removal import records_to_remove, removal_analysis
from .steps.remedy import remedy_analysis, remedy_applies, remedy_models
from .config import escaped, phrase

__all__ = ["Step", "Plan", "PLAN", "STEPS", "check_confidence", "run_plan", "register_analysis", "plan_for",
           "not_needed", "CHEAP_TIER", "NOT_NEEDED"]


def _no_checks(cfg, data, target) -> int:
    return 0


def _membership_checks(cfg, data, target) -> int:
    # per attack: its AUC and its TPR at the low FPR, and with a budget its empirical epsilon
    return len(planned_attacks(target, data, access_of(cfg))) * (2 + (cfg.epsilon_budget is not None))


def _labels(cfg) -> bool:
    return cfg.release == "labels"


def _needs_scores(what: str) -> Callable:
    """A step's ``skip`` for an analysis that reads the model's class scores: a release that serves labels only
    never shows them."""
    def skip(ctx, done):
        if not _labels(ctx.cfg):
            return None
        return Skipped(name=what, reason="the release serves labels only (release = labels): this analysis reads the "
                                         "model's class scores, which such an adversary never sees",
                       fix="declare release scores or weights if the scores are served or the model published")
    return skip


def _structural(cfg, data, target) -> list | None:
    """The structural checks of a model released as weights (None when the release is not "weights" or the audit
    has no model object to read)."""
    from .inputs.structural import structural_checks

    if cfg.release != "weights" or target.model is None:
        return None
    t = cfg.thresholds
    try:
        return structural_checks(target.model, len(data.y_mem), min_leaf_records=t.min_leaf_records,
                                 max_parameters_per_record=t.max_parameters_per_record)
    except InvalidInputError:
        return None


def _structural_step(ctx, done):
    checks = _structural(ctx.cfg, ctx.data, ctx.target)
    if checks is None and ctx.cfg.release == "weights":
        return Analysis(name="structural", skipped=(Skipped(
            name="structural checks", reason=f"the audit holds no model whose structure it can read (a "
                                             f"{ctx.target.kind} target)",
            fix=phrase("give the model itself ({0}: a skops estimator, or a torch state_dict with {1})", "model",
                       "module"),
            missing=["model"]),))
    return Analysis(name="structural", checks=tuple(checks or ()))


# -- about how many models each step trains (Step.models): estimates for the progress lines, never for a result --


def _membership_models(ctx, done) -> int:
    """The reference models (LiRA's, InfoRMIA's and the shadow-model attack's), trained when the recipe can be retrained
    and the release shows scores."""
    if ctx.target.learner is None or _labels(ctx.cfg):
        return 0
    return ctx.cfg.settings.n_reference


def _dtp_models(ctx, done) -> int:
    """PDTP's first stage (a paired leave-one-out model per member measured and one full model, per repeat: every
    member, the profile's sample, or a screen's starting top and random sample) and the noise floor's models; the
    re-measured candidates and a growing top join when they are known."""
    if ctx.target.learner is None or _labels(ctx.cfg):
        return 0
    st, n = ctx.cfg.settings, len(ctx.data.y_mem)
    k = n if st.pdtp_records is None else min(n, st.pdtp_records)
    if st.pdtp_records is None and st.pdtp_exact_max is not None and n > st.pdtp_exact_max:
        start, sample, _ = screen_sizes(ctx, n)
        k = min(n, round(start * n) + sample)
    return (k + 1) * st.pdtp_repeats + st.noise_floor_models


def _removal_models(ctx, done) -> int:
    """PDTP again on the remaining members the DTP step measured (screened, as the removal stage does, when they are
    more than twice ``pdtp_screen_sample``) and the paired seeds' models with and without the records (0 until the
    DTP step has said which records go)."""
    if "dtp" not in done:
        return 0
    k = len(records_to_remove(ctx, done["dtp"]))
    if not k:
        return 0
    st = ctx.cfg.settings
    measured = (done["dtp"].summary or {}).get("n_records", len(ctx.data.y_mem))
    if measured > 2 * st.pdtp_screen_sample:
        remeasured = min(measured - k, round(st.pdtp_screen_fraction * (measured - k)) + st.pdtp_screen_sample)
    else:
        remeasured = measured - k
    return (max(0, remeasured) + 1) * st.pdtp_repeats + 2 * (st.dtp_removal_seeds or 0)


def _property_models(ctx, done) -> int:
    """Shadow models: five shares of each sensitive group, ``max(4, shadow_models)`` models at each."""
    if ctx.target.learner is None or not ctx.data.sensitive:
        return 0
    return len(ctx.data.sensitive) * 5 * max(4, ctx.cfg.settings.shadow_models)


def _membership_cheap(ctx, done):
    """The attacks that need no reference models (the loss attack), and the others' names, deferred."""
    result = membership_analysis(ctx, reference_models=False)
    return result, list(result.extras["deferred"])


def _whole(run: Callable) -> Callable:
    """A step's ``cheap`` for one that trains no model: its whole result, nothing deferred."""
    return lambda ctx, done: (run(ctx, done), [])


def _dtp(ctx, done):
    m = done["membership"]
    return dtp_analysis(ctx, recipe=m.recipe, lira=m.per_record.get("score_lira"),
                        reference=m.extras.get("reference"))


def _removal_not_asked(ctx, done) -> Skipped | None:
    if ctx.cfg.removal:
        return None
    n = len(records_to_remove(ctx, done["dtp"]))
    return Skipped(name="removing the records that break DTP-1",
                   reason=phrase("not asked for ({0})", ("removal", "false")),
                   fix=phrase(f"give {{0}}: it retrains the recipe without the {n} record{'s' if n != 1 else ''} "
                              f"over {ctx.cfg.settings.dtp_removal_seeds} paired seeds", ("removal", "true")))


def _attribute(ctx, done):
    return attribute_analysis(ctx)


#: The tabular audit's analyses, in the order they run (the DTP step reads the membership step's reference models
#: and recipe test; removal reads DTP's records)
STEPS: tuple[Step, ...] = (
    Step("duplicates", "duplicates", "exact and near duplicates among the records (no training)", _no_checks,
         lambda ctx, done: duplicates_analysis(ctx)),
    Step("structural", "structural", "structural checks of the released model (no training)",
         lambda cfg, data, target: len(_structural(cfg, data, target) or ()), _structural_step,
         when=lambda ctx, done: ctx.cfg.release == "weights", cheap=_whole(_structural_step)),
    Step("membership", "membership", "membership attacks", _membership_checks,
         lambda ctx, done: membership_analysis(ctx),
         models=_membership_models, cheap=_membership_cheap, expensive=True,
         # the attacks' own: LiRA's and the others' reference models, the shadow, quantile and label-only attacks
         seeds={"reference": 1, "bootstrap": 6, "shadow": 8, "epsilon": 10, "quantile": 12, "label_only": 14}),
    Step("dtp", "dtp", "leave-one-out PDTP of the training records",
         lambda cfg, data, target: 0 if _labels(cfg) else 1, _dtp, skip=_needs_scores("PDTP / DTP-1"),
         models=_dtp_models, expensive=True,
         seeds={"target": 0, "pdtp": 2, "noise_floor": 3, "dtp_test": 9}),  # "target": the audited model's too
    Step("removal", "dtp_removal", "PDTP again without the DTP-1 records, and the accuracy cost", _no_checks,
         lambda ctx, done: removal_analysis(ctx, done["dtp"], records_to_remove(ctx, done["dtp"])),
         when=lambda ctx, done: bool(records_to_remove(ctx, done["dtp"])), skip=_removal_not_asked,
         section="dtp.removal", models=_removal_models, skipped_by="removal=False, --no-removal", expensive=True,
         seeds={"removal": 11}),
    Step("remedy", "remedy", "a boosted-tree recipe's leaf and bin settings, retrained", _no_checks, remedy_analysis,
         when=remedy_applies, models=remedy_models, seeds={"remedy": 15}),
    Step("attribute", "attribute", "attribute inference of the sensitive columns",
         lambda cfg, data, target: 0 if _labels(cfg) else len(data.sensitive or []),
         _attribute, skip=_needs_scores("attribute inference"), cheap=_whole(_attribute)),
    Step("property", "property", "estimating each sensitive group's share of the training data", _no_checks,
         lambda ctx, done: property_analysis(ctx), models=_property_models, seeds={"property": 5}),
    Step("mip", "mip", "MIP noise for eta = 0.05 and its accuracy cost", _no_checks,
         lambda ctx, done: mip_analysis(ctx), seeds={"mip": 7}),
    Step("dp", "dp", "one-run audit of the claimed epsilon (DP-SGD with gradient canaries)",
         # the one-run bound and, where the audit measures it, the per-step noise check
         lambda cfg, data, target: 2 * int(cfg.claimed_epsilon is not None),
         lambda ctx, done: dp_analysis(ctx),
         when=lambda ctx, done: ctx.cfg.claimed_epsilon is not None, seeds={"dp": 13}),
)


#: The tabular audit: records.csv shows PDTP before the attacks' scores
PLAN = Plan(STEPS, record_columns=("dtp", "membership"))


#: analyses registered from outside leakaudit, per modality, in the order registered
_REGISTERED: dict[str, dict[str, Step]] = {"tabular": {}, "text": {}}


def register_analysis(name: str, run: Callable, *, title: str, description: str, checks: Callable | int = 0,
                      when: Callable | None = None, modality: str = "tabular", force: bool = False) -> Step:
    """Add an analysis to every later audit of ``modality``, after the built-in ones.

    Parameters
    ----------
    name : str
        Its name: the key of its section in results.json's ``analyses``, of its result in ``done``, and of its
        timing; lower-case letters, digits and underscores.
    run : callable
        ``run(ctx, done) -> leakaudit.audit.result.checks.Analysis``: ``ctx`` is the audit's context (``ctx.cfg``,
        and for a tabular audit ``ctx.data``, ``ctx.target``, ``ctx.engine``; for a language model ``ctx.scored``), with
        ``ctx.check_confidence`` (the corrected confidence its checks are judged at) and ``ctx.seed_for(name)`` (a
        seed of the audit's own); ``done`` maps the steps before it to their results. Its ``summary`` (a dict of
        plain values) becomes its section, its ``checks`` join the verdict, its ``per_record`` columns records.csv.
    title, description : str
        What its progress line says, and one line on what it measures (stored in results.json and shown by the
        report, which needs no plug-in to render it).
    checks : callable or int, default=0
        ``checks(cfg, data, target) -> int``, or a number: the checks it plans before any analysis runs. The
        verdict's correction covers them; a run that makes more checks than planned is refused.
    when : callable, optional
        ``when(ctx, done) -> bool``: whether it runs (default: always).
    modality : {"tabular", "text"}, default="tabular"
        The audits it joins: of a tabular model, or of a language model.
    force : bool, default=False
        Replace an analysis registered under the same name.
    """
    import re

    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise InvalidParameterError(f"name must be lower-case letters, digits and underscores; got {name!r}")
    if modality not in _REGISTERED:
        raise InvalidParameterError(f"modality must be one of {', '.join(_REGISTERED)}; got {modality!r}")
    from .steps.lm import LM_PLAN

    builtin = {s.name for plan in (PLAN, LM_PLAN) for s in plan.steps}
    if name in builtin or (name in _REGISTERED[modality] and not force):
        raise InvalidParameterError(f"an analysis named {name!r} exists already"
                                    + ("" if name in builtin else "; give force=True to replace it"))
    for arg, fn in (("run", run), ("when", when)):
        if fn is not None and not callable(fn):
            raise InvalidParameterError(f"{arg} must be callable; got {fn!r}")
    if not callable(checks) and (isinstance(checks, bool) or not isinstance(checks, int) or checks < 0):
        raise InvalidParameterError(f"checks must be a callable or a non-negative int; got {checks!r}")
    for arg, text in (("title", title), ("description", description)):
        if not isinstance(text, str) or not text.strip():
            raise InvalidParameterError(f"{arg} must be a non-empty string")
    count = checks if callable(checks) else (lambda cfg, data, target, n=int(checks): n)
    step = Step(name, name, title, count, run, when=when, section=f"analyses.{name}", description=description)
    _REGISTERED[modality][name] = step
    return step


def plan_for(modality: str) -> Plan:
    """The plan of an audit of ``modality`` ("tabular" or "text"): its built-in steps, then the analyses registered
    for it."""
    from .steps.lm import LM_PLAN

    plan = PLAN if modality == "tabular" else LM_PLAN
    return replace(plan, steps=plan.steps + tuple(_REGISTERED[modality].values()))


def check_confidence(confidence: float, n_checks: int) -> float:
    """The confidence at which each of ``n_checks`` checks is judged so that together they hold at ``confidence``
    (Bonferroni: ``1 - (1 - confidence) / n_checks``)."""
    return 1 - (1 - confidence) / max(1, n_checks)


#: the stage (results.json's ``timings`` key) of a tiered audit's cheap tier
CHEAP_TIER = "cheap_tier"

#: how a Skipped's reason starts when a tiered audit did not run an analysis because its cheap tier decided
NOT_NEEDED = "not needed: "


def run_plan(plan: Plan, ctx, stages, planned: Mapping[str, int], *, tiers: bool = False) -> dict[str, Analysis]:
    """Run each step in order (inside ``stages.stage(...)`` for its progress line); a step whose ``when`` is false
    gives an empty :class:`Analysis`. Returns every step's result by name.

    ``tiers`` (a tiered audit, :attr:`~leakaudit.audit.config.AuditConfig.tiers`): first the cheap tier, each step's
    :attr:`Step.cheap` part in plan order (one stage, :data:`CHEAP_TIER`). When a check it made withholds the model
    (:func:`~leakaudit.audit.result.verdict.withholding`) the verdict is "do not publish" whatever else is found: the
    :attr:`Step.expensive` steps and the deferred parts are not run, each listed as skipped with a reason that starts
    :data:`NOT_NEEDED`, and the others run as usual. Otherwise every step runs as without tiers (a cheap part that
    deferred nothing is reused), so the result is the full audit's. The checks planned, and so the correction, are
    the full plan's either way.

    ``stages`` (:class:`~leakaudit.audit.progress.StageProgress`) is told about how many models each step trains
    (:attr:`Step.models`) before any runs, again as each starts, and 0 for a step that does not run: the progress
    counts the whole audit's models and the time left from them."""
    from .result.verdict import withholding

    def expect(step, done) -> int:
        return int(step.models(ctx, done)) if step.models is not None else 0

    def not_running(step, done) -> Analysis | None:
        """Why ``step`` does not run here: an empty result when its ``when`` is false, its ``skip`` entry; None: it
        runs."""
        if step.when is not None and not step.when(ctx, done):
            return Analysis(name=step.name)
        skipped = step.skip(ctx, done) if step.skip is not None else None
        return None if skipped is None else Analysis(name=step.name, skipped=(skipped,))

    def counted(step, result: Analysis) -> Analysis:
        if len(result.checks) > planned.get(step.name, 0):
            raise LeakauditError(f"internal error: the {step.name} analysis made {len(result.checks)} checks but "
                                 f"planned {planned.get(step.name, 0)}; the verdict's correction would be too liberal")
        return result

    stages.expect({s.stage: expect(s, {}) for s in plan.steps})
    cheap: dict[str, tuple[Analysis, list[str]]] = {}  # a tiered audit's cheap parts, and what each deferred
    if tiers and any(s.cheap is not None for s in plan.steps):
        with stages.stage(CHEAP_TIER, "cheap tier: the checks that train no model"):
            for step in (s for s in plan.steps if s.cheap is not None):
                earlier = {k: v[0] for k, v in cheap.items()}
                why_not = not_running(step, earlier)
                result, deferred = (why_not, []) if why_not is not None else step.cheap(ctx, earlier)
                cheap[step.name] = counted(step, result), list(deferred)
    decided = withholding([c for a, _ in cheap.values() for c in a.checks])
    if decided:  # "do not publish" whatever else is found
        names = "; ".join(c.name for c in decided)
        not_needed = dict(
            reason=phrase(escaped(f"{NOT_NEEDED}the cheap tier already decided \"do not publish\": "
                                  f"{len(decided)} check{'s' if len(decided) > 1 else ''} of the given model "
                                  f"exceeded {'their thresholds' if len(decided) > 1 else 'its threshold'} at the "
                                  f"corrected confidence ({names}), which no further check can undo")),
            fix=phrase("give {0} to run everything", ("tiers", "off")))
    done: dict[str, Analysis] = {}
    for step in plan.steps:
        result, deferred = cheap.get(step.name, (None, []))
        if result is not None and (decided or not deferred):  # its cheap part is all of it that runs
            if deferred:
                result = replace(result, skipped=(*result.skipped, Skipped(name=", ".join(deferred), **not_needed)))
        elif decided and step.expensive:
            result = not_running(step, done) or Analysis(name=step.name, skipped=(Skipped(name=step.title,
                                                                                          **not_needed),))
        elif (result := not_running(step, done)) is None:
            stages.expect({step.stage: expect(step, done)})
            with stages.stage(step.stage, step.title, skip=step.skipped_by):
                result = counted(step, step.run(ctx, done))
            done[step.name] = result
            continue
        stages.expect({step.stage: 0})
        done[step.name] = result
    return done


def not_needed(done: Mapping[str, Analysis]) -> list[str]:
    """The analyses a tiered audit did not run because its cheap tier had decided (their skipped entries' names)."""
    return [sk.name for a in done.values() for sk in a.skipped if sk.reason.startswith(NOT_NEEDED)]
