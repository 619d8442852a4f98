"""Screened PDTP against exact PDTP, where both run: which records each finds, their largest PDTP, the verdict.

Work per seed (Adult, the audit's demo split with that seed): the audit's reference models (64, complementary
halves of members + non-members), exact paired PDTP of every member, and the screened measurement
(:func:`leakaudit.dtp.screened_pdtp`: the top 5 % of the reference models' ranking, doubled while its tail holds
more records significant for DTP-1 than a random sample of the rest (``--sample``, default 500; the audit plans
1,232 at 4,000 members), and that sample; ``--doubling above``: records above the threshold, the rule before).
Both sides then run the statistical DTP-1 test (:func:`leakaudit.dtp.dtp1_test`, 16 paired repeats, at most 200
candidates) on their stage-1 candidates. The screened models use the exact run's seeds (paired LOO models are the
same models), so the comparison isolates which records are measured.

With ``--ranking oob`` (bagged forests) the ranking is the forest's own out-of-bag estimate
(:func:`leakaudit.dtp.screening.forest_oob_shift`: 16 forests, one-sided 95 % t bound) and the measured top is every
member whose bound reaches the threshold (``cut``), under the audit's cap of 25 % of the members
(``--max-fraction``), as the audit runs it.

Reported per seed: the records significant for DTP-1 under exact PDTP and how many of them the screened
measurement finds (recall), the share of exact stage-1 exceedances it measures, the largest PDTP on each side,
whether the DTP-1 check reaches the same status, the models trained and the time.

    python benchmarks/pdtp_screening.py --learner demo --n 4000 --seeds 0 1 2 3 4
    python benchmarks/pdtp_screening.py --learner forest --n 2000 --seeds 0 1 2 3 4
    python benchmarks/pdtp_screening.py --learner forest --ranking oob --max-fraction 0.25 --n 4000 \
        --exact-from benchmarks/results/pdtp_screening_forest_n4000.jsonl
    python benchmarks/pdtp_screening.py --learner forest --ranking oob --max-fraction 0.25 --sample 1232 \
        --n 4000 --seeds 4 --tag session22      # as the audit runs it, exact side measured afresh

``--ranks-only`` (with ``--ranking oob --exact-from``) trains no leave-one-out model: the screen's top under its cut
and cap, and the ranks in it of the records the exact run found significant (``--tag`` names its file too).

``--exact-from`` reuses the exact side of an earlier run with the same seeds (the exact paired models do not depend
on the ranking), so only the screened side is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _learner(name: str, cfg):
    from leakaudit.audit.inputs.target import demo_learner
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
             cache: str, confidence: float, ranking: str = "reference", max_fraction: float = 1.0,
             exact_from: dict | None = None, doubling: str = "significant") -> dict:
    from leakaudit.audit import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.steps.dtp import OOB_FORESTS, OOB_MISS_RATE
    from leakaudit.dtp import dtp1_test, pdtp, reference_loo_shift, screened_pdtp
    from leakaudit.dtp.screening import forest_oob_shift
    from leakaudit.dtp.significance import DTP1Deltas
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
    ref = None if ranking == "oob" else fit_reference_models(  # the out-of-bag ranking needs none
        learner, Xa, ya, n_reference, in_mask=paired_half_masks(len(ya), n_reference, s_ref),
        n_classes=data.n_classes, random_state=s_ref, engine=engine)
    t_ref = time.perf_counter() - t0

    def test(records, values, known=None):
        cand = records[values > thr]
        if not cand.size:
            return None
        return dtp1_test(learner, data.X_mem, data.y_mem, records=cand, threshold=thr, n_repeats=16,
                         confidence=confidence, max_records=200, stage1_values=values[values > thr],
                         n_classes=data.n_classes, random_state=s_test, engine=engine, known_deltas=known)

    # the audit's rule: the top grows by records significant at the test's level (their deltas kept for the test)
    known = DTP1Deltas()

    def tail_significant(recs, vals):
        t = test(recs, vals, known)
        hit = {int(r) for r, p in zip(t.records, t.p_value) if p <= 1 - confidence}
        return np.isin(recs, list(hit))

    def significant(t):
        return set() if t is None else {int(r) for r, s in zip(t.records, t.significant) if s}

    t0 = time.perf_counter()
    c0 = time.process_time()
    if ranking == "oob":
        est = forest_oob_shift(learner, data.X_mem, data.y_mem, n_forests=OOB_FORESTS, miss_rate=OOB_MISS_RATE,
                               n_classes=data.n_classes, random_state=[s_sample, 1]).upper
        cut = thr
    else:
        est, cut = reference_loo_shift(ref.probs[:, :n], ref.in_mask[:, :n]), None
    t_estimate, cpu_estimate = time.perf_counter() - t0, time.process_time() - c0
    sc = screened_pdtp(learner, data.X_mem, data.y_mem, est, threshold=thr, fraction=fraction, n_sample=n_sample,
                       max_fraction=max(max_fraction, fraction), cut=cut, n_classes=data.n_classes,
                       random_state=s_target, sample_state=s_sample, engine=engine,
                       significant=tail_significant if doubling == "significant" else None)
    t_screen_stage1 = time.perf_counter() - t0
    t0 = time.perf_counter()
    t_sc = test(sc.records, sc.values, known)
    t_screen_test = time.perf_counter() - t0

    if exact_from is None:
        t0 = time.perf_counter()
        every = np.arange(n)
        exact = np.asarray(pdtp(learner, data.X_mem, data.y_mem, records=every, n_classes=data.n_classes,
                                seed_policy="paired", random_state=s_target, engine=engine,
                                keep_outputs=False).values)
        t_exact_stage1 = time.perf_counter() - t0
        t0 = time.perf_counter()
        t_ex = test(every, exact)
        t_exact_test = time.perf_counter() - t0
        sig_ex = significant(t_ex)
        above_ex = set(np.flatnonzero(exact > thr).tolist())
        exact_row = {"n_above": len(above_ex), "n_significant": len(sig_ex), "significant": sorted(sig_ex),
                     "max_pdtp": float(exact.max()), "status": _status(t_ex), "models_stage1": n,
                     "seconds_stage1": round(t_exact_stage1, 1), "seconds_test": round(t_exact_test, 1)}
    else:  # the same seeds' exact measurement, taken from an earlier run's row
        exact, above_ex, exact_row = None, None, {**exact_from, "reused": True}
        sig_ex = set(exact_from["significant"])
    sig_sc = significant(t_sc)
    measured = set(sc.records.tolist())
    rank = np.empty(n, int)
    rank[sc.order] = np.arange(n)
    return {
        "learner": learner_name, "ranking": ranking, "max_fraction": max_fraction, "n_members": n, "seed": seed,
        "n_reference": n_reference, "seconds_estimate": round(t_estimate, 1),
        "cpu_seconds_estimate": round(cpu_estimate, 1), "load_average": round(os.getloadavg()[0], 2),
        "exact": exact_row,
        "screened": {"n_measured": len(measured), "n_top": sc.n_top, "n_sample": int(sc.sample.size),
                     "extensions": sc.extensions, "capped": sc.capped, "n_significant": len(sig_sc),
                     "doubling": {"counted": sc.counted, **(sc.last_look or {})},
                     "max_pdtp": float(sc.values.max()),
                     "status": _status(t_sc), "seconds_stage1": round(t_screen_stage1, 1),
                     "seconds_test": round(t_screen_test, 1)},
        "seconds_reference": round(t_ref, 1),
        "recall_significant": (len(sig_ex & sig_sc) / len(sig_ex)) if sig_ex else None,
        "recall_significant_measured": (len(sig_ex & measured) / len(sig_ex)) if sig_ex else None,
        "recall_stage1_above": (len(above_ex & measured) / len(above_ex)) if above_ex else None,
        "significant_ranks": sorted(int(rank[r]) for r in sig_ex),
        "argmax_measured": None if exact is None else bool(int(np.argmax(exact)) in measured),
        "same_max_pdtp": bool(np.isclose(exact_row["max_pdtp"], float(sc.values.max()))),
        "same_status": exact_row["status"] == _status(t_sc),
        "same_values_on_measured": None if exact is None else bool(np.allclose(exact[sc.records], sc.values)),
    }


def rank_seed(learner_name: str, n: int, seed: int, *, exact: dict, max_fraction: float) -> dict:
    """The out-of-bag screen's plan alone (no leave-one-out model): its top under the cut and the cap, and where
    the exact run's significant records rank in it. The estimate is the one :func:`run_seed` computes."""
    from leakaudit.audit import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.steps.dtp import OOB_FORESTS, OOB_MISS_RATE
    from leakaudit.dtp.screening import forest_oob_shift

    cfg = make_config(n_members=n, n_nonmembers=n, seed=seed)
    data = prepare_data(cfg)
    s_sample = int((np.random.SeedSequence(seed).generate_state(4) % (2**31))[2])
    c0 = time.process_time()
    sh = forest_oob_shift(_learner(learner_name, cfg), data.X_mem, data.y_mem, n_forests=OOB_FORESTS,
                          miss_rate=OOB_MISS_RATE, n_classes=data.n_classes, random_state=[s_sample, 1])
    cpu = time.process_time() - c0
    order = np.lexsort((np.arange(n), -sh.upper))
    rank = np.empty(n, int)
    rank[order] = np.arange(n)
    reach = int(np.sum(sh.upper >= 1.0))
    top = min(reach, int(np.ceil(max_fraction * n)))
    sig = np.asarray(exact["significant"], int)
    return {"learner": learner_name, "ranking": "oob", "n_members": n, "seed": seed, "max_fraction": max_fraction,
            "n_reach": reach, "n_top": top, "capped": reach > top, "n_significant_exact": int(sig.size),
            "significant_ranks": sorted(rank[sig].tolist()),
            "recall_measured": float(np.mean(rank[sig] < top)) if sig.size else None,
            "significant_estimate_min": float(sh.estimate[sig].min()) if sig.size else None,
            "significant_upper_min": float(sh.upper[sig].min()) if sig.size else None,
            "cpu_seconds_estimate": round(cpu, 1)}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learner", choices=["demo", "forest"], default="demo")
    ap.add_argument("--n", type=int, default=4000, help="members (and as many non-members)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--n-reference", type=int, default=64)
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--sample", type=int, default=500)
    ap.add_argument("--confidence", type=float, default=0.995, help="the DTP-1 test's (the audit's per-check level)")
    ap.add_argument("--ranking", choices=["reference", "oob"], default="reference",
                    help="the reference models' estimate (doubling top), or a forest's out-of-bag bound (cut)")
    ap.add_argument("--max-fraction", type=float, default=1.0, help="cap on the measured top (the audit's: 0.25)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="engine cache kept across runs (default: a temporary folder)")
    ap.add_argument("--exact-from", type=Path, default=None,
                    help="an earlier run's JSONL (same learner, n and seeds): reuse its exact measurement")
    ap.add_argument("--ranks-only", action="store_true",
                    help="with --ranking oob and --exact-from: the screen's plan and the exact records' ranks only")
    ap.add_argument("--doubling", choices=["significant", "above"], default="significant",
                    help="what grows the ranked top: records significant for DTP-1 (the audit's rule) or records "
                         "above the threshold (the rule before it)")
    ap.add_argument("--tag", default="", help="suffix of the results file's name")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    reuse = {}
    if args.exact_from is not None:
        for line in args.exact_from.read_text().splitlines():
            r = json.loads(line)
            if r["learner"] == args.learner and r["n_members"] == args.n:
                reuse[r["seed"]] = r["exact"]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.ranks_only:
        if args.ranking != "oob" or not reuse:
            ap.error("--ranks-only needs --ranking oob and --exact-from")
        path = args.out / f"pdtp_screening_{args.learner}_oob_ranks_n{args.n}{'_' + args.tag if args.tag else ''}.jsonl"
        rows = [rank_seed(args.learner, args.n, s, exact=reuse[s], max_fraction=args.max_fraction)
                for s in args.seeds if s in reuse]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        for r in rows:
            print(json.dumps({k: r[k] for k in ("seed", "n_reach", "n_top", "recall_measured")}
                             | {"max_rank": max(r["significant_ranks"], default=None)}), flush=True)
        return rows
    tag = "" if args.ranking == "reference" else f"_{args.ranking}"
    path = args.out / f"pdtp_screening_{args.learner}{tag}_n{args.n}{'_' + args.tag if args.tag else ''}.jsonl"
    done = {json.loads(line)["seed"] for line in path.read_text().splitlines()} if path.exists() else set()
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(args.cache or tmp)
        for seed in args.seeds:
            if seed in done:
                continue
            row = run_seed(args.learner, args.n, seed, n_reference=args.n_reference, fraction=args.fraction,
                           n_sample=args.sample, cache=cache, confidence=args.confidence, ranking=args.ranking,
                           max_fraction=args.max_fraction, exact_from=reuse.get(seed), doubling=args.doubling)
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
