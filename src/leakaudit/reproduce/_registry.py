"""The registry of paper reproductions behind ``leakaudit reproduce``.

Each paper module (``long.py``, ``yeom.py``, ``chase.py``, ``izzo.py``) registers
named reproductions with :func:`register`. A reproduction is a function
``(profile, random_state) -> list[Row]``; the runner times it and writes
``DIR/NAME.json`` and ``DIR/NAME.md``.

JSON shape: ``{"name", "profile", "seconds", "random_state", "rows": [{"quantity",
"paper", "ours", "tolerance", "status", "note", "values", "seeds", "bound",
"precision"}]}`` where
``status`` is ``match``, ``differs`` or ``no-paper-value``; ``values`` holds the
per-seed (or per-split) values of a randomised row, whose status :func:`gather`
re-derives with the current rule (``_judge.judge_values``), and ``seeds`` the seeds
they came from (both None for a row that is not over seeds).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._names import NameTable
from .._results import write_json_atomic
from ..exceptions import InvalidParameterError
from ._judge import judge_values

__all__ = ["Row", "row", "Reproduction", "register", "get", "names", "run", "rejudge", "PROFILES"]

PROFILES = ("smoke", "reduced", "full")


@dataclass(frozen=True)
class Row:
    """One quantity: the paper's value (None if it gives none) beside ours."""

    quantity: str
    paper: float | None
    ours: float | None
    tolerance: float | None
    status: str
    note: str = ""
    # per-seed (or per-split) values of a randomised row, judged by _judge.judge_values; None otherwise
    values: tuple[float, ...] | None = None
    # the seeds behind ``values`` (None for per-split values or a row that is not over seeds)
    seeds: tuple[int, ...] | None = None
    # "lower" / "upper": the paper states a bound ("above 90%", "none found") rather than a value
    bound: str | None = None
    # the precision of a reference that is not a printed number (read off a plot, or derived from printed
    # numbers); it replaces the printed rounding in the match rule (_judge.judge_values)
    precision: float | None = None


def row(quantity: str, paper: float | None, ours: float | None, tolerance: float | None = None, note: str = "", *,
        bound: str | None = None, precision: float | None = None) -> Row:
    """Build a :class:`Row`, deciding its status.

    ``match`` when ``|ours - paper| <= tolerance``; ``differs`` otherwise (or
    when ours is missing/NaN); ``no-paper-value`` when the paper gives none.
    ``bound`` ("lower" / "upper"): the paper's value is a bound, and a match
    means ours is on its side, within the tolerance. ``precision``: the precision
    of a reference that is not a printed number, used when the row is merged over
    seeds (``_seeds.merge_seed_rows``).
    """
    ours_f = None if ours is None else float(ours)
    paper_f = None if paper is None else float(paper)
    if paper_f is None:
        status = "no-paper-value"
    elif ours_f is None or math.isnan(ours_f):
        status = "differs"
    else:
        tol = (0.0 if tolerance is None else tolerance) + 1e-12
        gap = {None: abs(ours_f - paper_f), "lower": paper_f - ours_f, "upper": ours_f - paper_f}[bound]
        status = "match" if gap <= tol else "differs"
    return Row(quantity, paper_f, ours_f, None if tolerance is None else float(tolerance), status, note, bound=bound,
               precision=None if precision is None else float(precision))


@dataclass(frozen=True)
class Reproduction:
    name: str
    paper: str
    description: str
    func: Callable[[str, int], list[Row]] = field(repr=False)
    notes: str = ""
    # False for a reproduction with no randomness (closed forms, exact enumeration): its seed is not used
    randomised: bool = True


_REGISTRY: NameTable[Reproduction] = NameTable("reproduction")


def register(name: str, *, paper: str, description: str, notes: str = "", randomised: bool = True):
    """Decorator registering ``func(profile, random_state) -> list[Row]`` under ``name``.

    ``randomised=False`` marks a reproduction none of whose rows depends on the seed (its page says so
    instead of naming a seed)."""

    def deco(func):
        _REGISTRY.add(name, Reproduction(name, paper, description, func, notes, randomised))
        return func

    return deco


def names() -> list[str]:
    return sorted(_REGISTRY.names())


def get(name: str) -> Reproduction:
    return _REGISTRY.get(name)


def _fmt(v: float | None, missing: str = "—") -> str:
    """A table cell; ``missing`` for None (the paper gives no value; our value not measured is "not measured")."""
    if v is None:
        return missing
    if isinstance(v, float) and math.isnan(v):
        return "not measured"
    return f"{v:.4g}"


def _seeds_text(result: dict) -> str:
    """The seeds a run used, from its rows: "seeds 0-4 (...)" when rows are over seeds, the number of splits when
    randomised rows are over a protocol's random splits instead (their values carry no seeds), "no randomness" for
    a reproduction registered with ``randomised=False``, else "seed N"."""
    seeds = sorted({int(s) for r in result["rows"] for s in (r.get("seeds") or ())})
    if not seeds and not get(result["name"]).randomised:
        return "no randomness (no row depends on the seed)"
    n_splits = {len(r["values"]) for r in result["rows"] if r.get("values") is not None and not r.get("seeds")}
    if not seeds and n_splits:
        n = "/".join(str(k) for k in sorted(n_splits))
        return (f"randomised rows over the protocol's {n} random splits (mean over the splits, 95% t-interval in "
                f"the note), seed {result['random_state']} for any other draw")
    if not seeds:
        return f"seed {result['random_state']}"
    span = f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))
    return f"seeds {span} (randomised rows: mean over the seeds, 95% t-interval in the note)"


def to_markdown(result: dict) -> str:
    rep = get(result["name"])
    lines = [
        f"## {result['name']} ({rep.paper})",
        "",
        rep.description,
        "",
        f"Profile `{result['profile']}`, {_seeds_text(result)}, {result['seconds']:.1f} s. "
        f"Command: `leakaudit reproduce {result['name']} --profile {result['profile']} --out DIR`"
        + (". Not rerun since the interval rule: its per-seed values were read back from the notes (4 significant "
           "digits) and judged by the rule." if result.get("values_from_notes") else ""),
        "",
        "| quantity | paper | ours | tolerance | status | note |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['quantity']} | {_fmt(r['paper'])} | {_fmt(r['ours'], 'not measured')} | {_fmt(r['tolerance'])} | "
            f"{r['status']} | {r['note']} |"
        )
    if rep.notes:
        lines += ["", rep.notes]
    return "\n".join(lines) + "\n"


def run(name: str, *, profile: str = "smoke", out: str | Path = "reproductions", random_state: int = 0) -> dict:
    """Run one reproduction and write ``out/NAME.json`` and ``out/NAME.md``."""
    if profile not in PROFILES:
        raise InvalidParameterError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")
    rep = get(name)
    t0 = time.perf_counter()
    rows = rep.func(profile, random_state)
    seconds = time.perf_counter() - t0
    result = {
        "name": name,
        "profile": profile,
        "seconds": seconds,
        "random_state": random_state,
        "rows": [asdict(r) for r in rows],
    }
    out = Path(out)
    write_json_atomic(out / f"{name}.json", result)
    md = to_markdown(result)
    tmp = out / f".{name}.md.tmp"
    tmp.write_text(md)
    tmp.replace(out / f"{name}.md")
    return result


def rejudge(result: dict) -> int:
    """Re-derive the status of every row of ``result`` that carries its per-seed values, with the current rule
    (``_judge.judge_values``), in place; returns how many rows changed status."""
    changed = 0
    for r in result["rows"]:
        if r.get("values") is None:
            continue
        status = judge_values(r["paper"], r["values"], r.get("bound"), r.get("precision"))[0]
        changed += status != r["status"]
        r["status"] = status
    return changed


def gather(folder: str | Path, *, title: str = "Reproductions") -> str:
    """One Markdown page from every ``NAME.json`` in ``folder`` (the latest run of each)."""
    import json

    folder = Path(folder)
    parts = [
        f"# {title}",
        "",
        "Each section is one `leakaudit reproduce NAME` run; the command that made it is under its heading. "
        "`paper` is the paper's number (— where it gives none), `ours` our measurement, and the note says "
        "where and why we differ (a substitute dataset, a paper typo, a reduced profile).",
        "",
        ("How a row is judged. A randomised row over seeds (or over a protocol's splits) reports the mean, every "
        "seed's value and the 95% Student-t interval of the mean; it matches only when the paper's value lies in "
        "that interval, widened by nothing but the rounding of the paper's printed number (half a unit in its last "
        "digit, the row's `tolerance`, or, for a value read off a plot or derived from printed numbers, the "
        "precision stated in its note; when every seed gives the same value the interval is that value, so it "
        "matches within rounding). Where the paper's value lies outside the interval but within the allowance "
        "stated for its kind of quantity (an accuracy, an average PDTP), the note says so; the status stays "
        "'differs'. Where the paper states a bound ('above 90%', 'recall > 0.99'), the row matches when our "
        "mean reaches it. A row that is not over seeds (a closed form, a deterministic procedure, or a reproduction "
        "still run on one seed, whose heading says 'seed N'; 'no randomness' where no row depends on the seed) "
        "matches when |ours - paper| is at most its tolerance."),
        "",
    ]
    files = sorted(folder.glob("*.json"))
    counts = {"match": 0, "differs": 0, "no-paper-value": 0}
    randomised = {"match": 0, "differs": 0}
    for f in files:
        res = json.loads(f.read_text())
        if res.get("name") not in _REGISTRY.names():
            continue
        rejudge(res)
        for r in res["rows"]:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
            if r.get("values") is not None:  # a randomised row, judged on its interval (or bound)
                randomised[r["status"]] = randomised.get(r["status"], 0) + 1
        parts.append(to_markdown(res))
    parts.insert(6, f"Totals: {counts['match']} rows match, {counts['differs']} differ, "
                    f"{counts['no-paper-value']} have no paper value. Of the rows with a paper value, "
                    f"{randomised['match']} matches and {randomised['differs']} differences are randomised rows "
                    f"judged on their interval or bound; the rest are single values against a tolerance.\n")
    return "\n".join(parts)
