"""Writes the number of fuzz cases each test ran to test-artifacts/fuzz-counts.json.

Counts of earlier sessions are kept for tests this session did not run, so a
default run followed by ``-m slow`` leaves both the default and the long counts.
"""

import json
import os
from pathlib import Path


def pytest_sessionfinish(session, exitstatus):
    from ._fuzz import COUNTS, OUTCOMES, SEED

    if not COUNTS:
        return
    out = Path(os.environ.get("LEAKAUDIT_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "fuzz-counts.json"
    try:
        old = json.loads(path.read_text()).get("by_test", {})
    except (OSError, ValueError, AttributeError):
        old = {}
    by_test = {**old, **COUNTS}
    totals = {b: sum(v for k, v in by_test.items() if k.endswith(f"[{b}]")) for b in ("default", "long")}
    data = {"seed": SEED, "this_session": sum(COUNTS.values()), "total_default": totals["default"],
            "total_long": totals["long"], "by_test": dict(sorted(by_test.items()))}
    path.write_text(json.dumps(data, indent=2) + "\n")
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"fuzz: {data['this_session']} cases run this session (seed {SEED}); counts in {path}")
        for name, outcome in sorted(OUTCOMES.items()):
            tr.write_line(f"fuzz: {name}: {COUNTS.get(name, 0)} cases, "
                          + ", ".join(f"{v} {k}" for k, v in sorted(outcome.items())))
