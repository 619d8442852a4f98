"""The calibration suite (``benchmarks/calibration.py``): audits of models whose truth is known.

Default: three audits on breast cancer (a forest and the logistic pipeline trained on records disjoint from the
audited ones, and a forest that memorises a fifth of its members' flipped labels), end to end: rows logged, a
rerun skipping them, aggregates, the markdown's tables. The verdicts are asserted: the positive case is withheld,
and neither null case is (with 150 non-members the TPR checks are not measurable, so "inconclusive" is their
honest outcome).
Slow: the full suite against the issue's targets.
"""

from __future__ import annotations

import dataclasses
import json

import pytest


def test_calibration_small(load_benchmark, tmp_path, capsys):
    cal = load_benchmark("calibration")
    doc = tmp_path / "calibration.md"
    res = cal.main(["--set", "small", "--out", str(tmp_path), "--doc", str(doc)])
    log = tmp_path / "calibration_small.jsonl"
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in res["rows"]] and len(rows) == 3
    errors = {r["id"]: r.get("error") for r in rows if r["outcome"] == "error"}
    assert not errors, errors
    for r in rows:
        assert r["outcome"] in ("publish", "do not publish", "inconclusive")
        assert r["checks"] and all(c["status"] in ("exceeded", "shown below", "undecided", "not measurable")
                                   for c in r["checks"])
        assert r["audit_seconds"] > 0
    with capsys.disabled():  # every case's verdict, shown
        for r in rows:
            exc = [c["id"] for c in r["checks"] if c["status"] == "exceeded"]
            print(f"\ncalibration {r['kind']} {r['id']}: {r['outcome']} (exceeded: {', '.join(exc) or 'none'}; "
                  f"verdict schema {r['verdict_schema']}; audit {r['audit_seconds']} s)")
    # THE POSITIVE CASE MUST BE WITHHELD: a forest that memorised a fifth of its members' flipped labels leaks.
    pos = [r for r in rows if r["kind"] == "positive"]
    assert pos and all(r["outcome"] == "do not publish" for r in pos), [(r["id"], r["outcome"]) for r in pos]
    # THE NULL CASES MUST NOT BE: their models never saw the audited members (issue 27's false alarms).
    nul = [r for r in rows if r["kind"] == "null"]
    assert len(nul) == 2 and all(r["outcome"] != "do not publish" for r in nul), [(r["id"], r["outcome"]) for r in nul]

    agg = res["aggregates"]
    assert agg["null"]["overall"]["n"] == 2 and agg["positive"]["overall"]["n"] == 1
    assert set(agg["null"]["by_family"]) == {"random_forest", "pipeline"}
    b = agg["positive"]["overall"]["do_not_publish"]
    assert b["k"] == 1 and b["n"] == 1 and 0 < b["ci"][0] < 1 and b["ci"][1] == 1.0
    assert agg["null"]["by_check_family"] and set(agg["targets"]) == {"safety shown", "leakage shown"}
    assert set(agg["targets"]["safety shown"]) == {"null", "positive", "benign"}
    # the old rule, recomputed from the same audits' checks
    assert all(r["outcome_leakage_shown"] in ("publish", "do not publish", "inconclusive") for r in res["rows"])
    assert agg["positive"]["overall_leakage_shown"]["counts"]["do not publish"] == 1
    assert json.loads((tmp_path / "calibration_small.json").read_text())["aggregates"] == json.loads(json.dumps(agg))

    md = doc.read_text()
    for heading in ("## Cases", "### Null cases", "### Leaky (positive) cases", "leakage shown (recomputed)",
                    "| cases | audits | do not publish [95 % CI]", "| check | in audits | exceeded [95 % CI]"):
        assert heading in md, heading
    assert "2 cores" in md or f"{cal.os.cpu_count()} cores" in md

    # resumable: a second run skips every finished audit and writes no new row
    res2 = cal.main(["--set", "small", "--out", str(tmp_path), "--doc", str(doc)])
    assert len(log.read_text().splitlines()) == 3 and res2["resumed"]
    assert [r["outcome"] for r in res2["rows"]] == [r["outcome"] for r in rows]


def test_verdict_of_both_schemas(load_benchmark):
    """The aggregation reads the new verdict (outcome, checks) as it is and falls back to the old one (publish)."""
    load_benchmark("calibration")  # imports _calibration_cases as a module (its dataclass needs sys.modules)
    K = load_benchmark("_calibration_cases")

    checks = [{"id": "dtp.dtp1", "analysis": "dtp", "name": "DTP-1", "status": "passed", "value": 0.5,
               "interval": [0.1, 0.9], "threshold": 1.0, "sentence": "s", "describes": "recipe", "fix": ""},
              {"id": "membership.lira.auc", "analysis": "membership", "name": "LiRA: AUC", "status": "not measurable",
               "value": None, "interval": None, "threshold": 0.6, "sentence": "s", "describes": "model"}]
    new = K.verdict_of({"verdict": {"publish": False, "outcome": "inconclusive", "checks": checks, "reasons": []}})
    assert new["outcome"] == "inconclusive" and new["verdict_schema"] == "new"
    assert [c["id"] for c in new["checks"]] == ["dtp.dtp1", "membership.lira.auc"] and "fix" not in new["checks"][0]

    th = {"max_dtp": 1.0, "max_records_above_dtp": 0, "low_fpr": 0.001, "max_tpr_at_low_fpr": 0.01, "max_auc": 0.6,
          "max_attribute_advantage": 0.05}
    old_res = {"verdict": {"publish": False, "reasons": ["PDTP ..."], "passed": [], "thresholds": th},
               "dtp": {"n_above": 3, "n_records": 100, "max": 2.0},
               "membership": {"loss": {"auc": 0.5, "auc_ci": [0.45, 0.55],
                                       "tpr_at_fpr": {"0.001": {"tpr": float("nan"), "ci": [0, 0]}}}},
               "attribute": {"sex": {"advantage": 0.0, "advantage_ci": [-0.02, 0.02]}}}
    old = K.verdict_of(old_res)
    assert old["outcome"] == "do not publish" and old["verdict_schema"] == "old"
    st = {c["id"]: c["status"] for c in old["checks"]}
    assert st == {"dtp.dtp1": "exceeded", "membership.loss.auc": "passed",
                  "membership.loss.tpr_at_low_fpr": "not measurable", "attribute.sex.advantage": "passed"}
    cal = load_benchmark("calibration")
    assert cal.check_family("membership.lira.auc") == "membership.*.auc" and cal.check_family("dtp.dtp1") == "dtp.dtp1"


def _row(kind, outcome, checks, family="knn", loss=(0.5, 0.45, 0.55), **kw):
    return {"id": f"{kind}-{family}-{outcome}-{len(checks)}-{loss[1]}", "kind": kind, "family": family,
            "variant": "v", "dataset": "adult", "seed": 0, "outcome": outcome, "verdict_schema": "new",
            "checks": checks, "auc": {"loss": list(loss)}, "audit_seconds": 1.0, **kw}


def _check(cid, status, decision, describes="model", shows="both", interval=(0.4, 0.55), threshold=0.6):
    return {"id": cid, "analysis": cid.split(".")[0], "name": cid, "status": status, "value": 0.5,
            "interval": list(interval) if interval else None, "threshold": threshold, "sentence": cid,
            "describes": describes,
            "shows": shows, "decision": decision}


def test_aggregate_new_kinds_and_leakage_shown(load_benchmark):
    """Without audits: the benign kind (counted only when the loss AUC interval holds 0.5), the old rule recomputed
    from the stored checks, the targets under both burdens, and the round-robin run order."""
    cal = load_benchmark("calibration")
    below = _check("membership.loss.auc", "passed", "below")
    undecided = _check("membership.loss.auc", "passed", "undecided", interval=(0.45, 0.65))
    unmeasured = _check("dtp.dtp1", "not measurable", "undecided", interval=None, threshold=None)
    above = _check("membership.lira.auc", "exceeded", "above", interval=(0.7, 0.8))
    recipe = _check("dtp.dtp1", "exceeded", "above", describes="recipe", interval=None, threshold=None)
    rows = [_row("benign", "publish", [below]),
            _row("benign", "inconclusive", [undecided]),  # leakage shown: publish
            _row("benign", "publish", [below], loss=(0.58, 0.55, 0.61)),  # excluded: its loss AUC shows a gap
            _row("null", "inconclusive", [below, unmeasured]),  # inconclusive under both
            _row("null", "inconclusive", [below, recipe]),
            _row("positive", "do not publish", [above, unmeasured]),
            _row("positive", "inconclusive", [undecided], label_noise=0.0)]
    agg = cal.aggregate(rows)
    assert [r["outcome_leakage_shown"] for r in rows] == ["publish", "publish", "publish", "inconclusive",
                                                          "inconclusive", "do not publish", "publish"]
    assert agg["benign_excluded"] == [rows[2]["id"]]
    ts, tl = agg["targets"]["safety shown"], agg["targets"]["leakage shown"]
    assert (ts["benign"]["k"], ts["benign"]["n"]) == (1, 2) and (tl["benign"]["k"], tl["benign"]["n"]) == (2, 2)
    assert (ts["null"]["k"], ts["null"]["n"]) == (0, 2) and ts["null"]["met"] is False  # upper end above 10 %
    assert (ts["positive"]["k"], tl["positive"]["k"]) == (1, 1) and ts["positive"]["n"] == 2
    assert agg["positive_unflipped"]["safety shown"]["n"] == 2
    fam = agg["benign"]["by_check_family"]["membership.*.auc"]
    assert (fam["shown below"], fam["undecided"], fam["present"]) == (1, 1, 2)
    # the states partition the audits: a family with one check shown below and one unmeasured is undecided
    dtp_null = agg["null"]["by_check_family"]
    assert dtp_null["membership.*.auc"]["shown below"] == 2 and dtp_null["dtp.dtp1"]["not measurable"] == 1
    assert all(d["exceeded"] + d["shown below"] + d["undecided"] + d["not measurable"] + d["passed"] == d["present"]
               for d in dtp_null.values())
    # an older row (no decisions) gets no leakage-shown outcome and is left out of that rate
    old = _row("null", "publish", [{k: v for k, v in below.items() if k != "decision"}])
    assert cal.outcome_leakage_shown(old) is None

    K = cal.K
    cs = K.cases(n_null_seeds=2, n_positive_seeds=1, n_new_null_seeds=1, n_leaky_seeds=1, n_benign_seeds=2)
    assert len({c.id for c in cs}) == len(cs)
    assert {c.kind for c in cs} == {"null", "positive", "benign"}
    assert all(c.profile == "standard" and c.n_members >= 5000 and c.n_nonmembers >= 5000
               for c in cs if c.kind == "benign")
    order = cal.run_order(cs)
    assert sorted(c.id for c in order) == sorted(c.id for c in cs)
    groups = {(c.kind, c.family, c.variant, c.dataset) for c in cs}
    first = {(c.kind, c.family, c.variant, c.dataset) for c in order[:len(groups)]}
    assert first == groups  # every group once, first
    # resumed: the finished cases keep their ranks, so the order of the rest does not change
    done = {order[0].id, order[1].id}
    assert cal.run_order(cs, done) == order[2:]
    md = "\n".join(cal.run_section({"aggregates": agg, "rows": rows, "machine": {}}, "t"))
    assert "leakage shown (recomputed)" in md and "Every benign audit" in md and "**no**" in md


@pytest.mark.slow
def test_calibration_tiny_new_kinds(load_benchmark, tmp_path):
    """One small audit of each issue-47 kind (null k-NN, leaky 1-NN, benign logistic regression at smoke), end to
    end (about a minute): the 1-NN is withheld, the null k-NN is not."""
    cal = load_benchmark("calibration")
    res = cal.main(["--set", "tiny-new", "--out", str(tmp_path), "--doc", str(tmp_path / "c.md")])
    by = {r["kind"]: r for r in res["rows"]}
    assert set(by) == {"null", "positive", "benign"} and all(r["outcome"] != "error" for r in res["rows"])
    assert by["positive"]["outcome"] == "do not publish" and by["null"]["outcome"] != "do not publish"
    assert by["benign"]["loss_auc_contains_half"] in (True, False)


@pytest.mark.slow
def test_calibration_full_suite_meets_targets(load_benchmark, tmp_path):
    """The whole suite (null and leaky smoke audits, benign standard ones; about an hour or more on 2 cores)
    against the issue's targets, under the default burden of proof."""
    cal = load_benchmark("calibration")
    res = cal.main(["--out", str(tmp_path), "--doc", str(tmp_path / "calibration.md")])
    agg = res["aggregates"]
    for kind in ("null", "positive"):
        print(kind, agg[kind]["overall"]["counts"], agg[kind]["overall"]["do_not_publish"])
    assert agg["n_errors"] == 0, [r.get("error") for r in res["rows"] if r["outcome"] == "error"]
    t = agg["targets"]["safety shown"]
    assert t["null"]["met"] and t["positive"]["met"] and t["benign"]["met"], t


def test_profile_claims_judges_how_the_outcomes_of_one_case_relate():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import profile_claims as P

    ps = P.PROFILES
    assert P.judge(dict(zip(ps, ["publish", "inconclusive", "do not publish"])), ps) == "contradiction"
    assert P.judge(dict(zip(ps, ["inconclusive", "publish", "publish"])), ps) == "decided at a fuller profile only"
    assert P.judge(dict(zip(ps, ["do not publish", "inconclusive", "do not publish"])), ps) == \
        "decided at a faster profile only"
    assert P.judge(dict(zip(ps, ["inconclusive"] * 3)), ps) == "same"
    cs = P.cases("breast", ps, 2)
    assert len({c.id for c in cs}) == len(cs) and {c.profile for c in cs} == set(ps)
    assert all(c.dataset == "breast_cancer" for c in cs)
    rows = [{**dataclasses.asdict(c), "outcome": "inconclusive", "case_seconds": 1.0} for c in cs]
    s = P.summarise(rows, ps)
    assert s["n_cases"] == len(cs) // 3 and s["relations"] == {"same": len(cs) // 3}
    import calibration as C

    md = "\n".join(C.profile_section({**s, "table": P.table(s), "created": "2026-11-26T07:00:00+00:00",
                                      "command": "python benchmarks/profile_claims.py", "machine": {}}))
    assert f"**0 contradictions in {len(cs) // 3} cases.**" in md and "| relation |" in md


def test_population_cases_draw_disjoint_records_and_keep_old_ids(load_benchmark):
    """Issue 68's cases: the population is disjoint from the members, the non-members and the null target's own
    records (by value: drawn from the table without duplicate rows), the other three are those of the same case
    without a population, and the ids of the cases without one do not change."""
    import pandas as pd

    cal = load_benchmark("calibration")
    K = cal.K
    # the ids of the earlier sets, as their stored results name them
    assert K.Case("null", "knn", "k15", "adult", 0, 1000, 1000, 2000, distinct=True).id == "null-knn-k15-adult-m1000-s0"
    assert (K.Case("benign", "logistic", "c0.1", "adult", 300, 5000, 5000, profile="standard", distinct=True).id
            == "benign-logistic-c0.1-adult-m5000-s300-standard")
    pop = K.population_cases(5, 4, 3)
    assert len({c.id for c in pop}) == len(pop) == 5 * 5 + 4 * 4 + 2 * 3
    for c in pop:
        assert c.population == K.POPULATION_FACTOR * c.n_members and c.distinct and c.dataset == "adult"
        assert c.id == f"{c.base_id}-p{c.population}" == f"{dataclasses.replace(c, population=0, id='').id}-p{c.population}"
        assert cal.base_id({"id": c.id, "population": c.population}) == c.base_id
    assert {c.kind for c in pop} == {"null", "positive", "benign"}

    # a table with duplicate rows: 300 distinct records, 60 of them twice
    rng = __import__("numpy").random.default_rng(0)
    df = pd.DataFrame({"a": rng.permutation(300), "b": rng.normal(size=300), "y": rng.choice(["p", "q"], 300)})
    df = pd.concat([df, df.iloc[:60]], ignore_index=True).sample(frac=1.0, random_state=1, ignore_index=True)
    for kind, n_train, noise in (("null", 60, 0.0), ("positive", 0, 0.2)):
        case = K.Case(kind, "knn", "k15", "adult", 3, 40, 40, n_train, label_noise=noise, distinct=True,
                      population=80)
        mem, non, own, pop_df, info = K._split(case, df, "y")
        assert len(pop_df) == 80 == info["n_population"] and len(own) == n_train
        keys = [set(map(tuple, d[["a", "b"]].to_numpy())) for d in (mem, non, own, pop_df)]
        assert sum(map(len, keys)) == len(set().union(*keys)) == 160 + n_train  # disjoint, no copies within
        m0, n0, o0, p0, _ = K._split(dataclasses.replace(case, population=0, id=""), df, "y")
        assert mem.equals(m0) and non.equals(n0) and own.equals(o0) and p0.empty  # the same draw without it


def test_dropping_rmia_from_the_verdict(load_benchmark):
    """The design question's arithmetic on rows where the answer is known: RMIA the only exceeded check (dropping it
    publishes or leaves inconclusive), and a check whose interval reaches its threshold at 14 checks but not at 12."""
    cal = load_benchmark("calibration")
    conf = 1 - 0.05 / 14

    def chk(cid, status, interval=(0.44, 0.56), value=0.5, threshold=0.6, p=None):
        return {"id": cid, "analysis": cid.split(".")[0], "status": status, "value": value, "interval": list(interval) if interval else None,
                "threshold": threshold, "confidence": conf, "describes": "model", "shows": "both", "p_value": p,
                "sentence": cid}

    others = [chk(f"membership.{a}.{m}", "shown below") for a in ("loss", "lira", "shadow", "informia")
              for m in ("auc", "tpr_at_low_fpr")] + [chk(f"attribute.{c}.advantage", "shown below")
                                                     for c in ("sex", "race", "marital_status")]
    dtp = chk("dtp.dtp1", "shown below", interval=None, value=0.5, threshold=1.0, p=0.5)
    rmia = [chk("membership.rmia.auc", "exceeded", (0.62, 0.7), 0.66), chk("membership.rmia.tpr_at_low_fpr", "shown below")]
    row = {"id": "null-x-p1", "outcome": "do not publish", "verdict_schema": "new", "checks": others + [dtp] + rmia}
    assert len(row["checks"]) == 14 and cal.decide_default(cal.stored_checks(row)) == "do not publish"
    assert cal.attack_state(row, "rmia") == "exceeded" and cal.attack_state(row, "informia") == "not exceeded"
    assert cal.outcome_without(row, rejudge=False) == cal.outcome_without(row, rejudge=True) == "publish"
    # the upper end 0.6015 at 14 checks reaches 0.6; at 12 the interval narrows (z 2.911 -> 2.865) to 0.5999
    near = chk("membership.loss.auc", "undecided", (0.3985, 0.6015), 0.5)
    row2 = {**row, "outcome": "inconclusive",
            "checks": [near] + others[1:] + [dtp, chk("membership.rmia.auc", "shown below"), rmia[1]]}
    assert cal.decide_default(cal.stored_checks(row2)) == "inconclusive"
    assert cal.outcome_without(row2, rejudge=False) == "inconclusive"
    assert cal.outcome_without(row2, rejudge=True) == "publish"
    c = cal.stored_checks(row2)[0]
    assert cal.rejudged(c, 14, 14) is c and cal.rejudged(c, 14, 12).status == "shown below"
    # DTP-1 by its p-value: between the levels of 14 and 12 checks it becomes exceeded
    d = cal.stored_checks({**row, "checks": [dict(dtp, p_value=0.05 / 13.5)]})[0]
    assert cal.rejudged(d, 14, 12).status == "exceeded" and cal.rejudged(d, 14, 13).status == "exceeded"
    assert cal.rejudged(d, 14, 14).status == "shown below"


def test_benign_dtp_section_sorts_each_record_by_cause(load_benchmark):
    """The boosted section's reading of benchmarks/boosted_dtp_records.py: a record whose probability leaves the lowest
    bin and whose change vanishes on the full members' histogram bins, beside one that keeps it (another tree)."""
    cal = load_benchmark("calibration")

    def loo(row, p_full, p_loo, fixed):
        pf, pl = [1 - p_full, p_full], [1 - p_loo, p_loo]
        return {"row": row, "label": "a", "p_full": pf, "p_loo": pl, "bins_full": [int(p * 100) for p in pf],
                "bins_loo": [int(p * 100) for p in pl], "ln_ratio": [0.1, 1.7], "bin_aware": [0.0, 1.1],
                "trees_changed": 3, "n_trees": 10, "first_change": {
                    "tree": 2, "feature": "gain", "threshold_full": 0.5, "threshold_loo": 0.7,
                    "record_value_encoded": 0.6, "record_value": 4101, "members_with_that_value": 1},
                "fixed_bins": {"bin_aware": [0.0, fixed]}}

    entry = {"description": "a model", "outcome": "do not publish", "status": "exceeded", "describes": "model",
             "n_records_measured": 100, "n_above_stage1": 3, "n_tested": 3, "n_repeats": 16, "method": "t-tests",
             "n_significant": 2, "retrains_exactly": True, "classes": ["a", "b"],
             "records": [{"record": "row 7", "mean": 1.1, "sd": 0.0, "lower_bound": 1.1, "p_adjusted": 0.0}],
             "leave_one_out": [loo(7, 0.035, 0.006, 0.0), loo(9, 0.20, 0.05, 1.2)]}
    text = "\n".join(cal.benign_dtp_section({"case-x": entry}))
    assert "row 7: one side in the lowest bin" in text and "unbinned ln ratios are 1.70" in text
    assert "row 7: at most 1 on the full members' histogram bins" in text
    assert "row 9: above 1 on the full members' bins as well" in text
    assert "across the record's own 0.6000" in text and "not across" not in text
    assert "retrains the given model exactly" in text


def test_dtp_entry_says_how_its_records_were_measured(load_benchmark):
    """A seeded learner's records are re-measured over paired repeats (a mean, its spread and lower bound); an exact
    leave-one-out is measured once, so its entry names no repeats and no spread ("1 paired repeats", "sd 0.00")."""
    cal = load_benchmark("calibration")
    base = {"description": "a model", "outcome": "do not publish", "status": "exceeded", "n_records_measured": 100,
            "n_above_stage1": 2, "n_tested": 2, "n_significant": 1, "classes": ["a", "b"],
            "records": [{"record": "row 7", "mean": 1.25, "sd": 0.0, "lower_bound": 1.25, "p_adjusted": 0.0}]}
    exact = "\n".join(cal.dtp_entry_lines("c", {**base, "n_repeats": 1, "method": "exact: measured once"}))
    assert "2 measured exactly (exact: measured once), 1 significant: row 7 1.25 (adjusted p 0)." in exact
    assert "repeat" not in exact and "sd " not in exact
    seeded = "\n".join(cal.dtp_entry_lines("c", {**base, "n_repeats": 16, "method": "t-tests"}))
    assert "2 re-measured with 16 paired repeats (t-tests)" in seeded
    assert "row 7 mean 1.25 (sd 0.00, lower bound 1.25, adjusted p 0)" in seeded


def test_bins_remedy_section_says_what_the_rates_say(load_benchmark, monkeypatch):
    """The remedy section (``--set lightgbm-bins``) reads its conclusion off the published rates: "does not remedy"
    only when the changed recipe is published no more often than the family's, and counts the records whose change
    vanishes on fixed bins."""
    cal = load_benchmark("calibration")

    def row(seed, outcome, auc=(0.5, 0.48, 0.52)):
        return {"id": f"benign-lightgbm-v-adult-m5000-s{seed}-standard", "kind": "benign", "outcome": outcome,
                "description": "LGBMClassifier(min_data_in_bin=50)", "auc": {"loss": list(auc)},
                "train_accuracy": 0.86, "test_accuracy": 0.85, "audit_seconds": 200.0,
                "checks": [{"id": "dtp.dtp1", "status": "exceeded" if outcome == "do not publish" else "passed",
                            "shows": "both"}]}

    family = [row(300, "publish"), row(301, "do not publish"), row(302, "do not publish")]
    fixed = {"leave_one_out": [{"fixed_bins": {"bin_aware": [0.0, 0.4]}}, {"fixed_bins": {"bin_aware": [1.3, 0.0]}}]}
    same = {"rows": [row(300, "publish"), row(301, "do not publish"), row(302, "publish", (0.6, 0.58, 0.62))],
            "family_rows": family}
    text = "\n".join(cal.bins_remedy_section(same, {}))
    assert "**Published: 1/2 = 50.0 %" in text and "against 1/3 = 33.3 %" in text  # the AUC 0.6 audit not counted
    assert "published more often (1/2 against 1/3" in text and "does not remedy" not in text
    worse = {"rows": [row(300, "do not publish"), row(301, "do not publish")], "family_rows": family}
    monkeypatch.setattr(cal, "dtp_entry_lines", lambda cid, e: [f"entry {cid}"])  # each entry's own text: tested above
    text = "\n".join(cal.bins_remedy_section(worse, {worse["rows"][0]["id"]: fixed, "another-case": fixed}))
    assert "does not remedy" in text and "(0/2 against 1/3)" in text
    assert "1 of 2 change by at most 1 on the full members' bins" in text and "and 1 by more than 1" in text
    assert text.count("entry ") == 1  # only this set's audits
