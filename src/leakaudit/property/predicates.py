"""Record properties ``f : X -> {0, 1}`` for property inference (spec Sec. 1.1 and 4.2).

A property is a function of the record alone, so the adversary can evaluate
it on its own samples; it need not be a model input (negative sentiment is
not). Every predicate here returns a boolean array of shape (n_records,).

- :func:`column_equals` / :func:`parse_predicate`: ``"sex=Female"``, ``"race=Black"``.
- :func:`random_feature` + :func:`append_feature`: the paper's added random bit,
  which the model takes as input (otherwise D+ and D- are indistinguishable).
- :func:`negative_sentiment`: VADER (``vaderSentiment``, which ships its
  lexicon) on the raw text; never a model input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._extras import require
from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError

__all__ = [
    "column_equals",
    "parse_predicate",
    "random_feature",
    "append_feature",
    "vader_scores",
    "negative_sentiment",
]


def column_equals(frame: Any, column: str, value: Any) -> np.ndarray:
    """``f(x) = 1`` iff ``x[column] == value`` (strings compared after stripping blanks).

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_records, n_columns)
    column : str
    value : scalar

    Returns
    -------
    ndarray of bool, shape (n_records,)
    """
    if column not in frame.columns:
        raise InvalidParameterError(
            f"property column {column!r} is not in the data; columns are: {', '.join(map(str, frame.columns))}"
        )
    col = frame[column]
    if col.dtype.kind in "iuf" and not isinstance(value, str):
        return (col.to_numpy() == value).astype(bool)
    vals = col.astype(str).str.strip().to_numpy()
    return vals == str(value).strip()


def parse_predicate(spec: str, frame: Any) -> np.ndarray:
    """Evaluate a textual predicate ``"column=value"`` (or ``"column!=value"``) on ``frame``.

    Examples: ``"sex=Female"``, ``"race=Black"``. A value that does not occur
    raises an error listing the values that do.
    """
    if not isinstance(spec, str) or "=" not in spec:
        raise InvalidParameterError(f"property must look like 'column=value'; got {spec!r}")
    negate = "!=" in spec
    column, value = spec.split("!=" if negate else "=", 1)
    column, value = column.strip(), value.strip()
    f = column_equals(frame, column, value)
    if not f.any():
        seen = sorted(map(str, frame[column].astype(str).str.strip().unique()))[:20]
        raise InvalidParameterError(
            f"property {spec!r} holds for no record; values of {column!r} include: {', '.join(seen)}"
        )
    return ~f if negate else f


def random_feature(n: int, *, rate: float = 0.5, random_state: RandomStateLike = None) -> np.ndarray:
    """An i.i.d. Bernoulli(rate) bit per record, independent of everything else (spec Sec. 4.2).

    The rate does not matter to the attack: D+ and D- are sampled separately.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    check_scalar(n, name="n", kind=(int, np.integer), min_val=1)
    check_scalar(rate, name="rate", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    rng = check_random_state(random_state)
    return rng.random(int(n)) < rate


def append_feature(X: Any, bit: np.ndarray) -> Any:
    """Append ``bit`` (0/1) as the last column of ``X`` (dense or SciPy sparse); the model sees it.

    Returns
    -------
    matrix of shape (n_records, n_features + 1), of the same kind as ``X``.
    """
    bit = np.asarray(bit).astype(np.float64).reshape(-1, 1)
    if bit.shape[0] != X.shape[0]:
        raise InvalidInputError(f"bit has {bit.shape[0]} rows but X has {X.shape[0]}")
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(bit)], format="csr")
    return np.hstack([np.asarray(X, dtype=np.float64), bit])


def _analyzer():
    return require("vaderSentiment.vaderSentiment", "the negative-sentiment predicate").SentimentIntensityAnalyzer()


def vader_scores(texts: Sequence[str], *, max_chars: int | None = 2000) -> np.ndarray:
    """VADER polarity scores of each text: columns ``neg, neu, pos, compound``.

    Parameters
    ----------
    texts : sequence of str, length n
    max_chars : int or None, default=2000
        Score only the first ``max_chars`` characters of each text (None: all).
        [Choice] VADER is slow on whole e-mails; their first 2,000 characters
        cost a small fraction (timings in benchmarks/README.md).

    Returns
    -------
    ndarray of shape (n, 4)
    """
    if max_chars is not None:
        check_scalar(max_chars, name="max_chars", kind=(int, np.integer), min_val=1)
    ana = _analyzer()
    out = np.empty((len(texts), 4))
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InvalidInputError(f"texts[{i}] is not a string ({type(t).__name__})")
        s = ana.polarity_scores(t if max_chars is None else t[:max_chars])
        out[i] = (s["neg"], s["neu"], s["pos"], s["compound"])
    return out


def negative_sentiment(
    texts: Sequence[str], *, rule: str = "compound", threshold: float = -0.05, max_chars: int | None = 2000
) -> np.ndarray:
    """``f(x) = 1`` iff the text's sentiment is negative (VADER; spec Sec. 4.2).

    Parameters
    ----------
    texts : sequence of str, length n
    rule : {"compound", "neg>pos"}, default="compound"
        "compound": VADER's compound score <= ``threshold`` (VADER's standard
        negative cut-off is -0.05). "neg>pos": the negative share exceeds the positive one.
    threshold : float, default=-0.05
    max_chars : int or None, default=2000
        See :func:`vader_scores`.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    check_choice(rule, name="rule", choices=("compound", "neg>pos"))
    check_scalar(threshold, name="threshold", min_val=-1.0, max_val=1.0)
    s = vader_scores(texts, max_chars=max_chars)
    if rule == "compound":
        return s[:, 3] <= threshold
    return s[:, 0] > s[:, 2]
