"""Memory and time of a thorough-profile audit of up to 45,000 Adult records (issue #11, "Resources").

What runs: ``leakaudit.audit.run_audit`` on the bundled Adult demo (the demo learner: ``TorchMLP``,
64 tanh units, faithful per-example SGD, 30 epochs) with ``n_members = n_nonmembers = N/2``, the
in-process backend, a fresh cache folder, and the ``thorough`` profile's settings: 256 reference
models (LiRA, RMIA), 20 noise-floor models, 20 shadow models per property grid point, 2,000
bootstrap resamples, PDTP with 10 repeats -- except that PDTP runs on ``--pdtp-records`` records
instead of all N/2 members (PDTP over every member needs 10 leave-one-out retrainings per member:
225,000 trainings at N = 45,000, days of CPU). The profile is replaced in this benchmark's own
process (``leakaudit.audit.config.PROFILES["thorough"]``); the library is not changed. The PDTP
time over all members is extrapolated linearly from the measured seconds per record (wall, and CPU:
on a shared machine the wall time mostly measures the other jobs).

Each size runs in a fresh subprocess, so its peak resident memory is its own. Per stage the
benchmark records wall time, process CPU time (all threads), the peak RSS sampled every 50 ms
while the stage ran, and the process's peak RSS (``VmHWM``) at the end of the stage. ``run_audit``'s stages are timed by
wrapping ``leakaudit.audit.pipeline._Stages.stage`` (again only in this process). The audit's own
``resources.peak_memory_mb`` from results.json is recorded beside it.

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_audit_memory.py --sizes 5000 10000 45000 \
        [--pdtp-records 10] [--out benchmarks/results/audit_memory.json]

Entries for other sizes already in the output file are kept (a later run adds or replaces sizes).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "audit_memory.json"
LIMIT_GIB = 24.0


def _rss_now_mb() -> float:
    from leakaudit._resources import rss_now_mb

    return rss_now_mb()


def _maxrss_mb() -> float:
    """Peak RSS of this process (VmHWM: ``ru_maxrss`` would carry over the parent's peak, see leakaudit._resources)."""
    from leakaudit._resources import peak_rss_mb

    return peak_rss_mb()


class _Sampler:
    """Samples this process's RSS every ``interval`` seconds; ``reset`` starts a new stage window."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak = _rss_now_mb()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, _rss_now_mb())

    def reset(self) -> None:
        self.peak = _rss_now_mb()

    def stop(self) -> None:
        self._stop.set()
        self._t.join()


def _code_version() -> dict:
    """The commit, and whether the audit code differs from it (the pipeline was changing while measured)."""
    import hashlib

    root = HERE.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "src/leakaudit"], cwd=root, capture_output=True,
                               text=True).stdout.split("\n")
    except OSError:
        head, dirty = None, []
    pipe = root / "src" / "leakaudit" / "audit" / "pipeline.py"
    return {"git_head": head, "modified_src_files": sorted(x[3:] for x in dirty if x.strip()),
            "pipeline_sha256": hashlib.sha256(pipe.read_bytes()).hexdigest()[:16] if pipe.exists() else None}


def run_one(n_records: int, pdtp_records: int, seed: int) -> dict:
    """Run one audit in this process and return its measurements."""
    import warnings

    from leakaudit.audit import config as C
    from leakaudit.audit import make_config, pipeline, run_audit

    code = _code_version()
    base = C.PROFILES["thorough"]
    C.PROFILES["thorough"] = base.model_copy(update={"pdtp_records": pdtp_records})
    settings = C.PROFILES["thorough"].model_dump()

    sampler = _Sampler()
    stages: dict[str, dict] = {}
    orig_stage = pipeline._Stages.stage

    @contextlib.contextmanager
    def stage(self, name, what):
        sampler.reset()
        w0, c0 = time.perf_counter(), time.process_time()
        with orig_stage(self, name, what):
            yield
        stages[name] = {"wall_s": round(time.perf_counter() - w0, 2), "cpu_s": round(time.process_time() - c0, 2),
                        "peak_rss_mb": round(max(sampler.peak, _rss_now_mb()), 1),
                        "maxrss_after_mb": round(_maxrss_mb(), 1)}

    pipeline._Stages.stage = stage

    # PDTP and the seed noise floor share the "dtp" stage: time them apart for the extrapolation.
    import importlib

    P = importlib.import_module("leakaudit.dtp.pdtp")  # the module (the package re-exports a function of that name)
    NF = importlib.import_module("leakaudit.dtp.noise_floor")

    sub: dict[str, float] = {}

    def timed(mod, attr):
        f = getattr(mod, attr)

        def g(*a, **k):
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                return f(*a, **k)
            finally:
                sub[attr] = round(time.perf_counter() - w0, 2)
                sub[attr + "_cpu"] = round(time.process_time() - c0, 2)

        setattr(mod, attr, g)

    timed(P, "pdtp")
    timed(NF, "seed_noise_floor")

    work = Path(tempfile.mkdtemp(prefix="bench-audit-mem-"))
    try:
        cfg = make_config(n_members=n_records // 2, n_nonmembers=n_records - n_records // 2, profile="thorough",
                          seed=seed, backend="inprocess", cache_dir=work / "cache")
        baseline = _rss_now_mb()
        w0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_audit(cfg, work / "out", verbose=False)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        results = json.loads((work / "out" / "results.json").read_text())
        report = (work / "out" / "report.html").read_text()
        peak = results["resources"].get("peak_memory_mb")
        # the report writes it rounded to whole MB with thousands separators (report/html.py's fmt)
        shown = peak is not None and f"{peak:,.0f} MB" in report
        cache_bytes = sum(p.stat().st_size for p in (work / "cache").rglob("*") if p.is_file())
    finally:
        sampler.stop()
        shutil.rmtree(work, ignore_errors=True)
    n_mem = n_records // 2
    pdtp_s = sub.get("pdtp")
    per_rec = pdtp_s / pdtp_records if pdtp_s is not None and pdtp_records else None
    pdtp_cpu = sub.get("pdtp_cpu")
    per_rec_cpu = pdtp_cpu / pdtp_records if pdtp_cpu is not None and pdtp_records else None
    ref = results["resources"].get("reference_models", {})
    return {
        "n_records": n_records,
        "n_members": n_mem,
        "n_nonmembers": n_records - n_mem,
        "n_population": results["data"].get("n_population"),
        "profile": "thorough",
        "profile_settings_run": settings,
        "n_reference_models": ref.get("n_models"),
        "reference_models_trained": ref.get("trained"),
        "seed": seed,
        "backend": "inprocess",
        "peak_rss_mb": round(_maxrss_mb(), 1),
        "peak_rss_gib": round(_maxrss_mb() / 1024, 3),
        "rss_after_imports_mb": round(baseline, 1),
        "results_json_peak_memory_mb": results["resources"].get("peak_memory_mb"),
        "report_html_shows_peak_memory": shown,
        "fits_in_24_gib": _maxrss_mb() / 1024 < LIMIT_GIB,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "stages": stages,
        "audit_timings": results.get("timings"),
        "dtp_parts_wall_s": sub,
        "pdtp_seconds_per_record": None if per_rec is None else round(per_rec, 3),
        "pdtp_all_members_extrapolated_s": None if per_rec is None else round(per_rec * n_mem),
        "pdtp_cpu_seconds_per_record": None if per_rec_cpu is None else round(per_rec_cpu, 3),
        "pdtp_all_members_extrapolated_cpu_s": None if per_rec_cpu is None else round(per_rec_cpu * n_mem),
        "cache_bytes": cache_bytes,
        "attacks_run": sorted(results.get("membership", {}) or {}),
        "resources_reported": results.get("resources"),
        "code": code,
        "verdict": results.get("verdict"),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 45000], help="records audited (N)")
    ap.add_argument("--pdtp-records", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # child mode
    a = ap.parse_args(argv)
    if a.one is not None:
        print(json.dumps(run_one(a.one, a.pdtp_records, a.seed)))
        return 0
    for n in a.sizes:
        t0 = time.time()
        proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--pdtp-records", str(a.pdtp_records),
                               "--seed", str(a.seed)], capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        entry = json.loads(proc.stdout.strip().splitlines()[-1])
        entry["measured_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        try:
            data = json.loads(a.out.read_text())
        except (OSError, ValueError):
            data = {}
        runs = {int(r["n_records"]): r for r in data.get("runs", [])}
        runs[n] = entry
        data = {
            "what": ("thorough-profile audit (256 reference models) of N Adult records, N/2 members; PDTP on "
                     "--pdtp-records members only, its full time extrapolated; peak RSS = ru_maxrss of a fresh "
                     "process"),
            "command": "nice -n 10 .venv/bin/python benchmarks/bench_audit_memory.py --sizes "
                       + " ".join(str(r) for r in sorted(runs)) + f" --pdtp-records {a.pdtp_records}",
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "limit_gib": LIMIT_GIB,
            "runs": [runs[k] for k in sorted(runs)],
        }
        a.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = a.out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, a.out)
        print(f"N={n}: peak {entry['peak_rss_mb']:.0f} MB, wall {entry['wall_s']:.0f} s "
              f"(ran {time.time() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
