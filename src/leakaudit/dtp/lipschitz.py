"""Upper bound on DTP from Lipschitz continuity in the parameters (Long et al. §6.4, Thm 6.9).

Parameterise ``C_u(x) = (ln p(y_1|x), ..., ln p(y_k|x))``. If
``|C_u(x) - C_{u'}(x)|_inf <= L |u - u'|_inf`` for all x, then (Thm 6.9)

    DTP_{A,T}(t) <= L · max_{t in T} |u_T - u_{T\\{t}}|_inf

and, per record (spec [ours]), ``DTP(t) <= L · |u_T - u_{T\\t}|_inf``.

For softmax linear models ``z = W x + b`` (spec §2.7, ours):
``|Δ ln p_y| <= 2 max_j |Δz_j| <= 2 (||x||_1 + 1) |Δu|_inf``, so
``L = 2 (max_x ||x||_1 + 1)`` over the feature domain. The theorem ignores output
binning (binned outputs are not Lipschitz); the bound is on unbinned DTP.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_array, check_choice, check_matrix, check_scalar
from ..exceptions import InvalidParameterError, UnsupportedError
from .results import LipschitzBoundResult

__all__ = ["softmax_lipschitz_constant", "lipschitz_dtp_bound", "logistic_lipschitz_bound"]


def softmax_lipschitz_constant(*, X_domain: Any = None, max_l1: float | None = None) -> float:
    """L for log-softmax of a linear model in the ∞-norm of its parameters: ``2 (max_x ||x||_1 + 1)``.

    Parameters
    ----------
    X_domain : array-like of shape (n, n_features), optional
        Points spanning the feature domain (e.g. the candidate set D, or box
        corners); ``max_x ||x||_1`` is taken over them.
    max_l1 : float, optional
        ``max_x ||x||_1`` given directly (e.g. the number of binary features).

    Examples
    --------
    >>> softmax_lipschitz_constant(max_l1=836)  # Purchase: 836 binary features (spec §2.7)
    1674.0
    """
    if (X_domain is None) == (max_l1 is None):
        raise InvalidParameterError("give exactly one of X_domain or max_l1")
    if max_l1 is None:
        Xd = check_matrix(X_domain, name="X_domain")
        max_l1 = float(np.abs(Xd).sum(axis=1).max())
    else:
        check_scalar(max_l1, name="max_l1", min_val=0.0)
    return 2.0 * (float(max_l1) + 1.0)


def lipschitz_dtp_bound(param_full: Any, params_loo: Any, lipschitz_constant: float) -> tuple[np.ndarray, float]:
    """Thm 6.9: per-record ``L |u_T - u_{T\\t}|_inf`` and the global ``L max_t |u_T - u_{T\\t}|_inf``.

    Parameters
    ----------
    param_full : array-like of shape (n_params,)
    params_loo : array-like of shape (n_records, n_params)
    lipschitz_constant : float

    Returns
    -------
    per_record : ndarray of shape (n_records,)
    global_bound : float
    """
    u = check_array(param_full, name="param_full", ndim=1)
    U = check_matrix(params_loo, name="params_loo")
    check_scalar(lipschitz_constant, name="lipschitz_constant", min_val=0.0)
    if U.shape[1] != u.size:
        raise InvalidParameterError(f"params_loo has {U.shape[1]} parameters; param_full has {u.size}")
    delta = np.abs(U - u[None]).max(axis=1)  # |u_T - u_{T\t}|_inf
    per = lipschitz_constant * delta
    return per, float(per.max())  # Thm 6.9


def logistic_lipschitz_bound(learner: Any, X: Any, y: Any, records: Any = None, *, X_domain: Any = None,
                             max_l1: float | None = None, method: str = "newton",
                             n_classes: int | None = None) -> LipschitzBoundResult:
    """Thm 6.9 for :class:`~leakaudit.learners.LogisticRegression` (softmax linear).

    Parameters
    ----------
    learner : LogisticRegression
    X, y : the training set T
    records : array-like of int, optional
        Records whose leave-one-out parameter change is measured. The global
        bound (``global_bound``) is the theorem's max over these records; it
        equals Thm 6.9 when ``records`` is all of T.
    X_domain, max_l1 : the feature domain for L (default: X itself)
    method : {"newton", "influence"}
        Leave-one-out parameters, exact (warm-started Newton) or approximate.

    Returns
    -------
    LipschitzBoundResult (unbinned DTP bounds)
    """
    from ..learners import learner_family

    if learner_family(learner) != "softmax-linear":
        raise UnsupportedError(
            f"the softmax-linear Lipschitz constant needs a LogisticRegression learner; got {type(learner).__name__} "
            "(no simple global L exists for neural networks)"
        )
    check_choice(method, name="method", choices=("newton", "influence"))
    if X_domain is None and max_l1 is None:
        X_domain = X
    L = softmax_lipschitz_constant(X_domain=X_domain, max_l1=max_l1)
    u, U = learner.loo_params(X, y, records, method=method, n_classes=n_classes)
    per, glob = lipschitz_dtp_bound(u, U, L)
    recs = np.arange(len(U)) if records is None else np.asarray(records, dtype=np.int64)
    return LipschitzBoundResult(
        records=recs, lipschitz_constant=L, param_change=np.abs(U - u[None]).max(axis=1), values=per,
        global_bound=glob, note=f"unbinned; intercepts centred; leave-one-out by {method}",
    )
