"""A reference model's training set is a random draw: when the learner's library fails to train on one (LightGBM's
"Check failed: best_split_info.left_count > 0", say), its pair is drawn again with a recorded seed; a leave-one-out
model's training set is fixed, so there the DTP-1 check is "not measurable" with the library's reason (and the
removal analysis, which retrains fixed sets too, is skipped with it)."""

from __future__ import annotations

import numpy as np
import pytest

from leakaudit.exceptions import TrainingFailedError
from leakaudit.membership._base import MAX_REDRAWS, audit_reference_models, fit_reference_models

from .conftest import LogRegLearner, make_blobs


class FailsOnMarked(LogRegLearner):
    """Logistic regression whose "library" fails on any training set holding all ``n_marked`` marked records (the
    last feature is 1 for them, 0 for every other record); ``always``: on every training set."""

    def __init__(self, *, C=1.0, max_iter=1000, n_marked=2, always=False):
        super().__init__(C=C, max_iter=max_iter)
        self.n_marked = n_marked
        self.always = always

    def _fit(self, X, y, *, random_state, n_classes):
        if self.always or X[:, -1].sum() >= self.n_marked:
            raise TrainingFailedError("FakeLib failed to train: Check failed: (left_count) > (0)")
        return super()._fit(X, y, random_state=random_state, n_classes=n_classes)


def _data(n=60, marked=(0, 1)):
    X, y = make_blobs(n=n, d=4, c=2, noise=2.0, seed=1)
    marks = np.zeros(n)
    marks[list(marked)] = 1.0
    return np.c_[X, marks], y


def _both(mask, marked=(0, 1)):
    return mask[:, list(marked)].all(axis=1)


def test_a_failed_pair_is_drawn_again_with_a_recorded_seed():
    X, y = _data()
    first = fit_reference_models(LogRegLearner(), X, y, 8, random_state=3)
    assert _both(first.in_mask).any()  # the first draw puts both marked records in some half: that pair fails
    ref = fit_reference_models(FailsOnMarked(), X, y, 8, random_state=3)
    failed = sorted({k // 2 for k in np.flatnonzero(_both(first.in_mask))})
    assert sorted({r["pair"] for r in ref.redrawn}) == failed
    assert all("FakeLib failed to train" in r["reason"] for r in ref.redrawn)
    assert not _both(ref.in_mask).any()
    assert (ref.in_mask[0::2] ^ ref.in_mask[1::2]).all()  # still complementary pairs
    kept = [k for k in range(8) if k // 2 not in failed]
    np.testing.assert_array_equal(ref.in_mask[kept], first.in_mask[kept])
    np.testing.assert_allclose(ref.probs[kept], first.probs[kept], rtol=0, atol=1e-12)
    again = fit_reference_models(FailsOnMarked(), X, y, 8, random_state=3)
    np.testing.assert_array_equal(again.in_mask, ref.in_mask)
    assert again.redrawn == ref.redrawn
    # without a failure nothing changes: the same models as the learner that never fails
    ok = fit_reference_models(FailsOnMarked(), X[2:], y[2:], 8, random_state=3)
    plain = fit_reference_models(LogRegLearner(), X[2:], y[2:], 8, random_state=3)
    assert ok.redrawn == ()
    np.testing.assert_array_equal(ok.probs, plain.probs)


def test_a_library_that_always_fails_is_raised_after_the_redraws():
    X, y = _data()
    # the same failure on every draw is the recipe's, and the message says so rather than blaming the draws
    with pytest.raises(TrainingFailedError, match=f"the same failure on all {MAX_REDRAWS + 1} draws .* the recipe "
                                                  "fails, not the draw"):
        fit_reference_models(FailsOnMarked(always=True), X, y, 4, random_state=0)
    masks = np.zeros((2, len(y)), bool)
    masks[0, :30], masks[1, 30:] = True, True
    masks[0, :2] = True  # fixed training sets given without a way to redraw them: the failure is raised as it is
    with pytest.raises(TrainingFailedError, match="FakeLib failed to train: Check failed"):
        fit_reference_models(FailsOnMarked(), X, y, 2, in_mask=masks, random_state=0)


def test_the_audit_redraws_halves_of_units_and_never_trains_on_the_population():
    X, y = _data(80, marked=(0, 2, 4))
    groups = np.arange(60) // 2  # units of two records: 0 and 1, 2 and 3, ...
    ref = audit_reference_models(FailsOnMarked(n_marked=3), X[:60], y[:60], 8, X_population=X[60:],
                                 y_population=y[60:], random_state=5, groups=groups)
    assert ref.redrawn and not _both(ref.in_mask, (0, 2, 4)).any()
    m = ref.in_mask
    assert m.shape == (8, 80) and not m[:, 60:].any()
    assert (m[:, 0:60:2] == m[:, 1:60:2]).all()
    assert (m[0::2, :60] ^ m[1::2, :60]).all()


def test_a_leave_one_out_failure_makes_dtp1_not_measurable(monkeypatch):
    """The DTP stage's models train on fixed sets (the members less one): the library's failure is the check's
    reason, and the audit goes on."""
    from leakaudit.audit import make_config
    from leakaudit.audit.result.checks import NOT_MEASURABLE, Analysis
    from leakaudit.audit.context import AuditContext
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.steps.dtp import dtp_analysis
    from leakaudit.audit.plan import PLAN
    from leakaudit.audit.steps.removal import removal_analysis
    from leakaudit.audit.inputs.target import Target
    from leakaudit.engine import Engine

    cfg = make_config(n_members=60, n_nonmembers=60, profile="standard")  # standard: it measures the removal
    data = prepare_data(cfg)
    learner = FailsOnMarked(always=True)
    probs = LogRegLearner().fit(data.X_mem, data.y_mem, random_state=0)
    target = Target(kind="recipe", description="test", probs_mem=probs.predict_proba(data.X_mem),
                    probs_non=probs.predict_proba(data.X_non), probs_pop=None, learner=learner)
    ctx = AuditContext(cfg=cfg, data=data, target=target, seeds=PLAN.seeds(cfg.seed),
                       engine=Engine(backend="inprocess"), check_confidence=0.99)
    dtp = dtp_analysis(ctx, recipe=None, lira=None, reference=None)
    (check,) = dtp.checks
    assert check.id == "dtp.dtp1" and check.status == NOT_MEASURABLE
    assert "FakeLib failed to train: Check failed" in check.sentence
    assert dtp.skipped[0].reason in check.sentence
    # the removal analysis (informational) retrains the members less the removed ones: skipped, with the reason
    measured = Analysis(name="dtp", per_record={"pdtp": np.r_[np.full(60, 0.5), np.full(60, np.nan)]})
    removal = removal_analysis(ctx, measured, [0, 1])
    assert not removal.summary and "FakeLib failed to train" in removal.skipped[0].reason
