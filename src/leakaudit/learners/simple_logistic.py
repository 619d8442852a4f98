"""Weka's SimpleLogistic: LogitBoost with simple linear regressions, its rounds chosen by cross-validation.

The learner Long et al. name for their LR models (Weka's Logistic Model Trees; at a single leaf, SimpleLogistic),
after Landwehr, Hall & Frank (2005), "Logistic Model Trees", Machine Learning 59, §3.2-3.3 and Fig. 2:

- Additive logistic regression ``p_j(x) = exp F_j(x) / sum_l exp F_l(x)``, ``F = 0`` at the start. Each LogitBoost
  round (Friedman, Hastie & Tibshirani 2000, Alg. 6; Landwehr et al. Fig. 2), for every class j: the working
  response ``z_ij = (y*_ij - p_ij) / (p_ij (1 - p_ij))`` (written ``1 / p`` when ``y* = 1`` and ``-1 / (1 - p)`` when
  ``y* = 0``, clipped to ``[-3, 3]``) and weight ``w_ij = (y*_ij - p_ij) / z_ij`` (``p (1 - p)`` unless clipped);
  ``f_j`` = the weighted least-squares fit ``b0 + b1 x_a`` of ``z_j`` on the single attribute ``a`` with the
  smallest weighted squared error (the first such attribute); then
  ``F_j += (J - 1) / J * (f_j - (1 / J) sum_l f_l)``.
- The number of rounds: 5-fold cross-validation on the training set at every fit. The folds are Weka's
  unrandomised stratified ones (``Instances.stratify``: records grouped by class, the first record's class first,
  by Weka's in-place swaps; then dealt out every 5th; ``testCV`` cuts the result into contiguous blocks), so they
  depend on the records' order. Fold f boosts on the other folds and adds its misclassification rate after each
  round into one running sum over the folds; it stops when that sum has not reached a new minimum for more than
  ``heuristic_stop`` rounds, at ``max_iterations``, or at the fewest rounds an earlier fold completed. The chosen
  count is the first round (from 0) with the smallest summed error, and LogitBoost runs that many rounds on the
  whole training set. That is Weka's ``LogisticBase.performBoostingCV`` with SimpleLogistic's defaults
  (``-I 0 -M 500 -H 50``, no weight trimming, error on misclassification, not AIC).

The trained model is linear in ``x`` (each round adds a linear function of one attribute), so it is kept as a
:class:`~leakaudit.learners.LogisticRegressionModel` (``coef_``, ``intercept_``) with ``n_rounds_``.

Deviations: the input is the matrix leakaudit encodes (one-hot categories, z-scored numbers) rather than Weka's
NominalToBinary output; a simple regression with an intercept is unchanged by an affine map of its attribute, and a
two-valued attribute's two one-hot columns give the same fit, so the models are the same up to rounding. Weka's own
record order (the ARFF file's) is not known; the fit takes the rows in the order given. The five folds run in
lock-step (one matrix product a round for all of them); with two classes ``f_1 = -f_0`` exactly, so one regression
a round is fitted.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._validation import check_scalar
from ..exceptions import InvalidParameterError
from ._base import Capabilities, Learner, keep_params
from .logistic import LogisticRegressionModel

__all__ = ["SimpleLogistic", "linear_model", "logitboost", "logitboost_cv_rounds", "predicted", "weka_stratified_folds",
           "weka_stratified_order"]

_Z_MAX = 3.0  # Weka's LogisticBase.Z_MAX: the working response's clip
_RELATIVE_VARIANCE_FLOOR = 1e-12  # an attribute whose weighted variance is below this share of Sum w x^2 is constant


def weka_stratified_order(y: np.ndarray, n_folds: int) -> np.ndarray:
    """The records' order after Weka's unrandomised ``Instances.stratify(n_folds)``: grouped by class with in-place
    swaps (taking the class of the record at the current position and swapping every later record of that class
    forward), then dealt out every ``n_folds``-th record. ``testCV(n_folds, f)`` is a contiguous block of it, the first
    ``n % n_folds`` blocks one record longer; ``trainCV`` the rest in this order."""
    y = np.asarray(y).tolist()
    n = len(y)
    order = list(range(n))
    index = 1
    while index < n:  # Weka's grouping; a Python loop, n steps per class
        c = y[order[index - 1]]
        for j in range(index, n):
            if y[order[j]] == c:
                order[index], order[j] = order[j], order[index]
                index += 1
        index += 1
    grouped = np.asarray(order, dtype=np.int64)
    return np.concatenate([grouped[s::n_folds] for s in range(n_folds)])


def weka_stratified_folds(y: np.ndarray, n_folds: int) -> np.ndarray:
    """The fold (0 .. n_folds - 1) of each record under Weka's unrandomised ``stratify`` then ``testCV``
    (:func:`weka_stratified_order`).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
    n_folds : int

    Returns
    -------
    ndarray of shape (n_samples,) of ints
    """
    n = len(y)
    sizes = np.full(n_folds, n // n_folds)
    sizes[: n % n_folds] += 1
    fold = np.empty(n, dtype=np.int64)
    fold[weka_stratified_order(y, n_folds)] = np.repeat(np.arange(n_folds), sizes)
    return fold


def _round(X: np.ndarray, XX: np.ndarray, Y: np.ndarray, F: np.ndarray, train: np.ndarray):
    """One LogitBoost round for a batch of B models on the same rows (``train``: each model's 0/1 row weights).

    X : (n, d); XX : (n, 2d) = [X, X**2]; Y : (n, J) one-hot; F : (B, n, J'), J' = 1 for two classes (F_0 - F_1
    halved is not kept: with two classes F holds F_0 and F_1 = -F_0), else J. Returns (attr, b0, b1) of shape
    (B, J') and ``found`` (B,): whether every class found an attribute.
    """
    if F.shape[-1] == 1:  # two classes: p_0 = sigmoid(2 F_0)
        p = 1.0 / (1.0 + np.exp(np.clip(-2.0 * F, -700.0, 700.0)))
        ys = Y[None, :, :1]
    else:
        e = np.exp(F - F.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        ys = Y[None]
    with np.errstate(divide="ignore", over="ignore"):  # 1 / p beyond the clip
        z = np.where(ys == 1, np.minimum(1.0 / p, _Z_MAX), np.maximum(-1.0 / (1.0 - p), -_Z_MAX))
    w = (ys - p) / z * train[:, :, None]  # (B, n, J')
    B, n, J = w.shape
    d = X.shape[1]
    wt = w.transpose(0, 2, 1).reshape(B * J, n)
    wz = (w * z).transpose(0, 2, 1).reshape(B * J, n)
    M = np.vstack([wt, wz]) @ XX  # sums of w x, w x^2, w z x, w z x^2 (the last unused)
    sx, sxx, szx = M[: B * J, :d], M[: B * J, d:], M[B * J:, :d]
    sw, swz = wt.sum(axis=1), wz.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        xm = sx / sw[:, None]
        zm = swz / sw
        vx = sxx - sw[:, None] * xm * xm  # Sum w (x - xm)^2
        cxz = szx - sw[:, None] * xm * zm[:, None]  # Sum w (x - xm)(z - zm)
        ok = vx > _RELATIVE_VARIANCE_FLOOR * np.maximum(sxx, np.finfo(float).tiny)
        gain = np.where(ok, cxz * cxz / np.where(ok, vx, 1.0), -np.inf)  # drop of the weighted squared error
    attr = gain.argmax(axis=1)
    rows = np.arange(B * J)
    found = np.isfinite(gain[rows, attr]).reshape(B, J).all(axis=1)
    b1 = np.where(ok[rows, attr], cxz[rows, attr] / np.where(ok[rows, attr], vx[rows, attr], 1.0), 0.0)
    with np.errstate(invalid="ignore"):
        b0 = np.where(np.isfinite(zm), zm - b1 * xm[rows, attr], 0.0)  # zm is finite where xm is
    return attr.reshape(B, J), b0.reshape(B, J), b1.reshape(B, J), found


def _step(X: np.ndarray, attr: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """The round's additive update of F for a batch, (B, n, J'): (J-1)/J (f_j - mean f); two classes: f_0 / 2."""
    f = b0[:, None, :] + b1[:, None, :] * X[:, attr].transpose(1, 0, 2)  # X[:, attr]: (n, B, J')
    J = f.shape[-1]
    if J == 1:
        return 0.5 * f
    return (J - 1) / J * (f - f.mean(axis=-1, keepdims=True))


def predicted(F: np.ndarray) -> np.ndarray:
    """The class F's model predicts (Weka's argmax of the probabilities, the first class on ties)."""
    return (F[..., 0] < 0).astype(np.int64) if F.shape[-1] == 1 else F.argmax(axis=-1)


def _errors(F: np.ndarray, y: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Misclassification rate of each model's F on its test rows, (B,)."""
    wrong = (predicted(F) != y[None, :]) & test
    return wrong.sum(axis=1) / np.maximum(test.sum(axis=1), 1)


def logitboost_cv_rounds(X: np.ndarray, y: np.ndarray, n_classes: int, *, n_folds: int = 5,
                         max_iterations: int = 500, heuristic_stop: int = 50,
                         start: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """The number of LogitBoost rounds Weka's ``performBoostingCV`` picks, and the summed fold errors it read.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) of class indices
    n_classes : int
    n_folds, max_iterations, heuristic_stop : int
        As :class:`SimpleLogistic`'s parameters.
    start : ndarray of shape (n_samples, J'), optional
        The scores F of the function every fold starts from (:func:`logitboost`'s; zero by default).

    Returns
    -------
    n_rounds : int
        The first round count (0 .. completed) with the smallest error summed over the folds.
    errors : ndarray of shape (completed + 1,)
        The summed misclassification rates, from 0 rounds on.
    """
    fold = weka_stratified_folds(y, n_folds)
    test = fold[None, :] == np.arange(n_folds)[:, None]  # (F, n)
    train = (~test).astype(float)
    Y = np.eye(n_classes)[y]
    XX = np.hstack([X, X * X])
    J = 1 if n_classes == 2 else n_classes
    F = np.zeros((n_folds, len(y), J)) if start is None else np.repeat(start[None], n_folds, axis=0)
    err = np.zeros(max_iterations + 1)
    err[0] = _errors(F, y, test).sum()
    # folds run in lock-step. Weka runs them in turn, each capped at the fewest rounds an earlier fold completed,
    # so when fold f stops every later fold has stopped by the same round: the running folds are always
    # 0 .. alive - 1, and fold f reads the running sum of this round's errors over folds 0 .. f (Weka's order)
    done = np.zeros(n_folds, dtype=np.int64)
    last_min = np.full(n_folds, np.inf)
    no_min = np.zeros(n_folds, dtype=np.int64)
    alive = n_folds
    it = 0
    while alive > 0 and it < max_iterations:
        attr, b0, b1, found = _round(X, XX, Y, F[:alive], train[:alive])
        # a fold whose regression finds no attribute stops before this round (Weka: break), and so do later ones
        ran = alive if found.all() else int(np.argmin(found))
        stop = np.ones(alive, dtype=bool)
        if ran:
            F[:ran] += _step(X, attr[:ran], b0[:ran], b1[:ran])
            e = _errors(F[:ran], y, test[:ran])
            running = np.cumsum(e)
            err[it + 1] += e.sum()
            done[:ran] = it + 1
            stop[:ran] = no_min[:ran] > heuristic_stop  # Weka checks the stop before updating its minimum
            better = running < last_min[:ran]
            last_min[:ran] = np.where(better, running, last_min[:ran])
            no_min[:ran] = np.where(better, 0, no_min[:ran] + 1)
        it += 1
        if stop.any():
            alive = int(np.argmax(stop))
    completed = int(done.min()) if n_folds else 0
    errs = err[: completed + 1]
    return int(np.argmin(errs)), errs


def logitboost(X: np.ndarray, y: np.ndarray, n_classes: int, n_rounds: int, start: tuple | None = None) -> tuple:
    """LogitBoost on all of (X, y) for ``n_rounds`` rounds (fewer if no attribute is found) from the function
    ``start`` = (F, coef, intercept) (zero by default): its scores F (n, J'), J' = 1 for two classes (F_0, F_1 = -F_0)
    else J, and linear model coef (J', d), intercept (J',). Returns the new (F, coef, intercept) and the rounds run."""
    d = X.shape[1]
    Y = np.eye(n_classes)[y]
    XX = np.hstack([X, X * X])
    J = 1 if n_classes == 2 else n_classes
    if start is None:
        start = np.zeros((len(y), J)), np.zeros((J, d)), np.zeros(J)
    F, coef, icpt = (a.copy() for a in start)
    F = F[None]
    ones = np.ones((1, len(y)))
    run = 0
    for _ in range(n_rounds):
        attr, b0, b1, found = _round(X, XX, Y, F, ones)
        if not found[0]:
            break
        F += _step(X, attr, b0, b1)
        # the same update on the linear model's coefficients
        if J == 1:
            np.add.at(coef, (0, attr[0]), 0.5 * b1[0])
            icpt += 0.5 * b0[0]
        else:
            cb1 = (J - 1) / J * (np.diag(b1[0]) - b1[0][None, :] / J)  # (class j, from class l)
            cb0 = (J - 1) / J * (b0[0] - b0[0].mean())
            for l in range(J):
                coef[:, attr[0, l]] += cb1[:, l]
            icpt += cb0
        run += 1
    return F[0], coef, icpt, run


def linear_model(coef: np.ndarray, icpt: np.ndarray, run: int) -> LogisticRegressionModel:
    """:func:`logitboost`'s function as a model with ``n_rounds_`` (two classes: F_1 = -F_0)."""
    if coef.shape[0] == 1:
        coef, icpt = np.vstack([coef, -coef]), np.concatenate([icpt, -icpt])
    model = LogisticRegressionModel(coef, icpt, run)
    model.n_rounds_ = run
    return model


class SimpleLogistic(Learner):
    """Weka's SimpleLogistic (LogitBoost with simple regressions, rounds by 5-fold cross-validation on each fit).

    Parameters
    ----------
    max_iterations : int, default=500
        Most LogitBoost rounds (Weka's ``-M``).
    heuristic_stop : int, default=50
        A fold stops when the summed cross-validated error has not reached a new minimum for more than this many
        rounds (Weka's ``-H``; 0 turns the heuristic off).
    n_folds : int, default=5
        Cross-validation folds for the number of rounds.
    n_rounds : int or None, default=None
        A fixed number of rounds instead of cross-validation (Weka's ``-I``).

    The fit is deterministic: ``random_state`` is accepted and ignored (Weka's folds are not randomised). Fitted
    models are :class:`~leakaudit.learners.LogisticRegressionModel` with ``n_rounds_`` (the rounds run) and
    ``cv_errors_`` (the summed fold errors read, None with ``n_rounds``).

    References
    ----------
    .. [1] N. Landwehr, M. Hall, E. Frank, "Logistic Model Trees", Machine Learning 59 (2005), §3.2-3.3, Fig. 2.
    .. [2] J. Friedman, T. Hastie, R. Tibshirani, "Additive logistic regression: a statistical view of boosting",
       Annals of Statistics 28 (2000), Algorithm 6.

    Examples
    --------
    >>> import numpy as np
    >>> from leakaudit.learners import SimpleLogistic
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]] * 5); y = np.array([0, 0, 1, 1] * 5)
    >>> m = SimpleLogistic().fit(X, y)
    >>> (m.predict_proba(X).argmax(1) == y).all()
    np.True_
    """

    capabilities = Capabilities(stochastic=False,
                                implements="Weka's SimpleLogistic (Landwehr, Hall & Frank 2005, LogitBoost)")

    def __init__(self, *, max_iterations: int = 500, heuristic_stop: int = 50, n_folds: int = 5,
                 n_rounds: int | None = None):
        keep_params(self, locals())

    def validate_params(self) -> None:
        check_scalar(self.max_iterations, name="max_iterations", kind=numbers.Integral, min_val=1)
        check_scalar(self.heuristic_stop, name="heuristic_stop", kind=numbers.Integral, min_val=0)
        check_scalar(self.n_folds, name="n_folds", kind=numbers.Integral, min_val=2)
        if self.n_rounds is not None:
            check_scalar(self.n_rounds, name="n_rounds", kind=numbers.Integral, min_val=0)

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: Any, n_classes: int | None) -> Any:
        n_classes = int(n_classes or max(int(y.max()) + 1, 2))
        if n_classes < 2:
            raise InvalidParameterError(f"n_classes must be >= 2; got {n_classes}")
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        errors = None
        if self.n_rounds is not None:
            k = self.n_rounds
        elif len(y) < self.n_folds:  # too few records to cross-validate: Weka's folds would be empty
            k = 0
        else:
            stop = self.heuristic_stop if self.heuristic_stop > 0 else self.max_iterations + 1
            k, errors = logitboost_cv_rounds(X, y, n_classes, n_folds=self.n_folds,
                                             max_iterations=self.max_iterations, heuristic_stop=stop)
        model = linear_model(*logitboost(X, y, n_classes, k)[1:])
        model.cv_errors_ = errors
        return model
