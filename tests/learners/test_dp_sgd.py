"""DPSGD: batched DP-SGD around TorchMLP / TorchCNN nets (Opacus for other modules), with its accounting.

The oracle: with no noise and a clip norm no gradient reaches, DP-SGD on shuffled batches is plain mini-batch
SGD, which TorchMLP's fast mode trains (same init, same row order). Per-example clipping is checked against
per-example gradients from torch.func, the epsilon against dp_accounting called directly.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("dp_accounting")

from leakaudit.exceptions import (
    InvalidInputError,
    InvalidParameterError,
    UnsupportedError,
)
from leakaudit.learners import TorchCNN, TorchMLP, TorchModuleLearner
from leakaudit.learners.dp_sgd import DPSGD, _BatchedDPSGD, dpsgd_accounted_epsilon


def _data(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def _dp(**kw):
    base = {"learner": TorchMLP(hidden=(16,)), "noise_multiplier": 1.0, "max_grad_norm": 1.0, "sampling_rate": 0.2,
                "epochs": 2, "lr": 0.5}
    base.update(kw)
    return DPSGD(**base)


def test_shapes_and_recorded_epsilon():
    X, y = _data()
    bank = _dp().fit_many(X, y, [np.arange(60), np.arange(60, 120), np.arange(120)], [1, 2, 3])
    assert bank.predict_proba(X).shape == (3, 120, 2)
    assert len(bank.info["epsilon"]) == 3 and all(0 < e < math.inf for e in bank.info["epsilon"])
    assert "add/remove" in bank.info["accounting"]
    model = _dp().fit(X, y, random_state=0)
    assert model.predict_proba(X).shape == (120, 2) and model.epsilon_ == bank.info["epsilon"][2]


def test_same_seed_same_model_other_seed_other_model():
    X, y = _data()
    a = _dp().fit_many(X, y, [np.arange(100)], [7]).predict_proba(X)
    b = _dp().fit_many(X, y, [np.arange(100)], [7]).predict_proba(X)
    c = _dp().fit_many(X, y, [np.arange(100)], [8]).predict_proba(X)
    assert np.array_equal(a, b)
    assert np.abs(a - c).max() > 1e-3


def test_no_noise_and_huge_clip_is_plain_sgd():
    """The oracle: TorchMLP's own mini-batch SGD (fast mode, same seed: same init and row orders)."""
    X, y = _data(n=96)
    subsets, seeds = [np.arange(96), np.arange(48)], [3, 4]
    plain = TorchMLP(hidden=(16,), mode="fast", optimizer="sgd", lr=0.3, batch_size=16, epochs=3, dtype="float64")
    dp = DPSGD(learner=plain, noise_multiplier=0.0, max_grad_norm=1e9, sampling="shuffle", batch_size=16,
               epochs=3, lr=0.3)
    want = plain.fit_many(X, y, subsets, seeds).predict_proba(X)
    got = dp.fit_many(X, y, subsets, seeds)
    assert np.abs(got.predict_proba(X) - want).max() < 1e-9
    assert got.info["epsilon"] == [math.inf, math.inf]
    # ... and a finite clip norm changes the model (clipping is active on these gradients)
    clipped = DPSGD(**{**dp.get_params(deep=False), "max_grad_norm": 0.05}).fit_many(X, y, subsets, seeds)
    assert np.abs(clipped.predict_proba(X) - want).max() > 1e-3


def _per_example_grads_mlp(tr, P, x, y):
    """Each example's gradient of its NLL, by torch.func (flattened): (K, B, n_params)."""
    from torch.func import grad, vmap

    def loss(P, xi, yi):
        h = xi
        L = len(P) // 2
        for l in range(L):
            h = h @ P[2 * l] + P[2 * l + 1]
            if l < L - 1:
                h = torch.tanh(h)
        return -torch.log_softmax(h, -1).gather(-1, yi.unsqueeze(-1)).squeeze(-1)

    out = []
    for k in range(x.shape[0]):
        Pk = [p[k] for p in P]
        g = vmap(grad(loss), in_dims=(None, 0, 0))(Pk, x[k], y[k])
        out.append(torch.cat([gi.reshape(gi.shape[0], -1) for gi in g], 1))
    return torch.stack(out)


def test_clipping_bounds_each_example_gradient():
    X, y = _data()
    dp = _dp(learner=TorchMLP(hidden=(16, 8)), max_grad_norm=0.3)
    tr = _BatchedDPSGD(dp, "mlp", X, y, [np.arange(120)] * 2, [1, 2], [dp.schedule(120)] * 2, 2, None)
    _, params, _ = tr._inits()
    P = [torch.from_numpy(p).double() for p in params]
    idx = torch.arange(10).repeat(2, 1)
    xb, yb = torch.from_numpy(X)[idx], torch.from_numpy(y)[idx]
    per = _per_example_grads_mlp(tr, P, xb, yb)
    want_norms = per.norm(dim=-1)
    assert want_norms.min() > 0.3  # clipping is active on every example of the check
    w = torch.ones(2, 10, dtype=torch.float64)
    sums, norms = tr._mlp_clipped_sum(P, xb, yb, w, 0.3, True)
    assert torch.allclose(norms, want_norms, rtol=1e-6)
    clipped = per * torch.clamp(0.3 / (want_norms + 1e-6), max=1.0).unsqueeze(-1)
    assert (clipped.norm(dim=-1) <= 0.3 + 1e-9).all()
    flat = torch.cat([s.reshape(2, -1) for s in sums], 1)
    assert torch.allclose(flat, clipped.sum(1), atol=1e-9)
    # one example alone: the clipped sum is that example's gradient, of norm C
    one, _ = tr._mlp_clipped_sum(P, xb[:, :1], yb[:, :1], w[:, :1], 0.3, True)
    assert torch.allclose(torch.cat([s.reshape(2, -1) for s in one], 1).norm(dim=1),
                          torch.full((2,), 0.3, dtype=torch.float64), rtol=1e-5)


def test_cnn_clipping_and_shapes():
    rng = np.random.default_rng(0)
    X = (rng.random((24, 36)) < 0.4).astype(float)
    y = np.arange(24) % 3
    cnn = TorchCNN(size=2, padding="same", image_shape=(1, 6, 6), dtype="float64")
    dp = DPSGD(learner=cnn, noise_multiplier=0.5, max_grad_norm=0.1, sampling_rate=0.25, epochs=1, lr=0.1)
    bank = dp.fit_many(X, y, [np.arange(24), np.arange(12)], [1, 2])
    assert bank.predict_proba(X).shape == (2, 24, 3)
    tr = _BatchedDPSGD(dp, "cnn", X, y, [np.arange(24)] * 2, [1, 2], [dp.schedule(24)] * 2, 3, None)
    _, params, _ = tr._inits()
    P = [torch.from_numpy(p) for p in params]
    idx = torch.arange(4).repeat(2, 1)
    w = torch.ones(2, 4, dtype=torch.float64)
    sums, norms = tr._cnn_clipped_sum(P, torch.from_numpy(X)[idx], torch.from_numpy(y)[idx], w, 0.1, True)
    # per model, the clipped sum of 4 examples has norm at most 4 C, and each example alone is clipped to C
    flat = torch.cat([s.reshape(2, -1) for s in sums], 1)
    assert (flat.norm(dim=1) <= 0.4 + 1e-9).all() and (norms > 0.1).all()
    one, _ = tr._cnn_clipped_sum(P, torch.from_numpy(X)[idx[:, :1]], torch.from_numpy(y)[idx[:, :1]], w[:, :1],
                                 0.1, True)
    assert torch.allclose(torch.cat([s.reshape(2, -1) for s in one], 1).norm(dim=1),
                          torch.full((2,), 0.1, dtype=torch.float64), rtol=1e-5)


def test_accounting_matches_dp_accounting():
    import dp_accounting as dpa
    from dp_accounting import pld

    X, y = _data()
    bank = _dp(sampling_rate=0.1, epochs=3, noise_multiplier=1.2, target_delta=1e-4).fit_many(X, y, [np.arange(120)],
                                                                                            [0])
    acc = pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.2)), 30))
    assert bank.info["steps"] == [30]
    assert bank.info["epsilon"][0] == pytest.approx(acc.get_epsilon(1e-4), rel=1e-12)
    # shuffled fixed-size batches: replace-one, one Gaussian mechanism per epoch, no amplification
    sh = _dp(sampling="shuffle", sampling_rate=None, batch_size=20, epochs=3, noise_multiplier=4.0)
    acc = pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 3))
    assert sh.accounted_epsilon(120) == pytest.approx(acc.get_epsilon(1e-5), rel=1e-12)
    assert "replace one" in sh.accounting()


def test_rdp_replace_one_guard_and_bad_parameters():
    with pytest.raises(UnsupportedError, match="RDP accountant ignores REPLACE_ONE"):
        dpsgd_accounted_epsilon(noise_multiplier=1.0, sampling="poisson", sampling_rate=0.1, steps=10, epochs=1,
                                delta=1e-5, neighbouring="replace_one", accountant="rdp")
    X, y = _data()
    for kw, match in [({"batch_size": 10}, "exactly one of sampling_rate and batch_size"),
                      ({"sampling_rate": 1.5}, "sampling_rate"),
                      ({"sampling": "shuffle", "neighbouring": "add_remove"}, "replace_one"),
                      ({"noise_multiplier": -1.0}, "noise_multiplier"),
                      ({"bug": "typo"}, "bug"),
                      ({"learner": None}, "learner must be")]:
        with pytest.raises((InvalidParameterError, UnsupportedError), match=match):
            _dp(**kw).fit(X, y, random_state=0)
    with pytest.raises(InvalidInputError, match="batch_size=500"):
        _dp(sampling_rate=None, batch_size=500).fit(X, y, random_state=0)


def test_planted_bugs_are_visible_to_gradient_canaries():
    """Clipping skipped and noise scaled by the batch make inserted canaries stand out; a correct run does not."""
    from sklearn.metrics import roc_auc_score

    X, y = _data(n=200)
    inc = np.random.default_rng(5).random((2, 200)) < 0.5
    aucs = {}
    for bug in (None, "skip_clipping", "noise_per_batch"):
        _, scores = _dp(learner=TorchMLP(hidden=(40,)), noise_multiplier=2.0, epochs=5,
                           bug=bug).fit_many_with_canaries(
            X, y, [np.arange(200)] * 2, [1, 2], included=inc)
        aucs[bug] = min(roc_auc_score(inc[k], scores[k]) for k in range(2))
    assert aucs["skip_clipping"] > 0.95 and aucs["noise_per_batch"] > 0.95
    assert aucs[None] < 0.9


def test_opacus_path_for_other_modules():
    pytest.importorskip("opacus")
    X, y = _data(n=80, d=4)
    inner = TorchModuleLearner(module="_torch_module_helpers:TinyNet")
    dp = DPSGD(learner=inner, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=16, epochs=2, lr=0.1)
    bank = dp.fit_many(X, y, [np.arange(80), np.arange(40)], [1, 2])
    assert bank.predict_proba(X).shape == (2, 80, 2)
    assert bank.info["trained"] == "opacus" and bank.info["steps"] == [10, 6]
    again = dp.fit_many(X, y, [np.arange(80), np.arange(40)], [1, 2])
    assert np.allclose(again.predict_proba(X), bank.predict_proba(X))
    with pytest.raises(UnsupportedError, match="bug"):
        DPSGD(**{**dp.get_params(deep=False), "bug": "skip_clipping"}).fit(X, y, random_state=0)


def test_extra_canaries_leave_the_trained_net_unchanged():
    """Canaries on the auditor's own parameters: the net the data trains is bit for bit the one without them."""
    X, y = _data(n=150)
    dp = _dp(learner=TorchMLP(hidden=(16,)), epochs=3)
    subsets, seeds = [np.arange(150), np.arange(100)], [4, 5]
    plain = dp.fit_many(X, y, subsets, seeds).predict_proba(X)
    inc = np.random.default_rng(0).random((2, 300)) < 0.5
    bank, scores = dp.fit_many_with_canaries(X, y, subsets, seeds, included=inc)
    assert np.array_equal(bank.predict_proba(X), plain)
    assert scores.shape == (2, 300) and np.isfinite(scores).all()
    # ... while "dirac" canaries on the net's own weights do change it
    other, _ = dp.fit_many_with_canaries(X, y, subsets, seeds, included=inc[:, :50], directions="dirac")
    assert np.abs(other.predict_proba(X) - plain).max() > 1e-4


def test_a_step_without_noise_exposes_the_canaries_sampled_in_it():
    """The canaries in the noiseless step's batch get the top scores, all of them included ones."""
    X, y = _data(n=200)
    inc = np.random.default_rng(1).random((1, 4000)) < 0.5
    dp = _dp(learner=TorchMLP(hidden=(16,)), noise_multiplier=1.0, sampling_rate=0.05, epochs=2)
    _, ok = dp.fit_many_with_canaries(X, y, [np.arange(200)], [3], included=inc)
    _, bad = dp.set_params(bug="skip_noise_step").fit_many_with_canaries(X, y, [np.arange(200)], [3], included=inc)
    top = np.argsort(-bad[0])[:60]  # about 0.05 * 2000 = 100 included canaries are in that step's batch
    assert inc[0, top].all() and bad[0, top].min() > 1e6
    assert ok[0].max() < 1e3 and inc[0, np.argsort(-ok[0])[:60]].mean() < 0.95
