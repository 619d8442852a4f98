"""audit_dpsgd: the one-run audit of a DP-SGD recipe; a planted bug is caught, a correct run is not."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("dp_accounting")

from leakaudit.dpaudit import audit_dpsgd, calibrate_noise_multiplier, check_dp_claim
from leakaudit.exceptions import InvalidParameterError
from leakaudit.learners import DPSGD, TorchMLP


def _data(n=400, seed=0):
    """6 common binary features that set the label and 30 rare ones (as one-hot data has: Adult's rare categories)."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.random((n, 6)) < 0.3, rng.random((n, 30)) < 0.005]).astype(float)
    y = (X[:, 0] + X[:, 1] > 0.5).astype(int)
    return X, y


def _learner(**kw):
    return DPSGD(learner=TorchMLP(hidden=(40,)), noise_multiplier=1.5, max_grad_norm=1.0, sampling_rate=0.1,
                 epochs=3, lr=0.5, **kw)


def test_correct_run_is_consistent_and_bugs_violate_the_claim():
    X, y = _data()
    lr = _learner()
    eps = lr.set_params(target_delta=1e-5).accounted_epsilon(len(X))
    ok = audit_dpsgd(lr, X, y, claimed_epsilon=eps, delta=1e-5, m=400, random_state=1)
    assert not ok.violated and ok.epsilon_lower_bound <= eps
    for bug in ("skip_clipping", "noise_per_batch"):
        bad = audit_dpsgd(_learner(bug=bug), X, y, claimed_epsilon=eps, delta=1e-5, m=400, random_state=1)
        assert bad.violated and bad.verdict.startswith("the claim is violated"), (bug, bad.epsilon_lower_bound)


def test_input_canaries_black_box():
    X, y = _data(n=600)
    res = audit_dpsgd(_learner(), X[:400], y[:400], claimed_epsilon=50.0, delta=1e-3, m=200, canaries="input",
                      X_canary=X[400:], random_state=0)
    assert res.canaries == "input" and res.m == 200 and not res.violated


def test_claims_refused():
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="cannot be reproduced"):
        audit_dpsgd(_learner(), X, y, claimed_epsilon=0.1, delta=1e-3, m=100)
    with pytest.raises(InvalidParameterError, match="add/remove"):
        audit_dpsgd(DPSGD(learner=TorchMLP(), sampling="shuffle", batch_size=20), X, y, claimed_epsilon=10.0,
                    delta=1e-3, m=100)
    with pytest.raises(InvalidParameterError, match="is at least 1/n"):
        check_dp_claim(noise_multiplier=1.0, sampling_rate=0.1, delta=0.01, n=100, claimed_epsilon=1.0)


def test_calibrated_noise_meets_the_claim_tightly():
    lr = _learner()
    nm = calibrate_noise_multiplier(lr, 400, 2.0, 1e-3)
    assert lr.set_params(noise_multiplier=nm, target_delta=1e-3).accounted_epsilon(400) <= 2.0
    assert lr.set_params(noise_multiplier=nm / 1.01).accounted_epsilon(400) > 2.0


def test_default_canaries_and_white_box_grid():
    from leakaudit.dpaudit import default_canary_count, whitebox_guess_grid

    assert default_canary_count(0.01) == 140_000 and default_canary_count(1.0) == 1400
    assert default_canary_count(1e-4) == 200_000
    # one step's expected included-and-sampled canaries, and those sampled at least once, at 85 %
    assert whitebox_guess_grid(140_000, 0.01, 200) == [(595, 0), (51528, 0)]
    assert whitebox_guess_grid(1400, 1.0, 20) == [(595, 0)]
    with pytest.raises(InvalidParameterError, match="sampling_rate"):
        whitebox_guess_grid(1000, 0.0, 10)


def test_a_step_without_noise_is_caught_with_the_default_canaries():
    """The bug the audit missed with 1,000 canaries at small rates: one step without noise."""
    X, y = _data()
    lr = DPSGD(learner=TorchMLP(hidden=(16,)), noise_multiplier=1.5, max_grad_norm=1.0, sampling_rate=0.05,
               epochs=2, lr=0.5)
    eps = lr.set_params(target_delta=1e-5).accounted_epsilon(len(X))
    assert eps < 1.5
    ok = audit_dpsgd(lr, X, y, claimed_epsilon=eps, delta=1e-5, random_state=2)
    bad = audit_dpsgd(lr.set_params(bug="skip_noise_step"), X, y, claimed_epsilon=eps, delta=1e-5, random_state=2)
    assert ok.m == bad.m == 28_000 and not ok.violated
    assert bad.violated, bad.epsilon_lower_bound


def test_canary_count_grows_with_a_large_claim():
    from leakaudit.dpaudit import default_canary_count

    # a leak in every step, guessed through k_all = 85 % of the included canaries seen, must be able to prove the
    # claim + 0.5: r all right prove logit((beta / 4)^(1/r)), so r >= log(80) / log(1 + e^-8.5) = 21,541 at 8
    assert default_canary_count(1.0, claimed_epsilon=8.0, steps=20) == 50_680
    assert default_canary_count(1.0, claimed_epsilon=1.0, steps=20) == 1400  # the rate's own count is enough
    assert default_canary_count(0.01, claimed_epsilon=8.0, steps=200) == 140_000
    assert default_canary_count(1.0, claimed_epsilon=20.0, steps=20) == 200_000  # capped
    # a leak in one step shows k_step = 0.85 m q / 2 canaries: m = 21,541 / 0.0425 at q = 0.1, affordable in 20
    # steps (m T within CANARY_STEP_BUDGET), not in 500, nor at q = 0.01 (5 million canaries, 200 steps)
    assert default_canary_count(0.1, claimed_epsilon=8.0, steps=20) == 506_797
    assert default_canary_count(0.1, claimed_epsilon=8.0, steps=500) == 50_680
    assert default_canary_count(0.1, claimed_epsilon=4.0, steps=20) == 14_000  # 595 in one step prove 4.9 already
    with pytest.raises(InvalidParameterError, match="^claimed_epsilon"):
        default_canary_count(0.5, claimed_epsilon=-1.0, steps=3)


def test_a_step_without_noise_at_a_small_rate_violates_a_claimed_4():
    """Theorem 3.1 alone stops near 1.7 here (its delta term); the f-DP (epsilon, delta) analysis sees the leak."""
    X, y = _data()
    lr = DPSGD(learner=TorchMLP(hidden=(16,)), noise_multiplier=0.6, max_grad_norm=1.0, sampling_rate=0.01,
               epochs=1, lr=0.5, target_delta=1e-5)
    eps = lr.accounted_epsilon(len(X))
    assert 3.5 < eps < 4.5
    ok = audit_dpsgd(lr, X, y, claimed_epsilon=eps, delta=1e-5, random_state=3)
    bad = audit_dpsgd(lr.set_params(bug="skip_noise_step"), X, y, claimed_epsilon=eps, delta=1e-5, random_state=3)
    assert ok.bound == "best" and ok.m == 140_000 and not ok.violated and ok.recipe_curve_rejected is False
    assert bad.recipe_curve_rejected is True
    assert bad.violated and bad.steinke_epsilon_lower_bound < 2.0 < eps < bad.fdp_epsilon_lower_bound
    assert bad.epsilon_lower_bound > eps


def test_white_box_canaries_on_a_cnn():
    """'extra' gradient canaries sit on parameters of their own, so the TorchCNN trainer carries them as the MLP's
    does: a correct run stays consistent, a planted bug violates the claim; 'dirac' and 'random' directions are
    refused by the CNN and by torch modules (Opacus), which take 'extra' canaries (tests/learners/test_dp_sgd.py)."""
    from leakaudit.exceptions import UnsupportedError
    from leakaudit.learners import TorchCNN, TorchModuleLearner

    rng = np.random.default_rng(0)
    X = rng.random((300, 36))
    y = (X[:, :18].mean(1) > 0.5).astype(int)

    def cnn(**kw):
        return DPSGD(learner=TorchCNN(size=2, padding="same", image_shape=(1, 6, 6)), noise_multiplier=1.5,
                     max_grad_norm=1.0, sampling_rate=0.1, epochs=2, lr=0.5, **kw)

    eps = cnn().set_params(target_delta=1e-5).accounted_epsilon(len(X))
    ok = audit_dpsgd(cnn(), X, y, claimed_epsilon=eps, delta=1e-5, m=400, random_state=1)
    assert not ok.violated and ok.epsilon_lower_bound <= eps
    bad = audit_dpsgd(cnn(bug="skip_clipping"), X, y, claimed_epsilon=eps, delta=1e-5, m=400, random_state=1)
    assert bad.violated, bad.epsilon_lower_bound
    inc = np.ones((1, 10), bool)
    with pytest.raises(UnsupportedError, match="directions='dirac' point into the TorchMLP's own parameters; a "
                                               "TorchCNN takes directions='extra'"):
        cnn().fit_many_with_canaries(X, y, [np.arange(300)], [0], included=inc, directions="dirac")
    mod = DPSGD(learner=TorchModuleLearner(module="torch.nn:Linear",
                                           module_kwargs={"in_features": 36, "out_features": 2}), sampling_rate=0.1)
    with pytest.raises(UnsupportedError, match="a TorchModuleLearner takes directions='extra'"):
        mod.fit_many_with_canaries(X, y, [np.arange(300)], [0], included=inc, directions="random")


def test_input_canaries_are_accounted_on_the_rows_trained():
    """Input canaries join the data, and a torch module's Opacus schedule depends on the row count: the audit
    accounts (and the claim check, the recorded epsilon) the rows the run trained on, audited_rows' count."""
    pytest.importorskip("opacus")
    from leakaudit.dpaudit import audited_rows
    from leakaudit.learners import TorchModuleLearner

    rng = np.random.default_rng(0)
    X, Xc = rng.normal(size=(300, 4)), rng.normal(size=(200, 4))
    y = (X[:, 0] > 0).astype(int)
    dp = DPSGD(learner=TorchModuleLearner(module="torch.nn:Linear",
                                          module_kwargs={"in_features": 4, "out_features": 2}),
               noise_multiplier=1.0, sampling_rate=0.07, epochs=1, lr=0.1, target_delta=1e-5)
    n_fit = audited_rows(300, m=200, canaries="input", random_state=2)
    assert 300 < n_fit < 500 and audited_rows(300, m=None, canaries="gradient") == 300
    sch = dp.schedule(n_fit)
    assert sch != dp.schedule(300)  # the canaries change Opacus's rate here
    eps = dp.accounted_epsilon(n_fit)
    r = audit_dpsgd(dp, X, y, claimed_epsilon=eps, delta=1e-5, m=200, canaries="input", X_canary=Xc, random_state=2)
    assert (r.accounted_epsilon, r.steps, r.sampling_rate) == (eps, sch["steps"], sch["sampling_rate"])


def test_opacus_gradient_canaries_are_kept_within_the_memory_budget():
    """Opacus holds each step's canary gradients as a dense (batch + canaries) x m tensor: a default count is
    lowered to what the memory budget holds (and the run still audits), a count the caller gave is refused naming
    m, with the size it would need."""
    pytest.importorskip("opacus")
    from leakaudit.dpaudit.dpsgd import opacus_canary_bytes
    from leakaudit.engine import using_memory_budget
    from leakaudit.learners import TorchModuleLearner

    # the size grows with m, and is about 12 bytes per canary per row of the step's batch and canaries
    assert opacus_canary_bytes(140_000, 50, 0.01) == 3 * 4 * 140_000 * 887
    assert opacus_canary_bytes(2000, 50, 0.1) < opacus_canary_bytes(4000, 50, 0.1)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    dp = DPSGD(learner=TorchModuleLearner(module="torch.nn:Linear",
                                          module_kwargs={"in_features": 4, "out_features": 2}),
               noise_multiplier=1.0, sampling_rate=0.1, epochs=1, lr=0.1, target_delta=1e-5)
    sch = dp.schedule(300)
    eps = dp.accounted_epsilon(300)
    budget = opacus_canary_bytes(3000, sch["batch_size"], sch["sampling_rate"])
    with using_memory_budget(budget):
        with pytest.raises(InvalidParameterError, match=r"m=20000 gradient canaries through Opacus need about"):
            audit_dpsgd(dp, X, y, claimed_epsilon=eps, delta=1e-5, m=20_000, random_state=0)
        r = audit_dpsgd(dp, X, y, claimed_epsilon=eps, delta=1e-5, random_state=0)
    assert r.m == 3000 and not r.violated
