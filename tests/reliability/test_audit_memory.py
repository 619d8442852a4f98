"""Peak memory of a thorough-profile audit stays within a bound derived from measurements (issue #11).

benchmarks/bench_audit_memory.py measured the peak resident memory of thorough-profile audits (256
reference models) of N Adult records; its results are in benchmarks/results/audit_memory.json. This
test runs the same benchmark at a small N in a fresh process and checks

* the peak against a bound from those measurements: the straight line through the measured
  (N, peak MB) points, evaluated at the test's N, plus 25% (a regression that, say, kept every
  reference model's outputs twice, or grew memory with K x N per attack, breaks it);
* that results.json reports ``resources.peak_memory_mb`` and that it agrees with the process's
  own peak RSS (the audit measures itself, it does not print a stale or made-up number), and
  that report.html shows that number.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_audit_memory.py"
N_TEST = 1000
MARGIN = 1.25
#: (N records, peak RSS MB) measured by benchmarks/bench_audit_memory.py on 2026-11-22 ~04:45 UTC, with the
#: shadow-model attack in the audit and its training rows capped at 256,000 (benchmarks/results/audit_memory.json):
#: thorough profile, 256 reference models, PDTP on 10 records. (Before the shadow attack: 711.5 and 1,620.8 MB.)
MEASURED = ((5000, 1063.0), (45000, 1657.0))


def _bound_mb(n: int) -> float:
    """The straight line through the measured points at ``n``, plus 25%."""
    (n0, p0), (n1, p1) = MEASURED
    return MARGIN * (p0 + (p1 - p0) / (n1 - n0) * (n - n0))


@pytest.mark.slow
def test_thorough_audit_peak_memory_within_measured_bound():
    proc = subprocess.run([sys.executable, str(BENCH), "--one", str(N_TEST), "--pdtp-records", "2"],
                          capture_output=True, text=True, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["n_reference_models"] == 256 and r["reference_models_trained"] == 256
    bound = _bound_mb(N_TEST)
    print(f"N={N_TEST}: peak {r['peak_rss_mb']:.0f} MB, bound {bound:.0f} MB; stages {r['stages']}")
    assert r["peak_rss_mb"] < bound
    # The audit's own report: measured in the same process just before results.json was written.
    reported = r["results_json_peak_memory_mb"]
    assert reported is not None and 0.8 * r["peak_rss_mb"] <= reported <= r["peak_rss_mb"] + 1.0
    assert r["report_html_shows_peak_memory"], "report.html does not show resources.peak_memory_mb"
