"""The audit of a causal language model: texts -> model -> per-token scores -> attacks and the blind baseline ->
checks -> verdict.

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
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import NotEstimableWarning
from ...metrics import DEFAULT_FPRS, empirical_epsilon, evaluate_membership
from ..result.checks import EXCEEDED, NOT_MEASURABLE, PASSED, Analysis, Check, Skipped, undecided_fix, within_sentence
from ..config import AuditConfig, phrase
from ..context import SeedsFor
from .membership import attack_checks
from ..assemble import assemble
from ..plan import Plan, Step, check_confidence, run_plan, with_registered
from ..progress import StageProgress
from ..result.results import AuditResult

__all__ = ["MIN_K", "LMTexts", "lm_audit", "lm_check_inputs", "read_lm_texts"]

#: the share of tokens Min-K% and Min-K%++ average (both papers' default, 20%)
MIN_K = 0.2
#: most padded tokens per forward pass when scoring
BATCH_TOKENS = 4096
#: characters of each text shown in records.csv and the report
SHOWN_CHARS = 100


@dataclass(frozen=True)
class LMTexts:
    """The audited texts: members first, then non-members, and where each comes from."""

    members: list[str]
    nonmembers: list[str]
    source: list[str]
    row: np.ndarray  # 1 = the first row of its file
    files: dict
    logprobs: list | None = None  # scores only: each text's per-token log-probabilities, members first

    @property
    def texts(self) -> list[str]:
        return self.members + self.nonmembers

    @property
    def is_member(self) -> np.ndarray:
        return np.r_[np.ones(len(self.members), int), np.zeros(len(self.nonmembers), int)]


def read_lm_texts(cfg: AuditConfig) -> LMTexts:
    """The member and non-member texts of ``cfg``: ``train`` and ``test`` files, or one ``data`` file split by its
    ``membership_column`` (1 = member)."""
    from ...exceptions import InvalidInputError
    from ...lm.texts import read_arrays, read_text_table, read_texts

    col, lpc = cfg.text_column, cfg.logprobs_column
    if cfg.data is not None:
        df = read_text_table(cfg.data)
        mc = cfg.membership_column
        if mc not in df.columns:
            raise InvalidInputError(f"`membership_column` {mc!r} is not a column of {cfg.data}")
        flag = pd.to_numeric(df[mc], errors="coerce")
        if not flag.isin([0, 1]).all():
            raise InvalidInputError(f"{cfg.data}: `membership_column` {mc!r} must hold 0 or 1 in every row")
        texts = read_texts(cfg.data, col, frame=df)
        mem_rows = np.flatnonzero(flag.to_numpy() == 1)
        non_rows = np.flatnonzero(flag.to_numpy() == 0)
        order = np.r_[mem_rows, non_rows]
        lp = None if lpc is None else [read_arrays(cfg.data, lpc, df)[i] for i in order]
        name = Path(cfg.data).name
        return LMTexts([texts[i] for i in mem_rows], [texts[i] for i in non_rows], [name] * len(texts),
                       order + 1, {name: f"{cfg.data} (members: {mc} = 1, non-members: {mc} = 0)"}, lp)
    df_m, df_n = read_text_table(cfg.train), read_text_table(cfg.test)
    mem, non = read_texts(cfg.train, col, frame=df_m), read_texts(cfg.test, col, frame=df_n)
    lp = None if lpc is None else read_arrays(cfg.train, lpc, df_m) + read_arrays(cfg.test, lpc, df_n)
    tr, te = Path(cfg.train).name, Path(cfg.test).name
    if tr == te:
        tr, te = str(cfg.train), str(cfg.test)
    return LMTexts(mem, non, [tr] * len(mem) + [te] * len(non), np.r_[np.arange(len(mem)), np.arange(len(non))] + 1,
                   {tr: f"{cfg.train} (members)", te: f"{cfg.test} (non-members)"}, lp)


def _check_sizes(texts: LMTexts) -> None:
    from ...exceptions import InvalidInputError

    for what, t in (("members", texts.members), ("non-members", texts.nonmembers)):
        if len(t) < 2:
            raise InvalidInputError(f"the audit needs at least 2 {what}; {len(t)} given")
    overlap = set(texts.members) & set(texts.nonmembers)
    if overlap:
        raise InvalidInputError(f"{len(overlap)} text(s) are both members and non-members, e.g. "
                                f"{next(iter(overlap))[:60]!r}: a text is one or the other")


def _threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _load(cfg: AuditConfig):
    from ...lm.load import check_reference, load_causal_lm

    if cfg.model_dir is None:  # scores only
        return None, []
    lm = load_causal_lm(cfg.model_dir, cfg.tokenizer, device=cfg.device)
    refs = []
    for d in cfg.reference_dir or []:  # the model's own folder is not read again: it is refused
        same = Path(d).resolve() == Path(cfg.model_dir).resolve()
        refs.append(lm if same else load_causal_lm(d, what="reference model directory", device=cfg.device))
        check_reference(lm, refs[-1], f"`reference_dir` {d}", f"`model_dir` {cfg.model_dir}")
    return lm, refs


def _quiet_transformers() -> None:
    """No progress bars or advice from transformers on stderr: the audit prints its own stage lines. Scores given
    as log-probabilities need no transformers: nothing to quiet where it is not installed."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def _shorten(text: str, n: int = SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def lm_check_inputs(cfg: AuditConfig) -> dict:
    """Read the texts and load the models, and say what the audit would see (``inputs.json``); no scoring."""
    _quiet_transformers()
    texts = read_lm_texts(cfg)
    _check_sizes(texts)
    lm, refs = _load(cfg)
    if lm is None:
        _given_scores(cfg, texts)
    return {"data": {"kind": "text", "text_column": cfg.text_column, "n_members": len(texts.members),
                     "n_nonmembers": len(texts.nonmembers), "files": texts.files},
            "target": {"kind": "language model", "description": _scores_only(cfg) if lm is None else lm.description,
                       "reference_models": [r.description for r in refs]}}


def _given_scores(cfg: AuditConfig, texts: LMTexts):
    """The per-token log-probabilities read from ``logprobs_column``, checked, each named by its file and row."""
    from ...lm.score import scores_from_arrays

    return scores_from_arrays(texts.logprobs, names=[f"{src}, row {int(r)}: `logprobs_column` {cfg.logprobs_column!r}"
                                                     for src, r in zip(texts.source, texts.row)])


def _scores_only(cfg: AuditConfig) -> str:
    return (f"a language model's per-token log-probabilities, computed elsewhere, from the column "
            f"{cfg.logprobs_column!r} (scores only)")


def _blind_check(bb, metrics: dict, cc: float) -> tuple[Check, set[str]]:
    """The blind baseline's check, and the attacks whose results stand.

    The split differs by itself when the permutation p-value of the blind AUC is at most 1 - ``cc``; then an attack
    stands only if its AUC beats the blind AUC on the same texts: the lower ``cc`` bound of the paired difference,
    from the bootstrap that refits the blind classifier, above 0. On a comparable split every attack stands."""
    from scipy.stats import norm

    alpha = 1 - cc
    lo, hi = bb.auc - norm.ppf(1 - alpha / 2) * bb.auc_sd, bb.auc + norm.ppf(1 - alpha / 2) * bb.auc_sd
    lo, hi = max(0.0, lo), min(1.0, hi)
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


def lm_audit(cfg: AuditConfig, *, command: str | None = None, verbose: bool = False,
             stages: StageProgress | None = None, texts: LMTexts | None = None,
             models: tuple | None = None, memory: Mapping[str, Any] | None = None) -> AuditResult:
    """Audit the causal language model of ``cfg`` (``model_dir``) on its member and non-member texts.

    ``texts`` (:class:`LMTexts`) and ``models`` (the audited :class:`~leakaudit.lm.load.LoadedLM` and a list of
    reference ones) given in memory replace the files ``cfg`` names (:func:`leakaudit.audit`); ``memory``: those
    objects as given, by role, fingerprinted in the evidence record.

    Returns the result, with one row per text (records.csv, members first) as its records.
    """
    from ...lm.attacks import ATTACKS
    from ...lm.score import score_texts

    st = stages or StageProgress(verbose)
    _quiet_transformers()
    with st.stage("data", "reading the member and non-member texts"):
        in_memory = texts is not None
        texts = read_lm_texts(cfg) if texts is None else texts
        _check_sizes(texts)
    with st.stage("target", "loading the language model"):
        lm, refs = _load(cfg) if models is None else models
    n_threads = _threads()
    all_texts, m = texts.texts, texts.is_member
    with st.stage("scoring", f"per-token log-probabilities of {len(all_texts):,} texts under "
                             f"{1 + len(refs)} model{'s' if refs else ''}"):
        if lm is None:
            ts = _given_scores(cfg, texts)
        else:
            ts = score_texts(lm.model, lm.tokenizer, all_texts, max_length=lm.context_length,
                             batch_tokens=BATCH_TOKENS, n_threads=n_threads)
        ref_ts = [score_texts(r.model, r.tokenizer, all_texts, max_length=r.context_length,
                              batch_tokens=BATCH_TOKENS, n_threads=n_threads, distribution=False) for r in refs]
    scored = LMScores(texts=all_texts, is_member=m, target=ts, references=ref_ts, scores_only=lm is None, model=lm,
                      names=tuple(f"{src}, row {int(r)}" for src, r in zip(texts.source, texts.row)))
    plan = with_registered(LM_PLAN, "text")
    planned = plan.planned_checks(cfg, texts, scored)
    ctx = LMContext(cfg=cfg, check_confidence=check_confidence(cfg.confidence, sum(planned.values())),
                    seeds=plan.seeds(cfg.seed), scored=scored)
    done = run_plan(plan, ctx, st, planned)
    summary, bb = done["membership"].summary, done["membership"].extras["blind"]
    n_mem = len(texts.members)
    acc_m = ts.subset(np.arange(n_mem)).token_accuracy()
    acc_n = ts.subset(np.arange(n_mem, len(all_texts))).token_accuracy()
    loss = -ts.mean_logprob()
    ctx_len = None if lm is None else lm.context_length
    cut = (f"; {ts.n_truncated} text{'s' if ts.n_truncated != 1 else ''} longer than the model's context of "
           f"{ctx_len} tokens {'were' if ts.n_truncated != 1 else 'was'} cut to their first "
           f"{ctx_len} tokens" if ts.n_truncated else "")
    data = {"kind": "text", "name": "texts", "text_column": cfg.text_column,
            "description": f"{n_mem:,} member and {len(texts.nonmembers):,} non-member texts "
                           f"({int(ts.n_tokens.sum()):,} scored tokens){cut}",
            "n_members": n_mem, "n_nonmembers": len(texts.nonmembers), "n_population": 0,
            "n_tokens": int(ts.n_tokens.sum()), "n_truncated": int(ts.n_truncated),
            "files": texts.files, "record_columns": ["text"]}
    target = {"kind": "language model", "retrainable": False,
              "description": _scores_only(cfg) if lm is None else
                             f"{lm.description}; accuracy is the next-token top-1 accuracy",
              "train_accuracy": acc_m, "test_accuracy": acc_n,
              "mean_loss_members": float(loss[:n_mem].mean()), "mean_loss_nonmembers": float(loss[n_mem:].mean()),
              "context_length": ctx_len, "reference_models": [r.description for r in refs]}
    settings = {"profile": cfg.profile, "n_boot": cfg.settings.n_boot, "min_k": MIN_K,
                "attacks": "; ".join(f"{ATTACKS[n].display}: {ATTACKS[n].reference}" for n in summary if n in ATTACKS),
                "blind_baseline": "TF-IDF of character 2-4-grams and word 1-2-grams plus log length, kernel ridge "
                                  f"regression, {bb.n_folds}-fold cross-fitting with near-duplicates kept together "
                                  f"({bb.n_groups:,} groups); permutation test ({bb.n_permutations:,} relabellings) "
                                  f"and paired bootstrap refitting the classifier ({bb.n_boot} resamples) "
                                  "(Das et al. 2024)",
                "scoring": "given (scores only)" if lm is None else
                           f"batches of at most {BATCH_TOKENS:,} padded tokens, {n_threads} torch thread"
                           f"{'s' if n_threads > 1 else ''}, float32"}
    records = pd.DataFrame({"record": np.arange(len(all_texts)), "source": texts.source, "row": texts.row,
                            "is_member": m, "text": [_shorten(t) for t in all_texts], "n_tokens": ts.n_tokens,
                            "truncated": (np.zeros(len(all_texts), int) if ts.truncated is None
                                          else ts.truncated.astype(int)),
                            "loss": loss})
    return assemble(plan, done, cfg=cfg, command=command, planned=planned, check_confidence=ctx.check_confidence,
                    data=data, target=target, settings=settings, timings=st.timings, records=records,
                    in_memory=in_memory, memory=memory)


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


@dataclass(frozen=True)
class LMContext(SeedsFor):
    """What a language-model analysis reads: the settings, the checks' corrected confidence, the audit's seeds and
    the scored texts."""

    cfg: AuditConfig
    check_confidence: float
    seeds: dict
    scored: LMScores


def _lm_membership_checks(cfg: AuditConfig, texts, scored: LMScores) -> int:
    """Per attack the scores allow: its AUC and TPR at the low FPR, with a budget its empirical epsilon; and the
    blind baseline's check."""
    from ...lm.attacks import applicable_attacks

    n = len(applicable_attacks(scored.target.mean is not None, bool(scored.references)))
    return n * (2 + (cfg.epsilon_budget is not None)) + 1


def _lm_membership(ctx: LMContext, done) -> Analysis:
    """Every attack the scores allow, judged as a tabular audit's attacks are (:func:`attack_checks`), then the
    blind baseline, which decides which attacks' checks stand (the module docstring)."""
    from ...lm.attacks import ATTACKS, run_lm_attacks
    from ...lm.blind import blind_baseline

    cfg, cc, seeds, sc = ctx.cfg, ctx.check_confidence, ctx.seeds, ctx.scored
    m = sc.is_member
    fprs = tuple(sorted(set(DEFAULT_FPRS) | {cfg.thresholds.low_fpr}, reverse=True))
    scores = run_lm_attacks(sc.target, sc.texts, sc.references, k=MIN_K)
    metrics, checks = {}, []
    for name, s in scores.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotEstimableWarning)
            mm = evaluate_membership(m, s, fprs=fprs, n_boot=cfg.settings.n_boot, confidence=cc,
                                     random_state=seeds["bootstrap"]).model_dump()
        eps = empirical_epsilon(m, s, delta=cfg.epsilon_delta, confidence=cc, random_state=seeds["epsilon"])
        mm["epsilon"] = eps.model_dump()
        mm["display"], mm["reference"] = ATTACKS[name].display, ATTACKS[name].reference
        metrics[name] = mm
        checks += attack_checks(name, mm, eps, thresholds=cfg.thresholds, confidence=cc,
                                epsilon_budget=cfg.epsilon_budget, display=ATTACKS[name].display)
    bb = blind_baseline(sc.texts, m, versus=scores, alpha=1 - cc, random_state=seeds["blind"])
    blind_mm = _measure_blind(bb, m, fprs, cfg, cc, seeds["bootstrap"])
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
    if sc.target.mean is None:
        skipped.append(Skipped(name="Min-K%++", reason="it needs the next-token distribution's mean and standard "
                                                       "deviation of log-probabilities at each position, which "
                                                       "per-token scores alone do not give",
                               fix=phrase("give the model itself ({0})", "model_dir"), missing=["model"]))
    if not sc.references:
        skipped.append(Skipped(name="reference-model ratio, LiRA and RMIA (offline)",
                               reason="they calibrate each text's score by reference models, and none was given",
                               fix=phrase("give {0} (e.g. the base model before fine-tuning)"
                                          + " with {1}" * sc.scores_only, ("reference_dir", "DIR"), "model_dir"),
                               missing=["reference"]))
    summary = {**metrics, "blind_baseline": {**blind_mm, "display": "blind baseline (texts only)",
                                             "comparable": bool(bb.p_value > 1 - cc),
                                             "attacks_standing": sorted(standing)}}
    per_record = {**{f"score_{name}": s for name, s in scores.items()}, "blind_baseline": bb.scores}
    return Analysis(name="membership", summary=summary, checks=tuple(checks), skipped=tuple(skipped),
                    per_record=per_record, extras={"blind": bb})


def _dataset_inference(ctx: LMContext, done) -> Analysis:
    """The members as a set against the non-members (:func:`leakaudit.lm.dataset_inference.dataset_inference`:
    the membership step's attack scores as features, a combination learned on one half, a one-sided set-level test
    on the other, and the power curve), at the checks' level. The membership step's blind baseline is the guard: where the texts
    alone tell the two sets apart, no test of the model can show use, and the check is not measurable."""
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


def _extraction_needs_model(ctx: LMContext, done) -> Skipped | None:
    """Scores given without the model: extraction needs the model's logits and its own decoding."""
    if not ctx.scored.scores_only:
        return None
    return Skipped(name="extraction", reason="it needs the model's next-token distributions and its own decoding, "
                                             "which per-token scores alone do not give",
                   fix=phrase("give the model itself ({0})", "model_dir"), missing=["model"])


def _extraction(ctx: LMContext, done) -> Analysis:
    """Hayes et al.'s (n, p)-extraction of the members' suffixes against the non-members' (the base rate), with
    generations and the members' most extractable spans (:func:`leakaudit.lm.extraction.extraction_audit`), judged
    by one check: the members' rate minus the non-members' at the largest ``n``, its Newcombe interval at the checks'
    confidence against ``max_extraction_rate_difference``. The membership step's blind baseline guards it: where the
    texts alone tell the two sets apart, the difference is not the model's and the check is not measurable."""
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
            max_length=lm.context_length, n_threads=_threads(), random_state=ctx.seeds["extraction"])
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
                  "extractable": ex.extractable, "extraction_span_log_p": ex.span_log_p}
    per_record["extraction_log_p"][np.isnan(ex.log_p).all(axis=1)] = np.nan
    spans = [{"record": sc.names[r["index"]] if sc.names else f"member #{r['index']}",
              **{k: v for k, v in r.items() if k != "index"}} for r in s["spans"]]
    return Analysis(name="extraction", summary={**s, "spans": spans}, checks=(check,), per_record=per_record)


def _prefixes(lengths: list) -> str:
    return (f"a prefix of {lengths[0]} tokens" if len(lengths) == 1 else
            f"prefixes of {', '.join(map(str, lengths[:-1]))} or {lengths[-1]} tokens")


#: the language-model audit's plan (:mod:`leakaudit.audit.plan`): its analyses, each declaring its checks, and its
#: seed slots (appended only)
LM_PLAN = Plan((Step("membership", "membership", "attacks on the texts' scores, and the blind baseline",
                     _lm_membership_checks, _lm_membership),
                Step("dataset_inference", "dataset inference", "the members as a set (a set-level test and its power)",
                     lambda cfg, texts, scored: int(cfg.dataset_inference), _dataset_inference,
                     when=lambda ctx, done: ctx.cfg.dataset_inference),
                Step("extraction", "extraction", "(n, p)-extraction of the members' suffixes and generations",
                     lambda cfg, texts, scored: int(cfg.extraction and not scored.scores_only), _extraction,
                     when=lambda ctx, done: ctx.cfg.extraction, skip=_extraction_needs_model)),
               seed_slots=("blind", "bootstrap", "epsilon", "dataset_inference", "extraction"))


def _measure_blind(bb, m, fprs, cfg: AuditConfig, cc: float, seed: int) -> dict:
    """The blind baseline's entry in results.json: the usual measures on the texts it used, with its AUC interval
    from the bootstrap that refits the classifier (a fixed scorer's DeLong interval is too narrow for out-of-fold
    scores) and its permutation test."""
    from scipy.stats import norm

    u = bb.used
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotEstimableWarning)
        mm = evaluate_membership(m[u], bb.scores[u], fprs=fprs, n_boot=cfg.settings.n_boot, confidence=cc,
                                 random_state=seed).model_dump()
    z = norm.ppf(1 - (1 - cc) / 2)
    mm.update(auc_ci=(max(0.0, bb.auc - z * bb.auc_sd), min(1.0, bb.auc + z * bb.auc_sd)),
              auc_ci_method="bootstrap refitting the classifier", p_value=bb.p_value,
              n_permutations=bb.n_permutations, null_sd=bb.null_sd, n_used=int(u.sum()), n_groups=bb.n_groups,
              versus=bb.versus)
    return mm
