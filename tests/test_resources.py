"""The process's own peak memory, not its parent's (leakaudit._resources)."""

import subprocess
import sys

import numpy as np
import pytest

from leakaudit._resources import peak_rss_mb, rss_now_mb

CHILD = "from leakaudit._resources import peak_rss_mb; print(peak_rss_mb())"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's /proc")
def test_child_of_a_large_process_reports_its_own_peak():
    big = np.ones(40_000_000)  # 320 MB resident in this (parent) process
    assert peak_rss_mb() >= big.nbytes / 2**20
    # getrusage's ru_maxrss carries the parent's peak over fork + exec: the child would report >= 320 MB
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    child_peak = float(out.stdout.strip())
    assert 1.0 < child_peak < 250.0, child_peak
    del big


def test_current_below_peak():
    assert 0.0 < rss_now_mb() <= peak_rss_mb() + 1.0
