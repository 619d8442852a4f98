"""Extraction of training text from a causal language model: probabilistic (n, p)-extraction, generations, and where
the extractable text lies.

Hayes, Swanberg, Chaudhari, Yona, Shumailov, Nasr, Choquette-Choo, Lee and Cooper, "Measuring memorization in
language models via probabilistic extraction" (arXiv 2410.19482, 2024), (n, p)-discoverable extraction: a target suffix
``s`` of a training text is *(n, p)-extractable* from its prefix ``x`` when a sampler that sees ``x`` emits ``s`` at
least once in ``n`` independent tries with probability at least ``p``:

    1 - (1 - p_s)^n >= p,   p_s = prod_t q(s_t | x, s_<t)

where ``q`` is the sampler's per-token distribution: the model's logits divided by the temperature, cut to the
``top_k`` largest (a token outside them has probability 0; ties at the k-th logit are kept, as transformers'
top-k warper keeps them), softmax-normalised. ``p_s`` of every suffix of a text comes from one forward pass over the
text (:func:`sampler_logprobs`). Greedy decoding (``top_k=1``) is the special case that the paper shows
underestimates extraction.

The rate of extractable suffixes among the members is compared with the same rate on non-members of the same
distribution: the base rate of text that anyone could guess from its prefix (boilerplate, signatures, quoted lines)
without having trained on it (:func:`extraction_rates`). A sample of prefixes is also continued by the model's own
decoding, greedy and sampled, and the continuations compared with the true suffixes: exact match, and near-verbatim
by normalised token edit distance and ROUGE-L over tokens (Lin 2004), both from ``rapidfuzz``
(:func:`generation_match`). :func:`localise` finds, per text, the span most likely to be emitted, the tokens whose
log-probability fine-tuning raised most against a reference model, and marks spans that look like personal data
(:data:`PII_DETECTOR`).

Liu, Evans and Xiong, "Beyond Indistinguishability: Measuring Extraction Risk in LLM APIs" (arXiv 2604.18697, IEEE
S&P 2026), (l, b)-inextractability: a text is (l, b)-inextractable when any black-box attacker needs at least ``2^b``
queries in expectation to make the model emit its protected span of ``l`` tokens. Their rank-aware estimate
(Algorithm 2 of the paper, as the authors' code at github.com/Emory-AIMS/Inextractability computes it, with the rank
cut ``m`` at the whole vocabulary, their worst case) bounds the probability that one query emits a span ``z`` by

    p_z <= prod_t 1 / r_t,   b = -log2 max_z p_z = min_z sum_t log2 r_t

``r_t`` the rank of ``z_t`` among the model's logits given the tokens before it (1: the likeliest, ties counted as
the likelier). It holds for every decoding that never gives a token more probability than a likelier one (greedy,
any temperature, top-k, top-p): the ``r_t`` tokens at least as likely as ``z_t`` each get at least its probability,
which is therefore at most ``1 / r_t``. So the audited sampler's ``p_s <= 2^-b`` (:func:`rank_bound_bits`, from the
same forward pass); the suffix is out of (n, p)-extraction's reach for any such decoding when ``2^-b`` is below
``1 - (1 - p)^(1/n)``; ``b = 0`` exactly when greedy decoding emits it (the paper's Algorithm 3).

Only the texts given are read: prefixes and suffixes are cut from them, and nothing else is sampled or looked up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._random import RandomStateLike, spawn_seeds
from .._validation import check_scalar
from ..exceptions import InvalidParameterError, UnsupportedError
from .score import _MAX_LOGITS, check_texts, encode_texts, forward_batches, model_device, torch_threads

__all__ = ["Sampler", "SamplerScores", "check_can_generate", "sampler_logprobs", "suffix_log_probability",
           "rank_bound_bits", "window_bound_bits",
           "extraction_threshold", "n_p_extractable", "rate_difference_interval", "extraction_rates",
           "generate_continuations", "generation_match", "NEAR_VERBATIM", "PII_DETECTOR", "find_personal_data",
           "localise", "Extraction", "extraction_audit"]

#: a continuation is near-verbatim when at most this share of its tokens must be edited into the true suffix
#: (normalised Levenshtein distance over tokens)
NEAR_VERBATIM = 0.1

#: the personal-data detector, in words (the report names it)
PII_DETECTOR = ("regular expressions: e-mail addresses (name@domain.tld), phone numbers (7 to 15 digits, with spaces, "
                "dots, dashes or brackets between them, optionally a leading +) and a name heuristic (two or more "
                "consecutive capitalised words); a heuristic, which misses names in lower case and marks capitalised "
                "phrases that are not names")
_PII = (("e-mail", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
        ("phone", re.compile(r"(?<![\w+])\+?\(?\d(?:[\s().-]{0,2}\d){6,14}(?!\w)")),
        ("name", re.compile(r"\b[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)+\b")))


@dataclass(frozen=True)
class Sampler:
    """The decoding an attacker uses: the model's logits divided by ``temperature``, cut to the ``top_k`` largest
    (None: all tokens; 1: greedy decoding), renormalised."""

    temperature: float = 1.0
    top_k: int | None = 40

    def __post_init__(self):
        check_scalar(self.temperature, name="temperature", min_val=0.0, include_min=False)
        if self.top_k is not None:
            check_scalar(self.top_k, name="top_k", kind=(int, np.integer), min_val=1)

    def words(self) -> str:
        if self.top_k == 1:
            return "greedy decoding"
        return (f"sampling at temperature {self.temperature:g}"
                + (f", top-{self.top_k}" if self.top_k is not None else ", all tokens (no top-k)"))


def check_can_generate(model: Any) -> None:
    """Refuse, in one line, a model that cannot generate text: not a causal language model, or without a
    generation configuration (a classifier, an encoder)."""
    name = type(model).__name__
    can = getattr(model, "can_generate", None)
    if not callable(can) or not can():
        raise UnsupportedError(f"extraction needs a model that generates text; the {name} is not a causal language "
                               "model that can generate (a classifier or an encoder cannot be extracted from)")
    if getattr(model, "generation_config", None) is None:
        raise UnsupportedError(f"extraction needs a model that generates text; the {name} has no generation "
                               "configuration (generation_config.json)")


@dataclass(frozen=True)
class SamplerScores:
    """Per-token log-probabilities of texts under a sampler.

    Attributes
    ----------
    logprobs : tuple of n ndarrays of shape (T_i - 1,)
        ``log q(x_t | x_<t)`` of tokens 1, ..., T_i - 1 of ``ids[i]`` (``-inf`` where top-k excludes the token).
    ids : tuple of n lists of int
        Each text's token ids as scored (a beginning-of-text token first when the tokenizer has one), cut to the
        model's context.
    offset : int
        1 when ``ids`` start with a beginning-of-text token the text does not hold, else 0: text token ``m`` is
        ``ids[m + offset]``.
    ranks : tuple of n int ndarrays of shape (T_i - 1,)
        The rank of each of those tokens among the model's logits (1: the likeliest; ties count as likelier).
    """

    logprobs: tuple
    ids: tuple
    offset: int
    ranks: tuple = ()


def sampler_logprobs(model: Any, tokenizer: Any, texts: Sequence[str], sampler: Sampler = Sampler(), *,
                     max_length: int | None = None, batch_tokens: int = 4096, max_logits: int = _MAX_LOGITS,
                     n_threads: int | None = None, name: str = "texts") -> SamplerScores:
    """Each token's probability under ``sampler`` given the tokens before it, and its rank among the model's
    logits, one forward pass per text (batched as :func:`leakaudit.lm.score.score_texts` batches).

    Returns
    -------
    SamplerScores
    """
    import torch

    docs = check_texts(texts, name=name)
    ids, _ = encode_texts(tokenizer, docs, max_length=max_length, name=name)
    offset = int(getattr(tokenizer, "bos_token_id", None) is not None)
    lengths = np.array([len(e) for e in ids])
    out: list = [None] * len(docs)
    ranks: list = [None] * len(docs)
    for b, x, logits in forward_batches(model, tokenizer, ids, lengths, batch_tokens=batch_tokens,
                                        max_logits=max_logits, n_threads=n_threads):
        y = x[:, 1:].unsqueeze(-1)
        rk = ((logits > logits.gather(-1, y)).sum(-1) + 1).cpu().numpy()
        z = logits / float(sampler.temperature)
        if sampler.top_k is not None and sampler.top_k < z.shape[-1]:
            kth = torch.topk(z, int(sampler.top_k), dim=-1).values[..., -1:]
            z = z.masked_fill(z < kth, float("-inf"))
        lq = torch.log_softmax(z, dim=-1).gather(-1, y).squeeze(-1).cpu().numpy()
        for r, i in enumerate(b):
            out[i] = lq[r, : int(lengths[i]) - 1].astype(np.float64)
            ranks[i] = rk[r, : int(lengths[i]) - 1].astype(np.int64)
    return SamplerScores(tuple(out), tuple(ids), offset, tuple(ranks))


def suffix_log_probability(scores: SamplerScores, prefix_length: int, suffix_length: int) -> np.ndarray:
    """``log p_s`` of each text's suffix of ``suffix_length`` tokens after its first ``prefix_length`` tokens,
    shape (n,); NaN for a text shorter than ``prefix_length + suffix_length`` tokens (not eligible)."""
    out = np.full(len(scores.ids), np.nan)
    for i, (lq, e) in enumerate(zip(scores.logprobs, scores.ids)):
        start = prefix_length + scores.offset  # the suffix's first token in ids; its log-probability is lq[start - 1]
        if start >= 1 and start + suffix_length <= len(e):
            out[i] = float(np.sum(lq[start - 1: start - 1 + suffix_length]))
    return out


def rank_bound_bits(scores: SamplerScores, prefix_length: int, suffix_length: int) -> np.ndarray:
    """``b = sum_t log2 r_t`` of each text's suffix (as :func:`suffix_log_probability` cuts it): no decoding that
    ranks tokens as the model does emits it in one query with probability above ``2^-b`` (Liu et al. 2026,
    Algorithm 2 on one span), shape (n,); NaN for a text too short."""
    rank_logprobs = tuple(-np.log(r) for r in scores.ranks)  # log prod 1/r_t, the bound on log p_s
    log_bound = suffix_log_probability(replace(scores, logprobs=rank_logprobs), prefix_length, suffix_length)
    return log_bound / -np.log(2) + 0.0  # + 0.0: no -0.0


def window_bound_bits(scores: SamplerScores, length: int) -> np.ndarray:
    """Each text's ``b`` over every span of ``length`` tokens with a token of the text before it, the least of them
    (Liu et al. 2026, Algorithm 2 per sequence: the attacker picks which of the text's own prefixes to give), shape
    (n,); NaN for a text with fewer tokens."""
    out = np.full(len(scores.ranks), np.nan)
    for i, r in enumerate(scores.ranks):
        bits = np.log2(r[scores.offset:])  # r[j] ranks ids[j + 1] given ids[:j + 1]: text before it from j = offset
        if bits.size >= length:
            out[i] = float(np.lib.stride_tricks.sliding_window_view(bits, int(length)).sum(axis=1).min())
    return out


def extraction_threshold(n: int, p: float) -> float:
    """The least ``p_s`` at which a suffix is (n, p)-extractable: ``1 - (1 - p)^(1/n)`` (Hayes et al. 2024's
    ``1 - (1 - p_s)^n >= p`` solved for ``p_s``)."""
    return float(-np.expm1(np.log1p(-p) / n))


def n_p_extractable(log_p_seq, n: int, p: float) -> np.ndarray:
    """Whether each suffix is (n, p)-extractable, ``1 - (1 - p_s)^n >= p``, from ``log p_s`` (NaN stays False)."""
    lp = np.asarray(log_p_seq, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(lp, nan=-np.inf) >= np.log(extraction_threshold(n, p))


def rate_difference_interval(k1: int, n1: int, k0: int, n0: int, *, confidence: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval for the difference of two rates ``k1/n1 - k0/n0`` (Newcombe 1998, method
    10), from each rate's Wilson interval (:meth:`scipy.stats.binomtest`'s ``proportion_ci(method="wilson")``)."""
    from scipy.stats import binomtest

    r1, r0 = k1 / n1, k0 / n0
    c1 = binomtest(int(k1), int(n1)).proportion_ci(confidence_level=confidence, method="wilson")
    c0 = binomtest(int(k0), int(n0)).proportion_ci(confidence_level=confidence, method="wilson")
    d = r1 - r0
    return (float(max(-1.0, d - np.hypot(r1 - c1.low, c0.high - r0))),
            float(min(1.0, d + np.hypot(c1.high - r1, r0 - c0.low))))


def extraction_rates(log_p_seq: np.ndarray, is_member, *, n_values: Sequence[int], p: float,
                     confidence: float = 0.95) -> list[dict]:
    """Per ``n``: the share of members' and of non-members' eligible suffixes that are (n, p)-extractable, each
    with its Clopper-Pearson interval, and their difference with Newcombe's interval, at ``confidence``.

    ``log_p_seq``: shape (n_texts,) or (n_texts, n_prefixes) (NaN: not eligible); a text with several prefixes
    counts as extractable when any of its eligible suffixes is.
    """
    from ..metrics import clopper_pearson

    lp = np.asarray(log_p_seq, dtype=np.float64).reshape(len(is_member), -1)
    m = np.asarray(is_member, bool)
    eligible = ~np.isnan(lp).all(axis=1)
    out = []
    for n in n_values:
        hit = n_p_extractable(lp, int(n), p).any(axis=1)
        row: dict = {"n": int(n), "threshold_p_seq": extraction_threshold(int(n), p)}
        for who, sel in (("members", m & eligible), ("nonmembers", ~m & eligible)):
            k, tot = int(hit[sel].sum()), int(sel.sum())
            row[who] = {"k": k, "n": tot, "rate": k / tot if tot else float("nan"),
                        "interval": list(clopper_pearson(k, tot, confidence=confidence)) if tot else [None, None]}
        a, b = row["members"], row["nonmembers"]
        if a["n"] and b["n"]:
            row["difference"] = a["rate"] - b["rate"]
            row["difference_interval"] = list(rate_difference_interval(a["k"], a["n"], b["k"], b["n"],
                                                                       confidence=confidence))
        else:
            row["difference"], row["difference_interval"] = float("nan"), [None, None]
        out.append(row)
    return out


def generate_continuations(model: Any, prefixes: Sequence[Sequence[int]], *, suffix_length: int, sampler: Sampler,
                           greedy: bool, seed: int, pad_token_id: int | None = None,
                           n_threads: int | None = 1) -> list[list[int]]:
    """The model's own continuation of each prefix (token ids, all of one length), ``suffix_length`` new tokens at
    most (fewer where it emits its end-of-text token): greedy, or sampled by ``sampler`` under ``seed`` (the
    caller's global torch random state untouched); on ``n_threads`` torch threads (None: torch's setting)."""
    import torch

    check_can_generate(model)
    if not prefixes:
        return []
    dev = model_device(model)
    x = torch.tensor([list(p) for p in prefixes], dtype=torch.long, device=dev)
    kw = (dict(do_sample=False) if greedy else
          dict(do_sample=True, temperature=float(sampler.temperature), top_k=int(sampler.top_k or 0), top_p=1.0))
    pad = pad_token_id if pad_token_id is not None else getattr(model.generation_config, "pad_token_id", None)
    if pad is None:
        pad = getattr(model.generation_config, "eos_token_id", None)
    with torch_threads(n_threads), torch.inference_mode(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        y = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=int(suffix_length),
                           pad_token_id=pad, **kw)
    eos = getattr(model.generation_config, "eos_token_id", None)
    stops = set(eos if isinstance(eos, (list, tuple)) else [] if eos is None else [eos])
    out = []
    for row in y[:, x.shape[1]:].cpu().tolist():
        cut = next((j for j, t in enumerate(row) if t in stops), len(row))
        out.append(row[:cut])
    return out


def generation_match(generated: Sequence[Sequence[int]], truth: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
    """How close each continuation is to its true suffix, over tokens: ``exact`` (identical), ``edit_distance``
    (normalised Levenshtein distance, 0 = identical), ``near_verbatim`` (``edit_distance <= NEAR_VERBATIM``) and
    ``rouge_l`` (ROUGE-L F1 from the longest common subsequence; Lin 2004), each of shape (n,)."""
    from .._extras import require

    distance = require("rapidfuzz.distance", "near-verbatim extraction")
    n = len(generated)
    exact, ned, rouge = np.zeros(n, bool), np.zeros(n), np.zeros(n)
    for i, (g, t) in enumerate(zip(generated, truth)):
        g, t = list(g), list(t)
        exact[i] = g == t
        ned[i] = distance.Levenshtein.normalized_distance(g, t)
        lcs = distance.LCSseq.similarity(g, t)
        rouge[i] = 2.0 * lcs / (len(g) + len(t)) if g and t else float(g == t)
    return {"exact": exact, "edit_distance": ned, "near_verbatim": ned <= NEAR_VERBATIM, "rouge_l": rouge}


def find_personal_data(text: str) -> list[dict]:
    """Spans of ``text`` that look like personal data by :data:`PII_DETECTOR`: ``{"kind", "text"}`` each, in order
    of appearance."""
    found = [(m.start(), kind, m.group(0)) for kind, rx in _PII for m in rx.finditer(text)]
    return [{"kind": k, "text": t} for _, k, t in sorted(found)]


def localise(scores: SamplerScores, tokenizer: Any, *, span_length: int, target_logprobs: Sequence | None = None,
             reference_logprobs: Sequence | None = None, top_tokens: int = 5, which: Sequence[int] | None = None
             ) -> list[dict]:
    """Per text (``which``: their indices; default all): the span of ``span_length`` tokens most likely emitted
    by the sampler given the text before it (at least one token of the text before it), and, with a reference
    model's per-token log-probabilities on the same tokens, the ``top_tokens`` tokens whose log-probability the
    audited model (``target_logprobs``) raised most against it.

    Returns a list of dicts: ``index``, ``start`` (the span's first token, counted in the text's tokens),
    ``log_p`` (``log p_s`` of the span), ``span`` (its text), ``context`` (up to 60 characters of text before it),
    ``personal_data`` (:func:`find_personal_data` of the span) and ``raised`` (``{"token", "delta"}`` each, the rise
    in nats; None without a reference, or where the reference's tokens differ).
    """
    out = []
    for i in (range(len(scores.ids)) if which is None else which):
        lq, e, off = scores.logprobs[i], scores.ids[i], scores.offset
        first = off  # lq[j] scores e[j + 1], which sees e[:j + 1]: at least one text token before it from j = off
        avail = len(lq) - first
        if avail <= 0:
            continue
        w = min(int(span_length), avail)
        sums = np.lib.stride_tricks.sliding_window_view(lq[first:], w).sum(axis=1)  # -inf stays -inf
        j = int(np.argmax(sums))
        start_id = first + j + 1  # the span's first token in e
        span = tokenizer.decode(e[start_id: start_id + w])
        ctx = tokenizer.decode(e[off: start_id])
        rec = {"index": int(i), "start": int(start_id - off), "log_p": float(sums[j]), "span": span,
               "context": ctx[-60:], "personal_data": find_personal_data(span), "raised": None}
        if target_logprobs is not None and reference_logprobs is not None:
            t, r = np.asarray(target_logprobs[i]), np.asarray(reference_logprobs[i])
            if t.shape == r.shape == lq.shape:
                d = t - r
                top = np.argsort(-d, kind="stable")[: int(top_tokens)]
                rec["raised"] = [{"token": tokenizer.decode([e[k + 1]]), "delta": float(d[k])} for k in top]
        out.append(rec)
    return out


@dataclass(frozen=True)
class Extraction:
    """What :func:`extraction_audit` measured.

    Attributes
    ----------
    summary : dict
        Plain values (results.json's ``extraction`` section): the sampler, the grid, the rates per prefix length and
        per ``n`` and over all prefix lengths (``any_prefix``, what the audit's check reads), the generations'
        matches, the members' most extractable spans.
    log_p : ndarray of shape (n_texts, n_prefixes)
        ``log p_s`` of each text's suffix after each prefix length (NaN: the text is too short).
    span_log_p : ndarray of shape (n_texts,)
        ``log p_s`` of each text's most extractable span (NaN: too short).
    extractable : ndarray of shape (n_texts,)
        1.0 where some suffix of the text is (n, p)-extractable at the largest ``n``, 0.0 where none is, NaN where
        the text is too short for any prefix length.
    bound_bits : ndarray of shape (n_texts,)
        The rank bound's ``b`` of the text's suffixes, the least over the prefix lengths (:func:`rank_bound_bits`;
        NaN: too short).
    window_bits : ndarray of shape (n_texts,)
        ``b`` of the text's easiest span of ``suffix_length`` tokens (:func:`window_bound_bits`; NaN: too short).
    """

    summary: dict
    log_p: np.ndarray
    span_log_p: np.ndarray
    extractable: np.ndarray
    bound_bits: np.ndarray
    window_bits: np.ndarray


def extraction_audit(model: Any, tokenizer: Any, texts: Sequence[str], is_member, *,
                     prefix_lengths: Sequence[int] = (32,), suffix_length: int = 32,
                     n_values: Sequence[int] = (1, 10, 100, 1000), p: float = 0.9, sampler: Sampler = Sampler(),
                     confidence: float = 0.95, n_generate: int = 32, n_spans: int = 20,
                     target_logprobs: Sequence | None = None, reference_logprobs: Sequence | None = None,
                     max_length: int | None = None, n_threads: int | None = None,
                     random_state: RandomStateLike = 0) -> Extraction:
    """(n, p)-extraction of the members' suffixes against the non-members' (the base rate), the rank bound on
    every decoding's (n, p)-extraction of the same suffixes, generations on a sample, and the members' most
    extractable spans.

    Parameters
    ----------
    model, tokenizer : a transformers causal language model that can generate, and its tokenizer
    texts : sequence of str
        Members and non-members (their suffixes are the targets; nothing else is read).
    is_member : array-like of shape (n_texts,), 0/1
    prefix_lengths : sequence of int, default (32,)
        Tokens of each text given as the prefix.
    suffix_length : int, default 32
        Tokens of the target suffix after the prefix (discoverable extraction is often measured with 50-token
        prefixes and suffixes; 32 fits the demo's short texts).
    n_values : sequence of int, default (1, 10, 100, 1000)
        Tries the attacker makes.
    p : float, default 0.9
        The probability with which the suffix must come out at least once in ``n`` tries.
    sampler : Sampler
        Temperature and top-k of the attacker's decoding (default: temperature 1, top-40, the top-n sampling with
        n = 40 of Carlini et al. 2021).
    confidence : float
        Of every interval.
    n_generate : int, default 32
        Members and non-members (each) whose first-prefix suffix is also generated, greedily and by one seeded
        sample, and compared with the truth (:func:`generation_match`). 0: none.
    n_spans : int, default 20
        Members whose most extractable span the summary shows (the most extractable first).
    target_logprobs, reference_logprobs : sequences of per-token log-probabilities, optional
        The audited model's and a reference model's (e.g. the base before fine-tuning) ``log p(x_t | x_<t)`` of the
        same tokens (:class:`~leakaudit.lm.score.TokenScores`'s ``logprobs``): the spans then show the tokens whose
        probability fine-tuning raised most.
    max_length : int, optional
        The model's context; longer texts are cut to it.
    random_state : int
        Seeds the generation sample and the sampled continuations.

    Returns
    -------
    Extraction

    Raises
    ------
    UnsupportedError
        The model cannot generate (:func:`check_can_generate`).
    """
    import time

    check_can_generate(model)
    _check_lengths(prefix_lengths, suffix_length, n_values, p)
    check_scalar(n_generate, name="n_generate", kind=(int, np.integer), min_val=0)
    m = np.asarray(is_member).astype(bool)
    t0, c0 = time.perf_counter(), time.process_time()
    sc = sampler_logprobs(model, tokenizer, texts, sampler, max_length=max_length, n_threads=n_threads)
    Ls, ns = [int(L) for L in prefix_lengths], sorted({int(n) for n in n_values})
    lp = np.column_stack([suffix_log_probability(sc, L, int(suffix_length)) for L in Ls])
    by_prefix = [{"prefix_length": L, "rates": extraction_rates(lp[:, j], m, n_values=ns, p=p, confidence=confidence)}
                 for j, L in enumerate(Ls)]
    anyp = extraction_rates(lp, m, n_values=ns, p=p, confidence=confidence)
    eligible = ~np.isnan(lp).all(axis=1)
    extractable = np.where(eligible, n_p_extractable(lp, ns[-1], p).any(axis=1).astype(float), np.nan)
    rb = np.column_stack([rank_bound_bits(sc, L, int(suffix_length)) for L in Ls])
    bound_bits = np.where(eligible, np.min(np.nan_to_num(rb, nan=np.inf), axis=1), np.nan)
    window_bits = window_bound_bits(sc, int(suffix_length))
    s_pick, s_sample = spawn_seeds(random_state, 2)
    # the continuations' steps are too small to share between threads (a second thread costs far more CPU than it
    # saves: benchmarks/README.md): one thread, whatever n_threads says for the forward pass
    generation = _generations(model, sc, m, Ls[0], int(suffix_length), sampler, int(n_generate), s_pick, s_sample,
                              confidence, 1)
    loc = localise(sc, tokenizer, span_length=int(suffix_length), target_logprobs=target_logprobs,
                   reference_logprobs=reference_logprobs)
    span_lp = np.full(len(sc.ids), np.nan)
    for r in loc:
        span_lp[r["index"]] = r["log_p"]
    members_loc = sorted((r for r in loc if m[r["index"]]), key=lambda r: -r["log_p"])[: int(n_spans)]
    n_pii = sum(bool(r["personal_data"]) for r in loc if m[r["index"]])
    summary = {
        "sampler": sampler.words(), "temperature": float(sampler.temperature), "top_k": sampler.top_k,
        "prefix_lengths": Ls, "suffix_length": int(suffix_length), "n_values": ns, "p": float(p),
        "confidence": float(confidence), "n_members": int(m.sum()), "n_nonmembers": int((~m).sum()),
        "n_eligible_members": int((eligible & m).sum()), "n_eligible_nonmembers": int((eligible & ~m).sum()),
        "by_prefix": by_prefix, "any_prefix": anyp,
        # the rank bound's rates: suffixes it leaves within reach of (n, p)-extraction by some decoding
        "bound": {"rates": extraction_rates(-rb * np.log(2), m, n_values=ns, p=p, confidence=confidence),
                  "suffix_bits": _bits(bound_bits, m), "window_bits": _bits(window_bits, m)},
        "generation": generation,
        "spans": [{**r, "log_p": r["log_p"] if np.isfinite(r["log_p"]) else None} for r in members_loc],
        "n_members_with_personal_data": int(n_pii), "personal_data_detector": PII_DETECTOR,
        "reference": reference_logprobs is not None,
        "seconds": round(time.perf_counter() - t0, 3), "cpu_seconds": round(time.process_time() - c0, 3)}
    return Extraction(summary=summary, log_p=lp, span_log_p=span_lp, extractable=extractable, bound_bits=bound_bits,
                      window_bits=window_bits)


def _bits(bits: np.ndarray, m: np.ndarray) -> dict:
    """The members' and non-members' rank-bound ``b`` (texts not too short): how many, the least and the median."""
    out = {}
    for who, sel in (("members", m), ("nonmembers", ~m)):
        b = bits[sel & ~np.isnan(bits)]
        out[who] = {"n": int(b.size), "min": float(b.min()) if b.size else float("nan"),
                    "median": float(np.median(b)) if b.size else float("nan")}
    return out


def _generations(model, sc: SamplerScores, m: np.ndarray, L: int, S: int, sampler: Sampler, n_generate: int,
                 s_pick: int, s_sample: int, confidence: float, n_threads) -> dict | None:
    """Greedy and sampled continuations of a seeded sample of members' and non-members' prefixes of ``L`` tokens,
    compared with their true suffixes of ``S`` tokens."""
    from ..metrics import clopper_pearson

    if n_generate == 0:
        return None
    start = L + sc.offset
    ok = np.array([len(e) >= start + S for e in sc.ids])
    rng = np.random.default_rng(s_pick)
    pick = {who: np.sort(rng.permutation(np.flatnonzero(ok & sel))[:n_generate])
            for who, sel in (("members", m), ("nonmembers", ~m))}
    out: dict = {"prefix_length": L, "suffix_length": S, "near_verbatim_distance": NEAR_VERBATIM}
    idx = np.r_[pick["members"], pick["nonmembers"]].astype(int)
    for mode in ("greedy", "sampled"):  # members and non-members in one batch: one call per decoding
        gen = generate_continuations(model, [sc.ids[i][:start] for i in idx], suffix_length=S, sampler=sampler,
                                     greedy=mode == "greedy", seed=s_sample, n_threads=n_threads)
        mt = generation_match(gen, [sc.ids[i][start:start + S] for i in idx])
        out[mode], lo = {}, 0
        for who in ("members", "nonmembers"):
            k_n = int(pick[who].size)
            part = {key: v[lo:lo + k_n] for key, v in mt.items()}
            lo += k_n
            if not k_n:
                out[mode][who] = None
                continue
            k, kn = int(part["exact"].sum()), int(part["near_verbatim"].sum())
            out[mode][who] = {"n": k_n, "exact": k, "exact_rate": k / k_n,
                              "exact_interval": list(clopper_pearson(k, k_n, confidence=confidence)),
                              "near_verbatim": kn, "near_verbatim_rate": kn / k_n,
                              "near_verbatim_interval": list(clopper_pearson(kn, k_n, confidence=confidence)),
                              "rouge_l": float(part["rouge_l"].mean()),
                              "edit_distance": float(part["edit_distance"].mean())}
    return out


def _check_lengths(prefix_lengths: Sequence[int], suffix_length: int, n_values: Sequence[int], p: float) -> None:
    if not list(prefix_lengths):
        raise InvalidParameterError("prefix_lengths is empty: give at least one prefix length in tokens")
    for L in prefix_lengths:
        check_scalar(L, name="prefix length", kind=(int, np.integer), min_val=1)
    check_scalar(suffix_length, name="suffix_length", kind=(int, np.integer), min_val=1)
    if not list(n_values):
        raise InvalidParameterError("n is empty: give at least one number of tries")
    for n in n_values:
        check_scalar(n, name="n", kind=(int, np.integer), min_val=1)
    check_scalar(p, name="p", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
