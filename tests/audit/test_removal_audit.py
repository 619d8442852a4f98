"""When DTP-1 is exceeded, the audit measures what removing the records would change, and the report says it."""

from __future__ import annotations

import html as _html
import re

import numpy as np

import leakaudit.audit.config as config
from leakaudit.audit import make_config, run_audit


def test_audit_measures_the_effect_of_removing_the_dtp1_records(tmp_path, monkeypatch, capsys):
    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={"dtp_removal_seeds": 2}))
    cfg = make_config(n_members=200, n_nonmembers=200, profile="smoke", dtp_rule="long", seed=1,
                      cache_dir=tmp_path / "cache")
    res = run_audit(cfg, tmp_path / "out", verbose=True)
    # its progress line says its share of the time, and what skips it
    err = capsys.readouterr().err
    assert re.search(r"^  dtp_removal done in [0-9.]+ s \([\d,]+ models\), \d+% of the audit's time so far "
                     r"\(removal=False, --no-removal skips it\)", err, flags=re.M), err
    check = next(c for c in res.verdict.checks if c.id == "dtp.dtp1")
    assert check.status == "exceeded", "this setting is chosen so that Long et al.'s raw rule is exceeded"
    r = res.dtp["removal"]
    assert r["removed"] == res.dtp["records_above"]
    assert r["records_measured"] == res.dtp["n_records"] - len(r["removed"])
    assert r["records_significant_after"] is None  # the raw rule: one measurement, no test
    assert not set(r["records_above_after"]) & set(r["removed"])
    assert np.isfinite(r["max_after"]) and r["n_seeds"] == 2 and r["n_eval"] == 200
    lo, hi = r["accuracy_cost_interval"]
    assert lo <= r["accuracy_cost"] <= hi
    assert "dtp_removal" in res.timings
    html = (tmp_path / "out" / "report.html").read_text()
    assert f"Measured: with these {len(r['removed'])} records removed" in html
    # a difference of accuracies is in percentage points, and the report says what the measurement cost
    html = _html.unescape(html)
    assert re.search(r"\(a (cost|gain) of -?\d+\.\d\d percentage points; the cost's interval \[-?\d+\.\d\d, "
                     r"-?\d+\.\d\d\] percentage points", html), html
    share = res.timings["dtp_removal"] / sum(res.timings.values())
    assert (f"This measurement took {res.timings['dtp_removal']:,.1f} s, {share:.0%} of the audit's "
            f"{sum(res.timings.values()):,.1f} s by stage; the setting removal = false (--no-removal) skips it") in html


def test_the_summary_says_what_the_removal_analysis_cost():
    from leakaudit.cli.audit import removal_cost

    timings = {"data": 1.0, "membership": 100.0, "dtp": 150.0, "dtp_removal": 300.0, "mip": 49.0}
    # its share of the audit's wall time (what the progress line says), not of the stages' sum (600 s)
    assert removal_cost(timings, 750.0) == ("the removal analysis took 5 min 0 s, 40% of the audit's 12 min 30 s; "
                                            "--no-removal skips it")
    assert removal_cost({k: v for k, v in timings.items() if k != "dtp_removal"}, 750.0) == ""


def test_smoke_profile_does_not_measure_it_and_says_so(tmp_path):
    cfg = make_config(n_members=200, n_nonmembers=200, profile="smoke", dtp_rule="long", seed=1,
                      cache_dir=tmp_path / "cache")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    assert "removal" not in res.dtp and "dtp_removal" not in res.timings
    html = (tmp_path / "out" / "report.html").read_text()
    assert "this audit did not measure what removing them would change" in html


def test_many_members_measured_screen_the_remeasurement_and_the_report_says_how(tmp_path, monkeypatch):
    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={
        "dtp_removal_seeds": 2, "pdtp_screen_sample": 20, "pdtp_screen_fraction": 0.1}))
    cfg = make_config(n_members=200, n_nonmembers=200, profile="smoke", dtp_rule="long", seed=1,
                      cache_dir=tmp_path / "cache")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    r = res.dtp["removal"]
    sc = r["screening"]  # the DTP stage measured 100 members, more than 2 x 20
    assert sc is not None and sc["n_sample"] <= 20
    assert r["records_measured"] + sc["n_unmeasured"] == 200 - len(r["removed"])
    html = (tmp_path / "out" / "report.html").read_text()
    assert "with the largest PDTP before and a random" in html


def test_removal_false_skips_it_and_says_what_it_would_cost(tmp_path, monkeypatch):
    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={"dtp_removal_seeds": 2}))
    cfg = make_config(n_members=200, n_nonmembers=200, profile="smoke", dtp_rule="long", seed=1, removal=False,
                      cache_dir=tmp_path / "cache")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    assert next(c for c in res.verdict.checks if c.id == "dtp.dtp1").status == "exceeded"
    assert "removal" not in res.dtp and "dtp_removal" not in res.timings
    skip = next(s for s in res.skipped if s["name"] == "removing the records that break DTP-1")
    n = len(res.dtp["records_above"])
    assert f"without the {n} record" in skip["fix"] and "over 2 paired seeds" in skip["fix"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "--no-removal" in html and "--removal:" in html  # the command line's words for a command-line audit
