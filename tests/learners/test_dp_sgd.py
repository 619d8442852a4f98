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
    assert bank.info["trained"] == bank.info["kernel"] == "opacus" and bank.info["steps"] == [10, 6]
    again = dp.fit_many(X, y, [np.arange(80), np.arange(40)], [1, 2])
    assert np.allclose(again.predict_proba(X), bank.predict_proba(X))
    with pytest.raises(UnsupportedError, match="directions='extra'"):
        dp.fit_many_with_canaries(X, y, [np.arange(80)], [1], included=np.ones((1, 10), bool), directions="dirac")


@pytest.mark.parametrize("n, q, rate, steps", [
    (400, 0.03, 1 / 34, 68),  # batches of 12: 400 / 12 is not whole, so Opacus samples at 1 / 34, not 0.03
    (926, 0.0108, 1 / 93, 184),  # 93 batches of 10; Opacus's sampler yields int(1 / (1 / 93)) = 92 an epoch
])
def test_opacus_path_accounts_the_steps_and_rate_opacus_runs(n, q, rate, steps):
    """A torch module trained through Opacus is accounted at the rate and for the steps Opacus runs (Poisson at
    1 / len(loader), int(1 / rate) batches an epoch), in the recorded epsilon, the audit's claim check and its
    noise check alike; counted from the run itself (one noise measurement per optimizer step)."""
    pytest.importorskip("opacus")
    from leakaudit.dpaudit import audit_dpsgd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] > 0).astype(int)
    dp = DPSGD(learner=TorchModuleLearner(module="_torch_module_helpers:TinyNet"), noise_multiplier=1.0,
               sampling_rate=q, epochs=2, lr=0.1)
    sch = dp.schedule(n)
    assert sch["sampling_rate"] == rate and sch["steps"] == steps
    opacus_eps = dpsgd_accounted_epsilon(noise_multiplier=1.0, sampling="poisson", sampling_rate=rate, steps=steps,
                                         epochs=2, delta=1e-5)
    assert dp.accounted_epsilon(n) == opacus_eps
    assert opacus_eps != dpsgd_accounted_epsilon(noise_multiplier=1.0, sampling="poisson", sampling_rate=q,
                                                 steps=math.ceil(2 / q), epochs=2, delta=1e-5)
    inc = np.random.default_rng(1).random((1, 50)) < 0.5
    bank, _ = dp.fit_many_with_canaries(X, y, [np.arange(n)], [3], included=inc)
    assert len(bank.info["canary_noise"]["mean_square"][0]) == steps  # the optimizer steps Opacus took
    assert bank.info["steps"] == [steps] and bank.info["sampling_rate"] == [rate]
    assert bank.info["epsilon"] == [opacus_eps]
    r = audit_dpsgd(dp, X, y, claimed_epsilon=opacus_eps * 1.0001, delta=1e-5, m=50, random_state=1)
    assert (r.accounted_epsilon, r.steps, r.sampling_rate) == (opacus_eps, steps, rate)
    # a claim between the two accountings: the old one (ceil(epochs / q) steps at q) accepted it
    low = dpsgd_accounted_epsilon(noise_multiplier=1.0, sampling="poisson", sampling_rate=q, steps=math.ceil(2 / q),
                                  epochs=2, delta=1e-5)
    if low < opacus_eps:
        with pytest.raises(InvalidParameterError, match="cannot be reproduced"):
            audit_dpsgd(dp, X, y, claimed_epsilon=low, delta=1e-5, m=50, random_state=1)


def test_opacus_path_refuses_to_train_a_schedule_it_did_not_account(monkeypatch):
    """Were Opacus to sample otherwise than the accountant counts (another version), training is refused."""
    pytest.importorskip("opacus")
    from leakaudit.learners import dp_sgd

    X, y = _data(n=80, d=4)
    dp = DPSGD(learner=TorchModuleLearner(module="_torch_module_helpers:TinyNet"), batch_size=16, epochs=1)
    real = dp_sgd._opacus_schedule
    monkeypatch.setattr(dp_sgd, "_opacus_schedule", lambda *a, **k: {**real(*a, **k), "sampling_rate": 0.2001})
    with pytest.raises(UnsupportedError, match="where leakaudit's accounting counted"):
        dp.fit_many(X, y, [np.arange(80)], [1])


def test_opacus_schedule_refuses_a_zero_mean_divisor():
    """Batches of one row where n * (1 / n) rounds below 1: Opacus would divide every step by 0."""
    dp = DPSGD(learner=TorchModuleLearner(module="_torch_module_helpers:TinyNet"), batch_size=1, epochs=1)
    bad = next(n for n in range(2, 200) if int(n * (1 / n)) == 0)
    with pytest.raises(InvalidParameterError, match="batch_size"):
        dp.schedule(bad)


@pytest.mark.parametrize("bug", [None, "skip_noise_step", "skip_clipping", "noise_per_batch"])
def test_opacus_whitebox_canaries_catch_planted_bugs(bug):
    """Gradient canaries through Opacus's DPOptimizer (a parameter tensor of the auditor's own, per-example
    gradients appended before its clipping and noise): a correct run is consistent with its claim in both the
    one-run bound and the per-step noise check; each planted bug is caught by one of them."""
    pytest.importorskip("opacus")
    from leakaudit.dpaudit import audit_dpsgd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] > 0).astype(int)
    dp = DPSGD(learner=TorchModuleLearner(module="_torch_module_helpers:TinyNet"), noise_multiplier=1.0,
               sampling_rate=0.05, epochs=2, lr=0.1, bug=bug)
    claim = dp.accounted_epsilon(400) * 1.0001
    r = audit_dpsgd(dp, X, y, claimed_epsilon=claim, delta=1e-5, m=4000, random_state=1)
    assert r.steps == 40 and r.noise_check_verdict is not None
    if bug is None:
        assert not r.violated and not r.noise_check_violated and 0.95 < r.noise_check_min_ratio < 1.1
    elif bug == "skip_clipping":
        assert r.violated and not r.noise_check_violated  # the noise is right; the clipped sum is not
    else:
        assert r.noise_check_violated and r.noise_check_min_ratio < 0.1
        assert r.violated


def test_extra_canaries_leave_the_trained_net_unchanged():
    """Canaries on the auditor's own parameters: the net the data trains is bit for bit the one without them."""
    X, y = _data(n=150)
    dp = _dp(learner=TorchMLP(hidden=(16,), backend="torch"), epochs=3)  # canaries: the torch trainer
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


# -- the compiled DP step (_mlp_native.c's leakaudit_dp_train_1h_f32) ------------------------------------------------
def _onehot_data(n=96, seed=0):
    """A numeric column and two one-hot groups (sparse rows: the kernel drops each group's dominant column), 3
    classes."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 15), np.float32)
    X[:, 0] = rng.normal(size=n)
    X[np.arange(n), 1 + rng.choice(8, n, p=[0.5, 0.2, 0.1, 0.05, 0.05, 0.04, 0.03, 0.03])] = 1.0
    X[np.arange(n), 9 + rng.choice(6, n, p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])] = 1.0
    return X, (X[:, 0] + X[:, 2] - X[:, 10] > 0).astype(int) + (X[:, 0] > 1)


def _compiled():
    from leakaudit.learners import _mlp_native

    if not _mlp_native.supports_dp():
        pytest.skip(f"the compiled kernel is not available ({_mlp_native.KERNEL.reason})")


@pytest.mark.parametrize("rows", ["onehot", "dense"])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_compiled_dp_without_noise_or_clipping_is_compiled_sgd(rows, activation):
    """Noise 0 and a clip norm no gradient reaches: the compiled DP step is the compiled non-private SGD step, bit for
    bit (shuffled batches of a size dividing n, so the expected batch is every batch's size)."""
    _compiled()
    X, y = _onehot_data() if rows == "onehot" else _data(n=96)
    subsets, seeds = [np.arange(96), np.arange(48)], [3, 4]
    plain = TorchMLP(hidden=(16,), activation=activation, mode="fast", optimizer="sgd", lr=0.3, batch_size=16,
                     epochs=3)
    dp = DPSGD(learner=plain, noise_multiplier=0.0, max_grad_norm=1e9, sampling="shuffle", batch_size=16, epochs=3,
               lr=0.3)
    want = plain.fit_many(X, y, subsets, seeds)
    got = dp.fit_many(X, y, subsets, seeds)
    assert got.info["kernel"] == "native" == want.info["kernel"]
    if rows == "onehot":
        assert want.info["onehot_groups"] == got.info["onehot_groups"] == 2
    for a, b in zip(got.weights_ + got.biases_, want.weights_ + want.biases_):
        assert np.array_equal(a, b)
    # a clip norm the gradients reach changes the model
    clipped = DPSGD(**{**dp.get_params(deep=False), "max_grad_norm": 0.05}).fit_many(X, y, subsets, seeds)
    assert np.abs(clipped.predict_proba(X) - want.predict_proba(X)).max() > 1e-3


@pytest.mark.parametrize("sampling, bug, hidden", [("poisson", None, 24), ("shuffle", None, 24),
                                                   ("poisson", "skip_clipping", 24), ("shuffle", "skip_clipping", 24),
                                                   ("poisson", None, 256)])
def test_compiled_dp_is_the_torch_loop_without_noise(sampling, bug, hidden):
    """With clipping active (or planted off) and no noise, the compiled step and DPSGD's torch loop (same inits and
    batches) train the same nets up to float rounding (256 units: the widest copy)."""
    _compiled()
    X, y = _onehot_data(n=150)
    kw = {"noise_multiplier": 0.0, "max_grad_norm": 0.2, "sampling": sampling, "epochs": 3, "lr": 0.5, "bug": bug,
          "batch_size": 20, "neighbouring": "replace_one"}
    subsets, seeds = [np.arange(150), np.arange(40, 130)], [5, 6]
    got = DPSGD(learner=TorchMLP(hidden=(hidden,)), **kw).fit_many(X, y, subsets, seeds)
    want = DPSGD(learner=TorchMLP(hidden=(hidden,), backend="torch"), **kw).fit_many(X, y, subsets, seeds)
    assert got.info["kernel"] == "native" and want.info["kernel"] == "torch"
    for a, b in zip(got.weights_ + got.biases_, want.weights_ + want.biases_):
        assert np.abs(a - b).max() < 1e-4
    # ... and clipping matters at this scale (the comparison is not of two runs that never clip)
    loose = DPSGD(learner=TorchMLP(hidden=(hidden,)), **{**kw, "max_grad_norm": 1e9}).fit_many(X, y, subsets, seeds)
    gap = np.abs(loose.predict_proba(X) - got.predict_proba(X)).max()
    assert gap < 1e-6 if bug == "skip_clipping" else gap > 1e-2


def _one_step_noise(X, y, **kw):
    """(noisy - noiseless) parameters of one full-batch step of the compiled DP step, divided by -lr (the noise of
    the step's sum, divided by the expected batch), and the noisy bank."""
    base = {"learner": TorchMLP(hidden=(64,)), "max_grad_norm": 0.7, "sampling_rate": 1.0, "epochs": 1, "lr": 0.3}
    base.update(kw)
    noisy = DPSGD(**base).fit_many(X, y, [np.arange(len(X))], [9])
    calm = DPSGD(**{**base, "noise_multiplier": 0.0}).fit_many(X, y, [np.arange(len(X))], [9])
    diff = np.concatenate([(a - b).ravel() for a, b in zip(noisy.weights_ + noisy.biases_,
                                                            calm.weights_ + calm.biases_)]).astype(np.float64)
    return diff / -base["lr"], noisy


def test_compiled_dp_noise_has_the_accounted_std():
    """One full-batch step with noise against the same step without: the difference is the noise alone,
    sigma * C / (expected batch) times standard normal draws (the gradients are the same at the init); the
    planted bugs scale it by 1 / batch or leave it out."""
    from scipy import stats

    _compiled()
    X, y = _data(n=64, d=40)
    noise, bank = _one_step_noise(X, y, noise_multiplier=2.0)
    assert bank.info["kernel"] == "native" and bank.info["steps"] == [1]
    z = noise / (2.0 * 0.7 / 64)
    assert z.size == 40 * 64 + 64 + 64 * 2 + 2
    assert abs(z.std() - 1) < 0.05 and abs(z.mean()) < 0.05
    assert stats.kstest(z, "norm").pvalue > 1e-3
    small, _ = _one_step_noise(X, y, noise_multiplier=2.0, bug="noise_per_batch")
    assert abs(small.std() / (2.0 * 0.7 / 64 / 64) - 1) < 0.05
    none, _ = _one_step_noise(X, y, noise_multiplier=2.0, bug="skip_noise_step")  # the one step is the middle one
    assert np.all(none == 0)


def _xoshiro_gauss_reference(state, n):
    """numpy's float64 rendering of _mlp_native.c's noise: 8 lanes of xoshiro128**, two outputs a group of 16
    draws, Box-Muller on their top 24 bits."""
    s = state.reshape(4, 8).astype(np.uint64)
    mask = np.uint64(0xFFFFFFFF)

    def rotl(x, k):
        return ((x << np.uint64(k)) | (x >> np.uint64(32 - k))) & mask

    def nxt():
        out = rotl((s[1] * np.uint64(5)) & mask, 7) * np.uint64(9) & mask
        t = (s[1] << np.uint64(9)) & mask
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 11)
        return out

    out = []
    for _ in range(-(-n // 16)):
        a, b = nxt(), nxt()
        u1 = (a >> np.uint64(8)).astype(np.float64) * 2.0**-24 + 2.0**-25
        u2 = (b >> np.uint64(8)).astype(np.float64) * 2.0**-24
        r = np.sqrt(-2 * np.log(u1))
        out += [r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)]
    return np.concatenate(out)[:n]


def test_compiled_noise_is_xoshiro_box_muller():
    """The kernel's draws are the reference generator's (float32 rounding of log and sincos: within 1e-5 of the
    float64 formula), normal (moments, KS over 2e5 draws), reproducible from the seed and a continuing stream."""
    from scipy import stats

    from leakaudit.learners import _mlp_native as nat

    _compiled()
    st = nat.noise_state([7, 0x0D95])
    ref = _xoshiro_gauss_reference(st.copy(), 4000)
    got = nat.gauss(st, 4000)
    assert np.abs(got - ref).max() < 1e-5 * max(1.0, np.abs(ref).max())
    big = nat.gauss(nat.noise_state([8]), 200_000).astype(np.float64)
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01 and abs(stats.kurtosis(big)) < 0.05
    assert stats.kstest(big, "norm").pvalue > 1e-3
    a, b = nat.noise_state([3]), nat.noise_state([3])
    assert np.array_equal(np.concatenate([nat.gauss(a, 32), nat.gauss(a, 40)]), nat.gauss(b, 72))
    assert not np.array_equal(nat.gauss(nat.noise_state([4]), 16), nat.gauss(nat.noise_state([3]), 16))


def test_compiled_dp_clips_each_example_to_the_norm():
    """The kernel's per-example norms are those of torch.func's per-example gradients, and one step's update is the
    sum of the clipped ones (each of norm at most C)."""
    from leakaudit.learners import _mlp_native as nat

    _compiled()
    X, y = _onehot_data(n=40)
    dp = _dp(learner=TorchMLP(hidden=(16,)), max_grad_norm=0.3)
    tr = _BatchedDPSGD(dp, "mlp", X, y, [np.arange(40)], [1], [dp.schedule(40)], 3, None)
    _, params, _ = tr._inits()
    d, H, C = tr.sizes
    indptr, indices, values = nat.csr_rows(X, True)
    xsq = np.einsum("ij,ij->i", X, X)
    batch = np.arange(0, 40, 3, dtype=np.int64)
    for onehot in (False, True):
        packed = nat.pack_1h([params[0], params[2]], [params[1], params[3]], np.float32)
        start = packed[0, : nat.n_params_1h(d, H, C)].copy()
        kern = nat.DpTrainer(indptr=indptr, indices=indices, values=values, x=None, y=y.astype(np.int64), xsq=xsq,
                             rows=np.arange(40), d=d, H=H, C=C, lr=1.0, inv=1.0, clip=0.3, activation=0,
                             onehot=onehot)
        assert kern.groups == (2 if onehot else 0)
        norms = np.full(batch.size, np.nan, np.float32)
        kern.steps(packed[0], batch, np.array([0, batch.size], np.int64), norms=norms)
        (W1, W2), (b1, b2) = nat.unpack_1h(packed[:, : start.size] - start[None], d, H, C)
        update = -np.concatenate([W1[0].ravel(), b1[0], W2[0].ravel(), b2[0]])  # torch's layout, W2 (H, C)
        P = [torch.from_numpy(p).double() for p in params]
        per = _per_example_grads_mlp(tr, P, torch.from_numpy(X).double()[batch][None],
                                     torch.from_numpy(y)[batch][None])[0]
        want = per.norm(dim=-1).numpy()
        assert (want > 0.3).sum() >= 5  # clipping is active on some of the batch
        assert np.allclose(norms, want, rtol=1e-4)
        clipped = per * torch.clamp(0.3 / (per.norm(dim=-1, keepdim=True) + 1e-6), max=1.0)
        assert (clipped.norm(dim=-1) <= 0.3 + 1e-9).all()
        assert np.allclose(update, clipped.sum(0).numpy(), atol=1e-5)


def test_poisson_steps_are_independent_coin_flips():
    """Each index joins each step with probability q, independently: rate per index, Binomial batch sizes,
    no dependence between consecutive steps (a block is 7 steps here, so its boundaries are crossed)."""
    from leakaudit.learners.dp_sgd import _PoissonSteps

    n, q, T = 50, 0.1, 4000
    s = _PoissonSteps(np.random.default_rng(0), n, q, block=7)
    hits = np.zeros((T, n), bool)
    for t in range(T):
        b = s.next()
        assert np.all(np.diff(b) > 0) and (b.size == 0 or (b[0] >= 0 and b[-1] < n))
        hits[t, b] = True
    sizes = hits.sum(1)
    sd = math.sqrt(n * q * (1 - q))
    assert abs(sizes.mean() - n * q) < 4 * sd / math.sqrt(T)
    assert abs(sizes.var() / sd**2 - 1) < 0.1
    assert np.abs(hits.mean(0) - q).max() < 4 * math.sqrt(q * (1 - q) / T)
    # consecutive steps: P(in both) = q^2
    both = (hits[1:] & hits[:-1]).mean()
    assert abs(both - q * q) < 4 * math.sqrt(q * q / ((T - 1) * n))
    # the same generator state gives the same steps
    a, b = _PoissonSteps(np.random.default_rng(3), n, q), _PoissonSteps(np.random.default_rng(3), n, q)
    assert all(np.array_equal(a.next(), b.next()) for _ in range(100))


def test_compiled_extra_canaries_are_the_torch_loops_without_noise():
    """The compiled step inserts "extra" canaries itself: without noise their scores are the torch loop's (same
    canary batches, clipped to the same norm), the net is the one trained without canaries, and the bank says the
    kernel trained; with noise the kernel noises them (every left-out canary's noisy sum has the accounted std)."""
    _compiled()
    X, y = _data(n=150)
    inc = np.random.default_rng(0).random((2, 300)) < 0.5
    subsets, seeds = [np.arange(150), np.arange(100)], [4, 5]
    kw = {"noise_multiplier": 0.0, "max_grad_norm": 0.5, "epochs": 3}
    got_bank, got = _dp(**kw).fit_many_with_canaries(X, y, subsets, seeds, included=inc)
    want_bank, want = _dp(learner=TorchMLP(hidden=(16,), backend="torch"), **kw).fit_many_with_canaries(
        X, y, subsets, seeds, included=inc)
    assert got_bank.info["kernel"] == "native" and want_bank.info["kernel"] == "torch"
    assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()
    assert np.array_equal(got_bank.predict_proba(X), _dp(**kw).fit_many(X, y, subsets, seeds).predict_proba(X))
    # with noise: the left-out canaries' per-step mean square is (sigma C)^2 within its sampling error
    bank, _ = _dp(noise_multiplier=1.3, max_grad_norm=0.5, epochs=3).fit_many_with_canaries(
        X, y, subsets, seeds, included=np.random.default_rng(1).random((2, 4000)) < 0.5)
    cn = bank.info["canary_noise"]
    for k in range(2):
        ms = np.asarray(cn["mean_square"][k])
        assert ms.size == bank.info["steps"][k] and cn["n"][k] > 1800
        assert np.abs(ms.mean() / (1.3 * 0.5) ** 2 - 1) < 0.02 and np.abs(ms / (1.3 * 0.5) ** 2 - 1).max() < 0.15


def test_compiled_canaries_are_clipped_and_noised_by_the_kernel():
    """The kernel's own canary handling, one full-batch step: a canary in the batch adds its gradient clipped to
    C (of norm 1000 C before clipping, or unclipped with the clip norm infinite); every canary parameter gets the
    step's noise, drawn after the net's from the same stream."""
    _compiled()
    from leakaudit.learners import _mlp_native as nat

    if not nat.supports_dp_canaries():
        pytest.skip("the compiled DP step predates gradient canaries")
    X, y = _data(n=64, d=6)
    X32 = np.ascontiguousarray(X, np.float32)
    d, H, C, E = 6, 16, 2, 4000
    P = nat.n_params_1h(d, H, C)
    cb = np.arange(0, E, 2, dtype=np.int64)  # even canaries in the batch
    for clip, want_in in ((0.7, 0.7), (math.inf, 700.0)):
        tr = nat.DpTrainer(indptr=None, indices=None, values=None, x=X32, y=y.astype(np.int64),
                           xsq=np.einsum("ij,ij->i", X32, X32), rows=np.arange(64), d=d, H=H, C=C, lr=0.3,
                           inv=1 / 64, clip=clip, activation=0, onehot=False, extra=E, canary_norm=700.0)
        for sigma in (0.0, 2.0):
            params = np.zeros(P + E, np.float32)
            params[:P] = np.random.default_rng(0).normal(size=P) * 0.1
            before = params.copy()
            state = nat.noise_state([1, 2])
            tr.steps(params, np.arange(64, dtype=np.int64), np.array([0, 64], np.int64), state,
                     np.array([sigma * 0.7 / 64], np.float32), cbatch=cb, cstep_ptr=np.array([0, cb.size], np.int64))
            noisy_sum = (before[P:] - params[P:]).astype(np.float64) / (np.float32(0.3) * np.float32(1 / 64))
            noise = noisy_sum - np.where(np.arange(E) % 2 == 0, want_in, 0.0)
            if sigma == 0:
                assert np.abs(noise).max() < 1e-3 * want_in
            else:
                # the draws after the net's P (in groups of 16) of the same stream
                z = nat.gauss(nat.noise_state([1, 2]), P + E)[P:]
                assert np.allclose(noise, sigma * 0.7 * z, atol=2e-3 * want_in)
