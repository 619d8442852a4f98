"""Predictions-only audits, where quantile regression is the attack that needs no recipe: its checks on models
whose truth is known, over seeds. Null: a forest trained on records disjoint from the members and the non-members
(nothing to find). Positive: a forest with fully grown trees trained on the members with a fifth of their labels
flipped (it memorises them)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit import make_config, run_audit

SEEDS = range(5)


def _audit(tmp_path, seed: int, leaks: bool) -> dict:
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    frame = load_breast_cancer(as_frame=True).frame
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(frame))
    mem, non, other = idx[:180], idx[180:360], idx[360:]
    X, y = frame.drop(columns=["target"]).to_numpy(), frame["target"].to_numpy()
    if leaks:
        y_fit = y[mem].copy()
        flip = rng.choice(len(mem), size=len(mem) // 5, replace=False)
        y_fit[flip] = 1 - y_fit[flip]
        model = RandomForestClassifier(n_estimators=100, random_state=seed).fit(X[mem], y_fit)
    else:
        model = RandomForestClassifier(n_estimators=100, random_state=seed).fit(X[other], y[other])
    for name, rows in (("train", mem), ("test", non)):
        frame.iloc[rows].to_csv(tmp_path / f"{name}.csv", index=False)
        pd.DataFrame(model.predict_proba(X[rows]), columns=["p0", "p1"]).to_csv(tmp_path / f"p{name}.csv",
                                                                               index=False)
    cfg = make_config(train=tmp_path / "train.csv", test=tmp_path / "test.csv", label="target", profile="smoke",
                      predictions_train=tmp_path / "ptrain.csv", predictions_test=tmp_path / "ptest.csv", seed=seed)
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    return {c.id: c.status for c in res.verdict.checks if c.id.startswith("membership.quantile.")}


@pytest.mark.parametrize("leaks", [False, True], ids=["null", "positive"])
def test_quantile_checks_on_models_whose_truth_is_known(tmp_path, leaks):
    statuses = [_audit(tmp_path / str(s), s, leaks) for s in SEEDS if (tmp_path / str(s)).mkdir() is None]
    exceeded = [any(v == "exceeded" for v in st.values()) for st in statuses]
    assert all(st for st in statuses), "the quantile attack ran in every audit"
    if leaks:
        assert all(exceeded), f"a memorising forest is found in every seed: {statuses}"
    else:
        assert not any(exceeded), f"nothing can leak about these members: {statuses}"
