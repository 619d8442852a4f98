"""An analysis registered from outside leakaudit joins the plan: it runs with a seed of the audit's own, its checks are
planned and judged like the built-in ones, its section says what it is, and the report re-renders from the saved
files in a process that never saw the plug-in."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import leakaudit
from leakaudit.audit import plan as plan_module
from leakaudit.audit.result.checks import Analysis, Check
from leakaudit.exceptions import LeakauditError


def _tables(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    y = X[:, 0] + 0.5 * rng.normal(size=2 * n) > 0
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(y, "yes", "no"))
    return df.iloc[:n].reset_index(drop=True), df.iloc[n:].reset_index(drop=True)


def _confidence_gap(ctx, done):
    """The model's mean top-class probability on the members minus on the non-members, with a bootstrap interval
    drawn from the audit's own seed for this analysis."""
    t = ctx.target
    m, n = t.probs_mem.max(axis=1), t.probs_non.max(axis=1)
    rng = np.random.default_rng(ctx.seed_for("confidence_gap"))
    boots = [rng.choice(m, len(m)).mean() - rng.choice(n, len(n)).mean() for _ in range(200)]
    lo, hi = np.quantile(boots, [(1 - ctx.check_confidence) / 2, (1 + ctx.check_confidence) / 2])
    gap = float(m.mean() - n.mean())
    check = Check(id="confidence_gap.gap", analysis="confidence_gap", name="confidence gap", value=gap,
                  interval=(float(lo), float(hi)), threshold=0.5, confidence=ctx.check_confidence,
                  status="exceeded" if lo > 0.5 else "passed", sentence=f"confidence gap {gap:.3f}")
    return Analysis(name="confidence_gap", summary={"gap": gap, "seed": ctx.seed_for("confidence_gap")},
                    checks=(check,), per_record={"confidence": np.r_[m, n]})


@pytest.fixture
def registered():
    step = leakaudit.register_analysis("confidence_gap", _confidence_gap, title="confidence gap",
                                       description="mean top-class probability, members minus non-members", checks=1)
    yield step
    plan_module._REGISTERED["tabular"].pop("confidence_gap", None)


def test_a_registered_analysis_joins_the_audit_and_renders_without_the_plug_in(registered, tmp_path):
    mem, non = _tables()
    model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", seed=7)
    section = res.analyses["confidence_gap"]
    assert section.title == "confidence gap" and section.description.startswith("mean top-class")
    assert section.values["seed"] == leakaudit.audit(model, mem, non, label="label", profile="smoke",
                                                     seed=7).analyses["confidence_gap"].values["seed"]
    assert res.verdict.planned_checks["confidence_gap"] == 1
    assert [c.id for c in res.checks if c.analysis == "confidence_gap"] == ["confidence_gap.gap"]
    assert "confidence" in res.records.columns
    out = res.save(tmp_path / "out")
    saved = json.loads((out / "results.json").read_text())
    assert saved["analyses"]["confidence_gap"]["values"]["gap"] == pytest.approx(section.values["gap"])
    assert saved["membership"]["lira"]["display"] == "LiRA"
    (out / "report.html").unlink()
    # a fresh process that never registered the analysis
    r = subprocess.run([sys.executable, "-m", "leakaudit.cli", "report", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text()
    assert "mean top-class probability, members minus non-members" in html and "confidence gap" in html
    assert "LiRA online, per-record variance" in html  # the attack's description, read from results.json


def test_a_check_not_planned_is_refused(tmp_path):
    leakaudit.register_analysis("confidence_gap", _confidence_gap, title="confidence gap", description="x", checks=0)
    try:
        mem, non = _tables()
        model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
        with pytest.raises(LeakauditError, match="made 1 checks but planned 0"):
            leakaudit.audit(model, mem, non, label="label", profile="smoke")
    finally:
        plan_module._REGISTERED["tabular"].pop("confidence_gap", None)


@pytest.mark.parametrize("kwargs, words", [
    (dict(name="Bad Name"), "name must be lower-case"),
    (dict(name="dtp"), "'dtp' exists already"),
    (dict(run=3), "run must be callable"),
    (dict(checks=-1), "checks must be"),
    (dict(modality="image"), "modality must be one of"),
    (dict(description=""), "description must be a non-empty string"),
])
def test_register_analysis_refuses_bad_arguments_by_name(kwargs, words):
    args = dict(name="x_analysis", run=_confidence_gap, title="t", description="d")
    args.update(kwargs)
    with pytest.raises(LeakauditError, match=words):
        leakaudit.register_analysis(**args)
    assert "x_analysis" not in plan_module._REGISTERED["tabular"]


def test_report_command_refuses_a_folder_without_results(tmp_path):
    from leakaudit.cli import main

    assert main(["report", str(tmp_path)]) == 2
    (tmp_path / "results.json").write_text("{not json")
    assert main(["report", str(tmp_path)]) == 2
