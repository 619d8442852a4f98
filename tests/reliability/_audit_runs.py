"""What the audit-run reliability tests share."""

from __future__ import annotations

import json

#: a small demo audit: a few seconds
CONFIG = 'profile = "smoke"\nn_members = 150\nn_nonmembers = 150\nepochs = 3\nseed = 5\n'
#: results.json keys that differ between identical runs
VOLATILE = ("created", "timings", "resources", "command")


def comparable(path):
    """results.json without the keys that differ between identical runs (and the cache folder)."""
    d = json.loads(path.read_text())
    for k in VOLATILE:
        d.pop(k, None)
    d["config"].pop("cache_dir", None)
    return d
