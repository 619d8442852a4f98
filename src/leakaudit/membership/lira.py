"""Likelihood Ratio Attack (LiRA) of Carlini et al., "Membership Inference Attacks From
First Principles" (IEEE S&P 2022, arXiv 2112.03570).

For each record (x, y) the statistic is the logit-scaled confidence (§IV-B)::

    φ(f(x)_y) = ln p_y − ln Σ_{y'≠y} p_{y'}

For a model whose output is a mean of T votes (a random forest of T fully grown trees, p_y = k/T), the
``votes=T`` option replaces it by the empirical logit of the votes (Haldane 1956, Anscombe 1956, Cox 1970)::

    φ = ln(k + ½) − ln(T − k + ½),   k = T p_y

which stays finite when all T trees agree (p_y = 0 or 1), where the floored logit jumps to ±103.6.

Reference models trained with ("in") and without ("out") the record give
Gaussians N(μ_in, σ_in²) and N(μ_out, σ_out²) of φ (Algorithm 1).

* online: score = ln N(φ_target; μ_in, σ_in²) − ln N(φ_target; μ_out, σ_out²)
  (the likelihood ratio test, Eq. 4); decision "member" iff score > 0.
* offline: only out models; the one-sided test Λ = Pr[Z < φ_target],
  Z ~ N(μ_out, σ_out²) (§VI-C). The score is the z-statistic
  (φ_target − μ_out)/σ_out, which ranks records exactly as Λ does without
  saturating in the tail; decision "member" iff the one-sided p-value is
  below ``offline_alpha``.
* fixed variance (§VI-B): one σ for all records. We use the pooled
  within-record standard deviation sqrt(mean_i var_i) of the in (and out)
  statistics; Carlini et al.'s released code instead uses the standard
  deviation of all in-statistics pooled across records for both σ's.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from .._validation import check_choice, check_scalar
from ..engine import chunk_length
from ..exceptions import InvalidInputError, InvalidParameterError
from ._base import (
    Attack,
    AttackInputs,
    AttackResult,
    check_reference_inputs,
    check_target_inputs,
    true_class_probability,
)

__all__ = ["LiRA", "logit_scaled_confidence"]

_TINY = 1e-45  # below float64 resolution of 1 - p; keeps ln finite
# bytes of working memory per model and record-class output while a chunk's statistics are computed (the
# float64 outputs read, φ, the masked copies): chunks of models are sized by the memory budget from it
_WORK_PER_OUTPUT = 4 * 8


def logit_scaled_confidence(probs, y, clip: float | None = None, votes: int | None = None) -> np.ndarray:
    """φ = ln p_y − ln Σ_{y'≠y} p_{y'} (Carlini et al. §IV-B; the stable form of their score.py).

    Parameters
    ----------
    probs : ndarray of shape (..., n, C)
    y : ndarray of shape (n,)
    clip : float in (0, 0.5), optional
        φ = ln q − ln(1 − q) with q = p_y clipped to [clip, 1 − clip] (SACRO-ML's statistic, with
        clip = 1e-16; 1 − q is the others' sum up to rounding). None: Carlini et al.'s floor of
        1e-45 on p_y and on the others' sum, so an output of exactly 1 gives φ = 103.6.
    votes : int, optional
        The output is a mean of ``votes`` = T votes (a forest's trees): φ = ln(T p_y + ½) − ln(T Σ_{y'≠y} p_{y'}
        + ½), the empirical logit of k = T p_y votes out of T, in [−ln(2T + 1), ln(2T + 1)].

    Returns
    -------
    ndarray of shape (..., n)
    """
    if clip is not None and votes is not None:
        raise InvalidParameterError("give clip or votes, not both: each defines the statistic φ")
    probs = np.asarray(probs, dtype=float)
    p_y = true_class_probability(probs, y)
    if clip is not None:
        q = np.clip(p_y, clip, 1.0 - clip)
        return np.log(q) - np.log(1.0 - q)
    y_col = np.arange(probs.shape[-1]) == np.asarray(y).reshape(-1, 1)  # (n, C)
    others = np.where(y_col, 0.0, probs).sum(axis=-1)  # summed directly: 1 - p_y rounds to 0 for confident models
    if votes is not None:  # empirical logit ln((k + 1/2) / (T - k + 1/2)), k = T p_y (Haldane-Anscombe)
        return np.log(votes * p_y + 0.5) - np.log(votes * others + 0.5)
    return np.log(np.maximum(p_y, _TINY)) - np.log(np.maximum(others, _TINY))


def check_statistic_params(clip, votes=None) -> None:
    """Validate :func:`logit_scaled_confidence`'s ``clip`` (in (0, 0.5)) and ``votes`` (at least 1), each optional."""
    if clip is not None:
        check_scalar(clip, name="clip", min_val=0.0, max_val=0.5, include_min=False, include_max=False)
    if votes is not None:
        check_scalar(votes, name="votes", kind=(int, np.integer), min_val=1)


def check_side_counts(cnt, what: str, attack: str = "LiRA") -> None:
    """Refuse records with no ``what`` ("in" or "out") reference model: ``cnt`` (n,) of them per record."""
    if np.any(cnt == 0):
        i = int(np.flatnonzero(cnt == 0)[0])
        raise InvalidInputError(f"record {i} has no {what} reference model; {attack} needs at least one per record")


class LiRA(Attack):
    """LiRA, online or offline, with per-record or fixed variance.

    Parameters
    ----------
    online : bool, default=True
        Use in and out reference models (online) or out models only (offline).
    fix_variance : bool, default=False
        One global σ_in and σ_out instead of per-record estimates (better with few
        reference models, Carlini et al. §VI-B).
    statistic : {"mean", "median"}, default="mean"
        Location estimate of the in/out statistics (the released code uses the median).
    offline_alpha : float, default=0.05
        Level of the offline one-sided test behind ``decisions``.
    min_std : float, default=1e-6
        Floor on σ (a record whose reference statistics are all equal).
    clip : float in (0, 0.5), optional
        Clip probabilities to [clip, 1 - clip] before the logit scaling (see
        :func:`logit_scaled_confidence`). The default (None) is Carlini et al.'s floor
        of 1e-45. It matters for models whose outputs are often exactly 0 or 1
        (forests): a record for which a few reference models output exactly 1 then gets
        statistics at ±103.6 and a wide σ. SACRO-ML's LiRA clips at 1e-16.
    votes : int, optional
        The models' outputs are means of ``votes`` votes: a random forest's number of trees (each
        fully grown tree votes for its leaf's class, so p_y = k / T). φ is then the empirical logit
        ln((k + ½) / (T − k + ½)) (Haldane-Anscombe), finite when all trees agree. The audit sets
        it for forest targets, where it ranks records better than the default and ``clip=1e-16``
        (figures in benchmarks/README.md).
        Exclusive with ``clip``.

    Notes
    -----
    Every audited record needs at least one out model (and, online, one in
    model); with fewer than two, its per-record σ falls back to the global one.
    """

    name = "lira"
    needs = ("reference",)

    def __init__(self, *, online: bool = True, fix_variance: bool = False, statistic: str = "mean",
                 offline_alpha: float = 0.05, min_std: float = 1e-6, clip: float | None = None,
                 votes: int | None = None):
        self.online = online
        self.fix_variance = fix_variance
        self.statistic = statistic
        self.offline_alpha = offline_alpha
        self.min_std = min_std
        self.clip = clip
        self.votes = votes

    @staticmethod
    def _std(var, cnt, min_std, fix_variance):
        """σ per record from ddof=0 variances: the pooled sqrt(mean var) for ``fix_variance`` and for records
        with fewer than two models, floored at ``min_std``."""
        multi = cnt >= 2
        global_std = np.sqrt(np.mean(var[multi])) if multi.any() else 1.0
        std = np.full(var.shape, global_std) if fix_variance else np.where(multi, np.sqrt(var), global_std)
        return np.maximum(std, min_std)

    @staticmethod
    def _moments(phi, mask, statistic, min_std, fix_variance, what):
        cnt = mask.sum(axis=0)
        check_side_counts(cnt, what)
        masked = np.where(mask, phi, np.nan)
        loc = np.nanmedian(masked, axis=0) if statistic == "median" else np.nanmean(masked, axis=0)
        var = np.nanmean((masked - np.nanmean(masked, axis=0)) ** 2, axis=0)  # ddof=0, as Carlini et al.
        return loc, LiRA._std(var, cnt, min_std, fix_variance)

    def _streamed_moments(self, rp, rin, yy):
        """Mean and std of the out (and in) statistics, two passes over chunks of reference models.

        Same quantities as ``_moments(..., statistic="mean")`` (ddof=0 variances, the pooled σ for
        records with fewer than two models and for ``fix_variance``), without any (K, n) array. Chunks are
        sized by the memory budget (:func:`leakaudit.engine.chunk_length`) and sums run model by model, in
        model order: the same floating-point sums as one ``sum(axis=0)``, whatever the chunking.
        """
        K, n = rin.shape
        cnt_in = rin.sum(axis=0)
        cnt = {"out": K - cnt_in, "in": cnt_in}
        for what in ("out", "in") if self.online else ("out",):
            check_side_counts(cnt[what], what)
        step = chunk_length(K, _WORK_PER_OUTPUT * int(np.prod(rp.shape[1:])))

        def chunks():
            for s in range(0, K, step):
                yield logit_scaled_confidence(rp[s:s + step], yy, self.clip, self.votes), rin[s:s + step]

        if step >= K:  # one chunk: computed once for both passes (the memory of one chunk either way)
            first = list(chunks())
            chunks = lambda: first  # noqa: E731
        tot = {"out": np.zeros(n), "in": np.zeros(n)}
        for phi, m in chunks():
            for phi_k, m_k in zip(phi, m):
                tot["in"] += np.where(m_k, phi_k, 0.0)
                tot["out"] += np.where(m_k, 0.0, phi_k)
        with np.errstate(invalid="ignore", divide="ignore"):
            mu = {w: tot[w] / cnt[w] for w in tot}
        ss = {"out": np.zeros(n), "in": np.zeros(n)}
        for phi, m in chunks():
            for phi_k, m_k in zip(phi, m):
                ss["in"] += np.where(m_k, (phi_k - mu["in"]) ** 2, 0.0)
                ss["out"] += np.where(m_k, 0.0, (phi_k - mu["out"]) ** 2)
        out = []
        for w in ("out", "in"):
            with np.errstate(invalid="ignore", divide="ignore"):
                var = ss[w] / cnt[w]
            out.append((mu[w], self._std(var, cnt[w], self.min_std, self.fix_variance)))
        return out

    def score(self, probs, y, ref_probs, ref_in) -> AttackResult:
        """Score records from plain arrays.

        Parameters
        ----------
        probs : array (n, C)
            Target model's probabilities on the audited records.
        y : array (n,)
        ref_probs : array (K, n, C)
            Reference models' probabilities on the same records.
        ref_in : array (K, n) of bool
            Whether record i was in reference model k's training set.

        Returns
        -------
        AttackResult
        """
        check_choice(self.statistic, name="statistic", choices=("mean", "median"))
        check_scalar(self.offline_alpha, name="offline_alpha", min_val=0.0, max_val=1.0, include_min=False)
        check_statistic_params(self.clip, self.votes)
        p, yy = check_target_inputs(probs, y)
        rp, rin = check_reference_inputs(ref_probs, ref_in, target=p)
        phi_t = logit_scaled_confidence(p, yy, self.clip, self.votes)
        if self.statistic == "mean":  # streamed over chunks of models: memory O(n), not O(K n), beyond the outputs
            (mu_out, sd_out), (mu_in, sd_in) = self._streamed_moments(rp, rin, yy)
        else:  # the median needs every model's statistic at once
            phi_r = np.empty(rp.shape[:2])
            step = chunk_length(rp.shape[0], _WORK_PER_OUTPUT * int(np.prod(rp.shape[1:])))
            for s in range(0, rp.shape[0], step):
                phi_r[s:s + step] = logit_scaled_confidence(rp[s:s + step], yy, self.clip, self.votes)
            mu_out, sd_out = self._moments(phi_r, ~rin, self.statistic, self.min_std, self.fix_variance, "out")
            if self.online:
                mu_in, sd_in = self._moments(phi_r, rin, self.statistic, self.min_std, self.fix_variance, "in")
        if self.online:
            # Eq. (4): likelihood ratio of the two Gaussian hypotheses
            scores = norm.logpdf(phi_t, mu_in, sd_in) - norm.logpdf(phi_t, mu_out, sd_out)
            return self.result(scores, (scores > 0).astype(int), threshold=0.0, mode="online",
                                n_in=rin.sum(0).tolist(), n_out=(~rin).sum(0).tolist())
        z = (phi_t - mu_out) / sd_out  # one-sided test against the out distribution
        thr = float(norm.isf(self.offline_alpha))
        return self.result(z, (z > thr).astype(int), threshold=thr, mode="offline")

    def run(self, inputs: AttackInputs) -> AttackResult:
        if inputs.reference is None:
            raise InvalidInputError("LiRA needs reference models (inputs.reference)")
        return self.score(inputs.probs, inputs.y, inputs.reference.probs, inputs.reference.in_mask)
