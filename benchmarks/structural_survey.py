"""What the structural checks say about common model families on Adult, at the default policy.

    LEAKAUDIT_DATA=/work/shared/data python benchmarks/structural_survey.py --n 1000 5000
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np


def _families():
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return {"LogisticRegression": lambda: LogisticRegression(max_iter=1000),
            "DecisionTree (fully grown)": lambda: DecisionTreeClassifier(random_state=0),
            "DecisionTree (min_samples_leaf=5)": lambda: DecisionTreeClassifier(min_samples_leaf=5, random_state=0),
            "RandomForest (default)": lambda: RandomForestClassifier(random_state=0),
            "RandomForest (min_samples_leaf=5)": lambda: RandomForestClassifier(min_samples_leaf=5, random_state=0),
            "GradientBoosting (default)": lambda: GradientBoostingClassifier(random_state=0),
            "HistGradientBoosting (default)": lambda: HistGradientBoostingClassifier(random_state=0),
            "MLP (64 hidden)": lambda: MLPClassifier((64,), max_iter=200, random_state=0),
            "KNN (k=15)": lambda: KNeighborsClassifier(15),
            "SVC (RBF)": lambda: SVC()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000], help="training records")
    args = ap.parse_args(argv)

    from leakaudit.audit.inputs.structural import structural_checks
    from leakaudit.data import TabularEncoder
    from leakaudit.data.adult import load_adult

    ds = load_adult()
    print("| model | members | kept records | smallest leaf | parameters per record | exceeded |")
    print("|---|---|---|---|---|---|")
    for n in args.n:
        idx = np.random.default_rng(0).permutation(len(ds.y))[:n]
        frame = ds.frame.iloc[idx].reset_index(drop=True)
        X, y = TabularEncoder(ds.features).fit(frame).transform(frame), ds.y[idx]
        for name, make in _families().items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make().fit(X, y)
            c = {k.id.split(".")[1]: k for k in structural_checks(model, n)}
            leaf = c.get("leaf_size")
            print(f"| {name} | {n:,} | {c['instance_based'].value:,.0f} | "
                  f"{'-' if leaf is None else f'{leaf.value:,.0f}'} | {c['parameters_per_record'].value:.3g} | "
                  f"{', '.join(k for k, v in c.items() if v.status == 'exceeded') or 'none'} |", flush=True)


if __name__ == "__main__":
    main()
