"""Peak memory and time of what the audit computes from 256 reference models' outputs on 48,842 Adult records,
with the outputs in memory (the default budget) and on disk (a small forced budget) -- issue 31, "memory bounded
by design".

The outputs are those of the standard audit of the full Adult training set (32,561 members and 16,281 non-members:
every Adult record, the split of the audit's seed), from 256 reference models trained in complementary pairs as
``leakaudit.audit.steps.membership`` trains them. ``--learner logistic`` (the default) trains them as
leakaudit's LogisticRegression (C = 1; about a minute for all 256), ``--learner demo`` as the audit's demo network
(minutes): the outputs have the same shape either way, (256, 48,842, 2) float64 = 200 MB, which is what the
memory depends on. They are trained once into a cache folder (``--cache``); then every measurement runs in a
fresh subprocess, reads them back through ``Engine.predict_many`` (the audit's path, cache hits) under the
budget, and computes what the audit computes from them: the reference set's checks, the audited records' view,
LiRA (online, the audit's attack), the recipe test and the PDTP screen's reference ranking of the members. Each
measurement records its wall and CPU time, its peak resident memory (VmHWM), where the outputs were held, and a
digest of every number computed (equal digests: equal numbers).

``--src`` runs the measurements on another checkout's ``src`` (a build of an earlier commit), to compare with the
code before the store; that code has no budget, so it measures its one path.

    nice -n 10 python benchmarks/bench_output_store.py --budgets default 64MB --repeats 3
    nice -n 10 python benchmarks/bench_output_store.py --budgets default --src /tmp/base/src --tag before
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
N_REFERENCE = 256
FULL = (32_561, 16_281)


def _setup(learner_name: str, cache: str):
    """The audit's data (full Adult, seed 0), the learner, the masks and seeds, and an engine on the cache."""
    import numpy as np

    from leakaudit.audit import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.inputs.target import demo_learner
    from leakaudit.engine import Engine
    from leakaudit.learners import LogisticRegression
    from leakaudit.membership import paired_half_masks

    cfg = make_config(n_members=FULL[0], n_nonmembers=FULL[1], seed=0)
    data = prepare_data(cfg)
    X = np.vstack([data.X_mem, data.X_non])
    y = data.y_audit
    learner = demo_learner(cfg) if learner_name == "demo" else LogisticRegression(C=1.0)
    mask = paired_half_masks(len(y), N_REFERENCE, 0)
    return data, X, y, learner, mask, Engine(backend="inprocess", cache_dir=cache, progress=False)


def _digest(*arrays) -> str:
    import numpy as np

    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()[:16]


def measure(learner_name: str, cache: str, budget: str) -> dict:
    """One measurement (in this process, which should be fresh)."""
    import contextlib

    import numpy as np

    from leakaudit._resources import peak_rss_mb, rss_now_mb
    from leakaudit.audit.inputs.recipe import recipe_test
    from leakaudit.dtp.screening import reference_loo_shift
    from leakaudit.membership import LiRA, fit_reference_models

    try:
        from leakaudit.engine import is_disk_backed, memory_budget, using_memory_budget
    except ImportError:  # code before the store: one path, in memory
        is_disk_backed, memory_budget, using_memory_budget = (lambda a: False), (lambda: None), None
    data, X, y, learner, mask, engine = _setup(learner_name, cache)
    n_mem = len(data.y_mem)
    base_mb = rss_now_mb()
    ctx = contextlib.nullcontext() if using_memory_budget is None else using_memory_budget(
        None if budget == "default" else budget)
    c0, t0 = time.process_time(), time.perf_counter()
    with ctx:
        ref = fit_reference_models(learner, X, y, N_REFERENCE, in_mask=mask, n_classes=2, random_state=0,
                                   engine=engine)
        assert engine.stats.chunks_trained == 0, "the outputs were not all in the cache: run --train first"
        t_read = time.perf_counter() - t0
        aud = ref.subset(slice(0, len(y))) if using_memory_budget is not None else ref.subset(np.arange(len(y)))
        target = np.asarray(aud.probs[0])  # reference model 0 plays the given model
        lira = LiRA().score(target, y, aud.probs, aud.in_mask).scores_array
        rec = recipe_test(target[:n_mem], target[n_mem:], data.y_mem, data.y_non, aud.probs, aud.in_mask, y,
                          confidence=0.95)
        shift = reference_loo_shift(aud.probs[:, :n_mem], aud.in_mask[:, :n_mem])
        held = memory_budget()
    return {"budget": budget, "budget_bytes": held, "outputs_on_disk": bool(is_disk_backed(ref.probs)),
            "outputs_mb": round(ref.probs.nbytes / 2**20, 1), "shape": list(ref.probs.shape),
            "seconds": round(time.perf_counter() - t0, 2), "cpu_seconds": round(time.process_time() - c0, 2),
            "read_seconds": round(t_read, 2), "peak_rss_mb": round(peak_rss_mb(), 1),
            "rss_before_mb": round(base_mb, 1),
            "digest": {"lira": _digest(lira), "recipe": _digest([rec["p_value"], rec["signal"]]),
                       "screen": _digest(shift)}}


def train(learner_name: str, cache: str) -> dict:
    from leakaudit.membership import fit_reference_models

    _, X, y, learner, mask, engine = _setup(learner_name, cache)
    c0, t0 = time.process_time(), time.perf_counter()
    fit_reference_models(learner, X, y, N_REFERENCE, in_mask=mask, n_classes=2, random_state=0, engine=engine)
    return {"trained": engine.stats.models_trained, "seconds": round(time.perf_counter() - t0, 1),
            "cpu_seconds": round(time.process_time() - c0, 1)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learner", choices=("logistic", "demo"), default="logistic")
    ap.add_argument("--cache", default="/tmp/leakaudit-bench-output-store")
    ap.add_argument("--budgets", nargs="+", default=["default", "64MB"])
    ap.add_argument("--repeats", type=int, default=1, help="measurements per budget (alternating budgets)")
    ap.add_argument("--src", default=None, help="the src folder of the code to measure (default: this checkout's)")
    ap.add_argument("--tag", default=None)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "output_store.jsonl")
    ap.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # one measurement, in a fresh process
    ap.add_argument("--train-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.learner, args.cache, args.measure)))
        return
    if args.train_only:
        print(json.dumps(train(args.learner, args.cache)))
        return
    src = str(Path(args.src).resolve()) if args.src else str(HERE.parent / "src")
    env = {**os.environ, "PYTHONPATH": src}
    me = [sys.executable, str(Path(__file__).resolve()), "--learner", args.learner, "--cache", args.cache]
    done = subprocess.run(me + ["--train-only"], env=env, check=True, capture_output=True, text=True)
    print("train:", done.stdout.strip(), flush=True)
    for r in range(args.repeats):
        for b in args.budgets:
            load = os.getloadavg()[0]
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run(me + ["--measure", b], env=env, check=False, capture_output=True, text=True)
            if p.returncode:
                raise RuntimeError(f"measurement at budget {b} failed: {p.stderr.strip()[-2000:]}")
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            row = {**json.loads(p.stdout.strip().splitlines()[-1]), "repeat": r, "learner": args.learner,
                   "src": src, "tag": args.tag, "load_before": round(load, 2),
                   "process_cpu_seconds": round((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), 2)}
            with args.out.open("a") as fh:  # one line per measurement: a killed run keeps what it finished
                fh.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
