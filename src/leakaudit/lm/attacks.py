"""Membership attacks on a causal language model, from per-token scores. Higher score means "member".

Each function takes :class:`~leakaudit.lm.score.TokenScores` (and, where the attack needs them, the texts or a
reference model's scores) and returns one score per text. The reference-model calibrations reuse
:class:`~leakaudit.membership.lira.LiRA` and :class:`~leakaudit.membership.rmia.RMIA` on a per-text probability
(see :func:`text_probability`), so each idea has one implementation. The attacks the audit runs are registered, as
text attacks, in the membership attacks' registry (:func:`leakaudit.register_attack` with ``modality="text"``), where
an attack written outside leakaudit joins them.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from .._validation import check_scalar, check_sequence
from ..exceptions import InvalidInputError
from .score import TokenScores, check_texts

__all__ = ["loss_score", "zlib_score", "min_k_score", "min_k_plus_plus_score", "reference_score", "text_probability",
           "lira_score", "rmia_score", "recall_score", "window_reference_score", "window_min_k_plus_plus_score",
           "window_means", "window_votes", "reference_contrast", "standardised", "run_lm_attacks",
           "WINDOWS"]

#: the window attacks' window sizes in tokens, geometrically spaced (a window longer than a text is the text)
WINDOWS = (1, 2, 4, 8, 16, 32)

def loss_score(ts: TokenScores) -> np.ndarray:
    """Minus the mean token loss: ``(1/T) sum_t log p(x_t|x_<t)`` (Yeom et al. 2018; ranks as 1 / perplexity)."""
    return ts.mean_logprob()


def zlib_score(ts: TokenScores, texts: Sequence[str]) -> np.ndarray:
    """Minus log-perplexity over zlib entropy: ``mean_t log p(x_t|x_<t) / len(zlib(text))`` (Carlini et al. 2021,
    §6.1: a text the model finds likelier than its compressibility suggests)."""
    if len(texts) != ts.n_texts:
        raise InvalidInputError(f"texts has {len(texts)} texts; the token scores have {ts.n_texts}")
    z = np.array([len(zlib.compress(t.encode("utf-8"))) for t in texts], dtype=np.float64)
    return ts.mean_logprob() / z


def _lowest_mean(values: tuple, k: float) -> np.ndarray:
    """Mean of the ceil(k T) lowest of each text's T values."""
    out = np.empty(len(values))
    for i, v in enumerate(values):
        m = max(1, int(np.ceil(k * v.size)))
        out[i] = float(np.mean(np.partition(v, m - 1)[:m]))
    return out


def min_k_score(ts: TokenScores, k: float = 0.2) -> np.ndarray:
    """Mean log-probability of the k share of tokens the model finds least likely (Shi et al. 2024, Eq. 1; k=20%
    is their default)."""
    check_scalar(k, name="k", min_val=0.0, max_val=1.0, include_min=False)
    return _lowest_mean(ts.logprobs, k)


def _standardised(ts: TokenScores) -> tuple:
    """Each token's ``(log p(x_t|x_<t) - mu_t) / sigma_t`` (Min-K%++'s per-token score)."""
    if ts.mean is None or ts.std is None:
        raise InvalidInputError("Min-K%++ needs the next-token distribution's mean and std of log-probabilities "
                                "(score with distribution=True, or give mean and std with the arrays)")
    return tuple((lp - m) / np.maximum(s, 1e-8) for lp, m, s in zip(ts.logprobs, ts.mean, ts.std))


#: Min-K%++'s per-token scores, what :func:`window_min_k_plus_plus_score` votes on
standardised = _standardised


def min_k_plus_plus_score(ts: TokenScores, k: float = 0.2) -> np.ndarray:
    """Min-K%++ (Zhang et al. 2024, Eq. 4): each token's ``(log p(x_t|x_<t) - mu_t) / sigma_t``, mu_t and sigma_t the
    mean and std of log p(z|x_<t) over z ~ p(.|x_<t); the mean of the lowest k share of these."""
    check_scalar(k, name="k", min_val=0.0, max_val=1.0, include_min=False)
    return _lowest_mean(_standardised(ts), k)


def _check_refs(ts: TokenScores, refs: Sequence[TokenScores]) -> None:
    if not refs:
        raise InvalidInputError("the reference attacks need at least one reference model's scores")
    for j, r in enumerate(refs):
        if r.n_texts != ts.n_texts:
            raise InvalidInputError(f"reference {j} scored {r.n_texts} texts; the target {ts.n_texts}")


def reference_score(ts: TokenScores, refs: Sequence[TokenScores]) -> np.ndarray:
    """Target minus reference mean log-probability per token (Carlini et al. 2021; Mireshghallah et al. 2022's
    likelihood ratio): a text the fine-tuned model finds likelier than the reference does. Several references: their
    mean. Per-text means, so the reference may use another tokenizer."""
    _check_refs(ts, refs)
    return ts.mean_logprob() - np.mean([r.mean_logprob() for r in refs], axis=0)


def text_probability(ts: TokenScores) -> np.ndarray:
    """The per-text probability the calibrations take: ``exp(mean_t log p(x_t|x_<t))``, the geometric mean of the
    token probabilities (1 / perplexity), in (0, 1]."""
    return np.exp(ts.mean_logprob())


def _calibration_inputs(ts: TokenScores, refs: Sequence[TokenScores]) -> tuple:
    """LiRA's and RMIA's arrays from :func:`text_probability`: ``(probs, y, ref_probs, ref_in)``, the target's and the
    references' probabilities as two-class outputs whose class 1 is the text (shapes (n, 2) and (k, n, 2)), every
    label 1, and no text in any reference's training set."""
    _check_refs(ts, refs)
    n, k = ts.n_texts, len(refs)
    p, ref = text_probability(ts), np.stack([text_probability(r) for r in refs])
    return (np.stack([1.0 - p, p], axis=-1), np.ones(n, dtype=int), np.stack([1.0 - ref, ref], axis=-1),
            np.zeros((k, n), bool))


def lira_score(ts: TokenScores, refs: Sequence[TokenScores]) -> np.ndarray:
    """Offline LiRA (Carlini et al. 2022, §VI-C) on :func:`text_probability`: the z-statistic of the target's
    logit-scaled value against the reference models' Gaussian; with fewer than 4 references one pooled sigma
    (their §VI-B fixed variance)."""
    from ..membership.lira import LiRA

    probs, y, ref, none_in = _calibration_inputs(ts, refs)
    return LiRA(online=False, fix_variance=len(refs) < 4).score(probs, y, ref, none_in).scores_array


def rmia_score(ts: TokenScores, refs: Sequence[TokenScores]) -> np.ndarray:
    """Offline RMIA (Zarifzadeh et al. 2024) on :func:`text_probability`, every audited text serving as a population
    point z (no membership label is used): the share of z whose likelihood ratio the text beats.

    Two settings differ from the tabular default: ``offline_a = 1`` (Pr(x) is the references' mean, uncorrected)
    because a text's probability is small and the offline correction's constant (1 - a)/2 would swamp it, turning
    the score into the plain loss (the demo's figures: docs/lm.md); and ``gamma = 1`` (Privacy Meter's), so the
    score is the rank of the text's ratio among the population's and does not saturate. With one reference it ranks
    texts exactly as the reference-model ratio does."""
    from ..membership.rmia import RMIA

    probs, y, ref, none_in = _calibration_inputs(ts, refs)
    res = RMIA(online=False, offline_a=1.0, gamma=1.0).score(probs, y, ref, none_in, probs, y, ref, none_in)
    return res.scores_array


def recall_score(ts: TokenScores, conditioned: TokenScores) -> np.ndarray:
    """ReCaLL (Xie et al., "ReCaLL: Membership Inference via Relative Conditional Log-Likelihoods", EMNLP 2024):
    the text's mean log-likelihood conditioned on a non-member prefix over its unconditioned one, on the
    same tokens (``conditioned``: :func:`~leakaudit.lm.score.score_texts` with ``prefix``; a text cut to the prefix's
    room is compared on its first tokens). A member's likelihood falls more under an unrelated prefix, so the ratio
    (of two negative numbers) is larger for members. Not run by the audit, which has no held-out prefix."""
    if len(conditioned.logprobs) != len(ts.logprobs):
        raise InvalidInputError(f"conditioned has {len(conditioned.logprobs)} texts; ts has {len(ts.logprobs)}")
    out = np.empty(len(ts.logprobs))
    for i, (u, c) in enumerate(zip(ts.logprobs, conditioned.logprobs)):
        k = min(len(u), len(c))
        out[i] = np.mean(c[:k]) / np.mean(u[:k])
    return out


def window_means(values: tuple, window: int) -> tuple[np.ndarray, np.ndarray]:
    """The means of each text's windows of ``window`` consecutive values (the whole text when shorter), sliding by one
    token, for all texts at once.

    Returns
    -------
    means : ndarray of shape (n, T_max)
        ``means[i, s]``: text i's window starting at token s; -inf past its last window.
    n_windows : int ndarray of shape (n,)
        ``T_i - min(window, T_i) + 1``.
    """
    check_scalar(window, name="window", kind=(int, np.integer), min_val=1)
    lens = np.array([v.size for v in values])
    x = np.zeros((lens.size, lens.max()))
    x[np.arange(x.shape[1]) < lens[:, None]] = np.concatenate(values)
    c = np.concatenate([np.zeros((lens.size, 1)), np.cumsum(x, axis=1)], axis=1)
    w = np.minimum(window, lens)[:, None]
    starts = np.arange(x.shape[1])
    means = (np.take_along_axis(c, np.minimum(starts + w, x.shape[1]), axis=1) - c[:, :-1]) / w
    n_windows = lens - w[:, 0] + 1
    return np.where(starts < n_windows[:, None], means, -np.inf), n_windows


def window_votes(values: tuple, windows: Sequence[int] = WINDOWS) -> np.ndarray:
    """WBC's sign vote: per window size, the share of each text's windows (:func:`window_means`) whose mean is above
    0; the mean over the sizes."""
    votes = [np.sum(means > 0, axis=1) / n for means, n in (window_means(values, w) for w in windows)]
    return np.mean(votes, axis=0)


def _on_tokens(r: np.ndarray, t: int) -> np.ndarray:
    """A reference's per-token values on the target's ``t`` tokens: themselves when it has ``t`` (one tokenizer),
    else read off at the same relative positions (another tokenizer: linear interpolation, an approximation)."""
    return r if r.size == t else np.interp((np.arange(t) + 0.5) / t, (np.arange(r.size) + 0.5) / r.size, r)


def window_reference_score(ts: TokenScores, refs: Sequence[TokenScores], *,
                           windows: Sequence[int] = WINDOWS) -> np.ndarray:
    """WBC, window-based comparison (Chen et al., "Window-based Membership Inference Attacks Against Fine-tuned Large
    Language Models", USENIX Security 2026, arXiv 2601.02751): windows of each size in ``windows`` slide over the
    text by one token; each votes "member" when the target's mean log-probability over it is above the reference
    models' (their mean); the score is the share of "member" votes, averaged over the sizes. A few memorised spans
    win their windows' votes however the rest of the text scores, and a vote, unlike a mean, is not swayed by the
    heavy tails of token-level differences.

    From WBC: the window comparison of target and reference losses, the sign vote and the ensemble over
    geometrically spaced sizes. Ours: the sizes 1 to 32 (the paper's grid is not in its abstract) and the
    references' mean as the comparison (WBC has one reference). A reference with another tokenizer is read at the
    target tokens' relative positions (linear interpolation, an approximation)."""
    return window_votes(reference_contrast(ts, refs), windows)


def reference_contrast(ts: TokenScores, refs: Sequence[TokenScores]) -> tuple:
    """What :func:`window_reference_score` votes on: each text's per-token target log-probability minus the
    references' mean on the same tokens (:func:`_on_tokens`), a tuple of n arrays of shape (T_i,)."""
    _check_refs(ts, refs)
    return tuple(lp - np.mean([_on_tokens(r.logprobs[i], lp.size) for r in refs], axis=0)
                 for i, lp in enumerate(ts.logprobs))


def window_min_k_plus_plus_score(ts: TokenScores, *, windows: Sequence[int] = WINDOWS) -> np.ndarray:
    """Reference-free window vote from the next-token distribution's moments: :func:`window_reference_score`'s votes
    on Min-K%++'s standardised token scores ``(log p(x_t|x_<t) - mu_t) / sigma_t`` (:func:`min_k_plus_plus_score`),
    a window voting "member" when their mean over it is above 0, the score's expectation when the text is drawn
    from the model itself; so the model's own next-token distribution stands in for the reference.

    After HT-MIA (Jawad et al., "What Hard Tokens Reveal: Exploiting Low-confidence Tokens for Membership Inference
    Attacks against Large Language Models", arXiv 2601.20885) only in its premise, that token-local evidence beats a
    sequence-level statistic. HT-MIA itself compares the target's and a pre-trained reference's probabilities at
    the hard (low-confidence) tokens; this attack needs no reference and votes over windows instead of selecting
    hard tokens (docs/lm.md, "Window attacks")."""
    return window_votes(_standardised(ts), windows)


def _register() -> None:
    """Register the language-model attacks the audit runs, in the order it runs them, as text attacks of the one
    registry (:func:`leakaudit.register_attack`): each with its name in words, its source, and what it
    needs beyond the audited model's per-token scores."""
    from ..membership import register_attack

    calibrated = ("references",)
    for name, display, source, score, needs in (
        ("lm_loss", "loss", "Yeom et al., 'Privacy Risk in Machine Learning', CSF 2018 (the loss, or perplexity, "
                            "threshold)", lambda ts, texts, refs, k: loss_score(ts), ()),
        ("lm_zlib", "zlib ratio", "Carlini et al., 'Extracting Training Data from Large Language Models', USENIX "
                                  "Security 2021 (log-perplexity over zlib entropy)",
         lambda ts, texts, refs, k: zlib_score(ts, texts), ()),
        ("lm_min_k", "Min-K%", "Shi et al., 'Detecting Pretraining Data from Large Language Models', ICLR 2024",
         lambda ts, texts, refs, k: min_k_score(ts, k), ()),
        ("lm_min_k_pp", "Min-K%++", "Zhang et al., 'Min-K%++: Improved Baseline for Detecting Pre-Training Data "
                                    "from Large Language Models', 2024 (arXiv 2404.02936)",
         lambda ts, texts, refs, k: min_k_plus_plus_score(ts, k), ("distribution",)),
        ("lm_reference", "reference-model ratio", "Carlini et al. 2021 (ratio to a reference model); "
                                                  "Mireshghallah et al., 'Quantifying Privacy Risks of Masked "
                                                  "Language Models Using Membership Inference Attacks', EMNLP 2022",
         lambda ts, texts, refs, k: reference_score(ts, refs), calibrated),
        ("lm_lira", "LiRA (offline)", "Carlini et al., 'Membership Inference Attacks From First Principles', IEEE "
                                      "S&P 2022, offline variant (§VI-C), on the per-text probability",
         lambda ts, texts, refs, k: lira_score(ts, refs), calibrated),
        ("lm_rmia", "RMIA (offline)", "Zarifzadeh et al., 'Low-Cost High-Power Membership Inference Attacks', "
                                      "ICML 2024, offline (a = 1, gamma = 1), the audited texts as population",
         lambda ts, texts, refs, k: rmia_score(ts, refs), calibrated),
        ("lm_window_reference", "WBC (window votes)", "Chen et al., 'Window-based Membership Inference Attacks "
                                                      "Against Fine-tuned Large Language Models', USENIX Security "
                                                      "2026 (arXiv 2601.02751): target against reference over "
                                                      "windows of 1-32 tokens, sign votes",
         lambda ts, texts, refs, k: window_reference_score(ts, refs), calibrated),
        ("lm_window_min_k_pp", "window Min-K%++ votes", "Min-K%++'s standardised token scores over windows of 1-32 "
                                                        "tokens, sign votes (reference-free; after Jawad et al., "
                                                        "arXiv 2601.20885: token-local evidence)",
         lambda ts, texts, refs, k: window_min_k_plus_plus_score(ts), ("distribution",)),
    ):
        register_attack(name, score, description=source, display=display, modality="text", needs=needs)


_register()


def run_lm_attacks(ts: TokenScores, texts: Sequence[str], refs: Sequence[TokenScores] = (), *,
                   k: float = 0.2) -> dict[str, np.ndarray]:
    """Every text attack the audit runs that the inputs allow (:func:`~leakaudit.membership._registry.text_attacks`,
    those registered from outside too): registry name -> scores of shape (n,)."""
    from ..membership import ATTACKS, text_attacks

    if not isinstance(ts, TokenScores):
        raise InvalidInputError(f"ts must be a TokenScores (from score_texts or scores_from_arrays); got "
                                f"{type(ts).__name__}")
    texts = check_texts(texts)
    refs = check_sequence(refs, name="refs", kind=TokenScores)
    return {name: ATTACKS.get(name).factory(ts, texts, refs, k)
            for name in text_attacks(ts.mean is not None, bool(refs))}
