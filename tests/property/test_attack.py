"""Algorithm 3 end to end on synthetic data, the baselines and the t estimate."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError, InvalidParameterError, LeakauditError
from leakaudit.property import baselines
from leakaudit.property.attack import PoisoningPropertyAttack, attack_model_C, evaluate_attack
from leakaudit.property.estimate import FractionEstimator, evaluate_fraction_estimate
from leakaudit.property.game import logistic_learner, split_pools
from leakaudit.property.synthetic import make_property_data
from leakaudit.property.theory import theorem9_window

SMALL = dict(n_train=300, n_shadow=40, n_ensemble=20, n_queries=100)


@pytest.fixture(scope="module")
def data():
    return make_property_data(6000, 5, bias=-1.5, random_state=0)[0]


@pytest.fixture(scope="module")
def pools(data):
    return split_pools(len(data), random_state=3)


@pytest.fixture(scope="module")
def poisoned(data, pools):
    # t0/t1 = 0.05/0.15 at p = 0.1: Theorem 9's window (0.741, 1] is non-empty
    assert not theorem9_window(0.1, 0.05, 0.15).empty
    a = PoisoningPropertyAttack(t0=0.05, t1=0.15, poison_rate=0.1, random_state=1, **SMALL)
    return a, evaluate_attack(a, data, adversary_idx=pools[0], victim_idx=pools[1], n_targets=100, random_state=2)


def test_poisoning_beats_chance_where_theory_says(poisoned):
    a, r = poisoned
    assert r.accuracy_ci[0] > 0.75, r  # paper: ~1.0 at this rate; lower CI bound well above chance
    assert r.n_poison == 30 and r.poison_variant == "X+1" and r.n_queries == 130
    assert r.n_shadow_total == 80 and r.attack_C == pytest.approx(np.sqrt(40) / 2)
    assert r.window == "(0.741,1.000]"


def test_no_poison_is_near_chance(data, pools):
    a = baselines.no_poison_attack(t0=0.05, t1=0.15, random_state=1, **SMALL)
    r = evaluate_attack(a, data, adversary_idx=pools[0], victim_idx=pools[1], n_targets=100, random_state=2)
    # The bit is independent of the label: without poison nothing distinguishes the worlds.
    assert r.n_poison == 0 and r.n_queries == 100 and r.poison_label is None
    assert r.accuracy_ci[0] < 0.5 < r.accuracy_ci[1] or r.accuracy <= 0.62


def test_label_only_interface(poisoned, data):
    a, _ = poisoned
    Xq = a.query_points
    assert Xq.shape[0] == 130
    always_one = a.attack(lambda X: np.ones(X.shape[0], int))
    assert always_one in (0, 1)
    with pytest.raises(InvalidInputError, match="0 or 1"):
        a.predict(np.full(130, 0.7))
    with pytest.raises(InvalidInputError, match="shape"):
        a.predict(np.ones(12))
    with pytest.raises(LeakauditError, match="not fitted"):
        PoisoningPropertyAttack(t0=0.1, t1=0.2).predict(np.ones(3))


def test_same_seed_same_attack(data, pools):
    kw = dict(t0=0.05, t1=0.15, poison_rate=0.05, n_train=200, n_shadow=10, n_ensemble=10, n_queries=40)
    a1 = PoisoningPropertyAttack(random_state=7, **kw).fit(data, pools[0])
    a2 = PoisoningPropertyAttack(random_state=7, **kw).fit(data, pools[0])
    assert np.array_equal(a1.shadow_labels_, a2.shadow_labels_)
    assert np.array_equal(a1.queries_.indices, a2.queries_.indices)


def test_bad_parameters(data):
    with pytest.raises(InvalidParameterError, match="t0 must be smaller"):
        PoisoningPropertyAttack(t0=0.5, t1=0.2).fit(data)
    with pytest.raises(InvalidParameterError, match="poison_accounting"):
        PoisoningPropertyAttack(t0=0.1, t1=0.2, poison_accounting="x").fit(data)
    with pytest.raises(InvalidParameterError, match="poison_rate"):
        PoisoningPropertyAttack(t0=0.1, t1=0.2, poison_rate=1.0).fit(data)
    assert attack_model_C(500) == pytest.approx(11.18, abs=0.01)  # spec Sec. 3.4 example


def test_add_accounting_and_binomial(data, pools):
    a = PoisoningPropertyAttack(t0=0.05, t1=0.15, poison_rate=0.1, poison_accounting="add",
                                prevalence_sampling="binomial", random_state=1, **SMALL)
    r = evaluate_attack(a, data, adversary_idx=pools[0], victim_idx=pools[1], n_targets=60, random_state=2)
    assert r.poison_accounting == "add" and r.accuracy > 0.7


def test_theory_averaging_distinguisher(poisoned, data, pools):
    a, _ = poisoned
    from leakaudit.property.game import play_game

    q = baselines.theory_window_queries(a, data, pools[0], n_ensemble=20, n_queries=50, random_state=4)
    w = theorem9_window(0.1, 0.05, 0.15)
    assert len(q) == 50 and data.f[q.indices].all() and w.contains(q.crt).all()  # poison label 1: crt_l = crt
    g = play_game(a._learner(), data, pools[1], t0=0.05, t1=0.15, n_train=300, poison=a.poison_,
                  X_query=q.X, n_targets=60, random_state=5)
    s = baselines.theory_averaging_guess(a, g.labels)
    assert s.shape == (60,)
    assert np.mean((s > 0.5) == g.b) > 0.7


def test_fraction_estimate(poisoned, data, pools):
    a, _ = poisoned
    est = FractionEstimator(t_grid=(0.05, 0.1, 0.15, 0.2, 0.25), n_shadow_per_t=12, random_state=0)
    r = evaluate_fraction_estimate(a, est, data, adversary_idx=pools[0], victim_idx=pools[1], n_targets=30,
                                   random_state=1)
    # a constant guess at the middle of [0.05, 0.25] has MAE 0.05 on uniform t
    assert r.mae < 0.04, r.mae


def test_evaluate_refuses_overlapping_pools(poisoned, data, pools):
    a, _ = poisoned
    with pytest.raises(InvalidInputError, match="already fitted"):
        evaluate_attack(a, data)
    with pytest.raises(InvalidInputError, match="overlap"):
        evaluate_attack(a, data, adversary_idx=pools[0], victim_idx=pools[0][:100])


def test_pool_options_keep_rows_apart(data, pools):
    kw = dict(t0=0.05, t1=0.15, poison_rate=0.1, n_train=200, n_shadow=5, n_ensemble=5, n_queries=30)
    a = PoisoningPropertyAttack(query_pool_fraction=0.3, exclude_poison_rows=True, random_state=0, **kw)
    a.fit(data, pools[0])
    assert a.queries_.n_poison == 20 and len(a.queries_) == a.queries_.indices.size + 20
    # candidates come from the reserved 30%: none of them is a poison original
    assert not np.isin(a.queries_.indices, a.poison_.indices).any()
    with pytest.raises(InvalidParameterError, match="query_pool_fraction"):
        PoisoningPropertyAttack(query_pool_fraction=1.5, random_state=0, **kw).fit(data, pools[0])


def test_shadows_are_built_like_targets_without_queries_or_poison_rows(data, pools):
    # The fix for small pools (SpamAssassin): every shadow clean set has the targets' size and construction
    # (n - round(p n) clean rows, round(t n') of them with the property) and holds no query row and no poison
    # original, as no target does (targets train on the victim pool only).
    from leakaudit.property.game import n_clean
    from leakaudit.property.queries import select_queries

    adv, _ = pools
    kw = dict(t0=0.05, t1=0.15, poison_rate=0.1, n_train=400, n_shadow=6, n_ensemble=8, n_queries=80)
    q = select_queries(logistic_learner(), data, adv, n_train=400, n_ensemble=8, n_queries=80, out_of_bag=True,
                       random_state=0)
    a = PoisoningPropertyAttack(exclude_query_rows=True, exclude_poison_rows=True, random_state=0, **kw)
    a.fit(data, adv, queries=q)
    size = n_clean(400, 0.1, "replace")
    assert size == 360 and len(a.shadow_sets_) == 12
    banned = np.union1d(q.indices, a.poison_.indices)
    assert q.indices.size == 80 and a.poison_.indices.size == 40
    for s, b in zip(a.shadow_sets_, a.shadow_b_):
        assert s.size == size and np.unique(s).size == size
        assert not np.isin(s, banned).any()
        assert np.isin(s, adv).all()
        assert data.f[s].sum() == round((0.15 if b else 0.05) * size)  # exact prevalence, as the targets'
    assert np.array_equal(a.shadow_pool_, np.setdiff1d(adv, banned))
    # The paper's protocol (both flags off) draws shadows from the whole pool: queries can be training rows.
    a0 = PoisoningPropertyAttack(random_state=0, **kw).fit(data, adv, queries=q)
    assert np.array_equal(a0.shadow_pool_, adv)
    assert any(np.isin(s, q.indices).any() for s in a0.shadow_sets_)


def test_label_vector_shift_hand_computed():
    from leakaudit.property.attack import label_vector_shift

    # 2 shadows per world, 3 targets, 4 queries of which the last 1 is a poison point
    S = np.array([[0, 0, 1, 0], [0, 1, 1, 1], [1, 1, 1, 1], [1, 0, 1, 1]])
    sb = np.array([0, 0, 1, 1])
    T = np.array([[1, 1, 1, 1], [0, 0, 0, 1], [1, 1, 0, 1]])
    tb = np.array([0, 1, 1])
    d = label_vector_shift(S, sb, T, tb, n_poison=1)
    assert d["shadow_clean_rate_w0"] == pytest.approx(3 / 6) and d["shadow_poison_rate_w0"] == pytest.approx(1 / 2)
    assert d["shadow_clean_rate_w1"] == pytest.approx(5 / 6) and d["shadow_poison_rate_w1"] == pytest.approx(1.0)
    assert d["target_clean_rate_w0"] == pytest.approx(1.0) and d["target_poison_rate_w0"] == pytest.approx(1.0)
    assert d["target_clean_rate_w1"] == pytest.approx(2 / 6) and d["target_poison_rate_w1"] == pytest.approx(1.0)
    assert d["poison_shift_w0"] == pytest.approx(0.5) and d["clean_shift_w1"] == pytest.approx(2 / 6 - 5 / 6)
    assert np.isnan(label_vector_shift(S, sb, T, tb)["poison_shift_w0"])  # no poison queries
    with pytest.raises(InvalidInputError, match="same number of queries"):
        label_vector_shift(S, sb, T[:, :3], tb)
    with pytest.raises(InvalidInputError, match="one world bit"):
        label_vector_shift(S, sb[:3], T, tb)
