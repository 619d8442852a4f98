"""Dataset-level audits (classifier and regression), the CLI, and the reproductions."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from leakaudit.attribute import audit_classifier_attribute, audit_regression_attribute
from leakaudit.attribute.results import AttributeAudit
from leakaudit.data import from_frame
from leakaudit.exceptions import InvalidParameterError, UnsupportedError


def _table(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    x = rng.normal(size=n)
    noise = rng.integers(0, 1000, n).astype(float)  # an id-like column: lets a tree memorise
    lab = ((x + (g == "b") * 1.5 + rng.normal(0, 1.0, n)) > 0.5).astype(int)
    return pd.DataFrame({"g": g, "x": x, "id": noise, "label": lab})


def test_classifier_audit_memorising_tree_leaks_and_result_round_trips():
    ds = from_frame(_table(), "label", sensitive="g", kinds={"g": "categorical"})
    audit = audit_classifier_attribute(ds, "g", DecisionTreeClassifier(), n_members=300, n_reference=500,
                                       random_state=0)
    assert audit.values == ["a", "b", "c"] and audit.train_accuracy == 1.0
    assert audit.prior == pytest.approx([0.5, 0.3, 0.2], abs=0.06)
    names = [a.name for a in audit.attacks]
    assert names == ["likelihood+prior", "likelihood", "A7 (loss oracle)", "A6 (loss oracle)"]
    for a in audit.attacks:
        adv = a.attribute_advantage
        assert adv.advantage == pytest.approx(adv.accuracy_members - adv.accuracy_nonmembers)
        assert adv.ci_low <= adv.advantage <= adv.ci_high
        alt = a.alternative_advantage
        assert alt.advantage == pytest.approx(adv.accuracy_members - audit.baseline_accuracy_nonmembers)
    assert AttributeAudit.from_json(audit.to_json()) == audit


def test_classifier_audit_errors():
    ds = from_frame(_table(), "label", kinds={"g": "categorical"})
    with pytest.raises(InvalidParameterError, match="not a column"):
        audit_classifier_attribute(ds, "zzz", LogisticRegression(), n_members=100, n_reference=100)
    with pytest.raises(UnsupportedError, match="numeric"):
        audit_classifier_attribute(ds, "x", LogisticRegression(), n_members=100, n_reference=100)
    with pytest.raises(InvalidParameterError, match="exceeds"):
        audit_classifier_attribute(ds, "g", LogisticRegression(), n_members=1000, n_reference=100)


def test_regression_audit_on_a_linear_model_with_a_strong_attribute():
    rng = np.random.default_rng(1)
    n = 1000
    g = rng.choice(["u", "v"], size=n)
    x = rng.normal(size=n)
    y = 2 * x + 3.0 * (g == "v") + rng.normal(0, 0.5, n)
    ds = from_frame(pd.DataFrame({"g": g, "x": x, "y": y}), "y", task="regression", kinds={"g": "categorical"})
    audit = audit_regression_attribute(ds, "g", LinearRegression(), random_state=0)
    a4 = next(a for a in audit.attacks if a.name == "A4").attribute_advantage
    # a well-generalising model with tau = 6 sigma: Adversary 4 is right almost always on both sides (Thm 5 -> 0)
    assert a4.accuracy_members > 0.97 and a4.accuracy_nonmembers > 0.97
    assert a4.ci_low <= 0.0 <= a4.ci_high and abs(a4.advantage) < 0.03
    assert audit.train_accuracy == pytest.approx(0.5, abs=0.06)  # the training RMSE


def test_cli_writes_json_and_plot(tmp_path):
    from leakaudit.cli import main

    csv = tmp_path / "t.csv"
    _table(600).to_csv(csv, index=False)
    out = tmp_path / "out"
    rc = main(["attribute", "--data", str(csv), "--label", "label", "--attribute", "g", "--model", "tree",
               "--n-members", "150", "--out", str(out)])
    assert rc == 0
    d = json.loads((out / "attribute.json").read_text())
    assert d["type"] == "AttributeAudit" and len(d["attacks"]) == 4
    assert (out / "attribute.png").stat().st_size > 1000
    assert main(["attribute", "--data", str(csv), "--attribute", "g", "--out", str(out)]) == 2  # no --label


def test_yeom_fig1_smoke_all_rows_match(tmp_path):
    import leakaudit.reproduce.yeom_attribute  # noqa: F401  (registers our reproductions)
    from leakaudit import reproduce

    res = reproduce.run("yeom-fig1", profile="smoke", out=tmp_path, random_state=0)
    with_paper = [r for r in res["rows"] if r["paper"] is not None]
    assert len(with_paper) == 33 + 6 + 9
    # the closed forms match; the simulated Adversary 4 is a Monte Carlo estimate whose tolerance (0.002) is set for
    # the page's 2,000,000 challenges a side: at the smoke profile's few it is too noisy to judge, never "differs"
    simulated = [r for r in with_paper if r["quantity"].startswith("simulated Adversary 4")]
    assert all(r["status"] == "match" for r in with_paper if r not in simulated)
    assert all(r["status"] in ("match", "inconclusive: too noisy") for r in simulated)
    # Exp^A with a trained ridge: the inverted U in tau (Fig. 1) -- small and large influence leak less
    ridge = {r["quantity"].split("tau=")[1].split(":")[0]: r["ours"] for r in res["rows"] if "ridge" in r["quantity"]}
    assert ridge["3"] > ridge["8"] and ridge["1"] > ridge["8"] and ridge["3"] > 0.1


def test_iwpc_design_matches_the_authors_encoding():
    from leakaudit.reproduce.yeom_attribute import _iwpc_frame, iwpc_design

    try:
        frame = _iwpc_frame()
    except Exception as exc:  # data folder missing
        pytest.skip(f"IWPC data not available: {exc}")
    X, y, blocks, t, names = iwpc_design(frame)
    assert X.shape == (4819, 17) and names == sorted(names)
    # spec §6.2 counts
    assert np.bincount(t["cyp2c9"]).tolist() == [3630, 643, 430, 41, 60, 15]
    assert np.bincount(t["vkorc1"]).tolist() == [1435, 1756, 1628]


@pytest.mark.slow
def test_yeom_fig3_smoke_matches_the_spec_rerun(tmp_path):
    import leakaudit.reproduce.yeom_attribute  # noqa: F401
    from leakaudit import reproduce

    res = reproduce.run("yeom-fig3", profile="smoke", out=tmp_path, random_state=0)
    rows = {r["quantity"]: r for r in res["rows"]}
    for d in (5, 30):
        # R_emp is the re-run's own estimator (a tree on all rows): it matches
        assert rows[f"d={d} R_emp"]["status"] == "match"
        # the smoke profile's R_cv is 10-fold where the re-run used LOO: that row, and the ratio r built on it,
        # may differ, but only by the 0.02 stated for the estimator difference
        assert "10-fold" in rows[f"d={d} R_cv"]["note"]
        assert abs(rows[f"d={d} R_cv"]["ours"] - rows[f"d={d} R_cv"]["paper"]) <= 0.02
    # advantage rows: the smoke runs 3 splits per seed (15 of the re-run's 100), so about 1 row in 20 misses its
    # 95% interval by chance; every mean must still be within the stated 0.02 and at most 2 of the 18 may miss
    adv = [r for q, r in rows.items() if q.startswith("d=") and r["paper"] is not None and "R_" not in q]
    assert len(adv) == 18
    assert all(abs(r["ours"] - r["paper"]) <= 0.02 for r in adv)
    assert sum(r["status"] == "differs" for r in adv) <= 2
    # the shape read off the paper's plot (to the nearest 0.05) and Theorem 7's uniform reduction hold
    shape = [r for q, r in rows.items() if q.startswith(("Fig. 3 shape", "Thm 7"))]
    assert len(shape) == 5 and all(r["status"] == "match" for r in shape)


@pytest.mark.slow
def test_adult_attribute_smoke_over_five_seeds(tmp_path):
    import leakaudit.reproduce.yeom_attribute  # noqa: F401
    from leakaudit import reproduce
    from leakaudit.exceptions import DataFileError

    try:
        res = reproduce.run("adult-attribute", profile="smoke", out=tmp_path, random_state=0)
    except DataFileError as exc:
        pytest.skip(f"Adult not available: {exc}")
    rows = {r["quantity"]: r for r in res["rows"]}
    train, test = rows["train accuracy"], rows["test accuracy"]
    # every row over seeds 0-4, each seed's value kept; the overfit MLP fits its members better than new rows
    assert list(train["seeds"]) == [0, 1, 2, 3, 4] and len(train["values"]) == 5
    assert all(a > b for a, b in zip(train["values"], test["values"], strict=True))
    assert all(r["status"] == "no-paper-value" for r in res["rows"])
