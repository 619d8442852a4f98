"""Benchmark: training many MLPs at once vs one at a time (TorchMLP).

Net: Linear(107, 64) -> tanh -> Linear(64, 2) -> LogSoftmax, NLL (Long et al.).
Data: 1,000 Adult records, Long et al.'s 13 attributes (5 z-scored numeric +
8 one-hot groups = 107 inputs), from ``leakaudit.data.load_adult(columns="long")``
when the data is there, else synthetic rows of that shape.

Prints, for the faithful (per-example SGD, 30 epochs) and the fast (mini-batch
Adam) mode: seconds per model trained one at a time by the plain nn.Module +
autograd trainer (2 models timed), and per model when 100 and 1,000 are
trained together, for a leave-one-out family and for independent random
subsets; the achieved GFLOP/s beside this machine's float32 matmul throughput
(a big torch matmul, measured in the same run), and for faithful mode the
achieved weight traffic beside the measured copy bandwidth.

Fast mode runs with the dense first layer (``sparse_input=False``: its FLOPs are
the model's matmul FLOPs, all performed) and with the default on one-hot data
(``sparse_input="auto"``: only the non-zero inputs' weight rows are read and
updated). For the sparse runs the GFLOP/s printed are the FLOPs actually
performed (sparse first layer: 2 (nnz + 1) h per row and pass) over the time;
the dense model's FLOPs over the same time are printed as "dense-equivalent".

    .venv/bin/python benchmarks/train_many.py            # full (several minutes)
    .venv/bin/python benchmarks/train_many.py --quick    # fewer epochs/models, scaled
    .venv/bin/python benchmarks/train_many.py --cnn      # only: TorchCNN grouped conv vs vmap vs one at a time
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np

from leakaudit.learners import TorchMLP
from leakaudit.learners._torch_utils import import_torch, init_mlp, naive_train_mlp

H, C = 64, 2


def adult_shaped(n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """n_rows Adult rows (107 inputs) and labels; synthetic of that shape if Adult is unavailable."""
    rng = np.random.default_rng(seed)
    try:
        from leakaudit.data import load_adult

        ds = load_adult(columns="long")
        idx = rng.choice(len(ds), n_rows, replace=False)
        X, _ = ds.subset(idx).encode()
        y = np.asarray(ds.y)[idx]
        return np.asarray(X, dtype=np.float64), y.astype(np.int64), "real Adult (load_adult(columns='long'))"
    except Exception as exc:  # data module or files missing
        X = np.zeros((n_rows, 107))
        X[:, :5] = rng.normal(size=(n_rows, 5))
        o = 5
        for w in [9, 16, 7, 15, 6, 5, 2, 42]:
            X[np.arange(n_rows), o + rng.integers(0, w, n_rows)] = 1.0
            o += w
        return X, rng.integers(0, 2, n_rows), f"synthetic Adult-shaped ({type(exc).__name__}: {exc})"


def matmul_gflops(torch, n: int = 2048, reps: int = 5) -> tuple[float, float]:
    """Best-of-reps float32 matmul throughput: (GFLOP per wall second, GFLOP per cpu second)."""
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    a @ b
    best, best_cpu = np.inf, np.inf
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        a @ b
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return 2 * n**3 / best / 1e9, 2 * n**3 / best_cpu / 1e9


def copy_bandwidth(mb: int = 256, reps: int = 5) -> float:
    src = np.ones(mb * 2**20 // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = np.inf
    for _ in range(reps):
        t = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t)
    return 2 * src.nbytes / best / 1e9  # read + write


def naive_per_model(X, y, mode: str, epochs: int, n_models: int = 2) -> float:
    """Seconds per model of the plain trainer (nn.Module + autograd + torch.optim), 1 thread."""
    torch = import_torch()
    torch.set_num_threads(1)
    n, d = X.shape
    t0 = time.perf_counter()
    for seed in range(n_models):
        rng = np.random.default_rng(seed)
        Ws, bs = init_mlp(rng, [d, H, C], np.float32)
        if mode == "faithful":
            perm = rng.permutation(n)
            batches = [perm[i : i + 1] for _ in range(epochs) for i in range(n)]
            naive_train_mlp(X, y, Ws, bs, batches, lr=0.01)
        else:
            batches = []
            for _ in range(epochs):
                perm = rng.permutation(n)
                batches += [perm[i : i + 32] for i in range(0, n, 32)]
            naive_train_mlp(X, y, Ws, bs, batches, optimizer="adam", lr=0.001)
    return (time.perf_counter() - t0) / n_models


def flops_per_model_epoch(mode: str, X: np.ndarray, n_train: int, sparse: bool = False) -> float:
    d = X.shape[1]
    nnz = (X != 0).sum(1).mean()
    if mode == "faithful":  # sparse algorithm: only non-zero inputs are read/updated
        return n_train * (4 * nnz * H + 6 * H * C + 6 * H)
    if sparse:  # first layer over the non-zero inputs + the bias row, forward and weight gradient
        return n_train * (4 * (nnz + 1) * H + 6 * H * C)
    return n_train * (4 * d * H + 6 * H * C)  # dense GEMMs: forward + weight grads + hidden grads


def bytes_per_model_epoch(X: np.ndarray, n_train: int) -> float:
    """Weight bytes read + written per faithful step (float32): non-zero W1 rows, W2, biases."""
    nnz = (X != 0).sum(1).mean()
    return n_train * 4 * (2 * nnz * H + 3 * H * C + 2 * H + 2 * C)


def cnn_benchmark(threads: int, K: int = 8, size: int = 8, B: int = 64, reps: int = 5) -> None:
    """Seconds per training step (forward + backward) of K VGG-like nets on 28x28 images, three ways."""
    torch = import_torch()
    from torch.func import grad, vmap

    from leakaudit.learners.torch_cnn import _Net

    torch.set_num_threads(threads)
    net = _Net(torch, (1, 28, 28), size, 10, "valid")
    rngs = [np.random.default_rng(k) for k in range(K)]
    inits = [net.init(r, np.float32) for r in rngs]
    P = [torch.from_numpy(np.stack([p[i] for p in inits])).requires_grad_(True) for i in range(len(net.shapes))]
    x = torch.rand(K, B, 1, 28, 28)
    y = torch.randint(0, 10, (K, B))

    def grouped():
        loss = torch.nn.functional.cross_entropy(net.logits(P, x).reshape(K * B, 10), y.reshape(-1), reduction="sum")
        torch.autograd.grad(loss, P)

    single = _Net(torch, (1, 28, 28), size, 10, "valid")

    def loss_one(params, xb, yb):
        logits = single.logits([p.unsqueeze(0) for p in params], xb.unsqueeze(0))[0]
        return torch.nn.functional.cross_entropy(logits, yb)

    Pd = [p.detach() for p in P]
    g_vmap = vmap(grad(loss_one), in_dims=(0, 0, 0))

    def vmapped():
        g_vmap(Pd, x, y)

    def one_at_a_time():
        for k in range(K):
            pk = [p[k].detach().requires_grad_(True) for p in P]
            torch.autograd.grad(loss_one(pk, x[k], y[k]), pk)

    print(f"\n== TorchCNN s={size}, K={K} models, batch {B} per model, 28x28, float32, {threads} torch threads ==")
    for name, fn in [("grouped conv (TorchCNN.fit_many)", grouped), ("torch.func.vmap(grad)", vmapped),
                     ("one model at a time", one_at_a_time)]:
        fn()
        best = np.inf
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        print(f"{name:34s}: {best * 1e3:8.1f} ms per step for all {K} models ({best / K * 1e3:.2f} ms per model-step)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer epochs and models, times scaled linearly")
    ap.add_argument("--threads", type=int, default=2, help="kernel threads (faithful) and threads of the matmul/CNN runs")
    ap.add_argument("--cnn", action="store_true", help="only the CNN comparison (grouped conv vs vmap)")
    args = ap.parse_args()
    torch = import_torch()
    if args.cnn:
        print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
        for th in sorted({1, args.threads}):
            cnn_benchmark(th)
        return

    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"cpus: {os.cpu_count()}, torch {torch.__version__}, threads {args.threads}")
    peaks, peaks_cpu = {}, {}
    for th in sorted({1, args.threads}):
        torch.set_num_threads(th)
        peaks[th], peaks_cpu[th] = matmul_gflops(torch)
        print(f"float32 matmul (2048^3, torch, {th} thread(s)): {peaks[th]:.1f} GFLOP/s "
              f"({peaks_cpu[th]:.1f} GFLOP per cpu-second)")
    peak_cpu = max(peaks_cpu.values())  # per-core rate: compare the runs' GFLOP per cpu-second with this
    bw = copy_bandwidth()
    print(f"copy bandwidth (256 MB np.copyto, read + write): {bw:.1f} GB/s")

    X2, y2, source = adult_shaped(2000)
    X, y = X2[:1000], y2[:1000]
    print(f"data: {source}; X {X.shape}, non-zeros per row {(X != 0).sum(1).mean():.1f}")
    n = X.shape[0]
    full_epochs = {"faithful": 30, "fast": 30}
    rng = np.random.default_rng(1)

    for mode in ["faithful", "fast"]:
        E = full_epochs[mode]
        e_naive = 3 if args.quick else E
        t_naive = naive_per_model(X, y, mode, e_naive) * E / e_naive
        print(f"\n== {mode} mode, {E} epochs, 1,000 rows ==")
        print(f"one at a time (plain autograd trainer, 2 models timed{', %d epochs scaled' % e_naive if args.quick else ''}): "
              f"{t_naive:.2f} s per model")
        for K in ([100, 1000] if not args.quick else [100, 1000]):
            e_run = E if not args.quick else (3 if K == 100 else 1)
            loo = [np.delete(np.arange(n), k) for k in range(K)]
            rand = [rng.choice(2000, size=n - 1, replace=False) for _ in range(K)]
            if mode == "faithful":
                runs = [("LOO family", X, y, loo, "independent", "auto"),
                        ("LOO family, shared order", X, y, loo, "shared", "auto"),
                        ("independent random subsets", X2, y2, rand, "independent", "auto")]
            else:
                runs = [(f"LOO family, shared order, {sl}", X, y, loo, "shared", sp)
                        for sl, sp in (("dense", False), ("sparse", "auto"))]
                runs += [(f"independent random subsets, {sl}", X2, y2, rand, "independent", sp)
                         for sl, sp in (("dense", False), ("sparse", "auto"))]
            for label, XX, yy, subsets, order, sparse_input in runs:
                # faithful: compiled kernel on args.threads threads; fast: torch trainer on 1 thread (its default)
                threads = args.threads if mode == "faithful" else 1
                peak = peaks[threads] if threads in peaks else peaks[max(peaks)]
                learner = TorchMLP(mode=mode, epochs=e_run, order=order, n_threads=threads, sparse_input=sparse_input)
                bank_info = learner.fit_many(XX[:50], yy[:50], [np.arange(50)], [0]).info  # compile / warm up
                t0 = time.perf_counter()
                c0 = time.process_time()
                learner.fit_many(XX, yy, subsets, list(range(K)))
                wall = (time.perf_counter() - t0) * E / e_run
                cpu = (time.process_time() - c0) * E / e_run
                per = wall / K
                sparse = mode == "fast" and bank_info.get("sparse_input", False)
                gf = flops_per_model_epoch(mode, X, n - 1, sparse) * E * K / wall / 1e9
                gf_cpu = flops_per_model_epoch(mode, X, n - 1, sparse) * E * K / cpu / 1e9
                extra = ""
                if sparse:
                    dense_eq = flops_per_model_epoch(mode, X, n - 1) * E * K / cpu / 1e9
                    extra = (f"; dense-equivalent {dense_eq:.2f} GFLOP per cpu-second (the dense model's FLOPs, "
                             f"NOT performed) = {dense_eq / peak_cpu:.1%} of matmul's")
                if mode == "faithful":
                    gbs = bytes_per_model_epoch(X, n - 1) * E * K / wall / 1e9
                    extra = f", weight traffic {gbs:.1f} GB/s ({gbs / bw:.0%} of copy bw; mostly L1/L2)"
                note = f" [{e_run} epoch(s) run, scaled]" if args.quick else ""
                print(f"K={K:5d} {label:28s}: total {wall:7.1f} s (cpu {cpu:6.1f} s), {per * 1e3:8.2f} ms per model, "
                      f"{t_naive / per:7.0f}x cheaper; {gf:6.2f} GFLOP/s = {gf / peak:.1%} of {threads}-thread matmul "
                      f"({gf_cpu:.2f} GFLOP per cpu-second = {gf_cpu / peak_cpu:.1%} of matmul's){extra}{note}")


if __name__ == "__main__":
    main()
