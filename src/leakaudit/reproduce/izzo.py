"""Reproductions of Izzo, Yoon, Arik & Zou, "Provable Membership Inference Privacy".

* ``izzo-fig1``: Figure 1 (Section 5.1), noise needed against eta for MIP and DP on the
  Proposition 9 data set; plus the exact eta checker's "noise actually needed" (ours).
* ``izzo-fig2``: Figure 2 (Section 5.2), private covariance estimation / linear generator,
  MIP (M = 2, 4, 6) against full-batch DP-SGD.
* ``izzo-adult``: applied (not in the paper) -- Algorithm 1 on logistic regression on UCI
  Adult at eta in {0.01, 0.05, 0.1, 0.2}: accuracy, and the measured membership
  accuracy of a simulated Bayes-optimal attacker and of a loss-threshold attack.

The paper reports Figures 1-2 as curves; where a "paper" value appears it is the value
derived from the paper's own formulas in the spec (shared/specs/izzo-mip.md) or a
qualitative claim encoded as 1 (true) / 0 (false); the note says which.
"""

from __future__ import annotations

import math

import numpy as np

from ..mip import (
    LogisticRegressionTrainer,
    calibrate,
    enumerate_splits,
    eps_from_eta,
    eta_from_eps_delta,
    estimate_sigma,
    exact_eta_laplace,
    mip_noise,
    random_half,
)
from ..mip.dp_baselines import (
    dpsgd_covariance,
    dpsgd_epsilon,
    dpsgd_logistic_regression,
    dpsgd_noise_for_eta,
    median_gradient_norm_covariance,
)
from ..mip.examples import (
    prop9_crossover,
    prop9_dataset,
    prop9_dp_scale,
    prop9_mip_scale,
    prop9_outputs,
    prop9_sensitivity,
)
from ._registry import register, row
from ._seeds import register_per_seed

PAPER = "Izzo et al. (Provable Membership Inference Privacy)"
SPEC = "spec-derived from the paper's formulas (the paper shows a curve)"

# spec 6.1 table: n -> (C(n, n/2), Delta, DP b at eta 0.01, 0.1, 0.25, 0.49, crossover)
FIG1_TABLE = {
    24: (2.7042e6, 1644.43, 4.111e4, 4056, 1497, 357.9, 0.0934),
    28: (4.0117e7, 6333.77, 1.583e5, 1.562e4, 5765, 1378, 0.02398),
    30: (1.5512e8, 12454.6, 3.113e5, 3.072e4, 1.134e4, 2710, 0.01219),
    32: (6.0108e8, 24516.9, 6.128e5, 6.047e4, 2.232e4, 5335, 0.006191),
    36: (9.0751e9, 95263.5, 2.381e6, 2.349e5, 8.671e4, 2.073e4, 0.001593),
    40: (1.3785e11, 371277, 9.281e6, 9.157e5, 3.38e5, 8.08e4, 0.000409),
    44: (2.1041e12, 1.45055e6, 3.626e7, 3.577e6, 1.32e6, 3.157e5, 0.000105),
    48: (3.2248e13, 5.6787e6, 1.419e8, 1.401e7, 5.169e6, 1.236e6, 2.67e-5),
}
FIG1_ETAS = (0.01, 0.1, 0.25, 0.49)
MIP_SCALES = ((379456, 6), (3794.56, 6), (607.13, 5), (158.04, 5))  # value, significant digits
EXACT_N12 = {0.001: (0.214, 3), 0.01: (0.0465, 3), 0.1: (0.0065, 2), 1.0: (0.00117, 3), 10.0: (0.00086, 2)}


def _rel(x: float, digits: int = 4) -> float:
    """Tolerance of a value quoted to ``digits`` significant figures (half a unit in the last place)."""
    return 0.5 * 10 ** (math.floor(math.log10(abs(x))) - digits + 1)


def dp_risk(eps: float, delta: float, X: np.ndarray, y: np.ndarray | None = None) -> str:
    """What a DP baseline's declared (eps, delta) implies for its members ``X`` (labels ``y``; None: no attribute
    to guess): the re-identification, attribute inference and reconstruction bounds of :mod:`leakaudit.dpaudit.risk`,
    a sentence each, for a row's note."""
    from ..dpaudit.risk import audit_baselines, risk_bounds

    return "; ".join(r["sentence"] for r in risk_bounds(eps, delta, audit_baselines(X, y), claimed=True).values())


def exact_required_scale(n: int, eta: float) -> float:
    """Smallest Laplace scale b with exact eta(b) <= eta on the Prop 9 data set (ours, via Prop 2)."""
    vals = prop9_outputs(n, enumerate_splits(n))
    f = lambda logb: exact_eta_laplace(vals, math.exp(logb), n=n).eta
    return math.exp(calibrate(f, eta, bracket=(math.log(1e-6), math.log(1e6)), increasing=False, rtol=1e-6,
                              xtol=1e-6))


@register(
    "izzo-fig1", version=1,
    paper=PAPER,
    description="Figure 1: Laplace noise scale needed against eta, MIP (M=2, Cor 11) vs DP (Thm 4) on the Prop 9 "
    "data set for n in {36, 40, 44, 48} (and 24-32 for the crossover); plus exact eta by enumeration (ours).",
    notes="The paper draws Figure 1 without printing numbers; 'paper' values are the spec's, computed from the "
    "paper's formulas (Cor 11: b = (6.16/eta)^2 sigma, sigma = 1; DP: b = Delta(n)/eps(eta)). Rows marked "
    "'exact' use our enumeration auditor (Prop 2, TV form): both curves are upper bounds, and far from tight. "
    "No row depends on a seed (closed forms, and exact eta by enumerating every half), so the rows are exact "
    "values and are not repeated over seeds.",
    randomised=False,
    references=(
        (r"^claim", "claim", "claim"),
        (r"", "formula", "closed form"),
    ),
)
def izzo_fig1(profile: str, random_state: int) -> list:
    rows = []
    ns = (36, 40, 44, 48) if profile == "smoke" else tuple(FIG1_TABLE)
    for eta, (ref, dig) in zip(FIG1_ETAS, MIP_SCALES):
        ours = float(prop9_mip_scale(eta)[0])
        rows.append(row(f"MIP scale (M=2) at eta={eta}", ref, ours, _rel(ref, dig), SPEC))
    for n in ns:
        comb, delta, *dp, cross = FIG1_TABLE[n]
        rows.append(row(f"n={n}: C(n,n/2)", comb, math.comb(n, n // 2), _rel(comb, 5), SPEC))
        rows.append(row(f"n={n}: sensitivity Delta(n)", delta, prop9_sensitivity(n), _rel(delta, 6), SPEC))
        for eta, ref in zip(FIG1_ETAS, dp):
            ours = float(prop9_dp_scale(n, eta)[0])
            eps = eps_from_eta(eta)  # the Laplace mechanism's epsilon, D_train's n/2 values its members
            risk = dp_risk(eps, 0.0, prop9_dataset(n)[: n // 2, None])
            rows.append(row(f"n={n}: DP scale at eta={eta}", ref, ours, _rel(ref, 4),
                            f"{SPEC}; the Laplace mechanism's epsilon is Theorem 4's inverse of eta: {risk}"))
        ours_c = prop9_crossover(n)
        rows.append(row(f"n={n}: crossover eta (MIP below DP above it)", cross, ours_c, _rel(cross, 3), SPEC))
    # the paper's claim: for n >= 36 and eta >= 0.01 MIP needs less noise than DP
    grid = np.linspace(0.01, 0.499, 500)
    claim = all(np.all(prop9_mip_scale(grid) < prop9_dp_scale(n, grid)) for n in (36, 40, 44, 48))
    rows.append(row("claim: MIP < DP for all eta in [0.01, 0.499], n in {36..48} (1 = holds)", 1, int(claim), 0,
                    "Section 5.1 text"))
    claim30 = bool(np.all(prop9_mip_scale(grid) < prop9_dp_scale(30, grid)))
    rows.append(row("n=30: MIP < DP for all eta >= 0.01 (1 = holds)", None, int(claim30), None,
                    "crossover at 0.0122 > 0.01, so the claim starts at n ~ 36 as the paper says"))
    rows.append(row("n=50: DP scale at eta=0.49 (caption: n>48 off the plot)", 2.447e6,
                    float(prop9_dp_scale(50, 0.49)[0]), _rel(2.447e6, 4), SPEC))
    # ours: exact eta of Laplace noise on the Prop 9 set by enumerating all C(12,6) halves
    n = 12
    vals = prop9_outputs(n, enumerate_splits(n))
    for b, (ref, dig) in EXACT_N12.items():
        rows.append(row(f"exact eta, n=12, Laplace b={b} (ours)", ref, exact_eta_laplace(vals, b, n=n).eta,
                        _rel(ref, dig), "spec 6.1 caveat; Prop 2 by enumeration"))
    ns_exact = (12,) if profile == "smoke" else ((12, 16) if profile == "reduced" else (12, 16, 20))
    for n in ns_exact:
        b = exact_required_scale(n, 0.01)
        rows.append(row(f"exact noise for eta=0.01, n={n} (ours)", None, b, None,
                        f"vs MIP bound 379456 and DP bound {float(prop9_dp_scale(n, 0.01)[0]):.4g}: both bounds "
                        "are loose by orders of magnitude here"))
    return rows


# --------------------------------------------------------------------------- Figure 2
SIGMA_TRUE = np.array([[2.0, 0.8, 0.3], [0.8, 1.0, 0.4], [0.3, 0.4, 0.5]])  # spec default [inferred]


def _second_moment(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    Z = X[idx]
    return (Z.T @ Z / len(idx)).ravel()


def fig2_run(n: int, etas, Ms, *, runs: int, B: int = 128, dp_runs: int | None = None, steps: int = 100,
             lr: float = 0.1, delta: float = 1e-5, random_state: int = 0) -> dict:
    """Relative Frobenius errors of Raw, MIP (M, radius law, constant) and DP-SGD; mean and SEM over runs; ``risk``:
    what DP-SGD's (eps, delta) at each eta implies for the first run's members (:func:`dp_risk`).

    The base algorithm is full-batch GD on ``||A - S||_F^2``, which converges to ``S``
    (the mean of x x^T over D_train); it is computed in closed form. theta = vec(A) in R^9.
    sigma is estimated over ``B`` halves of the full data (Section 5.2).
    """
    rng = np.random.default_rng(random_state)
    L = np.linalg.cholesky(SIGMA_TRUE)
    X = rng.normal(size=(n, 3)) @ L.T
    norm = np.linalg.norm(SIGMA_TRUE)
    train = lambda X_, y_, idx, rs: _second_moment(X_, idx)
    sig = {}
    for M in Ms:
        sig[M], _ = estimate_sigma(train, X, M=M, B=B, random_state=rng)
    configs = [(M, "laplace", "cor11") for M in Ms] + [(M, "gamma", "cor11") for M in Ms]
    configs += [(2, "gamma", "tv"), (2, "gaussian", "tv")]
    err = {k: [] for k in [("raw",), *(cfg + (eta,) for cfg in configs for eta in etas),
                           *((kind, eta) for eta in etas for kind in ("dp", "dp_mean"))]}
    clip, risk = None, {}
    dp_runs = runs if dp_runs is None else dp_runs
    for r in range(runs):
        idx = random_half(n, rng)
        theta = _second_moment(X, idx)
        err[("raw",)].append(np.linalg.norm(theta.reshape(3, 3) - SIGMA_TRUE) / norm)
        for cfg in configs:
            M, radial, const = cfg
            for eta in etas:
                nz = mip_noise(sig[M], eta, M, radial=radial, constant=const)
                A = theta + nz.sample(1, rng)[0]
                err[cfg + (eta,)].append(np.linalg.norm(A.reshape(3, 3) - SIGMA_TRUE) / norm)
        if r < dp_runs:
            if clip is None:
                clip = median_gradient_norm_covariance(X[idx], steps=steps, lr=lr)
            for eta in etas:
                nm = dpsgd_noise_for_eta(eta, steps, mapping="delta", delta=delta)
                if r == 0:
                    risk[eta] = dp_risk(dpsgd_epsilon(nm, steps, delta), delta, X[idx])
                A = dpsgd_covariance(X[idx], clip=clip, noise_multiplier=nm, steps=steps, lr=lr, random_state=rng)
                err[("dp", eta)].append(np.linalg.norm(A - SIGMA_TRUE) / norm)
                # the same mechanism with the noise not divided by the batch size (a hypothesis for the paper's curve)
                A = dpsgd_covariance(X[idx], clip=clip, noise_multiplier=nm, steps=steps, lr=lr, noise_on="mean",
                                     random_state=rng)
                err[("dp_mean", eta)].append(np.linalg.norm(A - SIGMA_TRUE) / norm)
    summary = {k: (float(np.mean(v)), float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan"))
               for k, v in err.items()}
    return {"summary": summary, "sigma": {M: sig[M].tolist() for M in Ms}, "clip": clip, "risk": risk}


# spec 6.2 sanity numbers (order of magnitude; paper-faithful Laplace radius, mean of 10)
FIG2_SPEC = {(0.01, 2): 778, (0.01, 4): 48, (0.01, 6): 9.5, (0.1, 2): 7.7, (0.1, 4): 1.6, (0.1, 6): 0.76,
             (0.2, 2): 1.8, (0.2, 4): 0.57, (0.2, 6): 0.20, (0.3, 2): 0.65, (0.3, 4): 0.18, (0.3, 6): 0.17}


@register_per_seed(
    "izzo-fig2", version=1,
    paper=PAPER,
    description="Figure 2: covariance of N(0, Sigma) in R^3 (theta = vec(A), d = 9), MIP via Cor 8 with M in "
    "{2, 4, 6} (sigma over 128 halves of D) vs full-batch DP-SGD (clip = median gradient norm, replace-one "
    "accounting, Theorem 4 with delta); relative Frobenius error, mean over runs.",
    notes="Sigma, n per profile, DP steps/lr/delta are the spec's inferred defaults. DP-SGD is accounted exactly "
    "(full batch = GDP, sensitivity 2C under replace-one) and mapped to eta by eta(eps, delta). The paper's claim "
    "that DP never gets below relative error 1 is NOT reproduced: correctly accounted full-batch DP-SGD is "
    "limited by clipping bias (~0.36) at every eta, which beats the paper's MIP below eta ~ 0.2-0.3. The spec "
    "suspects the paper's DP code of adding the noise without dividing it by the batch size: the variant rows "
    "'DP-SGD, noise not divided by the batch size' run that mechanism on the same halves, clip and noise "
    "multiplier (the noise m times larger), and the 'claim N, DP noise not divided ...' rows judge claims 1-3 on "
    "it. They hold there in every seed, but its DP error (152 at eta = 0.45 to 8,188 at eta = 0.01) lies above the "
    "M = 2 curve at every eta, 9 times it at eta = 0.01, the curve the paper left out of its first plot as too "
    "large to draw while drawing DP: neither mechanism gives the paper's DP curve, and the page files claims 1-3 "
    "as differing, unexplained. Every row "
    "is over seeds 0-4 (data, sigma estimate, halves and noise drawn from the seed), each seed the mean of a few "
    "runs (the note gives the first seed's); a claim row matches only when the claim holds in every seed.",
    references=((r"^claim", "claim", "claim"),),
)
def _fig2_seed(profile: str, random_state: int) -> list:
    """izzo-fig2's rows for one seed: each value the mean of this seed's runs (random halves and noise draws).

    Each seed averages the paper's 10 runs of MIP (cheap: noise draws) so a claim is judged per seed on the curve
    the paper draws; DP-SGD (the costly part) runs once per seed at reduced scale, five runs over the seeds.
    """
    if profile == "smoke":
        n, etas, runs, dp_runs = 20_000, (0.1, 0.3), 3, 1
    elif profile == "reduced":
        n, etas, runs, dp_runs = 500_000, (0.01, 0.05, 0.1, 0.2, 0.3, 0.45), 10, 1
    else:
        n, etas, runs, dp_runs = 500_000, (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45), 10, 2
    Ms = (2, 4, 6)
    out = fig2_run(n, etas, Ms, runs=runs, dp_runs=dp_runs, random_state=random_state)
    s = out["summary"]
    rows = [row("Raw (non-private) relative error", None, s[("raw",)][0], None,
                f"n={n}, seed {random_state}: mean of {runs} runs; spec sanity value ~0.0026 at n=500k")]
    for eta in etas:
        for M in Ms:
            m, se = s[(M, "laplace", "cor11", eta)]
            ref = FIG2_SPEC.get((eta, M))
            note = (f"seed {random_state}: mean of {runs} runs, SEM {se:.3g}; Laplace radius (paper)"
                    + (f"; spec sanity value ~{ref}" if ref else ""))
            rows.append(row(f"MIP M={M}, eta={eta}: relative error", None, m, None, note))
        for M in Ms:
            m, se = s[(M, "gamma", "cor11", eta)]
            rows.append(row(f"MIP M={M} Gamma(9) radius (Thm 7 density), eta={eta}", None, m, None,
                            f"seed {random_state} SEM {se:.3g}"))
        m, se = s[(2, "gamma", "tv", eta)]
        rows.append(row(f"MIP c=1/(2 eta) (ours, spec 7.2), eta={eta}", None, m, None,
                        f"seed {random_state} SEM {se:.3g}; Gamma radius, M=2 norm"))
        m, se = s[(2, "gaussian", "tv", eta)]
        rows.append(row(f"MIP Gaussian s=sqrt(d)/(eta sqrt(2pi)) (ours, spec 7.2), eta={eta}", None, m, None,
                        f"seed {random_state} SEM {se:.3g}; spec quick value ~0.21/0.025/0.008 at eta 0.01/0.1/0.3"))
        m, se = s[("dp", eta)]
        rows.append(row(f"DP-SGD eta={eta}: relative error", None, m, None,
                        f"seed {random_state}: mean of {dp_runs} runs; clip={out['clip']:.4g}; {out['risk'][eta]}"))
        m, se = s[("dp_mean", eta)]
        rows.append(row(f"DP-SGD, noise not divided by the batch size, eta={eta}: relative error", None, m, None,
                        f"seed {random_state}: mean of {dp_runs} runs; the same runs' clip and noise multiplier, "
                        "the noise added to the mean gradient instead of the sum (m times larger)"))
    dp, dpm = ({e: s[(k, e)][0] for e in etas} for k in ("dp", "dp_mean"))
    mip = {(e, M): s[(M, "laplace", "cor11", e)][0] for e in etas for M in Ms}
    big = [e for e in etas if e >= 0.1]
    # claims 1-3 on the DP-SGD curve (c) and on the one with the noise not divided by the batch size (v)
    (c1, c2, c3), (v1, v2, v3) = ((all(mip[(e, M)] < d[e] for e in big for M in Ms),
                                   all(mip[(e, M)] < d[e] for e in etas for M in (4, 6)),
                                   all(v >= 1 for v in d.values())) for d in (dp, dpm))
    c4 = all(mip[(e, M)] < 1 for e in etas if e >= 0.2 for M in (4, 6)) and any(
        mip[(e, 2)] < 1 for e in etas if e >= 0.2)
    # claims are 1 (holds) or 0 per seed, judged as a lower bound: a match needs the claim in every seed
    rows += [
        row("claim 1: eta>=0.1, MIP (all M) below DP (1 = holds)", 1, int(c1), 0,
            "not reproduced when 0: correctly accounted DP-SGD is clipping-bias limited (~0.36)", bound="lower"),
        row("claim 2: all eta, MIP M=4,6 below DP (1 = holds)", 1, int(c2), 0,
            "the paper's DP curve is > 1; ours is not (see claim 3)", bound="lower"),
        row("claim 3: DP never below relative error 1 (1 = holds)", 1, int(c3), 0,
            f"seed {random_state}: DP error {min(dp.values()):.3g}-{max(dp.values()):.3g}; noise ~ C sigma_mult / n "
            "is tiny at n/2 = 250k, the error is clipping bias. Speculation about the paper's DP code is not claimed.",
            bound="lower"),
        row("claim 4: MIP error < 1 from eta ~ 0.2 (1 = holds)", 1, int(c4), 0, "M=4,6 all eta>=0.2; M=2 some",
            bound="lower"),
        row("claim 1, DP noise not divided by the batch size (1 = holds)", 1, int(v1), 0,
            "the hypothesis that the paper's DP-SGD added the sum's noise to the mean gradient", bound="lower"),
        row("claim 2, DP noise not divided by the batch size (1 = holds)", 1, int(v2), 0, bound="lower"),
        row("claim 3, DP noise not divided by the batch size (1 = holds)", 1, int(v3), 0,
            f"seed {random_state}: DP error {min(dpm.values()):.3g}-{max(dpm.values()):.3g}", bound="lower"),
    ]
    return rows


# --------------------------------------------------------------------------- Adult (applied)
def _adult(n: int, seed: int):
    from ..data import load_adult

    ds = load_adult()
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(ds))
    d_idx, test_idx = perm[:n], perm[n: n + 10_000]
    X, _ = ds.encode(fit_idx=d_idx)
    return X[d_idx], ds.y[d_idx], X[test_idx], ds.y[test_idx]


def adult_experiment(n: int, etas, *, B: int = 128, n_reference: int = 256, n_games: int = 400,
                     n_releases: int = 20, alpha: float = 1e-3, dp_steps: int = 1000, dp_rate: float = 0.02,
                     dp_runs: int = 3, delta: float = 1e-5, sigma_games: int = 20, sigma_B: int = 16,
                     configs=((2, "laplace", "cor11"), (6, "laplace", "cor11"), (2, "gamma", "tv"),
                              (2, "gaussian", "tv")),
                     random_state: int = 0) -> list:
    """Algorithm 1 on logistic regression on an n-row sample D of Adult; returns rows.

    The released model trains on a random half D_train of D; sigma comes from ``B``
    halves of D (``sigma_split="half_of_full"``; see :func:`sigma_leak_rows` for why).
    Attacks: Yeom's loss-threshold rule on each of ``n_releases`` releases (members
    D_train, non-members D minus D_train), and the simulated Bayes-optimal attacker
    (``n_reference`` reference halves, ``n_games`` games) on the three records with the
    largest full-data loss. The trained halves are shared by all noise levels; the noise
    is fresh for every release and game.
    """
    from ..metrics import advantage_at_threshold, clopper_pearson
    from ..mip import bayes_attack_games

    Xd, yd, Xt, yt = _adult(n, random_state)
    rng = np.random.default_rng(random_state + 1)
    tr = LogisticRegressionTrainer(alpha=alpha)
    rows = []
    train_idx = random_half(n, rng)
    theta = tr(Xd, yd, train_idx)
    acc_raw = float(np.mean((tr.predict_proba(theta, Xt)[:, 1] >= 0.5) == yt))
    rows.append(row("non-private LR on D_train: test accuracy", None, acc_raw, None,
                    f"n={n} (D), {Xd.shape[1]} features, alpha={alpha}; majority {max(yt.mean(), 1 - yt.mean()):.3f}"))
    sig = {}
    for M in sorted({c[0] for c in configs}):
        # halves of the full D (Section 5.2's split): a function of D only, and an estimate of the bound
        # Theorem 7 assumes. Halves of D_train leak (see sigma_leak_rows) and give sigma_j = 0 on columns
        # that are constant on D_train but not on D, which is not a valid bound.
        sig[M], _ = estimate_sigma(None, Xd, yd, M=M, B=B, train_many=tr.many, random_state=rng)
    ref_sets = [random_half(n, rng) for _ in range(n_reference)]
    game_sets = [random_half(n, rng) for _ in range(max(n_games, n_releases))]
    outs = tr.many(Xd, yd, ref_sets + game_sets)
    ref, game = outs[:n_reference], outs[n_reference:]
    ref_member = np.zeros((n_reference, n), dtype=bool)
    game_member = np.zeros((len(game_sets), n), dtype=bool)
    for i, s in enumerate(ref_sets):
        ref_member[i, s] = True
    for i, s in enumerate(game_sets):
        game_member[i, s] = True
    th_full = tr(Xd, yd, np.arange(n))
    p_full = tr.predict_proba(th_full, Xd)[np.arange(n), yd]
    targets = np.argsort(p_full)[:3]  # outliers: the worst-fitted records
    for eta in etas:
        for M, radial, const in configs:
            label = f"M={M} {radial} {'TV bound (ours)' if const == 'tv' else 'Cor 11'}"
            nz = mip_noise(sig[M], eta, M, radial=radial, constant=const)
            accs, advs = [], []
            correct = total = 0
            for k in range(n_releases):
                th_hat = game[k] + nz.sample(1, rng)[0]
                accs.append(np.mean((tr.predict_proba(th_hat, Xt)[:, 1] >= 0.5) == yt))
                # Yeom's threshold attack on the release: "member" iff loss <= mean training loss
                pd = np.clip(tr.predict_proba(th_hat, Xd)[np.arange(n), yd], 1e-300, 1.0)
                loss = -np.log(pd)
                member = game_member[k].astype(int)
                thr = loss[member == 1].mean()
                advs.append(advantage_at_threshold(member, -loss, -thr))
                correct += int(np.sum((loss <= thr) == (member == 1)))
                total += n
            lo, hi = clopper_pearson(correct, total)
            rows.append(row(f"eta={eta} {label}: test accuracy", None, float(np.mean(accs)), None,
                            f"mean of {n_releases} releases; c={nz.c:.4g}"))
            rows.append(row(f"eta={eta} {label}: loss-threshold attack acc - 1/2 (upper 95%)", None, hi - 0.5, None,
                            f"point {correct / total - 0.5:.4f}; Yeom advantage TPR-FPR {np.mean(advs):.4f}; "
                            f"<= eta within interval: {'yes' if lo - 0.5 <= eta else 'NO'}"))
            att = bayes_attack_games(ref, ref_member, game[:n_games], game_member[:n_games], nz, targets=targets,
                                     prior=(n // 2) / n, eta_target=eta, random_state=rng)
            j = int(np.argmax(att.eta_hat))
            rows.append(row(f"eta={eta} {label}: Bayes attacker max eta_hat (upper 95%)", None, att.eta_upper[j], None,
                            f"point {att.eta_hat[j]:.4f} on {len(targets)} outlier targets, {n_games} games, "
                            f"{n_reference} reference halves; advantage {att.advantage[j]:.4f}; "
                            f"<= eta within interval: {'yes' if att.passes() else 'NO'}"))
        # DP-SGD baseline at the same eta (Poisson sampling, PLD accounting, replace-one, eta(eps, delta))
        nm = dpsgd_noise_for_eta(eta, dp_steps, sampling_rate=dp_rate, delta=delta, mapping="delta")
        dacc = []
        for _ in range(dp_runs):
            th = dpsgd_logistic_regression(Xd[train_idx], yd[train_idx], noise_multiplier=nm, sampling_rate=dp_rate,
                                           steps=dp_steps, alpha=alpha, random_state=rng)
            dacc.append(np.mean((tr.predict_proba(th, Xt)[:, 1] >= 0.5) == yt))
        eps = dpsgd_epsilon(nm, dp_steps, delta, sampling_rate=dp_rate)
        rows.append(row(f"eta={eta} DP-SGD LR: test accuracy", None, float(np.mean(dacc)), None,
                        f"noise multiplier {nm:.4g}, q={dp_rate}, T={dp_steps}, clip 1, delta={delta}; "
                        f"certified eta {eta_from_eps_delta(eps, delta):.4g}; mean of {dp_runs}; "
                        f"{dp_risk(eps, delta, Xd[train_idx], yd[train_idx])}"))
    rows += sigma_leak_rows(Xd, yd, tr, games=sigma_games, B=sigma_B, random_state=random_state)
    return rows


def sigma_leak_rows(Xd, yd, tr, *, games: int, B: int, eta: float = 0.1, random_state: int = 0) -> list:
    """Algorithm 1 end to end (sigma re-estimated per release) against a sigma-aware attacker.

    Targets: records holding the only non-zero entry of some column of D (a one-hot category
    seen once). With sigma from halves of D_train, that coordinate has sigma_j = 0 -- and no
    noise -- exactly when the record is outside D_train, so "member iff theta_hat_j != 0" wins.
    With halves of the full D, sigma is a function of D only and the attack is a coin flip.
    """
    import warnings

    from ..metrics import clopper_pearson
    from ..mip import mip_noise_addition

    n = len(Xd)
    nz_count = (Xd != 0).sum(axis=0)
    cols = np.flatnonzero(nz_count == 1)
    splits = ("half_of_train", "half_of_full")

    def quantity(split):
        return f"sigma leak, Algorithm 1 with sigma_split={split}, eta={eta}: attack acc - 1/2 (95% CI lower)"

    if cols.size == 0:  # the same rows in every seed (they are merged over seeds), without a value in this one
        return [row(quantity(split), None, None, None, "not measurable in this seed: no record of its sample holds "
                    "a unique category") for split in splits]
    owners = np.array([int(np.flatnonzero(Xd[:, j])[0]) for j in cols])
    _, first = np.unique(owners, return_index=True)
    cols, owners = cols[first][:3], owners[first][:3]
    rows = []
    for split in splits:
        correct = 0
        for g in range(games):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rel = mip_noise_addition(None, Xd, yd, eta=eta, M=2, B=B, sigma_split=split, train_many=tr.many,
                                         random_state=random_state * 100_003 + g)
            th = np.asarray(rel.theta_hat)
            member = np.zeros(n, dtype=bool)
            member[rel.train_idx] = True
            correct += int(np.sum((th[cols] != 0.0) == member[owners]))
        total = games * len(owners)
        lo, _hi = clopper_pearson(correct, total)
        rows.append(row(quantity(split), None, lo - 0.5, None,
                        f"point {correct / total - 0.5:.3f} over {games} releases x {len(owners)} records with a "
                        f"unique category; rule 'member iff theta_hat_j != 0'; "
                        f"{'BREAKS eta-MIP' if lo - 0.5 > eta else 'within eta'}; B={B}"))
    return rows


@register_per_seed(
    "izzo-adult", version=1,
    paper=PAPER + " -- applied, not in the paper",
    description="Algorithm 1 on L2 logistic regression (weights + intercept) on a sample of UCI Adult at eta in "
    "{0.01, 0.05, 0.1, 0.2}: test accuracy of the released model, and measured membership accuracy (minus 1/2) "
    "of a loss-threshold attack and of a simulated Bayes-optimal attacker on outlier targets, which must stay "
    "at or below eta within its interval; DP-SGD at the same eta.",
    notes="eta bounds attack accuracy - 1/2; Yeom's advantage TPR - FPR is about twice that. In the noise audits "
    "sigma is estimated once from 128 halves of D (sigma_split='half_of_full') and treated as given, as the "
    "theorem does; the "
    "'sigma leak' rows run Algorithm 1 end to end and show that sigma from halves of D_train itself leaks "
    "membership (a record with a unique category is a member iff its coordinate got noise), while sigma from "
    "halves of the full D (a function of D only) does not. Every row is over seeds 0-4 (mean, every seed's value "
    "and the 95% t-interval); the per-seed interval and yes/no in a note are the first seed's.",
)
def _adult_seed(profile: str, random_state: int) -> list:
    """izzo-adult's rows for one seed (the sample of Adult, the halves, the noise and the games drawn from it);
    each note is labelled with its seed, since the merged row keeps the first seed's note."""
    import dataclasses

    rows = _adult_rows(profile, random_state)
    return [dataclasses.replace(r, note=f"seed {random_state}: {r.note}") for r in rows]


def _adult_rows(profile: str, random_state: int) -> list:
    if profile == "smoke":
        return adult_experiment(200, (0.1,), B=16, n_reference=32, n_games=40, n_releases=3, dp_steps=100,
                                dp_rate=0.1, dp_runs=1, configs=((2, "gaussian", "tv"),), sigma_games=4, sigma_B=4,
                                random_state=random_state)
    if profile == "reduced":
        return adult_experiment(1000, (0.01, 0.05, 0.1, 0.2), n_reference=200, n_games=400, n_releases=10,
                                random_state=random_state)
    return adult_experiment(10000, (0.01, 0.05, 0.1, 0.2), n_reference=512, n_games=1000, n_releases=20,
                            random_state=random_state)
