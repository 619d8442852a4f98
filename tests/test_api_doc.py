"""docs/api.md is a notebook walk-through: its code blocks are run here, in order, in one namespace."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_docs_api_walkthrough_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 5, "docs/api.md lost its code blocks"
    ns = {}
    try:
        for i, code in enumerate(blocks):
            try:
                exec(compile(code, f"docs/api.md block {i + 1}", "exec"), ns)
            except Exception as exc:  # noqa: BLE001
                pytest.fail(f"docs/api.md block {i + 1} failed: {type(exc).__name__}: {exc}")
    finally:  # the walk-through's plug-ins stay out of the other tests' audits
        from leakaudit.audit.plan import _REGISTERED
        from leakaudit.membership._registry import ATTACKS

        _REGISTERED["tabular"].pop("top_confidence_gap", None)
        ATTACKS._entries.pop("confidence_gap", None)
    out = capsys.readouterr().out
    result = ns["result"]
    assert result.outcome in ("publish", "do not publish", "inconclusive")
    assert sorted(p.name for p in (ns["work"] / "audit").iterdir()) == ["evidence.json", "records.csv", "report.html",
                                                                         "results.json"]
    # the registered attack ran, was counted in the verdict and appears in the report
    assert "membership.confidence_gap.auc" in [c.id for c in result.checks]
    assert "score_confidence_gap" in result.records.columns
    assert "confidence gap: AUC" in result._repr_html_()
    assert "membership.loss.auc" in out  # the checks table was printed
    # the boosted libraries' blocks audited each model with its own library's learner and recipe
    for name, recipe in (("xgb_result", "XGBoost binary:logistic, 10 rounds"), ("lgbm_result", "LightGBM binary, 10 "
                         "rounds"), ("cb_result", "CatBoost Logloss, 10 iterations")):
        assert recipe in ns[name].target.description, name
    # the registered analysis ran with its planned check, in the last audit of the walk-through
    assert result.analyses["top_confidence_gap"].values["gap"] == pytest.approx(
        next(c.value for c in result.checks if c.id == "top_confidence_gap.gap"))
    assert result.verdict.planned_checks["top_confidence_gap"] == 1
    import shutil

    shutil.rmtree(ns["work"], ignore_errors=True)


def test_registered_attack_is_shown_in_the_report(tmp_path):
    """A registered attack appears under its display name in report.html (stored in results.json by the audit)."""
    import numpy as np
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    import leakaudit
    from leakaudit.membership import Attack, true_class_probability

    class Conf(Attack):
        name = "conf_only"
        needs = ()

        def run(self, inputs):
            s = true_class_probability(inputs.probs, inputs.y)
            return self.result(s, (s > 0.5).astype(int))

    leakaudit.register_attack("conf_only", Conf, description="the true-label confidence", display="bare confidence",
                              audit="always", force=True)
    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(400, 3))
        y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
        df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(y == 1, "yes", "no"))
        model = LogisticRegression().fit(df.iloc[:200][["a", "b", "c"]], df.iloc[:200]["label"])
        res = leakaudit.audit(model, df.iloc[:200], df.iloc[200:], label="label", profile="smoke",
                              cache_dir=str(tmp_path / "cache"))
        assert "conf_only" in res.membership
        assert "membership.conf_only.tpr_at_low_fpr" in [c.id for c in res.checks]
        res.save(tmp_path / "out")
        assert "bare confidence" in (tmp_path / "out" / "report.html").read_text()
    finally:
        from leakaudit.membership._registry import ATTACKS

        ATTACKS._entries.pop("conf_only", None)
