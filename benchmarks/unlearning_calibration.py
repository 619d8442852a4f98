"""Calibration of ``leakaudit.unlearning_check`` where the truth is known, over seeds.

Each seed draws ``--n-forget + --n-retain + --n-nonmembers`` rows of Adult (Long et al.'s 13 attributes, leakaudit's
one-hot encoding, as ``leakaudit.cli.membership.load_dataset`` gives them), split at random into forget, retain and
non-member records. The model before unlearning trains on forget + retain; the verdict is computed for these
"after" models:

* ``exact``: retrained on the retain set alone (another seed): the truth is "forgotten"; a "not forgotten" is a
  false alarm, which must happen at most at the rate 1 - confidence.
* ``none``: the model before unlearning itself (after == before): the truth is "not forgotten"; it must be said
  wherever the before-model's signal of the forget set is measurable (the check "forget signal before unlearning"
  says "leaks").
* ``gradient-ascent`` (logistic regression and the MLP): ``--ga-steps`` full-batch steps of gradient *ascent* on the forget
  set's mean cross-entropy, step size ``--ga-lr``, starting from the before-model: a common approximate method.
* ``over-unlearn`` (logistic regression and the MLP): gradient ascent pushed far, ``--over-steps`` steps of step size
  ``--over-lr``: the truth is "not forgotten" or "over-unlearned", never "forgotten".
* ``random-label`` (logistic regression and the MLP): ``--rl-steps`` full-batch steps of gradient descent, step size
  ``--rl-lr``, on the forget set with each label replaced by a random one (a common approximate method: the model is
  taught that the forget records' labels are noise).
* ``grad-diff`` (the MLP): the gradient-difference method pushed far, ``--gd-steps`` full-batch steps of step size
  ``--gd-lr``, each an ascent on the forget set's mean cross-entropy and a descent on the retain set's: the forget
  records end with a higher loss than the non-members (on seeds 0 and 1: 1.68 and 5.90 against 1.43 and 4.65), the
  over-unlearning the two-sided check exists for; the truth is "over-unlearned" or "not forgotten", never
  "forgotten". (Plain ascent on the MLP collapses it to one class for every record at a few steps of size 1.)
* ``keep-half``: retrained on the retain set and half the forget set (another seed): a known share, 0.5, of the
  forget set kept; whether the remembered proportion's interval covers it is recorded.
* ``fine-tune``: from the before-model, on the retain set alone: for logistic regression ``--ft-steps`` steps of
  gradient descent on its regularised objective (scikit-learn's, per record), step size ``--ft-lr``; for the MLP
  ``--mlp-ft-epochs`` more epochs of its own Adam (``partial_fit``): the other common approximate method.

Models (fitted on the table's own columns, so the reference models are scikit-learn clones with spawned seeds):
``LogisticRegression(C=1)``, scikit-learn's default (a deterministic recipe: every retrained model is the same),
``RandomForestClassifier(50 trees)`` and ``MLPClassifier(64 ReLU units, Adam, 100 epochs)`` (recipes whose seed
matters, so retraining has a spread).

Usage: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/unlearning_calibration.py [--seeds 10] [--models logistic,forest]
    [--reference-models 16] [--out benchmarks/results/unlearning_calibration.json]
Prints one line per run and a table of rates with exact (Clopper-Pearson) 95% intervals.
``--section F1.json F2.json ...`` prints docs/calibration.md's section from such result files instead.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from leakaudit.audit.unlearning import OUTCOMES


#: the MLP's epochs (Adam, scikit-learn's defaults otherwise)
MLP_EPOCHS = 100

#: the logistic model's inverse regularisation (scikit-learn's default; it memorises 300 Adult rows measurably)
C_LOGISTIC = 1.0


def _split(seed: int, n_f: int, n_r: int, n_n: int):
    from leakaudit.cli.membership import load_dataset

    X, y, _ = load_dataset("adult", n_f + n_r + n_n, seed)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(y=y)
    df = df.iloc[np.random.default_rng(seed).permutation(len(df))].reset_index(drop=True)
    return df.iloc[:n_f], df.iloc[n_f:n_f + n_r], df.iloc[n_f + n_r:]


def _fit(kind: str, df: pd.DataFrame, seed: int):
    import warnings

    from sklearn.ensemble import RandomForestClassifier
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    est = {"logistic": lambda: LogisticRegression(C=C_LOGISTIC, max_iter=5000),
           "forest": lambda: RandomForestClassifier(n_estimators=50, random_state=seed),
           "mlp": lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=MLP_EPOCHS, random_state=seed)}[kind]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed number of epochs, as the recipe has
        return est.fit(df.drop(columns="y"), df["y"])


def _mlp_fine_tune(model, retain: pd.DataFrame, epochs: int):
    """A copy of the fitted MLPClassifier after ``epochs`` more epochs of its own Adam on the retain set
    (``partial_fit``): fine-tuning on the retain set."""
    import copy

    m = copy.deepcopy(model)
    for _ in range(epochs):
        m.partial_fit(retain.drop(columns="y"), retain["y"])
    return m


def _logistic_steps(model, df: pd.DataFrame, *, steps: int, lr: float, sign: float, l2: float):
    """A copy of the fitted binary logistic ``model`` after ``steps`` full-batch steps on ``df``'s mean cross-entropy
    (+ ``l2`` ||w||^2 / 2): ``sign`` = +1 ascends (gradient ascent on the forget set), -1 descends (fine-tuning)."""
    import copy

    m = copy.deepcopy(model)
    X, y = df.drop(columns="y").to_numpy(float), df["y"].to_numpy(float)
    w, b = m.coef_[0].copy(), float(m.intercept_[0])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
        gw, gb = X.T @ (p - y) / len(y) + l2 * w, float(np.mean(p - y))
        w, b = w + sign * lr * gw, b + sign * lr * gb
    m.coef_, m.intercept_ = w[None, :], np.array([b])
    return m


def _mlp_gradients(Ws, bs, X, y):
    """The gradients of a binary MLP's mean cross-entropy on (X, y) (ReLU hidden layers, one logistic output unit,
    as scikit-learn's MLPClassifier has), by back-propagation: (weight gradients, bias gradients)."""
    from scipy.special import expit

    hs = [X]
    for W, b in zip(Ws[:-1], bs[:-1]):
        hs.append(np.maximum(hs[-1] @ W + b, 0.0))
    g = (expit(hs[-1] @ Ws[-1] + bs[-1]) - y[:, None]) / len(y)  # d mean loss / d output logit
    gWs, gbs = [None] * len(Ws), [None] * len(Ws)
    for i in range(len(Ws) - 1, -1, -1):
        gWs[i], gbs[i] = hs[i].T @ g, g.sum(axis=0)
        if i:
            g = (g @ Ws[i].T) * (hs[i] > 0)
    return gWs, gbs


def _mlp_steps(model, df: pd.DataFrame, *, steps: int, lr: float, sign: float, retain: pd.DataFrame | None = None):
    """A copy of the fitted binary MLPClassifier ``model`` after ``steps`` full-batch steps on ``df``'s mean
    cross-entropy: ``sign`` = +1 ascends (gradient ascent), -1 descends (the random-label method's descent on
    relabelled records). With ``retain``, each step also descends on the retain set's mean cross-entropy (the
    gradient-difference method: forget by ascent, keep the retain set's fit by descent)."""
    import copy

    m = copy.deepcopy(model)
    sets = [(df, sign)] + ([(retain, -1.0)] if retain is not None else [])
    data = [(d.drop(columns="y").to_numpy(float), d["y"].to_numpy(float), s) for d, s in sets]
    Ws, bs = [W.copy() for W in m.coefs_], [b.copy() for b in m.intercepts_]
    for _ in range(steps):
        for X, y, s in data:
            gWs, gbs = _mlp_gradients(Ws, bs, X, y)
            Ws = [W + s * lr * gW for W, gW in zip(Ws, gWs)]
            bs = [b + s * lr * gb for b, gb in zip(bs, gbs)]
    m.coefs_, m.intercepts_ = Ws, bs
    return m


def _cp(k: int, n: int) -> tuple[float, float]:
    from leakaudit.metrics import clopper_pearson

    return clopper_pearson(k, n, confidence=0.95)


def table_lines(table: list[dict]) -> list[str]:
    """The Markdown table of outcome rates (``table``: the rows :func:`main` returns)."""
    out = ["| model | after | runs | forgotten | not forgotten | over-unlearned | inconclusive | excess AUC, mean (sd) "
           "| before leaks |", "|---|---|---|---|---|---|---|---|---|"]
    for t in table:
        cells = [f"{t[o]['count']}/{t['runs']} [{t[o]['ci95'][0]:.2f}, {t[o]['ci95'][1]:.2f}]" if o in t else "-"
                 for o in OUTCOMES]  # "-": a result file from before the outcome existed
        sd = f"{t['excess_sd']:.3f}" if t["excess_sd"] is not None else "-"
        out.append(f"| {t['model']} | {t['scenario']} | {t['runs']} | {' | '.join(cells)} | "
                   f"{t['excess_mean']:+.3f} ({sd}) | {t['before_leaks']}/{t['runs']} |")
    return out


def calibration_section(results: list[dict]) -> list[str]:
    """docs/calibration.md's section on ``leakaudit unlearning-check`` from this script's JSON results."""
    runs = [r for res in results for r in res["runs"]]
    exact = [r for r in runs if r["scenario"] == "exact"]
    false = sum(r["outcome"] == "not forgotten" for r in exact)
    lo, hi = _cp(false, len(exact))
    leaking = [r for r in runs if r["scenario"] == "none" and r["before_status"] == "leaks"]
    caught = sum(r["outcome"] == "not forgotten" for r in leaking)
    out = ["## Unlearning verification (`leakaudit unlearning-check`)", "",
           "The unlearning verdict (forgotten / over-unlearned / not forgotten / inconclusive, docs/unlearning.md) "
           "on Adult, where "
           "the truth is known: an \"after\" model retrained exactly on the retain set has forgotten (a \"not "
           "forgotten\" is a false alarm, allowed at 5 %); the model before unlearning, unchanged, has not. "
           f"**Exact retraining: {false}/{len(exact)} false \"not forgotten\"** (95 % interval "
           f"[{lo:.3f}, {hi:.3f}]); **no unlearning: {caught}/{len(leaking)} \"not forgotten\"** among the runs "
           "whose before-model measurably remembered the forget set. Approximate methods (gradient ascent on the "
           "forget set, gently and far enough to over-unlearn; fine-tuning on the retain set; training on the forget "
           "set with random labels; the gradient-difference method, ascent on the forget set with descent on the "
           "retain set; retraining that keeps half of the forget set) are measured beside them. Commands, per-scenario rates "
           "and what they say: docs/unlearning.md.", ""]
    for res in results:
        out += [f"`{res['meta']['command']}` ({res['meta']['wall_s']} s wall, {res['meta']['cpu_s']} s CPU, "
                f"load {', '.join(res['meta']['loadavg'])}):", ""] + table_lines(res["table"]) + [""]
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run the calibration (``argv``: the command line's arguments); returns what it writes to ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--models", default="logistic,forest")
    ap.add_argument("--n-forget", type=int, default=100)
    ap.add_argument("--n-retain", type=int, default=200)
    ap.add_argument("--n-nonmembers", type=int, default=500)
    ap.add_argument("--reference-models", type=int, default=16)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--ga-steps", type=int, default=5)
    ap.add_argument("--ga-lr", type=float, default=1.0)
    ap.add_argument("--over-steps", type=int, default=50)
    ap.add_argument("--over-lr", type=float, default=5.0)
    ap.add_argument("--ft-steps", type=int, default=20)
    ap.add_argument("--rl-steps", type=int, default=20)
    ap.add_argument("--rl-lr", type=float, default=1.0)
    ap.add_argument("--ft-lr", type=float, default=1.0)
    ap.add_argument("--mlp-ft-epochs", type=int, default=10)
    ap.add_argument("--gd-steps", type=int, default=100)
    ap.add_argument("--gd-lr", type=float, default=0.1)
    ap.add_argument("--section", nargs="+", type=Path, default=None,
                    help="print docs/calibration.md's section from these result files, and run nothing")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/unlearning_calibration.json"))
    a = ap.parse_args(argv)
    if a.section:
        print("\n".join(calibration_section([json.loads(p.read_text()) for p in a.section])))
        return {}

    import warnings

    from leakaudit.audit.inputs.data import DuplicateRecordsWarning
    from leakaudit.audit.unlearning import unlearning_check

    warnings.simplefilter("ignore", DuplicateRecordsWarning)  # Adult repeats records; counted in the results

    runs, t0, c0 = [], time.time(), time.process_time()
    for kind in a.models.split(","):
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            forget, retain, non = _split(seed, a.n_forget, a.n_retain, a.n_nonmembers)
            before = _fit(kind, pd.concat([forget, retain]), seed)
            afters = {"exact": _fit(kind, retain, seed + 10_000), "none": before,
                      "keep-half": _fit(kind, pd.concat([forget.iloc[:len(forget) // 2], retain]), seed + 20_000)}
            if kind == "logistic":
                afters["gradient-ascent"] = _logistic_steps(before, forget, steps=a.ga_steps, lr=a.ga_lr, sign=1.0,
                                                            l2=0.0)
                afters["over-unlearn"] = _logistic_steps(before, forget, steps=a.over_steps, lr=a.over_lr,
                                                         sign=1.0, l2=0.0)
                afters["fine-tune"] = _logistic_steps(before, retain, steps=a.ft_steps, lr=a.ft_lr, sign=-1.0,
                                                      l2=1.0 / (before.C * len(retain)))
                noisy = forget.assign(y=np.random.default_rng(seed + 30_000).integers(0, 2, len(forget)))
                afters["random-label"] = _logistic_steps(before, noisy, steps=a.rl_steps, lr=a.rl_lr, sign=-1.0,
                                                         l2=0.0)
            if kind == "mlp":
                afters["gradient-ascent"] = _mlp_steps(before, forget, steps=a.ga_steps, lr=a.ga_lr, sign=1.0)
                afters["over-unlearn"] = _mlp_steps(before, forget, steps=a.over_steps, lr=a.over_lr, sign=1.0)
                afters["fine-tune"] = _mlp_fine_tune(before, retain, a.mlp_ft_epochs)
                noisy = forget.assign(y=np.random.default_rng(seed + 30_000).integers(0, 2, len(forget)))
                afters["random-label"] = _mlp_steps(before, noisy, steps=a.rl_steps, lr=a.rl_lr, sign=-1.0)
                afters["grad-diff"] = _mlp_steps(before, forget, steps=a.gd_steps, lr=a.gd_lr, sign=1.0,
                                                 retain=retain)
            for scenario, after in afters.items():
                t, c = time.time(), time.process_time()
                r = unlearning_check(before, after, forget, retain, non, label="y",
                                     reference_models=a.reference_models, confidence=a.confidence,
                                     random_state=seed)
                ch = {x.id.split(".")[1] + "." + x.id.split(".")[2]: x for x in r.checks}
                row = {"model": kind, "seed": seed, "scenario": scenario, "outcome": r.outcome,
                       "excess": ch["after.excess_signal"].value, "interval": ch["after.excess_signal"].interval,
                       "after_status": ch["after.excess_signal"].status, "records_status": ch["after.records"].status,
                       "records_flagged": ch["after.records"].value, "before_status": ch["before.excess_signal"].status,
                       "before_excess": ch["before.excess_signal"].value, "plain_auc_after": r.auc["after"]["auc"],
                       "share": ch["after.remembered_proportion"].value,
                       "share_interval": ch["after.remembered_proportion"].interval,
                       "wall_s": round(time.time() - t, 2), "cpu_s": round(time.process_time() - c, 2)}
                runs.append(row)
                print(f"{kind:8s} seed {seed:2d} {scenario:15s} {r.outcome:13s} excess {row['excess']:+.3f} "
                      f"[{row['interval'][0]:+.3f}, {row['interval'][1]:+.3f}] share {row['share']} "
                      f"{row['share_interval']} before {row['before_status']}; "
                      f"records {row['records_status']} ({row['records_flagged']}); {row['cpu_s']} s CPU", flush=True)
    table = []
    for kind in dict.fromkeys(r["model"] for r in runs):
        for scenario in dict.fromkeys(r["scenario"] for r in runs if r["model"] == kind):
            rs = [r for r in runs if r["model"] == kind and r["scenario"] == scenario]
            n = len(rs)
            row = {"model": kind, "scenario": scenario, "runs": n,
                   "excess_mean": float(np.mean([r["excess"] for r in rs])),
                   "excess_sd": float(np.std([r["excess"] for r in rs], ddof=1)) if n > 1 else None,
                   "before_leaks": sum(r["before_status"] == "leaks" for r in rs),
                   "share_mean": float(np.nanmean([np.nan if r["share"] is None else r["share"] for r in rs]))}
            if scenario == "keep-half":  # the known share kept: does the proportion's interval cover it?
                row["share_covers"] = sum(r["share_interval"] is not None and
                                          r["share_interval"][0] <= 0.5 <= r["share_interval"][1] for r in rs)
            for o in OUTCOMES:
                k = sum(r["outcome"] == o for r in rs)
                row[o] = {"count": k, "rate": k / n, "ci95": _cp(k, n)}
            table.append(row)
    meta = {"command": "benchmarks/unlearning_calibration.py " + " ".join(
                f"--{k.replace('_', '-')} {v}" for k, v in vars(a).items() if k not in ("out", "section")),
            "wall_s": round(time.time() - t0, 1), "cpu_s": round(time.process_time() - c0, 1),
            "loadavg": open("/proc/loadavg").read().split()[:3], "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"meta": meta, "table": table, "runs": runs}, indent=1))
    print("\n" + "\n".join(table_lines(table)))
    print(f"\n{meta}")
    return {"meta": meta, "table": table, "runs": runs}


if __name__ == "__main__":
    main()
