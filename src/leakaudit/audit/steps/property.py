"""Audit stage: estimate each sensitive group's share of the training set from the model (no poisoning).

The global-property question of Chase et al. without poisoning (their p = 0
baseline, extended from t0-vs-t1 to an estimate of t as in
:mod:`leakaudit.property.estimate`): shadow models are trained by the audited
training algorithm on samples of the non-member and population records whose
share ``t`` of the group is set on a grid; a ridge regression maps each shadow
model's outputs on fixed query records to ``t``; applied to the audited
model's outputs it estimates the members' share. The regression's
cross-validated error on the shadow models says how far to trust it.
Poisoning needs control of the training data and stays in ``leakaudit property``.

An estimate alone does not say whether the model leaks the property: an attacker without the model already knows the
group's share among the records he holds (here the non-members and population records). The model leaks the
property only if it helps: :func:`compare_with_no_model` asks whether the model-based estimate is closer to the
members' true share than the no-model estimate by more than their intervals allow.
"""

from __future__ import annotations

import numpy as np

from ..._random import spawn_seeds
from ..result.checks import Analysis, Skipped
from ..config import phrase
from ..context import AuditContext

__all__ = ["compare_with_no_model", "property_analysis"]


def _sample_with_share(idx_in: np.ndarray, idx_out: np.ndarray, n: int, t: float, rng) -> np.ndarray | None:
    k = round(t * n)
    if k > idx_in.size or n - k > idx_out.size:
        return None
    return np.sort(np.r_[rng.choice(idx_in, k, replace=False), rng.choice(idx_out, n - k, replace=False)])


def compare_with_no_model(true_share: float, estimate: float, cv_errors: np.ndarray, k_known: int, n_known: int, *,
                          confidence: float = 0.95) -> dict:
    """The model-based estimate of a group's share against what an attacker knows without the model.

    Parameters
    ----------
    true_share : float
        The group's share among the members (the training set).
    estimate : float
        The model-based estimate.
    cv_errors : array-like of shape (n_shadow,)
        Cross-validated errors (estimate minus true share) of the estimator on shadow models of known share.
    k_known, n_known : int
        Records of the group among the records the attacker holds without the model, and their number.
    confidence : float, default=0.95

    Returns
    -------
    dict with ``estimate_interval`` (the estimate plus or minus the ``confidence`` quantile of the absolute shadow
    errors: an empirical prediction interval), ``no_model_estimate`` (``k_known / n_known``) and
    ``no_model_interval`` (Clopper-Pearson), ``model_error_upper`` (the model's largest error within its interval),
    ``no_model_error_lower`` (the no-model estimate's smallest error within its interval), ``model_helps``
    (``model_error_upper < no_model_error_lower``: a leak only if the model helps by more than the intervals allow)
    and ``sentence``.
    """
    from ...metrics import clopper_pearson

    err = np.abs(np.asarray(cv_errors, float))
    half = float(np.quantile(err, confidence, method="higher")) if err.size else float("inf")
    lo_m, hi_m = max(0.0, estimate - half), min(1.0, estimate + half)
    base = k_known / n_known
    lo_b, hi_b = clopper_pearson(int(k_known), int(n_known), confidence=confidence)
    model_err_hi = max(abs(lo_m - true_share), abs(hi_m - true_share))
    base_err_lo = 0.0 if lo_b <= true_share <= hi_b else min(abs(lo_b - true_share), abs(hi_b - true_share))
    helps = bool(model_err_hi < base_err_lo)
    pc = f"{confidence * 100:g}%"
    if helps:
        sentence = (f"the model leaks this property: its estimate {estimate:.3f} (interval [{lo_m:.3f}, {hi_m:.3f}]) is "
                    f"closer to the members' true share {true_share:.3f} than anything the attacker can say without "
                    f"it ({base:.3f}, interval [{lo_b:.3f}, {hi_b:.3f}])")
    elif base_err_lo == 0.0:
        sentence = (f"no leak shown: without the model, the share among the records the attacker already holds "
                    f"({base:.3f}, {pc} interval [{lo_b:.3f}, {hi_b:.3f}]) is consistent with the members' true "
                    f"share {true_share:.3f}, so the model has nothing to add; its estimate is {estimate:.3f} "
                    f"(interval [{lo_m:.3f}, {hi_m:.3f}])")
    else:
        sentence = (f"no leak shown: the members' share {true_share:.3f} differs from the share the attacker knows "
                    f"without the model ({base:.3f}, interval [{lo_b:.3f}, {hi_b:.3f}]), but the model's estimate "
                    f"{estimate:.3f} (interval [{lo_m:.3f}, {hi_m:.3f}]) is not closer to it by more than the "
                    "intervals allow")
    return {"estimate_interval": [lo_m, hi_m], "no_model_estimate": float(base), "no_model_interval": [lo_b, hi_b],
            "model_error_upper": float(model_err_hi), "no_model_error_lower": float(base_err_lo),
            "model_helps": helps, "confidence": float(confidence), "sentence": sentence}


def property_analysis(ctx: AuditContext) -> Analysis:
    """The members' share of each sensitive group, estimated from the model (informational: no check)."""
    skipped: list[dict] = []
    out = _property(ctx.cfg, ctx.data, ctx.target, ctx.seeds, skipped, ctx.engine)
    return Analysis(name="property", summary=out, skipped=tuple(Skipped(**s) for s in skipped))


def _property(cfg, data, target, seeds: dict, skipped: list, engine) -> dict:
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import cross_val_predict

    if target.learner is None:
        skipped.append({"name": "property inference",
                        "reason": "needs the training algorithm to train shadow models", "missing": ["model"]})
        return {}
    if not data.sensitive:
        return {}
    _, X_non, X_pop = target.inputs(data)
    pool_X = np.vstack([X_non, X_pop])
    pool_y = np.concatenate([data.y_non, data.y_pop])
    pool_f = [data.frame_non, data.frame_pop]
    n = len(data.y_mem)
    q = min(300, len(pool_y))
    rng = np.random.default_rng(seeds["property"])
    query = rng.choice(len(pool_y), q, replace=False)
    probs_target = np.vstack([target.probs_mem, target.probs_non, target.probs_pop
                              if target.probs_pop is not None else np.zeros((0, data.n_classes))])
    per_model = max(4, cfg.settings.shadow_models)
    out = {}
    import pandas as pd

    frame = pd.concat(pool_f, ignore_index=True)
    for col in data.sensitive:
        if col not in frame.columns or frame[col].dtype.kind in "if" and frame[col].nunique() > 10:
            continue  # numeric columns have no group share to estimate
        value = frame[col].mode().iloc[0]
        is_in = (frame[col] == value).to_numpy()
        idx_in, idx_out = np.flatnonzero(is_in), np.flatnonzero(~is_in)
        base = is_in.mean()
        grid = np.clip(np.round(np.linspace(base - 0.2, base + 0.2, 5), 3), 0.02, 0.98)
        subsets, ts = [], []
        for t in grid:
            for _ in range(per_model):
                s = _sample_with_share(idx_in, idx_out, n, float(t), rng)
                if s is not None:
                    subsets.append(s)
                    ts.append(len(np.intersect1d(s, idx_in)) / n)
        if len(set(np.round(ts, 3))) < 3:
            skipped.append({"name": f"property inference of {col}={value}",
                            "reason": f"not enough records outside the members to vary the group's share "
                                      f"({len(pool_y)} non-member and population records for {n} members)",
                            "fix": phrase("give {0} (records of the same distribution, never trained on) so that "
                                          "non-members and population together are at least 1.5 times the members",
                                          ("population", "FILE")),
                            "missing": ["population"]})
            continue
        P = engine.predict_many(target.learner, pool_X, pool_y, subsets, spawn_seeds(int(rng.integers(2**31)),
                                len(subsets)), pool_X[query], n_classes=data.n_classes)
        feats = P[:, :, 1:].reshape(len(subsets), -1)
        reg = RidgeCV(alphas=np.logspace(-2, 4, 13))
        cv = cross_val_predict(reg, feats, ts, cv=min(5, len(ts)))
        reg.fit(feats, ts)
        q_target = probs_target[n + query]  # the audited model on the same query records (non-member/population)
        est = float(np.clip(reg.predict(q_target[:, 1:].reshape(1, -1))[0], 0, 1))
        true_share = float(np.mean(data.frame_mem[col] == value))
        cv_err = cv - np.asarray(ts)
        out[f"{col}={value}"] = {
            "true_share": true_share,
            "estimate": est,
            "error": abs(est - true_share),
            "shadow_cv_mae": float(np.mean(np.abs(cv_err))),
            "population_share": float(base),
            "n_shadow_models": len(subsets),
            "method": "ridge regression of the share on shadow models' outputs, no poisoning (Chase et al. p = 0)",
            # without the model: the share among the records the attacker holds (non-members and population)
            **compare_with_no_model(true_share, est, cv_err, int(is_in.sum()), int(is_in.size),
                                    confidence=cfg.confidence),
            "no_model_source": f"the group's share among the {int(is_in.size)} non-member and population records",
        }
    return out
