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
"""

from __future__ import annotations

import numpy as np

from .._random import spawn_seeds
from .checks import Analysis, Skipped
from .context import AuditContext

__all__ = ["property_analysis"]


def _sample_with_share(idx_in: np.ndarray, idx_out: np.ndarray, n: int, t: float, rng) -> np.ndarray | None:
    k = int(round(t * n))
    if k > idx_in.size or n - k > idx_out.size:
        return None
    return np.sort(np.r_[rng.choice(idx_in, k, replace=False), rng.choice(idx_out, n - k, replace=False)])


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
                        "reason": "needs the training algorithm to train shadow models"})
        return {}
    if not data.sensitive:
        return {}
    X_mem, X_non, X_pop = target.inputs(data)
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
                            "reason": "not enough records outside the members to vary the group's share"})
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
        out[f"{col}={value}"] = {
            "true_share": true_share,
            "estimate": est,
            "error": abs(est - true_share),
            "shadow_cv_mae": float(np.mean(np.abs(cv - np.asarray(ts)))),
            "population_share": float(base),
            "n_shadow_models": len(subsets),
            "method": "ridge regression of the share on shadow models' outputs, no poisoning (Chase et al. p = 0)",
        }
    return out
