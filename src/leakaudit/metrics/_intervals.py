"""Confidence intervals: Clopper-Pearson for rates, DeLong or stratified bootstrap for AUC, order statistics for TPR
at FPR, and the power floors (whether an interval could clear a threshold at all with so many records)."""

from __future__ import annotations

import functools
import numbers
import warnings
from statistics import NormalDist

import numpy as np
from scipy import stats

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_consistent_length, check_scalar, check_vector, shown
from ..exceptions import InvalidInputError, InvalidParameterError, NotEstimableWarning
from ._membership import _tpr_at_fpr_sorted, check_membership_inputs

__all__ = [
    "clopper_pearson",
    "paired_mean_interval",
    "bootstrap_auc_ci",
    "delong_auc_variance",
    "delong_placements",
    "bootstrap_tpr_at_fpr_ci",
    "pearson",
    "AUC_CI_METHODS",
    "auc_ci_method_used",
    "auc_ci_can_exceed",
    "min_records_for_auc",
    "tpr_ci_can_exceed",
    "min_nonmembers_for_tpr",
    "difference_interval",
]


def clopper_pearson(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for a binomial rate k/n.

    Uses :meth:`scipy.stats.binomtest`'s ``proportion_ci(method="exact")``.
    """
    for arg, v in (("k", k), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InvalidInputError(f"{arg} must be an integer count; got {shown(v)} ({type(v).__name__})")
    if n <= 0:
        raise InvalidInputError(f"n must be > 0 for a rate interval; got {n}")
    if not 0 <= k <= n:
        raise InvalidInputError(f"k must be in [0, n={n}]; got {k}")
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def difference_interval(k1: int, n1: int, k0: int, n0: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Interval for ``k1/n1 - k0/n0`` (two independent proportions).

    Newcombe's hybrid method (Newcombe 1998, Stat. Med. 17:873, method 10) with
    Clopper-Pearson intervals ``[l_i, u_i]`` in place of Wilson's:

        low  = d - sqrt((p1 - l1)^2 + (u0 - p0)^2)
        high = d + sqrt((u1 - p1)^2 + (p0 - l0)^2)
    """
    l1, u1 = clopper_pearson(k1, n1, confidence=confidence)
    l0, u0 = clopper_pearson(k0, n0, confidence=confidence)
    p1, p0 = k1 / n1, k0 / n0
    d = p1 - p0
    return float(max(-1.0, d - np.hypot(p1 - l1, u0 - p0))), float(min(1.0, d + np.hypot(u1 - p1, p0 - l0)))


def paired_mean_interval(a, b, *, confidence: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Mean of the paired differences ``a - b`` and its normal-approximation interval.

    Parameters
    ----------
    a, b : array-like of float, shape (n,)
        Two measurements of the same ``n`` units (e.g. whether each test record is classified correctly by two
        models). With ``n < 2`` the interval is infinite (the spread of the differences is not measurable).

    Returns
    -------
    (mean, (low, high)) of ``a - b``.
    """
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise InvalidInputError(f"a and b must be 1-D arrays of one length; got shapes {a.shape} and {b.shape}")
    d = a - b
    n = d.size
    if n == 0:
        raise InvalidInputError("a and b are empty: no paired difference to average")
    mean = float(d.mean())
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    half = z * float(d.std(ddof=1)) / np.sqrt(n) if n > 1 else float("inf")
    return mean, (mean - half, mean + half)


def _check_boot(n_boot, confidence) -> None:
    check_scalar(n_boot, name="n_boot", kind=numbers.Integral, min_val=1)
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)


def _auc_rows(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC of each row pair (B, n1) x (B, n0) by the rank-sum formula (ties = 1/2)."""
    n1, n0 = pos.shape[1], neg.shape[1]
    allv = np.concatenate([pos, neg], axis=1)
    ranks = stats.rankdata(allv, axis=1)
    return (ranks[:, :n1].sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def _stratified_resample(m, s, n_boot, rng):
    pos, neg = s[m == 1], s[m == 0]
    ip = rng.integers(0, pos.size, size=(n_boot, pos.size))
    ineg = rng.integers(0, neg.size, size=(n_boot, neg.size))
    return pos[ip], neg[ineg]


AUC_CI_METHODS = ("delong-logit", "delong", "bca", "percentile", "disjoint-pairs")

# The size rule (fixed in advance from simulations, never from the scores; measured coverages in
# tests/reliability/test_interval_coverage.py). The asymptotic methods are used when the smaller class has at
# least 100 records, or at least 10 with the larger class at most 1.5 times the smaller; below that every method
# gives the exact disjoint-pairs interval. Why: DeLong's variance rests on the smaller class's placements, whose
# spread is badly estimated from few of them, while balanced designs hold their coverage from 10 + 10 (the
# simulated coverages: docs/verdict.md).
DELONG_MIN_SMALLER_CLASS = 100
DELONG_MIN_BALANCED = 10
DELONG_MAX_RATIO = 1.5


def auc_ci_method_used(n_members: int, n_nonmembers: int, method: str = "delong-logit") -> str:
    """The method :func:`bootstrap_auc_ci` uses at these class sizes: ``method``, or ``"disjoint-pairs"`` below
    the size rule.

    The rule: ``method`` when ``min(n_members, n_nonmembers) >= 100``, or when the smaller class has at least 10
    records and the larger at most 1.5 times as many; otherwise ``"disjoint-pairs"`` (exact, conservative).
    """
    for arg, v in (("n_members", n_members), ("n_nonmembers", n_nonmembers)):
        check_scalar(v, name=arg, kind=numbers.Integral, min_val=1)
    check_choice(method, name="method", choices=AUC_CI_METHODS)
    return method if _asymptotic_ok(int(n_members), int(n_nonmembers)) else "disjoint-pairs"


def _asymptotic_ok(m: int, n: int) -> bool:
    small, large = min(m, n), max(m, n)
    if small >= DELONG_MIN_SMALLER_CLASS:
        return True
    return small >= DELONG_MIN_BALANCED and 2 * large <= 3 * small  # large <= 1.5 small, in integers


def _midranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x`` with ties given their average rank (Sun & Xu 2014, Algorithm 1).

    Equal to ``scipy.stats.rankdata(x, method="average")``, without its per-call overhead.
    """
    n = x.size
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    start = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    end = np.r_[start[1:], n]
    out = np.empty(n)
    out[order] = np.repeat((start + end + 1) / 2.0, end - start)  # mean of ranks start+1 .. end
    return out


def delong_placements(is_member, scores) -> tuple[float, np.ndarray, np.ndarray]:
    """AUC and DeLong's structural components, by Sun & Xu's (2014) midrank algorithm.

    For members x_i (i = 1..m) and non-members y_j (j = 1..n), with
    psi(x, y) = 1[x > y] + 1/2 1[x = y]:

    * V10_i = (1/n) sum_j psi(x_i, y_j)        (DeLong et al. 1988's structural components)
    * V01_j = (1/m) sum_i psi(x_i, y_j)

    computed in O((m + n) log(m + n)) from midranks: V10_i = (T_Z(x_i) - T_X(x_i)) / n and
    V01_j = 1 - (T_Z(y_j) - T_Y(y_j)) / m, where T_Z, T_X, T_Y are midranks in the pooled sample, the
    members alone and the non-members alone (Sun & Xu 2014, Sec. II; equation numbers not checked here).

    Parameters
    ----------
    is_member : array-like of shape (n_records,)
    scores : array-like of shape (n_records,)

    Returns
    -------
    auc : float
        The Mann-Whitney AUC, equal to ``mean(v10)`` and ``mean(v01)``.
    v10 : ndarray of shape (m,)
        Placement of each member among the non-members.
    v01 : ndarray of shape (n,)
        Placement of each non-member among the members.
    """
    m_, s = check_membership_inputs(is_member, scores)
    x, y = s[m_ == 1], s[m_ == 0]
    m, n = x.size, y.size
    tz = _midranks(np.concatenate([x, y]))
    v10 = (tz[:m] - _midranks(x)) / n
    v01 = 1.0 - (tz[m:] - _midranks(y)) / m
    return float(v10.mean()), v10, v01


def delong_auc_variance(is_member, scores) -> tuple[float, float]:
    """AUC and DeLong's estimate of its variance.

    Var(AUC) = S10 / m + S01 / n, with S10, S01 the sample variances (ddof=1) of the
    structural components (DeLong et al. 1988; Sun & Xu 2014).

    Returns
    -------
    auc, variance : float
        The variance is NaN with fewer than 2 members or 2 non-members.
    """
    a, v10, v01 = delong_placements(is_member, scores)
    if v10.size < 2 or v01.size < 2:
        return a, float("nan")
    return a, float(v10.var(ddof=1) / v10.size + v01.var(ddof=1) / v01.size)


def _disjoint_pairs_ci(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple[float, float]:
    """The exact interval: below the size rule, and when DeLong's variance is 0 (AUC exactly 0 or 1, or every
    score tied) or undefined (fewer than 2 members or non-members).

    Pair member i with non-member i (input order, i < k = min(m, n)): the k pairs are independent, so
    W = #{x_i > y_i} ~ Binomial(k, P(X > Y)) and W' = #{x_i >= y_i} ~ Binomial(k, P(X >= Y)). As
    P(X > Y) <= AUC = P(X > Y) + P(X = Y) / 2 <= P(X >= Y), the Clopper-Pearson lower limit of W and
    upper limit of W' bracket the AUC with at least the nominal confidence (conservative).

    At perfect separation (W = k) the lower limit is ((1 - confidence) / 2)^(1/k), and no distribution-free
    lower limit that errs at most (1 - confidence) / 2 of the time can be higher: if every member scores the
    same and each non-member lies above it with probability 1 - p (AUC p), perfect separation has probability
    p^n; with the roles swapped, p^m; so at perfect separation such a limit is at most the p with
    p^min(m, n) = (1 - confidence) / 2. With many ties (W' - W large) it is wide; Hoeffding's bound for the
    two-sample U-statistic, the other exact candidate, is wider on continuous scores
    (tests/reliability/test_interval_coverage.py; figures in benchmarks/README.md).
    """
    k = min(x.size, y.size)
    strict, weak = int(np.sum(x[:k] > y[:k])), int(np.sum(x[:k] >= y[:k]))
    return (clopper_pearson(strict, k, confidence=confidence)[0], clopper_pearson(weak, k, confidence=confidence)[1])


def _pairs_ci(m_, s, confidence: float, a: float) -> tuple[float, float]:
    lo, hi = _disjoint_pairs_ci(s[m_ == 1], s[m_ == 0], confidence)
    return min(lo, a), max(hi, a)  # widened to hold the AUC estimate a (still valid)


def _delong_ci(m_, s, confidence: float, logit: bool) -> tuple[float, float]:
    a, var = delong_auc_variance(m_, s)
    if not np.isfinite(var) or a <= 0.0 or a >= 1.0 or var <= 0.0:  # fewer than 2 of a class, or var = 0
        return _pairs_ci(m_, s, confidence, a)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    se = np.sqrt(var)
    if not logit:  # Wald interval on the AUC scale, clipped to [0, 1]
        return float(max(0.0, a - z * se)), float(min(1.0, a + z * se))
    # logit(AUC) +- z * se / (AUC (1 - AUC)): the delta method, as pROC / ROCit's logit option
    lg, se_lg = np.log(a / (1 - a)), se / (a * (1 - a))
    lo, hi = lg - z * se_lg, lg + z * se_lg
    return float(1 / (1 + np.exp(-lo))), float(1 / (1 + np.exp(-hi)))


def _bca_acceleration(v10: np.ndarray, v01: np.ndarray) -> float:
    """Acceleration of the stratified BCa interval from the jackknife (Efron & Tibshirani 1993, ch. 14.3).

    Leaving member i out gives AUC_(i) = (m AUC - V10_i) / (m - 1), and non-member j out gives
    AUC_(j) = (n AUC - V01_j) / (n - 1), so the jackknife costs nothing beyond the placements. With
    several independent samples the empirical influence values U_ki = (n_k - 1)(mean_k - AUC_(ki)) are
    combined as a = sum_k sum_i U_ki^3 / n_k^3 / (6 (sum_k sum_i U_ki^2 / n_k^2)^(3/2))
    (Davison & Hinkley 1997, ch. 3, several-sample case); checked against a brute-force jackknife in tests.
    """
    num = den = 0.0
    for v in (v10, v01):
        k = v.size
        if k < 2:
            return 0.0
        jack = (v.sum() - v) / (k - 1)
        u = (k - 1) * (jack.mean() - jack)
        num += np.sum(u**3) / k**3
        den += np.sum(u**2) / k**2
    return float(num / (6 * den**1.5)) if den > 0 else 0.0


def _bca_quantiles(vals: np.ndarray, theta: float, accel: float, confidence: float) -> tuple[float, float]:
    """BCa interval endpoints from bootstrap replicates (Efron & Tibshirani 1993, ch. 14.3)."""
    prop = (np.sum(vals < theta) + 0.5 * np.sum(vals == theta)) / vals.size
    if prop <= 0.0 or prop >= 1.0:  # the bias correction is infinite: fall back to percentiles
        z0 = 0.0
    else:
        z0 = stats.norm.ppf(prop)
    a = 1 - confidence
    out = []
    for q in (a / 2, 1 - a / 2):
        zq = stats.norm.ppf(q)
        adj = stats.norm.cdf(z0 + (z0 + zq) / (1 - accel * (z0 + zq)))
        out.append(float(np.quantile(vals, adj)))
    return out[0], out[1]


def bootstrap_auc_ci(
    is_member,
    scores,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    random_state: RandomStateLike = 0,
    method: str = "delong-logit",
) -> tuple[float, float]:
    """Confidence interval for the AUC (members positive).

    Parameters
    ----------
    is_member : array-like of shape (n_records,)
        1 for members, 0 for non-members.
    scores : array-like of shape (n_records,)
    n_boot : int, default=1000
        Bootstrap resamples (``"bca"`` and ``"percentile"`` only).
    confidence : float, default=0.95
    random_state : None, int or Generator, default=0
        Seeds the bootstrap (``"bca"`` and ``"percentile"`` only).
    method : {"delong-logit", "delong", "bca", "percentile", "disjoint-pairs"}, default="delong-logit"
        Used from the sizes of the size rule on (see :func:`auc_ci_method_used`): the smaller class has at
        least 100 records, or at least 10 with the larger class at most 1.5 times as large. Below that every
        method gives the exact ``"disjoint-pairs"`` interval.

        * ``"delong-logit"``: DeLong's variance (Sun & Xu 2014 fast algorithm) with a Wald interval on
          the logit scale, mapped back (stays inside (0, 1), asymmetric near the ends).
        * ``"delong"``: DeLong's variance, Wald interval on the AUC scale (clipped to [0, 1]).
        * ``"bca"``: stratified bootstrap (members and non-members resampled apart), bias-corrected
          and accelerated; acceleration from the exact jackknife.
        * ``"percentile"``: the same bootstrap, percentile interval (under-covers at small n).
        * ``"disjoint-pairs"``: Clopper-Pearson on min(m, n) disjoint (member, non-member) pairs; exact and
          conservative at every size (the construction is in ``_disjoint_pairs_ci``).

        Where DeLong's variance is 0 (AUC exactly 0 or 1, or every score tied: then [0, 1]) or undefined (fewer
        than 2 members or non-members), the DeLong methods give the disjoint-pairs interval.

    Returns
    -------
    low, high : float

    Notes
    -----
    Coverage over simulated normal and tied scores, balanced and not, from 2 + 2 records to 1000 + 1000:
    tests/reliability/test_interval_coverage.py.
    """
    m, s = check_membership_inputs(is_member, scores)
    method = check_choice(method, name="method", choices=AUC_CI_METHODS)
    _check_boot(n_boot, confidence)
    n1 = int(m.sum())
    if method == "disjoint-pairs" or not _asymptotic_ok(n1, m.size - n1):
        return _pairs_ci(m, s, confidence, delong_placements(m, s)[0])
    if method in ("delong-logit", "delong"):
        return _delong_ci(m, s, confidence, logit=method == "delong-logit")
    rng = check_random_state(random_state)
    a = 1 - confidence
    out = []
    for start in range(0, n_boot, 100):  # chunks keep memory flat
        pos, neg = _stratified_resample(m, s, min(100, n_boot - start), rng)
        out.append(_auc_rows(pos, neg))
    vals = np.concatenate(out)
    if method == "percentile":
        return float(np.quantile(vals, a / 2)), float(np.quantile(vals, 1 - a / 2))
    theta, v10, v01 = delong_placements(m, s)
    return _bca_quantiles(vals, theta, _bca_acceleration(v10, v01), confidence)


TPR_CI_METHODS = ("order-statistic", "bootstrap")


def bootstrap_tpr_at_fpr_ci(
    is_member, scores, fpr: float, *, n_boot: int = 1000, confidence: float = 0.95, random_state: RandomStateLike = 0,
    method: str = "order-statistic",
) -> tuple[float, float]:
    """Interval for the TPR at a fixed FPR; NaNs when not estimable (fewer than 1/fpr non-members).

    ``method="order-statistic"`` (default) is distribution-free and conservative. The true TPR is
    ``P_member(score > q)`` with q the (1 - fpr) quantile of the non-member scores. The number of
    non-members above q is Binomial(n0, fpr), so two order statistics of the non-member scores bracket q
    with probability >= 1 - alpha/2 (alpha/4 each side); the TPR at those two thresholds gets one-sided
    Clopper-Pearson bounds at alpha/4 each. By the union bound the interval covers with probability
    >= ``confidence``, whatever the score distributions. The stratified percentile bootstrap
    (``method="bootstrap"``) covers less than its nominal level at low FPR and few non-members (coverage
    figures in benchmarks/README.md). ``n_boot`` and ``random_state`` are used by the bootstrap only.
    """
    m, s = check_membership_inputs(is_member, scores)
    check_scalar(fpr, name="fpr", min_val=0.0, max_val=1.0, include_min=False)
    check_choice(method, name="method", choices=TPR_CI_METHODS)
    _check_boot(n_boot, confidence)
    n0 = int((m == 0).sum())
    if n0 * fpr < 1:
        warnings.warn(f"TPR at {fpr:g} FPR is not estimable from {n0} non-members",
                      NotEstimableWarning, stacklevel=2)
        return float("nan"), float("nan")
    if method == "order-statistic":
        return _order_statistic_tpr_ci(s[m == 1], np.sort(s[m == 0])[::-1], fpr, confidence)
    rng = check_random_state(random_state)
    vals = np.empty(n_boot)
    for b in range(n_boot):
        pos, neg = _stratified_resample(m, s, 1, rng)
        vals[b] = _tpr_at_fpr_sorted(pos[0], np.sort(neg[0])[::-1], fpr)
    a = 1 - confidence
    return float(np.quantile(vals, a / 2)), float(np.quantile(vals, 1 - a / 2))


def _order_statistic_tpr_ci(pos: np.ndarray, neg_desc: np.ndarray, fpr: float, confidence: float):
    a4 = (1 - confidence) / 4
    n0, n1 = neg_desc.size, pos.size
    above = stats.binom(n0, fpr)  # non-members strictly above the true threshold q
    # neg_desc[j] > q iff more than j non-members lie above q: P = sf(j). The upper threshold is the largest j with
    # sf(j) >= 1 - a4 (none: +inf); the lower one the smallest j with cdf(j) >= 1 - a4 (beyond the data: -inf).
    js = np.arange(n0)
    ok_hi = js[above.sf(js) >= 1 - a4]
    t_hi = neg_desc[ok_hi.max()] if ok_hi.size else np.inf
    j_lo = int(above.ppf(1 - a4))
    t_lo = neg_desc[j_lo] if j_lo < n0 else -np.inf
    k_lo, k_hi = int(np.sum(pos > t_hi)), int(np.sum(pos > t_lo))
    lo = 0.0 if k_lo == 0 else float(stats.beta.ppf(a4, k_lo, n1 - k_lo + 1))
    hi = 1.0 if k_hi == n1 else float(stats.beta.ppf(1 - a4, k_hi + 1, n1 - k_hi))
    return lo, hi


# ---------------------------------------------------------------------------------------------------------------
# Power floors: could the data, at these sizes, ever show the threshold exceeded?
#
# A check reads "exceeded" when an interval's lower bound is above a threshold. With few records no attack can get
# there, however strong: these functions say so, by running the interval methods themselves on the scores that
# give the largest lower bound (so they stay true if a method changes).

#: Largest class size the searches below try (per class); beyond it they give up with an error.
MAX_SEARCH_SIZE = 10_000_000


def _check_sizes(**sizes) -> None:
    for arg, v in sizes.items():
        check_scalar(v, name=arg, kind=numbers.Integral, min_val=1)


def _check_threshold(threshold, *, below_one: bool) -> None:
    check_scalar(threshold, name="threshold", min_val=0.0, max_val=1.0, include_max=not below_one)


def _check_confidence(confidence) -> None:
    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)


@functools.lru_cache(maxsize=4096)
def _best_auc_lower(n1: int, n0: int, confidence: float) -> float:
    """The largest lower bound :func:`bootstrap_auc_ci` (default method) gives on any scores of n1 members and n0
    non-members, from the three rankings that can give it.

    * Perfect separation. Below the size rule (exact disjoint pairs) the bound only grows with the number of
      pairs a member wins, so this is the largest.
    * One member tied with one non-member, and one member swapped with one non-member (AUC 1 - 1/(2 n1 n0) and
      1 - 1/(n1 n0)). With DeLong's interval, perfect separation has variance 0 and falls back to the exact
      interval, while one discordant pair gives a tiny variance and a lower bound near the AUC: at 6 + 6 records
      (an exhaustive search over all 924 rankings, DeLong forced) the best was the one swap, 0.669 against 0.541
      for perfect separation. The tie is better still (half the discordance, the same logit standard error).
      tests/metrics/test_power.py searches every ranking at small sizes and random near-perfect ones beyond.
    """
    m = np.r_[np.ones(n1, np.int64), np.zeros(n0, np.int64)]
    perfect = np.r_[n0 + np.arange(n1, dtype=float), np.arange(n0, dtype=float)]  # member i pairs non-member i
    tied, swapped = perfect.copy(), perfect.copy()
    tied[0] = n0 - 1.0  # the lowest member ties the highest non-member
    swapped[0], swapped[-1] = n0 - 1.0, float(n0)  # ... or they swap
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return max(bootstrap_auc_ci(m, s, confidence=confidence)[0] for s in (perfect, tied, swapped))


def auc_ci_can_exceed(n_members: int, n_nonmembers: int, threshold: float, *, confidence: float = 0.95) -> bool:
    """Whether any scores of these sizes give an AUC interval whose lower bound is above ``threshold``.

    False means an "AUC above ``threshold``" check cannot be passed or failed on the evidence: even a perfect
    attack's interval (:func:`bootstrap_auc_ci`, default method, at ``confidence``) reaches below it.

    Parameters
    ----------
    n_members, n_nonmembers : int
        Class sizes, at least 1 each.
    threshold : float in [0, 1]
        The check is "lower bound > threshold" (strict); 1 can never be exceeded.
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    bool

    Notes
    -----
    The best lower bound is not always perfect separation's: above the size rule, one tied or swapped pair
    gives a narrower DeLong interval than perfect separation's exact one (see ``_best_auc_lower``). Because
    of the size rule, adding records to the larger class can make this False again (at 10 + 15 records the
    DeLong interval is used, at 10 + 16 the exact one).
    """
    _check_sizes(n_members=n_members, n_nonmembers=n_nonmembers)
    _check_threshold(threshold, below_one=False)
    _check_confidence(confidence)
    return _best_auc_lower(int(n_members), int(n_nonmembers), float(confidence)) > threshold


def _smallest(holds, n_scan: int, what: str) -> int:
    """Smallest n >= 1 with ``holds(n)``: each n <= ``n_scan`` in turn, then doubling and bisection (which
    assume that once ``holds(n)``, it holds for every larger n)."""
    for n in range(1, n_scan + 1):
        if holds(n):
            return n
    lo, hi = n_scan, max(2 * n_scan, 1)  # holds(lo) is False (or lo = 0)
    while not holds(hi):
        if hi >= MAX_SEARCH_SIZE:
            raise InvalidParameterError(f"{what} needs more than {MAX_SEARCH_SIZE:,} records per class; "
                                        "lower the threshold")
        lo, hi = hi, min(2 * hi, MAX_SEARCH_SIZE)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return hi


def min_records_for_auc(threshold: float, *, confidence: float = 0.95, ratio: float = 1.0) -> int:
    """The fewest records at which some attack's AUC interval can have its lower bound above ``threshold``.

    Parameters
    ----------
    threshold : float in [0, 1)
    confidence : float in (0, 1), default=0.95
    ratio : float in [0.01, 100], default=1.0
        Members per non-member: the design is ``n`` non-members and ``ceil(ratio * n)`` members.

    Returns
    -------
    n : int
        The smallest number of non-members ``n`` for which ``auc_ci_can_exceed(ceil(ratio * n), n, threshold)``
        holds. With ``ratio=1`` the per-class size: "n members and n non-members". At 95%, threshold 0.9 needs
        10 per class (the DeLong interval of a 10 + 10 ranking with one tied pair has lower bound 0.95, where
        perfect separation's exact interval would need 36 per class).

    Raises
    ------
    InvalidParameterError
        For a threshold so close to 1 that more than ``MAX_SEARCH_SIZE`` records per class would be needed.
    """
    _check_threshold(threshold, below_one=True)
    _check_confidence(confidence)
    check_scalar(ratio, name="ratio", min_val=0.01, max_val=100.0)
    r, conf = float(ratio), float(confidence)

    def members(n: int) -> int:
        return max(1, int(np.ceil(r * n - 1e-9)))

    def holds(n: int) -> bool:
        return _best_auc_lower(members(n), n, conf) > threshold

    # Below 100 in the smaller class the size rule can switch methods back and forth along the way (ratios
    # near 1.5), so every size there is tried in turn (at most 1,000); beyond it the bound only grows with n.
    n_scan = 1
    while n_scan < 1000 and min(members(n_scan), n_scan) < DELONG_MIN_SMALLER_CLASS:
        n_scan += 1
    return _smallest(holds, n_scan, f"an AUC interval above {threshold:g}")


@functools.lru_cache(maxsize=4096)
def _best_tpr_lower(n1: int, n0: int, fpr: float, confidence: float) -> float:
    """The order-statistic interval's lower bound on perfectly separated scores (every member above every
    non-member): the largest any scores give, since the bound grows with the members above a fixed threshold.
    0 when the TPR is not estimable (n0 * fpr < 1)."""
    if n0 * fpr < 1:
        return 0.0
    pos = n0 + np.arange(n1, dtype=float)
    return _order_statistic_tpr_ci(pos, np.arange(n0, dtype=float)[::-1], fpr, confidence)[0]


def tpr_ci_can_exceed(n_members: int, n_nonmembers: int, fpr: float, threshold: float, *,
                      confidence: float = 0.95) -> bool:
    """Whether any scores of these sizes give a TPR-at-``fpr`` interval whose lower bound is above ``threshold``.

    Runs the default (order-statistic) interval of :func:`bootstrap_tpr_at_fpr_ci` on perfectly separated
    scores. Its lower bound is 0 until the non-members are enough for an upper order statistic that lies above
    the true (1 - fpr) quantile with probability >= 1 - (1 - confidence) / 4, i.e. ``(1 - fpr)^n0 <= (1 -
    confidence) / 4``: at fpr 0.001 and 95%, n0 >= 4,380; with 1,000 non-members no attack can show any TPR
    at 0.1% FPR. Past that, a perfect attack's bound is ((1 - confidence) / 4)^(1 / n_members).

    Parameters
    ----------
    n_members, n_nonmembers : int
        At least 1 each.
    fpr : float in (0, 1]
    threshold : float in [0, 1]
        The check is "lower bound > threshold" (strict).
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    bool
        False also when the TPR is not estimable (``n_nonmembers * fpr < 1``).
    """
    _check_sizes(n_members=n_members, n_nonmembers=n_nonmembers)
    check_scalar(fpr, name="fpr", min_val=0.0, max_val=1.0, include_min=False)
    _check_threshold(threshold, below_one=False)
    _check_confidence(confidence)
    return _best_tpr_lower(int(n_members), int(n_nonmembers), float(fpr), float(confidence)) > threshold


def min_nonmembers_for_tpr(fpr: float, threshold: float, *, confidence: float = 0.95,
                           n_members: int | None = None) -> int:
    """The fewest non-members at which some attack's TPR-at-``fpr`` interval can have its lower bound above
    ``threshold``.

    Parameters
    ----------
    fpr : float in (0, 1]
    threshold : float in [0, 1)
    confidence : float in (0, 1), default=0.95
    n_members : int or None, default=None
        Members available; None for as many members as non-members.

    Returns
    -------
    n0 : int
        The smallest ``n0`` with ``tpr_ci_can_exceed(n_members or n0, n0, fpr, threshold)``. Found by doubling
        and bisection: the bound on perfectly separated scores never falls as n0 grows (the upper order
        statistic's rank only rises with n0, and with n_members=None the members grow too).

    Raises
    ------
    InvalidParameterError
        When ``n_members`` is too few for any number of non-members (a perfect attack's lower bound is then
        ((1 - confidence) / 4)^(1 / n_members) <= threshold); the message says how many members are needed.
    """
    check_scalar(fpr, name="fpr", min_val=0.0, max_val=1.0, include_min=False)
    _check_threshold(threshold, below_one=True)
    _check_confidence(confidence)
    if n_members is not None:
        _check_sizes(n_members=n_members)
    f, conf = float(fpr), float(confidence)
    what = f"a TPR interval at {f:g} FPR above {threshold:g}"
    if n_members is None:
        return _smallest(lambda n: _best_tpr_lower(n, n, f, conf) > threshold, 64, what)
    # the fewest non-members for a finite upper order statistic (the bound is > 0 from there on, whatever the
    # members), then whether these members clear the threshold there (more non-members do not raise it)
    n0 = _smallest(lambda n: _best_tpr_lower(1, n, f, conf) > 0.0, 64, f"any TPR interval at {f:g} FPR above 0")
    if _best_tpr_lower(int(n_members), n0, f, conf) > threshold:
        return _smallest(lambda n: _best_tpr_lower(int(n_members), n, f, conf) > threshold, 64, what)
    need = _smallest(lambda k: _best_tpr_lower(k, n0, f, conf) > threshold, 64, what)
    raise InvalidParameterError(
        f"n_members={n_members} is too few: with any number of non-members a perfect attack's TPR interval at "
        f"{f:g} FPR stays at or below {threshold:g} (confidence {conf:g}); it needs at least {need:,} members "
        f"and {n0:,} non-members")


def pearson(x, y) -> tuple[float, float]:
    """Pearson correlation and its two-sided p-value (:func:`scipy.stats.pearsonr`)."""
    x = check_vector(x, name="x")
    y = check_vector(y, name="y")
    check_consistent_length(x=x, y=y)
    if x.size < 3:
        raise InvalidInputError(f"pearson needs at least 3 pairs; got {x.size}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        warnings.warn("correlation is undefined for a constant input", NotEstimableWarning, stacklevel=2)
        return float("nan"), float("nan")
    r = stats.pearsonr(x, y)
    return float(r.statistic), float(r.pvalue)
