"""Canary audit of a DP fine-tune of the local GPT-2 demo: the one-run bound against the claimed epsilon.

The setting of ``lm_canary_audit.py`` (300 public texts, 200 fine-tuning texts, the "tiny" GPT-2 base, m new-token
canaries each inserted with probability 1/2), fine-tuned by DP-SGD instead: Poisson sampling at rate q = 16 / n (n
the augmented set's size), each example's gradient (its mean token loss) clipped to norm 1, Gaussian noise of
standard deviation ``sigma`` added to the sum, divided by q n, Adam at the demo's learning rate, ``--epochs`` / q
steps. ``sigma`` is the smallest (to 0.1%) whose epsilon, by leakaudit's accountant
(:func:`leakaudit.learners.dp_sgd.dpsgd_accounted_epsilon`, PLD, add/remove), is at most the claim at delta 1e-5.
Per-example gradients are computed one example at a time (a plain loop: slow, but exact).

Usage: .venv/bin/python benchmarks/lm_canary_audit_dp.py [--seeds 2] [--epsilon 4] [--m 1000] [--epochs 4]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import lm_canary_audit as K  # noqa: E402

import numpy as np  # noqa: E402

DELTA = 1e-5


def calibrate(epsilon: float, q: float, steps: int) -> float:
    from leakaudit.learners.dp_sgd import dpsgd_accounted_epsilon

    def eps(s):
        return dpsgd_accounted_epsilon(noise_multiplier=s, sampling="poisson", sampling_rate=q, steps=steps,
                                       epochs=1, delta=DELTA)

    lo, hi = 0.1, 1.0
    while eps(hi) > epsilon:
        lo, hi = hi, hi * 2
    while eps(lo) <= epsilon:
        lo /= 2
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if eps(mid) <= epsilon else (mid, hi)
    return hi


def dp_train(model, tok, texts, *, epochs: int, epsilon: float, lr: float, seed: int, batch: int = 16,
             clip: float = 1.0) -> dict:
    """DP-SGD fine-tuning in place (module docstring); returns sigma, q, steps and the accounted epsilon."""
    import torch

    from leakaudit.learners.dp_sgd import dpsgd_accounted_epsilon
    from leakaudit.lm.score import encode_texts, torch_threads

    ids, _ = encode_texts(tok, texts, max_length=model.config.n_positions)
    n = len(ids)
    q = batch / n
    steps = int(math.ceil(epochs / q))
    sigma = calibrate(epsilon, q, steps)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    rng = np.random.default_rng(seed)
    model.train()
    with torch_threads(1), torch.random.fork_rng():
        torch.manual_seed(seed)
        for _ in range(steps):
            acc = [torch.zeros_like(p) for p in params]
            for i in np.flatnonzero(rng.random(n) < q):
                x = torch.tensor([ids[i]])
                g = torch.autograd.grad(model(input_ids=x, labels=x).loss, params)
                norm = float(torch.sqrt(sum((gi * gi).sum() for gi in g)))
                f = min(1.0, clip / (norm + 1e-12))
                for a, gi in zip(acc, g):
                    a.add_(gi, alpha=f)
            for a, p in zip(acc, params):
                p.grad = (a + torch.randn_like(a) * sigma * clip) / (q * n)
            opt.step()
    model.eval()
    return {"noise_multiplier": sigma, "sampling_rate": q, "steps": steps, "n": n,
            "accounted_epsilon": dpsgd_accounted_epsilon(noise_multiplier=sigma, sampling="poisson",
                                                          sampling_rate=q, steps=steps, epochs=1, delta=DELTA)}


def one_seed(seed: int, *, epsilon: float, m: int, secret_length: int, epochs: int) -> dict:
    from leakaudit._random import spawn_seeds
    from leakaudit.lm.canary import canary_audit, insert_canaries, make_canaries, secret_scores
    from leakaudit.lm.demo import SIZES, demo_texts, new_model, train_lm, train_tokenizer

    sz = SIZES["tiny"]
    texts, _ = demo_texts(max_chars=sz.max_chars)
    s_split, s_init, s_pre, s_fine, s_can, s_emb, _ = spawn_seeds(seed, 7)
    order = np.random.default_rng(s_split).permutation(len(texts))
    pub, ft = [texts[i] for i in order[:300]], [texts[i] for i in order[300:500]]
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    base = new_model(sz, len(tok), seed=s_init)
    train_lm(base, tok, pub, epochs=2, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size, n_threads=1)
    c = make_canaries(ft, m=m, design="new_token", tokenizer=tok, secret_length=secret_length, random_state=s_can)
    model, t2 = K._with_tokens(base, tok, c.new_tokens, s_emb)
    info = dp_train(model, t2, insert_canaries(ft, c, random_state=s_can), epochs=epochs, epsilon=epsilon,
                    lr=sz.lr, seed=s_fine)
    s = secret_scores(model, t2, c, max_length=sz.n_positions, n_threads=1)
    a = canary_audit(c, s, claimed_epsilon=epsilon, delta=DELTA, bound="best")
    return {"seed": seed, **info, "epsilon_lower_bound": a.epsilon_lower_bound, "auc": a.auc,
            "guesses": a.guesses, "correct": a.correct, "violated": a.violated}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--secret-length", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=4)
    a = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    runs = []
    for s in range(a.seeds):
        with C.Timer() as tm:
            runs.append(one_seed(s, epsilon=a.epsilon, m=a.m, secret_length=a.secret_length, epochs=a.epochs))
        r = runs[-1]
        print(f"seed {s} ({tm.seconds:.0f} s, {tm.cpu_seconds:.0f} CPU s): sigma {r['noise_multiplier']:.3f}, "
              f"{r['steps']} steps, accounted eps {r['accounted_epsilon']:.3f}; bound {r['epsilon_lower_bound']:.3f}"
              f", AUC {r['auc']:.3f}, {r['correct']}/{r['guesses']}", flush=True)
    res = {"benchmark": "lm_canary_audit_dp", "claimed_epsilon": a.epsilon, "m": a.m, "epochs": a.epochs,
           "n_seeds": a.seeds, "command": "python benchmarks/lm_canary_audit_dp.py " + " ".join(argv or sys.argv[1:]),
           "summary": {k: C.mean_ci([r[k] for r in runs], digits=4) for k in ("epsilon_lower_bound", "auc")},
           "runs": runs}
    path = C.write_result(f"lm_canary_audit_dp_eps{a.epsilon:g}", res)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
