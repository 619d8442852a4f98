import numpy as np
import pytest
from scipy.stats import norm

from leakaudit.exceptions import InvalidInputError
from leakaudit.membership._base import fit_reference_models, paired_half_masks
from leakaudit.membership.lira import LiRA, logit_scaled_confidence
from leakaudit.membership.rmia import RMIA
from leakaudit.metrics import auc

from .conftest import LogRegLearner, make_blobs


def _random_setup(n=30, K=8, C=3, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(C), size=n)
    ref = rng.dirichlet(np.ones(C), size=(K, n))
    y = rng.integers(0, C, n)
    mask = paired_half_masks(n, K, rng)
    return probs, y, ref, mask


def test_logit_scaled_confidence_values():
    p = np.array([[0.7, 0.2, 0.1], [1.0, 0.0, 0.0]])
    phi = logit_scaled_confidence(p, np.array([0, 1]))
    assert phi[0] == pytest.approx(np.log(0.7 / 0.3))
    assert phi[1] < -50 and np.isfinite(phi[1])
    # stable where 1 - p rounds to 0: the sum of the other classes is used
    p2 = np.array([[1 - 1e-20, 1e-20]])
    assert logit_scaled_confidence(p2, np.array([0]))[0] == pytest.approx(np.log(1 / 1e-20), rel=1e-6)


def test_lira_online_matches_direct_computation():
    probs, y, ref, mask = _random_setup()
    res = LiRA().score(probs, y, ref, mask)
    phi_t = logit_scaled_confidence(probs, y)
    phi_r = logit_scaled_confidence(ref, y)
    for i in range(len(y)):
        a, b = phi_r[mask[:, i], i], phi_r[~mask[:, i], i]
        expect = norm.logpdf(phi_t[i], a.mean(), a.std()) - norm.logpdf(phi_t[i], b.mean(), b.std())
        assert res.scores[i] == pytest.approx(expect, rel=1e-9)
    assert res.decisions == [int(s > 0) for s in res.scores]


def test_lira_offline_and_fixed_variance():
    probs, y, ref, mask = _random_setup(seed=1)
    phi_t = logit_scaled_confidence(probs, y)
    phi_r = logit_scaled_confidence(ref, y)
    res = LiRA(online=False).score(probs, y, ref, mask)
    i = 4
    b = phi_r[~mask[:, i], i]
    assert res.scores[i] == pytest.approx((phi_t[i] - b.mean()) / b.std())
    fixed = LiRA(online=False, fix_variance=True).score(probs, y, ref, mask)
    pooled = np.sqrt(np.mean([phi_r[~mask[:, j], j].var() for j in range(len(y))]))
    assert fixed.scores[i] == pytest.approx((phi_t[i] - b.mean()) / pooled)
    med = LiRA(online=False, statistic="median").score(probs, y, ref, mask)
    assert med.scores[i] == pytest.approx((phi_t[i] - np.median(b)) / b.std())


@pytest.mark.parametrize("online,fix", [(True, False), (False, False), (True, True)])
def test_lira_streamed_moments_equal_the_direct_ones_across_chunks(online, fix):
    # K = 600 spans three chunks of 256 models; one record with a single "in" model uses the pooled sigma
    probs, y, ref, mask = _random_setup(n=20, K=600, seed=3)
    mask[:, 0] = False
    mask[7, 0] = True
    res = LiRA(online=online, fix_variance=fix).score(probs, y, ref, mask)
    phi_r = logit_scaled_confidence(ref, y)
    direct = {w: LiRA._moments(phi_r, m, "mean", 1e-6, fix, w) for w, m in (("in", mask), ("out", ~mask))}
    phi_t = logit_scaled_confidence(probs, y)
    (mu_o, sd_o), (mu_i, sd_i) = direct["out"], direct["in"]
    expect = (norm.logpdf(phi_t, mu_i, sd_i) - norm.logpdf(phi_t, mu_o, sd_o)) if online else (phi_t - mu_o) / sd_o
    np.testing.assert_allclose(res.scores, expect, rtol=1e-9, atol=1e-12)


def test_lira_errors():
    probs, y, ref, mask = _random_setup()
    mask2 = mask.copy()
    mask2[:, 3] = True
    with pytest.raises(InvalidInputError, match="record 3 has no out"):
        LiRA().score(probs, y, ref, mask2)
    with pytest.raises(InvalidInputError, match="ref_probs has shape"):
        LiRA().score(probs, y, ref[:, :10], mask[:, :10])


def _rmia_bruteforce(probs, y, ref, mask, zp, zy, zref, zmask, gamma, online, a):
    def ratio(p, yy, r, m):
        pt = p[np.arange(len(yy)), yy]
        rt = r[:, np.arange(len(yy)), yy]
        if online:
            px = rt.mean(0)
        else:
            px = np.array([(1 + a) / 2 * rt[~m[:, i], i].mean() + (1 - a) / 2 for i in range(len(yy))])
        return pt / px
    rx, rz = ratio(probs, y, ref, mask), ratio(zp, zy, zref, zmask)
    return (rx[:, None] / rz[None, :] > gamma).mean(1)


@pytest.mark.parametrize("online,gamma,a", [(True, 1.0, 0.0), (True, 2.0, 0.0), (False, 1.5, 0.3)])
def test_rmia_equals_pairwise_definition(online, gamma, a):
    probs, y, ref, mask = _random_setup(n=25, seed=2)
    zp, zy, zref, zmask = _random_setup(n=40, seed=3)
    res = RMIA(gamma=gamma, online=online, offline_a=a).score(probs, y, ref, mask, zp, zy, zref, zmask)
    expect = _rmia_bruteforce(probs, y, ref, mask, zp, zy, zref, zmask, gamma, online, a)
    np.testing.assert_allclose(res.scores, expect)


def _experiment(n_models=6, seed=0):
    # 1 target + references, all trained on complementary halves of one pool (Carlini et al.'s setup)
    X, y = make_blobs(n=240, d=20, c=3, noise=3.0, seed=seed)
    refset = fit_reference_models(LogRegLearner(C=10.0), X, y, n_models + 2, random_state=seed)
    target = refset.models(0)
    refs = refset.models(slice(2, None))  # drop the target's pair partner too, to keep in/out balanced
    return X, y, target, refs


def test_lira_rmia_detect_overfitting_logreg():
    X, y, target, refs = _experiment()
    is_mem = target.in_mask[0].astype(int)
    lira = LiRA().score(target.probs[0], y, refs.probs, refs.in_mask)
    assert auc(is_mem, lira.scores_array) > 0.6
    aud, pop = np.arange(0, 160), np.arange(160, 240)
    rmia = RMIA(gamma=1.0).score(target.probs[0][aud], y[aud], refs.probs[:, aud], refs.in_mask[:, aud],
                                 target.probs[0][pop], y[pop], refs.probs[:, pop], refs.in_mask[:, pop])
    assert auc(is_mem[aud], rmia.scores_array) > 0.6
    a = RMIA(online=False).tune_offline_a(refs.subset(aud), y[aud], refs.subset(pop), y[pop])
    assert 0.0 <= a <= 1.0


def test_reference_models_queried_on_some_records_only():
    """``query``: the same models' outputs on the chosen records (in their order), with their membership."""
    X, y = make_blobs(n=60, d=5, c=2, noise=2.0, seed=3)
    full = fit_reference_models(LogRegLearner(C=1.0), X, y, 4, random_state=7)
    idx = np.array([5, 0, 59, 12])
    part = fit_reference_models(LogRegLearner(C=1.0), X, y, 4, random_state=7, query=idx)
    np.testing.assert_array_equal(part.in_mask, full.in_mask[:, idx])
    np.testing.assert_allclose(part.probs, full.probs[:, idx], rtol=0, atol=1e-12)
    assert part.probs.shape == (4, 4, 2)
    with pytest.raises(InvalidInputError, match="query holds index 60"):
        fit_reference_models(LogRegLearner(C=1.0), X, y, 4, random_state=7, query=[1, 60])


def test_clip_gives_the_clipped_logit_and_changes_only_saturated_outputs():
    """clip: logit of p clipped to [clip, 1 - clip] (SACRO-ML's statistic for two classes); None: Carlini's floor."""
    from leakaudit.exceptions import InvalidParameterError

    p = np.array([[0.0, 1.0], [0.3, 0.7], [1.0, 0.0], [0.5, 0.5]])
    y = np.array([1, 1, 1, 0])
    q = np.clip(p[np.arange(4), y], 1e-16, 1 - 1e-16)
    np.testing.assert_allclose(logit_scaled_confidence(p, y, 1e-16), np.log(q / (1 - q)), rtol=1e-12)
    plain = logit_scaled_confidence(p, y)
    assert plain[0] == pytest.approx(np.log(1e45)) and plain[2] == pytest.approx(-np.log(1e45))
    np.testing.assert_allclose(plain[[1, 3]], logit_scaled_confidence(p, y, 1e-16)[[1, 3]], rtol=1e-12)
    probs, yy, ref, mask = _random_setup()
    a = LiRA(online=False).score(probs, yy, ref, mask).scores_array
    b = LiRA(online=False, clip=1e-16).score(probs, yy, ref, mask).scores_array
    np.testing.assert_allclose(a, b, rtol=1e-9)  # no saturated outputs: the same scores
    for bad in (0.0, 0.5, -1e-3, "x"):
        with pytest.raises(InvalidParameterError, match="clip"):
            LiRA(clip=bad).score(probs, yy, ref, mask)


def test_votes_gives_the_empirical_logit_of_the_votes():
    """votes=T: φ = ln(T p_y + 1/2) - ln(T (1 - p_y) + 1/2), the empirical logit of k = T p_y votes of T,
    finite (|φ| <= ln(2T + 1)) where every vote agrees."""
    from leakaudit.exceptions import InvalidParameterError

    p = np.array([[0.0, 1.0], [0.3, 0.7], [1.0, 0.0], [0.5, 0.5]])
    y = np.array([1, 1, 1, 0])
    phi = logit_scaled_confidence(p, y, votes=10)
    np.testing.assert_allclose(phi, [np.log(10.5 / 0.5), np.log(7.5 / 3.5), np.log(0.5 / 10.5), 0.0], atol=1e-12)
    assert np.abs(phi).max() == pytest.approx(np.log(21))
    # LiRA with votes = LiRA's default statistic on the smoothed probabilities (T p + 1/2) / (T + 1)
    probs, yy, ref, mask = _random_setup(C=2)
    probs[:5] = np.eye(2)[yy[:5]]  # saturated outputs, where the two statistics differ most
    ref[:, :5] = np.eye(2)[yy[:5]]
    for online in (False, True):
        a = LiRA(online=online, votes=7).score(probs, yy, ref, mask).scores_array
        b = LiRA(online=online).score((7 * probs + 0.5) / 8, yy, (7 * ref + 0.5) / 8, mask).scores_array
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
        assert not np.allclose(a, LiRA(online=online).score(probs, yy, ref, mask).scores_array)
    for bad in (0, -3, 2.5, "x"):
        with pytest.raises(InvalidParameterError, match="votes"):
            LiRA(votes=bad).score(probs, yy, ref, mask)
    with pytest.raises(InvalidParameterError, match="clip or votes"):
        LiRA(votes=10, clip=1e-6).score(probs, yy, ref, mask)
