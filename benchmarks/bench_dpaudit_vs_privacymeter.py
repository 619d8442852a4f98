"""One-run DP auditing: leakaudit's bound beside ML Privacy Meter's, on the same canary scores whose truth is known.

ML Privacy Meter's DP audit (``run_audit_dp.py`` in its GitHub repository; the PyPI release 1.0.1 has none) turns
canary scores into an epsilon lower bound with Steinke, Nasr & Jagielski's Appendix D code
(``audit.p_value_DP_audit`` / ``get_eps_audit``) and reports the largest bound over a grid of guess counts
(``audit.compute_abstain_attack_results``: every (k_neg, k_pos) on a sqrt(m) step, each tested at p = 0.05, delta 0
by default). leakaudit's ``dpaudit.one_run_audit_scores`` tests a grid fixed before the scores are seen, each pair
at beta / len(grid) (Bonferroni), so its maximum holds at 95 %.

The peer's three functions are read from its checkout at run time (``--repo``: a clone or the bare mirror that
``fetch`` brings; nothing of it is committed here) and executed as they are, with numpy, math and scipy; the rest
of its ``audit.py`` (torch, its attacks and plots) is not imported.

Canary mechanisms whose epsilon is known exactly, m canaries each included with probability 1/2:

* ``null``: scores independent of inclusion (epsilon 0: any bound above 0 is a false claim of leakage);
* ``rr-E``: randomized response with epsilon E (each canary's output is its inclusion bit, flipped with
  probability 1 / (1 + e^E)), plus independent N(0, 0.01^2) noise to break ties (post-processing keeps E-DP).

For each case and seed both tools get the same scores; the table gives the mean bound, how often it exceeds the
true epsilon (a sound 95 % bound may do so in at most 5 % of runs; Clopper-Pearson interval), and the CPU time
per audit.

Usage: ``python benchmarks/bench_dpaudit_vs_privacymeter.py [--runs 50] [--m 1000] [--repo PATH]``
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.stats

HERE = Path(__file__).resolve().parent
DEFAULT_REPO = os.environ.get("LEAKAUDIT_PRIVACYMETER_REPO", "/work/.mirror/privacytrustlab+ml_privacy_meter/repo")
PEER_FUNCTIONS = ("p_value_DP_audit", "get_eps_audit", "compute_abstain_attack_results")


def load_peer(repo: str) -> tuple[dict, str]:
    """ML Privacy Meter's audit functions from ``repo``'s ``audit.py`` (a work tree or a bare git directory)."""
    path = Path(repo)
    if (path / "audit.py").exists():
        source = (path / "audit.py").read_text()
        commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    else:
        source = subprocess.run(["git", f"--git-dir={repo}", "show", "HEAD:audit.py"], capture_output=True,
                                text=True, check=True).stdout
        commit = subprocess.run(["git", f"--git-dir={repo}", "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout
    tree = ast.parse(source)
    chosen = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in PEER_FUNCTIONS]
    missing = set(PEER_FUNCTIONS) - {n.name for n in chosen}
    if missing:
        raise SystemExit(f"{repo}: audit.py lacks {sorted(missing)}")
    namespace = {"np": np, "math": math, "scipy": scipy}
    exec(compile(ast.Module(body=chosen, type_ignores=[]), "ml_privacy_meter/audit.py", "exec"), namespace)
    return namespace, commit.strip()


def canaries(case: str, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(inclusion in {0, 1}, scores, true epsilon) of one run."""
    included = rng.random(m) < 0.5
    if case == "null":
        return included.astype(int), rng.standard_normal(m), 0.0
    eps = float(case.split("-", 1)[1])
    keep = rng.random(m) < math.exp(eps) / (1 + math.exp(eps))
    out = np.where(keep, included, ~included).astype(float)
    return included.astype(int), out + 0.01 * rng.standard_normal(m), eps


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50, help="seeds per case")
    ap.add_argument("--m", type=int, default=1000, help="canaries per run")
    ap.add_argument("--cases", nargs="+", default=["null", "rr-1", "rr-2", "rr-4"])
    ap.add_argument("--repo", default=DEFAULT_REPO, help="ML Privacy Meter checkout or bare mirror")
    ap.add_argument("--out", default=str(HERE / "results" / "dpaudit_vs_privacymeter.json"))
    ap.add_argument("--quick", action="store_true", help="3 runs of 200 canaries per case")
    args = ap.parse_args(argv)
    if args.quick:
        args.runs, args.m = 3, 200
    from leakaudit.dpaudit import one_run_audit_scores
    from leakaudit.metrics import clopper_pearson

    peer, commit = load_peer(args.repo)
    rows = []
    for case in args.cases:
        ours, theirs, t_ours, t_theirs, truth = [], [], [], [], 0.0
        for seed in range(args.runs):
            member, scores, truth = canaries(case, args.m, np.random.default_rng([seed, args.m]))
            t0 = time.process_time()
            ours.append(one_run_audit_scores(2 * member - 1, scores, delta=0.0, beta=0.05).epsilon_lower_bound)
            t1 = time.process_time()
            theirs.append(float(peer["compute_abstain_attack_results"](scores, member)["eps_opt"]))
            t2 = time.process_time()
            t_ours.append(t1 - t0)
            t_theirs.append(t2 - t1)
        row = {"case": case, "true_epsilon": truth, "m": args.m, "runs": args.runs}
        for name, vals, times in (("leakaudit", ours, t_ours), ("privacymeter", theirs, t_theirs)):
            v = np.asarray(vals)
            over = int(np.sum(v > truth + 1e-9))
            row[name] = {"mean_bound": float(v.mean()), "sd_bound": float(v.std(ddof=1)) if len(v) > 1 else None,
                         "bounds": [float(x) for x in v], "runs_above_truth": over,
                         "share_above_truth_interval": list(clopper_pearson(over, len(v))),
                         "cpu_seconds_per_audit": float(np.median(times))}
        rows.append(row)
        print(f"{case}: true {truth:g}; leakaudit mean {row['leakaudit']['mean_bound']:.3f}, above truth "
              f"{row['leakaudit']['runs_above_truth']}/{args.runs}, {row['leakaudit']['cpu_seconds_per_audit']:.3f}"
              f" s; ML Privacy Meter mean {row['privacymeter']['mean_bound']:.3f}, above truth "
              f"{row['privacymeter']['runs_above_truth']}/{args.runs}, "
              f"{row['privacymeter']['cpu_seconds_per_audit']:.3f} s", flush=True)
    result = {"benchmark": "dpaudit_vs_privacymeter", "peer": "ml_privacy_meter (GitHub)", "peer_commit": commit,
              "beta": 0.05, "delta": 0.0, "rows": rows, "load_average": list(os.getloadavg()),
              "python": sys.version.split()[0]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
