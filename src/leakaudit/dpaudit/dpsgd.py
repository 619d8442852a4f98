"""One-run audit of a DP-SGD training recipe against its claimed (epsilon, delta).

The recipe is a :class:`~leakaudit.learners.DPSGD` learner and its training data. :func:`audit_dpsgd` plants m
canaries, includes each with probability 1/2 (:func:`~leakaudit.dpaudit.one_run.draw_inclusion`), trains once,
scores the canaries and checks the claim with :func:`~leakaudit.dpaudit.search.check_claim`: by default
(``bound="best"``) the larger of Theorem 3.1 of Steinke, Nasr & Jagielski (NeurIPS 2023) and the f-DP analysis of
Mahloujifar, Melis & Chaudhuri (ICML 2025) with the (epsilon, delta) trade-off curve, each at half the confidence
budget, searched over guess counts with a union bound.

Canaries:

``"gradient"`` (white-box; TorchMLP and TorchCNN nets, and any torch module through Opacus)
    Gradient canaries inserted into every DP-SGD step (:meth:`DPSGD.fit_many_with_canaries`; by the compiled DP
    step where it trains the net, else the torch loop or Opacus's DPOptimizer): Dirac canaries on parameters of
    the auditor's own (no data gradient reaches them, so none hides them), scored by the subsampled-Gaussian
    likelihood ratio of every intermediate update. The canaries left out measure each step's noise: the per-step
    noise check (:mod:`leakaudit.dpaudit.noise_check`), reported apart from the lower bound. The threat
    model is that of DP-SGD's own accounting: every intermediate model is released and the adversary chooses
    the canaries' gradients. The accountant's epsilon covers the release of all iterates, and any statistic of
    them is post-processing, so scoring each step's update is a valid test of the claim.
``"input"`` (black-box; any architecture, Opacus included)
    m extra rows (drawn from ``X_canary``) with their labels changed to another class at random, so that only
    training on them teaches their label; the score is the final model's log-probability of the canary's label
    (a negated loss).

Before anything trains, :func:`check_dp_claim` refuses impossible parameters with one line each: noise multiplier
0 with a finite epsilon, a sampling rate outside (0, 1], delta at least 1/n, and a claimed epsilon below what the
accountant gives for the recipe (the claim cannot be reproduced).
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

import numpy as np

from .._random import RandomStateLike, seed_to_int
from .._results import Result
from .._validation import check_choice, check_scalar, shown
from ..exceptions import InvalidInputError, InvalidParameterError
from .fdp import privacy_profile_rejects, subsampled_gaussian_profile
from .noise_check import noise_check
from .one_run import draw_inclusion
from .search import BOUNDS, check_claim, default_guess_grid, one_run_audit_scores

__all__ = ["DpsgdAudit", "audit_dpsgd", "audited_rows", "calibrate_noise_multiplier", "check_dp_claim",
           "default_canary_count", "dpsgd_guess_grid", "whitebox_guess_grid"]

#: relative slack when comparing a claimed epsilon with the accountant's (the PLD accountant's discretisation)
CLAIM_RTOL = 1e-3


class DpsgdAudit(Result):
    """A DP-SGD recipe's claim against the one-run lower bound of one training run.

    ``epsilon_lower_bound`` holds at ``confidence`` (the analysis ``bound``); ``verdict`` is "consistent with the
    claim" or "the claim is violated: the implementation leaks more than it says". Beside it, each analysis of the
    same scores alone at the full confidence (they do not decide the verdict unless ``bound`` names them):
    ``steinke_epsilon_lower_bound`` (Theorem 3.1), ``fdp_epsilon_lower_bound`` (f-DP, the (epsilon, delta) curve)
    and ``gdp_epsilon_lower_bound`` (f-DP, the Gaussian curve, which assumes the mechanism's privacy is Gaussian).
    ``recipe_curve_rejected`` says whether the same guesses reject the recipe's own accounted trade-off curve (the
    privacy profile of its subsampled Gaussian steps, :func:`~leakaudit.dpaudit.fdp.subsampled_gaussian_profile`)
    at ``confidence``, each guess count at ``beta / n_candidates``: stronger than the (epsilon, delta) claim, so
    True means the implementation does not have the privacy its accounting says (without necessarily breaking
    the claimed epsilon).

    ``trainer``: what trained the audited run ("native": the compiled DP step, "torch": the batched torch loop,
    "opacus").

    ``noise_check_*`` (gradient canaries only): the per-step noise check (:mod:`leakaudit.dpaudit.noise_check`), a
    different kind of evidence, never mixed into the lower bound or ``verdict``: each step's noise bounded from
    above on the left-out canaries' coordinates, the epsilon of the steps at those bounds (at ``confidence``;
    None when infinite, a step without noise), the smallest step's bound over the claimed noise multiplier, and
    its own verdict.
    """

    claimed_epsilon: float
    delta: float
    accounted_epsilon: float
    accounting: str
    confidence: float
    bound: str
    epsilon_lower_bound: float
    gdp_epsilon_lower_bound: float
    steinke_epsilon_lower_bound: float | None = None
    fdp_epsilon_lower_bound: float | None = None
    recipe_curve_rejected: bool | None = None
    noise_check_epsilon_lower_bound: float | None = None
    noise_check_min_ratio: float | None = None
    noise_check_violated: bool | None = None
    noise_check_verdict: str | None = None
    violated: bool
    verdict: str
    canaries: str
    m: int
    n_included: int
    guesses: int
    correct: int
    k_plus: int
    k_minus: int
    n_candidates: int
    n_train: int
    noise_multiplier: float
    max_grad_norm: float
    sampling: str
    sampling_rate: float
    steps: int
    epochs: int
    lr: float
    train_accuracy: float
    bug: str | None = None
    trainer: str | None = None
    seconds: float
    cpu_seconds: float


def dpsgd_guess_grid(m: int) -> list[tuple[int, int]]:
    """The guess counts the DP-SGD audit tries: :func:`default_guess_grid` and the same k guessing "in" only.

    With Poisson sampling an included canary may never be sampled (probability ``(1 - q)^T``) and then looks
    left out: the lowest scores mix both, while the highest are the canaries seen. Guessing only the top k is
    then the stronger test; the grid holds both kinds (twice the pairs: each tested at ``beta / len(grid)``).
    """
    sym = default_guess_grid(m)
    return sym + [(k, 0) for k, _ in sym]


#: canaries of a white-box audit: about CANARIES_PER_RATE / q, so that about 700 included ones are sampled in any
#: one step (see :func:`whitebox_guess_grid`), within [MIN_CANARIES, MAX_CANARIES]
CANARIES_PER_RATE = 1400
MIN_CANARIES = 1000
MAX_CANARIES = 200_000


#: a leak in every step should prove the claimed epsilon plus this much (see :func:`default_canary_count`)
CLAIM_MARGIN = 0.5

#: a leak confined to one step should too, when that takes at most this many canary-steps (m T: one noise draw
#: and one score update each on the compiled step, seconds of CPU in all: benchmarks/README.md) and at most
#: MAX_STEP_CANARIES canaries; past either, the per-step noise check is what sees such a step
CANARY_STEP_BUDGET = 200_000_000
MAX_STEP_CANARIES = 2_000_000


def default_canary_count(sampling_rate: float, *, claimed_epsilon: float | None = None, steps: int | None = None,
                         beta: float = 0.05) -> int:
    """The number of white-box canaries for Poisson rate q: ``ceil(1400 / q)``, or more for a large claimed epsilon,
    within [1,000, 200,000], or up to 2,000,000 to see a one-step leak where that is affordable.

    One step's batch holds about ``m q / 2`` included canaries; a step that leaks (no noise in it) shows only
    those, so m grows as 1 / q to keep about 700 of them (enough for a bound above 4 when they are all
    guessed right). With ``claimed_epsilon`` and ``steps`` given, m is also large enough that a leak in every
    step (clipping skipped, noise too small), seen through :func:`whitebox_guess_grid`'s ``k_all`` guesses all
    right, proves ``claimed_epsilon + 0.5``: ``r`` right guesses out of ``r`` prove epsilon ``logit(b^(1/r))`` at
    level ``b`` (no delta; ``b = beta / 4``, the budget of one of the grid's two pairs under the default
    ``bound="best"``), so ``r >= log(1 / b) / log(1 + e^-(eps + 0.5))``, about ``4.4 e^(eps + 0.5)`` canaries
    right at beta = 0.05. The canaries' extra parameters cost noise draws (m per step), nothing else.

    A leak confined to one step (a step without noise) shows only ``k_step = 0.85 m q / 2`` canaries, so proving
    the claim from it takes ``m = r / (0.85 q / 2)``: 507,000 at q = 0.1 against a claimed 8, 5 million at q =
    0.01. That m is taken, above the 200,000 cap, when ``m T`` is at most :data:`CANARY_STEP_BUDGET` and m at most
    :data:`MAX_STEP_CANARIES` (q = 0.1 with 20 steps: yes; q = 0.01 with 200 steps: no, and the per-step noise
    check, :mod:`leakaudit.dpaudit.noise_check`, is what catches such a step there).
    """
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    q = float(sampling_rate)
    m = min(MAX_CANARIES, max(MIN_CANARIES, math.ceil(CANARIES_PER_RATE / q)))
    if claimed_epsilon is not None and steps is not None:
        check_scalar(claimed_epsilon, name="claimed_epsilon", min_val=0.0)
        check_scalar(steps, name="steps", kind=(int, np.integer), min_val=1)
        check_scalar(beta, name="beta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
        right = math.log(4.0 / float(beta)) / math.log1p(math.exp(-(float(claimed_epsilon) + CLAIM_MARGIN)))
        seen = 0.85 * (1.0 - (1.0 - q) ** int(steps)) / 2  # k_all / m (whitebox_guess_grid)
        m = max(m, min(MAX_CANARIES, math.ceil(right / seen)))
        one_step = math.ceil(right / (0.85 * q / 2))  # k_step = right (whitebox_guess_grid)
        if m < one_step <= MAX_STEP_CANARIES and one_step * int(steps) <= CANARY_STEP_BUDGET:
            m = one_step
    return int(m)


#: copies of the dense canary gradients that Opacus's clipping holds at once: the measured peak (benchmarks/README.md)
#: is under 3
OPACUS_CANARY_COPIES = 3


def opacus_canary_bytes(m: int, batch_size: float, sampling_rate: float) -> int:
    """Peak bytes of ``m`` white-box canaries trained through Opacus.

    Opacus clips per-example gradients, so each step's canary gradients are a dense float32 tensor of
    ``(B + k) x m`` (B the step's batch, k about ``q m / 2`` sampled canaries; both taken at their mean plus five
    standard deviations), held :data:`OPACUS_CANARY_COPIES` times at the peak.
    """
    k = float(sampling_rate) * m / 2
    rows = float(batch_size) + k + 5.0 * math.sqrt(float(batch_size) + k)
    return int(OPACUS_CANARY_COPIES * 4 * m * math.ceil(rows))


def _opacus_canaries_within_budget(m: int, sch: dict, *, given: bool) -> int:
    """``m``, or the most canaries whose Opacus gradients fit the memory budget in force
    (:func:`leakaudit.engine.memory_budget`); an ``m`` the caller gave that does not fit is refused."""
    from ..engine import memory_budget

    budget = memory_budget()
    B, q = float(sch["batch_size"]), float(sch["sampling_rate"])
    if opacus_canary_bytes(m, B, q) <= budget:
        return m
    lo, hi = 1, m  # the largest count that fits: the size grows with m
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if opacus_canary_bytes(mid, B, q) <= budget else (lo, mid - 1)
    if given or lo < MIN_CANARIES:
        def size(b):
            return f"{b / 2**30:,.1f} GiB" if b >= 2**30 else f"{b / 2**20:,.0f} MiB"

        raise InvalidParameterError(
            f"m={m} gradient canaries through Opacus need about {size(opacus_canary_bytes(m, B, q))} (a dense "
            f"(batch + canaries) x m gradient per step) against a memory budget of {size(budget)}: at most {lo} "
            f"fit; give a smaller m or a larger memory budget")
    return lo


def whitebox_guess_grid(m: int, sampling_rate: float, steps: int) -> list[tuple[int, int]]:
    """The guess counts of the white-box DP-SGD audit: two "in"-only guesses, fixed from the recipe alone.

    ``k_step = floor(0.85 m q / 2)``: about the included canaries sampled in one step (a leak confined to one
    step, such as a step without noise, shows only those); ``k_all = floor(0.85 (m / 2) (1 - (1 - q)^T))``:
    about the included canaries sampled at least once (a leak in every step, such as clipping skipped or noise
    too small). Both are 85 % of the expected count, several standard deviations below it at the default m.

    Why so few pairs: Theorem 3.1's delta term adds about ``2 m delta / (v (1 - p_eps))`` to the p-value of v
    correct guesses out of v (``p_eps = e^eps / (1 + e^eps)``). With ``v = k_step`` that is about
    ``5 delta / (q (1 - p_eps))``, 0.02 at q = 0.01, delta = 1e-5, epsilon 1: under ``beta / 2`` with two pairs,
    above ``beta / 4`` with four. Each extra pair lowers the rate q at which a one-step leak can be seen.
    """
    check_scalar(m, name="m", kind=(int, np.integer), min_val=2)
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(steps, name="steps", kind=(int, np.integer), min_val=1)
    q = float(sampling_rate)
    k_step = max(1, math.floor(0.85 * m * q / 2))
    k_all = max(1, math.floor(0.85 * m / 2 * (1 - (1 - q) ** int(steps))))
    return sorted({(k_step, 0), (k_all, 0)})


def check_dp_claim(*, noise_multiplier: float, sampling_rate: float, delta: float, n: int,
                   claimed_epsilon: float, names: dict | None = None) -> None:
    """Refuse impossible DP parameters, one line each (:class:`InvalidParameterError`).

    Noise multiplier 0 with a finite claimed epsilon (no noise is not differentially private), a sampling rate
    outside (0, 1], delta outside (0, 1 / n) (at 1 / n or more, "publish one row at random" is (0, delta)-DP),
    a claimed epsilon that is not positive and finite, a number of rows n below 1. ``names`` renames the arguments
    in the messages (``{"delta": "--delta"}`` at the command line; keys among epsilon (for claimed_epsilon),
    noise_multiplier, sampling_rate, delta and n).
    """
    nm = _claim_names(names)
    _check_real(claimed_epsilon, nm["epsilon"], "a positive finite number", lambda x: x > 0)
    _check_real(noise_multiplier, nm["noise_multiplier"], "a finite number >= 0", lambda x: x >= 0)
    if noise_multiplier == 0:
        raise InvalidParameterError(
            f"{nm['noise_multiplier']} is 0 but epsilon {claimed_epsilon:g} is claimed: DP-SGD without noise is not "
            "differentially private for any finite epsilon")
    _check_real(sampling_rate, nm["sampling_rate"], "in (0, 1]", lambda x: 0 < x <= 1)
    _check_real(delta, nm["delta"], "in (0, 1)", lambda x: 0 < x < 1)
    check_scalar(n, name=nm["n"], kind=numbers.Integral, min_val=1)
    if delta * n >= 1:
        raise InvalidParameterError(
            f"{nm['delta']}={delta:g} is at least 1/n = 1/{n}: a mechanism that publishes one training row at random "
            "meets it; claim a delta below 1/n")


_CLAIM_ARGS = ("epsilon", "noise_multiplier", "sampling_rate", "delta", "n")


def _claim_names(names: Any) -> dict[str, str]:
    """:func:`check_dp_claim`'s argument names in its messages: each its own, or as ``names`` renames it."""
    if names is None:
        names = {}
    if not isinstance(names, dict) or not all(k in _CLAIM_ARGS and isinstance(v, str) and v.isprintable() and v
                                              for k, v in names.items()):
        raise InvalidParameterError(f"names must be None or a dict from some of {', '.join(_CLAIM_ARGS)} to "
                                    f"non-empty one-line names; got {shown(names)}")
    return {**{a: a for a in _CLAIM_ARGS}, "epsilon": "claimed_epsilon", **names}


def _check_real(x: Any, name: str, want: str, ok: Any) -> None:
    """Refuse ``x`` unless it is a finite real number (not a bool) for which ``ok(x)`` holds."""
    try:
        good = isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x) and ok(x)
    except OverflowError:  # an int beyond a float's range
        good = False
    if not good:
        raise InvalidParameterError(f"{name} must be {want}; got {shown(x)}")


def calibrate_noise_multiplier(learner: Any, n: int, epsilon: float, delta: float) -> float:
    """The smallest noise multiplier (to 0.1 %) whose accounted epsilon at ``delta`` is at most ``epsilon``.

    Bisection on the log of the noise multiplier with the learner's own accountant (:meth:`DPSGD.accounted_epsilon`
    for ``n`` rows), ending on the private side.
    """
    from sklearn.base import clone

    def eps(nm: float) -> float:
        return clone(learner).set_params(noise_multiplier=nm, target_delta=delta).accounted_epsilon(n)

    lo, hi = 0.3, 1.0
    while eps(hi) > epsilon:
        lo, hi = hi, hi * 2
        if hi > 1e4:
            raise InvalidParameterError(f"no noise multiplier up to 1e4 reaches epsilon={epsilon:g}")
    while eps(lo) <= epsilon:
        lo /= 2
        if lo < 1e-2:
            return float(hi) if eps(hi) <= epsilon else float(lo)
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if eps(mid) <= epsilon else (mid, hi)
    return float(hi)


def _inclusion(m: int, seed: int):
    """The audit's generator and its canaries' inclusion (the generator goes on to draw the input canaries)."""
    rng = np.random.default_rng(seed)
    return rng, draw_inclusion(m, rng)


def audited_rows(n: int, *, m: int | None, canaries: str, random_state: RandomStateLike = 0) -> int:
    """The rows :func:`audit_dpsgd` trains on for ``n`` training rows: ``n``, plus the included input canaries
    (``m`` of them drawn; unused for gradient canaries, which sit outside the data).

    The schedule, and so the accounted epsilon, of a recipe whose batches depend on the row count (a batch size,
    or a torch module's Opacus schedule) is that of these rows: calibrate the noise multiplier for them.
    """
    check_choice(canaries, name="canaries", choices=("gradient", "input"))
    if canaries == "gradient":
        return int(n)
    check_scalar(m, name="m", kind=(int, np.integer), min_val=2)
    return int(n) + int((_inclusion(int(m), seed_to_int(random_state))[1] > 0).sum())


def audit_dpsgd(learner: Any, X: Any, y: Any, *, claimed_epsilon: float, delta: float, m: int | None = None,
                canaries: str = "gradient", X_canary: Any = None, beta: float = 0.05, bound: str = "best",
                grid=None, n_classes: int | None = None, random_state: RandomStateLike = 0) -> DpsgdAudit:
    """Audit ``learner`` (a :class:`DPSGD`) trained on ``(X, y)`` against a claimed (epsilon, delta), in one run.

    Parameters
    ----------
    learner : DPSGD
        The recipe; its ``target_delta`` is set to ``delta``.
    X : ndarray of shape (n, d); y : ndarray of shape (n,)
        The training data (gradient canaries come on top; input canaries are added to it).
    claimed_epsilon, delta : float
        The claim. Refused (:func:`check_dp_claim`) when impossible or below what the accountant gives.
    m : int, optional
        Canaries. Default: :func:`default_canary_count` of the recipe's rate, steps and claim for gradient
        canaries, 1,000 for
        input canaries.
    canaries : {"gradient", "input"}, default="gradient"
    X_canary : ndarray of shape (>= m, d), optional
        Rows to draw input canaries from (needed for ``canaries="input"``; disjoint from ``X``).
    beta : float, default=0.05
        One minus the confidence.
    grid : list of (int, int), optional
        Guess counts (fixed in advance). Default: :func:`whitebox_guess_grid` for gradient canaries,
        :func:`dpsgd_guess_grid` for input canaries.
    bound : {"best", "steinke2023", "fdp", "gdp"}, default="best"
        The analysis that decides the verdict (:mod:`leakaudit.dpaudit.search`): "best" is the larger of
        Theorem 3.1 and the f-DP (epsilon, delta) analysis, each at ``beta / 2``.
    n_classes : int, optional
    random_state : int or None
        Seeds the inclusion coins, the canaries and training.

    Returns
    -------
    DpsgdAudit
    """
    from sklearn.base import clone

    from ..learners import learner_family

    if learner_family(learner) != "dp-sgd":
        raise InvalidParameterError(f"learner must be a DPSGD; got {type(learner).__name__}")
    check_choice(canaries, name="canaries", choices=("gradient", "input"))
    check_choice(bound, name="bound", choices=BOUNDS)
    if learner.sampling != "poisson" or learner.neighbouring not in (None, "add_remove"):
        raise InvalidParameterError(
            "the one-run audit tests add/remove DP (each canary in or out), which DPSGD accounts for Poisson "
            f"sampling under neighbouring='add_remove'; got sampling={learner.sampling!r}, "
            f"neighbouring={learner.neighbouring!r}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    n = len(X)
    sch = learner.schedule(n)
    check_dp_claim(noise_multiplier=learner.noise_multiplier, sampling_rate=sch["sampling_rate"], delta=delta, n=n,
                   claimed_epsilon=claimed_epsilon)
    given = m is not None
    if m is None:
        m = (default_canary_count(sch["sampling_rate"], claimed_epsilon=claimed_epsilon, steps=sch["steps"],
                                  beta=beta) if canaries == "gradient" else 1000)
    check_scalar(m, name="m", kind=(int, np.integer), min_val=2)
    if canaries == "gradient" and learner._kind() == "module":
        m = _opacus_canaries_within_budget(int(m), sch, given=given)
    seed = seed_to_int(random_state)
    rng, S = _inclusion(int(m), seed)
    # the run audited trains on n_fit rows (input canaries join the data), and its schedule is the one accounted,
    # checked against the claim, and given to the noise check: DPSGD.schedule, read once here
    n_fit = n + (int((S > 0).sum()) if canaries == "input" else 0)
    learner = clone(learner).set_params(target_delta=float(delta))
    sch = learner.schedule(n_fit)
    q = float(sch["sampling_rate"])
    accounted = learner.accounted_epsilon(n_fit)
    if accounted > claimed_epsilon * (1 + CLAIM_RTOL):
        raise InvalidParameterError(
            f"the claimed epsilon {claimed_epsilon:g} cannot be reproduced: the accountant gives {accounted:.4g} at "
            f"delta={delta:g} for noise_multiplier={learner.noise_multiplier:g}, sampling_rate={q:g}, "
            f"{sch['steps']} steps ({learner.accounting()})")
    C = int(n_classes if n_classes is not None else y.max() + 1)
    wall, cpu = time.perf_counter(), time.process_time()
    noise = None
    if canaries == "gradient":
        bank, scores = learner.fit_many_with_canaries(X, y, [np.arange(n)], [seed], included=(S > 0)[None],
                                                      n_classes=C)
        scores = scores[0]
        Xtr, ytr = X, y
        cn = bank.info.get("canary_noise")
        if cn is not None and cn["n"][0] > 0:  # at the rate the trainer ran (the schedule above)
            noise = noise_check(cn["mean_square"][0], cn["n"][0], noise_multiplier=float(learner.noise_multiplier),
                                max_grad_norm=float(learner.max_grad_norm), sampling_rate=q,
                                claimed_epsilon=float(claimed_epsilon), delta=float(delta), beta=float(beta))
    else:
        if X_canary is None:
            raise InvalidParameterError("canaries='input' needs X_canary: rows to draw the canaries from")
        Xc = np.asarray(X_canary, dtype=np.float64)
        if len(Xc) < m:
            raise InvalidInputError(f"X_canary has {len(Xc)} rows; {m} canaries need at least as many")
        Xc = Xc[rng.choice(len(Xc), size=int(m), replace=False)]
        yc = rng.integers(0, C, size=int(m))  # a random label each, so only training on it teaches it
        Xtr, ytr = np.vstack([X, Xc[S > 0]]), np.concatenate([y, yc[S > 0]])
        bank = learner.fit_many(Xtr, ytr, [np.arange(len(Xtr))], [seed], n_classes=C)
        scores = np.log(np.clip(bank.predict_proba(Xc)[0][np.arange(int(m)), yc], 1e-300, None))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if grid is None:
        grid = (whitebox_guess_grid(int(m), q, int(sch["steps"])) if canaries == "gradient"
                else dpsgd_guess_grid(int(m)))
    check = check_claim(S, scores, claimed_epsilon=claimed_epsilon, delta=delta, beta=beta, bound=bound, grid=grid)
    alone = {b: (check.search if b == bound else
                 one_run_audit_scores(S, scores, delta=delta, beta=beta, bound=b, grid=grid)).epsilon_lower_bound
             for b in ("steinke2023", "fdp", "gdp")}
    if bank.info["steps"][0] != sch["steps"] or bank.info["epsilon"][0] != accounted:  # pragma: no cover - a bug
        raise RuntimeError(f"the trainer recorded {bank.info['steps'][0]} steps and epsilon {bank.info['epsilon'][0]}; "
                           f"the audit accounted {sch['steps']} and {accounted}")
    s = check.search
    eps_grid, delta_grid = subsampled_gaussian_profile(float(learner.noise_multiplier), float(sch["sampling_rate"]),
                                                       int(sch["steps"]))
    curve_rejected = any(privacy_profile_rejects(int(m), int(row[2]), int(row[3]), epsilons=eps_grid,
                                                 deltas=delta_grid, beta=s.beta_per_candidate)
                         for row in s.candidates)
    acc = float(np.mean(bank.predict_proba(Xtr)[0].argmax(1) == ytr))
    return DpsgdAudit(
        claimed_epsilon=float(claimed_epsilon), delta=float(delta), accounted_epsilon=float(accounted),
        accounting=learner.accounting(), confidence=1.0 - float(beta), bound=bound,
        epsilon_lower_bound=check.epsilon_lower_bound, gdp_epsilon_lower_bound=alone["gdp"],
        steinke_epsilon_lower_bound=alone["steinke2023"], fdp_epsilon_lower_bound=alone["fdp"],
        recipe_curve_rejected=curve_rejected,
        noise_check_epsilon_lower_bound=None if noise is None else noise.epsilon_lower_bound,
        noise_check_min_ratio=None if noise is None else noise.min_noise_ratio,
        noise_check_violated=None if noise is None else noise.violated,
        noise_check_verdict=None if noise is None else noise.verdict,
        violated=check.violated, verdict=check.verdict, canaries=canaries, m=int(m), n_included=int((S > 0).sum()),
        guesses=s.r, correct=s.v, k_plus=s.k_plus, k_minus=s.k_minus, n_candidates=s.n_candidates, n_train=n,
        noise_multiplier=float(learner.noise_multiplier), max_grad_norm=float(learner.max_grad_norm),
        sampling=learner.sampling, sampling_rate=float(sch["sampling_rate"]), steps=int(sch["steps"]),
        epochs=int(learner.epochs), lr=float(learner.lr), train_accuracy=acc, bug=learner.bug,
        trainer=bank.info.get("kernel"), seconds=wall,
        cpu_seconds=cpu)
