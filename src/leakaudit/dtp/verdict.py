"""The DTP-1 verdict (Long et al. §5, §10): "if a classifier has DTP > 1, do not publish it".

A rule of thumb, not a guarantee: the sentence says which quantity was measured
(PDTP is a lower bound on DTP; a stability or Lipschitz bound is an upper bound;
a search is a lower estimate) and what the data owner can do next.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_array, check_choice, check_integers, check_scalar
from ..exceptions import InvalidInputError
from .results import Verdict

__all__ = ["dtp1_verdict", "KINDS"]

KINDS = ("PDTP", "DTP (exact)", "DTP upper bound", "DTP estimate")

_WHAT = {
    "PDTP": "PDTP, which only looks at direct queries and is a lower bound on DTP",
    "DTP (exact)": "exact DTP, computed over every possible query",
    "DTP upper bound": "an upper bound on DTP from training stability or Lipschitz continuity",
    "DTP estimate": "a search-based estimate of DTP, which is a lower bound on the true value",
}


def dtp1_verdict(values: Any, *, kind: str = "PDTP", threshold: float = 1.0, records: Any = None,
                 max_listed: int = 20) -> Verdict:
    """Apply the DTP-1 hypothesis to per-record values.

    Parameters
    ----------
    values : array-like of shape (n_records,)
        Per-record PDTP, DTP, or a bound on DTP (natural log).
    kind : {"PDTP", "DTP (exact)", "DTP upper bound", "DTP estimate"}
        What ``values`` are; it changes what the verdict may claim.
    threshold : float, default=1.0
        The DTP-1 threshold.
    records : array-like of int, optional
        Record identifiers (default 0..n-1).
    max_listed : int
        How many high-risk records the sentence names.

    Returns
    -------
    Verdict
        ``publish`` is False when some value exceeds the threshold. When all
        values are below it but ``kind`` is "PDTP" or "DTP estimate" (lower
        bounds), the sentence says that indirect queries were not covered.
    """
    v = check_array(values, name="values", ndim=1, allow_nan=True)
    check_choice(kind, name="kind", choices=KINDS)
    check_scalar(threshold, name="threshold", min_val=0.0)
    recs = np.arange(v.size) if records is None else check_integers(records, name="records")
    if recs.size != v.size:
        raise InvalidInputError(f"records has {recs.size} entries for {v.size} values")
    if np.isnan(v).all():
        raise InvalidInputError("values are all NaN; nothing to judge")
    i = int(np.nanargmax(v))
    above = np.flatnonzero(v > threshold)
    order = above[np.argsort(-v[above], kind="stable")]
    mx = float(v[i])
    publish = bool(above.size == 0)
    what = _WHAT[kind]
    if publish:
        sentence = (
            f"No record exceeds the DTP-{threshold:g} threshold (largest {kind} {mx:.3f}, record {int(recs[i])}), "
            f"measured as {what}."
        )
        if kind in ("PDTP", "DTP estimate"):
            sentence += (
                " This supports publishing, but it does not cover indirect queries: confirm with an exact DTP or "
                "an upper bound where the model class allows one, and remember that DTP-1 is a rule of thumb."
            )
        else:
            sentence += " Under the DTP-1 rule of thumb the model can be published."
    else:
        listed = ", ".join(f"{int(recs[j])} ({v[j]:.2f})" for j in order[:max_listed])
        more = f" and {order.size - max_listed} more" if order.size > max_listed else ""
        share = order.size / v.size
        sentence = (
            f"Do not publish this model as it is: {order.size} of {v.size} records ({share:.1%}) have {kind} above "
            f"{threshold:g} (largest {mx:.3f}, record {int(recs[i])}), measured as {what}. Records: {listed}{more}. "
        )
        if share <= 0.01:
            sentence += (
                "Only a few records are at risk: remove them and retrain (leakaudit dtp reduce), checking that the "
                "maximum falls below the threshold without a rebound, or protect those records otherwise."
            )
        else:
            sentence += (
                "Too many records are at risk to remove: regularise or smooth the model more, coarsen its outputs, "
                "or train it with differential privacy, then measure again."
            )
        if kind == "DTP upper bound":
            sentence += " (An upper bound above the threshold does not prove a leak; measure PDTP/DTP to confirm.)"
    return Verdict(
        kind=kind, threshold=threshold, max_value=mx, argmax_record=int(recs[i]), n_records=int(v.size),
        records_above=recs[order], values_above=v[order], publish=publish, sentence=sentence,
    )
