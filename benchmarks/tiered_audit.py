"""The tiered audit (``tiers``, issue 66) against the full audit: CPU time per audit and the outcome of each case.

Every case is audited twice at profile "standard", with ``tiers="off"`` (everything runs) and ``tiers="on"`` (the
checks that train no model first; the reference models and PDTP only when those leave the verdict open), each from
an empty cache, in the same worker process one after the other. The cases are the calibration suite's
(benchmarks/_calibration_cases.py: its null, leaky and benign families, built the same way) and families the tiered
rule was not tuned on (:data:`NEW_VARIANTS`: a null 5-NN, a leaky fully grown extra-trees forest, a benign logistic
regression at C = 1). The rule has no parameter to tune: a check of the model exceeded in the cheap tier withholds
it, else the full audit runs; these cases test that the outcome is unchanged and measure what it saves.

CPU time is the worker's user + system time around ``run_audit`` (``resource.getrusage``, its threads included;
the backend is in-process), so building the case's model is not counted; each worker first runs a small unmeasured
audit (imports, first calls), and which arm of a case runs first alternates with its seed. The machine's load
average is recorded before and after each audit. Rows are appended to ``--log`` (JSON lines), keyed by case and arm, so a rerun skips
what is there; the table is printed in Markdown at the end.

    python benchmarks/tiered_audit.py --seeds 2 --scale 0.3 --max-minutes 50 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _calibration_cases as cc  # noqa: E402

HERE = Path(__file__).resolve().parent
ARMS = ("off", "on")

#: families the tiered rule was not tuned on: (kind, family, variant) -> (description, the fitted model)
NEW_VARIANTS = {
    ("null", "knn", "k5"): "KNeighborsClassifier(n_neighbors=5)",
    ("positive", "extra_trees", "grown"): "ExtraTreesClassifier(n_estimators=30) (fully grown) on the members, labels "
                                          "as they are",
    ("benign", "logistic", "c1"): "LogisticRegression(C=1, max_iter=1000) on leakaudit's encoding",
}


def _new_model(case, frame, X, y):
    """The model of a :data:`NEW_VARIANTS` case, else the calibration suite's."""
    from sklearn.ensemble import ExtraTreesClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier

    key = (case.family, case.variant)
    if key == ("knn", "k5"):
        return KNeighborsClassifier(n_neighbors=5).fit(X, y)
    if key == ("extra_trees", "grown"):
        return ExtraTreesClassifier(n_estimators=30, random_state=case.seed).fit(X, y)
    if key == ("logistic", "c1"):
        return LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
    return _SUITE_MODEL(case, frame, X, y)


_SUITE_MODEL = cc._sklearn_model


def cases(n_seeds: int, scale: float) -> list:
    """Per family, ``n_seeds`` seeds, round-robin over the families (a run stopped early has measured each), at
    ``scale`` times the suite's member, non-member and null-target counts on Adult (breast cancer: the suite's;
    benign: 0.4 x ``scale`` x 5,000, at least 1,000)."""
    def sized(c, m, n, t=0):
        k = 1.0 if c.dataset == "breast_cancer" else scale  # breast cancer's 569 records: the suite's sizes
        return replace(c, n_members=int(m * k), n_nonmembers=int(n * k), n_train=int(t * k), profile="standard",
                       id="")

    groups = [
        # the calibration families (docs/calibration.md)
        lambda s: sized(cc._null("random_forest", "default", "adult", s), *cc.SIZES["adult"]),
        lambda s: sized(cc._null("pipeline", "logistic", "breast_cancer", s), *cc.SIZES["breast_cancer"]),
        lambda s: sized(cc.Case("null", "knn", "k15", "adult", s, 1, 1, 1, distinct=True), *cc.NEW_NULL[("knn", "k15")]),
        lambda s: sized(cc._pos("random_forest", "label_noise", "breast_cancer", 100 + s, label_noise=0.2),
                        *cc.POSITIVE_SIZES["breast_cancer"]),
        lambda s: sized(cc._pos("pipeline", "knn_label_noise", "breast_cancer", 100 + s, label_noise=0.2),
                        *cc.POSITIVE_SIZES["breast_cancer"]),
        lambda s: sized(cc.Case("positive", "decision_tree", "grown", "adult", 200 + s, 1, 1, distinct=True),
                        1000, 1000),
        lambda s: sized(cc.Case("positive", "knn", "k1", "adult", 200 + s, 1, 1, distinct=True), 1000, 1000),
        lambda s: _benign(cc.Case("benign", "logistic", "c0.1", "adult", 300 + s, 1, 1, distinct=True), scale),
        # families it was not tuned on
        lambda s: sized(cc.Case("null", "knn", "k5", "adult", 400 + s, 1, 1, 1, distinct=True), 1000, 1000, 2000),
        lambda s: sized(cc.Case("positive", "extra_trees", "grown", "adult", 400 + s, 1, 1, distinct=True),
                        1000, 1000),
        lambda s: _benign(cc.Case("benign", "logistic", "c1", "adult", 400 + s, 1, 1, distinct=True), scale),
    ]
    return [g(s) for s in range(n_seeds) for g in groups]


def _benign(c, scale):
    n = max(1000, int(5000 * 0.4 * scale))
    return replace(c, n_members=n, n_nonmembers=n, profile="standard", id="")


def _audit(job: tuple) -> dict:
    """Audit one case with one arm in this worker; its row."""
    case, arm, work = job
    import leakaudit.audit.config as config_mod
    import leakaudit.audit.pipeline as pipeline_mod

    make_config, run_audit = config_mod.make_config, pipeline_mod.run_audit
    spent = {}

    def with_tiers(**kw):  # run_case builds its settings with make_config: the arm's tiers join them
        return make_config(**kw, tiers=arm)

    def timed(*a, **kw):
        load0, r0, c0, t0 = os.getloadavg(), resource.getrusage(resource.RUSAGE_SELF), \
            resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        res = run_audit(*a, **kw)
        r1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.update(cpu_s=round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
                                 + c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime, 2),
                     wall_s=round(time.perf_counter() - t0, 2), load_before=[round(x, 2) for x in load0],
                     load_after=[round(x, 2) for x in os.getloadavg()],
                     models=sum(v.n_models or 0 for v in (res.resources.model_extra or {}).values()),
                     timings=res.timings,
                     not_run=[s["name"] for s in res.skipped if s["reason"].startswith("not needed: ")])
        return res

    cc._sklearn_model, cc.VARIANTS = _new_model, {**cc.VARIANTS, **NEW_VARIANTS}
    config_mod.make_config, pipeline_mod.run_audit = with_tiers, timed
    try:
        row = cc.run_case(case, Path(work) / f"{case.id}-{arm}")
    finally:
        config_mod.make_config, pipeline_mod.run_audit = make_config, run_audit
    keep = ("id", "kind", "family", "variant", "dataset", "seed", "n_members", "n_nonmembers", "outcome",
            "outcome_leakage_shown", "audit_seconds")
    return {"arm": arm, **{k: row.get(k) for k in keep}, **spent,
            "tuned": (case.kind, case.family, case.variant) not in NEW_VARIANTS}


def table(rows: list[dict]) -> str:
    """Per family: audits, outcomes off and on (and on how many cases they agree), CPU time per audit off and on
    (median, min-max), the ratio of the medians, and the models trained."""
    by: dict = {}
    for r in rows:
        by.setdefault(r["id"], {})[r["arm"]] = r
    pairs = [p for p in by.values() if set(p) == set(ARMS)]
    fams: dict = {}
    for p in pairs:
        r = p["off"]
        key = (r["kind"], r["family"], r["variant"], r["dataset"], r["n_members"], r["tuned"])
        fams.setdefault(key, []).append(p)
    out = ["| kind | family | members | tuned on | cases | outcome off | outcome on | same | CPU s off, median "
           "[min, max] | CPU s on | on / off | models off | models on |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def spread(xs):
        return f"{np.median(xs):.1f} [{min(xs):.1f}, {max(xs):.1f}]"

    def counts(ps, arm):
        from collections import Counter

        return ", ".join(f"{k} {v}" for k, v in sorted(Counter(p[arm]["outcome"] for p in ps).items()))

    for (kind, fam, var, ds, m, tuned), ps in sorted(fams.items()):
        off = [p["off"]["cpu_s"] for p in ps]
        on = [p["on"]["cpu_s"] for p in ps]
        same = sum(p["off"]["outcome"] == p["on"]["outcome"] for p in ps)
        out.append(f"| {kind} | {fam} {var} ({ds}) | {m} | {'yes' if tuned else 'no'} | {len(ps)} | "
                   f"{counts(ps, 'off')} | {counts(ps, 'on')} | {same}/{len(ps)} | {spread(off)} | {spread(on)} | "
                   f"{np.median(on) / np.median(off):.2f} | {int(np.median([p['off']['models'] for p in ps]))} | "
                   f"{int(np.median([p['on']['models'] for p in ps]))} |")
    tot_off = sum(p["off"]["cpu_s"] for p in pairs)
    tot_on = sum(p["on"]["cpu_s"] for p in pairs)
    same = sum(p["off"]["outcome"] == p["on"]["outcome"] for p in pairs)
    out.append(f"\nAll {len(pairs)} cases: the outcome unchanged in {same}; CPU time {tot_off / 60:.1f} min off, "
               f"{tot_on / 60:.1f} min on ({tot_on / tot_off:.2f} of it)." if pairs else "\nNo case finished.")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--scale", type=float, default=0.3, help="times the suite's member and non-member counts")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--max-minutes", type=float, default=None, help="start no audit after this many minutes")
    ap.add_argument("--log", type=Path, default=HERE / "results" / "tiered_audit.jsonl")
    ap.add_argument("--work", type=Path, default=Path("/tmp/leakaudit-tiered-audit"))
    ap.add_argument("--only", default=None, help="only the cases whose id contains this")
    ap.add_argument("--table-only", action="store_true", help="print the table of the log and stop")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    done = [json.loads(ln) for ln in args.log.read_text().splitlines()] if args.log.exists() else []
    if not args.table_only:
        have = {(r["id"], r["arm"]) for r in done}
        jobs = [(c, arm, str(args.work)) for c in cases(args.seeds, args.scale) for arm in ARMS
                if (c.id, arm) not in have and (args.only is None or args.only in c.id)]
        t0 = time.time()
        args.log.parent.mkdir(parents=True, exist_ok=True)
        with ProcessPoolExecutor(args.jobs) as pool:
            # a case's two arms go to one worker, one after the other; each pair is logged as it finishes
            pending = [pool.submit(_pair, jobs[i:i + 2], t0, args.max_minutes) for i in range(0, len(jobs), 2)]
            for f in as_completed(pending):
                for row in f.result():
                    with args.log.open("a") as fh:
                        fh.write(json.dumps(row) + "\n")
                    done.append(row)
                    print(f"{row['id']} tiers {row['arm']}: {row['outcome']}, {row['cpu_s']} s CPU, "
                          f"{row['wall_s']} s wall, load {row['load_before'][0]}", flush=True)
    print(table(done))
    return 0


def _pair(jobs: list, t0: float, max_minutes: float | None) -> list[dict]:
    """A case's two arms in this worker, after its warm-up; the arm that goes first alternates with the seed."""
    if max_minutes is not None and time.time() - t0 > 60 * max_minutes:
        return []
    _warm_up()
    if jobs and jobs[0][0].seed % 2:
        jobs = jobs[::-1]
    return [_audit(j) for j in jobs]


_WARM = []


def _warm_up() -> None:
    """Once per worker, a small unmeasured audit: the imports and first calls (torch, the compiled kernels) are
    then not counted against whichever arm runs first."""
    if _WARM:
        return
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    import leakaudit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(X[:, 0] > 0, "y", "n"))
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(df.iloc[:80][["a", "b", "c"]],
                                                                       df.iloc[:80]["label"])
    leakaudit.audit(model, df.iloc[:80], df.iloc[80:], label="label", profile="smoke", tiers="off", verbose=False)
    _WARM.append(True)


if __name__ == "__main__":
    sys.exit(main())
