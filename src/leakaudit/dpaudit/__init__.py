"""Auditing differential privacy from one training run.

:mod:`.one_run` holds the epsilon lower bound of Steinke, Nasr & Jagielski (NeurIPS 2023, Theorem 3.1) from
canary guesses and the helper that turns scores into guesses; :mod:`.fdp` the f-DP analysis of Mahloujifar, Melis &
Chaudhuri (ICML 2025) on the same guesses, with the (epsilon, delta) or the Gaussian trade-off curve; :mod:`.search`
the union-bounded search over guess counts, the choice of analysis ("best": both, each at half the confidence
budget) and the check of a claimed (epsilon, delta); :mod:`.dpsgd` the one-run audit of a DP-SGD recipe
(:class:`~leakaudit.learners.DPSGD`) with gradient or input canaries; :mod:`.noise_check` the per-step noise check of
a white-box audit (each step's noise bounded on coordinates no gradient reaches, then accounted), reported apart.
"""

from . import fdp, one_run, search
from .dpsgd import (
    DpsgdAudit,
    audit_dpsgd,
    audited_rows,
    calibrate_noise_multiplier,
    check_dp_claim,
    default_canary_count,
    whitebox_guess_grid,
)
from .fdp import *  # noqa: F403
from .noise_check import *  # noqa: F403
from .one_run import *  # noqa: F403
from .search import *  # noqa: F403

__all__ = [*fdp.__all__, "NoiseCheck", "noise_check", *one_run.__all__, *search.__all__, "DpsgdAudit",
           "audit_dpsgd", "audited_rows", "calibrate_noise_multiplier", "check_dp_claim", "default_canary_count",
           "whitebox_guess_grid"]
