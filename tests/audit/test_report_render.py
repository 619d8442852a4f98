"""The report's content, without a browser: numbers and words agree, nulls never show, records are findable."""

import copy
import html as _html
import json
import re

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit import make_config, run_audit
from leakaudit.audit.result.results import read_result
from leakaudit.exceptions import DataFileError
from leakaudit.report import render_report
from leakaudit.report.plots import _roc_polyline, interp_roc, robust_limits, roc_points


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    out = tmp_path_factory.mktemp("render") / "run"
    run_audit(make_config(profile="smoke", n_members=120, n_nonmembers=120, epochs=2, seed=1), out, verbose=False)
    return json.loads((out / "results.json").read_text()), pd.read_csv(out / "records.csv")


def _render(res: dict, rec) -> str:
    """The report of results.json's data (edited by a test), read into the typed result as the audit reads it."""
    return render_report(read_result(res), rec)


def test_data_that_is_not_a_result_is_refused_by_field(audit):
    """The report reads the typed result: results.json's data whose verdict lost a field, or that holds something
    else, is refused in one line naming it."""
    res, _ = audit
    broken = copy.deepcopy(res)
    del broken["verdict"]["headline"]
    with pytest.raises(DataFileError, match=r"^x.json does not hold an audit's results: verdict.headline: "):
        read_result(broken, where="x.json")
    with pytest.raises(DataFileError, match=r"does not hold an audit's results \(no AuditResult\)"):
        read_result([1, 2])
    assert read_result(res).verdict.headline == res["verdict"]["headline"]


def visible_text(html: str) -> str:
    """The page's text as a reader sees it (no style sheet, no plot internals, no tags)."""
    html = re.sub(r"<style.*?</style>|<svg.*?</svg>", " ", html, flags=re.DOTALL)
    return re.sub(r"\s+", " ", _html.unescape(re.sub(r"<[^>]+>", " ", html)))


# -- the ROC plot: a tied block of scores is a straight segment ---------------------------------------------------


def test_tied_scores_give_a_diagonal_segment_not_a_plateau():
    # a forest's members: 171 of 284 have loss 0, tied with 100 non-members at the top score
    m = np.r_[np.ones(284, int), np.zeros(285, int)]
    s = np.r_[np.zeros(171), -np.linspace(0.1, 1, 113), np.zeros(100), -np.linspace(0.05, 1, 185)]
    fpr, tpr = roc_points(m, s)
    assert (fpr[1], tpr[1]) == pytest.approx((100 / 285, 171 / 284))  # the whole block in one step
    x, y = _roc_polyline(fpr, tpr, 1e-4)
    at = interp_roc(fpr, tpr, np.array([1e-4, 0.01]))
    assert at == pytest.approx(np.array([1e-4, 0.01]) / (100 / 285) * (171 / 284))
    assert y[0] < 1e-3 and np.interp(0.01, x, y) < 0.02  # was 0.60 at FPR 1e-4 when ties were broken by row order


def test_polyline_keeps_both_ends_of_each_vertical_jump_and_the_segments_between():
    # members above every non-member, then a tie: the curve rises at FPR 0, runs to (0.5, 0.5), jumps to (0.5, 1)
    m = np.array([1, 0, 1, 0])
    s = np.array([4.0, 3.0, 2.0, 1.0])
    fpr, tpr = roc_points(m, s)
    x, y = _roc_polyline(fpr, tpr, 1e-4)
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)
    j = np.flatnonzero(x == 0.5)
    assert len(j) == 2 and list(y[j]) == [0.5, 1.0]  # arrival, then departure
    grid = x[x < 0.5]
    assert np.allclose(y[x < 0.5], 0.5) and len(np.unique(grid)) == len(grid)  # one point per FPR where no jump
    assert np.array_equal(y, np.maximum.accumulate(y)) and x[-1] == 1.0 and y[-1] == 1.0


def test_roc_points_without_ties_match_the_staircase():
    m = np.array([1, 0, 1, 0])
    s = np.array([4.0, 3.0, 2.0, 1.0])
    fpr, tpr = roc_points(m, s)
    assert list(zip(fpr, tpr)) == [(0, 0), (0, 0.5), (0.5, 0.5), (0.5, 1), (1, 1)]
    assert interp_roc(fpr, tpr, np.array([0.25]))[0] == pytest.approx(0.5)


def test_robust_limits_clip_one_huge_score_and_say_so():
    v = np.r_[np.random.default_rng(0).normal(0, 5, 300), 2.5e4]
    lo, hi, clipped = robust_limits(v)
    assert clipped and hi < 100 and lo > -100
    lo, hi, clipped = robust_limits(v[:-1])
    assert not clipped and lo <= v[:-1].min() and hi >= v[:-1].max()


# -- the page -----------------------------------------------------------------------------------------------------


def test_records_csv_has_file_row_values_and_ranks_among_members(audit):
    res, rec = audit
    assert list(rec.columns[:3]) == ["record_0based", "source", "row"] and rec["record_0based"].is_unique
    mem, non = rec[rec["is_member"] == 1], rec[rec["is_member"] == 0]
    assert sorted(mem["risk_rank"].astype(int)) == list(range(1, len(mem) + 1))
    assert non["risk_rank"].isna().all()
    assert set(rec["source"]) <= {"adult.data.gz", "adult.test.gz"} and (rec["row"] >= 1).all()
    for col in ["income", *res["data"]["sensitive"]]:
        assert col in rec.columns and col in res["data"]["record_columns"]
    assert set(rec["income"]) <= set(res["data"]["class_names"])


def test_nulls_never_show_and_no_python_dicts(audit):
    res, rec = audit
    res = copy.deepcopy(res)
    # strict JSON writes an unmeasurable number as null: blank out every kind of number the page shows
    for m in res["membership"].values():
        m["auc"], m["auc_ci"], m["advantage"] = None, [None, None], None
        for t in m["tpr_at_fpr"].values():
            t["tpr"], t["ci"] = None, [None, None]
        m["epsilon"]["epsilon_lb"] = None
    for c in res["verdict"]["checks"]:
        c["value"], c["interval"] = None, None
    res["dtp"]["max"] = res["dtp"]["mean"] = None
    res["dtp"]["noise_floor"]["median"] = None
    for a in res["attribute"].values():
        a["baseline_accuracy"] = a["alternative_advantage"] = None
        a["alternative_advantage_ci"] = [None, None]
    for p in res["property"].values():
        p["estimate"], p["no_model_interval"] = None, [None, None]
    res["mip"]["accuracy_cost"], res["mip"]["accuracy_cost_interval"] = None, [None, None]
    res["target"]["train_accuracy"] = None
    res["settings"]["pdtp_records"] = None
    text = visible_text(_render(res, rec))
    assert "not measured" in text
    for bad in (r"\bNone\b", r"\bnan\b", r"\bNaN\b", r"\{'"):
        assert not re.search(bad, text), (bad, re.search(rf".{{80}}{bad}.{{80}}", text))


def test_an_interval_over_the_whole_range_says_why(audit):
    """An AUC or TPR interval that spans (nearly) all of 0 to 1 says that too few records stand behind it, with the
    count: in the membership table and in the check's sentence."""
    from leakaudit.audit.config import Thresholds
    from leakaudit.audit.steps.membership import attack_checks
    from leakaudit.metrics import empirical_epsilon

    res, rec = audit
    res = copy.deepcopy(res)
    m = res["membership"]["loss"]
    m["auc_ci"] = [0.04, 0.99]
    m["tpr_at_fpr"]["0.001"] = {"tpr": 0.895, "ci": [0.0, 1.0]}
    text = visible_text(_render(res, rec))
    n1, n0 = m["n_members"], m["n_nonmembers"]
    # marked in the table (its cells stay narrow), the reason under it
    assert "[0.040, 0.990] †" in text and "89.50% [0.00%, 100.00%] †" in text
    assert (f"† loss threshold, AUC: nearly the whole range: too few records for the AUC ({n1:,} members, {n0:,} "
            "non-members).") in text
    assert (f"† loss threshold, TPR at FPR 0.001: the whole range: too few records for the TPR at 0.1% FPR "
            f"({n0:,} non-members, about {n0 * 0.001:.2g} of them above its threshold; {n1:,} members).") in text
    notes = re.findall(r"† [^†]*?: (?:nearly )?the whole range: too few records", text)
    assert text.count("†") == 2 * len(notes)  # each mark has its reason under the table
    # the check's own sentence says it too
    mm = {"n_members": 30, "n_nonmembers": 30, "auc": 0.55, "auc_ci": [0.05, 0.97],
          "tpr_at_fpr": {"0.01": {"tpr": 0.1, "ci": [0.0, 0.2]}}}
    eps = empirical_epsilon(np.r_[np.ones(30), np.zeros(30)], np.arange(60.0), delta=1e-5, confidence=0.95)
    auc = attack_checks("loss", mm, eps, thresholds=Thresholds(), confidence=0.95, epsilon_budget=None)[0]
    assert "[0.050, 0.970] (nearly the whole range: too few records for the AUC (30 members, 30 non-members))" in \
        auc.sentence, auc.sentence


def test_check_status_words_agree_with_the_numbers(audit):
    res, rec = audit
    res = copy.deepcopy(res)
    c = next(c for c in res["verdict"]["checks"] if c["id"] == "membership.loss.tpr_at_low_fpr")
    c.update(status="passed", value=0.011, interval=[0.002, 0.075], threshold=0.05)
    c2 = next(c for c in res["verdict"]["checks"] if c["id"] == "membership.loss.auc")
    c2.update(status="passed", value=0.52, interval=[0.48, 0.56], threshold=0.6)
    html = _render(res, rec)
    row = re.search(r"loss threshold: TPR at 1% FPR</td>(.*?)</tr>", html, re.DOTALL).group(1)
    assert ">undecided<" in row and "not shown above the threshold nor below it" in row
    assert "1.10% measured" in row and "7.50%" in row and "within the threshold" not in row
    row = re.search(r"loss threshold: AUC</td>(.*?)</tr>", html, re.DOTALL).group(1)
    assert ">shown below<" in row and "lies below 0.6" in row


#: a check's numbers for each status (an AUC against 0.6)
_STATUS_NUMBERS = {"exceeded": (0.7, [0.65, 0.75]), "shown below": (0.52, [0.48, 0.56]),
                   "undecided": (0.58, [0.55, 0.62]), "not measurable": (None, None)}


@pytest.mark.parametrize("outcome,statuses", [
    ("do not publish", ["exceeded", "shown below", "undecided", "not measurable"]),
    ("inconclusive", ["shown below", "undecided", "shown below", "not measurable"]),
    ("publish", ["shown below"] * 4)])
def test_every_surface_says_each_checks_status_in_the_same_words(audit, outcome, statuses):
    """One verdict, decided from checks of known status, read on every surface: the report (each check's row and
    the counts under the verdict), stdout, results.json, evidence.json and the notebook give the same status words
    and counts, which add up to the checks, and none says "passed"."""
    from leakaudit.audit.result.checks import Check
    from leakaudit.audit.result.evidence import build_evidence
    from leakaudit.audit.result.verdict import decide
    from leakaudit.cli.audit import summary_lines

    res, rec = audit
    res = copy.deepcopy(res)
    aucs = [c for c in res["verdict"]["checks"] if c["id"].endswith(".auc") and c["analysis"] == "membership"][:4]
    assert len(aucs) == 4
    checks = []
    for c, st in zip(aucs, statuses):
        value, interval = _STATUS_NUMBERS[st]
        checks.append(Check(**{**c, "status": st, "value": value, "interval": interval, "threshold": 0.6,
                               "describes": "model", "shows": "both", "fix": "give more records" if st in (
                                   "undecided", "not measurable") else ""}))
    verdict = decide(make_config(), checks)
    assert verdict.outcome == outcome
    res["verdict"] = {k: v for k, v in json.loads(verdict.to_json()).items() if k not in ("schema_version", "type")}
    result = read_result(res).with_records(rec)
    counts = {st: statuses.count(st) for st in ("exceeded", "shown below", "undecided", "not measurable")}
    assert result.verdict.counts == counts and sum(counts.values()) == result.verdict.n_checks == 4
    said = ", ".join(f"{n} {st}" for st, n in counts.items())

    html = render_report(result, rec)
    text = visible_text(html)
    assert f"Checks: {said}." in re.sub(r" ([,.])", r"\1", text)
    for c in checks:
        row = re.search(rf"{re.escape(_html.escape(c.name))}</td>\s*<td class=\"status [a-z-]+\">([^<]*)</td>",
                        html).group(1)
        assert row == c.status, (c.name, row)
    stdout = "\n".join(summary_lines(result))
    assert f"checks: {said};" in stdout
    for st in ("exceeded", "not measurable"):
        assert stdout.count(f"  {st}: ") == counts[st]
    assert stdout.count("  undecided: ") == counts["undecided"]  # safety shown: each undecided check is named
    notebook = result._repr_html_()
    for c in checks:
        assert f">{c.status}<" in notebook
    evidence = build_evidence(json.loads(result.to_json()))
    assert evidence["verdict"]["counts"] == counts
    assert [e["status"] for e in evidence["checks"] if e["id"] in {c.id for c in checks}] == \
        [c.status for c in result.verdict.checks]
    for surface in (text, stdout, notebook, result.to_json(), json.dumps(evidence)):
        assert not re.search(r"\bpassed\b", surface), re.search(r".{60}\bpassed\b.{60}", surface)


def _table(html: str) -> list[list[str]]:
    """The cells of the first table of ``html``, as a reader sees them, one list per row after the header."""
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", re.search(r"<table[^>]*>(.*?)</table>", html, re.DOTALL).group(1),
                      re.DOTALL)
    return [[" ".join(_html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in re.findall(
        r"<td[^>]*>(.*?)</td>", r, re.DOTALL)] for r in rows[1:]]


def _surfaces_agree(result, rec) -> None:
    """Each check read on every surface: results.json's numbers, evidence.json's, the report's checks table, the
    notebook's table and stdout give the same value, interval and threshold, a status from the closed set, and the
    sentence states them; the headline and the order of what decides it agree too."""
    from leakaudit.audit.result.checks import STATUSES
    from leakaudit.audit.result.evidence import build_evidence
    from leakaudit.cli.audit import summary_lines

    v = result.verdict
    stored = json.loads(result.to_json())["verdict"]["checks"]
    evidence = {e["id"]: e for e in build_evidence(json.loads(result.to_json()))["checks"]}
    for c in stored:
        assert {k: evidence[c["id"]][k] for k in ("status", "value", "interval", "threshold", "sentence")} == \
            {k: c[k] for k in ("status", "value", "interval", "threshold", "sentence")}, c["id"]
    html = render_report(result, rec)
    report = _table(html[html.index('<table id="checks-table">'):])
    notebook = _table(result._repr_html_())
    assert [r[0].removesuffix(" (describes the recipe)") for r in report] == [r[0] for r in notebook] == \
        [c["name"] for c in stored]
    for c, row, nb in zip(stored, report, notebook):
        assert row[1] == nb[1] == c["status"] and c["status"] in STATUSES, (row, nb)
        value, interval, threshold = row[2:5]
        assert nb[2:5] == [value, interval, threshold], (c["name"], nb, row)
        pct = value.endswith("%")
        number = (lambda t: float(t.rstrip("%")) / (100 if pct else 1))
        # the cell is results.json's value, rounded as printed (the same quantity, not another one)
        digits = len(value.rstrip("%").partition(".")[2])
        if c["value"] is not None:
            assert number(value) == pytest.approx(c["value"], abs=0.51 * 10 ** -(digits + 2 * pct)), (c, value)
        assert float(threshold.rstrip("%")) / (100 if pct else 1) == pytest.approx(c["threshold"])
        if c["interval"] is None:
            assert interval == "none"
        else:
            low = re.match(r"^(?:at least |\[)(-?[\d.]+%?)", interval).group(1)
            assert number(low) == pytest.approx(c["interval"][0], abs=0.51 * 10 ** -(digits + 2 * pct))
            assert interval.startswith("at least ") == (c["interval"][1] is None)
        # the sentence states the row's numbers: its value wherever it has one (a check not measured may state no
        # interval or threshold: it says why it was not)
        said = c["sentence"]
        if c["value"] is not None:
            assert value in said or (pct and f"{value[:-1]}%" in said), (value, said)
        if c["interval"] is not None or c["analysis"] == "dtp":
            assert (interval.removeprefix("[").split(",")[0] if interval != "none" else "") in said, (interval, said)
            assert re.search(rf"(threshold|above|against|than e\^){re.escape(' ' + threshold.removesuffix('.0'))}\b",
                             said.replace("the threshold", "threshold")), (threshold, said)
    # no parenthesis closes twice at a sentence's end ("against the level 0.05)).")
    for said in [v.headline, (v.recipe or {}).get("sentence") or ""] + [c["sentence"] for c in stored
                                                                          if c["analysis"] == "dtp"]:
        assert "))" not in said, said
    # one headline: results.json's in the library's words, the report's and stdout's as the command line says it
    lines = summary_lines(result)
    finding = v.said("finding", flags=True)
    assert lines[1] == f"verdict: {v.outcome.upper()}. {finding[:1].upper()}{finding[1:]}"
    assert v.said("headline", flags=True) == f"{v.outcome[:1].upper()}{v.outcome[1:]}: {finding}"
    assert v.said("headline", flags=True) in visible_text(html) and stored and v.headline == json.loads(
        result.to_json())["verdict"]["headline"]
    # what decides it, in one order on stdout and under "What to do next"
    first = v.to_decide()
    said = [ln for ln in lines if re.match(r"^  (undecided|not measurable): ", ln)]
    assert len(said) == len(first) and all(ln.startswith(f"  {c.status}: {c.name}: ") for ln, c in zip(said, first))
    if first and v.outcome == "inconclusive":
        nxt = visible_text(re.search(r'<h2 id="next">.*?</ul>', html, re.DOTALL).group(0))
        at = [re.search(re.escape(c.name) + "[:,]", nxt).start() for c in first if c.fix]  # a shared fix: one line
        assert at == sorted(at)
        assert f"first {first[0].name}, " in v.headline


def test_every_surface_gives_each_check_the_same_numbers_its_sentence_states(audit):
    """Issue 85: one quantity per column and one vocabulary of statuses, on a real audit's results read back."""
    res, rec = audit
    result = read_result(res).with_records(rec)
    _surfaces_agree(result, rec)
    # at smoke DTP-1 is measured on a sample, not measurable, and a profile measures it: that decides it first,
    # before the checks that need more records
    first = result.verdict.to_decide()[0]
    assert first.id == "dtp.dtp1" and first.status == "not measurable" and result.outcome == "inconclusive"
    assert "to decide, first DTP-1 rule (significant records), not measured, so it alone may withhold the model: " \
           "measure every member (--profile standard: PDTP of all 120 members, now 100)" in \
           result.verdict.said("headline", flags=True)


@pytest.mark.parametrize("means, lbs, sd, significant, status", [
    ([2.46, 1.8], [2.03, 1.2], [0.2, 0.3], [True, False], "exceeded"),
    ([0.9, 0.6], [0.4, 0.2], [0.2, 0.2], [False, False], "shown below"),
    ([1.3, 0.6], [0.7, 0.2], [0.3, 0.2], [False, False], "undecided"),
    ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [False, False], "shown below")])  # a deterministic learner: bin edges
def test_dtp1_states_one_quantity_on_every_surface(audit, means, lbs, sd, significant, status):
    """DTP-1's value is the largest change after re-measurement, its interval one-sided (at least the largest lower
    bound); the sentence states both, and every surface shows the same; a learner whose repeats agree exactly has its
    crossings said as bin edges crossed in rounding, never noise."""
    from types import SimpleNamespace

    from leakaudit.audit.result.checks import Check
    from leakaudit.audit.steps.dtp import _dtp_check
    from leakaudit.audit.result.verdict import decide

    res, rec = copy.deepcopy(audit[0]), audit[1]
    mem = rec[rec["is_member"] == 1]
    names = [f"{r['source']}, row {r['row']}" for _, r in mem.head(2).iterrows()]
    ctx = SimpleNamespace(cfg=make_config(), check_confidence=0.99, record_name=lambda i: names[i])
    test = SimpleNamespace(records=[0, 1], stage2_mean=means, lower_bound=lbs, sd=sd, significant=significant,
                           n_significant=sum(significant), p_adjusted=[0.001 if s else 1.0 for s in significant],
                           untested=[], n_repeats=16, looks=[16])
    check = _dtp_check(ctx, {"n_above": 2, "n_records": 1000, "max": 2.56}, test, None, 0.95)
    assert check.status == status and check.value == pytest.approx(max(max(means), 0.95))
    assert check.interval[0] == max(lbs) and not np.isfinite(check.interval[1])
    assert ("noise" in check.sentence) is False and ("bin edge crossed in rounding" in check.sentence) == (
        not any(sd))
    checks = [check if c["id"] == "dtp.dtp1" else Check(**c) for c in res["verdict"]["checks"]]
    verdict = decide(make_config(), checks, check_confidence=0.99)
    res["verdict"] = {k: v for k, v in json.loads(verdict.to_json()).items() if k not in ("schema_version", "type")}
    res["dtp"].update(n_above=2, records_above=names, n_significant=sum(significant),
                      records_significant=[n for n, s in zip(names, significant) if s], records_untested=[],
                      test={"records": names, "stage2_mean": means, "lower_bound": lbs, "sd": sd,
                            "significant": significant, "n_repeats": 16})
    result = read_result(res).with_records(rec)
    _surfaces_agree(result, rec)
    if not any(sd):  # a learner whose seed moves nothing: its measured seed noise is 0
        res["dtp"]["noise_floor"].update(median=0.0, p90=0.0)
    text = visible_text(render_report(read_result(res).with_records(rec), rec))
    assert ("a bin edge crossed in rounding, not noise" in text) == (not any(sd))
    assert ("the noise a single measurement carries" in text) == any(sd), text


@pytest.mark.parametrize("kind, says", [("xgboost", "min_child_weight"), ("lightgbm", "min_data_in_leaf"),
                                        ("demo", "differentially private")])
def test_what_to_do_next_offers_only_remedies_that_apply_to_the_model(audit, kind, says):
    """A boosted-tree model's leakage: its own leaf, depth and bin settings and its rare values, never DP training or
    MIP noise, which the audit says it cannot apply to it; LightGBM's DTP-1 records said to come from bin edges."""
    res, rec = copy.deepcopy(audit[0]), audit[1]
    mem = rec[rec["is_member"] == 1]
    res["target"]["kind"] = kind
    res["dtp"]["records_significant"] = [f"{mem.iloc[0]['source']}, row {mem.iloc[0]['row']}"]
    res["verdict"]["outcome"] = "do not publish"
    res["verdict"]["checks"] = [{**c, "status": "exceeded"} if c["id"] in ("dtp.dtp1", "membership.loss.auc") else c
                                for c in res["verdict"]["checks"]]
    nxt = visible_text(re.search(r'<h2 id="next">.*?</ul>', _render(res, rec), re.DOTALL).group(0))
    assert says in nxt
    assert ("MIP" in nxt or "differentially private" in nxt) == (kind == "demo")
    assert ("histogram bin edges" in nxt) == (kind == "lightgbm")


def test_a_fix_naming_a_setting_reads_as_the_flag_on_stdout_and_as_the_key_in_results_json(audit):
    """A check's fix names its settings as structured references (issue 62): stdout says each as the flag a user
    types, results.json and a library call's report as the argument or key, a command-line audit's report as the
    flag; the verdict's finding, which ends with that fix, alike. No sentence is rewritten after it is written."""
    from leakaudit.audit.result.checks import Check
    from leakaudit.audit.config import phrase
    from leakaudit.audit.result.verdict import decide
    from leakaudit.cli.audit import summary_lines

    res, rec = audit
    res = copy.deepcopy(res)
    c = next(c for c in res["verdict"]["checks"] if c["id"].endswith(".auc") and c["analysis"] == "membership")
    fix = phrase("raise the re-measured records ({0}) above 50 ({1}), or raise {2}", "dtp_test_max_records",
                 ("profile", "thorough"), "thresholds.low_fpr")
    check = Check(**{**c, "status": "not measurable", "value": None, "interval": None, "fix": fix,
                     "fix_parts": None})
    res["verdict"] = {k: v for k, v in json.loads(decide(make_config(), [check]).to_json()).items()
                      if k not in ("schema_version", "type")}
    library = ('raise the re-measured records (dtp_test_max_records) above 50 (profile="thorough"), or raise '
               "thresholds.low_fpr")
    flags = ("raise the re-measured records (dtp_test_max_records) above 50 (--profile thorough), or raise low_fpr "
             "in the [thresholds] table of a --config file")
    stored = res["verdict"]["checks"][0]
    assert stored["fix"] == library and stored["fix_parts"]["settings"][1] == {"key": "profile", "value": "thorough"}
    decide_it = f"to decide, first {check.name}, the only one open: "
    assert res["verdict"]["finding"].endswith(decide_it + f"{library}.")
    for command, said in (("leakaudit audit --profile smoke", flags), ("", library)):
        result = read_result({**res, "command": command}).with_records(rec)
        assert result.verdict.checks[0].fix == library  # the result holds the library's words, whoever ran it
        text = visible_text(render_report(result, rec))
        assert f"To measure it: {said}" in text and decide_it + f"{said}." in text
        assert (flags in text) == bool(command) and (library in text) == (not command)
    stdout = "\n".join(summary_lines(read_result(res)))
    assert f"  not measurable: {check.name}: {flags}" in stdout and decide_it + f"{flags}." in stdout
    assert "profile=" not in stdout and "thresholds." not in stdout


def test_records_table_lists_every_record_behind_the_verdict(audit):
    res, rec = audit
    res = copy.deepcopy(res)
    mem = rec[rec["is_member"] == 1]
    last = mem.sort_values("risk_rank").iloc[-1]  # the least risky member, far outside the top 15
    res["dtp"]["records_significant"] = [f"{last['source']}, row {last['row']}"]  # named as every sentence names it
    res["verdict"]["outcome"] = "do not publish"
    res["verdict"]["checks"] = [{**c, "status": "exceeded"} if c["id"] == "dtp.dtp1" else c
                                for c in res["verdict"]["checks"]]
    html = _render(res, rec)
    table = re.search(r'<table id="records-table">(.*?)</table>', html, re.DOTALL).group(1)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.DOTALL)
    assert len(rows) == 1 + 15 + 1
    hit = [r for r in rows if "DTP-1" in r]
    assert len(hit) == 1 and f"<td>{last['source']}, row {int(last['row'])}</td>" in hit[0]
    assert f"<td>{int(last['risk_rank'])}</td>" in hit[0] and f"sex: {last['sex']}" in hit[0]
    nxt = visible_text(re.search(r'<h2 id="next">.*?</ul>', html, re.DOTALL).group(0))
    assert f"{last['source']}, row {int(last['row'])}" in nxt and "reduce" in nxt


def test_sections_answer_their_question_against_a_baseline(audit):
    res, rec = audit
    text = visible_text(_render(res, rec))
    assert "an attacker guessing at random finds 1.0%" in text
    for name, p in res["property"].items():
        assert p["sentence"] and f"{name}: {p['sentence']}" in text
        assert p["no_model_interval"][0] <= p["no_model_estimate"] <= p["no_model_interval"][1]
    assert res["mip"]["sentence"][1:] in text and "constant_c" not in text
    assert "test accuracy" in text and "-MIP" in text
    # the demo's settings are shown in the demo's report, as the demo network
    assert "demo network" in text and "Adam" not in text


@pytest.mark.parametrize("layout", ["data", "train-test"])
def test_record_sources_point_at_the_row_in_the_users_file(tmp_path, layout):
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.pipeline import _record_sources

    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({"x": np.arange(n) * 10, "g": rng.choice(["a", "b"], n), "y": np.tile(["p", "q"], n // 2),
                       "member": rng.permutation(np.r_[np.ones(n // 2, int), np.zeros(n // 2, int)])})
    if layout == "data":
        df.to_csv(tmp_path / "all.csv", index=False)
        cfg = make_config(data=tmp_path / "all.csv", membership_column="member", label="y")
        files = {"all.csv": df}
    else:
        df[df.member == 1].drop(columns="member").to_csv(tmp_path / "m.csv", index=False)
        df[df.member == 0].drop(columns="member").to_csv(tmp_path / "n.csv", index=False)
        cfg = make_config(train=tmp_path / "m.csv", test=tmp_path / "n.csv", label="y")
        files = {"m.csv": df[df.member == 1].reset_index(drop=True), "n.csv": df[df.member == 0].reset_index(drop=True)}
    data = prepare_data(cfg)
    src = _record_sources(cfg, data)
    x = np.r_[data.frame_mem["x"], data.frame_non["x"]]
    for s, row, v in zip(src["source"], src["row"], x):
        assert files[s]["x"].iloc[row - 1] == v  # row 1 = the first row after the header
    assert set(src["files"]) == set(src["source"])


def test_roc_plot_states_the_level_it_draws_and_no_curve_below_one_nonmember(monkeypatch):
    """The bands are drawn at the checks' corrected level and the title says that level; neither the curve nor its
    band is drawn below the FPR of one non-member, which the data cannot estimate."""
    import matplotlib.axes

    from leakaudit.report.plots import roc_svg

    drawn = []
    real_plot = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot",
                        lambda self, x, y, *a, **k: drawn.append((k.get("label"), np.asarray(x)))
                        or real_plot(self, x, y, *a, **k))
    rng = np.random.default_rng(0)
    m = np.r_[np.ones(200), np.zeros(100)]
    svg = roc_svg({"attack": (m, rng.normal(size=300) + m)}, confidence=0.9958)
    assert "pointwise 99.58% bootstrap bands" in svg
    x = next(x for label, x in drawn if label == "attack")
    assert x.min() >= 1 / 100


def test_bootstrap_band_equals_roc_curve_of_each_resample():
    """The ROC band's resamples, counted from one sort, give bit for bit what roc_points and interp_roc give on each
    resample's own records (ties, and scores that a resample does not draw, included)."""
    from leakaudit.report.plots import _bootstrap_tpr

    grid = np.geomspace(1e-4, 1, 80)
    data = np.random.default_rng(3)
    for pos, neg in ((data.normal(0.3, 1, 400), data.normal(0, 1, 300)),
                     (data.integers(0, 5, 250).astype(float), data.integers(0, 4, 500).astype(float))):
        band = _bootstrap_tpr(pos, neg, grid, 10, np.random.default_rng(7))
        rng = np.random.default_rng(7)
        mm = np.r_[np.ones(pos.size, int), np.zeros(neg.size, int)]
        for b in range(10):
            pp, nn = pos[rng.integers(0, pos.size, pos.size)], neg[rng.integers(0, neg.size, neg.size)]
            assert np.array_equal(band[b], interp_roc(*roc_points(mm, np.r_[pp, nn]), grid))


@pytest.mark.parametrize("method, says, not_said", [
    ("exact: leave-one-out outputs that do not depend on the seed (measured once)",
     "the binning of the outputs explains them", "fresh seeds"),
    ("one-sided t-tests over 16 paired leave-one-out repeats",
     "re-measured with fresh seeds: a single measurement's noise explains them", "binning of the outputs")])
def test_dtp_answer_says_what_explains_records_above_that_are_not_significant(audit, method, says, not_said):
    """Records above DTP-1 once and not significant: for a seeded learner, re-measured with fresh seeds (noise); for one
    whose leave-one-out no seed moves, measured exactly, so only the output bins can explain them: nowhere on the page
    "fresh seeds" (it said "re-measured 1 times with fresh seeds")."""
    res, rec = copy.deepcopy(audit[0]), audit[1]
    recs = ["members.csv, row 1", "members.csv, row 2"]
    res["dtp"].update(rule="statistical", n_above=2, records_above=recs, n_significant=0, records_significant=[],
                      records_untested=[], test={"records": recs, "method": method, "significant": [False, False],
                                                 "stage2_mean": [0.9, 0.5], "lower_bound": [0.9, 0.5],
                                                 "n_repeats": 1 if method.startswith("exact") else 16})
    text = " ".join(visible_text(_render(res, rec)).split())
    assert says in text and not_said not in text
    exact = method.startswith("exact")
    assert ("each measured exactly (the rule applied)" in text) == exact
    assert ("Members whose PDTP exceeded 1, each measured exactly" in text) == exact  # the records' table
    assert ("mean change over repeats" in text) != exact
