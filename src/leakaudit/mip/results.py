"""Result types of the MIP package: frozen, JSON round-trip (see :mod:`leakaudit._results`)."""

from __future__ import annotations

from .._results import Result

__all__ = ["MIPRelease", "ExactAudit", "AttackAudit", "NoiseCalibration"]


class MIPRelease(Result):
    """Output of Algorithm 1 (:func:`~leakaudit.mip.mip_noise_addition`).

    Only ``theta_hat`` may be published. ``theta``, ``noise`` and ``train_idx`` are
    recorded for auditing and must stay private (knowing the split voids the guarantee).
    ``sigma`` is data-dependent and its own leakage is not accounted for by the paper.
    """

    theta_hat: list[float]
    theta: list[float]
    noise: list[float]
    sigma: list[float]
    sigma_estimated: bool
    sigma_split: str
    B: int
    eta: float
    M: float
    c: float
    radial: str
    constant: str
    d: int
    d_eff: int
    train_idx: list[int]
    random_state: int


class ExactAudit(Result):
    """Exact Bayes-optimal membership accuracy by enumerating every split (Prop 2, TV form).

    ``accuracy[i]`` is the best attack accuracy on target ``targets[i]``;
    ``eta = max_i accuracy[i] - max(k/n, 1 - k/n)``.
    """

    n: int
    k: int
    n_splits: int
    targets: list[int]
    accuracy: list[float]
    eta: float
    worst_target: int
    method: str


class AttackAudit(Result):
    """A simulated Bayes-optimal attacker (spec 7.1) played for ``n_games`` games per target.

    ``eta_hat = accuracy - 1/2`` is the MIP-scale quantity bounded by ``eta``;
    ``eta_upper`` is its one-sided upper confidence bound (Clopper-Pearson). ``advantage``
    is Yeom's TPR - FPR of the same decisions (which is about ``2 * eta_hat``).
    """

    targets: list[int]
    n_games: int
    n_reference: int
    accuracy: list[float]
    accuracy_ci: list[list[float]]
    eta_hat: list[float]
    eta_upper: list[float]
    advantage: list[float]
    eta_target: float | None = None
    confidence: float = 0.95

    def passes(self) -> bool | None:
        """Whether every target's ``eta_hat`` is at most the target within its interval."""
        if self.eta_target is None:
            return None
        lower = [ci[0] - 0.5 for ci in self.accuracy_ci]
        return all(lo <= self.eta_target for lo in lower)


class NoiseCalibration(Result):
    """What ``leakaudit mip calibrate`` prints: the constant and the noise scales."""

    eta: float
    M: float
    constant: str
    radial: str
    c: float
    sigma: list[float]
    dim: int
    noise_scale: list[float]
    expected_norm: float
    eps_equivalent: float
    note: str
