"""Audit analysis: what removing the records that break DTP-1 would change (for "What to do next").

Runs only when the DTP-1 check is exceeded and the training algorithm is available. The records that exceed it
(significant under the statistical rule; above the threshold under Long et al.'s raw rule) are removed from the
members, the recipe is retrained, and the same two-stage measurement as the DTP stage runs on the remaining
members that stage measured (:func:`leakaudit.dtp.removal_effect`), with the accuracy on the non-members before
and after over paired seeds. When that stage measured more than twice the profile's ``pdtp_screen_sample``
members, the re-measurement is screened: the members with the largest PDTP before the removal and a random sample
of the others. Informational: it adds no check and does not change the verdict.
"""

from __future__ import annotations

import numpy as np

from ...exceptions import TrainingFailedError
from ..result.checks import Analysis, Skipped
from ..context import AuditContext, engine_stats
from ..inputs.units import member_units

__all__ = ["removal_analysis", "records_to_remove"]


def records_to_remove(ctx: AuditContext, dtp: Analysis) -> list[int]:
    """The members whose removal the audit measures: those that exceed DTP-1 (significant under the statistical
    rule, above the threshold under Long et al.'s), when the check is exceeded, the recipe can be retrained and the
    profile measures it (``dtp_removal_seeds``); else none."""
    exceeded = any(c.id == "dtp.dtp1" and c.status == "exceeded" for c in dtp.checks)
    if not exceeded or ctx.target.learner is None or ctx.cfg.settings.dtp_removal_seeds is None:
        return []
    return list(dtp.flagged or [])


def removal_analysis(ctx: AuditContext, dtp: Analysis, remove: list[int]) -> Analysis:
    """The measured effect of removing ``remove`` (:func:`records_to_remove`) from the members."""
    from ...dtp import removal_effect

    cfg, data, target, st = ctx.cfg, ctx.data, ctx.target, ctx.cfg.settings
    n = len(data.y_mem)
    before = np.asarray(dtp.per_record["pdtp"], float)[:n]
    measured = np.flatnonzero(np.isfinite(before))
    # many members measured: the re-measurement is screened by their PDTP before the removal (the top and a sample)
    screen = measured.size > 2 * st.pdtp_screen_sample
    X_mem, X_non, _ = target.inputs(data)
    try:
        res = removal_effect(target.learner, X_mem, data.y_mem, remove, X_eval=X_non, y_eval=data.y_non,
                             records=measured, estimate=before if screen else None,
                             screen_fraction=st.pdtp_screen_fraction, screen_sample=st.pdtp_screen_sample,
                             screen_max_fraction=st.pdtp_screen_max_fraction, threshold=cfg.thresholds.max_dtp,
                             statistical=cfg.dtp_rule == "statistical", n_repeats=st.pdtp_repeats,
                             test_repeats=st.dtp_test_repeats, test_max_repeats=st.dtp_test_max_repeats,
                             test_max_records=st.dtp_test_max_records,
                             confidence=ctx.check_confidence, n_seeds=st.dtp_removal_seeds, n_classes=data.n_classes,
                             random_state=ctx.seeds["removal"], engine=ctx.engine, groups=member_units(ctx.data))
    except TrainingFailedError as exc:  # its models train on fixed sets (the members less the removed): no redraw
        return Analysis(name="removal", skipped=(Skipped(
            name="Removal of the DTP-1 records", reason="the learner's library failed to train a model on a fixed "
            f"training set ({exc})"),))
    sig = res.records_significant_after
    summary = {**res.model_dump(exclude={"engine_stats"}), "removed": ctx.names(res.removed),
               "argmax_after": ctx.record_name(res.argmax_after) if res.argmax_after >= 0 else None,
               "records_above_after": ctx.names(res.records_above_after), "records_untested_after":
               ctx.names(res.records_untested_after), "records_significant_after": sig and ctx.names(sig)}
    summary["max_before"] = (dtp.summary or {}).get("max")
    summary["n_significant_before"] = (dtp.summary or {}).get("n_significant")
    measured_what = ("the members with the largest PDTP before and a random sample of the others" if screen
                     else "the remaining members the DTP stage measured")
    summary["what"] = (f"the members that break DTP-1 removed and the recipe retrained: PDTP and the DTP-1 test "
                       f"re-measured on {measured_what}; accuracy on the non-members of models trained with and "
                       f"without them over {st.dtp_removal_seeds} paired seeds")
    return Analysis(name="removal", summary=summary,
                    resources={"removal_models": engine_stats(ctx.engine, res.engine_stats)})
