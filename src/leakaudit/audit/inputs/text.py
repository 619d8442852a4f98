"""A language model's inputs: the member and non-member texts, the audited and reference models (or the per-token
scores given), and each text's per-token scores, prepared as :func:`leakaudit.audit.pipeline.prepare` hands them to
the plan (:class:`~leakaudit.audit.context.Prepared` of modality ``"text"``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..config import AuditConfig
from ..context import AuditContext, Prepared
from ..progress import StageProgress
from .data import file_names

__all__ = ["LMTexts", "read_lm_texts", "text_inputs", "prepare_text"]


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
    tr, te = file_names(cfg)
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


def text_inputs(cfg: AuditConfig) -> dict:
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


def prepare_text(cfg: AuditConfig, st: StageProgress, texts: LMTexts | None, models: tuple | None,
                  memory: Mapping[str, Any] | None) -> Prepared:
    """A language model's inputs: its member and non-member texts, the audited model and the reference ones (or
    the per-token scores given), and each text's per-token scores under them, one row per text (members first)."""
    from ...lm.score import score_texts_cached
    from ..steps.lm import BATCH_TOKENS, LM_PLAN, MIN_K, LMScores, threads

    _quiet_transformers()
    with st.stage("data", "reading the member and non-member texts"):
        in_memory = texts is not None
        texts = read_lm_texts(cfg) if texts is None else texts
        _check_sizes(texts)
    with st.stage("target", "loading the language model"):
        lm, refs = _load(cfg) if models is None else models
    n_threads = threads()
    cache = cfg.cache_dir or os.environ.get("LEAKAUDIT_CACHE")  # scores kept where the user keeps a cache
    all_texts, m = texts.texts, texts.is_member
    with st.stage("scoring", f"per-token log-probabilities of {len(all_texts):,} texts under "
                             f"{1 + len(refs)} model{'s' if refs else ''}"):
        if lm is None:
            ts = _given_scores(cfg, texts)
        else:
            ts = score_texts_cached(cache, lm.model, lm.tokenizer, all_texts, max_length=lm.context_length,
                                    batch_tokens=BATCH_TOKENS, n_threads=n_threads)
        ref_ts = [score_texts_cached(cache, r.model, r.tokenizer, all_texts, max_length=r.context_length,
                                     batch_tokens=BATCH_TOKENS, n_threads=n_threads, distribution=False)
                  for r in refs]
    scored = LMScores(texts=all_texts, is_member=m, target=ts, references=ref_ts, scores_only=lm is None, model=lm,
                      names=tuple(f"{src}, row {int(r)}" for src, r in zip(texts.source, texts.row)))
    seeds = LM_PLAN.seeds(cfg.seed)
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
    records = pd.DataFrame({"record": np.arange(len(all_texts)), "source": texts.source, "row": texts.row,
                            "is_member": m, "text": [_shorten(t) for t in all_texts], "n_tokens": ts.n_tokens,
                            "truncated": (np.zeros(len(all_texts), int) if ts.truncated is None
                                          else ts.truncated.astype(int)),
                            "loss": loss})
    return Prepared("text", (texts, scored), lambda cc: AuditContext(cfg=cfg, seeds=seeds, check_confidence=cc,
                                                                      scored=scored),
                    data=data, target=target, settings={"profile": cfg.profile, "n_boot": cfg.settings.n_boot,
                                                        "min_k": MIN_K},
                    records=records, in_memory=in_memory, memory=memory or {})
