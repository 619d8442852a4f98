"""The verdict from checks alone: three outcomes, each check accounted for; the recipe test on known cases."""

import numpy as np
import pytest

from leakaudit.audit import make_config
from leakaudit.audit.result.checks import Check, decision, undecided_fix
from leakaudit.audit.inputs.recipe import recipe_test
from leakaudit.audit.result.verdict import EXIT_CODES, decide
from leakaudit.exceptions import InvalidParameterError


def _check(status, describes="model", name="x", fix=""):
    return Check(id=f"t.{name}", analysis="t", name=name, status=status, sentence=f"{name} is {status}",
                 describes=describes, fix=fix)


CFG = make_config()


def test_all_passed_is_publish_with_exit_code_0():
    v = decide(CFG, [_check("passed", name="a"), _check("passed", name="b")])
    assert v.outcome == "publish" and v.publish and v.exit_code == EXIT_CODES["publish"] == 0
    assert [c.status for c in v.checks] == ["shown below", "shown below"]  # no interval: an exact count or fact
    assert v.shown_below == ["a is passed", "b is passed"] and not v.reasons and v.n_checks == 2
    assert v.counts == {"exceeded": 0, "shown below": 2, "undecided": 0, "not measurable": 0}


def test_an_exceeded_model_check_is_do_not_publish():
    v = decide(CFG, [_check("passed", name="a"), _check("exceeded", name="b"), _check("not measurable", name="c")])
    assert v.outcome == "do not publish" and not v.publish and v.exit_code == 3
    assert v.reasons == ["b is exceeded"]
    assert v.headline == "Do not publish: 1 check of 3 shows leakage above its threshold at 95% confidence for all " \
        "checks together: b."
    assert [c.name for c in v.checks] == ["b", "a", "c"]  # ranked: exceeded, shown below, not measurable
    assert sum(v.counts.values()) == v.n_checks == 3


def test_an_unmeasurable_check_is_inconclusive_never_a_silent_pass():
    v = decide(CFG, [_check("passed", name="a"), _check("not measurable", name="c", fix="give 1,000 non-members")])
    assert v.outcome == "inconclusive" and v.exit_code == 4
    assert "give 1,000 non-members" in v.headline and v.not_measurable == ["c is not measurable (give 1,000 non-members)"]


def test_a_check_that_describes_only_the_recipe_cannot_alone_withhold():
    v = decide(CFG, [_check("passed", name="a"), _check("exceeded", describes="recipe", name="dtp")])
    assert v.outcome == "inconclusive" and "recipe" in v.headline
    v = decide(CFG, [_check("exceeded", name="lira"), _check("exceeded", describes="recipe", name="dtp")])
    assert v.outcome == "do not publish"


def _interval_check(high, status="passed", name="auc", shows="both", value=0.55):
    return Check(id=f"t.{name}", analysis="t", name=name, status=status, value=value, interval=(0.5, high),
                 threshold=0.6, sentence=f"{name} measured", shows=shows,
                 fix=undecided_fix("AUC", value, high, 0.6, 1000, 1000))


def test_each_measured_check_is_shown_below_or_undecided():
    assert _interval_check(0.58).status == "shown below"
    assert _interval_check(0.61).status == "undecided"  # not exceeded, but its interval reaches the threshold
    assert _interval_check(0.7, status="exceeded").status == "exceeded"
    assert _check("passed").status == "shown below"  # no interval: an exact count or fact
    assert _interval_check(0.58, shows="leakage only").status == "undecided"  # a lower bound never shows safety
    assert _check("undecided").status == "undecided"  # a stage's say (DTP-1)
    assert decision({"interval": (0.5, 0.61), "threshold": 0.6}) == "undecided"
    # a check of results.json's schema 2 reads as its decision said
    old = {"id": "t.a", "analysis": "t", "name": "a", "status": "passed", "sentence": "s", "decision": "undecided"}
    assert Check.model_validate(old).status == "undecided"


def test_safety_shown_publishes_only_checks_shown_below():
    below, reaching = _interval_check(0.58, name="a"), _interval_check(0.61, name="b")
    v = decide(CFG, [below, reaching])
    assert CFG.burden_of_proof == "safety shown" and CFG.policy == "default"
    assert v.outcome == "inconclusive" and v.exit_code == 4 and v.burden_of_proof == "safety shown"
    assert "1 check is undecided;" in v.headline and "to decide, first b, the only one open: about" in v.headline
    assert [c.status for c in v.checks] == ["undecided", "shown below"] and v.undecided == [
        f"b measured ({reaching.fix})"]
    assert decide(CFG, [below, _interval_check(0.59, name="c")]).outcome == "publish"
    # the rule before policies, kept as a named policy: not shown above is enough
    old = make_config(policy="leakage-shown")
    assert old.burden_of_proof == "leakage shown"
    v = decide(old, [below, reaching])
    assert v.outcome == "publish" and v.policy == "leakage-shown" and v.counts["undecided"] == 1


def test_inconclusive_says_first_what_can_change_the_outcome_and_costs_least():
    """The open checks ranked by what settles the verdict soonest: one whose result alone can change the outcome
    (not measured, or measured at or above its threshold) before one that more records would only show below; a
    setting before more records; the headline names the first, why, and its fix with its cost."""
    from leakaudit.audit.result.checks import to_decide
    from leakaudit.audit.config import phrase

    below = _interval_check(0.61, name="near")  # 0.55 measured: more records would likely show it below
    above = _interval_check(0.7, name="over", value=0.62)  # measured above its threshold
    unmeasured = Check(id="t.dtp", analysis="t", name="DTP-1", status="not measurable", sentence="s", threshold=1.0,
                       fix=phrase("measure every member ({0}: PDTP of all 1,000 members, now 100)",
                                  ("profile", "standard")))
    v = decide(CFG, [below, above, unmeasured, _interval_check(0.58, name="fine")])
    assert [c.name for c in v.to_decide()] == ["DTP-1", "over", "near"]
    assert v.headline.endswith("to decide, first DTP-1, not measured, so it alone may withhold the model: measure "
                               'every member (profile="standard": PDTP of all 1,000 members, now 100).')
    assert v.said("headline", flags=True).endswith("(--profile standard: PDTP of all 1,000 members, now 100).")
    assert "1 check could not be measured and 2 checks are undecided" in v.headline
    # of two checks neither of which can alone change it, the one a setting decides comes before more records
    setting = below.model_copy(update={"name": "repeats", "fix_parts": phrase("more repeats ({0})",
                                                                              ("profile", "thorough"))})
    assert [c.name for c in to_decide([below, setting], True)] == ["repeats", "near"]
    assert to_decide([below, setting], False) == []  # "leakage shown": undecided checks do not keep it from publish


def test_a_lower_bound_neither_blocks_nor_earns_publish():
    eps = _interval_check(0.58, name="epsilon", shows="leakage only")
    v = decide(CFG, [_interval_check(0.58, name="a"), eps])
    assert v.outcome == "publish" and "1 more" in v.headline and "cannot show its absence" in v.headline
    assert decide(CFG, [_interval_check(0.58), eps.model_copy(update={"status": "exceeded"})]).outcome == \
        "do not publish"


def test_what_would_decide_an_undecided_check_is_computed():
    # AUC 0.55 with upper end 0.61 against 0.6: the half-width above the value must shrink from 0.06 to under 0.05,
    # so the records grow by (0.06 / 0.05) ** 2 = 1.44: more than 1,440 and 2,880
    fix = undecided_fix("AUC", 0.55, 0.61, 0.6, 1000, 2000)  # naming where the records are given, per surface
    assert fix.words(flags=False).startswith(
        "about 1,441 members and 2,881 non-members (now 1,000 and 2,000) would decide it")
    assert fix.words(flags=False).endswith("(in the members and nonmembers arguments)") and "--n-members" in fix.words(flags=True)
    assert undecided_fix("AUC", 0.55, 0.59, 0.6, 1000, 1000) == ""
    assert "more likely show it above" in undecided_fix("AUC", 0.6, 0.65, 0.6, 1000, 1000)


def test_a_policy_sets_its_keys_and_refuses_a_clash(tmp_path):
    f = tmp_path / "tre.toml"
    f.write_text('name = "our TRE"\nconfidence = 0.99\n[thresholds]\nmax_auc = 0.55\n')
    cfg = make_config(policy=str(f))
    assert cfg.confidence == 0.99 and cfg.thresholds.max_auc == 0.55 and cfg.burden_of_proof == "safety shown"
    assert make_config(**cfg.model_dump()).thresholds.max_auc == 0.55  # results.json's config runs again
    with pytest.raises(InvalidParameterError, match="confidence is set by the policy"):
        make_config(policy=str(f), confidence=0.9)
    with pytest.raises(InvalidParameterError, match="neither a policy file nor a built-in policy"):
        make_config(policy=str(tmp_path / "missing.toml"))


def test_a_recipe_that_does_not_reproduce_the_model_is_said_as_an_input_problem():
    recipe = {"reproduces": False, "signal": 0.51, "p_value": 0.001, "ref_signal": {"mean": 0.62, "sd": 0.02, "k": 8},
              "sentence": "The given model shows less membership signal than its recipe gives on these members."}
    v = decide(CFG, [_check("passed", name="a"), _check("exceeded", describes="recipe", name="dtp")], recipe=recipe)
    assert v.outcome == "inconclusive"
    assert v.headline == ("Inconclusive: no check shows leakage of the given model at 95% confidence for all checks "
                          "together, but dtp is exceeded for the retraining recipe, not shown for the given model; "
                          "check that the model was trained on these members by this recipe: it shows less "
                          "membership signal than its recipe gives (p = 0.001).")


def test_no_checks_is_inconclusive():
    assert decide(CFG, []).outcome == "inconclusive"


@pytest.mark.parametrize("bad", [dict(thresholds={"low_fpr": 0.0}), dict(thresholds={"low_fpr": 1.0}),
                                 dict(epsilon_budget=-1.0), dict(dtp_rule="sometimes"), dict(epsilon_delta=1.0)])
def test_thresholds_outside_their_range_are_refused(bad):
    with pytest.raises(InvalidParameterError):
        make_config(**bad)


def _losses(rng, k, mean, sd):
    return rng.normal(mean, sd, size=k)


def _fake_references(rng, k=16, n=400, in_loss=0.2, out_loss=0.6):
    """Reference models whose outputs give mean loss ~in_loss on their training half and ~out_loss on the rest."""
    y = rng.integers(0, 2, n)
    mask = np.zeros((k, n), bool)
    for j in range(0, k, 2):
        h = rng.permutation(n)[: n // 2]
        mask[j, h] = True
        mask[j + 1] = ~mask[j]
    loss = np.where(mask, in_loss, out_loss) * rng.lognormal(0, 0.05, size=(k, 1)) * rng.exponential(1, (k, n))
    p_true = np.exp(-loss)
    probs = np.empty((k, n, 2))
    probs[np.arange(k)[:, None], np.arange(n)[None, :], y[None, :]] = p_true
    probs[np.arange(k)[:, None], np.arange(n)[None, :], 1 - y[None, :]] = 1 - p_true
    return probs, mask, y


def _target(rng, y, n_mem, mem_loss, non_loss):
    out = []
    for yy, L in ((y[:n_mem], mem_loss), (y[n_mem:], non_loss)):
        p = np.exp(-L * rng.lognormal(0, 0.05) * rng.exponential(1, yy.size))
        probs = np.empty((yy.size, 2))
        probs[np.arange(yy.size), yy] = p
        probs[np.arange(yy.size), 1 - yy] = 1 - p
        out.append(probs)
    return out


def test_recipe_test_accepts_a_model_the_recipe_reproduces_and_rejects_one_it_does_not():
    rng = np.random.default_rng(0)
    accepted = rejected = 0
    for _ in range(40):
        probs, mask, y = _fake_references(rng)
        pm, pn = _target(rng, y, 200, 0.2, 0.6)  # trained on the members, like the references: reproduces
        r = recipe_test(pm, pn, y[:200], y[200:], probs, mask, y, confidence=0.95)
        accepted += r["reproduces"]
        pm, pn = _target(rng, y, 200, 0.6, 0.6)  # never saw the "members": the recipe does not describe it
        r = recipe_test(pm, pn, y[:200], y[200:], probs, mask, y, confidence=0.95)
        rejected += not r["reproduces"]
        assert "less membership signal" in r["sentence"] or r["reproduces"]
    assert accepted >= 34 and rejected >= 38, (accepted, rejected)


def test_recipe_test_needs_two_pairs_of_reference_models():
    rng = np.random.default_rng(1)
    probs, mask, y = _fake_references(rng, k=2)
    pm, pn = _target(rng, y, 200, 0.2, 0.6)
    r = recipe_test(pm, pn, y[:200], y[200:], probs, mask, y, confidence=0.95)
    assert r["reproduces"] is None and "Not tested" in r["sentence"]


def test_dtp_findings_are_confirmed_on_the_model_only_when_its_scores_stand_above_the_nonmembers():
    from leakaudit.audit.steps.dtp import _confirm_on_model

    rng = np.random.default_rng(2)
    non = rng.normal(size=500)
    members = rng.normal(size=300)
    members[:5] += 6.0  # five records the model clearly trained on
    assert _confirm_on_model([0, 1, 2, 3, 4], members, non) < 1e-4
    # exchangeable scores (the model never trained on the members): p-values spread over (0, 1)
    ps = [_confirm_on_model(list(rng.choice(300, 5, replace=False)), rng.normal(size=300), non) for _ in range(200)]
    assert np.mean(np.array(ps) <= 0.05) < 0.1 and 0.35 < np.median(ps) < 0.65
    assert _confirm_on_model([], members, non) == 1.0


def _world(rng, n=600, k=16):
    """Records whose statistic φ differs in level and spread (hard and easy, common and rare records), reference
    models on paired halves (in: φ raised by 2 spreads), the true class 1 throughout."""
    from leakaudit.membership import ReferenceSet, paired_half_masks

    mu, sd = rng.normal(0, 2, n), rng.uniform(0.2, 1.5, n)
    mask = paired_half_masks(n, k, 0)
    phi = mu + sd * rng.normal(size=(k, n)) + np.where(mask, 2 * sd, 0.0)
    p1 = 1 / (1 + np.exp(-phi))
    return mu, sd, ReferenceSet(np.stack([1 - p1, p1], axis=-1), mask), np.ones(n, int)


def _probs(phi):
    p1 = 1 / (1 + np.exp(-phi))
    return np.stack([1 - p1, p1], axis=-1)


def test_the_dtp_confirmation_compares_like_with_like_not_the_selection():
    """The records DTP-1 selects are not typical records; a model that never trained on them must not be said to
    have trained on them because of that selection (issue 47: a null 15-NN answered 'trained' at p = 0.0005)."""
    from leakaudit.audit.steps.dtp import _confirm_on_model, out_scores

    rng = np.random.default_rng(3)
    raw_hits = fair_hits = trained_hits = 0
    n_runs = 60
    for _ in range(n_runs):
        mu, sd, ref, y = _world(rng)
        chosen = list(np.argsort(-mu[:300])[:10])  # a selection tied to the records' own level
        null = mu + sd * rng.normal(size=600)  # the model trained on none of them: each φ from its out models
        z = out_scores(_probs(null), y, ref)
        raw_hits += _confirm_on_model(chosen, null[:300], null[300:]) <= 0.05
        fair_hits += _confirm_on_model(chosen, z[:300], z[300:]) <= 0.05
        trained = null.copy()
        trained[chosen] += 2 * sd[chosen]  # it trained on the chosen ones, as the reference models' "in" halves
        zt = out_scores(_probs(trained), y, ref)
        trained_hits += _confirm_on_model(chosen, zt[:300], zt[300:]) <= 0.05
    assert raw_hits / n_runs > 0.9  # the raw comparison mistakes the selection for training
    assert fair_hits / n_runs <= 0.1  # like with like: about the 5 % it is run at (60 runs: at most 6)
    assert trained_hits / n_runs >= 0.9


def test_out_scores_need_two_out_models_and_spread():
    from leakaudit.audit.steps.dtp import out_scores
    from leakaudit.membership import ReferenceSet

    probs = np.full((4, 3, 2), 0.5)
    probs[:, 1, 1] = [0.6, 0.7, 0.8, 0.9]
    probs[:, :, 0] = 1 - probs[:, :, 1]
    mask = np.array([[1, 0, 1], [0, 0, 0], [0, 0, 1], [0, 1, 1]], bool)
    z = out_scores(np.full((3, 2), 0.5), np.ones(3, int), ReferenceSet(probs, mask))
    assert z[0] == 0.0  # out models all give the same output, and so does the model
    assert np.isfinite(z[1]) and z[1] < 0  # 0.5 lies below the out models' 0.6-0.8
    assert np.isnan(z[2])  # one out model only
    # a deterministic learner (1-NN): the out models agree on the wrong class; an output of the right class lies
    # beyond every one of them (the record was memorised)
    z = out_scores(np.array([[0.0, 1.0]] * 3), np.ones(3, int), ReferenceSet(probs, mask))
    assert z[0] == np.inf


def test_an_audit_of_two_members_is_inconclusive_never_a_crash_or_a_pass(tmp_path):
    """2 members, 2 non-members: no membership check can be judged; every one says what it needs."""
    import pandas as pd

    from leakaudit.audit import run_audit
    from leakaudit.data import load_adult

    df = load_adult().to_frame().sample(4, random_state=3).reset_index(drop=True)
    df.loc[:, "income"] = ["<=50K", ">50K", "<=50K", ">50K"]
    df.iloc[:2].to_csv(tmp_path / "m.csv", index=False)
    df.iloc[2:].to_csv(tmp_path / "n.csv", index=False)
    rng = np.random.default_rng(0)
    for name in ("pm", "pn"):
        pd.DataFrame(rng.dirichlet([1, 1], size=2), columns=["p0", "p1"]).to_csv(tmp_path / f"{name}.csv", index=False)
    cfg = make_config(train=tmp_path / "m.csv", test=tmp_path / "n.csv", label="income", profile="smoke",
                      predictions_train=tmp_path / "pm.csv", predictions_test=tmp_path / "pn.csv")
    v = run_audit(cfg, tmp_path / "out", verbose=False).verdict
    assert v.outcome == "inconclusive"
    membership = [c for c in v.checks if c.analysis == "membership"]
    assert membership and all(c.status == "not measurable" and c.fix for c in membership)


def test_a_one_sided_interval_reads_back_from_json():
    """DTP-1's interval "at least x" is (x, inf), which results.json writes as [x, null]: read back as it was."""
    import math

    from leakaudit.audit.result.checks import Check

    c = Check(id="dtp.dtp1", analysis="dtp", name="DTP-1", status="exceeded", value=2.46, interval=(2.03, math.inf),
              threshold=1.0, sentence="s")
    back = Check.model_validate({**c.model_dump(mode="json"), "interval": [2.03, None]})
    assert back.interval == (2.03, math.inf) and back.status == "exceeded"
