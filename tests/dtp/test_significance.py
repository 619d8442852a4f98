"""DTP-1 as a test (dtp.significance): cases whose truth is known.

Measured when written (numbers also in the tests' docstrings):
- exact null (outputs move only with the seed, E_seed[delta] = 0), 40 records of which ~31 have stage-1
  PDTP > 1: 0 of 200 seeds give any significant record; one candidate tested alone: 3 of 200 (1.5%);
- the demo MLP on Adult (1,000 members, 24 stage-1 candidates): truth from 200 paired repeats per candidate
  (11 with max_c |mu_c| > 1); the test at R = 8 on 50 disjoint blocks of repeats flagged a true-null record
  in 0 of 50 (family-wise error 0 <= 0.05), found 5.2 significant on average (power 0.48 over the 11), and
  its lower bound never exceeded the true value;
- RandomForest(n_estimators=20) on 300 Adult members (132 candidates, truth from 600 repeats, 42 true nulls):
  a true null flagged in 3 of 50 blocks (0.06), all three from bimodal lattice-valued deltas where 8 of 8
  repeats fell in the far mode; see the limitation in dtp.significance.
"""

import numpy as np
import pytest
from _dtp_helpers import outlier_data

from leakaudit._random import spawn_seeds
from leakaudit.dtp import (
    DTP1Deltas,
    DTP1TestResult,
    bin_aware_log_ratio,
    dtp1_test,
    holm_adjust,
    pdtp,
)
from leakaudit.dtp.pdtp import _loo_repeats
from leakaudit.dtp.significance import _record_tests, _stage2_seeds
from leakaudit.engine import Engine
from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.learners import LogisticRegression, RandomForest, TorchMLP
from leakaudit.learners._base import Learner

LN3 = np.log(3.0)


class SeedNoise(Learner):
    """p(y=1|x) = sigmoid(x @ w), w ~ N(0, scale^2 I) drawn from (seed, number of training rows).

    Outputs move with the seed only: removing a record changes the draw (the row count changes) but not its
    distribution, so with paired seeds E_seed[delta_c] = 0 for every record and class: an exact null.
    """

    def __init__(self, *, scale: float = 3.0):
        self.scale = scale

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        return _Linear(np.random.default_rng([int(random_state), len(X)]).normal(size=X.shape[1]) * self.scale)


class _Linear:
    def __init__(self, w):
        self.w = w

    def predict_proba(self, X):
        p1 = 1 / (1 + np.exp(-(np.asarray(X, float) @ self.w)))
        return np.column_stack([1 - p1, p1])


# -- bin-aware log ratio ---------------------------------------------------------------------------------------

def test_bin_aware_log_ratio_values():
    a = np.array([0.004, 0.012, 0.0, 0.035, 0.5, 0.995, 1.0])
    b = np.array([0.006, 0.004, 0.035, 0.0, 0.52, 0.985, 0.0])
    got = bin_aware_log_ratio(a, b)
    # same bin, adjacent bins: 0; bins 0 and 3: ln(3 / 1) with the sign of ka - kb; bins 50 and 52: ln(52/51)
    np.testing.assert_allclose(got, [0.0, 0.0, -LN3, LN3, -np.log(52 / 51), 0.0, np.log(99.0)])
    np.testing.assert_allclose(bin_aware_log_ratio(b, a), -got)  # antisymmetric
    # never larger than the binned ratio (centres), nor than any raw ratio consistent with the bins
    rng = np.random.default_rng(1)
    p, q = rng.random((2, 1000)) ** 3
    d = bin_aware_log_ratio(p, q)
    assert np.all(np.abs(d) <= np.abs(np.log(p) - np.log(q)) + 1e-12)
    assert d.shape == (1000,) and bin_aware_log_ratio(p.reshape(10, 100), q.reshape(10, 100)).shape == (10, 100)


def test_bin_aware_log_ratio_unbinned_and_errors():
    a, b = np.array([[0.3, 0.7], [0.0, 1.0]]), np.array([[0.2, 0.8], [0.0, 0.5]])
    got = bin_aware_log_ratio(a, b, bin_width=None)
    np.testing.assert_allclose(got, [[np.log(1.5), np.log(7 / 8)], [0.0, np.log(2.0)]])
    assert bin_aware_log_ratio([0.0], [0.1], bin_width=None).item() == -np.inf
    assert bin_aware_log_ratio([0.011], [0.049], bin_width=0.05).item() == 0.0  # one bin of width 0.05
    with pytest.raises(InvalidInputError, match="p_b has shape"):
        bin_aware_log_ratio([0.1, 0.2], [0.1])
    with pytest.raises(InvalidInputError, match="divide 1"):
        bin_aware_log_ratio([0.1], [0.2], bin_width=0.03)


def test_holm_adjust():
    np.testing.assert_allclose(holm_adjust([0.01, 0.04, 0.03], 3), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm_adjust([0.01], 5), [0.05])  # untested members of the family count as p = 1
    assert holm_adjust([], 4).shape == (0,)


# -- the test itself -------------------------------------------------------------------------------------------

def test_statistics_by_hand():
    # one record, two classes, R = 4: class 1 moves by 3 +- 0.1, class 0 by -0.2 +- 0.1
    D = np.array([[-0.1, 3.1], [-0.3, 2.9], [-0.2, 3.0], [-0.2, 3.0]])[:, None, :]
    r = _record_tests(D, 1.0, 0.05, 1)
    from scipy import stats

    sd = D[:, 0, 1].std(ddof=1)
    assert r["stage2_mean"][0] == pytest.approx(3.0) and r["sd"][0] == pytest.approx(sd)
    assert r["p_value"][0] == pytest.approx(4 * stats.t.sf(2.0 / (sd / 2), 3))
    assert r["lower_bound"][0] == pytest.approx(3.0 - stats.t.ppf(1 - 0.05 / 4, 3) * sd / 2)
    assert r["decisive_class"][0] == 1 and r["significant"][0]
    # identical repeats (sd 0): exact decision either way
    same = np.full((5, 2, 2), 0.0)
    same[:, 0, 0] = 1.5
    same[:, 1, 1] = 0.9
    r = _record_tests(same, 1.0, 0.05, 2)
    assert r["p_value"].tolist() == [0.0, 1.0] and r["lower_bound"].tolist() == [1.5, 0.9]


def test_logistic_regression_bin_artifact_is_not_significant():
    """A deterministic LR whose outputs sit near 0: the record's own-class output crosses one bin (raw binned
    PDTP ln 3 = 1.0986 > 1), which binning alone explains; the exact test says so."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    X[:, 0] *= 2.0  # confident: outputs near 0 and 1
    lr = LogisticRegression(C=1.0)
    s1 = pdtp(lr, X, y)
    v = np.asarray(s1.values)
    pf, pl = np.asarray(s1.p_full), np.asarray(s1.p_loo)
    k_f, k_l = np.floor(pf / 0.01 + 1e-9), np.floor(pl / 0.01 + 1e-9)
    artifact = np.flatnonzero(np.isclose(v, LN3) & (np.abs(k_f - k_l).max(axis=1) <= 1))
    assert artifact.size >= 1  # such records exist here (raw DTP-1 rule: "do not publish")
    res = dtp1_test(lr, X, y, records=np.flatnonzero(v > 1), stage1_values=v[v > 1])
    assert res.n_repeats == 1 and res.method.startswith("exact")
    by = dict(zip(res.records, zip(res.significant, res.stage2_mean, res.p_value)))
    for t in artifact:
        sig, mean, p = by[int(t)]
        assert not sig and mean == 0.0 and p == 1.0
    assert res.n_significant == 0  # (the other candidate: bins 1 and 4, binned ln(9/3), bin-aware ln 2 < 1)


def test_exact_null_rate_at_most_alpha():
    """SeedNoise (E_seed[delta] = 0 exactly), candidates = records with stage-1 PDTP > 1: over 40 seeds, the
    share with any significant record is at most alpha (measured: 0 of 40, with ~30 candidates each)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = rng.integers(0, 2, 40)
    hits, n_cand = 0, []
    for s in range(40):
        v = np.asarray(pdtp(SeedNoise(), X, y, seed_policy="paired", random_state=s).values)
        cand = np.flatnonzero(v > 1)
        n_cand.append(cand.size)
        res = dtp1_test(SeedNoise(), X, y, records=cand, stage1_values=v[cand], random_state=1000 + s)
        hits += res.n_significant > 0
    assert np.mean(n_cand) > 15  # the raw rule fails this null on most records
    assert hits / 40 <= 0.05


def test_forest_outlier_is_significant():
    """A mislabelled outlier far from the data: a fully grown forest without bootstrap puts it in its own leaf in
    every tree (output bin 99 vs 0 without it, every seed): significant, lower bound ln 99 > 1; the other records
    do not change. With bootstrap (noisy repeats) it stays significant with a lower bound above 1."""
    X, y = outlier_data()
    res = dtp1_test(RandomForest(n_estimators=10, max_features=None, bootstrap=False), X, y, records=[0, 1, 2, 3],
                    random_state=3)
    assert res.significant == [True, False, False, False] and res.n_significant == 1
    assert res.lower_bound[0] == pytest.approx(np.log(99.0)) and res.sd[0] == 0.0
    res = dtp1_test(RandomForest(n_estimators=50), X, y, records=[0, 1, 2, 3], random_state=3)
    assert res.significant[0] and res.lower_bound[0] > 1.0 and res.sd[0] > 0
    assert res.lower_bound[0] <= res.stage2_mean[0]


def test_logistic_canary_is_significant():
    """A canary on a feature no other record uses, with the wrong label, under weak regularisation: the full
    model fits it (feature weight large), the leave-one-out model does not (weight 0). Exact, one repeat."""
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(50, 2)), np.zeros(50)]
    y = (X[:, 0] > 0).astype(int)
    X[0] = [3.0, 0.0, 1.0]
    y[0] = 0
    res = dtp1_test(LogisticRegression(C=1e4), X, y, records=[0, 5])
    assert res.significant == [True, False] and res.lower_bound[0] > 1.0 and res.p_value[0] == 0.0


def test_multiplicity_makes_the_decision_more_conservative():
    X, y = outlier_data()
    rf = RandomForest(n_estimators=20)
    small = dtp1_test(rf, X, y, records=[0], random_state=4)
    big = dtp1_test(rf, X, y, records=[0], random_state=4, n_tests=100)
    assert small.p_value == big.p_value  # same data, same per-record p
    assert big.p_adjusted[0] >= small.p_adjusted[0] and big.lower_bound[0] < small.lower_bound[0]
    assert small.significant[0] and not big.significant[0]
    assert big.n_tests == 100 and big.p_adjusted[0] == pytest.approx(100 * big.p_value[0])


def test_max_records_untested_and_result_roundtrip():
    X, y = outlier_data()
    cand, stage1 = np.array([5, 0, 9, 2]), np.array([1.2, 4.6, 1.1, 2.0])
    res = dtp1_test(RandomForest(n_estimators=5), X, y, records=cand, stage1_values=stage1, max_records=2,
                    random_state=0, n_repeats=3)
    assert res.records == [0, 2] and res.untested == [5, 9] and res.stage1_values == [4.6, 2.0]
    assert res.n_tests == 2 and len(res.lower_bound) == len(res.sd) == 2
    again = DTP1TestResult.from_json(res.to_json())
    assert again == res and again.n_significant == res.n_significant
    empty = dtp1_test(RandomForest(n_estimators=5), X, y, records=[], random_state=0)
    assert empty.records == [] and empty.n_significant == 0


def test_stage2_seeds_differ_from_stage1():
    """The same random_state as stage 1 still gives fresh repeats (own seed stream), so candidates chosen by
    stage 1 are never re-measured with stage 1's own models."""
    X, y = outlier_data(n=30)
    assert not set(_stage2_seeds(7, 8)) & set(spawn_seeds(7, 8))
    stage1 = [pf for pf, _, _ in _loo_repeats(SeedNoise(), X, y, np.array([3]), n_classes=2,
                                               root_seeds=spawn_seeds(7, 2))]
    stage2 = [pf for pf, _, _ in _loo_repeats(SeedNoise(), X, y, np.array([3]), n_classes=2,
                                               root_seeds=_stage2_seeds(7, 2))]
    assert not any(np.array_equal(a, b) for a in stage1 for b in stage2)


def test_refactored_repeats_match_pdtp():
    X, y = outlier_data(n=20)
    ref = pdtp(TorchMLP(hidden=(4,), epochs=2), X, y, records=[0, 3, 7], seed_policy="paired", random_state=2,
               n_repeats=2)
    outs = list(_loo_repeats(TorchMLP(hidden=(4,), epochs=2), X, y, np.array([0, 3, 7]), n_classes=2,
                             root_seeds=spawn_seeds(2, 2)))
    assert np.array_equal(outs[0][0], np.asarray(ref.p_full)) and np.array_equal(outs[0][1], np.asarray(ref.p_loo))


def test_engine_path_equals_in_memory(tmp_path):
    X, y = outlier_data(n=30)
    mlp = TorchMLP(hidden=(6,), epochs=3)
    kw = {"records": [0, 4, 9, 17], "random_state": 6, "n_repeats": 3, "threshold": 0.5}
    mem = dtp1_test(mlp, X, y, **kw)
    eng = dtp1_test(mlp, X, y, engine=Engine(cache_dir=tmp_path, chunk_size=2, progress=False), batch_size=3, **kw)
    assert mem.model_dump(exclude={"engine_stats"}) == eng.model_dump(exclude={"engine_stats"})
    # the default engine trains every model of a call in one chunk; the given one in chunks of 2
    assert mem.engine_stats.models_trained == eng.engine_stats.models_trained > 0
    assert mem.engine_stats.n_chunks < eng.engine_stats.n_chunks


def test_validation_messages():
    X, y = outlier_data(n=20)
    rf = RandomForest(n_estimators=3)
    with pytest.raises(InvalidParameterError, match="n_repeats must be >= 2"):
        dtp1_test(rf, X, y, records=[0], n_repeats=1)
    with pytest.raises(InvalidParameterError, match="confidence"):
        dtp1_test(rf, X, y, records=[0], confidence=1.0)
    with pytest.raises(InvalidParameterError, match="threshold"):
        dtp1_test(rf, X, y, records=[0], threshold=0.0)
    with pytest.raises(InvalidInputError, match="records holds index 20"):
        dtp1_test(rf, X, y, records=[20])
    with pytest.raises(InvalidInputError, match="records holds duplicate"):
        dtp1_test(rf, X, y, records=[1, 1])
    with pytest.raises(InvalidParameterError, match="n_tests"):
        dtp1_test(rf, X, y, records=[0, 1], n_tests=1)
    with pytest.raises(InvalidInputError, match="stage1_values has 1 entries"):
        dtp1_test(rf, X, y, records=[0, 1], stage1_values=[2.0])
    # deterministic closed form: one repeat is enough
    assert dtp1_test(LogisticRegression(), X, y, records=[0], n_repeats=1).n_repeats == 1


@pytest.mark.slow
def test_demo_mlp_family_error_against_brute_force_truth():
    """Long et al.'s Adult network (64 tanh units, per-example SGD, 30 epochs) on 1,000 records: the truth for
    each stage-1 candidate from 200 paired repeats; the test at R = 8 on 10 disjoint blocks of repeats flags a
    true-null record in at most 1 block, and its lower bound exceeds the truth in at most 1 block.
    Measured when written (50 blocks, the audit's data): 0 of 50 and 0 of 50, power 0.48 (11 of 24 non-null)."""
    from leakaudit.data import load_adult

    ds = load_adult(columns="long")
    rows = np.random.default_rng(0).permutation(len(ds))[:1000]
    X, y = ds.encode(fit_idx=rows)[0][rows], ds.y[rows]
    mlp = TorchMLP(hidden=(64,), activation="tanh", mode="faithful", epochs=30, lr=0.01)
    v = np.asarray(pdtp(mlp, X, y, seed_policy="paired", random_state=0, keep_outputs=False).values)
    cand = np.flatnonzero(v > 1)
    assert cand.size >= 5
    n_truth, n_blocks = 200, 10
    D = np.stack([bin_aware_log_ratio(np.clip(pf, 0, 1), np.clip(pl, 0, 1)) for pf, pl, _ in
                  _loo_repeats(mlp, X, y, cand, n_classes=2, root_seeds=spawn_seeds(99, n_truth + 8 * n_blocks))])
    mu = np.abs(D[:n_truth].mean(0)).max(axis=1)
    fp = lb_miss = 0
    for b in range(n_blocks):
        r = _record_tests(D[n_truth + 8 * b:n_truth + 8 * (b + 1)], 1.0, 0.05, cand.size)
        fp += bool((r["significant"] & (mu <= 1)).any())
        lb_miss += bool((r["lower_bound"] > mu).any())
    assert fp <= 1 and lb_miss <= 1
    # and the public call on the same candidates agrees with its own statistics
    res = dtp1_test(mlp, X, y, records=cand, stage1_values=v[cand], random_state=1)
    assert res.n_repeats == 8 and len(res.records) == cand.size and not res.untested
    assert _stage2_seeds(1, 8) != spawn_seeds(1, 8)


@pytest.mark.parametrize("learner", [RandomForest(n_estimators=8), TorchMLP(hidden=(8,), epochs=3)],
                         ids=["forest", "mlp"])
def test_known_deltas_give_the_result_of_one_call(learner):
    """Records tested in two calls that share a DTP1Deltas give bit for bit the result of one call on all of them
    (a record's paired models do not depend on the records tested with it), and the second call trains only the
    records not tested yet."""
    X, y = outlier_data()
    kw = {"threshold": 0.2, "n_repeats": 3, "random_state": 5, "engine": Engine(backend="inprocess")}
    once = dtp1_test(learner, X, y, records=[0, 4, 7, 9], stage1_values=[3.0, 1.5, 1.2, 2.0], **kw)
    memo = DTP1Deltas()
    first = dtp1_test(learner, X, y, records=[7, 0], known_deltas=memo, **kw)
    assert sorted(memo.deltas) == [0, 7] and memo.deltas[0].shape == (3, 2)
    again = dtp1_test(learner, X, y, records=[0, 4, 7, 9], stage1_values=[3.0, 1.5, 1.2, 2.0], known_deltas=memo,
                      **kw)
    assert sorted(memo.deltas) == [0, 4, 7, 9]
    assert again.model_dump(exclude={"engine_stats"}) == once.model_dump(exclude={"engine_stats"})
    assert first.p_value[1] == once.p_value[0]  # record 0: the same deltas whichever call measured it
    assert again.engine_stats.n_models < once.engine_stats.n_models  # only records 4 and 9 were trained


def test_known_deltas_refuse_other_seeds_and_repeats():
    X, y = outlier_data()
    memo = DTP1Deltas()
    dtp1_test(RandomForest(n_estimators=4), X, y, records=[0], n_repeats=2, random_state=1, known_deltas=memo)
    with pytest.raises(InvalidParameterError, match="known_deltas"):
        dtp1_test(RandomForest(n_estimators=4), X, y, records=[1], n_repeats=2, random_state=2, known_deltas=memo)
    with pytest.raises(InvalidParameterError, match="known_deltas"):
        dtp1_test(RandomForest(n_estimators=4), X, y, records=[1], n_repeats=3, random_state=1, known_deltas=memo)
    with pytest.raises(InvalidParameterError, match="random_state must be an int"):
        dtp1_test(RandomForest(n_estimators=4), X, y, records=[1], n_repeats=2, known_deltas=memo)
