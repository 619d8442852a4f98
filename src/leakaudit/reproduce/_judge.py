"""The match rule of randomised reproduction rows: the mean over seeds (or splits) with its Student-t interval,
judged against the paper's value, widened only by the paper's own rounding, or against a bound the paper states.

One implementation, used where rows are built (``_seeds.seed_row``) and where pages are gathered
(``_registry.rejudge``), so a page always shows the current rule.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice

__all__ = ["gap_text", "interval", "judge_values", "paper_rounding"]


def interval(vals, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t interval of the finite per-seed values (NaN bounds for fewer than 2 of them)."""
    from scipy import stats

    v = np.asarray(vals, dtype=float)
    v = v[np.isfinite(v)]  # a seed without a value (NaN: nothing to measure in that draw) is left out
    if len(v) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(v.mean())
    if len(v) < 2:
        return m, float("nan"), float("nan")
    h = float(stats.t.ppf(0.5 + confidence / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return m, m - h, m + h


def paper_rounding(paper: float) -> float:
    """Half a unit in the last decimal place of ``paper`` as written (0.8555 -> 5e-5, 0.99 -> 0.005, 1.0 -> 0.05).

    Paper values are typed into the reproductions with the digits the paper prints, so this is the rounding the
    printed number carries; a value we compute (a theorem's formula) carries about none. Typing drops trailing
    zeros (a printed 1.00 or 90% becomes 1.0 or 0.9), and the papers print rates and accuracies to at least two
    decimals or whole percents, so the rounding is capped at 0.005; a zero shows no digits at all and is read as
    printed to three decimals (5e-4), the precision of the papers' and the spec's tables.
    """
    from decimal import Decimal

    if float(paper) == 0.0:
        return 5e-4
    exponent = Decimal(repr(float(paper))).as_tuple().exponent
    return min(0.5 * 10.0 ** int(exponent), 0.005)


def judge_values(paper, vals, bound: str | None = None,
                 precision: float | None = None) -> tuple[str, float, float, float]:
    """``(status, mean, low, high)`` of per-seed (or per-split) values against the paper's value.

    The rule, one for every randomised row: ``match`` when the paper's value lies in the 95% Student-t interval of
    our mean, widened only by the paper's own rounding (:func:`paper_rounding`; a degenerate interval, every seed
    alike, is then "within rounding of the mean"); ``differs`` otherwise, or when fewer than 2 seeds have a value;
    ``no-paper-value`` when the paper gives none. When the paper states a bound, ``bound="lower"`` ("above 90%",
    "recall > 0.99") or ``bound="upper"`` ("we did not find any", "never above 0.665"), ``match`` means our mean
    is on the paper's side of it, give or take its rounding: for "none" (an upper bound of 0) every seed must find
    none. ``precision`` replaces the printed rounding for a reference that is not a printed number: a value read
    off a plot (half the step it was read to) or one derived from printed numbers (their rounding propagated).
    """
    vals = [float("nan") if v is None else float(v) for v in vals]
    m, lo, hi = interval(vals)
    if paper is None:
        return "no-paper-value", m, lo, hi
    if not np.isfinite(lo):
        return "differs", m, lo, hi
    h = paper_rounding(paper) if precision is None else float(precision)
    if bound is not None:
        check_choice(bound, name="bound", choices=("lower", "upper"))
        ok = m >= paper - h - 1e-12 if bound == "lower" else m <= paper + h + 1e-12
        return ("match" if ok else "differs"), m, lo, hi
    return ("match" if lo - h - 1e-12 <= paper <= hi + h + 1e-12 else "differs"), m, lo, hi


def gap_text(paper: float, lo: float, hi: float, subject: str = "paper's value") -> str:
    """The sentence ending the note of a randomised row that differs: how far ``paper`` lies below or above our
    interval ``[lo, hi]`` ("; the paper's value is 0.0133 below the interval"). ``_registry.classify`` rewrites it
    with the allowance of the row's kind of quantity."""
    gap = lo - paper if paper < lo else paper - hi
    return f"; the {subject} is {gap:.3g} {'below' if paper < lo else 'above'} the interval"
