"""The work budget: how much computation one model may ask for, counted in elementary steps before it starts.

A model read from a file declares its own sizes (trees, iterations, hidden units); retraining it on the audit's
records costs what those numbers say. The audit estimates that work up front, in elementary steps (one
multiply-add of a network, a tenth of a row's sort and split search at one tree node, one row binned; a tree's fixed
cost counted as :data:`TREE_OVERHEAD` steps), and refuses a model whose one fit, or one prediction over the records, would exceed
the budget. Steps are counted so that scikit-learn runs 1.4 to 2.9 x 10^9 of them per second of one core (its
forest and its MLPClassifier, benchmarks/work_steps.py), so the default, :data:`DEFAULT_WORK_BUDGET` steps, is one
to two hours of one core per fit; the environment variable ``LEAKAUDIT_WORK_BUDGET`` or :func:`using_work_budget`
sets another.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["DEFAULT_WORK_BUDGET", "TREE_OVERHEAD", "parse_work_amount", "work_budget", "using_work_budget",
           "check_work"]

#: steps one model's fit or prediction may take by default
DEFAULT_WORK_BUDGET = 10**13
#: the fixed cost of growing one tree, in steps (scikit-learn's validation, allocation and bookkeeping, whatever its
#: size)
TREE_OVERHEAD = 10**6
_ENV = "LEAKAUDIT_WORK_BUDGET"

_budget: contextvars.ContextVar[int | None] = contextvars.ContextVar("leakaudit_work_budget", default=None)


def parse_work_amount(value: Any, *, name: str = "work_budget") -> int:
    """Steps from an int or a string such as ``"1e13"`` or ``"2e12"``.

    Raises
    ------
    InvalidParameterError
        Naming ``name``, for anything else or an amount below one step.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        steps = int(value)
    elif isinstance(value, (float, str)) and not isinstance(value, bool):
        text = str(value).strip().replace("_", "")
        if not re.fullmatch(r"[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?", text) or not math.isfinite(float(text)):
            raise InvalidParameterError(f"{name} must be a number of steps such as 1e13; got {value!r}")
        steps = int(float(text))
    else:
        raise InvalidParameterError(f"{name} must be a number of steps such as 1e13; got {type(value).__name__}")
    if steps < 1:
        raise InvalidParameterError(f"{name} must be at least one step; got {value!r}")
    return steps


def work_budget() -> int:
    """The budget in force: the innermost :func:`using_work_budget`'s, else ``LEAKAUDIT_WORK_BUDGET``, else
    :data:`DEFAULT_WORK_BUDGET`."""
    b = _budget.get()
    if b is not None:
        return b
    env = os.environ.get(_ENV)
    return DEFAULT_WORK_BUDGET if not env else parse_work_amount(env, name=_ENV)


@contextlib.contextmanager
def using_budget(var: contextvars.ContextVar, budget: Any, parse: Callable[[Any], int],
                 current: Callable[[], int]) -> Iterator[int]:
    """Set the budget ``var`` holds to ``parse(budget)`` (None keeps the one in force) inside a block; yields
    ``current()``, the budget then in force."""
    token = var.set(var.get() if budget is None else parse(budget))
    try:
        yield current()
    finally:
        var.reset(token)


def using_work_budget(budget: Any) -> contextlib.AbstractContextManager[int]:
    """Set the work budget (steps; None keeps the one in force) inside a block."""
    return using_budget(_budget, budget, parse_work_amount, work_budget)


def check_work(steps: float, what: str, *, fix: str) -> float:
    """Refuse, before any of it runs, work that needs at least ``steps`` elementary steps when that is over the
    work budget in force; return ``steps``.

    For what a command's own counts multiply (models to retrain, games to play): ``what`` says what is asked and
    why it takes that many steps (``steps`` a lower bound: each model at least reads its training rows once), and
    ``fix`` what would bring it under the budget.

    Raises
    ------
    InvalidParameterError
        One line naming the estimate, the budget and ``fix``.
    """
    budget = work_budget()
    if steps > budget:
        raise InvalidParameterError(f"{what} would take at least {steps:.2g} steps, over the work budget of "
                                    f"{budget:.2g} steps (LEAKAUDIT_WORK_BUDGET); {fix}")
    return steps
