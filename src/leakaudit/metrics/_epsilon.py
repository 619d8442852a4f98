"""Empirical epsilon: a lower confidence bound on a training algorithm's differential-privacy epsilon from the
scores of a membership attack (Jagielski et al. 2020, "Auditing differentially private machine learning";
Nasr et al. 2021, "Adversary instantiation").

A threshold test on the scores ("member iff score > t") has a true TPR and FPR. If the training algorithm is
(eps, delta)-DP with respect to one record's membership, every such test obeys

    TPR <= e^eps FPR + delta    and    (1 - FPR) <= e^eps (1 - TPR) + delta,

so eps >= max(ln((TPR - delta) / FPR), ln((1 - FPR - delta) / (1 - TPR))). Replacing TPR by a one-sided lower
Clopper-Pearson bound and FPR by an upper one (each at (1 - confidence) / 2, so both hold together with
probability >= confidence) turns the right-hand side into a lower confidence bound on eps. The test must not be
chosen on the records it is evaluated on: the records are split at random (stratified by membership) into a
selection half, where the threshold and the inequality are chosen, and an evaluation half, where the bounds are
computed.

Beside it, on the same test and the same evaluation half, a Bayesian bound (Zanella-Beguelin et al. 2023,
"Bayesian estimation of differential privacy", ICML; the ``joint-beta`` method of Microsoft's privacy-estimates):
the test's FNR and FPR get independent Beta posteriors under Jeffreys priors, and the bound is the
``1 - confidence`` quantile of the posterior of the least epsilon whose (eps, delta)-DP region holds (FNR, FPR).
It is a credible bound, not a confidence bound; its frequentist coverage is measured in
benchmarks/epsilon_joint_beta.py (docs/dp.md), and it is far tighter where the counts are small.

Assumption: the evaluation records' outcomes are treated as independent draws, each record a member or not at
random. That is exact in Jagielski et al.'s setting (one model per guess); for many records of one training run
it is the usual reading, which Steinke, Nasr & Jagielski (2023, "Privacy auditing with one (1) training run")
justify for records included independently at random.
"""

from __future__ import annotations

import numbers
from functools import partial

import numpy as np
from scipy import optimize, stats

from .._random import RandomStateLike, check_random_state
from .._results import Result
from .._validation import check_scalar, shown
from ..exceptions import InvalidParameterError
from ._membership import check_membership_inputs

__all__ = ["EpsilonBound", "empirical_epsilon", "joint_beta_epsilon_lb"]

METHOD = ("threshold test chosen on a random stratified half of the records; one-sided Clopper-Pearson bounds "
          "(TPR lower, FPR upper, each at (1 - confidence) / 2) on the other half, put into the (eps, delta)-DP "
          "inequalities of Jagielski et al. 2020; beside it, the joint-beta credible bound of Zanella-Beguelin et al. "
          "2023 on the same test's counts")

DIRECTIONS = ("tpr/fpr", "tnr/fnr")


class EpsilonBound(Result):
    """A lower confidence bound on epsilon at ``delta`` from one attack's scores.

    Fields
    ------
    epsilon_lb : float
        The bound: with probability >= ``confidence`` the true epsilon is at least this (under the assumption
        in the module docstring). 0.0 when the data show no evidence; NaN when not measurable.
    measurable : bool
        False when the halves are too small (``reason`` says why).
    reason : str
        "" when measurable.
    threshold : float
        The chosen test is "member iff score > threshold"; NaN when not measurable.
    direction : str
        The inequality used: ``"tpr/fpr"`` (TPR <= e^eps FPR + delta) or ``"tnr/fnr"``
        (TNR <= e^eps FNR + delta); "" when not measurable.
    tpr, fpr : float
        The test's TPR and FPR on the evaluation half.
    tpr_lower, fpr_upper : float
        Their one-sided Clopper-Pearson bounds, each at level (1 - confidence) / 2.
    epsilon_lb_joint_beta : float
        The joint-beta credible bound on the same test's counts (:func:`joint_beta_epsilon_lb`): the true epsilon
        is at least this with posterior probability ``confidence``. NaN when not measurable.
    n_select, n_eval : int
        Records in the selection and evaluation halves; ``n_eval_members`` and ``n_eval_nonmembers`` split the
        latter.
    delta, confidence : float
        As given.
    method : str
        One sentence naming the construction.
    """

    epsilon_lb: float
    measurable: bool
    reason: str = ""
    threshold: float
    direction: str
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    epsilon_lb_joint_beta: float = float("nan")
    n_select: int
    n_eval: int
    n_eval_members: int
    n_eval_nonmembers: int
    delta: float
    confidence: float
    method: str = METHOD


def _cp_tpr_lower(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound of k/n at level alpha: the alpha quantile of Beta(k, n - k + 1)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, out)


def _cp_fpr_upper(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound of k/n at level alpha: the 1 - alpha quantile of Beta(k + 1, n - k)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(1 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, out)


def _eps_both(tpr_lo: np.ndarray, fpr_up: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The two inequalities' epsilon bounds; -inf where an inequality gives no bound (numerator <= 0)."""
    # Jagielski et al. 2020, Sec. 3 (from Kairouz et al. 2015's hypothesis-testing view of DP):
    # eps >= ln((TPR - delta) / FPR) and eps >= ln((1 - FPR - delta) / (1 - TPR))
    with np.errstate(divide="ignore", invalid="ignore"):
        num_a, den_a = tpr_lo - delta, fpr_up
        num_d, den_d = 1.0 - fpr_up - delta, 1.0 - tpr_lo
        eps_a = np.where(num_a > 0, np.log(np.maximum(num_a, 1e-300) / den_a), -np.inf)
        eps_d = np.where(num_d > 0, np.log(np.maximum(num_d, 1e-300) / den_d), -np.inf)
    return eps_a, eps_d


def _dp_region_mass(fnr: np.ndarray, fpr_post, eps: float, delta: float) -> float:
    """Posterior mass of the (eps, delta)-DP region: the mean over FNR's posterior quantiles ``fnr`` of the FPR
    posterior's mass between the region's lower and upper boundaries at that FNR."""
    # the region of Kairouz et al. 2015 (Zanella-Beguelin et al. 2023, Eq. 2): below the chance line
    # FPR >= max(1 - delta - e^eps FNR, e^-eps (1 - delta - FNR)), above it the same with the test reversed
    e = np.exp(eps)
    lo = np.maximum(0.0, np.maximum(1 - delta - fnr * e, (1 - delta - fnr) / e))
    hi = np.minimum(1.0, np.minimum(1 + (delta - fnr) / e, delta + (1 - fnr) * e))
    return float(np.mean(np.clip(fpr_post.cdf(hi) - fpr_post.cdf(lo), 0.0, 1.0)))


def joint_beta_epsilon_lb(tp: int, fn: int, fp: int, tn: int, *, delta: float = 0.0, confidence: float = 0.95,
                          nodes: int = 1024) -> float:
    """Bayesian lower bound on epsilon from one test's counts (the ``joint-beta`` method of Zanella-Beguelin et al.
    2023): FNR ~ Beta(1/2 + fn, 1/2 + tp) and FPR ~ Beta(1/2 + fp, 1/2 + tn) independently (Jeffreys priors), and
    the bound is the least epsilon whose (eps, delta)-DP region holds posterior mass ``1 - confidence``, i.e. the
    ``1 - confidence`` quantile of the posterior of the smallest epsilon consistent with (FNR, FPR).

    Parameters
    ----------
    tp, fn, fp, tn : int
        The test's true positives and false negatives (members) and false positives and true negatives
        (non-members), each >= 0, with at least one member and one non-member.
    delta : float in [0, 1), default=0.0
    confidence : float in (0, 1), default=0.95
    nodes : int, default=1024
        Midpoint nodes over FNR's posterior quantiles for the region's mass (at 1024 the bound moves by about 2e-5
        from 4096 nodes).

    Returns
    -------
    float
        0.0 when the region at epsilon 0 already holds the mass.
    """
    for v, name in ((tp, "tp"), (fn, "fn"), (fp, "fp"), (tn, "tn")):
        check_scalar(v, name=name, kind=numbers.Integral, min_val=0)
    if tp + fn < 1 or fp + tn < 1:
        raise InvalidParameterError(f"joint_beta_epsilon_lb needs at least one member (tp + fn) and one non-member "
                                    f"(fp + tn); got tp + fn = {tp + fn}, fp + tn = {fp + tn}")
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_max=False)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    u = (np.arange(nodes) + 0.5) / nodes
    fnr = stats.beta.ppf(u, 0.5 + fn, 0.5 + tp)
    fpr_post = stats.beta(0.5 + fp, 0.5 + tn)
    target = 1.0 - float(confidence)
    mass = partial(_dp_region_mass, fnr, fpr_post, delta=float(delta))
    if mass(0.0) >= target:
        return 0.0
    hi = 1.0
    while mass(hi) < target:  # the posterior puts no mass at FPR = 0 or FNR = 0, so this ends
        hi *= 2.0
    return float(optimize.brentq(lambda e: mass(e) - target, hi / 2 if hi > 1 else 0.0, hi, xtol=1e-6))


def _split(m: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Stratified random halves: per class, floor(n / 2) records to selection, the rest to evaluation."""
    sel, ev = [], []
    for cls in (1, 0):
        idx = rng.permutation(np.flatnonzero(m == cls))
        sel.append(idx[: idx.size // 2])
        ev.append(idx[idx.size // 2:])
    return np.sort(np.concatenate(sel)), np.sort(np.concatenate(ev))


def _counts_above(s_sorted: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Number of entries of the sorted array strictly above each t."""
    return s_sorted.size - np.searchsorted(s_sorted, t, side="right")


def empirical_epsilon(
    is_member,
    scores,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    joint_beta: bool = True,
    random_state: RandomStateLike = 0,
) -> EpsilonBound:
    """Lower confidence bound on epsilon (at ``delta``) from a membership attack's scores.

    Parameters
    ----------
    is_member : array-like of shape (n_records,)
        1 for members, 0 for non-members.
    scores : array-like of shape (n_records,)
        Higher means "more likely a member".
    delta : float in [0, 1), default=0.0
    confidence : float in (0, 1), default=0.95
        The bound holds with at least this probability.
    joint_beta : bool, default=True
        Also compute the joint-beta credible bound on the same test (``epsilon_lb_joint_beta``);
        False leaves it NaN.
    random_state : None, int or Generator, default=0
        Seeds the split into selection and evaluation halves.

    Returns
    -------
    EpsilonBound
        Not measurable (``epsilon_lb`` NaN) with fewer than 2 members or 2 non-members in either half, i.e.
        fewer than 4 of either class.

    Notes
    -----
    On the selection half every threshold between two consecutive distinct scores is tried, with both
    inequalities, and the one with the largest bound (the same Clopper-Pearson construction on the selection
    half) is kept. On the evaluation half only that threshold and inequality are bounded, so the choice cannot
    inflate the result. With perfectly separated scores and n records per class the bound is
    ln((q - delta) / (1 - q)) with q = ((1 - confidence) / 2)^(1 / ceil(n / 2)): the largest this construction
    can give at that size.
    """
    m, s = check_membership_inputs(is_member, scores)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_max=False)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    if not isinstance(joint_beta, (bool, np.bool_)):
        raise InvalidParameterError(f"joint_beta must be True or False; got {shown(joint_beta)}")
    delta, confidence = float(delta), float(confidence)
    alpha = (1.0 - confidence) / 2  # each one-sided bound; both hold together with probability >= confidence
    sel, ev = _split(m, check_random_state(random_state))
    n_ev1, n_ev0 = int(m[ev].sum()), int(ev.size - m[ev].sum())
    n_se1, n_se0 = int(m[sel].sum()), int(sel.size - m[sel].sum())
    common = dict(n_select=int(sel.size), n_eval=int(ev.size), n_eval_members=n_ev1, n_eval_nonmembers=n_ev0,
                  delta=delta, confidence=confidence)
    if min(n_se1, n_se0, n_ev1, n_ev0) < 2:
        nan = float("nan")
        return EpsilonBound(epsilon_lb=nan, measurable=False, threshold=nan, direction="", tpr=nan, fpr=nan,
                            tpr_lower=nan, fpr_upper=nan, **common,
                            reason=(f"needs at least 2 members and 2 non-members in each half (4 of each); got "
                                    f"{int(m.sum())} members and {int(m.size - m.sum())} non-members"))

    # selection: thresholds midway between consecutive distinct scores (halves, not a difference: no overflow)
    s_sel, m_sel = s[sel], m[sel]
    u = np.unique(s_sel)
    cand = u[:-1] / 2 + u[1:] / 2 if u.size > 1 else u
    pos_sel, neg_sel = np.sort(s_sel[m_sel == 1]), np.sort(s_sel[m_sel == 0])
    eps_a, eps_d = _eps_both(_cp_tpr_lower(_counts_above(pos_sel, cand), n_se1, alpha),
                             _cp_fpr_upper(_counts_above(neg_sel, cand), n_se0, alpha), delta)
    both = np.stack([eps_a, eps_d])  # (2, n_candidates)
    d_idx, t_idx = np.unravel_index(int(np.argmax(both)), both.shape)  # first maximum: deterministic ties
    t, direction = float(cand[t_idx]), DIRECTIONS[d_idx]

    # evaluation: the chosen test only
    s_ev, m_ev = s[ev], m[ev]
    k_tp, k_fp = int(np.sum(s_ev[m_ev == 1] > t)), int(np.sum(s_ev[m_ev == 0] > t))
    tpr_lo = float(_cp_tpr_lower(k_tp, n_ev1, alpha))
    fpr_up = float(_cp_fpr_upper(k_fp, n_ev0, alpha))
    e_a, e_d = _eps_both(np.array(tpr_lo), np.array(fpr_up), delta)
    eps = float((e_a, e_d)[d_idx])
    jb = (joint_beta_epsilon_lb(k_tp, n_ev1 - k_tp, k_fp, n_ev0 - k_fp, delta=delta, confidence=confidence)
          if joint_beta else float("nan"))
    return EpsilonBound(epsilon_lb=max(0.0, eps), measurable=True, threshold=t, direction=direction,
                        tpr=k_tp / n_ev1, fpr=k_fp / n_ev0, tpr_lower=tpr_lo, fpr_upper=fpr_up,
                        epsilon_lb_joint_beta=jb, **common)
