"""The analyses of a causal language model's audit, from its texts' per-token scores (the pipeline's text inputs):
the attacks and the blind baseline, dataset inference and extraction.

The same checks as for a tabular model (each attack's AUC, TPR at the owner's low FPR and, with a budget, its
empirical epsilon, judged at the Bonferroni-corrected confidence: :func:`.membership.attack_checks`), and one
more: the blind baseline (:mod:`leakaudit.lm.blind`). When a classifier that sees only the texts tells members from
non-members (its permutation p-value at most 1 - the checks' confidence), the split is not comparable (Das et al.
2024): an attack's checks stand only if it beats the blind baseline on the same texts (paired bootstrap that refits
the classifier), the others become "not measurable"; when none does, the verdict is inconclusive and says why,
instead of reporting the split's difference as the model's leakage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..result.checks import EXCEEDED, NOT_MEASURABLE, PASSED, Analysis, Check, Skipped, undecided_fix, within_sentence
from ...membership import ATTACKS, available_attacks, display_name
from ..config import AuditConfig, phrase
from ..context import AuditContext
from .membership import attack_checks, measure_attack
from . import Plan, Step

__all__ = ["MIN_K", "BATCH_TOKENS", "LMScores", "LM_PLAN", "threads"]

#: the share of tokens Min-K% and Min-K%++ average (both papers' default, 20%)
MIN_K = 0.2
#: most padded tokens per forward pass when scoring
BATCH_TOKENS = 4096


def threads() -> int:
    """The CPU cores this process may run on: the torch threads that score and generate."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _blind_interval(bb, cc: float) -> tuple[float, float]:
    """The blind AUC's two-sided ``cc`` interval, from the bootstrap that refits the classifier, within [0, 1]."""
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - cc) / 2)
    return max(0.0, bb.auc - z * bb.auc_sd), min(1.0, bb.auc + z * bb.auc_sd)


def _blind_check(bb, metrics: dict, cc: float) -> tuple[Check, set[str]]:
    """The blind baseline's check, and the attacks whose results stand.

    The split differs by itself when the permutation p-value of the blind AUC is at most 1 - ``cc``; then an attack
    stands only if its AUC beats the blind AUC on the same texts: the lower ``cc`` bound of the paired difference,
    from the bootstrap that refits the blind classifier, above 0. On a comparable split every attack stands."""
    from scipy.stats import norm

    alpha = 1 - cc
    lo, hi = _blind_interval(bb, cc)
    base = {"id": "membership.blind_baseline.auc", "analysis": "membership",
            "name": "blind baseline (texts only): AUC", "value": bb.auc, "interval": (lo, hi), "threshold": None,
            "confidence": cc}
    shown = (f"AUC {bb.auc:.3f} (interval [{lo:.3f}, {hi:.3f}]; permutation p = {bb.p_value:.2g} over "
             f"{bb.n_permutations:,} relabellings)")
    if bb.p_value > alpha:
        return Check(**base, status=PASSED,
                     sentence=f"a classifier that sees only the texts does not tell members from non-members better "
                              f"than chance ({shown}): the split is comparable"), set(metrics)
    z = norm.ppf(cc)
    clear = {name for name, v in bb.versus.items() if v["diff"] - z * v["diff_sd"] > 0}
    best = max(bb.versus, key=lambda n: bb.versus[n]["diff"]) if bb.versus else None
    if best is None:
        gap = ""
    else:
        v = bb.versus[best]
        gap = (f"; the best attack ({metrics[best]['display']}, AUC {v['auc']:.3f}) is {v['diff']:+.3f} above it "
               f"(lower {cc:.1%} bound {v['diff'] - z * v['diff_sd']:+.3f}, paired bootstrap refitting the classifier)")
    if not clear:
        return Check(**base, status=NOT_MEASURABLE,
                     sentence=f"the member and non-member texts are not comparable: a classifier that sees only the "
                              f"texts, never the model, tells them apart with {shown}{gap}; no attack beats it, so "
                              "the attacks would measure the split, not the model (Das et al. 2024)",
                     fix="draw the members and non-members from one distribution (e.g. a random split of one pool of "
                         "texts, the non-members held out from fine-tuning), then audit again"), clear
    names = ", ".join(metrics[n]["display"] for n in sorted(clear))
    return Check(**base, status=PASSED,
                 sentence=f"a classifier that sees only the texts tells members from non-members with {shown}{gap}; "
                          f"{names} beat{'s' if len(clear) == 1 else ''} it, so the model tells the texts apart "
                          "beyond what the texts alone show: only those attacks are judged"), clear



@dataclass(frozen=True)
class LMScores:
    """The audited texts (members first), which are members, and their per-token scores under the audited model
    (``target``) and each reference model (``references``): what the language-model analyses read."""

    texts: list
    is_member: np.ndarray
    target: object  # leakaudit.lm.score.TokenScores
    references: list
    scores_only: bool = False  # per-token scores given, no model
    model: object = None  # the audited leakaudit.lm.load.LoadedLM (None: scores only)
    names: tuple = ()  # each text's name in sentences: its file and row (1 = the first row), members first


def _lm_membership_checks(cfg: AuditConfig, texts, scored: LMScores) -> int:
    """Per attack the scores allow: its AUC and TPR at the low FPR, with a budget its empirical epsilon; and the
    blind baseline's check."""
    from ...membership import text_attacks

    n = len(text_attacks(scored.target.mean is not None, bool(scored.references)))
    return n * (2 + (cfg.epsilon_budget is not None)) + 1


def _lm_membership(ctx: AuditContext, done) -> Analysis:
    """Every attack the scores allow, judged as a tabular audit's attacks are (:func:`attack_checks`), then the
    blind baseline, which decides which attacks' checks stand (the module docstring)."""
    from ...lm.attacks import run_lm_attacks
    from ...lm.blind import blind_baseline

    cfg, cc, seeds, sc = ctx.cfg, ctx.check_confidence, ctx.seeds, ctx.scored
    m = sc.is_member
    scores = run_lm_attacks(sc.target, sc.texts, sc.references, k=MIN_K)
    metrics, checks = {}, []
    for name, s in scores.items():
        mm, eps = measure_attack(ctx, m, s)
        mm["display"], mm["reference"] = display_name(name), ATTACKS.get(name).description
        metrics[name] = mm
        checks += attack_checks(name, mm, eps, thresholds=cfg.thresholds, confidence=cc,
                                epsilon_budget=cfg.epsilon_budget, display=display_name(name))
    bb = blind_baseline(sc.texts, m, versus=scores, alpha=1 - cc, random_state=seeds["blind"])
    blind_mm = _measure_blind(ctx, bb, m)
    blind_check, standing = _blind_check(bb, metrics, cc)
    def judged(c: Check) -> Check:
        """``c`` as the blind baseline leaves it: an attack that does not beat it cannot be judged."""
        if c.id.split(".")[1] in standing:
            return c
        if c.status == NOT_MEASURABLE:
            return c.model_copy(update={"because": blind_check.id})
        return c.model_copy(update={
            "status": NOT_MEASURABLE, "because": blind_check.id,
            "sentence": f"{c.name} cannot be judged: the member and non-member texts differ by themselves and this "
                        "attack does not beat a classifier of the texts alone (see the blind baseline)",
            "fix": blind_check.fix or "draw the members and non-members from one distribution, then audit again"})

    checks = [judged(c) for c in checks]
    checks.append(blind_check)
    skipped = []

    def needing(need: str) -> str:  # the text attacks that did not run for want of ``need``
        return ", ".join(display_name(n) for n in available_attacks("text") if need in ATTACKS.get(n).needs)

    if sc.target.mean is None:
        skipped.append(Skipped(name=needing("distribution"), reason="they need the next-token distribution's mean "
                               "and standard deviation of log-probabilities at each position, which per-token scores "
                               "alone do not give",
                               fix=phrase("give the model itself ({0})", "model_dir"), missing=["model"]))
    if not sc.references:
        skipped.append(Skipped(name=needing("references"),
                               reason="they calibrate each text's score by reference models, and none was given",
                               fix=phrase("give {0} (e.g. the base model before fine-tuning)"
                                          + " with {1}" * sc.scores_only, ("reference_dir", "DIR"), "model_dir"),
                               missing=["reference"]))
    summary = {**metrics, "blind_baseline": {**blind_mm, "display": "blind baseline (texts only)",
                                             "comparable": bool(bb.p_value > 1 - cc),
                                             "attacks_standing": sorted(standing)}}
    per_record = {**{f"score_{name}": s for name, s in scores.items()}, "blind_baseline": bb.scores}
    n_threads = threads()
    settings = {"attacks": "; ".join(f"{display_name(n)}: {ATTACKS.get(n).description}" for n in scores),
                "blind_baseline": "TF-IDF of character 2-4-grams and word 1-2-grams plus log length, kernel ridge "
                                  f"regression, {bb.n_folds}-fold cross-fitting with near-duplicates kept together "
                                  f"({bb.n_groups:,} groups); permutation test ({bb.n_permutations:,} relabellings) "
                                  f"and paired bootstrap refitting the classifier ({bb.n_boot} resamples) "
                                  "(Das et al. 2024)",
                "scoring": "given (scores only)" if sc.scores_only else
                           f"batches of at most {BATCH_TOKENS:,} padded tokens, {n_threads} torch thread"
                           f"{'s' if n_threads > 1 else ''}, float32"}
    return Analysis(name="membership", summary=summary, checks=tuple(checks), skipped=tuple(skipped),
                    per_record=per_record, extras={"blind": bb}, settings=settings)


def _leaked_windows(ctx: AuditContext, done) -> Analysis:
    """The windows that carry the signal in the member texts the strongest standing attack (the highest AUC among
    those the blind baseline leaves standing) ranks highest (:func:`leakaudit.lm.windows.exposed_windows`); or why
    none is shown: scores given without a model have no tokens to decode, and with no attack standing no text's
    rank is the model's."""
    from ...lm.windows import CONTRASTS, TOP_TEXTS, WINDOW, exposed_windows, token_contrast

    sc, mem = ctx.scored, done["membership"]
    summary = mem.summary or {}
    standing = (summary.get("blind_baseline") or {}).get("attacks_standing") or []
    auc = {n: float(summary[n]["auc"]) for n in standing if n in summary and summary[n].get("auc") is not None
           and np.isfinite(summary[n]["auc"]) and f"score_{n}" in mem.per_record}

    def not_shown(reason: str) -> Analysis:
        return Analysis(name="leaked_windows", summary={"texts": [], "reason": reason})

    if sc.scores_only or sc.model is None:
        return not_shown("the per-token scores were given without the model, so there are no tokens to decode into "
                         "text: give the model itself, not only its scores, to see them")
    if not auc:
        return not_shown("no attack stands: the member and non-member texts differ by themselves and no attack beats "
                         "the blind baseline, so no text's rank is the model's (see the blind baseline)")
    contrast, kind = token_contrast(sc.target, sc.references)
    if contrast is None:
        return not_shown("there is no per-token contrast: it needs a reference model or the next-token "
                         "distribution's moments")
    best = max(auc, key=auc.get)
    texts = exposed_windows(sc.texts, sc.is_member, np.asarray(mem.per_record[f"score_{best}"]), contrast,
                            sc.model.tokenizer, max_length=sc.model.context_length, names=sc.names, k=TOP_TEXTS,
                            window=WINDOW)
    return Analysis(name="leaked_windows", summary={
        "attack": best, "display": summary[best].get("display") or display_name(best), "auc": auc[best],
        "auc_ci": summary[best].get("auc_ci"), "contrast": CONTRASTS[kind], "window": WINDOW, "k": TOP_TEXTS,
        "texts": texts})


def _dataset_inference(ctx: AuditContext, done) -> Analysis:
    """The members as a set against the non-members (:func:`leakaudit.lm.dataset_inference.dataset_inference`:
    the membership step's attack scores as features, a combination learned on one half, a one-sided set-level test
    on the other, and the power curve), at the checks' level. The membership step's blind baseline is the guard:
    where the texts alone tell the two sets apart, no test of the model can show use, and the check is not
    measurable."""
    from ...lm.dataset_inference import dataset_inference

    cc, sc = ctx.check_confidence, ctx.scored
    m = np.asarray(sc.is_member, bool)
    texts = np.asarray(sc.texts, dtype=object)
    bb = done["membership"].extras["blind"]
    comparable = bool(bb.p_value > 1 - cc)
    n_mem = int(m.sum())
    scores = {k[len("score_"):]: v for k, v in done["membership"].per_record.items() if k.startswith("score_")}
    di = dataset_inference(list(texts[m]), list(texts[~m]), sc.target, sc.references, alpha=1 - cc, guard=False,
                           k=MIN_K, random_state=ctx.seeds["dataset_inference"], scores=scores)
    p = di.test.p_value
    common = dict(id="dataset_inference.set_test", analysis="dataset_inference",
                  name="dataset inference: the members as a set", value=p, threshold=1 - cc, confidence=cc,
                  shows="leakage only")
    if not comparable:
        check = Check(**common, status=NOT_MEASURABLE,
                      sentence="dataset inference cannot be judged: the member and non-member texts differ by "
                               f"themselves (blind baseline p = {bb.p_value:.3g}), so a set-level test of the model "
                               "cannot tell use from that difference",
                      fix="draw the non-members from the members' distribution, then audit again",
                      because="membership.blind_baseline.auc")
    elif p <= 1 - cc:
        check = Check(**common, status=EXCEEDED,
                      sentence=f"dataset inference shows the model was trained on the {n_mem:,} members as a set: "
                               f"one-sided set-level p = {p:.3g}, at most the checks' level {1 - cc:.3g}")
    else:
        check = Check(**common, status=PASSED,
                      sentence=f"dataset inference does not detect the {n_mem:,} members as a set (p = {p:.3g} above "
                               f"the checks' level {1 - cc:.3g}): no evidence of use at this size, not evidence "
                               "of no use")
    summary = {**di.to_dict(), "comparable": comparable, "blind_p_value": float(bb.p_value),
               "blind_auc": float(bb.auc), "verdict": ("not comparable" if not comparable else
                                                        "used" if p <= 1 - cc else "not detected")}
    return Analysis(name="dataset_inference", summary=summary, checks=(check,))


def _extraction_not_run(ctx: AuditContext, done) -> Skipped | None:
    """Why extraction is not measured (not asked for; scores given without the model, whose logits and decoding it
    needs), said because no membership result implies anything about it; None: it runs."""
    imply = "; no membership result bounds extraction, so this audit says nothing of it"
    if not ctx.cfg.extraction:
        return Skipped(name="extraction", reason=phrase("not asked for ({0})" + imply, ("extraction", "false")),
                       fix=phrase("give {0} to measure it", ("extraction", "true")))
    if not ctx.scored.scores_only:
        return None
    return Skipped(name="extraction", reason="it needs the model's next-token distributions and its own decoding, "
                                             "which per-token scores alone do not give" + imply,
                   fix=phrase("give the model itself ({0})", "model_dir"), missing=["model"])


def _extraction(ctx: AuditContext, done) -> Analysis:
    """Hayes et al.'s (n, p)-extraction of the members' suffixes against the non-members' (the base rate), with
    the rank bound on every decoding's extraction, generations and the members' most extractable spans
    (:func:`leakaudit.lm.extraction.extraction_audit`), judged by one check: the members' rate minus the non-members'
    at the largest ``n``, its Newcombe interval at the checks' confidence against ``max_extraction_rate_difference``.
    The membership step's blind baseline guards it: where the texts alone tell the two sets apart, the difference is
    not the model's and the check is not measurable."""
    from ...exceptions import UnsupportedError
    from ...lm.extraction import Sampler, extraction_audit

    cfg, cc, sc = ctx.cfg, ctx.check_confidence, ctx.scored
    thr = cfg.thresholds.max_extraction_rate_difference
    common = dict(id="extraction.suffixes.rate_difference", analysis="extraction",
                  name="extraction: members' rate above the base rate", threshold=thr, confidence=cc)
    lm = sc.model
    try:
        ex = extraction_audit(
            lm.model, lm.tokenizer, sc.texts, sc.is_member, prefix_lengths=cfg.extraction_prefix,
            suffix_length=cfg.extraction_suffix, n_values=cfg.extraction_n, p=cfg.extraction_p,
            sampler=Sampler(cfg.extraction_temperature, cfg.extraction_top_k or None), confidence=cc,
            target_logprobs=sc.target.logprobs, reference_logprobs=sc.references[0].logprobs if sc.references else None,
            max_length=lm.context_length, n_threads=threads(), random_state=ctx.seeds["extraction"])
    except UnsupportedError as exc:
        check = Check(**common, status=NOT_MEASURABLE, sentence=f"extraction was refused: {exc}",
                      fix=phrase("give a causal language model that generates, or leave extraction out ({0})",
                                 ("extraction", "false")))
        return Analysis(name="extraction", checks=(check,))
    s = ex.summary
    row = s["any_prefix"][-1]
    a, b = row["members"], row["nonmembers"]
    what = (f"({row['n']:,}, {s['p']:g})-extractable suffixes of {s['suffix_length']} tokens after "
            f"{_prefixes(s['prefix_lengths'])} ({s['sampler']})")
    bb = done["membership"].extras["blind"]
    if not a["n"] or not b["n"]:
        check = Check(**common, status=NOT_MEASURABLE,
                      sentence=f"extraction cannot be judged: {a['n']} member and {b['n']} non-member texts are as "
                               f"long as a prefix and a suffix ({min(s['prefix_lengths']) + s['suffix_length']} "
                               "tokens at least)",
                      fix=phrase("give shorter prefixes or suffixes ({0}, {1}), or longer texts", "extraction_prefix",
                                 "extraction_suffix"))
    elif bb.p_value <= 1 - cc:
        check = Check(**common, status=NOT_MEASURABLE, value=row["difference"],
                      interval=tuple(row["difference_interval"]),
                      sentence="extraction cannot be judged against the base rate: the member and non-member texts "
                               f"differ by themselves (blind baseline p = {bb.p_value:.3g}), so the non-members' rate "
                               "is not the members' base rate",
                      fix="draw the non-members from the members' distribution, then audit again",
                      because="membership.blind_baseline.auc")
    else:
        d, (lo, hi) = row["difference"], row["difference_interval"]
        measured = (f"{a['k']:,} of {a['n']:,} members' {what} against {b['k']:,} of {b['n']:,} non-members' (the "
                    f"base rate): a difference of {d * 100:+.1f} points")
        exceeded = lo > thr
        check = Check(**common, status=EXCEEDED if exceeded else PASSED, value=d, interval=(lo, hi),
                      sentence=(f"the model gives out its training text: {measured} (interval from {lo * 100:+.1f}, "
                                f"above {thr * 100:g})") if exceeded else
                               within_sentence(measured, f"[{lo * 100:+.1f}, {hi * 100:+.1f}] points", hi < thr,
                                               f"{thr * 100:g} points"),
                      fix="" if exceeded else undecided_fix("extraction rate difference", d, hi, thr, a["n"], b["n"]))
    per_record = {"extraction_log_p": np.nanmax(np.where(np.isnan(ex.log_p), -np.inf, ex.log_p), axis=1),
                  "extractable": ex.extractable, "extraction_span_log_p": ex.span_log_p,
                  "extraction_bound_bits": ex.bound_bits, "extraction_window_bits": ex.window_bits}
    per_record["extraction_log_p"][np.isnan(ex.log_p).all(axis=1)] = np.nan
    spans = [{"record": sc.names[r["index"]] if sc.names else f"member #{r['index']}",
              **{k: v for k, v in r.items() if k != "index"}} for r in s["spans"]]
    return Analysis(name="extraction", summary={**s, "spans": spans}, checks=(check,), per_record=per_record)


def _prefixes(lengths: list) -> str:
    return (f"a prefix of {lengths[0]} tokens" if len(lengths) == 1 else
            f"prefixes of {', '.join(map(str, lengths[:-1]))} or {lengths[-1]} tokens")


#: the language-model audit's plan (:mod:`leakaudit.audit.plan`): its analyses, each declaring its checks and the
#: seed slots it draws
LM_PLAN = Plan((Step("membership", "membership", "attacks on the texts' scores, and the blind baseline",
                     _lm_membership_checks, _lm_membership, seeds={"blind": 0, "bootstrap": 1, "epsilon": 2}),
                Step("leaked_windows", "leaked windows", "the windows that carry the signal in the most exposed member "
                     "texts", lambda cfg, texts, scored: 0, _leaked_windows),
                Step("dataset_inference", "dataset inference", "the members as a set (a set-level test and its power)",
                     lambda cfg, texts, scored: int(cfg.dataset_inference), _dataset_inference,
                     when=lambda ctx, done: ctx.cfg.dataset_inference, seeds={"dataset_inference": 3}),
                Step("extraction", "extraction", "(n, p)-extraction of the members' suffixes and generations",
                     lambda cfg, texts, scored: int(cfg.extraction and not scored.scores_only), _extraction,
                     skip=_extraction_not_run,
                     seeds={"extraction": 4})))


def _measure_blind(ctx: AuditContext, bb, m) -> dict:
    """The blind baseline's entry in results.json: the usual measures on the texts it used, with its AUC interval
    from the bootstrap that refits the classifier (a fixed scorer's DeLong interval is too narrow for out-of-fold
    scores) and its permutation test."""
    u = bb.used
    mm, _ = measure_attack(ctx, m[u], bb.scores[u], epsilon=False)
    mm.update(auc_ci=_blind_interval(bb, ctx.check_confidence), auc_ci_method="bootstrap refitting the classifier",
              p_value=bb.p_value, n_permutations=bb.n_permutations, null_sd=bb.null_sd, n_used=int(u.sum()),
              n_groups=bb.n_groups, versus=bb.versus)
    return mm
