import numpy as np
import pytest
from scipy.stats import norm

from leakaudit.exceptions import InvalidInputError
from leakaudit.membership.threshold import (
    BoundedLossAdversary,
    LossThresholdAttack,
    ThresholdAdversary,
    advantage_known_sigma,
    advantage_unknown_sigma,
    dp_advantage_bound,
    epsilon_eq,
)
from leakaudit.metrics import advantage_at_threshold

from .conftest import LogRegLearner, make_blobs

# yeom-overfitting.md §3.3 reference table: r, Adv(Thm 3), Adv(§3.3), eps_eq / sigma_S
TABLE = [
    (1.01, 0.0048, 0.0048, 1.005), (1.1, 0.0461, 0.0460, 1.048), (1.2, 0.0880, 0.0873, 1.092),
    (1.5, 0.1936, 0.1877, 1.208), (2, 0.3227, 0.2998, 1.360), (2.5, 0.4150, 0.3718, 1.477),
    (3, 0.4843, 0.4216, 1.572), (4, 0.5818, 0.4853, 1.720), (5, 0.6471, 0.5242, 1.831),
    (6, 0.6941, 0.5503, 1.920), (8, 0.7574, 0.5832, 2.056), (10, 0.7982, 0.6030, 2.157),
    (20, 0.8882, 0.6428, 2.451), (100, 0.9734, 0.6747, 3.035),
]


@pytest.mark.parametrize("r,known,unknown,eq", TABLE)
def test_closed_forms_match_spec_table(r, known, unknown, eq):
    assert advantage_known_sigma(r) == pytest.approx(known, abs=6e-5)
    assert advantage_unknown_sigma(r) == pytest.approx(unknown, abs=6e-5)
    assert epsilon_eq(1.0, r) == pytest.approx(eq, abs=6e-4)
    assert epsilon_eq(2.0, 2.0 * r) == pytest.approx(2 * eq, abs=1.2e-3)


def test_eps_eq_is_density_crossing_and_limits():
    s, d = 0.7, 2.3
    e = epsilon_eq(s, d)
    assert norm.pdf(e, 0, s) == pytest.approx(norm.pdf(e, 0, d), rel=1e-10)
    assert epsilon_eq(1.0, 1.0) == 1.0
    assert advantage_known_sigma(1.0) == 0.0
    assert advantage_unknown_sigma(1e9) == pytest.approx(0.682689, abs=1e-6)
    # r < 1: Bayes rule flips, same advantage as 1/r
    assert advantage_known_sigma(0.5) == pytest.approx(advantage_known_sigma(2.0))
    np.testing.assert_allclose(advantage_known_sigma([2.0, 5.0]), [0.3227, 0.6471], atol=6e-5)


def test_dp_bound():
    assert dp_advantage_bound(0.5) == pytest.approx(0.6487, abs=1e-4)
    assert dp_advantage_bound(1.0, tight=True) == pytest.approx(0.4621, abs=1e-4)


@pytest.mark.parametrize("sigma_d", [1.5, 4.0])
def test_adversary2_monte_carlo_matches_theory(sigma_d):
    rng = np.random.default_rng(1)
    N = 50_000
    res = np.concatenate([rng.normal(0, 1.0, N), rng.normal(0, sigma_d, N)])
    is_member = np.r_[np.ones(N), np.zeros(N)]
    tol = 4 / np.sqrt(N)
    for adv, theory in [
        (ThresholdAdversary(sigma_s=1.0, sigma_d=sigma_d), advantage_known_sigma(sigma_d)),
        (ThresholdAdversary(sigma_s=1.0), advantage_unknown_sigma(sigma_d)),
    ]:
        out = adv.score_residuals(res)
        d = out.decisions_array
        emp = d[is_member == 1].mean() - d[is_member == 0].mean()
        assert emp == pytest.approx(theory, abs=tol)
        # decisions are the score rule at the reported threshold
        np.testing.assert_array_equal(d, (out.scores_array > out.threshold).astype(int))


def test_theorem2_exact_on_fixed_split():
    X, y = make_blobs(n=300, seed=3)
    model = LogRegLearner(C=1e4).fit(X[:150], y[:150], n_classes=3)
    p_tr, p_te = model.predict_proba(X[:150]), model.predict_proba(X[150:])
    acc_tr = np.mean(p_tr.argmax(1) == y[:150])
    acc_te = np.mean(p_te.argmax(1) == y[150:])
    assert acc_tr - acc_te > 0.05  # the model overfits, so the check is not trivial
    adv1 = BoundedLossAdversary()
    res = adv1.score(np.vstack([p_tr, p_te]), y)
    is_member = np.r_[np.ones(150), np.zeros(150)]
    d = res.decisions_array
    advantage = d[:150].mean() - d[150:].mean()
    assert advantage == acc_tr - acc_te  # Theorem 2, exactly
    assert advantage_at_threshold(is_member, res.scores_array, 1.0) == acc_tr - acc_te


def test_bounded_loss_randomized_expectation():
    rng = np.random.default_rng(0)
    loss_tr, loss_te = rng.uniform(0, 0.5, 400), rng.uniform(0, 2.0, 400)
    adv = BoundedLossAdversary(loss="cross_entropy", bound=2.0, randomized=True, random_state=0)
    res = adv.score_losses(np.r_[loss_tr, loss_te])
    s = res.scores_array
    # expected advantage = R_gen / B exactly on the sample (Theorem 2)
    assert s[:400].mean() - s[400:].mean() == pytest.approx((loss_te.mean() - loss_tr.mean()) / 2.0)
    with pytest.raises(InvalidInputError, match="bound"):
        BoundedLossAdversary(loss="cross_entropy").score_losses(loss_tr)
    with pytest.raises(InvalidInputError, match="exceed"):
        BoundedLossAdversary(loss="cross_entropy", bound=1.0).score_losses(loss_te)


def test_loss_threshold_attack():
    probs = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8], [0.5, 0.5]])
    y = np.array([0, 0, 1, 1])
    res = LossThresholdAttack(threshold=0.3).score(probs, y)
    np.testing.assert_allclose(res.scores, np.log([0.9, 0.4, 0.8, 0.5]))
    assert res.decisions == [1, 0, 1, 0]  # -ln 0.9 = 0.105, -ln 0.8 = 0.223 < 0.3
    res2 = LossThresholdAttack().score(probs, y)
    assert res2.decisions == [1, 0, 1, 0] and "correctly classified" in res2.info["rule"]
    with pytest.raises(InvalidInputError, match="y"):
        LossThresholdAttack().score(probs, [0, 1, 2, 0])
