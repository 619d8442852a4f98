"""This process's memory: peak and current resident set size, in MB.

The peak is the kernel's high-water mark of the process's own address space (``VmHWM`` in
``/proc/self/status``). ``getrusage``'s ``ru_maxrss`` is not used where ``/proc`` exists: Linux carries it
over ``fork`` + ``exec``, so a process started by a large parent (a notebook, a test runner) would report
the parent's peak as its own (the measured case is in benchmarks/README.md).
"""

from __future__ import annotations

import resource
import sys

__all__ = ["peak_rss_mb", "rss_now_mb"]


def _status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _maxrss_mb() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 2**20 if sys.platform == "darwin" else r / 1024.0  # bytes on macOS, kB elsewhere


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    v = _status_mb("VmHWM")
    return _maxrss_mb() if v is None else v


def rss_now_mb() -> float:
    """Current resident memory of this process (MB)."""
    v = _status_mb("VmRSS")
    return _maxrss_mb() if v is None else v
