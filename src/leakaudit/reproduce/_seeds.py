"""Rows over seeds: every quantity that depends on randomness is reported as the mean over seeds, with each seed's
value and a Student-t interval, and judged against the paper on that interval (never on one chosen seed)."""

from __future__ import annotations

import math
import os

import numpy as np

from .._validation import check_choice
from ._registry import Row

__all__ = ["JOBS_ENV", "N_SEEDS", "interval", "judge_values", "map_jobs", "map_seeds", "merge_seed_rows",
           "paper_rounding", "rows_over_seeds", "seed_row", "seeds_from"]

# Seeds per setting: every figure that depends on randomness is reported over these many seeds with an interval.
N_SEEDS = 5


def seeds_from(random_state: int, n: int = N_SEEDS) -> list[int]:
    """The seeds a reproduction runs: ``random_state``, ``random_state + 1``, ..."""
    return [int(random_state) + k for k in range(n)]


# Environment variable: how many processes run a reproduction's seeds (default 1, in this process)
JOBS_ENV = "LEAKAUDIT_REPRODUCE_JOBS"


def map_jobs(func, calls: list[tuple]) -> list:
    """``[func(*args) for args in calls]``, in up to ``$LEAKAUDIT_REPRODUCE_JOBS`` processes (default 1: here).

    Every call must draw only from its own arguments (seeded), so the values do not depend on the number of
    processes. ``func`` must be a module-level function (it is pickled to the worker processes).
    """
    raw = os.environ.get(JOBS_ENV, "1").strip() or "1"
    try:
        jobs = int(raw)
    except ValueError:
        raise ValueError(f"{JOBS_ENV} must be a whole number of processes; got {raw!r}") from None
    if jobs <= 1 or len(calls) <= 1:
        return [func(*args) for args in calls]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(calls)), mp_context=mp.get_context("spawn")) as ex:
        return list(ex.map(func, *zip(*calls)))


def map_seeds(func, profile: str, seeds: list[int]) -> list:
    """``[func(profile, seed) for seed in seeds]`` through :func:`map_jobs`."""
    return map_jobs(func, [(profile, s) for s in seeds])


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


def judge_values(paper, vals, bound: str | None = None) -> tuple[str, float, float, float]:
    """``(status, mean, low, high)`` of per-seed (or per-split) values against the paper's value.

    The rule, one for every randomised row: ``match`` when the paper's value lies in the 95% Student-t interval of
    our mean, widened only by the paper's own rounding (:func:`paper_rounding`; a degenerate interval, every seed
    alike, is then "within rounding of the mean"); ``differs`` otherwise, or when fewer than 2 seeds have a value;
    ``no-paper-value`` when the paper gives none. When the paper states a bound, ``bound="lower"`` ("above 90%",
    "recall > 0.99") or ``bound="upper"`` ("we did not find any", "never above 0.665"), ``match`` means our mean
    is on the paper's side of it, give or take its rounding: for "none" (an upper bound of 0) every seed must find
    none.
    """
    vals = [float("nan") if v is None else float(v) for v in vals]
    m, lo, hi = interval(vals)
    if paper is None:
        return "no-paper-value", m, lo, hi
    if not np.isfinite(lo):
        return "differs", m, lo, hi
    h = paper_rounding(paper)
    if bound is not None:
        check_choice(bound, name="bound", choices=("lower", "upper"))
        ok = m >= paper - h - 1e-12 if bound == "lower" else m <= paper + h + 1e-12
        return ("match" if ok else "differs"), m, lo, hi
    return ("match" if lo - h - 1e-12 <= paper <= hi + h + 1e-12 else "differs"), m, lo, hi


def seed_row(quantity, paper, vals, seeds, tolerance=None, note="", *, bound: str | None = None):
    """One row over seeds: ours is the mean; the status is :func:`judge_values` (never one chosen seed).

    ``tolerance`` is the allowance stated for this kind of quantity (an accuracy, an average PDTP): it does not
    decide the status; when the paper's value lies outside our interval but within ``tolerance`` of it, the note
    says so. The row's ``tolerance`` field holds the paper's rounding, the only widening the rule applies.
    ``bound``: "lower" or "upper" when the paper's value is a bound rather than a value (:func:`judge_values`).
    """
    vals = [float("nan") if v is None else float(v) for v in vals]
    status, m, lo, hi = judge_values(paper, vals, bound)
    per = ", ".join(f"{v:.4g}" for v in vals)
    n_fin = int(np.sum(np.isfinite(vals)))
    over = "" if n_fin == len(vals) else f" of the {n_fin} seeds with a value"
    text = f"seeds {seeds[0]}-{seeds[-1]}: {per}; mean{over} {m:.4g}, 95% t-interval [{lo:.4g}, {hi:.4g}]"
    if bound is not None and paper is not None:
        text += (f"; the paper's value is {'a lower' if bound == 'lower' else 'an upper'} bound: a match needs our "
                 f"mean at {'least' if bound == 'lower' else 'most'} {paper:g}")
    elif status == "differs" and np.isfinite(lo):
        gap = lo - paper if paper < lo else paper - hi
        side = "below" if paper < lo else "above"
        text += f"; the paper's value is {gap:.3g} {side} the interval"
        if tolerance is not None and gap <= tolerance + 1e-12:
            text += f" (within the {tolerance:.3g} stated for this kind of quantity)"
    rounding = None if paper is None else paper_rounding(paper)
    return Row(quantity, None if paper is None else float(paper), m, rounding, status,
               f"{note}; {text}" if note else text, values=tuple(vals), seeds=tuple(int(s) for s in seeds),
               bound=bound)


def merge_seed_rows(per_seed: list, seeds: list) -> list:
    """One row per quantity from per-seed row lists (same quantities in the same order): ours is the mean over
    seeds, the note keeps the first seed's note and adds every seed's value and the interval. A row whose value is
    None in every seed (a note-only row) keeps the first seed's row."""
    out = []
    for rs in zip(*per_seed, strict=True):
        r0 = rs[0]
        if len({r.quantity for r in rs}) != 1:
            raise ValueError(f"per-seed rows disagree: {sorted({r.quantity for r in rs})}")
        if all(r.ours is None for r in rs):
            out.append(r0)
            continue
        out.append(seed_row(r0.quantity, r0.paper, [r.ours for r in rs], seeds, r0.tolerance, r0.note,
                            bound=r0.bound))
    return out


def rows_over_seeds(func, profile: str, random_state: int) -> list:
    """A reproduction's rows over :data:`N_SEEDS` seeds: ``func(profile, seed)`` per seed (:func:`map_seeds`),
    merged into one row per quantity (:func:`merge_seed_rows`)."""
    seeds = seeds_from(random_state)
    return merge_seed_rows(map_seeds(func, profile, seeds), seeds)
