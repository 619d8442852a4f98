"""Leaf-refit leave-one-out of gradient boosting against exact retraining (issue 66): PDTP values and DTP-1's raw rule.

Per seed s (``--seeds``): Adult rows permuted with seed s, the first ``--members`` the training set T, the
Pipeline of benchmarks/bench_pipeline_gb_audit.py (ColumnTransformer + GradientBoostingClassifier(random_state=s)).
PDTP of every record of T (Long et al. Def 4.4, ``leakaudit.dtp.pdtp_from_probabilities``, outputs binned at 0.01)
two ways from one full model A(T): exact (each A(T\\{t}) retrained with the same seed s: the paired seed policy) and
approximate (the full model's trees with leaf values refitted on T\\{t}: benchmarks/_gb_leaf_refit.py, an experiment
kept out of the package because of what this measures). Reported per seed: the records above the DTP-1
threshold 1 under each (the raw rule's decision: any above), how many of the exact ones the approximation finds,
the mean and largest |difference| of the values, their Spearman correlation, and the CPU seconds of each.

``--records K``: both measured on the first K records of T only (the exact side costs a retraining per record).

Usage: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/gb_leaf_refit_accuracy.py [--members 300] [--seeds 0 1 2 3 4]
       [--records K]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def one_seed(seed: int, n_members: int, n_records: int | None = None) -> dict:
    from scipy.stats import spearmanr
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from _gb_leaf_refit import leaf_refit_outputs
    from leakaudit.data import load_adult
    from leakaudit.dtp import pdtp_from_probabilities

    ds = load_adult()
    rows = np.random.default_rng(seed).permutation(len(ds.y))[:n_members]
    frame = ds.frame.iloc[rows].reset_index(drop=True)
    y = np.asarray(ds.y)[rows]
    numeric = list(frame.select_dtypes("number").columns)
    categorical = [c for c in frame.columns if c not in numeric]
    pipe = make_pipeline(ColumnTransformer([("num", StandardScaler(), numeric),
                                            ("cat", OneHotEncoder(handle_unknown="ignore"), categorical)]),
                         GradientBoostingClassifier(random_state=seed))
    records = np.arange(n_members if n_records is None else min(n_records, n_members))
    out = {"seed": seed, "members": n_members, "records": int(records.size)}
    t = time.process_time()
    full = clone(pipe).fit(frame, y)
    p_full = full.predict_proba(frame.iloc[records])
    fit_s = time.process_time() - t
    t = time.process_time()
    p_exact = np.array([clone(pipe).fit(frame.drop(index=r), np.delete(y, r)).predict_proba(frame.iloc[[r]])[0]
                        for r in records])
    out["cpu_s_retrain"] = round(fit_s + time.process_time() - t, 1)
    t = time.process_time()
    _, p_approx = leaf_refit_outputs(full, frame, y, records, 2, p_full)
    out["cpu_s_approximate"] = round(fit_s + time.process_time() - t, 1)
    ex, ap = pdtp_from_probabilities(p_full, p_exact), pdtp_from_probabilities(p_full, p_approx)
    d = np.abs(ex - ap)
    out.update({
        "above_exact": int(np.sum(ex > 1)), "above_approx": int(np.sum(ap > 1)),
        "exact_above_found": int(np.sum((ex > 1) & (ap > 1))),
        "decision_exact": bool(np.any(ex > 1)), "decision_approx": bool(np.any(ap > 1)),
        "max_exact": float(ex.max()), "max_approx": float(ap.max()),
        "mean_abs_diff": float(d.mean()), "max_abs_diff": float(d.max()),
        "approx_below_exact_share": float(np.mean(ap < ex - 1e-12)),
        "spearman": float(spearmanr(ex, ap).statistic),
    })
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=300)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--records", type=int, default=None)
    a = ap.parse_args(argv)
    rows = []
    for s in a.seeds:
        r = one_seed(s, a.members, a.records)
        rows.append(r)
        print(r, flush=True)
    C.write_result(f"gb_leaf_refit_accuracy_{a.members}" + (f"_{a.records}" if a.records else ""), {"rows": rows})


if __name__ == "__main__":
    main()
