"""The DTP-1 test's sequential repeats (dtp1_test's max_repeats): an undecided record gets more, in rounds.

A simulated learner gives each record a known leave-one-out change: its class-1 output is 1e-6 exp(b) with
b = the sum of the trained rows' shifts (column 1) + sigma N(0, 1) drawn from (seed, number of rows), so record t's
unbinned paired delta of class 1 is shift_t + sigma (z_full - z_loo): normal, mean shift_t, sd sigma sqrt(2)
(class 0 moves by less than 1e-2).
"""

import numpy as np
import pytest

from leakaudit.dtp import DTP1Deltas, dtp1_test
from leakaudit.dtp.significance import _looks
from leakaudit.learners._base import Learner


class Shifts(Learner):
    def __init__(self, *, sigma: float = 1.0):
        self.sigma = sigma

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        b = X[:, 1].sum() + self.sigma * np.random.default_rng([int(random_state), len(X)]).normal()
        return _Const(1e-6 * np.exp(b))


class _Const:
    def __init__(self, q):
        self.q = q

    def predict_proba(self, X):
        return np.tile([1 - self.q, self.q], (len(X), 1))


def data(*shifts):
    """Rows 0.. with these shifts, then two rows without any."""
    X = np.zeros((len(shifts) + 2, 2))
    X[: len(shifts), 1] = shifts
    return X, np.array([0, 1] * (len(X) // 2) + [0] * (len(X) % 2))


KW = {"threshold": 1.0, "bin_width": None}


def test_looks_double_up_to_the_budget():
    assert _looks(16, 16) == [16] and _looks(16, 64) == [16, 32, 64] and _looks(8, 20) == [8, 16, 20]


def test_null_at_the_threshold_false_exceed_rate_at_most_the_level():
    """A record whose true change is exactly the threshold (the hardest null), at level 0.2 with 3 looks (4, 8, 16
    repeats): undecided at the first look in 175 of 400 seeds, so re-measured. Found significant in 15 of 400
    (0.0375): at most the level, and even at most the 0.05 that the one direction able to reject gets (0.2 over
    the 2C = 4 directions). Testing each look at the full level instead (the same repeats, stopping when decided)
    exceeds that: 35 of 400 (0.0875)."""
    X, y = data(1.0)
    hits = more = naive = 0
    for s in range(400):
        r = dtp1_test(Shifts(), X, y, records=[0], n_repeats=4, max_repeats=16, confidence=0.8, random_state=s, **KW)
        hits += r.n_significant
        more += r.repeats[0] > 4
        for n in (4, 8, 16):  # a single look of n repeats has the first n of the sequential test's seeds
            f = dtp1_test(Shifts(), X, y, records=[0], n_repeats=n, confidence=0.8, random_state=s, **KW)
            if f.significant[0] or f.stage2_mean[0] <= 1.0:
                naive += f.n_significant
                break
    assert r.looks == [4, 8, 16] and r.look_level == pytest.approx(0.2 / 3)
    assert (hits, more, naive) == (15, 175, 35)
    assert hits / 400 <= 0.2 / 4 < naive / 400


def test_leaking_record_undecided_at_the_profile_repeats_is_decided_with_more():
    """True change 2 (twice the threshold), sd sqrt 2 per repeat: at 4 repeats undecided in 9 of the first 10
    seeds; with a budget of 64 the same first repeats, then more, make it significant in each of them."""
    X, y = data(2.0)
    undecided = 0
    for s in range(10):
        fixed = dtp1_test(Shifts(), X, y, records=[0], n_repeats=4, random_state=s, **KW)
        if fixed.significant[0] or fixed.stage2_mean[0] <= 1.0:
            continue
        undecided += 1
        seq = dtp1_test(Shifts(), X, y, records=[0], n_repeats=4, max_repeats=64, random_state=s,
                        **KW)
        assert seq.significant[0] and 4 < seq.repeats[0] <= 64 and seq.lower_bound[0] > 1.0
        assert fixed.looks == [4] and fixed.repeats == [4] and seq.looks == [4, 8, 16, 32, 64]
    assert undecided >= 8


def test_budget_respected_and_decided_records_not_re_measured():
    """Row 0 clearly leaks (significant at the first look), row 1 does not move (mean <= 1: decided), row 2 sits at
    the threshold: only row 2 is re-measured, and with this seed it is still undecided when the budget of 16 is
    spent; the models trained are the first look's and, per later repeat, a full model and row 2's."""
    X, y = data(6.0, 0.0, 1.0)
    memo = DTP1Deltas()
    r = dtp1_test(Shifts(sigma=0.3), X, y, records=[0, 1, 2], n_repeats=4, max_repeats=16, random_state=0,
                  known_deltas=memo, **KW)
    assert r.significant == [True, False, False] and r.repeats == [4, 4, 16] and r.stage2_mean[2] > 1.0
    assert [len(memo.deltas[t]) for t in (0, 1, 2)] == [4, 4, 16]
    assert r.engine_stats.n_models == 4 * 4 + 2 * 12


def test_deterministic_for_a_seed_first_look_unchanged_and_memo_reuse():
    """The same seed gives the same result; the first look's repeats are those of a single look (the same seeds),
    and with one look the result is exactly the single-look test's; a call reusing another call's deltas gives
    the result of one call."""
    X, y = data(2.0, 0.0, 1.0)
    kw = {"n_repeats": 4, "random_state": 7, **KW}
    one = DTP1Deltas()
    single = dtp1_test(Shifts(sigma=2.0), X, y, records=[0, 1, 2], known_deltas=one, **kw)
    assert dtp1_test(Shifts(sigma=2.0), X, y, records=[0, 1, 2], max_repeats=4, **kw).model_dump(
        exclude={"engine_stats"}) == single.model_dump(exclude={"engine_stats"})
    memo = DTP1Deltas()
    a = dtp1_test(Shifts(sigma=2.0), X, y, records=[0, 1, 2], max_repeats=32, known_deltas=memo, **kw)
    b = dtp1_test(Shifts(sigma=2.0), X, y, records=[0, 1, 2], max_repeats=32, **kw)
    assert a.model_dump(exclude={"engine_stats"}) == b.model_dump(exclude={"engine_stats"})
    for t in range(3):
        np.testing.assert_array_equal(memo.deltas[t][:4], one.deltas[t])
    part = DTP1Deltas()
    dtp1_test(Shifts(sigma=2.0), X, y, records=[2], max_repeats=32, known_deltas=part, **kw)
    again = dtp1_test(Shifts(sigma=2.0), X, y, records=[0, 1, 2], max_repeats=32, known_deltas=part, **kw)
    assert again.model_dump(exclude={"engine_stats"}) == a.model_dump(exclude={"engine_stats"})


def test_audit_states_the_sequential_design(tmp_path, monkeypatch):
    """The smoke demo (200 members) with a budget of 32 repeats: the DTP-1 sentence and the test's method state the
    looks and their level, and results.json (written by run_audit) holds the test."""
    import leakaudit.audit.config as config
    from leakaudit.audit import make_config, run_audit

    monkeypatch.setitem(config.PROFILES, "smoke", config.PROFILES["smoke"].model_copy(
        update={"dtp_test_max_repeats": 32}))
    res = run_audit(make_config(n_members=200, n_nonmembers=200, profile="smoke", cache_dir=tmp_path / "cache"),
                    tmp_path / "out", verbose=False)
    check = next(c for c in res.verdict.checks if c.id == "dtp.dtp1")
    level = f"{(1 - check.confidence) / 3:.2g}"
    assert f"re-measured up to 32 times in 3 looks at level {level} each, Bonferroni over the looks" in check.sentence
    assert "re-measured to 16, 32 repeats" in res.dtp["test"]["method"] and "over the 3 looks" in res.dtp["test"][
        "method"]
