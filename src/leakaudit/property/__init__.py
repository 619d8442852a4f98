"""Property inference from poisoning (Chase, Ghosh & Mahloujifar, arXiv 2101.11073).

Modules: ``theory`` (Theorem 9's window, Claim 12), ``predicates`` (record
properties: column values, an added random bit, VADER negative sentiment),
``game`` (the PIWP game, worlds t0/t1, victim training), ``poison``
(Algorithm 1), ``queries`` (Algorithm 2), ``attack`` (Algorithm 3),
``baselines`` (no poison, the theory's averaging distinguisher), ``whitebox`` (Ganju
et al.'s white-box meta-classifiers: neuron sorting, per-layer DeepSets), ``estimate`` (estimating t), ``datasets`` (Census-Income KDD,
SpamAssassin), ``synthetic``, ``results``.
"""

from .attack import PoisoningPropertyAttack, evaluate_attack, label_vector_shift
from .baselines import no_poison_attack, theory_averaging_guess, theory_window_queries
from .estimate import FractionEstimator, evaluate_fraction_estimate
from .game import Poison, PropertyData, logistic_learner, mlp_learner, play_game, sample_world, split_pools
from .poison import choose_poison
from .queries import QuerySet, select_queries
from .results import PropertyAttackResult, PropertyEstimateResult, WhiteBoxResult
from .synthetic import make_property_data
from .theory import CertaintyWindow, max_poison_rate, theorem9_window, window_table
from .whitebox import DeepSetsMetaClassifier, SortedMetaClassifier, whitebox_attack

__all__ = [
    "CertaintyWindow", "DeepSetsMetaClassifier", "FractionEstimator", "Poison", "PoisoningPropertyAttack", "PropertyAttackResult",
    "PropertyData", "PropertyEstimateResult", "QuerySet", "SortedMetaClassifier", "WhiteBoxResult", "choose_poison", "evaluate_attack",
    "evaluate_fraction_estimate", "label_vector_shift", "logistic_learner", "make_property_data", "max_poison_rate",
    "mlp_learner", "no_poison_attack", "play_game", "sample_world", "select_queries", "split_pools",
    "theorem9_window", "theory_averaging_guess", "theory_window_queries", "whitebox_attack", "window_table",
]
