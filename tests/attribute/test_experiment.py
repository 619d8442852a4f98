"""Advantages with intervals and the Monte-Carlo Exp^A."""

import numpy as np
import pytest

from leakaudit.attribute import (
    Records,
    alternative_advantage,
    attribute_advantage,
    counterfactual_residuals,
    difference_interval,
    inversion_attack,
    run_exp_a,
    simulator_accuracy_gaussian,
    summarize_splits,
)
from leakaudit.attribute.results import AttributeAdvantage
from leakaudit.exceptions import InvalidInputError
from leakaudit.metrics import clopper_pearson


def test_attribute_advantage_hand_values_and_json_round_trip():
    r = attribute_advantage([1, 1, 1, 0], [True, False, False, False])
    assert (r.accuracy_members, r.accuracy_nonmembers, r.advantage) == (0.75, 0.25, 0.5)
    l1, u1 = clopper_pearson(3, 4)
    l0, u0 = clopper_pearson(1, 4)
    assert r.ci_low == pytest.approx(0.5 - np.hypot(0.75 - l1, u0 - 0.25))
    assert r.ci_high == pytest.approx(min(1.0, 0.5 + np.hypot(u1 - 0.75, 0.25 - l0)))
    assert AttributeAdvantage.from_json(r.to_json()) == r
    a = alternative_advantage([1, 1], [0, 1], simulator="exact")
    assert a.advantage == 0.5 and a.simulator == "exact"
    with pytest.raises(InvalidInputError, match="correct_members"):
        attribute_advantage([2, 1], [0, 1])


def test_difference_interval_covers_at_nominal_rate():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(120):
        k1, k0 = rng.binomial(60, 0.7), rng.binomial(50, 0.4)
        lo, hi = difference_interval(int(k1), 60, int(k0), 50)
        hits += lo <= 0.3 <= hi
    assert hits / 120 >= 0.9  # conservative by construction


def test_summarize_splits():
    s = summarize_splits([0.1, 0.2, 0.3])
    assert s.mean == pytest.approx(0.2) and s.std == pytest.approx(0.1)
    assert s.ci_high - s.mean == pytest.approx(1.959964 * 0.1 / np.sqrt(3), rel=1e-5)


W = np.array([0.0, 1.5])
PRIOR = np.array([0.5, 0.5])
SIGMA = 1.0


def sample_d(rng, k):
    t = rng.choice(2, size=k, p=PRIOR)
    v = rng.normal(size=k)
    X = np.column_stack([v, t == 0, t == 1]).astype(float)
    y = 2.0 * v + W[t] + rng.normal(0, SIGMA, k)
    return Records(X, y, t)


def population(Z):
    return 2.0 * Z[:, 0] + Z[:, 1:] @ W


def adversary(model, X, y):
    res = counterfactual_residuals(model, X, y, columns=[1, 2])
    return inversion_attack(res, PRIOR, sigma=SIGMA)


def test_exp_a_no_advantage_when_the_model_is_the_population():
    r = run_exp_a(sample_d, lambda X, y, rng: population, adversary, n=50, n_trials=1000, random_state=0)
    assert r.ci_low <= 0.0 <= r.ci_high and r.mu_hat == 0.0
    exact = simulator_accuracy_gaussian(PRIOR, W, SIGMA)
    assert r.accuracy_b1 == pytest.approx(exact, abs=4 * np.sqrt(0.25 / r.n_b1))


def test_exp_a_memorising_model_wins_on_members():
    def train(X, y, rng):
        table = {row.tobytes(): yy for row, yy in zip(X, y)}
        return lambda Z: np.array([table.get(z.tobytes(), population(z[None])[0]) for z in Z])

    sim = lambda X, y: adversary(population, X, y)  # the Bayes rule for this D
    r = run_exp_a(sample_d, train, adversary, n=30, n_trials=300, challenges_per_trial=10, simulator=sim,
                  random_state=1)
    assert r.accuracy_b0 == 1.0  # eps(t_true) = 0 is the density's mode
    exact = simulator_accuracy_gaussian(PRIOR, W, SIGMA)
    assert r.accuracy_b1 == pytest.approx(exact, abs=4 * np.sqrt(0.25 / r.n_b1))
    assert r.alternative_advantage == pytest.approx(1 - exact, abs=4 * np.sqrt(0.25 / r.n_b1))
    assert r.interval == "normal-over-trials" and r.ci_low < r.advantage < r.ci_high
