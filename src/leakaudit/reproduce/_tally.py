"""The counts at the top and the foot of docs/reproduction.md: rows by kind of reference, each paper's distinct
results by class (``_ledger``), and the differences still unexplained.

Bookkeeping only: it reads judged rows and computes none of a reproduction's values.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

from ._judge import BEATS, INCONCLUSIVE, STATUSES, interval
from ._kinds import ALLOWANCES, PAPER_REFERENCES, REFERENCES
from ._ledger import CLASSES, EXPLAINED, MISSING, NOT_AT_SCALE, SUBSTITUTES, TRIED, paper_of, row_entry
from ._page import page_entry

__all__ = ["JUDGED", "closing_text", "per_paper", "per_paper_text", "row_marks", "section_lines",
           "totals", "totals_text"]

# the statuses of a row judged against a reference
JUDGED = ("match", BEATS, INCONCLUSIVE, "differs")


# rows counted apart from their kind of reference in the rows' table: (key, label), in the table's order
APART = (("substitute", "against the paper, on substitute data (never a match of the paper)"),
         ("variant", "against the paper, variant (another setting than the paper's)"),
         ("calibrated", "against the paper, calibrated (a setting chosen to hit the paper's number)"))


def _apart(name: str, r: dict) -> str | None:
    """The key of :data:`APART` a judged row is counted under, None for a row at the paper's setting and data."""
    entry = row_entry(name, r)[1]
    return next((key for key, _ in APART if getattr(entry, key)), None)


def totals(results: list[dict]) -> dict:
    """Counts over the rows of ``results`` (classified runs): ``status`` (every status of ``_judge.STATUSES``),
    ``randomised`` (the judged statuses among rows over seeds or splits) and ``by_reference`` (reference kind, or
    "unclassified", or for a row compared with the paper on substitute data, at another setting or at a calibrated
    one the key of :data:`APART`, -> judged status -> rows)."""
    status = {s: 0 for s in STATUSES}
    randomised = {s: 0 for s in JUDGED}
    by_reference: dict[str, dict[str, int]] = {k: {s: 0 for s in JUDGED} for k in (*REFERENCES, *dict(APART))}
    for res in results:
        for r in res["rows"]:
            status[r["status"]] += 1
            if r["status"] not in JUDGED:
                continue
            if r.get("values") is not None:  # a randomised row, judged on its interval (or bound)
                randomised[r["status"]] += 1
            ref = r.get("reference") or "unclassified"
            ref = (_apart(res["name"], r) or ref) if ref in PAPER_REFERENCES else ref
            by_reference.setdefault(ref, {s: 0 for s in JUDGED})[r["status"]] += 1
    return {"status": status, "randomised": randomised, "by_reference": by_reference}


def _count_row(label: str, counts: dict[str, int]) -> str:
    """A line of the rows' table: ``label``, the rows of each judged status and their sum."""
    return f"| {label} | " + " | ".join(str(counts[x]) for x in JUDGED) + f" | {sum(counts.values())} |"


def totals_text(t: dict) -> str:
    """The rows' totals: one sentence, a table by kind of reference, the kinds and the allowances."""
    s, rnd, by = t["status"], t["randomised"], t["by_reference"]
    lines = [
        (f"Rows (a paper number compared in several rows counts in each here; the table above counts it once): "
         f"{s['match']} match, {s[BEATS]} beat the paper, {s[INCONCLUSIVE]} are inconclusive (too noisy), "
         f"{s['differs']} differ, {s['no-paper-value']} have no paper value, {s['not-compared']} are reported beside "
         f"the paper's value and not compared (running times), {s['reference dropped']} have a reference the spec "
         f"marks unusable. Of the judged rows, {sum(rnd.values())} are randomised rows judged on their interval or "
         "bound; the rest are single values against a tolerance. By what the paper value is (the `reference` column "
         "of every table; the kinds are defined below), with the rows compared with the paper on substitute data, at "
         f"another setting than the paper's or at a setting chosen to hit its number counted apart (of the {s['match']} "
         f"matches, {sum(by[k]['match'] for k, _ in APART)} are such rows):"),
        "",
        f"| reference | {' | '.join(JUDGED)} | rows |",
        "|---|" + "---:|" * (len(JUDGED) + 1),
    ]
    groups = (("against the paper, at its setting on its data", [k for k in by if k in PAPER_REFERENCES]),
              ("against a computation", [k for k in by if k in REFERENCES and k not in PAPER_REFERENCES]))
    for label, kinds in groups:
        lines += [_count_row(k, by[k]) for k in kinds]
        sums = [sum(by[k][x] for k in kinds) for x in JUDGED]
        lines.append(f"| **{label}** ({', '.join(kinds)}) | " + " | ".join(f"**{n}**" for n in sums)
                     + f" | **{sum(sums)}** |")
    lines += [_count_row(label, by[k]) for k, label in APART]
    if "unclassified" in by:
        lines.append(_count_row("unclassified (no kind in its reproduction's table)", by["unclassified"]))
    dash = " | ".join("—" for _ in JUDGED)
    for label, key in (("not compared (a kind reported beside the paper's value)", "not-compared"),
                       ("reference dropped (the spec marks it unusable)", "reference dropped"),
                       ("no paper value", "no-paper-value")):
        lines.append(f"| {label} | {dash} | {s[key]} |")
    lines += ["", "What the `reference` column says the paper value is:", ""]
    lines += [f"- **{k}**: {v}." for k, v in REFERENCES.items()]
    lines += [
        "",
        ("Allowances, one per kind of quantity: the tolerance a row of that kind is judged with (never less than the "
         "rounding of its reference). A kind without one keeps the rounding of its reference (the row's "
         "`tolerance`); a bound the paper states is judged with that rounding alone."),
        "",
        "| kind of quantity | allowance | why |",
        "|---|---|---|",
    ]
    lines += [f"| {k} | {a.text()} | {a.why} |" for k, a in ALLOWANCES.items()]
    return "\n".join(lines) + "\n"


def _missing_value(r: dict) -> bool:
    return r["ours"] is None or (isinstance(r["ours"], float) and math.isnan(r["ours"]))


# the statuses by which a setting's interval rules the paper's value out
_RULED_OUT = ("differs", BEATS)


def _combined(statuses) -> str:
    """One status from the rows that compare one number at one setting: a difference in any decides."""
    return next((s for s in ("differs", INCONCLUSIVE, BEATS) if s in statuses), "match")


def _setting(name: str, r: dict, entry) -> str | None:
    """The setting a row measures at: None for the paper's (as the page reads it); for a variant its section and
    its quantity up to its last ': ' (the numbers measured together at one setting), or its whole quantity."""
    if not entry.variant:
        return None
    return f"{name}: {entry.setting or r['quantity'].rsplit(': ', 1)[0]}"


def _paper_row(result: str, entry) -> str:
    """The paper's numbers one setting gives together that a result is one of: its entry's ``row``, the row of the
    paper's table ("Table 2: LR-Adult"), or the result itself."""
    m = re.match(r"(Table \w+: [\w-]+) ", result)
    return entry.row or (m[1] if m else result)


def _settings(results: dict[str, list]) -> list[tuple[str | None, dict[str, str]]]:
    """The settings at which the results of one paper row were measured, nearest first: ``(setting, {result:
    status})``, None for the paper's setting. Another setting competes when it measures every number the paper's
    setting measures and rules out none that the paper's setting reproduces; the nearest rules out the fewest of
    them (an interval that differs from the paper's value or beats it), then reproduces the most, the paper's
    setting first on a tie."""
    by: dict[str | None, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for result, rows in results.items():
        for name, r, entry in rows:
            if not entry.substitute:
                by[_setting(name, r, entry)][result].append(r["status"])
    judged = {s: {res: _combined(st) for res, st in v.items()} for s, v in by.items()}
    own = judged.get(None, {})
    judged = {s: j for s, j in judged.items() if set(own) <= set(j)
              and not any(own[res] == "match" and j[res] in _RULED_OUT for res in own)}
    return sorted(judged.items(), key=lambda x: (sum(v in _RULED_OUT for v in x[1].values()),
                                                 -sum(v == "match" for v in x[1].values()), x[0] is not None,
                                                 x[0] or ""))


def _class(rows: list[tuple[str, dict, object]], result: str, nearest, reduced: set[str]) -> str:
    """The class of one paper result from its rows ``(section, row, entry)``: the rows at the paper's setting decide
    it (all rows where none is); a difference is explained when ``nearest``, the nearest setting of its paper row
    (:func:`_settings`), is another setting whose interval does not rule the paper's value out, or, where the paper's
    setting is the nearest, by a check of ``EXPLAINED``; else it is not tested at the paper's scale when every row deciding it is from a section run below
    full (``reduced``), and unexplained otherwise."""
    own = [x for x in rows if not x[2].substitute]
    if not own:
        return "on substitute data"
    primary = [x for x in own if not x[2].variant] or own
    if all(_missing_value(r) for _, r, _ in primary):
        return "missing"
    status = _combined({r["status"] for _, r, _ in primary})
    if status == "differs":
        setting, judged = nearest
        if judged.get(result) in ("match", INCONCLUSIVE) if setting is not None else result in EXPLAINED:
            return "differs, explained"
        if all(name in reduced for name, _, _ in primary):
            return NOT_AT_SCALE
        return "differs, unexplained"
    if status != "match":
        return status
    return "calibrated" if all(e.calibrated for _, _, e in primary) else "reproduced"


def per_paper(results: list[dict], papers: dict[str, str]) -> dict:
    """Each paper's distinct results by class: ``{paper: {"results": {result: (class, rows)}, "settings": {paper
    row: settings nearest first}, "missing": [...], "dropped": n, "computation": {status: rows}}}``, over rows
    compared with the paper itself (``PAPER_REFERENCES``); rows compared with a computation are counted by status,
    as rows. ``papers``: each reproduction's ``paper`` text, by name. Each counted row gets its result's ``class``
    and, where its difference is explained, the ``explanation``."""
    out: dict[str, dict] = defaultdict(lambda: {"results": {}, "settings": {}, "missing": [], "dropped": 0,
                                                "computation": {s: 0 for s in JUDGED}})
    grouped: dict[str, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(dict))
    for res in results:
        paper = paper_of(papers[res["name"]])
        book = out[paper]
        for r in res["rows"]:
            if r["status"] == "reference dropped":
                book["dropped"] += 1
            if r["status"] not in JUDGED:
                continue
            if r.get("reference") not in PAPER_REFERENCES:
                book["computation"][r["status"]] += 1
                continue
            result, entry = row_entry(res["name"], r)
            grouped[paper][_paper_row(result, entry)].setdefault(result, []).append((res["name"], r, entry))
    reduced = {res["name"] for res in results if res.get("profile") != "full"}
    for paper, table in grouped.items():
        for key, results_of_row in table.items():
            settings = _settings(results_of_row)
            nearest = settings[0] if settings else (None, {})
            out[paper]["settings"][key] = settings
            for result, rows in results_of_row.items():
                cls = _class(rows, result, nearest, reduced)
                out[paper]["results"][result] = (cls, rows)
                why = _explanation(result, nearest, rows) if cls == "differs, explained" else None
                for _, r, _ in rows:
                    r["class"], r["explanation"] = cls, why
    for paper, missing in MISSING.items():
        out[paper]["missing"] = list(missing)
    return dict(out)


def _explanation(result: str, nearest, rows) -> str:
    """Why a difference is explained: the nearest setting of its paper row and its interval there, then the text
    of ``EXPLAINED``."""
    setting, judged = nearest
    parts = []
    if setting is not None and judged.get(result) in ("match", INCONCLUSIVE):
        r = next(r for name, r, e in rows if _setting(name, r, e) == setting)
        lo, hi = (f"{x:.3g}" for x in interval(r["values"])[1:]) if r.get("values") else ("", "")
        parts.append(f"the setting '{setting}', the nearest of its paper row's (the settings' line below), gives "
                     f"{r['ours']:.4g}" + (f" [{lo}, {hi}]" if lo else "") + f" against the paper's {r['paper']:.4g}")
    if result in EXPLAINED:
        parts.append(EXPLAINED[result])
    return "; ".join(parts)


def _counts(book: dict) -> dict[str, int]:
    counts = {c: 0 for c in CLASSES}
    for cls, _ in book["results"].values():
        counts[cls] += 1
    counts["missing"] += len(book["missing"])
    return counts


def per_paper_text(books: dict) -> str:
    """The page's first table: per paper, its distinct results by class, and its checks against a computation."""
    head = ["paper", "results stated", *CLASSES, "references dropped", "checks against a computation (rows: "
            + " / ".join(JUDGED) + ")"]
    lines = [
        ("Per paper, over the **distinct** results it states (a number compared in several rows counts once; a row "
         "at another setting than the paper's, marked 'variant', does not decide it when a row at the paper's "
         "setting exists). 'Reproduced': our interval lies within the tolerance of the paper's value; 'calibrated': so "
         "does it, but at a setting chosen to hit that value (a learner's regularisation or training length chosen "
         "on the paper's accuracies), so the agreement is by construction; 'beats the "
         "paper': past it in the direction the paper argues for; 'inconclusive: too noisy': the seeds cannot tell; "
         "'differs, explained': the paper's setting as we read it rules the number out, and the setting nearest the "
         "paper's row (of those measuring every number of it, and ruling out none that the paper's setting "
         "reproduces: the one whose intervals rule out the fewest of its numbers, then reproduce the most) does not, "
         "or, where the paper's setting is the nearest, a check of the page explains the gap (the closing note lists "
         "each, and each row's settings); 'differs, not tested at the paper's scale': every row deciding it ran "
         "below the paper's scale (the section's heading says what full would cost); 'on substitute data': every row of it ran on data standing in for the paper's "
         "(reported beside the paper, never counted as a match); 'missing': no row reproduces it (the closing note "
         "says why). Rows compared with a formula, the spec's re-run or our own check are counted apart, as rows."),
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for paper in sorted(books):
        book = books[paper]
        c = _counts(book)
        comp = " / ".join(str(book["computation"][s]) for s in JUDGED)
        lines.append(f"| {paper} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in CLASSES)
                     + f" | {book['dropped']} | {comp} |")
    return "\n".join(lines) + "\n"


def _where(rows) -> str:
    parts = []
    for name, r, entry in rows:
        if entry.substitute or entry.variant:
            continue
        paper = f"{r['paper']:.4g}" + ({"lower": " (a lower bound)", "upper": " (an upper bound)"}
                                      .get(r.get("bound") or "", ""))
        ours = "not measured" if _missing_value(r) else f"{r['ours']:.4g}"
        parts.append(f"{name} '{r['quantity']}': ours {ours} against {paper}")
    return "; ".join(parts)


def _settings_text(key: str, settings) -> str:
    """The headline of a paper row measured at several settings: each, nearest first, with the numbers its
    intervals rule out and those they reproduce (the rule of :func:`_settings`, which also decides the classes)."""
    def names(judged, statuses):
        return ", ".join(res[len(key) + 1:] if res.startswith(key + " ") else res
                         for res, st in judged.items() if st in statuses) or "none"

    parts = [f"{setting or 'the paper setting as the page reads it'} rules out {names(j, _RULED_OUT)} and reproduces "
             f"{names(j, ('match',))}" for setting, j in settings]
    return (f"- Settings of {key}, nearest first (each on the {len(settings[0][1])} numbers it measures; the "
            f"nearest explains the differences its intervals do not rule out): " + "; ".join(parts) + ".")


def closing_text(books: dict) -> str:
    """The closing note: every difference still unexplained, every explained one with its explanation, every one
    not tested at the paper's scale, every inconclusive result and every missing one, and the settings of each paper
    row measured at several, per paper."""
    lines = ["## Closing note: what is still unexplained", ""]
    labels = (("differs, unexplained", "Differs, unexplained"), ("differs, explained", "Differs, explained"),
              (NOT_AT_SCALE, "Differs, not tested at the paper's scale"), (INCONCLUSIVE, "Inconclusive (too noisy)"))
    for paper in sorted(books):
        book = books[paper]
        by_class: dict[str, list] = defaultdict(list)
        for result, (cls, rows) in sorted(book["results"].items()):
            by_class[cls].append((result, rows))
        rows_at_settings = [(k, v) for k, v in sorted(book["settings"].items()) if len(v) > 1 and len(v[0][1]) > 1]
        if not any(by_class.get(k) for k, _ in labels) and not book["missing"] and not rows_at_settings:
            continue
        lines += [f"**{paper}.**", ""]
        for cls, label in labels:
            for result, rows in by_class.get(cls, ()):
                scale = sorted({name for name, _, e in rows if not e.variant and not e.substitute})
                why = (f" Explained: {rows[0][1]['explanation']}." if cls == "differs, explained"
                       else "".join(f" {n} ran at its reduced profile: {page_entry(n).why}." for n in scale)
                       if cls == NOT_AT_SCALE else "")
                if result in TRIED and cls != "differs, explained":
                    why += f" Tried, without explaining it: {TRIED[result]}."
                lines.append(f"- {label}: {result} ({_where(rows)}).{why}")
        for result, why in book["missing"]:
            lines.append(f"- Missing: {result} ({why}).")
        lines += [_settings_text(k, v) for k, v in rows_at_settings]
        lines.append("")
    return "\n".join(lines)


def row_marks(name: str, r: dict) -> tuple[str, str]:
    """What a section's table adds to a row: a mark after its status (substitute data, a variant, ...) and a
    sentence after its note (the paper result it counts for, where that is not the row itself; its explanation)."""
    result, entry = row_entry(name, r)
    if r["paper"] is None:
        return "", ""
    marks = []
    if entry.substitute:
        marks.append("on substitute data, not counted")
    if entry.variant:
        marks.append("variant")
    if entry.calibrated:
        marks.append("calibrated")
    sentences = [f"Calibrated, not reproduced: {entry.calibrated}."] if entry.calibrated else []
    if entry.dropped:
        sentences.append(f"Reference dropped: {entry.dropped}.")
    elif result != f"{name}: {r['quantity']}":
        sentences.append(f"Counts for the paper's result '{result}'.")
    if r["status"] == "differs" and r.get("explanation"):
        sentences.append(f"Explained: {r['explanation']}.")
    note = r["note"].rstrip()
    lead = "" if not note else " " if note.endswith(".") else ". "
    return (f" ({'; '.join(marks)})" if marks else ""), (lead + " ".join(sentences) if sentences else "")


def section_lines(result: dict) -> list[str]:
    """Paragraphs a section adds under its heading: what each substitute data set its rows ran on can and cannot
    show."""
    subs = []
    for r in result["rows"]:
        sub = row_entry(result["name"], r)[1].substitute
        if sub and sub not in subs:
            subs.append(sub)
    out = []
    for key in subs:
        s = SUBSTITUTES[key]
        out += [f"Substitute data: {s.what}. It can show {s.can}; it cannot show {s.cannot}. Rows on it are "
                "reported beside the paper's values and never counted as matches of the paper.", ""]
    return out
