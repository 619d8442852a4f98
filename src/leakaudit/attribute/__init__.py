"""Attribute inference and model inversion (Yeom et al., CSF 2018, Sections 4-5).

* :mod:`~leakaudit.attribute.inversion`: Adversary 4, Theorem 5, the general interval procedure.
* :mod:`~leakaudit.attribute.bayes_simulator`: Definition 6's Bayes-optimal simulator (no-model baseline).
* :mod:`~leakaudit.attribute.classifier`: sensitive-column inference from a classifier's probabilities.
* :mod:`~leakaudit.attribute.reductions`: Adversaries 5, 6 and 7 (Theorems 6 and 7).
* :mod:`~leakaudit.attribute.experiment`: advantages with intervals, and the experiment Exp^A.
"""

from .bayes_simulator import BayesSimulator, alternative_advantage_gaussian, simulator_accuracy_gaussian
from .classifier import (
    audit_classifier_attribute,
    audit_classifier_attributes,
    classifier_attribute_scores,
    infer_attribute_classifier,
    label_likelihood_scores,
)
from .experiment import (
    audit_regression_attribute,
    Records,
    alternative_advantage,
    attribute_advantage,
    correct_guesses,
    difference_interval,
    regression_inversion_split,
    run_exp_a,
    summarize_splits,
)
from .inversion import (
    check_prior,
    counterfactual_inputs,
    counterfactual_residuals,
    eps_eq,
    gaussian_log_density,
    mixture_log_density,
    inversion_accuracy,
    inversion_advantage,
    inversion_attack,
    inversion_correct_intervals,
    inversion_scores,
    theorem5_advantage,
    theorem5_optimal_tau,
)
from .reductions import (
    NO_ANSWER,
    acceptance_matrix,
    membership_from_attribute,
    multi_query_reduction,
    classifier_membership_oracle,
    regression_membership_oracle,
    residual_threshold_acceptance,
    theorem7_advantage,
    uniform_reduction,
)
from .results import AlternativeAdvantage, AttackSummary, AttributeAdvantage, AttributeAudit, ExpAResult, SplitSummary

__all__ = [
    "theorem5_advantage",
    "theorem5_optimal_tau",
    "eps_eq",
    "check_prior",
    "gaussian_log_density",
    "mixture_log_density",
    "inversion_scores",
    "inversion_attack",
    "counterfactual_inputs",
    "counterfactual_residuals",
    "inversion_correct_intervals",
    "inversion_accuracy",
    "inversion_advantage",
    "BayesSimulator",
    "simulator_accuracy_gaussian",
    "alternative_advantage_gaussian",
    "label_likelihood_scores",
    "audit_classifier_attribute",
    "audit_classifier_attributes",
    "classifier_attribute_scores",
    "infer_attribute_classifier",
    "NO_ANSWER",
    "membership_from_attribute",
    "acceptance_matrix",
    "residual_threshold_acceptance",
    "uniform_reduction",
    "multi_query_reduction",
    "theorem7_advantage",
    "regression_membership_oracle",
    "classifier_membership_oracle",
    "correct_guesses",
    "difference_interval",
    "attribute_advantage",
    "alternative_advantage",
    "summarize_splits",
    "Records",
    "run_exp_a",
    "regression_inversion_split",
    "audit_regression_attribute",
    "AttributeAdvantage",
    "AlternativeAdvantage",
    "SplitSummary",
    "AttackSummary",
    "AttributeAudit",
    "ExpAResult",
]
