"""The match rule of randomised reproduction rows: the mean over seeds (or splits) with its Student-t interval,
judged against the paper's value within a tolerance (the allowance of the row's kind of quantity, or the paper's own
rounding), or against a bound the paper states.

One implementation, used where rows are built (``_seeds.seed_row``) and where pages are gathered
(``_registry.classify``), so a page always shows the current rule.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice

__all__ = ["BEATS", "INCONCLUSIVE", "STATUSES", "attack_terms", "gap_text", "interval", "judge_values",
           "paper_rounding"]

# the statuses of a row, in the order the page counts them
BEATS = "beats the paper"
INCONCLUSIVE = "inconclusive: too noisy"
STATUSES = ("match", BEATS, INCONCLUSIVE, "differs", "no-paper-value", "not-compared", "reference dropped")


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


def judge_values(paper, vals, bound: str | None = None, precision: float | None = None, *,
                 tolerance: float | None = None, favourable: str | None = None) -> tuple[str, float, float, float]:
    """``(status, mean, low, high)`` of per-seed (or per-split) values against the paper's value.

    The rule, one for every randomised row, with ``T`` the tolerance (``tolerance``, the allowance of the row's kind
    of quantity, or else the reference's own precision: ``precision`` for a value read off a plot or derived from
    printed numbers, else the printed rounding, :func:`paper_rounding`; never less than that precision):

    * ``match``: our mean is within ``T`` of the paper's value **and** our 95% Student-t interval lies inside
      ``[paper - T, paper + T]`` (every seed alike: the interval is the mean);
    * ``beats the paper``: the mean lies more than ``T`` beyond the paper's value in the direction the paper argues
      for (``favourable``: "higher" or "lower", e.g. a higher accuracy of the paper's own attack), and the interval
      leaves the paper's value out;
    * ``differs``: the same in the other direction (or with no ``favourable``), or fewer than 2 seeds have a value;
    * ``inconclusive: too noisy``: otherwise: the interval reaches past the tolerance, or the mean is past it but
      the interval still holds the paper's value, so the seeds tell neither a match nor a difference;
    * ``no-paper-value``: the paper gives none.

    When the paper states a bound, ``bound="lower"`` ("above 90%", "recall > 0.99") or ``bound="upper"`` ("never
    above 0.665"), the tolerance is the reference's precision alone: ``match`` when the whole interval is on the
    paper's side of the bound, ``differs`` when the whole interval is on the other side, ``inconclusive: too noisy``
    in between. "None found" (an upper bound of 0) is a count: every seed must find none, and one that finds any
    contradicts it (``differs``).
    """
    vals = [float("nan") if v is None else float(v) for v in vals]
    m, lo, hi = interval(vals)
    if paper is None:
        return "no-paper-value", m, lo, hi
    if favourable is not None:
        check_choice(favourable, name="favourable", choices=("higher", "lower"))
    if not np.isfinite(lo):
        return "differs", m, lo, hi
    h = (paper_rounding(paper) if precision is None else float(precision)) + 1e-12
    if bound is not None:
        check_choice(bound, name="bound", choices=("lower", "upper"))
        if bound == "upper" and float(paper) == 0.0:
            finite = np.asarray(vals)[np.isfinite(vals)]
            return ("match" if np.all(finite <= h) else "differs"), m, lo, hi
        sign = 1.0 if bound == "lower" else -1.0  # +1: the paper's side is above its value
        near, far = (lo, hi) if bound == "lower" else (hi, lo)
        if sign * (near - paper) >= -h:
            return "match", m, lo, hi
        return ("differs" if sign * (far - paper) < -h else INCONCLUSIVE), m, lo, hi
    if tolerance is not None:
        h = max(h, float(tolerance) + 1e-12)
    if lo >= paper - h and hi <= paper + h:
        return "match", m, lo, hi
    if abs(m - paper) > h and not lo <= paper <= hi:
        beyond = "higher" if m > paper else "lower"
        return (BEATS if favourable == beyond else "differs"), m, lo, hi
    return INCONCLUSIVE, m, lo, hi


def gap_text(paper: float, lo: float, hi: float) -> str:
    """How far ``paper`` lies below or above our interval ``[lo, hi]`` ("; the paper's value is 0.0133 below the
    interval"): the start of a differing row's ``verdict`` (``_registry.classify``)."""
    gap = lo - paper if paper < lo else paper - hi
    return f"; the paper's value is {gap:.3g} {'below' if paper < lo else 'above'} the interval"


def attack_terms(metric: str, paper: dict, ours: dict, attacks: int, rate: float):
    """``(chance of the paper's value, chance of ours, tolerance)`` of a membership attack's ``metric`` ("accuracy",
    "precision", "recall" or "f1"), judged on its advantage over a random guess: ``paper`` maps each metric of the
    paper's row to its value, ``ours`` to our per-seed values (a metric missing from either: its chance is the
    other's), over a protocol of ``attacks`` attacks of which a share ``rate`` attack a member.

    A random guess scores accuracy max(rate, 1 - rate), precision ``rate`` (the positive rate of the attacked set),
    F1 2 rate R / (rate + R) at the same recall R, and any recall (no chance: recall is judged on its value). The
    tolerance is two binomial standard errors of the paper's value over the attacks it is a proportion of: all of
    them (accuracy), the members (recall), the predicted members (precision), the mean of those two (F1).
    """
    members = attacks * rate
    predicted = members * paper["recall"] / paper["precision"] if paper.get("recall") and paper.get("precision") \
        else members
    n = {"accuracy": attacks, "recall": members, "precision": predicted, "f1": (members + predicted) / 2}[metric]
    if metric == "f1":
        recalls = (paper.get("recall", ours.get("recall")), ours.get("recall", paper.get("recall")))
        chance = [2 * rate * np.asarray(r, dtype=float) / (rate + np.asarray(r, dtype=float)) for r in recalls]
    else:
        chance = [{"accuracy": max(rate, 1 - rate), "precision": rate, "recall": 0.0}[metric]] * 2
    p = float(paper[metric])
    return float(chance[0]), chance[1], 2 * math.sqrt(p * (1 - p) / n)
