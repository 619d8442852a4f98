"""Membership inference attacks (Yeom et al., Long et al., Shokri et al., LiRA, RMIA).

Every attack takes plain arrays (or a learner plus data for shadow/reference
models) and returns per-record scores (higher means member) and decisions.
"""

from .binning import bin_index, bin_probabilities

__all__ = ["bin_probabilities", "bin_index"]
