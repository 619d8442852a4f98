"""Where a forest tree's time goes, by node size: one thread, the compiled forest kernel's grow worker.

The SACRO-ML forest bench grows 100 forests x 100 trees on halves of 2,000 Adult rows. This script grows
``--trees`` such trees (bootstrap of 1,000 rows, ``max_features="sqrt"``, fully grown) with the kernel
(``_forest_native.grow``, one worker) and times them while ``min_samples_split`` (then ``max_depth``) cuts the
trees short: the difference between two cut-offs is what the nodes between them cost. ``min_samples_split`` =
10**9 leaves only the per-tree set-up (bootstrap, the root's sums, the breadth-first copy). Best of ``--reps``
runs per setting; the trees differ between settings (that is the point), so the node counts are printed beside
the times.

Usage: .venv/bin/python benchmarks/forest_kernel_profile.py [--trees 2000] [--reps 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    from leakaudit.learners import RandomForest, _forest_native
    from leakaudit.learners import forest as FM
    from bench_lira_vs_sacroml import split

    if _forest_native.library() is None:
        raise SystemExit(f"the compiled forest kernel is not available: {_forest_native.KERNEL.reason}")
    Xtr, ytr, Xte, yte = split(1000, 0)  # the SACRO-ML bench's 2,000 rows (seed 0)
    X32, yv = np.vstack([Xtr, Xte]).astype(np.float32), np.concatenate([ytr, yte]).astype(np.int64)
    rf = RandomForest(n_estimators=100)
    p = rf._check_params(X32.shape[1])
    codes, vals, voff = FM.feature_codes(X32)
    bslot, bptr, bidx = FM.binary_rows(codes, voff)
    sub = np.sort(np.random.default_rng(1).permutation(2000)[:1000]).astype(np.int64)
    n_boot, _, msl = rf._per_model(sub.size)
    T = a.trees
    seeds = FM.tree_seeds([0], T)  # one model of T trees
    sub_ptr = np.array([0, sub.size], np.int64)
    max_nodes = 2 * sub.size - 1
    bufs = (np.empty((T, max_nodes), np.int32), np.empty((T, max_nodes), np.float32),
            np.empty((T, max_nodes), np.int32), np.empty((T, max_nodes), np.int32),
            np.empty((T, (max_nodes + 1) // 2, 2), np.float64))
    nn, depth = np.zeros(T, np.int64), np.zeros(T, np.int64)
    nb, ms, ml = (np.array([v], np.int64) for v in (n_boot, 2, msl))

    def run(max_depth, mss):
        ms[0] = mss
        forest = _forest_native.Forest(
            codes=codes.ctypes.data, wide=int(codes.dtype == np.int32), n=codes.shape[1], F=codes.shape[0],
            vals=vals.ctypes.data, voff=voff.ctypes.data, yv=yv.ctypes.data, sub_rows=sub.ctypes.data,
            sub_ptr=sub_ptr.ctypes.data, n_models=1, n_trees=T, tree_seed=seeds.ctypes.data, n_boot=nb.ctypes.data,
            mss=ms.ctypes.data, msl=ml.ctypes.data, bootstrap=1, max_features=p["max_features"],
            max_depth=max_depth, crit=p["crit"], maxnv=int(np.diff(voff).max()), bslot=bslot.ctypes.data,
            bptr=bptr.ctypes.data, bidx=bidx.ctypes.data, nbin=int(bslot.max() + 1), C=2, max_nodes=max_nodes,
            m_max=sub.size, hst_rows=FM._HST_ROWS)
        best = np.inf
        for _ in range(a.reps):
            t0 = time.perf_counter()
            _forest_native.grow(forest, 0, T, bufs, nn, depth, 1)
            best = min(best, time.perf_counter() - t0)
        return best / T * 1e6, nn.mean()

    run(p["max_depth"], 2)  # warm-up (first touches of the buffers)
    print(f"{T} trees, 1 thread, best of {a.reps}, compiled C kernel; load average {C.loadavg():.1f}")
    print("min_samples_split | us a tree | nodes a tree")
    for mss in (10**9, 128, 64, 32, 16, 8, 4, 2):
        us, nodes = run(p["max_depth"], mss)
        print(f"{mss:>17} | {us:9.1f} | {nodes:12.0f}")
    print("max_depth | us a tree | nodes a tree")
    for md in (0, 1, 2, 4, 8, 12, 16, p["max_depth"]):
        us, nodes = run(md, 2)
        print(f"{md:>9} | {us:9.1f} | {nodes:12.0f}")


if __name__ == "__main__":
    main()
