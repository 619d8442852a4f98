"""Reductions between membership and attribute inference (Yeom et al., Section 5).

Yeom, Giacomelli, Fredrikson & Jha (CSF 2018, arXiv 1709.01604 v5):

* Adversary 5 (``A_{M->A}``, a *membership* adversary built from an attribute
  oracle): say "member" iff the oracle recovers the record's true value.
  Theorem 6: ``Adv^M(A_{M->A}) = Adv^A(A_A)`` exactly.
* Adversary 6 (``A^U_{A->M}``, an *attribute* adversary built from a membership
  oracle): pick a value uniformly at random, fill it in, ask the oracle; answer
  the value if the oracle says "member", else ⊥. Theorem 7:
  ``Adv^A = Adv*^M / m`` (``= Adv^M / m`` for model inversion).
* Adversary 7 (``A^M_{A->M}``, the multi-query reduction): fill in every value,
  keep those the oracle accepts, answer the accepted value with the highest
  prior, else ⊥. The authors' code (``sklearn_reduce`` in
  samuel-yeom/ml-privacy-csf18) walks the values in *ascending* prior order and so
  answers the *least* likely accepted value; ``order="asc"`` reproduces it as an
  ablation (spec §5 and §8: it matters a lot for CYP2C9).

Conventions. Membership decisions are booleans, ``True`` = "member" (the paper
writes 0 for member). Attribute guesses are value indices ``0..m-1``; ``-1`` is ⊥
and counts as wrong. A membership oracle is a plain callable, so any attack
(ours in :mod:`leakaudit.membership` or a user's) can be plugged in:
``oracle(i) -> bool array (n,)``, the decision for every record with its
sensitive attribute set to ``t_i``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_array, check_labels, check_scalar, check_choice, check_matrix
from ..exceptions import InvalidInputError
from .inversion import check_prior

__all__ = [
    "NO_ANSWER",
    "membership_from_attribute",
    "acceptance_matrix",
    "residual_threshold_acceptance",
    "uniform_reduction",
    "multi_query_reduction",
    "theorem7_advantage",
    "regression_membership_oracle",
    "classifier_membership_oracle",
]

NO_ANSWER = -1
"""The attribute guess ⊥ (no answer); always wrong."""


def membership_from_attribute(guesses, t) -> np.ndarray:
    """Adversary 5: "member" iff the attribute oracle's guess is the true value (Yeom et al., §5.1).

    Parameters
    ----------
    guesses : array-like of shape (n_samples,)
        The attribute oracle's answer for each record (``-1`` = ⊥).
    t : array-like of shape (n_samples,)
        The true value index of each record.

    Returns
    -------
    ndarray of shape (n_samples,), bool
        True = "member". By Theorem 6 the membership advantage of these decisions
        on any sample of members and non-members equals the attribute advantage
        of the guesses on the same sample.
    """
    g = check_array(guesses, name="guesses", ndim=1, dtype=None)
    if g.dtype.kind not in "iu":
        raise InvalidInputError(f"guesses must hold integer value indices (-1 for no answer); got dtype {g.dtype}")
    tt = check_labels(t, name="t")
    if g.shape != tt.shape:
        raise InvalidInputError(f"inconsistent numbers of samples: guesses={g.shape[0]}, t={tt.shape[0]}")
    return g == tt


def acceptance_matrix(membership_oracle: Callable[[int], np.ndarray], m: int) -> np.ndarray:
    """Ask a membership oracle about every record with each candidate value filled in.

    Parameters
    ----------
    membership_oracle : callable
        ``oracle(i) -> array-like of shape (n_samples,)`` of booleans: is the record,
        with its sensitive attribute set to ``t_i``, judged a member?
    m : int
        Number of candidate values.

    Returns
    -------
    ndarray of shape (n_samples, m), bool
    """
    check_scalar(m, name="m", kind=int, min_val=2)
    cols = []
    for i in range(m):
        a = np.asarray(membership_oracle(i))
        if a.ndim != 1:
            raise InvalidInputError(f"membership_oracle({i}) must return a 1-D array; got shape {a.shape}")
        cols.append(a.astype(bool))
    if len({c.shape[0] for c in cols}) != 1:
        raise InvalidInputError("membership_oracle returned arrays of different lengths for different values")
    return np.stack(cols, axis=1)


def residual_threshold_acceptance(residuals, threshold: float) -> np.ndarray:
    """The paper's oracle for the reductions: "member" iff ``|eps| < threshold`` (Yeom et al. §3.3).

    In the experiments (spec §6.5) the threshold is the published training error
    ``R_emp`` (sigma_S) and ``eps = eps(t_i)`` is the counterfactual residual.

    Parameters
    ----------
    residuals : array-like of shape (n_samples, m)
    threshold : float, > 0

    Returns
    -------
    ndarray of shape (n_samples, m), bool
    """
    r = check_matrix(residuals, name="residuals")
    check_scalar(threshold, name="threshold", min_val=0.0, include_min=False)
    return np.abs(r) < threshold


def _check_accept(accept) -> np.ndarray:
    a = check_array(accept, name="accept", ndim=2, dtype=None)
    if a.dtype != bool:
        if a.dtype.kind not in "iu" or not np.isin(a, (0, 1)).all():
            raise InvalidInputError(f"accept must hold booleans (True = judged a member); got dtype {a.dtype}")
        a = a.astype(bool)
    if a.shape[1] < 2:
        raise InvalidInputError(f"accept needs one column per candidate value (at least 2); got shape {a.shape}")
    return a


def uniform_reduction(accept, *, random_state: RandomStateLike = None) -> np.ndarray:
    """Adversary 6: try one uniformly chosen value; answer it if the oracle accepts (Yeom et al., §5.2).

    Parameters
    ----------
    accept : array-like of shape (n_samples, m), bool
        The membership oracle's decision for each record with each value filled in
        (see :func:`acceptance_matrix`). Only one entry per row is used, as in the paper.
    random_state : None, int or Generator
        Draws the value tried for each record.

    Returns
    -------
    ndarray of shape (n_samples,), int
        The value index, or ``-1`` (⊥).
    """
    a = _check_accept(accept)
    rng = check_random_state(random_state)
    n, m = a.shape
    pick = rng.integers(0, m, size=n)
    return np.where(a[np.arange(n), pick], pick, NO_ANSWER)


def multi_query_reduction(accept, prior, *, order: str = "desc") -> np.ndarray:
    """Adversary 7: among the values the oracle accepts, answer the most likely a priori (Yeom et al., §5.2).

    Parameters
    ----------
    accept : array-like of shape (n_samples, m), bool
    prior : array-like of shape (m,)
        ``Pr_{z~D}[t = t_i]``.
    order : {"desc", "asc"}, default="desc"
        ``"desc"``: the paper's rule, ``argmax`` of the prior over accepted values.
        ``"asc"``: the authors' code, the accepted value of *lowest* prior (an ablation).
        Ties in the prior go to the lowest index either way.

    Returns
    -------
    ndarray of shape (n_samples,), int
        The value index, or ``-1`` (⊥) when no value is accepted.
    """
    a = _check_accept(accept)
    p = check_prior(prior, m=a.shape[1])
    check_choice(order, name="order", choices=("desc", "asc"))
    key = -p if order == "desc" else p
    ranking = np.lexsort((np.arange(p.size), key))  # values in the order they are tried
    ordered = a[:, ranking]
    first = np.argmax(ordered, axis=1)
    return np.where(ordered.any(axis=1), ranking[first], NO_ANSWER)


def theorem7_advantage(membership_advantage: float, m: int) -> float:
    """Expected attribute advantage of Adversary 6 (Yeom et al., Theorem 7): ``Adv*^M / m``."""
    check_scalar(m, name="m", kind=int, min_val=2)
    check_scalar(membership_advantage, name="membership_advantage", min_val=-1.0, max_val=1.0)
    return float(membership_advantage) / m


# ----------------------------------------------------------------------------------------------
# Oracles built from leakaudit.membership's threshold attacks (the one sibling import allowed)
# ----------------------------------------------------------------------------------------------


def regression_membership_oracle(
    predict: Callable[[np.ndarray], np.ndarray], X, y, *, columns, values=None, sigma_s: float,
    sigma_d: float | None = None,
) -> Callable[[int], np.ndarray]:
    """A membership oracle for the reductions from Yeom et al.'s Adversary 2 (threshold on residuals).

    ``oracle(i)`` fills in ``t_i`` (see :func:`~leakaudit.attribute.inversion.counterfactual_inputs`),
    queries the regression model and applies
    :class:`leakaudit.membership.threshold.ThresholdAdversary` (``|eps| < sigma_S`` without
    ``sigma_d``, the Theorem 3 rule with it).

    Parameters
    ----------
    predict : callable
        ``(n, d) -> (n,)``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    columns, values
        Where the sensitive attribute sits in ``X``.
    sigma_s : float
    sigma_d : float, optional

    Returns
    -------
    callable
        ``oracle(i) -> bool array (n_samples,)``, True = "member".
    """
    from ..membership.threshold import ThresholdAdversary
    from .inversion import counterfactual_residuals

    res = counterfactual_residuals(predict, X, y, columns=columns, values=values)  # (n, m), computed once
    attack = ThresholdAdversary(sigma_s=sigma_s, sigma_d=sigma_d)

    def oracle(i: int) -> np.ndarray:
        return np.asarray(attack.score_residuals(res[:, i]).decisions) == 1

    return oracle


def classifier_membership_oracle(
    predict_proba: Callable[[np.ndarray], np.ndarray], X, y, *, columns, values=None, train_loss: float
) -> Callable[[int], np.ndarray]:
    """A membership oracle for the reductions from the loss-threshold attack (Yeom et al. §6.3).

    ``oracle(i)`` fills in ``t_i``, queries the classifier and applies
    :class:`leakaudit.membership.threshold.LossThresholdAttack` ("member" iff the cross-entropy
    of the known label is below ``train_loss``, the mean training loss L_S).

    Returns
    -------
    callable
        ``oracle(i) -> bool array (n_samples,)``, True = "member".
    """
    from ..membership.threshold import LossThresholdAttack
    from .inversion import counterfactual_inputs

    cand = counterfactual_inputs(X, columns=columns, values=values)
    attack = LossThresholdAttack(threshold=train_loss)

    def oracle(i: int) -> np.ndarray:
        return np.asarray(attack.score(predict_proba(cand[i]), y).decisions) == 1

    return oracle
