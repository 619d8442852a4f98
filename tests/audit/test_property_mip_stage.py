"""The property stage's no-model baseline and the MIP stage's accuracy cost, on hand-built numbers."""

import numpy as np
import pytest

from leakaudit.audit.steps.mip import accuracy_cost
from leakaudit.audit.steps.property import compare_with_no_model


def test_model_helps_when_its_estimate_beats_what_the_attacker_knows_without_it():
    # members 80% in the group, the attacker's own records 50%: only the model can tell him 0.8
    r = compare_with_no_model(0.80, 0.79, np.full(20, 0.01), 500, 1000, confidence=0.95)
    assert r["model_helps"] is True
    assert r["estimate_interval"][0] <= 0.79 <= r["estimate_interval"][1]
    assert r["no_model_estimate"] == 0.5 and r["no_model_interval"][0] < 0.5 < r["no_model_interval"][1]
    assert r["model_error_upper"] < r["no_model_error_lower"]
    assert r["sentence"].startswith("the model leaks this property")


def test_no_leak_when_the_attacker_already_knows_the_share():
    # the review's case: race=White, estimate 0.991 against a true 0.847, non-members at 0.855
    r = compare_with_no_model(0.847, 0.991, np.r_[np.full(15, 0.05), np.full(5, 0.2)], 855, 1000)
    assert r["model_helps"] is False and r["no_model_error_lower"] == 0.0
    assert "no leak shown" in r["sentence"] and "0.855" in r["sentence"]


def test_no_leak_when_the_estimate_is_too_uncertain_to_beat_the_baseline():
    r = compare_with_no_model(0.80, 0.79, np.full(20, 0.35), 500, 1000)
    assert r["model_helps"] is False and r["no_model_error_lower"] > 0
    assert "not closer to it by more than the intervals allow" in r["sentence"]


def test_accuracy_cost_and_its_paired_interval():
    rng = np.random.default_rng(0)
    without = rng.random(1000) < 0.85
    with_noise = without & (rng.random(1000) < 0.75)  # the noise breaks about a quarter of the correct answers
    r = accuracy_cost(without, with_noise, confidence=0.95)
    assert r["accuracy_cost"] == pytest.approx(without.mean() - with_noise.mean())
    lo, hi = r["accuracy_cost_interval"]
    assert 0 < lo < r["accuracy_cost"] < hi < 0.5
    for k in ("test_accuracy_without_noise", "test_accuracy_with_noise"):
        a, b = r[f"{k}_interval"]
        assert a < r[k] < b
    assert r["n_test"] == 1000
    same = accuracy_cost(without, without)
    assert same["accuracy_cost"] == 0 and same["accuracy_cost_interval"] == [0.0, 0.0]
