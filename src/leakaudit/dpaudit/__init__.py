"""Auditing differential privacy from one training run.

:mod:`.one_run` holds the epsilon lower bound of Steinke, Nasr & Jagielski (NeurIPS 2023, Theorem 3.1) from
canary guesses, the helper that turns scores into guesses and the union-bounded search over guess counts;
:mod:`.fdp` the Gaussian-DP analysis of Mahloujifar, Melis & Chaudhuri (ICML 2025) on the same guesses.
"""

from .fdp import GdpAudit, gdp_audit, gdp_epsilon_lower_bound, gdp_mu, gdp_rejects
from .one_run import (
    OneRunAudit,
    OneRunSearch,
    count_correct,
    default_guess_grid,
    guesses_from_scores,
    one_run_audit,
    one_run_audit_scores,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)

__all__ = [
    "GdpAudit",
    "OneRunAudit",
    "OneRunSearch",
    "count_correct",
    "default_guess_grid",
    "gdp_audit",
    "gdp_epsilon_lower_bound",
    "gdp_mu",
    "gdp_rejects",
    "guesses_from_scores",
    "one_run_audit",
    "one_run_audit_scores",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
]
