"""Does retraining reproduce the given model? The target against its reference models.

PDTP and the reference-model attacks retrain the audited model's training algorithm (the "recipe"). If the given
model is not what that recipe produces on the stated members (the member list is wrong, the model was trained on
other records, or the recipe is only an approximation of how it was trained), results computed from retrained
models describe the recipe, not the model.

The statistic is the membership signal a model shows on the audited records: how well its loss, taken relative to
each record's difficulty (the record's mean loss over reference models, which removes most of the record-to-record
spread), tells the records it (reportedly) trained on from the others, as an AUC (ranks: a few huge losses of
misclassified records do not dominate it, as they dominate a mean loss gap):

    G(f) = AUC(in vs out, mu_i - l_f(i))

Each reference model k trained on a random half of the audited records, so G(ref_k) (with mu from the other
pairs of models, k's complementary partner left out too so that every record stays in exactly half of them) is a
draw of the signal the recipe gives. When the recipe reproduces the given model, G(target) (members as "in") is one
more draw. The test is one-sided: it rejects when the given model shows *less* membership signal than the recipe
gives (a Student-t prediction interval, Geisser 1993: a new draw lies below ``mean + t_{K-1} sd sqrt(1 + 1/K)``),
the direction in which recipe-based results would overstate what the given model leaks. A model showing more
signal than the recipe (trained on fewer records than the references' halves, or longer) is not flagged: the
recipe then understates its leakage, and the membership checks, computed from the model's own outputs, speak for
it.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ...engine import chunk_length
from ...membership import cross_entropy_loss
from ...metrics import auc

__all__ = ["recipe_test", "membership_signal"]


def membership_signal(loss: np.ndarray, difficulty: np.ndarray, is_in: np.ndarray) -> float:
    """G = AUC of ``difficulty - loss`` separating the "in" records from the others (1-D arrays)."""
    return auc(is_in.astype(int), difficulty - loss)


def recipe_test(probs_mem: np.ndarray, probs_non: np.ndarray, y_mem: np.ndarray, y_non: np.ndarray,
                ref_probs: np.ndarray, in_mask: np.ndarray, y_audit: np.ndarray, *, confidence: float) -> dict:
    """Whether the given model shows the membership signal the recipe's models show on the audited records.

    Parameters
    ----------
    probs_mem, probs_non : ndarray of shape (n_members, C), (n_nonmembers, C)
        The given model's outputs.
    y_mem, y_non : ndarray of shape (n_members,), (n_nonmembers,)
    ref_probs : ndarray of shape (K, n_audit, C)
        Reference models' outputs on the audited records (members then non-members); models 2j and 2j+1 trained
        on complementary halves (:func:`leakaudit.membership.paired_half_masks`).
    in_mask : ndarray of bool, shape (K, n_audit)
    y_audit : ndarray of shape (n_audit,)
    confidence : float
        The test rejects "the recipe reproduces the model" at level ``1 - confidence``.

    Returns
    -------
    dict with ``reproduces`` (bool, or None with fewer than 4 reference models), ``p_value``, ``signal`` (the
    given model's G, an AUC), ``ref_signal`` (mean, sd, K of the references' G), the raw mean losses, ``test`` and
    ``sentence``.
    """
    # (K, n_audit) losses, read in chunks of models: the outputs may be a disk-backed array (engine/_store.py)
    L = np.empty(ref_probs.shape[:2])
    step = chunk_length(len(L), 2 * ref_probs[0].nbytes)
    for s in range(0, len(L), step):
        L[s:s + step] = cross_entropy_loss(ref_probs[s:s + step], y_audit[None, :])
    k = L.shape[0]
    lt = np.r_[cross_entropy_loss(probs_mem, y_mem), cross_entropy_loss(probs_non, y_non)]
    is_member = np.r_[np.ones(len(y_mem), bool), np.zeros(len(y_non), bool)]
    out = {
        "member_loss": float(lt[is_member].mean()), "nonmember_loss": float(lt[~is_member].mean()),
        "ref_in_loss": float(np.mean([L[j, in_mask[j]].mean() for j in range(k)])),
        "ref_out_loss": float(np.mean([L[j, ~in_mask[j]].mean() for j in range(k)])),
        "test": "membership signal (AUC of each record's loss relative to its mean over reference models, members "
                "against non-members) of the given model against a one-sided Student-t prediction interval of the "
                "reference models' signals",
    }
    if k < 4 or k % 2:
        return {**out, "reproduces": None, "p_value": None, "signal": None, "ref_signal": None,
                "sentence": f"Not tested: {k} reference models are too few to say whether retraining reproduces the "
                            "given model (at least two complementary pairs are needed)."}
    g_ref = np.empty(k)
    for j in range(k):
        others = np.ones(k, bool)
        others[[j, j ^ 1]] = False  # j and its complementary partner: every record in exactly half of the rest
        g_ref[j] = membership_signal(L[j], L[others].mean(axis=0), in_mask[j])
    g = membership_signal(lt, L.mean(axis=0), is_member)
    mean, sd = float(g_ref.mean()), float(g_ref.std(ddof=1))
    if sd > 0:  # less signal = a lower AUC
        p = float(stats.t.cdf((g - mean) / (sd * np.sqrt(1.0 + 1.0 / k)), df=k - 1))
    else:
        p = 1.0 if g >= mean else 0.0
    reproduces = p >= 1 - confidence
    out.update(signal=g, ref_signal={"mean": mean, "sd": sd, "k": k}, p_value=p, reproduces=bool(reproduces))
    nums = (f"its difficulty-calibrated loss tells members from non-members with AUC {g:.3f}, against {mean:.3f} "
            f"(sd {sd:.3f}) for {k} models retrained on halves of these records; p = {p:.3g} against the level "
            f"{1 - confidence:.2g}")
    if reproduces:
        sentence = f"Retraining reproduces the given model's membership signal on these records ({nums})."
    else:
        sentence = (f"The given model shows less membership signal than its recipe gives on these members ({nums}): "
                    "either it was not trained on exactly these members, or not with this recipe. Results computed "
                    "from retrained models (PDTP and the DTP-1 rule) describe the recipe, not this model.")
    return {**out, "sentence": sentence}
