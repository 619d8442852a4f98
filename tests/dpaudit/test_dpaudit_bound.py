"""The one-run bound against independent computations, its guess helpers, and its input checks."""

import itertools
import math

import numpy as np
import pytest

from leakaudit.dpaudit import (
    GdpAudit,
    OneRunAudit,
    OneRunSearch,
    count_correct,
    default_guess_grid,
    draw_inclusion,
    gdp_audit,
    gdp_epsilon_lower_bound,
    gdp_mu,
    guesses_from_scores,
    one_run_audit,
    one_run_audit_scores,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


def _tail_by_enumeration(r, q):
    """P[#correct >= x] for x = 0..r, summing over all 2^r outcomes of r independent guesses (no scipy)."""
    tail = [0.0] * (r + 2)
    for outcome in itertools.product((0, 1), repeat=r):
        c = sum(outcome)
        p = math.prod(q if o else 1 - q for o in outcome)
        for x in range(c + 1):
            tail[x] += p
    return tail


@pytest.mark.parametrize("r,v,eps,delta", [(8, 8, 1.0, 0.0), (10, 7, 0.5, 0.0), (9, 8, 2.0, 1e-3),
                                           (10, 10, 3.0, 1e-4), (6, 3, 0.2, 0.01)])
def test_p_value_matches_enumeration(r, v, eps, delta):
    m = 40
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = _tail_by_enumeration(r, q)
    alpha = max((tail[v - i] - tail[v]) / i for i in range(1, v + 1))
    expected = min(tail[v] + 2 * m * delta * alpha, 1.0)
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("r", [1, 5, 20, 100, 1000])
@pytest.mark.parametrize("beta", [0.05, 0.01])
def test_perfect_guesses_closed_form(r, beta):
    # with delta = 0 and v = r the p-value is q^r, so the bound solves q = beta^(1/r): eps = logit(beta^(1/r)),
    # or 0 when that is negative (too few guesses to reject even eps = 0)
    q = beta ** (1 / r)
    expected = max(math.log(q / (1 - q)), 0.0)
    assert one_run_epsilon_lower_bound(r, r, r, delta=0.0, beta=beta) == pytest.approx(expected, abs=1e-6)


def test_bound_sits_at_the_rejection_boundary():
    m, r, v, delta, beta = 1000, 200, 170, 1e-5, 0.05
    eps = one_run_epsilon_lower_bound(m, r, v, delta=delta, beta=beta)
    assert 1.0 < eps < 3.0
    assert one_run_p_value(m, r, v, eps, delta) < beta  # the reported epsilon is itself rejected
    assert one_run_p_value(m, r, v, eps + 1e-4, delta) >= beta
    # a larger delta, fewer correct guesses or more confidence can only lower the bound
    assert one_run_epsilon_lower_bound(m, r, v, delta=1e-3, beta=beta) < eps
    assert one_run_epsilon_lower_bound(m, r, v - 10, delta=delta, beta=beta) < eps
    assert one_run_epsilon_lower_bound(m, r, v, delta=delta, beta=0.01) < eps


def test_chance_level_guesses_give_zero():
    assert one_run_epsilon_lower_bound(1000, 100, 50, delta=1e-5) == 0.0
    assert one_run_epsilon_lower_bound(1000, 0, 0, delta=1e-5) == 0.0
    assert gdp_epsilon_lower_bound(1000, 100, 50, delta=1e-5) == 0.0


def test_gdp_bound_is_tighter_on_the_same_guesses():
    for r, v in [(100, 100), (200, 180), (1000, 950)]:
        steinke = one_run_epsilon_lower_bound(1000, r, v, delta=1e-5)
        gdp = gdp_epsilon_lower_bound(1000, r, v, delta=1e-5)
        assert gdp > steinke > 0
    assert gdp_mu(0.0, 1e-5) > 0 and gdp_mu(8.0, 1e-5) > gdp_mu(1.0, 1e-5)


def test_guesses_from_scores():
    scores = np.array([0.3, 5.0, -2.0, 1.0, 0.0, -1.0])
    t = guesses_from_scores(scores, 2, 1)
    np.testing.assert_array_equal(t, [0, 1, -1, 1, 0, 0])
    np.testing.assert_array_equal(guesses_from_scores(scores, 0, 0), np.zeros(6))
    assert count_correct([1, 1, -1, 1, 1, -1], t) == (3, 3)
    assert count_correct([-1, -1, 1, -1, -1, 1], t) == (3, 0)


def test_audit_and_search_results_round_trip(rng):
    m = 400
    S = rng.choice([-1, 1], size=m)
    scores = S * 1.5 + rng.normal(size=m)
    res = one_run_audit(S, guesses_from_scores(scores, 50, 50), delta=1e-5)
    assert isinstance(res, OneRunAudit) and res.r == 100 and res.epsilon_lower_bound > 0
    assert OneRunAudit.from_json(res.to_json()) == res
    search = one_run_audit_scores(S, scores, delta=1e-5)
    assert isinstance(search, OneRunSearch)
    assert search.n_candidates == len(default_guess_grid(m)) == len(search.candidates)
    assert search.beta_per_candidate == pytest.approx(0.05 / search.n_candidates)
    assert search.epsilon_lower_bound == max(row[4] for row in search.candidates)
    # the searched bound pays for the search: the best pair alone, at full beta, gives more
    alone = one_run_epsilon_lower_bound(m, search.r, search.v, delta=1e-5, beta=0.05)
    assert alone > search.epsilon_lower_bound
    both = gdp_audit(S, guesses_from_scores(scores, 50, 50), delta=1e-5)
    assert isinstance(both, GdpAudit) and both.steinke_epsilon_lower_bound == res.epsilon_lower_bound
    assert GdpAudit.from_json(both.to_json()) == both


@pytest.mark.parametrize("call,exc,word", [
    (lambda: one_run_audit([1, -1, 1], [1, 0], delta=1e-5), InvalidInputError, "T"),
    (lambda: one_run_audit([1, -1, 1], [1, 0, 2], delta=1e-5), InvalidInputError, "T"),
    (lambda: one_run_audit([[1, -1]], [1, 0], delta=1e-5), InvalidInputError, "S"),
    (lambda: one_run_audit([1, 0, 1], [1, 0, 1], delta=1e-5), InvalidInputError, "S"),
    (lambda: one_run_audit([1, -1], [1, 0], delta=1e-5, beta=1.0), InvalidParameterError, "beta"),
    (lambda: one_run_audit([1, -1], [1, 0], delta=1e-5, beta=0), InvalidParameterError, "beta"),
    (lambda: one_run_audit([1, -1], [1, 0], delta=-0.1), InvalidParameterError, "delta"),
    (lambda: one_run_epsilon_lower_bound(10, 11, 5, delta=1e-5), InvalidParameterError, "r"),
    (lambda: one_run_epsilon_lower_bound(10, 5, 6, delta=1e-5), InvalidParameterError, "v"),
    (lambda: guesses_from_scores([0.1, 0.2, 0.3], 2, 2), InvalidParameterError, "k_plus + k_minus"),
    (lambda: guesses_from_scores([0.1, np.nan], 1, 0), InvalidInputError, "scores"),
    (lambda: one_run_audit_scores([1, -1], [0.1, 0.2, 0.3], delta=1e-5), InvalidInputError, "scores"),
    (lambda: one_run_audit_scores([1, -1], [0.1, 0.2], delta=1e-5, grid=[(2, 1)]), InvalidParameterError,
     "grid must be a list of (k_plus, k_minus) pairs of integers >= 0 with k_plus + k_minus <= m=2"),
    (lambda: one_run_audit_scores([1, -1], [0.1, 0.2], delta=1e-5, grid=3), InvalidParameterError, "grid"),
    (lambda: one_run_audit_scores([1, -1], [0.1, 0.2], delta=1e-5, bound="x"), InvalidParameterError, "bound"),
    (lambda: gdp_epsilon_lower_bound(10, 5, 5, delta=0.0), InvalidParameterError, "delta"),
])
def test_bad_input_is_one_clear_error(call, exc, word):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    assert msg.startswith(word) and "\n" not in msg


def test_draw_inclusion_is_a_fair_seeded_coin():
    S = draw_inclusion(20_000, 5)
    assert S.dtype == np.int8 and set(np.unique(S)) == {-1, 1}
    assert abs(np.mean(S == 1) - 0.5) < 0.015  # 4 standard errors
    np.testing.assert_array_equal(S, draw_inclusion(20_000, 5))
    assert not np.array_equal(S, draw_inclusion(20_000, 6))
    with pytest.raises(InvalidParameterError, match="^m"):
        draw_inclusion(0)
