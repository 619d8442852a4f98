"""Long et al.'s frequency-based targeted attack (§5.3; spec long-dtp.md §3.3).

With the same in/out shadow models as the distance attack, for each class i
count ``o_i^in`` (``o_i^out``): the in (out) models whose binned ``p(y_i|x(t))``
falls in the same bin as the target's ``q_i``. The estimated odds are::

    Pr[t ∈ T | c(x) = q] / Pr[t ∉ T | c(x) = q] = Π_i o_i^in / o_i^out

and H1 ("member") is accepted iff the odds exceed 1. The paper does not say how
zero counts are handled; ``zero_counts`` chooses:

* ``"laplace"`` (default): ``Π_i (o_i^in + α)/(o_i^out + α)``, α = ``alpha``.
* ``"skip"``: the product over classes with ``o_i^in + o_i^out > 0`` only
  (classes where some count is zero but not both still give 0 or ∞).
* ``"ieee"``: raw IEEE arithmetic: x/0 = ∞ (H1), 0/0 = NaN (H0).

The score is the log odds (±∞ mapped to ±(largest finite |score| + 1), NaN to
0 so it ranks as "no evidence"). When the in and out model counts differ the
counts are compared as frequencies (divided by the number of models of each
kind); with Long's 5 + 5 models this is the paper's rule exactly.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError
from ._base import Attack, AttackInputs, AttackResult, check_probs, check_reference_inputs
from .binning import bin_index

__all__ = ["FrequencyAttack", "bin_match_counts"]


def bin_match_counts(probs, ref_probs, ref_in, *, bin_width: float = 0.01):
    """``o^in`` and ``o^out``: shadow models whose binned output shares the target's bin, per class.

    Returns
    -------
    o_in, o_out : ndarray of int, shape (n, C)
    """
    qb = bin_index(probs, bin_width=bin_width)
    rb = bin_index(ref_probs, bin_width=bin_width)
    same = rb == qb[None]
    o_in = (same & ref_in[..., None]).sum(axis=0)
    o_out = (same & ~ref_in[..., None]).sum(axis=0)
    return o_in, o_out


class FrequencyAttack(Attack):
    """Long et al.'s frequency-based attack.

    Parameters
    ----------
    zero_counts : {"laplace", "skip", "ieee"}, default="laplace"
    alpha : float > 0, default=1.0
        Pseudo-count for ``"laplace"``.
    bin_width : float, default=0.01
    """

    name = "frequency"
    needs = ("reference",)

    def __init__(self, *, zero_counts: str = "laplace", alpha: float = 1.0, bin_width: float = 0.01):
        self.zero_counts = zero_counts
        self.alpha = alpha
        self.bin_width = bin_width

    def log_odds(self, o_in, o_out, n_in, n_out) -> np.ndarray:
        """ln Π_i o_i^in / o_i^out under the chosen zero-count convention, shape (n,)."""
        check_choice(self.zero_counts, name="zero_counts", choices=("laplace", "skip", "ieee"))
        o_in = o_in.astype(float)
        o_out = o_out.astype(float)
        scale = np.log(n_out / n_in)[:, None]  # frequencies when the numbers of in/out models differ
        if self.zero_counts == "laplace":
            check_scalar(self.alpha, name="alpha", min_val=0.0, include_min=False)
            return (np.log(o_in + self.alpha) - np.log(o_out + self.alpha) + scale).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.log(o_in) - np.log(o_out) + scale  # log 0 = -inf; -inf - -inf = nan (0/0)
        if self.zero_counts == "skip":
            terms = np.where((o_in + o_out) > 0, terms, 0.0)
        with np.errstate(invalid="ignore"):
            return terms.sum(axis=1)  # +inf + -inf = nan, as the raw product inf * 0 is

    def score(self, probs, ref_probs, ref_in) -> AttackResult:
        """Score records from target outputs (n, C), shadow outputs (K, n, C) and masks (K, n)."""
        p = check_probs(probs)
        rp, rin = check_reference_inputs(ref_probs, ref_in, target=p)
        n_in, n_out = rin.sum(0), (~rin).sum(0)
        if np.any(n_in == 0) or np.any(n_out == 0):
            raise InvalidInputError("every target needs at least one in and one out shadow model")
        o_in, o_out = bin_match_counts(p, rp, rin, bin_width=self.bin_width)
        lo = self.log_odds(o_in, o_out, n_in, n_out)
        decisions = (lo > 0).astype(int)  # NaN compares False: H0
        finite = lo[np.isfinite(lo)]
        big = (np.abs(finite).max() if finite.size else 0.0) + 1.0
        scores = np.where(np.isnan(lo), 0.0, np.clip(lo, -big, big))
        return self.result(scores, decisions, threshold=0.0, n_undefined=int(np.isnan(lo).sum()))

    def run(self, inputs: AttackInputs) -> AttackResult:
        if inputs.reference is None:
            raise InvalidInputError("the frequency attack needs shadow models (inputs.reference)")
        return self.score(inputs.probs, inputs.reference.probs, inputs.reference.in_mask)
