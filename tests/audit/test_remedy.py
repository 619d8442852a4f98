"""The boosted-tree remedies measured by retraining (leakaudit.audit.steps.remedy) and what "What to do next" says of
them."""

import json
import re

import numpy as np
import pandas as pd
import pytest

import leakaudit
from leakaudit.audit.result.results import read_result
from leakaudit.audit.steps.remedy import auc_change
from leakaudit.metrics import auc

lightgbm = pytest.importorskip("lightgbm")


def test_auc_change_is_the_difference_of_the_seed_mean_aucs():
    rng = np.random.default_rng(0)
    member = np.r_[np.ones(60, int), np.zeros(80, int)]
    before = rng.normal(size=(3, 140)) + member
    after = rng.normal(size=(3, 140)) + 0.3 * member
    out = auc_change(member, before, after, 0.95)
    assert out["auc_before"] == pytest.approx(np.mean([auc(member, s) for s in before]))
    assert out["auc_after"] == pytest.approx(np.mean([auc(member, s) for s in after]))
    assert out["auc_change"] == pytest.approx(out["auc_after"] - out["auc_before"])
    lo, hi = out["auc_change_interval"]
    assert lo < out["auc_change"] < hi < 0
    same = auc_change(member, before, before, 0.95)
    assert same["auc_change"] == 0 and same["auc_change_interval"] == [0.0, 0.0]


def test_auc_change_interval_covers_no_change_at_its_confidence():
    """Null: two scorings of the same records drawn from one distribution (correlated through the records, as a
    retrained model's are): the paired interval holds 0 in about 90% of 400 draws at confidence 0.9."""
    rng = np.random.default_rng(1)
    member = np.r_[np.ones(50, int), np.zeros(50, int)]
    covered = 0
    for _ in range(400):
        shared = rng.normal(size=100) + 0.5 * member
        before, after = (shared + rng.normal(scale=0.7, size=(1, 100)) for _ in range(2))
        lo, hi = auc_change(member, before, after, 0.9)["auc_change_interval"]
        covered += lo <= 0 <= hi
    assert 0.85 <= covered / 400 <= 0.95


@pytest.fixture(scope="module")
def leaky():
    """An overfit LightGBM (63 leaves of 2 records, 200 rounds on noisy labels) and its members and non-members."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = ((X[:, 0] + rng.normal(scale=1.5, size=600)) > 0).astype(int)
    df = pd.DataFrame(X, columns=list("abcde")).assign(label=y)
    mem, non = df.iloc[:300], df.iloc[300:]
    model = lightgbm.LGBMClassifier(n_estimators=200, num_leaves=63, min_child_samples=2, random_state=0, n_jobs=1,
                                    verbose=-1).fit(mem[list("abcde")], mem["label"])
    return model, mem, non


def _next(result) -> list[str]:
    from leakaudit.report.html import _next_steps

    return _next_steps(result, False)


def test_a_leaky_boosted_model_gets_its_settings_measured_by_retraining(leaky, tmp_path):
    model, mem, non = leaky
    res = leakaudit.audit(model, mem, non, label="label", profile="standard", verbose=False, random_state=3,
                          cache_dir=str(tmp_path / "cache"))
    assert res.outcome == "do not publish" and res.remedy is not None
    assert [(s.parameter, s.value, s.tried) for s in res.remedy.settings] == [("min_data_in_leaf", 2, 20),
                                                                              ("max_bin", 255, 31)]
    assert res.remedy.n_seeds == 1  # no bagging: LightGBM trains the same trees for every seed
    for s in res.remedy.settings:
        lo, hi = s.auc_change_interval
        assert lo <= s.auc_change <= hi and s.auc_before > 0.8
        assert s.accuracy_cost_interval[0] <= s.accuracy_cost <= s.accuracy_cost_interval[1]
    words = next(t for t in _next(res) if t.startswith("Membership leakage"))
    first = res.remedy.settings[0]
    assert f"from {first.auc_before:.3f} to {first.auc_after:.3f}" in words and "min_data_in_leaf 2 -> 20" in words
    assert "differential" not in words and "MIP" not in words
    again = leakaudit.audit(model, mem, non, label="label", profile="standard", verbose=False, random_state=3,
                            cache_dir=str(tmp_path / "cache2"))
    assert again.remedy == res.remedy  # the same seed, the same measurement
    saved = json.loads((res.save(tmp_path / "out") / "results.json").read_text())
    assert saved["remedy"]["settings"][1]["parameter"] == "max_bin"
    assert read_result(saved).remedy == res.remedy


def test_smoke_names_the_settings_and_says_they_were_not_measured(leaky, tmp_path):
    model, mem, non = leaky
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", verbose=False,
                          cache_dir=str(tmp_path / "cache"))
    assert res.remedy is None
    words = next(t for t in _next(res) if t.startswith("Membership leakage"))
    assert re.search(r"min_data_in_leaf, num_leaves, max_bin\); what each changes was not measured at this profile "
                     r"\(profile=\"standard\" measures it\)", words)


def test_a_model_that_is_not_boosted_gets_no_remedy_step(tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    df = pd.DataFrame(X, columns=list("abc")).assign(label=(rng.random(200) < 0.5).astype(int))
    mem, non = df.iloc[:100], df.iloc[100:]
    tree = DecisionTreeClassifier(random_state=0).fit(mem[list("abc")], mem["label"])
    res = leakaudit.audit(tree, mem, non, label="label", profile="smoke", verbose=False,
                          cache_dir=str(tmp_path / "cache"))
    assert res.remedy is None and "remedy" not in res.timings


def test_dtp1_records_are_re_measured_under_each_setting(tmp_path):
    """Where DTP-1 is exceeded, each setting's PDTP of its records (the mean over the profile's repeats), and the
    records still above the threshold named in What to do next."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4))
    df = pd.DataFrame(X, columns=list("abcd")).assign(label=((X[:, 0] + rng.normal(scale=1.5, size=300)) > 0) * 1)
    mem, non = df.iloc[:150], df.iloc[150:]
    model = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=31, min_child_samples=2, random_state=0, n_jobs=1,
                                    verbose=-1).fit(mem[list("abcd")], mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="standard", tiers="off", removal=False,
                          verbose=False, cache_dir=str(tmp_path / "cache"))
    assert any(c.id == "dtp.dtp1" and c.status == "exceeded" for c in res.verdict.checks)
    r = res.remedy
    assert r.records and r.threshold == 1.0
    for s in r.settings:
        assert len(s.pdtp_before) == len(s.pdtp_after) == len(r.records)
        above = [n for n, v in zip(r.records, s.pdtp_after) if v > r.threshold]
        assert s.records_above_after == above
    words = next(t for t in _next(res) if t.startswith("DTP-1 records"))
    first = r.settings[0]
    assert (f"larger leaves (min_data_in_leaf 2 -> 20) leaves {len(first.records_above_after)} of the "
            f"{len(r.records)} above 1") in words


def test_settings_tried_stay_within_the_members_and_skip_a_recipe_as_coarse_already():
    """A recipe's values are untrusted: a leaf minimum is tried at most at the members' count, never multiplied past
    the library's range (2**31 - 1, XGBoost's float32 maximum); a setting that would not coarsen the recipe (a leaf
    minimum at or above the members' count, bins or depth at their floor) is not measured."""
    from types import SimpleNamespace

    from leakaudit.audit.steps.remedy import _settings

    def ctx(kind, params):
        return SimpleNamespace(target=SimpleNamespace(kind=kind, learner=SimpleNamespace(params=params)),
                               data=SimpleNamespace(y_mem=np.zeros(100)))

    assert _settings(ctx("lightgbm", {"min_data_in_leaf": 30, "max_bin": 255})) == [
        ("larger leaves", "min_data_in_leaf", 30, 100), ("coarser bins", "max_bin", 255, 31)]
    assert _settings(ctx("lightgbm", {"min_data_in_leaf": 2**31 - 1, "max_bin": 255})) == [
        ("coarser bins", "max_bin", 255, 31)]
    assert _settings(ctx("xgboost", {"min_child_weight": 3.4028234e38, "tree_method": "exact"})) == []
    assert _settings(ctx("xgboost", {"min_child_weight": 0.5})) == [
        ("larger leaves", "min_child_weight", 0.5, 2.5), ("coarser bins", "max_bin", 256, 32)]
    assert _settings(ctx("catboost", {"depth": 1, "border_count": 4})) == []
