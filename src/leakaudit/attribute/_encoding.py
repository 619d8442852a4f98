"""What the classifier audit (:mod:`.classifier`) and the regression audit (:mod:`.experiment`) share: their checks
and disjoint rows, where a sensitive attribute sits in an encoded feature matrix, each row's value of it, and the
no-model baseline."""

from __future__ import annotations

import numpy as np

from .._validation import check_scalar
from ..exceptions import InvalidParameterError, UnsupportedError

__all__ = ["attribute_encoding", "baseline_simulator", "check_audit", "check_sizes", "disjoint_rows", "value_index"]


def check_audit(dataset, task: str, attributes) -> None:
    """Refuse a dataset of another ``task``, or an attribute that is not one of its columns."""
    if getattr(dataset, "task", None) != task:
        raise UnsupportedError(f"dataset {getattr(dataset, 'name', '?')!r} is not a {task} dataset")
    for attribute in attributes:
        if attribute not in dataset.feature_names:
            raise InvalidParameterError(
                f"attribute {attribute!r} is not a column of {dataset.name}; "
                f"choose one of {', '.join(dataset.feature_names)}"
            )


def check_sizes(sizes) -> None:
    """Refuse any of the three sizes (members, non-members, reference rows) below 10."""
    for name, v in zip(("n_members", "n_nonmembers", "n_reference"), sizes):
        check_scalar(v, name=name, kind=int, min_val=10)


def disjoint_rows(rng, n: int, sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random disjoint members, non-members and reference rows of ``n`` rows (one permutation drawn from ``rng``)."""
    perm = rng.permutation(n)
    a, b, c = np.cumsum(sizes)
    return perm[:a], perm[a:b], perm[b:c]


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


def baseline_simulator(X, columns, known, t, ref, m: int):
    """The no-model baseline of Definition 6: the features without the attribute's ``columns`` beside ``known``
    (``(n, k)`` or ``(n,)``: what else the adversary knows, the label), ``phi(z)``, and a
    :class:`~leakaudit.attribute.bayes_simulator.BayesSimulator` fitted on the reference rows ``ref``."""
    from .bayes_simulator import BayesSimulator

    keep = [j for j in range(X.shape[1]) if j not in set(np.atleast_1d(columns).tolist())]
    phi = np.column_stack([X[:, keep], known])
    return phi, BayesSimulator(method="estimator").fit(phi[ref], t[ref], n_values=m)
