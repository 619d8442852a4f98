"""Attribute inference and model inversion (Yeom et al., CSF 2018, Sections 4-5).

* :mod:`~leakaudit.attribute.inversion`: Adversary 4, Theorem 5, the general interval procedure.
* :mod:`~leakaudit.attribute.bayes_simulator`: Definition 6's Bayes-optimal simulator (no-model baseline).
* :mod:`~leakaudit.attribute.classifier`: sensitive-column inference from a classifier's probabilities.
* :mod:`~leakaudit.attribute.reductions`: Adversaries 5, 6 and 7 (Theorems 6 and 7).
* :mod:`~leakaudit.attribute.experiment`: advantages with intervals, and the experiment Exp^A.

The package re-exports each module's ``__all__``.
"""

from . import bayes_simulator, classifier, experiment, inversion, reductions, results
from .bayes_simulator import *  # noqa: F403
from .classifier import *  # noqa: F403
from .experiment import *  # noqa: F403
from .inversion import *  # noqa: F403
from .reductions import *  # noqa: F403
from .results import *  # noqa: F403

__all__ = [*inversion.__all__, *bayes_simulator.__all__, *classifier.__all__, *reductions.__all__,
           *experiment.__all__, *results.__all__]
