"""Calibration, measured: how often the audit's verdict is wrong on models whose truth is known.

Null cases (nothing can leak about the audited members: the model was trained on other records of the same
table) must get "publish"; positive cases (the model memorises its members) must get "do not publish". Every
audit runs with ``profile="smoke"``; the cases are listed in ``benchmarks/_calibration_cases.py``. For null and
positive cases separately, the rates of "do not publish" and "inconclusive" with Clopper-Pearson 95 % intervals,
overall, per learner family, per dataset and per check, beside the targets: null "do not publish" at most 5 % with
the upper end of its interval at most 10 %; positive "do not publish" at least 95 %.

Usage:
    .venv/bin/python benchmarks/calibration.py                  # the full suite -> benchmarks/results/calibration.json,
                                                                #   docs/calibration.md
    .venv/bin/python benchmarks/calibration.py --quick          # every family once -> calibration_quick.json/.md
    .venv/bin/python benchmarks/calibration.py --jobs 2         # audits in 2 worker processes
    .venv/bin/python benchmarks/calibration.py --report-only    # rewrite docs/calibration.md from the JSON files
    .venv/bin/python benchmarks/calibration.py --as-before      # also keep the result as calibration_before.json: the
                                                                #   doc's "Before the calibrated verdict" section

Resumable: each finished audit's row is appended to ``<out>/calibration[_quick].jsonl`` as it finishes; a new run
skips the ids found there that were measured with the same leakaudit sources (a fingerprint of the package's
files), so a killed run loses at most the audits in flight. ``--fresh`` starts over.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import _calibration_cases as K  # noqa: E402

RESULTS = HERE / "results"
DOC = ROOT / "docs" / "calibration.md"
BEFORE = "calibration_before.json"
OUTCOMES = ("publish", "do not publish", "inconclusive")
#: the issue's targets: null "do not publish" at most 5 % (upper end of its 95 % interval at most 10 %), positive at
#: least 95 %
NULL_MAX_RATE, NULL_MAX_UPPER, POSITIVE_MIN_RATE = 0.05, 0.10, 0.95


# -- the code under test ---------------------------------------------------------------------------------------


def code_identity(commit: str | None = None) -> dict:
    """Where leakaudit is imported from, a fingerprint of its sources, and the git commit (dirty when src/ differs)."""
    import leakaudit

    pkg = Path(leakaudit.__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(p for p in pkg.rglob("*") if p.is_file() and p.suffix in (".py", ".c", ".h", ".csv", ".json")):
        h.update(str(f.relative_to(pkg)).encode())
        h.update(f.read_bytes())
    out = {"leakaudit_path": str(pkg), "leakaudit_version": leakaudit.__version__, "fingerprint": h.hexdigest()[:16]}
    if commit:
        out["commit"] = commit
        out["dirty"] = False
        out["commit_note"] = "given with --commit"
        return out
    try:
        top = subprocess.run(["git", "-C", str(pkg), "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             check=True).stdout.strip()
        out["commit"] = subprocess.run(["git", "-C", top, "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True, check=True).stdout.strip()
        st = subprocess.run(["git", "-C", top, "status", "--porcelain", "--", str(pkg)], capture_output=True,
                            text=True, check=True).stdout
        out["dirty"] = bool(st.strip())
    except (subprocess.CalledProcessError, FileNotFoundError):
        out["commit"], out["dirty"] = None, None
    return out


def machine() -> dict:
    cpu = "unknown"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "loadavg_start": [round(x, 2) for x in os.getloadavg()]}


# -- running ---------------------------------------------------------------------------------------------------


def _read_log(path: Path) -> list[dict]:
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by a kill
                continue
    return rows


def _append(path: Path, row: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _run_one(case: K.Case, work: str, keep: bool) -> dict:
    """One audit in this process; an exception becomes the row's ``error`` (its outcome is then "error")."""
    import traceback

    t0 = time.perf_counter()
    try:
        row = K.run_case(case, Path(work) / case.id, keep=keep)
    except Exception as exc:  # noqa: BLE001 - recorded, and retried by the next run
        row = {**dataclasses.asdict(case), "description": case.description, "outcome": "error", "checks": [],
               "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:],
               "case_seconds": round(time.perf_counter() - t0, 2)}
    if not keep:
        import shutil

        shutil.rmtree(Path(work) / case.id, ignore_errors=True)
    return row


def _worker_init():
    import warnings

    warnings.filterwarnings("ignore")


def run_cases(todo: list[K.Case], log: Path, work: Path, *, jobs: int, keep: bool, stamp: dict) -> None:
    """Run ``todo``, appending each finished row (with ``stamp``) to ``log``."""
    n = len(todo)
    if not n:
        return

    def done(i, row):
        row.update(stamp)
        row["finished"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        _append(log, row)
        bad = "" if row["outcome"] != "error" else f"  ERROR {row['error'][:200]}"
        exc = [c["id"] for c in row.get("checks", []) if c.get("status") == "exceeded"]
        print(f"[{i}/{n}] {row['id']}: {row['outcome']} ({row.get('case_seconds', 0):.1f} s)"
              f"{'  exceeded: ' + ', '.join(exc) if exc else ''}{bad}", flush=True)

    if jobs <= 1:
        import warnings

        warnings.filterwarnings("ignore")
        for i, c in enumerate(todo, 1):
            done(i, _run_one(c, str(work), keep))
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init) as ex:
        futs = [ex.submit(_run_one, c, str(work), keep) for c in todo]
        for i, f in enumerate(as_completed(futs), 1):
            done(i, f.result())


# -- aggregation -----------------------------------------------------------------------------------------------


def _rate(k: int, n: int) -> dict:
    from leakaudit.metrics import clopper_pearson

    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "ci": [None, None]}
    lo, hi = clopper_pearson(int(k), int(n))
    return {"k": int(k), "n": int(n), "rate": k / n, "ci": [lo, hi]}


def _outcome_block(rows: list[dict]) -> dict:
    n = len(rows)
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    secs = sorted(r["audit_seconds"] for r in rows if r.get("audit_seconds") is not None)
    return {"n": n, "counts": counts, "do_not_publish": _rate(counts["do not publish"], n),
            "inconclusive": _rate(counts["inconclusive"], n), "publish": _rate(counts["publish"], n),
            "audit_seconds_median": secs[len(secs) // 2] if secs else None,
            "audit_seconds_total": round(sum(secs), 1)}


def check_family(cid: str) -> str:
    """``membership.lira.auc`` -> ``membership.*.auc``; ``dtp.dtp1`` stays; ``attribute.sex.advantage`` ->
    ``attribute.*.advantage``."""
    parts = cid.split(".")
    return f"{parts[0]}.*.{parts[-1]}" if len(parts) >= 3 else cid


def _check_block(rows: list[dict], key) -> dict:
    """Per check id (or family): in how many audits it appears, how often each status, the exceeded rate, and in
    how many "do not publish" verdicts it was the only exceeded check."""
    out: dict[str, dict] = {}
    for r in rows:
        exceeded = {key(c["id"]) for c in r["checks"] if c.get("status") == "exceeded"}
        seen: dict[str, str] = {}
        for c in r["checks"]:
            k, st = key(c["id"]), c.get("status")
            # a family counts as exceeded in an audit when any of its checks is, passed when all measured ones pass
            prev = seen.get(k)
            if prev == "exceeded" or (prev == "passed" and st == "not measurable"):
                continue
            seen[k] = st
        # exceeded only by checks that describe the retraining recipe (which cannot withhold a model on their own)
        recipe_only = {k for k in exceeded
                       if all(c.get("describes") == "recipe" for c in r["checks"]
                              if key(c["id"]) == k and c.get("status") == "exceeded")}
        for k, st in seen.items():
            d = out.setdefault(k, {"present": 0, "exceeded": 0, "passed": 0, "not measurable": 0, "sole_cause": 0,
                                   "exceeded_recipe_only": 0})
            d["present"] += 1
            d[st] = d.get(st, 0) + 1
            d["exceeded_recipe_only"] = d.get("exceeded_recipe_only", 0) + (st == "exceeded" and k in recipe_only)
            if st == "exceeded" and exceeded == {k} and r["outcome"] == "do not publish":
                d["sole_cause"] += 1
    for d in out.values():
        d["exceeded_rate"] = _rate(d["exceeded"], d["present"])
    return dict(sorted(out.items()))


def aggregate(rows: list[dict]) -> dict:
    ok = [r for r in rows if r["outcome"] != "error"]
    agg = {"n_rows": len(rows), "n_errors": len(rows) - len(ok)}
    for kind in ("null", "positive"):
        rs = [r for r in ok if r["kind"] == kind]
        a = {"overall": _outcome_block(rs)}
        for by in ("family", "dataset"):
            a[f"by_{by}"] = {v: _outcome_block([r for r in rs if r[by] == v]) for v in sorted({r[by] for r in rs})}
        a["by_family_dataset"] = {f"{f} / {d}": _outcome_block([r for r in rs if r["family"] == f and r["dataset"] == d])
                                  for f, d in sorted({(r["family"], r["dataset"]) for r in rs})}
        a["by_variant"] = {f"{f} {v}": _outcome_block([r for r in rs if r["family"] == f and r["variant"] == v])
                           for f, v in sorted({(r["family"], r["variant"]) for r in rs})}
        a["by_check"] = _check_block(rs, lambda x: x)
        a["by_check_family"] = _check_block(rs, check_family)
        agg[kind] = a
    agg["targets"] = targets(agg)
    return agg


def targets(agg: dict) -> dict:
    nul, pos = agg["null"]["overall"]["do_not_publish"], agg["positive"]["overall"]["do_not_publish"]
    null_met = (nul["n"] > 0 and nul["rate"] <= NULL_MAX_RATE and nul["ci"][1] <= NULL_MAX_UPPER)
    pos_met = pos["n"] > 0 and pos["rate"] >= POSITIVE_MIN_RATE
    return {"null": {"what": f"null \"do not publish\" rate <= {_pct(NULL_MAX_RATE)} and the upper end of its 95 % "
                             f"interval <= {_pct(NULL_MAX_UPPER)}", "met": bool(null_met),
                     "rate": nul["rate"], "ci": nul["ci"], "n": nul["n"]},
            "positive": {"what": f"positive \"do not publish\" rate >= {_pct(POSITIVE_MIN_RATE)}", "met": bool(pos_met),
                         "rate": pos["rate"], "ci": pos["ci"], "n": pos["n"]}}


# -- the report ------------------------------------------------------------------------------------------------


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f} %"


def _rate_cell(r: dict) -> str:
    if not r["n"]:
        return "–"
    return f"{r['k']}/{r['n']} = {_pct(r['rate'])} [{_pct(r['ci'][0])}, {_pct(r['ci'][1])}]"


def _outcome_table(blocks: dict, first: str) -> list[str]:
    lines = [f"| {first} | audits | do not publish [95 % CI] | inconclusive [95 % CI] | publish | median audit s |",
             "|---|---|---|---|---|---|"]
    for name, b in blocks.items():
        lines.append(f"| {name} | {b['n']} | {_rate_cell(b['do_not_publish'])} | {_rate_cell(b['inconclusive'])} | "
                     f"{b['counts']['publish']} | {b['audit_seconds_median'] if b['audit_seconds_median'] is not None else '–'} |")
    return lines + [""]


def _check_table(checks: dict) -> list[str]:
    lines = ["| check | in audits | exceeded [95 % CI] | of which only for the recipe | passed | not measurable | "
             "only exceeded check of a \"do not publish\" |", "|---|---|---|---|---|---|---|"]
    for cid, d in checks.items():
        lines.append(f"| `{cid}` | {d['present']} | {_rate_cell(d['exceeded_rate'])} | "
                     f"{d.get('exceeded_recipe_only', 0)} | {d['passed']} | {d['not measurable']} | {d['sole_cause']} |")
    return lines + [""]


def _when(res: dict) -> str:
    return res.get("created", "?").replace("T", " ").replace("+00:00", " UTC")


def _code_line(res: dict) -> str:
    c = res.get("code", {})
    commit = c.get("commit") or "unknown commit"
    dirty = " with uncommitted changes in src/" if c.get("dirty") else ""
    note = f"; {res['note']}" if res.get("note") else ""
    return (f"leakaudit {c.get('leakaudit_version', '?')} at commit `{commit}`{dirty} (imported from "
            f"`{c.get('leakaudit_path', '?')}`; source fingerprint `{c.get('fingerprint', '?')}`{note})")


def findings(agg: dict) -> list[str]:
    """Which checks made the wrong null verdicts, and which caught the positive cases (generated sentences)."""
    out = []
    nul = agg["null"]
    k_wrong = nul["overall"]["counts"]["do not publish"]
    if nul["overall"]["n"]:
        fam = {k: d for k, d in nul["by_check_family"].items() if d["exceeded"]}
        causes = "; ".join(f"`{k}` exceeded in {d['exceeded']} ({d.get('exceeded_recipe_only', 0)} of them only for "
                           f"the retraining recipe, which cannot withhold a model alone; {d['sole_cause']} as the only "
                           "exceeded check of a \"do not publish\")"
                           for k, d in sorted(fam.items(), key=lambda kv: -kv[1]["exceeded"]))
        never = ", ".join(f"`{k}`" for k, d in nul["by_check_family"].items() if not d["exceeded"])
        out.append(f"- Null cases: {k_wrong} of {nul['overall']['n']} wrongly withheld"
                   + (f"; {causes}" if causes else "") + (f". Never exceeded on a null case: {never}" if never else "")
                   + ".")
    pos = agg["positive"]
    if pos["overall"]["n"]:
        caught = "; ".join(f"`{k}` {d['exceeded']}/{d['present'] - d['not measurable']}"
                           for k, d in pos["by_check_family"].items())
        out.append(f"- Positive cases: {pos['overall']['counts']['do not publish']} of {pos['overall']['n']} withheld; "
                   f"each family of checks exceeded in (of the audits where it was measured): {caught}.")
    return out


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2 if xs else None


def leak_strength(rows: list[dict]) -> list[str]:
    """How much each kind of case leaks by the audit's own measurements: medians over seeds of the target's accuracy
    on members and non-members, the largest attack AUC and the largest PDTP."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["outcome"] != "error":
            groups.setdefault((r["kind"], r["family"], r["variant"], r["dataset"]), []).append(r)
    if not groups:
        return []
    f = lambda x, fmt="{:.3f}": "–" if x is None else fmt.format(x)  # noqa: E731
    out = ["What the audits measured (medians over seeds): the target's accuracy on members and non-members, the "
           "largest AUC of any attack, the largest PDTP (nats) of the measured members.", "",
           "| kind | family | variant | dataset | accuracy members / non-members | largest attack AUC | largest PDTP |",
           "|---|---|---|---|---|---|---|"]
    for (kind, fam, var, ds), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] != "null", kv[0])):
        auc = _median([max((v[0] for v in r.get("auc", {}).values() if v and v[0] is not None), default=None)
                       for r in rs])
        pd_ = _median([(r.get("pdtp") or {}).get("max") for r in rs])
        out.append(f"| {kind} | {fam} | {var} | {ds} | {f(_median([r.get('train_accuracy') for r in rs]))} / "
                   f"{f(_median([r.get('test_accuracy') for r in rs]))} | {f(auc)} | {f(pd_, '{:.2f}')} |")
    return out + [""]


def run_section(res: dict, title: str) -> list[str]:
    agg, m = res["aggregates"], res.get("machine", {})
    t = agg["targets"]
    schema = sorted({r.get("verdict_schema", "?") for r in res["rows"] if r["outcome"] != "error"})
    out = [f"## {title}", "",
           f"Run {_when(res)} on {m.get('nproc', '?')} cores ({m.get('cpu', '?')}, load average at start "
           f"{', '.join(str(x) for x in m.get('loadavg_start', []))}); {_code_line(res)}.", "",
           f"Command: `{res.get('command', '?')}`. Audits: {agg['n_rows']} ({agg['n_errors']} failed); total audit "
           f"time {res.get('audit_seconds_total', 0) / 60:.1f} min, total case time (models trained, files written, "
           f"audits) {res.get('case_seconds_total', 0) / 60:.1f} min; this invocation's wall time "
           f"{res.get('wall_seconds', 0) / 60:.1f} min{' (resumed: earlier audits were kept)' if res.get('resumed') else ''}. "
           f"Verdict read from the {' and '.join(schema)} results.json schema"
           + (" (`verdict.publish` and `reasons`: no checks in it, so each audit's checks were recomputed from its "
              "measured sections by that verdict's own rules and thresholds, and the number exceeded checked against "
              "its reasons; a TPR the audit could not estimate counts as not measurable)" if "old" in schema
              else "") + ".", "",
           "| target | measured | met |", "|---|---|---|",
           f"| {t['null']['what']} | {_rate_cell(agg['null']['overall']['do_not_publish'])} | "
           f"{'yes' if t['null']['met'] else '**no**'} |",
           f"| {t['positive']['what']} | {_rate_cell(agg['positive']['overall']['do_not_publish'])} | "
           f"{'yes' if t['positive']['met'] else '**no**'} |", ""]
    out += findings(agg) + [""]
    if agg["n_errors"]:
        out += ["Failed audits (not counted above):", ""]
        out += [f"- `{r['id']}`: {r.get('error', '')[:300]}" for r in res["rows"] if r["outcome"] == "error"]
        out.append("")
    for kind, word in (("null", "Null cases: every \"do not publish\" is wrong"),
                       ("positive", "Positive cases: every verdict but \"do not publish\" is wrong")):
        a = agg[kind]
        out += [f"### {word}", ""]
        out += _outcome_table({"all": a["overall"], **{f"family: {k}": v for k, v in a["by_family"].items()},
                               **{f"dataset: {k}": v for k, v in a["by_dataset"].items()}}, "cases")
        out += ["Per family and dataset" + (" and per variant" if kind == "positive" else "") + ":", ""]
        out += _outcome_table({**a["by_family_dataset"], **(a["by_variant"] if kind == "positive" else {})}, "cases")
        out += [f"Checks ({kind} cases), by family of checks (a family is exceeded in an audit when any of its "
                "checks is):", ""]
        out += _check_table(a["by_check_family"])
        out += [f"<details><summary>Every check id ({kind} cases)</summary>", ""] + _check_table(a["by_check"])
        out += ["</details>", ""]
    out += leak_strength(res["rows"])
    pos = [r for r in res["rows"] if r["kind"] == "positive" and r["outcome"] not in ("do not publish", "error")]
    if pos:
        out += ["Positive cases the verdict let through:", ""]
        out += [f"- `{r['id']}`: {r['outcome']}; train / test accuracy {r.get('train_accuracy', 0):.3f} / "
                f"{r.get('test_accuracy', 0):.3f}; AUC " + ", ".join(f"{k} {v[0]:.3f}" for k, v in r.get("auc", {}).items())
                for r in pos]
        out.append("")
    return out


def case_list(rows: list[dict]) -> list[str]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["kind"], r["family"], r["variant"], r["dataset"]), []).append(r)
    lines = ["| kind | family | dataset | model | members / non-members / target's own records | seeds |",
             "|---|---|---|---|---|---|"]
    for (kind, fam, var, ds), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] != "null", kv[0])):
        r = rs[0]
        own = r.get("n_target_train") if kind == "null" else "(the members)"
        extra = ""
        if r.get("n_population"):
            extra = f", population {r['n_population']}"
        seeds = sorted(x["seed"] for x in rs)
        lines.append(f"| {kind} | {fam} | {ds} | {r['description']} | {r['n_members']} / {r['n_nonmembers']} / "
                     f"{own}{extra} | {len(seeds)}: {seeds[0]}-{seeds[-1]} |")
    return lines + [""]


def write_doc(path: Path, latest: dict | None, before: dict | None) -> Path:
    cmd = "python benchmarks/calibration.py"
    out = ["# Calibration: how often the verdict is wrong", "",
           "<!-- generated by benchmarks/calibration.py; edit the script, not this file -->", "",
           "leakaudit's verdict is a decision: \"publish\", \"do not publish\" or \"inconclusive\". This page measures "
           "how often it is wrong on models whose truth is known, by construction:", "",
           "- **null cases**: the audited model was trained on records disjoint from both the members and the "
           "non-members handed to the audit (all three drawn from one table). Nothing can leak about the audited "
           "\"members\", so every \"do not publish\" is a false alarm;",
           "- **positive cases**: the model was trained on the members and memorises them (a fifth of their labels "
           "flipped, duplicated canaries with flipped labels, fully grown trees, a 1-nearest-neighbour rule, nets "
           "over-trained on few records). Every verdict but \"do not publish\" misses a real leak.", "",
           f"Targets: null \"do not publish\" at most {_pct(NULL_MAX_RATE)}, with the upper end of its 95 % "
           f"Clopper-Pearson interval at most {_pct(NULL_MAX_UPPER)}; positive \"do not publish\" at least "
           f"{_pct(POSITIVE_MIN_RATE)}. Every audit runs with `profile=\"smoke\"` (8 reference models, PDTP of 100 "
           "members, 4 noise-floor models, 200 bootstrap resamples), the fastest profile: a verdict that is "
           "calibrated there is the weakest case. Intervals are exact (Clopper-Pearson, "
           "`leakaudit.metrics.clopper_pearson`); `k/n` counts audits.", "",
           f"Regenerate with `{cmd}` (add `--jobs 2` for two worker processes; `--quick` runs each family once, "
           "`make calibrate` runs the full suite). A killed run resumes where it stopped. The script writes "
           "`benchmarks/results/calibration.json` (every audit's row: case, outcome, every check, the target's "
           "accuracies, each attack's AUC, PDTP, seconds; and the aggregates) and this page.", ""]
    rows = (latest or before or {}).get("rows", [])
    if rows:
        out += ["## Cases", ""] + case_list(rows)
        out += ["Families: " + "; ".join(f"**{k}**: {v}" for k, v in K.FAMILIES.items()) + ".", "",
                "Datasets: " + "; ".join(f"**{k}**: {v}" for k, v in K.DATASETS.items()) + ". The records of each "
                "case are drawn by its seed (the TorchMLP null case on Adult uses the demo's own draw: members, "
                "non-members and population by the audit seed; its target is trained on further Adult records, "
                "disjoint from all three, so the population stays what RMIA assumes it is). No "
                "case gives a population file, so RMIA runs only in the TorchMLP null case on Adult. Sizes were "
                "not reduced for time: one smoke audit takes seconds here.", ""]
    same = latest is not None and before is not None and latest.get("created") == before.get("created")
    if latest is not None and not same:
        c = latest.get("code", {}).get("commit") or "?"
        out += run_section(latest, f"Latest run (commit {c}, {_when(latest)[:10]})")
    if before is not None:
        c = before.get("code", {}).get("commit") or "?"
        out += run_section(before, f"Before the calibrated verdict (commit {c}, {_when(before)[:10]})")
        if same:
            out.insert(out.index(f"## Before the calibrated verdict (commit {c}, {_when(before)[:10]})") + 2,
                       "This is also the latest run.\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out).rstrip() + "\n")
    return path


# -- main ------------------------------------------------------------------------------------------------------


def _compact(x):
    """Floats to 6 significant digits (the rows' values and intervals), recursively."""
    if isinstance(x, float):
        return float(f"{x:.6g}") if math.isfinite(x) else x
    if isinstance(x, dict):
        return {k: _compact(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_compact(v) for v in x]
    return x


#: what the JSON keeps of each check (the JSONL log keeps them whole: name, analysis and sentence too)
CHECK_FIELDS = ("id", "status", "value", "interval", "threshold", "describes")


def _row_for_json(r: dict) -> dict:
    r = {k: v for k, v in r.items() if k not in ("headline",)}
    r["checks"] = [{k: c.get(k) for k in CHECK_FIELDS} for c in r.get("checks", [])]
    return _compact(r)


def write_json(path: Path, res: dict) -> None:
    """The result, indented, with one line per audit row (compact: floats to 6 significant digits, each check's
    id, status, value, interval, threshold and what it describes)."""
    head = json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=1)
    rows = ",\n".join("  " + json.dumps(_row_for_json(r), separators=(",", ":")) for r in res["rows"])
    text = head[:-2] + ',\n "rows": [\n' + rows + "\n ]\n}\n"
    json.loads(text)  # well formed
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)



def select(set_: str, args) -> list[K.Case]:
    if set_ == "quick":
        return K.quick_cases()
    if set_ == "small":
        return K.small_cases()
    return K.cases(n_null_seeds=args.null_seeds, n_positive_seeds=args.positive_seeds)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="every family and variant once (--set quick)")
    ap.add_argument("--set", choices=("full", "quick", "small"), default=None,
                    help="which cases: full (default), quick, small (the default test's three)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="folder of the JSON and JSONL files (benchmarks/results)")
    ap.add_argument("--doc", type=Path, default=None,
                    help="markdown written (full: docs/calibration.md; otherwise <out>/calibration_<set>.md)")
    ap.add_argument("--jobs", type=int, default=1, help="audits run at once, each in its own process (default 1)")
    ap.add_argument("--null-seeds", type=int, default=16, help="seeds per null family and dataset (default 16)")
    ap.add_argument("--positive-seeds", type=int, default=4, help="seeds per positive variant and dataset (default 4)")
    ap.add_argument("--only", default=None, help="run only the case ids containing this text")
    ap.add_argument("--fresh", action="store_true", help="ignore (and set aside) the rows of an earlier run")
    ap.add_argument("--keep", action="store_true", help="keep each audit's folder (results, report, cache)")
    ap.add_argument("--report-only", action="store_true", help="only rewrite the markdown from the JSON files")
    ap.add_argument("--as-before", action="store_true",
                    help=f"also save the result as <out>/{BEFORE}, the doc's 'Before the calibrated verdict' section")
    ap.add_argument("--commit", default=None,
                    help="the commit the imported leakaudit was taken from (default: its checkout's HEAD), e.g. "
                         "for a `git archive` of src/ put first on PYTHONPATH")
    ap.add_argument("--note", default=None, help="a sentence about how this run was made, shown with its section")
    a = ap.parse_args(argv)
    set_ = a.set or ("quick" if a.quick else "full")
    suffix = "" if set_ == "full" else f"_{set_}"
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    json_path, log = out / f"calibration{suffix}.json", out / f"calibration{suffix}.jsonl"
    doc = a.doc or (DOC if set_ == "full" else out / f"calibration{suffix}.md")
    before_path = out / BEFORE
    if a.report_only:
        latest = json.loads(json_path.read_text()) if json_path.exists() else None
        before = json.loads(before_path.read_text()) if before_path.exists() and set_ == "full" else None
        for res in (latest, before):  # aggregates recomputed from the rows: the markdown follows this script's code
            if res is not None:
                res["aggregates"] = aggregate(res["rows"])
        print(f"wrote {write_doc(doc, latest, before)}")
        return latest or {}

    cases = select(set_, a)
    if a.only:
        cases = [c for c in cases if a.only in c.id]
    code = code_identity(a.commit)
    if a.fresh and log.exists():
        log.rename(log.with_suffix(f".jsonl.{int(time.time())}.old"))
    earlier = _read_log(log)
    ids = {c.id for c in cases}
    kept = {}
    stale = 0
    for r in earlier:
        if r.get("id") in ids and r.get("outcome") != "error":
            if r.get("code_fingerprint") == code["fingerprint"]:
                kept[r["id"]] = r
            else:
                stale += 1
    todo = [c for c in cases if c.id not in kept]
    print(f"calibration ({set_}): {len(cases)} audits, {len(kept)} already done"
          + (f", {stale} earlier rows measured with other leakaudit sources (rerun)" if stale else "")
          + f"; {len(todo)} to run, {a.jobs} at a time; {os.cpu_count()} cores; leakaudit from "
            f"{code['leakaudit_path']} ({code.get('commit')}{', dirty' if code.get('dirty') else ''})", flush=True)
    work = out / f"calibration{suffix}_work"
    t0 = time.perf_counter()
    mach = machine()
    run_cases(todo, log, work, jobs=a.jobs, keep=a.keep,
              stamp={"code_fingerprint": code["fingerprint"], "commit": code.get("commit")})
    wall = time.perf_counter() - t0
    try:
        work.rmdir()
    except OSError:
        pass
    # the latest row of each selected id measured with these sources (errors included, so they are reported)
    latest_rows: dict[str, dict] = {}
    for r in _read_log(log):
        if r.get("id") in ids and r.get("code_fingerprint") == code["fingerprint"]:
            if r["outcome"] != "error" or r["id"] not in latest_rows or latest_rows[r["id"]]["outcome"] == "error":
                latest_rows[r["id"]] = r
    order = {c.id: i for i, c in enumerate(cases)}
    rows = sorted(latest_rows.values(), key=lambda r: order[r["id"]])
    argv_s = " ".join(shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    res = {"suite": "leakaudit calibration", "set": set_,
           "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "command": f"python benchmarks/calibration.py {argv_s}".strip(), "machine": mach, "code": code,
           "wall_seconds": round(wall, 1), "resumed": bool(kept), **({"note": a.note} if a.note else {}),
           "audit_seconds_total": round(sum(r.get("audit_seconds") or 0 for r in rows), 1),
           "case_seconds_total": round(sum(r.get("case_seconds") or 0 for r in rows), 1),
           "aggregates": aggregate(rows), "rows": rows}
    write_json(json_path, res)
    if a.as_before:
        write_json(before_path, res)
    before = json.loads(before_path.read_text()) if before_path.exists() and set_ == "full" else None
    doc_path = write_doc(doc, res, before)
    t = res["aggregates"]["targets"]
    for kind in ("null", "positive"):
        print(f"{kind}: do not publish {_rate_cell(res['aggregates'][kind]['overall']['do_not_publish'])}; "
              f"target {'met' if t[kind]['met'] else 'NOT met'} ({t[kind]['what']})")
    print(f"wrote {json_path}, {log} and {doc_path} ({wall / 60:.1f} min)")
    return res


if __name__ == "__main__":
    main()
