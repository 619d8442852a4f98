"""Reproductions of Yeom et al.'s membership results (CSF 2018; spec yeom-overfitting.md §6, §8).

* ``yeom-fig2ab``: Eyedata ridge sweep and IWPC tree-depth sweep, Adversary 2 with σ_S and σ_D
  known (Theorem 3, Fig. 2a) and with σ_S only (§3.3, Fig. 2b), against the theoretical curves and
  the spec's §8 re-run (the paper prints no reliable values for Fig. 2).
* ``yeom-table1``: loss threshold at L_S vs Shokri et al.'s shadow-model attack on the VGG-like CNN,
  on Fashion-MNIST (MNIST and CIFAR are not available here).
* ``yeom-fig2c``: the loss threshold at L_S on CNNs of size s against the generalization ratio L_D / L_S.
* ``yeom-fig4``: the colluding CNN (Algorithm 1 + Adversary 3, k = 3, s = 1..128) on Fashion-MNIST.
"""

from __future__ import annotations

import numpy as np

from ._registry import register, row
from ._seeds import register_per_seed

__all__: list[str] = []

# spec §8, Eyedata Ridge(alpha=λ): λ -> (R_emp, R_cv, Thm 3, emp known-σ, §3.3, emp unknown-σ)
_EYEDATA_REF = {
    5: (0.1302, 0.6625, 0.652, 0.674, 0.527, 0.615),
    10: (0.1866, 0.6293, 0.526, 0.540, 0.450, 0.501),
    20: (0.2481, 0.6031, 0.404, 0.386, 0.364, 0.367),
    50: (0.3293, 0.5858, 0.271, 0.207, 0.257, 0.211),
    100: (0.3868, 0.5874, 0.199, 0.118, 0.193, 0.125),
    200: (0.4401, 0.6000, 0.149, 0.067, 0.146, 0.073),
    500: (0.5029, 0.6262, 0.106, 0.037, 0.105, 0.029),
    1000: (0.5427, 0.6480, 0.086, 0.017, 0.085, 0.016),
    2000: (0.5760, 0.6709, 0.074, 0.010, 0.073, 0.009),
    5000: (0.6235, 0.7134, 0.065, 0.001, 0.065, 0.004),
}

# spec §8, IWPC DecisionTreeRegressor(max_depth=d): d -> (R_emp, R_cv, Thm 3, emp known-σ, §3.3, emp unknown-σ)
_IWPC_REF = {
    1: (0.8899, 0.8902, 0.000, 0.000, 0.000, 0.000),
    3: (0.8034, 0.8051, 0.001, 0.006, 0.001, 0.006),
    4: (0.7739, 0.8032, 0.018, 0.013, 0.018, 0.013),
    5: (0.7470, 0.7914, 0.028, 0.020, 0.028, 0.021),
    6: (0.7218, 0.7873, 0.042, 0.033, 0.042, 0.034),
    7: (0.6903, 0.7808, 0.060, 0.050, 0.059, 0.051),
    8: (0.6624, 0.7861, 0.083, 0.075, 0.082, 0.078),
    9: (0.6324, 0.8050, 0.116, 0.106, 0.115, 0.112),
    10: (0.5956, 0.8277, 0.158, 0.146, 0.155, 0.154),
    11: (0.5586, 0.8509, 0.201, 0.188, 0.194, 0.203),
    12: (0.5206, 0.8807, 0.249, 0.236, 0.237, 0.258),
    14: (0.4329, 0.9186, 0.348, 0.335, 0.320, 0.379),
    16: (0.3521, 0.9565, 0.447, 0.438, 0.395, 0.503),
    18: (0.2718, 0.9884, 0.551, 0.531, 0.466, 0.624),
    20: (0.2136, 1.0034, 0.630, 0.609, 0.514, 0.712),
    22: (0.1731, 1.0139, 0.688, 0.666, 0.547, 0.773),
    25: (0.1358, 1.0174, 0.744, 0.738, 0.576, 0.830),
    30: (0.1119, 1.0180, 0.782, 0.768, 0.595, 0.864),
}


def _r_emp_r_cv(estimator, X, y, *, cv: str, random_state: int):
    """R_emp (train RMSE on the full data) and R_cv (cross-validated RMSE), as the authors' code (§6.1)."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, LeaveOneOut

    est = clone(estimator)
    if "random_state" in est.get_params():
        est.set_params(random_state=random_state)
    pred = est.fit(X, y).predict(X)
    r_emp = float(np.sqrt(np.mean((y - pred) ** 2)))
    splitter = LeaveOneOut() if cv == "loo" else KFold(int(cv), shuffle=True, random_state=2**32 - 1)
    fold_mse = []
    for tr, te in splitter.split(X):
        e = clone(est).fit(X[tr], y[tr])
        fold_mse.append(np.mean((y[te] - e.predict(X[te])) ** 2))
    return r_emp, float(np.sqrt(np.mean(fold_mse)))


def _splits_row(quantity, paper, per_split, note):
    """A row over the protocol's seeded splits (seeds 0..n-1, as the authors' code): the mean, with the 95%
    t-interval over splits, judged by the one rule for randomised rows (``_judge.judge_values``: the reference
    must lie in the interval, widened only by its rounding). The allowance of its kind of quantity is added to the
    note by ``_registry.classify``."""
    from ._judge import judge_values, paper_rounding
    from ._registry import Row

    status, m, lo, hi = judge_values(paper, per_split)
    text = (f"{note}; mean of {len(per_split)} splits (split seeds 0-{len(per_split) - 1}, as the authors' code), "
            f"sd {np.std(per_split, ddof=1):.3f}, 95% t-interval [{lo:.4f}, {hi:.4f}]")
    return Row(quantity, None if paper is None else float(paper), m,
               None if paper is None else paper_rounding(paper), status, text,
               values=tuple(float(v) for v in per_split))


def _sweep(name, X, y, make_estimator, params, ref, *, n_splits, cv, random_state):
    from ..learners import SklearnLearner
    from ..membership.protocols import yeom_split_protocol
    from ..membership.threshold import ThresholdAdversary, advantage_known_sigma, advantage_unknown_sigma

    rows = []
    for p in params:
        est = make_estimator(p)
        r_emp, r_cv = _r_emp_r_cv(est, X, y, cv=cv, random_state=random_state)
        r = r_cv / r_emp
        attacks = {"known": ThresholdAdversary(sigma_s=r_emp, sigma_d=r_cv),
                   "unknown": ThresholdAdversary(sigma_s=r_emp)}
        res = yeom_split_protocol(SklearnLearner(est), X, y, attacks, n_splits=n_splits)
        rf = ref.get(p)
        cv_note = "LOO" if cv == "loo" else f"{cv}-fold CV (the authors use LOO; reduced profile)"
        r_note = "" if cv == "loo" else f"; r uses the {cv}-fold R_cv, so it differs from the LOO reference"
        rows += [
            row(f"{name} {p}: R_emp", rf and rf[0], r_emp, None, "train RMSE on the full data"),
            row(f"{name} {p}: R_cv", rf and rf[1], r_cv, None, cv_note),
            row(f"{name} {p}: Thm 3 advantage at r", rf and rf[2], advantage_known_sigma(r), None,
                f"theoretical curve of Fig. 2a at r = R_cv/R_emp = {r:.3f}{r_note}"),
            _splits_row(f"{name} {p}: empirical known-σ advantage", rf and rf[3], res.per_split["known"],
                        "Fig. 2a point"),
            row(f"{name} {p}: §3.3 advantage at r", rf and rf[4], advantage_unknown_sigma(r), None,
                f"theoretical curve of Fig. 2b{r_note}"),
            _splits_row(f"{name} {p}: empirical unknown-σ advantage", rf and rf[5], res.per_split["unknown"],
                        "Fig. 2b point; threshold |ε| < R_emp"),
        ]
    return rows


@register(
    "yeom-fig2ab", version=1,
    paper="Yeom et al. 2018 (CSF), Fig. 2a/2b",
    description=(
        "Threshold membership adversary on regression: Eyedata with Ridge(λ) and IWPC with decision trees of "
        "depth d, 75/25 splits (seeds 0..n-1, as the authors' code), σ_S = R_emp and σ_D = R_cv from the full "
        "data. Known-σ adversary (Theorem 3 threshold ε_eq, Fig. 2a) and σ_S-only adversary (§3.3, Fig. 2b), "
        "with the theoretical curves."
    ),
    notes=(
        "The paper's Fig. 2 has no reliable printed numbers; the 'paper' column is the spec's §8 re-run of the "
        "authors' protocol (scikit-learn 1.9, 100 splits, LOO). R_cv is leave-one-out as in the authors' code at the "
        "reduced and full profiles (IWPC: 4,819 trees per depth, about 12 CPU minutes for the 18 reference depths); "
        "the smoke profile uses 5-fold CV on a subset. The reduced profile runs the 18 depths the reference lists; the "
        "full one every depth 1-30 (the authors' d = 1..30), the other 12 without a reference value. The randomness "
        "is the 100 75/25 splits (split seeds 0-99, as the authors' code): each empirical row is their mean with the "
        "95% t-interval over splits, and is judged by the page's rule (its top: the mean and the whole interval "
        "within the tolerance of the row's kind of quantity). Trees: "
        "the authors set no random_state (random tie-breaking); ours use the seed, so tree rows differ slightly. "
        "Paper claims checked: known-σ points follow Theorem 3; the σ_S-only threshold beats the §3.3 curve when "
        "the model overfits."
    ),
    references=(
        (r": R_(emp|cv)$", "spec run", "RMSE against the spec's re-run"),
        (r"advantage at r$", "spec run", "advantage from the formula at r"),
        (r"empirical", "spec run", "attack advantage over splits"),
    ),
)
def yeom_fig2ab(profile: str, random_state: int) -> list:
    from sklearn.linear_model import Ridge
    from sklearn.tree import DecisionTreeRegressor

    from ..data import load_eyedata, load_iwpc

    if profile == "smoke":
        lambdas, depths, n_splits, cv_iwpc, n_iwpc = (5, 100, 5000), (1, 10, 30), 5, "5", 1200
    elif profile == "reduced":
        # leave-one-out R_cv for IWPC's 18 reference depths (one tree per record and depth, the costliest part);
        # the full profile sweeps every depth 1-30
        lambdas, depths, n_splits, cv_iwpc, n_iwpc = tuple(_EYEDATA_REF), tuple(_IWPC_REF), 100, "loo", None
    else:
        lambdas, depths, n_splits, cv_iwpc, n_iwpc = tuple(_EYEDATA_REF), tuple(range(1, 31)), 100, "loo", None
    eye = load_eyedata(standardize=True)
    Xe, ye = eye.encode(scale_numeric=False)[0], np.asarray(eye.y, float)
    rows = _sweep("Eyedata λ", Xe, ye, lambda a: Ridge(alpha=a), lambdas, _EYEDATA_REF, n_splits=n_splits,
                  cv="loo", random_state=random_state)
    iw = load_iwpc()
    Xi, yi = iw.encode(scale_numeric=False)[0], np.asarray(iw.y, float)
    ref = _IWPC_REF
    if n_iwpc is not None:  # smoke: a subset of patients, so no reference values apply
        keep = np.random.default_rng(random_state).choice(len(Xi), n_iwpc, replace=False)
        Xi, yi, ref = Xi[keep], yi[keep], {}
    rows += _sweep("IWPC depth", Xi, yi, lambda d: DecisionTreeRegressor(max_depth=d), depths, ref,
                   n_splits=n_splits, cv=cv_iwpc, random_state=random_state)
    return rows


# ------------------------------------------------------------------------------------ CNNs (§6.3)

# Table I, precision of each attack (recall > 0.99 for all): dataset -> (threshold on L_S, Shokri et al.)
_TABLE1 = {"MNIST": (0.505, 0.517), "CIFAR-10": (0.694, "0.72-0.74"), "CIFAR-100": (0.874, "> 0.99")}


def _fashion(n_total: int, random_state: int):
    from ..data import load_fashion_mnist

    ds = load_fashion_mnist("train")
    rng = np.random.default_rng(random_state)
    idx = rng.choice(len(ds), size=n_total, replace=False)
    X = np.asarray(ds.X[idx], dtype=np.float32).reshape(n_total, -1)
    return X, np.asarray(ds.y[idx], dtype=np.int64)


def _cnn_settings(profile: str) -> dict:
    # The paper does not state its epochs or batch size (spec §6.3). Fig. 2c trains every size s for ``epochs`` at
    # batch size 64 (the threshold's recall grows with the epochs: benchmarks/README.md, "Reproduction settings
    # chosen by cost"). Table I's models
    # memorise their training sets (recall > 0.99 of a threshold at the average training loss needs nearly every
    # member's loss below the mean), so yeom-table1 trains longer, ``table1_epochs`` at Keras' default batch size
    # 32: the recall keeps rising long after the training accuracy reaches 1 (the note of yeom-table1 has the curve).
    if profile == "smoke":
        return dict(n_train=200, size=4, sizes=(1, 4), epochs=3, n_shadow=2, table1_epochs=3, batch_size=32)
    if profile == "reduced":
        return dict(n_train=500, size=16, sizes=(1, 2, 4, 8, 16), epochs=150, n_shadow=2, table1_epochs=1000,
                    batch_size=32)
    return dict(n_train=8750, size=64, sizes=(1, 2, 4, 8, 16, 32, 64, 128), epochs=100, n_shadow=20,
                table1_epochs=100, batch_size=32)


def _keras_cross_entropy(probs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-record cross-entropy as Keras computes it: float32 probabilities clipped to [1e-7, 1 - 1e-7] (Keras'
    ``epsilon``), so a saturated output's loss is ``-ln(float32(1 - 1e-7))`` = 1.19e-7 rather than about 0."""
    p = np.asarray(probs, np.float32)[np.arange(len(y)), np.asarray(y)]
    eps = np.float32(1e-7)
    return -np.log(np.clip(p, eps, np.float32(1) - eps)).astype(np.float64)


@register_per_seed(
    "yeom-table1", version=1,
    paper="Yeom et al. 2018 (CSF), Table I",
    description=(
        "One-query loss threshold at the average training loss L_S against Shokri et al.'s shadow-model attack "
        "(one attack model per class on the prediction vector) on Yeom's VGG-like CNN, trained until it memorises "
        "its training set, on Fashion-MNIST with equal-sized train and held-out sets; 5 seeds (a seed draws the "
        "images, the target and the shadow models)."
    ),
    notes=(
        "MNIST, CIFAR-10 and CIFAR-100 are not available in this environment; Fashion-MNIST (same image format "
        "as MNIST, harder to generalise on) is used instead, so the precisions have no paper values. The "
        "paper's Table I precisions (recall > 0.99 throughout) are quoted in the last rows for comparison only. "
        "The paper states neither epochs, batch size nor which size s matches Shokri et al.'s target. 'Trained "
        "until it memorises' is not reached with the training accuracy: at s = 16 and 500 images (an exploratory "
        "draw with seed 0) the training accuracy is 1 after 1,200 updates, yet the threshold's recall keeps "
        "rising with the number of Adam updates as the members' losses collapse: 0.82 after 150 epochs at batch "
        "size 64 (1,200 updates), 0.79 after 150 at batch size 32 (2,400), 0.88 after 400 (6,400), 0.94 after "
        "1,000 (16,000; 0.97 on Keras' clipped loss). The reduced profile therefore trains 1,000 epochs at Keras' "
        "default batch size 32 (s = 16, 500 images, one pair of shadow models; the paper's attack trains "
        "hundreds). The full profile is the paper's setting as we read it: s = 64 (a 128-unit dense layer), n = "
        "8,750, 100 epochs at batch size 32 (27,300 updates), 20 shadow models; it is not run here: one such CNN "
        "takes about 30 CPU minutes (1.1 CPU s per 500 images per epoch at s = 64, measured), 21 per seed. The "
        "recall row is judged on the "
        "paper's lower bound 0.99: 'match' when the mean over seeds is at least 0.99."
    ),
    references=((r"recall", "printed", "membership-attack metric"),),
)
def _table1_seed(profile: str, random_state: int) -> list:
    """Every yeom-table1 row for one seed (the image draw, the target, the shadow models), and the datasets not
    available (the same in every seed)."""
    from ..learners import TorchCNN
    from ..membership import cross_entropy_loss, fit_reference_models
    from ..membership.shadow import ShadowModelAttack
    from ..membership.threshold import LossThresholdAttack
    from ..metrics import decision_metrics
    from ._registry import Row

    s = _cnn_settings(profile)
    n = s["n_train"]
    # target: train n, held-out n; the adversary's own data: 2n more from the same distribution
    X, y = _fashion(4 * n, random_state)
    tr, te, adv = np.arange(n), np.arange(n, 2 * n), np.arange(2 * n, 4 * n)
    learner = TorchCNN(size=s["size"], epochs=s["table1_epochs"], batch_size=s["batch_size"])
    target = learner.fit(X[tr], y[tr], random_state=random_state, n_classes=10)
    aud = np.r_[tr, te]
    is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
    probs = np.asarray(target.predict_proba(X[aud]), float)
    acc_tr = float(np.mean(probs[:n].argmax(1) == y[tr]))
    acc_te = float(np.mean(probs[n:].argmax(1) == y[te]))
    L_S = float(np.mean(cross_entropy_loss(probs[:n], y[tr])))
    dm_loss = decision_metrics(is_member, LossThresholdAttack(threshold=L_S).score(probs, y[aud]).decisions_array)
    loss_k = _keras_cross_entropy(probs, y[aud])
    dm_keras = decision_metrics(is_member, (loss_k < np.mean(loss_k[:n])).astype(int))
    n_sh = 2 * (s["n_shadow"] // 2 or 1)
    shadows = fit_reference_models(learner, X[adv], y[adv], n_sh, n_classes=10, random_state=random_state + 1)
    shokri = ShadowModelAttack(per_class=True, use_features=False, batch_size=32, random_state=random_state)
    shokri.fit(shadows.probs, shadows.in_mask, y[adv])
    dm_sh = decision_metrics(is_member, shokri.score(probs, y[aud]).decisions_array)
    cfg = (f"s={s['size']}, {n} train / {n} held-out images, {s['table1_epochs']} epochs at batch size "
           f"{s['batch_size']} (trained until it memorises)")
    return [
        row("Fashion-MNIST target train accuracy", None, acc_tr, None, cfg),
        row("Fashion-MNIST target test accuracy", None, acc_te),
        row("Fashion-MNIST generalization gap (train - test accuracy)", None, acc_tr - acc_te),
        row("Fashion-MNIST average training loss L_S", None, L_S, None, "the threshold the adversary knows"),
        row("Fashion-MNIST threshold attack precision", None, dm_loss["precision"], None,
            "Theorem-2 intuition: the advantage is about train - test accuracy"),
        Row("Fashion-MNIST threshold attack recall", 0.99, dm_loss["recall"], None,
            "match" if dm_loss["recall"] >= 0.99 else "differs", "paper: > 0.99 on MNIST and CIFAR (a lower bound)",
            bound="lower"),
        row("Fashion-MNIST threshold attack advantage", None, dm_loss["advantage"]),
        row("Fashion-MNIST threshold attack recall, Keras' loss", None, dm_keras["recall"], None,
            "the same attack on the loss as Keras computes it (float32 outputs clipped to [1e-7, 1 - 1e-7]): "
            "saturated members tie at 1.19e-7, below L_S; how the paper computed its losses is not stated"),
        row("Fashion-MNIST threshold attack precision, Keras' loss", None, dm_keras["precision"]),
        row("Fashion-MNIST shadow-model attack precision", None, dm_sh["precision"], None,
            f"{n_sh} shadow CNNs on the adversary's disjoint data, one attack net per class"),
        row("Fashion-MNIST shadow-model attack recall", None, dm_sh["recall"]),
        row("Fashion-MNIST shadow-model attack advantage", None, dm_sh["advantage"]),
    ] + [row(f"{ds_name}: not available", None, None, None,
             f"dataset not in this environment; paper precision: threshold {p_thr}, Shokri et al. {p_sh}")
         for ds_name, (p_thr, p_sh) in _TABLE1.items()]


@register_per_seed(
    "yeom-fig2c", version=1,
    paper="Yeom et al. 2018 (CSF), Fig. 2c",
    description=(
        "The loss threshold at L_S on Yeom's VGG-like CNN of size s: the empirical advantage against the "
        "generalization ratio L_D / L_S (test over train cross-entropy) and the Gaussian curves (§3.3 and "
        "Theorem 3) at r = sqrt(L_D / L_S); Fashion-MNIST, equal train and held-out sets, 5 seeds."
    ),
    notes=(
        "MNIST and CIFAR are not available: Fashion-MNIST replaces them, and the paper prints no numbers for Fig. "
        "2c (spec §6.4), so every row has no paper value. The checked claim is qualitative: the empirical points "
        "'do not match the theoretical curve as closely as do linear and tree models' but 'do not diverge as "
        "much as one might expect'. Which curve Fig. 2c draws, and whether its x is L_D/L_S or its square root, "
        "is not stated; we show both Gaussian curves at r = sqrt(L_D/L_S). Every size trains 150 epochs at batch "
        "size 64 at the reduced profile (the larger sizes reach training accuracy 1), 100 at batch size 64 at "
        "the full one; yeom-table1 trains longer. The full profile (n = 8,750, s = 1 to 128) is not run here: "
        "one CNN at s = 64 takes about 30 CPU minutes (yeom-table1's note), one at s = 128 several times that."
    ),
)
def _fig2c_seed(profile: str, random_state: int) -> list:
    """Fig. 2c rows for one seed: per size s, L_S, L_D, their ratio, and the threshold-at-L_S advantage."""
    from ..learners import TorchCNN
    from ..membership import cross_entropy_loss
    from ..membership.threshold import LossThresholdAttack, advantage_known_sigma, advantage_unknown_sigma
    from ..metrics import decision_metrics

    s = _cnn_settings(profile)
    n = s["n_train"]
    X, y = _fashion(2 * n, random_state)
    tr, te = np.arange(n), np.arange(n, 2 * n)
    is_member = np.r_[np.ones(n, int), np.zeros(n, int)]
    rows = []
    for size in s["sizes"]:
        model = TorchCNN(size=size, epochs=s["epochs"]).fit(X[tr], y[tr], random_state=random_state, n_classes=10)
        probs = np.asarray(model.predict_proba(X), float)
        loss = cross_entropy_loss(probs, y)
        L_S, L_D = float(np.mean(loss[tr])), float(np.mean(loss[te]))
        dm = decision_metrics(is_member, LossThresholdAttack(threshold=L_S).score(probs, y).decisions_array)
        ratio = L_D / L_S
        rows += [
            row(f"s={size}: L_D / L_S (test / train loss)", None, ratio, None,
                f"{n} train / {n} held-out images, {s['epochs']} epochs"),
            row(f"s={size}: threshold-at-L_S advantage", None, dm["advantage"], None,
                f"precision {dm['precision']:.3f}, recall {dm['recall']:.3f}"),
            row(f"s={size}: §3.3 curve at r = sqrt(L_D / L_S)", None, float(advantage_unknown_sigma(np.sqrt(ratio))),
                note="our reading of Fig. 2c's curve: cross-entropy as the squared error's analogue (σ² ~ loss)"),
            row(f"s={size}: Thm 3 curve at r = sqrt(L_D / L_S)", None, float(advantage_known_sigma(np.sqrt(ratio)))),
        ]
    return rows


def _fig4_settings(profile: str) -> dict:
    # The paper does not state its epochs. Memorising k*n random-label triggers takes far longer than fitting
    # the real images (benchmarks/README.md, "Reproduction settings chosen by cost"), so Fig. 4 trains for 60
    # epochs (smoke: too few on purpose, it only checks that it runs).
    if profile == "smoke":
        return dict(n_train=300, sizes=(1, 8), epochs=3)
    if profile == "reduced":
        return dict(n_train=400, sizes=(1, 4, 16, 32), epochs=60)
    return dict(n_train=8750, sizes=(1, 2, 4, 8, 16, 32, 64, 128), epochs=100)


@register_per_seed(
    "yeom-fig4", version=1,
    paper="Yeom et al. 2018 (CSF), Fig. 4",
    description=(
        "Colluding training algorithm (Algorithm 1, k = 3 keys, trigger inputs uniform in [0, 1]^784 and uniform "
        "labels from a keyed PRF of the record) on the VGG-like CNN of size s, and the colluding adversary "
        "(Adversary 3), on Fashion-MNIST: membership advantage and generalization error against s, and the test "
        "accuracy lost to subversion."
    ),
    notes=(
        "MNIST and CIFAR are not available: Fashion-MNIST replaces them, so there are no per-point paper values. "
        "Checked claims: the advantage reaches the paper's >= 0.9 (MNIST) for s >= 32, a bound our mean must reach "
        "(Theorem 4's ideal 1 - 10^-3 = 0.999 is an expectation 2n challenges cannot resolve), whatever the "
        "generalization error, and subversion costs little test accuracy (paper: 0.014 on MNIST). "
        "Smaller profiles use fewer images and sizes. The paper does not state its epochs; the triggers need many "
        "(measured at s = 16, n = 300: advantage 0.00 after 10 epochs, 0.22 after 30, 0.99 after 60), so the "
        "reduced profile trains 60 epochs and the full one 100 (n = 8,750, s = 1 to 128, two CNNs a size, the "
        "colluding one on 4n points), which is not run here: one CNN at s = 64 and n = 8,750 takes about 30 CPU "
        "minutes (yeom-table1's note). Every row is over 5 seeds (seed, seed + 1, ...; "
        "a seed draws the images, the secret and the CNNs)."
    ),
    references=((r"advantage at the largest", "printed", None),),
)
def _fig4_seed(profile: str, random_state: int) -> list:
    """yeom-fig4's rows for one seed (the image draw, the secret keys, the CNNs' initialisation)."""
    from ..learners import TorchCNN
    from ..membership.colluding import ColludingAdversary, ColludingLearner, colluding_advantage_bound

    s = _fig4_settings(profile)
    n = s["n_train"]
    X, y = _fashion(2 * n, random_state)
    tr, te = np.arange(n), np.arange(n, 2 * n)
    rows = []
    advs = {}
    for size in s["sizes"]:
        base = TorchCNN(size=size, epochs=s["epochs"])
        sub = ColludingLearner(base, n_keys=3, secret=random_state).fit(X[tr], y[tr], random_state=random_state,
                                                                         n_classes=10)
        clean = base.fit(X[tr], y[tr], random_state=random_state, n_classes=10)
        d = ColludingAdversary(n_keys=3, secret=random_state).score(sub, X).decisions_array
        adv = float(d[tr].mean() - d[te].mean())
        advs[size] = adv

        def acc(m, idx):
            return float(np.mean(np.asarray(m.predict_proba(X[idx])).argmax(1) == y[idx]))

        gen = acc(sub, tr) - acc(sub, te)
        rows += [
            row(f"s={size}: colluding advantage", None, adv, None,
                f"recall {d[tr].mean():.3f}, false-positive rate {d[te].mean():.3f}"),
            row(f"s={size}: generalization error (subverted)", None, gen, None, "train - test accuracy"),
            row(f"s={size}: test accuracy lost to subversion", None, acc(clean, te) - acc(sub, te), None,
                f"clean {acc(clean, te):.3f}, subverted {acc(sub, te):.3f}"),
        ]
    big = max(s["sizes"])
    # the paper's claim is a bound (">= 0.9" on MNIST, the dataset Fashion-MNIST stands in for); Theorem 4's ideal
    # is an expectation that 2n challenges cannot resolve (one false positive in 1,000 expected), so it is a note
    rows.append(row(f"advantage at the largest s={big} vs the paper's >= 0.9", 0.9, advs[big],
                    0.0 if profile != "smoke" else 1.0,
                    f"paper: >= 0.9 (MNIST, CIFAR-10) and 0.98 (CIFAR-100) for s >= 32; Theorem 4's ideal is "
                    f"{colluding_advantage_bound(10, 3):.3f}", bound="lower"))
    return rows
