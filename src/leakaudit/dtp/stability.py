"""Upper bounds on DTP from training stability (Long et al. §6.2–6.3, Appendix A).

Def 6.1: A is δ-training stable on T if, with
``γ_t = max(δ, p_T(y(t)|x(t)) / p_{T\\t}(y(t)|x(t)), p_{T\\t}(y(t)|x(t)) / p_T(y(t)|x(t)))``,
``γ_t^{-1} p_{T\\t}(y|x) <= p_T(y|x) <= γ_t p_{T\\t}(y|x)`` for all (x, y).

Thm 6.2: ε-PDTP and δ-stable ⇒ ``DTP(t) <= max(PDTP(t), ln δ)``.

δ of each model class (Table 3):

- Prop 6.3, Bayes inference ``p(y|x) = n_{x,y}/n_x``: δ = 4/3 (see
  :func:`bayes_inference_delta` for the one count pattern the proof misses);
- Prop 6.4, naive Bayes without smoothing: ``δ = (n_ymin/(n_ymin-1))^{m-1} · n/(n-1)``;
- Prop 6.5, naive Bayes with Laplace smoothing: ``δ = ((n_ymin+v)/n_ymin)^{m-1} · n/(n-1)``;
- Prop 6.7, linear statistical queries with log-probability coefficients: ``δ = (4/3)^{|𝒳|}``;
- Prop 6.8, random decision trees aggregated by geometric mean: δ = 4/3.

Props 6.4/6.5 bound the *unnormalised* naive-Bayes score ``p(y) Π_i p(x_i|y)``.
For normalised posteriors the spec (long-dtp.md §6, caveat 1) derives an exact
per-record bound, implemented in :func:`normalised_nb_dtp_bound`:
``DTP(t) <= max(ln R_t(x(t)), ln δ_t) <= max(2·PDTP(t), ln δ_t)`` with
``ln δ_t = -min_x ln R_t(x)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_array, check_indices, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ..learners import check_fit_inputs, learner_family
from .results import StabilityBoundResult

__all__ = [
    "dtp_stability_bound",
    "bayes_inference_delta",
    "naive_bayes_delta",
    "lsq_delta",
    "random_trees_delta",
    "stability_gamma",
    "normalised_nb_log_r",
    "normalised_nb_dtp_bound",
    "stability_bound_for",
]

LN_4_3 = math.log(4.0 / 3.0)


def dtp_stability_bound(pdtp: Any, delta: Any) -> np.ndarray:
    """Thm 6.2: ``DTP(t) <= max(PDTP(t), ln δ)``.

    Parameters
    ----------
    pdtp : array-like of shape (n_records,)
        PDTP values (natural log).
    delta : float or array-like of shape (n_records,)
        Training-stability constant δ > 1 (per record allowed).

    Returns
    -------
    ndarray of shape (n_records,)
    """
    p = check_array(pdtp, name="pdtp", ndim=(0, 1), allow_nan=True)
    d = check_array(delta, name="delta", ndim=(0, 1), allow_nan=True)
    if np.any(d[np.isfinite(d)] < 1):
        raise InvalidParameterError("delta must be >= 1 (Def 6.1 requires δ > 1)")
    with np.errstate(divide="ignore"):
        return np.maximum(p, np.log(d))  # Thm 6.2


def bayes_inference_delta(*, corrected: bool = False) -> float:
    """δ of Bayes-inference classifiers (Prop 6.3): 4/3.

    The proof of Prop 6.3 misses the count pattern ``n_{x(t),y(t)} = 2, n_{x(t)} = 3``:
    removing t moves ``p(y|x(t))`` of another label y from 1/3 to 1/2 (ratio 3/2),
    while the ratio at ``(x(t), y(t))`` is only (2/3)/(1/2) = 4/3. Def 6.1 with
    δ = 4/3 then fails; δ = 3/2 holds for every dataset (brute-force checked in
    tests/dtp/test_stability.py). Thm 6.2 with PDTP taken over all labels
    (Def 4.4) is unaffected, since PDTP already includes that 3/2 ratio.

    Parameters
    ----------
    corrected : bool, default=False
        Return 3/2 (the constant that holds) instead of the paper's 4/3.
    """
    return 1.5 if corrected else 4.0 / 3.0


def naive_bayes_delta(class_counts: Any, n_features: int, *, smoothing: str = "laplace",
                      n_values: int | None = None) -> float:
    """δ of naive Bayes (Props 6.4 and 6.5), for the unnormalised score.

    Parameters
    ----------
    class_counts : array-like of shape (n_classes,)
        Training examples per class; ``n = sum``, ``n_ymin = min`` over classes present.
    n_features : int
        m, the number of attributes.
    smoothing : {"none", "laplace"}
        Prop 6.4 (none) or Prop 6.5 (Laplace).
    n_values : int
        v, the largest number of values of an attribute (Laplace only).

    Returns
    -------
    float
        Prop 6.4: ``(n_ymin/(n_ymin-1))^{m-1} · n/(n-1)``;
        Prop 6.5: ``((n_ymin+v)/n_ymin)^{m-1} · n/(n-1)``. inf when n_ymin <= 1 (6.4).

    Examples
    --------
    >>> round(math.log(naive_bayes_delta([239, 761], 13, smoothing="laplace", n_values=42)), 2)
    1.94
    """
    cc = check_array(class_counts, name="class_counts", ndim=1)
    check_scalar(n_features, name="n_features", kind=int, min_val=1)
    cc = cc[cc > 0]
    if cc.size == 0:
        raise InvalidInputError("class_counts has no positive count")
    n = float(cc.sum())
    ny = float(cc.min())
    if n <= 1:
        return math.inf
    m = n_features
    if smoothing == "none":
        if ny <= 1:
            return math.inf
        return (ny / (ny - 1)) ** (m - 1) * n / (n - 1)  # Prop 6.4
    if smoothing == "laplace":
        if n_values is None:
            raise InvalidParameterError("n_values (v, the largest number of attribute values) is required for Laplace")
        check_scalar(n_values, name="n_values", kind=int, min_val=1)
        return ((ny + n_values) / ny) ** (m - 1) * n / (n - 1)  # Prop 6.5
    raise InvalidParameterError(f"smoothing must be 'none' or 'laplace'; got {smoothing!r}")


def lsq_delta(n_feature_functions: int) -> float:
    """Prop 6.7: LSQ classifiers with log-probability coefficients are (4/3)^{|𝒳|}-stable.

    Naive Bayes with M-1 attributes has |𝒳| = M (the constant feature included).
    """
    check_scalar(n_feature_functions, name="n_feature_functions", kind=int, min_val=1)
    return (4.0 / 3.0) ** n_feature_functions


def random_trees_delta() -> float:
    """Prop 6.8: random decision trees with data-independent structure, geometric-mean aggregation: 4/3."""
    return 4.0 / 3.0


def stability_gamma(p_full_true: Any, p_loo_true: Any, delta: float) -> np.ndarray:
    """γ_t of Def 6.1: ``max(δ, p_T(y(t)|x(t)) / p_{T\\t}(...), inverse)``; shape (n_records,)."""
    a = check_array(p_full_true, name="p_full_true", ndim=1)
    b = check_array(p_loo_true, name="p_loo_true", ndim=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.maximum(a / b, b / a)
    return np.maximum(delta, r)


def _categorical_nb(learner: Any, X: np.ndarray) -> None:
    if learner_family(learner) != "naive-bayes":
        raise UnsupportedError("the normalised naive-Bayes bound needs a NaiveBayes learner; got "
                               f"{type(learner).__name__}")
    cat, num, _ = learner._columns(X)
    if num.size:
        raise UnsupportedError(
            "the normalised naive-Bayes bound needs categorical features only: a Gaussian feature makes "
            "-min_x ln R_t(x) unbounded over the real line"
        )


def normalised_nb_log_r(learner: Any, X: Any, y: Any, records: Any = None, *, n_classes: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``ln R_t(x(t))`` and ``ln δ_t = -min_x ln R_t(x)`` for categorical naive Bayes (spec §6 caveat 1).

    ``R_t(x) = [p(y(t))/p'(y(t))] / [p(y')/p'(y')] · Π_i p(x_i|y(t)) / p'(x_i|y(t))`` with
    p from A(T), p' from A(T\\{t}), y' ≠ y(t). The minimum over x separates per feature:
    ``-min_x ln R_t(x) = -ln(prior factor) + Σ_i max_v ln(p'(v|y(t)) / p(v|y(t)))``.

    Returns
    -------
    log_r_self : ndarray of shape (n_records,)
    ln_delta_t : ndarray of shape (n_records,)  (inf when t is its class's only record and alpha = 0)
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    records = np.arange(len(X)) if records is None else check_indices(records, name="records", n=len(X))
    _categorical_nb(learner, X)
    if n_classes < 2:
        raise InvalidInputError("the bound needs at least 2 classes")
    model = learner._fit(X, y, n_classes=n_classes)
    yt = y[records]
    other = (yt + 1) % n_classes  # any y' != y(t): every such prior ratio is the same constant
    cc = model.class_count_
    cc_loo = cc[None, :] - (np.arange(n_classes)[None, :] == yt[:, None])
    lp = model.log_prior()
    lp_loo = model.log_prior(cc_loo)  # (R, k)
    R = len(records)
    ln_prior_factor = (lp[yt] - lp_loo[np.arange(R), yt]) - (lp[other] - lp_loo[np.arange(R), other])
    alpha = model.alpha
    log_r_self = ln_prior_factor.copy()
    max_terms = np.zeros(R)
    n_yt = cc[yt]
    for j, col in enumerate(model.categorical_):
        counts = model.cat_counts_[j]  # (k, v)
        v = model.n_values_[j]
        c_all = counts[yt]  # (R, v) counts of every value in class y(t)
        code = X[records, col].astype(np.int64)
        c_loo = c_all.copy()
        c_loo[np.arange(R), code] -= 1
        with np.errstate(divide="ignore", invalid="ignore"):
            lpv = np.log(c_all + alpha) - np.log(n_yt + alpha * v)[:, None]
            lpv_loo = np.log(c_loo + alpha) - np.log(n_yt - 1 + alpha * v)[:, None]
        log_r_self += lpv[np.arange(R), code] - lpv_loo[np.arange(R), code]
        valid = np.isfinite(lpv_loo) & np.isfinite(lpv)  # values with p' > 0 (then p > 0 too)
        with np.errstate(invalid="ignore"):
            diff = np.where(valid, lpv_loo - lpv, -np.inf)
        max_terms += diff.max(axis=1)
    ln_delta = -ln_prior_factor + max_terms
    empty = (n_yt - 1 + (alpha > 0)) <= 0  # class becomes empty without smoothing: p' = 0 everywhere
    ln_delta = np.where(empty, np.inf, ln_delta)
    log_r_self = np.where(empty, np.inf, log_r_self)
    return log_r_self, ln_delta


def normalised_nb_dtp_bound(learner: Any, X: Any, y: Any, records: Any = None, *, n_classes: int | None = None,
                            pdtp: Any = None) -> StabilityBoundResult:
    """Per-record upper bound on the (unbinned) DTP of categorical naive Bayes posteriors.

    ``DTP(t) <= max(ln R_t(x(t)), ln δ_t)`` (exact form), and the PDTP form
    ``DTP(t) <= max(2·PDTP(t), ln δ_t)`` (spec long-dtp.md §6 caveat 1; ours, not in the paper).

    Parameters
    ----------
    learner : NaiveBayes with categorical features only
    X, y : the training set
    records : array-like of int, optional
    pdtp : array-like of shape (n_records,), optional
        Unbinned PDTP; when given (and ``alpha > 0``), ``values`` uses the PDTP
        form, else the exact form. The PDTP form relies on ``PDTP >= ln R_t(x(t)) / 2``,
        which needs every posterior at x(t) to be positive; with ``alpha = 0`` a
        class of probability 0 in both models breaks it.

    Returns
    -------
    StabilityBoundResult
    """
    log_r, ln_delta = normalised_nb_log_r(learner, X, y, records, n_classes=n_classes)
    X_, y_, _ = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    recs = np.arange(len(X_)) if records is None else check_indices(records, name="records", n=len(X_))
    if pdtp is None or learner.alpha == 0:
        # the PDTP form needs every posterior at x(t) positive (alpha > 0): with a zero, PDTP can be 0 while
        # ln R_t(x(t)) > 0, so only the exact form is valid
        vals = np.maximum(log_r, ln_delta)
        p = np.full(len(recs), np.nan) if pdtp is None else check_array(pdtp, name="pdtp", ndim=1, allow_nan=True)
        src = "normalised NB: max(ln R_t(x(t)), ln δ_t)"
        if pdtp is not None:
            src += " (alpha=0: the 2·PDTP form needs positive posteriors, so the exact form is used)"
    else:
        p = check_array(pdtp, name="pdtp", ndim=1, allow_nan=True)
        if p.shape[0] != len(recs):
            raise InvalidInputError(f"pdtp has {p.shape[0]} values for {len(recs)} records")
        vals = np.maximum(2 * p, ln_delta)
        src = "normalised NB: max(2·PDTP, ln δ_t)"
    return StabilityBoundResult(records=recs, values=vals, pdtp=p, ln_delta=ln_delta, source=src,
                                note="unbinned outputs; binning can only shrink ratios except where it floors 0")


def stability_bound_for(learner: Any, X: Any, y: Any, pdtp_values: Any, records: Any = None, *,
                        n_classes: int | None = None) -> StabilityBoundResult:
    """Thm 6.2 with the δ of the learner's class (Props 6.3–6.5), or UnsupportedError.

    Parameters
    ----------
    learner : NaiveBayes (categorical, Props 6.4/6.5) or BayesInference (Prop 6.3)
    pdtp_values : array-like of shape (n_records,)
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    recs = np.arange(len(X)) if records is None else check_indices(records, name="records", n=len(X))
    p = check_array(pdtp_values, name="pdtp_values", ndim=1, allow_nan=True)
    family = learner_family(learner)
    if family == "bayes-inference":
        delta, src = bayes_inference_delta(), "Prop 6.3 (Bayes inference, δ = 4/3)"
        note = "Prop 6.3's δ = 4/3 fails for n_{x,y} = 2, n_x = 3; PDTP over all labels (Def 4.4) still bounds DTP"
    elif family == "naive-bayes":
        cat, num, nv = learner._columns(X)
        if num.size:
            raise UnsupportedError("Props 6.4/6.5 cover categorical naive Bayes; this learner has Gaussian features")
        cc = np.bincount(y, minlength=n_classes)
        if learner.alpha > 0:
            delta = naive_bayes_delta(cc, X.shape[1], smoothing="laplace", n_values=int(nv.max()))
            src = "Prop 6.5 (Laplace naive Bayes)"
        else:
            delta = naive_bayes_delta(cc, X.shape[1], smoothing="none")
            src = "Prop 6.4 (naive Bayes, no smoothing)"
        note = "bounds the unnormalised score p(y)Π p(x_i|y); see normalised_nb_dtp_bound for posteriors"
    else:
        raise UnsupportedError(
            f"no training-stability constant is known for {type(learner).__name__} (Table 3: SVM, NN and LR are "
            "'unknown', k-NN is not stable); use the Lipschitz bound or the search estimate"
        )
    vals = dtp_stability_bound(p, delta)
    return StabilityBoundResult(records=recs, values=vals, pdtp=p, ln_delta=[math.log(delta)] * len(recs),
                                source=src, note=note)
