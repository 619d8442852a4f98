"""Tables pasted into the docs by hand from a benchmark's log are what the committed log gives (fast; no run)."""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_config_pages_tiered_table_is_the_logs(load_benchmark):
    """docs/config.md's tiered-audit table and total are pasted from ``tiered_audit.py --table-only``: they must be
    what the committed log gives, so a rerun that appends rows cannot leave the page behind."""
    ta = load_benchmark("tiered_audit")
    rows = [json.loads(ln) for ln in (ROOT / "benchmarks/results/tiered_audit.jsonl").read_text().splitlines()]
    assert ta.table(rows) in (ROOT / "docs/config.md").read_text()
