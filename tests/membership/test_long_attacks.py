import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError
from leakaudit.membership.distance import DistanceAttack, kl_divergence, train_targeted_shadows
from leakaudit.membership.frequency import FrequencyAttack, bin_match_counts
from leakaudit.membership.shadow import ShadowModelAttack, attack_features
from leakaudit.metrics import auc

from .conftest import OneNNLearner, make_blobs


def test_distance_hand_computed():
    q = np.array([[0.9, 0.1]])
    ref = np.array([[[0.9, 0.1]], [[0.91, 0.09]], [[0.5, 0.5]], [[0.5, 0.5]]])
    mask = np.array([[1], [1], [0], [0]], dtype=bool)
    res = DistanceAttack().score(q, ref, mask)
    qb = np.array([0.905, 0.105])
    pin = np.array([(0.905 + 0.915) / 2, (0.095 + 0.105) / 2])
    pout = np.array([0.505, 0.505])
    expect = np.sum(qb * np.log(qb / pout)) - np.sum(qb * np.log(qb / pin))
    assert res.scores[0] == pytest.approx(expect)
    assert res.decisions == [1]
    # a tie goes to H0 (strict inequality)
    tie = DistanceAttack().score(q, ref[[0, 0]], np.array([[1], [0]], dtype=bool))
    assert tie.scores == [0.0] and tie.decisions == [0]
    assert kl_divergence([0.5, 0.5], [0.5, 0.5]) == 0.0


def test_frequency_counts_and_conventions():
    q = np.array([[0.904, 0.096]])  # bins 90 and 9
    ref = np.array([[[0.901, 0.099]], [[0.95, 0.05]], [[0.905, 0.095]], [[0.3, 0.7]]])
    mask = np.array([[1], [1], [0], [0]], dtype=bool)
    o_in, o_out = bin_match_counts(q, ref, mask)
    assert o_in.tolist() == [[1, 1]] and o_out.tolist() == [[1, 1]]
    assert FrequencyAttack().score(q, ref, mask).scores == [0.0]
    # class 0 matches only an in model, class 1 matches nothing
    ref2 = np.array([[[0.901, 0.2]], [[0.5, 0.5]], [[0.5, 0.5]], [[0.3, 0.7]]])
    o_in, o_out = bin_match_counts(q, ref2, mask)
    assert o_in.tolist() == [[1, 0]] and o_out.tolist() == [[0, 0]]
    lap = FrequencyAttack(zero_counts="laplace").score(q, ref2, mask)
    assert lap.scores[0] == pytest.approx(np.log(2 / 1) + np.log(1 / 1)) and lap.decisions == [1]
    skip = FrequencyAttack(zero_counts="skip").score(q, ref2, mask)
    assert skip.decisions == [1] and skip.scores[0] > 0  # 1/0 = inf over the classes kept
    ieee = FrequencyAttack(zero_counts="ieee").score(q, ref2, mask)
    assert ieee.decisions == [0] and ieee.info["n_undefined"] == 1  # inf * (0/0) = nan -> H0
    with pytest.raises(InvalidInputError, match="in and one out"):
        FrequencyAttack().score(q, ref2, np.ones((4, 1), bool))


def test_attack_features_layout():
    X = np.array([[1.0, 2.0]])
    f = attack_features(X, np.array([1]), np.array([[0.0, 1.0]]), n_classes=2)
    np.testing.assert_allclose(f, [[1.0, 2.0, 0.0, 1.0, 0.005, 0.995]])


def test_shadow_attack_separates_when_shadows_do():
    rng = np.random.default_rng(0)
    M, n, C = 6, 60, 2
    y = rng.integers(0, C, n)
    mask = np.zeros((M, n), bool)
    for j in range(M):
        mask[j, rng.permutation(n)[: n // 2]] = True
    onehot = np.eye(C)[y]
    ref = np.where(mask[..., None], 0.97 * onehot + 0.015, 0.5)  # confident when in, unsure when out
    att = ShadowModelAttack(batch_size=16, epochs=60, random_state=0, use_features=False)
    att.fit(ref, mask, y)
    target_in = rng.random(n) < 0.5
    probs = np.where(target_in[:, None], 0.97 * onehot + 0.015, 0.5)
    res = att.score(probs, y)
    assert auc(target_in.astype(int), res.scores_array) == 1.0
    per_class = ShadowModelAttack(per_class=True, batch_size=16, epochs=60, random_state=0, use_features=False)
    res2 = per_class.fit(ref, mask, y).score(probs, y)
    assert auc(target_in.astype(int), res2.scores_array) == 1.0
    with pytest.raises(InvalidInputError, match="not fitted"):
        ShadowModelAttack().score(probs, y)


def test_targeted_shadows_layout_and_distance_on_1nn():
    X, y = make_blobs(n=120, d=5, c=3, noise=2.0, seed=1)
    targets = np.array([3, 10, 50])
    shadows = train_targeted_shadows(OneNNLearner(smooth=0.03), X, y, targets, train_size=60, n_pairs=3,
                                     random_state=0)
    assert shadows.probs.shape == (6, 3, 3) and shadows.in_mask[:3].all() and not shadows.in_mask[3:].any()
    # 1-NN "in" models predict the target's own label with the top probability
    top = 1 - 0.03 + 0.01
    np.testing.assert_allclose(shadows.probs[:3, np.arange(3), y[targets]], top)
    # a target model trained with all three targets: distance attack says member for each
    target_model = OneNNLearner(smooth=0.03).fit(X[:60], y[:60], n_classes=3)
    in_t = np.isin(targets, np.arange(60))
    res = DistanceAttack().score(target_model.predict_proba(X[targets]), shadows.probs, shadows.in_mask)
    # member targets: q equals every in model's output, so KL(q||pbar_in) = 0 and the score is
    # KL(q||pbar_out) >= 0, zero (a tie, H0) exactly when the out models also agree with q
    assert in_t.all()
    out_agrees = np.all(np.isclose(shadows.probs[3:], target_model.predict_proba(X[targets])[None]), axis=(0, 2))
    np.testing.assert_array_equal(res.decisions_array, (~out_agrees).astype(int))
    assert out_agrees.sum() < 3  # the test is not vacuous


def test_frequency_and_distance_agree_on_saturated_members():
    # Why long-table1's frequency and distance recall are equal (its notes): when the binned target output q and
    # every in-model's are the saturated vector (0.995 on the label, 0.005 elsewhere), the frequency odds are
    # prod_i (5 + 1) / (o_out_i + 1) > 1 unless every out model shares every bin, and the distance attack compares
    # D_KL(q || pbar_in) = 0 with D_KL(q || pbar_out) >= sum(q) - sum(pbar_out) >= 0 (Gibbs' inequality), which is 0
    # only at pbar_out = q when the out models' binned mass is not above q's. It never is: a binned vector's mass is
    # (sum_i floor(100 p_i) + C / 2) / 100 and sum_i floor(100 p_i) <= 99 = the saturated vector's unless every p_i is
    # a multiple of 0.01. Both attacks then say "in" exactly when some out model is off the saturated vector.
    from leakaudit.membership.binning import bin_probabilities

    rng = np.random.default_rng(0)
    n, C, K = 600, 10, 5
    sat = np.full(C, 1e-4)
    sat[0] = 1 - 1e-4 * (C - 1)
    q = np.tile(sat, (n, 1))
    ref = np.tile(sat, (2 * K, n, 1))
    off = rng.random((K, n)) < 0.4  # out models off the saturated vector
    top = rng.uniform(0.9, 0.995, size=(K, n))
    rest = rng.dirichlet(np.full(C - 1, 0.3), size=(K, n)) * (1 - top)[..., None]
    ref[K:][off] = np.concatenate([top[..., None], rest], axis=-1)[off]
    mask = np.zeros((2 * K, n), bool)
    mask[:K] = True
    binned = bin_probabilities(ref[K:])
    moved = (binned != bin_probabilities(sat)).any(axis=(0, 2))  # some out model in another bin somewhere
    f = np.asarray(FrequencyAttack().score(q, ref, mask).decisions)
    d = np.asarray(DistanceAttack().score(q, ref, mask).decisions)
    assert 0 < moved.sum() < n  # both outcomes occur
    np.testing.assert_array_equal(f, moved.astype(int))
    assert np.all(binned.sum(axis=-1) <= bin_probabilities(sat).sum() + 1e-12)
    np.testing.assert_array_equal(d, moved.astype(int))
    # the exception, outputs on bin edges: (0.98, 0.01, 0.01, 0, ...) bins to (0.985, 0.015, 0.015, 0.005, ...),
    # heavier than q; the distance attack then says "out" while the frequency attack says "in"
    heavy = np.tile(sat, (2 * K, 1, 1))
    heavy[K] = np.r_[0.98, 0.01, 0.01, np.zeros(C - 3)]
    one = mask[:, :1]
    assert FrequencyAttack().score(q[:1], heavy, one).decisions == [1]
    assert DistanceAttack().score(q[:1], heavy, one).decisions == [0]
