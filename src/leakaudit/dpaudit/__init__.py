"""Auditing differential privacy from one training run.

:mod:`.one_run` holds the epsilon lower bound of Steinke, Nasr & Jagielski (NeurIPS 2023, Theorem 3.1) from
canary guesses and the helper that turns scores into guesses; :mod:`.fdp` the f-DP analysis of Mahloujifar, Melis &
Chaudhuri (ICML 2025) on the same guesses, with the (epsilon, delta) or the Gaussian trade-off curve; :mod:`.search`
the union-bounded search over guess counts, the choice of analysis ("best": both, each at half the confidence
budget) and the check of a claimed (epsilon, delta); :mod:`.dpsgd` the one-run audit of a DP-SGD recipe
(:class:`~leakaudit.learners.DPSGD`) with gradient or input canaries; :mod:`.noise_check` the per-step noise check of
a white-box audit (each step's noise bounded on coordinates no gradient reaches, then accounted), reported apart.
"""

from .dpsgd import (
    DpsgdAudit,
    audit_dpsgd,
    audited_rows,
    calibrate_noise_multiplier,
    check_dp_claim,
    default_canary_count,
    whitebox_guess_grid,
)
from .fdp import (
    FDP_CURVES,
    FdpAudit,
    GdpAudit,
    fdp_audit,
    fdp_epsilon_lower_bound,
    fdp_rejects,
    gdp_audit,
    gdp_epsilon_lower_bound,
    gdp_mu,
    gdp_rejects,
    privacy_profile_rejects,
    subsampled_gaussian_profile,
    tradeoff_eps_delta,
)
from .noise_check import NoiseCheck, noise_check
from .one_run import (
    OneRunAudit,
    count_correct,
    draw_inclusion,
    guesses_from_scores,
    one_run_audit,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)
from .search import (
    BOUNDS,
    ClaimCheck,
    OneRunSearch,
    check_claim,
    default_guess_grid,
    one_run_audit_scores,
)

__all__ = [
    "BOUNDS",
    "FDP_CURVES",
    "ClaimCheck",
    "DpsgdAudit",
    "FdpAudit",
    "GdpAudit",
    "NoiseCheck",
    "OneRunAudit",
    "OneRunSearch",
    "audit_dpsgd",
    "audited_rows",
    "calibrate_noise_multiplier",
    "check_claim",
    "check_dp_claim",
    "count_correct",
    "default_canary_count",
    "default_guess_grid",
    "draw_inclusion",
    "fdp_audit",
    "fdp_epsilon_lower_bound",
    "fdp_rejects",
    "gdp_audit",
    "gdp_epsilon_lower_bound",
    "gdp_mu",
    "gdp_rejects",
    "guesses_from_scores",
    "noise_check",
    "one_run_audit",
    "one_run_audit_scores",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "privacy_profile_rejects",
    "subsampled_gaussian_profile",
    "tradeoff_eps_delta",
    "whitebox_guess_grid",
]
