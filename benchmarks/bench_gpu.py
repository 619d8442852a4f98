"""leakaudit on a CUDA GPU against the same work on the CPU and against the GPU's matrix-multiply limit (issue 49).

Three workloads, each run with ``device="cuda"`` and with ``device="cpu"`` (the CPU given every core this process may
use: torch threads = that count, the learners' ``n_threads`` left at None), on the same data and seeds:

* ``cnn``: reference models of Yeom et al.'s CNN (``TorchCNN``, size 32, valid padding) on Fashion-MNIST
  (``leakaudit.data.load_fashion_mnist``): ``--cnn-models`` models on ``--cnn-rows`` training images each, one
  ``fit_many`` call, ``--cnn-epochs`` epochs. On the GPU twice: with the learner's default chunks (one model a chunk
  at size 32) and with ``models_per_chunk = --cnn-models`` (every model in one grouped network). Quality check: the
  first model's accuracy on 2,000 test images, on each device.
* ``lira``: :func:`leakaudit.membership.audit_model` with LiRA (online) and 64 reference models of a ``TorchMLP``
  (fast mode, Adam, one hidden layer of 128 tanh units, float32) on flattened Fashion-MNIST: a target trained on
  ``--lira-members`` images, as many non-members, a population of ``--lira-population`` images for the reference
  models. CPU: what ``device="cpu"`` runs by default (the compiled kernel, ``backend="auto"``) and the torch trainer
  (``backend="torch"``); GPU: the torch trainer on the device. Quality: each run's LiRA AUC with its bootstrap
  interval (one seed: the runs differ by float rounding of the reference models, not by their draws).
* ``score``: :func:`leakaudit.lm.score.score_texts` with a GPT-2-small-size model (GPT-2's architecture: 12 layers,
  width 768, 12 heads, context 1,024, vocabulary 50,257: 124M parameters; freshly initialised, throughput does not
  depend on the weights) on ``--score-texts`` SpamAssassin e-mails of up to ``--score-chars`` characters, with a
  byte-level BPE tokenizer trained on 1,000 other e-mails. Quality: the largest difference of a token's
  log-probability between the devices.

Work: every matmul, bmm and convolution FLOP (forward and backward) counted by
``torch.utils.flop_counter.FlopCounterMode`` on an untimed run of the GPU call (the compiled CPU kernel does the same
arithmetic; FlopCounterMode cannot see it). Limit: ``torch.mm`` of two 8,192 x 8,192 matrices on the GPU, best of
10, in true float32 (``allow_tf32`` off) and with TF32 on; on the CPU 2,048 x 2,048 float32 at every core. Each
workload's fraction = (FLOPs / wall seconds) / limit. The GPU runs with torch's defaults (recorded: cuDNN may use
TF32 for float32 convolutions; matmuls stay float32).

Timing: after one untimed call of each case (CUDA context, cuDNN autotuning, allocator), the best of ``--reps``
calls, ``torch.cuda.synchronize()`` before and after each GPU call; wall and process CPU seconds both recorded.

When torch sees no CUDA device it prints one line saying so and exits 0 (``--smoke`` runs every case at a tiny size
with the CPU standing in for the GPU, to check the script itself; its figures mean nothing and are not written).

Usage: .venv/bin/python benchmarks/bench_gpu.py [--quick] [--reps N] [--smoke]
Writes benchmarks/results/bench_gpu.json and prints the rows for RESULTS.md, the GPU named in each.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# the CPU side gets every core (benchmarks/_common.py would otherwise set one BLAS/OpenMP thread)
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_k, str(_CORES))

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def best_of(fn, device: str, reps: int) -> dict:
    """Best wall and CPU seconds of ``reps`` calls after one untimed call, synchronised on a GPU; the last result."""
    out = fn()
    wall = cpu = float("inf")
    for _ in range(reps):
        _sync(device)
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        _sync(device)
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return {"seconds": wall, "cpu_seconds": cpu, "result": out}


def counted_flops(fn) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fc:
        fn()
    return float(fc.get_total_flops())


def gpu_matmul_peak(device: str, n: int, reps: int = 10) -> dict:
    """GFLOP/s of ``torch.mm`` on n x n float32 matrices on the GPU: true float32 and TF32 (best of reps each)."""
    import torch

    old = torch.backends.cuda.matmul.allow_tf32
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    out = {}
    try:
        for name, tf32 in (("fp32", False), ("tf32", True)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            t = best_of(lambda: torch.mm(a, b), device, reps)["seconds"]
            out[f"gflops_{name}"] = 2 * n ** 3 / t / 1e9
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    return out


def cpu_matmul_peak(n: int, reps: int = 10) -> float:
    from bench_machine_limit import matmul_peak

    return matmul_peak(_CORES, n=n, reps=reps)[0]


# -- workloads --------------------------------------------------------------------------------------------------------
def fashion(n_train: int, n_test: int, seed: int = 0):
    from leakaudit.data import load_fashion_mnist

    tr, te = load_fashion_mnist("train"), load_fashion_mnist("test")
    rng = np.random.default_rng(seed)
    i, j = rng.permutation(len(tr.y))[:n_train], rng.permutation(len(te.y))[:n_test]
    flat = int(np.prod(tr.X.shape[1:]))
    return tr.X[i].reshape(len(i), flat), tr.y[i], te.X[j].reshape(len(j), flat), te.y[j]


def cnn_case(gpu: str, a, reps: int) -> dict:
    from leakaudit.learners import TorchCNN

    K, n = a.cnn_models, a.cnn_rows
    X, y, Xt, yt = fashion(K * n // 2 + n, 2000)
    rng = np.random.default_rng(1)
    subsets = [np.sort(rng.choice(len(X), n, replace=False)) for _ in range(K)]
    seeds = list(range(K))
    size = a.cnn_size

    def fit(device, per=None):
        lrn = TorchCNN(size=size, epochs=a.cnn_epochs, device=device)
        lrn.models_per_chunk = per
        return lambda: lrn.fit_many(X, y, subsets, seeds, n_classes=10)

    flops = counted_flops(fit(gpu))
    rows = {}
    for name, device, per in (("cpu", "cpu", None), ("gpu", gpu, None), ("gpu_one_chunk", gpu, K)):
        r = best_of(fit(device, per), device, reps)
        bank = r.pop("result")
        r["test_accuracy_model0"] = float(np.mean(bank.model(0).predict_proba(Xt).argmax(1) == yt))
        r["device"], r["models_per_chunk"] = device, per or max(1, 16 // size)
        rows[name] = r
    return {"work": f"{K} TorchCNN(size={size}) models x {n} Fashion-MNIST images x {a.cnn_epochs} epochs",
            "flops": flops, "runs": rows}


def lira_case(gpu: str, a, reps: int) -> dict:
    from leakaudit.learners import TorchMLP
    from leakaudit.membership import audit_model

    m, pop = a.lira_members, a.lira_population
    X, y, _, _ = fashion(2 * m + pop, 0, seed=2)
    mem, non, P = np.arange(m), np.arange(m, 2 * m), np.arange(2 * m, 2 * m + pop)
    kw = dict(hidden=(128,), mode="fast", epochs=a.lira_epochs, batch_size=64)
    target = TorchMLP(**kw).fit(X[mem], y[mem], random_state=0, n_classes=10)

    def run(learner, device):
        def call():
            res = audit_model(target, X[mem], y[mem], X[non], y[non], attacks=["lira"], learner=learner,
                              X_population=X[P], y_population=y[P], n_reference=a.lira_refs, n_classes=10,
                              n_boot=200, random_state=0)
            return res.attacks["lira"].metrics
        return call

    ref_flops = counted_flops(lambda: TorchMLP(**kw, backend="torch", device=gpu).fit_many(
        X[P], y[P], [np.arange(pop // 2)] * a.lira_refs, list(range(a.lira_refs)), n_classes=10))
    rows = {}
    for name, learner, device in (("cpu_compiled", TorchMLP(**kw), "cpu"),
                                  ("cpu_torch", TorchMLP(**kw, backend="torch"), "cpu"),
                                  ("gpu", TorchMLP(**kw, device=gpu), gpu)):
        r = best_of(run(learner, device), device, reps)
        met = r.pop("result")
        r["auc"], r["auc_ci"], r["device"] = float(met.auc), [float(v) for v in met.auc_ci], device
        rows[name] = r
    return {"work": f"LiRA (online), {a.lira_refs} TorchMLP(128 tanh, fast, {a.lira_epochs} epochs) reference models "
                    f"on a population of {pop} flattened Fashion-MNIST images; target on {m}, {m} non-members",
            "flops": ref_flops, "flops_note": "the reference models' training (half the population each)",
            "runs": rows}


def score_case(gpu: str, a, reps: int) -> dict:
    import torch

    from leakaudit.lm.demo import demo_texts, train_tokenizer
    from leakaudit.lm.score import score_texts
    from transformers import GPT2Config, GPT2LMHeadModel

    texts, _ = demo_texts(max_chars=a.score_chars)
    order = np.random.default_rng(0).permutation(len(texts))
    tok = train_tokenizer([texts[i] for i in order[:1000]], vocab_size=8192)
    audited = [texts[i] for i in order[1000:1000 + a.score_texts]]
    cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=a.score_width, n_layer=a.score_layers,
                     n_head=a.score_heads, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = GPT2LMHeadModel(cfg).eval()
    n_par = sum(p.numel() for p in model.parameters())

    def call(device):
        return lambda: score_texts(model, tok, audited, max_length=1024, device=device)

    flops = counted_flops(call(gpu))
    rows, scores = {}, {}
    for name, device in (("cpu", "cpu"), ("gpu", gpu)):
        r = best_of(call(device), device, reps)
        scores[name] = r.pop("result")
        r["device"] = device
        rows[name] = r
    diff = max(float(np.max(np.abs(g - c))) for g, c in zip(scores["gpu"].logprobs, scores["cpu"].logprobs))
    tokens = int(scores["cpu"].n_tokens.sum())
    return {"work": f"score_texts of {len(audited)} e-mails ({tokens} scored tokens) under a GPT-2-architecture model "
                    f"of {n_par / 1e6:.1f}M parameters", "flops": flops, "tokens": tokens,
            "max_abs_logprob_diff_gpu_vs_cpu": diff, "runs": rows}


def rows_for_results(res: dict) -> list[str]:
    """Markdown rows: workload, device, wall s, CPU s, GFLOP/s, fraction of the limit, GPU over CPU speed-up."""
    gpu_name, lim = res["gpu"]["name"], res["limits"]
    out = ["| workload | run | device | wall s | CPU s | GFLOP/s | of limit | best CPU wall / this wall |",
           "|---|---|---|---|---|---|---|---|"]
    for case, r in res["cases"].items():
        cpu_wall = min(v["seconds"] for v in r["runs"].values() if v["device"] == "cpu")
        for run, v in r["runs"].items():
            rate = r["flops"] / v["seconds"] / 1e9
            on_gpu = v["device"] != "cpu"
            limit = lim["gpu_gflops_fp32"] if on_gpu else lim["cpu_gflops_fp32"]
            where = gpu_name if on_gpu else f"CPU, {lim['cpu_threads']} threads"
            out.append(f"| {case} | {run} | {where} | {v['seconds']:.2f} | {v['cpu_seconds']:.1f} | {rate:.0f} | "
                       f"{100 * rate / limit:.1f} % | {cpu_wall / v['seconds']:.1f}x |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads (fits a short device lease)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, the CPU standing in for the GPU: checks the "
                                                          "script, its figures mean nothing (nothing written)")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available() and not a.smoke:
        print(f"bench_gpu: CUDA is not available here (torch {torch.__version__}); nothing measured")
        return 0
    big = dict(cnn_models=16, cnn_rows=2000, cnn_epochs=2, cnn_size=32, lira_members=1000, lira_population=4000,
               lira_refs=64, lira_epochs=10, score_texts=64, score_chars=3000, score_width=768, score_layers=12,
               score_heads=12)
    quick = dict(big, cnn_models=8, cnn_rows=1000, cnn_epochs=1, lira_members=500, lira_population=2000,
                 lira_epochs=5, score_texts=32)
    smoke = dict(cnn_models=2, cnn_rows=64, cnn_epochs=1, cnn_size=2, lira_members=40, lira_population=80, lira_refs=4,
                 lira_epochs=1, score_texts=4, score_chars=200, score_width=64, score_layers=2, score_heads=2)
    for k, v in (smoke if a.smoke else quick if a.quick else big).items():
        setattr(a, k, v)
    reps = 1 if a.smoke else a.reps
    torch.set_num_threads(_CORES)
    gpu = "cpu" if a.smoke else "cuda"
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    res = {"gpu": {"name": torch.cuda.get_device_name(0) if not a.smoke else "CPU (smoke test)",
                   "torch": torch.__version__, "cuda": torch.version.cuda,
                   "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
                   "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32)},
           "limits": {"cpu_threads": _CORES, "cpu_gflops_fp32": cpu_matmul_peak(256 if a.smoke else 2048)},
           "sizes": {k: getattr(a, k) for k in big}, "reps": reps, "load_before": C.loadavg()}
    if a.smoke:
        res["limits"].update(gpu_gflops_fp32=res["limits"]["cpu_gflops_fp32"], gpu_gflops_tf32=None)
    else:
        peak = gpu_matmul_peak(gpu, 8192)
        res["limits"].update(gpu_gflops_fp32=peak["gflops_fp32"], gpu_gflops_tf32=peak["gflops_tf32"])
    res["cases"] = {}
    for name, case in (("cnn", cnn_case), ("lira", lira_case), ("score", score_case)):
        t0 = time.perf_counter()
        res["cases"][name] = case(gpu, a, reps)
        print(f"{name}: done in {time.perf_counter() - t0:.0f} s", flush=True)
    res["load_after"] = C.loadavg()
    for line in rows_for_results(res):
        print(line)
    for name, r in res["cases"].items():
        extra = {k: v for k, v in r.items() if k not in ("runs", "work", "flops")}
        quality = {run: {k: v for k, v in x.items() if k in ("auc", "auc_ci", "test_accuracy_model0")}
                   for run, x in r["runs"].items()}
        shown = {**extra, **{run: q for run, q in quality.items() if q}}
        print(f"{name}: {r['work']}; {r['flops'] / 1e12:.3f} TFLOP counted; {shown}")
    if not a.smoke:
        print(f"wrote {C.write_result('bench_gpu', res)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
