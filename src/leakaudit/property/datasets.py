"""The paper's datasets as :class:`~leakaudit.property.game.PropertyData` (spec Sec. 4.1-4.3).

- Census-Income (KDD): one-hot categoricals (missing as a category; the default) or
  one ordinal column per attribute (``encoding="ordinal"``: each categorical's category
  index, z-scored like the numerics), z-scored numerics, instance weight dropped;
  label 1 = "50000+.". Properties: "random"
  (an added Bernoulli(1/2) bit the model sees), or any "column=value"
  ("sex=Female", "race=Black"), which stays in the model input.
- SpamAssassin (the documented substitute for Enron-Spam, which is not available
  offline): bag of words over subject + body (top 5,000 terms, English stop
  words removed, fitted on the whole corpus as the public feature spec), binary
  (default) or TF-IDF values (spec Sec. 4.3 allows both; the paper gives none);
  label 1 = spam. Properties: "random" (added bit, a model input) or "negative"
  (VADER compound <= -0.05 on subject + body, never a model input).

Matrices are SciPy CSR (the one-hot and bag-of-words inputs are sparse, and
logistic regression trains on them as they are).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidParameterError
from .game import PropertyData
from .predicates import append_feature, negative_sentiment, parse_predicate, random_feature

__all__ = ["census_property_data", "spam_property_data"]


CENSUS_ENCODINGS = ("onehot", "ordinal")


def census_property_data(
    prop: str = "random", *, n_rows: int | None = None, encoding: str = "onehot", random_state: RandomStateLike = None
) -> tuple[PropertyData, dict]:
    """Census-Income (KDD) with a property.

    Parameters
    ----------
    prop : str
        "random" or "column=value" (e.g. "sex=Female", "race=Black").
    n_rows : int, optional
        Use a random subset of this many rows (default: all 299,285).
    encoding : {"onehot", "ordinal"}, default="onehot"
        "onehot": 510 columns (503 one-hot, 7 numeric; spec Sec. 4.3). "ordinal": the 40
        attributes as they are in the file, one column each (a categorical's index in its
        sorted categories), all z-scored; the paper says it used the data "as is" and
        names no encoding.
    random_state : None, int or Generator
        Row subset and random bit.

    Returns
    -------
    data : PropertyData
    info : dict
        Rows, features, label rate, property rate, P(y=1 | f) and P(y=1 | not f).
    """
    from ..data import load_census_kdd

    check_choice(encoding, name="encoding", choices=CENSUS_ENCODINGS)
    rng = check_random_state(random_state)
    ds = load_census_kdd()
    n = len(ds)
    if n_rows is not None:
        check_scalar(n_rows, name="n_rows", kind=(int, np.integer), min_val=100)
        if n_rows < n:
            ds = ds.subset(np.sort(rng.choice(n, size=int(n_rows), replace=False)))
    if encoding == "onehot":
        enc = ds.encoder()
        blocks = [sp.csr_matrix(enc.transform(ds.frame.iloc[s : s + 40000])) for s in range(0, len(ds), 40000)]
        X = sp.vstack(blocks, format="csr")
    else:
        X = _ordinal(ds)
    if prop == "random":
        f = random_feature(len(ds), random_state=rng)
        X = append_feature(X, f)
    else:
        f = parse_predicate(prop, ds.frame)
    data = PropertyData(X=X, y=ds.y, f=f, name=f"census-kdd:{prop}")
    return data, _info(data)


def spam_property_data(
    prop: str = "random", *, vocab_size: int = 5000, values: str = "binary", max_chars: int | None = 2000,
    threshold: float = -0.05, random_state: RandomStateLike = None,
) -> tuple[PropertyData, dict]:
    """SpamAssassin (Enron substitute) with a property: "random" or "negative" (VADER).

    Parameters
    ----------
    prop : {"random", "negative"}
    vocab_size : int, default=5000
    values : {"binary", "tfidf"}, default="binary"
        Term presence (0/1), or TF-IDF (term counts times smoothed inverse document
        frequency, rows scaled to unit L2 norm; scikit-learn's ``TfidfTransformer``
        fitted on the whole corpus, like the vocabulary). The random bit is appended
        as a 0/1 column either way.
    max_chars : int or None, default=2000
        Characters of each e-mail scored by VADER (see :func:`~leakaudit.property.predicates.vader_scores`).
    threshold : float, default=-0.05
        VADER compound cut-off of "negative".
    random_state : None, int or Generator
    """
    from ..data import load_spamassassin
    from ..data.text import bag_of_words

    if prop not in ("random", "negative"):
        raise InvalidParameterError(f"spam property must be 'random' or 'negative'; got {prop!r}")
    check_choice(values, name="values", choices=("binary", "tfidf"))
    rng = check_random_state(random_state)
    ds = load_spamassassin()
    texts = (ds.frame["subject"].fillna("") + "\n" + ds.frame["body"].fillna("")).tolist()
    X, bow = bag_of_words(texts, vocab_size=vocab_size, binary=True, dense=False)
    if values == "tfidf":
        from sklearn.feature_extraction.text import TfidfTransformer

        # The same terms as the binary matrix (top vocab_size by document frequency, spec Sec. 4.3); counting
        # occurrences while choosing them would rank terms by total frequency instead.
        counts, _ = bag_of_words(texts, binary=False, vocabulary=bow.vocabulary, dense=False)
        X = TfidfTransformer().fit_transform(counts).tocsr()
    if prop == "random":
        f = random_feature(len(texts), random_state=rng)
        X = append_feature(X, f)
    else:
        f = negative_sentiment(texts, threshold=threshold, max_chars=max_chars)
    data = PropertyData(X=X, y=ds.y, f=f, name=f"spamassassin:{prop}")
    return data, _info(data)


def _ordinal(ds) -> np.ndarray:
    """One z-scored column per attribute: numerics as they are, categoricals as their category's index."""
    cols = []
    for feat in ds.features:
        v = ds.frame[feat.name]
        if feat.kind == "numeric":
            col = v.to_numpy(dtype=np.float64)
        else:
            col = pd.Categorical(v.astype(str), categories=list(feat.categories)).codes.astype(np.float64)
        sd = col.std()
        cols.append((col - col.mean()) / (sd if sd > 0 else 1.0))
    return np.column_stack(cols)


def _info(data: PropertyData) -> dict:
    return {
        "rows": len(data), "features": int(data.X.shape[1]), "label_rate": float(data.y.mean()),
        "property_rate": float(data.f.mean()), "p_y1_given_f": float(data.y[data.f].mean()),
        "p_y1_given_not_f": float(data.y[~data.f].mean()),
    }
