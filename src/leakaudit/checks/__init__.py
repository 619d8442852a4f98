"""Shared check suites: contracts every learner (and, later, every attack) must meet.

Use them on your own implementations::

    from leakaudit.checks import check_learner
    check_learner(MyLearner())          # AssertionError listing every broken contract

``tests/test_common.py`` runs them over every learner leakaudit ships.
"""

from ._learner import (
    LEARNER_CHECKS,
    check_learner,
    check_learner_bad_input_raises,
    check_learner_capabilities,
    check_learner_chunking_invariant,
    check_learner_clone_roundtrip,
    check_learner_fit_many_equals_fit,
    check_learner_same_seed_same_model,
    check_learner_sparse_input,
)

__all__ = [
    "LEARNER_CHECKS",
    "check_learner",
    "check_learner_fit_many_equals_fit",
    "check_learner_same_seed_same_model",
    "check_learner_bad_input_raises",
    "check_learner_clone_roundtrip",
    "check_learner_chunking_invariant",
    "check_learner_sparse_input",
    "check_learner_capabilities",
]
