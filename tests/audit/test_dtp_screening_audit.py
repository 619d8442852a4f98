"""The audit screens PDTP when the members outnumber the profile's ``pdtp_exact_max`` (issue 31), and says so."""

from __future__ import annotations

import numpy as np
import pandas as pd

import leakaudit.audit.config as config
from leakaudit.audit import make_config, run_audit


def test_audit_screens_pdtp_beyond_pdtp_exact_max(tmp_path, monkeypatch):
    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={
        "pdtp_records": None, "pdtp_exact_max": 100, "pdtp_screen_fraction": 0.1, "pdtp_screen_sample": 40,
        "pdtp_screen_sample_max": 40}))
    cfg = make_config(n_members=200, n_nonmembers=200, profile="smoke", cache_dir=tmp_path / "cache")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    sc = res.dtp["screening"]
    # the top starts at pdtp_screen_fraction of pdtp_exact_max members (10), not of the 200 members
    assert sc["n_members"] == 200 and sc["n_top"] >= 10 and sc["n_sample"] <= 40
    assert sc["n_measured"] + sc["n_unmeasured"] == 200 and sc["n_measured"] == res.dtp["n_records"]
    # under the statistical rule the top grows by the members DTP-1 finds significant, not by single exceedances
    d = sc["doubling"]
    assert d["counted"] == "significant" and d["n_top"] == sc["n_top"] and d["grow"] == sc["capped"]
    u = sc["unmeasured"]
    assert u["m"] == sc["n_sample"] and 0 <= u["share_interval"][0] <= u["share_interval"][1] <= 1
    check = next(c for c in res.verdict.checks if c.id == "dtp.dtp1")
    assert "rank riskiest" in check.sentence and f"random {sc['n_sample']}" in check.sentence
    # 40 sampled members cannot bound the other ~150 within the allowance (0.5 % of 200: 1 member): the check
    # that found nothing says "not measurable", with the reason and what would make it measurable
    assert sc["sample_budget"] == 40 and u["allowance"] == 1 and not u["within_allowance"]
    if check.status != "exceeded":
        assert check.status == "not measurable" and "more than the 1 allowed" in check.sentence
        assert "max_unmeasured_dtp_share" in check.fix
    rec = pd.read_csv(tmp_path / "out" / "records.csv")
    members = rec[rec["is_member"] == 1]
    assert members["pdtp_screen_estimate"].notna().all()
    assert rec.loc[rec["is_member"] == 0, "pdtp_screen_estimate"].isna().all()
    assert members["pdtp"].notna().sum() == sc["n_measured"]
    # the measured top is the top of the estimate's ranking
    measured = members["pdtp"].notna().to_numpy()
    est = members["pdtp_screen_estimate"].to_numpy()
    top = np.argsort(-est, kind="stable")[: sc["n_top"]]
    assert measured[top].all()


def test_a_bagged_forest_is_screened_by_its_out_of_bag_outputs(tmp_path, monkeypatch):
    """A forest target: the measured top is every member whose out-of-bag bound reaches the threshold; no
    reference models are needed for it, and the sentence says which screen ran."""
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier

    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.data import load_adult

    df = load_adult().to_frame().sample(400, random_state=0).reset_index(drop=True)
    df.iloc[:200].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[200:].to_csv(tmp_path / "test.csv", index=False)
    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={
        "pdtp_records": None, "pdtp_exact_max": 100, "pdtp_screen_fraction": 0.1, "pdtp_screen_sample": 30,
        "pdtp_screen_sample_max": 30}))
    kw = {"train": tmp_path / "train.csv", "test": tmp_path / "test.csv", "label": "income", "profile": "smoke"}
    data = prepare_data(make_config(**kw))
    sio.dump(RandomForestClassifier(n_estimators=20, random_state=0).fit(data.X_mem, data.y_mem),
             tmp_path / "model.skops")
    cfg = make_config(**kw, model=tmp_path / "model.skops", model_input="encoded", cache_dir=tmp_path / "cache")
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    sc = res.dtp["screening"]
    assert sc["ranking"] == "oob" and "out-of-bag" in sc["method"]
    rec = pd.read_csv(tmp_path / "out" / "records.csv")
    members = rec[rec["is_member"] == 1]
    upper = members["pdtp_screen_estimate"].to_numpy()
    measured = members["pdtp"].notna().to_numpy()
    # the top is exactly the members whose bound reaches the threshold (the cap, 25 %, allowing)
    reach = upper >= cfg.thresholds.max_dtp
    assert sc["n_top"] == min(int(reach.sum()), 50) and measured[reach].all() == (not sc["capped"])
    assert sc["n_measured"] == sc["n_top"] + sc["n_sample"] == measured.sum()
    check = next(c for c in res.verdict.checks if c.id == "dtp.dtp1")
    assert "out-of-bag" in check.sentence


def test_a_screened_check_passes_only_within_its_allowance(tmp_path, monkeypatch):
    """With an allowance the sample can meet (here half the members), the same screened audit passes or exceeds
    DTP-1 on what it measured; the sample was planned to meet it."""
    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={
        "pdtp_records": None, "pdtp_exact_max": 100, "pdtp_screen_fraction": 0.1, "pdtp_screen_sample": 5}))
    cfg = make_config(n_members=200, n_nonmembers=200, profile="smoke", cache_dir=tmp_path / "cache",
                      thresholds={"max_unmeasured_dtp_share": 0.3})
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    sc = res.dtp["screening"]
    u = sc["unmeasured"]
    # 60 members allowed: the sample grew past pdtp_screen_sample to what the allowance needs
    assert u["allowance"] == 60 and sc["sample_needed"] > 5 and sc["n_sample"] >= min(sc["sample_needed"], 150)
    check = next(c for c in res.verdict.checks if c.id == "dtp.dtp1")
    assert u["within_allowance"] == (u["count_upper"] <= 60)
    if u["within_allowance"]:
        assert check.status in ("shown below", "undecided", "exceeded") and "against 60 allowed" in check.sentence


def test_a_closed_form_learner_is_measured_exactly_beyond_pdtp_exact_max(monkeypatch):
    """Logistic regression's Newton leave-one-out costs little per member: the stage measures every member
    exactly even with reference models at hand and more members than pdtp_exact_max; the demo network with the
    same reference models is screened."""
    from types import SimpleNamespace

    from leakaudit.audit.plan import PLAN
    from leakaudit.audit.context import AuditContext
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.steps.dtp import dtp_analysis
    from leakaudit.audit.inputs.target import Target
    from leakaudit.engine import Engine
    from leakaudit.learners import LogisticRegression, TorchMLP

    smoke = config.PROFILES["smoke"]
    monkeypatch.setitem(config.PROFILES, "smoke", smoke.model_copy(update={
        "pdtp_records": None, "pdtp_exact_max": 100, "pdtp_screen_fraction": 0.1, "pdtp_screen_sample": 30,
        "pdtp_screen_sample_max": 30}))
    cfg = make_config(n_members=150, n_nonmembers=150, profile="smoke")
    data = prepare_data(cfg)
    seeds = PLAN.seeds(cfg.seed)
    rng = np.random.default_rng(0)
    p1 = rng.uniform(0.05, 0.95, size=(8, 300))
    in_mask = np.arange(8)[:, None] % 2 == rng.integers(0, 2, 300)[None, :]  # complementary halves
    reference = SimpleNamespace(probs=np.stack([1 - p1, p1], axis=2), in_mask=in_mask)
    for learner, screened in ((LogisticRegression(), False), (TorchMLP(hidden=(4,), epochs=1), True)):
        probs = [learner.fit(data.X_mem, data.y_mem, random_state=0).predict_proba(X) for X in (data.X_mem,
                                                                                                 data.X_non)]
        target = Target(kind="recipe", description="test", probs_mem=probs[0], probs_non=probs[1], probs_pop=None,
                        learner=learner)
        ctx = AuditContext(cfg=cfg, data=data, target=target, seeds=seeds, engine=Engine(backend="inprocess"),
                           check_confidence=0.99)
        dtp = dtp_analysis(ctx, recipe=None, lira=None, reference=reference)
        assert ("screening" in dtp.summary) == screened
        assert (dtp.summary["n_records"] == 150) == (not screened)


def test_a_seed_free_learner_is_tested_once_and_its_check_says_exact():
    """A retrained learner whose seed does not matter (a 1-nearest-neighbour rule) is measured once by the DTP-1
    test: the result and the check's sentence say so, not a t-test over repeats that were copies of one model."""
    from leakaudit.audit.context import AuditContext
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.steps.dtp import dtp_analysis
    from leakaudit.audit.plan import PLAN
    from leakaudit.audit.inputs.target import Target
    from leakaudit.engine import Engine
    from leakaudit.learners import SklearnLearner, capabilities
    from sklearn.neighbors import KNeighborsClassifier

    cfg = make_config(n_members=60, n_nonmembers=60, profile="smoke")
    data = prepare_data(cfg)
    learner = SklearnLearner(KNeighborsClassifier(n_neighbors=1))
    assert not capabilities(learner).stochastic
    model = learner.fit(data.X_mem, data.y_mem, random_state=0)
    target = Target(kind="recipe", description="test", probs_mem=model.predict_proba(data.X_mem),
                    probs_non=model.predict_proba(data.X_non), probs_pop=None, learner=learner)
    ctx = AuditContext(cfg=cfg, data=data, target=target, seeds=PLAN.seeds(cfg.seed),
                       engine=Engine(backend="inprocess"), check_confidence=0.99)
    dtp = dtp_analysis(ctx, recipe=None, lira=None, reference=None)
    test = dtp.summary["test"]
    assert test["n_repeats"] == 1 and test["method"].startswith("exact: ")
    check = dtp.checks[0]
    assert check.status == "exceeded"  # a 1-NN rule's members are their own neighbours
    assert "measured exactly" in check.sentence and "training randomness" not in check.sentence
    assert "confidence" not in check.sentence
