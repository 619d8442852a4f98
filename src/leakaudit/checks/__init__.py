"""Shared check suites: contracts every learner (and, later, every attack) must meet.

Use them on your own implementations::

    from leakaudit.checks import check_learner
    check_learner(MyLearner())          # AssertionError listing every broken contract

``tests/test_common.py`` runs them over every learner leakaudit ships.
"""

from . import _learner
from ._learner import *  # noqa: F403

__all__ = list(_learner.__all__)
