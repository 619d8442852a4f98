"""What the remedy step (``audit/steps/remedy.py``) measures on the calibration's leaky boosted models.

The leaky XGBoost, LightGBM and CatBoost cases of ``calibration.py --set boosted`` (500 Adult members with a fifth of
their labels flipped, learnt by deep trees; 500 non-members), audited at ``standard`` over seeds 200-204: for each
library and setting, the loss attack's AUC before and after, the change with its interval, and the accuracy cost, as
results.json's ``remedy`` section holds them, with the audit's CPU seconds.

Writes ``benchmarks/results/boosted_remedy.json`` and prints a Markdown table (docs/verdict.md, "What a boosted-tree
recipe's own settings would change").

Usage:
    .venv/bin/python benchmarks/boosted_remedy.py [--seeds 5] [--families xgboost,lightgbm,catboost]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _calibration_cases import BOOSTED, Case, run_case  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--families", default=",".join(BOOSTED))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families.split(","):
            for s in range(args.seeds):
                case = Case("positive", family, "deep_label_noise", "adult", 200 + s, 500, 500, label_noise=0.2,
                            distinct=True, profile="standard")
                row = run_case(case, Path(tmp) / case.id)
                res = json.loads((Path(tmp) / case.id / "audit" / "results.json").read_text())
                rows.append({"family": family, "seed": case.seed, "outcome": row["outcome"],
                             "audit_cpu_seconds": row["audit_cpu_seconds"],
                             "remedy_seconds": (res.get("timings") or {}).get("remedy"), "remedy": res.get("remedy")})
                print(family, case.seed, row["outcome"], row["audit_cpu_seconds"], file=sys.stderr)
    out = HERE / "results" / "boosted_remedy.json"
    out.write_text(json.dumps({"load": os.getloadavg(), "rows": rows}, indent=1))
    print("| library | setting | AUC before | AUC after | change (interval) | accuracy cost, points (interval) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        for s in (r["remedy"] or {}).get("settings", []):
            lo, hi = s["auc_change_interval"]
            clo, chi = s["accuracy_cost_interval"]
            print(f"| {r['family']} s{r['seed']} | {s['parameter']} {s['value']:g} -> {s['tried']:g} | "
                  f"{s['auc_before']:.3f} | {s['auc_after']:.3f} | {s['auc_change']:+.3f} ({lo:+.3f}, {hi:+.3f}) | "
                  f"{100 * s['accuracy_cost']:+.2f} ({100 * clo:+.2f}, {100 * chi:+.2f}) |")


if __name__ == "__main__":
    main()
