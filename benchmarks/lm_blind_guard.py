"""The language-model audit's blind-baseline guard on known truth (issue 34): how often it calls a comparable split
"not comparable", and how often it catches a split that differs by itself.

* **Comparable splits** (``null``): random splits of one pool of SpamAssassin e-mails (texts as in the tests:
  subject and body cut to 200 characters), ``--null-seeds`` of 60 + 60 texts and half as many of 200 + 200. Any flag
  is false.
* **Shifted splits** (``shift``): members and non-members drawn from different parts of the corpus, ``--shift-seeds``
  draws each: ``source`` (spam-2 against easy-ham-1), ``period`` (easy-ham-2, collected later, against easy-ham-1),
  ``hard`` (hard-ham-1 against easy-ham-1), ``length`` (ham that ends before the 200-character cut against
  ham cut there; 60 + 60 only: 196 e-mails end early).
  Every flag is right.
* The "model" is the demo's tiny GPT-2 pre-trained on 300 other e-mails, which saw neither members nor non-members:
  whatever its attacks (loss, zlib, Min-K%, Min-K%++) find is the split's difference, never leakage (the situation
  of Das et al. 2024).

The guard is the audit's own rule (``leakaudit.audit.steps.lm._blind_check``) at the audit's confidence with these
four attacks (Bonferroni over 4 x 2 + 1 checks: 1 - 0.05 / 9), and for the comparable splits also at 0.95. The
script runs against whichever leakaudit is on ``PYTHONPATH``; given the checkout before the change it measures the old
rule (logistic regression scored out of fold, DeLong interval above 0.5 and reaching the best attack's interval),
which gives the "before" rates (``--tag before``).

``--interval-seeds N`` instead checks the blind AUC's interval: over N fresh draws of a comparable and of a shifted
design, the mean of its bootstrap standard deviation (the one that refits the classifier) against the AUC's own
spread.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/lm_blind_guard.py [--null-seeds 200] [--shift-seeds 20]
       [--tag after] [--interval-seeds N]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

import numpy as np  # noqa: E402

N_ATTACKS = 4
AUDIT_CC = 1 - 0.05 / (N_ATTACKS * 2 + 1)
SIZES = (60, 200)
SHIFTS = ("source", "period", "hard", "length")


def _corpus_scores():
    """Every e-mail of the corpus, its group, and the four attacks' scores under a model that saw none of them."""
    from leakaudit.lm.attacks import run_lm_attacks
    from leakaudit.lm.demo import SIZES as DEMO, demo_texts, new_model, train_lm, train_tokenizer
    from leakaudit.lm.score import score_texts

    sz = DEMO["tiny"]
    texts, groups = demo_texts(max_chars=sz.max_chars)
    order = np.random.default_rng(12345).permutation(len(texts))
    pub, rest = order[:300], np.sort(order[300:])
    tok = train_tokenizer([texts[i] for i in pub], vocab_size=sz.vocab_size)
    model = new_model(sz, len(tok), seed=1)
    train_lm(model, tok, [texts[i] for i in pub], epochs=2, seed=2, lr=sz.lr, batch_size=sz.batch_size, n_threads=1)
    docs = [texts[i] for i in rest]
    ts = score_texts(model, tok, docs, max_length=sz.n_positions, n_threads=1)
    return docs, groups[rest], run_lm_attacks(ts, docs, []), (model, tok)


def leak_check(docs, groups, lengths, base, n_seeds: int, epochs: int = 16) -> dict:
    """The other side: a shifted split (period, 60 + 60) on which the model really leaks. A copy of the base is
    fine-tuned on the members for ``epochs`` epochs; the attacks that beat the blind baseline should stand."""
    import copy

    from scipy.stats import norm

    from leakaudit.audit.steps.lm import _blind_check
    from leakaudit.lm.attacks import ATTACKS, run_lm_attacks
    from leakaudit.lm.blind import blind_baseline
    from leakaudit.lm.demo import SIZES as DEMO, train_lm
    from leakaudit.lm.score import score_texts
    from leakaudit.metrics import auc

    sz, (model0, tok) = DEMO["tiny"], base
    runs = []
    for seed in range(n_seeds):
        rng = np.random.default_rng([seed, 60, 77])
        mem, non = _split("period", rng, groups, lengths, 60)
        texts = [docs[i] for i in np.r_[mem, non]]
        m = np.r_[np.ones(60, int), np.zeros(60, int)]
        model = copy.deepcopy(model0)
        train_lm(model, tok, texts[:60], epochs=epochs, seed=seed, lr=sz.lr, batch_size=sz.batch_size, n_threads=1)
        scores = run_lm_attacks(score_texts(model, tok, texts, max_length=sz.n_positions, n_threads=1), texts, [])
        bb = blind_baseline(texts, m, versus=scores, alpha=1 - AUDIT_CC, random_state=seed)
        _, standing = _blind_check(bb, {n: {"display": ATTACKS[n].display} for n in scores}, AUDIT_CC)
        b_auc = bb.auc
        runs.append({"seed": seed, "blind_auc": b_auc, "blind_p": bb.p_value,
                     "attack_auc": {n: float(auc(m, s)) for n, s in scores.items()},
                     "paired_lower": {n: v["diff"] - norm.ppf(AUDIT_CC) * v["diff_sd"] for n, v in bb.versus.items()},
                     "standing": sorted(standing), "flagged": not standing})
        print(f"leak seed {seed}: blind AUC {b_auc:.3f}, attacks "
              + ", ".join(f"{n} {v:.3f}" for n, v in runs[-1]["attack_auc"].items())
              + f"; standing {runs[-1]['standing']}", flush=True)
    return {"epochs": epochs, "runs": runs,
            "attacks_stand": _rate(sum(not r["flagged"] for r in runs), len(runs))}


def _pick(rng, idx, k):
    return rng.choice(idx, k, replace=False)


def _split(kind, rng, groups, lengths, k):
    """Indices of k members and k non-members for one draw."""
    if kind == "null":
        both = _pick(rng, np.arange(groups.size), 2 * k)
        return both[:k], both[k:]
    ham = np.flatnonzero(np.isin(groups, ["easy-ham-1", "easy-ham-2"]))
    short = ham[lengths[ham] < 199]  # e-mails that end before the cut (199: cut at 200, then a space stripped)
    pools = {"source": ("spam-2", "easy-ham-1"), "period": ("easy-ham-2", "easy-ham-1"),
             "hard": ("hard-ham-1", "easy-ham-1")}
    if kind == "length":
        return _pick(rng, short, k), _pick(rng, np.setdiff1d(ham, short), k)
    a, b = pools[kind]
    return _pick(rng, np.flatnonzero(groups == a), k), _pick(rng, np.flatnonzero(groups == b), k)


def _guard(texts, m, scores, ccs, seed):
    """For each confidence in ``ccs``: (flagged, blind separates); and the blind AUC and CPU seconds, under the
    installed leakaudit's rule (one fit of the blind baseline serves every confidence)."""
    from leakaudit.exceptions import NotEstimableWarning
    from leakaudit.lm import blind as B
    from leakaudit.lm.attacks import ATTACKS
    from leakaudit.metrics import evaluate_membership

    t0 = time.process_time()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        if hasattr(B, "blind_baseline"):  # the calibrated rule
            from leakaudit.audit.steps.lm import _blind_check

            bb = B.blind_baseline(texts, m, versus=scores, alpha=1 - max(ccs), random_state=seed)
            for cc in ccs:
                _, standing = _blind_check(bb, {n: {"display": ATTACKS[n].display} for n in scores}, cc)
                out[cc] = (not standing, bb.p_value <= 1 - cc)
            return out, bb.auc, time.process_time() - t0
        from leakaudit.audit.steps.lm import _blind_check  # the rule before: DeLong interval of the blind AUC

        blind = B.blind_baseline_scores(texts, m, random_state=seed)
        for cc in ccs:
            mm = {n: evaluate_membership(m, s, confidence=cc, n_boot=1).model_dump() for n, s in scores.items()}
            best = max(mm.items(), key=lambda kv: kv[1]["auc"])
            bmm = evaluate_membership(m, blind, confidence=cc, n_boot=1).model_dump()
            _, comparable = _blind_check(bmm, (best[0], best[1]), cc)
            out[cc] = (not comparable, bmm["auc_ci"][0] > 0.5)
        return out, bmm["auc"], time.process_time() - t0


def interval_check(docs, groups, lengths, n_seeds: int) -> dict:
    """Is the blind AUC's bootstrap standard deviation (the one that refits the classifier) the AUC's real spread?
    Over ``n_seeds`` fresh draws of each design, the mean bootstrap SD against the SD of the AUCs themselves."""
    from leakaudit.lm.blind import blind_baseline

    out = {}
    for kind in ("null", "period"):
        for k in SIZES:
            aucs, sds = [], []
            for seed in range(n_seeds):
                rng = np.random.default_rng([seed, k, 99, SHIFTS.index(kind) + 1 if kind in SHIFTS else 0])
                mem, non = _split(kind, rng, groups, lengths, k)
                bb = blind_baseline([docs[i] for i in np.r_[mem, non]], np.r_[np.ones(k), np.zeros(k)],
                                    n_permutations=1, random_state=seed)
                aucs.append(bb.auc)
                sds.append(bb.auc_sd)
            out[f"{kind}/{k}+{k}"] = {"auc_mean": float(np.mean(aucs)),
                                      "auc_sd_over_draws": float(np.std(aucs, ddof=1)),
                                      "bootstrap_sd_mean": float(np.mean(sds)), "n": n_seeds,
                                      "fixed_scorer_null_sd": float(np.sqrt((2 * k + 1) / (12 * k * k)))}
            print(f"interval {kind}/{k}+{k}: AUC {np.mean(aucs):.3f}, SD over draws {np.std(aucs, ddof=1):.3f}, "
                  f"mean bootstrap SD {np.mean(sds):.3f}", flush=True)
    return out


def table() -> str:
    """The before / after table in Markdown, from results/lm_blind_guard_{before,after}.json."""
    import json

    after = json.loads((C.RESULTS / "lm_blind_guard_after.json").read_text())["summary"]
    path = C.RESULTS / "lm_blind_guard_before.json"
    before = json.loads(path.read_text())["summary"] if path.exists() else {}
    names = {"null": "comparable: random split of one pool", "source": "shifted: source (spam / ham)",
             "period": "shifted: period", "hard": "shifted: hard / easy ham", "length": "shifted: length"}

    def f(g):
        return (f"{g['flagged']}/{g['n']} = {100 * g['rate']:.1f}% [{100 * g['ci95'][0]:.1f}, "
                f"{100 * g['ci95'][1]:.1f}]")

    rows = ["| split | texts | confidence | nominal false-flag rate, before / after | flagged before | "
            "flagged after | blind AUC before / after (mean; SD over seeds) |", "|---|---|---|---|---|---|---|"]
    for key, a in after.items():
        kind, size, cc = key.split("/")
        b = before.get(key)
        nominal = (f"{50 * (1 - float(cc)):.2f}% / {100 * (1 - float(cc)):.2f}%" if kind == "null"
                   else "none (all right)")
        auc = (f"{b['blind_auc_mean']:.3f} ({b['blind_auc_sd']:.3f}) / " if b else "")
        rows.append(f"| {names[kind]} | {size} | {float(cc):.4f} | {nominal} | {f(b['guard']) if b else '-'} | "
                    f"{f(a['guard'])} | {auc}{a['blind_auc_mean']:.3f} ({a['blind_auc_sd']:.3f}) |")
    return "\n".join(rows)


def _rate(k, n):
    from scipy.stats import beta

    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return {"flagged": int(k), "n": int(n), "rate": k / n, "ci95": [lo, hi]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--null-seeds", type=int, default=200)
    ap.add_argument("--shift-seeds", type=int, default=20)
    ap.add_argument("--tag", default="after")
    ap.add_argument("--resume", action="store_true", help="keep the runs already in the results file")
    ap.add_argument("--null-seeds-large", type=int, default=None,
                    help="random splits of 200 + 200 texts (default: half of --null-seeds, at least 20)")
    ap.add_argument("--table", action="store_true", help="only print the before / after table from the results")
    ap.add_argument("--leak-seeds", type=int, default=0,
                    help="instead: a shifted split on which the model leaks (the attacks should stand), N seeds")
    ap.add_argument("--quick", action="store_true", help="5 seeds of each, 60 + 60 texts")
    ap.add_argument("--interval-seeds", type=int, default=0,
                    help="instead: check the blind AUC's bootstrap SD against its spread over this many draws")
    a = ap.parse_args(argv)
    if a.table:
        print(table())
        return 0
    if a.interval_seeds:
        from leakaudit.lm.demo import SIZES as DEMO, demo_texts

        texts, grp = demo_texts(max_chars=DEMO["tiny"].max_chars)
        res = interval_check(texts, grp, np.array([len(t) for t in texts]), a.interval_seeds)
        C.write_result("lm_blind_guard_interval", {"benchmark": "lm_blind_guard_interval", "summary": res,
                                                   "loadavg": C.loadavg()})
        return 0
    if a.quick:
        a.null_seeds, a.shift_seeds = 5, 5
    from leakaudit.metrics import auc

    docs, groups, scores, base = _corpus_scores()
    lengths = np.array([len(t) for t in docs])
    if a.leak_seeds:
        res = leak_check(docs, groups, lengths, base, a.leak_seeds)
        C.write_result("lm_blind_guard_leak", {"benchmark": "lm_blind_guard_leak", **res, "loadavg": C.loadavg()})
        return 0
    name = f"lm_blind_guard_{a.tag}" + ("_quick" if a.quick else "")
    result = {"benchmark": "lm_blind_guard", "tag": a.tag, "n_corpus": len(docs), "audit_confidence": AUDIT_CC,
              "loadavg_start": C.loadavg(), "runs": []}
    # the larger split costs more
    null_seeds = {SIZES[0]: a.null_seeds, SIZES[1]: a.null_seeds_large or max(20, a.null_seeds // 2)}
    plan = [("null", k, s) for k in (SIZES[:1] if a.quick else SIZES) for s in range(null_seeds[k])]
    plan += [(kind, k, s) for kind in SHIFTS for k in (SIZES[:1] if a.quick or kind == "length" else SIZES)
             for s in range(a.shift_seeds)]
    if a.resume and (C.RESULTS / f"{name}.json").exists():  # keep the runs a stopped invocation wrote
        import json

        result["runs"] = json.loads((C.RESULTS / f"{name}.json").read_text())["runs"]
        done = {(r["kind"], r["per_class"], r["seed"]) for r in result["runs"]}
        plan = [p for p in plan if p not in done]
    for kind, k, seed in plan:
        rng = np.random.default_rng([seed, k, SHIFTS.index(kind) + 1 if kind in SHIFTS else 0])
        mem, non = _split(kind, rng, groups, lengths, k)
        idx = np.r_[mem, non]
        m = np.r_[np.ones(k, int), np.zeros(k, int)]
        ccs = (0.95, AUDIT_CC) if kind == "null" else (AUDIT_CC,)
        flags, b_auc, sec = _guard([docs[i] for i in idx], m, {n: s[idx] for n, s in scores.items()}, ccs, seed)
        best = max(float(auc(m, s[idx])) for s in scores.values())
        for cc, (flagged, separates) in flags.items():
            result["runs"].append({"kind": kind, "per_class": k, "seed": seed, "confidence": cc,
                                   "flagged": bool(flagged), "separates": bool(separates), "blind_auc": b_auc,
                                   "best_attack_auc": best, "cpu_seconds": sec})
        if len(result["runs"]) % 20 < len(flags):  # written as it goes, so a stopped run keeps what it measured
            C.write_result(name, {**result, "loadavg_end": C.loadavg()})
    summary = {}
    for kind in ("null",) + SHIFTS:
        for k in SIZES:
            for cc in (0.95, AUDIT_CC):
                rows = [r for r in result["runs"] if r["kind"] == kind and r["per_class"] == k
                        and r["confidence"] == cc]
                if not rows:
                    continue
                aucs = np.array([r["blind_auc"] for r in rows])
                summary[f"{kind}/{k}+{k}/{cc:.4f}"] = {
                    "guard": _rate(sum(r["flagged"] for r in rows), len(rows)),
                    "blind_separates": _rate(sum(r["separates"] for r in rows), len(rows)),
                    "blind_auc_mean": float(aucs.mean()), "blind_auc_sd": float(aucs.std(ddof=1)),
                    "fixed_scorer_null_sd": float(np.sqrt((2 * k + 1) / (12 * k * k))),
                    "best_attack_auc_mean": float(np.mean([r["best_attack_auc"] for r in rows])),
                    "cpu_seconds_mean": float(np.mean([r["cpu_seconds"] for r in rows]))}
    result["summary"] = summary
    path = C.write_result(name, {**result, "loadavg_end": C.loadavg()})
    for key, s in summary.items():
        g = s["guard"]
        print(f"{key}: flagged {g['flagged']}/{g['n']} [{g['ci95'][0]:.3f}, {g['ci95'][1]:.3f}]; blind separates "
              f"{s['blind_separates']['flagged']}/{g['n']}; blind AUC {s['blind_auc_mean']:.3f} sd "
              f"{s['blind_auc_sd']:.3f} (fixed scorer {s['fixed_scorer_null_sd']:.3f}); best attack AUC "
              f"{s['best_attack_auc_mean']:.3f}; {s['cpu_seconds_mean']:.2f} CPU s a run")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
