"""Per-token log-probabilities of texts under a causal language model, batched; or given as arrays.

A text becomes token ids with the model's tokenizer; a beginning-of-text token is put in front when the tokenizer
has one and did not add it, so that the first real token is scored too. Each token t is scored by
``log p(x_t | x_<t)``; for Min-K%++ the same pass keeps the mean and standard deviation of ``log p(z | x_<t)`` over
the whole next-token distribution z ~ p(. | x_<t). Texts longer than the model's context are cut to its first
``max_length`` tokens and counted.

Batching: texts are sorted by length and grouped so that a batch holds at most ``batch_tokens`` padded tokens and
its logits at most ``max_logits`` numbers; padding is on the right under an attention mask, so every real token
sees exactly the positions it would see alone.

Devices. The passes run where the model's parameters are (a model loaded with ``device="cuda"`` scores on the
GPU); ``score_texts(device=...)`` moves the model there first. Batches are built on the CPU and copied over; the
scores come back as float64 numpy arrays.
"""

from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._extras import require
from .._validation import check_scalar, check_sequence
from ..exceptions import InvalidInputError
from ..learners import resolve_device

__all__ = ["TokenScores", "encode_texts", "score_texts", "score_texts_cached", "scores_from_arrays", "check_texts",
           "model_device"]

#: default cap on the numbers in one batch's logits (float32: 256 MiB), so a 50,000-token vocabulary fits
_MAX_LOGITS = 64 * 2**20


@dataclass(frozen=True)
class TokenScores:
    """Per-token scores of n texts under one model.

    Attributes
    ----------
    logprobs : tuple of n ndarrays of shape (T_i,)
        ``log p(x_t | x_<t)`` of each scored token of text i.
    mean : tuple of n ndarrays of shape (T_i,), or None
        ``mu_t = E_{z ~ p(.|x_<t)} log p(z | x_<t)``, the mean log-probability of the next-token distribution.
    std : tuple of n ndarrays of shape (T_i,), or None
        Its standard deviation ``sigma_t``. Min-K%++ needs ``mean`` and ``std``.
    correct : tuple of n bool ndarrays of shape (T_i,), or None
        Whether the most probable next token was the true one.
    n_truncated : int
        Texts cut to the model's context.
    truncated : bool ndarray of shape (n,), or None
        Which texts were cut.
    max_length : int or None
        The context they were cut to (tokens, beginning-of-text token included).
    """

    logprobs: tuple
    mean: tuple | None = None
    std: tuple | None = None
    correct: tuple | None = None
    n_truncated: int = 0
    max_length: int | None = None
    truncated: np.ndarray | None = None

    @property
    def n_texts(self) -> int:
        return len(self.logprobs)

    @property
    def n_tokens(self) -> np.ndarray:
        """Scored tokens per text, shape (n,)."""
        return np.array([len(a) for a in self.logprobs], dtype=np.int64)

    def mean_logprob(self) -> np.ndarray:
        """Mean log-probability per scored token of each text, shape (n,) (minus the loss; ln of 1 / perplexity)."""
        return np.array([float(np.mean(a)) for a in self.logprobs])

    def token_accuracy(self) -> float | None:
        """Share of all scored tokens whose most probable prediction was right (None without ``correct``)."""
        if self.correct is None:
            return None
        tot = sum(len(c) for c in self.correct)
        return float(sum(int(np.sum(c)) for c in self.correct) / tot) if tot else None

    def subset(self, idx) -> "TokenScores":
        """The scores of texts ``idx`` (an index array), in that order."""
        pick = (lambda t: None if t is None else tuple(t[i] for i in idx))
        return TokenScores(pick(self.logprobs), pick(self.mean), pick(self.std), pick(self.correct),
                           n_truncated=int(self.truncated[idx].sum()) if self.truncated is not None else 0,
                           max_length=self.max_length,
                           truncated=None if self.truncated is None else self.truncated[idx])


def check_texts(texts: Any, *, name: str = "texts") -> list[str]:
    """A list of non-empty strings; else one line naming the first bad text by its position (0-based)."""
    docs = check_sequence(texts, name=name, kind=str)
    if not docs:
        raise InvalidInputError(f"{name} is empty: no text to score")
    for i, d in enumerate(docs):
        if not d.strip():
            raise InvalidInputError(f"{name}[{i}] is empty (or only white space): an empty text has no tokens to "
                                    "score; remove it")
    return docs


def encode_texts(tokenizer: Any, texts: Sequence[str], *, max_length: int | None = None,
                 name: str = "texts") -> tuple[list[list[int]], np.ndarray]:
    """Token ids of each text, a beginning-of-text token first when the tokenizer has one, cut to ``max_length``.

    Returns
    -------
    ids : list of n lists of int
    truncated : bool ndarray of shape (n,)
        Which texts were longer than ``max_length`` tokens and cut to their first ``max_length``.
    """
    enc = tokenizer(list(texts), add_special_tokens=True)["input_ids"]
    bos = getattr(tokenizer, "bos_token_id", None)
    ids, cut = [], np.zeros(len(enc), dtype=bool)
    for i, e in enumerate(enc):
        e = list(e)
        if bos is not None and (not e or e[0] != bos):
            e.insert(0, bos)
        if max_length is not None and len(e) > max_length:
            e, cut[i] = e[:max_length], True
        if len(e) < 2:
            raise InvalidInputError(f"{name}[{i}] gives {len(e)} token and the tokenizer has no beginning-of-text "
                                    "token: there is no token to score (give a longer text)")
        ids.append(e)
    return ids, cut


def _batches(lengths: np.ndarray, batch_tokens: int, max_rows: int) -> list[np.ndarray]:
    """Indices of texts per batch, longest first, each batch's padded size within the caps."""
    order = np.argsort(-lengths, kind="stable")
    out, cur, cur_len = [], [], 0
    for i in order:
        t = int(lengths[i])
        width = max(cur_len, t)
        if cur and (width * (len(cur) + 1) > batch_tokens or len(cur) + 1 > max_rows):
            out.append(np.array(cur))
            cur, width = [], t
        cur.append(int(i))
        cur_len = width
    if cur:
        out.append(np.array(cur))
    return out


@contextlib.contextmanager
def torch_threads(n_threads: int | None):
    """torch's intra-op thread count set to ``n_threads`` inside the block (unchanged for None), restored after."""
    torch = require("torch", "scoring texts under a language model")

    if n_threads is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n_threads))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def padded_batch(rows: Sequence[Sequence[int]], device: Any) -> tuple:
    """Texts' token ids as one batch padded on the right: ids (B, width) and the attention mask, on ``device``."""
    import torch

    x = torch.zeros((len(rows), max(len(e) for e in rows)), dtype=torch.long)
    mask = torch.zeros(x.shape, dtype=torch.long)
    for r, e in enumerate(rows):
        x[r, : len(e)], mask[r, : len(e)] = torch.tensor(e), 1
    return x.to(device), mask.to(device)


def forward_batches(model: Any, tokenizer: Any, ids: list, lengths: np.ndarray, *, batch_tokens: int,
                    max_logits: int, n_threads: int | None):
    """The model's forward passes over the texts' token ids ``ids`` (``lengths`` tokens each) in padded batches
    (the module docstring's batching), where its parameters are, in evaluation mode without gradients (its mode
    restored after the last): yields ``(b, x, logits)``, ``b`` the batch's texts, ``x`` their padded ids (B, width)
    on the model's device and ``logits`` (B, width - 1, V) in float32, predicting tokens 1, ..., width - 1."""
    import torch

    vocab = int(model.get_output_embeddings().weight.shape[0]) if getattr(model, "get_output_embeddings", None) \
        and model.get_output_embeddings() is not None else len(tokenizer)
    rows = max(1, int(max_logits // max(1, vocab * int(lengths.max()))))
    dev = model_device(model)
    was_training = getattr(model, "training", False)
    model.eval()
    with torch_threads(n_threads), torch.inference_mode():
        for b in _batches(lengths, max(int(batch_tokens), int(lengths.max())), rows):
            x, mask = padded_batch([ids[i] for i in b], dev)
            yield b, x, model(input_ids=x, attention_mask=mask).logits[:, :-1].float()
    if was_training:
        model.train()


def score_texts(model: Any, tokenizer: Any, texts: Sequence[str], *, max_length: int | None = None,
                batch_tokens: int = 4096, max_logits: int = _MAX_LOGITS, n_threads: int | None = None,
                distribution: bool = True, name: str = "texts", device: str | None = None,
                prefix: str | None = None) -> TokenScores:
    """Per-token log-probabilities of ``texts`` under a causal language model, in padded batches.

    Parameters
    ----------
    model : transformers causal LM (or any module returning ``.logits`` of shape (B, T, V) from
        ``input_ids`` and ``attention_mask``)
    tokenizer : transformers tokenizer
    texts : sequence of n non-empty str
    max_length : int, optional
        Context in tokens; longer texts are cut and counted in ``n_truncated``. Default: no cut.
    batch_tokens : int, default 4096
        Most padded tokens per forward pass.
    max_logits : int
        Most numbers in one batch's logits (batch x length x vocabulary); bounds memory for large vocabularies.
    n_threads : int, optional
        torch threads for the passes (restored afterwards); default: torch's setting.
    distribution : bool, default True
        Also keep the next-token distribution's mean and std of log-probabilities (Min-K%++) and the top-1 hits.
    name : str
        How messages name ``texts``.
    device : {None, "cpu", "cuda", "cuda:N", "auto"}, default None
        Where the passes run. None: where the model's parameters are (no move); otherwise the model is moved
        there first (``model.to(device)``, in place, as ``torch.nn.Module.to`` does) and stays there.
    prefix : str, optional
        Score each text conditioned on this text put before it (ReCaLL's non-member prefix): the same tokens of the
        text are scored as without it, each now also seeing the prefix. With ``max_length``, the text is cut to the
        room the prefix leaves (counted in ``n_truncated``).

    Returns
    -------
    TokenScores
    """
    import torch

    docs = check_texts(texts, name=name)
    check_scalar(batch_tokens, name="batch_tokens", kind=(int, np.integer), min_val=1)
    if prefix is None:
        ids, cut = encode_texts(tokenizer, docs, max_length=max_length, name=name)
        skip = 0
    else:
        ids, cut, skip = _with_prefix(tokenizer, docs, prefix, max_length, name)
    lengths = np.array([len(e) for e in ids])
    lp, mu, sd, ok = [None] * len(docs), [None] * len(docs), [None] * len(docs), [None] * len(docs)
    if device is not None:
        model.to(resolve_device(device))
    for b, x, logits in forward_batches(model, tokenizer, ids, lengths, batch_tokens=batch_tokens,
                                        max_logits=max_logits, n_threads=n_threads):
        logp = torch.log_softmax(logits, dim=-1)
        tgt = x[:, 1:]
        tok = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1).cpu().numpy()
        if distribution:
            hit = (logp.argmax(-1) == tgt).cpu().numpy()
            pl = logp.exp().mul_(logp)  # p log p, in place: one (B, T, V) buffer besides logp
            m1 = pl.sum(-1)
            var = (pl.mul_(logp).sum(-1) - m1 * m1).clamp_min(0.0)  # E[(log p)^2] - (E log p)^2
            m1, s1 = m1.cpu().numpy(), var.sqrt().cpu().numpy()
        for r, i in enumerate(b):
            n = int(lengths[i]) - 1
            lp[i] = tok[r, skip:n].astype(np.float64)
            if distribution:
                mu[i], sd[i], ok[i] = (m1[r, skip:n].astype(np.float64), s1[r, skip:n].astype(np.float64),
                                       hit[r, skip:n])
    return TokenScores(tuple(lp), tuple(mu) if distribution else None, tuple(sd) if distribution else None,
                       tuple(ok) if distribution else None, n_truncated=int(cut.sum()), max_length=max_length,
                       truncated=cut)


def _with_prefix(tokenizer: Any, docs: list, prefix: str, max_length: int | None,
                 name: str) -> tuple[list[list[int]], np.ndarray, int]:
    """Each text's tokens after ``prefix``'s (which keeps the beginning-of-text token when the tokenizer has one),
    the text cut to the room the prefix leaves in ``max_length``; and how many leading scored positions belong to
    the prefix, so that the text's scored tokens are the ones :func:`encode_texts` scores without it."""
    if not isinstance(prefix, str) or not prefix.strip():
        raise InvalidInputError("prefix must be a non-empty text (the non-member context ReCaLL puts first)")
    (pre,), _ = encode_texts(tokenizer, [prefix], name="prefix")
    texts, _ = encode_texts(tokenizer, docs, name=name)
    bos = getattr(tokenizer, "bos_token_id", None)
    room = None if max_length is None else max_length - len(pre)
    if room is not None and room < 2:
        raise InvalidInputError(f"prefix takes {len(pre)} of the {max_length} tokens of the context: no room is "
                                "left for the texts (give a shorter prefix)")
    ids, cut = [], np.zeros(len(texts), dtype=bool)
    for i, e in enumerate(texts):
        body = e[1:] if bos is not None else e  # the text's own tokens (encode_texts put a bos first)
        if room is not None and len(body) > room:
            body, cut[i] = body[:room], True
        ids.append(pre + body)
    # without a bos token, the text's first token is not scored on its own: drop it here too
    return ids, cut, len(pre) - 1 + (0 if bos is not None else 1)


def model_device(model: Any) -> Any:
    """The device of a model's first parameter (a ``torch.device``); the CPU for a model without parameters."""
    import torch

    try:
        return next(iter(model.parameters())).device
    except (StopIteration, AttributeError, TypeError):
        return torch.device("cpu")


def _per_text(arrays: Any, name: str, n: int | None = None, names: Any = None) -> tuple:
    """Each text's numbers, checked; ``names``: how messages name each text's (default ``name[i]``)."""
    if isinstance(arrays, np.ndarray) and arrays.ndim == 2:  # one row per text, NaN after its last token
        arrays = [row[~np.isnan(row)] for row in arrays]
    try:
        out = tuple(np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a sequence of 1-D arrays of numbers, one per text") from None
    if n is not None and len(out) != n:
        raise InvalidInputError(f"{name} has {len(out)} texts; logprobs has {n}")
    for i, a in enumerate(out):
        where = f"{name}[{i}]" if names is None else names[i]
        if a.size == 0:
            raise InvalidInputError(f"{where} has no tokens: an empty text cannot be scored")
        if not np.all(np.isfinite(a)):
            raise InvalidInputError(f"{where} holds NaN or infinite values")
    return out


def scores_from_arrays(logprobs: Any, *, mean: Any = None, std: Any = None, names: Any = None) -> TokenScores:
    """Token scores computed elsewhere (any framework): the scores-only input.

    Parameters
    ----------
    logprobs : sequence of n 1-D arrays, or a 2-D array padded with NaN
        ``log p(x_t | x_<t)`` of each scored token of each text (natural log, at most 0).
    mean, std : same shapes, optional
        The mean and standard deviation of the log-probabilities of each position's next-token distribution
        (what Min-K%++ needs; without them it does not run).
    names : sequence of n str, optional
        How messages name each text's log-probabilities (its file, row and column); default ``logprobs[i]``.

    Returns
    -------
    TokenScores
    """
    lp = _per_text(logprobs, "logprobs", names=names)
    if not lp:
        raise InvalidInputError("logprobs is empty: no text to score")
    for i, a in enumerate(lp):
        if a.max() > 1e-6:
            raise InvalidInputError(f"{f'logprobs[{i}]' if names is None else names[i]} holds {a.max():.4g} > 0: "
                                    "log-probabilities are at most 0 (give natural-log probabilities, not logits or "
                                    "losses)")
    if (mean is None) != (std is None):
        raise InvalidInputError("give both mean and std (Min-K%++), or neither")
    mu = sd = None
    if mean is not None:
        mu, sd = _per_text(mean, "mean", len(lp)), _per_text(std, "std", len(lp))
        for i, (a, m, s) in enumerate(zip(lp, mu, sd)):
            if m.shape != a.shape or s.shape != a.shape:
                raise InvalidInputError(f"text {i}: mean and std need one value per token of logprobs ({a.size})")
            if s.min() < 0:
                raise InvalidInputError(f"std[{i}] holds a negative value")
    return TokenScores(lp, mu, sd)


def score_texts_cached(cache_dir: Any, model: Any, tokenizer: Any, texts: Sequence[str], **kwargs) -> TokenScores:
    """:func:`score_texts`, kept in ``cache_dir/lm_scores`` (None: not kept) under a key of the model's weights, the
    tokenizer's vocabulary, the texts and every setting that can change a number (``n_threads`` and ``device`` aside),
    so that a model, a reference model above all, scores the same texts once across audits. An entry is read with
    ``allow_pickle=False``; one that cannot be read is scored again and replaced."""
    if cache_dir is None:
        return score_texts(model, tokenizer, texts, **kwargs)
    import hashlib
    import json

    import torch

    from .._results import atomic_file

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().to("cpu", torch.float32).contiguous()
        h.update(f"{name}{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes())
    h.update(json.dumps([type(tokenizer).__name__, sorted(tokenizer.get_vocab().items()),
                         {k: v for k, v in sorted(kwargs.items()) if k not in ("n_threads", "device")}],
                        default=str).encode())
    for text in texts:
        h.update(f"{len(text)}:{text}".encode())
    path = Path(cache_dir) / "lm_scores" / f"{h.hexdigest()[:32]}.npz"
    with contextlib.suppress(OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        with np.load(path, allow_pickle=False) as f:
            cut = np.cumsum(f["n"])[:-1]
            split = (lambda k: tuple(np.split(f[k], cut)) if k in f else None)
            return TokenScores(split("logprobs"), mean=split("mean"), std=split("std"), correct=split("correct"),
                               n_truncated=int(f["n_truncated"]),
                               max_length=int(f["max_length"]) if f["max_length"] >= 0 else None,
                               truncated=f["truncated"] if "truncated" in f else None)
    ts = score_texts(model, tokenizer, texts, **kwargs)
    arrays = {k: np.concatenate(getattr(ts, k)) for k in ("logprobs", "mean", "std", "correct")
              if getattr(ts, k) is not None}
    if ts.truncated is not None:
        arrays["truncated"] = ts.truncated
    with atomic_file(path, "wb", what="language-model scores cache entry") as fh:
        np.savez(fh, n=ts.n_tokens, n_truncated=ts.n_truncated,
                 max_length=-1 if ts.max_length is None else ts.max_length, **arrays)
    return ts
