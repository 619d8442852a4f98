"""The re-identification, attribute inference and reconstruction bounds an epsilon implies (leakaudit.dpaudit.risk),
and where the audit states them: results.json's sections, the report's sentences, evidence.json's epsilon checks."""

import numpy as np
import pytest

from leakaudit.audit.result.evidence import _beside
from leakaudit.audit.result.sections import DpSection, EpsilonBound
from leakaudit.dpaudit.risk import audit_baselines, risk_bounds, success_bound
from leakaudit.report.html import _risk


@pytest.mark.parametrize("b", [0.001, 0.2, 0.5, 0.9])
def test_bound_is_the_baseline_at_zero_and_nears_one_at_large_epsilon(b):
    assert success_bound(0.0, 0.0, b) == pytest.approx(b)
    assert success_bound(0.0, 1e-5, b) == pytest.approx(b + 1e-5)
    assert success_bound(30.0, 0.0, b) == pytest.approx(1.0)


def test_bound_is_monotone_in_epsilon_and_delta():
    eps = np.linspace(0, 8, 33)
    for b in (0.001, 0.3):
        by_eps = [success_bound(e, 1e-5, b) for e in eps]
        assert np.all(np.diff(by_eps) >= 0) and by_eps[-1] > by_eps[0]
        by_delta = [success_bound(1.0, d, b) for d in (0, 1e-6, 1e-3, 0.1)]
        assert np.all(np.diff(by_delta) > 0)
    # (1, 0)-DP at a 1/2 baseline: 1 - e^-1 / 2
    assert success_bound(1.0, 0.0, 0.5) == pytest.approx(1 - np.exp(-1) / 2)


def test_audit_baselines_and_sentences():
    X = np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = np.array([0, 1, 1, 1])
    base = audit_baselines(X, y)
    assert {k: v[0] for k, v in base.items()} == {"reidentification": 0.25, "attribute_inference": 0.75,
                                                  "reconstruction": 0.5}
    # a sensitive column is what attribute inference guesses (the most guessable of several); units are whom
    # re-identification picks
    sens = audit_baselines(X, y, sensitive={"sex": np.array(["F", "M", "F", "F"]), "race": np.array(["a", "b", "c",
                                                                                                     "a"])},
                           n_units=2)
    assert sens["attribute_inference"] == (0.75, "guessing the most common value of the sensitive column 'sex'")
    assert sens["reidentification"] == (0.5, "picking the target among the 2 units (persons)")
    assert sens["reconstruction"] == base["reconstruction"]
    claimed = risk_bounds(1.0, 1e-5, base, claimed=True)
    shown = risk_bounds(1.0, 1e-5, base, claimed=False)
    assert claimed["reidentification"]["bound"] == shown["reidentification"]["bound"] > 0.25
    assert claimed["reidentification"]["sentence"].startswith("if the claimed epsilon 1.00")
    assert "no smaller bound can be claimed" in shown["attribute_inference"]["sentence"]
    # they validate as results.json's sections
    EpsilonBound.model_validate({"epsilon_lb": 1.0, "measurable": True, "risk": shown})
    dp = DpSection.model_validate({"claimed_epsilon": 1.0, "claimed_risk": claimed})
    assert _risk(dp.claimed_risk).count(".") >= 3 and _risk(dp.claimed_risk).startswith(" If the claimed")
    assert _risk(dp.risk) == "" and "risk" not in dp.model_dump()


def test_evidence_states_the_risk_beside_an_epsilon_check_only():
    risk = risk_bounds(0.5, 1e-5, {"reidentification": (0.01, "picking")}, claimed=False)
    results = {"membership": {"lira": {"epsilon": {"epsilon_lb": 0.5, "risk": risk}}}}
    entry = {"id": "membership.lira.epsilon", "analysis": "membership"}
    assert _beside(entry, results)["risk"] == risk
    assert "risk" not in _beside({"id": "membership.lira.auc", "analysis": "membership"}, results)
    assert _beside({"id": "membership.lira.epsilon", "analysis": "membership"}, {"membership": {}}) == entry


def test_a_claimed_epsilon_states_its_risk_in_results_and_report(tmp_path):
    import json

    from leakaudit.audit import make_config, run_audit

    out = tmp_path / "run"
    run_audit(make_config(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3, claimed_epsilon=8.0,
                          epsilon_delta=1e-4), out, verbose=False)
    dp = json.loads((out / "results.json").read_text())["dp"]
    assert set(dp["claimed_risk"]) == {"reidentification", "attribute_inference", "reconstruction"}
    assert dp["risk"]["reidentification"]["bound"] <= dp["claimed_risk"]["reidentification"]["bound"]
    assert dp["claimed_risk"]["reidentification"]["baseline"] == pytest.approx(1 / 150)
    html = (out / "report.html").read_text()
    assert "If the claimed epsilon 8.00 (delta 0.0001) holds, re-identification succeeds at most" in html
