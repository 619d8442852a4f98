"""The verdict: publish or not, with reasons in plain words, judged against configurable thresholds."""

from __future__ import annotations

from .config import AuditConfig
from .results import Verdict

__all__ = ["decide"]


def _fpr_key(tprs: dict, f: float) -> str | None:
    for k in tprs:
        if abs(float(k) - f) < 1e-12:
            return k
    return None


def decide(cfg: AuditConfig, *, membership: dict, dtp: dict | None, attribute: dict) -> Verdict:
    """Apply the thresholds of ``cfg.thresholds`` to what was measured.

    A check fails only when the evidence is clear: an attack's AUC or TPR whose
    whole confidence interval lies above its threshold, or records whose PDTP
    exceeds the DTP-1 threshold (Long et al. §5).
    """
    th = cfg.thresholds
    reasons, passed = [], []
    if dtp is not None:
        if dtp["n_above"] > th.max_records_above_dtp:
            reasons.append(
                f"{dtp['n_above']} of {dtp['n_records']} training records measured have PDTP above {th.max_dtp:g} "
                f"(max {dtp['max']:.2f}); the DTP-1 rule (Long et al.) says not to publish"
            )
        else:
            passed.append(f"no training record has PDTP above {th.max_dtp:g} (max {dtp['max']:.2f} over {dtp['n_records']})")
    pct = f"{th.low_fpr * 100:g}%"
    for name, m in membership.items():
        lo_auc = m["auc_ci"][0]
        if lo_auc > th.max_auc:
            reasons.append(f"the {name} attack separates members from non-members with AUC {m['auc']:.3f} "
                           f"(interval from {lo_auc:.3f}, above {th.max_auc:g})")
        k = _fpr_key(m["tpr_at_fpr"], th.low_fpr)
        t = m["tpr_at_fpr"].get(k) if k else None
        if t is not None and t["tpr"] == t["tpr"]:
            if t["ci"][0] > th.max_tpr_at_low_fpr:
                reasons.append(f"{name} identifies members at {t['tpr'] * 100:.1f}% TPR with {pct} FPR "
                               f"(interval from {t['ci'][0] * 100:.1f}%, above {th.max_tpr_at_low_fpr * 100:g}%)")
            else:
                passed.append(f"{name}: TPR at {pct} FPR {t['tpr'] * 100:.2f}%, not clearly above "
                              f"{th.max_tpr_at_low_fpr * 100:g}%; AUC {m['auc']:.3f}")
    for col, a in attribute.items():
        if a["advantage_ci"][0] > th.max_attribute_advantage:
            reasons.append(f"attribute inference recovers {col} better for members than non-members "
                           f"(advantage {a['advantage']:.3f}, interval from {a['advantage_ci'][0]:.3f})")
        else:
            passed.append(f"attribute inference of {col}: advantage {a['advantage']:.3f}, not clearly above "
                          f"{th.max_attribute_advantage:g}")
    publish = not reasons
    headline = ("No measured leakage exceeds the thresholds: the model may be published."
                if publish else f"Do not publish: {reasons[0]}.")
    return Verdict(publish=publish, headline=headline, reasons=reasons, passed=passed,
                   thresholds=th.model_dump())
