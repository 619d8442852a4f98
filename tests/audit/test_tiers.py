"""The tiered audit (``tiers``): the cheap tier decides "do not publish" only with a check the full audit makes too,
at the same corrected confidence; every other outcome comes from the full audit."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

import leakaudit
from leakaudit.audit import make_config
from leakaudit.audit.plan import NOT_NEEDED, PLAN, check_confidence


def _tables(n_mem, n_non, seed, noise):
    rng = np.random.default_rng(seed)
    n = n_mem + n_non
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + noise * rng.normal(size=n) > 0)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=np.where(y, "yes", "no"))
    return df.iloc[:n_mem].reset_index(drop=True), df.iloc[n_mem:].reset_index(drop=True)


def _models(res) -> int:
    """Models the audit trained or read from the cache, over its stages."""
    return sum(v.n_models or 0 for v in (res.resources.model_extra or {}).values())


def _leaky(n=150):
    mem, non = _tables(n, n, 0, noise=1.0)
    knn = KNeighborsClassifier(n_neighbors=1).fit(mem[["a", "b", "c", "d"]], mem["label"])  # memorises its members
    return knn, mem, non


def _null(n=50):
    mem, non = _tables(n, n, 2, noise=1.0)
    own, _ = _tables(200, 2, 3, noise=1.0)  # the model never saw the audited records
    return LogisticRegression().fit(own[["a", "b", "c", "d"]], own["label"]), mem, non


KW = dict(label="label", profile="smoke", seed=1)


def test_a_clearly_leaking_model_is_withheld_by_the_cheap_tier_without_training_a_model():
    on = leakaudit.audit(*_leaky(), tiers="on", **KW)
    v = on.verdict
    assert v.outcome == "do not publish" and v.counts["exceeded"] > 0
    assert all(c.id.startswith(("membership.loss.", "attribute.")) for c in v.checks)
    # the family (and so the correction) is the full plan's: the checks not run are counted
    assert set(v.planned_checks) == {s.name for s in PLAN.steps} and v.planned_checks["dtp"] == 1
    assert v.planned_checks["membership"] > sum(c.analysis == "membership" for c in v.checks)
    assert v.check_confidence == pytest.approx(check_confidence(0.95, v.n_planned)) and v.n_checks < v.n_planned
    assert _models(on) == 0 and "score_lira" not in on.records and "score_loss" in on.records
    assert "cheap_tier" in on.timings and "membership" not in on.timings and "dtp" not in on.timings
    # what was not run, why (naming what decided), and how to run everything
    skipped = {s["name"]: s for s in on.skipped if s["reason"].startswith(NOT_NEEDED)}
    assert "leave-one-out PDTP of the training records" in skipped and any("LiRA" in n for n in skipped)
    for s in skipped.values():
        assert "the cheap tier already decided \"do not publish\"" in s["reason"] and v.checks[0].name in s["reason"]
        assert s["fix"] == 'give tiers="off" to run everything'
    assert "the cheap tier, which trains no model, decided this" in v.finding
    assert v.finding.endswith('(tiers="off" runs everything).')
    assert v.said("finding", flags=True).endswith("(--tiers off runs everything).")
    from leakaudit.cli.audit import summary_lines

    assert any(ln.startswith("  not run: leave-one-out PDTP") and ln.endswith("give --tiers off to run everything")
               for ln in summary_lines(on))


def test_a_null_model_runs_everything():
    on = leakaudit.audit(*_null(), tiers="on", **KW)
    assert on.verdict.outcome != "do not publish"
    assert "cheap_tier" in on.timings and {"membership", "dtp"} <= set(on.timings)
    assert _models(on) > 0 and "score_lira" in on.records and on.dtp["n_records"] > 0
    assert on.verdict.n_checks == on.verdict.n_planned
    assert not any(s["reason"].startswith(NOT_NEEDED) for s in on.skipped)
    assert "cheap tier" not in on.verdict.finding


@pytest.mark.slow
@pytest.mark.parametrize("case", [_leaky, _null])
def test_tiers_on_and_off_give_the_same_outcome_and_on_a_withheld_model_less_work(case):
    model, mem, non = case()
    off = leakaudit.audit(model, mem, non, tiers="off", **KW)
    on = leakaudit.audit(model, mem, non, tiers="on", **KW)
    assert on.verdict.outcome == off.verdict.outcome
    assert on.verdict.planned_checks == off.verdict.planned_checks
    assert on.verdict.check_confidence == off.verdict.check_confidence
    full = {c.id: c for c in off.verdict.checks}
    assert all(c == full[c.id] for c in on.verdict.checks)  # the cheap tier's checks are the full audit's
    assert not any(s["reason"].startswith(NOT_NEEDED) for s in off.skipped) and "cheap_tier" not in off.timings
    if on.verdict.n_checks < off.verdict.n_checks:  # the cheap tier decided
        assert off.verdict.outcome == "do not publish" and _models(on) == 0 < _models(off)
    else:  # everything ran: the full audit's result
        assert case is _null and on.verdict.checks == off.verdict.checks
        assert on.verdict.finding == off.verdict.finding and _models(on) == _models(off)
        pd.testing.assert_frame_equal(on.records, off.records)


def test_tiers_are_on_by_default_at_standard_only():
    assert make_config(profile="standard").tiered and not make_config(profile="standard", tiers="off").tiered
    assert not make_config(profile="smoke").tiered and make_config(profile="smoke", tiers="on").tiered
    assert not make_config(profile="thorough").tiered


def test_a_bad_tiers_value_is_one_line_and_exit_2(tmp_path, capsys):
    from leakaudit.cli import main

    assert main(["audit", "--tiers", "sometimes", "--out", str(tmp_path / "o")]) == 2
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "tiers" in lines[0] and "Traceback" not in cap.err, cap.err
    assert not (tmp_path / "o").exists()


def test_the_command_offers_tiers(capsys):
    from leakaudit.cli import main

    assert main(["audit", "--help"]) == 0
    assert "--tiers" in capsys.readouterr().out
