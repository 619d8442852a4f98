"""Rows over seeds: every quantity that depends on randomness is reported as the mean over seeds, with each seed's
value and a Student-t interval, and judged against the paper on that interval (never on one chosen seed)."""

from __future__ import annotations

import functools
import os

import numpy as np

from ._judge import judge_values, paper_rounding
from ._registry import FIGURE_DATA, Row, register

__all__ = ["FIGURE_DATA", "JOBS_ENV", "N_SEEDS", "figure_data_row", "map_jobs", "map_seeds", "merge_seed_rows",
           "register_per_seed", "rows_over_seeds", "seed_row", "seeds_from"]

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


def seed_row(quantity, paper, vals, seeds, tolerance=None, note="", *, bound: str | None = None,
             precision: float | None = None):
    """One row over seeds: ours is the mean; the status is :func:`judge_values` (never one chosen seed).

    ``tolerance`` is not used: the allowance of a row's kind of quantity comes from its reproduction's
    ``references`` table (``_kinds.py``), and ``_registry.classify`` adds it to the note when the run is written;
    the parameter stays so that positional calls keep their meaning. The row's ``tolerance`` field holds the
    paper's rounding, the only widening the rule applies.
    ``bound``: "lower" or "upper" when the paper's value is a bound rather than a value (:func:`judge_values`).
    ``precision``: the precision of a reference that is not a printed number (read off a plot, or derived from
    printed numbers), used instead of the printed rounding and kept in the row's ``tolerance`` field.
    """
    vals = [float("nan") if v is None else float(v) for v in vals]
    status, m, lo, hi = judge_values(paper, vals, bound, precision)
    per = ", ".join(f"{v:.4g}" for v in vals)
    n_fin = int(np.sum(np.isfinite(vals)))
    over = "" if n_fin == len(vals) else f" of the {n_fin} seeds with a value"
    text = f"seeds {seeds[0]}-{seeds[-1]}: {per}; mean{over} {m:.4g}, 95% t-interval [{lo:.4g}, {hi:.4g}]"
    if bound is not None and paper is not None:
        text += (f"; the paper's value is {'a lower' if bound == 'lower' else 'an upper'} bound: a match needs our "
                 f"whole interval at {'least' if bound == 'lower' else 'most'} {paper:g}")
    rounding = None if paper is None else (paper_rounding(paper) if precision is None else float(precision))
    return Row(quantity, None if paper is None else float(paper), m, rounding, status,
               f"{note}; {text}" if note else text, values=tuple(vals), seeds=tuple(int(s) for s in seeds),
               bound=bound, precision=None if precision is None else float(precision))


def figure_data_row(quantity: str, x, y) -> Row:
    """A row holding the points (x[i], y[i]) of a scatter figure (one seed's, to 4 significant digits) in its
    ``points``, e.g. one per target: ``quantity`` must end with :data:`FIGURE_DATA`; :func:`merge_seed_rows` joins the
    seeds' points."""
    if not quantity.endswith(FIGURE_DATA):
        raise ValueError(f"a figure-data row's quantity ends with {FIGURE_DATA!r}; got {quantity!r}")
    pts = tuple((float(f"{float(a):.4g}"), float(f"{float(b):.4g}")) for a, b in zip(x, y, strict=True))
    return Row(quantity, None, None, None, "no-paper-value", "", points=((None, pts),))


def merge_seed_rows(per_seed: list, seeds: list) -> list:
    """One row per quantity from per-seed row lists (same quantities in the same order): ours is the mean over
    seeds, the note keeps the first seed's note and adds every seed's value and the interval. A row whose value is
    None in every seed (a note-only row) keeps the first seed's row; a figure-data row (:data:`FIGURE_DATA`) joins
    every seed's points, each under its seed."""
    out = []
    for rs in zip(*per_seed, strict=True):
        r0 = rs[0]
        if len({r.quantity for r in rs}) != 1:
            raise ValueError(f"per-seed rows disagree: {sorted({r.quantity for r in rs})}")
        if r0.quantity.endswith(FIGURE_DATA):
            out.append(Row(r0.quantity, None, None, None, "no-paper-value", "",
                           points=tuple((int(s), r.points[0][1]) for s, r in zip(seeds, rs, strict=True))))
            continue
        if all(r.ours is None for r in rs):
            out.append(r0)
            continue
        out.append(seed_row(r0.quantity, r0.paper, [r.ours for r in rs], seeds, r0.tolerance, r0.note,
                            bound=r0.bound, precision=r0.precision))
    return out


def rows_over_seeds(func, profile: str, random_state: int) -> list:
    """A reproduction's rows over :data:`N_SEEDS` seeds: ``func(profile, seed)`` per seed (:func:`map_seeds`),
    merged into one row per quantity (:func:`merge_seed_rows`)."""
    seeds = seeds_from(random_state)
    return merge_seed_rows(map_seeds(func, profile, seeds), seeds)


def register_per_seed(name: str, **meta):
    """Decorator registering ``func(profile, seed) -> list[Row]``, one seed's rows, as the reproduction ``name`` whose
    rows are :func:`rows_over_seeds` of it (``meta``: ``_registry.register``'s other arguments)."""
    def deco(func):
        register(name, **meta)(functools.partial(rows_over_seeds, func))
        return func

    return deco
