"""Random forests of CART trees, many forests trained at once (the compiled forest kernel, or scikit-learn).

:class:`RandomForest` is scikit-learn's ``RandomForestClassifier`` (version 1.9)
re-implemented so that all K forests x T trees of one :meth:`~RandomForest.fit_many`
call are grown together, the trees spread over threads, by the compiled kernel
``_forest_native.c`` (built with the package; its header explains the algorithm). It
follows scikit-learn's algorithm step by step, random streams included, so with the
same seed it grows the same trees: ``RandomForest(...).fit(X, y, random_state=s)``
predicts what ``RandomForestClassifier(..., random_state=s).fit(X, y)`` predicts
(tested to 1e-12). In particular:

* exact CART splits (best threshold over every candidate feature; threshold =
  midpoint of the two adjacent distinct float32 values, values closer than 1e-7
  never split apart); Gini or entropy impurity; ``min_samples_split`` and
  ``min_samples_leaf`` count rows (distinct bootstrap rows), not weights;
* bootstrap: ``n_boot`` rows drawn with replacement, each row weighted by its
  count (rows drawn zero times are left out of the tree);
* ``max_features`` candidates drawn without replacement; features found constant
  in a node still count as drawn, but the search goes on until one non-constant
  feature was evaluated (scikit-learn's rule);
* inputs are compared as float32, as scikit-learn's trees do;
* a tree's prediction is its leaf's weighted class fractions; a forest's is their
  mean over the trees.

Where it is faster: a feature's values are replaced once by their rank among
the feature's distinct values (:func:`feature_codes`), so a node evaluates a
feature with few distinct values by a class histogram in O(n_node) instead of
sorting (a one-hot column, with two classes, in O(1) from the node's sums of all
two-valued features, :func:`binary_rows`), and sorts only features with many
distinct values relative to the node's size; scikit-learn sorts every candidate.
:meth:`RandomForest.fit_predict_many` queries the trees as they are grown and
keeps none.

Where the compiled kernel is not available (no C compiler when the package was
installed, ``LEAKAUDIT_NATIVE=0``; ``kernels.kernel_status()`` says which and why) or
``backend="sklearn"``, the forests are scikit-learn's own ``RandomForestClassifier``, the same
trees, converted to the bank's arrays and queried with numpy.

Seeds: model k's seed ``s`` is the forest's ``random_state``: tree j's seed is the
j-th draw of ``RandomState(s).randint(2**31 - 1)``, as in scikit-learn. Results
do not depend on ``n_threads``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._validation import check_choice, check_matrix
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import BankLearner, Capabilities, ModelBank, ProbaModel, keep_params, refuse_removed

__all__ = ["RandomForest", "RandomForestBank", "RandomForestModel"]

_MAX_INT = np.iinfo(np.int32).max
_CRITERIA = {"gini": 0, "entropy": 1, "log_loss": 1}
#: bytes of tree-building buffers per kernel launch (trees are grown in chunks that fit)
_BUFFER_BYTES = 64 * 2**20
#: rows per (model, block) work item of the prediction kernel
_PREDICT_BLOCK = 64
#: the parameters scikit-learn's RandomForestClassifier shares with :class:`RandomForest`
_SKLEARN_PARAMS = ("n_estimators", "criterion", "max_depth", "min_samples_split", "min_samples_leaf", "max_features",
                   "bootstrap", "max_samples")
#: trees a worker grows before querying them together (fit_predict_many)
_QUERY_GROUP = 16
#: the most memory the query rows' bitsets (:func:`_forest_native.query_bitsets`) may take; above it (many rows with
#: many distinct values, e.g. 45,000 rows: ~100 MB) the trees are queried a row at a time
_BITSET_BYTES = 32 * 2**20
#: node-sum rows a worker of the kernel starts with (it doubles them as a deep tree needs)
_HST_ROWS = 64


def _query_sets(Xq: np.ndarray, order: np.ndarray | None = None, from_codes: bool = False) -> tuple:
    """``_forest_native.grow_query``'s ``sets``: the query rows as bitsets when they fit ``_BITSET_BYTES``
    (``bits`` True), else dummies (``bits`` False: each row descends each tree). ``order``: the columns' stable
    argsort, when the caller has it (the query rows are the training rows). ``from_codes``: the query rows are the
    training rows and their rank codes uint16, so the kernel reads a split's rows off the codes and needs no sets
    (``bits`` True, empty sets)."""
    nq, F = Xq.shape
    if from_codes:
        return True, np.zeros((0, -(-nq // 64)), np.uint64), np.zeros(F + 1, np.int64), np.zeros(0, np.float32), \
            np.zeros(F + 1, np.int64)
    if order is None:
        order = np.argsort(Xq, axis=0, kind="stable")
    # distinct values of each column (equal as floats: -0.0 is 0.0)
    counts = 1 + np.count_nonzero(np.diff(np.take_along_axis(Xq, order, axis=0), axis=0), axis=0).astype(np.int64)
    qvptr = np.zeros(F + 1, dtype=np.int64)
    np.cumsum(counts, out=qvptr[1:])
    W = -(-nq // 64)
    if (int(qvptr[-1]) + F) * W * 8 > _BITSET_BYTES:
        return False, np.zeros((0, 1), np.uint64), np.zeros(1, np.int64), np.zeros(0, np.float32), qvptr
    from . import _forest_native

    P, pptr, qv = _forest_native.query_bitsets(np.ascontiguousarray(Xq, dtype=np.float32), qvptr, order)
    return True, P, pptr, qv, qvptr


def _is_int(x: Any) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x: Any) -> bool:
    return isinstance(x, (numbers.Real, np.floating)) and not isinstance(x, (bool, np.bool_)) and not _is_int(x)


def features_per_split(max_features: Any, n_features: int) -> int:
    """scikit-learn's trees' candidate features per split for ``max_features`` (None, "sqrt", "log2", an int, a
    fraction) and ``n_features`` columns; an int outside [1, n_features] is refused."""
    mf = max_features
    if mf is None:
        return n_features
    if mf == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if mf == "log2":
        return max(1, int(np.log2(n_features)))
    if _is_int(mf):
        if not 1 <= mf <= n_features:
            raise InvalidParameterError(f"max_features must be in [1, n_features={n_features}]; got {mf}")
        return int(mf)
    return max(1, int(mf * n_features))


def leaf_rows(min_samples_split: Any, min_samples_leaf: Any, m: int) -> tuple[int, int]:
    """scikit-learn's trees' (min_samples_split, min_samples_leaf) in rows for a model trained on ``m`` rows: a
    fraction rounds up (the split at least 2), and the split is raised to twice the leaf."""
    msl = int(min_samples_leaf) if _is_int(min_samples_leaf) else int(np.ceil(min_samples_leaf * m))
    mss = int(min_samples_split) if _is_int(min_samples_split) else max(2, int(np.ceil(min_samples_split * m)))
    return max(mss, 2 * msl), msl


def _compiled():
    """The compiled forest kernel's module when its library opened on this machine, else None."""
    from . import _forest_native

    return _forest_native if _forest_native.library() is not None else None


def _threads(n_threads: int | None) -> int:
    from ._threads import default_threads

    return int(n_threads) if n_threads is not None else default_threads()


def tree_seeds(seeds, n_trees: int) -> np.ndarray:
    """Model k's tree seeds at rows ``k * n_trees ...``: ``RandomState(seeds[k]).randint(0, 2**31 - 1, n_trees)``,
    what ``RandomForestClassifier(random_state=seeds[k])`` hands its trees: drawn by the compiled kernel when it is
    there (a RandomState per model is serial Python), else by numpy."""
    native = _compiled()
    if native is not None and len(seeds):
        return native.tree_seeds(np.asarray([int(s) for s in seeds], np.int64), n_trees)
    return np.concatenate([np.random.RandomState(int(s)).randint(_MAX_INT, size=n_trees).astype(np.int64)
                           for s in seeds]) if len(seeds) else np.zeros(0, np.int64)


def round_down_f32(t: np.ndarray) -> np.ndarray:
    """The largest float32 <= each float64 of ``t``: for a float32 x, ``x <= t`` exactly when ``x <= round_down(t)``
    (how the bank keeps scikit-learn's float64 thresholds in float32 without changing a decision)."""
    t = np.asarray(t, dtype=np.float64)
    t32 = t.astype(np.float32)
    up = t32.astype(np.float64) > t
    t32[up] = np.nextafter(t32[up], np.float32(-np.inf))
    return t32


def feature_codes(X32: np.ndarray, order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank codes of every feature's float32 values.

    Parameters
    ----------
    X32 : float32 array of shape (n, F)
    order : int array of shape (n, F), optional
        ``np.argsort(X32, axis=0, kind="stable")``, when the caller has it.

    Returns
    -------
    codes : array of shape (F, n), uint16 (int32 when a feature has more than 65,536 distinct values)
        ``vals[voff[f] + codes[f, i]] == X32[i, f]``. Feature-major: a node gathers one feature's codes
        of its rows (to evaluate or partition on it), which then come from one short column that stays
        in cache (0.93 of the tree time of row-major codes, alternating runs on the SACRO-ML bench's trees).
    vals : float32 array of shape (sum of the features' numbers of distinct values,)
        Each feature's distinct values, ascending.
    voff : int64 array of shape (F + 1,)
    """
    n, F = X32.shape
    if order is None:
        order = np.argsort(X32, axis=0, kind="stable")
    srt = np.take_along_axis(X32, order, axis=0)
    new = np.ones((n, F), dtype=bool)
    new[1:] = srt[1:] != srt[:-1]
    rank_sorted = np.cumsum(new, axis=0) - 1  # (n, F): code of the sorted rows
    counts = new.sum(axis=0)
    top = int(counts.max()) if F else 1
    # uint16 for almost every dataset (half the memory traffic of int32)
    dtype = np.uint16 if top <= 2**16 else np.int32
    codes = np.empty((F, n), dtype=dtype)
    np.put_along_axis(codes.T, order, rank_sorted.astype(dtype), axis=0)
    voff = np.zeros(F + 1, dtype=np.int64)
    np.cumsum(counts, out=voff[1:])
    vals = srt.T[new.T]  # feature-major, ascending within a feature
    return codes, np.ascontiguousarray(vals, dtype=np.float32), voff


def binary_rows(codes: np.ndarray, voff: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each row holds the upper value of a two-valued feature (a one-hot column's 1); codes (F, n).

    Returns
    -------
    bslot : int64 array of shape (F,)
        Feature f's slot among the two-valued features (0, 1, ... in column order), -1 for the others.
    bptr : int64 array of shape (n + 1,)
    bidx : int64 array of shape (nnz,)
        Row i's slots with code 1: ``bidx[bptr[i]:bptr[i + 1]]``, ascending.
    """
    two = np.flatnonzero(np.diff(voff) == 2)
    bslot = np.full(codes.shape[0], -1, np.int64)
    bslot[two] = np.arange(two.size)
    r, c = np.nonzero(codes[two].T == 1)  # by row, then slot
    bptr = np.zeros(codes.shape[1] + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=codes.shape[1]), out=bptr[1:])
    return bslot, bptr, c.astype(np.int64)


def _tree_offsets(nn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each tree's nodes and leaves start in the flat arrays (n_trees + 1,): a binary tree of n nodes has
    (n + 1) / 2 leaves."""
    off = np.zeros(nn.size + 1, np.int64)
    np.cumsum(nn, out=off[1:])
    loff = np.zeros(nn.size + 1, np.int64)
    np.cumsum((nn + 1) // 2, out=loff[1:])
    return off, loff


class _FlatTrees:
    """The bank's flat node arrays, filled chunk after chunk by ``copy_trees`` (grown geometrically, sized from the
    trees grown so far), so that each node's entries are written once, into memory touched once."""

    def __init__(self, n_classes: int):
        self.C = n_classes
        self.nodes = self.leaves = 0
        self.cap_nodes = self.cap_leaves = 0
        self.nn, self.depth = [], []
        self.feat = self.thr = self.left = self.leaf = self.value = None

    def _reserve(self, nodes: int, leaves: int) -> None:
        if nodes <= self.cap_nodes and leaves <= self.cap_leaves:
            return
        cap_n, cap_l = max(nodes, 2 * self.cap_nodes), max(leaves, 2 * self.cap_leaves)
        new = (np.empty(cap_n, np.int32), np.empty(cap_n, np.float32), np.empty(cap_n, np.int32),
               np.empty(cap_n, np.int32), np.empty((cap_l, self.C), np.float64))
        if self.feat is not None:
            for dst, src in zip(new[:4], (self.feat, self.thr, self.left, self.leaf)):
                dst[: self.nodes] = src[: self.nodes]
            new[4][: self.leaves] = self.value[: self.leaves]
        self.feat, self.thr, self.left, self.leaf, self.value = new
        self.cap_nodes, self.cap_leaves = cap_n, cap_l

    def add(self, rows, nn, depth, max_nodes: int, remaining_trees: int) -> None:
        """Pack one chunk of grown trees (the build buffers' ``rows``, breadth-first) after the ones already held."""
        from . import _forest_native

        off, loff = _tree_offsets(nn)
        # room for this chunk and, at this chunk's mean size (+ 5 %), the trees still to grow
        est = 1.05 * (remaining_trees / max(1, nn.size))
        self._reserve(self.nodes + int(off[-1] * (1 + est)), self.leaves + int(loff[-1] * (1 + est)))
        _forest_native.pack(rows, nn, max_nodes, off + self.nodes, loff + self.leaves,
                            (self.feat, self.thr, self.left, self.leaf, self.value))
        self.nodes += int(off[-1])
        self.leaves += int(loff[-1])
        self.nn.append(nn)
        self.depth.append(depth.copy())

    def arrays(self):
        """(nn, feat, thr (float32, rounded down), left, leaf, value, depth), views of the filled parts."""
        n, lv = self.nodes, self.leaves
        return (np.concatenate(self.nn), self.feat[:n], self.thr[:n], self.left[:n],
                self.leaf[:n], self.value[:lv], np.concatenate(self.depth))


class RandomForestBank(ModelBank):
    """K fitted random forests, stored as flat node arrays.

    Nodes of a tree are numbered breadth-first, so the children of node j are
    ``left[j]`` and ``left[j] + 1``.

    Attributes
    ----------
    tree_ptr : int64 (K+1,)        trees of model k: ``tree_ptr[k]:tree_ptr[k+1]``
    node_off : int64 (n_trees+1,)  nodes of tree t: ``node_off[t]:node_off[t+1]``
    leaf_off : int64 (n_trees+1,)  leaf values of tree t: rows ``leaf_off[t]:leaf_off[t+1]`` of ``value``
    depth : int64 (n_trees,)       depth of every tree (root = 0)
    feature : int32 (n_nodes,)     split feature (0 at a leaf)
    threshold : float32 (n_nodes,) go to the left child when ``float32(x[feature]) <= threshold``
                                   (scikit-learn's float64 threshold rounded down to float32: same
                                   decisions); +inf at a leaf
    left : int32 (n_nodes,)        left child (inside the tree); a leaf points to itself
    leaf : int32 (n_nodes,)        -1 at an internal node, else the leaf's row in the tree's leaf values
    value : float64 (n_leaves, n_classes) weighted class fractions of every leaf
    """

    def __init__(self, tree_ptr, node_off, leaf_off, depth, feature, threshold, left, leaf, value, *,
                 n_features: int, n_threads: int | None = None):
        self.tree_ptr = tree_ptr
        self.node_off = node_off
        self.leaf_off = leaf_off
        self.depth = depth
        self.feature = feature
        self.threshold = threshold
        self.left = left
        self.leaf = leaf
        self.value = value
        self.n_models = int(tree_ptr.size - 1)
        self.n_classes = int(value.shape[1])
        self.n_features_in_ = int(n_features)
        self.n_threads = n_threads

    def _check_X(self, X: Any) -> np.ndarray:
        X = check_matrix(X, name="X", allow_empty=True)
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features; the forests were fitted on {self.n_features_in_}")
        return X

    def predict_proba(self, X: Any) -> np.ndarray:
        """Mean over each forest's trees of the leaf class fractions, shape (K, n_samples, n_classes)."""
        X = self._check_X(X)
        out = np.zeros((self.n_models, X.shape[0], self.n_classes))
        if X.shape[0] == 0 or self.n_models == 0:
            return out
        Xq = _as_float32(X, "X")
        native = _compiled()
        if native is None:
            return _predict_numpy(self, Xq, out)
        native.predict(Xq, self.tree_ptr, self.node_off, self.leaf_off, self.feature, self.threshold, self.left,
                       self.leaf, self.value, out, _PREDICT_BLOCK, _threads(self.n_threads))
        return out

    def model(self, k: int) -> "RandomForestModel":
        if not -self.n_models <= k < self.n_models:
            raise IndexError(f"model index {k} out of range for {self.n_models} models")
        k = k % self.n_models
        t0, t1 = int(self.tree_ptr[k]), int(self.tree_ptr[k + 1])
        a, b = int(self.node_off[t0]), int(self.node_off[t1])
        la, lb = int(self.leaf_off[t0]), int(self.leaf_off[t1])
        sub = RandomForestBank(np.array([0, t1 - t0], dtype=np.int64), self.node_off[t0:t1 + 1] - a,
                               self.leaf_off[t0:t1 + 1] - la, self.depth[t0:t1].copy(), self.feature[a:b].copy(),
                               self.threshold[a:b].copy(), self.left[a:b].copy(), self.leaf[a:b].copy(),
                               self.value[la:lb].copy(), n_features=self.n_features_in_, n_threads=self.n_threads)
        return RandomForestModel(sub)

    @property
    def n_nodes(self) -> np.ndarray:
        """Nodes of every tree, shape (n_trees,)."""
        return np.diff(self.node_off)

    @property
    def n_leaves(self) -> np.ndarray:
        """Leaves of every tree, shape (n_trees,)."""
        return np.diff(self.leaf_off)


def _as_float32(X: np.ndarray, name: str) -> np.ndarray:
    """X as C-contiguous float32, as scikit-learn's trees read it; values beyond float32's range are refused."""
    with np.errstate(over="ignore"):
        X32 = np.ascontiguousarray(X, dtype=np.float32)
    if not np.isfinite(X32).all():
        r, c = np.argwhere(~np.isfinite(X32))[0]
        raise InvalidInputError(
            f"{name}[{r}, {c}] = {X[r, c]:.6g} does not fit in float32, the precision the trees compare in "
            "(as scikit-learn's); rescale the features")
    return X32


class RandomForestModel(ProbaModel):
    """One fitted random forest (a bank of one)."""

    def __init__(self, bank: RandomForestBank):
        self.bank_ = bank
        self.n_classes = bank.n_classes
        self.n_features_in_ = bank.n_features_in_
        self.n_estimators_ = int(bank.tree_ptr[1])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes)."""
        return self.bank_.predict_proba(X)[0]

    def tree_leaf_counts(self) -> np.ndarray:
        """Leaves of every tree, shape (n_estimators,)."""
        return self.bank_.n_leaves

    def __repr__(self) -> str:
        return f"RandomForestModel(n_estimators={self.n_estimators_}, n_classes={self.n_classes})"


class RandomForest(BankLearner):
    """Random forest classifier (scikit-learn's algorithm), many forests grown together.

    Parameters (meanings and defaults of scikit-learn's ``RandomForestClassifier``)
    ----------
    n_estimators : int, default=100
        Trees per forest.
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    max_depth : int or None, default=None
        None grows until leaves are pure or hold fewer than ``min_samples_split`` rows.
    min_samples_split : int >= 2 or float in (0, 1], default=2
        Rows (not weights) a node needs to be split; a float is a fraction of
        the model's training rows (rounded up). Raised to ``2 * min_samples_leaf``.
    min_samples_leaf : int >= 1 or float in (0, 1), default=1
        Rows each child must keep.
    max_features : {"sqrt", "log2"}, int, float in (0, 1] or None, default="sqrt"
        Candidate features per split: ``max(1, int(sqrt(F)))``, ``max(1, int(log2(F)))``,
        the int itself (1..F), ``max(1, int(max_features * F))``, or all F.
    bootstrap : bool, default=True
        Train each tree on a bootstrap sample (rows weighted by their counts);
        False trains every tree on all rows (trees then differ only by the
        random order of candidate features).
    max_samples : int >= 1, float > 0 or None, default=None
        Bootstrap draws per tree: the model's number of rows (None), the int, or
        ``max(1, int(max_samples * n_rows))``. Only with ``bootstrap=True``.
    n_threads : int or None, default=None
        Threads for growing and querying (None: every processor this process may run on).
        Results do not depend on it.
    backend : {"auto", "compiled", "sklearn"}, default="auto"
        Trainer. "compiled": the package's forest kernel (``_forest_native``, built
        with the package; refused where it was not built or ``LEAKAUDIT_NATIVE=0``,
        ``kernels.kernel_status()`` says which). "sklearn": scikit-learn's
        ``RandomForestClassifier``, the same trees node for node, slower. "auto": the
        kernel where it is available, scikit-learn otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> m = RandomForest(n_estimators=5, bootstrap=False).fit(X, y, random_state=0)
    >>> m.predict_proba(np.array([[0.2], [2.6]]))
    array([[1., 0.],
           [0., 1.]])
    """

    def __init__(self, *, n_estimators: int = 100, criterion: str = "gini", max_depth: int | None = None,
                 min_samples_split: int | float = 2, min_samples_leaf: int | float = 1,
                 max_features: str | int | float | None = "sqrt", bootstrap: bool = True,
                 max_samples: int | float | None = None, n_threads: int | None = None, backend: str = "auto",
                 **removed: Any):
        refuse_removed("RandomForest", removed, native_off="sklearn")
        keep_params(self, locals())

    #: RandomForestClassifier parameters RandomForest does not implement, with the value it assumes
    _SKLEARN_DEFAULTS = {"min_weight_fraction_leaf": 0.0, "max_leaf_nodes": None, "min_impurity_decrease": 0.0,
                         "oob_score": False, "warm_start": False, "class_weight": None, "ccp_alpha": 0.0,
                         "monotonic_cst": None}

    @classmethod
    def from_sklearn(cls, estimator: Any, *, n_threads: int | None = None) -> "RandomForest":
        """The RandomForest that trains what ``estimator`` (a ``RandomForestClassifier``) trains.

        Raises :class:`~leakaudit.exceptions.UnsupportedError` naming any setting it
        does not implement (class weights, pruning, leaf-count limits, ...); the
        caller can then keep ``SklearnLearner(estimator)``. ``random_state``,
        ``n_jobs`` and ``verbose`` are not copied: seeds come from ``fit``'s
        ``random_state`` (equal seeds give equal forests) and threads from ``n_threads``.
        """
        from sklearn.ensemble import RandomForestClassifier

        if not isinstance(estimator, RandomForestClassifier):
            raise UnsupportedError(f"estimator must be a RandomForestClassifier; got {type(estimator).__name__}")
        params = estimator.get_params(deep=False)
        odd = {k: params.get(k) for k, v in cls._SKLEARN_DEFAULTS.items()
               if k in params and not (params[k] is v or params[k] == v)}
        if odd:
            raise UnsupportedError(f"RandomForest does not implement {odd} (it assumes {cls._SKLEARN_DEFAULTS})")
        return cls(**{k: params[k] for k in _SKLEARN_PARAMS}, n_threads=n_threads)

    # -- parameters -------------------------------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(votes=int(self.n_estimators),
                            implements="scikit-learn's RandomForestClassifier algorithm, same trees for the same seed")

    def parameter_codec(self, X: Any = None, fitted: Any = None) -> tuple:
        """Not a vector: a forest's parameters are its trees."""
        raise UnsupportedError("a forest's parameters are its trees, whose shape changes with every training run, not "
                               "one parameter vector of fixed length, which Izzo et al.'s mechanism adds its noise to")

    def oob_estimator(self):
        return self._sklearn_forest(oob_score=True) if self.bootstrap else None

    def _sklearn_forest(self, **kw):
        """scikit-learn's ``RandomForestClassifier`` with this learner's parameters and ``kw``."""
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(**{k: getattr(self, k) for k in _SKLEARN_PARAMS}, **kw)

    def validate_params(self) -> None:
        if not _is_int(self.n_estimators) or self.n_estimators < 1:
            raise InvalidParameterError(f"n_estimators must be an int >= 1; got {self.n_estimators!r}")
        if not isinstance(self.criterion, str) or self.criterion not in _CRITERIA:
            raise InvalidParameterError(f"criterion must be one of {sorted(_CRITERIA)}; got {self.criterion!r}")
        if self.max_depth is not None and (not _is_int(self.max_depth) or self.max_depth < 1):
            raise InvalidParameterError(f"max_depth must be None or an int >= 1; got {self.max_depth!r}")
        mss, msl = self.min_samples_split, self.min_samples_leaf
        if not ((_is_int(mss) and mss >= 2) or (_is_real(mss) and 0.0 < mss <= 1.0)):
            raise InvalidParameterError(
                f"min_samples_split must be an int >= 2 or a float in (0, 1]; got {mss!r}")
        if not ((_is_int(msl) and msl >= 1) or (_is_real(msl) and 0.0 < msl < 1.0)):
            raise InvalidParameterError(f"min_samples_leaf must be an int >= 1 or a float in (0, 1); got {msl!r}")
        mf = self.max_features
        if not (mf is None or (isinstance(mf, str) and mf in ("sqrt", "log2")) or _is_int(mf) or _is_real(mf)):
            raise InvalidParameterError(f"max_features must be 'sqrt', 'log2', an int, a float or None; got {mf!r}")
        if _is_real(mf) and not (np.isfinite(mf) and 0.0 < mf <= 1.0):
            raise InvalidParameterError(f"max_features as a float must be in (0, 1]; got {mf!r}")
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            raise InvalidParameterError(f"bootstrap must be a bool; got {self.bootstrap!r}")
        ms = self.max_samples
        if ms is not None:
            if not self.bootstrap:
                raise InvalidParameterError("max_samples must be None when bootstrap=False (no bootstrap is drawn)")
            if not ((_is_int(ms) and ms >= 1) or (_is_real(ms) and np.isfinite(ms) and ms > 0.0)):
                raise InvalidParameterError(f"max_samples must be None, an int >= 1 or a float > 0; got {ms!r}")
        if self.n_threads is not None and (not _is_int(self.n_threads) or self.n_threads < 1):
            raise InvalidParameterError(f"n_threads must be None or an int >= 1; got {self.n_threads!r}")
        check_choice(self.backend, name="backend", choices=("auto", "compiled", "sklearn"))

    def _check_params(self, n_features: int) -> dict:
        """The validated parameters that depend on the data (features tried per split) or on this machine (the
        compiled kernel), in the kernel's terms."""
        max_features = features_per_split(self.max_features, n_features)
        if self.backend == "compiled" and _compiled() is None:
            raise InvalidParameterError("backend='compiled' needs the forest kernel, which is not available here "
                                        "(`leakaudit doctor` says why); use backend='auto' or 'sklearn'")
        return dict(max_features=max_features, crit=_CRITERIA[self.criterion],
                    max_depth=_MAX_INT if self.max_depth is None else int(self.max_depth))

    def _per_model(self, m: int) -> tuple[int, int, int]:
        """(n_boot, min_samples_split, min_samples_leaf) for a model trained on m rows (sklearn's rules)."""
        ms = self.max_samples
        if not self.bootstrap or ms is None:
            n_boot = m
        elif _is_int(ms):
            n_boot = int(ms)
        else:
            n_boot = max(int(ms * m), 1)
        return (n_boot, *leaf_rows(self.min_samples_split, self.min_samples_leaf, m))

    # -- Learner protocol -------------------------------------------------------------------------
    def _fit_many(self, X: np.ndarray, y: np.ndarray, subsets: list[np.ndarray], seeds: list[int], *,
                  n_classes: int | None) -> RandomForestBank:
        return self._grow(X, y, subsets, seeds, n_classes, None)

    def _fit_predict_many(self, X: np.ndarray, y: np.ndarray, subsets: list[np.ndarray], seeds: list[int],
                          X_query: np.ndarray, *, n_classes: int | None) -> np.ndarray:
        """Models spread over the threads, each model's trees queried on ``X_query`` (in groups of
        ``_QUERY_GROUP``) as soon as they are grown and then dropped: no bank of trees is built. The query rows
        move down a tree as bitsets, a set per node (``_forest_native.query_bitsets``; each row descends each
        tree instead when the bitsets would pass ``_BITSET_BYTES``). The same numbers as
        ``fit_many(...).predict_proba(X_query)`` (each model's trees added in order, then divided by their
        number). With fewer models than threads the trees are spread instead (a bank, then queried)."""
        return self._grow(X, y, subsets, seeds, n_classes, X_query)

    def _grow(self, X, y, subsets, seeds, n_classes, X_query):
        """Grow every tree: a :class:`RandomForestBank` (``X_query`` None) or the forests' class
        probabilities on ``X_query``, shape (K, n_query, C)."""
        if X.shape[1] == 0:
            raise InvalidInputError("X has no features (shape (n, 0)); a tree needs at least one column to split on")
        p = self._check_params(X.shape[1])
        for k, s in enumerate(seeds):
            if not 0 <= int(s) <= 2**32 - 1:
                raise InvalidParameterError(f"random_states[{k}] = {s} is outside [0, 2**32 - 1]")
        X32 = _as_float32(X, "X")
        Xq = None if X_query is None else _as_float32(X_query, "X_query")  # (shape checked by the Learner)
        native = _compiled() if self.backend != "sklearn" else None
        if native is None:
            bank = self._sklearn_bank(X32, y, subsets, seeds, int(n_classes))
            return bank if Xq is None else bank.predict_proba(Xq)
        order = np.argsort(X32, axis=0, kind="stable")
        codes, vals, voff = feature_codes(X32, order)
        bslot, bptr, bidx = binary_rows(codes, voff)
        C = int(n_classes)
        T = int(self.n_estimators)
        Kn = len(subsets)
        sizes = np.array([s.size for s in subsets], dtype=np.int64)
        sub_ptr = np.zeros(Kn + 1, dtype=np.int64)
        np.cumsum(sizes, out=sub_ptr[1:])
        sub_rows = np.concatenate(subsets).astype(np.int64)
        per = np.array([self._per_model(int(m)) for m in sizes], dtype=np.int64).reshape(Kn, 3)
        n_boot, mss, msl = (np.ascontiguousarray(per[:, i]) for i in range(3))
        tree_seed = tree_seeds(seeds, T)
        # at most one leaf per distinct row: 2 m - 1 nodes (fewer under max_depth)
        max_nodes = 2 * int(sizes.max()) - 1
        if self.max_depth is not None and self.max_depth < 40:
            max_nodes = min(max_nodes, 2 ** (int(self.max_depth) + 1) - 1)
        max_leaves = (max_nodes + 1) // 2
        yv = y.astype(np.int64)
        # the struct holds bare addresses: every array it points to stays referenced in this frame
        forest = native.Forest(
            codes=codes.ctypes.data, wide=int(codes.dtype == np.int32), n=codes.shape[1], F=codes.shape[0],
            vals=vals.ctypes.data, voff=voff.ctypes.data, yv=yv.ctypes.data, sub_rows=sub_rows.ctypes.data,
            sub_ptr=sub_ptr.ctypes.data, n_models=Kn, n_trees=T, tree_seed=tree_seed.ctypes.data,
            n_boot=n_boot.ctypes.data, mss=mss.ctypes.data, msl=msl.ctypes.data, bootstrap=int(bool(self.bootstrap)),
            max_features=p["max_features"], max_depth=p["max_depth"], crit=p["crit"], maxnv=int(np.diff(voff).max()),
            bslot=bslot.ctypes.data, bptr=bptr.ctypes.data, bidx=bidx.ctypes.data, nbin=int(bslot.max() + 1),
            C=C, max_nodes=max_nodes, m_max=int(sizes.max()), hst_rows=_HST_ROWS)
        n_threads = _threads(self.n_threads)
        if Xq is not None and Kn >= n_threads:
            out = np.zeros((Kn, Xq.shape[0], C))
            if Xq.shape[0]:
                # the query rows are often the training rows (reference models queried on their pool)
                same = Xq.shape == X32.shape and np.array_equal(Xq, X32)
                # on its training rows a tree's splits are read off the uint16 rank codes (no sets to build)
                from_codes = same and codes.dtype == np.uint16
                sets = _query_sets(Xq, order if same else None, from_codes)
                native.grow_query(forest, Xq, out, _QUERY_GROUP, sets, n_threads, from_codes)
            return out
        # the build buffers (a row a tree, breadth-first) are allocated once and reused by every chunk, and each
        # chunk is packed straight into the bank's arrays: the first touch of fresh memory (page faults) can cost
        # more than the packing itself (benchmarks/README.md)
        per_tree = max_nodes * (4 + 4 + 4 + 4) + max_leaves * 8 * C
        chunk = max(min(Kn * T, _BUFFER_BYTES // per_tree), min(Kn * T, n_threads))
        bufs = (np.empty((chunk, max_nodes), np.int32), np.empty((chunk, max_nodes), np.float32),
                np.empty((chunk, max_nodes), np.int32), np.empty((chunk, max_nodes), np.int32),
                np.empty((chunk, max_leaves, C), np.float64))
        nn_b = np.zeros(chunk, np.int64)
        depth_b = np.zeros(chunk, np.int64)
        flat = _FlatTrees(C)
        for t0 in range(0, Kn * T, chunk):
            t1 = min(Kn * T, t0 + chunk)
            native.grow(forest, t0, t1, bufs, nn_b, depth_b, n_threads)
            flat.add(bufs, nn_b[: t1 - t0].copy(), depth_b[: t1 - t0], max_nodes, remaining_trees=Kn * T - t1)
        nn, feat, thr, left, leaf, value, depth = flat.arrays()
        node_off, leaf_off = _tree_offsets(nn)
        tree_ptr = np.arange(Kn + 1, dtype=np.int64) * T
        bank = RandomForestBank(tree_ptr, node_off, leaf_off, depth, feat, thr, left, leaf, value,
                                n_features=X.shape[1], n_threads=self.n_threads)
        return bank if Xq is None else bank.predict_proba(Xq)

    def _sklearn_bank(self, X32, y, subsets, seeds, C: int) -> RandomForestBank:
        """The forests trained by scikit-learn's ``RandomForestClassifier`` (the reference this class
        re-implements: the same trees for the same seeds), converted to a bank."""
        parts = []
        for rows, seed in zip(subsets, seeds):
            est = self._sklearn_forest(random_state=int(seed), n_jobs=self.n_threads).fit(X32[rows], y[rows])
            cols = est.classes_.astype(np.int64)
            parts.extend(_breadth_first(t.tree_, cols, C) for t in est.estimators_)
        nn = np.array([q[0].size for q in parts], dtype=np.int64)
        node_off, leaf_off = _tree_offsets(nn)
        feat, thr, left, leaf, value, depth = (np.concatenate([q[i] for q in parts]) if parts else None
                                               for i in range(6))
        tree_ptr = np.arange(len(subsets) + 1, dtype=np.int64) * int(self.n_estimators)
        return RandomForestBank(tree_ptr, node_off, leaf_off, depth, feat, thr, left, leaf, value,
                                n_features=X32.shape[1], n_threads=self.n_threads)


def _breadth_first(tree, cols: np.ndarray, C: int):
    """A scikit-learn tree (``estimator.tree_``) in the bank's breadth-first layout: (feature, threshold, left,
    leaf, value, depth (1,)); ``cols`` are the tree's classes among the C columns."""
    L, R = tree.children_left, tree.children_right
    levels = [np.zeros(1, np.int64)]
    while True:  # each level: the children of the previous level's internal nodes, in their order
        inner = levels[-1][L[levels[-1]] >= 0]
        if inner.size == 0:
            break
        nxt = np.empty(2 * inner.size, np.int64)
        nxt[0::2], nxt[1::2] = L[inner], R[inner]
        levels.append(nxt)
    order = np.concatenate(levels)
    pos = np.empty(order.size, np.int64)
    pos[order] = np.arange(order.size)
    is_leaf = L[order] < 0
    feat = np.where(is_leaf, 0, tree.feature[order]).astype(np.int32)
    thr = np.where(is_leaf, np.float32(np.inf), round_down_f32(tree.threshold[order]))
    left = np.where(is_leaf, np.arange(order.size), pos[np.maximum(L[order], 0)]).astype(np.int32)
    leaf = np.full(order.size, -1, np.int32)
    leaf[is_leaf] = np.arange(int(is_leaf.sum()))
    frac = tree.value[order[is_leaf], 0, :]
    value = np.zeros((frac.shape[0], C))
    value[:, cols] = frac / frac.sum(axis=1, keepdims=True)
    return feat, thr.astype(np.float32), left, leaf, value, np.array([len(levels) - 1], np.int64)


def _predict_numpy(bank: RandomForestBank, X32: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:meth:`RandomForestBank.predict_proba` without the compiled kernel: every row descends a tree in step
    (leaves step to themselves, so ``depth`` steps reach every leaf); the same sums in the same order."""
    rows = np.arange(X32.shape[0])
    for k in range(bank.n_models):
        t0, t1 = int(bank.tree_ptr[k]), int(bank.tree_ptr[k + 1])
        for t in range(t0, t1):
            o = int(bank.node_off[t])
            u = np.zeros(X32.shape[0], np.int64)
            for _ in range(int(bank.depth[t])):
                u = bank.left[o + u] + (X32[rows, bank.feature[o + u]] > bank.threshold[o + u])
            out[k] += bank.value[int(bank.leaf_off[t]) + bank.leaf[o + u]]
        out[k] /= t1 - t0
    return out
