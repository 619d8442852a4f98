"""BaVarIA-style scoring: LiRA's Gaussian likelihood ratio with per-record variances under a conjugate prior.

Brännvall ("Exponential-Family Membership Inference: From LiRA and RMIA to BaVarIA", arXiv 2603.11799, 2026) puts
LiRA, RMIA and BASE (Lassila et al. 2025, shown equivalent to RMIA) in one exponential-family likelihood-ratio
framework and names variance estimation as what limits LiRA with few reference models: a per-record variance from
one to four statistics is noise, so LiRA switches to one global variance below a threshold (Carlini et al. advise
fixed variance under 64 models). BaVarIA replaces the switch by a normal-inverse-gamma prior on each record's
(mu, sigma^2), whose posterior predictive is a Student t (``predictive="t"``) or a Gaussian with the posterior
variance (``predictive="normal"``).

What this module implements (our reading of that idea, not a port of the authors' code): for each side (in, out)
of each record, with n statistics of mean m and sum of squared deviations S,

* prior ``sigma^2 ~ InvGamma(a0, b0)``, ``mu | sigma^2 ~ N(mu0, sigma^2 / kappa0)``, the same for every record of a
  side: ``mu0`` the mean of the side's statistics, ``kappa0 = 0.01`` (the record's own mean decides as soon as it
  has one statistic), and ``(a0, b0)`` by empirical Bayes, maximising the marginal likelihood of the records'
  within-record sums of squares (``S | sigma^2 ~ sigma^2 chi^2_{n-1}``, so
  ``p(S) ∝ b0^a0 Gamma(a0 + k/2) / (Gamma(a0) (b0 + S/2)^(a0 + k/2))``, k = n - 1), over the records with n >= 2;
  with none (one out model, offline), one global variance, the spread of the side's statistics across records;
* the conjugate update (Murphy, "Conjugate Bayesian analysis of the Gaussian distribution", 2007, Section 6):
  ``kappa_n = kappa0 + n``, ``mu_n = (kappa0 mu0 + n m) / kappa_n``, ``a_n = a0 + n / 2``,
  ``b_n = b0 + S / 2 + kappa0 n (m - mu0)^2 / (2 kappa_n)``; the predictive of a new statistic is Student t with
  ``2 a_n`` degrees of freedom, location ``mu_n`` and squared scale ``b_n (kappa_n + 1) / (a_n kappa_n)``.

Online the score is ``log p_in(phi) - log p_out(phi)`` (decision: positive); offline it is the out predictive's
upper-tail p-value turned into a standard-normal deviate (so records with different degrees of freedom rank on one
scale; decision: p-value below ``offline_alpha``). With many reference models the prior is swamped and the scores
approach LiRA's per-record ones; with one or two, the prior supplies the variance the record cannot.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError
from ._base import Attack, AttackInputs, AttackResult, check_reference_inputs, check_target_inputs
from .lira import check_side_counts, check_statistic_params, logit_scaled_confidence

__all__ = ["BaVarIA", "fit_inverse_gamma_prior", "nig_predictive"]

#: pseudo-count of the prior on a record's mean: small, so that the record's own statistics decide
KAPPA0 = 0.01


def fit_inverse_gamma_prior(ss, dof) -> tuple[float, float]:
    """Empirical-Bayes ``(a0, b0)`` of ``sigma^2 ~ InvGamma(a0, b0)`` from within-record sums of squares.

    Parameters
    ----------
    ss : array of shape (r,)
        Each record's sum of squared deviations from its own mean.
    dof : array of shape (r,)
        Its degrees of freedom (statistics minus one), at least 1.

    Returns
    -------
    (a0, b0) : the maximisers of the marginal likelihood of ``ss`` (``ss | sigma^2 ~ sigma^2 chi^2_dof``).
    """
    ss = np.maximum(np.asarray(ss, float), 1e-300)
    k = np.asarray(dof, float)
    if ss.size == 0 or np.any(k < 1):
        raise InvalidInputError("fit_inverse_gamma_prior needs records with at least 2 statistics (dof >= 1)")
    half = k / 2

    def nll(theta):
        a, b = np.exp(theta)
        return -np.sum(a * np.log(b) - special.gammaln(a) + special.gammaln(a + half)
                       - (a + half) * np.log(b + ss / 2))

    s2 = float(np.sum(ss) / np.sum(k))  # the pooled variance: start at a0 = 2, prior mean of sigma^2 = s2
    res = optimize.minimize(nll, x0=np.log([2.0, 2.0 * s2 + 1e-300]), method="Nelder-Mead",
                            options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 2000})
    a, b = np.exp(res.x)
    return float(min(a, 1e8)), float(b)


def nig_predictive(stats_, mask, *, kappa0: float = KAPPA0, min_var: float = 1e-12):
    """Per-record posterior predictive parameters ``(df, loc, scale)`` of one side under the fitted prior.

    ``stats_`` (K, n): every reference model's statistic of every record; ``mask`` (K, n) bool: the ones on this
    side (in, or out). Returns three arrays of shape (n,).
    """
    cnt = mask.sum(axis=0).astype(float)
    tot = np.where(mask, stats_, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(cnt > 0, tot / cnt, 0.0)
    ss = np.where(mask, (stats_ - mean) ** 2, 0.0).sum(axis=0)
    mu0 = float(stats_[mask].mean())
    multi = cnt >= 2
    if multi.any():
        a0, b0 = fit_inverse_gamma_prior(ss[multi], cnt[multi] - 1)
    else:  # no record has two statistics on this side: one global variance (the spread across records), held
        a0 = 1e8
        b0 = a0 * max(float(stats_[mask].var()), min_var)
    kn = kappa0 + cnt
    mun = (kappa0 * mu0 + cnt * mean) / kn
    an = a0 + cnt / 2
    bn = b0 + ss / 2 + kappa0 * cnt * (mean - mu0) ** 2 / (2 * kn)
    scale = np.sqrt(np.maximum(bn * (kn + 1) / (an * kn), min_var))
    return 2 * an, mun, scale


class BaVarIA(Attack):
    """LiRA with per-record variances under an empirical-Bayes normal-inverse-gamma prior (BaVarIA-style).

    Parameters
    ----------
    online : bool, default=True
        In and out reference models (online) or out models only (offline).
    predictive : {"t", "normal"}, default="t"
        The posterior predictive (Student t), or a Gaussian of the same location and scale.
    offline_alpha : float, default=0.05
        Level of the offline one-sided test behind ``decisions``.
    clip : float in (0, 0.5), optional
        As LiRA's (probabilities clipped before the logit scaling).

    Notes
    -----
    See the module docstring for the prior, its fit and the update. Every audited record needs at least one out
    model (and, online, one in model).
    """

    name = "bavaria"
    needs = ("reference",)

    def __init__(self, *, online: bool = True, predictive: str = "t", offline_alpha: float = 0.05,
                 clip: float | None = None):
        self.online = online
        self.predictive = predictive
        self.offline_alpha = offline_alpha
        self.clip = clip

    def _logpdf(self, x, df, loc, scale):
        if self.predictive == "t":
            return stats.t.logpdf(x, df, loc, scale)
        return stats.norm.logpdf(x, loc, scale)

    def score(self, probs, y, ref_probs, ref_in) -> AttackResult:
        """Score records from plain arrays: ``probs`` (n, C), ``y`` (n,), ``ref_probs`` (K, n, C), ``ref_in`` (K, n)."""
        check_choice(self.predictive, name="predictive", choices=("t", "normal"))
        check_scalar(self.offline_alpha, name="offline_alpha", min_val=0.0, max_val=1.0, include_min=False)
        check_statistic_params(self.clip)
        p, yy = check_target_inputs(probs, y)
        rp, rin = check_reference_inputs(ref_probs, ref_in, target=p)
        sides = (("out", ~rin), ("in", rin)) if self.online else (("out", ~rin),)
        for what, mask in sides:
            check_side_counts(mask.sum(axis=0), what, "BaVarIA")
        phi_t = logit_scaled_confidence(p, yy, self.clip)
        phi_r = logit_scaled_confidence(rp, yy, self.clip)
        df_o, mu_o, sc_o = nig_predictive(phi_r, ~rin)
        if self.online:
            df_i, mu_i, sc_i = nig_predictive(phi_r, rin)
            scores = self._logpdf(phi_t, df_i, mu_i, sc_i) - self._logpdf(phi_t, df_o, mu_o, sc_o)
            return self.result(scores, (scores > 0).astype(int), threshold=0.0, mode="online",
                                predictive=self.predictive)
        z = (phi_t - mu_o) / sc_o
        if self.predictive == "t":  # the t tail as a normal deviate, computed on the side where it is accurate
            z = np.where(z > 0, stats.norm.isf(stats.t.sf(z, df_o)), -stats.norm.isf(stats.t.cdf(z, df_o)))
        thr = float(stats.norm.isf(self.offline_alpha))
        return self.result(z, (z > thr).astype(int), threshold=thr, mode="offline", predictive=self.predictive)

    def run(self, inputs: AttackInputs) -> AttackResult:
        if inputs.reference is None:
            raise InvalidInputError("BaVarIA needs reference models (inputs.reference)")
        return self.score(inputs.probs, inputs.y, inputs.reference.probs, inputs.reference.in_mask)
