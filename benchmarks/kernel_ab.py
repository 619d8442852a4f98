"""Old against new in one process, alternating: kernel changes of sessions 11-13, measured where they act.

* ``mlp-rows``: the native MLP kernel taking a mini-batch's rows 4 at a time (2 at 80-96 hidden units; the
  default build) against one row at a time (the same source built with ``-DLEAKAUDIT_ROW_GROUP=1``). Work: the
  Privacy Meter bench's reference models (``bench_reference_vs_privacymeter.py``: Adult, ``--refs`` nets of
  ``--hidden`` tanh units on halves of 2,000 population rows, 50 epochs of Adam in batches of 200) trained by
  ``TorchMLP.fit_many`` on ``--threads`` threads. Both builds give the same models bit for bit (checked here too).
* ``forest-query``: ``RandomForest.fit_predict_many`` with the query rows as bitsets (the default) against
  each row descending each tree (``forest._BITSET_BYTES = 0``). Work: the SACRO-ML forest bench's shadow
  forests (``--models`` forests of 100 trees on halves of 2,000 Adult rows, queried on all 2,000), and the same
  forests queried on 8 rows (growth alone), so the query's own time is the difference. Same outputs bit for bit.
* ``forest-native``: the same work with scikit-learn's ``RandomForestClassifier`` (``RandomForest(backend="sklearn")``,
  the reference, converted to a bank and queried with numpy) against the compiled kernel (``_forest_native.c``),
  and the bank path (``fit_many``). The same trees; outputs to 1e-14 (the largest difference is printed).

* ``mlp-onehot`` (session 13): the native MLP kernel with one-hot groups (each group's most frequent column dropped
  from the rows and added back through the bias and a table of weight differences, ``_mlp_native.onehot_prepare``)
  against the full rows. Work: that of ``mlp-rows``. The same models to float32 rounding (the largest weight
  difference is printed).
* ``forest-table`` (issue 66): the forest kernel reading a node's one-hot rows from its fixed-width uint8 table (the
  default build) against the CSR lists (the same source built with ``-DLEAKAUDIT_FOREST_CSR=1``). Work: that of
  ``forest-query`` (``--models`` forests, queried on the 2,000 rows). Same outputs bit for bit (checked here too).

* ``mlp-prefix`` (issue 66): the native MLP kernel adding the inputs that a group of rows all list at the same
  positions (Adult's numeric columns) in one pass over the group (the default build) against scatter-adding row
  after row (the same source built with ``-DLEAKAUDIT_SHARED_PREFIX=0``). Work: ``bench_machine_limit.py``'s
  ``mlp_sparse`` case on one thread (64 nets of 64 tanh units on halves of 2,000 Adult rows, 20 epochs of Adam in
  batches of 200); the rate is given per CPU second as a fraction of torch.mm's 1-thread float32 peak, measured
  before and after, with the performed FLOPs counted as that bench counts them. Same models bit for bit (checked).
* ``mlp-vec16`` (issue 66): the same work and report, the AVX-512 build's rows in 16-lane vectors (the default)
  against 8-lane ones (``-DLEAKAUDIT_VEC16=0``; on a CPU without AVX-512 both builds are the 8-lane one);
  ``--dense``: on dense rows (``bench_machine_limit``'s ``mlp_1thread`` case, model FLOPs), where the first layer's
  register blocks are 16-lane too.

Each variant runs ``--reps`` times, alternating, after one warm-up each; the table gives min and median wall
seconds and the median of the paired ratios new / old (this VM's speed drifts by 10-25 % within minutes).

Usage: .venv/bin/python benchmarks/kernel_ab.py mlp-rows [--hidden 64] [--refs 16] [--threads 1] [--reps 9]
       .venv/bin/python benchmarks/kernel_ab.py mlp-prefix [--reps 9]
       .venv/bin/python benchmarks/kernel_ab.py mlp-vec16 [--reps 9] [--dense]
       .venv/bin/python benchmarks/kernel_ab.py mlp-onehot [--hidden 64] [--refs 16] [--threads 2] [--reps 15]
       .venv/bin/python benchmarks/kernel_ab.py forest-query [--models 20] [--threads 2] [--reps 5]
       .venv/bin/python benchmarks/kernel_ab.py forest-native [--models 20] [--threads 2] [--reps 5]
       .venv/bin/python benchmarks/kernel_ab.py forest-table [--models 20] [--threads 1] [--reps 9]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def _alternate(variants: dict, reps: int) -> dict:
    """{name: (wall seconds of each rep, last output)}, the variants called in turn ``reps`` times after a warm-up."""
    outs = {name: fn() for name, fn in variants.items()}
    times: dict = {name: [] for name in variants}
    for _ in range(reps):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            outs[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: (np.array(times[name]), outs[name]) for name in variants}


def _report(res: dict, old: str) -> None:
    base = res[old][0]
    for name, (t, _) in res.items():
        print(f"{name:>28}: min {t.min():.4f} s  median {np.median(t):.4f} s  "
              f"new/old (median of pairs) {np.median(t / base):.3f}")


def _mlp_work(hidden: int, refs: int, threads: int):
    """The Privacy Meter bench's reference-model work: 2,000 Adult rows (seed 0), ``refs`` random halves of them,
    and the learner (``hidden`` tanh units, 50 epochs of Adam in batches of 200, ``threads`` threads)."""
    from leakaudit.learners import TorchMLP

    X, y, _ = C.adult_arrays()
    rng = np.random.default_rng(0)
    pop = rng.permutation(len(y))[:2000]
    Xp, yp = X[pop], y[pop]
    subsets = [np.sort(rng.permutation(2000)[:1000]) for _ in range(refs)]
    learner = TorchMLP(hidden=(hidden,), activation="tanh", mode="fast", epochs=50, batch_size=200, lr=1e-3,
                       n_threads=threads, **C.SKLEARN_MLP)
    return Xp, yp, subsets, learner


def _mlp_builds(definition: str, old: str, new: str) -> dict:
    """{old: the installed variant's source built with ``definition``, new: the installed kernel}."""
    import tempfile

    from leakaudit.learners import _mlp_native
    from leakaudit.learners._kernel_flags import compile_with

    installed = _mlp_native.KERNEL.load()
    with tempfile.TemporaryDirectory() as tmp:
        path = compile_with("mlp", installed.variant, [definition], Path(tmp) / "old.so")
        return {old: _mlp_native.KERNEL.open_file(path, installed.variant), new: installed}


def _mlp_alternate(libs: dict, train, reps: int) -> tuple[dict, bool]:
    """(_alternate's result, whether every build trained the same models bit for bit), ``train()`` (a bank) run on
    each build of ``libs`` in turn."""
    from leakaudit.learners import _mlp_native

    load = _mlp_native.KERNEL.load

    def fit(lib):
        def run():
            _mlp_native.KERNEL.load = lambda: lib
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                bank = train(lib)
            assert bank.info["kernel"] == "native"
            return bank.weights_ + bank.biases_
        return run

    try:
        res = _alternate({name: fit(lib) for name, lib in libs.items()}, reps)
    finally:
        _mlp_native.KERNEL.load = load
    (_, a), (_, b) = res.values()
    return res, all(np.array_equal(u, v) for u, v in zip(a, b))


def mlp_rows(hidden: int, refs: int, threads: int, reps: int) -> None:
    Xp, yp, subsets, learner = _mlp_work(hidden, refs, threads)
    libs = _mlp_builds("-DLEAKAUDIT_ROW_GROUP=1", "rows one at a time", "rows together (default)")
    res, same = _mlp_alternate(libs, lambda lib: learner.fit_many(Xp, yp, subsets, list(range(refs)), n_classes=2),
                               reps)
    print(f"native MLP kernel, {refs} nets of {hidden} tanh units, {threads} thread(s), load {C.loadavg():.1f}; "
          f"same models bit for bit: {same}")
    _report(res, "rows one at a time")


def mlp_sparse_ab(reps: int, definition: str, old: str, new: str, dense: bool = False) -> None:
    """``bench_machine_limit``'s ``mlp_sparse`` case (``dense``: its ``mlp_1thread`` case) on one thread, the source
    built with ``definition`` (``old``) against the installed kernel (``new``), with the rate as a fraction of
    torch.mm's 1-thread peak."""
    import time

    from bench_machine_limit import matmul_peak, mlp_case

    fn, _, _, desc, model_flops, sparse_flops = mlp_case(64, 2000, 20, sparse=not dense, n_threads=1)
    flops = model_flops if dense else sparse_flops
    libs = _mlp_builds(definition, old, new)
    cpu: dict = {name: [] for name in libs}
    names = {id(lib): name for name, lib in libs.items()}

    def train(lib):
        c0 = time.process_time()
        bank = fn()
        cpu[names[id(lib)]].append(time.process_time() - c0)
        return bank

    peaks = [matmul_peak(1)[1]]
    res, same = _mlp_alternate(libs, train, reps)
    peaks.append(matmul_peak(1)[1])
    print(f"{desc}; load {C.loadavg():.1f}; same models bit for bit: {same}")
    print(f"torch.mm 1-thread float32 peak per CPU second: {peaks[0]:.1f} before, {peaks[1]:.1f} after (GFLOP/s)")
    for name, c in cpu.items():
        c = np.array(c[1:])  # after the warm-up call
        rate = flops / c.min() / 1e9
        print(f"{name:>28}: CPU min {c.min():.4f} s, median {np.median(c):.4f} s: {rate:.1f} GFLOP/s per CPU second "
              f"= {rate / max(peaks):.3f}-{rate / min(peaks):.3f} of the peak")
    c_old, c_new = (np.array(c[1:]) for c in cpu.values())
    print(f"CPU new / old, median of pairs: {np.median(c_new / c_old):.3f} (wall below)")
    _report(res, old)


def mlp_onehot(hidden: int, refs: int, threads: int, reps: int) -> None:
    from leakaudit.learners import _mlp_native

    Xp, yp, subsets, learner = _mlp_work(hidden, refs, threads)

    def fit(onehot):
        def run():
            _mlp_native.ONEHOT = onehot
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    bank = learner.fit_many(Xp, yp, subsets, list(range(refs)), n_classes=2)
            finally:
                _mlp_native.ONEHOT = True
            assert bank.info["kernel"] == "native"
            return bank.info["onehot_groups"], bank.weights_ + bank.biases_
        return run

    res = _alternate({"full rows": fit(False), "one-hot groups (default)": fit(True)}, reps)
    (_, (g0, a)), (_, (g1, b)) = res.values()
    diff = max(float(np.abs(u - v).max()) for u, v in zip(a, b))
    print(f"native MLP kernel, {refs} nets of {hidden} tanh units, {threads} thread(s), load {C.loadavg():.1f}; "
          f"one-hot groups {g0} vs {g1}; largest weight difference {diff:.2e}")
    _report(res, "full rows")


def _forest_work(models: int):
    """The SACRO-ML forest bench's data (2,000 Adult rows, seed 0) and ``models`` random halves of it."""
    import bench_lira_vs_sacroml as B

    Xtr, ytr, Xte, yte = B.split(1000, 0)
    X, y = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
    rng = np.random.default_rng(0)
    return X, y, [np.sort(rng.permutation(2000)[:1000]) for _ in range(models)]


def forest_query(models: int, threads: int, reps: int) -> None:
    from leakaudit.learners import RandomForest, forest

    X, y, subsets = _forest_work(models)
    learner = RandomForest(n_estimators=100, n_threads=threads)
    budget = forest._BITSET_BYTES

    def run(bits: bool, nq: int):
        def go():
            forest._BITSET_BYTES = budget if bits else 0
            try:
                return learner.fit_predict_many(X, y, subsets, list(range(models)), X[:nq], n_classes=2)
            finally:
                forest._BITSET_BYTES = budget
        return go

    res = _alternate({"rows descend (2,000 queried)": run(False, 2000), "bitsets (2,000 queried)": run(True, 2000),
                      "growth only (8 queried)": run(True, 8)}, reps)
    same = np.array_equal(res["rows descend (2,000 queried)"][1], res["bitsets (2,000 queried)"][1])
    print(f"{models} forests x 100 trees, {threads} thread(s), load {C.loadavg():.1f}; "
          f"same outputs bit for bit: {same}")
    _report(res, "rows descend (2,000 queried)")
    grow = np.median(res["growth only (8 queried)"][0])
    for name in ("rows descend (2,000 queried)", "bitsets (2,000 queried)"):
        q = np.median(res[name][0]) - grow
        print(f"{name:>28}: query ~{q:.3f} s ({1e6 * q / (100 * models):.1f} us a tree, wall)")


def forest_table(models: int, threads: int, reps: int) -> None:
    import tempfile

    from leakaudit.learners import RandomForest, _forest_native
    from leakaudit.learners._kernel_flags import compile_with

    X, y, subsets = _forest_work(models)
    learner = RandomForest(n_estimators=100, n_threads=threads)
    installed = _forest_native.KERNEL.load()
    with tempfile.TemporaryDirectory() as tmp:
        path = compile_with("forest", installed.variant, ["-DLEAKAUDIT_FOREST_CSR=1"], Path(tmp) / "csr.so")
        libs = {"CSR lists": _forest_native.KERNEL.open_file(path, installed.variant),
                "uint8 table (default)": installed}
    load = _forest_native.KERNEL.load

    def run(lib):
        def go():
            _forest_native.KERNEL.load = lambda: lib
            return learner.fit_predict_many(X, y, subsets, list(range(models)), X, n_classes=2)
        return go

    try:
        res = _alternate({name: run(lib) for name, lib in libs.items()}, reps)
    finally:
        _forest_native.KERNEL.load = load
    (_, a), (_, b) = res.values()
    print(f"{models} forests x 100 trees, {threads} thread(s), {installed.variant} build, load {C.loadavg():.1f}; "
          f"same outputs bit for bit: {np.array_equal(a, b)}")
    _report(res, "CSR lists")


def forest_native(models: int, threads: int, reps: int) -> None:
    from leakaudit.learners import RandomForest, _forest_native

    if _forest_native.library() is None:
        raise SystemExit(f"the compiled forest kernel is not available: {_forest_native.KERNEL.reason}")
    X, y, subsets = _forest_work(models)
    seeds = list(range(models))

    def query(native: bool):
        learner = RandomForest(n_estimators=100, n_threads=threads, backend="compiled" if native else "sklearn")
        return lambda: learner.fit_predict_many(X, y, subsets, seeds, X, n_classes=2)

    def bank(native: bool):
        learner = RandomForest(n_estimators=100, n_threads=threads, backend="compiled" if native else "sklearn")

        def go():
            b = learner.fit_many(X, y, subsets, seeds, n_classes=2)
            return b.feature, b.threshold, b.left, b.value
        return go

    print(f"{models} forests x 100 trees, {threads} thread(s), load {C.loadavg():.1f}")
    for what, make in (("grown and queried on 2,000 rows (fit_predict_many)", query), ("bank (fit_many)", bank)):
        res = _alternate({"scikit-learn": make(False), "compiled C": make(True)}, reps)
        a, b = res["scikit-learn"][1], res["compiled C"][1]
        if isinstance(a, np.ndarray):
            print(f"{what}: largest output difference {np.abs(a - b).max():.2g}")
        else:
            same = all(np.array_equal(u, v) for u, v in zip(a[:3], b[:3]))
            print(f"{what}: same trees bit for bit: {same}; largest leaf-value difference "
                  f"{np.abs(a[3] - b[3]).max():.2g}")
        _report(res, "scikit-learn")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    # (subcommand, its size argument and default, threads, alternating pairs)
    for name in ("mlp-prefix", "mlp-vec16"):
        p = sub.add_parser(name)
        p.add_argument("--reps", type=int, default=9)
        if name == "mlp-vec16":
            p.add_argument("--dense", action="store_true", help="the dense rows (the mlp_1thread case)")
    for name, size, n, threads, reps in (("mlp-rows", "refs", 16, 1, 9), ("mlp-onehot", "refs", 16, 2, 15),
                                         ("forest-query", "models", 20, 2, 5), ("forest-native", "models", 20, 2, 5),
                                         ("forest-table", "models", 20, 1, 9)):
        p = sub.add_parser(name)
        if size == "refs":
            p.add_argument("--hidden", type=int, default=64)
        p.add_argument(f"--{size}", type=int, default=n)
        p.add_argument("--threads", type=int, default=threads)
        p.add_argument("--reps", type=int, default=reps)
    a = ap.parse_args(argv)
    C.warm_up()
    if a.what == "mlp-prefix":
        mlp_sparse_ab(a.reps, "-DLEAKAUDIT_SHARED_PREFIX=0", "row after row", "shared prefix (default)")
    elif a.what == "mlp-vec16":
        mlp_sparse_ab(a.reps, "-DLEAKAUDIT_VEC16=0", "8-lane vectors", "16-lane vectors (default)", a.dense)
    elif a.what == "mlp-rows":
        mlp_rows(a.hidden, a.refs, a.threads, a.reps)
    elif a.what == "mlp-onehot":
        mlp_onehot(a.hidden, a.refs, a.threads, a.reps)
    elif a.what == "forest-table":
        forest_table(a.models, a.threads, a.reps)
    elif a.what == "forest-query":
        forest_query(a.models, a.threads, a.reps)
    else:
        forest_native(a.models, a.threads, a.reps)


if __name__ == "__main__":
    main()
