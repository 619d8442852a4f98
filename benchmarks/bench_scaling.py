"""Scaling: time and peak memory against the number of shadow models and the number of audited records.

* Models: K = 10, 100, 1,000, 10,000 reference models (``NaiveBayes`` on Adult's 8 categorical
  attributes, each trained on a random half of a 1,000-record pool through ``Engine.predict_many``
  in chunks), then online LiRA on the 1,000 records. The K x 1,000 x 2 float64 outputs are kept
  (they are the attack's input); everything else must stay flat in K.
* Records: audits of n = 1,000, 10,000 and 45,000 Adult records (LiRA with 16 reference models,
  ``TorchMLP(mode="fast")`` 64 tanh units, 5 epochs, batch 200, complementary halves of the n records).

Every point runs in a fresh subprocess so that its peak resident memory (``VmHWM``) is its own;
``baseline_rss`` is the same subprocess's RSS after imports and data loading, before the work.
Plots: ``benchmarks/plots/scaling_models.png`` and ``benchmarks/plots/scaling_records.png``.

Usage: .venv/bin/python benchmarks/bench_scaling.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

MODELS = (10, 100, 1000, 10000)
RECORDS = (1000, 10000, 45000)


def _rss_mb() -> float:
    """Peak RSS of this process (VmHWM: ``ru_maxrss`` would carry over the parent's peak, see leakaudit._resources)."""
    from leakaudit._resources import peak_rss_mb

    return peak_rss_mb()


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def point_models(K: int, n: int = 1000, seed: int = 0) -> dict:
    from leakaudit.engine import Engine
    from leakaudit.learners import NaiveBayes
    from leakaudit.membership._base import paired_half_masks
    from leakaudit.membership.lira import LiRA

    X, nv, y = C.adult_codes()
    idx = np.random.default_rng(seed).permutation(len(y))[: 2 * n]
    Xp, yp = X[idx[:n]].astype(np.float64), y[idx[:n]]
    target = NaiveBayes(n_values=nv).fit(Xp[: n // 2], yp[: n // 2], n_classes=2)
    probs = target.predict_proba(Xp)
    base = _current_rss_mb()
    with C.Timer() as t:
        masks = paired_half_masks(n, K, seed)
        out = Engine(backend="inprocess", progress=False).predict_many(
            NaiveBayes(n_values=nv), Xp, yp, [np.flatnonzero(m) for m in masks], seed, Xp, n_classes=2)
        after_train = _rss_mb()
        scores = LiRA(online=True).score(probs, yp, out, masks).scores_array
    is_member = np.r_[np.ones(n // 2, int), np.zeros(n - n // 2, int)]
    return {"K": K, "n": n, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "peak_rss_mb": _rss_mb(),
            "peak_rss_after_training_mb": after_train, "baseline_rss_mb": base, "outputs_mb": out.nbytes / 2 ** 20, "quality": C.quality(is_member, scores)}


def point_records(n: int, K: int = 16, seed: int = 0, epochs: int = 5) -> dict:
    from leakaudit.learners import TorchMLP
    from leakaudit.membership._base import fit_reference_models
    from leakaudit.membership.lira import LiRA

    X, y, _ = C.adult_arrays()
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    X, y = X[idx], y[idx]
    learner = TorchMLP(hidden=(64,), activation="tanh", mode="fast", epochs=epochs, batch_size=200)
    half = n // 2
    target = learner.fit(X[:half], y[:half], random_state=seed, n_classes=2)
    probs = target.predict_proba(X)
    base = _current_rss_mb()
    with C.Timer() as t:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = fit_reference_models(learner, X, y, K, n_classes=2, random_state=seed + 1)
            after_train = _rss_mb()
            scores = LiRA(online=True).score(probs, y, refs.probs, refs.in_mask).scores_array
    is_member = np.r_[np.ones(half, int), np.zeros(n - half, int)]
    return {"K": K, "n": n, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "peak_rss_mb": _rss_mb(),
            "peak_rss_after_training_mb": after_train, "baseline_rss_mb": base, "outputs_mb": refs.probs.nbytes / 2 ** 20,
            "quality": C.quality(is_member, scores)}


def run_point(kind: str, value: int, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--point", kind, str(value)]
    load0 = C.loadavg()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(os.environ, **C.THREADS))
    except subprocess.TimeoutExpired:
        return {"kind": kind, "value": value, "error": f"over the {timeout:.0f} s limit", "load_start": load0}
    if p.returncode != 0:
        return {"kind": kind, "value": value, "error": p.stderr[-1500:], "load_start": load0}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r.update(kind=kind, value=value, load_start=load0, load_end=C.loadavg())
    return r


def plot(rows, kind: str, xlabel: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r["kind"] == kind and "error" not in r]
    if not ok:
        return
    x = [r["value"] for r in ok]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    ax[0].loglog(x, [r["seconds"] for r in ok], "o-", label="wall")
    ax[0].loglog(x, [r["cpu_seconds"] for r in ok], "s--", label="CPU")
    ax[0].set_xlabel(xlabel)
    ax[0].set_ylabel("seconds")
    ax[0].legend()
    ax[1].semilogx(x, [r["peak_rss_mb"] for r in ok], "o-", label="peak RSS")
    ax[1].semilogx(x, [r["peak_rss_mb"] - r["outputs_mb"] for r in ok], "s--", label="peak RSS - outputs")
    if all("peak_rss_after_training_mb" in r for r in ok):
        ax[1].semilogx(x, [r["peak_rss_after_training_mb"] for r in ok], "^-.", label="peak RSS after training")
    ax[1].semilogx(x, [r["baseline_rss_mb"] for r in ok], ":", label="RSS before the work")
    ax[1].set_xlabel(xlabel)
    ax[1].set_ylabel("MB")
    ax[1].legend()
    fig.suptitle(f"leakaudit scaling ({kind}); load avg {np.mean([r['load_start'] for r in ok]):.1f} on "
                 f"{os.cpu_count()} cores")
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="K = 10, 100; n = 1,000, 5,000")
    ap.add_argument("--point", nargs=2, metavar=("KIND", "VALUE"), help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per point")
    a = ap.parse_args(argv)
    if a.point:
        kind, v = a.point[0], int(a.point[1])
        r = point_models(v) if kind == "models" else point_records(v)
        print(json.dumps(r))
        return
    models, records = ((10, 100), (1000, 5000)) if a.quick else (MODELS, RECORDS)
    rows = []
    for kind, values in (("models", models), ("records", records)):
        for v in values:
            rows.append(run_point(kind, v, a.timeout))
            print({k: rows[-1].get(k) for k in ("kind", "value", "seconds", "cpu_seconds", "peak_rss_mb",
                                                "outputs_mb", "error", "load_start")}, flush=True)
    suffix = "_quick" if a.quick else ""
    plot(rows, "models", "reference models K", C.HERE / "plots" / f"scaling_models{suffix}.png")
    plot(rows, "records", "audited records n", C.HERE / "plots" / f"scaling_records{suffix}.png")
    C.write_result("scaling" + suffix, {"points": rows})


if __name__ == "__main__":
    main()
