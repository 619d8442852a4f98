"""Dataset inference (Maini et al. 2024) on the locally fine-tuned language model, on known truth (docs/lm.md).

Per seed: SpamAssassin e-mails cut to 200 characters. Two shifted pairs of sets are reserved first, neither ever
used: *source* (200 spam-2 e-mails as the "suspect" set, 200 easy-ham-1 as the "unseen") and *period* (200
easy-ham-2, collected later, against 200 easy-ham-1). The rest is shuffled into 300 public texts, 400 members and
400 non-members (one pool). A tokenizer and a "tiny" GPT-2 are trained on the public texts (2 epochs: the base, also
the reference model); a copy is fine-tuned on the members for ``--epochs`` epochs (1: per-text attacks are weak).

Scenarios, each with the guard (blind baseline at the test's level) and the one-sided Welch test at alpha 0.05:

* used: suspect = the 400 members, unseen = the 400 non-members; the power curve (100 subsets per size).
* not used: suspect and unseen = two halves of the non-members (200 + 200); and the test's false detection rate
  at each size, each draw a fresh random partition of the 400 non-members into a suspect and an unseen set (draws
  from two fixed halves would measure those halves' chance difference, not the test's level).
* shifted source / period: the reserved sets, never used; the guard must flag them.

Usage: .venv/bin/python benchmarks/lm_dataset_inference.py [--seeds 5] [--epochs 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

SIZES = (8, 10, 20, 50, 100, 200, 400)


def one_seed(seed: int, *, epochs: int, n_repeats: int, threads: int = 1) -> dict:
    import warnings

    from leakaudit._random import spawn_seeds
    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.lm.dataset_inference import dataset_inference, detection_power, membership_features, set_test
    from leakaudit.lm.demo import SIZES as DS, demo_texts, new_model, train_lm, train_tokenizer
    from leakaudit.lm.score import score_texts

    warnings.simplefilter("ignore", NotEstimableWarning)
    sz = DS["tiny"]
    texts, groups = demo_texts(max_chars=sz.max_chars)
    s_split, s_init, s_pre, s_fine, s_di = spawn_seeds(seed, 5)
    rng = np.random.default_rng(s_split)
    taken = np.zeros(len(texts), bool)

    def reserve(g, n):
        idx = rng.choice(np.flatnonzero((groups == g) & ~taken), n, replace=False)
        taken[idx] = True
        return [texts[i] for i in idx]

    spam, ham2, ham1a, ham1b = reserve("spam-2", 200), reserve("easy-ham-2", 200), reserve("easy-ham-1", 200), \
        reserve("easy-ham-1", 200)
    rest = rng.permutation(np.flatnonzero(~taken))
    pub = [texts[i] for i in rest[:300]]
    mem = [texts[i] for i in rest[300:700]]
    non = [texts[i] for i in rest[700:1100]]
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    model = new_model(sz, len(tok), seed=s_init)
    train_lm(model, tok, pub, epochs=2, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    import copy

    base = copy.deepcopy(model)
    losses = train_lm(model, tok, mem, epochs=epochs, seed=s_fine, lr=sz.lr, batch_size=sz.batch_size,
                      n_threads=threads)

    def scores(t):
        return (score_texts(model, tok, t, max_length=sz.n_positions, n_threads=threads),
                [score_texts(base, tok, t, max_length=sz.n_positions, n_threads=threads, distribution=False)])

    out = {"seed": seed, "finetune_loss": losses[-1], "scenarios": {}}
    for name, sus, uns in (("used", mem, non), ("not used", non[:200], non[200:]),
                           ("shifted source", spam, ham1a), ("shifted period", ham2, ham1b)):
        ts, refs = scores(sus + uns)
        r = dataset_inference(sus, uns, ts, refs, alpha=0.05, power=False, random_state=s_di)
        row = {"verdict": r.verdict, "p_value": r.test.p_value, "combined_auc": r.test.auc,
               "blind_auc": r.blind_auc, "blind_p_value": r.blind_p_value, "feature_auc": r.feature_auc,
               "coef": r.test.coef}
        if name == "used":
            names, x = membership_features(ts, sus + uns, refs)
            n = len(sus)
            pc = detection_power(x[:n], x[n:], sizes=[s for s in SIZES if s <= n], n_repeats=n_repeats,
                                 alpha=0.05, random_state=s_di + 1)
            row["power"] = {"sizes": pc.sizes, "rate": pc.rate, "smallest_detected": pc.smallest_detected}
        if name == "not used":
            # the level: each draw a fresh random partition of the 400 non-members into suspect and unseen sets
            _, x = membership_features(ts, sus + uns, refs)
            prng = np.random.default_rng(s_di + 2)
            rates = []
            for n in [s for s in SIZES if s <= len(x) // 2]:
                hits = 0
                for _ in range(n_repeats):
                    p = prng.permutation(len(x))
                    hits += set_test(x[p[:n]], x[p[n:2 * n]], random_state=prng).p_value <= 0.05
                rates.append(hits / n_repeats)
            row["power"] = {"sizes": [s for s in SIZES if s <= len(x) // 2], "rate": rates,
                            "smallest_detected": None, "draws": "random partitions of the 400 non-members"}
        out["scenarios"][name] = row
    return out


def summarise(runs):
    from scipy.stats import beta

    out = {}
    for name in runs[0]["scenarios"]:
        rows = [r["scenarios"][name] for r in runs]
        s = {"verdicts": [r["verdict"] for r in rows], "p_value": [r["p_value"] for r in rows],
             "blind_p_value": [r["blind_p_value"] for r in rows],
             "combined_auc": C.mean_ci([r["combined_auc"] for r in rows]),
             "blind_auc": C.mean_ci([r["blind_auc"] for r in rows]),
             "feature_auc": {f: C.mean_ci([r["feature_auc"][f] for r in rows]) for f in rows[0]["feature_auc"]}}
        if "power" in rows[0]:
            sizes = rows[0]["power"]["sizes"]
            s["power"] = {}
            for j, n in enumerate(sizes):
                rates = [r["power"]["rate"][j] for r in rows]
                k = int(round(sum(rates) * NREP[0]))
                tot = NREP[0] * len(rates)
                lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, tot - k + 1))
                hi = 1.0 if k == tot else float(beta.ppf(0.975, k + 1, tot - k))
                s["power"][n] = {"rate": k / tot, "exact95": [lo, hi], "per_seed": rates}
            s["smallest_detected"] = [r["power"]["smallest_detected"] for r in rows]
        out[name] = s
    return out


NREP = [100]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=100)
    a = ap.parse_args(argv)
    NREP[0] = a.repeats
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    runs = []
    for s in range(a.seeds):
        with C.Timer() as tm:
            runs.append(one_seed(s, epochs=a.epochs, n_repeats=a.repeats))
        sc = runs[-1]["scenarios"]
        print(f"seed {s} ({tm.seconds:.0f} s, {tm.cpu_seconds:.0f} CPU s): "
              + "; ".join(f"{k}: {v['verdict']} (p {v['p_value']:.2g}, blind p {v['blind_p_value']:.2g})"
                          for k, v in sc.items()), flush=True)
    res = {"benchmark": "lm_dataset_inference", "epochs": a.epochs, "n_seeds": a.seeds, "repeats": a.repeats,
           "command": "python benchmarks/lm_dataset_inference.py " + " ".join(argv or sys.argv[1:]),
           "summary": summarise(runs), "runs": runs}
    path = C.write_result(f"lm_dataset_inference_e{a.epochs}", res)
    import json

    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "feature_auc"} for k, v in res["summary"].items()},
                     indent=1, default=str)[:6000])
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
