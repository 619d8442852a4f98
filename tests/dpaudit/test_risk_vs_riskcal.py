"""leakaudit.dpaudit.risk against the formulas of the paper's authors' package, riskcal (1.5.1,
riskcal/analysis/conversions.py), evaluated by hand: riskcal is not a dependency."""

import numpy as np
import pytest

from leakaudit.dpaudit.risk import audit_baselines, risk_bounds, success_bound


@pytest.mark.parametrize("eps, delta, b, riskcal_success", [
    # 1 - get_beta_from_adp(eps, delta, b) = 1 - max(1 - delta - e^eps b, e^-eps (1 - delta - b), 0)
    (1.0, 1e-3, 0.8, 1 - 0.199 / np.e),  # riskcal's doctest: get_beta_from_adp(1.0, 0.001, 0.8) rounds to 0.073
    (2.0, 1e-5, 0.01, 0.07390056098930642),  # 1 - (1 - 1e-5 - e^2 0.01)
    (0.5, 0.05, 0.3, 0.5446163812100384),  # 1 - e^-0.5 (1 - 0.05 - 0.3): the second branch
    (40.0, 0.0, 0.5, 1.0),  # the 0 branch
])
def test_success_is_one_minus_riskcals_adp_tradeoff(eps, delta, b, riskcal_success):
    assert success_bound(eps, delta, b) == pytest.approx(riskcal_success, abs=1e-12)
    assert round(1 - success_bound(1.0, 1e-3, 0.8), 3) == 0.073


@pytest.mark.parametrize("eps, delta", [(0.0, 1e-3), (1.0, 1e-3), (3.0, 1e-5)])
def test_largest_gain_over_the_baseline_is_riskcals_adp_advantage(eps, delta):
    # riskcal's get_advantage_from_adp: (e^eps + 2 delta - 1) / (e^eps + 1), its doctest 0.001 at (0, 0.001)
    want = (np.exp(eps) + 2 * delta - 1) / (np.exp(eps) + 1)
    kink = (1 - delta) / (1 + np.exp(eps))  # where the two lines of f_{eps,delta} meet: the gain is largest there
    assert success_bound(eps, delta, kink) - kink == pytest.approx(want, abs=1e-12)
    gains = [success_bound(eps, delta, b) - b for b in np.linspace(0, 1, 2001)]
    assert max(gains) <= want + 1e-12 and max(gains) == pytest.approx(want, abs=2e-3)


def test_unlabelled_records_have_no_attribute_to_guess():
    X = np.array([[1.0], [2.0], [2.0], [4.0]])
    base = audit_baselines(X, None)
    assert base == {"reidentification": (0.25, "picking the target among the 4 members"),
                    "reconstruction": (0.5, "guessing the most common whole record")}
    assert set(audit_baselines(X, None, sensitive={"s": np.array([0, 0, 0, 1])})) == {
        "reidentification", "attribute_inference", "reconstruction"}
    assert set(risk_bounds(1.0, 0.0, base, claimed=True)) == {"reidentification", "reconstruction"}
