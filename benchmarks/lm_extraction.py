"""(n, p)-extraction (Hayes et al. 2024) on the local GPT-2 demo: memorisation by frequency on planted secrets, the
members' rate against the non-members' base rate, and the CPU cost per 1,000 texts (docs/lm.md, "Extraction").

Per seed (``--seeds``): SpamAssassin e-mails cut to 200 characters, shuffled into 300 public texts, 200 members
and 200 non-members; a tokenizer and a GPT-2 of ``--size`` (default "tiny"; ``leakaudit.lm.demo.SIZES``, whose
vocabulary, width, depth, context and learning rate it takes; the texts stay at 200 characters) trained 2 epochs
on the public texts (the base). ``--m``
rare-token canaries (leakaudit.lm.canary.make_canaries: a prompt of a member's first 8 words and a secret of
``--secret-length`` tokens rare in the members), each included with probability 1/2 (draw_inclusion); the included
ones are dealt in turn to four groups planted 1, 2, 4 and 8 times (insert_canaries, once per copy); the held-out
ones are the base rate. A copy of the base is fine-tuned ``--epochs`` epochs (AdamW, the demo's recipe) on the
members with the planted canaries. Then, under the sampler (temperature 1, top-40):

* each canary's secret probability given its prompt (one forward pass: leakaudit.lm.extraction.sampler_logprobs),
  the share (n, p)-extractable per group at n = 1, 10, 100, 1000 and p = 0.9, and the greedy continuation's exact
  match of the secret;
* extraction_audit of the members against the non-members (prefix 32 tokens, suffix 32), as the audit runs it.

``--small``: also the demo's "small" GPT-2 (python -m leakaudit.lm.demo defaults: 1,000 public, 200 + 200 texts of
600 characters, 2.21M parameters, 10 epochs; seed 0), its members against its non-members and the CPU cost.
``--demo SIZE`` does the same for another demo size (built under ``--small-dir``/SIZE unless already there).

Usage: PYTHONPATH=src python benchmarks/lm_extraction.py [--seeds 5] [--m 160] [--epochs 16] [--size tiny] [--small]
       [--demo medium] [--name RESULT]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

COPIES = (1, 2, 4, 8)
N_VALUES = (1, 10, 100, 1000)
P = 0.9
MAX_CHARS = 200  # the canary runs' texts, whatever the model's size


def _canary_extraction(model, tok, canaries, sampler, *, max_length, threads) -> dict:
    """Each canary's secret log-probability under ``sampler`` given its prompt, and whether greedy decoding emits
    the secret exactly."""
    from leakaudit.lm.extraction import generate_continuations, sampler_logprobs
    from leakaudit.lm.score import encode_texts

    sc = sampler_logprobs(model, tok, canaries.texts, sampler, max_length=max_length, n_threads=threads)
    pre, _ = encode_texts(tok, [p if p else " " for p in canaries.prompts], name="prompts")
    log_p, exact = np.zeros(canaries.m), np.zeros(canaries.m, bool)
    by_len: dict = {}
    for i, (lq, e, p) in enumerate(zip(sc.logprobs, sc.ids, pre)):
        k = max(1, len(e) - len(p))  # the secret's tokens: the canary's beyond its prompt's
        log_p[i] = float(np.sum(lq[-k:]))
        by_len.setdefault(len(e) - k, []).append(i)
    for cut, idx in by_len.items():
        gen = generate_continuations(model, [sc.ids[i][:cut] for i in idx], suffix_length=max(
            len(sc.ids[i]) - cut for i in idx), sampler=sampler, greedy=True, seed=0, n_threads=threads)
        for i, g in zip(idx, gen):
            exact[i] = list(g[: len(sc.ids[i]) - cut]) == list(sc.ids[i][cut:])
    return {"log_p": log_p, "exact": exact}


def one_seed(seed: int, *, m: int, secret_length: int, epochs: int, threads: int = 1, size: str = "tiny") -> dict:
    from leakaudit._random import spawn_seeds
    from leakaudit.lm.canary import insert_canaries, make_canaries
    from leakaudit.lm.demo import SIZES, demo_texts, new_model, train_lm, train_tokenizer
    from leakaudit.lm.extraction import Sampler, extraction_audit, n_p_extractable

    sz = SIZES[size]
    texts, _ = demo_texts(max_chars=MAX_CHARS)
    s_split, s_init, s_pre, s_fine, s_can, s_ins, s_ex = spawn_seeds(seed, 7)
    order = np.random.default_rng(s_split).permutation(len(texts))
    pub, mem, non = ([texts[i] for i in order[a:b]] for a, b in ((0, 300), (300, 500), (500, 700)))
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    model = new_model(sz, len(tok), seed=s_init)
    c0 = time.process_time()
    train_lm(model, tok, pub, epochs=2, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    pretrain_cpu = time.process_time() - c0
    c = make_canaries(mem, m=m, design="rare_token", tokenizer=tok, secret_length=secret_length, random_state=s_can)
    planted = np.flatnonzero(c.included == 1)
    copies = np.zeros(c.m, int)
    copies[planted] = np.array(COPIES)[np.arange(planted.size) % len(COPIES)]
    train = list(mem)
    for j, k in enumerate(COPIES):
        group = replace(c, included=np.where(copies == k, 1, -1).astype(np.int8))
        for r in range(k):  # one more copy of each of the group's canaries, at random places
            train = insert_canaries(train, group, random_state=s_ins + 100 * j + r)
    c0 = time.process_time()
    losses = train_lm(model, tok, train, epochs=epochs, seed=s_fine, lr=sz.lr, batch_size=sz.batch_size,
                      n_threads=threads)
    train_cpu = time.process_time() - c0
    sampler = Sampler(1.0, 40)
    ce = _canary_extraction(model, tok, c, sampler, max_length=sz.n_positions, threads=threads)
    groups = {}
    for k in (0, *COPIES):
        sel = copies == k
        groups[str(k)] = {"n": int(sel.sum()), "exact_greedy": int(ce["exact"][sel].sum()),
                          **{f"extractable_n{n}": int(n_p_extractable(ce["log_p"][sel], n, P).sum()) for n in N_VALUES},
                          "mean_log_p": float(np.mean(ce["log_p"][sel]))}
    ex = extraction_audit(model, tok, mem + non, np.r_[np.ones(len(mem)), np.zeros(len(non))], prefix_lengths=(32,),
                          suffix_length=32, n_values=N_VALUES, p=P, sampler=sampler, max_length=sz.n_positions,
                          n_threads=threads, random_state=s_ex)
    return {"seed": seed, "size": size, "n_parameters": int(sum(p.numel() for p in model.parameters())),
            "finetune_loss": losses[-1], "train_texts": len(train), "pretrain_cpu_seconds": pretrain_cpu,
            "train_cpu_seconds": train_cpu,
            "canaries": groups, "members": _rates(ex.summary), "canary_copies": copies.tolist(),
            "canary_log_p": [round(float(x), 4) for x in ce["log_p"]]}


def _rates(s: dict) -> dict:
    """The audit's numbers: per n, members' and non-members' k / n; the generations' exact and near-verbatim
    counts; the CPU cost."""
    g = s["generation"] or {}
    return {"by_n": {str(r["n"]): {"members": [r["members"]["k"], r["members"]["n"]],
                                   "nonmembers": [r["nonmembers"]["k"], r["nonmembers"]["n"]],
                                   "difference": r["difference"], "difference_interval": r["difference_interval"]}
                     for r in s["any_prefix"]},
            "generation": {mode: {who: None if v is None else {k: v[k] for k in ("n", "exact", "near_verbatim",
                                                                                  "rouge_l")}
                                  for who, v in g.get(mode, {}).items()} for mode in ("greedy", "sampled")},
            "n_texts": s["n_members"] + s["n_nonmembers"], "cpu_seconds": s["cpu_seconds"], "seconds": s["seconds"],
            "n_members_with_personal_data": s["n_members_with_personal_data"],
            "top_span": s["spans"][0] if s["spans"] else None}


def small_demo(out: Path, threads: int = 1, size: str = "small") -> dict:
    """The demo's GPT-2 of ``size`` (seed 0), its members against its non-members, and the cost of extraction
    alone."""
    from leakaudit.lm.demo import build_demo
    from leakaudit.lm.extraction import Sampler, extraction_audit
    from leakaudit.lm.load import load_causal_lm
    import json

    d = out / size
    if not (d / "target" / "model.safetensors").is_file():
        build_demo(d, size=size, seed=0, n_threads=threads)
    lm = load_causal_lm(d / "target")
    base = load_causal_lm(d / "base")
    rd = lambda p: [json.loads(line)["text"] for line in open(p, encoding="utf-8")]  # noqa: E731
    mem, non = rd(d / "members.jsonl"), rd(d / "nonmembers.jsonl")
    from leakaudit.lm.score import score_texts

    texts = mem + non
    ts = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, n_threads=threads,
                     distribution=False)
    rs = score_texts(base.model, base.tokenizer, texts, max_length=base.context_length, n_threads=threads,
                     distribution=False)
    res = {}
    for name, kw in (("full", {}), ("no generation", {"n_generate": 0})):
        ex = extraction_audit(lm.model, lm.tokenizer, texts, np.r_[np.ones(len(mem)), np.zeros(len(non))],
                              prefix_lengths=(32, 64), suffix_length=32, n_values=N_VALUES, p=P,
                              sampler=Sampler(1.0, 40), target_logprobs=ts.logprobs, reference_logprobs=rs.logprobs,
                              max_length=lm.context_length, n_threads=threads, random_state=0, **kw)
        res[name] = _rates(ex.summary)
    res["n_tokens"] = int(ts.n_tokens.sum())
    res["n_parameters"] = lm.n_parameters
    res["build"] = json.loads((d / "info.json").read_text())
    return res


def summarise(runs: list) -> dict:
    out = {"canaries": {}, "members": {}}
    for k in ("0", *map(str, COPIES)):
        rows = [r["canaries"][k] for r in runs]
        out["canaries"][k] = {
            "n_total": sum(r["n"] for r in rows),
            **{key: {"pooled": [sum(r[key] for r in rows), sum(r["n"] for r in rows)],
                     "per_seed_rate": C.mean_ci([r[key] / r["n"] for r in rows], clip=(0, 1), digits=4)}
               for key in ("exact_greedy", *[f"extractable_n{n}" for n in N_VALUES])}}
    for n in map(str, N_VALUES):
        out["members"][n] = {who: {"pooled": [sum(r["members"]["by_n"][n][who][0] for r in runs),
                                              sum(r["members"]["by_n"][n][who][1] for r in runs)],
                                   "per_seed_rate": C.mean_ci([r["members"]["by_n"][n][who][0]
                                                               / r["members"]["by_n"][n][who][1] for r in runs],
                                                              clip=(0, 1), digits=4)}
                             for who in ("members", "nonmembers")}
    out["cpu_seconds_per_1000_texts"] = C.mean_ci([r["members"]["cpu_seconds"] / r["members"]["n_texts"] * 1000
                                                   for r in runs], digits=3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--m", type=int, default=160)
    ap.add_argument("--secret-length", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--size", default="tiny", help="the canary runs' model (leakaudit.lm.demo.SIZES)")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--demo", action="append", default=[], help="a demo size to audit as --small does the small one")
    ap.add_argument("--name", default=None, help="the result's name (default lm_extraction[_SIZE]_eEPOCHS)")
    ap.add_argument("--small-dir", type=Path, default=Path("runs/lm-extraction"))
    a = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    runs = []
    for s in range(a.seeds):
        with C.Timer() as tm:
            runs.append(one_seed(s, m=a.m, secret_length=a.secret_length, epochs=a.epochs, size=a.size))
        g = runs[-1]["canaries"]
        print(f"seed {s} ({tm.seconds:.0f} s, {tm.cpu_seconds:.0f} CPU s): " + "; ".join(
            f"{k} copies: {v['extractable_n1000']}/{v['n']} extractable at n=1000, {v['exact_greedy']} greedy"
            for k, v in g.items()) + f"; members {runs[-1]['members']['by_n']['1000']}", flush=True)
    res = {"benchmark": "lm_extraction", "size": a.size, "m": a.m, "secret_length": a.secret_length, "epochs": a.epochs, "p": P,
           "n_values": list(N_VALUES), "copies": list(COPIES), "n_seeds": a.seeds, "machine": C.machine(),
           "command": "PYTHONPATH=src python benchmarks/lm_extraction.py " + " ".join(argv or sys.argv[1:]),
           "summary": summarise(runs) if runs else None, "runs": runs}
    for size in (["small"] if a.small else []) + a.demo:
        with C.Timer() as tm:
            res[f"{size}_demo"] = small_demo(a.small_dir, size=size)
        res[f"{size}_demo"]["seconds_with_build"] = tm.seconds
        res[f"{size}_demo"]["cpu_seconds_with_build"] = tm.cpu_seconds
        print(f"{size} demo ({tm.seconds:.0f} s): {res[f'{size}_demo']['full']['by_n']}", flush=True)
    name = a.name or "lm_extraction" + ("" if a.size == "tiny" else f"_{a.size}") + f"_e{a.epochs}"
    path = C.write_result(name, res)
    import json

    print(json.dumps(res["summary"], indent=1))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
