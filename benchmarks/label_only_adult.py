"""The label-only noise-robustness attack against the gap attack on Adult, for leaky and null models.

For each seed: 1,000 members and 1,000 non-members drawn from Adult (leakaudit's encoding: z-scored numerics,
one-hot categoricals), models fitted on the members (the null model: a 1-NN fitted on 1,000 other records), and the
attack's AUC with its 95 % DeLong interval, at ``n_queries`` perturbed copies per record (default parameters
otherwise) and at ``n_queries=0`` (the gap attack: member iff correctly classified).

    LEAKAUDIT_DATA=/work/shared/data python benchmarks/label_only_adult.py --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def _models():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    return {"1-NN": lambda s: KNeighborsClassifier(1),
            "fully grown tree": lambda s: DecisionTreeClassifier(random_state=s),
            "random forest (100 fully grown trees)": lambda s: RandomForestClassifier(100, random_state=s),
            "MLP (256 ReLU, 300 epochs)": lambda s: MLPClassifier((256,), max_iter=300, random_state=s),
            "null: 1-NN on other records": lambda s: KNeighborsClassifier(1)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--n", type=int, default=1000, help="members (and non-members, and the null model's records)")
    ap.add_argument("--n-queries", type=int, default=64)
    args = ap.parse_args(argv)

    from leakaudit.data import TabularEncoder
    from leakaudit.data.adult import load_adult
    from leakaudit.membership.label_only import LabelOnlyAttack
    from leakaudit.metrics import evaluate_membership

    ds = load_adult()
    n = args.n
    rows = {name: [] for name in _models()}
    for seed in args.seeds:
        rng = np.random.default_rng(seed)
        idx = rng.permutation(len(ds.y))[:3 * n]
        frame = ds.frame.iloc[idx].reset_index(drop=True)
        enc = TabularEncoder(ds.features).fit(frame)
        X, y = enc.transform(frame), ds.y[idx]
        is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
        for name, make in _models().items():
            fit_rows = slice(2 * n, 3 * n) if name.startswith("null") else slice(0, n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make(seed).fit(X[fit_rows], y[fit_rows])
            out = {}
            for label, q in (("gap", 0), ("robustness", args.n_queries)):
                t = time.perf_counter()
                att = LabelOnlyAttack(n_queries=q, onehot_groups=enc.onehot_groups, random_state=seed)
                res = att.score(X[:2 * n], y[:2 * n], model.predict)
                m = evaluate_membership(is_member, res.scores_array, fprs=(0.01,), n_boot=200, random_state=seed)
                out[label] = (m.auc, *m.auc_ci, time.perf_counter() - t)
            rows[name].append(out)
            print(f"seed {seed} {name}: gap AUC {out['gap'][0]:.3f} [{out['gap'][1]:.3f}, {out['gap'][2]:.3f}]; "
                  f"robustness AUC {out['robustness'][0]:.3f} [{out['robustness'][1]:.3f}, "
                  f"{out['robustness'][2]:.3f}] ({out['robustness'][3]:.1f} s)", flush=True)
    print(f"\n| model | gap AUC, mean (lowest lower end) | robustness AUC ({args.n_queries} queries), mean "
          "(lowest lower end) | seeds robustness > gap |")
    print("|---|---|---|---|")
    for name, rs in rows.items():
        g = np.array([r["gap"][:3] for r in rs])
        r_ = np.array([r["robustness"][:3] for r in rs])
        print(f"| {name} | {g[:, 0].mean():.3f} ({g[:, 1].min():.3f}) | {r_[:, 0].mean():.3f} ({r_[:, 1].min():.3f})"
              f" | {int((r_[:, 0] > g[:, 0]).sum())} of {len(rs)} |")


if __name__ == "__main__":
    main()
