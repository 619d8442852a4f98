"""The reference-model attacks (the base model before fine-tuning as reference) against loss, zlib and Min-K%++ on
the local GPT-2 demo, at TPR at 1% and 0.1% FPR, over seeds (docs/lm.md).

Per seed: SpamAssassin e-mails cut to 200 characters, shuffled into 300 public texts, ``--members`` members (1,000)
and 1,000 non-members (one pool). A tokenizer and a "tiny" GPT-2 are trained on the public texts (2 epochs: the base, the
reference model); a copy is fine-tuned on the members and attacked after each of ``--epochs`` (cumulative) epochs.
Every attack of :func:`leakaudit.lm.attacks.run_lm_attacks` runs with the base as the one reference; with
``--recall`` also ReCaLL (:func:`leakaudit.lm.attacks.recall_score`), its prefix the first half of a pool text in no
set. TPR at 0.1%
FPR allows one of the 1,000 non-members above the threshold, so it rests on the two highest non-member scores and is
coarse; each cell: mean over seeds [95% t-interval over seeds].

Usage: .venv/bin/python benchmarks/lm_reference_attacks.py [--seeds 5] [--epochs 1 4] [--members 1000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

FPRS = (0.01, 0.001)


def _metrics(m, s):
    from leakaudit.metrics import auc, tpr_at_fpr

    return {"auc": float(auc(m, s)), **{f"tpr_at_{f:g}": float(tpr_at_fpr(m, s, f)) for f in FPRS}}


def one_seed(seed: int, *, epochs, n_members=1000, n_non=1000, threads=1, recall=False) -> dict:
    import warnings

    from leakaudit._random import spawn_seeds
    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.lm.attacks import recall_score, run_lm_attacks
    from leakaudit.lm.demo import SIZES, demo_texts, new_model, train_lm, train_tokenizer
    from leakaudit.lm.score import score_texts

    warnings.simplefilter("ignore", NotEstimableWarning)
    sz = SIZES["tiny"]
    pool, _ = demo_texts(max_chars=sz.max_chars)
    s_split, s_init, s_pre, s_fine = spawn_seeds(seed, 4)
    order = np.random.default_rng(s_split).permutation(len(pool))
    pub = [pool[i] for i in order[:300]]
    mem = [pool[i] for i in order[300:300 + n_members]]
    non = [pool[i] for i in order[300 + n_members:300 + n_members + n_non]]
    # ReCaLL's non-member prefix: the next text of the pool (in no set), its first half, so that the tiny model's
    # 128-token context keeps room for most of each text
    prefix = pool[order[300 + n_members + n_non]][: sz.max_chars // 2]
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    model = new_model(sz, len(tok), seed=s_init)
    train_lm(model, tok, pub, epochs=2, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    texts = mem + non
    m = np.r_[np.ones(len(mem), int), np.zeros(len(non), int)]
    ref = score_texts(model, tok, texts, max_length=sz.n_positions, distribution=False, n_threads=threads)
    out, done = {"seed": seed, "epochs": {}}, 0
    for e in epochs:
        train_lm(model, tok, mem, epochs=e - done, seed=s_fine + e, lr=sz.lr, batch_size=sz.batch_size,
                 n_threads=threads)
        done = e
        ts = score_texts(model, tok, texts, max_length=sz.n_positions, n_threads=threads)
        out["epochs"][e] = {k: _metrics(m, s) for k, s in run_lm_attacks(ts, texts, [ref]).items()}
        if recall:
            cond = score_texts(model, tok, texts, max_length=sz.n_positions, n_threads=threads, distribution=False,
                               prefix=prefix)
            out["epochs"][e]["lm_recall"] = _metrics(m, recall_score(ts, cond))
            out["epochs"][e]["lm_recall"]["n_truncated"] = int(cond.n_truncated)
    return out


def summarise(runs):
    out = {}
    for e in runs[0]["epochs"]:
        out[e] = {a: {k: C.mean_ci([r["epochs"][e][a][k] for r in runs], clip=(0.0, 1.0), digits=4)
                      for k in runs[0]["epochs"][e][a] if k != "n_truncated"} for a in runs[0]["epochs"][e]}
    return out


def markdown(summ) -> str:
    from leakaudit.lm.attacks import ATTACKS

    f = lambda s: f"{s['mean']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"  # noqa: E731
    lines = []
    for e, row in summ.items():
        lines += [f"**After {e} epoch{'s' if str(e) != '1' else ''}**", "",
                  "| attack | AUC | TPR at 1% FPR | TPR at 0.1% FPR |", "|---|---|---|---|"]
        for a, v in row.items():
            name = ATTACKS[a].display if a in ATTACKS else "ReCaLL"
            lines.append(f"| {name} | {f(v['auc'])} | {f(v['tpr_at_0.01'])} | {f(v['tpr_at_0.001'])} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--members", type=int, default=1000)
    ap.add_argument("--recall", action="store_true", help="also ReCaLL (a held-out non-member text as the prefix)")
    a = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    runs = []
    for s in range(a.seeds):
        with C.Timer() as tm:
            runs.append(one_seed(s, epochs=sorted(a.epochs), n_members=a.members, recall=a.recall))
        print(f"seed {s} done in {tm.seconds:.0f} s ({tm.cpu_seconds:.0f} CPU s)", flush=True)
    summ = summarise(runs)
    res = {"benchmark": "lm_reference_attacks", "n_seeds": len(runs), "summary": summ, "runs": runs,
           "command": "python benchmarks/lm_reference_attacks.py " + " ".join(argv or sys.argv[1:])}
    res["n_members"], res["n_nonmembers"] = a.members, 1000
    path = C.write_result("lm_reference_attacks" + ("" if a.members == 1000 else f"_m{a.members}")
                          + ("_recall" if a.recall else ""), res)
    print(markdown(summ))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
