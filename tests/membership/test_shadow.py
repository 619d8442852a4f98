"""ShadowModelAttack's attack-network trainers: TorchMLP's compiled kernel and the sklearn fallback."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.membership.shadow import ShadowModelAttack, attack_features
from leakaudit.metrics import auc

pytest.importorskip("torch")

from leakaudit.learners import TorchMLP  # noqa: E402


def _toy(seed=0, M=4, n=80, C=3, d=5):
    """Shadow outputs that are confident on "in" records; attributes with zeros (sparse inputs)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    mask = np.zeros((M, n), bool)
    for j in range(M):
        mask[j, rng.permutation(n)[: n // 2]] = True
    conf = np.where(mask, 0.9, 0.5)[..., None]
    probs = conf * np.eye(C)[y] + (1 - conf) / C
    probs = probs + 0.02 * rng.random(probs.shape)
    probs /= probs.sum(-1, keepdims=True)
    return probs, mask, y, X


def _canonical_rows(probs, mask, y, X):
    """The attack training set in the documented canonical order (lexicographic on features, then label)."""
    M, n, C = probs.shape
    feats = np.vstack([attack_features(X, y, probs[j], n_classes=C) for j in range(M)])
    labels = mask.reshape(-1).astype(int)
    order = np.lexsort(np.column_stack([feats, labels]).T[::-1])
    return feats[order], labels[order], np.tile(y, M)[order]


def _assert_same_net(a, b):
    for wa, wb in zip(a.weights_ + a.biases_, b.weights_ + b.biases_):
        np.testing.assert_array_equal(wa, wb)


def test_compiled_net_is_longs_network_trained_by_torch_mlp():
    probs, mask, y, X = _toy()
    att = ShadowModelAttack(backend="compiled", random_state=3).fit(probs, mask, y, X)
    assert att.backend_ == "compiled" and list(att.models_) == [None]
    net = att.models_[None]
    assert [w.shape for w in net.weights_] == [(X.shape[1] + 2 * 3, 32), (32, 2)] and net.activation == "relu"
    # reference: the faithful TorchMLP on the canonical rows, with the first seed drawn from random_state
    feats, labels, _ = _canonical_rows(probs, mask, y, X)
    seed = int(np.random.default_rng(3).integers(0, 2**31 - 1))
    ref = TorchMLP(hidden=(32,), activation="relu", mode="faithful", lr=0.01, epochs=30).fit(
        feats, labels, random_state=seed, n_classes=2)
    _assert_same_net(net, ref)
    f = attack_features(X, y, probs[0], n_classes=3)
    np.testing.assert_array_equal(att.score(probs[0], y, X).scores_array, ref.predict_proba(f)[:, 1])


def test_per_class_batched_equals_one_class_at_a_time():
    probs, mask, y, X = _toy(seed=1, C=3)
    att = ShadowModelAttack(per_class=True, backend="compiled", epochs=10, random_state=7).fit(probs, mask, y, X)
    feats, labels, classes = _canonical_rows(probs, mask, y, X)
    rng = np.random.default_rng(7)
    assert sorted(att.models_) == [0, 1, 2]
    for g in (0, 1, 2):  # one seed per class, drawn in class order
        rows = classes == g
        one = TorchMLP(hidden=(32,), activation="relu", mode="faithful", lr=0.01, epochs=10).fit(
            feats[rows], labels[rows], random_state=int(rng.integers(0, 2**31 - 1)), n_classes=2)
        _assert_same_net(att.models_[g], one)


def test_same_seed_same_scores_and_order_free():
    probs, mask, y, X = _toy(seed=2)
    target = probs[1]
    a = ShadowModelAttack(random_state=11).fit(probs, mask, y, X).score(target, y, X).scores_array
    b = ShadowModelAttack(random_state=11).fit(probs, mask, y, X).score(target, y, X).scores_array
    np.testing.assert_array_equal(a, b)
    # permuting the records and the shadow models gives the same network, hence the same scores
    rng = np.random.default_rng(0)
    rec, sh = rng.permutation(len(y)), rng.permutation(len(probs))
    c = ShadowModelAttack(random_state=11).fit(probs[sh][:, rec], mask[sh][:, rec], y[rec], X[rec])
    np.testing.assert_array_equal(c.score(target, y, X).scores_array, a)
    d = ShadowModelAttack(random_state=12).fit(probs, mask, y, X).score(target, y, X).scores_array
    assert not np.array_equal(a, d)


def test_per_class_constant_class_and_unseen_class():
    probs, mask, y, X = _toy(seed=3, C=3)
    mask[:, y == 2] = True  # class 2 is "in" for every shadow model
    att = ShadowModelAttack(per_class=True, backend="compiled", epochs=5, random_state=0).fit(probs, mask, y, X)
    assert sorted(att.models_) == [0, 1] and att.constant_ == {2: 1.0}
    res = att.score(probs[0], y, X)
    np.testing.assert_array_equal(res.scores_array[y == 2], 1.0)
    only_in = ShadowModelAttack(per_class=True, backend="compiled", random_state=0).fit(probs, np.ones_like(mask), y, X)
    assert only_in.models_ == {} and only_in.constant_ == {0: 1.0, 1: 1.0, 2: 1.0}


def test_minibatch_compiled_net_is_fast_mode_sgd():
    probs, mask, y, X = _toy(seed=5)
    att = ShadowModelAttack(batch_size=8, epochs=4, random_state=3).fit(probs, mask, y, X)
    assert att.backend_ == "compiled"
    feats, labels, _ = _canonical_rows(probs, mask, y, X)
    seed = int(np.random.default_rng(3).integers(0, 2**31 - 1))
    # batch-mean gradients at lr 0.01 * 8 (the linear scaling rule, scale_lr=True)
    ref = TorchMLP(hidden=(32,), activation="relu", mode="fast", optimizer="sgd", lr=0.08, batch_size=8, epochs=4,
                   backend="compiled").fit(feats, labels, random_state=seed, n_classes=2)
    _assert_same_net(att.models_[None], ref)
    unscaled = ShadowModelAttack(batch_size=8, epochs=4, scale_lr=False, random_state=3).fit(probs, mask, y, X)
    ref01 = TorchMLP(hidden=(32,), activation="relu", mode="fast", optimizer="sgd", lr=0.01, batch_size=8, epochs=4,
                     backend="compiled").fit(feats, labels, random_state=seed, n_classes=2)
    _assert_same_net(unscaled.models_[None], ref01)


def test_backend_choice_and_errors(monkeypatch):
    probs, mask, y, X = _toy(seed=4, n=40)
    assert ShadowModelAttack(batch_size=8, epochs=2, random_state=0).fit(probs, mask, y, X).backend_ == "compiled"
    assert ShadowModelAttack(backend="sklearn", epochs=2, random_state=0).fit(probs, mask, y, X).backend_ == "sklearn"
    assert ShadowModelAttack(backend="sklearn", batch_size=8, epochs=2, random_state=0).fit(
        probs, mask, y, X).backend_ == "sklearn"
    with pytest.raises(InvalidParameterError, match="backend"):
        ShadowModelAttack(backend="torch").fit(probs, mask, y, X)
    with pytest.raises(InvalidParameterError, match="learning_rate"):
        ShadowModelAttack(learning_rate=0).fit(probs, mask, y, X)
    with pytest.raises(InvalidInputError, match="y holds labels outside 0..2"):
        ShadowModelAttack().fit(probs, mask, np.where(y == 0, 3, y), X)
    with pytest.raises(InvalidParameterError, match="backend='numba' is now called backend='compiled'"):
        ShadowModelAttack(backend="numba").fit(probs, mask, y, X)
    with pytest.raises(InvalidParameterError, match="no copy for hidden=20 units"):
        ShadowModelAttack(backend="compiled", hidden=20).fit(probs, mask, y, X)
    assert ShadowModelAttack(hidden=20, epochs=2, random_state=0).fit(probs, mask, y, X).backend_ == "sklearn"
    monkeypatch.setenv("LEAKAUDIT_NATIVE", "0")  # as without a compiled kernel
    assert ShadowModelAttack(epochs=2, random_state=0).fit(probs, mask, y, X).backend_ == "sklearn"
    assert ShadowModelAttack(batch_size=8, epochs=2, random_state=0).fit(probs, mask, y, X).backend_ == "sklearn"
    with pytest.raises(InvalidParameterError, match="compiled kernel is not available: disabled by LEAKAUDIT_NATIVE"):
        ShadowModelAttack(backend="compiled").fit(probs, mask, y, X)


def _overfit_purchase_like(seed, *, n_shadows=4, n_adversary=400, n_target=200):
    """Purchase-like baskets (100 binary features, 10 k-means classes); Long's NN (64 tanh, per-example SGD,
    30 epochs) as target and shadow models; the target overfits (train accuracy 1.0)."""
    from leakaudit.data.synthetic import make_purchase_like
    from leakaudit.membership._base import fit_reference_models

    ds = make_purchase_like(n_records=n_adversary + 2 * n_target, n_features=100, n_classes=10, random_state=seed)
    X, y = ds.frame.to_numpy(float), np.asarray(ds.y)
    net = TorchMLP(hidden=(64,), activation="tanh", epochs=30)
    D = np.arange(n_adversary)
    ev = np.arange(n_adversary, n_adversary + 2 * n_target)  # first half members of the target's training set
    refs = fit_reference_models(net, X[D], y[D], n_shadows, n_classes=10, random_state=seed)
    target = net.fit(X[ev[:n_target]], y[ev[:n_target]], random_state=seed + 100, n_classes=10)
    is_member = np.r_[np.ones(n_target, int), np.zeros(n_target, int)]
    return refs, X, y, D, ev, target.predict_proba(X[ev]), is_member


def _shadow_auc(backend, data, seed, batch_size=1):
    refs, X, y, D, ev, probs, is_member = data
    att = ShadowModelAttack(backend=backend, batch_size=batch_size, random_state=seed).fit(
        refs.probs, refs.in_mask, y[D], X[D])
    return auc(is_member, att.score(probs, y[ev], X[ev]).scores_array)


def test_compiled_attack_beats_chance_on_overfit_purchase_like():
    # measured (seeds 0-7): AUC 0.694-0.774
    for seed in (0, 1, 2):
        assert _shadow_auc("compiled", _overfit_purchase_like(seed), seed) > 0.6


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [1, 32])
def test_compiled_and_sklearn_attack_quality_comparable(batch_size):
    """Both trainers of the attack net reach similar AUC on an overfit Purchase-like MLP.

    Measured before setting the bounds (this setup, seeds 0-7, AUC of the since removed numba kernel / sklearn):
    0.734/0.739, 0.706/0.724, 0.743/0.650, 0.715/0.728, 0.694/0.695, 0.718/0.710, 0.774/0.762, 0.701/0.784; means
    0.723 / 0.724. Per-seed differences reach 0.09 (different init, row order, output parametrisation;
    sd 0.045), so the test compares means over 4 seeds (sd of that mean difference ~0.023): tolerance
    0.06 is ~2.6 sd. Lowest AUC seen 0.650, bound 0.6. The check is one-sided (ours must not be worse):
    with mini-batches of 32 the compiled net was better (seeds 0-3: 0.807/0.744, 0.741/0.714, 0.760/0.607,
    0.746/0.731; means 0.763 / 0.699).
    """
    aucs = {"compiled": [], "sklearn": []}
    for seed in range(4):
        data = _overfit_purchase_like(seed)
        for b in aucs:
            aucs[b].append(_shadow_auc(b, data, seed, batch_size))
    for b, v in aucs.items():
        assert min(v) > 0.6, (b, v)
    assert np.mean(aucs["compiled"]) > np.mean(aucs["sklearn"]) - 0.06, aucs
