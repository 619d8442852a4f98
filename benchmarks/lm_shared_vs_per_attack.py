"""The language-model audit's shared scoring against per-attack scoring (issue 89; Fast-MIA, ACL 2026, runs nine LM
attacks from one shared log-probability cache about 5x faster than scoring per attack).

On the demo recipe of ``lm_score_cache.py`` (tiny: 100 members, 100 non-members, 300 public texts, base pre-trained 2
epochs = the one reference model, target fine-tuned 10 epochs, seed 0; ``--size small``: the demo's own model, 200 +
200 members and non-members, 1,000 public texts), over the same member + non-member texts:

(a) shared: the target scores every text once (with the next-token distribution's moments) and the reference once
    (without), and every registered text attack runs from those scores (``run_lm_attacks``): what the audit does.
(b) per attack: for each registered text attack, the texts are scored again under the models it needs (the target,
    with the moments only when the attack needs them; the reference when it needs one) and that attack alone runs:
    what a user of one-attack-at-a-time tools pays.
(c) ``leakaudit.audit`` on the model, texts and reference at profile smoke, for context: with its default extraction
    step and with ``extraction=False``.

Scoring uses the audit's settings (context, 4,096-token batches, ``leakaudit.audit.steps.lm.threads()`` torch threads:
one per core the process may use). ``--threads N`` sets every path's torch threads, the audit's included (its
``threads()`` is replaced for the run): on a shared, loaded machine two threads cost several times one thread's CPU
per pass (spinning while the other thread waits for a core), which swamps what is measured here; docs/lm.md's
tables use ``--threads 1``. (a) and (b) must give identical scores per attack (asserted, exact equality). One untimed
warm-up of every path first (imports, lazy initialisation), then ``--repeats`` rounds, each running the paths in turn
(round robin, so that a change in the machine's load falls on all of them). CPU = user + sys of this process and
its threads (``resource.getrusage``), plus finished children; the 1-minute load average is recorded before each run.
Results: ``benchmarks/results/lm_shared_vs_per_attack_<size>_t<threads>.json``; docs/lm.md ("Shared scoring against
per-attack scoring").

Usage: .venv/bin/python benchmarks/lm_shared_vs_per_attack.py [--repeats 3] [--size tiny|small] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

# the demo recipes: tiny as benchmarks/lm_score_cache.py, small as the demo (docs/lm.md, "The demo model")
RECIPES = {"tiny": dict(n_members=100, n_nonmembers=100, n_public=300, pretrain_epochs=2, epochs=10),
           "small": dict(n_members=200, n_nonmembers=200, n_public=1000, pretrain_epochs=2, epochs=10)}


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


class Clock:
    def __enter__(self):
        self.load = os.getloadavg()[0]
        self.c0, self.t0 = _cpu(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu, self.wall = _cpu() - self.c0, time.perf_counter() - self.t0
        return False


def shared(lm, ref, texts, score_kw, k):
    """(a): one pass per model, every attack from it. Returns (scores, seconds in scoring, seconds in attacks)."""
    from leakaudit.lm.attacks import run_lm_attacks
    from leakaudit.lm.score import score_texts

    with Clock() as s:
        ts = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, **score_kw)
        rs = [score_texts(ref.model, ref.tokenizer, texts, max_length=ref.context_length, distribution=False,
                          **score_kw)]
    with Clock() as a:
        out = run_lm_attacks(ts, texts, rs, k=k)
    return out, {"scoring_cpu": s.cpu, "attacks_cpu": a.cpu, "passes": 2}


def per_attack(lm, ref, texts, score_kw, k, names):
    """(b): per attack, the passes it needs, then the attack alone."""
    from leakaudit.lm.score import score_texts
    from leakaudit.membership import ATTACKS

    out, scoring, attacks, passes = {}, 0.0, 0.0, 0
    for name in names:
        needs = ATTACKS.get(name).needs
        with Clock() as s:
            ts = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length,
                             distribution="distribution" in needs, **score_kw)
            rs = ([score_texts(ref.model, ref.tokenizer, texts, max_length=ref.context_length, distribution=False,
                               **score_kw)] if "references" in needs else [])
        with Clock() as a:
            out[name] = ATTACKS.get(name).factory(ts, texts, rs, k)
        scoring, attacks, passes = scoring + s.cpu, attacks + a.cpu, passes + 1 + len(rs)
    return out, {"scoring_cpu": scoring, "attacks_cpu": attacks, "passes": passes}


def whole_audit(lm, ref, mem, non, extraction):
    import leakaudit

    r = leakaudit.audit(lm.model, mem, non, tokenizer=lm.tokenizer, references=[ref.model], profile="smoke",
                        extraction=extraction, verbose=False)
    stages = {k: round(float(v), 3) for k, v in (r.timings or {}).items()}
    return None, {"stages": stages, "verdict": r.verdict.outcome}


def stats(v):
    return {"min": float(np.min(v)), "median": float(np.median(v)), "max": float(np.max(v))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--size", default="tiny", choices=tuple(RECIPES))
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads of every path, the audit's included (default: the audit's, one per core "
                         "this process may use)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    import leakaudit.audit.steps.lm as lm_step
    from leakaudit.audit.steps.lm import BATCH_TOKENS, MIN_K, threads
    from leakaudit.lm.demo import build_demo
    from leakaudit.lm.load import load_causal_lm
    from leakaudit.membership import text_attacks

    hf_logging.set_verbosity_error()
    n_threads = a.threads or threads()
    if a.threads:  # the audit's scoring and extraction read it at call time
        lm_step.threads = lambda: a.threads
    tmp = Path(tempfile.mkdtemp())
    with Clock() as build:
        d = build_demo(tmp / "demo", size=a.size, seed=a.seed, n_threads=1, **RECIPES[a.size])
    print(f"built the {a.size} demo: {build.cpu:.1f} CPU s, {build.wall:.1f} s wall", flush=True)
    read = lambda p: [json.loads(line)["text"] for line in open(p)]  # noqa: E731
    mem, non = read(d.members), read(d.nonmembers)
    texts = mem + non
    lm, ref = load_causal_lm(d.target_dir), load_causal_lm(d.base_dir)
    score_kw = dict(batch_tokens=BATCH_TOKENS, n_threads=n_threads)
    names = text_attacks(True, True)
    paths = {"(a) shared: 2 passes, every attack": lambda: shared(lm, ref, texts, score_kw, MIN_K),
             "(b) per attack": lambda: per_attack(lm, ref, texts, score_kw, MIN_K, names),
             "(c) leakaudit.audit, smoke": lambda: whole_audit(lm, ref, mem, non, True),
             "(c') leakaudit.audit, smoke, extraction=False": lambda: whole_audit(lm, ref, mem, non, False)}
    for f in paths.values():  # warm-up, untimed
        f()
    runs = {p: [] for p in paths}
    for rnd in range(a.repeats):
        for p, f in paths.items():
            with Clock() as c:
                scores, info = f()
            runs[p].append({"cpu": c.cpu, "wall": c.wall, "load": c.load, **info})
            if scores is not None:
                runs[p][-1]["_scores"] = scores
            print(f"round {rnd}: {p}: {c.cpu:.2f} CPU s, {c.wall:.2f} s wall, load {c.load:.2f}", flush=True)
    # (a) and (b): the same attacks, the same scores
    sa, sb = runs[list(paths)[0]], runs[list(paths)[1]]
    for ra, rb in zip(sa, sb):
        assert list(ra["_scores"]) == list(rb["_scores"]) == names, (list(ra["_scores"]), list(rb["_scores"]))
        for n in names:
            assert np.array_equal(ra["_scores"][n], rb["_scores"][n]), n
    for r in sa + sb:
        del r["_scores"]
    base = stats([r["cpu"] for r in sa])["median"]
    summ = {p: {"cpu_s": stats([r["cpu"] for r in rs]), "wall_s": stats([r["wall"] for r in rs]),
                "ratio_to_shared_cpu": stats([r["cpu"] for r in rs])["median"] / base,
                "ratio_to_shared_wall": stats([r["wall"] for r in rs])["median"]
                / stats([r["wall"] for r in sa])["median"]} for p, rs in runs.items()}
    loads = [r["load"] for rs in runs.values() for r in rs]
    res = {"benchmark": "lm_shared_vs_per_attack", "size": a.size, "recipe": RECIPES[a.size], "seed": a.seed,
           "n_texts": len(texts), "n_tokens": None, "attacks": names, "n_threads": n_threads,
           "repeats": a.repeats, "build_cpu_s": round(build.cpu, 1), "load_1min": stats(loads), "summary": summ,
           "runs": runs, "identical_scores": True}
    from leakaudit.lm.score import score_texts

    res["n_tokens"] = int(score_texts(ref.model, ref.tokenizer, texts, max_length=ref.context_length,
                                      distribution=False, **score_kw).n_tokens.sum())
    path = C.write_result(f"lm_shared_vs_per_attack_{a.size}_t{n_threads}", res)
    f3 = lambda s: f"{s['min']:.2f} / {s['median']:.2f} / {s['max']:.2f}"  # noqa: E731
    print(f"\n{a.size} demo: {len(texts)} texts, {res['n_tokens']:,} scored tokens per pass, {len(names)} attacks, "
          f"{n_threads} torch thread(s); load average (1 min) {min(loads):.1f}-{max(loads):.1f}\n")
    print("| path | CPU s min / median / max | wall s min / median / max | ratio to (a), CPU median (wall) |")
    print("|---|---|---|---|")
    for p, s in summ.items():
        print(f"| {p} | {f3(s['cpu_s'])} | {f3(s['wall_s'])} | x{s['ratio_to_shared_cpu']:.2f} "
              f"(x{s['ratio_to_shared_wall']:.2f}) |")
    for p in list(paths)[:2]:
        rs = runs[p]
        print(f"{p}: {rs[0]['passes']} passes; scoring {f3(stats([r['scoring_cpu'] for r in rs]))} CPU s, "
              f"attacks {f3(stats([r['attacks_cpu'] for r in rs]))} CPU s")
    for p in list(paths)[2:]:
        print(f"{p}: stages (last run) {runs[p][-1]['stages']}")
    print(f"(a) and (b) gave identical scores for all {len(names)} attacks in every round; wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
