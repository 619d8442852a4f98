"""Per-record risk: which attacks and checks flag each member, with a p-value per attack, corrected for the number
of records.

An attack scores every audited record. A member's score is judged against the non-members' scores, the attack's
scores of records the model never trained on: its one-sided empirical p-value is ``(1 + #{non-members scoring at
least as high}) / (1 + n_nonmembers)``, valid whatever the scores' distribution (the non-members are exchangeable
with a member the model did not train on). Over every member and every attack the p-values are corrected by
Benjamini and Hochberg's procedure (``scipy.stats.false_discovery_control``) at ``1 - confidence``: among the members
flagged, the expected share flagged wrongly is at most that. The DTP-1 check flags the records it finds significant
(``dtp.records_significant``: its own test, corrected by Holm over the records it re-measured).

The smallest p-value n non-members allow is ``1 / (n + 1)``; with few non-members no member can be flagged after the
correction, and the table says so rather than flagging none silently.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["empirical_p_values", "flag_records"]


def empirical_p_values(member_scores: np.ndarray, nonmember_scores: np.ndarray) -> np.ndarray:
    """One-sided p-value of each member's score among the non-members' (NaN for a NaN score).

    Parameters
    ----------
    member_scores : ndarray of shape (n_members,)
    nonmember_scores : ndarray of shape (n_nonmembers,)

    Returns
    -------
    ndarray of shape (n_members,), values in [1 / (n_nonmembers + 1), 1]
    """
    s = np.asarray(member_scores, float)
    non = np.sort(np.asarray(nonmember_scores, float))
    non = non[np.isfinite(non)]
    at_least = non.size - np.searchsorted(non, s, side="left")
    p = (1.0 + at_least) / (1.0 + non.size)
    p[~np.isfinite(s)] = np.nan
    return p


def flag_records(rec: pd.DataFrame, *, names: dict[str, str], dtp_significant: list[int] | None,
                 confidence: float) -> tuple[pd.DataFrame, dict]:
    """``rec`` with a ``p_ATTACK`` column per ``score_ATTACK`` column (members only) and ``flagged_by`` (the attacks
    and checks that flag each member, "; "-separated; empty when none), and a summary for results.json.

    ``names``: each attack's name in words by registry name; ``dtp_significant``: the members DTP-1 finds
    significant (record ids); ``confidence``: the false discovery rate is ``1 - confidence``.
    """
    from scipy.stats import false_discovery_control

    rec = rec.copy()
    mem = rec["is_member"].to_numpy() == 1
    attacks = [c[len("score_"):] for c in rec.columns if c.startswith("score_")]
    flags = [[] for _ in range(len(rec))]
    pvals = {}
    for a in attacks:
        s = rec[f"score_{a}"].to_numpy(float)
        p = np.full(len(rec), np.nan)
        p[mem] = empirical_p_values(s[mem], s[~mem])
        rec[f"p_{a}"] = p
        pvals[a] = p
    alpha = round(1 - confidence, 12)
    summary = {"method": "one-sided empirical p-value of each member's score among the non-members', "
                         "Benjamini-Hochberg over every member and attack",
               "false_discovery_rate": alpha, "flagged": {}}
    stacked = np.concatenate([pvals[a][mem] for a in attacks]) if attacks else np.array([])
    ok = np.isfinite(stacked)
    if ok.any():
        adj = np.full(stacked.size, np.nan)
        adj[ok] = false_discovery_control(stacked[ok], method="bh")
        idx = np.flatnonzero(mem)
        for k, a in enumerate(attacks):
            hit = idx[adj[k * idx.size:(k + 1) * idx.size] <= alpha]
            for i in hit:
                flags[i].append(names.get(a, a))
            summary["flagged"][a] = int(hit.size)
        n_non = int((~mem).sum())
        smallest = 1.0 / (n_non + 1)
        if smallest * ok.sum() > alpha:  # even the smallest p-value, alone, cannot pass the correction
            summary["resolution"] = (f"with {n_non:,} non-members the smallest p-value is {smallest:.2g}, and "
                                         f"{int(ok.sum()):,} p-values are corrected: a member is flagged only when "
                                         "many score as high; more non-members would resolve single records")
    if dtp_significant:
        where = {int(r): i for i, r in enumerate(rec["record"].to_numpy()) if mem[i]}
        for r in dtp_significant:
            if int(r) in where:
                flags[where[int(r)]].append("DTP-1")
        summary["flagged"]["dtp1"] = len(dtp_significant)
    rec["flagged_by"] = ["; ".join(f) for f in flags]
    summary["n_members_flagged"] = int(sum(1 for i, f in enumerate(flags) if f and mem[i]))
    return rec, summary
