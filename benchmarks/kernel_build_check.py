"""Two builds of the MLP kernel (e.g. the installed one and one built another way): the same numbers, and the speed.

``identity``: whether the builds compute the same numbers, bit for bit, in every specialised copy. Opens each given
library (a build of ``_mlp_native.c`` for one variant, e.g. the installed one and one built
another way: other flags, the source split into several files) as the MLP kernel, and runs on each the same calls
that reach every copy the kernel has: for each hidden width with a copy (8 ... 128) and activation (tanh, relu),
mini-batch training (Adam and SGD, softmax and logistic outputs) on sparse rows with one-hot groups, on sparse
rows without, and on dense rows; per-example SGD (faithful mode); DP-SGD on sparse and dense rows (with gradient
norms and "extra" gradient canaries); and prediction (the first layer on CSR rows, dense layers, the logit layer),
plus the Gaussian draws and permutations. Prints one SHA-256 over every output per library; the builds agree when
the digests do (and the first call that differs is named).

``speed``: CPU seconds (``time.process_time``, one thread: robust to other jobs on the machine, which move wall
times) of each build on the kernel's main work, the builds called in turn ``--reps`` times after a warm-up: the
Privacy Meter bench's reference models (Adult, 2,000 rows drawn with seed 0, 8 random halves, 64 tanh units, Adam
in batches of 200, 60 epochs) on one-hot sparse rows and as dense rows, per-example SGD (faithful mode, 30 epochs),
and DP-SGD (30 epochs, Poisson rate 0.1) on one-hot and on dense rows. Prints the min and median per build and
the median of paired ratios.

Usage: .venv/bin/python benchmarks/kernel_build_check.py identity VARIANT LIB [LIB ...]
       .venv/bin/python benchmarks/kernel_build_check.py identity VARIANT LIB [LIB ...] --hidden 64
       .venv/bin/python benchmarks/kernel_build_check.py speed VARIANT LIB_OLD LIB_NEW [--reps 7]
    VARIANT: the variant the libraries were built as (portable, avx2, avx512; the CPU must run it)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def _data(n: int, seed: int):
    """Adult-shaped rows (numeric columns and one-hot groups) and plain sparse rows, 3 classes for the latter."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 40))
    X[:, :4] = rng.normal(size=(n, 4))
    o = 4
    for w in (9, 7, 12, 8):
        X[np.arange(n), o + rng.integers(0, w, n)] = 1
        o += w
    y = (X[:, 0] + X[:, 5] > 0).astype(int)
    Xs = rng.normal(size=(n, 20)) * (rng.random((n, 20)) < 0.3)
    ys = rng.integers(0, 3, n)
    ys[:3] = np.arange(3)
    return X, y, Xs, ys


def outputs(variant: str, path: str, widths=(8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128)):
    """(label, array) of every call, on the library at ``path`` opened as the MLP kernel's ``variant``."""
    from leakaudit.learners import DPSGD, TorchMLP, _mlp_native

    lib = _mlp_native.KERNEL.open_file(path, variant)
    _mlp_native.KERNEL.load = lambda: lib  # every caller opens the kernel through KERNEL.load
    X, y, Xs, ys = _data(120, 0)
    subsets = [np.arange(0, 90), np.arange(30, 120), np.arange(0, 120, 2)]
    seeds = [1, 2, 3]
    for H in widths:
        assert _mlp_native.supports(H, np.float32), H
        for act in ("tanh", "relu"):
            runs = {
                "onehot-adam": (X, y, dict(optimizer="adam", sparse_input=True)),
                "onehot-sgd-logistic": (X, y, dict(optimizer="sgd", sparse_input=True, output="logistic")),
                "sparse-adam-3class": (Xs, ys, dict(optimizer="adam", sparse_input=True, weight_decay=1e-3)),
                "dense-adam": (X, y, dict(optimizer="adam", sparse_input=False)),
                "dense-sgd-3class": (Xs, ys, dict(optimizer="sgd", sparse_input=False)),
            }
            for name, (XX, yy, kw) in runs.items():
                L = TorchMLP(hidden=(H,), activation=act, mode="fast", epochs=3, batch_size=13, lr=0.01,
                             backend="compiled", **kw)
                bank = L.fit_many(XX, yy, subsets, seeds)
                assert bank.info["kernel"] == "native", (name, bank.info)
                yield f"H={H} {act} fast {name} weights", np.concatenate([w.ravel() for w in bank.weights_])
                yield f"H={H} {act} fast {name} biases", np.concatenate([b.ravel() for b in bank.biases_])
                yield f"H={H} {act} fast {name} predict", bank.predict_proba(XX)
            for XX, yy, name in ((X, y, "onehot"), (Xs, ys, "sparse-3class")):
                bank = TorchMLP(hidden=(H,), activation=act, mode="faithful", epochs=2, lr=0.01,
                                backend="compiled").fit_many(XX, yy, subsets, seeds)
                assert bank.info["kernel"] == "native", (name, bank.info)
                yield f"H={H} {act} faithful {name} weights", np.concatenate([w.ravel() for w in bank.weights_])
            for sparse in (True, False):
                mlp = TorchMLP(hidden=(H,), activation=act, mode="fast", backend="compiled", sparse_input=sparse)
                dp = DPSGD(learner=mlp, noise_multiplier=0.7, max_grad_norm=0.5, epochs=2, lr=0.3,
                           sampling_rate=0.2)
                bank = dp.fit_many(X, y, subsets, seeds)
                assert bank.info["kernel"] == "native", bank.info
                yield f"H={H} {act} dp sparse={sparse} weights", np.concatenate([w.ravel() for w in bank.weights_])
                if sparse:
                    included = np.random.default_rng(H).random((3, 6)) < 0.5
                    bank, scores = dp.fit_many_with_canaries(X, y, subsets, seeds, included=included)
                    yield f"H={H} {act} dp canaries weights", np.concatenate([w.ravel() for w in bank.weights_])
                    yield f"H={H} {act} dp canaries scores", np.asarray(scores, dtype=np.float64)
    x = np.ascontiguousarray(X[None], dtype=np.float32)
    # the logit layer's copies (H < 8) and the first and last hidden widths' (zero inputs skipped)
    for H in (1, 3, 7, *dict.fromkeys((widths[0], widths[-1]))):
        W = np.random.default_rng(H).normal(size=(2, 40, H)).astype(np.float32)
        b = np.random.default_rng(H + 1).normal(size=(2, H)).astype(np.float32)
        out = np.empty((2, 120, H), np.float32)
        _mlp_native.dense_layer(x, W, b, out)
        yield f"dense layer H={H}", out.copy()
        if H % 8 == 0:
            indptr, indices, values = _mlp_native.csr_rows(x[0], True)
            _mlp_native.first_layer(indptr, indices, values, W, b, out)
            yield f"first layer H={H}", out.copy()
        _mlp_native.layer(x, W, b, out)
        yield f"generic layer H={H}", out.copy()
    state = _mlp_native.noise_state([7, 8])
    yield "gauss", _mlp_native.gauss(state, 1000)
    perm = np.empty(3 * 50, np.int64)
    _mlp_native.permutations(np.random.default_rng(9), perm, 3)
    yield "permutations", perm


def identity(variant: str, paths: list[str], widths) -> int:
    warnings.filterwarnings("ignore")
    first: dict[str, bytes] = {}
    digests = []
    for path in paths:
        h = hashlib.sha256()
        n = 0
        for label, arr in outputs(variant, path, widths):
            data = np.ascontiguousarray(arr).tobytes()
            h.update(label.encode())
            h.update(data)
            n += 1
            if path == paths[0]:
                first[label] = data
            elif first.get(label) != data:
                print(f"DIFFERS from {paths[0]}: {label}")
        digests.append(h.hexdigest())
        print(f"{h.hexdigest()}  {n} outputs  {path}")
    return 0 if len(set(digests)) == 1 else 1


def speed(variant: str, paths: list[str], reps: int) -> int:
    from leakaudit.learners import DPSGD, TorchMLP, _mlp_native

    X, y, _ = C.adult_arrays()
    rng = np.random.default_rng(0)
    pop = rng.permutation(len(y))[:2000]
    X, y = X[pop], y[pop]
    subsets = [np.sort(rng.permutation(2000)[:1000]) for _ in range(8)]
    seeds = list(range(8))
    fast = dict(hidden=(64,), activation="tanh", mode="fast", epochs=60, batch_size=200, lr=1e-3, n_threads=1,
                backend="compiled")
    work = {
        "mini-batch, one-hot rows": lambda: TorchMLP(**fast, sparse_input=True).fit_many(X, y, subsets, seeds),
        "mini-batch, dense rows": lambda: TorchMLP(**fast, sparse_input=False).fit_many(X, y, subsets, seeds),
        "per-example SGD": lambda: TorchMLP(hidden=(64,), mode="faithful", epochs=30, lr=0.01, n_threads=1,
                                            backend="compiled").fit_many(X, y, subsets, seeds),
        "DP-SGD": lambda: DPSGD(learner=TorchMLP(hidden=(64,), mode="fast", backend="compiled", n_threads=1),
                                epochs=30, sampling_rate=0.1).fit_many(X, y, subsets, seeds),
        "DP-SGD, dense rows": lambda: DPSGD(learner=TorchMLP(hidden=(64,), mode="fast", backend="compiled",
                                                             n_threads=1, sparse_input=False),
                                            epochs=30, sampling_rate=0.1).fit_many(X, y, subsets, seeds),
    }
    libs = [_mlp_native.KERNEL.open_file(p, variant) for p in paths]
    warnings.filterwarnings("ignore")
    print(f"{variant} builds: {', '.join(paths)}; load {C.loadavg():.1f}")
    for name, fn in work.items():
        cpu = np.zeros((len(libs), reps))
        for r in range(-1, reps):  # a warm-up round first
            for i, lib in enumerate(libs):
                _mlp_native.KERNEL.load = lambda lib=lib: lib
                t0 = time.process_time()
                bank = fn()
                if r >= 0:
                    cpu[i, r] = time.process_time() - t0
                assert bank.info["kernel"] == "native", bank.info
        ratio = np.median(cpu[1] / cpu[0])
        print(f"  {name:>26}: " + "  ".join(f"min {c.min():.3f} median {np.median(c):.3f} CPU s" for c in cpu)
              + f"  new/old (median of pairs) {ratio:.3f}")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["identity", "speed"])
    ap.add_argument("variant", choices=["portable", "avx2", "avx512"])
    ap.add_argument("libs", nargs="+")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--hidden", type=int, nargs="+", default=[8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128],
                    help="identity: the hidden widths to train (default: every width with a copy)")
    a = ap.parse_args(argv[1:])
    if a.what == "identity":
        return identity(a.variant, a.libs, tuple(a.hidden))
    return speed(a.variant, a.libs, a.reps)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
