"""Differential training privacy (Long, Bindschaedler, Gunter 2017): DTP, PDTP, bounds, verdict, reduction.

All values are natural-log ratios (spec long-dtp.md §0). Modules, one idea each:
``pdtp`` (Def 4.4), ``exact`` (Def 4.2 by enumeration), ``stability`` (Thm 6.2,
Props 6.3–6.8, the normalised naive-Bayes bound), ``lipschitz`` (Thm 6.9),
``search`` (a lower estimate of DTP), ``noise_floor`` (Figs 7–8), ``verdict``
(DTP-1), ``significance`` (DTP-1 as a test beyond seed noise and binning), ``reduce`` (§8),
``removal`` (the measured effect of removing named records), ``screening`` (PDTP at scale: the top of a
reference-model ranking and a random sample), ``correlation`` (Tables 1–2).
"""

from . import correlation, exact, lipschitz, noise_floor, removal, results, screening, significance, stability
from .correlation import *  # noqa: F403
from .exact import *  # noqa: F403
from .lipschitz import *  # noqa: F403
from .noise_floor import *  # noqa: F403
from .pdtp import SEED_POLICIES, abs_log_ratio, apply_binning, pdtp, pdtp_from_probabilities
from .reduce import reduce_dtp
from .removal import *  # noqa: F403
from .results import *  # noqa: F403
from .screening import *  # noqa: F403
from .search import dtp_search, dtp_search_estimate
from .significance import *  # noqa: F403
from .stability import *  # noqa: F403
from .verdict import dtp1_verdict

# the whole ``__all__`` of the modules imported with ``*``; of the others, the names imported above
__all__ = [
    *significance.__all__, "dtp1_verdict", "reduce_dtp", *removal.__all__, *screening.__all__, "dtp_search",
    "dtp_search_estimate",
    *lipschitz.__all__, *noise_floor.__all__, *correlation.__all__, "pdtp", "pdtp_from_probabilities",
    "abs_log_ratio", "apply_binning", "SEED_POLICIES", *exact.__all__, *stability.__all__, *results.__all__,
]
