"""Per-record risk: an empirical p-value per member and attack against the non-members, corrected by
Benjamini-Hochberg, on cases whose truth is known."""

import numpy as np
import pandas as pd

from leakaudit.audit.result.record_risk import empirical_p_values, flag_records


def test_empirical_p_value_counts_nonmembers_at_least_as_high():
    p = empirical_p_values(np.array([5.0, 0.5, -1.0, np.nan]), np.array([0.0, 1.0, 2.0, 3.0]))
    np.testing.assert_allclose(p[:3], [1 / 5, 4 / 5, 5 / 5])
    assert np.isnan(p[3])


def _rec(member_scores, non_scores):
    n1, n0 = len(member_scores), len(non_scores)
    return pd.DataFrame({"record": np.arange(n1 + n0), "is_member": np.r_[np.ones(n1, int), np.zeros(n0, int)],
                         "score_lira": np.r_[member_scores, non_scores]})


def test_null_members_are_rarely_flagged_and_memorised_ones_are():
    rng = np.random.default_rng(0)
    wrong = 0
    for _ in range(50):  # the model trained on none of them: scores exchangeable with the non-members'
        rec, s = flag_records(_rec(rng.normal(size=300), rng.normal(size=3000)), names={"lira": "LiRA"},
                              dtp_significant=None, confidence=0.95)
        wrong += s["n_members_flagged"] > 0
    assert wrong <= 5  # a false discovery at all in at most about 5 % of null audits (BH controls FWER under null)
    scores = rng.normal(size=300)
    scores[:30] += 8.0  # thirty memorised members
    rec, s = flag_records(_rec(scores, rng.normal(size=3000)), names={"lira": "LiRA"}, dtp_significant=[1, 200],
                          confidence=0.95)
    flagged = rec["flagged_by"].to_numpy()
    assert all("LiRA" in f for f in flagged[:30]) and s["flagged"]["lira"] >= 30
    assert flagged[200] == "DTP-1" and flagged[1] == "LiRA; DTP-1"
    assert rec["p_lira"].iloc[300:].isna().all()  # non-members get no p-value: nothing of theirs to leak


def test_too_few_nonmembers_to_resolve_single_records_is_said():
    rng = np.random.default_rng(1)
    rec, s = flag_records(_rec(rng.normal(size=500), rng.normal(size=100)), names={}, dtp_significant=None,
                          confidence=0.95)
    assert "smallest p-value is 0.0099" in s["resolution"]
