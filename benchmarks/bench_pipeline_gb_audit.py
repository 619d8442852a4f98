"""A standard audit of a ColumnTransformer + GradientBoostingClassifier Pipeline (issue 66): wall, CPU, load, outcome.

Work: the bundled Adult table, rows permuted with seed 0, the first ``--members`` rows the members and the next
``--members`` the non-members (as docs/api.md does with 600); the model
``make_pipeline(ColumnTransformer([StandardScaler on the numeric columns, OneHotEncoder(handle_unknown="ignore") on
the others]), GradientBoostingClassifier(random_state=0))`` fitted on the members; ``leakaudit.audit(..., profile=
--profile, seed=--seed)`` with a fresh cache. Recorded: wall and CPU seconds of the call (this process and finished
children), the load average before and after, the outcome, every check's id, status, value and interval, the stage
timings results.json gives, and the PDTP method.

Usage: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_pipeline_gb_audit.py [--members 1000] [--profile standard]
       [--seed 0] [--name pipeline_gb_audit]
       OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_pipeline_gb_audit.py --fits 40 --name pipeline_gb_fits
       (CPU per fit, scikit-learn against leakaudit's compiled boosting, and how far their models are apart)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def pipeline_case(n_members: int):
    """(fitted pipeline, members, non-members) of the benchmark."""
    import numpy as np
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from leakaudit.data import load_adult

    ds = load_adult()
    table = ds.frame.assign(income=np.asarray(ds.class_names)[ds.y])
    rows = np.random.default_rng(0).permutation(len(table))
    members, nonmembers = table.iloc[rows[:n_members]], table.iloc[rows[n_members:2 * n_members]]
    features = members.drop(columns="income")
    numeric = list(features.select_dtypes("number").columns)
    categorical = list(features.select_dtypes(exclude="number").columns)
    model = make_pipeline(
        ColumnTransformer([("num", StandardScaler(), numeric),
                           ("cat", OneHotEncoder(handle_unknown="ignore"), categorical)]),
        GradientBoostingClassifier(random_state=0),
    ).fit(features, members["income"])
    return model, members, nonmembers


def one_audit(n_members: int, profile: str, seed: int) -> dict:
    import leakaudit

    model, members, nonmembers = pipeline_case(n_members)
    with tempfile.TemporaryDirectory() as cache:
        load_before = list(os.getloadavg())
        with C.Timer() as t:
            res = leakaudit.audit(model, members, nonmembers, label="income", profile=profile, seed=seed,
                                  cache_dir=cache)
        load_after = list(os.getloadavg())
    checks = res.checks_frame()
    dtp = res.dtp
    return {
        "members": n_members, "profile": profile, "seed": seed,
        "wall_s": round(t.seconds, 1), "cpu_s": round(t.cpu_seconds, 1),
        "load_before": load_before, "load_after": load_after,
        "outcome": res.outcome,
        "checks": [{k: (None if v != v else v) if isinstance(v, float) else v for k, v in row.items()}
                   for row in checks[["id", "status", "value", "low", "high", "threshold"]].to_dict("records")],
        "timings": dict(res.timings or {}),
        "pdtp_method": _get(dtp, "loo_method"), "dtp_test_loo_method": _get(_get(dtp, "test"), "loo_method"),
        "n_above": _get(dtp, "n_above"), "n_significant": _get(dtp, "n_significant"),
    }


def fit_costs(n_members: int, n_fits: int) -> dict:
    """CPU seconds per leave-one-out fit of the Pipeline, scikit-learn (a clone refitted on the members less one)
    against leakaudit's FrameGradientBoosting (one thread), and how far the two models' outputs on the non-members
    are apart, beside two scikit-learn models with different seeds."""
    import time

    import numpy as np
    import pandas as pd
    from sklearn.base import clone

    from leakaudit.learners.gradient_boosting import FrameGradientBoosting

    model, members, nonmembers = pipeline_case(n_members)
    both = pd.concat([members, nonmembers], ignore_index=True)
    frame, y = both.drop(columns="income"), np.unique(both["income"], return_inverse=True)[1]
    ids = np.arange(len(both), dtype=float).reshape(-1, 1)
    subsets = [np.delete(np.arange(n_members), t) for t in range(n_fits)]
    learner = FrameGradientBoosting(estimator=clone(model), frame=frame, n_threads=1)
    learner._prepared()  # the preprocessing and coding, once per audit
    c0 = time.process_time()
    ours = learner.fit_predict_many(ids, y, subsets, list(range(n_fits)), ids[n_members:], n_classes=2)[:, :, 1]
    ours_cpu = (time.process_time() - c0) / n_fits
    sk_cpu, gap_ours, gap_seeds = [], [], []
    for k, s in enumerate(subsets):
        c0 = time.process_time()
        a = clone(model).set_params(gradientboostingclassifier__random_state=k).fit(frame.iloc[s], y[s])
        sk_cpu.append(time.process_time() - c0)
        b = clone(model).set_params(gradientboostingclassifier__random_state=k + 1000).fit(frame.iloc[s], y[s])
        pa, pb = (m.predict_proba(frame.iloc[n_members:])[:, 1] for m in (a, b))
        gap_ours.append(float(np.abs(pa - ours[k]).mean()))
        gap_seeds.append(float(np.abs(pa - pb).mean()))
    return {"members": n_members, "fits": n_fits, "cpu_per_fit_sklearn": float(np.mean(sk_cpu)),
            "cpu_per_fit_leakaudit": ours_cpu, "ratio": float(np.mean(sk_cpu)) / ours_cpu,
            "mean_abs_gap_to_sklearn_same_seed": C.mean_ci(gap_ours, digits=5),
            "mean_abs_gap_sklearn_two_seeds": C.mean_ci(gap_seeds, digits=5)}


def _get(section, key):
    """``section[key]`` of a results section read as a mapping; None where it has none."""
    try:
        return section[key] if section is not None else None
    except (KeyError, TypeError, AttributeError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=1000)
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="pipeline_gb_audit")
    ap.add_argument("--fits", type=int, default=0,
                    help="instead of an audit: CPU per leave-one-out fit over this many fits, scikit-learn against "
                         "leakaudit's FrameGradientBoosting, and how far their outputs are apart")
    a = ap.parse_args(argv)
    if a.fits:
        out = fit_costs(a.members, a.fits)
        print(out)
        print(f"written {C.write_result(a.name, out)}")
        return
    out = one_audit(a.members, a.profile, a.seed)
    out["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")
    path = C.write_result(a.name, out)
    print(f"wall {out['wall_s']} s, CPU {out['cpu_s']} s, load {out['load_before'][0]:.2f} -> "
          f"{out['load_after'][0]:.2f}; outcome {out['outcome']}; PDTP method {out['pdtp_method']!r}")
    for c in out["checks"]:
        print(f"  {c['id']:<28} {c['status']:<14} {c['value']}")
    print(f"timings: {out['timings']}")
    print(f"written {path}")


if __name__ == "__main__":
    main()
