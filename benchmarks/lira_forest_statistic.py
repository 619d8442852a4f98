"""LiRA's statistic on forests: Carlini et al.'s floored logit, SACRO-ML's clipped logit, and the empirical logit
of the trees' votes (``LiRA(votes=T)``), on the same shadow forests (issue 10's quality column, session 9).

For each dataset and seed: ``n`` members and ``n`` non-members drawn from the data, a target
``RandomForest(n_estimators=T)`` (scikit-learn's trees) trained on the members, ``K`` shadow forests on
complementary halves of the 2n records; offline and online LiRA scored with each statistic; AUC and TPR
at 0.1 % FPR (``leakaudit.metrics``). Adult is the SACRO-ML bench's dataset; Census-Income KDD is a
held-out check (the statistic was not chosen on it, nor on Adult: +1/2 is the Haldane-Anscombe constant).

With ``--rmia``: RMIA instead (``K`` reference forests on complementary halves of the 2n audited records,
``n`` further population records that no reference forest trains on), with the raw probabilities and with
every probability smoothed to (T p + 1/2) / (T + 1), the votes' counterpart (measured, not adopted).

Usage: .venv/bin/python benchmarks/lira_forest_statistic.py [--data adult,census] [--seeds 0,1,2]
       [--n 1000] [--shadows 100] [--trees 100] [--rmia]
Writes benchmarks/results/lira_forest_statistic.json (rmia_forest_statistic.json with --rmia) and prints one
line per dataset and seed.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def _data(name: str):
    if name == "adult":
        X, y, _ = C.adult_arrays()
        return X, y
    from leakaudit.data import load_census_kdd

    d = load_census_kdd()
    X, _ = d.encode()
    return np.asarray(X, float), np.asarray(d.y, np.int64)


def main(argv=None):
    from leakaudit.learners import RandomForest
    from leakaudit.membership._base import fit_reference_models
    from leakaudit.membership.lira import LiRA
    from leakaudit.metrics import auc, tpr_at_fpr

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="adult,census")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--shadows", type=int, default=100)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--rmia", action="store_true", help="RMIA, raw vs smoothed probabilities (population n)")
    a = ap.parse_args(argv)
    T = a.trees
    if a.rmia:
        return _rmia(a)
    stats = {"carlini_floor": {}, "sacroml_clip_1e-16": {"clip": 1e-16}, "votes": {"votes": T}}
    rows = []
    for name in a.data.split(","):
        X, y = _data(name)
        for seed in (int(s) for s in a.seeds.split(",")):
            idx = np.random.default_rng(seed).permutation(len(y))[: 2 * a.n]
            Xa, ya = X[idx], y[idx]
            target = RandomForest(n_estimators=T).fit(Xa[: a.n], ya[: a.n], random_state=seed, n_classes=2)
            probs = target.predict_proba(Xa)
            refs = fit_reference_models(RandomForest(n_estimators=T), Xa, ya, a.shadows, n_classes=2,
                                        random_state=seed)
            member = np.r_[np.ones(a.n, int), np.zeros(a.n, int)]
            row = {"data": name, "seed": seed}
            for st, kw in stats.items():
                for online in (False, True):
                    s = LiRA(online=online, **kw).score(probs, ya, refs.probs, refs.in_mask).scores_array
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        row[f"{st}/{'online' if online else 'offline'}"] = {
                            "auc": float(auc(member, s)), "tpr_at_0.1%fpr": float(tpr_at_fpr(member, s, 0.001))}
            rows.append(row)
            print(f"{name} seed {seed}: " + " | ".join(f"{k} AUC {v['auc']:.3f} TPR {100 * v['tpr_at_0.1%fpr']:.1f} %"
                                                      for k, v in row.items() if isinstance(v, dict)), flush=True)
    out = Path(__file__).resolve().parent / "results" / "lira_forest_statistic.json"
    out.write_text(json.dumps({"settings": vars(a), "rows": rows}, indent=1))


def _rmia(a):
    from leakaudit.learners import RandomForest
    from leakaudit.membership._base import fit_reference_models, paired_half_masks
    from leakaudit.membership.rmia import RMIA
    from leakaudit.metrics import auc, tpr_at_fpr

    T, n = a.trees, a.n
    rows = []
    for name in a.data.split(","):
        X, y = _data(name)
        for seed in (int(s) for s in a.seeds.split(",")):
            idx = np.random.default_rng(seed).permutation(len(y))[: 3 * n]
            Xa, ya = X[idx], y[idx]
            target = RandomForest(n_estimators=T).fit(Xa[:n], ya[:n], random_state=seed, n_classes=2)
            probs = target.predict_proba(Xa)
            mask = np.hstack([paired_half_masks(2 * n, a.shadows, seed), np.zeros((a.shadows, n), bool)])
            refs = fit_reference_models(RandomForest(n_estimators=T), Xa, ya, a.shadows, in_mask=mask, n_classes=2,
                                        random_state=seed)
            au, po = np.arange(2 * n), np.arange(2 * n, 3 * n)
            member = np.r_[np.ones(n, int), np.zeros(n, int)]
            row = {"data": name, "seed": seed}
            for st, f in (("raw", lambda p: p), ("smoothed", lambda p: (T * p + 0.5) / (T + 1))):
                for online in (True, False):
                    s = RMIA(online=online).score(f(probs[au]), ya[au], f(refs.probs[:, au]), refs.in_mask[:, au],
                                                  f(probs[po]), ya[po], f(refs.probs[:, po]),
                                                  refs.in_mask[:, po]).scores_array
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        row[f"{st}/{'online' if online else 'offline'}"] = {
                            "auc": float(auc(member, s)), "tpr_at_0.1%fpr": float(tpr_at_fpr(member, s, 0.001))}
            rows.append(row)
            print(f"{name} seed {seed}: " + " | ".join(f"{k} AUC {v['auc']:.3f}" for k, v in row.items()
                                                      if isinstance(v, dict)), flush=True)
    out = Path(__file__).resolve().parent / "results" / "rmia_forest_statistic.json"
    out.write_text(json.dumps({"settings": vars(a), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
