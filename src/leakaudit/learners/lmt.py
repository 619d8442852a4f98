"""Weka's LMT: Logistic Model Trees at Weka's default settings.

Landwehr, Hall & Frank (2005), "Logistic Model Trees", Machine Learning 59, §4, as Weka builds it (``trees.LMT``,
``trees.lmt.LMTNode`` and ``LogisticBase``, ``trees.j48.C45ModelSelection``, ``C45Split`` and its entropy criteria,
``Instances.stratify``):

- LogitBoost as :class:`~leakaudit.learners.SimpleLogistic` runs it (its rounds and cross-validation). The number of
  rounds k is chosen once, by 5-fold cross-validation on the whole training set, at most 200 (fastRegression); every
  node of at least 5 records runs k more rounds on its records from its parent's function, a smaller node keeps its
  parent's. Were k = 0, every node would choose its own rounds by the same cross-validation from its parent's function.
- Splits: C4.5's, on the attributes as they are, in nodes of more than 15 records: the attribute of largest gain
  ratio among those whose information gain is at least the average (less 1e-3). A numeric attribute is cut in two
  where its gain is largest, each side holding at least 10% of the records / 2 (clipped to [2, 25]), the gain less
  log2(number of cuts) / n (MDL), the cut moved down to a training value; values closer than 1e-5 (in the column's
  units) are not cut between. A nominal attribute gives one child per value (an absent value an empty child).
- Pruning: CART cost-complexity by 5-fold cross-validation on Weka's unrandomised stratified folds. A node's alpha
  is its model's training errors less its subtree's, / n / (leaves - 1), empty leaves (no rounds of their own)
  counted as one; a split that does not lower the training errors is pruned at once. The weakest links are pruned
  one by one; the tree is pruned at the midpoint alpha whose summed fold error is least (the most pruned of ties).

``benchmarks/_lmt_oracle.py`` is a second LMT on purpose: the Table 2 oracle imports nothing from leakaudit, so that
it checks leakaudit from outside; tests/learners/test_lmt.py holds the two equal (and both equal Weka's own).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError
from ._base import Capabilities, Learner, ProbaModel, keep_params
from .logistic import _check_query
from .simple_logistic import (linear_model, logitboost, logitboost_cv_rounds, predicted, weka_stratified_folds,
                              weka_stratified_order)

__all__ = ["LMT", "LMTModel"]

_SMALL = 1e-6  # weka.core.Utils' tolerance in gr / sm / eq
_FOLDS, _MIN_BOOST, _MAX_ROUNDS, _MIN_SPLIT, _MIN_NO_OBJ = 5, 5, 200, 15, 2  # Weka's LMT and J48 defaults


def _ent(counts: np.ndarray) -> np.ndarray:
    """Class entropy of (..., bags, classes) counts, in bits times records (EntropyBasedSplitCrit.newEnt)."""
    c = np.asarray(counts, float)
    lnf = lambda v: v * np.log(np.where(v > 0, v, 1.0))  # noqa: E731  ContingencyTables.lnFunc
    return (lnf(c.sum(-1)) - lnf(c).sum(-1)).sum(-1) / np.log(2)


def _gain_ratio(info: float, bags: np.ndarray, n: int) -> float:
    """GainRatioSplitCrit: the gain over the split's own entropy (0 for a trivial split)."""
    den = _ent(bags[None, :])
    return 0.0 if abs(den) < _SMALL else info / (den / n)


def _numeric_split(x: np.ndarray, Y: np.ndarray) -> tuple | None:
    """C45Split.handleNumericAttribute on values x, one-hot classes Y: (info gain, gain ratio, cut) or None."""
    n, J = Y.shape
    o = np.argsort(x, kind="stable")
    xs = x[o]
    lo = min(max(0.1 * n / J, _MIN_NO_OBJ), 25)
    cut = np.flatnonzero(xs[:-1] + 1e-5 < xs[1:])  # a cut after sorted index i
    left = cut + 1.0
    ok = (lo - left < _SMALL) & (lo - (n - left) < _SMALL)
    cut, left = cut[ok], left[ok]
    if 2 * lo - n > _SMALL or not len(cut):
        return None
    lc, tot = np.cumsum(Y[o], axis=0)[cut], Y.sum(0)
    num = _ent(tot[None]) - _ent(np.stack([lc, tot - lc], axis=1))  # (cuts, 2 bags, J)
    gains = np.where(np.abs(num) < _SMALL, 0.0, num / n)
    best, i = -1, 0
    while True:  # the first cut beating the best so far by more than _SMALL, in order (Utils.gr)
        beat = np.flatnonzero(gains[i:] - (gains[best] if best >= 0 else 0.0) > _SMALL)
        if not len(beat):
            break
        best = i = i + beat[0]
    info = (gains[best] if best >= 0 else 0.0) - np.log2(len(cut)) / n
    if info < _SMALL:
        return None
    s = cut[best]
    point = xs[s] if (xs[s] + xs[s + 1]) / 2 == xs[s + 1] else (xs[s] + xs[s + 1]) / 2
    return info, _gain_ratio(info, np.array([left[best], n - left[best]]), n), point


def _nominal_split(codes: np.ndarray, n_values: int, y: np.ndarray, J: int) -> tuple | None:
    """C45Split.handleEnumeratedAttribute: (info gain, gain ratio, None); valid when two values hold >= 2 records."""
    table = np.bincount(J * codes + y, minlength=J * n_values).reshape(n_values, J)
    if np.sum(table.sum(1) - _MIN_NO_OBJ > -_SMALL) < 2:
        return None
    num = _ent(table.sum(0, keepdims=True)) - _ent(table)
    info = 0.0 if abs(num) < _SMALL else num / len(y)
    return info, _gain_ratio(info, table.sum(1), len(y)), None


class _Node:
    """A node: its function (F on its records, coef, intercept), rounds of its own, training errors; when split, its
    attribute, cut (None: nominal) and children (kept while a pruning pass only marks it a leaf)."""

    def __init__(self, fn: tuple, rounds: int, wrong: int, total: int):
        self.fn, self.rounds, self.wrong, self.total = fn, rounds, wrong, total
        self.leaf, self.sons, self.attr, self.cut, self.alpha, self.wrong_tree = True, None, None, None, np.inf, wrong

    def route(self, v: np.ndarray) -> np.ndarray:
        """The child of each record whose value of the node's attribute is v."""
        return (v > self.cut).astype(int) if self.cut is not None else v

    def walk(self, marked: bool = False) -> list:
        """The current tree's nodes in preorder (``marked``: also those below a leaf pruning only marked)."""
        kids = self.sons if self.sons is not None and (marked or not self.leaf) else []
        return [self] + [m for s in kids for m in s.walk(marked)]

    def n_leaves(self) -> int:
        """LMTNode.getNumLeaves: empty leaves (no rounds of their own) under one parent count as one."""
        if self.leaf:
            return 1
        empty = sum(s.leaf and s.rounds == 0 for s in self.sons)
        return sum(s.n_leaves() for s in self.sons) - max(empty - 1, 0)

    def alphas(self) -> None:
        """LMTNode.treeErrors then calculateAlphas: each inner node's alpha from its subtree's training errors, top
        down; a split that does not lower the training errors is pruned at once (its children dropped)."""

        def errors(nd: _Node) -> int:
            nd.wrong_tree = nd.wrong if nd.leaf else sum(errors(s) for s in nd.sons)
            return nd.wrong_tree

        def alpha(nd: _Node) -> None:
            nd.alpha = np.inf
            if nd.leaf:
                return
            if nd.wrong - nd.wrong_tree <= 0:
                nd.leaf, nd.sons = True, None
                return
            leaves = nd.n_leaves() - 1
            nd.alpha = (nd.wrong - nd.wrong_tree) / nd.total / leaves if leaves else np.inf
            for s in nd.sons:
                alpha(s)

        errors(self)
        alpha(self)


class _Grower:
    """One LMT fit's data: the design X, labels, each attribute's values, k."""

    def __init__(self, X: np.ndarray, y: np.ndarray, attrs: list, J: int):
        self.X, self.y, self.attrs, self.J, self.Y = X, y, attrs, J, np.eye(J)[y]
        self.vals = _values(X, attrs)
        self.sorted = [np.sort(v) if isinstance(a, int) else None for v, a in zip(self.vals, attrs, strict=True)]
        self.multi_val = all(not isinstance(a, int) and not 0.3 * len(y) - _n_values(a) > _SMALL for a in attrs)
        self.k = logitboost_cv_rounds(X, y, J, max_iterations=_MAX_ROUNDS)[0] if len(y) >= _FOLDS else 0

    def select_split(self, rows: np.ndarray) -> tuple | None:
        """C45ModelSelection.selectModel: (attribute, cut) or None."""
        y, n = self.y[rows], len(rows)
        if 2 * _MIN_NO_OBJ - n > _SMALL or y.min() == y.max():
            return None
        models = [_numeric_split(self.vals[i][rows], self.Y[rows]) if isinstance(a, int)
                  else _nominal_split(self.vals[i][rows], _n_values(a), y, self.J) for i, a in enumerate(self.attrs)]
        # a nominal attribute of at least 0.3 x the training set's values counts in the average gain only under multiVal
        gains = [m[0] for m, a in zip(models, self.attrs, strict=True) if m is not None and (
            isinstance(a, int) or self.multi_val or 0.3 * len(self.y) - _n_values(a) > _SMALL)]
        if not gains:
            return None
        best, ratio = None, 0.0
        for i, m in enumerate(models):
            if m is not None and m[0] >= np.mean(gains) - 1e-3 and m[1] - ratio > _SMALL:
                best, ratio = i, m[1]
        if best is None or abs(ratio) < _SMALL:
            return None
        cut = models[best][2]
        if cut is not None:  # C45Split.setSplitPoint: the largest training value at or below the cut
            cut = self.sorted[best][np.searchsorted(self.sorted[best], cut, side="right") - 1]
        return best, cut

    def build(self, rows: np.ndarray, fn: tuple, total: int) -> _Node:
        """LMTNode.buildTree on records ``rows`` from the parent's function fn = (F on rows, coef, intercept)."""
        X, y = self.X[rows], self.y[rows]
        rounds = 0
        if len(rows) >= _MIN_BOOST:
            k = self.k if self.k > 0 else logitboost_cv_rounds(X, y, self.J, max_iterations=_MAX_ROUNDS,
                                                               start=fn[0])[0]
            *fn, rounds = logitboost(X, y, self.J, k, fn)
        node = _Node(tuple(fn), rounds, int(np.sum(predicted(fn[0]) != y)), total)
        split = self.select_split(rows) if len(rows) > _MIN_SPLIT else None
        if split is not None:
            node.leaf, (node.attr, node.cut) = False, split
            sub = node.route(self.vals[node.attr][rows])
            n_sub = 2 if node.cut is not None else _n_values(self.attrs[node.attr])
            node.sons = [self.build(rows[sub == j], (fn[0][sub == j], *fn[1:]), total) for j in range(n_sub)]
        return node

    def prune(self, root: _Node, test: np.ndarray | None = None, until: float = np.inf) -> tuple[list, list]:
        """LMTNode.prune: weakest links marked leaves (children kept) while their alpha is at most ``until``. Returns
        the alphas [0, a_1, ..., 1] and, with test rows, the test error rate before and after each step."""
        alphas, errors = [0.0], []

        def error() -> None:
            if test is not None:
                F = np.empty((len(self.y), root.fn[2].size))
                for leaf, r in _route(root, self.vals, test):
                    F[r] = self.X[r] @ leaf.fn[1].T + leaf.fn[2]
                errors.append(np.mean(predicted(F[test]) != self.y[test]))

        root.alphas()
        error()
        while nodes := [nd for nd in root.walk() if not nd.leaf]:  # LMTNode.getNodes
            weakest = min(nodes, key=lambda nd: nd.alpha)  # the first of least alpha in preorder
            if weakest.alpha > until:
                break
            weakest.leaf = True
            alphas.append(weakest.alpha)
            error()
            root.alphas()
        return alphas + [1.0], errors


def _n_values(attr: Any) -> int:
    return 2 if len(attr) == 1 else len(attr)


def _values(X: np.ndarray, attrs: list) -> list:
    """Each attribute's values: a numeric column as it is, a nominal one its value's code."""
    return [X[:, a] if isinstance(a, int) else (X[:, a[0]] > 0.5).astype(int) if len(a) == 1
            else np.argmax(X[:, a], axis=1) for a in attrs]


def _checked_attributes(attributes: Any, d: int) -> list:
    """``attributes`` as ints and lists of ints, each a column of the d given at most once."""
    try:
        attrs = [int(a) if np.ndim(a) == 0 else [int(c) for c in a] for a in attributes]
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"attributes must hold column indices or lists of them; got {attributes!r}") from None
    cols = [c for a in attrs for c in ([a] if isinstance(a, int) else a)]
    bad = [c for c in cols if not 0 <= c < d]
    if bad or len(set(cols)) < len(cols) or any(not isinstance(a, int) and not a for a in attrs):
        raise InvalidParameterError(f"attributes must name each of X's {d} columns (0 to {d - 1}) at most once, a "
                                    f"nominal attribute by a non-empty list; got {attributes!r}")
    return attrs


def _route(node: _Node, vals: list, idx: np.ndarray) -> list:
    """(leaf, rows) pairs: the rows idx (of the arrays vals, each attribute's values) each current leaf holds."""
    if node.leaf:
        return [(node, idx)]
    sub = node.route(vals[node.attr][idx])
    return [p for j, s in enumerate(node.sons) for p in _route(s, vals, idx[sub == j])]


class LMTModel(ProbaModel):
    """A fitted logistic model tree: ``root`` (its nodes' ``sons``, ``attr``, ``cut``, ``model``), ``k_`` (the
    LogitBoost rounds a node runs) and ``n_leaves_``."""

    def __init__(self, root: _Node, attrs: list, k: int, n_classes: int, n_features: int):
        self.root, self.attrs, self.k_, self.n_classes, self.n_features_in_ = root, attrs, k, n_classes, n_features
        leaves = [nd for nd in root.walk() if nd.leaf]
        self.n_leaves_ = len(leaves)
        for nd in root.walk():  # the fit's scores and the pruned children are not kept
            nd.fn = (None, *nd.fn[1:])
        for leaf in leaves:
            leaf.sons, leaf.model = None, linear_model(*leaf.fn[1:], leaf.rounds)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        X = _check_query(X, self.n_features_in_)
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)  # routing reads columns
        out = np.empty((len(X), self.n_classes))
        for leaf, r in _route(self.root, _values(X, self.attrs), np.arange(len(X))):
            out[r] = leaf.model.predict_proba(X[r])
        return out


class LMT(Learner):
    """Weka's LMT (Logistic Model Trees) at its default settings (module docstring).

    Parameters
    ----------
    attributes : sequence or None, default=None
        The attributes C4.5 splits on, in Weka's (the data file's) order: an int is a numeric column; a sequence of
        ints a nominal attribute's one-hot columns (one column: a 0/1 attribute). None: every column numeric.

    The fit is deterministic (``random_state`` is accepted and ignored: Weka's folds are not randomised). Fitted
    models are :class:`LMTModel`.

    References
    ----------
    .. [1] N. Landwehr, M. Hall, E. Frank, "Logistic Model Trees", Machine Learning 59 (2005), §4.
    """

    capabilities = Capabilities(stochastic=False, implements="Weka's LMT (Landwehr, Hall & Frank 2005)")

    def __init__(self, *, attributes: Any = None):
        keep_params(self, locals())

    def _fit(self, X: np.ndarray, y: np.ndarray, *, random_state: Any, n_classes: int | None) -> LMTModel:
        J = int(n_classes or max(int(y.max()) + 1, 2))
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
        attrs = list(range(X.shape[1])) if self.attributes is None else _checked_attributes(self.attributes, X.shape[1])
        g = _Grower(X, y, attrs, J)
        Jf = 1 if J == 2 else J  # logitboost's functions: F_0 alone for two classes
        zero = (np.zeros((Jf, X.shape[1])), np.zeros(Jf))
        fold_runs = []
        if len(y) >= _FOLDS:  # Weka's trainCV / testCV: the stratified order's blocks, train in that order
            order = weka_stratified_order(y, _FOLDS)
            fold = weka_stratified_folds(y, _FOLDS)[order]
            for f in range(_FOLDS):
                tr, te = order[fold != f], order[fold == f]
                fold_runs.append(g.prune(g.build(tr, (np.zeros((len(tr), Jf)), *zero), len(tr)), te))
        root = g.build(np.arange(len(y)), (np.zeros((len(y), Jf)), *zero), len(y))
        alphas = g.prune(root)[0]
        # each midpoint alpha scored by the folds' summed error rates at it; the most pruned of the least
        with np.errstate(invalid="ignore"):
            mids = np.sqrt(np.multiply(alphas[:-1], alphas[1:]))
        # a fold's error after the steps up to its first alpha above mid
        errs = [sum(e[min(next((i for i, a_i in enumerate(a) if a_i > mid), len(a)), len(e)) - 1]
                    for a, e in fold_runs) for mid in mids]
        for nd in root.walk(marked=True):  # unprune the marked leaves
            nd.leaf = nd.sons is None
        g.prune(root, until=mids[max(i for i, e in enumerate(errs) if e == min(errs))])
        return LMTModel(root, attrs, g.k, J, X.shape[1])
