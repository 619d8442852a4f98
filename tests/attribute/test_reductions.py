"""Adversaries 5, 6, 7 and Theorems 6 and 7 (Yeom et al. §5)."""

import numpy as np
import pytest

from leakaudit.attribute import (
    NO_ANSWER,
    acceptance_matrix,
    attribute_advantage,
    correct_guesses,
    membership_from_attribute,
    multi_query_reduction,
    residual_threshold_acceptance,
    theorem7_advantage,
    uniform_reduction,
)
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


def test_adversary7_orders_and_no_answer():
    accept = np.array([[True, False, True], [False, False, False], [False, True, True]])
    prior = [0.2, 0.5, 0.3]
    assert multi_query_reduction(accept, prior).tolist() == [2, NO_ANSWER, 1]
    assert multi_query_reduction(accept, prior, order="asc").tolist() == [0, NO_ANSWER, 2]
    # equal priors: lowest index in both orders
    assert multi_query_reduction([[False, True, True]], [0.2, 0.4, 0.4]).tolist() == [1]
    assert multi_query_reduction([[False, True, True]], [0.2, 0.4, 0.4], order="asc").tolist() == [1]
    with pytest.raises(InvalidParameterError, match="order"):
        multi_query_reduction(accept, prior, order="random")


def test_theorem6_is_an_exact_identity_on_any_sample():
    rng = np.random.default_rng(3)
    for _ in range(20):
        t1, t0 = rng.integers(0, 4, 57), rng.integers(0, 4, 43)
        g1, g0 = rng.integers(-1, 4, 57), rng.integers(-1, 4, 43)
        attr = attribute_advantage(correct_guesses(g1, t1), correct_guesses(g0, t0)).advantage
        d1, d0 = membership_from_attribute(g1, t1), membership_from_attribute(g0, t0)
        assert d1.mean() - d0.mean() == pytest.approx(attr, abs=1e-15)  # Adv^M = TPR - FPR


def test_theorem7_uniform_reduction_is_membership_advantage_over_m():
    # membership oracle with TPR 0.9 on the true value of members, FPR 0.2 elsewhere (b and t independent)
    rng = np.random.default_rng(4)
    n, m = 200_000, 3
    t = rng.integers(0, m, n)
    member = rng.integers(0, 2, n).astype(bool)

    def oracle(i):
        p = np.where(member & (t == i), 0.9, 0.2)
        return rng.random(n) < p

    accept = acceptance_matrix(oracle, m)
    g = uniform_reduction(accept, random_state=5)
    ok = correct_guesses(g, t)
    adv = ok[member].mean() - ok[~member].mean()
    # Adv*^M on the true value = 0.9 - 0.2 = 0.7
    assert adv == pytest.approx(theorem7_advantage(0.7, m), abs=4 * np.sqrt(0.25 / (n / 2) * 2))
    assert set(np.unique(g)) <= {-1, 0, 1, 2}


def test_threshold_acceptance_and_errors():
    acc = residual_threshold_acceptance([[0.1, -2.0], [-0.5, 0.5]], 0.5)
    assert acc.tolist() == [[True, False], [False, False]]
    with pytest.raises(InvalidParameterError, match="threshold"):
        residual_threshold_acceptance([[0.1, 0.2]], 0)
    with pytest.raises(InvalidInputError, match="accept"):
        uniform_reduction([[0.5, 0.2]])
    with pytest.raises(InvalidInputError, match="1-D"):
        acceptance_matrix(lambda i: np.zeros((2, 2)), 2)
    with pytest.raises(InvalidInputError, match="integer"):
        membership_from_attribute([0.5], [0])


def test_oracles_from_the_membership_package_agree_with_the_plain_threshold():
    from leakaudit.attribute import (
        classifier_membership_oracle,
        counterfactual_inputs,
        counterfactual_residuals,
        regression_membership_oracle,
    )

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=50), np.eye(3)[rng.integers(0, 3, 50)]])
    y = rng.normal(size=50)
    w = np.array([0.5, 0.0, -1.0, 1.0])
    predict = lambda Z: Z @ w  # noqa: E731
    oracle = regression_membership_oracle(predict, X, y, columns=[1, 2, 3], sigma_s=0.7)
    res = counterfactual_residuals(predict, X, y, columns=[1, 2, 3])
    assert np.array_equal(acceptance_matrix(oracle, 3), residual_threshold_acceptance(res, 0.7))

    def proba(Z):
        p = 1 / (1 + np.exp(-(Z @ w)))
        return np.column_stack([1 - p, p])

    lab = rng.integers(0, 2, 50)
    oracle_c = classifier_membership_oracle(proba, X, lab, columns=[1, 2, 3], train_loss=0.6)
    cand = counterfactual_inputs(X, columns=[1, 2, 3])
    want = np.stack([-np.log(proba(cand[i])[np.arange(50), lab]) < 0.6 for i in range(3)], axis=1)
    assert np.array_equal(acceptance_matrix(oracle_c, 3), want)
