"""Audit stage: a claimed differential-privacy epsilon against a one-run audit of the training recipe.

Runs only with ``claimed_epsilon`` in the config. The demo then trains its network with DP-SGD calibrated to the
claim (:func:`~leakaudit.audit.inputs.target.dp_demo_learner`), and this stage trains that recipe once more on the members
with m white-box gradient canaries (:func:`~leakaudit.dpaudit.audit_dpsgd`, ``bound="best"``: the larger of Steinke,
Nasr & Jagielski 2023's Theorem 3.1 and the f-DP analysis of the (epsilon, delta) curve, each at half the error
rate, at the check confidence): a lower bound above the claim is a check that fails ("the claim is
violated"). Any other target is skipped, saying why: the one-run audit trains the recipe with canaries inserted,
which only our DP-SGD trainer does (``leakaudit dp-audit`` runs it on a dataset and recipe). The claim is also shown
beside every attack's empirical epsilon lower bound (the membership stage computes those). The per-step noise check
(:mod:`leakaudit.dpaudit.noise_check`) is a check of its own, ``dp.noise_check``, never mixed into the bound. The
re-identification, attribute inference and reconstruction success each epsilon implies (:mod:`leakaudit.dpaudit.risk`)
is ``claimed_risk`` (the claim's, also when the audit is skipped) and ``risk`` (the lower bound's).
"""

from __future__ import annotations

import math

from ...dpaudit.risk import risk_bounds
from ..result.checks import EXCEEDED, PASSED, Analysis, Check, Skipped
from ..context import AuditContext

__all__ = ["dp_analysis", "n_canaries"]


def n_canaries(profile: str) -> int | None:
    """Gradient canaries of the one-run audit: 200 in the smoke profile; otherwise None, the recipe's own count
    (:func:`leakaudit.dpaudit.default_canary_count`, about 700 included canaries per step's batch, so that a
    single step that leaks is seen at small sampling rates too)."""
    return 200 if profile == "smoke" else None


def dp_analysis(ctx: AuditContext) -> Analysis:
    cfg = ctx.cfg
    if cfg.claimed_epsilon is None:
        return Analysis(name="dp")
    from ...learners import learner_family

    learner, d = ctx.target.learner, ctx.data
    baselines = ctx.risk_baselines
    claim = {"claimed_epsilon": float(cfg.claimed_epsilon), "delta": cfg.epsilon_delta, "claimed_risk": risk_bounds(
        float(cfg.claimed_epsilon), cfg.epsilon_delta, baselines, claimed=True)}
    if ctx.target.kind != "demo" or learner_family(learner) != "dp-sgd":
        return Analysis(name="dp", summary=claim, skipped=(Skipped(
            name="one-run DP audit",
            reason="the one-run audit trains the recipe with gradient canaries inserted, which leakaudit does for "
                   "its own DP-SGD trainer only (the demo with claimed_epsilon)",
            fix="run `leakaudit dp-audit` on the training recipe"),))
    from ...dpaudit import audit_dpsgd

    res = audit_dpsgd(learner, d.X_mem, d.y_mem, claimed_epsilon=float(cfg.claimed_epsilon), delta=cfg.epsilon_delta,
                      m=n_canaries(cfg.profile), beta=1 - ctx.check_confidence, n_classes=len(d.class_names),
                      random_state=ctx.seeds["dp"])
    lb = res.epsilon_lower_bound
    summary = {**res.model_dump(), "claimed_risk": claim["claimed_risk"],
               "risk": risk_bounds(lb, res.delta, baselines, claimed=False) if math.isfinite(lb) else None}
    check = Check(
        id="dp.one_run", analysis="dp", name="one-run audit: epsilon lower bound", status=EXCEEDED if res.violated
        else PASSED, value=lb, threshold=float(cfg.claimed_epsilon), confidence=ctx.check_confidence,
        describes="recipe", shows="leakage only",
        sentence=(f"a one-run audit of the DP-SGD recipe ({res.m} gradient canaries) shows epsilon of at least "
                  f"{lb:.2f} (delta {res.delta:g}), above the claimed {res.claimed_epsilon:g}: {res.verdict}"
                  if res.violated else
                  f"a one-run audit of the DP-SGD recipe ({res.m} gradient canaries) bounds epsilon below by {lb:.2f} "
                  f"(delta {res.delta:g}), within the claimed {res.claimed_epsilon:g}: {res.verdict}"))
    checks = (check,)
    if res.noise_check_verdict is not None:  # a separate kind of evidence: its own check, never mixed into the bound
        e = res.noise_check_epsilon_lower_bound
        finite = e is not None and math.isfinite(e)
        shown = f"{e:.2f}" if finite else "infinite"
        checks += (Check(
            id="dp.noise_check", analysis="dp", name="per-step noise check: epsilon with each step's noise bounded",
            status=EXCEEDED if res.noise_check_violated else PASSED, value=e if finite else None,
            threshold=float(cfg.claimed_epsilon), confidence=ctx.check_confidence, describes="recipe",
            shows="leakage only",
            sentence=(f"each DP-SGD step's noise, measured on the left-out canaries, bounds epsilon below by {shown} "
                      f"(smallest step's noise {res.noise_check_min_ratio:.3f} of the claimed): "
                      f"{res.noise_check_verdict}")),)
    return Analysis(name="dp", summary=summary, checks=checks,
                    resources={"dp_audit": {"seconds": round(res.seconds, 3)}})
