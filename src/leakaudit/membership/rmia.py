"""Robust Membership Inference Attack (RMIA) of Zarifzadeh, Liu, Bao, Shokri,
"Low-Cost High-Power Membership Inference Attacks" (ICML 2024, arXiv 2312.03262).

Signal: ``Pr(x|θ)`` = the target model's probability of the true label of x.
Its normalisation over models, ``Pr(x) = mean over reference models`` (online:
in and out models, balanced by the paired design; offline: out models only,
linearly corrected with the factor a, §3 / App. "offline"::

    Pr(x) = ((1 + a)/2) · mean_OUT Pr(x|θ') + (1 − a)/2

The likelihood ratio ``LR(x, z) = (Pr(x|θ)/Pr(x)) / (Pr(z|θ)/Pr(z))`` is
compared with γ against every population point z, and (Eq. 3/4)::

    Score_MIA(x) = Pr_z[ LR(x, z) > γ ]

computed exactly for all n records in O((n + Z) log Z) by sorting the
population ratios. Decision "member" iff Score > ``beta``.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_scalar
from ..engine import chunk_length
from ..exceptions import InvalidInputError
from ._base import Attack, AttackInputs, AttackResult, check_reference_inputs, check_target_inputs, true_class_probability

__all__ = ["RMIA", "rmia_marginal", "rmia_inputs", "rmia_signal"]

_TINY = 1e-30


def rmia_marginal(ref_p_true, ref_in, *, online: bool, offline_a: float) -> np.ndarray:
    """Pr(x): the reference models' average probability of the true label.

    Parameters
    ----------
    ref_p_true : ndarray (K, n)
        Reference models' probability of each record's true label.
    ref_in : ndarray (K, n) of bool
    online : bool
        Average over all reference models (in and out) or over out models only
        with the offline linear correction ((1+a)/2)·mean_OUT + (1−a)/2.
    offline_a : float in [0, 1]

    Returns
    -------
    ndarray (n,)
    """
    ref_p_true = np.asarray(ref_p_true, dtype=float)
    return _marginal([(ref_p_true, np.asarray(ref_in, dtype=bool))], ref_p_true.shape, online=online,
                     offline_a=offline_a)


def _marginal(blocks, shape, *, online: bool, offline_a: float) -> np.ndarray:
    """:func:`rmia_marginal` from (p_true, in) blocks of consecutive models, summed model by model in model order
    (the floating-point sums of one ``sum(axis=0)``, whatever the blocks)."""
    K, n = shape
    total, cnt = np.zeros(n), np.zeros(n, dtype=np.int64)
    for p_true, ref_in in blocks:
        for p_k, in_k in zip(p_true, ref_in):
            if online:
                total += p_k
            else:
                total += np.where(in_k, 0.0, p_k)
                cnt += ~in_k
    if online:
        return total / K
    if np.any(cnt == 0):
        raise InvalidInputError("offline RMIA needs at least one out reference model for every record")
    return (1.0 + offline_a) / 2.0 * (total / cnt) + (1.0 - offline_a) / 2.0


def rmia_inputs(probs, y, ref_probs, ref_in, pop_probs, pop_y, pop_ref_probs, pop_ref_in) -> tuple:
    """The eight arrays of :meth:`RMIA.score` validated (the target's and the reference models' outputs on the
    audited records and on the population points), in the same order; shapes checked against one another."""
    p, yy = check_target_inputs(probs, y)
    zp, zy = check_target_inputs(pop_probs, pop_y, probs_name="pop_probs", y_name="pop_y")
    rp, rin = check_reference_inputs(ref_probs, ref_in)
    zrp, zrin = check_reference_inputs(pop_ref_probs, pop_ref_in, name="population_reference")
    if rp.shape[1:] != p.shape or zrp.shape[1:] != zp.shape or rp.shape[0] != zrp.shape[0]:
        raise InvalidInputError(
            f"shapes do not match: probs {p.shape}, ref_probs {rp.shape}, pop_probs {zp.shape}, "
            f"pop_ref_probs {zrp.shape} (reference arrays are (K, records, C) with the same K)"
        )
    return p, yy, rp, rin, zp, zy, zrp, zrin


def rmia_signal(probs, y, ref_probs, ref_in, *, online: bool, offline_a: float) -> tuple[np.ndarray, np.ndarray]:
    """``(Pr(x|θ), Pr(x))`` of validated arrays: the target's probability of each record's true label and its
    normalisation over the reference models (:func:`rmia_marginal`).

    Parameters
    ----------
    probs : ndarray (n, C)
    y : ndarray (n,)
    ref_probs, ref_in : ndarrays (K, n, C) and (K, n)
        May be a disk-backed array (``engine/_store.py``): read in chunks of models.
    online : bool
    offline_a : float in [0, 1]

    Returns
    -------
    p_theta, p_x : ndarrays (n,)
    """
    K = ref_probs.shape[0]
    step = chunk_length(K, 2 * ref_probs[0].nbytes)
    blocks = ((true_class_probability(ref_probs[s:s + step], y), ref_in[s:s + step]) for s in range(0, K, step))
    px = _marginal(blocks, ref_probs.shape[:2], online=online, offline_a=float(offline_a))
    return true_class_probability(probs, y), px


class _PopulationRatioAttack(Attack):
    """What RMIA and InfoRMIA share: their inputs (reference models on the audited records and on population
    points), :meth:`run`, and the choice of the offline factor a. Subclasses define ``score`` with
    :meth:`RMIA.score`'s arguments and set ``online`` and ``offline_a``."""

    needs = ("reference", "population_probs", "population_y", "population_reference")

    def run(self, inputs: AttackInputs) -> AttackResult:
        miss = self.missing(inputs)
        if miss:
            raise InvalidInputError(f"{type(self).__name__} needs {', '.join(miss)}")
        return self.score(inputs.probs, inputs.y, inputs.reference.probs, inputs.reference.in_mask,
                          inputs.population_probs, inputs.population_y, inputs.population_reference.probs,
                          inputs.population_reference.in_mask)

    def tune_offline_a(self, reference, y, population_reference, population_y, *, grid=None) -> float:
        """Choose a by attacking one reference model with the others (Privacy Meter's procedure).

        Reference model 0 plays the target; models 1..K-1 are the references; the
        a in ``grid`` (default 0.0, 0.1, ..., 1.0) with the highest AUC of this
        attack (offline, its other parameters kept) wins.

        Returns
        -------
        float
        """
        from sklearn.base import clone

        from ..metrics import auc

        grid = np.round(np.arange(0, 1.01, 0.1), 10) if grid is None else np.asarray(grid, float)
        best, best_auc = float(grid[0]), -np.inf
        is_mem = reference.in_mask[0].astype(int)
        for a in grid:
            att = clone(self).set_params(online=False, offline_a=float(a))
            res = att.score(reference.probs[0], y, reference.probs[1:], reference.in_mask[1:],
                            population_reference.probs[0], population_y, population_reference.probs[1:],
                            population_reference.in_mask[1:])
            v = auc(is_mem, res.scores_array)
            if v > best_auc:
                best, best_auc = float(a), v
        return best


class RMIA(_PopulationRatioAttack):
    """RMIA with reference models and population points.

    Parameters
    ----------
    gamma : float > 0, default=2.0
        Threshold on the pairwise likelihood ratio (the official code's default
        is 2.0; Privacy Meter uses 1).
    online : bool, default=True
        Use in and out reference models; offline uses out models and ``offline_a``.
    offline_a : float in [0, 1], default=0.3
        The offline correction factor a (the paper tunes it per dataset;
        :meth:`tune_offline_a` does it on a reference model, as Privacy Meter does).
    beta : float in [0, 1], default=0.5
        Decision threshold on the score.
    """

    name = "rmia"

    def __init__(self, *, gamma: float = 2.0, online: bool = True, offline_a: float = 0.3, beta: float = 0.5):
        self.gamma = gamma
        self.online = online
        self.offline_a = offline_a
        self.beta = beta

    def _ratio(self, probs, y, ref_probs, ref_in):
        p_true, px = rmia_signal(probs, y, ref_probs, ref_in, online=self.online, offline_a=self.offline_a)
        return p_true / np.maximum(px, _TINY)

    def score(self, probs, y, ref_probs, ref_in, pop_probs, pop_y, pop_ref_probs, pop_ref_in) -> AttackResult:
        """Score records from plain arrays.

        Parameters
        ----------
        probs : array (n, C)
            Target model on the audited records; ``y`` their labels (n,).
        ref_probs, ref_in : arrays (K, n, C) and (K, n)
            Reference models on the audited records and their training masks.
        pop_probs, pop_y : arrays (Z, C) and (Z,)
            Target model on the population points z and their labels.
        pop_ref_probs, pop_ref_in : arrays (K, Z, C) and (K, Z)
            The same K reference models on the population points.

        Returns
        -------
        AttackResult with scores in [0, 1].
        """
        check_scalar(self.gamma, name="gamma", min_val=0.0, include_min=False)
        check_scalar(self.offline_a, name="offline_a", min_val=0.0, max_val=1.0)
        check_scalar(self.beta, name="beta", min_val=0.0, max_val=1.0)
        p, yy, rp, rin, zp, zy, zrp, zrin = rmia_inputs(probs, y, ref_probs, ref_in, pop_probs, pop_y,
                                                        pop_ref_probs, pop_ref_in)
        ratio_x = self._ratio(p, yy, rp, rin)
        ratio_z = np.sort(self._ratio(zp, zy, zrp, zrin))
        # LR(x, z) > γ  ⇔  ratio_z < ratio_x / γ  (ratios are positive)
        counts = np.searchsorted(ratio_z, ratio_x / float(self.gamma), side="left")
        scores = counts / ratio_z.size
        return self.result(scores, (scores > self.beta).astype(int), threshold=float(self.beta),
                            n_population=int(ratio_z.size))
