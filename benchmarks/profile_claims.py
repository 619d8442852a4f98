"""A profile never changes what a check claims (issue 47), measured on the calibration cases at every profile.

The same case (model, members, non-members, seed) is audited at profiles ``smoke``, ``standard`` and ``thorough``.
A profile buys precision with time: a faster one may leave a verdict inconclusive where a fuller one decides it, but
it must never decide otherwise. Counted per case:

* **contradiction**: one profile says "publish" where another says "do not publish" (the claim changed with the
  profile; the issue's bar is that this never happens);
* **decided at a fuller profile only**: inconclusive at a faster profile, decided at a fuller one (expected);
* **decided at a faster profile only**: decided at a faster profile, inconclusive at a fuller one (allowed, said);
* **same**: one outcome at every profile.

Cases (``--set``, ``--seeds``): ``breast`` (every null family and leaky variant of the suite on the breast-cancer
table, 150 or 200 members, so that ``thorough``'s 256 reference models and 10 PDTP repeats per member stay within
seconds), ``new`` (the issue-47 null families and leaky models on Adult and Census-Income), ``benign`` (the
regularised models on 5,000 members and 5,000 non-members, the only cases a profile can publish: a smoke audit's
PDTP sample cannot show DTP-1 below its threshold) or ``quick`` (the calibration's quick set). Several sets and
seeds share one log; the summary covers every case measured with the same leakaudit sources, by any command.
Rows are appended to
``benchmarks/results/profile_claims.jsonl`` as they finish (a killed run resumes; ``--fresh`` starts over); the
summary goes to ``benchmarks/results/profile_claims.json`` and its table to stdout and
``benchmarks/results/profile_claims.md``.

Usage:
    .venv/bin/python benchmarks/profile_claims.py                      # breast cancer, smoke / standard / thorough
    .venv/bin/python benchmarks/profile_claims.py --profiles smoke standard --set quick
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _calibration_cases as K  # noqa: E402
import calibration as C  # noqa: E402

PROFILES = ("smoke", "standard", "thorough")
DECIDED = ("publish", "do not publish")


def cases(set_: str, profiles, n_seeds: int = 1) -> list[K.Case]:
    """The set's cases at each profile: ``breast`` with ``n_seeds`` seeds of each null family (0, 1, ...) and
    leaky variant (100, 101, ...); ``new`` the issue-47 null families and leaky models on Adult and Census-Income
    (their calibration sizes and seeds); ``benign`` the regularised models on 5,000 members; ``quick`` the
    calibration's quick set."""
    if set_ == "breast":
        base = ([K._null(f, v, "breast_cancer", s) for f, v in K.NULL_FAMILIES for s in range(n_seeds)]
                + [K._pos(f, v, "breast_cancer", 100 + s, **kw) for f, v, kw in K.POSITIVE_FAMILIES
                   for s in range(n_seeds)])
    elif set_ == "new":
        base = K.new_null_cases(n_seeds) + K.leaky_cases(n_seeds)
    elif set_ == "benign":
        base = K.benign_cases(n_seeds)
    else:
        base = K.quick_cases()
    return [dataclasses.replace(c, profile=p, id="") for c in base for p in profiles]


def case_key(row: dict) -> str:
    """The case without its profile."""
    return f"{row['kind']}-{row['family']}-{row['variant']}-{row['dataset']}-m{row['n_members']}-s{row['seed']}"


def judge(outcomes: dict[str, str], profiles) -> str:
    """How the outcomes of one case (profile -> outcome) relate, profiles in order from fastest to fullest."""
    seen = [outcomes[p] for p in profiles if p in outcomes]
    decided = {o for o in seen if o in DECIDED}
    if len(decided) > 1:
        return "contradiction"
    if len(set(seen)) == 1:
        return "same"
    first = next(i for i, o in enumerate(seen) if o in DECIDED)
    if any(o not in DECIDED for o in seen[first:]):
        return "decided at a faster profile only"
    return "decided at a fuller profile only"


def summarise(rows: list[dict], profiles) -> dict:
    by_case: dict[str, dict] = {}
    for r in rows:
        by_case.setdefault(case_key(r), {"kind": r["kind"], "outcomes": {}, "seconds": {}})
        by_case[case_key(r)]["outcomes"][r["profile"]] = r["outcome"]
        by_case[case_key(r)]["seconds"][r["profile"]] = r.get("case_seconds")
    complete = {k: v for k, v in by_case.items() if all(p in v["outcomes"] for p in profiles)}
    for v in complete.values():
        v["relation"] = judge(v["outcomes"], profiles)
    counts: dict[str, int] = {}
    for v in complete.values():
        counts[v["relation"]] = counts.get(v["relation"], 0) + 1
    return {"profiles": list(profiles), "n_cases": len(complete), "n_incomplete": len(by_case) - len(complete),
            "relations": counts, "cases": complete}


def table(summary: dict) -> list[str]:
    ps = summary["profiles"]
    out = ["| case | kind | " + " | ".join(ps) + " | relation |", "|---|---|" + "---|" * len(ps) + "---|"]
    for k, v in sorted(summary["cases"].items()):
        cells = [f"{v['outcomes'][p]} ({v['seconds'][p]:.0f} s)" for p in ps]
        out.append(f"| {k} | {v['kind']} | " + " | ".join(cells) + f" | {v['relation']} |")
    rel = ", ".join(f"{n} {r}" for r, n in sorted(summary["relations"].items())) or "none"
    out += ["", f"{summary['n_cases']} cases at every profile ({rel})"
            + (f"; {summary['n_incomplete']} not at every profile yet" if summary["n_incomplete"] else "") + "."]
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("breast", "new", "benign", "quick"), default="breast")
    ap.add_argument("--seeds", type=int, default=1, help="seeds per family and variant (sets breast, new, benign)")
    ap.add_argument("--profiles", nargs="+", choices=PROFILES, default=list(PROFILES))
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--only", default=None, help="run only the cases whose id contains this text")
    ap.add_argument("--max-minutes", type=float, default=None, help="start no audit after this many minutes")
    ap.add_argument("--fresh", action="store_true", help="set aside the rows of an earlier run")
    a = ap.parse_args(argv)
    profiles = [p for p in PROFILES if p in a.profiles]
    a.out.mkdir(parents=True, exist_ok=True)
    log = a.out / "profile_claims.jsonl"
    if a.fresh and log.exists():
        log.rename(log.with_suffix(f".jsonl.{int(time.time())}.old"))
    code = C.code_identity()
    todo = [c for c in cases(a.set, profiles, a.seeds) if a.only is None or a.only in c.id]
    ids = {c.id for c in todo}
    kept = {r["id"]: r for r in C._read_log(log)
            if r.get("id") in ids and r.get("outcome") != "error" and r.get("code_fingerprint") == code["fingerprint"]}
    run = [c for c in todo if c.id not in kept]
    print(f"profile claims ({a.set}): {len(todo)} audits, {len(kept)} already done, {len(run)} to run; leakaudit "
          f"{code.get('commit')}{', dirty' if code.get('dirty') else ''}", flush=True)
    t0, c0 = time.perf_counter(), C._cpu_seconds()
    mach = C.machine()
    argv_s = " ".join(shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    command = f"python benchmarks/profile_claims.py {argv_s}".strip()
    C.run_cases(run, log, a.out / "profile_claims_work", jobs=1, keep=False, max_minutes=a.max_minutes,
                stamp={"code_fingerprint": code["fingerprint"], "commit": code.get("commit"), "command": command})
    mach["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    # every case measured with these sources, whichever command ran it (the sets add up)
    rows = [r for r in C._read_log(log) if r.get("code_fingerprint") == code["fingerprint"]
            and r.get("outcome") != "error"]
    # (rows from before the stamp named the command were made by the default invocation)
    commands = sorted({r.get("command") or "python benchmarks/profile_claims.py" for r in rows})
    summary = summarise(rows, profiles)
    wall, cpu = time.perf_counter() - t0, C._cpu_seconds() - c0
    # cases an earlier summary holds for these same sources whose log rows are gone (a log is not kept in git)
    earlier = a.out / "profile_claims.json"
    prev = json.loads(earlier.read_text()) if earlier.exists() else {}
    if prev.get("code", {}).get("fingerprint") == code["fingerprint"] and prev.get("profiles") == profiles:
        carried = {k: v for k, v in prev.get("cases", {}).items() if k not in summary["cases"]}
        if carried:
            summary["cases"] = {**carried, **summary["cases"]}
            summary["n_cases"] = len(summary["cases"])
            summary["relations"] = {}
            for v in summary["cases"].values():
                summary["relations"][v["relation"]] = summary["relations"].get(v["relation"], 0) + 1
            commands = sorted(set(commands) | set(prev.get("command", "").split("; ")) - {""})
            wall, cpu = wall + prev.get("wall_seconds", 0.0), cpu + prev.get("cpu_seconds", 0.0)
            code = {**code, "commit": code.get("commit") or prev["code"].get("commit")}
    res = {"created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "command": "; ".join(commands or [command]), "machine": mach, "code": code,
           "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), **summary}
    md = table(summary)
    res["table"] = md
    (a.out / "profile_claims.json").write_text(json.dumps(res, indent=1))
    (a.out / "profile_claims.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return res


if __name__ == "__main__":
    main()
