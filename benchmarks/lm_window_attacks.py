"""The window attacks (WBC's window votes, window Min-K%++ votes) beside the whole-text attacks on the local GPT-2
demo recipe, at AUC and TPR at 1% and 0.1% FPR, over seeds; on the memorisation-by-duplication set; and a null check
(docs/lm.md, "Window attacks").

Per seed: SpamAssassin e-mails cut to the size's ``max_chars``, shuffled into ``--public`` public texts, 200 members
and 1,000 non-members (one pool). A tokenizer and a GPT-2 of ``--size`` are trained on the public texts (2 epochs:
the base, the one reference model).

* fine-tuned: a copy of the base fine-tuned ``--epochs`` epochs on the members; every attack of
  :func:`leakaudit.lm.attacks.run_lm_attacks`, and for comparison one aggregation not registered (``top_windows``:
  the mean target-minus-reference contrast of the 10% highest 32-token windows, at least one).
* duplication: another copy fine-tuned ``--dup-epochs`` epochs on the members in four groups of 50, group g's texts
  appearing 1, 2, 4 or 8 times per epoch; each group against all 1,000 non-members.
* null: on the fine-tuned model, the 1,000 non-members split at random into two halves of 500, one labelled
  "member": no attack should tell them apart beyond chance (one-sided Mann-Whitney p per attack and seed).

Each cell: mean over seeds [95% t-interval over seeds]. TPR at 0.1% FPR allows one of the 1,000 non-members above the
threshold (coarse).

Usage: .venv/bin/python benchmarks/lm_window_attacks.py [--seeds 5] [--size tiny] [--epochs 4] [--resume]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

FPRS = (0.01, 0.001)
DUPLICATES = (1, 2, 4, 8)
NAMES = {"lm_loss": "loss", "lm_zlib": "zlib", "lm_min_k": "Min-K%", "lm_min_k_pp": "Min-K%++",
         "lm_reference": "reference", "lm_lira": "LiRA", "lm_rmia": "RMIA", "lm_window_reference": "WBC (window votes)",
         "lm_window_min_k_pp": "window Min-K%++ votes", "top_windows": "top-10% 32-token windows (not registered)"}


def _metrics(m, s):
    from leakaudit.metrics import auc, tpr_at_fpr

    return {"auc": float(auc(m, s)), **{f"tpr_at_{f:g}": float(tpr_at_fpr(m, s, f)) for f in FPRS}}


def top_windows(ts, ref, window=32, top=0.1) -> np.ndarray:
    """The mean target-minus-reference contrast of each text's ceil(top S) highest of its S windows."""
    from leakaudit.lm.attacks import window_means

    means, n = window_means(tuple(a - b for a, b in zip(ts.logprobs, ref.logprobs)), window)
    k = np.maximum(1, np.ceil(top * n).astype(int))
    srt = -np.sort(-means, axis=1)
    best = np.cumsum(np.where(np.isfinite(srt), srt, 0.0), axis=1)
    return best[np.arange(k.size), k - 1] / k


def _attacks(ts, texts, ref):
    from leakaudit.lm.attacks import run_lm_attacks

    return {**run_lm_attacks(ts, texts, [ref]), "top_windows": top_windows(ts, ref)}


def one_seed(seed: int, *, size="tiny", n_public=300, n_members=200, n_non=1000, epochs=4, dup_epochs=2,
             threads=1) -> dict:
    import copy
    import warnings

    from scipy.stats import mannwhitneyu

    from leakaudit._random import spawn_seeds
    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.lm.demo import SIZES, demo_texts, new_model, train_lm, train_tokenizer
    from leakaudit.lm.score import score_texts

    warnings.simplefilter("ignore", NotEstimableWarning)
    sz = SIZES[size]
    pool, _ = demo_texts(max_chars=sz.max_chars)
    s_split, s_init, s_pre, s_fine, s_dup, s_null = spawn_seeds(seed, 6)
    order = np.random.default_rng(s_split).permutation(len(pool))
    pub = [pool[i] for i in order[:n_public]]
    mem = [pool[i] for i in order[n_public:n_public + n_members]]
    non = [pool[i] for i in order[n_public + n_members:n_public + n_members + n_non]]
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    base = new_model(sz, len(tok), seed=s_init)
    train = dict(lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    train_lm(base, tok, pub, epochs=2, seed=s_pre, **train)
    texts = mem + non
    m = np.r_[np.ones(len(mem), int), np.zeros(len(non), int)]
    score = dict(max_length=sz.n_positions, n_threads=threads)
    ref = score_texts(base, tok, texts, distribution=False, **score)
    out = {"seed": seed, "n_tokens_median": float(np.median(ref.n_tokens))}

    model = copy.deepcopy(base)
    train_lm(model, tok, mem, epochs=epochs, seed=s_fine, **train)
    ts = score_texts(model, tok, texts, **score)
    scores = _attacks(ts, texts, ref)
    out["fine_tuned"] = {k: _metrics(m, s) for k, s in scores.items()}
    # null: two random halves of the non-members, scored by the same model
    non_idx = np.arange(n_members, len(texts))
    half = np.random.default_rng(s_null).permutation(non_idx)
    a, b = half[: n_non // 2], half[n_non // 2:]
    m0 = np.r_[np.ones(a.size, int), np.zeros(b.size, int)]
    out["null"] = {k: {**_metrics(m0, s[np.r_[a, b]]),
                       "p_value": float(mannwhitneyu(s[a], s[b], alternative="greater").pvalue)}
                   for k, s in scores.items()}

    groups = np.array_split(np.arange(n_members), len(DUPLICATES))
    model = copy.deepcopy(base)
    train_lm(model, tok, [mem[i] for g, d in zip(groups, DUPLICATES) for i in g for _ in range(d)],
             epochs=dup_epochs, seed=s_dup, **train)
    ts = score_texts(model, tok, texts, **score)
    scores = _attacks(ts, texts, ref)
    out["duplication"] = {d: {k: _metrics(m[np.r_[g, non_idx]], s[np.r_[g, non_idx]]) for k, s in scores.items()}
                          for g, d in zip(groups, DUPLICATES)}
    return out


def summarise(runs) -> dict:
    ci = lambda v: C.mean_ci(v, clip=(0.0, 1.0), digits=4)  # noqa: E731
    keys = ("auc",) + tuple(f"tpr_at_{f:g}" for f in FPRS)
    out = {"fine_tuned": {a: {k: ci([r["fine_tuned"][a][k] for r in runs]) for k in keys} for a in NAMES},
           "duplication": {d: {a: {k: ci([r["duplication"][d][a][k] for r in runs]) for k in keys} for a in NAMES}
                           for d in runs[0]["duplication"]},
           "null": {a: {**{k: ci([r["null"][a][k] for r in runs]) for k in keys},
                        "p_values": [round(r["null"][a]["p_value"], 4) for r in runs],
                        "rejections_at_0.05": sum(r["null"][a]["p_value"] <= 0.05 for r in runs)} for a in NAMES}}
    return out


def markdown(summ: dict, n_seeds: int) -> str:
    f = lambda s: f"{s['mean']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"  # noqa: E731
    head = "| attack | AUC | TPR at 1% FPR | TPR at 0.1% FPR |"
    rows = lambda cell: [f"| {NAMES[a]} | " + " | ".join(f(cell[a][k]) for k in ("auc", "tpr_at_0.01", "tpr_at_0.001"))  # noqa: E731
                         + " |" for a in NAMES]
    lines = [f"**Fine-tuned** (mean over {n_seeds} seeds [95% t-interval])", "", head, "|---|---|---|---|",
             *rows(summ["fine_tuned"]), ""]
    for d, cell in summ["duplication"].items():
        lines += [f"**Duplication: {d} copies per epoch**", "", head, "|---|---|---|---|", *rows(cell), ""]
    lines += ["**Null (non-members on both sides)**", "", "| attack | AUC | TPR at 1% FPR | seeds with p <= 0.05 |",
              "|---|---|---|---|"]
    lines += [f"| {NAMES[a]} | {f(c['auc'])} | {f(c['tpr_at_0.01'])} | {c['rejections_at_0.05']} of {n_seeds} |"
              for a, c in summ["null"].items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--size", default="tiny", help="the model (leakaudit.lm.demo.SIZES)")
    ap.add_argument("--public", type=int, default=300)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--dup-epochs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--resume", action="store_true",
                    help="keep the seeds a result file of the same settings holds; run only the missing ones")
    a = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    name = "lm_window_attacks" + ("" if a.size == "tiny" else f"_{a.size}")
    settings = {"size": a.size, "n_public": a.public, "epochs": a.epochs, "dup_epochs": a.dup_epochs}
    runs, wall, cpu = [], 0.0, 0.0
    stored = C.RESULTS / f"{name}.json"
    if a.resume and stored.exists():
        old = json.loads(stored.read_text())
        if {k: old.get(k) for k in settings} == settings:
            runs, wall, cpu = old["runs"][: a.seeds], old["wall_s"], old["cpu_s"]
            print(f"kept seeds 0-{len(runs) - 1} of {stored}", flush=True)
    for s in range(len(runs), a.seeds):  # seed s is the s-th run: a resumed file holds seeds 0..k-1
        with C.Timer() as tm:
            run = one_seed(s, size=a.size, n_public=a.public, epochs=a.epochs, dup_epochs=a.dup_epochs,
                           threads=a.threads)
        runs.append(json.loads(json.dumps(run, default=C._jsonable)))  # the keys a stored run has (text)
        wall, cpu = wall + tm.seconds, cpu + tm.cpu_seconds
        print(f"seed {s} done in {tm.seconds:.0f} s ({tm.cpu_seconds:.0f} CPU s)", flush=True)
        summ = summarise(runs)
        res = {"benchmark": "lm_window_attacks", **settings, "n_seeds": len(runs), "wall_s": round(wall, 1),
               "cpu_s": round(cpu, 1), "summary": summ, "runs": runs}
        C.write_result(name, res)  # after every seed: a killed run keeps the seeds it finished
    print(markdown(summarise(runs), len(runs)))
    print(f"wrote {stored}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
