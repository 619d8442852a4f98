"""Definition 6's simulator (the no-model baseline)."""

import numpy as np
import pytest

from leakaudit.attribute import (
    BayesSimulator,
    alternative_advantage_gaussian,
    inversion_attack,
    simulator_accuracy_gaussian,
)
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


def test_table_simulator_is_the_exact_conditional_mode():
    phi = np.array([[0, 1], [0, 1], [0, 1], [1, 0], [1, 0]], float)
    t = np.array([2, 2, 0, 1, 0])
    sim = BayesSimulator().fit(phi, t)
    assert sim.prior_.tolist() == [0.4, 0.2, 0.4]
    assert sim.predict_proba([[0, 1]]).tolist() == [[1 / 3, 0, 2 / 3]]
    # tie between 0 and 1 on (1, 0): lowest index
    assert sim.predict([[0, 1], [1, 0]]).tolist() == [2, 0]
    # unseen phi -> the prior's mode (0 and 2 tie -> 0)
    assert sim.predict([[5, 5]]).tolist() == [0]


def test_estimator_simulator_and_errors():
    rng = np.random.default_rng(0)
    t = rng.integers(0, 2, 400)
    phi = (t + rng.normal(0, 0.3, 400)).reshape(-1, 1)
    sim = BayesSimulator(method="estimator").fit(phi, t)
    assert np.mean(sim.predict(phi) == t) > 0.9
    with pytest.raises(InvalidParameterError, match="method"):
        BayesSimulator(method="magic").fit(phi, t)
    with pytest.raises(InvalidInputError, match="columns"):
        sim.predict(np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match="not fitted"):
        BayesSimulator().predict(phi)


def test_gaussian_simulator_accuracy_matches_monte_carlo():
    rng = np.random.default_rng(1)
    prior = np.array([0.5, 0.3, 0.2])
    w = np.array([0.0, 1.0, -2.0])
    sigma, n = 1.3, 200_000
    t = rng.choice(3, size=n, p=prior)
    y = w[t] + rng.normal(0, sigma, n)
    # the Bayes rule: posterior ∝ p_i N(y - w_i; 0, sigma^2)
    guess = inversion_attack(y[:, None] - w[None, :], prior, sigma=sigma)
    assert np.mean(guess == t) == pytest.approx(simulator_accuracy_gaussian(prior, w, sigma), abs=4 * np.sqrt(0.25 / n))
    # no model learned anything beyond the population and sigma_S = sigma_D: alternative advantage
    # of Adversary 4 is its accuracy minus the Bayes rule's, which is <= 0
    assert alternative_advantage_gaussian(prior, w, sigma, sigma) == pytest.approx(0.0, abs=1e-14)
    assert alternative_advantage_gaussian(prior, w, 0.3, 2.0) > 0
