"""``make bench``: run every benchmark and write ``benchmarks/RESULTS.md``.

Steps: create the peer tools' virtual environments if missing (``benchmarks/peers.sh``), run each
``bench_*.py`` in its own process (in sequence, so they do not compete with each other), collect their
``benchmarks/results/*.json`` and write ``benchmarks/RESULTS.md``: one table per comparison (work, peer
time, our time, ratio, both tools' attack quality), the machine (nproc, CPU, load average at start from
``os.getloadavg()``), the command, the machine-limit fractions and the scaling curves.

Usage:
    .venv/bin/python benchmarks/run_all.py                 # full sizes (long on a loaded machine)
    .venv/bin/python benchmarks/run_all.py --quick         # tiny sizes, writes RESULTS_quick.md: a check that all runs
    .venv/bin/python benchmarks/run_all.py --report-only   # only rewrite RESULTS.md from results/*.json
    .venv/bin/python benchmarks/run_all.py --only lira,pdtp
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

BENCHES = {  # key: (script, full-size arguments)
    "lira": ("bench_lira_vs_sacroml.py", []),
    "pdtp": ("bench_pdtp_vs_art.py", []),
    "shadow": ("bench_shadow_vs_art.py", []),
    "reference": ("bench_reference_vs_privacymeter.py", []),
    "tfprivacy": ("bench_lira_vs_tfprivacy.py", []),
    "machine": ("bench_machine_limit.py", []),
    "scaling": ("bench_scaling.py", []),
    "parallel": ("bench_parallel.py", []),
    "kernels": ("bench_kernels.py", []),
    "audit_mlp": ("bench_audit_mlp_target.py", []),
    "membership": ("bench_membership_throughput.py", []),
}
PEER_TOOLS = {"art": "adversarial-robustness-toolbox", "sacroml": "sacroml", "privacymeter": "privacy-meter",
              "tfprivacy": "tensorflow-privacy"}


def ensure_peers() -> None:
    missing = [t for t in PEER_TOOLS if not (C.PEERS / t / "venv" / "bin" / "python").exists()]
    if missing:
        print(f"creating peer environments: {', '.join(missing)}", flush=True)
        subprocess.run(["bash", str(C.HERE / "peers.sh"), *missing], check=False)


def run_benches(keys, quick: bool) -> list[dict]:
    log = []
    for k in keys:
        script, args = BENCHES[k]
        cmd = [sys.executable, str(C.HERE / script), *(["--quick"] if quick else args)]
        t0, load0 = time.time(), C.loadavg()
        print(f"== {script} (load {load0:.1f})", flush=True)
        p = subprocess.run(cmd, cwd=C.ROOT)
        log.append({"bench": script, "returncode": p.returncode, "seconds": time.time() - t0, "load_start": load0})
    return log


# -- report -------------------------------------------------------------------------------------------------


def _f(x, fmt="{:.3g}"):
    if x is None:
        return "–"
    if isinstance(x, float) and x != x:
        return "n/a"
    return fmt.format(x)


def _pct(x):
    return "n/a" if x is None or x != x else f"{100 * x:.1f} %"


def _q(q):
    if not q:
        return "–"
    return f"AUC {_f(q.get('auc'), '{:.3f}')}, TPR@0.1% {_pct(q.get('tpr_at_0.1%fpr'))}"


def _load(paths):
    out = {}
    for p in sorted(paths):
        try:
            out[p.stem] = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            continue
    return out


def comparison_table(rows, cmd) -> list[str]:
    lines = ["| comparison | work | peer (version) | peer time: wall / CPU | our time: wall / CPU | ratio wall / CPU "
             "| peer quality | our quality | load avg start → end |",
             "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | – | – | – | – | – | – | – | – |")
            notes.append(f"- `{r['name']}` did not run: `{r['error'].splitlines()[-1][:300]}`")
            continue
        q_peer = _q(r["peer_quality"]) if r.get("peer_quality") else _agreement(r) if r.get("agreement") else "–"
        q_ours = _q(r["our_quality"]) if r.get("our_quality") else "(see agreement)" if r.get("agreement") else "–"
        lines.append(
            f"| {r['name']} | {r['work']} | {r['peer']} {r.get('peer_version') or ''} | "
            f"{_f(r['peer_seconds'], '{:.1f}')} s / {_f(r.get('peer_cpu_seconds'), '{:.1f}')} s | "
            f"{_f(r['our_seconds'], '{:.2f}')} s / {_f(r.get('our_cpu_seconds'), '{:.2f}')} s | "
            f"**{_f(r.get('speedup'), '{:.1f}')}x** / **{_f(r.get('cpu_speedup'), '{:.1f}')}x** | {q_peer} | {q_ours} | "
            f"{_f(r['load_start'], '{:.1f}')} → {_f(r['load_end'], '{:.1f}')} |")
        if r.get("notes"):
            notes.append(f"- `{r['name']}`: {r['notes']}")
        if r.get("our_other_modes"):
            notes.append(f"- `{r['name']}`, leakaudit's other LiRA modes on the same shadow models: "
                         + "; ".join(f"{k} {_q(v)}" for k, v in r["our_other_modes"].items()))
        if r.get("peer_own_metrics"):
            own = r["peer_own_metrics"]
            notes.append(f"- `{r['name']}`, the peer's own report: AUC {_f(own.get('AUC'), '{:.3f}')}, "
                         f"TPR@0.1% {_f(own.get('TPR@0.1%'), '{:.3f}')}")
    return lines + [""] + notes + ["", f"Command: `{cmd}`", ""]


def _agreement(r):
    a = r.get("agreement") or {}
    s = f"Spearman r {_f(a.get('spearman_r'), '{:.2f}')}; mean ln-ratio ART {_f(a.get('art_mean_ln_ratio'), '{:.3f}')} " \
        f"vs ours {_f(a.get('our_mean_eps'), '{:.3f}')}"
    if "max_abs_diff_full_model_proba" in a:
        s += f"; full models differ by {_f(a['max_abs_diff_full_model_proba'], '{:.1e}')}"
    return s


def lm_scoring_section(res) -> list[str]:
    """Language-model scoring (bench_lm_scoring.py): our batched scorer against the transformers per-text
    perplexity loop on the same model and texts, at 1 and 2 threads, and against torch.mm's peak."""
    r = res.get("lm_scoring")
    if not r:
        return ["Not run.", ""]
    out = [f"{r['model']}; {r['n_texts']} texts, {r['n_tokens']:,} tokens (context {r['context']}); load "
           f"{r['loadavg_start']:.1f} -> {r['loadavg_end']:.1f}; {r['timing']}.", "",
           "| threads | batched tokens/s (per CPU s) | per-text loop tokens/s (per CPU s) | ratio wall / CPU | "
           "share of the matmul peak (CPU) |", "|---|---|---|---|---|"]
    for t in (1, 2):
        x = r.get(f"threads_{t}")
        if not x:
            out.append(f"| {t} | not run | | | |")
            continue
        b, p = x["batched"], x["per_text"]
        out.append(f"| {t} | {b['tokens_per_second']:,.0f} ({b['tokens_per_cpu_second']:,.0f}) | "
                   f"{p['tokens_per_second']:,.0f} ({p['tokens_per_cpu_second']:,.0f}) | "
                   f"{x['speedup_vs_per_text']:.2f}x / {x['speedup_vs_per_text_cpu']:.2f}x | "
                   f"{100 * x['fraction_of_peak_cpu']:.0f} % |")
    out += ["", "Command: `.venv/bin/python benchmarks/bench_lm_scoring.py`", ""]
    return out


def machine_section(res) -> list[str]:
    m = res.get("machine_limit")
    if not m:
        return ["Not measured (run `benchmarks/bench_machine_limit.py`).", ""]
    lines = [f"Measured float32 matmul peak (torch.mm 2048², best of 10): {m['peak_gflops_1thread']:.1f} GFLOP/s per "
             f"wall second and {m.get('peak_gflops_1thread_per_cpu_second', float('nan')):.1f} GFLOP/s per CPU second "
             f"(1 thread); 2 threads {m.get('peak_gflops_2threads', m.get('peak_gflops_all_threads', float('nan'))):.1f} "
             f"GFLOP/s per wall second. Copy bandwidth: {m['bandwidth_gbs']:.1f} GB/s per wall second, "
             f"{m.get('bandwidth_gbs_per_cpu_second', float('nan')):.1f} GB/s per CPU second. "
             f"Load average {m['load_start']:.1f} → {m['load_end']:.1f}.", "",
             "FLOPs: the model's dense FLOPs for `mlp`, `mlp_1thread` and `mlp_torch` (the C kernel performs all of "
             "them; on torch's path FlopCounterMode counts 1 % more), the FLOPs actually performed for "
             "`mlp_sparse` (its dense-equivalent rate is given below the table, labelled as such), FlopCounterMode for "
             "`cnn`. The `work` column names the kernel that trained.", "",
             "| training | work | wall s | CPU s | achieved GFLOP/s (wall / CPU) "
             "| fraction of the 1-thread peak (wall/wall, CPU/CPU) | fraction of the 2-thread peak (wall/wall) |",
             "|---|---|---|---|---|---|---|"]
    for c in m["cases"]:
        if c["name"] == "faithful_sgd":
            continue
        lines.append(f"| {c['name']} | {c['work']}: {c['gflop']:.1f} GFLOP | {c['seconds']:.2f} | {c['cpu_seconds']:.2f} | "
                     f"{c['gflops_achieved']:.2f} / {c['gflops_per_cpu_second']:.2f} | "
                     f"{_pct(c['fraction_of_1thread_peak'])} / {_pct(c['cpu_fraction_of_1thread_peak'])} | "
                     f"{_pct(c.get('fraction_of_all_threads_peak'))} |")
    for c in m["cases"]:
        if "dense_equivalent_gflops_per_cpu_second" in c:
            lines += ["", f"`{c['name']}`: {c['models_per_cpu_second']:.0f} models per CPU second "
                      f"({c['models_per_second']:.0f} per wall second); dense-equivalent rate (the dense model's FLOPs "
                      f"over the time taken, NOT FLOPs performed): {c['dense_equivalent_gflops_per_cpu_second']:.1f} "
                      f"GFLOP per CPU second = {_pct(c['dense_equivalent_cpu_fraction_of_1thread_peak'])} of the peak."]
    for c in m["cases"]:
        if c["name"] == "faithful_sgd":
            lines += ["", f"Per-example SGD ({c['work']}): {c['seconds']:.2f} s wall, {c['cpu_seconds']:.2f} s CPU, "
                      f"{c['updates_per_second']:.0f} updates/s. Memory-traffic bound (12 bytes x "
                      f"{c['touched_params_per_update']:.0f} touched float32 parameters per update, over the copy "
                      f"bandwidth): {c['bandwidth_bound_seconds']:.3f} s, i.e. "
                      f"{_pct(c['fraction_of_bandwidth_bound'])} of the bound reached (wall), "
                      f"{_pct(c['cpu_fraction_of_bandwidth_bound'])} (CPU). The parameters fit in cache, so the "
                      "DRAM bound is loose; values above 100 % mean the kernel beats DRAM bandwidth."]
    return lines + ["", f"Command: `{m.get('command', '')}`", ""]


def scaling_section(res) -> list[str]:
    s = res.get("scaling")
    if not s:
        return ["Not measured (run `benchmarks/bench_scaling.py`).", ""]
    lines = []
    for kind, title in (("models", "Reference models K (NaiveBayes, 1,000-record pool, online LiRA)"),
                        ("records", "Audited records n (TorchMLP fast, 16 reference models, online LiRA)")):
        lines += [f"**{title}**", "", "| value | wall s | CPU s | peak RSS MB | peak after training MB | RSS before MB | outputs MB | "
                  "peak − before − outputs MB | AUC | load |", "|---|---|---|---|---|---|---|---|---|---|"]
        for p in s["points"]:
            if p["kind"] != kind:
                continue
            if "error" in p:
                lines.append(f"| {p['value']:,} | {p['error'][:80]} | | | | | | | | {p['load_start']:.1f} |")
                continue
            extra = p["peak_rss_mb"] - p["baseline_rss_mb"] - p["outputs_mb"]
            lines.append(f"| {p['value']:,} | {p['seconds']:.1f} | {p['cpu_seconds']:.2f} | {p['peak_rss_mb']:.0f} | "
                         f"{_f(p.get('peak_rss_after_training_mb'), '{:.0f}')} | {p['baseline_rss_mb']:.0f} | {p['outputs_mb']:.1f} | {extra:.0f} | "
                         f"{p['quality']['auc']:.3f} | {p['load_start']:.1f} |")
        lines += ["", f"![scaling {kind}](plots/scaling_{kind}.png)", ""]
    return lines + [f"Command: `{s.get('command', '')}`", ""]


def parallel_section(res) -> list[str]:
    p = res.get("parallel")
    if not p:
        return ["Not measured (run `benchmarks/bench_parallel.py`).", ""]
    lines = ["| workload | work | 1 thread: wall s (CPU s) | all cores: wall s (CPU s) | speed-up | efficiency | "
             "identical models | load |", "|---|---|---|---|---|---|---|---|"]
    for r in p["rows"]:
        lines.append(f"| {r['name']}{' (' + r['backend'] + ')' if r.get('backend') else ''} | {r['work']} | "
                     f"{r['seconds_1']:.2f} ({r['cpu_seconds_1']:.2f}) | {r['seconds_all']:.2f} ({r['cpu_seconds_all']:.2f}) | "
                     f"{r['speedup']:.2f}x | {_pct(r['efficiency'])} | {'yes' if r['identical_models'] else 'NO'} | "
                     f"{r['load_start']:.1f} → {r['load_end']:.1f} |")
    return lines + ["", f"{p['rows'][0]['cores']} cores. Speed-up = wall(1 thread) / wall(all cores). CPU seconds "
                    "of the process backend's workers are counted only when the workers exit, so its CPU column "
                    "shows the parent only.", "", f"Command: `{p.get('command', '')}`", ""]


#: the targets: ratio against each peer tool on equal work in CPU time, on every CPU type measured (issue 86), and the
#: machine-limit fraction (issue 10)
TARGET_RATIO = 10.0
TARGET_PEAK = 0.5
PEER_PREFIXES = ("lira_vs_sacroml", "pdtp_vs_art", "shadow_vs_art", "reference_vs_privacymeter", "lira_vs_tfprivacy")


def _vs(peer, ours, key, fmt):
    a, b = (peer or {}).get(key), (ours or {}).get(key)
    if a is None or b is None or a != a or b != b:
        return "n/a"
    return f"{fmt(a)} → {fmt(b)} ({'+' if b >= a else '−'}{fmt(abs(b - a))})"


def attack_quality_section(res, key: str = "quantile_vs_lira",
                           cpu_label: str = "CPU s, with its reference models") -> list[str]:
    """Attacks against one another on the same targets and seeds, means over seeds with their t-intervals:
    quantile regression (no reference models) against LiRA and RMIA with 1 to 64 reference models
    (bench_quantile_vs_lira.py), or BaVarIA against them at 1 to 4 (bench_bavaria.py)."""
    r = res.get(key)
    if not r:
        return ["Not run.", ""]
    out = [f"{r['work']}; seeds {', '.join(map(str, r['seeds']))}; load {r['load_start']:.1f} -> {r['load_end']:.1f} "
           "(a loaded machine: compare within the table).", "",
           f"| attack | reference models | AUC (seed interval) | TPR at 1 % FPR | TPR at 0.1 % FPR | {cpu_label} |",
           "|---|---|---|---|---|---|"]

    def iv(v, lo_hi, pct=False):
        f = (lambda x: f"{x * 100:.2f} %") if pct else (lambda x: f"{x:.3f}")
        return f"{f(v)} [{f(lo_hi[0])}, {f(lo_hi[1])}]"

    for name, m in r["summary"].items():
        out.append(f"| {name} | {m['reference_models']} | {iv(m['auc'], m['auc_seed_ci'])} | "
                   f"{iv(m['tpr@0.01'], m['tpr@0.01_seed_ci'], True)} | "
                   f"{iv(m['tpr@0.001'], m['tpr@0.001_seed_ci'], True)} | {m['cpu_seconds']:.2f} |")
    out += ["", f"Command: `{r['command']}`", ""]
    return out


def targets_section(res) -> list[str]:
    """One line per peer comparison and per target, from the same result files as the tables below."""
    lines = [f"Every peer comparison below, against the target of at least {TARGET_RATIO:.0f}x on equal work at equal "
             "or better attack quality. The headline ratio is CPU time (`time.process_time` of each tool's process: "
             "the peers run on one thread, leakaudit on both cores, so wall time flatters leakaudit by up to its "
             "parallel speed-up); wall time is beside it. Quality: peer → ours (difference); the PDTP rows compare "
             "values that differ by definition (see their table), so they have no quality line.", "",
             f"| comparison (result file) | ratio CPU / wall | ≥ {TARGET_RATIO:.0f}x CPU | ≥ {TARGET_RATIO:.0f}x wall | "
             "AUC | TPR at 0.1 % FPR |",
             "|---|---|---|---|---|---|"]
    pct = lambda x: f"{100 * x:.1f} %"
    met = lambda sp: "–" if sp is None else ("yes" if sp >= TARGET_RATIO else "**no**")
    under = []
    for stem in sorted(k for k in res if k.startswith(PEER_PREFIXES)):
        for r in res[stem].get("comparisons", []):
            if "error" in r:
                lines.append(f"| {r['name']} ({stem}) | did not run | – | – | – | – |")
                continue
            sp, cpu = r.get("speedup"), r.get("cpu_speedup")
            if cpu is not None and cpu < TARGET_RATIO:
                under.append(f"{r['name']} ({stem}, {cpu:.1f}x)")
            lines.append(f"| {r['name']} ({stem}) | {_f(cpu, '{:.1f}x')} / {_f(sp, '{:.1f}x')} | {met(cpu)} | "
                         f"{met(sp)} | "
                         f"{_vs(r.get('peer_quality'), r.get('our_quality'), 'auc', lambda x: f'{x:.3f}')} | "
                         f"{_vs(r.get('peer_quality'), r.get('our_quality'), 'tpr_at_0.1%fpr', pct)} |")
    if under:
        lines += ["", f"**Under {TARGET_RATIO:.0f}x in CPU time**: {'; '.join(under)}. These rows meet the target "
                  "only in wall time, with both cores against the peer's one (benchmarks/README.md, \"Fair speed "
                  "figures, on a quiet machine\", says where the remaining factor would have to come from)."]
    m = res.get("machine_limit")
    if m:
        lines += ["", f"Batched MLP training against the matrix-multiply limit (target {_pct(TARGET_PEAK)}): "]
        for c in m["cases"]:
            if c["name"] == "mlp":
                lines[-1] += (f"both cores {_pct(c.get('fraction_of_all_threads_peak'))} of the 2-thread peak "
                              f"({_pct(c['cpu_fraction_of_1thread_peak'])} per CPU second of the 1-thread peak)")
            if c["name"] == "mlp_1thread":
                lines[-1] += f"; one core {_pct(c['fraction_of_1thread_peak'])} of the 1-thread peak"
        kernel = next((c["work"].rsplit(", ", 1)[-1] for c in m["cases"] if c["name"] == "mlp" and "work" in c), None)
        lines[-1] += f" (dense 104-64-2 nets{', ' + kernel if kernel else ''}; section \"The machine's limit\")."
    sc = res.get("scaling")
    if sc:
        pts = sorted((p for p in sc["points"] if p["kind"] == "models" and "error" not in p), key=lambda p: p["value"])
        if pts:
            extra = ", ".join(f"{p['value']:,}: {p['peak_rss_mb'] - p['baseline_rss_mb'] - p['outputs_mb']:.0f} MB"
                              for p in pts)
            lines += ["", f"Peak memory beyond the model outputs against the number of models K ({extra}); what "
                      "grows with K is the K index subsets the caller hands in (benchmarks/README.md, "
                      "\"Scaling\")."]
    return lines + [""]


def gpu_section(res: dict) -> list[str]:
    """bench_gpu.py's table (reference CNNs and LM scoring on a CUDA GPU against the CPU), or why there is none."""
    if "bench_gpu" not in res:
        return ["Not measured: no session that ran the benchmarks has had a CUDA GPU. On one, "
                "`python benchmarks/bench_gpu.py --quick` (or the full sizes) writes results/bench_gpu.json and this "
                "report then shows its table, the GPU named in each row.", ""]
    import bench_gpu

    r = res["bench_gpu"]
    return [f"`{r.get('command', 'python benchmarks/bench_gpu.py')}`", "", *bench_gpu.rows_for_results(r), ""]


def write_report(log=None, quick=False) -> Path:
    res = _load(p for p in C.RESULTS.glob("*.json") if quick == p.stem.endswith("_quick"))
    if quick:
        res = {k[: -len("_quick")]: v for k, v in res.items()}
    mach = C.machine()
    out = ["# leakaudit benchmark results", "",
           "Generated by `benchmarks/run_all.py`" + (" --quick (tiny sizes; not for quoting)" if quick else "") + ".",
           f"Report written {mach['time_utc']} UTC on {mach['nproc']} cores ({mach['cpu']}); load average now "
           f"{', '.join(f'{x:.1f}' for x in mach['loadavg'])}. Each table gives the load average at the start and "
           "end of its own run.", "",
           "**Read the ratios, not the absolute times.** The machine is a 2-core VM whose speed varies between "
           "runs and over the day (the same peer run took 43.8 s and 49.8 s on one quiet machine, load ~1, hours "
           "apart; the rows' load averages show how busy it was), and some rows below come from older runs "
           "(benchmarks/README.md says which session measured what); both tools of a comparison run back to back in the same run, on the same data, "
           "splits, seeds and models, with single-threaded BLAS. Ratio = peer time / our time (> 1: leakaudit is faster), given on wall time and on CPU time "
           "(`time.process_time`, less sensitive to other jobs). Qualities are computed by `leakaudit.metrics` "
           "from each tool's per-record scores. TPR at 0.1 % FPR needs at least 1,000 non-members; below that it "
           "is n/a.", ""]
    out += ["## Targets at a glance", ""] + targets_section(res)
    out += ["## Peer tools", "", "| tool | status | version |", "|---|---|---|"]
    for t, dist in PEER_TOOLS.items():
        out.append(f"| {dist} | {C.peer_status(t)} | {C.peer_version(t, dist) or '–'} |")
    out.append("")
    def runs(prefix):  # every result file of a comparison (repeats are kept as <prefix>_<tag>.json)
        return sorted(k for k in res if k.startswith(prefix))

    sections = [("LiRA vs SACRO-ML", runs("lira_vs_sacroml")), ("PDTP vs ART", runs("pdtp_vs_art")),
                ("Shadow-model attack vs ART", runs("shadow_vs_art")),
                ("Reference-model attack vs ML Privacy Meter 1.0.1", runs("reference_vs_privacymeter")),
                ("LiRA vs TF Privacy's advanced_mia", runs("lira_vs_tfprivacy")),
                ("Audit of a scikit-learn MLP target: TorchMLP.from_sklearn vs scikit-learn retraining",
                 runs("audit_mlp_target")),
                ("Membership attacks: models trained per second, against one net at a time",
                 runs("membership_throughput"))]
    for title, keys in sections:
        out += [f"## {title}", ""]
        found = False
        for k in keys:
            if k in res:
                found = True
                out += comparison_table(res[k]["comparisons"], res[k].get("command", ""))
        if not found:
            out += ["Not run.", ""]
    out += ["## Membership inference without reference models: quantile regression vs LiRA and RMIA", ""]
    out += attack_quality_section(res)
    out += ["## Few reference models: BaVarIA-style scoring vs LiRA and RMIA", ""]
    out += attack_quality_section(res, "bavaria", "CPU s, scoring only (the same reference models for all)")
    out += ["## Language models: batched scoring vs the transformers per-text loop", ""] + lm_scoring_section(res)
    out += ["## Throughput on a GPU", ""] + gpu_section(res)
    out += ["## The machine's limit", ""] + machine_section(res)
    out += ["## Scaling", ""] + scaling_section(res)
    out += ["## Parallel speed-up", ""] + parallel_section(res)
    if log:
        out += ["## This run", "", "| bench | exit | seconds | load at start |", "|---|---|---|---|"]
        out += [f"| {x['bench']} | {x['returncode']} | {x['seconds']:.0f} | {x['load_start']:.1f} |" for x in log]
        out.append("")
    path = C.HERE / ("RESULTS_quick.md" if quick else "RESULTS.md")  # a quick check never overwrites the results
    path.write_text("\n".join(out))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a check that everything runs)")
    ap.add_argument("--only", default=None, help=f"comma-separated subset of {','.join(BENCHES)}")
    ap.add_argument("--report-only", action="store_true", help="only rewrite RESULTS.md from results/*.json")
    ap.add_argument("--no-install", action="store_true", help="do not create missing peer environments")
    a = ap.parse_args(argv)
    log = None
    if not a.report_only:
        if not a.no_install:
            ensure_peers()
        keys = a.only.split(",") if a.only else list(BENCHES)
        bad = [k for k in keys if k not in BENCHES]
        if bad:
            ap.error(f"unknown bench {bad}; choose from {list(BENCHES)}")
        print(f"machine: {os.cpu_count()} cores, load average {C.loadavg():.1f}", flush=True)
        log = run_benches(keys, a.quick)
    print(f"wrote {write_report(log, quick=a.quick)}")


if __name__ == "__main__":
    main()
