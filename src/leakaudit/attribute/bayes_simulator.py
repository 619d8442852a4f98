"""The Bayes-optimal simulator of Yeom et al.'s Definition 6 (the no-model baseline).

Definition 6 (Yeom et al., CSF 2018, arXiv 1709.01604 v5) measures an attribute
adversary against a simulator that sees what the adversary sees, ``phi(z)``, but
no model:

    S(phi(z), n, D) = argmax_{t_i} Pr_{z~D}[pi(z) = t_i | phi(z)]

    Adv^A_S = Pr[A(phi(z), A_S) = pi(z) | b = 0] - Pr[S(phi(z)) = pi(z) | b = 1].

The simulator is the "no-model baseline": the best guess of ``t`` from the other
columns (and the label) alone. Two ways to get it:

* exactly, when ``D`` is a known linear-Gaussian model (:func:`simulator_accuracy_gaussian`,
  :func:`alternative_advantage_gaussian`): the Bayes rule is Adversary 4 run with the
  *population* function and the population noise, whose accuracy has the interval
  closed form of :mod:`leakaudit.attribute.inversion`;
* from data, with :class:`BayesSimulator` fitted on a sample of ``D`` that the target
  model never saw: an exact conditional-frequency table for discrete ``phi(z)``
  (backing off to the prior for unseen rows), or a probabilistic classifier for
  continuous ones. A fitted classifier is an *estimate* of the Bayes rule, so the
  baseline it gives can be below the true optimum (which makes the alternative
  advantage look larger than it is); the docstring of each result says which was used.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone

from .._validation import check_consistent_length, check_labels, check_matrix, check_scalar, check_choice
from ..exceptions import InvalidInputError, InvalidParameterError
from .inversion import check_prior, inversion_accuracy

__all__ = ["BayesSimulator", "simulator_accuracy_gaussian", "alternative_advantage_gaussian"]


def simulator_accuracy_gaussian(prior, population_weights, sigma_pop: float) -> float:
    """Accuracy of the Bayes-optimal simulator of Definition 6 in a linear-Gaussian ``D``.

    ``D``: ``y = c(v) + w_t + eps`` with ``eps ~ N(0, sigma_pop^2)``, ``t`` independent of
    ``v`` with prior ``p``. The posterior is ``Pr[t_i | v, y] ∝ p_i N(y - c(v) - w_i; 0, sigma_pop^2)``,
    so the simulator is Adversary 4 with the population function and ``f = N(0, sigma_pop^2)``;
    its accuracy is ``sum_j p_j Pr[right | t_j]`` from the interval procedure.

    Parameters
    ----------
    prior : array-like of shape (m,)
    population_weights : array-like of shape (m,)
        ``w_i`` of the population (not of any trained model).
    sigma_pop : float
        Noise standard deviation of ``D``.

    Returns
    -------
    float
    """
    p = check_prior(prior)
    return float(np.sum(p * inversion_accuracy(p, population_weights, sigma_pop, sigma_pop)))


def alternative_advantage_gaussian(
    prior, weights, sigma_s: float, sigma_d: float, *, population_weights=None, sigma_pop: float | None = None
) -> float:
    """Definition 6's alternative advantage of Adversary 4 in the linear-Gaussian model.

    ``Pr[A4 right | b=0] - Pr[S right | b=1]``: Adversary 4 (``f_A = N(0, sigma_S^2)``)
    on members whose error is ``N(0, sigma_S^2)``, minus the Bayes-optimal
    simulator on fresh points of ``D``.

    Parameters
    ----------
    prior, weights : array-like of shape (m,)
        Prior of ``t`` and the model's shifts ``w_i``.
    sigma_s, sigma_d : float
        Error standard deviations on members and on ``D`` for the model.
    population_weights : array-like of shape (m,), optional
        The population's shifts; default ``weights`` (the model learned them exactly).
    sigma_pop : float, optional
        Noise of ``D`` around the population function; default ``sigma_d``.

    Returns
    -------
    float
    """
    p = check_prior(prior)
    acc_members = float(np.sum(p * inversion_accuracy(p, weights, sigma_s, sigma_s)))
    pw = weights if population_weights is None else population_weights
    sp = sigma_d if sigma_pop is None else sigma_pop
    return acc_members - simulator_accuracy_gaussian(p, pw, sp)


class BayesSimulator(BaseEstimator):
    """Definition 6's simulator: the best guess of ``t`` from ``phi(z)`` without the model.

    Parameters
    ----------
    method : {"table", "estimator"}, default="table"
        ``"table"``: exact conditional frequencies ``Pr[t | phi(z)]`` over the
        distinct rows of ``phi`` seen in ``fit`` (for discrete ``phi``); rows not seen
        in ``fit`` get the prior. ``"estimator"``: a probabilistic classifier
        fitted on ``(phi, t)``, an estimate of the Bayes rule for continuous ``phi``.
    estimator : scikit-learn classifier, optional
        Used with ``method="estimator"``; default ``LogisticRegression(max_iter=2000)``.
        Cloned at ``fit``.
    decimals : int, default=9
        With ``method="table"``, rows of ``phi`` are rounded to this many decimals
        before being matched (so float encodings of the same category agree).

    Attributes
    ----------
    n_values_ : int
    prior_ : ndarray of shape (n_values_,)
        Frequencies of ``t`` in the fitting sample.
    """

    def __init__(self, *, method: str = "table", estimator=None, decimals: int = 9):
        self.method = method
        self.estimator = estimator
        self.decimals = decimals

    def fit(self, phi, t, *, n_values: int | None = None):
        """Fit on a sample ``(phi(z), t)`` of ``D`` disjoint from the target model's training set.

        Parameters
        ----------
        phi : array-like of shape (n_samples, n_features)
            What the adversary knows about each record (other columns, label).
        t : array-like of shape (n_samples,)
            The sensitive value index ``0..m-1``.
        n_values : int, optional
            ``m``; default ``max(t) + 1``.
        """
        check_choice(self.method, name="method", choices=("table", "estimator"))
        check_scalar(self.decimals, name="decimals", kind=int, min_val=0)
        phi = check_matrix(phi, name="phi")
        t = check_labels(t, name="t", n_classes=n_values)
        check_consistent_length(phi=phi, t=t)
        m = int(t.max()) + 1 if n_values is None else int(n_values)
        if m < 2:
            raise InvalidInputError("t holds a single value; attribute inference needs at least 2")
        self.n_values_ = m
        self.prior_ = np.bincount(t, minlength=m) / t.size
        if self.method == "table":
            keys = np.round(phi, self.decimals)
            uniq, inv = np.unique(keys, axis=0, return_inverse=True)
            counts = np.zeros((uniq.shape[0], m))
            np.add.at(counts, (inv.ravel(), t), 1.0)
            self._table = {tuple(row): counts[k] / counts[k].sum() for k, row in enumerate(uniq)}
            self.n_distinct_ = int(uniq.shape[0])
        else:
            from sklearn.linear_model import LogisticRegression

            est = LogisticRegression(max_iter=2000) if self.estimator is None else clone(self.estimator)
            if not hasattr(est, "predict_proba"):
                raise InvalidParameterError(f"estimator must have predict_proba; {type(est).__name__} has none")
            est.fit(phi, t)
            self.estimator_ = est
        self.n_features_in_ = phi.shape[1]
        return self

    def predict_proba(self, phi) -> np.ndarray:
        """Estimated ``Pr[t = t_i | phi(z)]``, shape (n_samples, n_values_)."""
        if not hasattr(self, "prior_"):
            raise InvalidParameterError("this BayesSimulator is not fitted yet; call fit(phi, t) first")
        phi = check_matrix(phi, name="phi")
        if phi.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"phi has {phi.shape[1]} columns; the simulator was fitted on {self.n_features_in_}")
        if self.method == "table":
            keys = np.round(phi, self.decimals)
            return np.stack([self._table.get(tuple(r), self.prior_) for r in keys])
        out = np.zeros((phi.shape[0], self.n_values_))
        out[:, self.estimator_.classes_.astype(int)] = self.estimator_.predict_proba(phi)
        return out

    def predict(self, phi) -> np.ndarray:
        """``argmax_i Pr[t_i | phi(z)]`` (ties to the lowest index), shape (n_samples,)."""
        return np.argmax(self.predict_proba(phi), axis=1)
