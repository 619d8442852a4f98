"""InfoRMIA of Tao and Shokri, "(Token-Level) InfoRMIA: Stronger Membership Inference and Memorization Assessment
for LLMs" (arXiv 2510.05582; ICLR 2026, OpenReview 4KVeb0Vv13).

RMIA (:mod:`leakaudit.membership.rmia`) scores x by the share of population points z it dominates,
``Pr_z[LR(x, z) > γ]``: a count with steps of 1/|Z|. InfoRMIA keeps RMIA's composite test and replaces the count by
a continuous statistic, the Bayes factor of that test: the bits x saves, against the population, in explaining
the target model θ, ``E_z[-log p(θ|z)] - (-log p(θ|x))``. With Bayes' rule (``p(θ|x) = p(x|θ) p(θ) / p(x)``, the
prior ``p(θ)`` cancelling) it splits into two terms::

    S(x) = log2( p(x|θ) / p(x) )  +  D_KL( p(z) || p(z|θ) )
           [memorisation of x]       [generalisation over the population]

The second term is the same for every x audited against one target model, so for one target the ranking (AUC,
TPR at any FPR) is that of ``p(x|θ)/p(x)``, RMIA's own ratio, whatever |Z| is ("invariant to |Z|"); RMIA's count
ranks the same records with ties, which at a low FPR decide its TPR when |Z| is small.

Our reading, from a summary of the paper (not checked against its full text):

* ``p(x|θ)`` is the target's probability of the record's true label and ``p(x)`` its average over the reference
  models, exactly RMIA's (:func:`~leakaudit.membership.rmia.rmia_signal`: online, all reference models; offline,
  ``((1 + a)/2) · mean_OUT p(x|θ') + (1 - a)/2``);
* the KL term over a finite population sample weights each z by its normalised ``p(z)``,
  ``D_KL = Σ_z w_z log2(p(z) / p(z|θ))`` with ``w_z = p(z) / Σ_z' p(z')`` (:func:`informia_generalisation`). The
  ``p(z|θ)`` are not normalised over z, so this term can be negative; it moves every score of one target by the
  same amount and changes no ranking. A uniform mean over z is the other natural reading;
* scores are in bits (log base 2) and the decision is ``S(x) > threshold``, by default 0 (a Bayes factor above 1:
  x explains θ better than the population does on average); the paper's own threshold is not known to us.

The token-level variant (the vocabulary as the population, for language models) is not built.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_scalar
from ._base import AttackResult
from .distance import kl_divergence
from .rmia import _TINY, _PopulationRatioAttack, rmia_inputs, rmia_signal

__all__ = ["InfoRMIA", "informia_memorisation", "informia_generalisation"]


def informia_memorisation(p_theta, p_marginal) -> np.ndarray:
    """InfoRMIA's memorisation term ``log2(p(x|θ) / p(x))``, in bits (both floored at 1e-30).

    Parameters
    ----------
    p_theta : array of shape (n,)
        The target model's probability of each record's true label, ``p(x|θ)``.
    p_marginal : array of shape (n,)
        Its normalisation over reference models, ``p(x)``.

    Returns
    -------
    ndarray of shape (n,)
    """
    return np.log2(np.maximum(np.asarray(p_theta, float), _TINY)) - np.log2(
        np.maximum(np.asarray(p_marginal, float), _TINY))


def informia_generalisation(p_marginal, p_theta) -> float:
    """InfoRMIA's generalisation term ``D_KL(p(z) || p(z|θ))`` over a population sample, in bits.

    ``Σ_z w_z log2(p(z) / p(z|θ))`` with ``w_z = p(z) / Σ_z' p(z')`` (the module docstring says why this
    normalisation is our reading): :func:`~leakaudit.membership.distance.kl_divergence` of the weights against
    ``p(z|θ) / Σ_z' p(z')``, converted from nats.

    Parameters
    ----------
    p_marginal : array of shape (Z,)
        ``p(z)``: the reference models' normalisation of each population point's true-label probability.
    p_theta : array of shape (Z,)
        ``p(z|θ)``: the target model's probability of each population point's true label.

    Returns
    -------
    float
    """
    pz = np.maximum(np.asarray(p_marginal, float), _TINY)
    total = pz.sum()
    nats = kl_divergence(pz / total, np.maximum(np.asarray(p_theta, float), _TINY) / total)
    return float(nats / np.log(2.0))


class InfoRMIA(_PopulationRatioAttack):
    """InfoRMIA: RMIA's composite test scored by its Bayes factor, in bits (module docstring).

    Parameters
    ----------
    online : bool, default=True
        ``p(x)`` from every reference model (in and out); offline from the out models with ``offline_a``.
    offline_a : float in [0, 1], default=0.3
        RMIA's offline correction factor a (:meth:`tune_offline_a` chooses it on a reference model).
    threshold : float, default=0.0
        Decision: "member" iff the score (bits) exceeds it; 0 is a Bayes factor of 1.

    Examples
    --------
    >>> import numpy as np
    >>> from leakaudit.membership import InfoRMIA, paired_half_masks
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1], size=6); y = rng.integers(0, 2, 6)
    >>> ref = rng.dirichlet([1, 1], size=(4, 6)); ref_in = paired_half_masks(6, 4, 0)
    >>> res = InfoRMIA().score(p[:4], y[:4], ref[:, :4], ref_in[:, :4], p[4:], y[4:], ref[:, 4:], ref_in[:, 4:])
    >>> len(res.scores), sorted(res.info)[:2]
    (4, ['generalisation_bits', 'n_population'])
    """

    name = "informia"

    def __init__(self, *, online: bool = True, offline_a: float = 0.3, threshold: float = 0.0):
        self.online = online
        self.offline_a = offline_a
        self.threshold = threshold

    def score(self, probs, y, ref_probs, ref_in, pop_probs, pop_y, pop_ref_probs, pop_ref_in) -> AttackResult:
        """Score records from plain arrays: the target's and the K reference models' outputs on the n audited
        records and on the Z population points, with the reference models' training masks, exactly as
        :meth:`RMIA.score <leakaudit.membership.RMIA.score>` takes them.

        Returns
        -------
        AttackResult
            Scores ``S(x)`` in bits; ``info["generalisation_bits"]`` is the KL term (the same for every record).
        """
        check_scalar(self.offline_a, name="offline_a", min_val=0.0, max_val=1.0)
        check_scalar(self.threshold, name="threshold")
        p, yy, rp, rin, zp, zy, zrp, zrin = rmia_inputs(probs, y, ref_probs, ref_in, pop_probs, pop_y,
                                                        pop_ref_probs, pop_ref_in)
        kw = dict(online=self.online, offline_a=self.offline_a)
        memorisation = informia_memorisation(*rmia_signal(p, yy, rp, rin, **kw))
        pz_theta, pz = rmia_signal(zp, zy, zrp, zrin, **kw)
        generalisation = informia_generalisation(pz, pz_theta)
        scores = memorisation + generalisation
        return self.result(scores, (scores > self.threshold).astype(int), threshold=float(self.threshold),
                           n_population=int(zp.shape[0]), generalisation_bits=generalisation)
