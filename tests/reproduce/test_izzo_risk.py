"""Izzo et al.'s MIP-against-DP comparison states what each DP baseline's declared epsilon implies for
re-identification, attribute inference and reconstruction (leakaudit.dpaudit.risk), a sentence each in its row's
note; the rows' numbers are the fingerprinted ones (tests/reproduce/test_fingerprints.py)."""

import re

import numpy as np
import pytest

from leakaudit.reproduce import izzo


def test_figure1_laplace_rows_state_the_risk_of_theorem4s_epsilon():
    rows = {r.quantity: r for r in izzo.izzo_fig1("smoke", 0)}
    dp = [q for q in rows if re.fullmatch(r"n=\d+: DP scale at eta=[\d.]+", q)]  # n 36-48, 4 etas
    assert len(dp) == 16 and all(rows[q].note.count("succeeds at most") == 2 for q in dp)
    # eta 0.1: epsilon log(1.2 / 0.8) = log 1.5, delta 0; 18 distinct members, baseline 1/18; 1 - f(1/18) = 1.5 / 18
    note = rows["n=36: DP scale at eta=0.1"].note
    assert ("if the claimed epsilon 0.41 (delta 0) holds, re-identification succeeds at most 8.33% of the time "
            "(5.56% by picking the target among the 18 members)") in note
    assert "reconstruction succeeds at most 8.33%" in note and "attribute inference" not in note  # no label


def test_figure2_dpsgd_risk_is_for_its_members_at_its_declared_epsilon():
    out = izzo.fig2_run(2000, (0.1,), (2,), runs=1, B=8, dp_runs=1)
    # epsilon with eta(eps, 1e-5) = 0.1 is about log 1.5; baseline 1/1,000; 1 - f = 1e-5 + 1.5e-3, 0.15%
    assert out["risk"][0.1].startswith("if the claimed epsilon 0.41 (delta 1e-05) holds, re-identification succeeds "
                                       "at most 0.15% of the time (0.10% by picking the target among the 1,000 members)")


def test_dp_risk_of_a_large_member_set_is_not_rounded_to_zero():
    note = izzo.dp_risk(0.4, 1e-5, np.arange(250_000.0)[:, None])
    # 1 - f(b) = delta + e^0.4 b = 1e-5 + 1.4918 * 4e-6 = 1.6e-5: delta outweighs the baseline 4e-6 here
    assert "at most 0.0016% of the time (0.0004% by picking the target among the 250,000 members)" in note


@pytest.mark.slow
def test_adult_dpsgd_rows_state_all_three_risks():
    rows = [r for r in izzo._adult_rows("smoke", 0) if "DP-SGD" in r.quantity]
    assert len(rows) == 1
    note = rows[0].note
    assert note.count("if the claimed epsilon 0.41 (delta 1e-05) holds") == 3
    assert "(1.00% by picking the target among the 100 members)" in note
    assert "attribute inference succeeds at most" in note and "by guessing the label's most common value" in note
