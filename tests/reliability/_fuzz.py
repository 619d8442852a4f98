"""Shared pieces of the fuzz suite: budgets, a case counter, and the "valid or our error" rule.

Every fuzz test runs a property through :func:`run_fuzz` twice over: with the
small default budget in the default suite, and with a seeded budget of
thousands of cases behind ``@pytest.mark.slow`` (``budget="long"``). Each
executed case is counted; ``conftest.py`` writes the counts to
``test-artifacts/fuzz-counts.json`` at the end of the session.
"""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from leakaudit.exceptions import LeakauditError

SEED = int(os.environ.get("LEAKAUDIT_TEST_SEED", "42"))
BUDGETS = {
    "default": int(os.environ.get("LEAKAUDIT_FUZZ_EXAMPLES", "20")),
    "long": int(os.environ.get("LEAKAUDIT_FUZZ_LONG_EXAMPLES", "2000")),
}
COUNTS: Counter = Counter()
#: per fuzz test, how its cases ended (e.g. accepted / refused), printed at the end of the session
OUTCOMES: dict = {}

# Parametrize a fuzz test over this: the long run is slow-marked.
BUDGET_PARAMS = pytest.mark.parametrize(
    "budget", ["default", pytest.param("long", marks=pytest.mark.slow)]
)


def run_fuzz(name: str, strategy, prop, budget: str, *, max_examples: int | None = None) -> None:
    """Run ``prop(example)`` on examples of ``strategy`` (seeded), counting each case under ``name``."""
    n = BUDGETS[budget] if max_examples is None else max_examples
    if budget == "long":
        n = max(n, BUDGETS["long"] if max_examples is None else max_examples)
    key = f"{name}[{budget}]"

    # The default suite does not shrink a failing case (shrinking can take many minutes of CI time);
    # the seeded long run does.
    phases = tuple(Phase) if budget == "long" else (Phase.explicit, Phase.reuse, Phase.generate)

    @seed(SEED)
    @settings(max_examples=n, deadline=None, database=None, derandomize=False, phases=phases,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def inner(example):
        COUNTS[key] += 1
        prop(example)

    inner()


def valid_or_clear_error(fn, *args, names=(), **kwargs):
    """Call ``fn``; return its result, or None when it raised a :class:`LeakauditError`.

    The error's message must be one non-empty line and, when ``names`` is given,
    name one of those arguments. Any other exception type propagates (the test fails).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except LeakauditError as exc:
            msg = str(exc)
            assert msg.strip(), f"{type(exc).__name__} with an empty message"
            if names:
                assert any(re.search(rf"\b{re.escape(n)}\b", msg) for n in names), (
                    f"message does not name any of {names}: {msg!r}"
                )
            return None


def assert_finite(x, what: str) -> None:
    a = np.asarray(x, dtype=float)
    assert np.isfinite(a).all(), f"{what} holds non-finite values: {a[~np.isfinite(a)][:5]}"
