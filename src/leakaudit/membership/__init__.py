"""Membership inference attacks (Yeom et al., Long et al., Shokri et al., LiRA, RMIA, InfoRMIA) and protocols.

Every attack takes plain arrays (or a learner plus data for shadow/reference
models) and returns per-record scores (higher means member) and decisions, so
it works with any framework.

Attacks (registry names in brackets, see :func:`available_attacks`):

* :class:`LossThresholdAttack` [loss], :class:`BoundedLossAdversary` [yeom_adv1],
  :class:`ThresholdAdversary` (regression), closed forms :func:`advantage_known_sigma`
  (Theorem 3), :func:`advantage_unknown_sigma` (§3.3), :func:`epsilon_eq`.
* :class:`ColludingLearner` / :class:`ColludingAdversary` (Yeom Algorithm 1, Adversary 3).
* :class:`ShadowModelAttack` [shadow, shadow_per_class], :class:`DistanceAttack` [distance],
  :class:`FrequencyAttack` [frequency] (Long et al.), :func:`bin_probabilities` (Long §5.2).
* :class:`LiRA` [lira, lira_fixed, lira_offline], :class:`RMIA` [rmia, rmia_offline],
  :class:`InfoRMIA` [informia, informia_offline] (RMIA's test scored by its Bayes factor, Tao and Shokri).
* :class:`QuantileRegressionAttack` [quantile] (Bertran et al.): no reference models, public non-members only.
* :class:`LabelOnlyAttack`: label-only, the share of randomly perturbed copies of a record still classified
  correctly (Choquette-Choo et al. 2021); the model is queried for labels only.
* :class:`BaVarIA` [bavaria]: LiRA's statistic with an empirical-Bayes prior on each record's mean and variance,
  for few reference models.

Protocols: :func:`audit_model`, :func:`reference_model_experiment`, :func:`long_protocol`,
:func:`yeom_split_protocol`, :func:`membership_experiment`.
"""

from ._base import (
    Attack,
    AttackInputs,
    AttackResult,
    ReferenceSet,
    cross_entropy_loss,
    audit_reference_models,
    fit_reference_models,
    paired_half_masks,
    true_class_probability,
)
from ._registry import (ATTACKS, AttackSpec, audit_attacks, available_attacks, display_name, make_attack, register_attack,
                        text_attacks)
from .bavaria import BaVarIA
from .binning import bin_index, bin_probabilities
from .colluding import ColludingAdversary, ColludingLearner, TriggerFunction, colluding_advantage_bound
from .distance import DistanceAttack, kl_divergence, train_targeted_shadows
from .frequency import FrequencyAttack
from .informia import InfoRMIA
from .label_only import LabelOnlyAttack
from .lira import LiRA, logit_scaled_confidence
from .protocols import (
    audit_model,
    long_protocol,
    membership_experiment,
    reference_model_experiment,
    run_attacks,
    yeom_split_protocol,
)
from .quantile import QuantileRegressionAttack
from .results import AttackSummary, LongProtocolResult, MembershipAudit, MembershipExperimentResult, YeomSplitResult
from .rmia import RMIA
from .shadow import ShadowModelAttack, attack_features
from .threshold import (
    BoundedLossAdversary,
    LossThresholdAttack,
    ThresholdAdversary,
    advantage_known_sigma,
    advantage_unknown_sigma,
    dp_advantage_bound,
    epsilon_eq,
)

__all__ = [
    "Attack", "AttackInputs", "AttackResult", "ReferenceSet", "cross_entropy_loss", "fit_reference_models",
    "audit_reference_models",
    "true_class_probability",
    "paired_half_masks", "available_attacks", "make_attack", "register_attack", "display_name", "audit_attacks",
    "text_attacks",
    "ATTACKS", "AttackSpec", "bin_index", "bin_probabilities",
    "ColludingAdversary", "ColludingLearner", "TriggerFunction", "colluding_advantage_bound",
    "DistanceAttack", "kl_divergence", "train_targeted_shadows", "FrequencyAttack", "LabelOnlyAttack", "LiRA",
    "logit_scaled_confidence", "audit_model", "long_protocol", "membership_experiment",
    "reference_model_experiment", "run_attacks", "yeom_split_protocol", "AttackSummary", "LongProtocolResult",
    "MembershipAudit", "MembershipExperimentResult", "YeomSplitResult", "RMIA", "ShadowModelAttack",
    "attack_features", "BoundedLossAdversary", "LossThresholdAttack", "ThresholdAdversary",
    "advantage_known_sigma", "advantage_unknown_sigma", "dp_advantage_bound", "epsilon_eq",
    "QuantileRegressionAttack", "BaVarIA", "InfoRMIA",
]
