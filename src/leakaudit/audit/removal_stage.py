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

from .checks import Analysis
from .context import AuditContext, engine_stats

__all__ = ["removal_analysis"]


def removal_analysis(ctx: AuditContext, dtp: Analysis) -> Analysis:
    """The measured effect of removing the DTP-1 records; an empty analysis when there is nothing to remove."""
    cfg, data, target = ctx.cfg, ctx.data, ctx.target
    s = dtp.summary or {}
    exceeded = any(c.id == "dtp.dtp1" and c.status == "exceeded" for c in dtp.checks)
    n_seeds = cfg.settings.dtp_removal_seeds
    if not exceeded or target.learner is None:
        return Analysis(name="removal")
    remove = s.get("records_significant") if cfg.dtp_rule == "statistical" else s.get("records_above")
    if not remove:
        return Analysis(name="removal")
    if n_seeds is None:  # the profile does not measure it (the report's "What to do next" says so)
        return Analysis(name="removal")
    from ..dtp import removal_effect

    pdtp_col = dtp.per_record.get("pdtp")
    n = len(data.y_mem)
    measured = np.flatnonzero(np.isfinite(np.asarray(pdtp_col, float)[:n])) if pdtp_col is not None else None
    X_mem, X_non, _ = target.inputs(data)
    st = cfg.settings
    # many members measured: the re-measurement is screened by their PDTP before the removal (the top and a sample)
    screen = measured is not None and measured.size > 2 * st.pdtp_screen_sample
    before = np.asarray(pdtp_col, float)[:n] if screen else None
    res = removal_effect(target.learner, X_mem, data.y_mem, remove, X_eval=X_non, y_eval=data.y_non,
                         records=measured, estimate=before, screen_fraction=st.pdtp_screen_fraction,
                         screen_sample=st.pdtp_screen_sample, screen_max_fraction=st.pdtp_screen_max_fraction,
                         threshold=cfg.thresholds.max_dtp,
                         statistical=cfg.dtp_rule == "statistical", n_repeats=cfg.settings.pdtp_repeats,
                         test_repeats=cfg.settings.dtp_test_repeats,
                         test_max_records=cfg.settings.dtp_test_max_records, confidence=ctx.check_confidence,
                         n_seeds=n_seeds, n_classes=data.n_classes, random_state=ctx.seeds["removal"],
                         engine=ctx.engine)
    summary = res.model_dump(exclude={"engine_stats"})
    summary["max_before"] = s.get("max")
    summary["n_significant_before"] = s.get("n_significant")
    summary["what"] = ("the members that break DTP-1 removed and the recipe retrained: PDTP and the DTP-1 test "
                       "re-measured on the remaining members the DTP stage measured; accuracy on the non-members "
                       f"of models trained with and without them over {n_seeds} paired seeds")
    return Analysis(name="removal", summary=summary,
                    resources={"removal_models": engine_stats(ctx.engine, res.engine_stats)})
