"""Calibration, measured: how often the audit's verdict is wrong on models whose truth is known.

Null cases (nothing can leak about the audited members: the model was trained on other records of the same
table) must not get "do not publish"; positive (leaky) cases (the model memorises its members) must get "do not
publish"; benign cases (regularised models on 5,000 members, audited at profile "standard") should get "publish".
Null and leaky audits run with ``profile="smoke"``; the cases are listed in ``benchmarks/_calibration_cases.py``.
For each kind, the rates of each outcome with Clopper-Pearson 95 % intervals, overall, per learner family, per
dataset and per check, beside the targets: null "do not publish" at most 5 % with the upper end of its interval at
most 10 %; leaky "do not publish" at least 95 %; benign "publish" at least 80 % (of the benign audits whose loss
attack's AUC interval contains 0.5). The verdict is the audits' own (the default policy, burden of proof "safety
shown"); the same rates are also given under the old rule, "leakage shown", recomputed from each audit's stored
checks by ``leakaudit.audit.result.verdict.decide(make_config(policy="leakage-shown"), checks)`` (no audit rerun).

Usage:
    .venv/bin/python benchmarks/calibration.py                  # the full suite -> benchmarks/results/calibration.json,
                                                                #   docs/calibration.md
    .venv/bin/python benchmarks/calibration.py --quick          # every family once -> calibration_quick.json/.md
    .venv/bin/python benchmarks/calibration.py --jobs 2         # audits in 2 worker processes
    .venv/bin/python benchmarks/calibration.py --report-only    # rewrite docs/calibration.md from the JSON files
    .venv/bin/python benchmarks/calibration.py --set boosted --boosted-benign-seeds 1  # XGBoost, LightGBM, CatBoost
                                                                #   -> calibration_boosted.json (its own section)
    .venv/bin/python benchmarks/calibration.py --set population # issue 68: the cases with a population file (RMIA,
                                                                #   InfoRMIA) -> calibration_population.json; the
                                                                #   page's section: --report-only afterwards
    .venv/bin/python benchmarks/calibration.py --as-before      # also keep the result as calibration_before.json: the
                                                                #   doc's "Before the calibrated verdict" section
    .venv/bin/python benchmarks/calibration.py --max-minutes 90 # start no audit after 90 min (a partial run, said so)

Resumable: each finished audit's row is appended to ``<out>/calibration[_quick].jsonl`` as it finishes; a new run
skips the ids found there that were measured with the same leakaudit sources (a fingerprint of the package's
files), so a killed run loses at most the audits in flight. ``--fresh`` starts over. The audits run round-robin over
the case groups (kind, family, variant, dataset), so a run stopped early has measured every group.
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
#: the run before the burden of proof (commit f4042a1, the "leakage shown" rule and smoke's PDTP sample passing DTP-1
#: for the members it did not measure), kept for the comparison of its cases' outcomes
PREVIOUS = "calibration_previous.json"
OUTCOMES = ("publish", "do not publish", "inconclusive")
#: the burdens of proof: the audit's own verdict (default policy) and the old rule recomputed from its checks
BURDENS = ("safety shown", "leakage shown")
#: the issue's targets: null "do not publish" at most 5 % (upper end of its 95 % interval at most 10 %), positive
#: (leaky) "do not publish" at least 95 %, benign "publish" at least 80 %
NULL_MAX_RATE, NULL_MAX_UPPER, POSITIVE_MIN_RATE, BENIGN_MIN_RATE = 0.05, 0.10, 0.95, 0.80
#: the full suite's seeds for issue 47's cases (sized so that the suite runs in about an hour on 2 loaded cores)
NEW_NULL_SEEDS, LEAKY_SEEDS, BENIGN_SEEDS = 3, 4, 5


# -- the code under test ---------------------------------------------------------------------------------------


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (worker processes)."""
    import resource

    return sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
               for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


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


def run_order(todo: list[K.Case], done: set | frozenset = frozenset()) -> list[K.Case]:
    """``todo`` in the order a run stopped early (``--max-minutes``) loses least: first every group's (kind, family,
    variant, dataset) first case, then the tiers of :func:`_calibration_cases.priority` (benign seeds, then the
    issue-47 null and leaky seeds, then the first suite's), round-robin over the groups within each tier. A case's
    rank in its group counts the cases already ``done`` (ids), so a resumed run keeps the order."""
    rank: dict[tuple, int] = {}
    keyed = []
    for i, c in enumerate(todo):
        g = (c.kind, c.family, c.variant, c.dataset)
        r = rank.get(g, 0)
        rank[g] = r + 1
        if c.id not in done:
            keyed.append((K.priority(c, r), r, i, c))
    return [c for *_, c in sorted(keyed, key=lambda t: t[:3])]


def run_cases(todo: list[K.Case], log: Path, work: Path, *, jobs: int, keep: bool, stamp: dict,
              max_minutes: float | None = None) -> int:
    """Run ``todo``, appending each finished row (with ``stamp``) to ``log``; with ``max_minutes``, start no audit
    after that many minutes (one process only). Returns how many were not started."""
    n = len(todo)
    if not n:
        return 0

    def done(i, row):
        row.update(stamp)
        row["finished"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        _append(log, row)
        bad = "" if row["outcome"] != "error" else f"  ERROR {row['error'][:200]}"
        exc = _exceeded_ids(row)
        print(f"[{i}/{n}] {row['id']}: {row['outcome']} ({row.get('case_seconds', 0):.1f} s)"
              f"{'  exceeded: ' + ', '.join(exc) if exc else ''}{bad}", flush=True)

    if jobs <= 1:
        import warnings

        warnings.filterwarnings("ignore")
        t0 = time.perf_counter()
        for i, c in enumerate(todo, 1):
            if max_minutes is not None and time.perf_counter() - t0 > 60 * max_minutes:
                print(f"--max-minutes {max_minutes:g} reached: {n - i + 1} audits not started", flush=True)
                return n - i + 1
            done(i, _run_one(c, str(work), keep))
        return 0
    if max_minutes is not None:
        raise SystemExit("--max-minutes needs --jobs 1")
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init) as ex:
        futs = [ex.submit(_run_one, c, str(work), keep) for c in todo]
        for i, f in enumerate(as_completed(futs), 1):
            done(i, f.result())
    return 0


# -- aggregation -----------------------------------------------------------------------------------------------


def _rate(k: int, n: int) -> dict:
    from leakaudit.metrics import clopper_pearson

    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "ci": [None, None]}
    lo, hi = clopper_pearson(int(k), int(n))
    return {"k": int(k), "n": int(n), "rate": k / n, "ci": [lo, hi]}


_LEAKAGE_CFG = None


def outcome_leakage_shown(row: dict) -> str | None:
    """The outcome the old rule, the policy "leakage-shown", gives the audit's own checks: each check rebuilt as a
    :class:`~leakaudit.audit.result.checks.Check` from the row and decided by
    ``leakaudit.audit.result.verdict.decide(make_config(policy="leakage-shown"), checks)``. None for a row without the
    schema-2 checks (an older verdict) or a failed audit."""
    global _LEAKAGE_CFG
    checks = stored_checks(row)
    if checks is None:
        return None
    from leakaudit.audit.config import make_config
    from leakaudit.audit.result.verdict import decide

    if _LEAKAGE_CFG is None:
        _LEAKAGE_CFG = make_config(policy="leakage-shown")
    return decide(_LEAKAGE_CFG, checks).outcome


def stored_checks(row: dict) -> list | None:
    """The row's checks rebuilt as :class:`~leakaudit.audit.result.checks.Check` objects, as the audit decided them. None
    for a row without the schema-2 checks (an older verdict) or a failed audit."""
    if row.get("outcome") == "error" or row.get("verdict_schema") != "new" or not row.get("checks") \
            or any(c.get("status") == "passed" for c in row["checks"]):  # before schema 3, without its decision
        return None
    from leakaudit.audit.result.checks import Check

    checks = []
    for c in row["checks"]:
        fields = {"id": c["id"], "analysis": c.get("analysis") or c["id"].split(".")[0], "name": c.get("name") or c["id"],
                  "status": c["status"], "value": c.get("value"), "threshold": c.get("threshold"),
                  "interval": tuple(c["interval"]) if c.get("interval") else None, "confidence": c.get("confidence"),
                  "sentence": c.get("sentence") or c["id"], "describes": c.get("describes") or "model",
                  "shows": c.get("shows") or "both", "p_value": c.get("p_value")}
        checks.append(Check(**fields))
    return checks


def _outcome_of(r: dict, burden: str) -> str | None:
    return r["outcome"] if burden == "safety shown" else r.get("outcome_leakage_shown")


def _outcome_block(rows: list[dict], burden: str = "safety shown") -> dict:
    rows = [r for r in rows if _outcome_of(r, burden) is not None]
    n = len(rows)
    counts = {o: sum(_outcome_of(r, burden) == o for r in rows) for o in OUTCOMES}
    secs = sorted(r["audit_seconds"] for r in rows if r.get("audit_seconds") is not None)
    return {"n": n, "counts": counts, "do_not_publish": _rate(counts["do not publish"], n),
            "inconclusive": _rate(counts["inconclusive"], n), "publish": _rate(counts["publish"], n),
            "audit_seconds_median": secs[len(secs) // 2] if secs else None,
            "audit_seconds_total": round(sum(secs), 1)}


def loss_auc_contains_half(row: dict) -> bool | None:
    """Whether the loss attack's AUC interval contains 0.5 (a benign case counts only then). None: no loss attack."""
    v = (row.get("auc") or {}).get("loss")
    if not v or v[1] is None or v[2] is None:
        return None
    return bool(v[1] <= 0.5 <= v[2])


def check_family(cid: str) -> str:
    """``membership.lira.auc`` -> ``membership.*.auc``; ``dtp.dtp1`` stays; ``attribute.sex.advantage`` ->
    ``attribute.*.advantage``."""
    parts = cid.split(".")
    return f"{parts[0]}.*.{parts[-1]}" if len(parts) >= 3 else cid


def _family_state(statuses: list[str]) -> str:
    """One state for a check (or a family of checks) in one audit, so that the states partition the audits:
    exceeded when any check is; not measurable when none was measured; shown below when every check is; else
    undecided (measured, not exceeded, not shown below: some checks may be unmeasured). ``passed`` (rows from before
    results.json recorded the decision) stays apart: it is measured and not exceeded, its decision unknown."""
    if "exceeded" in statuses:
        return "exceeded"
    if all(st == "not measurable" for st in statuses):
        return "not measurable"
    if all(st == "shown below" for st in statuses):
        return "shown below"
    return "passed" if "passed" in statuses else "undecided"


def _check_block(rows: list[dict], key) -> dict:
    """Per check id (or family): in how many audits it appears, its state in each (:func:`_family_state`: the
    states sum to the audits it appears in), the exceeded rate, how many of the exceedances came only from checks
    that describe the retraining recipe, and in how many "do not publish" verdicts it was the only exceeded check."""
    out: dict[str, dict] = {}
    for r in rows:
        statuses: dict[str, list] = {}
        for c in r["checks"]:
            statuses.setdefault(key(c["id"]), []).append(c.get("status"))
        exceeded = {k for k, v in statuses.items() if "exceeded" in v}
        # exceeded only by checks that describe the retraining recipe (which cannot withhold a model on their own)
        recipe_only = {k for k in exceeded
                       if all(c.get("describes") == "recipe" for c in r["checks"]
                              if key(c["id"]) == k and c.get("status") == "exceeded")}
        for k, v in statuses.items():
            st = _family_state(v)
            d = out.setdefault(k, {"present": 0, "exceeded": 0, "shown below": 0, "undecided": 0,
                                   "not measurable": 0, "passed": 0, "sole_cause": 0, "exceeded_recipe_only": 0})
            d["present"] += 1
            d[st] += 1
            d["exceeded_recipe_only"] += st == "exceeded" and k in recipe_only
            if st == "exceeded" and exceeded == {k} and r["outcome"] == "do not publish":
                d["sole_cause"] += 1
    for d in out.values():
        d["exceeded_rate"] = _rate(d["exceeded"], d["present"])
    return dict(sorted(out.items()))


def _kind_block(rs: list[dict]) -> dict:
    a = {"overall": _outcome_block(rs), "overall_leakage_shown": _outcome_block(rs, "leakage shown")}
    for by in ("family", "dataset"):
        a[f"by_{by}"] = {v: _outcome_block([r for r in rs if r[by] == v]) for v in sorted({r[by] for r in rs})}
    a["by_family_dataset"] = {f"{f} / {d}": _outcome_block([r for r in rs if r["family"] == f and r["dataset"] == d])
                              for f, d in sorted({(r["family"], r["dataset"]) for r in rs})}
    a["by_variant"] = {f"{f} {v}": _outcome_block([r for r in rs if r["family"] == f and r["variant"] == v])
                       for f, v in sorted({(r["family"], r["variant"]) for r in rs})}
    a["by_variant_dataset_leakage_shown"] = {
        f"{f} {v} / {d}": _outcome_block([r for r in rs if (r["family"], r["variant"], r["dataset"]) == (f, v, d)],
                                         "leakage shown")
        for f, v, d in sorted({(r["family"], r["variant"], r["dataset"]) for r in rs})}
    a["by_check"] = _check_block(rs, lambda x: x)
    a["by_check_family"] = _check_block(rs, check_family)
    return a


def schema3(check: dict) -> dict:
    """A stored check as results.json's schema 3 gives it: "passed" with a decision becomes "shown below" or
    "undecided" (without a decision, from before schema 2, it stays "passed": the decision is unknown)."""
    c = {k: v for k, v in check.items() if k != "decision"}
    if check.get("status") == "passed" and check.get("decision") in ("below", "undecided"):
        c["status"] = "shown below" if check["decision"] == "below" else "undecided"
    return c


def aggregate(rows: list[dict]) -> dict:
    for r in rows:
        if r.get("checks"):
            r["checks"] = [schema3(c) for c in r["checks"]]
    for r in rows:  # the old rule, from the same audits' checks
        r["outcome_leakage_shown"] = outcome_leakage_shown(r)
        if r.get("kind") == "benign":
            r["loss_auc_contains_half"] = loss_auc_contains_half(r)
    ok = [r for r in rows if r["outcome"] != "error"]
    agg = {"n_rows": len(rows), "n_errors": len(rows) - len(ok)}
    for kind in K.KINDS:
        rs = [r for r in ok if r["kind"] == kind]
        if kind == "benign":
            counted = [r for r in rs if r.get("loss_auc_contains_half")]
            agg["benign_excluded"] = [r["id"] for r in rs if not r.get("loss_auc_contains_half")]
            rs = counted
        if kind == "positive":  # issue 47's leaky models: no label flipped, no canary
            agg["positive_unflipped"] = {
                b: _outcome_block([r for r in rs if not r.get("label_noise") and not r.get("canaries")], b)
                for b in BURDENS}
        agg[kind] = _kind_block(rs)
    agg["targets"] = {b: targets(agg, b) for b in BURDENS}
    return agg


def targets(agg: dict, burden: str = "safety shown") -> dict:
    key = "overall" if burden == "safety shown" else "overall_leakage_shown"
    nul, pos = agg["null"][key]["do_not_publish"], agg["positive"][key]["do_not_publish"]
    ben = agg["benign"][key]["publish"]
    null_met = (nul["n"] > 0 and nul["rate"] <= NULL_MAX_RATE and nul["ci"][1] <= NULL_MAX_UPPER)
    pos_met = pos["n"] > 0 and pos["rate"] >= POSITIVE_MIN_RATE
    ben_met = ben["n"] > 0 and ben["rate"] >= BENIGN_MIN_RATE
    return {"null": {"what": f"null withheld (\"do not publish\") rate <= {_pct(NULL_MAX_RATE)} and the upper end of "
                             f"its 95 % interval <= {_pct(NULL_MAX_UPPER)}", "met": bool(null_met),
                     "rate": nul["rate"], "ci": nul["ci"], "n": nul["n"], "k": nul["k"]},
            "positive": {"what": f"leaky (positive) withheld rate >= {_pct(POSITIVE_MIN_RATE)}", "met": bool(pos_met),
                         "rate": pos["rate"], "ci": pos["ci"], "n": pos["n"], "k": pos["k"]},
            "benign": {"what": f"benign published rate >= {_pct(BENIGN_MIN_RATE)}", "met": bool(ben_met),
                       "rate": ben["rate"], "ci": ben["ci"], "n": ben["n"], "k": ben["k"]}}


# -- the report ------------------------------------------------------------------------------------------------


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f} %"


def _rate_cell(r: dict) -> str:
    if not r["n"]:
        return "–"
    return f"{r['k']}/{r['n']} = {_pct(r['rate'])} [{_pct(r['ci'][0])}, {_pct(r['ci'][1])}]"


def _outcome_table(blocks: dict, first: str, rows_by: dict | None = None) -> list[str]:
    """One line per block: its outcome rates (safety shown, the audits' own verdicts) and, where given (``rows_by``:
    the same keys, the rows), the counts under the old rule recomputed from the same audits."""
    lines = [f"| {first} | audits | do not publish [95 % CI] | inconclusive [95 % CI] | publish [95 % CI] | "
             "leakage shown: withheld / inconclusive / published | median audit s |", "|---|---|---|---|---|---|---|"]
    for name, b in blocks.items():
        old = "–"
        if rows_by is not None and name in rows_by:
            o = _outcome_block(rows_by[name], "leakage shown")
            if o["n"]:
                old = f"{o['counts']['do not publish']} / {o['counts']['inconclusive']} / {o['counts']['publish']}"
        lines.append(f"| {name} | {b['n']} | {_rate_cell(b['do_not_publish'])} | {_rate_cell(b['inconclusive'])} | "
                     f"{_rate_cell(b['publish'])} | {old} | "
                     f"{b['audit_seconds_median'] if b['audit_seconds_median'] is not None else '–'} |")
    return lines + [""]


def _check_table(checks: dict) -> list[str]:
    old = any(d.get("passed") for d in checks.values())
    lines = ["| check | in audits | exceeded [95 % CI] | of which only for the recipe | shown below | undecided | "
             "not measurable | " + ("measured, decision not recorded | " if old else "")
             + "only exceeded check of a \"do not publish\" |",
             "|---|---|---|---|---|---|---|" + ("---|" if old else "") + "---|"]
    for cid, d in checks.items():
        lines.append(f"| `{cid}` | {d['present']} | {_rate_cell(d['exceeded_rate'])} | "
                     f"{d['exceeded_recipe_only']} | {d['shown below']} | {d['undecided']} | {d['not measurable']} | "
                     + (f"{d['passed']} | " if old else "") + f"{d['sole_cause']} |")
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


def _loss_auc_cell(r: dict) -> str:
    """An audit's loss-attack AUC and its interval, as the benign tables show it."""
    v = (r.get("auc") or {}).get("loss") or [None, None, None]
    return "–" if v[0] is None else f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"


def _exceeded_ids(r: dict) -> list[str]:
    """The checks an audit's row says were exceeded (none for a row whose audit failed)."""
    return [c["id"] for c in r.get("checks", []) if c.get("status") == "exceeded"]


def _undecided_ids(r: dict) -> list[str]:
    """The checks that kept an audit from "publish": not measurable, or passed but not shown below (undecided),
    or exceeded only for the recipe."""
    return [c["id"] for c in r["checks"]
            if c.get("status") == "not measurable" or (c.get("status") == "undecided"
                                                       and c.get("shows", "both") == "both")
            or (c.get("status") == "exceeded" and c.get("describes") == "recipe")]


def _tally(ids: list[list[str]]) -> str:
    count: dict[str, int] = {}
    for xs in ids:
        for x in set(xs):
            count[x] = count.get(x, 0) + 1
    return ", ".join(f"`{k}` in {v}" for k, v in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])))


def findings(agg: dict, rows: list[dict], burdens=BURDENS) -> list[str]:
    """Which checks made the wrong null verdicts, which caught the positive cases, which kept benign models from
    "publish" (generated sentences)."""
    out = []
    ok = [r for r in rows if r["outcome"] != "error"]
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
        wrong = [r for r in ok if r["kind"] == "null" and r["outcome"] == "do not publish"]
        if wrong:
            out.append("  Withheld null audits: " + "; ".join(
                f"`{r['id']}` ({', '.join(c['id'] for c in r['checks'] if c.get('status') == 'exceeded')})"
                for r in wrong) + ".")
    pos = agg["positive"]
    if pos["overall"]["n"]:
        caught = "; ".join(f"`{k}` {d['exceeded']}/{d['present'] - d['not measurable']}"
                           for k, d in pos["by_check_family"].items())
        un = agg.get("positive_unflipped", {}).get("safety shown", {"n": 0})
        out.append(f"- Positive (leaky) cases: {pos['overall']['counts']['do not publish']} of {pos['overall']['n']} "
                   "withheld" + (f" ({un['counts']['do not publish']} of the {un['n']} without flipped labels or "
                                  "canaries)" if un["n"] else "")
                   + f"; each family of checks exceeded in (of the audits where it was measured): {caught}.")
    ben = agg.get("benign")
    excluded = agg.get("benign_excluded", [])
    if ben and (ben["overall"]["n"] or excluded):
        b = ben["overall"]
        bad = [r for r in ok if r["kind"] == "benign" and r.get("loss_auc_contains_half") and r["outcome"] != "publish"]
        out.append(f"- Benign cases: {b['counts']['publish']} of {b['n']} published, {b['counts']['inconclusive']} "
                   f"inconclusive, {b['counts']['do not publish']} withheld; {len(excluded)} audit"
                   f"{'' if len(excluded) == 1 else 's'} excluded because the loss attack's AUC interval did not "
                   "contain 0.5" + (f" ({', '.join(f'`{x}`' for x in excluded)})" if excluded else "")
                   + (f". The checks that kept the others from \"publish\" (not measurable, or not shown below the "
                      f"threshold, or exceeded only for the recipe): {_tally([_undecided_ids(r) for r in bad])}"
                      if bad else "") + ".")
    for burden in burdens if len(burdens) > 1 else ():
        t = agg["targets"][burden]
        out.append(f"- Under \"{burden}\": null withheld {_rate_cell(t['null'])}; leaky withheld "
                   f"{_rate_cell(t['positive'])}; benign published {_rate_cell(t['benign'])}.")
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
           "largest AUC of any attack, the loss attack's AUC, the largest PDTP (nats) of the measured members.", "",
           "| kind | family | variant | dataset | accuracy members / non-members | largest attack AUC | loss AUC | "
           "largest PDTP |", "|---|---|---|---|---|---|---|---|"]
    order = {k: i for i, k in enumerate(K.KINDS)}
    for (kind, fam, var, ds), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0])):
        auc = _median([max((v[0] for v in r.get("auc", {}).values() if v and v[0] is not None), default=None)
                       for r in rs])
        loss = _median([(r.get("auc", {}).get("loss") or [None])[0] for r in rs])
        pd_ = _median([(r.get("pdtp") or {}).get("max") for r in rs])
        out.append(f"| {kind} | {fam} | {var} | {ds} | {f(_median([r.get('train_accuracy') for r in rs]))} / "
                   f"{f(_median([r.get('test_accuracy') for r in rs]))} | {f(auc)} | {f(loss)} | {f(pd_, '{:.2f}')} |")
    return out + [""]


KIND_HEADINGS = {"null": "Null cases: every \"do not publish\" is wrong",
                 "positive": "Leaky (positive) cases: every verdict but \"do not publish\" is wrong",
                 "benign": "Benign cases: every verdict but \"publish\" is a miss"}


def _groups(rows: list[dict], kind: str, key) -> dict:
    out: dict[str, list[dict]] = {}
    for r in rows:
        if r["outcome"] != "error" and r["kind"] == kind and (kind != "benign" or r.get("loss_auc_contains_half")):
            out.setdefault(key(r), []).append(r)
    return out


def run_section(res: dict, title: str) -> list[str]:
    agg, m = res["aggregates"], res.get("machine", {})
    rows = res["rows"]
    schema = sorted({r.get("verdict_schema", "?") for r in rows if r["outcome"] != "error"})
    n_planned = res.get("n_planned")
    partial = (f" **This run is partial: {len(rows)} of the {n_planned} audits of the suite were run** "
               f"(`--max-minutes`); the rates below are those of the audits run." if n_planned
               and n_planned > len(rows) else "")
    cpu = f", CPU time of this invocation {res['cpu_seconds'] / 60:.1f} min" if res.get("cpu_seconds") else ""
    out = [f"## {title}", "",
           f"Run {_when(res)} on {m.get('nproc', '?')} cores ({m.get('cpu', '?')}, load average at start "
           f"{', '.join(str(x) for x in m.get('loadavg_start', []))}"
           + (f", at the end {', '.join(str(x) for x in m['loadavg_end'])}" if m.get("loadavg_end") else "")
           + f"); {_code_line(res)}.", "",
           f"Command: `{res.get('command', '?')}`. Audits: {agg['n_rows']} ({agg['n_errors']} failed); total audit "
           f"time {res.get('audit_seconds_total', 0) / 60:.1f} min, total case time (models trained, files written, "
           f"audits) {res.get('case_seconds_total', 0) / 60:.1f} min; this invocation's wall time "
           f"{res.get('wall_seconds', 0) / 60:.1f} min{cpu}"
           f"{' (resumed: earlier audits were kept)' if res.get('resumed') else ''}.{partial} "
           f"Verdict read from the {' and '.join(schema)} results.json schema"
           + (" (`verdict.publish` and `reasons`: no checks in it, so each audit's checks were recomputed from its "
              "measured sections by that verdict's own rules and thresholds, and the number exceeded checked against "
              "its reasons; a TPR the audit could not estimate counts as not measurable)" if "old" in schema
              else "") + ".", ""]
    has_new = any(r.get("outcome_leakage_shown") for r in rows)
    burdens = BURDENS if has_new else ("safety shown",)
    if has_new:
        out += ["The first column is the audits' own verdict (the default policy, burden of proof \"safety shown\"). "
                "The second is the old rule, \"leakage shown\", **recomputed from the same audits** (no audit was "
                "rerun): each audit's stored checks rebuilt as `Check` objects and decided by "
                "`leakaudit.audit.result.verdict.decide(make_config(policy=\"leakage-shown\"), checks)`; that policy "
                "differs from the default only in its burden of proof.", ""]
        out += ["| target | safety shown (the audits' verdicts) | met | leakage shown (recomputed) | met |",
                "|---|---|---|---|---|"]
    else:
        out += ["| target | measured | met |", "|---|---|---|"]
    for kind in ("null", "positive", "benign"):
        cells = []
        for b in burdens:
            t = agg["targets"][b][kind]
            cells += [_rate_cell(t), ("yes" if t["met"] else "**no**") if t["n"] else "–"]
        if any(agg["targets"][b][kind]["n"] for b in burdens):
            out.append(f"| {agg['targets']['safety shown'][kind]['what']} | " + " | ".join(cells) + " |")
    out.append("")
    out += findings(agg, rows, burdens) + [""]
    if agg["n_errors"]:
        out += ["Failed audits (not counted above):", ""]
        out += [f"- `{r['id']}`: {r.get('error', '')[:300]}" for r in rows if r["outcome"] == "error"]
        out.append("")
    for kind in K.KINDS:
        a = agg.get(kind)
        if not a or not a["overall"]["n"]:
            continue
        out += [f"### {KIND_HEADINGS[kind]}", ""]
        if kind == "benign":
            out += ["Counted: the audits whose loss attack's AUC interval contains 0.5 (the model shows no "
                    "generalisation gap that a loss threshold can see); the table of every benign audit below "
                    "includes the excluded ones.", ""]
        rows_by = {"all": [r for rs in _groups(rows, kind, lambda r: "all").values() for r in rs],
                   **{f"family: {k}": v for k, v in _groups(rows, kind, lambda r: r["family"]).items()},
                   **{f"dataset: {k}": v for k, v in _groups(rows, kind, lambda r: r["dataset"]).items()},
                   **_groups(rows, kind, lambda r: f"{r['family']} / {r['dataset']}"),
                   **_groups(rows, kind, lambda r: f"{r['family']} {r['variant']}")}
        out += _outcome_table({"all": a["overall"], **{f"family: {k}": v for k, v in a["by_family"].items()},
                               **{f"dataset: {k}": v for k, v in a["by_dataset"].items()}}, "cases", rows_by)
        out += ["Per family and dataset, and per variant:", ""]
        out += _outcome_table({**a["by_family_dataset"], **a["by_variant"]}, "cases", rows_by)
        out += [f"Checks ({kind} cases), by family of checks (a family is exceeded in an audit when any of its "
                "checks is, not measurable when none was measured, shown below when all are shown below, else undecided; "
                "the four columns sum to the audits):", ""]
        out += _check_table(a["by_check_family"])
        out += [f"<details><summary>Every check id ({kind} cases)</summary>", ""] + _check_table(a["by_check"])
        out += ["</details>", ""]
        if kind == "benign":
            out += benign_table(rows)
    out += leak_strength(rows)
    pos = [r for r in rows if r["kind"] == "positive" and r["outcome"] not in ("do not publish", "error")]
    if pos:
        out += ["Leaky (positive) cases the verdict let through:", ""]
        out += [f"- `{r['id']}`: {r['outcome']} (leakage shown: {r.get('outcome_leakage_shown') or '–'}); train / "
                f"test accuracy {r.get('train_accuracy', 0):.3f} / {r.get('test_accuracy', 0):.3f}; AUC "
                + ", ".join(f"{k} {v[0]:.3f}" for k, v in r.get("auc", {}).items())
                + (f"; not decided: {', '.join(_undecided_ids(r))}" if _undecided_ids(r) else "")
                for r in pos]
        out.append("")
    return out


def benign_table(rows: list[dict]) -> list[str]:
    ben = [r for r in rows if r["kind"] == "benign" and r["outcome"] != "error"]
    if not ben:
        return []
    out = ["Every benign audit:", "",
           "| audit | counted (loss AUC interval holds 0.5) | loss AUC [interval] | verdict | leakage shown | "
           "checks not shown below (not measurable, undecided, or exceeded for the recipe only) | audit s |",
           "|---|---|---|---|---|---|---|"]
    for r in ben:
        auc = _loss_auc_cell(r)
        out.append(f"| `{r['id']}` | {'yes' if r.get('loss_auc_contains_half') else '**no**'} | {auc} | "
                   f"{r['outcome']} | {r.get('outcome_leakage_shown') or '–'} | "
                   f"{', '.join(f'`{x}`' for x in _undecided_ids(r)) or 'none'} | {r.get('audit_seconds', '–')} |")
    return out + [""]


def comparison(latest: dict, previous: dict) -> list[str]:
    """The cases the previous run measured too (same ids): its outcomes beside this run's, under both burdens."""
    prev = {r["id"]: r for r in previous.get("rows", []) if r["outcome"] != "error"}
    now = [r for r in latest.get("rows", []) if r["outcome"] != "error" and r["id"] in prev]
    if not now:
        return []
    c = previous.get("code", {}).get("commit") or "?"
    out = [f"## What changed since the previous run (commit {c}, {_when(previous)[:10]})", "",
           f"The previous run (`benchmarks/results/{PREVIOUS}`) had the {len(prev)} null and positive audits of the "
           "first suite, under the verdict before the burden of proof: \"leakage shown\", and a smoke audit's random "
           "PDTP sample of 100 members passing DTP-1 without bounding the members it did not measure. Since then "
           "the default burden is \"safety shown\", and that sample bounds the unmeasured members, so at smoke with "
           "1,000 members DTP-1 is \"not measurable\" and such an audit cannot publish. The same "
           f"{len(now)} cases (same ids, same records and models), three verdicts: the previous run's; this run's "
           "(safety shown); this run's checks under leakage shown.", "",
           "| kind | family | dataset | previous run: withheld / inconclusive / published | this run, safety shown | "
           "this run, leakage shown (recomputed) |", "|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for r in now:
        groups.setdefault((r["kind"], r["family"], r["dataset"]), []).append(r)

    def cnt(rs, f):
        return " / ".join(str(sum(f(r) == o for r in rs)) for o in ("do not publish", "inconclusive", "publish"))

    for (kind, fam, ds), rs in sorted(groups.items()):
        out.append(f"| {kind} | {fam} | {ds} | {cnt(rs, lambda r: prev[r['id']]['outcome'])} | "
                   f"{cnt(rs, lambda r: r['outcome'])} | {cnt(rs, lambda r: r.get('outcome_leakage_shown'))} |")
    out.append(f"| all | | | {cnt(now, lambda r: prev[r['id']]['outcome'])} | {cnt(now, lambda r: r['outcome'])} | "
               f"{cnt(now, lambda r: r.get('outcome_leakage_shown'))} |")
    return out + [""]


def case_list(rows: list[dict]) -> list[str]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["kind"], r["family"], r["variant"], r["dataset"]), []).append(r)
    lines = ["| kind | family | dataset | model | members / non-members / target's own records | profile | seeds |",
             "|---|---|---|---|---|---|---|"]
    order = {k: i for i, k in enumerate(K.KINDS)}
    for (kind, fam, var, ds), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0])):
        r = rs[0]
        own = r.get("n_target_train") if kind == "null" else "(the members)"
        extra = ""
        if r.get("n_population"):
            extra = f", population {r['n_population']}"
        if r.get("distinct"):
            extra += "; duplicate rows removed first"
        seeds = sorted(x["seed"] for x in rs)
        lines.append(f"| {kind} | {fam} | {ds} | {r['description']} | {r['n_members']} / {r['n_nonmembers']} / "
                     f"{own}{extra} | {r.get('profile', 'smoke')} | {len(seeds)}: {seeds[0]}-{seeds[-1]} |")
    return lines + [""]


def profile_section(res: dict) -> list[str]:
    """The page's section on profiles, from benchmarks/profile_claims.py's summary."""
    rel = res.get("relations", {})
    bad = rel.get("contradiction", 0)
    return ["## A profile never changes a claim", "",
            "The same cases (model, members, non-members, seed) audited at every profile: a faster profile may leave "
            'a verdict inconclusive that a fuller one decides, but must never decide it otherwise (a "contradiction": '
            '"publish" at one profile, "do not publish" at another). Run '
            f"{_when(res)[:16]} UTC, leakaudit at commit `{res.get('code', {}).get('commit') or '?'}`; command "
            f"`{res.get('command')}` (each row's seconds are its audit's; load average at the end "
            f"{', '.join(map(str, res.get('machine', {}).get('loadavg_end', [])))}). "
            f"**{bad} contradiction{'s' if bad != 1 else ''} in {res.get('n_cases', 0)} cases.**", ""] + list(
                res.get("table", [])) + [""]


def boosted_section(res: dict) -> list[str]:
    """The section of ``--set boosted`` (issue 67: XGBoost, LightGBM, CatBoost), from its own result file."""
    rows = [r for r in res["rows"] if r["outcome"] != "error"]
    commit = f"commit {res.get('code', {}).get('commit') or '?'}"
    if len({r.get("code_fingerprint") for r in rows}) > 1:  # rows kept from other sources (--keep-earlier-code)
        commit = f"commits {', '.join(sorted({r.get('commit') or '?' for r in rows}))}: which code measured which rows below"
    head = f"Gradient-boosted libraries: XGBoost, LightGBM, CatBoost ({commit}, {_when(res)[:10]})"
    ben = {f: sum(r["kind"] == "benign" and r["family"] == f for r in rows) for f in K.BOOSTED}
    out = run_section(res, head)
    out.insert(out.index(f"## {head}") + 2,
               "Issue 67's cases, run apart from the suite above (`--set boosted`, stored in "
               "`benchmarks/results/calibration_boosted.json`) with the same machinery: each model is fitted on "
               "leakaudit's encoding with one thread and handed to the audit in memory, as `leakaudit.audit` takes "
               "it (`boosted_from_memory`, `boosted_target`), so its reference, noise-floor and leave-one-out models "
               "are retrained by leakaudit's learner for that library with the recipe the model records. Benign "
               "audits (profile standard, 5,000 members) run per library: "
               + ", ".join(f"{f} {n}" for f, n in ben.items())
               + f"; the other benign families above have {BENIGN_SEEDS} "
               "seeds on Adult, and the seeds not run here were not run for time.\n")
    _note_too_few_null(res, head, out)
    ids = {r["id"] for r in rows}
    why = {cid: e for cid, e in (res.get("dtp_records") or {}).items() if cid in ids}
    return (out + benign_dtp_section(why) + bins_remedy_section(res.get("bins_remedy"), res.get("dtp_records") or {})
            + ["Cases of this section:", ""] + case_list(rows) + measured_by(rows))


def bins_remedy_section(res: dict | None, why: dict) -> list[str]:
    """``--set lightgbm-bins``: the benign LightGBM recipe with its bins held to its leaf minimum, beside the
    suite (not counted in its benign bar); ``why``: benchmarks/boosted_dtp_records.py's entries, by case id."""
    if not res:
        return []
    rows = [r for r in res["rows"] if r["outcome"] != "error"]

    def published(rs: list[dict]) -> dict:
        counted = [r for r in rs if loss_auc_contains_half(r)]
        return _rate(sum(r["outcome"] == "publish" for r in counted), len(counted))

    now, before = published(rows), published(res.get("family_rows") or [])
    desc = rows[0]["description"] if rows else "?"
    out = ["### The remedy the withheld LightGBM audits point to: bins no smaller than a leaf", "",
           f"The benign LightGBM recipe again with one parameter changed, `min_data_in_bin` 50 (LightGBM's default "
           f"is 3), the recipe's own `min_child_samples`, so that no histogram bin edge is set by fewer members than "
           f"a leaf may hold: {desc}. The value was fixed before the run, not searched. The same seeds, members and "
           f"non-members as the benign LightGBM family above (`--set lightgbm-bins`, stored in "
           f"`benchmarks/results/calibration_lightgbm-bins.json`), audited the same way, and **not counted in the "
           f"bar above**: a recipe changed after seeing why the family was withheld, so counting it would tune the "
           f"benign cases to the rule. Run {_when(res)}; {_code_line(res)}. {res.get('note') or ''}", "",
           f"**Published: {_rate_cell(now)}** of the audits whose loss attack's AUC interval contains 0.5 "
           f"({len(rows)} run), against {_rate_cell(before)} for the same seeds with LightGBM's default bins.", "",
           "| audit | counted (loss AUC interval holds 0.5) | loss AUC [interval] | verdict | checks exceeded, "
           "undecided or not measurable | train / test accuracy | audit s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        auc = _loss_auc_cell(r)
        out.append(f"| `{r['id']}` | {'yes' if loss_auc_contains_half(r) else '**no**'} | {auc} | {r['outcome']} | "
                   f"{', '.join(f'`{x}`' for x in dict.fromkeys(_exceeded_ids(r) + _undecided_ids(r))) or 'none'} | "
                   f"{r.get('train_accuracy', float('nan')):.3f} / {r.get('test_accuracy', float('nan')):.3f} | "
                   f"{r.get('audit_seconds', '–')} |")
    out.append("")
    loo = [x for r in rows if r["id"] in why for x in why[r["id"]].get("leave_one_out") or []]
    if loo:
        edges = sum(_fixed(x) <= 1 for x in loo)
        out += [f"Of the withheld audits' significant records, examined below by `benchmarks/boosted_dtp_records.py` "
                f"as above: {edges} of {len(loo)} change by at most 1 on the full members' bins, so bin edges still "
                f"decide them (with bins of at least 50 members, removing one member still moves an edge between "
                f"two bins when the member's value is next to it), and {len(loo) - edges} by more than 1 on "
                f"fixed bins too (another tree structure).", ""]
    if now["n"] and before["n"]:
        out += [("**The remedy does not remedy**: with `min_data_in_bin` at the leaf minimum the benign LightGBM "
                 f"recipe is published no more often ({now['k']}/{now['n']} against {before['k']}/{before['n']})."
                 if now["rate"] <= before["rate"] else
                 f"With `min_data_in_bin` at the leaf minimum the benign LightGBM recipe is published more often "
                 f"({now['k']}/{now['n']} against {before['k']}/{before['n']}; the intervals above say how sure)."),
                ""]
    for r in rows:
        if r["id"] in why:
            out += dtp_entry_lines(r["id"], why[r["id"]])
    return out


def _p(x: float) -> str:
    return f"{x:.3f}"


def _loo_sentence(r: dict, cls: list[str]) -> str:
    """One record's exact leave-one-out (benchmarks/boosted_dtp_records.py) in words."""
    c = max(range(len(r["bin_aware"])), key=lambda k: abs(r["bin_aware"][k]))  # the class that decides
    f = r["first_change"] or {}
    text = (f"row {r['row']} (label {r['label']}): P({cls[c]}) {_p(r['p_full'][c])} with it, {_p(r['p_loo'][c])} "
            f"without it (bins {r['bins_full'][c]} and {r['bins_loo'][c]} of width 0.01; ln ratio "
            f"{abs(r['ln_ratio'][c]):.2f}, bin-aware {abs(r['bin_aware'][c]):.2f}); {r['trees_changed']} of its "
            f"{r['n_trees']} trees differ")
    if f:
        v, a, b = f["record_value_encoded"], f["threshold_full"], f["threshold_loo"]
        where = "across" if (v <= a) != (v <= b) else "not across"  # LightGBM sends value <= threshold left
        text += (f", the first tree {f['tree']}, whose split on {f['feature']} moves from {a:.4f} to {b:.4f} "
                 f"(encoded), {where} the record's own {v:.4f} ({f['feature']} {f['record_value']}, held by "
                 f"{f['members_with_that_value']} of the members)")
    return text + (f"; on the full members' histogram bins the same leave-one-out changes it by "
                   f"{_fixed(r):.2f} (bin-aware)")


def _fixed(r: dict) -> float:
    return max(abs(v) for v in r["fixed_bins"]["bin_aware"])


def _loo_finding(loo: list[dict]) -> str:
    """What the exact leave-one-outs show, read from them: which changes cross Long et al.'s lowest bin, which vanish
    on the full members' histogram bins (LightGBM's bin edges drawn from the training data) and which do not (another
    tree structure)."""
    def rows(rs):
        return f"row{'s' if len(rs) > 1 else ''} {', '.join(str(r['row']) for r in rs)}"

    lowest = [r for r in loo if min(r["bins_full"] + r["bins_loo"]) == 0]
    binning = [r for r in loo if _fixed(r) <= 1]
    trees = [r for r in loo if _fixed(r) > 1]
    out = [f"{rows(lowest)}: one side in the lowest bin (p below 0.01), the case of Long et al.'s binning where a "
           "move from bin 0 to bin 3 is already a ratio of at least 3 (ln 3 = 1.10 > 1); the unbinned ln ratios "
           f"are {', '.join(format(max(abs(v) for v in r['ln_ratio']), '.2f') for r in lowest)}" if lowest else
           "no probability in the lowest bin (below 0.01) on either side: changes of mid-range probabilities, not the "
           "binning at the bottom of Long et al.'s rule"]
    if binning:
        out.append(f"{rows(binning)}: at most 1 on the full members' histogram bins, so the excess comes from "
                   "LightGBM drawing its histogram bin edges from the training data (`max_bin`, `min_data_in_bin`): "
                   "removing the member moves bin edges, and with them the thresholds the splits can take (across "
                   "the member's own value where it holds a value of capital gain or loss that few members hold)")
    if trees:
        out.append(f"{rows(trees)}: above 1 on the full members' bins as well, a different tree structure after "
                   "removing one record")
    return ("What this shows: " + "; ".join(out) + ". Each is a change of the given model's own output on the member "
            "(the recipe retrains it exactly), which is what Long et al.'s DTP-1 rule counts: the rule withholds "
            "this well-regularised LightGBM model, a finding about the rule and LightGBM, not a false alarm of the "
            "statistical test.")


def dtp_entry_lines(cid: str, e: dict) -> list[str]:
    """One examined audit of ``benchmarks/boosted_dtp_records.py`` in words: its DTP-1 test's records and, for
    LightGBM, what their exact leave-one-outs show."""
    out: list[str] = []
    recs = e["records"]
    # a learner whose leave-one-out does not depend on the seed is measured once: no repeats, no spread
    exact = e["n_repeats"] == 1  # dtp1_test refuses fewer than 2 repeats for a seeded learner
    how = (f"measured exactly ({e['method']})" if exact else
           f"re-measured with {e['n_repeats']} paired repeats ({e['method']})")
    head = (f"- `{cid}` ({e['description']}): {e['outcome']}; `dtp.dtp1` {e['status']}"
            f"{' for the recipe only' if e.get('describes') == 'recipe' else ''}. PDTP was measured for "
            f"{e['n_records_measured']:,} members, {e['n_above_stage1']} above 1; {e['n_tested']} {how}, "
            f"{e['n_significant']} significant: "
            + "; ".join(f"{r['record']} {r['mean']:.2f} (adjusted p {r['p_adjusted']:.2g})" if exact else
                        f"{r['record']} mean {r['mean']:.2f} (sd {r['sd']:.2f}, lower bound {r['lower_bound']:.2f}"
                        f", adjusted p {r['p_adjusted']:.2g})" for r in recs) + ".")
    conf = e.get("confirmation")
    if e.get("retrains_exactly"):
        head += " The recipe retrains the given model exactly, so this holds for the given model."
    elif conf:
        what = ("describes the model" if conf["confirmed"] else
                "describes the recipe only, which cannot withhold a model, so the verdict is inconclusive")
        head += (f" The given model's outputs {'show' if conf['confirmed'] else 'do not show'} that it trained "
                 f"on the significant records (p = {conf['p_value']:.2g} against the level "
                 f"{1 - e['confidence']:.2g}): the finding {what}.")
    over = [r for r in recs if r["mean"] > 1 and not r.get("significant")]
    if e["status"] == "undecided" and over:
        are = "means are" if len(over) > 1 else "mean is"
        head += (f" No record is significant, but {len(over)} re-measured {are} above 1 with a lower bound "
                 "below it, so DTP-1 is neither exceeded nor shown below (more repeats, `profile=\"thorough\"`, "
                 "would decide it): undecided, and the verdict inconclusive.")
    out.append(head)
    loo = e.get("leave_one_out") or []
    if loo:
        out += ["", "  Exact leave-one-out of each: " + "; ".join(_loo_sentence(r, e["classes"]) for r in loo)
                + ".", "", "  " + _loo_finding(loo)]
    out.append("")
    return out


def benign_dtp_section(entries: dict) -> list[str]:
    """Why the benign boosted audits that were not published were not: the DTP-1 records of each, looked into by
    ``benchmarks/boosted_dtp_records.py`` (``benchmarks/results/calibration_boosted_dtp.json``)."""
    if not entries:
        return []
    out = ["### Why benign boosted audits were not published", "",
           "Each of these was examined by `benchmarks/boosted_dtp_records.py` from its audit's kept folder (the DTP-1 "
           "test of its results.json; for LightGBM, whose seed does not matter without sampling, each record's "
           "leave-one-out retrained exactly, then once more on the full members' histogram bins; CatBoost's "
           "training is seeded, MVS bootstrap and random strength, so its records are judged on the paired repeats "
           "alone). Neither the DTP-1 rule nor the benign recipes were changed to pass the bar.", ""]
    for cid, e in entries.items():
        out += dtp_entry_lines(cid, e)
    return out


def _note_too_few_null(res: dict, head: str, out: list[str]) -> None:
    """Under a section's targets (``out``, its lines, headed ``head``): when no null audit was withheld but the
    null target is missed for the interval's upper end alone, say so and how many audits the bar needs."""
    t = res["aggregates"]["targets"]["safety shown"]["null"]
    if t["n"] and not t["met"] and t["k"] == 0:  # no false alarm, but too few audits for the bar on the interval
        from leakaudit.metrics import clopper_pearson

        need = next(n for n in range(1, 10_000) if clopper_pearson(0, n)[1] <= NULL_MAX_UPPER)
        out.insert(out.index(f"## {head}") + 7,
                   f"No null audit of this section was withheld; its null target is not met only because "
                   f"{t['n']} audits without a false alarm leave the interval's upper end at {_pct(t['ci'][1])}: "
                   f"the bar of {_pct(NULL_MAX_UPPER)} needs at least {need} such audits.\n")


# -- issue 68: the cases with a population (RMIA and InfoRMIA) --------------------------------------------------

#: the attacks that need a population; their checks join the verdict's family only when one is given
POPULATION_ATTACKS = ("rmia", "informia")


def _attack_of(cid: str) -> str | None:
    """``membership.rmia.auc`` -> ``rmia``; None for a check that is not a membership attack's."""
    parts = cid.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "membership" else None


def base_id(row: dict) -> str:
    """The id of the same case without a population (:attr:`_calibration_cases.Case.base_id`)."""
    p = row.get("population") or 0
    return row["id"][:-len(f"-p{p}")] if p and row["id"].endswith(f"-p{p}") else row["id"]


def rejudged(check, n_family: int, n_kept: int):
    """``check`` as it would be decided were the verdict's family ``n_kept`` checks instead of ``n_family``.

    Each check is judged at the Bonferroni-corrected confidence ``1 - alpha / n`` (``leakaudit.audit.plan.
    check_confidence``); with fewer checks its level ``alpha / n`` grows. A check that tested (a ``p_value``, DTP-1)
    is exceeded when its p-value is at most the new level, else it keeps its status. A check with an interval gets
    the interval at the new confidence by the normal approximation :func:`leakaudit.audit.result.checks.evidence_p` reads
    intervals with (each side scaled by the ratio of the normal quantiles), and is then decided as the audit decides
    it: exceeded when the lower end lies above the threshold, else shown below or undecided
    (:func:`leakaudit.audit.result.checks.decision`). An approximation: the audit's intervals are bootstrap or
    Clopper-Pearson ones, not normal. ``n_kept == n_family`` returns the check unchanged."""
    from scipy.stats import norm

    from leakaudit.audit.result.checks import BELOW, EXCEEDED, NOT_MEASURABLE, UNDECIDED, decision

    if n_kept == n_family or check.status == NOT_MEASURABLE or check.confidence is None:
        return check
    alpha = (1.0 - check.confidence) * n_family / n_kept
    if check.p_value is not None:
        return check.model_copy(update={"status": EXCEEDED}) if check.p_value <= alpha else check
    if check.interval is None or check.value is None or check.threshold is None:
        return check
    r = float(norm.isf(alpha / 2) / norm.isf((1.0 - check.confidence) / 2))
    v, (lo, hi) = check.value, check.interval
    interval = (v - (v - lo) * r, v + (hi - v) * r)
    if interval[0] > check.threshold:
        status = EXCEEDED
    else:
        status = decision({"interval": interval, "threshold": check.threshold, "shows": check.shows})
    assert status in (EXCEEDED, BELOW, UNDECIDED)
    return check.model_copy(update={"status": status, "interval": interval, "confidence": 1.0 - alpha})


def outcome_without(row: dict, attacks=("rmia",), *, rejudge: bool) -> str | None:
    """The outcome the default policy gives the row's recorded checks without those of ``attacks`` (decided by
    ``leakaudit.audit.result.verdict.decide``): as the audit decided the others (``rejudge=False``), or with the others
    judged at the confidence of the smaller family (``rejudge=True``, :func:`rejudged`). None: no stored checks."""
    checks = stored_checks(row)
    if checks is None:
        return None
    from leakaudit.audit.config import make_config
    from leakaudit.audit.result.verdict import decide

    kept = [c for c in checks if _attack_of(c.id) not in attacks]
    if rejudge:
        kept = [rejudged(c, len(checks), len(kept)) for c in kept]
    return decide(make_config(), kept).outcome


def attack_state(row: dict, attack: str) -> str | None:
    """One attack's state in an audit: "exceeded" when any of its checks is, else "not exceeded"; None when it did
    not run."""
    sts = [c.get("status") for c in row.get("checks", []) if _attack_of(c["id"]) == attack]
    return None if not sts else ("exceeded" if "exceeded" in sts else "not exceeded")


def _population_check_table(rows: list[dict]) -> list[str]:
    """Per check of RMIA and InfoRMIA (and, to compare, the other membership attacks'): how often it is exceeded on
    null cases (false alarms) and on leaky ones (power)."""
    ids = sorted({c["id"] for r in rows for c in r.get("checks", []) if _attack_of(c["id"])},
                 key=lambda x: (_attack_of(x) not in POPULATION_ATTACKS, x))
    lines = ["| check | null: exceeded (false alarm) [95 % CI] | leaky: exceeded (power) [95 % CI] | "
             "benign: exceeded [95 % CI] |", "|---|---|---|---|"]
    for cid in ids:
        cells = []
        for kind in K.KINDS:
            sts = [c.get("status") for r in rows if r["kind"] == kind for c in r["checks"] if c["id"] == cid]
            cells.append(_rate_cell(_rate(sts.count("exceeded"), len(sts))))
        lines.append(f"| `{cid}` | " + " | ".join(cells) + " |")
    return lines + [""]


def _population_group_table(rows: list[dict]) -> list[str]:
    """Per case group: how often each check of RMIA and InfoRMIA is exceeded."""
    ids = sorted({c["id"] for r in rows for c in r.get("checks", []) if _attack_of(c["id"]) in POPULATION_ATTACKS})
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["kind"], r["family"], r["variant"]), []).append(r)
    order = {k: i for i, k in enumerate(K.KINDS)}
    lines = ["| kind | family | variant | audits | " + " | ".join(f"`{i}` exceeded" for i in ids) + " |",
             "|---|---|---|---|" + "---|" * len(ids)]
    for (kind, fam, var), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0])):
        cells = []
        for cid in ids:
            sts = [c.get("status") for r in rs for c in r["checks"] if c["id"] == cid]
            cells.append(f"{sts.count('exceeded')}/{len(sts)}")
        lines.append(f"| {kind} | {fam} | {var} | {len(rs)} | " + " | ".join(cells) + " |")
    return lines + [""]


def _agreement(rows: list[dict]) -> list[str]:
    """How often RMIA and InfoRMIA decide an audit the same way (both exceeded, or neither), per case group and for
    each metric."""
    pairs = [(r, attack_state(r, "rmia"), attack_state(r, "informia")) for r in rows]
    pairs = [p for p in pairs if p[1] and p[2]]
    if not pairs:
        return ["RMIA and InfoRMIA did not both run in any audit of this section.", ""]
    groups: dict[tuple, list] = {}
    for p in pairs:
        groups.setdefault((p[0]["kind"], p[0]["family"], p[0]["variant"]), []).append(p)
    order = {k: i for i, k in enumerate(K.KINDS)}
    lines = ["| kind | family | variant | both exceeded | only RMIA | only InfoRMIA | neither | same decision |",
             "|---|---|---|---|---|---|---|---|"]

    def counts(ps):
        both = sum(a == b == "exceeded" for _, a, b in ps)
        neither = sum(a == b == "not exceeded" for _, a, b in ps)
        only_r = sum(a == "exceeded" != b for _, a, b in ps)
        return both, only_r, len(ps) - both - neither - only_r, neither

    for key, ps in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0])):
        b, r_, i_, n = counts(ps)
        lines.append(f"| {' | '.join(key)} | {b} | {r_} | {i_} | {n} | {b + n}/{len(ps)} |")
    b, r_, i_, n = counts(pairs)
    lines.append(f"| all | | | {b} | {r_} | {i_} | {n} | {_rate_cell(_rate(b + n, len(pairs)))} |")
    metric = []
    for m in ("auc", "tpr_at_low_fpr"):
        same = tot = 0
        for r, _, _ in pairs:
            st = {c["id"]: c.get("status") for c in r["checks"]}
            a, i = st.get(f"membership.rmia.{m}"), st.get(f"membership.informia.{m}")
            if a and i:
                tot += 1
                same += (a == "exceeded") == (i == "exceeded")
        metric.append(f"`{m}` {_rate_cell(_rate(same, tot))}")
    split = [f"`{r['id']}` (RMIA {a}, InfoRMIA {b})" for r, a, b in pairs if a != b]
    return (["An audit's RMIA (or InfoRMIA) counts as exceeded when either of its two checks is. Per case group:", ""]
            + lines + ["", "The same decision per metric (RMIA's check and InfoRMIA's exceeded alike or not exceeded "
                       "alike): " + "; ".join(metric) + "."
                       + (" Audits where they differ: " + "; ".join(split) + "." if split else ""), ""])


def _without_population(rows: list[dict], full: dict | None) -> list[str]:
    """The same cases' outcomes without a population, where the suite's run (calibration.json) has them."""
    if full is None:
        return ["No result of the suite without a population (`benchmarks/results/calibration.json`) was found, so "
                "the outcomes are not compared with those of the same cases without one.", ""]
    base = {r["id"]: r for r in full.get("rows", []) if r["outcome"] != "error"}
    same, other, missing = [], [], []
    for r in rows:
        b = base.get(base_id(r))
        if b is None:
            missing.append(r)
        elif bool(b.get("distinct")) != bool(r.get("distinct")) or (b["n_members"], b["n_nonmembers"]) != (
                r["n_members"], r["n_nonmembers"]):
            other.append(r)
        else:
            same.append((r, b))
    c = full.get("code", {}).get("commit") or "?"
    out = [f"The suite's run (`calibration.json`, commit {c}, {_when(full)[:10]}) has {len(same)} of these "
           f"{len(rows)} cases without a population: the same id less `-pN`, so the same records and model (the "
           "records are drawn by that id, the population after them). That run is of an older leakaudit (before "
           "InfoRMIA, among other changes), so an outcome may differ for the code as well as for the population."
           + (f" {len(other)} ids are there with other records (drawn from the table with its duplicate rows, the "
              "first suite's families), and are not compared: "
              + ", ".join(sorted({f'{r["family"]} {r["variant"]}' for r in other})) + "." if other else "")
           + (f" {len(missing)} are not there (seeds that run did not have): "
              + ", ".join(f"`{r['id']}`" for r in missing) + "." if missing else ""), ""]
    if not same:
        return out
    groups: dict[tuple, list] = {}
    for r, b in same:
        groups.setdefault((r["kind"], r["family"], r["variant"]), []).append((r, b))
    cnt = lambda xs: " / ".join(str(sum(x == o for x in xs)) for o in ("do not publish", "inconclusive", "publish"))  # noqa: E731
    out += ["| kind | family | variant | without a population: withheld / inconclusive / published | with one |",
            "|---|---|---|---|---|"]
    for key, ps in sorted(groups.items()):
        out.append(f"| {' | '.join(key)} | {cnt([b['outcome'] for _, b in ps])} | {cnt([r['outcome'] for r, _ in ps])} |")
    diff = [(r, b) for r, b in same if r["outcome"] != b["outcome"]]
    out += ["", f"Outcomes that differ: {len(diff)} of {len(same)}"
            + (": " + "; ".join(f"`{r['id']}` {b['outcome']} -> {r['outcome']} (with a population, exceeded: "
                               f"{', '.join(c['id'] for c in r['checks'] if c.get('status') == 'exceeded') or 'none'}"
                               f"; not decided: {', '.join(_undecided_ids(r)) or 'none'})"
                               for r, b in diff) if diff else "") + ".", ""]
    return out


def _drop_rmia(rows: list[dict]) -> list[str]:
    """The design question: would the verdict decide otherwise without RMIA's checks (InfoRMIA's kept)?"""
    ok = [r for r in rows if stored_checks(r) is not None and attack_state(r, "rmia")]
    if not ok:
        return ["No audit of this section has RMIA's checks recorded.", ""]
    fams = sorted({len(r["checks"]) for r in ok})
    # re-judging at the audit's own family must give back its own outcome (the approximation's sanity check)
    same_back = sum(decide_default(stored_checks(r)) == r["outcome"] for r in ok)
    out = [f"Would dropping RMIA from the verdict (keeping it reported) change an outcome? RMIA's two checks joined a "
           f"family of {'/'.join(map(str, fams))} checks in these audits. Each audit's recorded checks, less "
           "RMIA's, decided again by `leakaudit.audit.result.verdict.decide` under the default policy (no audit rerun; "
           f"the recorded checks give back the audits' own outcomes in {same_back} of {len(ok)}), two ways: (a) the "
           "other checks as the audit decided them; (b) the other checks judged at the confidence of the smaller "
           "family (Bonferroni over two checks fewer): DTP-1 from its recorded p-value, exactly; the checks with an "
           "interval from the interval rescaled by the normal approximation (an approximation: their intervals are "
           "bootstrap or Clopper-Pearson ones).", "",
           "| way | outcomes that change | cases |", "|---|---|---|"]
    for name, rejudge in (("(a) others as decided", False), ("(b) others re-judged at the smaller family", True)):
        ch = [(r, outcome_without(r, rejudge=rejudge)) for r in ok]
        ch = [(r, o) for r, o in ch if o != r["outcome"]]
        out.append(f"| {name} | {len(ch)} of {len(ok)} | "
                   + ("; ".join(f"`{r['id']}` ({r['kind']}): {r['outcome']} -> {o}" for r, o in ch) or "none")
                   + " |")
    moved: dict[tuple, int] = {}  # (check id, status as decided, re-judged) -> audits
    for r in ok:
        checks = stored_checks(r)
        kept = [c for c in checks if _attack_of(c.id) != "rmia"]
        for c in kept:
            n = rejudged(c, len(checks), len(kept))
            if n.status != c.status:
                moved[(c.id, c.status, n.status)] = moved.get((c.id, c.status, n.status), 0) + 1
    n_checks = sum(sum(_attack_of(c["id"]) != "rmia" for c in r["checks"]) for r in ok)
    smoke = [r for r in ok if r.get("profile", "smoke") == "smoke"]
    dtp_below = sum(any(c["id"] == "dtp.dtp1" and c.get("status") == "shown below" for c in r["checks"])
                    for r in smoke)
    out += ["", f"In (b), {sum(moved.values())} of the {n_checks} other checks change status"
            + (": " + "; ".join(f"`{cid}` {a} -> {b} in {n}" for (cid, a, b), n in sorted(moved.items()))
               if moved else "") + f". DTP-1 is shown below in {dtp_below} of the {len(smoke)} smoke audits (a "
            "smoke audit's PDTP sample of 100 members cannot bound the members it did not measure), so no smoke audit "
            "here could be published with RMIA or without it: dropping it could move an outcome only between "
            "withheld and inconclusive. The benign audits, at standard, could also move to or from publish."]
    return out + [""]


def decide_default(checks) -> str:
    """The default policy's outcome of ``checks`` (``leakaudit.audit.result.verdict.decide``)."""
    from leakaudit.audit.config import make_config
    from leakaudit.audit.result.verdict import decide

    return decide(make_config(), checks).outcome


def population_section(res: dict, full: dict | None) -> list[str]:
    """The section of ``--set population`` (issue 68: InfoRMIA, which runs only with a population), from its own
    result file; ``full``: the suite's result, for the same cases without a population; ``res["with_rmia"]``: the
    earlier run of the same cases in which the audit ran RMIA too (``calibration_population_rmia.json``)."""
    c = res.get("code", {}).get("commit") or "?"
    head = f"With a population: InfoRMIA (commit {c}, {_when(res)[:10]})"
    rows = [r for r in res["rows"] if r["outcome"] != "error"]
    ben = {fv: sum(r["kind"] == "benign" and (r["family"], r["variant"]) == fv for r in rows)
           for fv in K.POPULATION_BENIGN}
    ben = {fv: n for fv, n in ben.items() if n}
    out = run_section(res, head)
    out.insert(out.index(f"## {head}") + 2,
               "Issue 68's cases, run apart from the suite above (`--set population`, stored in "
               "`benchmarks/results/calibration_population.json`): null, leaky and benign models of the suite on "
               "Adult, drawn from the table without its duplicate rows, each audit handed a population file "
               f"(`population`, `--population`) of {K.POPULATION_FACTOR} times its members, records disjoint from "
               "the members, the non-members and the null target's own training records, drawn by the case's seed "
               "after them. With a population the audit runs InfoRMIA, whose AUC and TPR at the low FPR join the "
               "verdict's family of checks (Bonferroni-corrected over all of them); it ran RMIA too until the run "
               "with both (below) showed why it should not. Benign audits (profile standard, 5,000 members, "
               "population 10,000): "
               + (", ".join(f"{f} {v} {n}" for (f, v), n in ben.items()) if ben else "none were run")
               + "; the seeds not run were not run for time. The audits' own CPU time (each audit's process, summed "
               f"over the rows of every invocation): {sum(r.get('audit_cpu_seconds') or 0 for r in rows) / 60:.1f} "
               "min.\n")
    rows_b = [r for r in rows if r["kind"] != "benign" or r.get("loss_auc_contains_half")]
    out += ["### The membership checks: false alarms and power", "",
            "How often each membership check is exceeded (its interval above its threshold at the corrected "
            "confidence), per kind of case: on null cases every exceedance is a false alarm; on leaky ones it is "
            "the power. InfoRMIA's checks first, the other attacks' to compare.", ""]
    out += _population_check_table(rows_b)
    out += ["Per case group:", ""] + _population_group_table(rows_b) + _flat_aucs(rows)
    out += ["### The same cases without a population", ""] + _without_population(rows, full)
    _note_too_few_null(res, head, out)
    earlier = res.get("with_rmia")
    if earlier is not None:
        out += _with_rmia_section(earlier)
    return out + ["Cases of this section:", ""] + case_list(rows)


def _flat_aucs(rows: list[dict]) -> list[str]:
    out = []
    for att in POPULATION_ATTACKS:  # an AUC without variance: leakaudit's DeLong interval falls back to [0, 1]
        flat = [r["id"] for r in rows for c in r["checks"] if c["id"] == f"membership.{att}.auc"
                and c.get("interval") and list(c["interval"]) == [0.0, 1.0]]
        if flat:
            out += [f"`membership.{att}.auc` was measured with the interval [0, 1] (an AUC whose DeLong variance is "
                    "0, as when every score is tied; the interval then falls back to the exact disjoint-pairs one) "
                    f"in {len(flat)} audit{'s' if len(flat) > 1 else ''}: " + ", ".join(f"`{x}`" for x in flat)
                    + ". Such a check is undecided, so it keeps a model from \"publish\".", ""]
    return out


def _with_rmia_section(res: dict) -> list[str]:
    """The earlier run of the population cases, in which the audit ran RMIA beside InfoRMIA: why it no longer
    does."""
    rows = [r for r in res["rows"] if r["outcome"] != "error"]
    rows_b = [r for r in rows if r["kind"] != "benign" or r.get("loss_auc_contains_half")]
    c = res.get("code", {}).get("commit") or "?"
    n = {k: sum(r["kind"] == k for r in rows) for k in K.KINDS}
    out = [f"### Before: RMIA and InfoRMIA both in the verdict (commit {c}, {_when(res)[:10]})", "",
           f"The same cases ({n['null']} null, {n['positive']} leaky, {n['benign']} benign; stored in "
           "`benchmarks/results/calibration_population_rmia.json`) audited when the audit ran RMIA (online, γ = 2) "
           "beside InfoRMIA, each with its two checks in the family. Outcomes: "
           + "; ".join(f"{k} {o}: {_rate_cell(_outcome_block([r for r in rows if r['kind'] == k])[o.replace(' ', '_')])}"
                       for k, o in (("null", "do not publish"), ("positive", "do not publish"),
                                    ("benign", "publish")) if n[k]) + ".", ""]
    out += _population_check_table(rows_b) + _flat_aucs(rows)
    out += ["Do RMIA and InfoRMIA decide alike? InfoRMIA ranks a target's records by RMIA's own ratio p(x|θ)/p(x) "
            "(`leakaudit.membership.informia`); RMIA's score, the share of population records z with LR(x, z) "
            "above γ, ranks them the same way but with ties, so the two can differ only where those ties matter.", ""]
    out += _agreement(rows_b)
    out += ["Dropping RMIA from the verdict, computed from these audits' recorded checks:", ""] + _drop_rmia(rows)
    return out


def measured_by(rows: list[dict]) -> list[str]:
    """Which leakaudit sources measured which rows (a run kept with ``--keep-earlier-code`` mixes them), and the
    median audit CPU seconds of each group of cases under each."""
    codes: dict[str, list[dict]] = {}
    for r in rows:
        codes.setdefault(r.get("code_fingerprint") or "?", []).append(r)
    out = ["Which code measured which rows (each row keeps the fingerprint of the leakaudit sources that measured it "
           "and the commit; rows of other sources were kept, not rerun, with `--keep-earlier-code`). Audit CPU "
           "seconds are the audit process's own, median [range] per group:", "",
           "| source fingerprint (commits) | rows | group: audits, median audit CPU s [range] |", "|---|---|---|"]
    for fp, rs in sorted(codes.items(), key=lambda kv: min(r.get("finished", "") for r in kv[1])):
        commits = ", ".join(f"`{c}`" for c in sorted({r.get("commit") or "?" for r in rs}))
        groups: dict[str, list[float]] = {}
        for r in rs:
            groups.setdefault(f"{r['kind']} {r['family']} {r['variant']}", []).append(r.get("audit_cpu_seconds"))
        cells = []
        for g, xs in sorted(groups.items()):
            c = sorted(x for x in xs if x is not None)
            cells.append(f"{g}: {len(xs)}" + (f", {_median(c):.0f} [{c[0]:.0f}, {c[-1]:.0f}]" if c else ""))
        out.append(f"| `{fp}` ({commits}) | {len(rs)} | {'; '.join(cells)} |")
    return out + [""]


def write_doc(path: Path, latest: dict | None, before: dict | None, previous: dict | None = None,
              profiles: dict | None = None, boosted: dict | None = None, population: dict | None = None) -> Path:
    cmd = "python benchmarks/calibration.py"
    out = ["# Calibration: how often the verdict is wrong", "",
           "<!-- generated by benchmarks/calibration.py; edit the script, not this file -->", "",
           "leakaudit's verdict is a decision: \"publish\", \"do not publish\" or \"inconclusive\". Under the default "
           "policy its burden of proof is \"safety shown\": every check is decided \"above\" its threshold, "
           "\"below\" it (its interval's upper end lies below the threshold) or \"undecided\" (the interval reaches "
           "the threshold, or the check could not be measured); a model is published only when every check that "
           "can show safety is shown below, withheld when a check describing the model is shown above, and "
           "otherwise the verdict is \"inconclusive\" (`docs/verdict.md`). This page measures how often the verdict "
           "is wrong on models whose truth is known, by construction:", "",
           "- **null cases**: the audited model was trained on records disjoint from both the members and the "
           "non-members handed to the audit (all three drawn from one table). Nothing can leak about the audited "
           "\"members\", so every \"do not publish\" is a false alarm (\"inconclusive\" is not: a null audit with "
           "too few records to show safety honestly says so);",
           "- **leaky (positive) cases**: the model was trained on the members and memorises them: a fifth of their "
           "labels flipped, duplicated canaries with flipped labels, and (issue 47) realistic leaks without any label "
           "flipped: fully grown random forests and decision trees, a 1-nearest-neighbour rule, a net over-trained on "
           "few records. Every verdict but \"do not publish\" misses a real leak;",
           "- **benign cases**: regularised models trained on at least 5,000 members and audited against 5,000 "
           "non-members at `profile=\"standard\"`, which should be published. A benign audit counts only if its "
           "loss attack's AUC interval contains 0.5 (a model whose loss separates members from non-members is not "
           "known to be benign); every verdict but \"publish\" is a miss.", "",
           f"Targets: null withheld at most {_pct(NULL_MAX_RATE)}, with the upper end of its 95 % Clopper-Pearson "
           f"interval at most {_pct(NULL_MAX_UPPER)}; leaky withheld at least {_pct(POSITIVE_MIN_RATE)}; benign "
           f"published at least {_pct(BENIGN_MIN_RATE)}. Null and leaky audits run with `profile=\"smoke\"` (8 "
           "reference models, PDTP of 100 members, 4 noise-floor models, 200 bootstrap resamples), the fastest "
           "profile: a verdict that is calibrated there is the weakest case. Since the burden of proof, a smoke "
           "audit's random PDTP sample bounds the members it did not measure, so a smoke audit of 1,000 members "
           "cannot show DTP-1 below its threshold and cannot publish: that is why benign models are audited at "
           "\"standard\" (64 reference models, PDTP of every member up to 4,000 and a screen beyond). Each rate is "
           "also given under the old rule, \"leakage shown\", recomputed from the same audits' checks. Intervals "
           "are exact (Clopper-Pearson, `leakaudit.metrics.clopper_pearson`); `k/n` counts audits.", "",
           f"Regenerate with `{cmd}` (add `--jobs 2` for two worker processes; `--quick` runs each family once, "
           "`make calibrate` runs the full suite; `--max-minutes M` starts no audit after M minutes and reports "
           "the audits run as a partial run). A killed run resumes where it stopped: each finished audit is "
           "appended to `benchmarks/results/calibration.jsonl` with the commit and a fingerprint of the leakaudit "
           "sources it ran, and a rerun with the same sources skips it. Audits run round-robin over the case "
           "groups, so a run stopped early has measured every group. The script writes "
           "`benchmarks/results/calibration.json` (every audit's row: case, outcome, every check with its status "
           "and decision, the outcome under leakage shown, the target's accuracies, each attack's AUC, PDTP, "
           "seconds; and the aggregates) and this page.", ""]
    rows = (latest or before or {}).get("rows", [])
    if rows:
        out += ["## Cases", ""] + case_list(rows)
        out += ["Families: " + "; ".join(f"**{k}**: {v}" for k, v in K.FAMILIES.items()) + ".", "",
                "Datasets: " + "; ".join(f"**{k}**: {v}" for k, v in K.DATASETS.items()) + ". The records of each "
                "case are drawn by its seed (the TorchMLP null case on Adult uses the demo's own draw: members, "
                "non-members and population by the audit seed; its target is trained on further Adult records, "
                "disjoint from all three, so the population stays what RMIA assumes it is). The issue-47 cases "
                "(the five null families on Adult and Census-Income, the leaky models without flipped labels, the "
                "benign models) draw from the table with its exact duplicate rows (features and label) removed "
                "(Adult's long columns repeat 6,374 rows, Census-Income 74,271), so that a null model never "
                "trained on a copy of an audited record. "
                + ("No case of this suite gives a population file, so in its run RMIA ran only in the TorchMLP null "
                   "case on Adult; the cases of the section \"With a population\" below give one, and calibrate "
                   "RMIA and InfoRMIA. " if population is not None else
                   "No case gives a population file, so RMIA runs only in the TorchMLP null case on Adult. ")
                + "The null sizes of the scikit-learn families that are retrained as "
                "clones (gradient boosting, SVC) were reduced for time: every reference and leave-one-out model "
                "retrains them.", ""]
    same = latest is not None and before is not None and latest.get("created") == before.get("created")
    if latest is not None and not same:
        c = latest.get("code", {}).get("commit") or "?"
        out += run_section(latest, f"Latest run (commit {c}, {_when(latest)[:10]})")
        if previous is not None:
            out += comparison(latest, previous)
    if boosted is not None:
        out += boosted_section(boosted)
    if population is not None:
        out += population_section(population, latest)
    if profiles is not None:
        out += profile_section(profiles)
    if before is not None:
        c = before.get("code", {}).get("commit") or "?"
        head = f"Before the calibrated verdict (commit {c}, {_when(before)[:10]})"
        out += run_section(before, head)
        out.insert(out.index(f"## {head}") + 2,
                   "The verdict before it was calibrated: \"publish\" or \"do not publish\" only, no "
                   "\"inconclusive\", no burden of proof, and DTP-1 exceeded by any one member's PDTP above its "
                   "threshold. It is kept to show what the calibration changed: "
                   f"{before['aggregates']['null']['overall']['counts']['do not publish']} of "
                   f"{before['aggregates']['null']['overall']['n']} null cases were withheld then. Its rows have no "
                   "check decisions, so no outcome under \"leakage shown\" is recomputed for them, and it had no "
                   "benign cases.\n" + ("This is also the latest run.\n" if same else ""))
    out += _unlearning_section()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out).rstrip() + "\n")
    return path


def _unlearning_section() -> list[str]:
    """The unlearning check's calibration (benchmarks/unlearning_calibration.py's stored results), or nothing."""
    import unlearning_calibration

    files = sorted(RESULTS.glob("unlearning_calibration*.json"))
    if not files:
        return []
    return ["", *unlearning_calibration.calibration_section([json.loads(f.read_text()) for f in files])]


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


#: what the JSON keeps of each check (the JSONL log keeps them whole: name, sentence and confidence too)
CHECK_FIELDS = ("id", "analysis", "status", "value", "interval", "threshold", "describes", "shows", "p_value")


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
    if set_ == "tiny-new":
        return K.tiny_new_cases()
    if set_ == "boosted":
        return K.boosted_cases(args.boosted_null_seeds or args.boosted_seeds, args.boosted_seeds,
                               args.boosted_benign_seeds)
    if set_ == "lightgbm-bins":
        return K.lightgbm_bins_cases(args.boosted_benign_seeds or 5)
    if set_ == "population":
        return K.population_cases(n_null_seeds=args.population_null_seeds,
                                  n_benign_seeds=args.population_benign_seeds)
    return K.cases(n_null_seeds=args.null_seeds, n_positive_seeds=args.positive_seeds,
                   n_new_null_seeds=args.new_null_seeds, n_leaky_seeds=args.leaky_seeds,
                   n_benign_seeds=args.benign_seeds)


def _set_result(out: Path, set_: str, name: str) -> dict | None:
    """The stored result of ``--set name`` (boosted, population; its aggregates recomputed from its rows), for the
    full suite's page."""
    p = out / f"calibration_{name}.json"
    if not p.exists() or set_ != "full":
        return None
    res = json.loads(p.read_text())
    res["aggregates"] = aggregate(res["rows"])
    why = out / f"calibration_{name}_dtp.json"  # boosted_dtp_records.py: why benign audits were not published
    if why.exists():
        res["dtp_records"] = json.loads(why.read_text())
    remedy = out / "calibration_lightgbm-bins.json"
    if name == "boosted" and remedy.exists():
        res["bins_remedy"] = json.loads(remedy.read_text())
        res["bins_remedy"]["family_rows"] = [r for r in res["rows"] if r["kind"] == "benign"
                                             and (r["family"], r["variant"]) == ("lightgbm", "regularised")]
    return res


def _population_result(out: Path, set_: str) -> dict | None:
    """``--set population``'s stored result, with the earlier run in which the audit ran RMIA too under
    ``"with_rmia"`` (for the section's "before")."""
    res = _set_result(out, set_, "population")
    if res is not None:
        res["with_rmia"] = _set_result(out, set_, "population_rmia")
    return res


def _profiles(out: Path, set_: str) -> dict | None:
    """benchmarks/profile_claims.py's summary, for the full suite's page."""
    p = out / "profile_claims.json"
    return json.loads(p.read_text()) if p.exists() and set_ == "full" else None


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="every family and variant once (--set quick)")
    ap.add_argument("--set", choices=("full", "quick", "small", "tiny-new", "boosted", "lightgbm-bins", "population"),
                    default=None,
                    help="which cases: full (default), quick, small (the default test's three), tiny-new (one "
                         "small case of each issue-47 kind, the default test's), boosted (issue 67's XGBoost, "
                         "LightGBM and CatBoost cases, shown in docs/calibration.md's own section), lightgbm-bins (the "
                         "benign LightGBM recipe with min_data_in_bin 50, apart from the bar; shown in the boosted "
                         "section), population (issue 68's cases with a population file, so that RMIA and InfoRMIA "
                         "run; their own section too)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="folder of the JSON and JSONL files (benchmarks/results)")
    ap.add_argument("--doc", type=Path, default=None,
                    help="markdown written (full: docs/calibration.md; otherwise <out>/calibration_<set>.md)")
    ap.add_argument("--jobs", type=int, default=1, help="audits run at once, each in its own process (default 1)")
    ap.add_argument("--null-seeds", type=int, default=16, help="seeds per null family and dataset (default 16)")
    ap.add_argument("--positive-seeds", type=int, default=4, help="seeds per positive variant and dataset (default 4)")
    ap.add_argument("--new-null-seeds", type=int, default=NEW_NULL_SEEDS,
                    help=f"seeds per issue-47 null family and dataset (default {NEW_NULL_SEEDS})")
    ap.add_argument("--leaky-seeds", type=int, default=LEAKY_SEEDS,
                    help=f"seeds per leaky variant without flipped labels and dataset (default {LEAKY_SEEDS})")
    ap.add_argument("--benign-seeds", type=int, default=BENIGN_SEEDS,
                    help=f"seeds per benign family (default {BENIGN_SEEDS}; profile standard, minutes each)")
    ap.add_argument("--boosted-seeds", type=int, default=5,
                    help="--set boosted: seeds per library of its null and of its leaky cases (default 5)")
    ap.add_argument("--boosted-null-seeds", type=int, default=None,
                    help="--set boosted: seeds per library of its null cases (default: --boosted-seeds)")
    ap.add_argument("--boosted-benign-seeds", type=int, default=0,
                    help="--set boosted: seeds per library of its benign cases (default 0; profile standard)")
    ap.add_argument("--population-benign-seeds", type=int, default=0,
                    help="--set population: seeds per benign family (default 0; profile standard)")
    ap.add_argument("--population-null-seeds", type=int, default=5,
                    help="--set population: seeds per null family (default 5; 8 give the 40 null audits the 10 %% "
                         "bar needs)")
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="start no audit after this many minutes (--jobs 1); the result is marked partial")
    ap.add_argument("--only", default=None, help="run only the case ids containing this text")
    ap.add_argument("--fresh", action="store_true", help="ignore (and set aside) the rows of an earlier run")
    ap.add_argument("--keep-earlier-code", action="store_true",
                    help="keep the rows measured with other leakaudit sources instead of rerunning them (each row "
                         "keeps its own fingerprint and commit; --set boosted's section says which code measured "
                         "which rows)")
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
    previous_path = out / PREVIOUS
    if a.report_only:
        latest = json.loads(json_path.read_text()) if json_path.exists() else None
        before = json.loads(before_path.read_text()) if before_path.exists() and set_ == "full" else None
        previous = json.loads(previous_path.read_text()) if previous_path.exists() and set_ == "full" else None
        for res in (latest, before, previous):  # aggregates recomputed from the rows: the page follows this code
            if res is not None:
                res["aggregates"] = aggregate(res["rows"])
        path = write_doc(doc, latest, before, previous, _profiles(out, set_), _set_result(out, set_, "boosted"),
                         _population_result(out, set_))
        print(f"wrote {path}")
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
            if r.get("code_fingerprint") == code["fingerprint"] or a.keep_earlier_code:
                kept[r["id"]] = r
            else:
                stale += 1
    todo = run_order(cases, set(kept))
    print(f"calibration ({set_}): {len(cases)} audits, {len(kept)} already done"
          + (f", {stale} earlier rows measured with other leakaudit sources (rerun)" if stale else "")
          + f"; {len(todo)} to run, {a.jobs} at a time; {os.cpu_count()} cores; leakaudit from "
            f"{code['leakaudit_path']} ({code.get('commit')}{', dirty' if code.get('dirty') else ''})", flush=True)
    work = out / f"calibration{suffix}_work"
    t0, c0 = time.perf_counter(), _cpu_seconds()
    mach = machine()
    not_started = run_cases(todo, log, work, jobs=a.jobs, keep=a.keep, max_minutes=a.max_minutes,
                            stamp={"code_fingerprint": code["fingerprint"], "commit": code.get("commit")})
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    mach["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    try:
        work.rmdir()
    except OSError:
        pass
    # the latest row of each selected id measured with these sources (errors included, so they are reported)
    latest_rows: dict[str, dict] = {}
    for r in _read_log(log):
        if r.get("id") in ids and (r.get("code_fingerprint") == code["fingerprint"] or a.keep_earlier_code):
            if r["outcome"] != "error" or r["id"] not in latest_rows or latest_rows[r["id"]]["outcome"] == "error":
                latest_rows[r["id"]] = r
    order = {c.id: i for i, c in enumerate(cases)}
    rows = sorted(latest_rows.values(), key=lambda r: order[r["id"]])
    argv_s = " ".join(shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    res = {"suite": "leakaudit calibration", "set": set_,
           "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "command": f"python benchmarks/calibration.py {argv_s}".strip(), "machine": mach, "code": code,
           "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "resumed": bool(kept),
           "n_planned": len(cases), "not_started": not_started, **({"note": a.note} if a.note else {}),
           "audit_seconds_total": round(sum(r.get("audit_seconds") or 0 for r in rows), 1),
           "case_seconds_total": round(sum(r.get("case_seconds") or 0 for r in rows), 1),
           "aggregates": aggregate(rows), "rows": rows}
    write_json(json_path, res)
    if a.as_before:
        write_json(before_path, res)
    before = json.loads(before_path.read_text()) if before_path.exists() and set_ == "full" else None
    previous = json.loads(previous_path.read_text()) if previous_path.exists() and set_ == "full" else None
    for r in (before, previous):
        if r is not None:
            r["aggregates"] = aggregate(r["rows"])
    doc_path = write_doc(doc, res, before, previous, _profiles(out, set_), _set_result(out, set_, "boosted"),
                         _population_result(out, set_))
    for burden in BURDENS:
        t = res["aggregates"]["targets"][burden]
        for kind in ("null", "positive", "benign"):
            print(f"{burden}: {kind}: {_rate_cell(t[kind])}; target "
                  f"{'met' if t[kind]['met'] else 'NOT met'} ({t[kind]['what']})")
    print(f"wrote {json_path}, {log} and {doc_path} ({wall / 60:.1f} min)")
    return res


if __name__ == "__main__":
    main()
