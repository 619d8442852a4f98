"""What an epsilon means for re-identification, attribute inference and reconstruction.

Kulynych, Gomez, Kaissis, Hayes, Balle, Calmon & Raisaro, "Unifying Re-Identification, Attribute Inference, and
Data Reconstruction Risks in Differential Privacy" (NeurIPS 2025, arXiv 2507.06969): under f-DP each of the three
attacks, whose success without the release is at most a baseline rate ``b``, succeeds with probability at most
``1 - f(b)``, one form for all three; for (epsilon, delta)-DP ``f`` is ``f_{eps,delta}``
(:func:`.fdp.tradeoff_eps_delta`, riskcal's ``get_beta_from_adp``). The paper's text was not available where this was
written, so the bound is cited by the authors' code (riskcal's README, "max success probability bounded by TPR at
baseline alpha"; its research/unifying_risk notebook, ``1 - f(baseline)``), not by a theorem number.

An empirical epsilon is a lower bound: no guarantee with a smaller epsilon holds, so the bound at it is the smallest
any (epsilon, delta) claim about the model could give, not a bound on the risk. A claimed epsilon bounds the risk if
the claim holds.

The baselines are parameters (:func:`risk_bounds`); the audit's (:func:`audit_baselines`): re-identification, 1/n for
the target among the n members (n units with a privacy unit: a person is picked, not a row); attribute inference,
the share of the sensitive column's most common value (guessing it; the most guessable of several, whose bound is
the largest; the label's without a sensitive column); reconstruction, the share of the most common whole record
(guessing it without the model).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .fdp import tradeoff_eps_delta

__all__ = ["RISKS", "success_bound", "risk_bounds", "audit_baselines", "text_baselines"]

#: the attacks bounded, each with its words
RISKS = {"reidentification": "re-identification", "attribute_inference": "attribute inference",
         "reconstruction": "reconstruction"}


def success_bound(epsilon: float, delta: float, baseline: float) -> float:
    """The most an attack with success ``baseline`` without the release succeeds with under (epsilon, delta)-DP."""
    # Kulynych et al. 2025's unified bound, success <= 1 - f(b) (its theorem number unseen: see the module's note)
    return float(1.0 - tradeoff_eps_delta(baseline, epsilon, delta))


def _most_common_share(values) -> float:
    """The share of the most common value among ``values`` (missing values one value of their own); 1 when empty."""
    v = pd.Series(np.asarray(values, dtype=object).ravel())
    return float(v.value_counts(dropna=False).iloc[0] / len(v)) if len(v) else 1.0


def audit_baselines(X: np.ndarray, y: np.ndarray | None, *, sensitive: dict[str, np.ndarray] | None = None,
                    n_units: int | None = None) -> dict[str, tuple[float, str]]:
    """The audit's baselines from the members' features ``X`` (shape (n, ...)), labels ``y`` (n,; None: unlabelled
    records, with no attribute to guess unless ``sensitive`` names one), their sensitive columns' values
    (``sensitive``: column -> shape (n,)) and the number of privacy units among them (``n_units``; None: every row
    its own): each risk's rate and its basis."""
    n = len(X)
    rows = np.unique(np.asarray(X).reshape(n, -1), axis=0, return_counts=True)[1] if n else np.ones(1)
    who = f"{n_units:,} units (persons)" if n_units is not None else f"{n:,} members"
    shares = {c: _most_common_share(v) for c, v in (sensitive or {}).items()}
    col = max(shares, key=shares.get) if shares else None
    attribute = ((shares[col], f"guessing the most common value of the sensitive column {col!r}") if col is not None
                 else (_most_common_share(y), "guessing the label's most common value") if y is not None else None)
    out = {"reidentification": (1.0 / max(n_units or n, 1), f"picking the target among the {who}"),
           "attribute_inference": attribute,
           "reconstruction": (float(rows.max() / max(n, 1)), "guessing the most common whole record")}
    return {k: v for k, v in out.items() if v is not None}


def text_baselines(texts) -> dict[str, tuple[float, str]]:
    """A language-model audit's baselines from its member texts: re-identification 1/n, reconstruction the share of
    the most common text (attribute inference has no attribute to guess there)."""
    n = len(texts)
    return {"reidentification": (1.0 / max(n, 1), f"picking the target among the {n:,} member texts"),
            "reconstruction": (_most_common_share(texts), "guessing the most common member text")}


def _pct(x: float) -> str:
    """``x`` as a percentage: two decimals, or two significant digits below 0.1% (1/250,000 is 0.0004%, not 0.00%)."""
    return f"{x:.2%}" if x >= 1e-3 or x == 0 else f"{x * 100:.2g}%"


def risk_bounds(epsilon: float, delta: float, baselines: dict[str, tuple[float, str]], *, claimed: bool) -> dict:
    """Each risk's ``baseline``, ``bound``, ``basis`` and ``sentence`` at ``epsilon`` (``claimed``: a declared epsilon,
    else an empirical lower bound), for results.json's ``risk``."""
    out = {}
    for key, (b, basis) in baselines.items():
        x = success_bound(epsilon, delta, b)
        at = f"epsilon {epsilon:.2f} (delta {delta:g})"
        out[key] = {"baseline": b, "bound": x, "basis": basis, "sentence": (
            f"if the claimed {at} holds, {RISKS[key]} succeeds at most {_pct(x)} of the time ({_pct(b)} by {basis})"
            if claimed else
            f"at the shown {at}, the strongest guarantee the model could carry bounds {RISKS[key]} at {_pct(x)} "
            f"success ({_pct(b)} by {basis}): no smaller bound can be claimed")}
    return out
