"""Render ``report.html`` from an audit's typed result (results.json's data, read into
:class:`~leakaudit.audit.result.results.AuditResult`) and ``records.csv``.

The report reads results only; it never trains or attacks. One
self-contained file: inline CSS and SVG plots, no scripts, no external fonts.

Every number reaches the page through :func:`fmt` (or one of its siblings), which writes "not measured" for a
missing value (``null`` in strict JSON, NaN in older files), so no ``None`` or ``nan`` is ever shown; every
setting is shown as plain text, never as a Python dict. Each section opens with one sentence that answers its
question against a baseline, then shows the evidence.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from .._results import BELOW, EXCEEDED, STATUS_COLOURS, STATUSES, UNDECIDED, escape_controls, record_names
from ..metrics import WIDE_INTERVAL, wide_interval_reason
from .plots import (as_number, as_svg, display_name, measured_members, pdtp_histogram_of, pdtp_scatter_of, roc_of,
                    scored_attacks, strongest_attack)

if TYPE_CHECKING:  # the audit imports the report to write report.html: the report names its types only
    from ..audit.result.checks import Check
    from ..audit.result.results import AuditResult
    from ..audit.result.sections import (DatasetInferenceSection, DtpSection, DtpTest, ExtractionSection,
                                         LeakedWindowsSection, MipSection, UnitSection)

__all__ = ["as_number", "check_row", "display_name", "fmt", "render_report"]

_PROFILE_NOTES = {
    "smoke": "fastest, least power: few reference models and PDTP on a sample; for testing only",
    "standard": "the default trade of time for power",
    "thorough": "most power: more reference models, PDTP averaged over repeats",
}
MISSING = "not measured"


#: config keys that only describe the bundled demo (its data set and network): shown only in the demo's report
_DEMO_ONLY = ("dataset", "n_members", "n_nonmembers", "hidden", "activation", "epochs")
#: config keys of a language-model audit only
_TEXT_ONLY = ("dataset_inference", "extraction", "extraction_prefix", "extraction_suffix", "extraction_n",
              "extraction_p", "extraction_temperature", "extraction_top_k")
#: config keys of a tabular audit only (retraining, PDTP, class labels): not shown in a language model's report
_TABULAR_ONLY = ("model_input", "backend", "address", "cache_dir", "dtp_rule", "removal", "claimed_epsilon", "label",
                 "sensitive", "population", "model", "module", "predictions_train", "predictions_test")
#: the thresholds of the checks a language model's audit makes (its attacks' AUC and TPR at a low FPR)
_TEXT_THRESHOLDS = ("low_fpr", "max_tpr_at_low_fpr", "max_auc", "max_extraction_rate_difference")
#: config keys shown elsewhere in the report, or internal
_CONFIG_SHOWN_ELSEWHERE = ("thresholds", "profile", "training", "module_kwargs")
_AUC_METHODS = {"delong-logit": "DeLong's variance on the logit scale", "delong": "DeLong's variance",
                "exact": "an exact interval (small sizes)"}
#: the report's line for a result rendered without its records (records.csv's rows)
_NO_RECORDS = {"name": "records.csv", "reason": "missing, so what only it holds is not shown: the ROC curves, the "
               "PDTP plots and the riskiest records", "fix": "put the audit's records.csv beside results.json and "
               "render the report again (leakaudit report DIR)"}
#: how many of the riskiest members the records table lists (records behind the verdict come on top)
TOP_N = 15


def fmt(v, spec: str = ".3f", *, missing: str = MISSING) -> str:
    """A number as text with ``spec`` ("%" for a percentage with one decimal, "%2" with two, "%g" with as many as
    it has); ``missing`` for None / NaN / infinity."""
    x = as_number(v)
    if x is None:
        return missing
    if spec == "%":
        return f"{x * 100:.1f}%"
    if spec == "%2":
        return f"{x * 100:.2f}%"
    if spec == "%g":
        return f"{x * 100:g}%"
    return format(x, spec)


def _score(v) -> str:
    """An attack score: two decimals, or three significant digits when it is huge or tiny."""
    x = as_number(v)
    return fmt(x, ".2f" if x is not None and (x == 0 or 0.01 <= abs(x) < 1e4) else ".3g")


def _big(v) -> str:
    """74,352 rather than 7.435e+04; four significant digits below 1,000."""
    x = as_number(v)
    return fmt(x, ",.0f" if x is not None and abs(x) >= 1000 else ".4g")


def _capital(s: str) -> str:
    return s[:1].upper() + s[1:]


def fmt_interval(iv, spec: str = ".3f") -> str:
    """``[low, high]``; a one-sided interval (no upper end: a lower confidence bound) as "at least low"."""
    if not iv or len(iv) != 2 or as_number(iv[0]) is None:
        return MISSING
    return f"at least {fmt(iv[0], spec)}" if as_number(iv[1]) is None else f"[{fmt(iv[0], spec)}, {fmt(iv[1], spec)}]"


def _plain(v) -> str:
    """A setting as text: no None, no Python dict or list syntax."""
    if v is None:
        return "not set"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, dict):
        return ", ".join(f"{k} = {_plain(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple)):
        return ", ".join(_plain(x) for x in v) or "none"
    return str(v)


def _cell(v) -> str:
    """A records.csv value for the records table (empty for a missing one)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)) or v is pd.NA:
        return ""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v)


def _int(v) -> str:
    x = as_number(v)
    return "" if x is None else str(int(x))


# -- checks -------------------------------------------------------------------------------------------------------


def check_row(c: Check, conf_pct: str, flags: bool = False) -> dict:
    """One row of the checks table: a status and a reading whose words agree with the numbers, each number
    formatted as the check's sentence gives it (a rate as a percentage, DTP-1 in nats to two decimals)."""
    spec = "%2" if c.id.endswith("tpr_at_low_fpr") else (".2f" if c.analysis == "dtp" else ".3f")
    tspec = "%g" if spec == "%2" else "g"
    value, iv, thr, status = as_number(c.value), c.interval, as_number(c.threshold), c.status
    lo, hi = (as_number(iv[0]), as_number(iv[1])) if iv else (None, None)
    reading, judged = c.sentence, lo is not None and hi is not None and thr is not None
    if judged and status in (BELOW, EXCEEDED):
        reading = (f"{'within' if status == BELOW else 'above'} the threshold: {fmt(value, spec)} measured; its "
                   f"{conf_pct} interval {fmt_interval(iv, spec)} lies {'below' if status == BELOW else 'above'} "
                   f"{fmt(thr, tspec)}")
    elif judged and status == UNDECIDED and c.shows == "both" and hi - lo < WIDE_INTERVAL:  # whole range: see sentence
        reading = (f"not shown above the threshold nor below it: {fmt(value, spec)} measured; its {conf_pct} "
                   f"interval {fmt_interval(iv, spec)} reaches {fmt(thr, tspec)}, so leakage up to "
                   f"{fmt(hi, spec)} is not ruled out (more records would narrow the interval)")
    if status == UNDECIDED and c.shows == "leakage only":
        reading += " (a lower bound: it cannot show safety)"
    return {"name": c.name or c.id, "status": status, "css": status.replace(" ", "-"), "value": fmt(value, spec),
            "interval": fmt_interval(iv, spec) if iv else "none", "threshold": fmt(thr, tspec), "reading": reading,
            "fix": c.said("fix", flags=flags), "recipe": c.describes == "recipe"}


# -- records ------------------------------------------------------------------------------------------------------


def _verdict_records(results: AuditResult) -> dict[str, str]:
    """Members that the verdict rests on, by name, with why: the DTP-1 check's significant records (or, under Long
    et al.'s raw rule, every record above the threshold)."""
    dtp = results.dtp
    out = dict.fromkeys(dtp.records_above if dtp and dtp.rule == "long" else [], "DTP-1 (Long et al.'s raw rule)")
    test = dtp and dtp.test
    pairs = zip(map(as_number, test.lower_bound), test.records) if test else []
    clearest = [r for _, r in sorted(pairs, key=lambda t: np.inf if t[0] is None else -t[0])]
    sig = set(dtp and dtp.records_significant or [])
    return {**out, **dict.fromkeys([r for r in clearest if r in sig] + sorted(sig - set(clearest)),
                                   "DTP-1 (significant when re-measured)")}


def _value_columns(results: AuditResult, records: pd.DataFrame) -> list[str]:
    """The record's own columns to show: the label, the sensitive columns, then the others (at most 5 more)."""
    data = results.data
    cols = [c for c in data.record_columns or [] if c in records.columns]
    if not cols:
        return []
    first = [c for c in [data.label, *(data.sensitive or [])] if c in cols]
    rest = [c for c in cols if c not in first]
    return first + rest[:5]


def _records_table(results: AuditResult, records: pd.DataFrame) -> tuple[list[str], list[dict], int]:
    """Every member the verdict rests on (the clearest first), then the riskiest others (``TOP_N``), with their own
    values; the last item counts the first."""
    mem = records[records["is_member"] == 1]
    if "risk_rank" not in mem or mem.empty:
        return [], [], 0
    why, names = _verdict_records(results), _names(records)
    ranked = mem[mem["risk_rank"].notna()].sort_values("risk_rank")
    # the members the verdict rests on first, in the order its sentence gives them (the clearest first)
    first = list(why)
    behind = mem[names[mem.index].isin(set(why))]
    behind = behind.iloc[np.argsort([first.index(n) for n in names[behind.index]], kind="stable")]
    rows = pd.concat([behind, ranked[~ranked.index.isin(behind.index)].head(TOP_N)])
    values = _value_columns(results, records)
    measures = [c for c in ("pdtp",) if c in rows] + [c for c in rows.columns if c.startswith("score_")]
    flagged = "flagged_by" in rows
    # the record's own values in one column that wraps (one column each would run the table off the page)
    head = (["rank among members", "record", "behind the verdict"] + (["flagged by"] if flagged else [])
            + [{"pdtp": "PDTP"}.get(c, f"{display_name(results, c[6:])} score") for c in measures]
            + (["its values"] if values else []))
    out = []
    for i, r in rows.iterrows():
        name = names[i]
        flags = ["; ".join(display_name(results, f.strip()) for f in r["flagged_by"].split(";"))
                 if isinstance(r["flagged_by"], str) and r["flagged_by"] else "none"]
        own = ["; ".join(f"{c}: {_cell(r[c]) or 'missing'}" for c in values)] if values else []
        out.append({"cells": [_int(r.get("risk_rank")), name, why.get(name, "")]
                    + (flags if flagged else []) + [_cell(r[c]) for c in measures] + own,
                    "verdict": bool(why.get(name))})
    if not any(o["verdict"] for o in out):  # no record behind the verdict: no "why listed" column
        head.pop(2)
        for o in out:
            o["cells"].pop(2)
    return head, out, len(behind)


def _dataset_inference(di: DatasetInferenceSection | None) -> dict | None:
    """The dataset-inference section's words: its answer, test, p-value against the level, and power curve."""
    if di is None:
        return None
    test, power = di.test, di.power
    sizes = [f"{n:,} texts: {r * 100:.0f}% [{lo * 100:.0f}, {hi * 100:.0f}]" for n, r, (lo, hi) in
             zip(power.sizes, power.rate, power.interval)] if power else []
    answer = {"used": "The model was trained on the members as a set",
              "not comparable": "Not measurable: the member and non-member texts differ by themselves",
              "not detected": "Not detected: no evidence that the members were used as a set (not evidence that "
                              "they were not)"}.get(di.verdict, str(di.verdict))
    p = test.p_value if test else None
    return {"sentence": f"{answer} (p = {fmt(p)}).",
            "test": "Welch t-test" if test is None or test.test == "welch" else "permutation test",
            "p": fmt(p), "level": fmt(di.alpha), "n_test": " + ".join(f"{n:,}" for n in test.n_test) if test else "",
            "repeats": power.n_repeats if power else 0, "power": "; ".join(sizes) or "not measured"}


def _extraction(ex: ExtractionSection | None, *, redacted: bool = False) -> dict | None:
    """The extraction section's words and tables: the rates per prefix length and number of tries, the rank
    bound's beside them, the generations, and the members' most extractable spans (their text escaped by the
    template; ``redacted``: each text, the personal data found in it and the tokens raised said as "redacted", the
    kinds of personal data kept)."""
    if ex is None:
        return None

    def rate(r) -> str:
        return f"{r.k:,} / {r.n:,} = {fmt(r.rate, '%')} {fmt_interval(r.interval, '.3f')}" if r.n else MISSING

    def row(prefix: str, x) -> tuple[str, ...]:
        return (prefix, f"{x.n:,}", fmt(x.threshold_p_seq, ".3g"), rate(x.members), rate(x.nonmembers),
                f"{fmt(x.difference, '+.3f')} {fmt_interval(x.difference_interval, '+.3f')}")

    rows = [row(f"{pr.prefix_length}", x) for pr in ex.by_prefix for x in pr.rates]
    rows += [row("any", x) for x in ex.any_prefix] if len(ex.by_prefix) > 1 else []
    bound = ex.bound and {"rows": [(f"{x.n:,}", rate(x.members), rate(x.nonmembers)) for x in ex.bound.rates],
                          "suffix": fmt(ex.bound.suffix_bits["members"].min, ".1f"),
                          "window": fmt(ex.bound.window_bits["members"].min, ".1f"),
                          "median": fmt(ex.bound.suffix_bits["members"].median, ".1f"),
                          "nonmember_median": fmt(ex.bound.suffix_bits["nonmembers"].median, ".1f")}
    gen = []
    g = ex.generation
    for mode in ("greedy", "sampled") if g else ():
        for who in ("members", "nonmembers"):
            m = getattr(g, mode).get(who)
            if m is not None:
                gen.append((mode, "members" if who == "members" else "non-members", f"{m.n:,}",
                            f"{m.exact:,} ({fmt(m.exact_rate, '%')}, {fmt_interval(m.exact_interval, '.2f')})",
                            f"{m.near_verbatim:,} ({fmt(m.near_verbatim_rate, '%')}, "
                            f"{fmt_interval(m.near_verbatim_interval, '.2f')})", fmt(m.rouge_l, ".2f")))
    hide = (lambda text: "redacted") if redacted or ex.redacted else (lambda text: text)
    spans = [{"record": sp.record, "p": fmt(math.exp(sp.log_p) if as_number(sp.log_p) is not None else 0.0, ".3g"),
              "context": hide(sp.context), "span": hide(sp.span),
              "pii": "; ".join(f"{d.kind}: {hide(d.text)}" for d in sp.personal_data),
              "raised": ", ".join(f"{hide(repr(t.token))} {fmt(t.delta, '+.1f')}" for t in sp.raised) if sp.raised
              else ""}
             for sp in ex.spans]
    return {"sampler": ex.sampler, "suffix": ex.suffix_length, "p": f"{ex.p:g}", "rows": rows, "bound": bound,
            "generation": gen,
            "gen_prefix": g.prefix_length if g else None, "near": f"{g.near_verbatim_distance:g}" if g else "",
            "spans": spans, "detector": ex.personal_data_detector, "reference": ex.reference,
            "n_pii": ex.n_members_with_personal_data, "n_members": ex.n_members,
            "eligible": f"{ex.n_eligible_members:,} members and {ex.n_eligible_nonmembers:,} non-members"}


def _leaked_windows(lw: LeakedWindowsSection | None) -> dict | None:
    """The leaked windows' words and rows under the membership section: per most exposed member text, its windows
    (the span between up to 40 characters of the text either side, a line break shown as ⏎; written redacted: the
    span's length and offsets only) and their contrast; or why none is shown. None: not a language model's audit."""
    if lw is None:
        return None
    if lw.reason:
        return {"reason": lw.reason}

    def shown(text: str | None) -> str:
        return (text or "").replace("\r\n", "\n").replace("\n", "⏎")

    rows = []
    for t in lw.texts:
        head = {"record": t.record, "rank": t.rank, "score": fmt(t.score, ".3g")}
        if not t.windows:
            rows.append({**head, "none": True})
        for j, w in enumerate(t.windows):
            rows.append({**({"record": "", "rank": "", "score": ""} if j else head), "none": False,
                         "before": ("…" if len(w.before or "") >= 40 else "") + shown(w.before),
                         "span": shown(w.text), "after": shown(w.after) + ("…" if len(w.after or "") >= 40 else ""),
                         "tokens": f"{w.start}-{w.end - 1}", "contrast": fmt(w.contrast, "+.2f"),
                         "redacted": w.text is None, "n_chars": f"{w.n_chars:,}"})
    auc = f"AUC {fmt(lw.auc)}" + (f" {fmt_interval(lw.auc_ci, '.3f')}" if lw.auc_ci else "")
    weak = lw.auc_ci is not None and as_number(lw.auc_ci[0]) is not None and lw.auc_ci[0] <= 0.5
    return {"rows": rows, "attack": lw.display or lw.attack, "auc": auc, "weak": weak, "k": len(lw.texts),
            "window": lw.window, "contrast": lw.contrast, "redacted": lw.redacted}


def _record_risk_words(results: AuditResult) -> str:
    """How the "flagged by" column was decided, and how many members each attack and check flags."""
    risk = results.record_risk
    if risk is None:
        return ""
    counts = ", ".join(f"{display_name(results, a)} {k:,}" for a, k in risk.flagged.items())
    text = (f"\"Flagged by\" names the attacks that score the member above the non-members (its one-sided p-value "
            f"among the non-members' scores, corrected by Benjamini and Hochberg over every member and attack at a "
            f"false discovery rate of {risk.false_discovery_rate * 100:g}%) and DTP-1 where the record is "
            f"significant: {risk.n_members_flagged:,} member(s) flagged" + (f" ({counts})" if counts else "") + ".")
    if risk.resolution:
        text += f" Resolution: {risk.resolution}."
    return text


def _names(records: pd.DataFrame) -> pd.Series:
    """Each record's name as results.json's lists of records hold it (:func:`leakaudit._results.record_names`), or as
    a schema-3 file read back names it ('records.csv, record N') where records.csv gives no file and row."""
    if "source" in records and ("row" in records or "index" in records or "line" in records):
        return pd.Series(record_names(records), index=records.index)
    return "records.csv, record " + records["record"].astype(str)


def _dtp_records(test: DtpTest | None, records: pd.DataFrame | None, limit: int = 25) -> list[dict]:
    """Rows of the records the statistical DTP-1 rule re-measured, significant first, then by lower bound."""
    if test is None or not test.records:
        return []
    mem = records[records["is_member"] == 1] if records is not None else None
    lira = dict(zip(_names(mem), mem["score_lira"])) if mem is not None and "score_lira" in mem else {}
    single = dict(zip(_names(mem), mem["pdtp"])) if mem is not None and "pdtp" in mem else {}
    rows = []
    for r, m, lb, sig in zip(test.records, test.stage2_mean, test.lower_bound, test.significant):
        rows.append({"where": r, "pdtp": fmt(single.get(r)), "mean": fmt(m),
                     "lower": fmt(lb), "significant": bool(sig), "lira": _score(lira.get(r)),
                     "_key": (-bool(sig), -(as_number(lb) if as_number(lb) is not None else -np.inf))})
    rows.sort(key=lambda d: d.pop("_key"))
    return rows[:limit]


# -- sections -----------------------------------------------------------------------------------------------------


def _unit_sentence(unit: UnitSection | None) -> str:
    """The privacy unit in words (empty without one): its column and counts, and what the analyses do with it."""
    if unit is None:
        return ""
    return (f"The privacy unit is the column {unit.column!r}: {unit.n_member_units:,} member units "
            f"({unit.n_member_rows:,} rows) and {unit.n_nonmember_units:,} non-member units "
            f"({unit.n_nonmember_rows:,} rows), the largest of {unit.largest_unit:,} rows. The membership attacks "
            f"score units ({unit.combine}) and their figures count units; PDTP and DTP-1 leave out all of a "
            "unit's rows.")


def _membership_answer(results: AuditResult, conf_pct: str) -> str:
    mem = results.membership
    th = results.verdict.thresholds
    f = as_number(th.get("low_fpr")) or 0.01
    best, best_t = None, None
    for name, m in mem.items():
        if m.comparable is not None:  # the blind baseline (texts only) is not an attack on the model
            continue
        t = m.tpr_at(f)
        if t is not None and as_number(t.tpr) is not None and (best_t is None or t.tpr > best_t.tpr):
            best, best_t = name, t
    if best is None:
        return (f"The attacks' TPR at {fmt(f, '%')} FPR could not be estimated with these non-members (see the checks "
                "for the number needed).") if mem else ""
    eps = [(as_number(m.epsilon.epsilon_lb), n) for n, m in mem.items() if m.epsilon and m.epsilon.measurable]
    eps = [e for e in eps if e[0] is not None]
    # with a privacy unit the attacks count units (their own n_members)
    units = mem[best].counts == "units"
    n1 = mem[best].n_members if units else results.data.n_members
    who = ("non-member units", "member unit", "member units") if units else ("non-members", "member", "members")
    judged = next((c for c in results.verdict.checks if c.id == f"membership.{best}.tpr_at_low_fpr"), None)
    s = (f"At a false-alarm rate of {fmt(f, '%')} (1 in {round(1 / f):,} {who[0]} wrongly called a {who[1]}), the "
         f"strongest attack ({display_name(results, best)}) finds {fmt(best_t.tpr, '%')} of the {who[2]} "
         f"({conf_pct} interval {fmt(best_t.ci[0], '%')} to {fmt(best_t.ci[1], '%')}; about "
         f"{round(best_t.tpr * n1):,} of {n1:,}); an attacker guessing at random finds {fmt(f, '%')}.")
    if judged is not None and judged.status == "not measurable":
        s += (" With these records that interval is too wide to judge against the threshold "
              f"({fmt(th.get('max_tpr_at_low_fpr'), '%')}): see the checks for the records it needs.")
    if eps and max(eps)[0] > 0:
        e, n = max(eps)
        s += (f" The empirical epsilon (a lower bound on the differential-privacy epsilon the attacks demonstrate, "
              f"delta {results.config.epsilon_delta:g}) is at least {e:.2f}, from the "
              f"{display_name(results, n)}; 0 means no demonstrated leakage." + _risk(mem[n].epsilon.risk))
    else:
        s += " No attack demonstrates an empirical epsilon above 0 with these records."
    return s + _claim_sentence(results)


def _claim_sentence(results: AuditResult) -> str:
    """With a claimed DP epsilon: the claim beside the attacks' bounds, and the one-run audit's bound and verdict."""
    claimed = as_number(results.config.claimed_epsilon)
    if claimed is None:
        return ""
    delta, dp = results.config.epsilon_delta, results.dp
    s = (f" The model was trained with differential privacy at a claimed epsilon of {claimed:g} (delta {delta:g}); "
         "every attack's empirical epsilon above is a lower bound to set against it." + _risk(dp and dp.claimed_risk))
    if dp is not None and as_number(dp.epsilon_lower_bound) is not None:
        s += (f" A one-run audit of the training recipe ({dp.m} gradient canaries, Steinke et al. 2023) bounds "
              f"epsilon below by {fmt(dp.epsilon_lower_bound, '.2f')} at {fmt(dp.confidence, '%')} "
              f"confidence: {dp.verdict}." + _risk(dp.risk))
    return s


def _risk(risk) -> str:
    """The re-identification, attribute inference and reconstruction bounds an epsilon implies, a sentence each
    (:mod:`leakaudit.dpaudit.risk`); '' without them."""
    return "".join(f" {r.sentence[0].upper()}{r.sentence[1:]}." for r in (risk or {}).values())


def _why_wide(interval, notes: list[str], what: str, *, n_members: int, n_nonmembers: int,
              fpr: float | None = None) -> str:
    """' †' after an interval that spans nearly all of 0 to 1, its reason (the counts behind it,
    :func:`leakaudit.metrics.wide_interval_reason`) added to ``notes`` as "what: reason"; '' otherwise (the table's
    numeric cells stay narrow)."""
    why = wide_interval_reason(interval, n_members=n_members, n_nonmembers=n_nonmembers, fpr=fpr)
    if why:
        notes.append(f"{what}: {why}")
    return " †" if why else ""


def _membership_rows(results: AuditResult) -> tuple[list[str], list[dict]]:
    """The membership table's FPR columns and one row per attack (its name, AUC, TPRs and epsilon as text, and
    ``notes``: why an interval spans the whole range)."""
    mem = results.membership
    fprs = list(next(iter(mem.values())).tpr_at_fpr) if mem else []
    claimed = as_number(results.config.claimed_epsilon)
    rows = []
    for name, m in mem.items():
        e, ch = m.epsilon, m.against_chance
        tprs, notes, shown = [], [], display_name(results, name)
        counts = {"n_members": m.n_members, "n_nonmembers": m.n_nonmembers}
        auc = f"{fmt(m.auc)} {fmt_interval(m.auc_ci)}" + _why_wide(m.auc_ci, notes, f"{shown}, AUC", **counts)
        for f in fprs:
            t = m.tpr_at_fpr.get(f)
            tprs.append(f"{fmt(t.tpr, '%2')} {fmt_interval(t.ci, '%2')}"
                        + _why_wide(t.ci, notes, f"{shown}, TPR at FPR {fmt(f, 'g')}", **counts, fpr=as_number(f))
                        if t is not None and as_number(t.tpr) is not None else "not estimable")
        rows.append({"name": shown, "auc": auc, "tprs": tprs, "notes": notes,
                     # two parts the cell may stack, so that the table fits a laptop's window
                     "chance": (f"{fmt(ch.accuracy)} {fmt_interval(ch.accuracy_ci)};",
                                f"{fmt(ch.advantage, '+.3f')} {fmt_interval(ch.advantage_ci, '+.3f')}")
                     if ch is not None and as_number(ch.accuracy) is not None else (MISSING,),
                     "epsilon": (fmt(e.epsilon_lb, ".2f")
                                 + (f" (joint-beta {fmt(e.epsilon_lb_joint_beta, '.2f')})"
                                    if as_number(e.epsilon_lb_joint_beta) is not None else "")
                                 if e and e.measurable else ("not measurable" if e else MISSING))
                     + (f" (claimed {claimed:g})" if claimed is not None else "")})
    return [fmt(f, "g") for f in fprs], rows


def _dtp_exact(results: AuditResult) -> bool:
    """The DTP-1 test measured each record exactly: a leave-one-out that no seed moves, measured once or re-measured
    with repeats that all agree (as the check's own sentence decides it in :mod:`leakaudit.audit.steps.dtp`)."""
    test = results.dtp and results.dtp.test
    return bool(test and (test.n_repeats == 1 or (test.sd and not any(test.sd))))


def _dtp_answer(results: AuditResult) -> str:
    dtp = results.dtp
    if dtp is None:
        return ""
    thr = results.verdict.thresholds.get("max_dtp", 1.0)
    nf = dtp.noise_floor
    floor, p90 = (as_number(nf.median), as_number(nf.p90)) if nf else (None, None)
    noise = (f" Retraining with another seed alone moves a record's output by {fmt(floor, '.2f')} nats for the median "
             f"record" + (f" and {fmt(p90, '.2f')} for the 90th percentile" if p90 is not None else "")
             + (": that is the noise a single measurement carries." if floor or p90 else ": the seed does not move "
                "it, so a single measurement carries no seed noise.")) if floor is not None else ""
    n_above, n_rec = dtp.n_above, dtp.n_records
    if dtp.rule == "long":
        return (f"{n_above:,} of the {n_rec:,} training records measured have a PDTP above {thr:g} (Long et al.'s raw "
                f"rule, as asked); the largest is {fmt(dtp.max, '.2f')}.{noise}")
    k = dtp.n_significant
    if not n_above:
        n = results.data.n_members
        who = "training record" if n_rec >= n else f"measured record ({n_rec:,} of the {n:,} members)"
        return (f"No {who} changes the retrained model's output by more than e^{thr:g} when removed: the largest PDTP "
                f"is {fmt(dtp.max, '.2f')} over {n_rec:,} records.{noise}")
    if k:
        test = dtp.test
        lbs = [(as_number(lb), r) for r, lb, sig in zip(test.records, test.lower_bound, test.significant)
               if sig and as_number(lb) is not None] if test else []
        check = next((c for c in results.verdict.checks if c.id == "dtp.dtp1"), None)
        clearest = f" The largest change is {fmt(check.value, '.2f')} nats" if check else ""
        if lbs:
            lb, r = max(lbs)
            clearest += (f"{'; the' if check else ' The'} clearest record, {r}, changes it by at least {lb:.2f} nats, "
                         f"against a threshold of {thr:g}.")
        return (f"{k:,} training record{'s' if k > 1 else ''} change{'s' if k == 1 else ''} the retrained model's "
                f"output by more than e^{thr:g} when removed, beyond training noise and binning ({n_above:,} of "
                f"{n_rec:,} were above it once and were re-measured).{clearest}{noise} Listed below and in the records "
                "table.")
    untested = f" ({len(dtp.records_untested)} were not re-measured.)" if dtp.records_untested else ""
    if _dtp_exact(results):
        return (f"{n_above:,} of {n_rec:,} records were above {thr:g} as binned PDTP, but none changes the retrained "
                f"model's output by more than e^{thr:g} once the bins' widths are allowed for (the smallest change the "
                f"two bins are consistent with; this learner's leave-one-out does not depend on the seed, so each was "
                f"measured exactly): the binning of the outputs explains them, a bin edge crossed in rounding, not "
                f"noise.{noise}" + untested)
    return (f"{n_above:,} of {n_rec:,} records were above {thr:g} in a single measurement, but none stays significantly "
            f"above it when re-measured with fresh seeds: a single measurement's noise explains them.{noise}"
            + untested)


def _attribute_rows(results: AuditResult) -> list[dict]:
    rows = []
    for col, a in results.attribute.items():
        base, acc_m = as_number(a.baseline_accuracy), as_number(a.member_accuracy)
        alt, alt_ci = as_number(a.alternative_advantage), a.alternative_advantage_ci
        lo = as_number(alt_ci[0]) if alt_ci else None
        if base is None or acc_m is None:
            answer = (f"The model's guesses of {col} are right for {fmt(acc_m, '%')} of members; the no-model "
                      "baseline could not be fitted (it needs at least two values of the column among the records "
                      "it is fitted on).")
        elif lo is not None and lo > 0:
            answer = (f"The model helps infer {col}: its guesses are right for {fmt(acc_m, '%')} of members, against "
                      f"{fmt(base, '%')} for a classifier that uses only the other columns and the label (difference "
                      f"{fmt(alt)}, interval {fmt_interval(alt_ci)}).")
        else:
            answer = (f"The model does not help infer {col} beyond what the other columns give: its guesses are right "
                      f"for {fmt(acc_m, '%')} of members, a classifier without the model gets {fmt(base, '%')} "
                      f"(difference {fmt(alt)}, interval {fmt_interval(alt_ci)}).")
        rows.append({"col": col, "member": fmt(acc_m, "%"), "non": fmt(a.nonmember_accuracy, "%"),
                     "base": fmt(base, "%"), "adv": f"{fmt(a.advantage)} {fmt_interval(a.advantage_ci)}",
                     "alt": f"{fmt(alt)} {fmt_interval(alt_ci)}", "answer": answer})
    return rows


def _property_rows(results: AuditResult) -> list[dict]:
    rows = []
    for name, p in results.property.items():
        helps = p.model_helps
        rows.append({"name": name, "true": fmt(p.true_share),
                     "est": f"{fmt(p.estimate)} {fmt_interval(p.estimate_interval)}",
                     "base": f"{fmt(p.no_model_estimate)} {fmt_interval(p.no_model_interval)}",
                     "leak": "not measured" if helps is None else ("yes" if helps else "no"),
                     "sentence": p.sentence or
                     "no no-model baseline in this results.json (written by an older leakaudit): no leak can be shown"})
    return rows


def _mip_rows(mip: MipSection | None) -> list[tuple[str, str]]:
    if mip is None:
        return []
    d, de = mip.parameters, mip.parameters_with_noise
    received = f"{d:,} of {de:,}" if isinstance(d, int) and isinstance(de, int) else MISSING
    return [
        ("eta (the attacker's largest advantage over a coin flip)", fmt(mip.eta, "g")),
        ("noise norm / parameter norm", f"{_big(mip.noise_norm)} / {_big(mip.parameter_norm)}"),
        ("parameters that receive noise", f"all {d:,}" if isinstance(d, int) and d == de else received),
        ("test accuracy without the noise",
         f"{fmt(mip.test_accuracy_without_noise, '%')} {fmt_interval(mip.test_accuracy_without_noise_interval, '%')}"),
        ("test accuracy with the noise",
         f"{fmt(mip.test_accuracy_with_noise, '%')} {fmt_interval(mip.test_accuracy_with_noise_interval, '%')}"),
        ("accuracy lost to the noise (points; negative: gained)",
         f"{fmt(mip.accuracy_cost, '%')} {fmt_interval(mip.accuracy_cost_interval, '%')}"),
        ("runs on halves of the members used to estimate the noise (B)", fmt(mip.B, "g")),
        (f"noise constant c (Izzo et al., Corollary 11, M = {fmt(mip.M, 'g')})", fmt(mip.constant_c, ",.0f")),
    ]


def _removal_words(dtp: DtpSection, timings: dict[str, float]) -> str:
    """What removing the DTP-1 records changed, as the audit measured it (:mod:`leakaudit.audit.steps.removal`),
    and what the measurement cost: its share of the audit's time by stage (``timings``, results.json's)."""
    r = dtp.removal
    if r is None:
        return ("Removing such records and re-measuring is what Long et al.'s reduction does (leakaudit.dtp.reduce_dtp, "
                "or `leakaudit dtp reduce`); this audit did not measure what removing them would change (the "
                "profile does not): re-run the audit without them.")
    k, thr, sc = len(r.removed), r.threshold, r.screening
    which = (f" (the {sc.n_top:,} with the largest PDTP before and a random {sc.n_sample:,} of the others)" if sc
             else "")
    text = (f"Measured: with {'this record' if k == 1 else f'these {k} records'} removed and the recipe retrained, "
            f"the largest single PDTP of the {r.records_measured:,} remaining members measured{which} is "
            f"{fmt(r.max_after, '.2f')} (before: {fmt(r.max_before, '.2f')}); "
            f"{len(r.records_above_after)} exceed {thr:g} in one measurement")
    if sc and sc.unmeasured_above.m:
        text += (f" ({sc.unmeasured_above.k} of the sample; so at most {fmt(sc.unmeasured_above.share_interval[1], '%')}"
                 f" of the {sc.n_unmeasured:,} members not measured may)")
    sig = r.records_significant_after
    if sig is not None:
        untested = len(r.records_untested_after)
        if sig:
            text += (f", and {len(sig)} of them {'breaks' if len(sig) == 1 else 'break'} DTP-1 beyond training "
                     "randomness (exposed once the others were gone, as in Long et al.'s Fig 6: remove them too and "
                     "measure again)")
        elif untested:
            text += f"; none of those re-measured is significant, but {untested} were not re-measured"
        else:
            text += ", and none of them breaks DTP-1 beyond training randomness"
    cost = as_number(r.accuracy_cost)
    change = (f"a gain of {_points(-cost)}" if cost is not None and cost < 0 else f"a cost of {_points(cost)}")
    text += (f". Accuracy on the non-members: {fmt(r.accuracy_before, '%')} with them, "
             f"{fmt(r.accuracy_after, '%')} without ({change}; the cost's interval "
             f"{_points_interval(r.accuracy_cost_interval)}, a negative cost being a gain, over "
             f"{r.n_seeds} paired training seeds).")
    took, total = as_number(timings.get("dtp_removal")), sum(v for v in map(as_number, timings.values()) if v)
    if took and total:
        text += (f" This measurement took {took:,.1f} s, {took / total:.0%} of the audit's {total:,.1f} s by stage; "
                 "the setting removal = false (--no-removal) skips it.")
    return text


def _points(v, spec: str = ".2f") -> str:
    """A difference of two rates in percentage points: '0.50 percentage points' (never '0.50%', which would be a
    relative change)."""
    x = as_number(v)
    return MISSING if x is None else f"{x * 100:{spec}} percentage points"


def _points_interval(iv) -> str:
    """An interval of a difference of rates: '[-0.20, 1.10] percentage points'."""
    if not iv or len(iv) != 2 or as_number(iv[0]) is None or as_number(iv[1]) is None:
        return MISSING
    return f"[{as_number(iv[0]) * 100:.2f}, {as_number(iv[1]) * 100:.2f}] percentage points"


#: a boosted-tree library's settings that make a record's own leaf or bin less likely, by the target's kind
_BOOSTED = {"xgboost": "min_child_weight, max_depth, max_bin", "lightgbm": "min_data_in_leaf, num_leaves, max_bin",
            "catboost": "min_data_in_leaf, depth, border_count"}


def _remedy_words(results: AuditResult, dtp1: bool, flags: bool) -> str:
    """What each boosted-tree setting changed, as the audit measured it by retraining (:mod:`leakaudit.audit.steps.
    remedy`): the loss attack's AUC and the accuracy, or (``dtp1``) how many of DTP-1's records stay above its
    threshold; the settings by name when the profile did not measure them."""
    r = results.remedy
    if r is None:
        return (f"retrain with larger leaves, shallower trees and coarser bins ({_BOOSTED[results.target.kind]}); "
                "what each changes was not measured" + ("" if results.settings.dtp_removal_seeds else (
                    " at this profile (" + ("--profile standard" if flags else 'profile="standard"') + " measures it)")))
    seeds = "one seed: its seed does not matter" if r.n_seeds == 1 else f"{r.n_seeds} paired seeds"
    out = []
    for s in r.settings:
        change = f"{s.what} ({s.parameter} {s.value:g} -> {s.tried:g}) "
        if dtp1:
            above = len(s.records_above_after or [])
            change += f"leaves {above} of the {len(r.records)} above {r.threshold:g}"
        else:
            cost = as_number(s.accuracy_cost)
            change += (f"moves the loss attack's AUC from {fmt(s.auc_before)} to {fmt(s.auc_after)} (change "
                       f"{fmt(s.auc_change, '+.3f')}, interval {fmt_interval(s.auc_change_interval, '+.3f')}) at "
                       f"{'a gain' if cost is not None and cost < 0 else 'a cost'} of "
                       f"{_points(abs(cost) if cost is not None else None)} of accuracy on the non-members (interval of "
                       f"the cost {_points_interval(s.accuracy_cost_interval)})")
        out.append(change)
    what = "their PDTP, not re-tested" if dtp1 else "the loss attack only"
    return f"measured by retraining the recipe on the members ({seeds}; {what}), " + "; ".join(out)


def _next_steps(results: AuditResult, flags: bool) -> list[str]:
    """What would change a verdict that is not "publish", from what this audit measured (nothing claimed that it
    did not measure, no remedy it says it cannot apply to this model): the exceeded findings' remedies, then the
    open checks in the order that settles the verdict soonest (:meth:`~leakaudit.audit.result.results.Verdict.to_decide`),
    each with its cost where its fix states one."""
    v = results.verdict
    if v.outcome == "publish":
        return []
    out = []
    checks = v.checks
    dtp = results.dtp
    kind = results.target.kind
    sig = [] if dtp is None else dtp.records_significant or (dtp.records_above if dtp.rule == "long" else [])
    if sig and any(c.id == "dtp.dtp1" and c.status == "exceeded" for c in checks):
        names = "; ".join(sig[:10]) + (f" and {len(sig) - 10} more" if len(sig) > 10 else "")
        out.append(f"DTP-1 records: {names}. " + _removal_words(dtp, results.timings)
                   + (" LightGBM draws its histogram bin edges from the training data, so a member holding a value few "
                      "members hold can set or move an edge, and with it the splits' thresholds: such records may "
                      "leave DTP-1 when the rare values are merged or dropped." if kind == "lightgbm" else "")
                   + (f" The recipe's own settings, {_remedy_words(results, dtp1=True, flags=flags)}." if kind in _BOOSTED and
                      results.remedy is not None and results.remedy.records else ""))
    if any(c.analysis == "membership" and c.status == "exceeded" for c in checks):
        mip = results.mip
        if results.data.kind == "text":  # MIP noise is defined for classifiers' parameters
            out.append("Membership leakage: the model recognises its fine-tuning texts. Fine-tune for fewer epochs, "
                       "remove repeated texts (repetition drives memorisation), or fine-tune with differential "
                       "privacy (DP-SGD), then audit again; the cost of each was not measured here.")
        elif kind in _BOOSTED:
            out.append(f"Membership leakage of a boosted-tree model: {_remedy_words(results, dtp1=False, flags=flags)}. An attack's "
                       f"AUC above {fmt(results.verdict.thresholds.get('max_auc'), 'g')} with confidence withholds the model. "
                       "Merge or drop rare values that give a few members a leaf or bin of their own, retrain, then "
                       "audit the new model.")
        elif mip is not None and as_number(mip.accuracy_cost) is not None:
            c = as_number(mip.accuracy_cost)
            effect = f"gains {_points(-c, '.1f')}" if c < 0 else f"costs {_points(c, '.1f')}"
            out.append(f"Membership leakage: retrain with a privacy mechanism. For this model, the noise that gives "
                       f"{fmt(mip.eta, 'g')}-MIP (below) {effect} of test accuracy (the cost's interval "
                       f"{_points_interval(mip.accuracy_cost_interval)}); differentially "
                       "private training (DP-SGD) is the other route; its cost was not measured here.")
        else:
            why = next((s.reason for s in results.skipped if "MIP" in s.name), "")
            out.append("Membership leakage: retrain with more regularisation or with differentially private training, "
                       "then audit the new model; the accuracy cost was not measured here"
                       + (f" (Izzo et al.'s MIP noise does not apply: {why})." if why else "."))
    if any(c.describes == "recipe" and c.status == "exceeded" for c in checks):
        out.append("A finding describes the retraining recipe, not the given model: give the recipe that trained the "
                   "model (for a torch module, the config's [training]) or check the member list, then audit again.")
    fixes: dict[tuple[str, str], list[str]] = {}
    for c in v.to_decide():  # the first settles the verdict soonest
        if c.fix:
            fixes.setdefault((c.status, c.said("fix", flags=flags)), []).append(c.name)
    for (what, fix), names in fixes.items():
        out.append(f"{', '.join(names)}: {what}; {fix}.")
    return out


#: the profile's and the configuration's settings in words (a key not listed is shown with its underscores as spaces)
_SETTING_WORDS = {
    "n_reference": "reference models", "pdtp_records": "members whose PDTP is measured",
    "pdtp_repeats": "PDTP measurements per member", "noise_floor_models": "models for the seed noise floor",
    "n_boot": "bootstrap resamples per interval", "shadow_attack_models": "shadow models feeding the attack network",
    "shadow_attack_batch": "shadow models trained at once", "shadow_attack_max_rows": "most rows of the attack network",
    "dtp_test_repeats": "re-measurements of each DTP-1 candidate",
    "dtp_test_max_records": "most DTP-1 candidates re-measured",
    "dtp_test_max_repeats": "most re-measurements of a DTP-1 candidate still undecided",
    "pdtp_exact_max": "most members measured exactly before screening",
    "pdtp_screen_fraction": "share measured first from the screen's top",
    "pdtp_screen_sample": "random members measured to bound the rest", "pdtp_screen_sample_max": "most such members",
    "pdtp_screen_max_fraction": "most members the screen measures", "dtp_removal_seeds": "seeds of the removal test",
    "shadow_attack": "shadow-model attack", "dataset": "data set", "n_members": "members",
    "n_nonmembers": "non-members", "backend": "where models train", "policy": "release policy",
    "confidence": "family-wise confidence", "dtp_rule": "DTP-1 rule", "epsilon_delta": "delta of the epsilon bounds",
    "exit_code": "exit status carries the verdict", "dataset_inference": "dataset inference (the members as a set)",
}


def _words(key: str) -> str:
    return _SETTING_WORDS.get(key, key.replace("_", " "))


def _settings_rows(results: AuditResult) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(profile settings, retraining recipe, other config) as (name in words, plain text) pairs, without None or
    dicts."""
    settings = results.settings.model_dump()
    recipe = settings.pop("retraining_recipe", None) or {}
    settings.pop("profile", None)
    prof = [(_words(k), "all members" if v is None else _plain(v)) for k, v in settings.items()
            if v is not None or k == "pdtp_records"]
    rec = [(p, _plain(x)) for k, v in recipe.items() if v is not None
           for p, x in (v.items() if k == "parameters" else [(k.replace("_", " "), v)])]
    demo, text = results.target.kind == "demo", results.data.kind == "text"
    conf = []
    for k, v in results.config.model_dump(mode="json").items():
        if v is None or v == [] or v == {} or k in _CONFIG_SHOWN_ELSEWHERE or (k in _DEMO_ONLY and not demo) \
                or (k in _TEXT_ONLY and not text) or (k in _TABULAR_ONLY and text):
            continue
        if demo and k in ("hidden", "activation", "epochs"):  # one row: the demo network
            continue
        conf.append((_words(k), _plain(v)))
    if demo:
        cfg = results.config
        conf.insert(0, ("demo network", f"hidden {_plain(cfg.hidden)}, {cfg.activation}, {cfg.epochs} epochs"))
    return prof, rec, conf


def _shown(value):
    """What the template writes for ``value``: control and bidirectional-formatting characters escaped, so that a
    name, label or value cannot reverse or hide the text around it (markup stays markup)."""
    if isinstance(value, Markup):
        return Markup(escape_controls(str(value)))
    return escape_controls(value) if isinstance(value, str) else value


def render_report(results: AuditResult, records: pd.DataFrame | None) -> str:
    """HTML text of the report for one audit, read from its typed result (:class:`~leakaudit.audit.result.results.
    AuditResult`, e.g. :func:`leakaudit.audit.result.results.read_result` of results.json's data) and ``records``
    (records.csv's rows)."""
    env = Environment(loader=PackageLoader("leakaudit.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), finalize=_shown)
    verdict, membership = results.verdict, results.membership
    thresholds = verdict.thresholds
    roc = pdtp_hist = pdtp_scatter = None
    rec_head, rec_rows, n_extra = [], [], 0
    if records is not None and len(records):
        scored = scored_attacks(membership, records)
        roc = as_svg(roc_of(results, records, scored)) if scored else None
        mem = measured_members(records)
        best = strongest_attack(results, scored)
        if len(mem):
            pdtp_hist = as_svg(pdtp_histogram_of(results, mem))
            pdtp_scatter = None if best is None else as_svg(pdtp_scatter_of(results, mem, best))
        rec_head, rec_rows, n_extra = _records_table(results, records)
    cfg, data, target, dtp, mip, dup = (results.config, results.data, results.target, results.dtp, results.mip,
                                        results.duplicates)
    cc = as_number(verdict.check_confidence)
    conf_pct = f"{cc * 100:.4g}%" if cc is not None else f"{(as_number(cfg.confidence) or 0.95) * 100:g}%"
    flags = results.command.startswith("leakaudit ")  # a command-line audit names its settings as flags
    # written redacted (--redact): records.csv as written holds none of the records' own columns
    redacted = records is not None and bool(data.record_columns) and not _value_columns(results, records)
    fprs, mem_rows = _membership_rows(results)
    prof, recipe, conf = _settings_rows(results)
    nf = dtp and dtp.noise_floor
    return env.get_template("report.html.j2").render(
        version=results.leakaudit_version, created=results.created,
        profile=cfg.profile, profile_note=_PROFILE_NOTES.get(cfg.profile, ""),
        data=data, target=target, files=data.files or {},
        accuracy=f"{fmt(target.train_accuracy, '%')} on members, {fmt(target.test_accuracy, '%')} on non-members",
        outcome=verdict.outcome, headline=verdict.said("headline", flags=flags), reasons=verdict.reasons,
        counts=[(st, verdict.counts.get(st, 0), st.replace(" ", "-")) for st in STATUSES],
        status_colours=[(st.replace(" ", "-"), colour) for st, colour in STATUS_COLOURS.items()],
        recipe_sentence=verdict.recipe and verdict.recipe.sentence, family_sentence=verdict.family_sentence(),
        burden=verdict.burden_of_proof, policy=verdict.policy, release=verdict.release or "not declared",
        threat_model=verdict.threat_model,
        checks=[check_row(c, conf_pct, flags) for c in verdict.checks],
        thresholds=[(k, _plain(v)) for k, v in thresholds.items()
                    if v is not None and (k in _TEXT_THRESHOLDS if data.kind == "text"
                                          else k != "max_extraction_rate_difference")],
        next_steps=_next_steps(results, flags),
        membership_answer=_membership_answer(results, conf_pct), fprs=fprs, membership=mem_rows,
        attacks_run=[(display_name(results, a), v.description) for a, v in membership.items() if v.description],
        analyses=results.analyses,
        unit=_unit_sentence(data.unit),
        duplicates=dup and {"sentence": _capital(dup.sentence), "fix": dup.said("fix", flags=flags),
                            "definition": dup.definition},
        lm_attacks=[(v.display, v.reference) for v in membership.values() if v.reference],
        blind=next((v for v in membership.values() if v.comparable is not None), None),
        dataset_inference=_dataset_inference(results.dataset_inference),
        extraction=_extraction(results.extraction, redacted=redacted),
        leaked_windows=_leaked_windows(results.leaked_windows),
        auc_method=", ".join(sorted({_AUC_METHODS.get(v.auc_ci_method, v.auc_ci_method)
                                     for v in membership.values() if v.auc_ci_method})),
        dtp=dtp, dtp_answer=_dtp_answer(results), dtp_exact=_dtp_exact(results),
        dtp_max=fmt(dtp and dtp.max), dtp_mean=fmt(dtp and dtp.mean),
        dtp_floor=f"{fmt(nf and nf.median)} / {fmt(nf and nf.p90)}",
        pdtp_sample=dtp.n_records if dtp and dtp.n_records < data.n_members else None,
        max_dtp=_plain(thresholds.get("max_dtp")),
        dtp_records=_dtp_records(dtp and dtp.test, records),
        records_head=rec_head, records_rows=rec_rows, records_extra=n_extra, top_n=TOP_N,
        personal_data=None if records is None else bool(_value_columns(results, records)),
        by_line=records is not None and "line" in records,
        record_risk=_record_risk_words(results),
        attribute=_attribute_rows(results), property=_property_rows(results),
        mip=mip, mip_rows=_mip_rows(mip), mip_sentence=_capital(mip and mip.sentence or ""),
        skipped=[{"name": s.name, "reason": s.said("reason", flags=flags), "fix": s.said("fix", flags=flags)}
                 for s in results.skipped] + ([] if records is not None else [_NO_RECORDS]), command=results.command,
        timings=[(k, fmt(v, ".1f")) for k, v in results.timings.items()],
        peak_mb=fmt(results.resources.peak_memory_mb, ",.0f"),
        settings=prof, recipe=recipe, config=conf, demo=target.kind == "demo",
        roc_svg=roc, pdtp_hist_svg=pdtp_hist, pdtp_scatter_svg=pdtp_scatter,
    )
