"""Audit stage: infer each sensitive column from the model (Yeom et al. §4-5, classifier form).

For each sensitive column the adversary knows a record's other columns and its
label, sets the column to each candidate value, queries the model, and guesses
``argmax_i prior_i * Pr_model[y | v, t_i]``. Reported: accuracy on members and
non-members, Yeom's attribute advantage (Definition 5: members minus
non-members) with its interval, and the no-model baseline of Definition 6 (a
classifier predicting the column from the other columns and the label, fitted
on records the model never saw).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..result.checks import EXCEEDED, NOT_MEASURABLE, PASSED, Analysis, Check, Skipped, undecided_fix, within_sentence
from ..config import escaped, phrase
from ..context import AuditContext

__all__ = ["attribute_analysis"]


def _candidate_probs(predict_frame: Callable[[pd.DataFrame], np.ndarray], frame: pd.DataFrame, col: str,
                     values: list) -> np.ndarray:
    """The model's probabilities with ``col`` set to each value: shape (m, n, C)."""
    out = []
    for v in values:
        f = frame.copy()
        f[col] = pd.Series([v] * len(f), index=f.index, dtype=frame[col].dtype)
        out.append(predict_frame(f))
    return np.stack(out)


def _true_index(series: pd.Series, values: list) -> np.ndarray:
    lookup = {v: i for i, v in enumerate(values)}
    return np.array([lookup.get(v, -1) if not pd.isna(v) else -1 for v in series], dtype=np.int64)


def attribute_analysis(ctx: AuditContext) -> Analysis:
    """Attribute inference of each sensitive column, with one check per column on Yeom's advantage."""
    from ...attribute.experiment import attribute_advantage

    skipped: list[dict] = []
    out = _attribute(ctx, skipped)
    checks = []
    th, cc = ctx.cfg.thresholds.max_attribute_advantage, ctx.check_confidence
    for col, a in out.items():
        lo, hi = a["advantage_ci"]
        common = dict(id=f"attribute.{col}.advantage", analysis="attribute", name=f"attribute inference of {col}",
                      value=a["advantage"], interval=(lo, hi), threshold=th, confidence=cc)
        n1, n0 = a["n_members"], a["n_nonmembers"]
        # could a perfect attribute attack (right on every member, wrong on every non-member) clear the threshold?
        best = attribute_advantage(np.ones(n1, bool), np.zeros(n0, bool), confidence=cc)
        if best.ci_low <= th:
            checks.append(Check(status=NOT_MEASURABLE, **common,
                                sentence=f"attribute inference of {col} cannot be judged: {n1} members and {n0} "
                                         f"non-members with a known {col} are too few",
                                fix=phrase(f"give more records with {escaped(col)} filled in ({{0}})", "records")))
        elif lo > th:
            checks.append(Check(status=EXCEEDED, **common,
                                sentence=f"attribute inference recovers {col} better for members than non-members "
                                         f"(advantage {a['advantage']:.3f}, interval from {lo:.3f}, above {th:g})"))
        else:
            checks.append(Check(status=PASSED, **common,
                                sentence=within_sentence(f"attribute inference of {col}: advantage "
                                                         f"{a['advantage']:.3f} measured", f"[{lo:.3f}, {hi:.3f}]",
                                                         hi < th, f"{th:g}"),
                                fix=undecided_fix("advantage", a["advantage"], hi, th, n1, n0)))
    return Analysis(name="attribute", summary=out, checks=tuple(checks),
                    skipped=tuple(Skipped(**s) for s in skipped))


def _attribute(ctx: AuditContext, skipped: list) -> dict:
    from ...attribute.bayes_simulator import BayesSimulator
    from ...attribute.classifier import label_likelihood_scores
    from ...attribute.experiment import alternative_advantage, attribute_advantage

    data, target = ctx.data, ctx.target
    if not data.sensitive:
        skipped.append({"name": "attribute inference", "reason": "no sensitive columns given",
                        "fix": phrase("name them with {0}", ("sensitive", "COL,COL")), "missing": ["sensitive"]})
        return {}
    predict_frame = target.predict_frame
    if predict_frame is None:
        skipped.append({"name": "attribute inference",
                        "reason": "needs a model to query with changed columns; predictions alone cannot be re-queried",
                        "fix": phrase("give the model itself ({0})", "model"), "missing": ["model"]})
        return {}
    enc = data.encoder
    feats = {f.name: f for f in enc.features_}
    out = {}
    for col in data.sensitive:
        f = feats.get(col)
        if f is None:
            skipped.append({"name": f"attribute inference of {col}", "reason": f"{col!r} is not a feature column",
                            "missing": ["sensitive"]})
            continue
        if f.kind not in ("categorical", "binary"):
            skipped.append({"name": f"attribute inference of {col}",
                            "reason": f"{col!r} is {f.kind}",
                            "fix": f"bin {col} into categories (a text column) to infer it"})
            continue
        values = list(f.categories)
        # prior over values from records the model never saw (population, else non-members)
        ref_frame = data.frame_pop if len(data.frame_pop) >= 50 else data.frame_non
        t_ref = _true_index(ref_frame[col], values)
        prior = np.bincount(t_ref[t_ref >= 0], minlength=len(values)).astype(float) + 1.0  # Laplace
        prior /= prior.sum()
        res = {}
        for grp, frame, y in (("members", data.frame_mem, data.y_mem), ("nonmembers", data.frame_non, data.y_non)):
            t = _true_index(frame[col], values)
            ok = t >= 0
            P = _candidate_probs(predict_frame, frame[ok], col, values)
            guess = np.argmax(label_likelihood_scores(P, y[ok], prior), axis=1)
            res[grp] = (guess == t[ok])
        adv = attribute_advantage(res["members"], res["nonmembers"], confidence=ctx.check_confidence)
        # Definition 6's no-model baseline: predict t from the other encoded columns and the label
        sl = enc.groups[col]
        keep = np.r_[0:sl.start, sl.stop:enc.n_features_out_]

        def phi(frame, y):
            X = enc.transform(frame)[:, keep]
            return np.hstack([X, np.eye(data.n_classes)[y]])

        if len(data.frame_pop) >= 50:
            fit_f, fit_y, eval_f, eval_y, how = data.frame_pop, data.y_pop, data.frame_non, data.y_non, "population"
        else:
            h = len(data.frame_non) // 2
            fit_f, fit_y = data.frame_non.iloc[:h], data.y_non[:h]
            eval_f, eval_y, how = data.frame_non.iloc[h:], data.y_non[h:], "half of the non-members"
        t_fit, t_eval = _true_index(fit_f[col], values), _true_index(eval_f[col], values)
        ok_fit, ok_eval = t_fit >= 0, t_eval >= 0
        baseline = None
        if len(np.unique(t_fit[ok_fit])) >= 2:
            sim = BayesSimulator(method="estimator").fit(phi(fit_f[ok_fit], fit_y[ok_fit]), t_fit[ok_fit],
                                                         n_values=len(values))
            sim_correct = sim.predict_proba(phi(eval_f[ok_eval], eval_y[ok_eval])).argmax(1) == t_eval[ok_eval]
            alt = alternative_advantage(res["members"], sim_correct, confidence=ctx.check_confidence,
                                        simulator=f"logistic regression of {col} on the other columns and the label, "
                                                  f"fitted on {how}")
            baseline = float(np.mean(sim_correct))
        out[col] = {
            "values": [str(v) for v in values],
            "member_accuracy": adv.accuracy_members,
            "nonmember_accuracy": adv.accuracy_nonmembers,
            "advantage": adv.advantage,
            "advantage_ci": [adv.ci_low, adv.ci_high],
            "baseline_accuracy": baseline if baseline is not None else float("nan"),
            "alternative_advantage": alt.advantage if baseline is not None else float("nan"),
            "alternative_advantage_ci": [alt.ci_low, alt.ci_high] if baseline is not None else [float("nan")] * 2,
            "n_members": adv.n_members,
            "n_nonmembers": adv.n_nonmembers,
            "method": "argmax_i prior_i * Pr_model[y | v, t_i] (Yeom Adv. 4, classifier form)",
        }
    return out
