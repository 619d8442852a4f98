"""Memorisation of the locally fine-tuned language model: attack AUC and TPR at 1% FPR against fine-tuning epochs
and against duplication of member texts (the trend of Carlini et al. 2021 and Kandpal et al. 2022), with the blind
baseline beside them, over several seeds (docs/lm.md).

Per seed: SpamAssassin e-mails (cut to 200 characters) are shuffled and split into 300 public texts, 120 members
and 200 non-members; a byte-level BPE tokenizer and a GPT-2 of ``--size`` (default "tiny";
``leakaudit.lm.demo.SIZES``; the texts stay at 200 characters) are trained on the public texts (2 epochs: the base,
also the reference model).

* epochs: a copy of the base is fine-tuned on the 120 members and audited after 1, 2, 4, 8 and 16 epochs.
* duplication: another copy is fine-tuned for ``--dup-epochs`` epochs on the members split into four groups of 30,
  each text of group g appearing 1, 2, 4 or 8 times per epoch; each group is scored against all 200 non-members.

Attacks: loss, zlib ratio, Min-K% and Min-K%++ (k = 20%), reference-model ratio (the base); the blind baseline (texts
only, out of fold) on the same split. Figures: mean over seeds with a 95% t-interval over seeds.

Usage: .venv/bin/python benchmarks/lm_memorisation.py [--seeds 5] [--quick] [--size tiny]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

EPOCHS = (1, 2, 4, 8, 16)
DUPLICATES = (1, 2, 4, 8)
ATTACKS = ("lm_loss", "lm_zlib", "lm_min_k", "lm_min_k_pp", "lm_reference")


def _metrics(m, s):
    from leakaudit.metrics import auc, tpr_at_fpr

    return {"auc": float(auc(m, s)), "tpr_at_1pct_fpr": float(tpr_at_fpr(m, s, 0.01))}


def _split(seed: int, n_public: int, n_members: int, n_non: int):
    """The seed's public texts, members and non-members (one shuffled pool), and the blind baseline's seed."""
    from leakaudit._random import spawn_seeds
    from leakaudit.lm.demo import SIZES, demo_texts

    pool, _ = demo_texts(max_chars=SIZES["tiny"].max_chars)
    s_split, s_init, s_pre, s_fine, s_dup, s_blind = spawn_seeds(seed, 6)
    order = np.random.default_rng(s_split).permutation(len(pool))
    pub = [pool[i] for i in order[:n_public]]
    mem = [pool[i] for i in order[n_public:n_public + n_members]]
    non = [pool[i] for i in order[n_public + n_members:n_public + n_members + n_non]]
    return pub, mem, non, (s_init, s_pre, s_fine, s_dup, s_blind)


def _blind(texts, m, seed) -> dict:
    """The blind baseline's AUC and TPR at 1% FPR, and its permutation p-value (the guard flags at p <= 0.05 / 9
    with the four attacks without references, at the audit's default confidence)."""
    from leakaudit.lm.blind import blind_baseline

    bb = blind_baseline(texts, m, alpha=0.05 / 9, n_boot=0, random_state=seed)
    return {**_metrics(m, bb.scores), "p_value": bb.p_value}


def one_seed(seed: int, *, n_public=300, n_members=120, n_non=200, dup_epochs=2, threads=1, epochs=EPOCHS,
             size: str = "tiny") -> dict:
    import copy
    import warnings

    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.lm.attacks import run_lm_attacks
    from leakaudit.lm.demo import SIZES, new_model, train_lm, train_tokenizer
    from leakaudit.lm.score import score_texts

    warnings.simplefilter("ignore", NotEstimableWarning)
    sz = SIZES[size]
    pub, mem, non, (s_init, s_pre, s_fine, s_dup, s_blind) = _split(seed, n_public, n_members, n_non)
    tok = train_tokenizer(pub, vocab_size=sz.vocab_size)
    base = new_model(sz, len(tok), seed=s_init)
    train_lm(base, tok, pub, epochs=2, seed=s_pre, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    texts = mem + non
    m = np.r_[np.ones(len(mem)), np.zeros(len(non))]
    ref = score_texts(base, tok, texts, max_length=sz.n_positions, distribution=False, n_threads=threads)
    out = {"seed": seed, "size": size, "blind": _blind(texts, m, s_blind),
           "base_loss": _metrics(m, ref.mean_logprob()), "epochs": {}, "duplication": {}}
    model, done = copy.deepcopy(base), 0
    for e in epochs:
        train_lm(model, tok, mem, epochs=e - done, seed=s_fine + e, lr=sz.lr, batch_size=sz.batch_size,
                 n_threads=threads)
        done = e
        ts = score_texts(model, tok, texts, max_length=sz.n_positions, n_threads=threads)
        out["epochs"][e] = {k: _metrics(m, s) for k, s in run_lm_attacks(ts, texts, [ref]).items() if k in ATTACKS}
    groups = np.array_split(np.arange(n_members), len(DUPLICATES))
    train = [mem[i] for g, d in zip(groups, DUPLICATES) for i in g for _ in range(d)]
    model = copy.deepcopy(base)
    train_lm(model, tok, train, epochs=dup_epochs, seed=s_dup, lr=sz.lr, batch_size=sz.batch_size, n_threads=threads)
    ts = score_texts(model, tok, texts, max_length=sz.n_positions, n_threads=threads)
    scores = {k: s for k, s in run_lm_attacks(ts, texts, [ref]).items() if k in ATTACKS}
    non_idx = np.arange(n_members, len(texts))
    for g, d in zip(groups, DUPLICATES):
        idx = np.r_[g, non_idx]
        out["duplication"][d] = {k: _metrics(m[idx], s[idx]) for k, s in scores.items()}
    return out


def _summary(values):
    from scipy.stats import t

    v = np.asarray(values, float)
    half = float(t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")
    # AUC and TPR live in [0, 1]: the interval is clipped to it
    return {"mean": float(v.mean()), "ci95": [max(0.0, float(v.mean() - half)), min(1.0, float(v.mean() + half))],
            "values": v.round(4).tolist()}


def summarise(runs: list[dict]) -> dict:
    out = {"blind": {k: _summary([r["blind"][k] for r in runs]) for k in ("auc", "tpr_at_1pct_fpr")},
           "base_loss": {k: _summary([r["base_loss"][k] for r in runs]) for k in ("auc", "tpr_at_1pct_fpr")}}
    for axis in ("epochs", "duplication"):
        out[axis] = {}
        for level in runs[0][axis]:
            out[axis][level] = {a: {k: _summary([r[axis][level][a][k] for r in runs])
                                    for k in ("auc", "tpr_at_1pct_fpr")} for a in ATTACKS}
    return out


def markdown(summ: dict, n_seeds: int) -> str:
    names = {"lm_loss": "loss", "lm_zlib": "zlib", "lm_min_k": "Min-K%", "lm_min_k_pp": "Min-K%++",
             "lm_reference": "reference"}
    f = lambda s: f"{s['mean']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"  # noqa: E731
    lines = []
    for axis, label in (("epochs", "epochs"), ("duplication", "copies per epoch")):
        for metric, mname in (("auc", "AUC"), ("tpr_at_1pct_fpr", "TPR at 1% FPR")):
            lines += [f"**{mname} against {label}** (mean over {n_seeds} seeds [95% t-interval])", "",
                      f"| {label} | " + " | ".join(names[a] for a in ATTACKS) + " | blind baseline |",
                      "|---|" + "---|" * (len(ATTACKS) + 1)]
            for level, row in summ[axis].items():
                lines.append(f"| {level} | " + " | ".join(f(row[a][metric]) for a in ATTACKS)
                             + f" | {f(summ['blind'][metric])} |")
            lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="2 seeds, epochs 1 and 2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--size", default="tiny", help="the model (leakaudit.lm.demo.SIZES)")
    ap.add_argument("--blind-only", action="store_true",
                    help="recompute only the blind baseline of the stored runs (it depends on the split alone), "
                         "keeping the earlier one as blind_before")
    a = ap.parse_args(argv)
    if a.blind_only:
        import json

        path = C.RESULTS / "lm_memorisation.json"
        res = json.loads(path.read_text())
        for r in res["runs"]:
            _, mem, non, seeds = _split(r["seed"], 300, 120, 200)
            r.setdefault("blind_before", r["blind"])
            r["blind"] = _blind(mem + non, np.r_[np.ones(len(mem)), np.zeros(len(non))], seeds[-1])
            print(f"seed {r['seed']}: blind AUC {r['blind']['auc']:.3f} (p = {r['blind']['p_value']:.3f}), before "
                  f"{r['blind_before']['auc']:.3f}", flush=True)
        res["summary"] = summarise(res["runs"])
        res.setdefault("command_runs", res.get("command"))  # the runs themselves came from this command
        res["blind_recomputed"] = "python benchmarks/lm_memorisation.py --blind-only"
        C.write_result("lm_memorisation", res)
        print(markdown(res["summary"], len(res["runs"])))
        return 0
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    seeds = range(2 if a.quick else a.seeds)
    runs = []
    for s in seeds:
        with C.Timer() as tm:
            runs.append(one_seed(s, threads=a.threads, epochs=(1, 2) if a.quick else EPOCHS, size=a.size))
        print(f"seed {s} done in {tm.seconds:.0f} s ({tm.cpu_seconds:.0f} CPU s)", flush=True)
    summ = summarise(runs)
    res = {"benchmark": "lm_memorisation", "size": a.size, "n_seeds": len(runs), "summary": summ, "runs": runs}
    path = C.write_result("lm_memorisation" + ("" if a.size == "tiny" else f"_{a.size}") + ("_quick" if a.quick
                                                                                             else ""), res)
    print(markdown(summ, len(runs)))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
