"""How close ``fit_many`` comes to this machine's limit (issue 10, "the physical limit").

* Peak: measured float32 matrix-multiply throughput (``torch.mm`` of 1024 x 1024 float32
  matrices; best of ``--reps`` timings, 1 thread and all threads), and memory bandwidth (numpy copy of
  a 256 MB float32 array; best of reps; bytes read + written).
* Work: the FLOPs of the training that ``fit_many`` performs, counted exactly by
  ``torch.utils.flop_counter.FlopCounterMode`` (every matmul / bmm / convolution, forward and backward)
  on the very call that is timed in a second, uncounted run.
* Fraction = (work / time) / peak, for TorchMLP (fast mode: mini-batch Adam, K models batched) and
  TorchCNN (K models as grouped convolutions).
* TorchMLP fast mode runs four times. ``mlp``: the dense first layer (``sparse_input=False``) on what ``fit_many``
  picks for it (``backend="auto"``: the C kernel's register-blocked matrix products where a C compiler is found,
  since session 14; the row names the kernel from the bank's ``info``), whose work is the model's matmul FLOPs
  ``K * rows * epochs * (4 d h + 6 h C)``, all of which the C kernel performs (on torch's path FlopCounterMode
  counted them before the first layer's bias was folded into its GEMM as a constant-1 input; the counter's figure,
  1 % higher there and 0 for the C kernel, is recorded as ``gflop_counted``). ``mlp_torch``: the same work on
  torch's batched matmuls (``backend="torch"``), the path ``mlp`` measured up to session 13. ``mlp_sparse``: the
  default on one-hot
  data (``sparse_input="auto"``), trained by the compiled mini-batch kernel (its C twin ``_mlp_native.c``
  where they were built, else the torch trainer; the row names which), which reads and
  scatter-adds only the non-zero inputs (14 of 104 on Adult, + the bias row); FlopCounterMode sees none of
  it, so its work is the FLOPs actually performed, ``4 (nnz + 1) h + 6 h C`` per row and model. Its
  fraction of peak is formed with those performed FLOPs; the dense-equivalent rate (the ``mlp`` work over
  the sparse run's time) is recorded separately and labelled as such. ``mlp_1thread``: ``mlp`` on one
  thread (``n_threads=1``), the fraction of one core's peak that one core reaches.
* Per-example SGD (TorchMLP ``mode="faithful"``, the compiled C kernel, no torch ops): its lower
  bound on time is memory traffic: each of the ``steps`` updates reads the touched parameters
  (forward), reads them again and writes them (update): ``12 * touched_params`` bytes in float32,
  where touched = nnz(x) * h + h * C + h + C (the kernel skips zero inputs). We report that bound
  over the measured bandwidth divided by the measured time. The parameters of these small
  networks fit in cache, so DRAM bandwidth is a loose bound; the number says how far from it we are.

The machine is shared (load average recorded) and a single run of the same work varies by 10-25 % from one
minute to the next, so the work is timed like the peak: the fastest of ``REPS`` = 3 calls after a warm-up
call (the peak: of 10). Session 9 and before timed the work once, against the peak's best of 10.

Every rate is given per wall second and per CPU second (``time.process_time``, all threads): on this
shared machine the wall figures measure the time slices we got, the CPU figures the core itself, and
fractions are formed wall/wall and CPU/CPU.

Usage: .venv/bin/python benchmarks/bench_machine_limit.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


#: timed calls of each training case (after one warm-up call); the fastest is reported, like the peak's
REPS = 3


class Best:
    """Wall and CPU seconds of the fastest of a case's timed calls."""

    def __init__(self, seconds: float, cpu_seconds: float):
        self.seconds, self.cpu_seconds = seconds, cpu_seconds


def matmul_peak(threads: int, n: int = 2048, reps: int = 10) -> tuple[float, float]:
    """Float32 GFLOP/s of torch.mm on n x n matrices with ``threads`` threads: (per wall second, per CPU second),
    best of reps. On a loaded machine the wall figure is what a time slice gives; the CPU figure is the core's."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = torch.randn(n, n), torch.randn(n, n)
        wall, cpu = C.best_of(lambda: torch.mm(a, b), reps)
    finally:
        torch.set_num_threads(old)
    return 2 * n ** 3 / wall / 1e9, 2 * n ** 3 * threads / cpu / 1e9 if threads == 1 else 2 * n ** 3 / cpu / 1e9


def bandwidth(mb: int = 256, reps: int = 5) -> tuple[float, float]:
    """GB/s of a numpy float32 copy (bytes read + written): (per wall second, per CPU second), best of reps."""
    a = np.ones(mb * 2 ** 20 // 4, np.float32)
    b = np.empty_like(a)
    wall, cpu = C.best_of(lambda: np.copyto(b, a), reps)
    return 2 * a.nbytes / wall / 1e9, 2 * a.nbytes / cpu / 1e9


def counted(fn):
    """(result, flops) of fn() under FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fc:
        out = fn()
    return out, int(fc.get_total_flops())


def mlp_case(K: int, n: int, epochs: int, seed: int = 0, sparse: bool = False, n_threads: int | None = None,
             backend: str = "auto"):
    """(fn, fn to count, 1, description, model FLOPs of the dense algorithm, FLOPs performed by the compiled kernels).

    The sparse case runs on the compiled mini-batch kernel (``backend="auto"`` picks it for sparse
    inputs: the C kernel when it was built, else torch), which FlopCounterMode cannot see: its performed FLOPs are counted by formula, per row and
    model ``4 (nnz + 1) h`` for the first layer's two sparse passes (bias row included) plus ``6 h C`` for
    the output layer. The dense case runs on what ``backend`` picks (the description names it).
    """
    from leakaudit.learners import TorchMLP

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    X, y = X[idx], y[idx]
    subsets = [np.random.default_rng(seed + k).permutation(n)[: n // 2] for k in range(K)]
    L = TorchMLP(hidden=(64,), activation="tanh", mode="fast", epochs=epochs, batch_size=200,
                 sparse_input="auto" if sparse else False, n_threads=n_threads, backend=backend)
    fn = lambda: L.fit_many(X, y, subsets, list(range(K)), n_classes=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = TorchMLP(**{**L.get_params(), "epochs": 1})
        kernel = one.fit_many(X, y, subsets[:1], [0], n_classes=2).info["kernel"]  # what trained (a short run)
    names = {"native": "native C kernel", "torch": "torch"}
    d, h, c = X.shape[1], 64, 2
    rows = K * (n // 2) * epochs
    model_flops = rows * (4 * d * h + 6 * h * c)
    nnz = float(np.mean([(X[s] != 0).sum(axis=1).mean() for s in subsets]))
    sparse_flops = rows * (2 * 2 * (nnz + 1) * h + 6 * h * c) if sparse else 0.0
    desc = (f"TorchMLP fast (104-64-2 tanh, Adam, batch 200), K={K} models x {n // 2} rows x {epochs} epochs, "
            + (f"sparse first layer ({nnz:.0f} non-zero inputs + bias per row; performed FLOPs), "
               if sparse else "dense first layer (model FLOPs), ")
            + names[kernel] + (f", {n_threads} thread" if n_threads == 1 else ""))
    return fn, fn, 1, desc, model_flops, sparse_flops


def cnn_case(K: int, n: int, epochs: int, size: int, seed: int = 0):
    from leakaudit.learners import TorchCNN

    rng = np.random.default_rng(seed)
    X = rng.random((n, 28 * 28))
    y = rng.integers(0, 10, n)
    subsets = [rng.permutation(n)[: n // 2] for _ in range(K)]
    L = TorchCNN(size=size, epochs=epochs, batch_size=64)
    fn = lambda: L.fit_many(X, y, subsets, list(range(K)), n_classes=10)
    # FlopCounterMode (torch 2.13) over-counts the backward of grouped convolutions (K=8: 11.4 GFLOP counted
    # for work that K single-model convolutions count as 3.4), so count one model (groups=1) and multiply by K:
    # every model does the same work (same subset size, epochs and batch size).
    one = lambda: L.fit_many(X, y, subsets[:1], [0], n_classes=10)
    return fn, one, K, f"TorchCNN s={size} (28x28x1, 10 classes, batch 64), K={K} models x {n // 2} rows x {epochs} epochs"


def faithful_case(K: int, n: int, epochs: int, seed: int = 0):
    from leakaudit.learners import TorchMLP

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    X, y = X[idx], y[idx]
    subsets = [np.random.default_rng(seed + k).permutation(n)[: n // 2] for k in range(K)]
    L = TorchMLP(hidden=(64,), activation="tanh", mode="faithful", epochs=epochs)
    nnz = float(np.mean([(X[s] != 0).sum(axis=1).mean() for s in subsets]))
    h, Cc, d = 64, 2, X.shape[1]
    touched = nnz * h + h * Cc + h + Cc
    steps = K * (n // 2) * epochs
    fn = lambda: L.fit_many(X, y, subsets, list(range(K)), n_classes=2)
    return fn, steps, touched, d * h + h * Cc + h + Cc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    load0 = C.loadavg()
    peak1, peak1_cpu = matmul_peak(1)
    peakall, _ = matmul_peak(2)
    bw, bw_cpu = bandwidth(64 if a.quick else 256)
    rows = []
    mlp_size = (4, 400, 2) if a.quick else (64, 2000, 20)
    cases = [("mlp", *mlp_case(*mlp_size)), ("mlp_1thread", *mlp_case(*mlp_size, n_threads=1)),
             ("mlp_torch", *mlp_case(*mlp_size, backend="torch")), ("mlp_sparse", *mlp_case(*mlp_size, sparse=True)),
             ("cnn", *cnn_case(*((2, 128, 1, 4) if a.quick else (8, 1000, 1, 16))), None, 0.0)]
    for name, fn, count_fn, mult, desc, model_flops, sparse_flops in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, counted_flops = counted(count_fn)  # also the warm-up (kernels loaded, MKL initialised)
            counted_flops *= mult
            # best of REPS, as the peak it is compared with is a best of 10 (single runs vary by 10-25 % here)
            t = Best(*C.best_of(fn, REPS))
        extra = {}
        if name in ("mlp", "mlp_1thread", "mlp_torch"):  # the model's FLOPs, not torch's 1 % extra (folded bias row)
            flops = model_flops
            extra = {"gflop_counted": counted_flops / 1e9}
        elif name == "mlp_sparse":  # performed: torch ops counted + the sparse kernels' FLOPs
            flops = counted_flops + sparse_flops
            extra = {"gflop_counted_torch_ops": counted_flops / 1e9, "gflop_sparse_kernels": sparse_flops / 1e9,
                     "dense_equivalent_gflop": model_flops / 1e9,
                     "dense_equivalent_gflops_per_cpu_second": model_flops / t.cpu_seconds / 1e9,
                     "dense_equivalent_cpu_fraction_of_1thread_peak": model_flops / t.cpu_seconds / 1e9 / peak1_cpu,
                     "models_per_cpu_second": mlp_size[0] / t.cpu_seconds, "models_per_second": mlp_size[0] / t.seconds}
        else:
            flops = counted_flops
        rate = flops / t.seconds / 1e9
        rows.append({"name": name, "work": desc, "gflop": flops / 1e9, "seconds": t.seconds,
                     "cpu_seconds": t.cpu_seconds, "gflops_achieved": rate,
                     "gflops_per_cpu_second": flops / t.cpu_seconds / 1e9,
                     "fraction_of_1thread_peak": rate / peak1, "fraction_of_all_threads_peak": rate / peakall,
                     "cpu_fraction_of_1thread_peak": flops / t.cpu_seconds / 1e9 / peak1_cpu, **extra})
        print(rows[-1], flush=True)
    fn, steps, touched, dense = faithful_case(*((2, 400, 1) if a.quick else (32, 2000, 10)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = Best(*C.best_of(fn, REPS))  # (its warm-up call loads the kernel outside the timing)
    bound = steps * 12 * touched / (bw * 1e9)
    bound_cpu = steps * 12 * touched / (bw_cpu * 1e9)
    rows.append({"name": "faithful_sgd", "work": f"TorchMLP faithful (per-example SGD, compiled C), {steps} updates",
                 "seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "touched_params_per_update": touched,
                 "dense_params": dense, "bandwidth_bound_seconds": bound, "fraction_of_bandwidth_bound": bound / t.seconds,
                 "cpu_fraction_of_bandwidth_bound": bound_cpu / t.cpu_seconds, "updates_per_second": steps / t.seconds})
    print(rows[-1], flush=True)
    C.write_result("machine_limit" + ("_quick" if a.quick else ""),
                   {"peak_gflops_1thread": peak1, "peak_gflops_1thread_per_cpu_second": peak1_cpu,
                    "peak_gflops_2threads": peakall, "bandwidth_gbs": bw, "bandwidth_gbs_per_cpu_second": bw_cpu,
                    "load_start": load0, "load_end": C.loadavg(), "cases": rows})


if __name__ == "__main__":
    main()
