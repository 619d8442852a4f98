"""The calibration suite (``benchmarks/calibration.py``): audits of models whose truth is known.

Default: three audits on breast cancer (a forest and the logistic pipeline trained on records disjoint from the
audited ones, and a forest that memorises a fifth of its members' flipped labels), end to end: rows logged, a
rerun skipping them, aggregates, the markdown's tables. The verdicts are asserted: the positive case is withheld,
and neither null case is (with 150 non-members the TPR checks are not measurable, so "inconclusive" is their
honest outcome).
Slow: the full suite against the issue's targets.
"""

from __future__ import annotations

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
        assert r["checks"] and all(c["status"] in ("exceeded", "passed", "not measurable") for c in r["checks"])
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
    assert agg["null"]["by_check_family"] and set(agg["targets"]) == {"null", "positive"}
    assert json.loads((tmp_path / "calibration_small.json").read_text())["aggregates"] == json.loads(json.dumps(agg))

    md = doc.read_text()
    for heading in ("## Cases", "### Null cases", "### Positive cases", "| target | measured | met |",
                    "| cases | audits | do not publish [95 % CI]", "| check | in audits | exceeded [95 % CI]"):
        assert heading in md, heading
    assert "2 cores" in md or f"{cal.os.cpu_count()} cores" in md

    # resumable: a second run skips every finished audit and writes no new row
    res2 = cal.main(["--set", "small", "--out", str(tmp_path), "--doc", str(doc)])
    assert len(log.read_text().splitlines()) == 3 and res2["resumed"]
    assert [r["outcome"] for r in res2["rows"]] == [r["outcome"] for r in rows]


def test_verdict_of_both_schemas(load_benchmark):
    """The aggregation reads the new verdict (outcome, checks) as it is and falls back to the old one (publish)."""
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


@pytest.mark.slow
def test_calibration_full_suite_meets_targets(load_benchmark, tmp_path):
    """The whole suite (168 smoke audits, ~15 min on 2 cores) against the issue's targets."""
    cal = load_benchmark("calibration")
    res = cal.main(["--out", str(tmp_path), "--doc", str(tmp_path / "calibration.md")])
    agg = res["aggregates"]
    for kind in ("null", "positive"):
        print(kind, agg[kind]["overall"]["counts"], agg[kind]["overall"]["do_not_publish"])
    assert agg["n_errors"] == 0, [r.get("error") for r in res["rows"] if r["outcome"] == "error"]
    nul, pos = agg["null"]["overall"]["do_not_publish"], agg["positive"]["overall"]["do_not_publish"]
    assert nul["rate"] <= cal.NULL_MAX_RATE and nul["ci"][1] <= cal.NULL_MAX_UPPER, nul
    assert pos["rate"] >= cal.POSITIVE_MIN_RATE, pos
