"""Threshold attacks of Yeom et al. (2018), with their closed-form advantages.

* :class:`BoundedLossAdversary` — Adversary 1. With 0-1 loss it is
  deterministic: "member iff correctly classified", and its advantage equals
  train accuracy minus test accuracy (Theorem 2).
* :class:`ThresholdAdversary` — Adversary 2 for regression residuals: the
  Bayes rule for Gaussian errors N(0, σ_S²) vs N(0, σ_D²) with the threshold
  ε_eq of Theorem 3 (Eq. 3), or the §3.3 threshold |ε| < σ_S when σ_D is unknown.
* :class:`LossThresholdAttack` — for classifiers: member iff the
  cross-entropy loss is below the average training loss L_S (the attack of
  Yeom's Table I; the classifier analogue of §3.3).

The closed forms are :func:`epsilon_eq` (Theorem 3, Eq. 3),
:func:`advantage_known_sigma` (Theorem 3), :func:`advantage_unknown_sigma`
(§3.3) and :func:`dp_advantage_bound` (Theorem 1). Spec: yeom-overfitting.md §3.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar, check_vector
from ..exceptions import InvalidInputError
from ._base import Attack, AttackInputs, AttackResult, check_target_inputs, cross_entropy_loss

__all__ = [
    "epsilon_eq",
    "advantage_known_sigma",
    "advantage_unknown_sigma",
    "dp_advantage_bound",
    "zero_one_loss",
    "BoundedLossAdversary",
    "ThresholdAdversary",
    "LossThresholdAttack",
]


# -- closed forms -------------------------------------------------------------------------------


def _check_ratio(r):
    arr = np.asarray(r, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InvalidInputError("r = sigma_D / sigma_S must be finite and > 0")
    return arr


def epsilon_eq(sigma_s: float, sigma_d: float) -> float:
    """Residual magnitude where the member and non-member error densities cross.

    Theorem 3, Eq. (3) of Yeom et al.::

        ε_eq = σ_S σ_D sqrt( 2 ln(σ_D/σ_S) / (σ_D² − σ_S²) )

    Symmetric in the two σ's; the limit σ_D → σ_S is σ_S.

    Parameters
    ----------
    sigma_s, sigma_d : float > 0
        Standard deviations of the error on training points and on the population.
    """
    check_scalar(sigma_s, name="sigma_s", min_val=0.0, include_min=False)
    check_scalar(sigma_d, name="sigma_d", min_val=0.0, include_min=False)
    r = sigma_d / sigma_s
    if abs(r - 1.0) < 1e-9:
        return float(sigma_s)
    return float(sigma_s * sigma_d * np.sqrt(2.0 * np.log(r) / (sigma_d**2 - sigma_s**2)))


def advantage_known_sigma(r):
    """Advantage of Adversary 2 with σ_S and σ_D known, r = σ_D/σ_S (Theorem 3).

    ``Adv = erf(r·sqrt(ln r/(r²−1))) − erf(sqrt(ln r/(r²−1)))``; 0 at r = 1 (the
    limit), → 1 as r → ∞. For r < 1 the Bayes rule flips ("member iff
    |ε| > ε_eq") and the advantage is the same expression with r → 1/r.

    Parameters
    ----------
    r : float or array-like, > 0

    Returns
    -------
    float or ndarray like ``r``
    """
    arr = _check_ratio(r)
    rr = np.where(arr < 1, 1.0 / arr, arr)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.sqrt(np.log(rr) / (rr**2 - 1.0))
        adv = erf(rr * a) - erf(a)
    adv = np.where(np.abs(rr - 1.0) < 1e-9, 0.0, adv)
    return float(adv) if adv.ndim == 0 else adv


def advantage_unknown_sigma(r):
    """Advantage of the threshold |ε| < σ_S under Gaussian errors (§3.3).

    ``Adv = erf(1/√2) − erf(1/(√2 r))``, → erf(1/√2) ≈ 0.6827 as r → ∞.
    Negative for r < 1.
    """
    arr = _check_ratio(r)
    adv = erf(1.0 / np.sqrt(2.0)) - erf(1.0 / (np.sqrt(2.0) * arr))
    return float(adv) if np.ndim(adv) == 0 else adv


def dp_advantage_bound(epsilon, *, tight: bool = False):
    """Upper bound on membership advantage of an ε-DP learner.

    Theorem 1 of Yeom et al.: ``e^ε − 1``. With ``tight=True`` the
    hypothesis-testing bound ``tanh(ε/2) = (e^ε − 1)/(e^ε + 1)``.
    """
    e = np.asarray(epsilon, dtype=float)
    if np.any(e < 0) or not np.all(np.isfinite(e)):
        raise InvalidInputError("epsilon must be finite and >= 0")
    out = np.tanh(e / 2.0) if tight else np.expm1(e)
    return float(out) if out.ndim == 0 else out


def zero_one_loss(probs, y) -> np.ndarray:
    """0-1 loss of the argmax prediction (ties go to the lowest class index), shape (n,)."""
    return (np.argmax(probs, axis=1) != y).astype(float)


# -- attacks ------------------------------------------------------------------------------------


class BoundedLossAdversary(Attack):
    """Yeom et al.'s Adversary 1: output "non-member" with probability ℓ(A_S, z)/B.

    Parameters
    ----------
    loss : {"zero_one", "cross_entropy"}, default="zero_one"
        With 0-1 loss (B = 1) the adversary is deterministic: member iff the
        model classifies z correctly. Its advantage is train accuracy minus
        test accuracy (Theorem 2).
    bound : float, optional
        B, an upper bound on the loss. Default 1 for 0-1 loss; required for
        cross-entropy (losses above B are an error).
    randomized : bool, default=False
        Draw decisions as the paper's randomized adversary does (member with
        probability 1 − ℓ/B). With 0-1 loss this changes nothing.
    random_state : None, int or Generator

    Notes
    -----
    ``scores`` are ``1 − ℓ/B``, the probability of answering "member", so the
    expected advantage on any split is ``mean(score | train) − mean(score |
    test) = (mean test loss − mean train loss)/B`` exactly (Theorem 2).
    """

    name = "yeom_adv1"

    def __init__(self, *, loss: str = "zero_one", bound: float | None = None, randomized: bool = False,
                 random_state: RandomStateLike = None):
        self.loss = loss
        self.bound = bound
        self.randomized = randomized
        self.random_state = random_state

    def score_losses(self, losses) -> AttackResult:
        """Scores and decisions from per-record losses, shape (n,)."""
        check_choice(self.loss, name="loss", choices=("zero_one", "cross_entropy"))
        ell = check_vector(losses, name="losses")
        if ell.min() < 0:
            raise InvalidInputError("losses must be >= 0")
        B = self.bound
        if B is None:
            if self.loss != "zero_one":
                raise InvalidInputError("bound (B) is required for an unbounded loss such as cross_entropy")
            B = 1.0
        check_scalar(B, name="bound", min_val=0.0, include_min=False)
        if ell.max() > B * (1 + 1e-12):
            raise InvalidInputError(f"losses exceed the bound B={B} (max {ell.max():.4g}); Adversary 1 needs ℓ <= B")
        p_member = 1.0 - ell / B
        if self.randomized:
            rng = check_random_state(self.random_state)
            decisions = (rng.random(ell.size) < p_member).astype(int)
        else:
            decisions = (p_member >= 0.5).astype(int) if self.loss != "zero_one" else (ell == 0).astype(int)
        return self.result(p_member, decisions, threshold=0.5, bound=float(B))

    def score(self, probs, y) -> AttackResult:
        """Scores from the target model's probabilities (n, C) and labels (n,)."""
        p, yy = check_target_inputs(probs, y)
        losses = zero_one_loss(p, yy) if self.loss == "zero_one" else cross_entropy_loss(p, yy)
        return self.score_losses(losses)

    def run(self, inputs: AttackInputs) -> AttackResult:
        return self.score(inputs.probs, inputs.y)


class ThresholdAdversary(Attack):
    """Yeom et al.'s Adversary 2 on regression residuals ε = y − A_S(x).

    Parameters
    ----------
    sigma_s : float > 0
        Standard error on the training set (R_emp in the paper's experiments).
    sigma_d : float > 0, optional
        Standard error on the population (R_cv). Given: the Bayes rule of
        Theorem 3, member iff |ε| < ε_eq (|ε| > ε_eq if σ_D < σ_S). Omitted: the
        §3.3 rule, member iff |ε| < σ_S.

    Notes
    -----
    With σ_D known the score is the log density ratio
    ``ln N(ε; 0, σ_S²) − ln N(ε; 0, σ_D²)``; without, ``−|ε|``. Either way
    decision 1 iff the score exceeds ``threshold``.
    """

    name = "yeom_adv2"

    def __init__(self, *, sigma_s: float, sigma_d: float | None = None):
        self.sigma_s = sigma_s
        self.sigma_d = sigma_d

    def threshold_(self) -> float:
        """|ε| threshold: ε_eq (Theorem 3) or σ_S (§3.3)."""
        if self.sigma_d is None:
            return float(check_scalar(self.sigma_s, name="sigma_s", min_val=0.0, include_min=False))
        return epsilon_eq(self.sigma_s, self.sigma_d)

    def score_residuals(self, residuals) -> AttackResult:
        """Scores and decisions from residuals ε, shape (n,)."""
        eps = np.abs(check_vector(residuals, name="residuals"))
        thr = self.threshold_()
        if self.sigma_d is None:
            scores = -eps
            decisions = (eps < thr).astype(int)
            return self.result(scores, decisions, threshold=-thr, rule="|eps| < sigma_s (§3.3)", eps_threshold=thr)
        s, d = float(self.sigma_s), float(self.sigma_d)
        # ln N(ε;0,σ_S²) − ln N(ε;0,σ_D²): the Bayes statistic of Adversary 2 (uniform prior on b)
        scores = np.log(d / s) - 0.5 * eps**2 * (1.0 / s**2 - 1.0 / d**2)
        decisions = (eps < thr).astype(int) if s < d else (eps > thr).astype(int)
        if s == d:
            decisions = np.zeros_like(decisions)
        return self.result(scores, decisions, threshold=0.0, rule="Bayes rule, Theorem 3", eps_threshold=thr)

    def score(self, y_true, y_pred) -> AttackResult:
        """Scores from targets and the model's predictions, both shape (n,)."""
        yt = check_vector(y_true, name="y_true")
        yp = check_vector(y_pred, name="y_pred")
        if yt.shape != yp.shape:
            raise InvalidInputError(f"y_true has shape {yt.shape} but y_pred has shape {yp.shape}")
        return self.score_residuals(yt - yp)

    def run(self, inputs: AttackInputs) -> AttackResult:
        if "residuals" not in inputs.extra:
            raise InvalidInputError("ThresholdAdversary is for regression: pass residuals in inputs.extra['residuals']")
        return self.score_residuals(inputs.extra["residuals"])


class LossThresholdAttack(Attack):
    """Loss threshold attack for classifiers: member iff ℓ_CE(A_S, z) < L_S.

    Yeom et al. §6.3 / Table I, with L_S the average training loss (the
    classifier analogue of the §3.3 threshold). Scores are ``−ℓ_CE`` (the LOSS
    attack of the MIA literature).

    Parameters
    ----------
    threshold : float, optional
        L_S. Default: ``inputs.train_loss`` in :meth:`run`; if that is absent
        too, decisions fall back to "member iff correctly classified"
        (Adversary 1), recorded in ``info["rule"]``.
    """

    name = "loss"

    def __init__(self, *, threshold: float | None = None):
        self.threshold = threshold

    def score(self, probs, y, *, train_loss: float | None = None) -> AttackResult:
        """Scores from the target model's probabilities (n, C) and labels (n,)."""
        p, yy = check_target_inputs(probs, y)
        loss = cross_entropy_loss(p, yy)
        L = self.threshold if self.threshold is not None else train_loss
        if L is None:
            dec = (zero_one_loss(p, yy) == 0).astype(int)
            return self.result(-loss, dec, rule="no L_S given: member iff correctly classified (Adversary 1)")
        check_scalar(L, name="threshold", min_val=0.0)
        return self.result(-loss, (loss < L).astype(int), threshold=-float(L), rule="loss < L_S (Yeom Table I)")

    def run(self, inputs: AttackInputs) -> AttackResult:
        return self.score(inputs.probs, inputs.y, train_loss=inputs.train_loss)
