"""Writes the number of fuzz cases each test ran to test-artifacts/fuzz-counts.json."""

import json
import os
from pathlib import Path


def pytest_sessionfinish(session, exitstatus):
    from ._fuzz import COUNTS, SEED

    if not COUNTS:
        return
    out = Path(os.environ.get("LEAKAUDIT_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "fuzz-counts.json"
    data = {"seed": SEED, "total": sum(COUNTS.values()), "by_test": dict(sorted(COUNTS.items()))}
    path.write_text(json.dumps(data, indent=2) + "\n")
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"fuzz: {data['total']} cases run (seed {SEED}); counts in {path}")
