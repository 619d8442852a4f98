"""The privacy unit's cost and effect on Adult: one audit with a synthetic unit beside the same audit without it.

Adult's rows (Long et al.'s 13 columns) are grouped into synthetic persons of 1 to 4 rows (consecutive rows of a
seeded permutation, sizes drawn uniformly; a person's rows are unrelated records, as a person's visits would be),
split by person into members and non-members, and a deep decision tree (a model that memorises) is trained on the
members. Both audits run at one profile and seed on the same model and rows, one after the other in one process
(the row audit first unless ``--unit-first``: the first also pays the imports); the row audit simply drops the unit
column. Prints one JSON line per audit: wall and CPU seconds (this process and its children), the load average,
and each attack's AUC with its interval, advantage and counts, and the DTP-1 check.

    OMP_NUM_THREADS=1 python benchmarks/unit_audit.py --members 1000 --profile smoke --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np
import pandas as pd


def _cpu() -> float:
    self, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self.ru_utime + self.ru_stime + kids.ru_utime + kids.ru_stime


def persons(n_rows: int, seed: int) -> np.ndarray:
    """A person id per row: consecutive runs of 1 to 4 rows."""
    sizes = np.random.default_rng([seed, 68]).integers(1, 5, size=n_rows)
    return np.repeat(np.arange(n_rows), sizes)[:n_rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=1000, help="member rows (about as many non-member rows)")
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--unit-first", action="store_true",
                    help="run the audit with the unit first (the first audit of a process also pays its imports)")
    args = ap.parse_args()

    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    import leakaudit
    from leakaudit.data import load_adult

    ds = load_adult(columns="long")
    frame = ds.frame.assign(income=np.asarray(ds.class_names)[ds.y])
    rows = np.random.default_rng(args.seed).permutation(len(frame))[:2 * args.members]
    d = frame.iloc[rows].reset_index(drop=True).assign(person=persons(2 * args.members, args.seed))
    ids = d["person"].unique()
    member_ids = set(np.random.default_rng([args.seed, 1]).permutation(ids)[:len(ids) // 2])
    m = d["person"].isin(member_ids).to_numpy()
    mem, non = d[m].reset_index(drop=True), d[~m].reset_index(drop=True)
    cats = [c for c in ds.frame.columns if not pd.api.types.is_numeric_dtype(ds.frame[c].dtype)]
    model = Pipeline([("enc", ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats)],
                                                remainder="passthrough")),
                      ("tree", DecisionTreeClassifier(random_state=args.seed))])
    features = [c for c in ds.frame.columns]
    model.fit(mem[features], mem["income"])
    for unit in (("person", None) if args.unit_first else (None, "person")):
        t0, c0 = time.perf_counter(), _cpu()
        res = leakaudit.audit(model, mem if unit else mem.drop(columns="person"),
                              non if unit else non.drop(columns="person"), label="income", unit=unit,
                              profile=args.profile, random_state=args.seed)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        dtp = next((c for c in res.checks if c.id == "dtp.dtp1"), None)
        print(json.dumps({
            "unit": unit, "profile": args.profile, "seed": args.seed, "member_rows": len(mem),
            "nonmember_rows": len(non), "member_units": int(mem["person"].nunique()),
            "nonmember_units": int(non["person"].nunique()), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "loadavg": os.getloadavg()[0], "outcome": res.outcome,
            "attacks": {k: {"n": [v.n_members, v.n_nonmembers], "auc": round(v.auc, 4),
                            "auc_ci": [round(x, 4) for x in v.auc_ci], "advantage": round(v.advantage, 4)}
                        for k, v in res.membership.items()},
            "dtp1": None if dtp is None else {"status": dtp.status, "sentence": dtp.sentence},
        }), flush=True)


if __name__ == "__main__":
    main()
