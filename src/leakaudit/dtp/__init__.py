"""Differential training privacy (Long, Bindschaedler, Gunter 2017): DTP, PDTP, bounds, verdict, reduction.

All values are natural-log ratios (spec long-dtp.md §0). Modules, one idea each:
``pdtp`` (Def 4.4), ``exact`` (Def 4.2 by enumeration), ``stability`` (Thm 6.2,
Props 6.3–6.8, the normalised naive-Bayes bound), ``lipschitz`` (Thm 6.9),
``search`` (a lower estimate of DTP), ``noise_floor`` (Figs 7–8), ``verdict``
(DTP-1), ``significance`` (DTP-1 as a test beyond seed noise and binning), ``reduce`` (§8),
``removal`` (the measured effect of removing named records), ``screening`` (PDTP at scale: the top of a
reference-model ranking and a random sample), ``correlation`` (Tables 1–2).
"""

from .correlation import correlation_vs_measurements, pdtp_attack_correlation
from .exact import dtp_exact, dtp_on_queries, enumerate_feature_space
from .lipschitz import lipschitz_dtp_bound, logistic_lipschitz_bound, softmax_lipschitz_constant
from .noise_floor import noise_floor_from_probabilities, normalised_pdtp, sampling_noise_floor, seed_noise_floor
from .pdtp import SEED_POLICIES, abs_log_ratio, apply_binning, pdtp, pdtp_from_probabilities
from .reduce import reduce_dtp
from .removal import removal_effect
from .results import (
    CorrelationResult,
    DTP1TestResult,
    DTPResult,
    LipschitzBoundResult,
    NoiseFloorResult,
    PDTPResult,
    ReductionResult,
    RemovalEffect,
    SearchResult,
    StabilityBoundResult,
    Verdict,
)
from .screening import (
    OOBShift,
    ScreenedPDTP,
    forest_oob_shift,
    oob_ensemble,
    reference_loo_shift,
    sample_for_allowance,
    screen_plan,
    screened_pdtp,
    tail_exceeds_sample,
    unmeasured_bound,
)
from .search import dtp_search, dtp_search_estimate
from .significance import DTP1Deltas, bin_aware_log_ratio, dtp1_test, holm_adjust
from .stability import (
    bayes_inference_delta,
    dtp_stability_bound,
    lsq_delta,
    naive_bayes_delta,
    normalised_nb_dtp_bound,
    normalised_nb_log_r,
    random_trees_delta,
    stability_bound_for,
    stability_gamma,
)
from .verdict import dtp1_verdict

__all__ = [
    "DTP1Deltas",
    "dtp1_verdict",
    "dtp1_test",
    "bin_aware_log_ratio",
    "holm_adjust",
    "reduce_dtp",
    "removal_effect",
    "RemovalEffect",
    "reference_loo_shift",
    "sample_for_allowance",
    "screen_plan",
    "screened_pdtp",
    "forest_oob_shift",
    "oob_ensemble",
    "OOBShift",
    "ScreenedPDTP",
    "tail_exceeds_sample",
    "unmeasured_bound",
    "dtp_search",
    "dtp_search_estimate",
    "softmax_lipschitz_constant",
    "lipschitz_dtp_bound",
    "logistic_lipschitz_bound",
    "seed_noise_floor",
    "sampling_noise_floor",
    "noise_floor_from_probabilities",
    "normalised_pdtp",
    "pdtp_attack_correlation",
    "correlation_vs_measurements",
    "pdtp",
    "pdtp_from_probabilities",
    "abs_log_ratio",
    "apply_binning",
    "SEED_POLICIES",
    "dtp_exact",
    "dtp_on_queries",
    "enumerate_feature_space",
    "dtp_stability_bound",
    "bayes_inference_delta",
    "naive_bayes_delta",
    "lsq_delta",
    "random_trees_delta",
    "stability_gamma",
    "normalised_nb_log_r",
    "normalised_nb_dtp_bound",
    "stability_bound_for",
    "PDTPResult",
    "DTPResult",
    "StabilityBoundResult",
    "LipschitzBoundResult",
    "SearchResult",
    "NoiseFloorResult",
    "Verdict",
    "ReductionResult",
    "CorrelationResult",
    "DTP1TestResult",
]
