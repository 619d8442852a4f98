"""Where a sensitive attribute sits in an encoded feature matrix, and each row's value of it.

Shared by the classifier audit (:mod:`.classifier`) and the regression audit (:mod:`.experiment`).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import UnsupportedError

__all__ = ["attribute_encoding", "value_index"]


def attribute_encoding(encoder, dataset, attribute: str):
    """Columns of ``attribute`` in the encoded matrix, the candidate encodings, and the value names."""
    feat = dataset.feature(attribute)
    sl = encoder.groups[attribute]
    cols = list(range(sl.start, sl.stop))
    if feat.kind == "binary":
        return cols[0], np.array([0.0, 1.0]), [str(c) for c in feat.categories]
    if feat.kind == "categorical":
        names = [n.split("=", 1)[1] for n in encoder.feature_names_out[sl]]
        return cols, None, names
    raise UnsupportedError(
        f"attribute {attribute!r} is {feat.kind}; attribute inference needs a categorical or binary column "
        "(bin a numeric column into categories first)"
    )


def value_index(X, columns, values) -> np.ndarray:
    """Each row's value of the attribute, as an index into the candidates of :func:`attribute_encoding`."""
    if np.ndim(columns) == 0:
        return np.searchsorted(values, X[:, columns]).astype(np.int64)
    return np.argmax(X[:, columns], axis=1)
