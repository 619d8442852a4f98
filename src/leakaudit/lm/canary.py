"""Canary audit of language-model fine-tuning: an epsilon lower bound from one fine-tuning run.

Panda, Tang, Mahloujifar, Sehwag and Mittal, "Privacy Auditing of Large Language Models" (ICLR 2025). The auditor
designs ``m`` canaries, each a prompt followed by a random *secret*, and inserts each into the fine-tuning set
independently with probability 1/2 (:func:`~leakaudit.dpaudit.one_run.draw_inclusion`). After the one fine-tuning
run, each canary is scored by the model's mean log-probability of its secret given its prompt; the canaries the
model finds likeliest are guessed "included", the least likely "left out", and the guesses' accuracy becomes an
epsilon lower bound (Steinke, Nasr and Jagielski 2023; :func:`~leakaudit.dpaudit.search.check_claim`, whose search
over guess counts is paid for by a union bound) set against the claimed epsilon.

Two secret designs, both from the paper, make a canary easy to memorise and unlike anything else in the data:

``"new_token"``
    Secrets of fresh tokens (``<|canary_0|>``, ...) that the trainer adds to the tokenizer before fine-tuning
    (``tokenizer.add_tokens(canaries.new_tokens)`` and ``model.resize_token_embeddings(len(tokenizer))``): a left-out
    canary's tokens never occur in training.
``"rare_token"``
    Secrets of the tokenizer's tokens rarest in the user's fine-tuning texts: no change to the tokenizer.

The bound is valid whatever the design and the score, because the inclusions are drawn independently of both;
the design decides how tight it is. A bound above the claim shows the claim is violated; a bound below it is
consistent with the claim, never a proof of privacy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._random import RandomStateLike, check_random_state, spawn_seeds
from .._validation import check_choice, check_scalar
from ..exceptions import DataFileError, InvalidInputError
from .score import check_texts, encode_texts, score_texts

__all__ = ["DESIGNS", "Canaries", "CanaryAudit", "make_canaries", "insert_canaries", "secret_scores",
           "canary_audit", "read_canaries"]

DESIGNS = ("new_token", "rare_token")
_NEW_TOKEN = "<|canary_{}|>"
#: most characters of a prompt (a "word" of a web page can be long)
_PROMPT_CHARS = 80


@dataclass(frozen=True)
class Canaries:
    """Designed canaries and which of them go into training.

    Attributes
    ----------
    prompts, secrets : list of m str
        Each canary is ``prompt + " " + secret``.
    included : ndarray of shape (m,), int8
        +1 where the canary is inserted into the fine-tuning set, -1 where it is held out (each with probability
        1/2, independently: the one-run bound assumes it).
    design : {"new_token", "rare_token"}
    new_tokens : list of str
        The tokens the trainer must add to the tokenizer (the "new_token" design; empty otherwise).
    seed : int or None
    """

    prompts: list
    secrets: list
    included: np.ndarray
    design: str
    new_tokens: list
    seed: int | None = None

    @property
    def texts(self) -> list[str]:
        return [f"{p} {s}" for p, s in zip(self.prompts, self.secrets)]

    @property
    def m(self) -> int:
        return len(self.prompts)

    def inserted(self) -> list[str]:
        """The texts of the canaries that go into training."""
        return [t for t, s in zip(self.texts, self.included) if s == 1]

    def to_json(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        d = {**asdict(self), "included": self.included.astype(int).tolist(), "format": "leakaudit-canaries-1"}
        p.write_text(json.dumps(d, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return p


def read_canaries(path: str | Path) -> Canaries:
    """The canaries written by :meth:`Canaries.to_json` (``leakaudit lm-canary-audit insert``), checked."""
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"canary file {p} does not exist" + (" (it is a directory)" if p.is_dir() else ""))
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"canary file {p} is not readable JSON ({exc})") from None
    if not isinstance(d, dict) or d.get("format") != "leakaudit-canaries-1":
        raise InvalidInputError(f"canary file {p} was not written by leakaudit lm-canary-audit insert")
    try:
        prompts, secrets, inc = list(d["prompts"]), list(d["secrets"]), np.asarray(d["included"])
        design, new = d["design"], list(d.get("new_tokens") or [])
    except (KeyError, TypeError):
        raise InvalidInputError(f"canary file {p} lacks prompts, secrets, included or design") from None
    if not (len(prompts) == len(secrets) == inc.size) or not prompts:
        raise InvalidInputError(f"canary file {p}: prompts, secrets and included must have one entry per canary")
    if not np.isin(inc, (-1, 1)).all():
        raise InvalidInputError(f"canary file {p}: included must hold only -1 and +1")
    check_choice(design, name=f"design in {p}", choices=DESIGNS)
    return Canaries(prompts=[str(x) for x in prompts], secrets=[str(x) for x in secrets],
                    included=inc.astype(np.int8), design=design, new_tokens=new, seed=d.get("seed"))


def _rare_tokens(tokenizer: Any, texts: list[str], n_rare: int, rng: np.random.Generator) -> np.ndarray:
    """The ``n_rare`` ordinary tokens least frequent in ``texts`` (ties in random order) whose text is printable and
    encodes back to that one token, so that a secret made of them is (nearly) those tokens."""
    enc = tokenizer(texts, add_special_tokens=False)["input_ids"]
    vocab = len(tokenizer)
    counts = np.bincount(np.concatenate([np.asarray(e, dtype=np.int64) for e in enc if len(e)] or
                                        [np.zeros(0, np.int64)]), minlength=vocab)[:vocab]
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    ids = np.array([i for i in range(vocab) if i not in special])
    pieces = tokenizer.batch_decode([[int(i)] for i in ids])
    alone = tokenizer(pieces, add_special_tokens=False)["input_ids"]
    ids = ids[np.array([len(a) == 1 and a[0] == i and s.strip() != "" and s.strip().isprintable()
                        for i, a, s in zip(ids, alone, pieces)], dtype=bool)]
    if ids.size < 2:
        raise InvalidInputError("the tokenizer has fewer than 2 ordinary tokens that encode back to themselves: "
                                "rare-token secrets cannot be made; use design='new_token'")
    order = rng.permutation(ids.size)
    order = order[np.argsort(counts[ids][order], kind="stable")]
    return ids[order[: min(int(n_rare), ids.size)]]


#: memory a canary takes while it is designed: per secret token (its name, id and text) and per canary (its prompt and
#: record); above what tracemalloc measures on the tiny demo's tokenizer (benchmarks/README.md)
_CANARY_TOKEN_BYTES, _CANARY_BYTES = 128, 512


def _check_canary_size(m: int, secret_length: int) -> None:
    """Refuse, before any canary is drawn, ``m`` canaries of ``secret_length`` tokens past the memory budget."""
    from ..engine import check_memory

    check_memory(float(m) * (secret_length * _CANARY_TOKEN_BYTES + _CANARY_BYTES),
                 f"{m:,} canaries of {secret_length:,} secret tokens would take",
                 how=f" to design ({_CANARY_TOKEN_BYTES} bytes a token, {_CANARY_BYTES} a canary)",
                 fix="design fewer canaries (m) or shorter secrets (secret_length)")


def make_canaries(texts: Sequence[str], *, m: int = 1000, design: str = "rare_token", tokenizer: Any = None,
                  secret_length: int = 8, prompt_words: int = 8, n_rare: int | None = None,
                  n_new_tokens: int | None = None, max_prompt_tokens: int | None = 64,
                  random_state: RandomStateLike = 0) -> Canaries:
    """Design ``m`` canaries for a fine-tuning set and draw which are inserted.

    Parameters
    ----------
    texts : sequence of str
        The user's fine-tuning texts: each prompt is the first ``prompt_words`` words of one of them (drawn at
        random); the rare-token design counts token frequencies in them.
    m : int, default 1000
        Canaries; about half are inserted.
    design : {"rare_token", "new_token"}
    tokenizer : transformers tokenizer
        The tokenizer of the model to be fine-tuned (needed for "rare_token").
    secret_length : int, default 8
        Tokens per secret.
    prompt_words : int, default 8
        Words of the prompt (at most 80 characters).
    n_rare : int, optional
        Size of the pool of rarest tokens secrets are drawn from ("rare_token"); default a tenth of the vocabulary,
        at least 64.
    n_new_tokens : int, optional
        Fresh tokens secrets are drawn from ("new_token"); default ``m * secret_length``, so that each canary has
        tokens of its own (fewer: drawn with replacement, shared between canaries).
    max_prompt_tokens : int or None, default 64
        With ``tokenizer``: a prompt longer than this in tokens is cut to its first ones (80 characters of a script
        the tokenizer has few merges for, such as Chinese under a small English vocabulary, can be 200 tokens and
        more, past a small model's context). None: no cut.
    random_state : int, Generator or None
        Seeds the prompts, the secrets and the inclusions.

    Returns
    -------
    Canaries
    """
    from ..dpaudit.one_run import draw_inclusion

    docs = check_texts(texts, name="texts")
    check_choice(design, name="design", choices=DESIGNS)
    check_scalar(m, name="m", kind=(int, np.integer), min_val=2)
    check_scalar(secret_length, name="secret_length", kind=(int, np.integer), min_val=1)
    check_scalar(prompt_words, name="prompt_words", kind=(int, np.integer), min_val=0)
    _check_canary_size(int(m), int(secret_length))
    s_prompt, s_secret, s_inc = spawn_seeds(random_state, 3)
    rng_p, rng_s = np.random.default_rng(s_prompt), np.random.default_rng(s_secret)
    prompts = [" ".join(docs[i].split()[: int(prompt_words)])[:_PROMPT_CHARS].strip()
               for i in rng_p.integers(0, len(docs), int(m))]
    if tokenizer is not None and max_prompt_tokens is not None:
        check_scalar(max_prompt_tokens, name="max_prompt_tokens", kind=(int, np.integer), min_val=1)
        prompts = [_first_tokens(tokenizer, p, int(max_prompt_tokens)) for p in prompts]
    new_tokens: list[str] = []
    if design == "new_token":
        n_new = int(m) * int(secret_length) if n_new_tokens is None else int(n_new_tokens)
        check_scalar(n_new, name="n_new_tokens", kind=(int, np.integer), min_val=2)
        new_tokens = [_NEW_TOKEN.format(j) for j in range(n_new)]
        if any("<|canary_" in d for d in docs):
            raise InvalidInputError("the texts already contain '<|canary_': new-token canaries would not be new")
        if n_new >= int(m) * int(secret_length):  # each canary its own tokens: a held-out one's never occur
            draw = rng_s.permutation(n_new)[: int(m) * int(secret_length)].reshape(int(m), int(secret_length))
        else:
            draw = rng_s.integers(0, n_new, (int(m), int(secret_length)))
        secrets = ["".join(new_tokens[j] for j in row) for row in draw]
    else:
        if tokenizer is None:
            raise InvalidInputError("the rare-token design needs the tokenizer of the model to be fine-tuned")
        pool_size = max(64, len(tokenizer) // 10) if n_rare is None else int(n_rare)
        check_scalar(pool_size, name="n_rare", kind=(int, np.integer), min_val=2)
        pool = _rare_tokens(tokenizer, docs, pool_size, rng_s)
        secrets = [tokenizer.decode([int(i) for i in rng_s.choice(pool, int(secret_length))]).strip()
                   for _ in range(int(m))]
    included = draw_inclusion(int(m), np.random.default_rng(s_inc))
    return Canaries(prompts=prompts, secrets=secrets, included=included, design=design, new_tokens=new_tokens,
                    seed=int(random_state) if isinstance(random_state, (int, np.integer)) else None)


def _first_tokens(tokenizer: Any, text: str, k: int) -> str:
    """``text`` cut to its first ``k`` tokens (a character split by the cut is dropped)."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return text if len(ids) <= k else tokenizer.decode(ids[:k]).rstrip("\ufffd").strip()


def insert_canaries(texts: Sequence[str], canaries: Canaries, *, random_state: RandomStateLike = 0) -> list[str]:
    """The fine-tuning set with the included canaries (``included == +1``) inserted at random positions."""
    docs = list(texts)
    aug = docs + canaries.inserted()
    order = check_random_state(random_state).permutation(len(aug))
    return [aug[i] for i in order]


def secret_scores(model: Any, tokenizer: Any, canaries: Canaries, *, max_length: int | None = None,
                  n_threads: int | None = None) -> np.ndarray:
    """Each canary's mean log-probability of its secret's tokens given its prompt, shape (m,); higher means
    "more likely included".

    The secret's tokens are those of the whole canary beyond its prompt's. For the new-token design the tokenizer
    must hold every canary token as one token (added before fine-tuning).
    """
    if canaries.design == "new_token":
        ids = tokenizer.convert_tokens_to_ids(list(canaries.new_tokens))
        unk = getattr(tokenizer, "unk_token_id", None)
        missing = [t for t, i in zip(canaries.new_tokens, ids) if i is None or i == unk]
        if missing:
            raise InvalidInputError(f"the tokenizer lacks {len(missing)} of the {len(canaries.new_tokens)} canary "
                                    f"tokens (e.g. {missing[0]!r}): add them before fine-tuning "
                                    "(tokenizer.add_tokens, model.resize_token_embeddings) and give the fine-tuned "
                                    "model's own tokenizer")
    full, _ = encode_texts(tokenizer, canaries.texts, name="canaries")
    pre, _ = encode_texts(tokenizer, [p if p else " " for p in canaries.prompts], name="canary prompts")
    n_secret = np.array([max(1, len(f) - len(p)) for f, p in zip(full, pre)])
    if max_length is not None:
        long = next((i for i, f in enumerate(full) if len(f) > max_length), None)
        if long is not None:
            raise InvalidInputError(f"canary {long} has {len(full[long])} tokens, more than the model's context of "
                                    f"{max_length}: its secret would be cut (design shorter canaries)")
    ts = score_texts(model, tokenizer, canaries.texts, max_length=max_length, n_threads=n_threads,
                     distribution=False, name="canaries")
    return np.array([float(np.mean(lp[-min(int(k), lp.size):])) for lp, k in zip(ts.logprobs, n_secret)])


@dataclass(frozen=True)
class CanaryAudit:
    """The canary audit of one fine-tuning run.

    Attributes
    ----------
    epsilon_lower_bound : float
        The largest epsilon whose (epsilon, delta)-DP claim the guesses reject at ``confidence``.
    claimed_epsilon, delta, confidence : float
    violated : bool
        ``epsilon_lower_bound > claimed_epsilon``.
    verdict : str
    m, n_included : int
    guesses, correct : int
        Guesses made (k_plus + k_minus of the best pair) and how many were right.
    auc : float
        AUC of the secret scores, included (+1) against held-out canaries.
    bound : str
        The analysis (:data:`leakaudit.dpaudit.search.BOUNDS`).
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    confidence: float
    violated: bool
    verdict: str
    m: int
    n_included: int
    guesses: int
    correct: int
    auc: float
    bound: str
    design: str


def canary_audit(canaries: Canaries, scores, *, claimed_epsilon: float, delta: float, confidence: float = 0.95,
                 bound: str = "best") -> CanaryAudit:
    """The one-run epsilon lower bound from the canaries' secret scores, against the claimed epsilon.

    Parameters
    ----------
    canaries : Canaries
    scores : array-like of shape (m,)
        Higher meaning "more likely included" (:func:`secret_scores`).
    claimed_epsilon, delta : float
        The fine-tuning's (epsilon, delta)-DP claim (epsilon 0 tests "no leak at all").
    confidence : float, default 0.95
    bound : str, default "best"
        The analysis of :func:`leakaudit.dpaudit.search.check_claim`.

    Returns
    -------
    CanaryAudit
    """
    from ..dpaudit.search import check_claim
    from ..metrics import auc

    check_scalar(confidence, name="confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if s.size != canaries.m:
        raise InvalidInputError(f"scores has {s.size} values; there are {canaries.m} canaries")
    c = check_claim(canaries.included, s, claimed_epsilon=claimed_epsilon, delta=delta, beta=1 - confidence,
                    bound=bound)
    inc = canaries.included == 1
    a = float(auc(inc.astype(int), s)) if 0 < inc.sum() < inc.size else float("nan")
    return CanaryAudit(epsilon_lower_bound=float(c.epsilon_lower_bound), claimed_epsilon=float(claimed_epsilon),
                       delta=float(delta), confidence=float(confidence), violated=bool(c.violated),
                       verdict=c.verdict, m=canaries.m, n_included=int(inc.sum()), guesses=int(c.search.r),
                       correct=int(c.search.v), auc=a, bound=bound, design=canaries.design)
