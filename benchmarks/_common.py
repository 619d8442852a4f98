"""Shared helpers of the peer-tool benchmarks (``benchmarks/bench_*.py``).

Every comparison runs the peer tool in its own virtual environment
(``benchmarks/.peers/<tool>/venv``, made by ``benchmarks/peers.sh``) through a
small driver script under ``benchmarks/drivers/``: the driver reads the exact
arrays leakaudit uses from an ``.npz`` file, times the peer's own API call, and
writes the peer's per-record scores (``.npz``) and its wall time (JSON). Both
tools' attack quality is then computed here with :mod:`leakaudit.metrics`, so
the two are scored by the same code.

Each bench writes ``benchmarks/results/<name>.json``; ``run_all.py`` turns those
into ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS = HERE / ".peers"
DRIVERS = HERE / "drivers"
RESULTS = HERE / "results"
FPR = 0.001  # TPR at 0.1 % FPR

# Both tools run with single-threaded BLAS/OpenMP (same conditions; on this shared 2-core machine extra
# BLAS threads only spin against other jobs). Set before numpy is imported by the bench scripts.
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
for _k, _v in THREADS.items():
    os.environ.setdefault(_k, _v)


def loadavg() -> float:
    """One-minute load average (the machine is shared; record it beside every time)."""
    return float(os.getloadavg()[0])


def machine() -> dict:
    """nproc, CPU model, load averages, Python and torch versions."""
    from leakaudit.reproduce._registry import cpu_model  # the model name a stored reproduction records

    cpu = cpu_model() or "unknown"
    try:
        import torch

        tv = torch.__version__
    except Exception:  # pragma: no cover - torch is installed in the project venv
        tv = None
    return {"nproc": os.cpu_count(), "cpu": cpu, "loadavg": list(os.getloadavg()), "python": platform.python_version(),
            "torch": tv, "time_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}


def wait_for_quiet(max_wait: float = 0.0, below: float | None = None, poll: float = 5.0) -> float:
    """Wait up to ``max_wait`` seconds for the 1-min load average to fall below ``below``
    (default 2 x nproc); return the load average at which we start."""
    below = 2.0 * (os.cpu_count() or 1) if below is None else below
    t0 = time.time()
    while loadavg() > below and time.time() - t0 < max_wait:
        time.sleep(poll)
    return loadavg()


def peer_python(tool: str) -> Path | None:
    """The peer venv's python, or None when the peer did not install."""
    py = PEERS / tool / "venv" / "bin" / "python"
    if not py.exists() or (PEERS / tool / "INSTALL_FAILED").exists():
        return None
    return py


def peer_status(tool: str) -> str:
    """"installed <versions>" or the recorded install error."""
    failed = PEERS / tool / "INSTALL_FAILED"
    if failed.exists():
        return "install failed: " + failed.read_text().strip()
    if not (PEERS / tool / "venv" / "bin" / "python").exists():
        return "not installed (run `bash benchmarks/peers.sh`)"
    return "installed"


def peer_version(tool: str, dist: str) -> str | None:
    v = PEERS / tool / "versions.txt"
    if not v.exists():
        return None
    for line in v.read_text().splitlines():
        if line.lower().replace("_", "-").startswith(dist.lower().replace("_", "-") + "=="):
            return line.split("==", 1)[1]
    return None


def timed_runs(fn, repeat: int):
    """Call ``fn()`` ``repeat`` times; (median wall seconds, median CPU seconds, every wall time, the last result).

    For work of well under a second, where one run moves by 10-25 % with this VM's neighbours: both sides of a
    comparison are timed this way (the peer drivers repeat their timed block as often) and the medians compared.
    """
    walls, cpus, out = [], [], None
    for _ in range(max(1, int(repeat))):
        with Timer() as t:
            out = fn()
        walls.append(t.seconds)
        cpus.append(t.cpu_seconds)
    return float(np.median(walls)), float(np.median(cpus)), walls, out


def best_of(fn, reps: int) -> tuple[float, float]:
    """Best wall and best CPU (process_time) seconds of ``reps`` calls of ``fn``, after one untimed warm-up call."""
    fn()
    wall = cpu = np.inf
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return wall, cpu


def run_peer(tool: str, driver: str, arrays: dict, params: dict, *, timeout: float = 900) -> dict:
    """Run ``drivers/<driver>`` in the peer's venv on ``arrays`` with ``params``.

    Returns the driver's JSON (always with ``seconds``) plus ``arrays`` (the
    driver's output npz as a dict). Raises RuntimeError with the driver's
    stderr tail on failure.
    """
    py = peer_python(tool)
    if py is None:
        raise RuntimeError(f"{tool}: {peer_status(tool)}")
    with tempfile.TemporaryDirectory(prefix=f"bench-{tool}-") as tmp:
        tmp = Path(tmp)
        np.savez(tmp / "in.npz", **arrays)
        (tmp / "params.json").write_text(json.dumps(params))
        cmd = [str(py), str(DRIVERS / driver), str(tmp)]
        env = dict(os.environ, PYTHONWARNINGS="ignore", TF_CPP_MIN_LOG_LEVEL="3", MPLBACKEND="Agg", **THREADS)
        env.pop("PYTHONPATH", None)
        proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{tool} driver {driver} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        out = json.loads((tmp / "out.json").read_text())
        if (tmp / "out.npz").exists():
            with np.load(tmp / "out.npz") as z:
                out["arrays"] = {k: z[k] for k in z.files}
        else:
            out["arrays"] = {}
        return out


def quality(is_member, scores) -> dict:
    """AUC and TPR at 0.1 % FPR of membership scores (higher = member), by leakaudit.metrics."""
    from leakaudit.metrics import auc, tpr_at_fpr

    is_member = np.asarray(is_member, int)
    scores = np.asarray(scores, float)
    scores = np.where(np.isnan(scores), -np.inf, scores)
    return {"auc": float(auc(is_member, scores)), "tpr_at_0.1%fpr": float(tpr_at_fpr(is_member, scores, FPR))}


def mean_ci(values, *, clip: tuple | None = None, digits: int | None = None) -> dict:
    """Mean of per-seed values with a 95% t-interval over them (NaN with one value), optionally clipped to ``clip``
    (AUC and TPR live in [0, 1]); the values themselves too (rounded to ``digits`` places when given)."""
    from scipy.stats import t

    v = np.asarray(values, float)
    h = float(t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")
    lo, hi = float(v.mean() - h), float(v.mean() + h)
    if clip is not None:
        lo, hi = max(clip[0], lo), min(clip[1], hi)
    return {"mean": float(v.mean()), "ci95": [lo, hi],
            "values": (v.round(digits) if digits is not None else v).tolist()}


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds`` (wall clock) and ``t.cpu_seconds`` (this process's CPU
    time, all threads, plus that of child processes that finished inside the block)."""

    @staticmethod
    def _cpu():
        import resource

        return time.process_time() + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime + \
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime

    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        self.cpu_seconds = self._cpu() - self.c0
        return False


def write_result(name: str, result: dict) -> Path:
    """Write ``benchmarks/results/<name>.json`` (with the machine and the command)."""
    RESULTS.mkdir(exist_ok=True)
    result = dict(result)
    result.setdefault("machine", machine())
    result.setdefault("command", " ".join([".venv/bin/python"] + [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]))
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, default=_jsonable))
    return path


def _jsonable(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o))


def adult_arrays(*, drop_missing: bool = True):
    """Adult, one-hot + z-scored (statistics from all rows), float64 X (n, d) and int y (n,)."""
    from leakaudit.data import load_adult

    d = load_adult(drop_missing=drop_missing)
    X, _ = d.encode()
    return np.asarray(X, np.float64), np.asarray(d.y, np.int64), d


def comparison(name: str, work: str, peer: str, peer_version_: str | None, peer_seconds: float | None,
               our_seconds: float, peer_quality: dict | None, our_quality: dict | None, load_start: float,
               load_end: float, notes: str = "", peer_cpu: float | None = None, our_cpu: float | None = None,
               our_runs: list | None = None, peer_runs: list | None = None, **extra) -> dict:
    """One row of RESULTS.md: wall and CPU seconds of both tools and their ratios (peer / ours).

    ``our_runs`` / ``peer_runs``: every wall time when the seconds are medians of repeated runs (``timed_runs``,
    the drivers' ``seconds_runs``); kept in the row, their ranges added to the notes.
    """
    if our_runs and peer_runs and len(our_runs) > 1:
        notes += (f"; each side the median of {len(our_runs)} runs of the same work (ours {min(our_runs):.3g}-"
                  f"{max(our_runs):.3g} s, the peer {min(peer_runs):.3g}-{max(peer_runs):.3g} s)")
        extra.update(repeat=len(our_runs), our_runs=our_runs, peer_runs=peer_runs)
    ratio = peer_seconds / our_seconds if peer_seconds and our_seconds else None
    cpu_ratio = peer_cpu / our_cpu if peer_cpu and our_cpu else None
    return {"name": name, "work": work, "peer": peer, "peer_version": peer_version_, "peer_seconds": peer_seconds,
            "our_seconds": our_seconds, "speedup": ratio, "peer_cpu_seconds": peer_cpu, "our_cpu_seconds": our_cpu,
            "cpu_speedup": cpu_ratio, "peer_quality": peer_quality, "our_quality": our_quality,
            "load_start": load_start, "load_end": load_end, "notes": notes, **extra}


def adult_codes(*, drop_missing: bool = True):
    """Adult's categorical attributes as integer codes (n, 8), their numbers of values, and y (n,)."""
    from leakaudit.data import load_adult

    d = load_adult(drop_missing=drop_missing)
    cats = [f.name for f in d.features if f.kind != "numeric"]
    codes, n_values = [], []
    for c in cats:
        col = d.frame[c].astype("category")
        codes.append(col.cat.codes.to_numpy().astype(np.int64))
        n_values.append(len(col.cat.categories))
    X = np.column_stack(codes)
    if (X < 0).any():  # a missing value (drop_missing=False): its own code
        for j in range(X.shape[1]):
            if (X[:, j] < 0).any():
                X[X[:, j] < 0, j] = n_values[j]
                n_values[j] += 1
    return X, np.asarray(n_values, np.int64), np.asarray(d.y, np.int64)


def spearman(a, b) -> float:
    """Spearman rank correlation (ties averaged) of two vectors; nan when one is constant."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


#: TorchMLP settings that train a scikit-learn ``MLPClassifier``'s recipe for a binary target: its Glorot init
#: and one logistic output unit (shadow/reference models trained like the target; session 6: +0.005-0.013 AUC
#: for offline LiRA against Privacy Meter over 3 seeds, see README.md)
SKLEARN_MLP = {"init": "sklearn", "output": "logistic"}


def warm_up() -> None:
    """Import torch (and run one op) before any timing: the peers' drivers also import their libraries
    (ART and SACRO-ML import torch) before their timers start."""
    try:
        import torch

        torch.mm(torch.ones(8, 8), torch.ones(8, 8))
    except ImportError:  # pragma: no cover
        pass
    # load leakaudit's compiled kernels the same way: a tiny sparse-input fit in each mode
    try:
        import warnings

        from leakaudit.learners import TorchMLP

        X = np.eye(8)[np.arange(16) % 8]
        y = np.arange(16) % 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # (and their prediction: the C layer kernels)
            for mode in ("faithful", "fast"):
                TorchMLP(hidden=(4,), mode=mode, epochs=1).fit_many(X, y, [np.arange(16)], [0],
                                                                    n_classes=2).predict_proba(X)
            # the fast-mode kernel at a width it specialises, loaded here
            TorchMLP(hidden=(8,), mode="fast", epochs=1).fit_many(X, y, [np.arange(16)], [0],
                                                                  n_classes=2).predict_proba(X)
        from leakaudit.learners import RandomForest

        # the input types of the Adult runs (float64 features, 2 classes); fit_predict_many with more models
        # than threads (trees queried as they are grown) and with one (a bank, then queried)
        RandomForest(n_estimators=2).fit_many(X, y, [np.arange(16)], [0], n_classes=2).predict_proba(X)
        RandomForest(n_estimators=2).fit_predict_many(X, y, [np.arange(16)] * 8, list(range(8)), X, n_classes=2)
    except ImportError:  # pragma: no cover
        pass


def run_comparison(name: str, result_name: str, fn, *, quick: bool) -> dict:
    """Run ``fn()`` (one comparison row), record an exception as the row's error, print a summary line and
    write ``results/<result_name>[_quick].json``."""
    try:
        row = fn()
    except Exception as e:  # a peer failing to run is a result to report, not a crash
        row = {"name": name, "error": f"{type(e).__name__}: {e}"[-2000:]}
    print({k: row.get(k) for k in ("name", "error", "peer_seconds", "our_seconds", "speedup", "cpu_speedup",
                                   "peer_quality", "our_quality")}, flush=True)
    write_result(result_name + ("_quick" if quick else ""), {"comparisons": [row]})
    return row
