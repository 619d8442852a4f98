"""Helpers of the reproductions: per-seed rows with intervals."""

import numpy as np
import pytest

from leakaudit.reproduce import _judge, _seeds, long_dtp
from leakaudit.reproduce._registry import row


def test_seed_row_judges_the_interval_and_lists_every_seed():
    vals, seeds = [0.50, 0.52, 0.48, 0.51, 0.49], [0, 1, 2, 3, 4]
    r = long_dtp._seed_row("q", 0.53, vals, seeds, 0.0)
    m, lo, hi = _judge.interval(vals)
    assert r.ours == pytest.approx(0.5) and lo < 0.5 < hi
    assert r.status == ("match" if lo <= 0.53 <= hi else "differs")
    assert long_dtp._seed_row("q", 0.60, vals, seeds, 0.0).status == "differs"
    # a tolerance never widens the interval; the allowance of the row's kind of quantity is named in the note by
    # _registry.classify (tests/reproduce/test_reference_kinds.py), not by the row's builder
    near = long_dtp._seed_row("q", 0.60, vals, seeds, 0.1)
    assert near.status == "differs" and "within the" not in near.note
    assert long_dtp._seed_row("q", None, vals, seeds).status == "no-paper-value"
    assert all(f"{v:.4g}" in r.note for v in vals) and "seeds 0-4" in r.note
    assert r.values == tuple(vals) and r.seeds == tuple(seeds)


def test_paper_rounding_is_half_the_last_printed_digit():
    assert _judge.paper_rounding(0.8555) == pytest.approx(5e-5)
    assert _judge.paper_rounding(0.99) == pytest.approx(0.005)
    assert _judge.paper_rounding(1.0) == pytest.approx(0.005)  # typed 1.0 for a printed 1.00 or 100%: capped
    assert _judge.paper_rounding(3.4) == pytest.approx(0.005)
    assert _judge.paper_rounding(3.4019) == pytest.approx(5e-5)
    assert _judge.paper_rounding(1e-05) == pytest.approx(5e-6)
    assert _judge.paper_rounding(0.0) == pytest.approx(5e-4)


def test_judge_values_needs_the_mean_and_the_interval_within_the_tolerance():
    # Chase et al.'s census gender at 10% poisoning: mean 0.78 over 5 seeds against the paper's 1.0
    status, _, _, hi = _judge.judge_values(1.0, [0.86, 0.74, 0.80, 0.72, 0.78])
    assert status == "differs" and hi < 0.95
    assert _judge.judge_values(1.0, [0.86, 0.74, 0.80, 0.72, 0.78], tolerance=0.1)[0] == "differs"
    # the paper prints 0.99 (rounding 0.005): our interval [0.972, 0.996] holds it but is wider than the rounding
    # allows, so the seeds cannot tell; with an allowance of 0.02 the whole interval is within it
    vals = [0.97, 0.98, 0.985, 0.99, 0.995]
    assert _judge.judge_values(0.99, vals)[0] == _judge.INCONCLUSIVE
    assert _judge.judge_values(0.99, vals, tolerance=0.02)[0] == "match"
    assert _judge.judge_values(0.99, [0.96, 0.97, 0.975, 0.97, 0.965])[0] == "differs"
    # every seed alike: the interval is that value, and it matches within the tolerance only
    assert _judge.judge_values(0.75, [0.76] * 5)[0] == "differs"
    assert _judge.judge_values(0.75, [0.754] * 5)[0] == "match"
    assert _judge.judge_values(0.5, [0.504] * 5)[0] == "match" and _judge.judge_values(0.5, [0.51] * 5)[0] == "differs"
    assert _judge.judge_values(0.5, [0.51] * 5, tolerance=0.02)[0] == "match"
    # a mean within the tolerance with an interval past it, or a mean past it with an interval that holds the
    # paper's value: too noisy to tell
    assert _judge.judge_values(0.5, [0.3, 0.9, 0.6, 0.7, 0.5], tolerance=0.2)[0] == _judge.INCONCLUSIVE
    assert _judge.judge_values(0.5, [0.3, 0.9, 0.6, 0.7, 0.5], tolerance=0.05)[0] == _judge.INCONCLUSIVE
    assert _judge.judge_values(0.2, [0.2, float("nan")])[0] == "differs"  # one seed with a value: no interval
    assert _judge.judge_values(None, [0.1, 0.2])[0] == "no-paper-value"


def test_beating_the_paper_in_the_direction_it_argues_for_has_its_own_status():
    # Chase et al.'s census race at 10% poisoning: 1.0 in every seed against the paper's 0.98
    assert _judge.judge_values(0.98, [1.0] * 5, favourable="higher")[0] == _judge.BEATS
    assert _judge.judge_values(0.98, [1.0] * 5)[0] == "differs"
    assert _judge.judge_values(0.98, [1.0] * 5, favourable="lower")[0] == "differs"
    assert _judge.judge_values(0.98, [1.0] * 5, tolerance=0.1, favourable="higher")[0] == "match"
    # below the paper in the favourable direction's opposite is a difference, not a win
    assert _judge.judge_values(0.98, [0.8] * 5, favourable="higher")[0] == "differs"
    assert row("q", 0.98, 1.0, 0.005).status == "differs"
    with pytest.raises(Exception, match="favourable"):
        _judge.judge_values(0.5, [0.4, 0.5], favourable="up")


def test_gather_rejudges_rows_that_carry_their_values(tmp_path):
    import json

    from leakaudit.reproduce import _registry

    r = long_dtp._seed_row("q", 0.60, [0.50, 0.52, 0.48, 0.51, 0.49], [0, 1, 2, 3, 4], 0.1)
    fixed = row("fixed", 1.0, 1.0, 0.0)
    res = {"name": "long-dtp-bounds", "profile": "smoke", "seconds": 1.0, "random_state": 0,
           "rows": [dict(vars(r), values=list(r.values), seeds=list(r.seeds), status="match"), vars(fixed)]}
    changed = _registry.rejudge(json.loads(json.dumps(res)))
    assert changed == 1  # the stored 'match' of the seed row is re-derived; the fixed row keeps its status
    (tmp_path / "long-dtp-bounds.json").write_text(json.dumps(res))
    page = _registry.gather(tmp_path)
    assert "1 match, 0 beat the paper, 0 are inconclusive (too noisy), 1 differ" in page and "seeds 0-4" in page
    assert "Of the judged rows, 1 are randomised rows" in page


def test_merge_seed_rows_averages_each_quantity():
    per_seed = [[row("a", 1.0, v, 0.5, "n"), row("b", None, 2 * v)] for v in (1.0, 2.0, 3.0, 4.0, 5.0)]
    merged = _seeds.merge_seed_rows(per_seed, list(range(5)))
    assert [r.quantity for r in merged] == ["a", "b"]
    assert merged[0].ours == pytest.approx(3.0) and merged[1].ours == pytest.approx(6.0)
    assert merged[0].note.startswith("n; seeds 0-4")


def test_seed_row_leaves_out_seeds_without_a_value():
    r = long_dtp._seed_row("q", None, [0.5, float("nan"), 0.7], [0, 1, 2])
    assert r.ours == pytest.approx(0.6) and "of the 2 seeds with a value" in r.note and "nan" in r.note
    assert long_dtp._seed_row("q", 0.6, [float("nan")] * 3, [0, 1, 2]).status == "differs"


def test_map_jobs_same_values_in_processes(monkeypatch):
    calls = [(2, 3), (3, 2), (5, 1)]
    monkeypatch.setenv(_seeds.JOBS_ENV, "1")
    here = _seeds.map_jobs(pow, calls)
    monkeypatch.setenv(_seeds.JOBS_ENV, "2")
    assert _seeds.map_jobs(pow, calls) == here == [8, 9, 5]
    assert _seeds.map_seeds(pow, 2, [1, 2]) == [2, 4]
    monkeypatch.setenv(_seeds.JOBS_ENV, "many")
    with pytest.raises(ValueError, match=_seeds.JOBS_ENV):
        _seeds.map_jobs(pow, calls)


def test_purchase_calibration_loss_and_accuracies_are_seeded():
    from leakaudit.reproduce import long_membership as lm

    exact = {"NB": (0.8641, 0.7204), "NN": (1.0, 0.6434)}
    assert lm.calibration_loss(exact) == 0.0
    off = {"NB": (0.9641, 0.7204), "NN": (1.0, 0.5434)}
    assert lm.calibration_loss(off) == pytest.approx(0.02)
    from leakaudit.data import make_purchase_like
    from leakaudit.data.purchase import LONG_PURCHASE_PARAMS

    ds = make_purchase_like(n_records=300, n_features=836, n_classes=10, random_state=0, **LONG_PURCHASE_PARAMS)
    assert ds.info["params"]["favourite_boost"] == LONG_PURCHASE_PARAMS["favourite_boost"]
    a = lm.purchase_accuracies({"mean_items": 20.0}, 3, 2200)
    assert a == lm.purchase_accuracies({"mean_items": 20.0}, 3, 2200)
    assert set(a) == {"NB", "NN"} and all(0 <= v <= 1 for pair in a.values() for v in pair)


def test_long_table1_claims_rows_on_known_values():
    from types import SimpleNamespace

    from leakaudit.reproduce import long_membership as lm

    dist = np.array([0.5, 0.9, 0.95, 0.6])
    unt = np.array([0.94, 0.7, 0.85, 0.55])
    freq = np.array([0.5, 0.6, 0.7, 0.65])
    res = SimpleNamespace(attacks={"untargeted": {"per_target_accuracy": unt},
                                   "frequency": {"per_target_accuracy": freq},
                                   "distance": {"per_target_accuracy": dist}},
                          max_per_target_accuracy=np.max([unt, freq, dist], axis=0))
    pd = np.array([1.5, 4.5, 2.0, 0.3])
    rows = {r.quantity.split(": ", 1)[1]: r for r in lm._claims_rows("X", res, pd, {"n_pdtp_iterations": 10,
                                                                                    "n_targets": 4}, paper=True)}
    assert rows["average PDTP"].ours == pytest.approx(pd.mean())
    assert rows["targets with avg PDTP > 1"].ours == 3
    assert rows["share of PDTP>1 targets with max accuracy > 0.8"].ours == pytest.approx(1.0)  # 0.94, 0.9, 0.95
    assert rows["max of max accuracy among PDTP<0.5 targets"].ours == pytest.approx(0.65)
    assert rows["share of PDTP>4 targets with max accuracy > 0.9"].ours == 0.0  # target 1: 0.9 is not above
    assert rows["lowest distance-attack per-target accuracy"].ours == 0.5
    assert rows["untargeted accuracy on that target"].ours == pytest.approx(0.94)
    assert rows["targets with distance accuracy <= 0.55 and untargeted >= 0.9"].ours == 1


def test_a_paper_bound_matches_when_our_interval_is_on_its_side():
    vals, seeds = [0.9, 0.78, 0.68, 0.78, 0.82], [0, 1, 2, 3, 4]  # Chase census-gender, best accuracy at p <= 0.10
    assert _judge.judge_values(0.9, vals)[0] == "differs"
    assert _judge.judge_values(0.9, vals, "lower")[0] == "differs"  # 'above 90%': our mean is 0.79
    assert _judge.judge_values(0.9, [1.0] * 5)[0] == "differs"  # 1.0 everywhere is not the value 0.9 ...
    r = _seeds.seed_row("q", 0.9, [1.0] * 5, seeds, bound="lower")
    assert r.status == "match" and r.bound == "lower" and "lower bound" in r.note  # ... but it is above the bound
    merged = _seeds.merge_seed_rows([[r] for _ in range(5)], seeds)
    assert merged[0].bound == "lower" and merged[0].status == "match"
    # 'we did not find any': an upper bound of 0, so one seed finding one is a difference, whatever the interval
    counts = [0, 1, 0, 1, 1]  # LR-Adult targets with average PDTP > 1, seeds 0-4
    assert _judge.judge_values(0.0, counts)[0] == _judge.INCONCLUSIVE  # the interval [-0.08, 1.28] holds 0 ...
    assert _judge.judge_values(0.0, counts, "upper")[0] == "differs"  # ... but the paper found none
    assert _judge.judge_values(0.0, [0] * 5, "upper")[0] == "match"
    assert _judge.judge_values(0.665, [0.71, 0.69, 0.72, 0.70, 0.71], "upper")[0] == "differs"  # 'never above'
    # a bound needs the whole interval on its side; a mean on its side with an interval across it cannot tell
    assert _judge.judge_values(0.9, [0.95, 0.99, 0.80, 0.97, 0.99], "lower")[0] == _judge.INCONCLUSIVE
    assert _judge.judge_values(0.9, [0.95, 0.99, 0.96, 0.97, 0.99], "lower")[0] == "match"
    # a bound needs the whole interval on its side; a mean on its side with an interval across it cannot tell
    assert _judge.judge_values(0.9, [0.95, 0.99, 0.80, 0.97, 0.99], "lower")[0] == _judge.INCONCLUSIVE
    assert _judge.judge_values(0.9, [0.95, 0.99, 0.96, 0.97, 0.99], "lower")[0] == "match"
    with pytest.raises(Exception, match="bound"):
        _judge.judge_values(0.5, [0.4, 0.5], "sideways")
    assert row("q", 0.9, 0.95, 0.0, bound="lower").status == "match"
    assert row("q", 0.9, 0.85, 0.0, bound="lower").status == "differs"
    assert row("q", 0.0, 2.0, 0.0, bound="upper").status == "differs"


def test_protocol_pdtp_uses_each_iterations_half_and_target_model():
    # Long et al. §5.4 (spec §4.3): in iteration m a target t in half D_j is measured as PDTP_{A, D_j}(t), the
    # full model being that iteration's target model c_j (its outputs as the protocol passes them), the
    # leave-one-out model A(D_j \ {t}). Deliberately odd "target model" outputs show that they, not a model
    # retrained on D_j, are the full model's.
    from leakaudit.dtp import pdtp_from_probabilities
    from leakaudit.learners import NaiveBayes
    from leakaudit.reproduce import long_membership

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(80, 6)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 80) > 1).astype(np.int64)
    D = np.arange(10, 70)
    learner = NaiveBayes(n_values=[2] * 6)
    train_sets = []
    for _ in range(3):
        perm = rng.permutation(D)
        train_sets += [perm[:30], perm[30:]]
    targets = np.sort(rng.choice(D, 6, replace=False))
    outputs = rng.dirichlet([1.0, 1.0], size=(6, 6))  # (2 x iterations, targets, classes)
    M = long_dtp._protocol_pdtp(learner, X, y, train_sets, outputs, targets, 2, np.random.default_rng(1))
    assert M.shape == (2, 6)
    for m in range(2):
        for j, t in enumerate(targets):
            k = 2 * m + (0 if t in train_sets[2 * m] else 1)
            h = np.asarray(train_sets[k])
            rest = h[h != t]
            p_loo = learner.fit(X[rest], y[rest], random_state=0, n_classes=2).predict_proba(X[[t]])
            assert M[m, j] == pytest.approx(pdtp_from_probabilities(outputs[k][j][None], p_loo)[0])
    avg = long_membership._avg_pdtp(learner, X, y, train_sets, outputs, targets, 2, np.random.default_rng(1))
    np.testing.assert_allclose(avg, M.mean(axis=0))
    from leakaudit.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="n_meas=4"):
        long_dtp._protocol_pdtp(learner, X, y, train_sets, outputs, targets, 4, np.random.default_rng(1))
