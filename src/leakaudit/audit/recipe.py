"""Does retraining reproduce the given model? The target against its reference models.

PDTP and the reference-model attacks retrain the audited model's training algorithm (the "recipe"). If the given
model is not what that recipe produces on the stated members (the member list is wrong, the model was trained on
other records, or the recipe is only an approximation of how it was trained), results computed from retrained
models describe the recipe, not the model.

The test: each reference model k trained on a random half of the audited records; its mean cross-entropy on the
records it trained on (``L_in[k]``) and on those it did not (``L_out[k]``) are draws from the recipe's
distribution. The given model's mean loss on the members and on the non-members is one more draw of the same pair
when the recipe reproduces it. A Student-t prediction interval (Geisser 1993: a new draw lies in
``mean +- t_{K-1} sd sqrt(1 + 1/K)``) gives a two-sided p-value for each statistic; the smaller, Bonferroni-doubled,
is the test's p-value. Exact for normal draws, which means of hundreds of losses are close to.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..membership import cross_entropy_loss

__all__ = ["recipe_test"]


def _prediction_p(value: float, draws: np.ndarray) -> float:
    """Two-sided p-value of ``value`` as a new draw of the normal sample ``draws`` (t prediction interval)."""
    k = draws.size
    sd = float(np.std(draws, ddof=1))
    diff = value - float(np.mean(draws))
    if sd == 0.0:
        return 1.0 if abs(diff) <= 1e-12 * max(1.0, abs(value)) else 0.0
    t = diff / (sd * np.sqrt(1.0 + 1.0 / k))
    return float(2 * stats.t.sf(abs(t), df=k - 1))


def recipe_test(probs_mem: np.ndarray, probs_non: np.ndarray, y_mem: np.ndarray, y_non: np.ndarray,
                ref_probs: np.ndarray, in_mask: np.ndarray, y_audit: np.ndarray, *, confidence: float) -> dict:
    """Whether the given model behaves like the recipe's models on the audited records.

    Parameters
    ----------
    probs_mem, probs_non : ndarray of shape (n_members, C), (n_nonmembers, C)
        The given model's outputs.
    y_mem, y_non : ndarray of shape (n_members,), (n_nonmembers,)
    ref_probs : ndarray of shape (K, n_audit, C)
        Reference models' outputs on the audited records (members then non-members).
    in_mask : ndarray of bool, shape (K, n_audit)
    y_audit : ndarray of shape (n_audit,)
    confidence : float
        The test rejects "the recipe reproduces the model" at level ``1 - confidence``.

    Returns
    -------
    dict with ``reproduces`` (bool, or None when fewer than 3 reference models), ``p_value``, the given model's
    ``member_loss`` / ``nonmember_loss``, the references' ``ref_in_loss`` / ``ref_out_loss`` (mean, sd, K),
    ``test`` (the method) and ``sentence``.
    """
    L = cross_entropy_loss(ref_probs, y_audit[None, :])  # (K, n_audit)
    k = L.shape[0]
    l_in = np.array([L[j, in_mask[j]].mean() for j in range(k)])
    l_out = np.array([L[j, ~in_mask[j]].mean() for j in range(k)])
    lm = float(np.mean(cross_entropy_loss(probs_mem, y_mem)))
    ln = float(np.mean(cross_entropy_loss(probs_non, y_non)))
    out = {
        "member_loss": lm, "nonmember_loss": ln,
        "ref_in_loss": {"mean": float(l_in.mean()), "sd": float(l_in.std(ddof=1)) if k > 1 else float("nan"), "k": k},
        "ref_out_loss": {"mean": float(l_out.mean()), "sd": float(l_out.std(ddof=1)) if k > 1 else float("nan"),
                         "k": k},
        "test": "the given model's mean loss on members and on non-members against Student-t prediction intervals "
                "of the reference models' mean loss on their training and held-out records (Bonferroni over 2)",
    }
    if k < 3:
        return {**out, "reproduces": None, "p_value": float("nan"),
                "sentence": f"Not tested: {k} reference models are too few to say whether retraining reproduces the "
                            "given model (at least 3 are needed)."}
    p = min(1.0, 2 * min(_prediction_p(lm, l_in), _prediction_p(ln, l_out)))
    alpha = 1 - confidence
    reproduces = p >= alpha
    nums = (f"mean loss {lm:.3f} on members and {ln:.3f} on non-members; retrained models: {l_in.mean():.3f} "
            f"(sd {out['ref_in_loss']['sd']:.3f}) on their training records and {l_out.mean():.3f} "
            f"(sd {out['ref_out_loss']['sd']:.3f}) on held-out records, {k} models; p = {p:.3g}")
    if reproduces:
        sentence = f"Retraining reproduces the given model's behaviour on these records ({nums})."
    else:
        sentence = (f"The given model does not behave like the models its recipe trains on these members ({nums}): "
                    "either it was not trained on exactly these members, or not with this recipe. Results computed "
                    "from retrained models (PDTP and the DTP-1 rule) describe the recipe, not this model.")
    return {**out, "reproduces": bool(reproduces), "p_value": p, "sentence": sentence}
