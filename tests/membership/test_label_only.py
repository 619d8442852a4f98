"""The label-only noise-robustness attack (Choquette-Choo et al. 2021) on cases whose truth is known."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.membership import AttackInputs, run_attacks
from leakaudit.membership.label_only import LabelOnlyAttack, labels_from_model, perturb_records
from leakaudit.metrics import auc, evaluate_membership


def _world(seed, n, d=8):
    """A noisy linear concept: about a fifth of the labels disagree with their neighbourhood."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)) > 0).astype(np.int64)
    return X, y


def _audit_auc(model_factory, seed, *, null=False, n=400, **params):
    """AUC and its 95 % interval of the attack on n members and n non-members of a fitted model (``null``: the model
    was trained on other records, so members and non-members are exchangeable)."""
    X, y = _world(seed, 2 * n)
    if null:
        X_train, y_train = _world(seed + 1000, n)
    else:
        X_train, y_train = X[:n], y[:n]
    model = model_factory().fit(X_train, y_train)
    is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
    res = LabelOnlyAttack(random_state=seed, **params).score(X, y, model.predict)
    m = evaluate_membership(is_member, res.scores_array, fprs=(0.05,), n_boot=50)
    return m.auc, m.auc_ci, res, is_member


def test_one_nearest_neighbour_leaks_over_five_seeds():
    """1-NN keeps every member: each of 5 seeds' AUC interval lies well above 0.5."""
    lows = [_audit_auc(lambda: KNeighborsClassifier(1), seed, n_queries=16)[1][0] for seed in range(5)]
    assert min(lows) > 0.7, lows


def test_robustness_beats_the_gap_attack_on_one_nearest_neighbour():
    """The perturbed copies add what the unperturbed label cannot: on 1-NN the robustness score's AUC exceeds the
    gap attack's (n_queries=0) in every seed."""
    for seed in range(5):
        a_noise = _audit_auc(lambda: KNeighborsClassifier(1), seed, n_queries=16)[0]
        a_gap = _audit_auc(lambda: KNeighborsClassifier(1), seed, n_queries=0)[0]
        assert a_noise > a_gap + 0.03, (seed, a_noise, a_gap)


def test_fully_grown_tree_leaks_over_five_seeds():
    lows = [_audit_auc(lambda: DecisionTreeClassifier(random_state=0), seed, n_queries=16)[1][0]
            for seed in range(5)]
    assert min(lows) > 0.5, lows


def test_null_model_auc_interval_contains_half():
    """A model trained on other records: the 95 % interval covers 0.5 in at least 4 of 5 seeds (two or more misses
    have probability 2.3 % when each interval covers with probability 95 %)."""
    covered = []
    for seed in range(5):
        _, (lo, hi), _, _ = _audit_auc(lambda: KNeighborsClassifier(1), seed, null=True, n_queries=16)
        covered.append(lo <= 0.5 <= hi)
    assert sum(covered) >= 4, covered


def test_gap_attack_is_correctness():
    X, y = _world(0, 200)
    model = KNeighborsClassifier(3).fit(X[:100], y[:100])
    res = LabelOnlyAttack(n_queries=0).score(X, y, model.predict)
    np.testing.assert_array_equal(res.scores_array, (model.predict(X) == y).astype(float))
    assert res.info["n_queries"] == 200


def test_same_seed_same_scores_whatever_the_order_and_batches(monkeypatch):
    """A record's copies depend on the seed and the record only: the same scores in any order and any batching."""
    rng = np.random.default_rng(1)
    X = np.hstack([rng.normal(size=(300, 3)), rng.integers(0, 2, (300, 1)), np.eye(3)[rng.integers(0, 3, 300)]])
    y = rng.integers(0, 2, 300)
    model = KNeighborsClassifier(1).fit(X[:150], y[:150])
    att = LabelOnlyAttack(n_queries=8, onehot_groups=[slice(4, 7)], random_state=3)
    a = att.score(X, y, model.predict).scores_array
    np.testing.assert_array_equal(a, att.score(X, y, model.predict).scores_array)
    assert not np.array_equal(a, att.set_params(random_state=4).score(X, y, model.predict).scores_array)
    att.set_params(random_state=3)
    perm = rng.permutation(300)
    np.testing.assert_array_equal(att.score(X[perm], y[perm], model.predict).scores_array, a[perm])
    import leakaudit.membership.label_only as lo

    monkeypatch.setattr(lo, "_BATCH_ROWS", 40)  # 5 records per batch
    calls = []

    def counted(Z):
        calls.append(len(Z))
        return model.predict(Z)

    np.testing.assert_array_equal(att.score(X, y, counted).scores_array, a)
    assert len(calls) == 1 + 300 // 5  # the unperturbed records, then one call per batch


def test_attack_contract_checks():
    """The checks every registered attack passes (leakaudit.membership._checks), on the label-only attack."""
    from leakaudit.membership._checks import CHECKS

    for check in CHECKS:
        check(LabelOnlyAttack(n_queries=16))


def test_reads_labels_only():
    """The attack never reads the target's probabilities, and asks the model only for labels."""
    X, y = _world(2, 200)
    model = KNeighborsClassifier(1).fit(X[:100], y[:100])
    asked = []

    def predict_labels(Z):
        asked.append(Z.shape)
        return model.predict(Z)

    garbage = np.full((200, 2), 0.5)
    inputs = AttackInputs(probs=garbage, y=y, X=X, extra={"predict_labels": predict_labels})
    att = LabelOnlyAttack(n_queries=4, random_state=0)
    assert att.missing(inputs) == []
    r1 = att.run(inputs)
    inputs2 = AttackInputs(probs=model.predict_proba(X), y=y, X=X, extra={"predict_labels": model.predict})
    np.testing.assert_array_equal(r1.scores_array, att.run(inputs2).scores_array)
    assert all(s[1] == X.shape[1] for s in asked)
    # through the model's predict_proba: only its arg-max is used (same labels as predict for 1-NN)
    inputs3 = AttackInputs(probs=garbage, y=y, X=X, model=model)
    np.testing.assert_array_equal(r1.scores_array, att.run(inputs3).scores_array)


def test_missing_inputs_are_named_and_run_attacks_skips():
    X, y = _world(0, 50)
    att = LabelOnlyAttack()
    inputs = AttackInputs(probs=np.full((50, 2), 0.5), y=y)
    miss = att.missing(inputs)
    assert miss[0] == "X" and "predict_labels" in miss[1]
    _, _, skipped = run_attacks(inputs, np.r_[np.ones(25, int), np.zeros(25, int)], [att], n_boot=10)
    assert "label_only" in skipped and "predict_labels" in skipped["label_only"]
    with pytest.raises(InvalidInputError, match="predict_labels"):
        att.run(inputs)


def test_bad_predict_labels_is_one_clear_error():
    X, y = _world(0, 30)
    with pytest.raises(InvalidInputError, match="one label per record"):
        LabelOnlyAttack(n_queries=2).score(X, y, lambda Z: np.zeros((len(Z), 2)))
    with pytest.raises(InvalidInputError, match="callable"):
        LabelOnlyAttack().score(X, y, "not a function")
    with pytest.raises(InvalidParameterError, match="n_queries"):
        LabelOnlyAttack(n_queries=-1).score(X, y, lambda Z: np.zeros(len(Z), int))
    with pytest.raises(InvalidInputError, match="predict_proba"):
        labels_from_model(object())


def test_perturbations_keep_the_encoding():
    """Continuous columns get noise of the stated scale, binary columns flip at the stated rate and every one-hot
    group keeps exactly one 1, switching at the stated rate."""
    rng = np.random.default_rng(0)
    n, k = 2000, 4
    cont = rng.normal(scale=3.0, size=(n, 1))
    binary = rng.integers(0, 2, size=(n, 1)).astype(float)
    cat = np.eye(k)[rng.integers(0, k, n)]
    X = np.hstack([cont, binary, cat])
    out = perturb_records(X, 5, noise_scale=0.2, flip_prob=0.1, onehot_groups=[slice(2, 2 + k)], random_state=1)
    assert out.shape == (n, 5, X.shape[1])
    noise = (out[:, :, 0] - X[:, [0]]).ravel()
    assert abs(noise.std() / (0.2 * X[:, 0].std()) - 1) < 0.03  # 10,000 draws: the sd's relative error ~0.7 %
    flips = (out[:, :, 1] != X[:, [1]]).mean()
    assert set(np.unique(out[:, :, 1])) <= {0.0, 1.0}
    group = out[:, :, 2:]
    assert np.all(group.sum(axis=2) == 1) and set(np.unique(group)) <= {0.0, 1.0}
    switched = (group.argmax(axis=2) != cat.argmax(axis=1)[:, None]).mean()
    for rate in (flips, switched):  # 10,000 Bernoulli(0.1): sd 0.003
        assert abs(rate - 0.1) < 0.012, rate


def test_perturbation_arguments_are_checked():
    X = np.eye(3)
    with pytest.raises(InvalidParameterError, match="onehot_groups\\[0\\]"):
        perturb_records(X, 2, onehot_groups=[[0]])
    with pytest.raises(InvalidParameterError, match="out of range"):
        perturb_records(X, 2, onehot_groups=[[1, 5]])
    with pytest.raises(InvalidParameterError, match="overlaps"):
        perturb_records(X, 2, onehot_groups=[[0, 1], [1, 2]])
    with pytest.raises(InvalidParameterError, match="flip_prob"):
        perturb_records(X, 2, flip_prob=1.5)
