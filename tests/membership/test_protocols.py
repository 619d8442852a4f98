import json

import numpy as np
import pytest

from leakaudit.metrics import bootstrap_auc_ci
from leakaudit.membership.protocols import (
    audit_model,
    long_protocol,
    membership_experiment,
    reference_model_experiment,
    yeom_split_protocol,
)
from leakaudit.membership.results import MembershipAudit
from leakaudit.membership.shadow import ShadowModelAttack
from leakaudit.membership.threshold import BoundedLossAdversary, LossThresholdAttack

from .conftest import LogRegLearner, SoftOneNNLearner, make_blobs


def test_null_model_every_attack_auc_interval_contains_half():
    # the audited model never saw the members nor the non-members: any "signal" is noise
    X, y = make_blobs(n=900, d=8, c=3, noise=2.0, seed=11)
    disjoint, mem, non, pop = np.arange(300), np.arange(300, 500), np.arange(500, 700), np.arange(700, 900)
    learner = LogRegLearner(C=10.0)
    model = learner.fit(X[disjoint], y[disjoint], n_classes=3)
    attacks = ("loss", "yeom_adv1", "lira", "lira_offline", "rmia", "distance", "frequency")
    audit = audit_model(model, X[mem], y[mem], X[non], y[non], attacks=attacks, learner=learner,
                        X_population=X[pop], y_population=y[pop], n_reference=8, n_boot=300, random_state=0)
    assert set(audit.attacks) == set(attacks) and not audit.skipped
    m = np.asarray(audit.is_member)
    # 95% family-wise: each attack's interval at 1 - 0.05/k (Bonferroni), so a correct null fails 5% of the time
    conf = 1 - 0.05 / len(attacks)
    for name in attacks:
        lo, hi = bootstrap_auc_ci(m, np.asarray(audit.scores[name]), n_boot=2000, confidence=conf, random_state=1)
        assert lo <= 0.5 <= hi, f"{name}: AUC interval {lo:.3f}..{hi:.3f} excludes 0.5 on a null model"


def test_one_nn_loss_attack_auc():
    X, y = make_blobs(n=400, d=8, c=3, noise=2.0, seed=12)
    model = SoftOneNNLearner().fit(X[:200], y[:200], n_classes=3)
    audit = audit_model(model, X[:200], y[:200], X[200:], y[200:], attacks=("loss",), n_boot=200)
    assert audit.attacks["loss"].metrics.auc >= 0.99
    # JSON round trip, per-record scores aligned with records
    again = MembershipAudit.from_json(audit.to_json())
    assert again.attacks["loss"].metrics.auc == audit.attacks["loss"].metrics.auc
    assert len(audit.scores["loss"]) == 400 and audit.is_member[:200] == [1] * 200
    json.loads(audit.to_json())


def test_audit_without_learner_skips_reference_attacks():
    X, y = make_blobs(n=200, seed=13)
    model = LogRegLearner().fit(X[:100], y[:100], n_classes=3)
    audit = audit_model(model, X[:100], y[:100], X[100:], y[100:], n_boot=50)
    assert set(audit.attacks) == {"loss"}
    assert "lira" in audit.skipped and "learner" in audit.skipped["lira"]
    assert "shadow" in audit.skipped


def test_reference_model_experiment_lira_beats_chance_on_overfit_model():
    X, y = make_blobs(n=300, d=20, c=3, noise=3.0, seed=14)
    res = reference_model_experiment(SoftOneNNLearner(tau=1.0), X, y, n_reference=8, n_boot=100,
                                     attacks=("loss", "lira", "rmia"), random_state=1)
    assert res.n_members + res.n_nonmembers == 150
    for a in ("loss", "lira", "rmia"):
        assert res.attacks[a].metrics.auc > 0.8


def test_yeom_split_protocol_theorem2_per_split():
    X, y = make_blobs(n=200, d=10, c=3, noise=2.5, seed=15)
    res = yeom_split_protocol(LogRegLearner(C=100.0), X, y, {"adv1": BoundedLossAdversary(),
                                                             "loss": LossThresholdAttack()}, n_splits=5)
    # Theorem 2 with 0-1 loss: advantage = train accuracy - test accuracy, exactly, split by split
    assert res.advantage["adv1"] == pytest.approx(res.train_score - res.test_score, abs=1e-12)
    assert len(res.per_split["adv1"]) == 5 and res.advantage["adv1"] > 0


@pytest.mark.parametrize("reuse", ["per_iteration", "per_attack"])
def test_long_protocol_structure_and_distance_attack_on_1nn(reuse):
    X, y = make_blobs(n=300, d=8, c=3, noise=2.5, seed=16)
    res = long_protocol(SoftOneNNLearner(tau=0.3), X, y, candidate_size=120, n_targets=8, n_iterations=3,
                        attacks=("frequency", "distance"), shadow_reuse=reuse, n_shadow_pairs=3,
                        random_state=0)
    assert len(res.targets) == 8
    assert res.target_train_accuracy == 1.0
    d = res.attacks["distance"]
    assert len(d["per_target_accuracy"]) == 8
    # per-target accuracy is a multiple of 1/(2 * iterations)
    assert np.allclose(np.array(d["per_target_accuracy"]) * 6, np.round(np.array(d["per_target_accuracy"]) * 6))
    assert d["pooled"]["accuracy"] == pytest.approx(np.mean(d["per_target_accuracy"]))
    assert d["pooled"]["accuracy"] > 0.65  # 48 attacks; chance is 0.5
    assert res.max_per_target_accuracy == list(np.maximum(res.attacks["frequency"]["per_target_accuracy"],
                                                          d["per_target_accuracy"]))


def test_long_protocol_untargeted_and_pdtp_correlation():
    X, y = make_blobs(n=200, d=6, c=2, noise=2.0, seed=17)
    pdtp = np.linspace(0, 1, 6)
    res = long_protocol(LogRegLearner(C=1.0), X, y, candidate_size=80, n_targets=6, n_iterations=2,
                        attacks=("untargeted",), n_untargeted_shadows=4, pdtp=pdtp, random_state=0,
                        untargeted_attack=ShadowModelAttack(batch_size=16, random_state=0))
    assert "pdtp_correlation" in res.attacks["untargeted"]


def test_long_protocol_pdtp_callable_gets_its_own_target_models():
    # Long et al. measure PDTP on the protocol's own target models (§5.4): the callable receives their training
    # sets (two halves of D per iteration) and their outputs at the targets, and what it returns is correlated
    X, y = make_blobs(n=200, d=6, c=3, noise=2.0, seed=18)
    learner = LogRegLearner(C=1.0)  # deterministic: a model retrained on a set gives the protocol's outputs
    D = np.sort(np.random.default_rng(3).choice(len(X), 60, replace=False))
    seen = {}

    def measure(train_sets, outputs, targets):
        seen.update(sets=[np.asarray(s) for s in train_sets], outputs=np.asarray(outputs), targets=targets)
        return np.linspace(0.0, 1.0, len(targets))

    # the shadow models do not matter here: one set for the run (the default trains 12 sets)
    res = long_protocol(learner, X, y, candidates=D, n_targets=5, n_iterations=3, attacks=("distance",),
                        n_shadow_pairs=2, shadow_reuse="per_target", pdtp=measure, random_state=0)
    assert res.settings["shadow_reuse"] == "per_target"
    sets, outputs, targets = seen["sets"], seen["outputs"], np.asarray(seen["targets"])
    assert len(sets) == 6 and outputs.shape == (6, 5, 3) and targets.tolist() == res.targets
    for i in range(3):
        assert np.array_equal(np.sort(np.concatenate(sets[2 * i:2 * i + 2])), D)  # the two halves of D
    for k, s in enumerate(sets):
        expect = learner.fit(X[s], y[s], random_state=0, n_classes=3).predict_proba(X[targets])
        np.testing.assert_allclose(outputs[k], expect, atol=1e-12)
    from leakaudit.metrics import pearson

    r, _ = pearson(np.linspace(0.0, 1.0, 5), np.asarray(res.attacks["distance"]["per_target_accuracy"]))
    assert res.attacks["distance"]["pdtp_correlation"]["r"] == pytest.approx(r, nan_ok=True)


def test_long_protocol_given_targets_are_used_and_bad_ones_refused_by_name():
    from leakaudit.exceptions import LeakauditError

    X, y = make_blobs(n=120, d=4, c=2, noise=2.0, seed=19)
    D = np.arange(0, 120, 2)
    kw = dict(candidates=D, n_iterations=1, attacks=("distance",), n_shadow_pairs=1, shadow_reuse="per_target",
              random_state=0)
    chosen = np.array([40, 4, 18])
    res = long_protocol(LogRegLearner(C=1.0), X, y, targets=chosen, **kw)
    assert res.targets == [4, 18, 40] and res.settings["n_targets"] == 3
    assert len(res.attacks["distance"]["per_target_accuracy"]) == 3
    for bad, says in [([4, 5], "row 5 is not"),  # 5 is a row of X outside D
                      ([4, 4], "duplicate"), ([4, 120], "out of range"), ([4.0, 6.0], "integer"),
                      ([], "targets")]:
        with pytest.raises(LeakauditError, match="targets") as e:
            long_protocol(LogRegLearner(C=1.0), X, y, targets=np.array(bad), **kw)
        assert says in str(e.value)
    with pytest.raises(LeakauditError, match="n_targets=2 but 3 targets"):
        long_protocol(LogRegLearner(C=1.0), X, y, targets=chosen, n_targets=2, **kw)


def test_membership_experiment_mu_and_bounds():
    X, y = make_blobs(n=60, d=5, c=2, noise=1.5, seed=18)
    res = membership_experiment(SoftOneNNLearner(tau=0.2), X, y, n=30, attack="loss", n_trials=400,
                                challenges_per_model=20, random_state=0)
    assert res.mu == pytest.approx(1 - (1 - 1 / 60) ** 30)
    assert abs(res.mu_empirical - res.mu) < 0.1
    # a memorising model: the loss adversary is close to the best possible 1 - mu
    assert res.advantage_ci[0] <= 1 - res.mu + 1e-9
    assert res.advantage > 0.3
    assert res.advantage_ci[0] <= res.advantage <= res.advantage_ci[1]
