"""Empirical audits of MIP guarantees: an exact eta checker and a simulated Bayes attacker.

Proposition 2 of Izzo et al. gives the Bayes-optimal membership attacker and the
characterisation of eta-MIP. In total-variation form (spec section 3, [derived]) for a
target ``x*`` with prior ``pi = k/n`` of being in the training half,

    acc*(x*) = ∫ max{ pi p_in(t), (1 - pi) p_out(t) } dt
             = 1/2 + (1/2) ∫ | pi p_in(t) - (1 - pi) p_out(t) | dt,

where ``p_in`` (``p_out``) is the law of the released output when ``x*`` is (is not) in
the half; for ``k = n/2`` this is ``1/2 + TV(p_in, p_out)/2``. The exact MIP level is
``eta = max_x* acc*(x*) - max(pi, 1 - pi)``.

* :func:`exact_eta_discrete` -- enumerate every size-k subset, discrete outputs.
* :func:`exact_eta_laplace` -- enumerate every subset of a deterministic 1-D algorithm
  with Laplace noise; the integral of ``|pi p_in - (1-pi) p_out|`` is computed in closed
  form between consecutive atoms (no quadrature error).
* :func:`simulate_bayes_attacker` -- for larger n or d: Monte Carlo likelihoods of the
  released output under halves with and without the target (spec 7.1), played as a
  membership game with fresh splits and noise; reports accuracy with an exact interval.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable

import numpy as np
from scipy import special

from .._random import RandomStateLike, check_random_state, spawn_seeds
from .._validation import check_array, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ..metrics import clopper_pearson
from .mechanism import _run_many, random_half
from .noise import GaussianMIPNoise, MIPNoise
from .results import AttackAudit, ExactAudit

__all__ = [
    "enumerate_splits",
    "exact_eta_discrete",
    "laplace_mixture_l1",
    "exact_eta_laplace",
    "simulate_bayes_attacker",
    "bayes_attack_games",
]

MAX_SPLITS = 2_000_000


def _check_nk(n: int, k: int | None) -> tuple[int, int]:
    check_scalar(n, name="n", kind=(int, np.integer), min_val=2)
    k = int(n) // 2 if k is None else k
    check_scalar(k, name="k", kind=(int, np.integer), min_val=1, max_val=int(n) - 1)
    # log C(n, k) first: math.comb of a large n takes unbounded time before any limit could be compared
    log10_splits = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(10)
    if log10_splits > math.log10(MAX_SPLITS) + 1 or math.comb(int(n), int(k)) > MAX_SPLITS:
        raise InvalidParameterError(
            f"C(n={n}, k={k}) = about 10^{log10_splits:.1f} splits is too many to enumerate "
            f"(limit {MAX_SPLITS:,}); use simulate_bayes_attacker for large n"
        )
    return int(n), int(k)


def _check_simulation_size(n_halves: int, n: int) -> None:
    """Refuse, before any half is drawn, a simulation whose halves take more memory or work than the budgets: each
    half is a membership row of ``n`` booleans and ``n / 2`` int64 indices, drawn and trained on at least once."""
    from ..engine import check_memory, check_work

    check_memory(5.0 * n_halves * n, f"{n_halves:,} random halves (n_reference + n_games) of {n:,} records would take",
                 how=" (5 bytes a record per half)", fix="play fewer games or reference halves")
    check_work(float(n_halves) * n, f"{n_halves:,} random halves (n_reference + n_games) of {n:,} records",
               fix="play fewer games or reference halves")


def enumerate_splits(n: int, k: int | None = None) -> np.ndarray:
    """Every size-k subset of ``range(n)`` as a boolean membership matrix.

    Rows follow ``itertools.combinations(range(n), k)`` order.

    Returns
    -------
    member : ndarray of bool, shape (C(n, k), n)
    """
    n, k = _check_nk(n, k)
    combos = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n), k)), dtype=np.int64, count=math.comb(n, k) * k
    ).reshape(-1, k)
    member = np.zeros((combos.shape[0], n), dtype=bool)
    np.put_along_axis(member, combos, True, axis=1)
    return member


def _split_weights(n: int, k: int) -> tuple[float, float]:
    """Each split's weight in ``pi P_in - (1 - pi) P_out``: ``pi / C(n-1, k-1)`` with the target, ``-(1 - pi) /
    C(n-1, k)`` without it."""
    pi = k / n
    return pi / math.comb(n - 1, k - 1), -(1.0 - pi) / math.comb(n - 1, k)


def _exact_audit(n: int, k: int, n_splits: int, tg: np.ndarray, acc: np.ndarray, method: str) -> ExactAudit:
    """The audit of the Bayes accuracies ``acc`` of targets ``tg``: eta is the largest less ``max(pi, 1 - pi)``."""
    j = int(np.argmax(acc))
    pi = k / n
    return ExactAudit(n=n, k=k, n_splits=n_splits, targets=tg, accuracy=acc, eta=float(acc[j] - max(pi, 1 - pi)),
                      worst_target=int(tg[j]), method=method)


def _targets(targets, n: int) -> np.ndarray:
    t = np.arange(n) if targets is None else np.atleast_1d(np.asarray(targets, dtype=np.int64))
    if t.size == 0 or t.min() < 0 or t.max() >= n:
        raise InvalidInputError(f"targets must be indices in [0, {n}); got {t.tolist()}")
    return t


def exact_eta_discrete(
    n: int,
    output_distribution: Callable[[tuple[int, ...]], dict],
    *,
    k: int | None = None,
    targets=None,
) -> ExactAudit:
    """Exact eta of an algorithm with discrete outputs, by enumerating every split (Prop 2).

    Parameters
    ----------
    n : int
        Data set size; records are ``0..n-1``.
    output_distribution : callable
        ``output_distribution(subset) -> {output: probability}`` for a training subset
        given as a sorted tuple of record indices; outputs must be hashable.
    k : int, optional
        Training set size (default ``n // 2``).
    targets : array-like of int, optional
        Records to audit (default all).

    Returns
    -------
    ExactAudit
    """
    n, k = _check_nk(n, k)
    tg = _targets(targets, n)
    w_in, w_out = _split_weights(n, k)
    # mass[t][a] = pi P_in(a) - (1 - pi) P_out(a) for each target t and output a
    mass = [defaultdict(float) for _ in tg]
    for subset in itertools.combinations(range(n), k):
        dist = output_distribution(subset)
        total = sum(dist.values())
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise InvalidInputError(f"output_distribution({subset}) sums to {total}, not 1")
        sset = set(subset)
        for i, t in enumerate(tg):
            w = w_in if int(t) in sset else w_out
            for a, p in dist.items():
                mass[i][a] += w * p
    # acc = 1/2 + (1/2) sum_a |pi P_in(a) - (1-pi) P_out(a)|   (Prop 2, TV form)
    acc = np.array([0.5 + 0.5 * sum(abs(v) for v in m.values()) for m in mass])
    return _exact_audit(n, k, math.comb(n, k), tg, acc, "discrete enumeration")


def laplace_mixture_l1(atoms, weights, scale: float) -> np.ndarray:
    """``∫ |sum_i w_i Lap(t; a_i, b)| dt`` exactly, for each row of ``weights``.

    ``Lap(t; a, b) = exp(-|t - a|/b) / (2b)``. Between consecutive sorted atoms the
    integrand is ``(L e^{-u/b} + R e^{-(g-u)/b}) / (2b)`` with at most one sign change,
    integrated in closed form; ``L`` and ``R`` come from stable one-sided recurrences
    (all exponents non-positive).

    Parameters
    ----------
    atoms : array-like of shape (N,)
    weights : array-like of shape (T, N) or (N,)
    scale : float > 0

    Returns
    -------
    l1 : ndarray of shape (T,) (or a float for 1-D weights)
    """
    b = float(check_scalar(scale, name="scale", min_val=0.0, include_min=False))
    a = check_array(atoms, name="atoms", ndim=1)
    w = check_array(weights, name="weights", ndim=(1, 2))
    squeeze = w.ndim == 1
    w = np.atleast_2d(w)
    if w.shape[1] != a.shape[0]:
        raise InvalidInputError(f"weights has {w.shape[1]} columns but atoms has {a.shape[0]} entries")
    order = np.argsort(a, kind="stable")
    a, w = a[order], w[:, order]
    N = a.shape[0]
    gaps = np.diff(a)
    decay = np.exp(-gaps / b)  # (N-1,)
    wt = np.ascontiguousarray(w.T)  # (N, T)
    L = np.empty_like(wt)
    R = np.empty_like(wt)
    acc = wt[0].copy()
    L[0] = acc
    for j in range(1, N):  # L_j = sum_{i<=j} w_i exp(-(a_j - a_i)/b)
        acc *= decay[j - 1]
        acc += wt[j]
        L[j] = acc
    acc = wt[N - 1].copy()
    R[N - 1] = acc
    for j in range(N - 2, -1, -1):  # R_j = sum_{i>=j} w_i exp(-(a_i - a_j)/b)
        acc *= decay[j]
        acc += wt[j]
        R[j] = acc
    # tails: left of a_0 the integrand is R_0 e^{-(a_0 - t)/b}/(2b): integral |R_0|/2; right: |L_{N-1}|/2
    total = 0.5 * (np.abs(R[0]) + np.abs(L[N - 1]))
    if N > 1:
        Lj, Rj = L[:-1], R[1:]  # (N-1, T): interval [a_j, a_{j+1}]
        g = gaps[:, None] / b  # gap in units of b
        q = -np.expm1(-g)  # 1 - e^{-g}
        same = Lj * Rj >= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ustar = 0.5 * (g + np.log(-Lj / Rj))  # root in units of b, where L e^{-u} = -R e^{-(g-u)}
        inside = (~same) & (ustar > 0) & (ustar < g)
        us = np.where(inside, ustar, 0.0)
        first = Lj * (-np.expm1(-us)) + Rj * (np.exp(-(g - us)) - np.exp(-g))
        second = Lj * (np.exp(-us) - np.exp(-g)) + Rj * (-np.expm1(-(g - us)))
        piece = np.where(inside, np.abs(first) + np.abs(second), np.abs(Lj + Rj) * q)
        piece = np.where(same, (np.abs(Lj) + np.abs(Rj)) * q, piece)
        total = total + 0.5 * piece.sum(axis=0)
    return float(total[0]) if squeeze else total


def exact_eta_laplace(
    outputs,
    scale: float,
    *,
    n: int,
    k: int | None = None,
    targets=None,
) -> ExactAudit:
    """Exact eta of ``A(D_train) + Laplace(scale)`` for a deterministic 1-D algorithm.

    Parameters
    ----------
    outputs : array-like of shape (C(n, k),) or callable
        ``A`` on every size-k subset, in :func:`enumerate_splits` order; or a callable
        ``A(member_row: bool ndarray (n,)) -> float`` evaluated on each.
    scale : float
        Laplace scale ``b`` (density ``exp(-|x|/b)/(2b)``).
    n, k : int
        Data set and training set sizes (``k`` defaults to ``n // 2``).
    targets : array-like of int, optional

    Returns
    -------
    ExactAudit
    """
    n, k = _check_nk(n, k)
    member = enumerate_splits(n, k)
    if callable(outputs):
        vals = np.array([float(outputs(row)) for row in member])
    else:
        vals = check_array(outputs, name="outputs", ndim=1)
        if vals.shape[0] != member.shape[0]:
            raise InvalidInputError(f"outputs has {vals.shape[0]} entries; expected C({n},{k}) = {member.shape[0]}")
    tg = _targets(targets, n)
    w = np.where(member[:, tg].T, *_split_weights(n, k))  # (T, N)
    acc = np.atleast_1d(0.5 + 0.5 * laplace_mixture_l1(vals, w, scale))
    return _exact_audit(n, k, member.shape[0], tg, acc, "laplace closed form")


def _logmeanexp(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """log mean over the True entries of ``mask`` (last axis) of exp(x)."""
    cnt = mask.sum(axis=-1)
    with np.errstate(divide="ignore"):
        return special.logsumexp(np.where(mask, x, -np.inf), axis=-1) - np.log(cnt)


def simulate_bayes_attacker(
    train: Callable | None,
    X,
    y,
    noise: MIPNoise | GaussianMIPNoise,
    *,
    targets,
    n_reference: int = 256,
    n_games: int = 500,
    eta_target: float | None = None,
    confidence: float = 0.95,
    train_many: Callable | None = None,
    random_state: RandomStateLike = None,
) -> AttackAudit:
    """Play the MIP membership game against a simulated Bayes-optimal attacker (spec 7.1).

    The attacker knows the algorithm, the data set D and the noise law, but not the
    split. For a released ``t = A(D_train) + X`` and target ``x*`` it estimates
    ``L_in = mean_i g(t - A(D_i))`` over ``n_reference`` reference halves containing
    ``x*`` and ``L_out`` over those without it (``g`` the noise density), and answers
    "in" iff ``pi L_in >= (1 - pi) L_out`` (Prop 2's rule (2) with estimated
    likelihoods). Each of ``n_games`` games draws a fresh uniformly random half (so
    ``x*`` is in it with probability ``pi = k/n``) and fresh noise; every target is
    attacked in every game. Any attack's accuracy is at most the Bayes accuracy, so an
    accuracy significantly above ``1/2 + eta`` refutes an eta-MIP claim.

    Parameters
    ----------
    train : callable ``(X, y, idx, random_state) -> ndarray (d,)``
    X : array-like of shape (n, ...)
    y : array-like of shape (n,) or None
    noise : MIPNoise
        The released noise (its law is known to the attacker).
    targets : array-like of int
        Records to attack (outliers are natural choices: the definition is worst case).
    n_reference : int, default=256
    n_games : int, default=500
    eta_target : float, optional
        The claimed eta, recorded for :meth:`AttackAudit.passes`.
    confidence : float, default=0.95
    train_many : callable, optional
    random_state : None, int or Generator

    Returns
    -------
    AttackAudit
    """
    check_scalar(n_reference, name="n_reference", kind=(int, np.integer), min_val=2)
    check_scalar(n_games, name="n_games", kind=(int, np.integer), min_val=1)
    n = len(X)
    _check_simulation_size(int(n_reference) + int(n_games), n)
    tg = _targets(targets, n)
    rng = check_random_state(random_state)
    k = n // 2
    pi = k / n
    ref_sets = [random_half(n, rng) for _ in range(int(n_reference))]
    game_sets = [random_half(n, rng) for _ in range(int(n_games))]
    outs = _run_many(train, train_many, X, y, ref_sets + game_sets, spawn_seeds(rng, len(ref_sets) + len(game_sets)))
    if outs.shape[1] != len(noise.sigma):
        raise InvalidInputError(f"the algorithm outputs {outs.shape[1]} values but noise has {len(noise.sigma)}")
    member = np.zeros((len(outs), n), dtype=bool)
    for i, s in enumerate(ref_sets + game_sets):
        member[i, s] = True
    K = len(ref_sets)
    return bayes_attack_games(outs[:K], member[:K], outs[K:], member[K:], noise, targets=tg, prior=pi,
                              eta_target=eta_target, confidence=confidence, random_state=rng)


def bayes_attack_games(
    ref_outputs,
    ref_member,
    game_outputs,
    game_member,
    noise: MIPNoise | GaussianMIPNoise,
    *,
    targets,
    prior: float = 0.5,
    eta_target: float | None = None,
    confidence: float = 0.95,
    random_state: RandomStateLike = None,
) -> AttackAudit:
    """The simulated Bayes-optimal attacker on precomputed (noise-free) outputs.

    The array core of :func:`simulate_bayes_attacker`: fresh noise is drawn for each
    game's output, so one set of trained outputs serves many noise levels.

    Parameters
    ----------
    ref_outputs : ndarray of shape (K, d)
        ``A`` on the attacker's reference halves.
    ref_member : bool ndarray of shape (K, n)
        Membership of each record in each reference half.
    game_outputs : ndarray of shape (G, d)
        ``A(D_train)`` of each game (noise is added here).
    game_member : bool ndarray of shape (G, n)
    noise : MIPNoise
    targets : array-like of int
    prior : float
        ``P(x* in D_train) = k/n``.
    eta_target, confidence, random_state
        As in :func:`simulate_bayes_attacker`.

    Returns
    -------
    AttackAudit
    """
    rng = check_random_state(random_state)
    ref = check_array(ref_outputs, name="ref_outputs", ndim=2)
    game = check_array(game_outputs, name="game_outputs", ndim=2)
    ref_member = np.asarray(ref_member, dtype=bool)
    game_member = np.asarray(game_member, dtype=bool)
    if ref.shape[1] != len(noise.sigma) or game.shape[1] != len(noise.sigma):
        raise InvalidInputError(f"the algorithm outputs {ref.shape[1]} values but noise has {len(noise.sigma)}")
    if ref_member.shape[0] != ref.shape[0] or game_member.shape[0] != game.shape[0]:
        raise InvalidInputError("membership matrices need one row per output")
    tg = _targets(targets, ref_member.shape[1])
    pi = float(prior)
    released = game + noise.sample(game.shape[0], rng)
    if (ref_member[:, tg].all(axis=0) | (~ref_member[:, tg]).all(axis=0)).any():
        raise InvalidParameterError("n_reference is too small: some target is in all or none of the reference halves")
    # log g(released_g - ref_i), shape (G, K); chunked over games to bound memory
    d = ref.shape[1]
    chunk = max(1, int(2e7 // max(1, ref.shape[0] * d)))
    logg = np.concatenate(
        [noise.log_density(released[s : s + chunk, None, :] - ref[None, :, :]) for s in range(0, game.shape[0], chunk)]
    )
    accs, cis, adv = [], [], []
    for t in tg:
        mi = ref_member[:, t]
        l_in = _logmeanexp(logg, np.broadcast_to(mi, logg.shape))
        l_out = _logmeanexp(logg, np.broadcast_to(~mi, logg.shape))
        decide_in = np.log(pi) + l_in >= np.log(1 - pi) + l_out
        # no reference half is consistent with the release (possible when some coordinates get no
        # noise): the likelihoods say nothing, so guess from the prior
        blind = np.isneginf(l_in) & np.isneginf(l_out)
        decide_in = np.where(blind, rng.random(decide_in.shape[0]) < pi, decide_in)
        truth = game_member[:, t]
        correct = int(np.sum(decide_in == truth))
        accs.append(correct / game.shape[0])
        cis.append(list(clopper_pearson(correct, game.shape[0], confidence=confidence)))
        tpr = decide_in[truth].mean() if truth.any() else float("nan")
        fpr = decide_in[~truth].mean() if (~truth).any() else float("nan")
        adv.append(float(tpr - fpr))
    base = max(pi, 1 - pi)
    return AttackAudit(
        targets=tg, n_games=int(game.shape[0]), n_reference=int(ref.shape[0]), accuracy=accs, accuracy_ci=cis,
        eta_hat=[a - base for a in accs], eta_upper=[ci[1] - base for ci in cis], advantage=adv,
        eta_target=eta_target, confidence=confidence,
    )
