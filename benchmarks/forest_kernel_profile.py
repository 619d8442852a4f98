"""Where a forest tree's time goes, by node size: one thread, the kernel called from numba (no dispatch).

The kernel is the one RandomForest uses: the C twin (``_forest_native.c``) when it builds, else (or with
``--numba``) the numba ``_grow_tree``.

The SACRO-ML forest bench grows 100 forests x 100 trees on halves of 2,000 Adult rows. This script grows
``--trees`` such trees (bootstrap of 1,000 rows, ``max_features="sqrt"``, fully grown) with the compiled
``_grow_tree`` and times them while ``min_samples_split`` (then ``max_depth``) cuts the trees short: the
difference between two cut-offs is what the nodes between them cost. ``min_samples_split`` = 10**9 leaves
only the per-tree set-up (bootstrap, the root's sums). Best of ``--reps`` runs per setting; the
trees differ between settings (that is the point), so the node counts are printed beside the times.

Usage: .venv/bin/python benchmarks/forest_kernel_profile.py [--trees 2000] [--reps 3] [--numba]
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
    ap.add_argument("--numba", action="store_true", help="the numba kernel even when the C twin builds")
    a = ap.parse_args(argv)
    from numba import njit

    from leakaudit.learners import RandomForest
    from leakaudit.learners import _forest_native
    from leakaudit.learners import _forest_numba as K
    from leakaudit.learners import forest as FM
    from bench_lira_vs_sacroml import split

    Xtr, ytr, Xte, yte = split(1000, 0)  # the SACRO-ML bench's 2,000 rows (seed 0)
    X32, yv = np.vstack([Xtr, Xte]).astype(np.float32), np.concatenate([ytr, yte]).astype(np.int64)
    rf = RandomForest(n_estimators=100)
    p = rf._check_params(X32.shape[1])
    codes, vals, voff = FM.feature_codes(X32)
    maxnv = int(np.diff(voff).max())
    bslot, bptr, bidx = FM.binary_rows(codes, voff)
    sub = np.sort(np.random.default_rng(1).permutation(2000)[:1000]).astype(np.int64)
    n_boot, _, msl = rf._per_model(sub.size)
    seeds = K.tree_seeds(np.arange(-(-a.trees // 100), dtype=np.int64), 100, FM._MAX_INT)[: a.trees]
    max_nodes = 2 * sub.size - 1
    scratch = (np.empty(max_nodes, np.int32), np.empty(max_nodes), np.empty(max_nodes, np.int32),
               np.empty(max_nodes, np.int32), np.empty((max_nodes, 2)))
    nbin = int(bslot.max()) + 1
    work = K._grow_work(sub.size, codes.shape[0], nbin, maxnv, max_nodes, 2)
    native = None if a.numba else _forest_native.grow_function(codes.dtype)
    grow = K._grow_one

    @njit
    def many(data, seeds, n_boot, max_features, max_depth, mss, msl, crit, maxnv, binary, scratch, work, native):
        codes, vals, voff, yv, sub = data
        bslot, bptr, bidx = binary
        fo, th, lo, ro, vo = scratch
        nodes = 0
        for s in seeds:
            nodes += grow(native, codes, vals, voff, yv, sub, s, n_boot, True, max_features, max_depth, mss, msl,
                          crit, maxnv, bslot, bptr, bidx, nbin, fo, th, lo, ro, vo, sub.size, work)
        return nodes

    def run(max_depth, mss):
        best = np.inf
        for _ in range(a.reps):
            t0 = time.perf_counter()
            nodes = many((codes, vals, voff, yv, sub), seeds, n_boot, p["max_features"], max_depth, mss, msl,
                         p["crit"], maxnv, (bslot, bptr, bidx), scratch, work, native)
            best = min(best, time.perf_counter() - t0)
        return best / len(seeds) * 1e6, nodes / len(seeds)

    run(p["max_depth"], 2)  # compile
    print(f"{len(seeds)} trees, 1 thread, best of {a.reps}, {'numba' if native is None else 'native C'} kernel; "
          f"load average {C.loadavg():.1f}")
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
