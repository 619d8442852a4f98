"""The registry of paper reproductions behind ``leakaudit reproduce``.

Each paper module (``long.py``, ``yeom.py``, ``chase.py``, ``izzo.py``) registers
named reproductions with :func:`register`. A reproduction is a function
``(profile, random_state) -> list[Row]``; the runner times it and writes
``DIR/NAME.json`` and ``DIR/NAME.md``.

JSON shape: ``{"name", "profile", "seconds", "random_state", "version", "fingerprint", "rows": [{"quantity",
"paper", "ours", "tolerance", "status", "note", "values", "seeds", "bound",
"precision", "reference", "quantity_kind", "points", "verdict"}], "environment"}`` where
``status`` is one of ``_judge.STATUSES``; ``values`` holds the
per-seed (or per-split) values of a randomised row, whose status :func:`gather`
re-derives with the current rule (``_judge.judge_values``), and ``seeds`` the seeds
they came from (both None for a row that is not over seeds). ``version`` is the reproduction's experiment version
when it ran (``register``'s ``version``): a stored run is current, and ``--all`` keeps it, while its version is the
reproduction's, whatever else changed in the code; ``fingerprint`` is :func:`numbers_digest` of the reproduction's
run at :data:`FINGERPRINT_PROFILE` by the code that made it, which tests/reproduce/test_fingerprints.py recomputes, so a
change that moves a number without bumping the version fails there. ``reference`` and
``quantity_kind`` (``_kinds.REFERENCES``, ``_kinds.ALLOWANCES``) come from the
reproduction's ``references`` table, applied by :func:`classify` when the run is
written and again when it is gathered, with ``verdict``: the sentence the page adds to the note on where the paper's
value lies against a randomised row's interval, judged by the current rule. ``environment`` (:func:`environment`;
absent in runs stored before it was recorded) names what else decides the last digits: the numerical libraries'
versions and the thread counts the run had.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._names import NameTable
from .._results import write_json_atomic
from ..exceptions import InvalidParameterError
from ._judge import BEATS, INCONCLUSIVE, attack_terms, gap_text, judge_values, paper_rounding
from ._kinds import ALLOWANCES, REFERENCES
from ._ledger import claim_rows, row_entry
from ._tally import closing_text, per_paper, per_paper_text, row_marks, section_lines, totals, totals_text
from ._page import page_entry

__all__ = ["FINGERPRINT_PROFILE", "PROFILES", "Reproduction", "Row", "classify", "fingerprint", "get", "names",
           "numbers_digest", "register", "rejudge", "row", "run", "run_all"]

PROFILES = ("smoke", "reduced", "full")
# the profile whose run (seed 0, one thread a pool) fingerprints a reproduction's numbers: seconds, not hours
FINGERPRINT_PROFILE = "smoke"


# A row whose quantity ends so holds the points of a figure (its ``points``), not a value; the page shows their count,
# the stored run's JSON the points
FIGURE_DATA = " (figure data)"


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
    # what the paper value is (a key of _kinds.REFERENCES) and the kind of quantity whose allowance applies (a key of
    # _kinds.ALLOWANCES); set by classify() from the reproduction's references table, never by the row's builder
    reference: str | None = None
    quantity_kind: str | None = None
    # the points a figure draws from the row, by seed: ((seed or None, ((x, y), ...)), ...); None for a row of none
    points: tuple | None = None


def _status(paper: float | None, ours: float | None, tolerance: float | None, bound: str | None,
            favourable: str | None = None) -> str:
    """The status of a single value against the paper's: within ``tolerance`` of it (or on the paper's side of a
    bound), ``beats the paper`` when beyond it in the ``favourable`` direction ("higher" / "lower"), ``differs``
    otherwise or when ours is missing or NaN, ``no-paper-value`` when the paper gives none."""
    if paper is None:
        return "no-paper-value"
    if ours is None or math.isnan(ours):
        return "differs"
    tol = (0.0 if tolerance is None else tolerance) + 1e-12
    gap = {None: abs(ours - paper), "lower": paper - ours, "upper": ours - paper}[bound]
    if gap <= tol:
        return "match"
    return BEATS if bound is None and favourable == ("higher" if ours > paper else "lower") else "differs"


def row(quantity: str, paper: float | None, ours: float | None, tolerance: float | None = None, note: str = "", *,
        bound: str | None = None, precision: float | None = None, points: tuple | None = None) -> Row:
    """Build a :class:`Row`, deciding its status.

    ``match`` when ``|ours - paper| <= tolerance``; ``differs`` otherwise (or
    when ours is missing/NaN); ``no-paper-value`` when the paper gives none.
    ``bound`` ("lower" / "upper"): the paper's value is a bound, and a match
    means ours is on its side, within the tolerance. ``precision``: the precision
    of a reference that is not a printed number, used when the row is merged over
    seeds (``_seeds.merge_seed_rows``). ``points``: what a figure draws from the row (:attr:`Row.points`).
    """
    ours_f = None if ours is None else float(ours)
    paper_f = None if paper is None else float(paper)
    status = _status(paper_f, ours_f, tolerance, bound)
    return Row(quantity, paper_f, ours_f, None if tolerance is None else float(tolerance), status, note, bound=bound,
               precision=None if precision is None else float(precision), points=points)


@dataclass(frozen=True)
class Reproduction:
    name: str
    paper: str
    description: str
    func: Callable[[str, int], list[Row]] = field(repr=False)
    notes: str = ""
    # False for a reproduction with no randomness (closed forms, exact enumeration): its seed is not used
    randomised: bool = True
    # (pattern, reference kind, kind of quantity or None): the first pattern found in a row's quantity classifies it
    references: tuple[tuple[str, str, str | None], ...] = ()
    # the experiment version: bumped by hand with a change meant to move its numbers, which makes its stored run stale
    version: int = 1

    def kinds_of(self, quantity: str) -> tuple[str | None, str | None]:
        """``(reference, quantity kind)`` of a row with a paper value; ``(None, None)`` when no pattern fits."""
        for pattern, reference, kind in self.references:
            if re.search(pattern, quantity):
                return reference, kind
        return None, None


_REGISTRY: NameTable[Reproduction] = NameTable("reproduction")


def register(name: str, *, version: int, paper: str, description: str, notes: str = "", randomised: bool = True,
             references=()):
    """Decorator registering ``func(profile, random_state) -> list[Row]`` under ``name``.

    ``randomised=False`` marks a reproduction none of whose rows depends on the seed (its page says so
    instead of naming a seed). ``references``: ``(pattern, reference, quantity kind)`` entries classifying every row
    that has a paper value (:func:`classify`): the first ``pattern`` found (``re.search``) in the row's quantity
    gives its reference (a key of ``_kinds.REFERENCES``) and the kind of quantity whose allowance applies (a key of
    ``_kinds.ALLOWANCES``, or None for none). ``version``: the experiment version, declared beside the name and bumped
    by hand with a change meant to move the reproduction's numbers (its stored run then goes stale, and ``--all`` runs
    it again); a change that moves them without the bump fails tests/reproduce/test_fingerprints.py."""
    table = []
    for entry in references:
        pattern, reference, kind = (*entry, None) if len(entry) == 2 else entry
        if reference not in REFERENCES:
            raise InvalidParameterError(f"references of {name!r}: reference must be one of "
                                        f"{', '.join(REFERENCES)}; got {reference!r}")
        if kind is not None and kind not in ALLOWANCES:
            raise InvalidParameterError(f"references of {name!r}: quantity kind must be one of "
                                        f"{', '.join(ALLOWANCES)} or None; got {kind!r}")
        re.compile(pattern)
        table.append((pattern, reference, kind))

    def deco(func):
        _REGISTRY.add(name, Reproduction(name, paper, description, func, notes, randomised, tuple(table), version))
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


def _is_current(result: dict) -> bool:
    """Whether ``result`` was made at its reproduction's current experiment version."""
    return result.get("version") == get(result["name"]).version


def _version_text(result: dict) -> str:
    """The heading's sentence on the experiment version that made a run, and whether it is the current one."""
    version, now = result.get("version"), get(result["name"]).version
    if version is None:
        return ("experiment version not recorded (a run stored before versions were; `make reproductions` runs it "
                "again). ")
    if version == now:
        return f"experiment version {version} (current), smoke fingerprint {result.get('fingerprint')}. "
    return f"experiment version {version}, stale (now {now}; `make reproductions` runs it again). "


def _number(v) -> float | None:
    """``v`` to 6 significant digits, None for None or NaN: what a fingerprint compares."""
    return None if v is None or math.isnan(float(v)) else float(f"{float(v):.6g}")


def numbers_digest(name: str, rows: list[dict]) -> str:
    """SHA-256 (first 16 hex digits) of the numbers of reproduction ``name``'s ``rows``: each row's quantity, paper
    value, ours, per-seed values and seeds, bound and precision, and the points a figure draws, to 6 significant
    digits. Notes and running times (a kind of quantity that is not compared) are left out: they hold seconds."""
    rep = get(name)
    items = []
    for r in rows:
        kind = rep.kinds_of(r["quantity"])[1]
        if kind is not None and not ALLOWANCES[kind].compared:
            continue
        items.append([r["quantity"], _number(r["paper"]), _number(r["ours"]),
                      [_number(v) for v in r.get("values") or ()], list(r.get("seeds") or ()), r.get("bound"),
                      _number(r.get("precision")),
                      [[s, [[_number(a), _number(b)] for a, b in pts]] for s, pts in r.get("points") or ()]])
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()[:16]


def fingerprint(name: str) -> str:
    """:func:`numbers_digest` of reproduction ``name``'s run at :data:`FINGERPRINT_PROFILE`, seed 0, one thread in
    each native thread pool (a thread count can move a last digit)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        rows = get(name).func(FINGERPRINT_PROFILE, 0)
    return numbers_digest(name, [asdict(r) for r in rows])


def to_markdown(result: dict, figures: list[tuple[str, str]] = ()) -> str:
    """A run's section of the page; ``figures``: ``(title, link)`` of the figures drawn from it."""
    rep = get(result["name"])
    page = page_entry(result["name"])
    if result["profile"] != page.profile:
        profile_text = f" (the page's profile for it is `{page.profile}`: this run was made before that)"
    elif page.why:
        profile_text = f" (not `full`: {page.why})"
    else:
        profile_text = ""
    lines = [
        f"## {result['name']} ({rep.paper})",
        "",
        rep.description,
        "",
        f"Profile `{result['profile']}`{profile_text}, {_seeds_text(result)}, {result['seconds']:.1f} s, "
        + _version_text(result)
        + _environment_text(result)
        + f"Command: `leakaudit reproduce {result['name']} --profile {result['profile']} --out DIR`",
        "",
        *section_lines(result),
        "| quantity | paper | reference | ours | tolerance | status | note |",
        "|---|---:|---|---:|---:|---|---|",
    ]
    for r in result["rows"]:
        r = {**r, "note": r["note"] + r.get("verdict", "")}
        ref = r.get("reference") or ("—" if r["paper"] is None else "unclassified")
        mark, more = row_marks(result["name"], r)
        if r["quantity"].endswith(FIGURE_DATA):
            by_seed = r.get("points") or ()
            n = sum(len(pts) for _, pts in by_seed)
            r = {**r, "note": f"{n} points over {len(by_seed)} seed{'s' if len(by_seed) != 1 else ''}, drawn in the "
                              f"section's figure; the stored run (JSON) holds them"}
        lines.append(
            f"| {r['quantity']} | {_fmt(r['paper'])} | {ref} | "
            f"{'points' if r['quantity'].endswith(FIGURE_DATA) else _fmt(r['ours'], 'not measured')} | "
            f"{_fmt(r['tolerance'])} | {r['status']}{mark} | {r['note']}{more} |"
        )
    if figures:
        lines += ["", "Figures redrawn from this run's stored values: "
                  + ", ".join(f"[{title}]({link})" for title, link in figures) + "."]
    if rep.notes:
        lines += ["", rep.notes]
    return "\n".join(lines) + "\n"


# the libraries whose versions decide a reproduction's floating-point results (BLAS, solvers, torch's kernels)
_NUMERIC_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "torch")


def cpu_model() -> str | None:
    """The CPU's model name (/proc/cpuinfo; None where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def environment() -> dict:
    """What beside the code and the seed decides a run's last digits, as this process has it: Python, the CPU's model
    (torch and OpenBLAS choose their kernels by its instruction set), the versions of the numerical packages that are
    installed, ``OMP_NUM_THREADS``, the threads of each native thread pool (threadpoolctl: BLAS, OpenMP) and torch's
    intra-op threads once torch is imported. A thread count changes the order of floating-point sums, so a fit near a
    decision boundary can flip a prediction."""
    from importlib.metadata import PackageNotFoundError, version

    from threadpoolctl import threadpool_info

    packages = {}
    for pkg in _NUMERIC_PACKAGES:
        try:
            packages[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    pools: dict[str, int] = {}
    for pool in threadpool_info():
        key = f"{pool['user_api']} ({pool['internal_api']})"
        pools[key] = max(pools.get(key, 0), int(pool["num_threads"]))
    torch = sys.modules.get("torch")
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "packages": packages,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "thread_pools": pools,
        "torch_threads": torch.get_num_threads() if torch is not None else None,
    }


def _environment_text(result: dict) -> str:
    """The heading's sentence on the libraries and threads a run had."""
    env = result.get("environment")
    if env is None:
        return "Libraries and threads not recorded. "
    libs = ", ".join(f"{k} {v}" for k, v in env["packages"].items())
    pools = ", ".join(f"{k} {v}" for k, v in env["thread_pools"].items()) or "none loaded"
    torch = "" if env.get("torch_threads") is None else f", torch {env['torch_threads']}"
    cpu = f", CPU {env['cpu_model']}" if env.get("cpu_model") else ""
    return (f"Python {env['python']}{cpu}, {libs}; threads: OMP_NUM_THREADS={env['OMP_NUM_THREADS'] or 'unset'}, "
            f"{pools}{torch}. ")


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
        "version": rep.version,
        "fingerprint": None,
        "rows": [asdict(r) for r in rows],
        "environment": environment(),
    }
    result["fingerprint"] = (numbers_digest(name, result["rows"]) if (profile, random_state) == (FINGERPRINT_PROFILE, 0)
                             else fingerprint(name))
    classify(result)
    out = Path(out)
    write_json_atomic(out / f"{name}.json", result)
    _write_section(out, result)
    return result


def _write_section(out: Path, result: dict, figures: list[tuple[str, str]] = ()) -> None:
    """``out/NAME.md``: the run's section of the page, written atomically (``figures``: as :func:`to_markdown`)."""
    from .._results import write_text_atomic

    write_text_atomic(out / f"{result['name']}.md", to_markdown(result, figures))


def _current_run(path: Path, profile: str, random_state: int) -> dict | None:
    """The run stored at ``path`` (a ``NAME.json``) if it was made at its reproduction's current experiment version,
    at ``profile`` and ``random_state``; else None (also for a missing or unreadable file)."""
    try:
        res = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    current = (isinstance(res, dict) and res.get("profile") == profile and res.get("random_state") == random_state
               and res.get("name") in _REGISTRY.names() and _is_current(res))
    return res if current else None


def _run_in_worker(name: str, profile: str, out: str, random_state: int) -> dict:
    """:func:`run` in a worker process of :func:`run_all` (the registry is filled there first)."""
    from . import load_all

    load_all()
    return run(name, profile=profile, out=out, random_state=random_state)


def _stored_seconds(path: Path) -> float:
    """The seconds the run stored at ``path`` took, whatever code made it; infinity when there is none (so an
    unmeasured reproduction starts first)."""
    try:
        return float(json.loads(path.read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return math.inf


def run_all(out: str | Path, *, random_state: int = 0, only: list[str] | None = None,
            progress: Callable[[str, str, dict | None], None] | None = None, jobs: int = 1) -> list[str]:
    """Run every reproduction (or those named in ``only``) at its page profile (``_page.PAGE``) into ``out``, keeping
    a stored run made at that profile and seed at the reproduction's current experiment version; returns the names it
    ran (not those it kept).

    An interrupted call loses only the reproductions it was in: the next call keeps the ones already written.
    ``progress(name, profile, result)`` is called before a run with ``result=None`` and after it with the result, or
    once with the stored result for a run it keeps. ``jobs``: how many reproductions run at once, each in its own
    process (default 1: one after the other, here); with more, the longest (by its stored run's seconds) start first,
    so that the last to finish are short. Each run's values do not depend on ``jobs``: a reproduction draws only from
    its own seed.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidParameterError(f"jobs must be a whole number of processes, at least 1; got {jobs!r}")
    out = Path(out)
    todo = names() if only is None else [get(n).name for n in only]
    pending = []
    for name in todo:
        profile = page_entry(name).profile
        stored = _current_run(out / f"{name}.json", profile, random_state)
        if stored is None:
            pending.append((name, profile))
        elif progress is not None:
            progress(name, profile, stored)
    if jobs == 1 or len(pending) <= 1:
        for name, profile in pending:
            if progress is not None:
                progress(name, profile, None)
            result = run(name, profile=profile, out=out, random_state=random_state)
            if progress is not None:
                progress(name, profile, result)
        return [name for name, _ in pending]
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    queue = sorted(pending, key=lambda np_: -_stored_seconds(out / f"{np_[0]}.json"))
    running = {}
    with ProcessPoolExecutor(max_workers=min(jobs, len(queue)), mp_context=mp.get_context("spawn")) as ex:
        try:
            while queue or running:
                while queue and len(running) < jobs:
                    name, profile = queue.pop(0)
                    if progress is not None:
                        progress(name, profile, None)
                    running[ex.submit(_run_in_worker, name, profile, str(out), random_state)] = (name, profile)
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    name, profile = running.pop(fut)
                    result = fut.result()
                    if progress is not None:
                        progress(name, profile, result)
        except BaseException:
            ex.shutdown(wait=False, cancel_futures=True)
            raise
    return [name for name, _ in pending]


def rejudge(result: dict) -> int:
    """Re-derive the status of every row of the stored run ``result`` with the current rules, in place
    (:func:`classify`); returns how many rows changed status."""
    before = [r["status"] for r in result["rows"]]
    classify(result)
    return sum(a != r["status"] for a, r in zip(before, result["rows"]))


def _judge_row(name: str, r: dict, kind: str | None, siblings: dict[str, dict] | None = None) -> None:
    """Judge one classified row of reproduction ``name`` in place: status, tolerance, and ``verdict``, the sentence
    the page adds to its note on where the paper's value lies against a randomised row's interval ("" for none).
    ``siblings``: the rows of the same attack's other metrics, by metric, for a kind judged on a membership attack's
    advantage over a random guess (``_judge.attack_terms``)."""
    _, entry = row_entry(name, r)
    r["verdict"] = ""
    if r["paper"] is None:
        r["status"] = "no-paper-value"
        return
    if entry.dropped:
        r["status"] = "reference dropped"
        return
    a = None if kind is None else ALLOWANCES[kind]
    if a is not None and not a.compared:
        r["status"] = "not-compared"
        return
    allowance = None if a is None else a.of(r["paper"])
    own = paper_rounding(r["paper"]) if r.get("precision") is None else float(r["precision"])
    paper, vals, metric = r["paper"], r.get("values"), _metric_of(r["quantity"])[0]
    if a is not None and a.attacks and metric:
        sib = siblings or {}
        chance_paper, chance_ours, allowance = attack_terms(
            metric, {k: x["paper"] for k, x in sib.items() if x["paper"] is not None},
            {k: x["values"] if x.get("values") is not None else [x["ours"]] for k, x in sib.items()
             if x["ours"] is not None}, a.attacks, a.chance)
        paper = paper - chance_paper
        vals = None if vals is None else list(np.asarray(vals, dtype=float) - chance_ours)
        ours = None if r["ours"] is None else float(np.mean(r["ours"] - chance_ours))
    else:
        ours = r["ours"]
    if vals is None:
        if allowance is not None:
            r["tolerance"] = allowance
        r["status"] = _status(paper, ours, r["tolerance"], r.get("bound"), entry.favourable)
        return
    bound = r.get("bound")
    status, m, lo, hi = judge_values(paper, vals, bound, own, tolerance=None if bound else allowance,
                                     favourable=entry.favourable)
    r["status"] = status
    tol = own if bound or allowance is None else max(own, allowance)
    r["tolerance"] = tol
    if bound or not math.isfinite(lo):
        return
    which = (f"the allowance for {kind}, {a.text()}" if allowance is not None and allowance >= own
             else "the reference's own precision" if r.get("precision") is not None else "the paper's rounding")
    if status in ("differs", BEATS):
        r["verdict"] = gap_text(paper, lo, hi) + f" (tolerance {tol:.3g}: {which})"
    elif status == INCONCLUSIVE:
        r["verdict"] = (f"; the interval reaches past the tolerance {tol:.3g} of the paper's value ({which}), or "
                        "holds the paper's value with the mean past it")
    if a is not None and a.attacks and metric not in (None, "recall"):
        r["verdict"] += (f"; judged on the advantage over chance ({metric} - a random guess's): ours {m:.3g}, interval "
                         f"[{lo:.3g}, {hi:.3g}], the paper's {paper:.3g}")


def _metric_of(quantity: str) -> tuple[str | None, str]:
    """The last attack metric a quantity names ("accuracy", "precision", "recall", "f1"), and the quantity with it
    replaced by ``{}``: the key its attack's other metrics share."""
    found = list(re.finditer(r"\b(accuracy|precision|recall|f1)\b", quantity))
    if not found:
        return None, quantity
    m = found[-1]
    return m[1], quantity[:m.start()] + "{}" + quantity[m.end():]


def classify(result: dict) -> list[str]:
    """Give every row of ``result`` with a paper value its reference and kind of quantity from its reproduction's
    ``references`` table, and judge it with that kind's allowance (``_kinds.ALLOWANCES``), in place.

    A randomised row is judged by ``_judge.judge_values`` with the allowance as its tolerance (the reference's own
    precision where the kind has none, or where the paper states a bound), in the direction the paper argues for
    (``_ledger.ENTRIES``); the sentence ending its note says where the paper's value lies and with what tolerance. A
    single value of a kind with an allowance is judged against it (the row's ``tolerance`` becomes the allowance). A
    row of a kind that is not compared (``Allowance.compared``) gets the status ``not-compared``, one whose reference
    the ledger drops ``reference dropped``. A row of ``_ledger.claim_rows`` keeps the kinds it was made with. Returns
    the quantities of rows with a paper value that no pattern classifies (none, for a complete table).
    """
    rep = get(result["name"])
    missing = []
    for r in result["rows"]:
        if not r.get("claim"):
            reference, kind = (None, None) if r["paper"] is None else rep.kinds_of(r["quantity"])
            override = row_entry(result["name"], r)[1].kind
            r["reference"], r["quantity_kind"] = reference, (override if override and r["paper"] is not None
                                                             else kind)
            if r["paper"] is not None and reference is None:
                missing.append(r["quantity"])
    attacks: dict[str, dict[str, dict]] = {}
    for r in result["rows"]:
        metric, key = _metric_of(r["quantity"])
        if metric and not r.get("claim"):
            attacks.setdefault(key, {})[metric] = r
    for r in result["rows"]:
        _judge_row(result["name"], r, r["quantity_kind"], attacks.get(_metric_of(r["quantity"])[1]))
    return missing


def gather(folder: str | Path, *, title: str = "Reproductions", write_sections: bool = False) -> str:
    """One Markdown page from every ``NAME.json`` in ``folder`` (the latest run of each): each run given the claims
    judged on its stored values (``_ledger.claim_rows``) and classified and judged with the current rules
    (:func:`classify`); at the top, each paper's distinct results by class (``_tally``) and the rows by kind of
    reference; at the foot, the closing note on what is still unexplained. ``write_sections``: also rewrite each
    ``NAME.md`` beside its JSON as it appears on the page, and draw its figures (``_figures``) there; the page links
    them under ``folder``'s name, for a page written beside ``folder``.

    Raises
    ------
    LeakauditError
        ``folder`` is missing or holds no run of a registered reproduction (a page of no section would replace
        the page), or a ``NAME.json`` of a registered name cannot be read as JSON (named).
    """
    from ..exceptions import InvalidInputError, InvalidParameterError

    folder = Path(folder)
    if not folder.is_dir():
        raise InvalidParameterError(f"{folder} is not a folder of reproduction runs (NAME.json files); nothing to "
                                    "gather (--out names the folder the runs were written to)")
    parts = [
        f"# {title}",
        "",
        ("Each section is one `leakaudit reproduce NAME` run; the command that made it is under its heading. "
        "`paper` is the paper's number (— where it gives none), `reference` what that number is (printed in the "
        "paper, read off its plot, derived from printed numbers, a claim of its text, a formula, the spec's re-run), "
        "`ours` our measurement, and the note says where and why we differ (a substitute dataset, a paper typo, a "
        "reduced profile). One command makes this page: `leakaudit reproduce --all --jobs 2 --out docs/reproduction "
        "--gather docs/reproduction.md` (`make reproductions`) runs every reproduction at its page profile over "
        "seeds 0-4 (`full`, the paper's scale, wherever that fits in about an hour on 2 cores; otherwise "
        "`reduced`, and the section's heading says what full would cost), keeping each stored run made at its "
        "reproduction's current experiment version, then gathers them; `--gather` alone rebuilds the page from the "
        "stored runs. A stored run stays current while the numbers it would give are unchanged, not while the text of "
        "its code is: each reproduction declares a version (its heading gives it), bumped by hand with a change meant "
        "to move its numbers, which makes its run stale; and each stored run keeps a fingerprint, the digest of the "
        "numbers of the reproduction's smoke run made by the same code, which a test recomputes, so a change that "
        "moves a number without bumping the version fails the tests instead of leaving a stale section current. The "
        "heading also names the numerical libraries and thread counts the run had: the code and the seed fix every "
        "draw, but a thread count or a library version changes the order of floating-point sums, and a model fitted "
        "near a decision boundary can then flip a prediction, so a rerun elsewhere may differ in the last digits (a "
        "few targets of 100 in an attack's accuracy)."),
        "",
        ("How a row is judged. A randomised row over seeds (or over a protocol's splits) reports the mean, every "
        "seed's value and the 95% Student-t interval of the mean, and is judged against the paper's value with a "
        "tolerance: the allowance of its kind of quantity (the table below; never less than the rounding of the "
        "paper's printed number, or the precision of a value read off a plot or derived from printed numbers), or "
        "that rounding where the kind has none. It matches only when the mean is within the tolerance of the paper's "
        "value **and** the whole interval is too; it 'beats the paper' when the mean is past the tolerance in the "
        "direction the paper argues for (a higher accuracy of the paper's own attack) and the interval leaves the "
        "paper's value out; it differs when the same holds in the other direction; otherwise (an interval wider "
        "than the tolerance allows, or one that still holds the paper's value) it is 'inconclusive: too noisy'. "
        "Where the paper states a bound ('above 90%', 'recall > 0.99') the whole interval must be on its side; a "
        "'none found' must hold in every seed. A stated claim is judged like any other value (1 = holds), and a "
        "failing one differs. A row that is not over seeds (a closed form, a deterministic procedure; 'no "
        "randomness' in its heading where no row depends on the seed) matches when |ours - paper| is at most its "
        "tolerance. A reference the spec marks unusable is dropped ('reference dropped'), and a row on data that "
        "stands in for the paper's is reported beside the paper's value and never counted as a match."),
        "",
    ]
    from ._figures import draw_figures, figures_of, not_drawn_text

    results = []
    for f in sorted(folder.glob("*.json")):
        try:
            res = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            if f.stem not in _REGISTRY.names():
                continue  # not a run of ours
            raise InvalidInputError(f"reproduction run {f} cannot be read ({type(exc).__name__}); run "
                                    f"`leakaudit reproduce {f.stem}` again or remove the file") from None
        if not isinstance(res, dict) or res.get("name") not in _REGISTRY.names():
            continue
        results.append(res)
    runs = {res["name"]: res for res in results}
    for res in results:  # a claim may read another section's stored values
        res["rows"] += claim_rows(res, runs)
        classify(res)
    if not results:
        raise InvalidInputError(f"{folder} holds no run of a reproduction (NAME.json for a name of `leakaudit "
                                "reproduce --list`); nothing to gather, and the page was left as it was")
    books = per_paper(results, {res["name"]: get(res["name"]).paper for res in results})
    parts += [per_paper_text(books), totals_text(totals(results))]
    stale = [res["name"] for res in results if not _is_current(res)]
    parts += [
        (f"Made at the current experiment version: {len(results) - len(stale)} of {len(results)} sections (each "
         "section's heading gives its version and smoke fingerprint)"
         + (f"; stale (made at an earlier version), to be run again: {', '.join(stale)}." if stale else ", so every "
            "section gives the numbers this version of the code gives.")),
        "",
    ]
    for res in results:
        figures = figures_of(res)
        if write_sections:
            draw_figures(res, folder)
            _write_section(folder, res, [(title, file) for title, file in figures])
        parts.append(to_markdown(res, [(title, f"{folder.name}/{file}") for title, file in figures]))
    parts += [closing_text(books), not_drawn_text()]
    return "\n".join(parts)
