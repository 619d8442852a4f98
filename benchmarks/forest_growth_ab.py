"""Two revisions of the forest kernel, alternating process by process: CPU seconds of the same work, paired.

Each revision's ``_forest_native.c`` (``git show REV:...``; ``--new WORKTREE``, the default, for the checkout's
own source) is compiled as ``setup.py`` compiles the variant this CPU runs (``_kernel_flags.compile_with``), then
``--pairs`` pairs of child processes run the work, one with each build, the order inside a pair alternating; a
child times ``--repeat`` calls (after an untimed warm-up) and reports the median CPU and wall seconds, the load and
an md5 of its output, so that the two builds can be checked to give the same numbers bit for bit. Two works:

* ``kernel``: ``RandomForest(n_estimators=100, n_threads=1).fit_predict_many`` on the lira_rf bench's 2,000
  Adult rows (``bench_lira_vs_sacroml.split(1000, seed)``), ``--models`` random halves of them, queried on all
  2,000 rows: the kernel's grow-and-query call on one thread (CPU = this thread's time);
* ``lira``: leakaudit's side of ``bench_lira_vs_sacroml.py --model rf --seed S`` (its ``ours`` job:
  ``fit_reference_models`` of 100 forests on the 2,000 rows, 2 threads, then offline LiRA on the trees' votes),
  scored against a target trained as the SACRO-ML driver trains it (``RandomForestClassifier(n_estimators=100,
  random_state=S)`` on the members); CPU = the process's time (both threads); AUC and TPR at 0.1 % FPR printed.

The ratio new / old of each pair's CPU seconds is the figure (the machine is shared: the ratio of paired runs
is what counts), given as a mean with its 95 % t-interval and as a median.

Usage: .venv/bin/python benchmarks/forest_growth_ab.py kernel [--old HEAD~1] [--new WORKTREE] [--pairs 8]
       .venv/bin/python benchmarks/forest_growth_ab.py lira --seed 0 [--pairs 6]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

SOURCE = "src/leakaudit/learners/_forest_native.c"


def build(rev: str, out_dir: Path) -> Path:
    """The forest kernel of ``rev`` (a git revision, or WORKTREE for the checkout's files) compiled as the variant
    this CPU runs."""
    from leakaudit.learners import _forest_native
    from leakaudit.learners._kernel_flags import DEPENDS, compile_with

    variant = _forest_native.KERNEL.load().variant
    src = out_dir / f"src_{len(list(out_dir.iterdir()))}"
    src.mkdir()
    for name in (Path(SOURCE).name, *DEPENDS["forest"]):  # the kernel's source and the headers it includes
        path = str(Path(SOURCE).with_name(name))
        text = (C.ROOT / path).read_text() if rev == "WORKTREE" else subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=C.ROOT, check=True, capture_output=True, text=True).stdout
        (src / name).write_text(text)
    return compile_with("forest", variant, [], src / "forest.so", source_dir=src)


def child(a) -> None:
    """One process: the work with the library at ``a.lib``; prints one JSON line."""
    import hashlib
    import warnings

    from leakaudit.learners import RandomForest, _forest_native

    lib = _forest_native.KERNEL.open_file(a.lib, _forest_native.KERNEL.load().variant)
    _forest_native.KERNEL.load = lambda: lib
    import bench_lira_vs_sacroml as B

    Xtr, ytr, Xte, yte = B.split(1000, a.seed)
    X, y = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
    if a.work == "kernel":
        rng = np.random.default_rng(a.seed)
        subsets = [np.sort(rng.permutation(len(y))[: len(y) // 2]) for _ in range(a.models)]
        learner = RandomForest(n_estimators=100, n_threads=1)

        def job():
            return learner.fit_predict_many(X, y, subsets, list(range(a.models)), X, n_classes=2)

        clock = time.thread_time
    else:
        from sklearn.ensemble import RandomForestClassifier

        from leakaudit.membership._base import fit_reference_models
        from leakaudit.membership.lira import LiRA

        target = RandomForestClassifier(n_estimators=100, random_state=a.seed).fit(Xtr, ytr)
        probs = np.vstack([target.predict_proba(Xtr), target.predict_proba(Xte)])
        learner = RandomForest(n_estimators=100)

        def job():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                refs = fit_reference_models(learner, X, y, 100, n_classes=2, random_state=a.seed)
                return LiRA(online=False, votes=100).score(probs, y, refs.probs, refs.in_mask).scores_array

        clock = time.process_time
    out = job()
    cpus, walls = [], []
    for _ in range(a.repeat):
        c0, t0 = clock(), time.perf_counter()
        out = job()
        cpus.append(clock() - c0)
        walls.append(time.perf_counter() - t0)
    res = {"cpu": float(np.median(cpus)), "wall": float(np.median(walls)), "load": C.loadavg(),
           "md5": hashlib.md5(np.ascontiguousarray(out).tobytes()).hexdigest()[:12]}
    if a.work == "lira":
        res.update(C.quality(np.r_[np.ones(len(ytr), int), np.zeros(len(yte), int)], out))
    print(json.dumps(res))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", choices=("kernel", "lira"))
    ap.add_argument("--old", default="HEAD~1", help="git revision of the old kernel")
    ap.add_argument("--new", default="WORKTREE", help="git revision of the new kernel (WORKTREE: the checkout's)")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3, help="timed calls a process (their median is its figure)")
    ap.add_argument("--models", type=int, default=20, help="kernel: forests of 100 trees")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child-lib", dest="lib", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.lib is not None:
        return child(a)
    from scipy import stats

    with tempfile.TemporaryDirectory() as tmp:
        libs = {"old": build(a.old, Path(tmp)), "new": build(a.new, Path(tmp))}
        print(f"{a.work}, seed {a.seed}: old = {a.old}, new = {a.new}; {a.pairs} pairs of processes, median of "
              f"{a.repeat} calls each; load average {C.loadavg():.1f}", flush=True)
        runs = {"old": [], "new": []}
        for i in range(a.pairs):
            for name in (("old", "new") if i % 2 == 0 else ("new", "old")):
                cmd = [sys.executable, __file__, a.work, "--child-lib", str(libs[name]), "--seed", str(a.seed),
                       "--repeat", str(a.repeat), "--models", str(a.models)]
                runs[name].append(json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                                            text=True).stdout.strip().splitlines()[-1]))
            o, n = runs["old"][-1], runs["new"][-1]
            print(f"  pair {i + 1}: old {o['cpu']:.3f} s CPU ({o['wall']:.3f} wall), new {n['cpu']:.3f} s CPU "
                  f"({n['wall']:.3f} wall), new/old {n['cpu'] / o['cpu']:.3f}, load {n['load']:.1f}", flush=True)
    r = np.array([n["cpu"] / o["cpu"] for o, n in zip(runs["old"], runs["new"])])
    lo, hi = stats.t.interval(0.95, len(r) - 1, loc=r.mean(), scale=stats.sem(r)) if len(r) > 1 else (np.nan,) * 2
    hashes = {name: sorted({x["md5"] for x in v}) for name, v in runs.items()}
    for name, v in runs.items():
        q = f", AUC {v[0]['auc']:.3f}, TPR at 0.1 % FPR {100 * v[0]['tpr_at_0.1%fpr']:.1f} %" if "auc" in v[0] else ""
        print(f"{name}: CPU median {np.median([x['cpu'] for x in v]):.3f} s, wall median "
              f"{np.median([x['wall'] for x in v]):.3f} s, output md5 {hashes[name]}{q}")
    print(f"CPU new/old: mean {r.mean():.3f} [{lo:.3f}, {hi:.3f}] (95 % t), median {np.median(r):.3f}; "
          f"same output: {hashes['old'] == hashes['new'] and len(hashes['old']) == 1}")


if __name__ == "__main__":
    main()
