"""Audit scaling: time and peak memory of `leakaudit audit` (standard profile, the demo network) against the number
of members, up to the full Adult training set (32,561 members, 16,281 non-members).

Each point is one `leakaudit audit` in a fresh subprocess with a fresh cache folder (nothing reused), so its time
and peak memory (results.json ``resources.peak_memory_mb``: the process's VmHWM) are its own. The machine's load
average is recorded beside every point: the machine is shared, so a loaded point is an upper bound. The growth
exponent is the least-squares slope of log time on log members.

    python benchmarks/bench_audit_scaling.py                 # 1,000 ... 32,561 members
    python benchmarks/bench_audit_scaling.py --members 1000 4000
    python benchmarks/bench_audit_scaling.py --members 4000 --n-reference 16 64 256   # against reference models
    python benchmarks/bench_audit_scaling.py --members 32561 --n-reference 256        # memory at 256 x 48,842
    python benchmarks/bench_audit_scaling.py --members 1000 4000 8000 16000 32561 --tag session18
    python benchmarks/bench_audit_scaling.py --members 4000 8000 16000 32561 --seeds 0 1 2 --tag session19

Every point records the wall time, the CPU time (user + sys of the audit's process tree) and the load averages
before and after: on a shared machine the CPU time is the comparable figure. ``--tag`` labels a series: points are
measured again under a new tag, and the summary (results/audit_scaling.json) covers the tag's rows.

``--seeds`` repeats every point with other audit seeds (another split of Adult, other models, another sample): the
summary fits the exponent above ``pdtp_exact_max`` per seed and gives its mean over the seeds with a t-interval.

``--n-reference`` replaces the profile's number of reference models (LiRA, RMIA, the shadow attack's shadow models
and the PDTP screening's ranking all use them); its rows carry ``n_reference`` and their own exponent, the slope of
log time on log reference models at a fixed number of members (pooled, and per seed with the mean over seeds and
its t-interval).

``--memory-budget`` passes the audit's ``--memory-budget`` (e.g. 64MB: model outputs above it are held in a
disk-backed array). Every row carries digests of its results.json (without what a run's place and time change:
``created``, ``command``, ``timings``, ``resources``, the cache folder) and records.csv, so a run at a small budget
can be compared with the same point in memory:

    python benchmarks/bench_audit_scaling.py --members 16000 --n-reference 256 --tag budget
    python benchmarks/bench_audit_scaling.py --members 16000 --n-reference 256 --memory-budget 64MB --tag budget
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ADULT = 48_842  # records in Adult (train + test files)
FULL = (32_561, 16_281)  # Adult's own training and test files
MEMBERS = (1000, 2000, 4000, 8000, 16000, 32561)


def _nonmembers(n: int) -> int:
    return FULL[1] if n == FULL[0] else min(n, ADULT - n)


# runs the CLI with the profile's n_reference replaced (a profile setting, not a flag)
_WITH_REFERENCE = """
import json, sys
import leakaudit.audit.config as c
p = json.loads(sys.argv[1])
c.PROFILES[p["profile"]] = c.PROFILES[p["profile"]].model_copy(update={"n_reference": p["n_reference"]})
from leakaudit.cli import main
sys.exit(main(p["argv"]))
"""


def results_digests(out: Path) -> dict:
    """SHA-256 of an audit's results.json without what the run's place and time change (``created``, ``command``,
    ``timings``, ``resources``, ``config.cache_dir``; keys sorted) and of its records.csv as written."""
    res = json.loads((out / "results.json").read_text())
    for key in ("created", "command", "timings", "resources"):
        res.pop(key, None)
    res.get("config", {}).pop("cache_dir", None)
    canon = json.dumps(res, sort_keys=True).encode()
    return {"results_json": hashlib.sha256(canon).hexdigest(),
            "records_csv": hashlib.sha256((out / "records.csv").read_bytes()).hexdigest()}


class RssSampler:
    """Samples the resident memory of one process (``/proc/PID/status``, every ``interval`` seconds) in a thread:
    the largest anonymous (``RssAnon``: the process's own arrays) and file-backed (``RssFile``: mapped files, a
    disk-backed output array's pages among them) resident memory seen. VmHWM counts both, and the kernel keeps a
    mapped file's pages resident while memory is free, so only this split shows what must stay in memory."""

    def __init__(self, pid: int, interval: float = 0.25):
        import threading

        self.pid, self.interval, self.peak = pid, interval, {"RssAnon": 0.0, "RssFile": 0.0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                lines = Path(f"/proc/{self.pid}/status").read_text().splitlines()
            except OSError:  # ended, or no /proc
                return
            for line in lines:
                key, _, value = line.partition(":")
                if key in self.peak:
                    self.peak[key] = max(self.peak[key], int(value.split()[0]) / 1024)  # kB -> MB
            self._stop.wait(self.interval)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {"peak_rss_anon_mb": round(self.peak["RssAnon"], 1), "peak_rss_file_mb": round(self.peak["RssFile"], 1),
                "sampled_every_s": self.interval}


def run_point(n: int, profile: str, n_reference: int | None = None, seed: int = 0,
              memory_budget: str | None = None) -> dict:
    exe = Path(sys.executable).parent / "leakaudit"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "leakaudit.cli"]
    with tempfile.TemporaryDirectory() as d:
        args = ["audit", "--profile", profile, "--n-members", str(n), "--n-nonmembers", str(_nonmembers(n)),
                "--out", f"{d}/out", "--cache-dir", f"{d}/cache", "--seed", str(seed)]
        if memory_budget is not None:
            args += ["--memory-budget", memory_budget]
        argv = cmd + args
        if n_reference is not None:
            argv = [sys.executable, "-c", _WITH_REFERENCE,
                    json.dumps({"profile": profile, "n_reference": n_reference, "argv": args})]
        load0 = os.getloadavg()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sampler = RssSampler(proc.pid)
        _, stderr = proc.communicate()
        wall = time.perf_counter() - t0
        sampled = sampler.stop()
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the audit's process tree, once it has ended
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        if proc.returncode not in (0, 3, 4):
            raise RuntimeError(f"audit failed at n={n}: {stderr.strip()[-500:]}")
        res = json.loads(Path(d, "out", "results.json").read_text())
        digests = results_digests(Path(d, "out"))
    dtp = res["dtp"]
    return {"n_members": n, "n_nonmembers": _nonmembers(n), "profile": profile, "seed": seed,
            "n_reference": n_reference if n_reference is not None else res["settings"].get("n_reference"),
            "reference_overridden": n_reference is not None, "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "stage_seconds": res["timings"], "peak_memory_mb": res["resources"]["peak_memory_mb"],
            "pdtp_measured": dtp.get("n_records"), "screening": {k: v for k, v in (dtp.get("screening") or {}).items()
                                                                if k != "sample_records"} or None,
            "verdict": res["verdict"]["outcome"], "load_before": round(load0[0], 2),
            "load_after": round(os.getloadavg()[0], 2), "load_5min_before": round(load0[1], 2),
            "load_5min_after": round(os.getloadavg()[1], 2), "leakaudit": res["leakaudit_version"],
            "memory_budget": memory_budget,
            "outputs_on_disk": res["resources"].get("reference_models", {}).get("outputs_on_disk"),
            "digests": digests, "memory_sampled": sampled}


def growth_exponent(rows: list[dict], key: str = "seconds", along: str = "n_members") -> float | None:
    """Least-squares slope of log ``key`` on log ``along``."""
    fit = exponent_interval(rows, key, along)
    return None if fit is None else fit["exponent"]


def exponent_interval(rows: list[dict], key: str = "seconds", along: str = "n_members",
                      confidence: float = 0.95) -> dict | None:
    """The slope of log ``key`` on log ``along`` with its t-interval (None with fewer than 2 points; no interval
    with 2, which a line fits exactly)."""
    import numpy as np
    from scipy import stats

    pts = [(r[along], r[key]) for r in rows if r.get(key)]
    if len({p[0] for p in pts}) < 2:  # a slope needs two values of ``along`` (seeds repeat one)
        return None
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    res = stats.linregress(x, y)
    out = {"exponent": float(res.slope), "points": len(pts), "interval": None, "confidence": confidence}
    if len(pts) > 2:
        q = stats.t.ppf(0.5 + confidence / 2, len(pts) - 2)
        out["interval"] = [float(res.slope - q * res.stderr), float(res.slope + q * res.stderr)]
    return out


def _exponent_over_seeds(rows: list[dict], key: str, along: str, confidence: float = 0.95) -> dict:
    """The slope of log ``key`` on log ``along`` fitted per seed (a seed needs two values of ``along``), then its
    mean over the seeds with a t-interval."""
    import numpy as np
    from scipy import stats

    per_seed = {}
    for seed in sorted({r.get("seed", 0) for r in rows}):
        fit = exponent_interval([r for r in rows if r.get("seed", 0) == seed], key, along)
        if fit is not None:
            per_seed[seed] = fit["exponent"]
    e = np.array(list(per_seed.values()))
    interval = None
    if e.size > 1:
        h = stats.t.ppf(0.5 + confidence / 2, e.size - 1) * e.std(ddof=1) / np.sqrt(e.size)
        interval = [float(e.mean() - h), float(e.mean() + h)]
    return {"per_seed": per_seed, "mean": float(e.mean()) if e.size else None, "interval": interval,
            "confidence": confidence}


def _over_seeds(rows: list[dict]) -> dict:
    """The growth exponent in members above the profile's ``pdtp_exact_max`` (the seed's screened points), per
    seed and over the seeds, for wall and CPU time."""
    screened = [r for r in rows if r.get("screening")]
    return {"wall": _exponent_over_seeds(screened, "seconds", "n_members"),
            "cpu": _exponent_over_seeds(screened, "cpu_seconds", "n_members")}


def _reference_over_seeds(rows: list[dict]) -> dict:
    """The exponent in reference models at one member count, per seed and over the seeds: wall, CPU, the
    membership stage's time (where the reference models are trained and used) and peak memory."""
    rows = [{**r, "membership_seconds": r["stage_seconds"].get("membership")} for r in rows]
    return {key: _exponent_over_seeds(rows, key, "n_reference")
            for key in ("seconds", "cpu_seconds", "membership_seconds", "peak_memory_mb")}


def loo_cost(n: int, k: int = 32) -> dict:
    """CPU seconds of ``k`` paired leave-one-out demo networks on ``n`` members (one engine batch, in this
    process, no cache): the unit of the DTP stage's work, whose count the screen keeps from growing with n."""
    import numpy as np

    from leakaudit.audit import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.inputs.target import demo_learner
    from leakaudit.dtp import pdtp
    from leakaudit.engine import Engine

    cfg = make_config(n_members=n, n_nonmembers=_nonmembers(n))
    data = prepare_data(cfg)
    c0, t0 = time.process_time(), time.perf_counter()
    pdtp(demo_learner(cfg), data.X_mem, data.y_mem, records=np.arange(k), n_classes=data.n_classes,
         seed_policy="paired", random_state=0, engine=Engine(backend="inprocess"), keep_outputs=False)
    return {"n_members": n, "models": k, "cpu_seconds": round(time.process_time() - c0, 2),
            "seconds": round(time.perf_counter() - t0, 2), "load_before": round(os.getloadavg()[0], 2)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int, nargs="+", default=list(MEMBERS))
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--n-reference", type=int, nargs="+", default=None,
                    help="reference models (replacing the profile's); one point per value and member count")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0],
                    help="audit seeds: one point per seed and member count (the split, the models, the sample)")
    ap.add_argument("--tag", default=None,
                    help="label of this series (e.g. the session): points are re-measured and summarised per tag")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "audit_scaling.json")
    ap.add_argument("--memory-budget", default=None,
                    help="the audit's --memory-budget (e.g. 64MB): outputs above it are held on disk")
    ap.add_argument("--loo-cost", action="store_true",
                    help="only the CPU cost of 32 leave-one-out demo networks at each member count")
    args = ap.parse_args(argv)
    if args.loo_cost:
        path = args.out.with_name("audit_scaling_loo_cost.jsonl")
        rows = []
        for n in args.members:
            rows.append({**loo_cost(n), "tag": args.tag})
            with path.open("a") as fh:
                fh.write(json.dumps(rows[-1]) + "\n")
            print(json.dumps(rows[-1]), flush=True)
        print(json.dumps({"cpu_exponent": exponent_interval(rows, "cpu_seconds")}), flush=True)
        return {"rows": rows}
    log = args.out.with_suffix(".jsonl")
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    rows = [r for r in rows if r.get("tag") == args.tag]
    done = {(r["n_members"], r["profile"], r.get("n_reference") if r.get("reference_overridden") else None,
             r.get("seed", 0), r.get("memory_budget")) for r in rows}
    for seed in args.seeds:  # seed by seed, so that a stopped run leaves whole series
        for n in args.members:
            for n_ref in args.n_reference or [None]:
                if (n, args.profile, n_ref, seed, args.memory_budget) in done:
                    continue
                row = {**run_point(n, args.profile, n_ref, seed, args.memory_budget), "tag": args.tag}
                with log.open("a") as fh:  # one line per finished point: a killed run keeps what it finished
                    fh.write(json.dumps(row) + "\n")
                rows.append(row)
                print(json.dumps({k: row[k] for k in ("n_members", "seed", "n_reference", "seconds", "cpu_seconds",
                                                      "peak_memory_mb", "pdtp_measured", "verdict", "load_before",
                                                      "memory_budget", "outputs_on_disk")}), flush=True)
    by_ref = sorted((r for r in rows if r["profile"] == args.profile and r.get("reference_overridden")),
                    key=lambda r: (r["n_members"], r["n_reference"]))
    rows = sorted((r for r in rows if r["profile"] == args.profile and not r.get("reference_overridden")),
                  key=lambda r: r["n_members"])
    exact = [r for r in rows if not r.get("screening")]
    screened = [r for r in rows if r.get("screening")]
    last_exact = [r for r in exact if r["n_members"] == exact[-1]["n_members"]] if exact else []  # every seed's
    out = {"tag": args.tag, "rows": rows,
           # one exponent per regime: exact PDTP up to the profile's pdtp_exact_max, screened beyond it
           "growth_exponent_time": {"exact": growth_exponent(exact), "screened": growth_exponent(screened)},
           # time against n from the last exact point (pdtp_exact_max) on, wall and CPU, with t-intervals
           "growth_exponent_above_exact_max": {
               "from": exact[-1]["n_members"] if exact else None,
               "wall": exponent_interval(last_exact + screened),
               "cpu": exponent_interval(last_exact + screened, "cpu_seconds"),
               "cpu_screened_only": exponent_interval(screened, "cpu_seconds")},
           "growth_exponent_memory": {"exact": growth_exponent(exact, "peak_memory_mb"),
                                      "screened": growth_exponent(screened, "peak_memory_mb")},
           "growth_exponent_over_seeds": _over_seeds(rows),
           "rows_by_reference": by_ref,
           "growth_exponent_in_reference": {
               str(n): {"time": growth_exponent([r for r in by_ref if r["n_members"] == n], along="n_reference"),
                        "membership_stage": growth_exponent(
                            [{**r, "m": r["stage_seconds"].get("membership")} for r in by_ref if r["n_members"] == n],
                            "m", along="n_reference"),
                        "memory": growth_exponent([r for r in by_ref if r["n_members"] == n], "peak_memory_mb",
                                                  along="n_reference"),
                        "over_seeds": _reference_over_seeds([r for r in by_ref if r["n_members"] == n])}
               for n in sorted({r["n_members"] for r in by_ref})}}
    # one summary per tag; a file written before tags existed is the untagged series
    prev = json.loads(args.out.read_text()) if args.out.exists() else {}
    series = prev.get("series", {"untagged": prev} if prev else {})
    series[args.tag or "untagged"] = out
    args.out.write_text(json.dumps({"series": series}, indent=1))
    return out


if __name__ == "__main__":
    main()
