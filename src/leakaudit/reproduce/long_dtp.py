"""Reproductions of Long, Bindschaedler & Gunter, "Towards Measuring Membership Privacy" (DTP/PDTP side).

Registered names (``leakaudit reproduce --list``):

- ``long-dtp-table2``: Table 2's target models on real Adult (NB, LR, NN): train/test
  accuracy, average PDTP over fixed targets, the DTP-1 count (spec §11 item 5).
- ``long-dtp-correlation``: PDTP versus per-target accuracy of the distance attack
  (Table 2 correlation columns) for NB-Adult (real data) and NB on synthetic
  Purchase-like data, plus Fig 3 (correlation against the number of PDTP
  measurements averaged) (spec §11 items 6–7).
- ``long-dtp-fig6``: §8 reducing DTP on the Adult 4-attribute proxy (ACS 2013 PUMS
  is not available offline): sorted removal, greedy, group (spec §11 item 8).
- ``long-dtp-bounds``: exact DTP by enumeration versus PDTP and the stability bounds
  on the Adult proxy, δ of Props 6.3/6.5, Thm 6.9 for LR, the search estimate for
  LR/NN, and the noise floors of Figs 7–8.

Deviations common to all: PDTP measurements use their own random halves of D
(each containing the target), not the attack iterations' halves; the halves are
uniform either way, so the statistics are the same in distribution.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._registry import register, row

PAPER = "Long et al. 2017/2020 (Towards Measuring Membership Privacy)"

# Table 2 of the paper
_T2 = {
    "NN-Adult": dict(train=0.8555, test=0.8566, attack=0.5340, avg_pdtp=0.5847, r=0.4588),
    "NB-Adult": dict(train=0.8453, test=0.8410, attack=0.5128, avg_pdtp=0.0299, r=0.5166),
    "LR-Adult": dict(train=0.8711, test=0.8536, attack=0.5134, avg_pdtp=0.1460, r=-0.0008),
    "NB-Purchase": dict(train=0.8641, test=0.7204, attack=0.5958, avg_pdtp=0.9027, r=0.9239),
}


def _adult(random_state: int, columns: str = "long"):
    from ..data import load_adult
    from ..learners.naive_bayes import encode_for_naive_bayes

    ds = load_adult(columns=columns)
    rng = np.random.default_rng(random_state)
    D = np.sort(rng.choice(len(ds), 2000, replace=False))
    X, _ = ds.encode(fit_idx=D)  # one-hot + z-scored numerics with statistics of D (spec §4.1)
    Xn, cat, nv, _ = encode_for_naive_bayes(ds.frame)  # category codes + raw numerics for naive Bayes
    return ds.y, D, X, Xn, cat, nv, rng


def _median_finite(a) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.median(a[np.isfinite(a)])) if np.isfinite(a).any() else float("inf")


def _learners(cat, nv, profile):
    from ..learners import LogisticRegression, NaiveBayes, TorchMLP

    nn_epochs = 5 if profile == "smoke" else 100
    return {
        "NB-Adult": (NaiveBayes(categorical=cat, n_values=nv), "nb"),
        "LR-Adult": (LogisticRegression(C=1.0), "onehot"),
        "NN-Adult": (TorchMLP(hidden=(64,), activation="tanh", epochs=nn_epochs, mode="faithful"), "onehot"),
    }


def _pdtp_measurements(learner, X, y, D, targets, n_meas, rng, *, seed_policy="independent"):
    """PDTP of each target w.r.t. a random half of D containing it, ``n_meas`` times: (n_meas, n_targets)."""
    from ..dtp import pdtp

    n = len(D) // 2
    out = np.empty((n_meas, len(targets)))
    for m in range(n_meas):
        perm = rng.permutation(D)
        for h in (perm[:n], perm[n:2 * n]):
            pos = {int(r): i for i, r in enumerate(h)}
            idx = [j for j, t in enumerate(targets) if int(t) in pos]
            if not idx:
                continue
            recs = [pos[int(targets[j])] for j in idx]
            res = pdtp(learner, X[h], y[h], records=recs, n_classes=2 if y.max() <= 1 else int(y.max()) + 1,
                       seed_policy=seed_policy, random_state=int(rng.integers(2**31 - 1)))
            out[m, idx] = res.values
    return out


def _half_accuracies(learner, X, y, D, n_it, rng, n_classes):
    n = len(D) // 2
    tr, te = [], []
    for _ in range(n_it):
        perm = rng.permutation(D)
        a, b = perm[:n], perm[n:2 * n]
        bank = learner.fit_many(X, y, [a, b], [int(rng.integers(2**31 - 1)) for _ in range(2)], n_classes=n_classes)
        P = bank.predict_proba(X[D])  # (2, |D|, C)
        for k, (h, o) in enumerate(((a, b), (b, a))):
            pos_h = np.searchsorted(D, h)
            pos_o = np.searchsorted(D, o)
            tr.append(np.mean(P[k, pos_h].argmax(1) == y[h]))
            te.append(np.mean(P[k, pos_o].argmax(1) == y[o]))
    return float(np.mean(tr)), float(np.mean(te))


@register(
    "long-dtp-table2",
    paper=PAPER,
    description="Table 2 target models on real Adult (NB, LR, NN): train/test accuracy over target models on random "
                "halves of |D| = 2000, average PDTP (natural log, bins of 0.01) over fixed targets, and the DTP-1 count "
                "(spec §11 item 5: NB/LR-Adult have no target with avg PDTP > 1; NN-Adult has some).",
    notes="LR is our multinomial L2 logistic regression with C = 1 (the paper used Weka's LMT); NB uses Gaussian numeric "
          "attributes and Laplace-smoothed categorical ones (Weka's default reading); NN is TorchMLP faithful mode "
          "(per-example SGD, lr 0.01, 100 epochs; 5 epochs in smoke). PDTP uses the independent seed policy for NN.",
)
def table2(profile: str, random_state: int):
    y, D, X, Xn, cat, nv, rng = _adult(random_state)
    cfg = {
        "smoke": dict(n_acc=1, n_targets=10, meas={"NB-Adult": 2, "LR-Adult": 1, "NN-Adult": 1}, nn_targets=4),
        "reduced": dict(n_acc=10, n_targets=100, meas={"NB-Adult": 10, "LR-Adult": 10, "NN-Adult": 2}, nn_targets=30),
        "full": dict(n_acc=100, n_targets=100, meas={"NB-Adult": 10, "LR-Adult": 10, "NN-Adult": 10}, nn_targets=100),
    }[profile]
    targets = np.sort(rng.choice(D, cfg["n_targets"], replace=False))
    rows = []
    for name, (learner, enc) in _learners(cat, nv, profile).items():
        XX = Xn if enc == "nb" else X
        n_acc = cfg["n_acc"] if name != "NN-Adult" else max(1, cfg["n_acc"] // 5)
        tr, te = _half_accuracies(learner, XX, y, D, n_acc, rng, 2)
        tg = targets if name != "NN-Adult" else targets[: cfg["nn_targets"]]
        M = _pdtp_measurements(learner, XX, y, D, tg, cfg["meas"][name], rng)
        avg = M.mean(axis=0)
        p = _T2[name]
        note = f"{2 * n_acc} target models"
        why = {
            "NB-Adult": "Gaussian numerics with a 1e-3 std floor and Laplace categoricals; Weka's NB discretises "
                        "numeric precision differently, and binned low-probability classes move PDTP by ln 3 steps",
            "LR-Adult": "our L2 multinomial LR (C = 1) is smoother than Weka's LMT, so records move outputs less",
            "NN-Adult": "faithful per-example SGD for the full 100 epochs overfits (train ~0.94); the paper's "
                        "'maximum 100 epochs' likely stopped earlier, which also lowers PDTP",
        }[name]
        rows += [
            row(f"{name} train accuracy", p["train"], tr, 0.02, f"{note}; if it differs: {why}"),
            row(f"{name} test accuracy", p["test"], te, 0.02, f"{note}; if it differs: {why}"),
            row(f"{name} avg PDTP (mean over targets)", p["avg_pdtp"], float(avg.mean()), 0.5 * p["avg_pdtp"],
                f"{len(tg)} targets x {M.shape[0]} PDTP measurements; tolerance 50% of the paper's value; "
                f"if it differs: {why}"),
            row(f"{name} max avg PDTP", None, float(avg.max())),
            row(f"{name} targets with avg PDTP > 1", 0.0 if name != "NN-Adult" else None, float(np.sum(avg > 1)),
                0.0 if name != "NN-Adult" else None,
                "paper: none for NB/LR-Adult; 'some' for NN-Adult (no count given)"),
        ]
    return rows


def _purchase_like(random_state: int, profile: str):
    from ..data import make_purchase_like

    n = 2000 if profile == "smoke" else 4000
    ds = make_purchase_like(n_records=n, n_features=836, n_classes=10, random_state=random_state)
    X = ds.frame.to_numpy(dtype=np.float64)
    return X, ds.y


@register(
    "long-dtp-correlation",
    paper=PAPER,
    description="PDTP versus per-target accuracy of the distance-based attack (Pearson r, p over the fixed targets) for "
                "NB-Adult (real data) and NB on synthetic Purchase-like data (836 binary features, 10 k-means classes), "
                "and Fig 3: the correlation against the number of PDTP measurements averaged.",
    notes="Attacks run through leakaudit.membership.protocols.long_protocol (distance attack, 5 shadow pairs, "
          "shadow_reuse=per_target). Purchase is synthetic here (the Kaggle data is not available offline), so only "
          "the qualitative behaviour (strong positive r; Fig 3 rising then flat) is expected to agree.",
)
def correlation(profile: str, random_state: int):
    from ..dtp import correlation_vs_measurements, pdtp_attack_correlation
    from ..learners import NaiveBayes
    from ..membership.protocols import long_protocol

    cfg = {
        "smoke": dict(n_targets=20, n_it=3, n_meas=2, fig3=3),
        "reduced": dict(n_targets=100, n_it=30, n_meas=10, fig3=30),
        "full": dict(n_targets=100, n_it=100, n_meas=10, fig3=100),
    }[profile]
    rows = []
    y, D, _, Xn, cat, nv, rng = _adult(random_state)
    Xp, yp = _purchase_like(random_state, profile)
    Dp = np.sort(rng.choice(len(Xp), 2000, replace=False))
    setups = [
        ("NB-Adult", NaiveBayes(categorical=cat, n_values=nv), Xn, y, D),
        ("NB-Purchase", NaiveBayes(n_values=[2] * Xp.shape[1]), Xp, yp, Dp),
    ]
    for name, learner, XX, yy, DD in setups:
        res = long_protocol(learner, XX, yy, candidates=DD, n_targets=cfg["n_targets"], n_iterations=cfg["n_it"],
                            attacks=("distance",), shadow_reuse="per_target", random_state=int(rng.integers(2**31)))
        targets = np.asarray(res.targets)
        acc = np.asarray(res.attacks["distance"]["per_target_accuracy"])
        n_meas = max(cfg["n_meas"], cfg["fig3"] if name == "NB-Purchase" else 0)
        M = _pdtp_measurements(learner, XX, yy, DD, targets, n_meas, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = pdtp_attack_correlation(M[: cfg["n_meas"]].mean(axis=0), acc)
        p = _T2[name]
        src = "real Adult" if name == "NB-Adult" else "synthetic Purchase-like"
        why = ("if it differs: NB numerics are Gaussian with a 1e-3 std floor (Weka's NB handles numeric precision "
               "differently), and binned low-probability outputs move PDTP in ln 3 steps" if name == "NB-Adult" else
               "if it differs: the synthetic data (Zipf categories, 200 shopper types, k-means labels) is not the "
               "Kaggle data; NB overfits it more (train ~0.99, test ~0.47), so attacks and PDTP are stronger")
        rows += [
            row(f"{name} distance-attack accuracy", p["attack"], res.attacks["distance"]["pooled"]["accuracy"], 0.03,
                f"{src}; {cfg['n_it']} iterations x 2 target models, {len(targets)} targets; {why}"),
            row(f"{name} train accuracy", p["train"], res.target_train_accuracy, 0.02, f"{src}; {why}"),
            row(f"{name} test accuracy", p["test"], res.target_test_accuracy, 0.02, f"{src}; {why}"),
            row(f"{name} avg PDTP", p["avg_pdtp"], float(M[: cfg["n_meas"]].mean()), 0.5 * p["avg_pdtp"],
                f"{src}; {cfg['n_meas']} measurements per target; {why}"),
            row(f"{name} Pearson r (avg PDTP vs per-target accuracy)", p["r"], c.r, 0.15,
                f"p = {c.p_value:.3g}, n = {c.n}; {src}"),
            row(f"{name} targets with avg PDTP > 1", None, c.n_above1),
            row(f"{name} share of PDTP>1 targets with accuracy > 0.8", None, c.frac_above1_acc_gt_08),
            row(f"{name} max accuracy among PDTP<0.5 targets", None, c.max_acc_below_05,
                note="paper (NN-Purchase): never above 0.665"),
        ]
        if name == "NB-Purchase":
            ks, rs = correlation_vs_measurements(M, acc)
            for k in sorted({1, 2, 5, 10, min(len(ks), 30), len(ks)}):
                if k <= len(ks):
                    rows.append(row(f"Fig 3: r with {k} PDTP measurements averaged", None, float(rs[k - 1]),
                                    note="paper: rises with the count and flattens after about 10"))
    return rows


@register(
    "long-dtp-fig6",
    paper=PAPER,
    description="§8 / Fig 6: maximum DTP after removing high-risk records from naive Bayes trained on all 48,842 Adult "
                "records restricted to age, marital status, race, sex (the offline stand-in for 1.6M ACS 2013 records; "
                "ACS PUMS is not available here). Unsmoothed categorical NB, outputs binned at 0.01 (spec §7 default).",
    notes="The paper's 3.09 and 0.65 are ACS values and are not expected to match; the expected behaviour is a large drop "
          "after the first removals, a rebound, then a sawtooth. Greedy re-ranking and group removal are our "
          "improvements (spec §7). 'DTP' is PDTP at x(t), which Thm 6.2 makes effectively DTP for naive Bayes.",
)
def fig6(profile: str, random_state: int):
    from ..data import load_adult
    from ..dtp import reduce_dtp
    from ..learners.naive_bayes import NaiveBayes, encode_for_naive_bayes

    ds = load_adult(columns="acs_proxy")
    X, _, nv, _ = encode_for_naive_bayes(ds.frame, numeric="none")  # AGEP categorical (spec §9 default)
    y = ds.y
    steps = {"smoke": 3, "reduced": 12, "full": 40}[profile]
    nb = NaiveBayes(n_values=nv, alpha=0.0, prior_smoothing=False)
    rows = []
    s = reduce_dtp(nb, X, y, strategy="sorted", max_removals=steps)
    mv = s.max_values
    rows += [
        row("initial max DTP", 3.09, mv[0], 0.3, "Adult 4-attribute proxy, not ACS 2013 (not available here): the "
            "proxy has 4 records that are alone in their (age, class) cell, each at ln(p/0.005)"),
        row("max DTP after removing 1 record", 0.65, mv[1], 0.3, "Adult proxy: the next singleton cell keeps the max "
            "high until all 4 are removed (then 0.51, i.e. ln 2-type pairs)"),
        row("max DTP after removing 2 records", 3.0, mv[2], 0.3, "paper: 'back to about 3'; Adult proxy differs as above"),
    ]
    rebound = any(mv[i + 1] > mv[i] + 0.5 for i in range(len(mv) - 1))
    rows.append(row("sorted removal: max DTP sequence", None, None,
                    note="; ".join(f"{v:.3f}" for v in mv) + (" (rebounds: sawtooth)" if rebound else "")))
    rows.append(row("sorted removal: first step with max DTP <= 1", None, s.stopped_at))
    rows.append(row("sorted removal: accuracy before / after", None, s.accuracy[-1],
                    note=f"before {s.accuracy[0]:.4f}, after {len(s.removed)} removals {s.accuracy[-1]:.4f}"))
    for strat in ("greedy", "group"):
        r = reduce_dtp(nb, X, y, strategy=strat, max_removals=steps)
        rows.append(row(f"{strat}: max DTP sequence", None, None, note="; ".join(f"{v:.3f}" for v in r.max_values)))
        rows.append(row(f"{strat}: first step with max DTP <= 1", None, r.stopped_at,
                        note=f"{len(r.removed)} records removed in {len(r.max_values) - 1} steps; accuracy "
                             f"{r.accuracy[0]:.4f} -> {r.accuracy[-1]:.4f}"))
    lap = NaiveBayes(n_values=nv, alpha=1.0, prior_smoothing=True)
    from ..dtp import pdtp

    rows.append(row("Laplace-smoothed NB: initial max DTP", None, float(np.max(pdtp(lap, X, y).values)),
                    note="spec §7: smoothing caps a 1->0 count change near ln 2 per attribute; with 0.01 bins the "
                         "lowest-bin step ln 3 can still appear"))
    return rows


@register(
    "long-dtp-bounds",
    paper=PAPER,
    description="DTP beyond PDTP: exact DTP by enumeration on the Adult 4-attribute proxy (NB) against PDTP and the "
                "stability bounds (Thm 6.2 with Prop 6.5; the normalised-NB bound max(2 PDTP, ln δ_t)); ln δ of "
                "Prop 6.5 for NB-Adult; Thm 6.9 for LR-Adult; the search estimate DTP/PDTP for LR- and NN-Adult; the "
                "seed and sampling noise floors (Figs 7–8) beside NN PDTP.",
    notes="None of these quantities has a number in the paper except the spec's computed ln δ ≈ 1.94 for NB-Adult "
          "(m = 13, v = 42, n_ymin ≈ 239, n = 1000). Unbinned values where the theorem ignores binning.",
)
def bounds(profile: str, random_state: int):
    from ..data import load_adult
    from ..dtp import (dtp_exact, dtp_search_estimate, logistic_lipschitz_bound, naive_bayes_delta,
                       normalised_nb_dtp_bound, pdtp, sampling_noise_floor, seed_noise_floor)
    from ..learners import LogisticRegression, NaiveBayes, TorchMLP
    from ..learners.naive_bayes import encode_for_naive_bayes

    rng = np.random.default_rng(random_state)
    rows = []
    # 1. exact DTP on the Adult proxy (enumeration over 74*7*5*2 = 5,180 vectors)
    ds4 = load_adult(columns="acs_proxy")
    X4, _, nv4, _ = encode_for_naive_bayes(ds4.frame, numeric="none")
    n4 = {"smoke": 1000, "reduced": 10000, "full": len(X4)}[profile]
    sub = np.sort(rng.choice(len(X4), n4, replace=False))
    X4, y4 = X4[sub], ds4.y[sub]
    nb4 = NaiveBayes(n_values=nv4, alpha=1.0, prior_smoothing=True)
    ex = dtp_exact(nb4, X4, y4)
    v, p = np.asarray(ex.values), np.asarray(ex.pdtp)
    rows += [
        row("Adult proxy NB (Laplace): max exact DTP (binned)", None, float(v.max()),
            note=f"{n4} records, {ex.n_queries} feature vectors enumerated"),
        row("Adult proxy NB (Laplace): max PDTP (binned)", None, float(p.max())),
        row("Adult proxy NB (Laplace): records with DTP > PDTP", None, float(np.mean(v > p + 1e-12)),
            note="share of records where an indirect query beats the direct one"),
    ]
    exu = dtp_exact(nb4, X4, y4, bin_width=None)
    b = normalised_nb_dtp_bound(nb4, X4, y4, pdtp=exu.pdtp)
    du, bu = np.asarray(exu.values), np.asarray(b.values)
    pu = np.asarray(exu.pdtp)
    rows += [
        row("Adult proxy NB (Laplace): records with DTP > PDTP, unbinned", None, float(np.mean(du > pu * (1 + 1e-9))),
            note="binned DTP is dominated by queries whose probability sits at a bin edge near 0 (the ln 3 step)"),
        row("Adult proxy NB (Laplace): median DTP / PDTP, unbinned", None,
            float(np.median(du[pu > 0] / pu[pu > 0])) if np.any(pu > 0) else float("nan")),
        row("Adult proxy NB (Laplace): max exact DTP, unbinned", None, float(du.max())),
        row("normalised-NB bound max(2·PDTP, ln δ_t) holds for every record (unbinned)", 1.0,
            float(np.all(du <= bu + 1e-9)), 0.0, "1 = holds; spec §6 caveat 1 (ours)"),
        row("normalised-NB bound: median bound / exact DTP (unbinned)", None, float(np.median(bu / np.maximum(du, 1e-12)))),
    ]
    cc = np.bincount(y4, minlength=2)
    rows.append(row("Prop 6.5 ln δ for the proxy NB (v = 74, m = 4)", None,
                    math.log(naive_bayes_delta(cc, 4, smoothing="laplace", n_values=int(nv4.max())))))
    rows.append(row("Prop 6.5 ln δ for NB-Adult (m=13, v=42, n_ymin=239, n=1000)", 1.94,
                    math.log(naive_bayes_delta([239, 761], 13, smoothing="laplace", n_values=42)), 0.01,
                    "spec §6 caveat 2 (computed)"))
    # 2. LR-Adult: Thm 6.9 and the search estimate
    y, D, X, Xn, cat, nv, rng2 = _adult(random_state)
    T = rng2.permutation(D)[:1000]
    # bin-width sensitivity (spec §2.5, §8 item 4): NB-Adult PDTP of all 1,000 training records
    nb = NaiveBayes(categorical=cat, n_values=nv)
    for w in (None, 0.001, 0.01, 0.05):
        pv = np.asarray(pdtp(nb, Xn[T], y[T], bin_width=w).values)
        rows.append(row(f"NB-Adult PDTP with bin width {w if w else 'none'}: share of records > 1", None,
                        float(np.mean(pv > 1)), note=f"mean {pv.mean():.4f}, max {pv.max():.4f}; the lowest-bin "
                        f"step is ln 3 = 1.0986 for every width, so coarser bins do not remove > 1 values"))
    n_rec = {"smoke": 3, "reduced": 20, "full": 100}[profile]
    recs = np.arange(n_rec)
    lr = LogisticRegression(C=1.0)
    lip = logistic_lipschitz_bound(lr, X[T], y[T], records=recs, X_domain=X[D])
    pl = pdtp(lr, X[T], y[T], records=recs, bin_width=None)
    rows += [
        row("LR-Adult Thm 6.9: L = 2(max ||x||_1 + 1)", None, lip.lipschitz_constant),
        row("LR-Adult Thm 6.9: median per-record bound L·|Δu|_inf (unbinned)", None, float(np.median(lip.values))),
        row("LR-Adult: median PDTP (unbinned)", None, float(np.median(pl.values))),
    ]
    kw = dict(n_random={"smoke": 20, "reduced": 100, "full": 200}[profile], n_hill=5,
              n_gradient_steps={"smoke": 3, "reduced": 15, "full": 30}[profile])
    s_lr = dtp_search_estimate(lr, X[T], y[T], records=recs, X_reference=X[D], random_state=random_state,
                               bin_width=None, **kw)
    rows += [
        row("LR-Adult: median search DTP estimate / PDTP (unbinned)", None, _median_finite(s_lr.ratio),
            note="an empirical δ̂ (the search gives a lower estimate of DTP)"),
        row("LR-Adult: median search DTP estimate (unbinned)", None, float(np.median(s_lr.values)),
            note="compare with the Thm 6.9 upper bound above"),
    ]
    # 3. NN-Adult: search estimate (paired LOO models), PDTP and the noise floors
    epochs = 5 if profile == "smoke" else 100
    nn = TorchMLP(hidden=(64,), epochs=epochs, mode="faithful")
    n_nn = {"smoke": 2, "reduced": 10, "full": 50}[profile]
    s_nn = dtp_search_estimate(nn, X[T], y[T], records=np.arange(n_nn), X_reference=X[D], random_state=random_state,
                               seed_policy="paired", bin_width=None, **kw)
    rows += [
        row("NN-Adult: median search DTP estimate / PDTP (paired seeds, unbinned)", None, _median_finite(s_nn.ratio)),
        row("NN-Adult: median PDTP (paired seeds, unbinned)", None, float(np.median(s_nn.pdtp))),
    ]
    n_models = {"smoke": 3, "reduced": 20, "full": 100}[profile]
    fl = seed_noise_floor(nn, X[T], y[T], queries=np.arange(n_nn), n_models=n_models, random_state=random_state)
    fs = sampling_noise_floor(nn, X[D], y[D], n_train=1000, X_query=X[T][:n_nn], y_query=y[T][:n_nn],
                              n_models=n_models, random_state=random_state)
    pn = pdtp(nn, X[T], y[T], records=np.arange(n_nn), random_state=random_state)
    rows += [
        row("NN-Adult: median PDTP (independent seeds, binned)", None, float(np.median(pn.values)),
            note="faithful SGD for 100 epochs saturates many outputs into the top/bottom bin, where binned PDTP and "
                 "binned floors are exactly 0; unbinned ratios of tiny probabilities are large instead"),
        row("NN-Adult: median seed noise floor std ln p(y|x), true label (Fig 7)", None, float(np.median(fl.std_log_p)),
            note=f"{n_models} models on the same 1,000 records (paper: 100 models, 10,000 records); binned"),
        row("NN-Adult: median seed noise floor, max over classes (Fig 7)", None, float(np.median(fl.max_std_log_p)),
            note="comparable with PDTP, which is also a max over classes"),
        row("NN-Adult: median sampling noise floor std ln p(y|x), true label (Fig 8)", None,
            float(np.median(fs.std_log_p)), note=f"{n_models} models on random 1,000-record samples of D, same seed"),
        row("NN-Adult: median sampling noise floor, max over classes (Fig 8)", None, float(np.median(fs.max_std_log_p))),
    ]
    return rows
