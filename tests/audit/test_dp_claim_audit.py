"""The audit with a claimed DP epsilon: the demo trains by DP-SGD, the one-run audit checks the claim, the report
shows the claim beside every attack's empirical epsilon."""

import json

import pytest

from leakaudit.audit import make_config, run_audit

pytest.importorskip("torch")
pytest.importorskip("dp_accounting")


@pytest.mark.slow  # a DP-SGD target trained and audited end to end (about 30 s)
def test_claimed_epsilon_demo(tmp_path):
    out = tmp_path / "run"
    run_audit(make_config(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3, claimed_epsilon=8.0,
                          epsilon_delta=1e-4), out, verbose=False)
    d = json.loads((out / "results.json").read_text())
    assert "DP-SGD" in d["target"]["description"]
    dp = d["dp"]
    assert dp["claimed_epsilon"] == 8.0 and dp["accounted_epsilon"] <= 8.0 and dp["m"] == 200
    assert 0 <= dp["epsilon_lower_bound"] <= 8.0 and dp["verdict"] == "consistent with the claim"
    check = next(c for c in d["verdict"]["checks"] if c["id"] == "dp.one_run")
    assert check["status"] == "undecided" and check["threshold"] == 8.0
    html = (out / "report.html").read_text()
    assert "(claimed 8)" in html and "claimed epsilon of 8 (delta 0.0001)" in html
    assert "A one-run audit of the training recipe (200 gradient canaries" in html


def test_without_a_claim_nothing_changes(tmp_path):
    from leakaudit.audit.steps.dp import dp_analysis

    class Ctx:
        cfg = make_config(profile="smoke")

    a = dp_analysis(Ctx())
    assert a.summary is None and a.checks == () and a.skipped == ()
