"""Issue 65: the table of docs/long-lr-setup.md from the stored long-dtp-lr-setup run
(docs/reproduction/long-dtp-lr-setup.json): one line per setting, every Table 2 LR-Adult number as the mean over seeds
with its 95% t-interval and the page's status (✓ match, ✗ differs, ? inconclusive: too noisy), and how many of the
eight numbers with a paper value match. Reads the JSON only.

    python benchmarks/long_lr_setup_table.py > /tmp/table.md
"""

import json
import re
from pathlib import Path

import numpy as np
from scipy import stats

STORED = Path(__file__).resolve().parents[1] / "docs" / "reproduction" / "long-dtp-lr-setup.json"
COLUMNS = [("train", "train accuracy"), ("test", "test accuracy"), ("attack acc", "distance-attack accuracy"),
           ("precision", "distance-attack precision"), ("recall", "distance-attack recall"),
           ("F1", "distance-attack f1"), ("avg PDTP", "avg PDTP"),
           ("r", "Pearson r (avg PDTP vs per-target accuracy)"), ("best target", "max per-target accuracy"),
           ("targets PDTP > 1", "targets with avg PDTP > 1"), ("rounds", "LogitBoost rounds of a target model"),
           ("leaves", "leaves of a target model")]
MARK = {"match": " ✓", "differs": " ✗", "inconclusive: too noisy": " ?"}


def interval(values):
    v = np.asarray(values, float)
    h = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return v.mean(), v.mean() - h, v.mean() + h


def main():
    rows = json.loads(STORED.read_text())["rows"]
    settings, by = [], {}
    for r in rows:
        m = re.match(r"^LR-Adult as ([^:]+): (.*)$", r["quantity"])
        if m is None:
            continue
        if m.group(1) not in by:
            settings.append(m.group(1))
        by.setdefault(m.group(1), {})[m.group(2)] = r
    paper = {q: r["paper"] for s in settings for q, r in by[s].items() if r["paper"] is not None}
    out = ["| setting | " + " | ".join(c for c, _ in COLUMNS) + " | numbers within the paper's allowance |",
           "|---" * (len(COLUMNS) + 2) + "|",
           "| paper (Table 2, LR-Adult) | " + " | ".join(f"{paper[q]:.4g}" if q in paper else "—" for _, q in COLUMNS)
           + " | |"]
    for s in settings:
        cells, n_match, n_paper = [], 0, 0
        for _, q in COLUMNS:
            r = by[s].get(q)
            if r is None:
                cells.append("")
                continue
            m, lo, hi = interval(r["values"])
            cells.append(f"{m:.3g} [{lo:.3g}, {hi:.3g}]{MARK.get(r['status'], '')}")
            if r["paper"] is not None:
                n_paper += 1
                n_match += r["status"] == "match"
        out.append(f"| {s} | " + " | ".join(cells) + f" | {n_match} of {n_paper} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
