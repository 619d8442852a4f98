"""The null gradient_boosting calibration cases at profile standard (LiRA with 64 reference models trained by the
compiled kernel against a scikit-learn target). Run from the checkout: OMP_NUM_THREADS=1 PYTHONPATH=src
.venv/bin/python benchmarks/results/gb-kernel-2026-11-28/null_gradient_boosting_standard.py"""
import sys, json, tempfile
sys.path.insert(0, "benchmarks")
import _calibration_cases as cc
rows = []
for ds in ("adult", "census"):
  for seed in (0, 1):
    case = cc.Case("null", "gradient_boosting", "default", ds, seed, 500, 500, 2000, profile="standard", distinct=True)
    with tempfile.TemporaryDirectory() as d:
        r = cc.run_case(case, d)
    print(case.id, r["outcome"], r["audit_seconds"], {c["id"]: (c["status"], c["value"]) for c in r["checks"] if c["id"].startswith("membership")}, r.get("pdtp"), flush=True)
    rows.append(r)
json.dump(rows, open("benchmarks/results/gb-kernel-2026-11-28/null_gradient_boosting_standard.json", "w"), default=str)
