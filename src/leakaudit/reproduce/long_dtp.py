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
- ``long-dtp-noise``: §9 / Figs 7–8, the histograms of a network's prediction for one
  individual over 100 initialisations and over 100 training samples.

PDTP: long-dtp-correlation measures it as §5.4 does, in the attack protocol's first
iterations with each iteration's target model as A(D_i) (:func:`_protocol_pdtp`);
long-dtp-table2 runs no attacks and measures it on random halves of D of its own.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import NamedTuple

import numpy as np

from ._registry import register, row
from ._seeds import FIGURE_DATA, figure_data_row, map_seeds, register_per_seed, seeds_from
from ._seeds import seed_row as _seed_row

PAPER = "Long et al. 2017/2020 (Towards Measuring Membership Privacy)"

# Table 2 of the paper
_T2 = {
    "NN-Adult": {"train": 0.8555, "test": 0.8566, "attack": 0.5340, "avg_pdtp": 0.5847, "r": 0.4588},
    "NB-Adult": {"train": 0.8453, "test": 0.8410, "attack": 0.5128, "avg_pdtp": 0.0299, "r": 0.5166},
    "LR-Adult": {"train": 0.8711, "test": 0.8536, "attack": 0.5134, "avg_pdtp": 0.1460, "r": -0.0008},
    "NB-Purchase": {"train": 0.8641, "test": 0.7204, "attack": 0.5958, "avg_pdtp": 0.9027, "r": 0.9239},
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


# Table 2's configuration, chosen on the paper's reported train/test accuracy (not on PDTP); the alternatives are
# rows of long-dtp-table2, measured over the same seeds.
# NN-Adult: §5.2 gives 64 tanh units, lr 0.01 and "the maximum epoch of training is set to 100 for the adult dataset",
# a cap, not a count: 5 epochs of per-example SGD give the train accuracy nearest Table 2's (the epochs measured:
# long-dtp-table2's rows, benchmarks/README.md "NN-Adult: no epoch count or input scaling gives ...").
NN_ADULT_EPOCHS = 5
# LR-Adult: the paper used Weka's Logistic Model Trees (LogitBoost with a cross-validated number of iterations, i.e.
# regularised by early stopping); our stand-in is L2 logistic regression. Table 2 reports train 0.8711 / test 0.8536:
# C = 1 and C = 100 both hold 0.8711 in their train-accuracy intervals, and C = 1 is nearer on test accuracy and on
# the train-test gap, so accuracy gives no reason to move from C = 1. C = 100 is shown beside it.
LR_ADULT_C = 1.0


def _learners(cat, nv, *, lr_c: float = LR_ADULT_C, nn_epochs: int = NN_ADULT_EPOCHS):
    from ..learners import LogisticRegression, NaiveBayes, TorchMLP

    return {
        "NB-Adult": (NaiveBayes(categorical=cat, n_values=nv), "nb"),
        "LR-Adult": (LogisticRegression(C=lr_c), "onehot"),
        "NN-Adult": (TorchMLP(hidden=(64,), activation="tanh", epochs=nn_epochs, mode="faithful"), "onehot"),
    }


def _pdtp_on_halves(learner, X, y, splits, targets, rng, *, outputs=None, seed_policy="independent",
                    variants=False, method="auto"):
    """PDTP of each target w.r.t. the half of each split that holds it (Long et al. §5.4): (n_splits, n_targets).

    ``splits`` is an iterable of pairs of halves (D1, D2) of D, consumed in order. A(D_i \\ {t}) is retrained for
    every target t in D_i (or computed in closed form); A(D_i)'s outputs at the targets are ``outputs[m, i]``
    when given (shape (n_splits, 2, n_targets, C): the protocol's own target models), else those of the model
    :func:`leakaudit.dtp.pdtp` trains on D_i. A target in neither half has NaN.

    With ``variants`` it returns a dict of such arrays: ``binned`` (bins of 0.01, the paper's §5.2),
    ``lowest_bin_free`` (the same bins, moves between the two lowest bins left out: ``lowest_bins="ignore"`` of
    :func:`leakaudit.dtp.pdtp_from_probabilities`) and ``unbinned``, all from the same trained models.
    ``method``: :func:`leakaudit.dtp.pdtp`'s (``"retrain"`` trains A(D_i \\ {t}) from scratch even where the learner
    has a leave-one-out shortcut).
    """
    from ..dtp import pdtp
    from ..dtp.pdtp import pdtp_from_probabilities

    keys = ("binned", "lowest_bin_free", "unbinned") if variants else ("binned",)
    rows = {k: [] for k in keys}
    n_classes = 2 if y.max() <= 1 else int(y.max()) + 1
    for m, halves in enumerate(splits):
        vals = {k: np.full(len(targets), np.nan) for k in keys}
        for i, h in enumerate(halves):
            pos = {int(r): k for k, r in enumerate(h)}
            idx = [j for j, t in enumerate(targets) if int(t) in pos]
            if not idx:
                continue
            recs = [pos[int(targets[j])] for j in idx]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # unbinned 0 probabilities give inf, reported as such
                # pdtp also trains A(D_i) itself (one model per half, beside |D_i ∩ targets| leave-one-out models);
                # with ``outputs`` its output is replaced by the protocol's model's
                res = pdtp(learner, X[h], y[h], records=recs, n_classes=n_classes, seed_policy=seed_policy,
                           random_state=int(rng.integers(2**31 - 1)), bin_width=None, keep_outputs=True,
                           method=method)
            pf = np.asarray(res.p_full) if outputs is None else np.asarray(outputs[m][i], float)[idx]
            pl = np.asarray(res.p_loo)
            vals["binned"][idx] = pdtp_from_probabilities(pf, pl, bin_width=0.01)
            if variants:
                vals["lowest_bin_free"][idx] = pdtp_from_probabilities(pf, pl, bin_width=0.01, lowest_bins="ignore")
                # unbinned, from the same two outputs (pdtp's own values when A(D_i) is its model)
                vals["unbinned"][idx] = (np.asarray(res.values) if outputs is None
                                         else pdtp_from_probabilities(pf, pl, bin_width=None))
        for k in keys:
            rows[k].append(vals[k])
    out = {k: np.array(v).reshape(len(v), len(targets)) for k, v in rows.items()}
    return out if variants else out["binned"]


def _pdtp_measurements(learner, X, y, D, targets, n_meas, rng, *, seed_policy="independent", variants=False):
    """PDTP of each target w.r.t. a random half of D containing it, ``n_meas`` times: (n_meas, n_targets).

    For settings without an attack protocol (long-dtp-table2): the halves are drawn here, each just before its
    measurement. With ``variants``, a dict (see :func:`_pdtp_on_halves`).
    """
    n = len(D) // 2
    splits = ((perm[:n], perm[n:2 * n]) for perm in (rng.permutation(D) for _ in range(n_meas)))
    return _pdtp_on_halves(learner, X, y, splits, targets, rng, seed_policy=seed_policy, variants=variants)


def _protocol_pdtp(learner, X, y, train_sets, outputs, targets, n_meas, rng, *, variants=False, method="auto"):
    """PDTP in the first ``n_meas`` iterations of Long et al.'s protocol, as §5.4 measures it: (n_meas, n_targets).

    ``train_sets`` and ``outputs`` are what :func:`leakaudit.membership.protocols.long_protocol` passes to a
    callable ``pdtp``: the target models' training sets, two per iteration (D1, D2), and their outputs at the
    targets (2·n_iterations, n_targets, C). In iteration i a target t is in one half D_j, and its measurement is
    ``PDTP_{A, D_j}(t)`` with that iteration's target model c_j = A(D_j) as the full model and A(D_j \\ {t})
    retrained (independent seed) or in closed form (spec long-dtp.md §4.3); ``method`` as :func:`_pdtp_on_halves`.
    """
    from ..exceptions import InvalidParameterError

    if 2 * n_meas > len(train_sets):
        raise InvalidParameterError(f"n_meas={n_meas} PDTP measurements need as many protocol iterations; the "
                                    f"protocol ran {len(train_sets) // 2}")
    splits = [(np.asarray(train_sets[2 * m]), np.asarray(train_sets[2 * m + 1])) for m in range(n_meas)]
    out = np.asarray(outputs, float)[: 2 * n_meas].reshape(n_meas, 2, len(targets), -1)
    return _pdtp_on_halves(learner, X, y, splits, np.asarray(targets), rng, outputs=out, variants=variants,
                           method=method)


def _pdtp_hook(learner, X, y, n_meas, rng, *, k=None, method="auto"):
    """A ``pdtp`` callable for long_protocol and the dict it keeps its measurements in (key "M"): PDTP on the
    protocol's own first ``n_meas`` iterations, each target model as A(D_i) (:func:`_protocol_pdtp`, spec §4.3);
    the protocol gets each target's mean over the first ``k`` of them (all when None)."""
    kept = {}

    def measure(train_sets, outputs, targets):
        kept["M"] = _protocol_pdtp(learner, X, y, train_sets, outputs, targets, n_meas, rng, method=method)
        return kept["M"][:k].mean(axis=0)

    return measure, kept


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


# Alternative configurations measured beside the chosen ones (row label -> _learners arguments)
# ("enc": "minmax" gives the NN numerics scaled to [0, 1] on D instead of z-scores: the other reading of §5.2's
# "normalise")
_ALTERNATIVES = {
    "LR-Adult, C = 100": {"lr_c": 100.0},
    "NN-Adult, 10 epochs": {"nn_epochs": 10},
    "NN-Adult, 30 epochs": {"nn_epochs": 30},
    "NN-Adult, 100 epochs (every epoch of the trainer, the spec's reading)": {"nn_epochs": 100},
    "NN-Adult, 100 epochs, min-max inputs": {"nn_epochs": 100, "enc": "minmax"},
}


def _minmax(X, D):
    """X with every non-binary column rescaled to [0, 1] by its range over D (the one-hot columns unchanged)."""
    Xm = np.array(X, dtype=float, copy=True)
    num = [j for j in range(X.shape[1]) if len(np.unique(X[D, j])) > 2]
    lo, hi = Xm[D][:, num].min(axis=0), Xm[D][:, num].max(axis=0)
    Xm[:, num] = (Xm[:, num] - lo) / np.where(hi > lo, hi - lo, 1.0)
    return Xm

_T2_CFG = {
    "smoke": {"n_acc": 1, "n_targets": 10, "meas": {"NB-Adult": 2, "LR-Adult": 1, "NN-Adult": 1}, "nn_targets": 4,
              "prev_meas": 1},
    "reduced": {"n_acc": 10, "n_targets": 100, "meas": {"NB-Adult": 10, "LR-Adult": 10, "NN-Adult": 10},
                "nn_targets": 30, "prev_meas": 2},
    "full": {"n_acc": 50, "n_targets": 100, "meas": {"NB-Adult": 10, "LR-Adult": 10, "NN-Adult": 10},
             "nn_targets": 100, "prev_meas": 10},
}


def _table2_seed(profile: str, seed: int) -> dict:
    """Every Table 2 quantity for one seed (one draw of D, the targets, the halves and the models)."""
    cfg = _T2_CFG[profile]
    y, D, X, Xn, cat, nv, rng = _adult(seed)
    targets = np.sort(rng.choice(D, cfg["n_targets"], replace=False))
    out = {}
    setups = list(_learners(cat, nv).items())
    for alt, kw in _ALTERNATIVES.items():
        kw = dict(kw)
        enc = kw.pop("enc", None)
        learner, base_enc = _learners(cat, nv, **kw)[alt.split(",")[0]]
        setups.append((alt, (learner, enc or base_enc)))
    Xm = _minmax(X, D) if any("enc" in kw for kw in _ALTERNATIVES.values()) else None
    for name, (learner, enc) in setups:
        XX = {"nb": Xn, "minmax": Xm}.get(enc, X)
        nn = name.startswith("NN")
        n_acc = cfg["n_acc"] if not nn else max(1, cfg["n_acc"] // 2)
        out[name, "train"], out[name, "test"] = _half_accuracies(learner, XX, y, D, n_acc, rng, 2)
        tg = targets if not nn else targets[: cfg["nn_targets"]]
        n_meas = cfg["meas"][name.split(",")[0]] if "100 epochs" not in name else cfg["prev_meas"]
        M = _pdtp_measurements(learner, XX, y, D, tg, n_meas, rng, variants=name == "NB-Adult")
        Mb = M["binned"] if isinstance(M, dict) else M
        avg = Mb.mean(axis=0)
        out[name, "avg"], out[name, "max"] = float(avg.mean()), float(avg.max())
        out[name, "n>1"] = float(np.sum(avg > 1))
        out[name, "single>1"] = float(np.mean(Mb > 1))
        if isinstance(M, dict):
            for k in ("lowest_bin_free", "unbinned"):
                a = M[k].mean(axis=0)
                out[name, f"avg {k}"], out[name, f"n>1 {k}"] = float(a.mean()), float(np.sum(a > 1))
                out[name, f"single>1 {k}"] = float(np.mean(M[k] > 1))
            out[name, "single ln3"] = float(np.mean(np.isclose(Mb, math.log(3))))
        out[name, "n_meas"], out[name, "n_tg"], out[name, "n_models"] = n_meas, len(tg), 2 * n_acc
    return out


@register(
    "long-dtp-table2", version=1,
    paper=PAPER,
    description="Table 2 target models on real Adult (NB, LR, NN): train/test accuracy over target models on random "
                "halves of |D| = 2000, average PDTP (natural log, bins of 0.01) over fixed targets, and the DTP-1 "
                "count (spec §11 item 5: NB/LR-Adult have no target with avg PDTP > 1; NN-Adult has some), each over 5 "
                "seeds (a seed draws D, the targets, the halves and the models). Alternative configurations (LR with "
                "C = 100, NN with 10, 30 and 100 epochs and on min-max inputs) are measured on the same seeds; "
                "NB-Adult rows also show PDTP without the lowest-bin ln 3 step and unbinned.",
    notes="Configuration, chosen on Table 2's train/test accuracy and never on PDTP. NN-Adult: 64 tanh units, "
          "per-example SGD at lr 0.01 (§5.2) for 5 epochs, the count whose accuracies are nearest Table 2's. §5.2 "
          "says 'the maximum epoch of training is set to 100', and the spec reads the paper's trainer (Torch7's "
          "StochasticGradient, which has no early stopping) as running all 100; the two readings disagree, so both "
          "are shown (rows '100 epochs (every epoch ...)'), with 10 and 30 epochs between them and 100 epochs on "
          "inputs scaled to [0, 1] (rows 'min-max inputs', the other reading of 'normalise'): whether any of them "
          "gives the paper's accuracies and its average PDTP together is read off these rows. NN PDTP uses the "
          "independent seed policy. LR-Adult: the paper's model "
          "is Weka's Logistic Model Trees, not available here; our stand-in is L2 logistic regression with C = 1. C = 1 and C = 100 both hold the paper's train accuracy 0.8711 in "
          "their intervals and C = 1 is nearer on test accuracy, so accuracy gives no reason to change C. C = 100 "
          "reproduces the average PDTP (about 0.15 against 0.146) but gives several targets per seed with average "
          "PDTP > 1, which the paper says it did not find for LR; C = 1 gives about half the paper's average PDTP "
          "and at most two such targets. Neither reproduces both. Test accuracy: the held-out halves of D give "
          "0.01-0.02 lower test accuracy than the paper reports for NB, LR and NN alike (and NB's train accuracy is "
          "as much lower), so the shortfall is in the data draw, not one learner; the paper does not say how its "
          "test records were drawn. NB-Adult and binning: the paper bins exactly as we do (§5.2: 100 bins of 0.01, "
          "an output of 0 returned as 0.005, the first bin's centre), so its binning does not avoid the ln 3 step: "
          "an output crossing 0.01 moves between the two lowest bins and gives PDTP ln 3 = 1.0986 > 1. The paper's "
          "'we did not find any records with PDTP greater than 1' holds for the averages over 10 measurements (no "
          "target in any seed) but not for single measurements (about 1.2% exceed 1, nearly all at exactly ln 3; "
          "`leakaudit dtp pdtp --data adult --model nb` shows the same on one training set). The rows 'lowest-bin steps "
          "ignored' leave out of the max every class whose output moves between the two lowest bins "
          "(leakaudit.dtp.pdtp(..., lowest_bins='ignore'): the step is ln 3 however small the move), to size the "
          "step's share of the gap to the paper's 0.0299; the rest is our NB (Gaussian numerics with a 1e-3 std "
          "floor, Laplace categoricals) against Weka's. 'ours' is the mean over seeds (seed, "
          "seed + 1, ...); a row is judged by the page's rule (its top: the mean and the whole interval within the "
          "tolerance of the row's kind of quantity); 'none found' is an upper bound of 0 that every seed must meet.",
    references=(
        (r"targets with avg PDTP > 1", "claim", "claim"),
        (r"accuracy$", "printed", "model accuracy"),
        (r"avg PDTP", "printed", "average PDTP"),
    ),
)
def table2(profile: str, random_state: int):
    seeds = seeds_from(random_state)
    runs = map_seeds(_table2_seed, profile, seeds)

    def vals(name, key):
        return [r[name, key] for r in runs]

    why = {
        "NB-Adult": "Gaussian numerics with a 1e-3 std floor and Laplace categoricals (Weka's NB treats numeric "
                    "precision differently); outputs moving between the two lowest bins add ln 3 steps (rows below)",
        "LR-Adult": "our L2 logistic regression (C = 1) stands in for Weka's LMT; the held-out halves of D give lower "
                    "test accuracy than the paper's for NB, LR and NN alike",
        "NN-Adult": "5 epochs of per-example SGD (the paper's 100 is a maximum); the held-out halves of D give lower "
                    "test accuracy than the paper's for NB, LR and NN alike",
    }
    rows = []
    for name in ("NB-Adult", "LR-Adult", "NN-Adult"):
        p = _T2[name]
        r0 = runs[0]
        setting = f"{r0[name, 'n_models']} target models per seed"
        rows += [
            *(_seed_row(f"{name} {part} accuracy", p[part], vals(name, part), seeds, None,
                        f"{setting}; if it differs: {why[name]}") for part in ("train", "test")),
            _seed_row(f"{name} avg PDTP (mean over targets)", p["avg_pdtp"], vals(name, "avg"), seeds,
                      None, f"{r0[name, 'n_tg']} targets x {r0[name, 'n_meas']} PDTP measurements; "
                      f"if it differs: {why[name]}"),
            _seed_row(f"{name} max avg PDTP", None, vals(name, "max"), seeds),
            _seed_row(f"{name} targets with avg PDTP > 1", 0.0 if name != "NN-Adult" else None, vals(name, "n>1"),
                      seeds, 0.0 if name != "NN-Adult" else None,
                      "paper: none for NB/LR-Adult; 'some' for NN-Adult (no count given)",
                      bound="upper" if name != "NN-Adult" else None),
            _seed_row(f"{name} share of single PDTP measurements > 1", None, vals(name, "single>1"), seeds,
                      note="each target's individual measurements, before averaging; the paper's 'we did not find any "
                           "records with PDTP greater than 1' (NB/LR) may mean these or the averages"),
        ]
        if name == "NB-Adult":
            rows += [
                _seed_row("NB-Adult share of single PDTP measurements at exactly ln 3", None, vals(name, "single ln3"),
                          seeds, note="an output moving between the two lowest bins (0.005 <-> 0.015)"),
                _seed_row("NB-Adult avg PDTP, lowest-bin steps ignored", p["avg_pdtp"],
                          vals(name, "avg lowest_bin_free"), seeds, None,
                          "same models; binned, but a class whose output moves between the two lowest bins "
                          "(lowest_bins='ignore' of leakaudit.dtp.pdtp) is left out of the max (the paper's "
                          "binning, §5.2, has no such rule; shown to size the effect)"),
                _seed_row("NB-Adult share of single PDTP measurements > 1, lowest-bin steps ignored", None,
                          vals(name, "single>1 lowest_bin_free"), seeds),
                _seed_row("NB-Adult avg PDTP, unbinned", p["avg_pdtp"], vals(name, "avg unbinned"), seeds,
                          None, "same models, raw probabilities"),
                _seed_row("NB-Adult share of single PDTP measurements > 1, unbinned", None,
                          vals(name, "single>1 unbinned"), seeds),
            ]
    for name in _ALTERNATIVES:
        p = _T2[name.split(",")[0]]
        r0 = runs[0]
        rows += [
            _seed_row(f"{name}: train accuracy", p["train"], vals(name, "train"), seeds, None,
                      f"{r0[name, 'n_models']} target models per seed"),
            _seed_row(f"{name}: test accuracy", p["test"], vals(name, "test"), seeds),
            _seed_row(f"{name}: avg PDTP", p["avg_pdtp"], vals(name, "avg"), seeds, None,
                      f"{r0[name, 'n_tg']} targets x {r0[name, 'n_meas']} PDTP measurements"),
            _seed_row(f"{name}: targets with avg PDTP > 1", 0.0 if name.startswith("LR") else None,
                      vals(name, "n>1"), seeds, 0.0 if name.startswith("LR") else None,
                      bound="upper" if name.startswith("LR") else None),
        ]
    return rows


def _purchase_like(random_state: int, profile: str):
    """Purchase-like data with the generator calibrated to Table 2's NB and NN accuracies (LONG_PURCHASE_PARAMS,
    from the long-purchase-calibration reproduction): 10,000 records clustered into 10 classes (smoke: 2,000)."""
    from ..data import make_purchase_like
    from ..data.purchase import LONG_PURCHASE_PARAMS

    n = 2000 if profile == "smoke" else 10_000
    ds = make_purchase_like(n_records=n, n_features=836, n_classes=10, random_state=random_state,
                            **LONG_PURCHASE_PARAMS)
    X = ds.frame.to_numpy(dtype=np.float64)
    return X, ds.y


# Table 2's attack columns (distance attack): accuracy, precision, recall, F1, and the correlation's p-value
_T2_ATTACK = {
    "NB-Purchase": (0.5958, 0.6945, 0.4038, 0.5107, 1.16e-42),
    "LR-Purchase": (0.7888, 0.7314, 0.9187, 0.8144, 7.78e-25),
    "NN-Adult": (0.5340, 0.5311, 0.4402, 0.4356, 1.57e-6),
    "NB-Adult": (0.5128, 0.5876, 0.1027, 0.1748, 3.76e-8),
    "LR-Adult": (0.5134, 0.5130, 0.3818, 0.4378, 0.9343),
}
_T2["LR-Purchase"] = {"train": 1.0, "test": 0.6241, "avg_pdtp": 2.8917, "r": 0.8138}
# LR-Purchase: "weak L2" (spec §4.2, C >= 1e3) fitted to train 1.0 / test 0.6241; C = 1e3 gives train 1.0
LR_PURCHASE_C = 1e3

_CORR_CFG = {
    # NB is closed form: every target and iteration. LR and NN train a model per shadow, target and LOO measurement;
    # LR-Purchase (836 x 10 weights, C = 1e3) is by far the costliest fit and gets the fewest targets
    "smoke": {"nb": {"n_targets": 20, "n_it": 3, "n_meas": 2}, "costly": {"n_targets": 8, "n_it": 2, "n_meas": 1},
              "lr_purchase": {"n_targets": 6, "n_it": 2, "n_meas": 1}, "fig3": 3, "reuse": {},
              "contrast": (("NB-Adult", 3, "per_attack"),), "nn100": {"n_targets": 4, "n_it": 1, "n_meas": 1}},
    "reduced": {"nb": {"n_targets": 100, "n_it": 30, "n_meas": 10}, "costly": {"n_targets": 15, "n_it": 8, "n_meas": 3},
                "lr_purchase": {"n_targets": 10, "n_it": 5, "n_meas": 2}, "fig3": 30, "reuse": {},
                "contrast": (("NB-Adult", 30, "per_attack"), ("LR-Adult", 8, "per_attack"),
                             ("NN-Adult", 8, "per_attack")),
                "nn100": {"n_targets": 15, "n_it": 8, "n_meas": 3}},
    # the paper's 100 targets x 100 iterations and 10 PDTP measurements, but for LR-Purchase, whose fits at that
    # scale would make it the whole run's cost (benchmarks/README.md, "Reproduction settings chosen by cost").
    # Fresh targeted shadow models for every attack (the spec's reading of §5.4: 10 per target per attack, 200,000
    # a setting and seed) where they fit: NB-Adult. The others train them once per target (the note gives the count
    # and cost of fresh ones), and the 'contrast' runs measure what the reuse changes: the same targets and halves
    # with the other reuse (NB-Adult over the same 100 iterations; LR- and NN-Adult both reuses over 10).
    "full": {"nb": {"n_targets": 100, "n_it": 100, "n_meas": 10},
             "costly": {"n_targets": 100, "n_it": 100, "n_meas": 10},
             "lr_purchase": {"n_targets": 20, "n_it": 30, "n_meas": 5}, "fig3": 100,
             "reuse": {"NB-Adult": "per_attack"},
             "contrast": (("NB-Adult", 100, "per_target"), ("LR-Adult", 10, "per_target"),
                          ("LR-Adult", 10, "per_attack"), ("NN-Adult", 10, "per_target"),
                          ("NN-Adult", 10, "per_attack")),
             "nn100": {"n_targets": 100, "n_it": 100, "n_meas": 10}},
}

# what a reuse setting is, in a row's words
_REUSE_TEXT = {"per_attack": "fresh shadow models for every attack",
               "per_target": "shadow models trained once per target and reused by its every attack"}
# measured cost of one targeted shadow model (CPU s, 1,000 training rows, one thread; benchmarks/README.md
# 'Session 32'), for the note of a setting that reuses shadow models instead
_SHADOW_FIT_S = {"LR-Adult": 0.0137, "NN-Adult": 0.0015, "NB-Purchase": 0.011, "LR-Purchase": 0.6}

# Where a row may differ, by setting
_CORR_WHY = {
    "NB-Adult": "NB numerics are Gaussian with a 1e-3 std floor (Weka's NB handles numeric precision differently), "
                "and binned low-probability outputs move PDTP in ln 3 steps",
    "LR-Adult": "our L2 logistic regression (C = 1) stands in for Weka's LMT",
    "NN-Adult": "5 epochs of per-example SGD (the paper's 100 is a maximum; long-dtp-table2)",
    "NB-Purchase": "synthetic Purchase-like data (the Kaggle data is not available), its generator calibrated to "
                   "Table 2's NB and NN accuracies",
    "LR-Purchase": "synthetic Purchase-like data; L2 logistic regression (C = 1e3) for Weka's LMT",
}


_ATTACK_NOTES = ("pooled over every attack on every target ('in' is the positive class)",
                 "the metric of each iteration's 2 x 100 attacks, averaged over the iterations (each target is in once "
                 "per iteration, so recall is the pooled one)")


def _metric_rows(prefix: str, paper: tuple, summary: dict, *, averaged: bool = True,
                 notes: tuple[str, str] = _ATTACK_NOTES) -> list:
    """An attack's accuracy, precision, recall and F1 (``{prefix} {metric}``, against ``paper``'s first four) pooled
    over every attack on every target, and (with ``averaged``) their means over the protocol's iterations (per-run
    averages, which the paper's F1 values may be: the spec leaves the aggregation open); ``notes``: the two kinds'."""
    rows = []
    for kind, suffix, note in zip(("pooled", "averaged")[: 1 + averaged], ("", ", averaged per iteration"), notes):
        for k, key in enumerate(("accuracy", "precision", "recall", "f1")):
            rows.append(row(f"{prefix} {key}{suffix}", paper[k], summary[kind][key], None, note))
    return rows


# what each Table 2 row's paper value is and the kind of quantity whose allowance applies (_kinds.py)
_TABLE2_REFERENCES = (
    (r"(train|test) accuracy$", "printed", "model accuracy"),
    (r"Pearson r", "printed", "Pearson r"),
    (r"avg PDTP$", "printed", "average PDTP"),
    (r"distance-attack accuracy", "printed", "membership-attack accuracy"),
    (r"distance-attack", "printed", "membership-attack metric"),
)

@register_per_seed(
    "long-dtp-correlation", version=1,
    paper=PAPER,
    description="The distance-based attack on every Table 2 target model but NN-Purchase (long-table1 has it): "
                "target accuracy, attack accuracy / precision / recall / F1, average PDTP and the Pearson r of "
                "average PDTP against per-target accuracy, for NB-, LR- and NN-Adult (real data; Fig 5a-c) and NB- "
                "and LR-Purchase (calibrated synthetic Purchase-like data; Fig 4b-c), plus Fig 3 (the correlation "
                "against the number of PDTP measurements averaged, NB-Purchase). Every row over 5 seeds.",
    notes="Attacks run through leakaudit.membership.protocols.long_protocol (distance attack, 5 shadow pairs per "
          "target). Shadow models: the paper trains 10 per target for each attack (spec: 200,000 a setting), and "
          "the full profile does so for NB-Adult. The other settings train them once per target and reuse them in "
          "the target's 200 attacks (each row's note gives what fresh ones would cost; NN-Adult's fresh run was "
          "begun and stopped when it ran several times its measured cost on the loaded machine): reuse leaves each "
          "attack's expected decision unchanged, but a "
          "target's 200 attacks then share one shadow draw, which widens the spread of per-target accuracies and "
          "can raise their correlation with PDTP. The rows 'N iterations, ...' measure that: the main run's D, "
          "targets, halves and average PDTP with the other reuse (NB-Adult: shadow models once per target over the "
          "same 100 iterations; LR- and NN-Adult: both reuses over the first 10 iterations, where fresh shadow "
          "models fit). The attack metrics are given pooled over every attack and averaged per iteration (the spec "
          "leaves the paper's aggregation open). PDTP is measured as §5.4 does: in the protocol's first "
          "iterations (as many as measurements: 10 at full, 5 for LR-Purchase, 100 for Fig 3), a target's "
          "measurement in iteration i being PDTP_{A, D_j}(t) with that iteration's own target model c_j = A(D_j) as "
          "the full model and A(D_j \\ {t}) retrained with an independent seed (closed form for NB; warm-started "
          "Newton for LR), not on halves drawn apart from the attacks. NN-Adult is also run with 100 epochs (rows "
          "'NN-Adult, 100 epochs', the spec's reading of the trainer; long-dtp-table2 shows why the page's setting "
          "is 5). LR- and NN- settings use fewer targets and iterations than NB's at the reduced profile (see each "
          "row's note). The full profile runs the paper's 100 targets x 100 iterations and 10 PDTP measurements "
          "everywhere but LR-Purchase, which dominates the cost: a multinomial logistic regression at C = 1e3 on "
          "1,000 x 836 records takes about 0.6 CPU s to fit, and the paper's scale needs about 2,200 fits a seed, "
          "so it runs 20 targets x 30 iterations x 5 measurements. Purchase is synthetic (the Kaggle data is not "
          "available offline); its generator is calibrated to Table 2's NB and NN train/test accuracies on Purchase "
          "before any attack or PDTP number on it is read (long-purchase-calibration). 'ours' is the mean over "
          "seeds (seed, seed + 1, ...), each seed's value and the 95% t-interval in the note; the page's rule "
          "judges it.",
    references=_TABLE2_REFERENCES,
)
def _correlation_seed(profile: str, seed: int) -> list:
    """Every long-dtp-correlation row for one seed (one draw of D, targets, halves, shadow and target models)."""
    from ..dtp import correlation_vs_measurements, pdtp_attack_correlation
    from ..learners import LogisticRegression, NaiveBayes
    from ..membership.protocols import long_protocol

    cfg = _CORR_CFG[profile]
    y, D, X, Xn, cat, nv, rng = _adult(seed)
    Xp, yp = _purchase_like(seed, profile)
    Dp = np.sort(rng.choice(len(Xp), 2000, replace=False))
    adult = _learners(cat, nv)
    setups = [
        ("NB-Adult", adult["NB-Adult"][0], Xn, y, D, "nb"),
        ("LR-Adult", adult["LR-Adult"][0], X, y, D, "costly"),
        ("NN-Adult", adult["NN-Adult"][0], X, y, D, "costly"),
        ("NB-Purchase", NaiveBayes(n_values=[2] * Xp.shape[1]), Xp, yp, Dp, "nb"),
        ("LR-Purchase", LogisticRegression(C=LR_PURCHASE_C), Xp, yp, Dp, "lr_purchase"),
    ]
    nn100 = _learners(cat, nv, nn_epochs=100)["NN-Adult"][0]
    rows = []
    for name, learner, XX, yy, DD, kind in setups:
        c = cfg[kind]
        reuse = cfg["reuse"].get(name, "per_target")
        cpu0 = time.process_time()
        n_meas = max(c["n_meas"], cfg["fig3"] if name == "NB-Purchase" else 0)
        measure, kept = _pdtp_hook(learner, XX, yy, n_meas, rng, k=c["n_meas"])
        state = int(rng.integers(2**31))
        res = long_protocol(learner, XX, yy, candidates=DD, n_targets=c["n_targets"], n_iterations=c["n_it"],
                            attacks=("distance",), shadow_reuse=reuse, pdtp=measure, random_state=state)
        targets = np.asarray(res.targets)
        dist = res.attacks["distance"]
        acc = np.asarray(dist["per_target_accuracy"])
        M = kept["M"]
        avg_pdtp = M[: c["n_meas"]].mean(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cr = pdtp_attack_correlation(avg_pdtp, acc)
        p, pa = _T2[name], _T2_ATTACK[name]
        stand_in = ""
        if reuse != "per_attack" and profile == "full":
            fresh_s = 2 * c["n_it"] * 10 * c["n_targets"] * _SHADOW_FIT_S.get(name, 0.0)
            stand_in = (f" (a stand-in for fresh shadow models per attack, which would train "
                        f"{2 * c['n_it'] * 10 * c['n_targets']:,} shadow models, about {fresh_s / 60:.0f} CPU "
                        f"minutes a seed)")
        setting = (f"{c['n_it']} iterations x 2 target models, {len(targets)} targets, 5 shadow pairs per target: "
                   f"{_REUSE_TEXT[reuse]}{stand_in}; {c['n_meas']} PDTP measurements per target (the protocol's "
                   f"first {c['n_meas']} iterations, each target model as A(D_i)); if it differs: "
                   f"{_CORR_WHY[name]}; {time.process_time() - cpu0:.0f} CPU s for this setting and seed")
        rows += [
            row(f"{name} train accuracy", p["train"], res.target_train_accuracy, None, setting),
            row(f"{name} test accuracy", p["test"], res.target_test_accuracy, 0.02),
        ]
        rows += _metric_rows(f"{name} distance-attack", pa, dist)
        rows += [
            row(f"{name} avg PDTP", p["avg_pdtp"], float(avg_pdtp.mean()), None),
            row(f"{name} Pearson r (avg PDTP vs per-target accuracy)", p["r"], cr.r, None,
                f"over {cr.n} targets (paper: 100)"),
            row(f"{name} Pearson p-value", None, cr.p_value, note=f"paper {pa[4]:.3g} with 100 targets"),
            row(f"{name} targets with avg PDTP > 1", None, cr.n_above1),
            row(f"{name} share of PDTP>1 targets with accuracy > 0.8", None, cr.frac_above1_acc_gt_08,
                note="NaN when no target has avg PDTP > 1"),
            row(f"{name} max accuracy among PDTP<0.5 targets", None, cr.max_acc_below_05,
                note="paper (NN-Purchase, max over three attacks): never above 0.665"),
            row(f"{name} max per-target accuracy", None, float(acc.max()),
                note="paper: below 0.70 for every NB- and LR-Adult target" if "Adult" in name else ""),
            row(f"{name} sd of per-target accuracy", None, float(acc.std()),
                note="the spread of the 100 targets' accuracies, which the shadow models' reuse can widen"),
            # Figs 4-5: one point per target (average PDTP, distance-attack accuracy)
            figure_data_row(f"{name}: per-target avg PDTP and distance-attack accuracy{FIGURE_DATA}", avg_pdtp, acc),
        ]
        for cname, c_it, c_reuse in cfg["contrast"]:
            if cname != name:
                continue
            # the same D, targets and halves (the same random_state); only the shadow models' reuse (and, at fewer
            # iterations, the count) differ; PDTP is the main run's, for the same targets
            alt = long_protocol(learner, XX, yy, candidates=DD, n_targets=c["n_targets"], n_iterations=c_it,
                                attacks=("distance",), shadow_reuse=c_reuse, pdtp=avg_pdtp, random_state=state)
            ad = alt.attacks["distance"]
            aacc = np.asarray(ad["per_target_accuracy"])
            tag = f"{name}, {c_it} iterations, {_REUSE_TEXT[c_reuse]}"
            rows += [
                row(f"{tag}: Pearson r", p["r"], ad["pdtp_correlation"]["r"], None,
                    "the main run's D, targets, halves and average PDTP; only the shadow models differ"
                    + ("" if c_it == c["n_it"] else " (and the iterations: fewer, as fresh shadow models cost)")),
                row(f"{tag}: max per-target accuracy", None, float(aacc.max())),
                row(f"{tag}: sd of per-target accuracy", None, float(aacc.std())),
                row(f"{tag}: distance-attack recall", pa[2], ad["pooled"]["recall"]),
            ]
        if name == "NN-Adult":
            # the spec's reading of the paper's trainer: every one of the 100 epochs (long-dtp-table2)
            n1 = cfg["nn100"]
            measure100, kept100 = _pdtp_hook(nn100, X, y, n1["n_meas"], rng)
            r100 = long_protocol(nn100, X, y, candidates=D, n_targets=n1["n_targets"], n_iterations=n1["n_it"],
                                 attacks=("distance",), shadow_reuse="per_target", pdtp=measure100,
                                 random_state=int(rng.integers(2**31)))
            d100 = r100.attacks["distance"]
            tag = "NN-Adult, 100 epochs"
            rows += [
                row(f"{tag}: train accuracy", p["train"], r100.target_train_accuracy, None,
                    f"every epoch of the trainer (the spec's reading of §5.2); {n1['n_it']} iterations, "
                    f"{n1['n_targets']} targets, {_REUSE_TEXT['per_target']} (fresh ones would cost about 20 "
                    f"times the 5-epoch setting's), {n1['n_meas']} PDTP measurements per target"),
                row(f"{tag}: test accuracy", p["test"], r100.target_test_accuracy),
                row(f"{tag}: avg PDTP", p["avg_pdtp"], float(kept100["M"].mean())),
                row(f"{tag}: Pearson r", p["r"], d100["pdtp_correlation"]["r"]),
            ]
            rows += _metric_rows(f"{tag}: distance-attack", pa, d100, averaged=False)
        if name == "NB-Purchase":
            ks, rs = correlation_vs_measurements(M, acc)
            for k in sorted({1, 2, 5, 10, min(len(ks), 30), len(ks)}):
                if k <= len(ks):
                    rows.append(row(f"Fig 3: r with {k} PDTP measurements averaged", None, float(rs[k - 1]),
                                    note="paper: rises with the count and flattens after about 10"))
    return rows


def _sequence(values) -> tuple:
    """A removal curve's max DTP at each step (3 decimals, as its note prints them), as the points a figure draws."""
    return ((None, tuple((float(i), float(f"{v:.3f}")) for i, v in enumerate(values))),)


@register(
    "long-dtp-fig6", version=1,
    paper=PAPER,
    description="§8 / Fig 6: maximum DTP after removing high-risk records from naive Bayes trained on all 48,842 Adult "
                "records restricted to age, marital status, race, sex (the offline stand-in for 1.6M ACS 2013 records; "
                "ACS PUMS is not available here). Unsmoothed categorical NB, outputs binned at 0.01 (spec §7 default).",
    notes="Deterministic: every step uses all 48,842 records and closed-form naive Bayes, and no step draws a random "
          "number, so every seed gives the same values and one run stands for all (the 5-seed rule applies to "
          "results that depend on randomness). The paper's 3.09 and 0.65 are ACS values and are not expected to "
          "match; the expected behaviour is a large drop "
          "after the first removals, a rebound, then a sawtooth. Greedy re-ranking and group removal are our "
          "improvements (spec §7). 'DTP' is PDTP at x(t), which Thm 6.2 makes effectively DTP for naive Bayes.",
    randomised=False,
    references=((r"max DTP", "printed", "max DTP"),),
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
        row("initial max DTP", 3.09, mv[0], None, "Adult 4-attribute proxy, not ACS 2013 (not available here): the "
            "proxy has 4 records that are alone in their (age, class) cell, each at ln(p/0.005)"),
        row("max DTP after removing 1 record", 0.65, mv[1], None, "Adult proxy: the next singleton cell keeps the max "
            "high until all 4 are removed (then 0.51, i.e. ln 2-type pairs)"),
        row("max DTP after removing 2 records", 3.0, mv[2], None,
            "paper: 'back to about 3'; Adult proxy differs as above"),
    ]
    rebound = any(mv[i + 1] > mv[i] + 0.5 for i in range(len(mv) - 1))
    rows.append(row("sorted removal: max DTP sequence", None, None,
                    note="; ".join(f"{v:.3f}" for v in mv) + (" (rebounds: sawtooth)" if rebound else ""),
                    points=_sequence(mv)))
    rows.append(row("sorted removal: first step with max DTP <= 1", None, s.stopped_at))
    rows.append(row("sorted removal: accuracy before / after", None, s.accuracy[-1],
                    note=f"before {s.accuracy[0]:.4f}, after {len(s.removed)} removals {s.accuracy[-1]:.4f}"))
    for strat in ("greedy", "group"):
        r = reduce_dtp(nb, X, y, strategy=strat, max_removals=steps)
        rows.append(row(f"{strat}: max DTP sequence", None, None, note="; ".join(f"{v:.3f}" for v in r.max_values),
                        points=_sequence(r.max_values)))
        rows.append(row(f"{strat}: first step with max DTP <= 1", None, r.stopped_at,
                        note=f"{len(r.removed)} records removed in {len(r.max_values) - 1} steps; accuracy "
                             f"{r.accuracy[0]:.4f} -> {r.accuracy[-1]:.4f}"))
    lap = NaiveBayes(n_values=nv, alpha=1.0, prior_smoothing=True)
    from ..dtp import pdtp

    rows.append(row("Laplace-smoothed NB: initial max DTP", None, float(np.max(pdtp(lap, X, y).values)),
                    note="spec §7: smoothing caps a 1->0 count change near ln 2 per attribute; with 0.01 bins the "
                         "lowest-bin step ln 3 can still appear"))
    return rows


def _noise_floors(nn, X, y, q, n_train: int, n_models: int, rng, random_state: int):
    """Figs 7-8 (§9) at the individuals ``q``: the seed noise floor of ``n_models`` networks on one ``n_train``-record
    sample (drawn with ``rng``) of the records outside ``q``, and the sampling floor of as many on fresh samples with
    one seed."""
    from ..dtp import sampling_noise_floor, seed_noise_floor

    rest = np.setdiff1d(np.arange(len(y)), q)
    S = np.sort(rng.choice(rest, n_train, replace=False))
    return (seed_noise_floor(nn, X[S], y[S], X_query=X[q], y_query=y[q], n_models=n_models, random_state=random_state),
            sampling_noise_floor(nn, X[rest], y[rest], n_train=n_train, X_query=X[q], y_query=y[q], n_models=n_models,
                                 seed_policy="fixed", random_state=random_state))


@register_per_seed(
    "long-dtp-bounds", version=1,
    paper=PAPER,
    description="DTP beyond PDTP: exact DTP by enumeration on the Adult 4-attribute proxy (NB) against PDTP and the "
                "stability bounds (Thm 6.2 with Prop 6.5; the normalised-NB bound max(2 PDTP, ln δ_t)); ln δ of "
                "Prop 6.5 for NB-Adult; Thm 6.9 for LR-Adult; the search estimate DTP/PDTP for LR- and NN-Adult; the "
                "seed and sampling noise floors (Figs 7–8) beside NN PDTP.",
    notes="None of these quantities has a number in the paper except the spec's computed ln δ ≈ 1.94 for NB-Adult "
          "(m = 13, v = 42, n_ymin ≈ 239, n = 1000). Unbinned values where the theorem ignores binning. LR and NN use "
          "long-dtp-table2's configuration (C = 1; 5 epochs of per-example SGD). The noise floors follow §9: models "
          "trained on 10,000 records drawn uniformly from all of Adult (one set with fresh initialisations for Fig 7; "
          "a fresh sample per model with one seed for Fig 8), queried at individuals in no training set; PDTP is "
          "Table 2's (1,000 training records). Every row is the mean over 5 seeds (seed, seed + 1, ...), each "
          "seed's value and the 95% t-interval in its note.",
    references=(
        (r"bound max\(2·PDTP, ln δ_t\) holds", "formula", "claim"),
        (r"^Prop 6\.5", "formula", "closed form"),
        (r"records > 1", "claim", "claim"),
        (r": mean$", "printed", "average PDTP"),
    ),
)
def _bounds_seed(profile: str, random_state: int):
    """Every long-dtp-bounds row for one seed."""
    from ..data import load_adult
    from ..dtp import (
        dtp_exact,
        dtp_search_estimate,
        logistic_lipschitz_bound,
        naive_bayes_delta,
        normalised_nb_dtp_bound,
        pdtp,
    )
    from ..learners import NaiveBayes
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
    nb, lr, nn = (learner for learner, _ in _learners(cat, nv).values())  # Table 2's NB-, LR- and NN-Adult
    # bin-width sensitivity (spec §2.5, §8 item 4): NB-Adult PDTP of all 1,000 training records
    for w in (None, 0.001, 0.01, 0.05):
        pv = np.asarray(pdtp(nb, Xn[T], y[T], bin_width=w).values)
        rows.append(row(f"NB-Adult PDTP with bin width {w if w else 'none'}: share of records > 1", None,
                        float(np.mean(pv > 1)), note=f"mean {pv.mean():.4f}, max {pv.max():.4f}; the lowest-bin "
                        f"step is ln 3 = 1.0986 for every width, so coarser bins do not remove > 1 values"))
    # the same 1,000 records both ways, as `leakaudit dtp pdtp --data adult --model nb [--lowest-bins ignore]`
    for mode in ("keep", "ignore"):
        pv = np.asarray(pdtp(nb, Xn[T], y[T], bin_width=0.01, lowest_bins=mode).values)
        label = "the paper's binning" if mode == "keep" else "moves between the two lowest bins ignored"
        rows += [
            row(f"NB-Adult PDTP, bins of 0.01, {label}: records > 1 (of 1,000)", 0.0 if mode == "keep" else None,
                float(np.sum(pv > 1)), None, f"--lowest-bins {mode}; {int(np.sum(np.isclose(pv, math.log(3))))} "
                f"at exactly ln 3; paper: 'we did not find any records with PDTP greater than 1'", bound="upper"),
            row(f"NB-Adult PDTP, bins of 0.01, {label}: mean", 0.0299 if mode == "keep" else None, float(pv.mean()),
                None, f"--lowest-bins {mode}; max {pv.max():.4f}; paper's Table 2 average 0.0299 (over targets "
                      f"and 10 measurements; long-dtp-table2 has that protocol)"),
        ]
    n_rec = {"smoke": 3, "reduced": 20, "full": 100}[profile]
    recs = np.arange(n_rec)
    lip = logistic_lipschitz_bound(lr, X[T], y[T], records=recs, X_domain=X[D])
    pl = pdtp(lr, X[T], y[T], records=recs, bin_width=None)
    rows += [
        row("LR-Adult Thm 6.9: L = 2(max ||x||_1 + 1)", None, lip.lipschitz_constant),
        row("LR-Adult Thm 6.9: median per-record bound L·|Δu|_inf (unbinned)", None, float(np.median(lip.values))),
        row("LR-Adult: median PDTP (unbinned)", None, float(np.median(pl.values))),
    ]
    kw = {"n_random": {"smoke": 20, "reduced": 100, "full": 200}[profile], "n_hill": 5,
              "n_gradient_steps": {"smoke": 3, "reduced": 15, "full": 30}[profile]}
    s_lr = dtp_search_estimate(lr, X[T], y[T], records=recs, X_reference=X[D], random_state=random_state,
                               bin_width=None, **kw)
    rows += [
        row("LR-Adult: median search DTP estimate / PDTP (unbinned)", None, _median_finite(s_lr.ratio),
            note="an empirical δ̂ (the search gives a lower estimate of DTP)"),
        row("LR-Adult: median search DTP estimate (unbinned)", None, float(np.median(s_lr.values)),
            note="compare with the Thm 6.9 upper bound above"),
    ]
    # 3. NN-Adult: search estimate (paired LOO models), PDTP and the noise floors
    n_nn = {"smoke": 2, "reduced": 10, "full": 50}[profile]
    s_nn = dtp_search_estimate(nn, X[T], y[T], records=np.arange(n_nn), X_reference=X[D], random_state=random_state,
                               seed_policy="paired", bin_width=None, **kw)
    rows += [
        row("NN-Adult: median search DTP estimate / PDTP (paired seeds, unbinned)", None, _median_finite(s_nn.ratio)),
        row("NN-Adult: median PDTP (paired seeds, unbinned)", None, float(np.median(s_nn.pdtp))),
    ]
    # Figs 7-8 (§9): 100 NNs trained on one 10,000-record set drawn uniformly from Adult (seed floor: only the
    # initialisation varies) and 100 NNs on 100 different 10,000-record samples with one seed (sampling floor),
    # each predicting individuals outside every training set.
    n_models = {"smoke": 3, "reduced": 20, "full": 100}[profile]
    n_train = {"smoke": 1000, "reduced": 10000, "full": 10000}[profile]
    fl, fs = _noise_floors(nn, X, y, rng2.choice(len(y), n_nn, replace=False), n_train, n_models, rng2, random_state)
    pn = pdtp(nn, X[T], y[T], records=np.arange(n_nn), random_state=random_state)
    rows += [
        row("NN-Adult: median PDTP (independent seeds, binned)", None, float(np.median(pn.values)),
            note=f"{NN_ADULT_EPOCHS} epochs of per-example SGD on 1,000 training records (Table 2's setting)"),
        row("NN-Adult: median seed noise floor std ln p(y|x), true label (Fig 7)", None, float(np.median(fl.std_log_p)),
            note=f"{n_models} models on one {n_train}-record training set (paper: 100 models, 10,000 records), "
                 f"queried at {n_nn} individuals outside it; binned"),
        row("NN-Adult: median seed noise floor, max over classes (Fig 7)", None, float(np.median(fl.max_std_log_p)),
            note="comparable with PDTP, which is also a max over classes"),
        row("NN-Adult: median sampling noise floor std ln p(y|x), true label (Fig 8)", None,
            float(np.median(fs.std_log_p)), note=f"{n_models} models on random {n_train}-record samples of Adult "
                                                 f"without the queried individuals, same seed"),
        row("NN-Adult: median sampling noise floor, max over classes (Fig 8)", None, float(np.median(fs.max_std_log_p))),
    ]
    return rows


@register_per_seed(
    "long-dtp-noise", version=1,
    paper=PAPER,
    description="§9, Figs 7-8: how much a network's prediction for one individual varies without any change of its "
                "record: 100 NNs (Table 2's NN-Adult: 64 tanh units, 5 epochs of per-example SGD) trained on one "
                "10,000-record sample of Adult with different initialisations (Fig 7), and 100 trained on 100 "
                "different 10,000-record samples with one initialisation seed (Fig 8); the histograms of their "
                "predicted P(>50K) for an individual of each class, with the spread's noise floor.",
    notes="The paper prints no number for these figures, only the histograms, and does not say how its two "
          "individuals were chosen: each seed here draws one individual of each class uniformly from Adult and "
          "keeps both out of every training set, so the five seeds are five pairs of individuals and each "
          "histogram is drawn per seed. Fig 8's sample size is unstated (the spec infers 10,000). The noise floor "
          "(std of ln p(y|x) over the models, binned at 0.01) is the spec's statistic (§5.6), to compare with PDTP "
          "(long-dtp-bounds sets the medians beside NN-Adult's PDTP). Every row is the mean over 5 seeds (seed, "
          "seed + 1, ...), each seed's value and the 95% t-interval in its note.",
)
def _noise_seed(profile: str, random_state: int):
    """Figs 7-8 for one seed: P(>50K) of two individuals (one of each class, in no training set) under every model."""
    y, _, X, _, cat, nv, rng = _adult(random_state)
    nn = _learners(cat, nv)["NN-Adult"][0]
    n_models = {"smoke": 3, "reduced": 30, "full": 100}[profile]
    n_train = {"smoke": 1000, "reduced": 10000, "full": 10000}[profile]
    q = np.array([rng.choice(np.flatnonzero(y == c)) for c in (0, 1)])  # (a) low salary, (b) high salary
    floors = dict(zip("78", _noise_floors(nn, X, y, q, n_train, n_models, rng, random_state), strict=True))
    rows = []
    for fig, fl in floors.items():
        p_true = np.asarray(fl.p_true)  # (n_models, 2): p(y_q | x_q), y = 0 then 1
        for k, (panel, who) in enumerate((("a", "low-salary individual"), ("b", "high-salary individual"))):
            p_high = p_true[:, k] if k == 1 else 1.0 - p_true[:, k]
            tag = f"Fig {fig}{panel}: {who}"
            rows += [
                row(f"{tag}: mean P(>50K) over models", None, float(p_high.mean())),
                row(f"{tag}: sd of P(>50K) over models", None, float(p_high.std(ddof=1)),
                    note=f"the first seed's {n_models} models range from {p_high.min():.4f} to {p_high.max():.4f}"),
                row(f"{tag}: noise floor std ln p(y|x)", None, float(fl.std_log_p[k]),
                    note="outputs binned at 0.01, as PDTP's are: a record whose PDTP is below this is hidden by "
                         "the noise (§9)"),
                figure_data_row(f"{tag}: P(>50K) of each model{FIGURE_DATA}", p_high, np.arange(n_models)),
            ]
    return rows


# long-dtp-lr-setup: which setup gives Table 2's LR-Adult numbers, one factor at a time around the paper's setting
# (_LRSetting, _LR_SETUP_GRID); shadow models once per target (fresh ones per attack would train 2 x iterations x
# 100 x 2 x pairs models a setting). Its counts per profile:
_LR_SETUP_CFG = {
    "smoke": {"n_targets": 10, "n_it": 2, "n_meas": 1},
    "reduced": {"n_targets": 100, "n_it": 10, "n_meas": 2},
    "full": {"n_targets": 100, "n_it": 100, "n_meas": 10},
}


class _LRSetting(NamedTuple):
    """One setting of long-dtp-lr-setup; the defaults are the paper's setting as the page runs it."""

    learner: str = "L2 LR (C = 1)"  # or "SimpleLogistic" or "LMT"
    n_train: int = 1000
    pairs: int = 5
    targets: str = "uniform"  # "class >50K": uniformly from D's >50K records; "outside the bulk": see _lr_setup_targets
    encoding: str = "one-hot"  # "min-max numerics": scaled to [0, 1] on D; "ordinal categoricals": one code column each
    convergence: str = "tol 1e-8"  # "tol 1e-2": Newton's relative gradient tolerance; "2 Newton steps": max_iter = 2
    distance: str = "binned KL"  # "renormalised binned KL"; "unbinned KL" (raw outputs)

    def tag(self) -> str:
        """The rows' label: the learner, |T| and pairs (the first grid's labels), then every other factor moved."""
        base = f"LR-Adult as {self.learner}, n = {self.n_train}, {self.pairs} shadow pair{'s' if self.pairs > 1 else ''}"
        moved = [("targets " + v if f == "targets" else v) for f, v in zip(self._fields[3:], self[3:], strict=True)
                 if v != self._field_defaults[f]]
        return ", ".join([base, *moved])


_PAPER_SETTING = _LRSetting()
_LR_SETUP_GRID = (
    _PAPER_SETTING, _PAPER_SETTING._replace(n_train=500), _PAPER_SETTING._replace(pairs=1),
    _LRSetting("SimpleLogistic"), _LRSetting("SimpleLogistic", 500), _LRSetting("SimpleLogistic", pairs=1),
    _LRSetting("LMT"),
    _PAPER_SETTING._replace(targets="class >50K"), _PAPER_SETTING._replace(targets="outside the bulk"),
    _PAPER_SETTING._replace(encoding="min-max numerics"), _PAPER_SETTING._replace(encoding="ordinal categoricals"),
    _PAPER_SETTING._replace(convergence="tol 1e-2"), _PAPER_SETTING._replace(convergence="2 Newton steps"),
    _PAPER_SETTING._replace(distance="renormalised binned KL"), _PAPER_SETTING._replace(distance="unbinned KL"),
)
# "outside the bulk": targets drawn uniformly from the fraction of D farthest from their nearest neighbours
_BULK_K, _BULK_FRACTION = 5, 0.1


def _lr_setup_learner(st: _LRSetting, ds):
    from ..learners import LMT, LogisticRegression, SimpleLogistic

    if st.learner == "SimpleLogistic":
        return SimpleLogistic()
    if st.learner == "LMT":  # C4.5 on Adult's attributes as Weka reads the file: numeric, or nominal's columns
        groups, numeric = ds.encoder().groups, {f.name for f in ds.features if f.kind == "numeric"}
        return LMT(attributes=[groups[f].start if f in numeric else list(range(groups[f].start, groups[f].stop))
                               for f in ds.feature_names])
    loose = {"tol 1e-8": {}, "tol 1e-2": {"tol": 1e-2}, "2 Newton steps": {"max_iter": 2}}[st.convergence]
    return LogisticRegression(C=LR_ADULT_C, **loose)


def _lr_setup_encoding(ds, D, encoding: str):
    """Adult's rows encoded with statistics of D: one-hot categoricals with z-scored numerics (the page's), with the
    numerics min-max scaled instead, or each categorical one column of its category codes (all columns z-scored)."""
    X, _ = ds.encode(fit_idx=D)
    if encoding == "min-max numerics":
        return _minmax(X, D)
    if encoding == "ordinal categoricals":
        from sklearn.preprocessing import StandardScaler

        from ..learners.naive_bayes import encode_for_naive_bayes

        Xo = encode_for_naive_bayes(ds.frame)[0].astype(float)
        return StandardScaler().fit(Xo[D]).transform(Xo)
    return X


def _lr_setup_targets(X, y, D, n_targets: int, how: str, rng):
    """None for the protocol's own uniform draw; else ``n_targets`` rows of D drawn uniformly from D's >50K records
    or from the :data:`_BULK_FRACTION` of D with the largest mean distance to their :data:`_BULK_K` nearest other
    records of D (Euclidean, on the encoded rows)."""
    if how == "uniform":
        return None
    if how == "class >50K":
        pool = D[y[D] == 1]
    else:
        from sklearn.neighbors import NearestNeighbors

        dist, _ = NearestNeighbors(n_neighbors=_BULK_K + 1).fit(X[D]).kneighbors(X[D])
        far = np.argsort(-dist[:, 1:].mean(axis=1), kind="stable")[: max(n_targets, int(_BULK_FRACTION * len(D)))]
        pool = D[np.sort(far)]
    return np.sort(rng.choice(pool, n_targets, replace=False))


@register_per_seed(
    "long-dtp-lr-setup", version=3,
    paper=PAPER,
    description="Issue 65's sweep for Table 2's LR-Adult row over what the paper leaves unstated or leakaudit chose, "
                "one factor at a time around the paper's setting (the page's L2 logistic regression, C = 1, at "
                "|T| = 1,000 with 5 shadow pairs, 100 targets drawn uniformly from D, one-hot categoricals with "
                "z-scored numerics, Newton to a relative gradient of 1e-8, the distance attack's KL on binned "
                "outputs): the learner (Weka's SimpleLogistic, LogitBoost with its rounds chosen by cross-validation "
                "on every fit, the paper's learner at a single leaf; also at |T| = 500 and 1 pair; and Weka's LMT "
                "itself, the learner the paper names: leakaudit.learners.LMT at Weka's defaults), |T| = 500, 1 shadow "
                "pair, "
                "the targets (from D's >50K records; from the 10% of D farthest from their 5 nearest neighbours), "
                "the encoding (numerics min-max scaled; categoricals as one ordinal column each), the solver's "
                "convergence (relative gradient 1e-2; 2 Newton steps) and the attack's distance (KL on binned "
                "outputs renormalised to sum 1; KL on raw outputs), each judged on every Table 2 number at once: "
                "train and test accuracy, attack accuracy (its advantage over chance), precision, recall, average "
                "PDTP and r. Every row over 5 seeds.",
    notes="Attacks through leakaudit.membership.protocols.long_protocol (distance attack; targets other than its "
          "uniform draw passed as targets=), PDTP as long-dtp-correlation measures it (the protocol's first "
          "iterations, each target model as A(D_i), A(D_i \\ {t}) retrained: SimpleLogistic and LMT have no closed "
          "form, and their leave-one-out models choose their rounds (and LMT its tree) again; LMT splits Adult's "
          "attributes as Weka reads them (numeric ones cut, each categorical one, sex included, one child per "
          "value); a loosely converged L2 model's leave-one-out model is trained from scratch as loosely). "
          "Reduced cost: 10 iterations (20 attacks a target, against "
          "the paper's 200), 2 PDTP measurements a target (against 10), shadow models trained once per target. "
          "For a seed and |T| every setting has the same D; those drawing the targets uniformly also the same "
          "targets, halves and shadow training sets (the encoding, convergence and distance rows are paired with "
          "the paper's setting). PDTP keeps the paper's 0.01 bins in every row (the distance rows change only the "
          "attack). NN-Adult's epochs and input scaling are swept apart, by benchmarks/long_nn_adult_epochs.py "
          "(long-dtp-table2's NN protocol at other epochs and min-max inputs), not here. Which setting comes nearest "
          "each LR-Adult number is the page's settings line, computed from the rows' classes; the per-setting "
          "table and what each factor moves: docs/long-lr-setup.md.",
    references=_TABLE2_REFERENCES,
)
def _lr_setup_seed(profile: str, seed: int) -> list:
    """Every long-dtp-lr-setup row for one seed: each grid setting on its own draw of D, targets and halves (the same
    draws for settings of equal |T| that draw the targets uniformly)."""
    from ..data import load_adult
    from ..dtp import pdtp_attack_correlation
    from ..membership.distance import DistanceAttack
    from ..membership.protocols import long_protocol

    c = _LR_SETUP_CFG[profile]
    p, pa = _T2["LR-Adult"], _T2_ATTACK["LR-Adult"]
    ds = load_adult(columns="long")
    y = ds.y
    rows = []
    for st in _LR_SETUP_GRID:
        rng = np.random.default_rng([seed, st.n_train])  # the same D, targets and halves for both learners
        D = np.sort(rng.choice(len(ds), 2 * st.n_train, replace=False))
        X = _lr_setup_encoding(ds, D, st.encoding)
        targets = _lr_setup_targets(X, y, D, c["n_targets"], st.targets, np.random.default_rng([seed, st.n_train, 1]))
        learner = _lr_setup_learner(st, ds)
        # a loosely converged model's leave-one-out model is trained from scratch as loosely (the batched shortcut
        # starts from the full model's solution, which already meets a loose tolerance)
        method = "auto" if st.convergence == "tol 1e-8" else "retrain"
        dist_attack = DistanceAttack(bin_width=None if st.distance == "unbinned KL" else 0.01,
                                     renormalize=st.distance == "renormalised binned KL")
        cpu0 = time.process_time()
        measure, kept = _pdtp_hook(learner, X, y, c["n_meas"], rng, method=method)
        with warnings.catch_warnings():
            # 2 Newton steps stop before the tolerance by design
            warnings.filterwarnings("ignore", "logistic regression did not converge", RuntimeWarning)
            res = long_protocol(learner, X, y, candidates=D, n_targets=c["n_targets"], targets=targets,
                                n_iterations=c["n_it"], attacks=("distance",), shadow_reuse="per_target",
                                n_shadow_pairs=st.pairs, distance_attack=dist_attack, pdtp=measure,
                                random_state=int(rng.integers(2**31)))
        dist = res.attacks["distance"]
        acc = np.asarray(dist["per_target_accuracy"])
        avg = kept["M"].mean(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cr = pdtp_attack_correlation(avg, acc)
        tag = st.tag()
        drawn = {"uniform": "drawn uniformly from D", "class >50K": "drawn uniformly from D's >50K records",
                 "outside the bulk": f"drawn uniformly from the {_BULK_FRACTION:.0%} of D farthest (mean Euclidean "
                                     f"distance to the {_BULK_K} nearest) from the rest"}[st.targets]
        setting = (f"{c['n_it']} iterations x 2 target models on halves of D ({2 * st.n_train} Adult records, "
                   f"{st.encoding}), {len(acc)} targets {drawn} and fixed, {st.pairs} shadow pair(s) per target "
                   f"trained once and reused by its every attack, distance {st.distance}, {c['n_meas']} PDTP "
                   f"measurements per target (the protocol's first iterations, leave-one-out "
                   f"{'retrained' if method == 'retrain' else 'as the learner gives it'}); "
                   f"{time.process_time() - cpu0:.0f} CPU s for this setting and seed")
        pooled = dist["pooled"]
        rows += [
            row(f"{tag}: train accuracy", p["train"], res.target_train_accuracy, None, setting),
            row(f"{tag}: test accuracy", p["test"], res.target_test_accuracy),
            row(f"{tag}: distance-attack accuracy", pa[0], pooled["accuracy"], None,
                "pooled over every attack on every target; judged on its advantage over 0.5"),
            row(f"{tag}: distance-attack precision", pa[1], pooled["precision"]),
            row(f"{tag}: distance-attack recall", pa[2], pooled["recall"]),
            row(f"{tag}: distance-attack f1", pa[3], pooled["f1"]),
            row(f"{tag}: avg PDTP", p["avg_pdtp"], float(avg.mean())),
            row(f"{tag}: Pearson r (avg PDTP vs per-target accuracy)", p["r"], cr.r, None,
                f"over {cr.n} targets (paper: 100)"),
            row(f"{tag}: max per-target accuracy", None, float(acc.max()),
                note="paper: below 0.70 for every LR-Adult target (§5.5)"),
            row(f"{tag}: targets with avg PDTP > 1", None, cr.n_above1, note="paper: none for LR-Adult (§5.5)"),
        ]
        if st.learner == "SimpleLogistic":
            rows.append(row(f"{tag}: LogitBoost rounds of a target model", None,
                            float(np.mean([learner.fit(X[h], y[h], n_classes=2).n_rounds_
                                           for h in (D[: st.n_train], D[st.n_train:])])),
                            note="the rounds 5-fold cross-validation chose on D's first and second half by row index (mean)"))
        if st.learner == "LMT":
            fits = [learner.fit(X[h], y[h], n_classes=2) for h in (D[: st.n_train], D[st.n_train:])]
            rows.append(row(f"{tag}: leaves of a target model", None, float(np.mean([m.n_leaves_ for m in fits])),
                            note="the pruned trees on D's first and second half by row index (mean); LogitBoost "
                                 f"rounds a node: {', '.join(str(m.k_) for m in fits)}"))
    return rows
