"""The blind baseline: telling members from non-members by their texts alone, with no model.

Das, Zhang and Tramèr, "Blind Baselines Beat Membership Inference Attacks for Foundation Models" (2024, arXiv
2406.16201) show that many published member / non-member splits of language-model benchmarks differ in
distribution (dates, topics, length), so that a classifier which never queries the model separates them as well as
the attacks do. An attack's AUC on such a split measures the split, not the model. The baseline here is a
TF-IDF logistic regression on character 2-4-grams and word uni- and bigrams, plus the text's length, scored out of
fold (stratified K-fold cross-fitting): every text's score comes from a classifier that did not see it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._random import RandomStateLike, seed_to_int
from .._validation import check_scalar
from ..exceptions import InvalidInputError

__all__ = ["blind_baseline_scores"]


def _lengths(texts) -> np.ndarray:
    return np.array([[np.log1p(len(t)), np.log1p(len(t.split()))] for t in texts])


def _classifier(seed: int):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    features = make_union(
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, max_features=50_000, sublinear_tf=True),
        TfidfVectorizer(analyzer="word", ngram_range=(1, 2), min_df=2, max_features=50_000, sublinear_tf=True),
        make_pipeline(FunctionTransformer(_lengths), StandardScaler()),
    )
    return make_pipeline(features, LogisticRegression(C=1.0, max_iter=2000, random_state=seed))


def blind_baseline_scores(texts: Sequence[str], is_member, *, n_folds: int = 5,
                          random_state: RandomStateLike = 0) -> np.ndarray:
    """Out-of-fold scores of a text-only classifier trained to tell members from non-members.

    Parameters
    ----------
    texts : sequence of n str
    is_member : array-like of shape (n,) of 0/1
    n_folds : int, default 5
        Folds of the stratified cross-fitting (at most the size of the smaller class).
    random_state : int, Generator or None
        Seeds the fold split.

    Returns
    -------
    ndarray of shape (n,)
        The classifier's decision value for each text, fitted without it; higher means "member".
    """
    from sklearn.model_selection import StratifiedKFold

    docs = list(texts)
    m = np.asarray(is_member).astype(int).reshape(-1)
    if len(docs) != m.size:
        raise InvalidInputError(f"texts has {len(docs)} texts but is_member has {m.size} values")
    check_scalar(n_folds, name="n_folds", kind=(int, np.integer), min_val=2)
    n_small = int(min(m.sum(), m.size - m.sum()))
    if n_small < 2:
        raise InvalidInputError("the blind baseline needs at least 2 members and 2 non-members")
    seed = seed_to_int(random_state)
    folds = StratifiedKFold(n_splits=min(int(n_folds), n_small), shuffle=True, random_state=seed)
    out = np.empty(m.size)
    arr = np.array(docs, dtype=object)
    for train, test in folds.split(np.zeros(m.size), m):
        clf = _classifier(seed).fit(arr[train].tolist(), m[train])
        out[test] = clf.decision_function(arr[test].tolist())
    return out
