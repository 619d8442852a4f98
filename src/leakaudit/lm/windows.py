"""Where a member text leaks: the windows of tokens that carry the membership signal in the most exposed texts.

The per-token contrast is the one the window attacks vote on (:mod:`leakaudit.lm.attacks`): with reference models,
WBC's target minus the references' log-probability of each token (:func:`~leakaudit.lm.attacks.reference_contrast`);
without one, Min-K%++'s standardised score ``(log p(x_t|x_<t) - mu_t) / sigma_t``
(:func:`~leakaudit.lm.attacks.standardised`), whose expectation under the model's own next-token distribution is 0.
A window's contrast is its tokens' mean (:func:`~leakaudit.lm.attacks.window_means`); a window with a positive
contrast is one that votes "member". For each of the ``k`` members an attack ranks highest, the ``per_text``
highest-contrast windows that do not overlap and vote "member" are given with their token offsets and their text,
decoded by the tokenizer that scored them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .attacks import reference_contrast, standardised, window_means
from .score import TokenScores, encode_texts

__all__ = ["WINDOW", "TOP_TEXTS", "PER_TEXT", "CONTEXT_CHARS", "token_contrast", "top_windows", "exposed_windows"]

#: window size in tokens (one of WBC's sizes, 1 to 32: long enough to read, short enough to point at a span)
WINDOW = 8
#: the most exposed member texts shown
TOP_TEXTS = 5
#: windows shown per text
PER_TEXT = 3
#: characters of the text shown on each side of a window
CONTEXT_CHARS = 40

#: what each contrast is, in words (results.json's ``contrast``)
CONTRASTS = {"reference": "target minus reference log-probability per token (nats; WBC's window comparison)",
             "distribution": "Min-K%++'s standardised token score (log p - mu) / sigma (no reference; the window "
                             "Min-K%++ votes' comparison)"}


def token_contrast(ts: TokenScores, refs: Sequence[TokenScores] = ()) -> tuple[tuple | None, str | None]:
    """Each text's per-token contrast and its kind (a key of :data:`CONTRASTS`): against the references when there
    are any, else against the next-token distribution's moments; ``(None, None)`` when the scores have neither."""
    if refs:
        return reference_contrast(ts, refs), "reference"
    if ts.mean is not None and ts.std is not None:
        return standardised(ts), "distribution"
    return None, None


def top_windows(values: np.ndarray, *, window: int = WINDOW, n: int = PER_TEXT) -> list[tuple[int, int, float]]:
    """The ``n`` highest-mean windows of ``window`` consecutive values (the whole text when shorter) that do not
    overlap and whose mean is above 0, highest first: ``(start, end, mean)``, ``end`` exclusive."""
    values = np.asarray(values, dtype=np.float64)
    means, n_windows = window_means((values,), window)
    m = means[0, : int(n_windows[0])]
    w = min(window, values.size)
    picked: list[tuple[int, int, float]] = []
    for s in np.argsort(-m, kind="stable"):
        if len(picked) == n or not m[s] > 0:
            break
        s = int(s)
        if all(s + w <= a or b <= s for a, b, _ in picked):
            picked.append((s, s + w, float(m[s])))
    return picked


def exposed_windows(texts: Sequence[str], is_member: np.ndarray, scores: np.ndarray, contrast: tuple,
                    tokenizer: Any, *, max_length: int | None = None, names: Sequence[str] = (),
                    k: int = TOP_TEXTS, window: int = WINDOW, per_text: int = PER_TEXT) -> list[dict]:
    """The ``k`` members with the highest ``scores`` (an attack's, higher: member), each with its :func:`top_windows`
    of ``contrast`` (:func:`token_contrast`'s, on the tokens ``tokenizer`` scored, cut to ``max_length``).

    Each text: ``record`` (its name in ``names``, else ``member #i``), ``rank`` (1: the most exposed), ``score``,
    ``n_tokens`` (scored tokens) and ``windows``, each ``start`` and ``end`` (the positions of its first and one past
    its last token among the text's scored tokens, 0-based), ``contrast`` (its tokens' mean), ``text`` (its tokens
    decoded), ``before`` and ``after`` (up to :data:`CONTEXT_CHARS` characters of the text either side) and
    ``n_chars`` (the length of ``text``)."""
    mem = np.flatnonzero(np.asarray(is_member, bool))
    order = mem[np.argsort(-np.asarray(scores, dtype=np.float64)[mem], kind="stable")][:k]
    if not len(order):
        return []
    ids, _ = encode_texts(tokenizer, [texts[i] for i in order], max_length=max_length)

    def decode(part) -> str:
        return tokenizer.decode(part, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    out = []
    for rank, (i, e) in enumerate(zip(order, ids), 1):
        d = contrast[i]
        if len(e) - 1 != d.size:  # not the tokens scored (another tokenizer than the scores'): nothing to point at
            continue
        wins = []
        for s, t, c in top_windows(d, window=window, n=per_text):
            text = decode(e[s + 1: t + 1])  # scored token j is token j + 1 of the ids (the first is not scored)
            wins.append({"start": s, "end": t, "contrast": c, "text": text,
                         "before": decode(e[: s + 1])[-CONTEXT_CHARS:], "after": decode(e[t + 1:])[:CONTEXT_CHARS],
                         "n_chars": len(text)})
        out.append({"record": names[i] if len(names) > i else f"member #{int(i)}", "rank": rank,
                    "score": float(scores[i]), "n_tokens": int(d.size), "windows": wins})
    return out
