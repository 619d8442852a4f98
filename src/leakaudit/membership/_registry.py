"""The membership attacks by name: how to make each, its name in words, and when the audit runs it.

One table serves the CLI (``--attack NAME``), the audit (:func:`audit_attacks`: what ``leakaudit.audit`` runs and
counts in its verdict), the report (:func:`display_name`) and the shared checks. Each attack has a modality: "tabular"
(an :class:`~leakaudit.membership.Attack` on a model's class scores or labels) or "text" (a score of a language
model's texts from their per-token scores, which the language-model audit runs: :func:`text_attacks`). An attack
written outside leakaudit joins it through :func:`register_attack`, or through a package's entry point in the group
``leakaudit.attacks`` whose object is called once, with no arguments, before the audit lists its attacks (it calls
:func:`register_attack`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np

from .._names import NameTable
from .._validation import check_choice, shown
from ..exceptions import InvalidParameterError
from ..learners import capabilities
from ._base import Attack, AttackInputs, AttackResult
from .bavaria import BaVarIA
from .distance import DistanceAttack
from .frequency import FrequencyAttack
from .informia import InfoRMIA
from .label_only import LabelOnlyAttack
from .lira import LiRA
from .quantile import QuantileRegressionAttack
from .quantile import audit_inputs as _quantile_audit_inputs
from .rmia import RMIA
from .shadow import ShadowModelAttack, shadow_plan
from .shadow import audit_run as _shadow_audit_run
from .threshold import BoundedLossAdversary, LossThresholdAttack

__all__ = ["ATTACKS", "AttackSpec", "make_attack", "available_attacks", "describe", "display_name", "register_attack",
           "audit_attacks", "text_attacks", "AUDIT_WHEN", "ACCESS", "MODALITY", "TEXT_NEEDS", "ENTRY_POINT_GROUP"]

#: When the audit runs an attack: on every target, only on one it can retrain (reference models), or only on one it
#: cannot (predictions alone)
AUDIT_WHEN = ("always", "retrainable", "not retrainable")
#: What an attack reads of the model
ACCESS = ("scores", "labels")
#: What an attack audits: a model of a table, or a causal language model's texts
MODALITY = ("tabular", "text")
#: What a text attack may need beyond the audited model's per-token scores: the next-token distribution's moments, and
#: reference models' per-token scores
TEXT_NEEDS = ("distribution", "references")
ENTRY_POINT_GROUP = "leakaudit.attacks"


@dataclass(frozen=True)
class AttackSpec:
    """One registered attack.

    Attributes
    ----------
    factory : callable
        Returns a fresh :class:`~leakaudit.membership.Attack` with its defaults (keyword arguments are set on it).
        A text attack's is its score instead: ``factory(ts, texts, refs, k) -> ndarray of shape (n,)`` (higher:
        member) from the :class:`~leakaudit.lm.score.TokenScores` ``ts``, the texts, the reference models' scores
        and the share ``k`` of tokens Min-K% averages.
    description : str
        One line: what it does and whose it is (a text attack's: its source, cited in the report).
    display : str
        Its name in words in the report and on stdout ("LiRA"); the registry name when empty.
    audit : {"always", "retrainable", "not retrainable"} or None
        When ``leakaudit.audit`` runs it (None: never; the CLI's ``membership`` command still can). An attack whose
        ``needs`` the audit's inputs lack is reported as not run, naming the missing input.
    audit_params : callable or None
        ``audit_params(ctx) -> dict``: parameters the audit sets from its context (``ctx.cfg``, ``ctx.seeds``,
        ``ctx.target``): e.g. the shadow attack's seed.
    access : {"scores", "labels"}
        What the attack reads of the model: its class scores, or only its predicted labels. The audit runs the
        "labels" attacks for a release that serves labels only (``release = "labels"``), the "scores" ones
        otherwise.
    audit_inputs : callable or None
        ``audit_inputs(ctx, inputs) -> AttackInputs``: the inputs the audit gives this attack, from the ones it
        gives every attack (None: those).
    audit_run : callable or None
        ``audit_run(ctx, attack, inputs) -> (AttackResult, resources)``: how the audit runs it, with what it used
        for results.json's ``resources`` (None: ``attack.run(inputs)``, no resources).
    modality : {"tabular", "text"}
        What it audits: a model of a table (the fields above), or a causal language model's texts (``factory`` is
        the score; ``audit`` None or "always"; ``needs``).
    needs : frozenset
        A text attack's inputs beyond the per-token scores (:data:`TEXT_NEEDS`); the language-model audit runs it
        only when they are given.

    Every ``ctx`` is the audit's context (``ctx.cfg``, ``ctx.data``, ``ctx.target``, ``ctx.seeds`` and
    ``ctx.seed_for(name)``, a seed of the audit's own for any name a plug-in picks).
    """

    factory: Callable[..., Attack]
    description: str
    display: str = ""
    audit: Literal["always", "retrainable", "not retrainable"] | None = None
    audit_params: Callable[[Any], dict] | None = None
    access: Literal["scores", "labels"] = "scores"
    audit_inputs: Callable[[Any, AttackInputs], AttackInputs] | None = None
    audit_run: Callable[[Any, Attack, AttackInputs], tuple[AttackResult, dict]] | None = None
    modality: Literal["tabular", "text"] = "tabular"
    needs: frozenset = frozenset()


def _shadow_audit_params(ctx) -> dict:
    st = ctx.cfg.settings
    return {"batch_size": shadow_plan(st.shadow_attack_models, st.shadow_attack_batch)[1],
            "random_state": ctx.seeds["shadow"]}


def _lira_audit_params(ctx) -> dict:
    return {"votes": capabilities(ctx.target.learner).votes}  # None without a learner


def _label_audit_params(ctx) -> dict:
    # one-hot groups where the model's inputs are leakaudit's encoding (a perturbed copy stays a valid encoding)
    return {"onehot_groups": ctx.target.input_onehot, "random_state": ctx.seeds["label_only"]}


_S = AttackSpec
ATTACKS: NameTable[AttackSpec] = NameTable("attack", {
    "loss": _S(LossThresholdAttack, "loss threshold at the average training loss (Yeom et al. Table I; LOSS attack)",
               "loss threshold", audit="always"),
    "yeom_adv1": _S(BoundedLossAdversary,
                    "bounded-loss adversary with 0-1 loss: member iff correctly classified (Yeom Adv. 1)"),
    "lira": _S(LiRA, "LiRA online, per-record variance (Carlini et al. 2022)", "LiRA",
               audit="retrainable", audit_params=_lira_audit_params),
    "lira_fixed": _S(partial(LiRA, fix_variance=True), "LiRA online, fixed variance"),
    "lira_offline": _S(partial(LiRA, online=False), "LiRA offline (out models only)"),
    # not run by the audit: InfoRMIA ranks a model's records by the same likelihood ratio without RMIA's count over
    # the population, which is constant (0) for every record of a well-regularised model at gamma=2 and so leaves
    # the check undecided (docs/calibration.md, "With a population")
    "rmia": _S(RMIA, "RMIA online, gamma=2 (Zarifzadeh et al. 2024)", "RMIA"),
    "rmia_offline": _S(partial(RMIA, online=False), "RMIA offline, a=0.3"),
    "informia": _S(InfoRMIA, "InfoRMIA online: RMIA's test scored by its Bayes factor in bits, no count "
                             "over the population (Tao and Shokri 2026)", "InfoRMIA", audit="retrainable"),
    "informia_offline": _S(partial(InfoRMIA, online=False), "InfoRMIA offline, a=0.3"),
    "bavaria": _S(BaVarIA, ("LiRA with an empirical-Bayes normal-inverse-gamma prior on per-record "
                            "variances, Student-t predictive (BaVarIA-style, Brannvall 2026)")),
    "quantile": _S(QuantileRegressionAttack,
                   "quantile regression on public non-members, no reference models (Bertran et al. 2023)",
                   "quantile regression", audit="not retrainable",
                   audit_params=lambda ctx: {"alpha": ctx.cfg.thresholds.low_fpr,
                                             "random_state": ctx.seeds["quantile"]},
                   audit_inputs=_quantile_audit_inputs),
    "shadow": _S(partial(ShadowModelAttack, random_state=0),
                 "shadow-model attack, one attack net with the label as input (Shokri et al. as Long ran it)",
                 "shadow-model attack", audit="retrainable", audit_params=_shadow_audit_params,
                 audit_run=_shadow_audit_run),
    "shadow_per_class": _S(partial(ShadowModelAttack, per_class=True, use_features=False, random_state=0),
                           "shadow-model attack, one attack net per class (Shokri et al.'s original)"),
    "distance": _S(DistanceAttack, "distance-based targeted attack with binned outputs (Long et al.)"),
    "frequency": _S(FrequencyAttack, "frequency-based targeted attack, Laplace-smoothed counts (Long et al.)"),
    # label-only access (a served model that returns labels): the audit of a labels release runs these instead
    "label_only": _S(LabelOnlyAttack, "label-only: share of 64 randomly perturbed copies still classified "
                                      "correctly (noise robustness, Choquette-Choo et al. 2021)",
                     "label-only attack (noise robustness)", audit="always", access="labels",
                     audit_params=_label_audit_params),
    "label_gap": _S(partial(LabelOnlyAttack, n_queries=0), "label-only gap attack: member iff correctly classified",
                    "label-only gap attack", audit="always", access="labels"),
})


def available_attacks(modality: str = "tabular") -> list[str]:
    """Registry names of the attacks of ``modality`` ("tabular" or "text"), in registry order."""
    check_choice(modality, name="modality", choices=MODALITY)
    _load_entry_points()
    return [n for n in ATTACKS.names() if ATTACKS.get(n).modality == modality]


def describe(name: str) -> str:
    return ATTACKS.get(name).description


def display_name(name: str) -> str:
    """The attack's name in words ("LiRA"); an unregistered name is returned as it is."""
    try:
        spec = ATTACKS.get(name)
    except InvalidParameterError:
        return name
    return spec.display or name


def make_attack(name: str, **params) -> Attack:
    """A fresh attack with its registry defaults, then ``params`` set on it (``set_params``)."""
    spec = ATTACKS.get(name)
    if spec.modality != "tabular":
        raise InvalidParameterError(f"{name!r} is a {spec.modality} attack (a score of texts, run by the "
                                    "language-model audit), not an Attack to make")
    attack = spec.factory()
    return attack.set_params(**params) if params else attack


def as_attack(a) -> Attack:
    """``a`` itself, or a fresh attack of the registry name ``a`` (:func:`make_attack`)."""
    return make_attack(a) if isinstance(a, str) else a


def register_attack(name: str, factory: Callable[..., Attack], *, description: str, display: str = "",
                    audit: str | None = "always", audit_params: Callable[[Any], dict] | None = None,
                    access: str = "scores", audit_inputs: Callable | None = None, audit_run: Callable | None = None,
                    modality: str = "tabular", needs=(), force: bool = False) -> AttackSpec:
    """Add a membership attack: the CLI, :func:`leakaudit.audit` and the report then know it by ``name``.

    Parameters
    ----------
    name : str
        Registry name (results.json's key, the ``score_NAME`` column of records.csv).
    factory : callable
        ``factory()`` returns a fresh :class:`~leakaudit.membership.Attack` (a class works). Its ``needs`` say
        which inputs it reads; the audit reports it as not run when they are missing.
    description : str
        One line for ``--help`` and the report.
    display : str, default=""
        Its name in words (default: ``name``).
    audit : {"always", "retrainable", "not retrainable"} or None, default="always"
        When the audit runs it and counts its checks (AUC and TPR at the low FPR) in the verdict; None: never.
    audit_params : callable, optional
        ``audit_params(ctx) -> dict`` of parameters set from the audit's context (e.g. ``{"random_state":
        ctx.seed_for("my_attack")}``: a seed derived from the audit's, recorded with it).
    access : {"scores", "labels"}, default="scores"
        What it reads of the model: class scores, or only predicted labels (run for ``release = "labels"``).
    audit_inputs, audit_run : callable, optional
        How the audit prepares its inputs and runs it (:class:`AttackSpec`); default: the inputs every attack gets,
        and ``attack.run(inputs)``.
    modality : {"tabular", "text"}, default="tabular"
        "text": an attack on a causal language model's texts, run by the language-model audit (and
        :func:`leakaudit.lm.run_lm_attacks`); ``factory(ts, texts, refs, k)`` returns its scores, one per text
        (:class:`AttackSpec`), ``description`` is its source, ``audit`` is None or "always", and the tabular
        options (``audit_params``, ``access``, ``audit_inputs``, ``audit_run``) do not apply.
    needs : iterable of {"distribution", "references"}, default=()
        A text attack's inputs beyond the per-token scores: the next-token distribution's moments, reference
        models' scores; the audit runs it only when they are given.
    force : bool, default=False
        Replace an attack of the same name.
    """
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(f"name must be a non-empty string; got {shown(name)}")
    if not callable(factory):
        raise InvalidParameterError(f"factory must be callable (an Attack class or a function); got {shown(factory)}")
    if audit is not None:
        check_choice(audit, name="audit", choices=AUDIT_WHEN)
    if not isinstance(description, str) or not description.strip():
        raise InvalidParameterError("description must be a non-empty string")
    if not isinstance(display, str):
        raise InvalidParameterError(f"display must be a string (the attack's name in words; \"\" for its name); got "
                                    f"{shown(display)}")
    check_choice(access, name="access", choices=ACCESS)
    check_choice(modality, name="modality", choices=MODALITY)
    if isinstance(needs, str) or not all(isinstance(n, str) and n in TEXT_NEEDS for n in _iterable(needs)):
        raise InvalidParameterError(f"needs must be a collection of {', '.join(map(repr, TEXT_NEEDS))}; got "
                                    f"{shown(needs)}")
    if needs and modality != "text":
        raise InvalidParameterError("needs applies to text attacks (modality=\"text\"); a tabular attack's inputs "
                                    "are its class's needs")
    if modality == "text" and audit not in (None, "always"):
        raise InvalidParameterError(f"a text attack's audit must be \"always\" or None; got {shown(audit)}")
    if not isinstance(force, bool):
        raise InvalidParameterError(f"force must be True or False; got {shown(force)}")
    for arg, fn in (("audit_params", audit_params), ("audit_inputs", audit_inputs), ("audit_run", audit_run)):
        if fn is not None and not callable(fn):
            raise InvalidParameterError(f"{arg} must be callable or None; got {shown(fn)}")
    return ATTACKS.add(name, AttackSpec(factory, description, display, audit, audit_params, access, audit_inputs,
                                        audit_run, modality, frozenset(needs)), force=force)


def _iterable(x) -> tuple:
    try:
        return tuple(x)
    except TypeError:
        return (None,)


_entry_points_loaded = False


def _load_entry_points() -> None:
    """Call each installed package's ``leakaudit.attacks`` entry point once (each registers its attacks)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            hook = ep.load()
            hook()
        except Exception as exc:  # a broken plug-in is named, not a traceback deep in the audit
            raise InvalidParameterError(f"the {ENTRY_POINT_GROUP} entry point {ep.name!r} ({ep.value}) failed: "
                                        f"{type(exc).__name__}: {exc}") from None


def audit_attacks(retrainable: bool, access: str = "scores") -> list[str]:
    """Registry names of the attacks the audit runs on a target that can (or cannot) be retrained, reading
    ``access`` ("scores", or "labels" for a release that serves labels only), in registry order (leakaudit's own
    first, then those registered later)."""
    if not isinstance(retrainable, (bool, np.bool_)):
        raise InvalidParameterError(f"retrainable must be True or False; got {shown(retrainable)}")
    check_choice(access, name="access", choices=ACCESS)
    _load_entry_points()
    want = "retrainable" if retrainable else "not retrainable"
    return [n for n in available_attacks() if ATTACKS.get(n).audit in ("always", want)
            and ATTACKS.get(n).access == access]


def text_attacks(distribution: bool, references: bool) -> list[str]:
    """Registry names of the text attacks the language-model audit runs, in registry order, whose ``needs`` the
    inputs with (or without) the next-token ``distribution`` and reference models' scores (``references``) meet."""
    _load_entry_points()
    have = {need for need, given in zip(TEXT_NEEDS, (distribution, references)) if given}
    return [n for n in available_attacks("text") if ATTACKS.get(n).audit is not None and ATTACKS.get(n).needs <= have]
