"""Metrics on plain arrays: ROC, AUC, TPR at fixed FPR, advantage, intervals, power floors, empirical epsilon."""

from . import _intervals, _membership, _summary
from ._epsilon import EpsilonBound, empirical_epsilon
from ._intervals import *  # noqa: F403
from ._membership import *  # noqa: F403
from ._summary import *  # noqa: F403

# each module's ``__all__``; of _epsilon, the names imported above
__all__ = [*_membership.__all__, *_intervals.__all__, "empirical_epsilon", "EpsilonBound", *_summary.__all__]
