"""Screened PDTP against exact PDTP, where both run: which records each finds, their largest PDTP, the verdict.

Work per seed (Adult, the audit's demo split with that seed): the audit's reference models (64, complementary
halves of members + non-members), exact paired PDTP of every member, and the screened measurement
(:func:`leakaudit.dtp.screened_pdtp`: the top 5 % of the reference models' ranking, doubled while its tail holds
more records above the threshold than a random sample of 500 of the rest, and that sample). Both sides then run
the statistical DTP-1 test (:func:`leakaudit.dtp.dtp1_test`, 16 paired repeats, at most 200 candidates) on their
stage-1 candidates. The screened models use the exact run's seeds (paired LOO models are the same models), so
the comparison isolates which records are measured.

Reported per seed: the records significant for DTP-1 under exact PDTP and how many of them the screened
measurement finds (recall), the share of exact stage-1 exceedances it measures, the largest PDTP on each side,
whether the DTP-1 check reaches the same status, the models trained and the time.

    python benchmarks/pdtp_screening.py --learner demo --n 4000 --seeds 0 1 2 3 4
    python benchmarks/pdtp_screening.py --learner forest --n 2000 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _learner(name: str, cfg):
    from leakaudit.audit.target import demo_learner
    from leakaudit.learners import RandomForest

    if name == "demo":
        return demo_learner(cfg)
    return RandomForest(n_estimators=100)  # scikit-learn's RandomForestClassifier defaults


def _status(test, untested_ok: bool = False) -> str:
    if test is None:
        return "passed"
    if test.n_significant > 0:
        return "exceeded"
    return "not measurable" if len(test.untested) else "passed"


def run_seed(learner_name: str, n: int, seed: int, *, n_reference: int, fraction: float, n_sample: int,
             cache: str, confidence: float) -> dict:
    from leakaudit.audit import make_config
    from leakaudit.audit.data import prepare_data
    from leakaudit.dtp import dtp1_test, pdtp, reference_loo_shift, screened_pdtp
    from leakaudit.engine import Engine
    from leakaudit.membership import fit_reference_models, paired_half_masks

    cfg = make_config(n_members=n, n_nonmembers=n, seed=seed)
    data = prepare_data(cfg)
    learner = _learner(learner_name, cfg)
    engine = Engine(backend="inprocess", cache_dir=cache)
    s_ref, s_target, s_sample, s_test = (np.random.SeedSequence(seed).generate_state(4) % (2**31)).tolist()
    thr = 1.0
    t0 = time.perf_counter()
    Xa, ya = data.X_audit, data.y_audit
    ref = fit_reference_models(learner, Xa, ya, n_reference, in_mask=paired_half_masks(len(ya), n_reference, s_ref),
                               n_classes=data.n_classes, random_state=s_ref, engine=engine)
    t_ref = time.perf_counter() - t0

    def test(records, values):
        cand = records[values > thr]
        if not cand.size:
            return None
        return dtp1_test(learner, data.X_mem, data.y_mem, records=cand, threshold=thr, n_repeats=16,
                         confidence=confidence, max_records=200, stage1_values=values[values > thr],
                         n_classes=data.n_classes, random_state=s_test, engine=engine)

    def significant(t):
        return set() if t is None else {int(r) for r, s in zip(t.records, t.significant) if s}

    t0 = time.perf_counter()
    est = reference_loo_shift(ref.probs[:, :n], ref.in_mask[:, :n])
    sc = screened_pdtp(learner, data.X_mem, data.y_mem, est, threshold=thr, fraction=fraction, n_sample=n_sample,
                       n_classes=data.n_classes, random_state=s_target, sample_state=s_sample, engine=engine)
    t_screen_stage1 = time.perf_counter() - t0
    t0 = time.perf_counter()
    t_sc = test(sc.records, sc.values)
    t_screen_test = time.perf_counter() - t0

    t0 = time.perf_counter()
    every = np.arange(n)
    exact = np.asarray(pdtp(learner, data.X_mem, data.y_mem, records=every, n_classes=data.n_classes,
                            seed_policy="paired", random_state=s_target, engine=engine, keep_outputs=False).values)
    t_exact_stage1 = time.perf_counter() - t0
    t0 = time.perf_counter()
    t_ex = test(every, exact)
    t_exact_test = time.perf_counter() - t0

    sig_ex, sig_sc = significant(t_ex), significant(t_sc)
    above_ex = set(np.flatnonzero(exact > thr).tolist())
    measured = set(sc.records.tolist())
    same_values = bool(np.allclose(exact[sc.records], sc.values))
    rank = np.empty(n, int)
    rank[sc.order] = np.arange(n)
    return {
        "learner": learner_name, "n_members": n, "seed": seed, "n_reference": n_reference,
        "exact": {"n_above": len(above_ex), "n_significant": len(sig_ex), "significant": sorted(sig_ex),
                  "max_pdtp": float(exact.max()), "status": _status(t_ex), "models_stage1": n,
                  "seconds_stage1": round(t_exact_stage1, 1), "seconds_test": round(t_exact_test, 1)},
        "screened": {"n_measured": len(measured), "n_top": sc.n_top, "n_sample": int(sc.sample.size),
                     "extensions": sc.extensions, "n_significant": len(sig_sc), "max_pdtp": float(sc.values.max()),
                     "status": _status(t_sc), "seconds_stage1": round(t_screen_stage1, 1),
                     "seconds_test": round(t_screen_test, 1)},
        "seconds_reference": round(t_ref, 1),
        "recall_significant": (len(sig_ex & sig_sc) / len(sig_ex)) if sig_ex else None,
        "recall_significant_measured": (len(sig_ex & measured) / len(sig_ex)) if sig_ex else None,
        "recall_stage1_above": (len(above_ex & measured) / len(above_ex)) if above_ex else None,
        "significant_ranks": sorted(int(rank[r]) for r in sig_ex),
        "argmax_measured": bool(int(np.argmax(exact)) in measured),
        "same_status": _status(t_ex) == _status(t_sc),
        "same_values_on_measured": same_values,
    }


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learner", choices=["demo", "forest"], default="demo")
    ap.add_argument("--n", type=int, default=4000, help="members (and as many non-members)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--n-reference", type=int, default=64)
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--sample", type=int, default=500)
    ap.add_argument("--confidence", type=float, default=0.995, help="the DTP-1 test's (the audit's per-check level)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"pdtp_screening_{args.learner}_n{args.n}.jsonl"
    done = {json.loads(line)["seed"] for line in path.read_text().splitlines()} if path.exists() else set()
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    with tempfile.TemporaryDirectory() as cache:
        for seed in args.seeds:
            if seed in done:
                continue
            row = run_seed(args.learner, args.n, seed, n_reference=args.n_reference, fraction=args.fraction,
                           n_sample=args.sample, cache=cache, confidence=args.confidence)
            with path.open("a") as fh:  # one line per finished seed: a killed run keeps what it finished
                fh.write(json.dumps(row) + "\n")
            rows.append(row)
            print(json.dumps({k: row[k] for k in ("seed", "recall_significant", "recall_stage1_above",
                                                  "same_status", "argmax_measured")}
                             | {"exact_sig": row["exact"]["n_significant"],
                                "screen_sig": row["screened"]["n_significant"],
                                "measured": row["screened"]["n_measured"]}), flush=True)
    return rows


if __name__ == "__main__":
    main()
