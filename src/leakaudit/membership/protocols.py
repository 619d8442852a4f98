"""Membership protocols: audit one model, Long et al.'s protocol, Yeom et al.'s split protocol and Exp^M.

* :func:`audit_model` — members vs non-members of one given model, every
  applicable attack, ROC, AUC and TPR at 1%, 0.1%, 0.01% FPR with bootstrap
  intervals, per-record scores.
* :func:`reference_model_experiment` — Carlini et al.'s setup: 1 target + K
  reference models trained in complementary pairs on halves of one pool; the
  target is audited with the others as references.
* :func:`long_protocol` — Long et al. §5.4 (spec long-dtp.md §4.3).
* :func:`yeom_split_protocol` — Yeom et al. §6.1: random 75/25 splits,
  advantage = member rate on train − member rate on test.
* :func:`membership_experiment` — a literal Monte-Carlo run of Exp^M
  (Experiment 1) reporting μ(n, D).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._random import RandomStateLike, check_random_state, seed_to_int, spawn_seeds
from .._validation import check_choice, check_consistent_length, check_indices, check_labels, check_matrix, check_scalar
from ..engine import Engine, reports_engine_stats
from ..exceptions import InvalidInputError, InvalidParameterError, NotEstimableWarning
from ..metrics import DEFAULT_FPRS, clopper_pearson, decision_metrics, evaluate_membership, pearson, roc_curve
from ._base import Attack, AttackInputs, AttackResult, audit_reference_models, cross_entropy_loss, fit_reference_models
from ._registry import as_attack
from .distance import DistanceAttack, train_targeted_shadows
from .frequency import FrequencyAttack
from .results import AttackSummary, LongProtocolResult, MembershipAudit, MembershipExperimentResult, YeomSplitResult
from .shadow import ShadowModelAttack

__all__ = [
    "audit_model",
    "run_attacks",
    "reference_model_experiment",
    "reference_model_inputs",
    "long_protocol",
    "yeom_split_protocol",
    "membership_experiment",
    "DEFAULT_ATTACKS",
]

DEFAULT_ATTACKS = ("loss", "lira", "rmia", "informia", "shadow", "distance", "frequency")


def _roc_points(is_member, scores, n_points: int = 200) -> dict[str, list[float]]:
    fpr, tpr, _ = roc_curve(is_member, scores)
    grid = np.unique(np.concatenate([np.logspace(-5, 0, n_points // 2), np.linspace(0, 1, n_points // 2)]))
    idx = np.searchsorted(fpr, grid, side="right") - 1  # last ROC point with fpr <= grid value
    idx = np.unique(np.clip(idx, 0, len(fpr) - 1))
    return {"fpr": fpr[idx].tolist(), "tpr": tpr[idx].tolist()}


def _summarise(name, res: AttackResult, is_member, *, fprs, n_boot, confidence, random_state) -> AttackSummary:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        metrics = evaluate_membership(is_member, res.scores_array, fprs=fprs, n_boot=n_boot, confidence=confidence,
                                      random_state=random_state)
        dm = decision_metrics(is_member, res.decisions_array)
    info = {k: v for k, v in res.info.items() if k not in ("n_in", "n_out")}
    return AttackSummary(attack=name, metrics=metrics, decision_metrics=dm,
                         roc=_roc_points(is_member, res.scores_array),
                         info=info)


def run_attacks(inputs: AttackInputs, is_member, attacks: Sequence, *, fprs=DEFAULT_FPRS, n_boot: int = 1000,
                confidence: float = 0.95, random_state: RandomStateLike = 0):
    """Run attacks on the same inputs; skip (with the reason) those whose inputs are missing.

    Returns
    -------
    summaries : dict name -> AttackSummary
    scores : dict name -> ndarray (n,)
    skipped : dict name -> str
    """
    summaries, scores, skipped = {}, {}, {}
    for a in attacks:
        att = as_attack(a)
        name = a if isinstance(a, str) else att.name
        miss = att.missing(inputs)
        if miss:
            skipped[name] = f"needs {', '.join(miss)}"
            continue
        res = att.run(inputs)
        scores[name] = res.scores_array
        summaries[name] = _summarise(name, res, is_member, fprs=fprs, n_boot=n_boot, confidence=confidence,
                                     random_state=random_state)
    return summaries, scores, skipped


def _needs_reference(attacks) -> bool:
    return any({"reference", "population_reference"} & set(as_attack(a).needs) for a in attacks)


@reports_engine_stats
def audit_model(
    model,
    X_members,
    y_members,
    X_nonmembers,
    y_nonmembers,
    *,
    attacks: Sequence = DEFAULT_ATTACKS,
    learner=None,
    X_population=None,
    y_population=None,
    n_reference: int = 64,
    train_loss: float | None = None,
    n_classes: int | None = None,
    fprs=DEFAULT_FPRS,
    n_boot: int = 1000,
    confidence: float = 0.95,
    random_state: RandomStateLike = 0,
    engine: Engine | None = None,
) -> MembershipAudit:
    """Audit one trained model: how well does each attack tell its members from non-members?

    Parameters
    ----------
    model : object with ``predict_proba``
        The model under audit.
    X_members, y_members : arrays (n1, d), (n1,)
        Records the model was trained on.
    X_nonmembers, y_nonmembers : arrays (n0, d), (n0,)
        Records from the same population it was not trained on.
    attacks : sequence of str or Attack
        Registry names (see ``leakaudit.membership.available_attacks()``) or
        attack objects. Attacks whose inputs are missing are listed in ``skipped``.
    learner : Learner, optional
        The training algorithm, for reference (shadow) models. Without it, only
        attacks that need no reference models run.
    X_population, y_population : arrays, optional
        Other records from the population, never trained on: RMIA compares
        against them (RMIA is skipped without them).
    n_reference : int, default=64
        Number of reference models (even), trained as ``leakaudit audit``
        trains them (:func:`~leakaudit.membership.audit_reference_models`): in
        complementary pairs on halves of the audited records, so each record is
        "in" for half of them; 64 is the audit's standard profile.
    train_loss : float, optional
        L_S for the loss attack's decisions; default the mean cross-entropy on
        the members (the average training loss an owner would publish).
    n_classes : int, optional
    fprs : sequence of float, default=(0.01, 0.001, 0.0001)
    n_boot : int, default=1000
        Bootstrap resamples for the intervals.
    confidence : float, default=0.95
        Level of the intervals.
    random_state : None, int or Generator
    engine : leakaudit.engine.Engine, optional
        Trains the reference models (its backend and resumable on-disk cache); default
        :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    MembershipAudit
        With ``engine_stats``: what the engine did.
    """
    Xm, Xn = check_matrix(X_members, name="X_members"), check_matrix(X_nonmembers, name="X_nonmembers")
    ym, yn = check_labels(y_members, name="y_members"), check_labels(y_nonmembers, name="y_nonmembers")
    check_consistent_length(X_members=Xm, y_members=ym)
    check_consistent_length(X_nonmembers=Xn, y_nonmembers=yn)
    if Xm.shape[1] != Xn.shape[1]:
        raise InvalidInputError(f"X_members has {Xm.shape[1]} features but X_nonmembers has {Xn.shape[1]}")
    if not hasattr(model, "predict_proba"):
        raise InvalidInputError("model must have predict_proba (a classifier)")
    X = np.vstack([Xm, Xn])
    y = np.concatenate([ym, yn])
    is_member = np.r_[np.ones(len(ym), int), np.zeros(len(yn), int)]
    probs = np.asarray(model.predict_proba(X), dtype=float)
    C = n_classes or probs.shape[1]
    if probs.shape != (len(X), C):
        raise InvalidInputError(f"model.predict_proba returned shape {probs.shape}; expected ({len(X)}, {C})")
    has_pop = X_population is not None
    if has_pop:
        Xp = check_matrix(X_population, name="X_population")
        yp = check_labels(y_population, name="y_population", n_classes=C)
        check_consistent_length(X_population=Xp, y_population=yp)
    L_S = float(np.mean(cross_entropy_loss(probs[is_member == 1], ym))) if train_loss is None else float(train_loss)
    inputs = AttackInputs(probs=probs, y=y, X=X, train_loss=L_S, model=model)
    rng = check_random_state(random_state)
    settings: dict[str, Any] = {"train_loss": L_S, "n_reference": 0, "n_population": int(len(Xp)) if has_pop else 0,
                                "train_loss_source": "given" if train_loss is not None else "mean loss on members"}
    if learner is not None and _needs_reference(attacks):
        refs = audit_reference_models(learner, X, y, n_reference, X_population=Xp if has_pop else None,
                                      y_population=yp if has_pop else None, n_classes=C,
                                      random_state=seed_to_int(rng), engine=engine)
        inputs.reference = refs.subset(np.arange(len(X)))
        if has_pop:
            pop = np.arange(len(X), len(X) + len(Xp))
            inputs.population_probs = np.asarray(model.predict_proba(Xp), float)
            inputs.population_y = yp
            inputs.population_reference = refs.subset(pop)
        settings["n_reference"] = int(n_reference)
    summaries, scores, skipped = run_attacks(inputs, is_member, attacks, fprs=fprs, n_boot=n_boot,
                                             confidence=confidence, random_state=seed_to_int(rng))
    if learner is None:
        skipped = {k: (v + " (pass a learner to train reference models)" if "reference" in v else v)
                   for k, v in skipped.items()}
    return MembershipAudit(n_members=len(ym), n_nonmembers=len(yn), attacks=summaries, skipped=skipped,
                           is_member=is_member, record_ids=np.arange(len(y)), scores=scores, settings=settings)


def reference_model_inputs(learner, X, y, *, n_reference: int = 64, n_audit: int | None = None,
                           target_index: int = 0, random_state: RandomStateLike = 0,
                           engine: Engine | None = None) -> tuple[AttackInputs, np.ndarray, dict]:
    """The attack inputs of :func:`reference_model_experiment`, before any attack runs.

    Returns
    -------
    inputs : AttackInputs
        The target's outputs on the audited records, the K reference models on them (``inputs.reference``, in
        training order: complementary pairs (0, 1), (2, 3), ...) and on the population points.
    is_member : ndarray of int (n_audit,)
    settings : dict
        What :attr:`MembershipAudit.settings` records (``record_ids``: the audited rows of X).
    """
    X = check_matrix(X, name="X")
    y = check_labels(y, name="y")
    check_consistent_length(X=X, y=y)
    check_scalar(n_reference, name="n_reference", kind=(int, np.integer), min_val=2)
    rng = check_random_state(random_state)
    C = max(int(y.max()) + 1, 2)
    refs_all = fit_reference_models(learner, X, y, n_reference + 2, n_classes=C, random_state=rng, engine=engine)
    partner = target_index ^ 1
    keep = [k for k in range(n_reference + 2) if k not in (target_index, partner)]
    target = refs_all.models(target_index)
    refs = refs_all.models(keep)
    perm = rng.permutation(len(X))
    n_audit = len(X) // 2 if n_audit is None else int(n_audit)
    aud, pop = np.sort(perm[:n_audit]), np.sort(perm[n_audit:])
    is_member = target.in_mask[0, aud].astype(int)
    if is_member.min() == is_member.max():
        raise InvalidInputError("the audited records are all members or all non-members; use a larger n_audit")
    probs = target.probs[0]
    L_S = float(np.mean(cross_entropy_loss(probs[target.in_mask[0]], y[target.in_mask[0]])))
    inputs = AttackInputs(probs=probs[aud], y=y[aud], X=X[aud], reference=refs.subset(aud), train_loss=L_S,
                          population_probs=probs[pop] if len(pop) else None,
                          population_y=y[pop] if len(pop) else None,
                          population_reference=refs.subset(pop) if len(pop) else None)
    return inputs, is_member, {"n_reference": n_reference, "n_population": int(len(pop)), "train_loss": L_S,
                               "design": "paired complementary halves; target = model %d" % target_index,
                               "record_ids": aud}


@reports_engine_stats
def reference_model_experiment(
    learner,
    X,
    y,
    *,
    n_reference: int = 64,
    attacks: Sequence = ("loss", "lira", "lira_offline", "rmia", "rmia_offline"),
    n_audit: int | None = None,
    target_index: int = 0,
    fprs=DEFAULT_FPRS,
    n_boot: int = 1000,
    random_state: RandomStateLike = 0,
    engine: Engine | None = None,
) -> MembershipAudit:
    """Carlini et al.'s evaluation: K + 2 models on complementary halves of a pool; one is the target.

    Model ``target_index`` is audited; its pair partner is dropped (it saw
    exactly the target's non-members) and the remaining K models are the
    references. The first ``n_audit`` rows of a random permutation of the pool
    are the audited records (members: those in the target's half); the rest
    are RMIA's population points (:func:`reference_model_inputs`).

    The K + 2 models are trained by ``engine`` (default :func:`leakaudit.engine.default_engine`).

    Returns
    -------
    MembershipAudit (``record_ids`` are row indices into X; ``engine_stats``: what the engine did)
    """
    rng = check_random_state(random_state)
    inputs, is_member, settings = reference_model_inputs(learner, X, y, n_reference=n_reference, n_audit=n_audit,
                                                         target_index=target_index, random_state=rng, engine=engine)
    aud = settings.pop("record_ids")
    summaries, scores, skipped = run_attacks(inputs, is_member, attacks, fprs=fprs, n_boot=n_boot,
                                             random_state=seed_to_int(rng))
    return MembershipAudit(n_members=int(is_member.sum()), n_nonmembers=int((1 - is_member).sum()),
                           attacks=summaries, skipped=skipped, is_member=is_member, record_ids=aud, scores=scores,
                           settings=settings)


# -- Long et al. ----------------------------------------------------------------------------------


def _decision_summary(guess: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    """guess, truth: (iterations, 2, T) of 0/1."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        pooled = decision_metrics(truth.ravel(), guess.ravel())
        per_it = [decision_metrics(truth[i].ravel(), guess[i].ravel()) for i in range(guess.shape[0])]
    keys = ("accuracy", "precision", "recall", "f1")
    averaged = {k: float(np.nanmean([m[k] for m in per_it])) if not all(np.isnan(m[k]) for m in per_it)
                else float("nan") for k in keys}
    per_target = (guess == truth).mean(axis=(0, 1))
    return {"pooled": {k: pooled[k] for k in keys}, "averaged": averaged,
            "per_target_accuracy": per_target.tolist()}


@reports_engine_stats
def long_protocol(
    learner,
    X,
    y,
    *,
    candidates=None,
    candidate_size: int = 2000,
    train_size: int | None = None,
    n_targets: int | None = None,
    targets=None,
    n_iterations: int = 100,
    attacks: Sequence[str] = ("untargeted", "frequency", "distance"),
    shadow_reuse: str = "per_attack",
    n_shadow_pairs: int = 5,
    n_untargeted_shadows: int = 20,
    untargeted_attack=None,
    frequency_attack=None,
    distance_attack=None,
    pdtp=None,
    bin_width: float = 0.01,
    random_state: RandomStateLike = 0,
    engine: Engine | None = None,
) -> LongProtocolResult:
    """Long et al.'s evaluation protocol (§5.4; spec long-dtp.md §4.3).

    100 targets fixed from the candidate set D (drawn uniformly, or given); in each iteration D is split
    into random halves D1, D2, models c1 = A(D1), c2 = A(D2) are trained and
    every attack is run on every target against both (so each target is in
    exactly once and out once per iteration: baseline accuracy 0.5).

    Parameters
    ----------
    learner : Learner
    X, y : arrays (N, d), (N,)
    candidates : array of int, optional
        Row indices of D; default a random sample of ``candidate_size`` rows.
    train_size : int, optional
        |T| = |D|/2 (default).
    n_targets : int, optional
        Targets drawn uniformly from D (default 100); with ``targets``, their number (checked).
    targets : array of int, optional
        Row indices of the targets, distinct and all in D, instead of the uniform draw (the paper says only
        "randomly select 100 records out of D"; another draw, e.g. from one class, is then the caller's).
    n_iterations : int
    attacks : subset of ("untargeted", "frequency", "distance")
    shadow_reuse : {"per_attack", "per_iteration", "per_target"}, default="per_attack"
        When the targeted attacks' shadow models are trained. ``"per_attack"`` (the paper's protocol, spec §4.3):
        fresh shadow models for every attack on every target model, shared only by the frequency and distance
        attacks scored on that same target model: 2·n_iterations·n_targets·n_shadow_pairs·2 shadow models.
        ``"per_iteration"``: one set per iteration (both target models). ``"per_target"``: one set for the whole
        run, n_iterations·2 times fewer models, a reduced stand-in whose per-target accuracies share their shadow
        models' noise across iterations (say so where it is used).
    n_shadow_pairs : int, default=5
        Pairs of targeted shadow models (with / without the target).
    n_untargeted_shadows : int, default=20
        M, the untargeted attack's shadow models (trained once, on subsets of D of size |T|).
    untargeted_attack, frequency_attack, distance_attack : Attack, optional
        Override the defaults (ShadowModelAttack(), FrequencyAttack(), DistanceAttack()).
    pdtp : array (n_targets,) or callable, optional
        Average PDTP of each target; adds Pearson correlations with per-target accuracy. A callable is called
        once, after the attacks, as ``pdtp(train_sets, outputs, targets)`` and returns that array: ``train_sets``
        the target models' training sets in training order (c1 = A(D1), c2 = A(D2) of iteration 1, then those of
        iteration 2, ...), ``outputs`` their raw outputs at the targets, shape (2·n_iterations, n_targets, C),
        ``targets`` the targets' row indices. Long et al. measure PDTP in the protocol's first 10 iterations with
        each iteration's own target model as A(D_i) (§5.4; spec §4.3): a callable lets the caller do that.
    bin_width : float, default=0.01
    random_state : None, int or Generator
    engine : leakaudit.engine.Engine, optional
        Trains the target and shadow models; default :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    LongProtocolResult
        With ``engine_stats``: what the engine did.
    """
    check_choice(shadow_reuse, name="shadow_reuse", choices=("per_attack", "per_iteration", "per_target"))
    for a in attacks:
        check_choice(a, name="attacks", choices=("untargeted", "frequency", "distance"))
    X = check_matrix(X, name="X")
    y = check_labels(y, name="y")
    check_consistent_length(X=X, y=y)
    rng = check_random_state(random_state)
    C = max(int(y.max()) + 1, 2)
    if candidates is None:
        if candidate_size > len(X):
            raise InvalidParameterError(f"candidate_size={candidate_size} exceeds the {len(X)} rows of X")
        candidates = np.sort(rng.choice(len(X), size=candidate_size, replace=False))
    D = np.asarray(candidates, dtype=np.int64)
    n = len(D) // 2 if train_size is None else int(train_size)
    if targets is None:
        n_targets = 100 if n_targets is None else n_targets
        check_scalar(n_targets, name="n_targets", kind=(int, np.integer), min_val=1, max_val=len(D))
        targets = np.sort(rng.choice(D, size=n_targets, replace=False))
    else:
        targets = np.sort(check_indices(targets, name="targets", n=len(X), unique=True))
        outside = targets[~np.isin(targets, D)]
        if outside.size:
            raise InvalidInputError(f"targets must be rows of the candidate set D; row {outside[0]} is not")
        if n_targets is not None and n_targets != len(targets):
            raise InvalidParameterError(f"n_targets={n_targets} but {len(targets)} targets were given")
        n_targets = len(targets)
    untargeted = untargeted_attack or ShadowModelAttack(bin_width=bin_width, random_state=seed_to_int(rng))
    freq = frequency_attack or FrequencyAttack(bin_width=bin_width)
    dist = distance_attack or DistanceAttack(bin_width=bin_width)

    # target models: 2 per iteration on random halves of D
    halves = []
    for _ in range(n_iterations):
        perm = rng.permutation(D)
        halves += [perm[:n], perm[n:2 * n]]
    target_probs = engine.predict_many(learner, X, y, halves, spawn_seeds(seed_to_int(rng), len(halves)), X[D], C)
    pos = {int(r): i for i, r in enumerate(D)}
    t_pos = np.array([pos[int(t)] for t in targets])
    train_acc, test_acc = [], []
    for k, h in enumerate(halves):
        in_h = np.isin(D, h)
        pred = target_probs[k].argmax(1)
        train_acc.append(np.mean(pred[in_h] == y[D][in_h]))
        test_acc.append(np.mean(pred[~in_h] == y[D][~in_h]))
    truth = np.stack([np.isin(targets, h) for h in halves]).reshape(n_iterations, 2, -1).astype(int)
    q = target_probs[:, t_pos].reshape(n_iterations, 2, len(targets), C)
    guesses: dict[str, np.ndarray] = {}

    if "untargeted" in attacks:
        shadow_sets = [rng.choice(D, size=n, replace=False) for _ in range(n_untargeted_shadows)]
        sp = engine.predict_many(learner, X, y, shadow_sets, spawn_seeds(seed_to_int(rng), len(shadow_sets)), X[D],
                                 C)
        sin = np.stack([np.isin(D, s) for s in shadow_sets])
        untargeted.fit(sp, sin, y[D], X[D])
        g = np.empty_like(truth)
        for i in range(n_iterations):
            for j in range(2):
                g[i, j] = untargeted.score(q[i, j], y[targets], X[targets]).decisions_array
        guesses["untargeted"] = g

    targeted = [a for a in ("frequency", "distance") if a in attacks]
    if targeted:
        def shadows():
            return train_targeted_shadows(learner, X, y, targets, train_size=n, n_pairs=n_shadow_pairs,
                                          candidates=D, n_classes=C, random_state=seed_to_int(rng),
                                          engine=engine)
        g_t = {a: np.empty_like(truth) for a in targeted}
        fixed = shadows() if shadow_reuse == "per_target" else None
        for i in range(n_iterations):
            it_sh = shadows() if shadow_reuse == "per_iteration" else fixed
            for j in range(2):
                sh = shadows() if shadow_reuse == "per_attack" else it_sh
                for a in targeted:
                    att = freq if a == "frequency" else dist
                    g_t[a][i, j] = att.score(q[i, j], sh.probs, sh.in_mask).decisions_array
        guesses.update(g_t)

    if callable(pdtp):
        # the caller measures PDTP on these very target models (their training sets and outputs at the targets)
        pdtp = pdtp(halves, target_probs[:, t_pos], targets)
    out: dict[str, dict[str, Any]] = {}
    for a in attacks:
        out[a] = _decision_summary(guesses[a], truth)
        if pdtp is not None:
            pd = np.asarray(pdtp, float)
            if pd.shape != (len(targets),):
                raise InvalidInputError(f"pdtp must have one value per target ({len(targets)}); got {pd.shape}")
            r, p = pearson(pd, np.asarray(out[a]["per_target_accuracy"]))
            out[a]["pdtp_correlation"] = {"r": r, "p": p}
    max_acc = np.max([out[a]["per_target_accuracy"] for a in attacks], axis=0) if attacks else np.array([])
    return LongProtocolResult(
        targets=targets, attacks=out, target_train_accuracy=float(np.mean(train_acc)),
        target_test_accuracy=float(np.mean(test_acc)), max_per_target_accuracy=max_acc,
        settings={"n_iterations": n_iterations, "n_targets": n_targets, "candidate_size": len(D), "train_size": n,
                  "shadow_reuse": shadow_reuse, "n_shadow_pairs": n_shadow_pairs,
                  "n_untargeted_shadows": n_untargeted_shadows, "bin_width": bin_width},
    )


# -- Yeom et al. ----------------------------------------------------------------------------------


def yeom_split_protocol(
    learner,
    X,
    y,
    attacks: Mapping[str, Attack],
    *,
    n_splits: int = 100,
    test_size: float = 0.25,
    seeds: Sequence[int] | None = None,
) -> YeomSplitResult:
    """Yeom et al.'s split protocol (§6.1): advantage = member rate on train − member rate on test.

    Split ``i`` is ``sklearn.model_selection.train_test_split(rows, test_size=test_size,
    random_state=seeds[i])`` (seeds 0..n_splits−1 by default, as the authors' code).
    A model is trained on the train part; each attack labels every row.

    Parameters
    ----------
    learner : Learner
        Classification (attacks get probabilities and L_S = mean training
        cross-entropy) or regression (attacks get ``extra["residuals"]`` = y − ŷ).
    X, y : arrays
    attacks : dict name -> Attack
    n_splits : int, default=100
    test_size : float, default=0.25
    seeds : sequence of int, optional

    Returns
    -------
    YeomSplitResult
    """
    from sklearn.model_selection import train_test_split

    X = check_matrix(X, name="X")
    reg = learner.task == "regression"
    y = np.asarray(y, float) if reg else check_labels(y, name="y")
    check_consistent_length(X=X, y=y)
    seeds = list(range(n_splits)) if seeds is None else [int(s) for s in seeds]
    C = None if reg else max(int(y.max()) + 1, 2)
    per = {k: [] for k in attacks}
    tr_rate = {k: [] for k in attacks}
    te_rate = {k: [] for k in attacks}
    tr_score, te_score = [], []
    rows = np.arange(len(X))
    for s in seeds:
        tr, te = train_test_split(rows, test_size=test_size, random_state=s)
        is_tr = np.zeros(len(X), bool)
        is_tr[tr] = True
        model = learner.fit(X[tr], y[tr], random_state=s, n_classes=C)
        if reg:
            pred = np.asarray(model.predict(X), float)
            inputs = AttackInputs(probs=None, y=y, X=X, extra={"residuals": y - pred})
            tr_score.append(float(np.sqrt(np.mean((y[tr] - pred[tr]) ** 2))))
            te_score.append(float(np.sqrt(np.mean((y[te] - pred[te]) ** 2))))
        else:
            probs = np.asarray(model.predict_proba(X), float)
            L_S = float(np.mean(cross_entropy_loss(probs[tr], y[tr])))
            inputs = AttackInputs(probs=probs, y=y, X=X, train_loss=L_S, model=model)
            acc = probs.argmax(1) == y
            tr_score.append(float(acc[tr].mean()))
            te_score.append(float(acc[te].mean()))
        for k, att in attacks.items():
            d = att.run(inputs).decisions_array
            tr_rate[k].append(d[is_tr].mean())
            te_rate[k].append(d[~is_tr].mean())
            per[k].append(d[is_tr].mean() - d[~is_tr].mean())
    return YeomSplitResult(
        advantage={k: float(np.mean(v)) for k, v in per.items()},
        advantage_sd={k: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0 for k, v in per.items()},
        train_member_rate={k: float(np.mean(v)) for k, v in tr_rate.items()},
        test_member_rate={k: float(np.mean(v)) for k, v in te_rate.items()},
        per_split=per, train_score=float(np.mean(tr_score)), test_score=float(np.mean(te_score)),
        settings={"n_splits": len(seeds), "test_size": test_size,
                  "score": "RMSE" if reg else "accuracy"},
    )


@reports_engine_stats
def membership_experiment(
    learner,
    X,
    y,
    n: int,
    attack: Attack | str = "yeom_adv1",
    *,
    n_trials: int = 1000,
    challenges_per_model: int = 1,
    confidence: float = 0.95,
    random_state: RandomStateLike = None,
    engine: Engine | None = None,
) -> MembershipExperimentResult:
    """Monte-Carlo estimate of Yeom et al.'s membership advantage via Exp^M (Experiment 1, Def. 4).

    D is the uniform distribution over the rows of (X, y). Each trial: draw
    S ~ D^n (with replacement), train A_S, draw b uniformly, draw the challenge
    z ~ S (b = 0) or z ~ D (b = 1); the trial is won iff the attack answers
    "member" exactly when b = 0. ``challenges_per_model`` > 1 reuses each model
    for several independent (b, z) draws (same expectation, cheaper).

    The models are trained by ``engine`` (default :func:`leakaudit.engine.default_engine`), 100 per call.

    Returns
    -------
    MembershipExperimentResult
        Adv = 2·Pr[win] − 1 with a Clopper–Pearson interval, and
        μ(n, D) = 1 − (1 − 1/N)^n, the chance a fresh draw from D lands in S;
        no adversary can exceed 1 − μ; ``engine_stats``: what the engine did.
    """
    X = check_matrix(X, name="X")
    y = check_labels(y, name="y")
    check_consistent_length(X=X, y=y)
    check_scalar(n, name="n", kind=(int, np.integer), min_val=1)
    check_scalar(n_trials, name="n_trials", kind=(int, np.integer), min_val=1)
    check_scalar(challenges_per_model, name="challenges_per_model", kind=(int, np.integer), min_val=1)
    att = as_attack(attack)
    rng = check_random_state(random_state)
    N = len(X)
    C = max(int(y.max()) + 1, 2)
    n_models = int(np.ceil(n_trials / challenges_per_model))
    wins, said_member_b0, said_member_b1, n_b0, n_b1, hits_b1 = 0, 0, 0, 0, 0, 0
    done = 0
    for start in range(0, n_models, 100):
        m = min(100, n_models - start)
        subsets = [rng.integers(0, N, size=n) for _ in range(m)]
        seeds = spawn_seeds(seed_to_int(rng), m)
        bank = engine.fit_bank(learner, X, y, subsets, seeds, n_classes=C)
        for k in range(m):
            c = min(challenges_per_model, n_trials - done)
            if c <= 0:
                break
            S = subsets[k]
            b = rng.integers(0, 2, size=c)
            z = np.where(b == 0, S[rng.integers(0, n, size=c)], rng.integers(0, N, size=c))
            model = bank.model(k)
            probs = np.asarray(model.predict_proba(X[z]), float)
            L_S = float(np.mean(cross_entropy_loss(np.asarray(model.predict_proba(X[S]), float), y[S])))
            d = att.run(AttackInputs(probs=probs, y=y[z], X=X[z], train_loss=L_S, model=model)).decisions_array
            wins += int(np.sum((d == 1) == (b == 0)))
            said_member_b0 += int(np.sum(d[b == 0]))
            said_member_b1 += int(np.sum(d[b == 1]))
            n_b0 += int(np.sum(b == 0))
            n_b1 += int(np.sum(b == 1))
            hits_b1 += int(np.sum(np.isin(z[b == 1], S)))
            done += c
    lo, hi = clopper_pearson(wins, done, confidence=confidence)
    mu = 1.0 - (1.0 - 1.0 / N) ** n
    rate0 = said_member_b0 / n_b0 if n_b0 else float("nan")
    rate1 = said_member_b1 / n_b1 if n_b1 else float("nan")
    return MembershipExperimentResult(
        advantage=2 * wins / done - 1, advantage_ci=(2 * lo - 1, 2 * hi - 1), tpr_minus_fpr=rate0 - rate1,
        mu=mu, mu_empirical=hits_b1 / n_b1 if n_b1 else float("nan"), max_advantage=1 - mu, n_trials=done,
        settings={"n": n, "pool_size": N, "attack": att.name, "challenges_per_model": challenges_per_model},
    )
