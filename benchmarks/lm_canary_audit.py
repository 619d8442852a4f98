"""Canary audit of fine-tuning (Panda et al. 2025) on the local GPT-2 demo: power and soundness (docs/lm.md).

Per seed: SpamAssassin e-mails cut to 200 characters, shuffled into 300 public texts and 200 fine-tuning texts; a
tokenizer and a "tiny" GPT-2 are trained on the public texts (2 epochs: the base). For each design (new-token,
rare-token), ``--m`` canaries (secrets of ``--secret-length`` tokens) are made for the fine-tuning set and each is
inserted with probability 1/2; a copy of the base is fine-tuned on the augmented set, non-privately (AdamW, the
demo's recipe) for ``--epochs`` epochs, and the canaries are scored (mean log-probability of the secret given the
prompt). The one-run bound ("best": Theorem 3.1 of Steinke et al. and the f-DP analysis, each at half of beta =
0.05, over the default guess grid with its union bound) is reported with the AUC and TPR at 1% FPR of the scores.

Soundness: a copy of the base fine-tuned the same way on the 200 texts *without* canaries (the new tokens added to
its tokenizer afterwards, embeddings drawn at random) scores every canary; its bound must not exceed the claim
epsilon = 0 (the model is independent of which canaries were "inserted") except with probability beta. Because that
model's scores do not depend on the inclusions, ``--redraws`` fresh inclusion vectors on the same scores measure the
false-rejection rate exactly for these scores.

Usage: .venv/bin/python benchmarks/lm_canary_audit.py [--seeds 5] [--m 1000] [--epochs 4]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

DESIGNS = ("new_token", "rare_token")


def _with_tokens(model, tok, new_tokens, seed):
    """Copies of the model and tokenizer with ``new_tokens`` added (new embeddings drawn under ``seed``)."""
    import copy

    import torch

    tok, model = copy.deepcopy(tok), copy.deepcopy(model)
    if new_tokens:
        tok.add_tokens(list(new_tokens))
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            model.resize_token_embeddings(len(tok))
    return model, tok


def one_seed(seed: int, *, m: int, secret_length: int, epochs: int, redraws: int, threads: int = 1) -> dict:
    import warnings

    from leakaudit._random import spawn_seeds
    from leakaudit.dpaudit.one_run import draw_inclusion
    from leakaudit.dpaudit.search import check_claim
    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.lm.canary import canary_audit, insert_canaries, make_canaries, secret_scores
    from leakaudit.lm.demo import SIZES, demo_texts, new_model, train_lm, train_tokenizer
    from leakaudit.metrics import tpr_at_fpr

    warnings.simplefilter("ignore", NotEstimableWarning)
    sz = SIZES["tiny"]
    texts, _ = demo_texts(max_chars=sz.max_chars)
    s_split, s_init, s_pre, s_fine, s_can, s_emb, s_null = spawn_seeds(seed, 7)
    order = np.random.default_rng(s_split).permutation(len(texts))
    pub, ft = [texts[i] for i in order[:300]], [texts[i] for i in order[300:500]]
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    base = new_model(sz, len(tok), seed=s_init)
    train_lm(base, tok, pub, epochs=2, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    plain, _ = _with_tokens(base, tok, [], 0)
    train_lm(plain, tok, ft, epochs=epochs, seed=s_fine, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    out = {"seed": seed, "designs": {}}
    for d, design in enumerate(DESIGNS):
        c = make_canaries(ft, m=m, design=design, tokenizer=tok, secret_length=secret_length,
                          random_state=s_can + d)
        model, t2 = _with_tokens(base, tok, c.new_tokens, s_emb)
        losses = train_lm(model, t2, insert_canaries(ft, c, random_state=s_can), epochs=epochs, seed=s_fine,
                          lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
        s = secret_scores(model, t2, c, max_length=sz.n_positions, n_threads=threads)
        a = canary_audit(c, s, claimed_epsilon=0.0, delta=1e-5, bound="best")
        inc = (c.included == 1).astype(int)
        # soundness: the model fine-tuned without canaries
        null_model, t3 = _with_tokens(plain, tok, c.new_tokens, s_emb)
        s0 = secret_scores(null_model, t3, c, max_length=sz.n_positions, n_threads=threads)
        a0 = canary_audit(c, s0, claimed_epsilon=0.0, delta=1e-5, bound="best")
        rng = np.random.default_rng(s_null)
        exceed = 0
        for _ in range(redraws):
            S = draw_inclusion(m, rng)
            exceed += check_claim(S, s0, claimed_epsilon=0.0, delta=1e-5, bound="best").violated
        out["designs"][design] = {
            "epsilon_lower_bound": a.epsilon_lower_bound, "auc": a.auc, "guesses": a.guesses, "correct": a.correct,
            "tpr_at_1pct_fpr": float(tpr_at_fpr(inc, s, 0.01)), "n_included": a.n_included,
            "finetune_loss": losses[-1],
            "null_epsilon_lower_bound": a0.epsilon_lower_bound, "null_auc": a0.auc,
            "null_redraws": redraws, "null_exceed": int(exceed), "example": c.texts[0]}
    return out


def summarise(runs):
    from scipy.stats import beta

    out = {}
    for design in DESIGNS:
        rows = [r["designs"][design] for r in runs]
        k, tot = sum(r["null_exceed"] for r in rows), sum(r["null_redraws"] for r in rows)
        out[design] = {key: C.mean_ci([r[key] for r in rows], digits=4) for key in
                       ("epsilon_lower_bound", "auc", "tpr_at_1pct_fpr", "null_epsilon_lower_bound", "null_auc")}
        out[design]["null_runs_exceeding_0"] = sum(r["null_epsilon_lower_bound"] > 0 for r in rows)
        out[design]["null_redraws_exceeding_0"] = {
            "k": k, "n": tot, "rate": k / tot if tot else float("nan"),
            "exact95": [0.0 if k == 0 else float(beta.ppf(0.025, k, tot - k + 1)),
                        1.0 if k == tot else float(beta.ppf(0.975, k + 1, tot - k))] if tot else None}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--secret-length", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--redraws", type=int, default=200)
    a = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    runs = []
    for s in range(a.seeds):
        with C.Timer() as tm:
            runs.append(one_seed(s, m=a.m, secret_length=a.secret_length, epochs=a.epochs, redraws=a.redraws))
        print(f"seed {s} ({tm.seconds:.0f} s, {tm.cpu_seconds:.0f} CPU s): " + "; ".join(
            f"{d}: eps >= {v['epsilon_lower_bound']:.2f}, AUC {v['auc']:.3f}, TPR@1% {v['tpr_at_1pct_fpr']:.2f}; "
            f"no canaries: eps >= {v['null_epsilon_lower_bound']:.2f}, redraws over 0: {v['null_exceed']}/"
            f"{v['null_redraws']}" for d, v in runs[-1]["designs"].items()), flush=True)
    res = {"benchmark": "lm_canary_audit", "m": a.m, "secret_length": a.secret_length, "epochs": a.epochs,
           "n_seeds": a.seeds, "command": "python benchmarks/lm_canary_audit.py " + " ".join(argv or sys.argv[1:]),
           "summary": summarise(runs), "runs": runs}
    path = C.write_result(f"lm_canary_audit_e{a.epochs}", res)
    import json

    print(json.dumps(res["summary"], indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
