"""Weka's Logistic Model Trees (Landwehr, Hall & Frank 2005; weka.classifiers.trees.LMT at its default settings) for
the independent oracle of Long et al.'s Table 2 (benchmarks/long_table2_oracle.py, `--model lmt`). numpy only; it
imports nothing from leakaudit (tests/benchmarks/test_long_oracle_independent.py checks).

Followed from Weka 3.8's source (trees/LMT, lmt/LMTNode, lmt/LogisticBase, j48/C45ModelSelection, j48/C45Split,
j48/*SplitCrit, core/Instances.stratify), two classes:

- fastRegression (default): LMTNode.tryLogistic picks the number of LogitBoost rounds k once, by LogisticBase's
  5-fold CV on the whole training set, at most 200 rounds (the SimpleLogistic learner's CV, passed in as
  `logitboost`). Every node with at least 5 records runs k rounds starting from its parent's function (the parent's
  fitted regressions), so a leaf's model refines its ancestors'; a node with fewer keeps its parent's. Were k = 0,
  every node would choose its own rounds by the same CV from its parent's function (LMTNode.buildTree).
- Splits (splitOnResiduals false): J48's C45ModelSelection(minNoObj 2, MDL correction, split points moved to a
  training value) on the attributes as they are: a node with more than minNumInstances = 15 records is split on the
  attribute of largest gain ratio among those whose info gain is at least the average (less 1e-3); nominal
  attributes split into one child per value (values the node lacks give empty children), numeric ones in two at the
  best-gain cut, whose info gain loses log2(number of candidate cuts) / n.
- Pruning: CART cost-complexity (LMTNode.buildClassifier / prune): the tree grown on each of 5 unrandomised
  stratified folds is pruned back weakest link first, logging each link's alpha and the fold's test error rate; the
  tree on all the data likewise gives its alphas, each midpoint alpha sqrt(a_i a_(i+1)) is scored by the folds'
  summed errors, and the tree is pruned at the best (the most pruned among ties). A node's alpha is its training
  errors' drop from model to subtree / n / (leaves - 1), empty leaves (no rounds of their own) counted as one; a
  split that does not lower the training errors is pruned at once.
"""

import numpy as np

SMALL = 1e-6  # weka.core.Utils' tolerance in gr / sm / eq
MAX = np.finfo(float).max  # Double.MAX_VALUE: a leaf's alpha


def xlogx(v):
    """ContingencyTables.lnFunc: v ln v, 0 for v <= 0."""
    v = np.asarray(v, float)
    return np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0)


def entropy_bits(counts):
    """Class entropy of a (bags, classes) count table, in bits times records (EntropyBasedSplitCrit.newEnt)."""
    return -(xlogx(counts).sum(-1) - xlogx(counts.sum(-1))).sum(-1) / np.log(2)


def split_bits(bag_sizes, total):
    """Entropy of the bag sizes, in bits times records (GainRatioSplitCrit.splitEnt, no unknowns)."""
    return (xlogx(total) - xlogx(bag_sizes).sum(-1)) / np.log(2)


class Split:
    """A node's C4.5 test: `kind` 'num' (x <= point -> child 0, else 1) or 'nom' (child = the value's code)."""

    def __init__(self, kind, attr, n_sub, info_gain, gain_ratio, point=None):
        self.kind, self.attr, self.n_sub = kind, attr, n_sub
        self.info_gain, self.gain_ratio, self.point = info_gain, gain_ratio, point

    def route(self, values):
        return (values > self.point).astype(int) if self.kind == "num" else values.astype(int)


def numeric_split(x, y, attr, min_no_obj=2):
    """C45Split.handleNumericAttribute (no missing values): None where no valid cut."""
    n = len(y)
    o = np.argsort(x, kind="stable")
    xs, ys = x[o], y[o]
    min_split = 0.1 * n / 2
    min_split = min_no_obj if min_split - min_no_obj < SMALL else (25 if min_split - 25 > SMALL else min_split)
    if 2 * min_split - n > SMALL:
        return None
    cut = np.flatnonzero(xs[:-1] + 1e-5 < xs[1:])  # a cut after sorted index i
    left = cut + 1.0
    ok = (min_split - left < SMALL) & (min_split - (n - left) < SMALL)
    cut, left = cut[ok], left[ok]
    if len(cut) == 0:
        return None
    left1 = np.cumsum(ys)[cut]
    tot1 = ys.sum()
    table = np.stack([np.stack([left - left1, left1], -1), np.stack([n - left - (tot1 - left1), tot1 - left1], -1)],
                     axis=1)  # (cuts, 2 bags, 2 classes)
    old = entropy_bits(np.array([[n - tot1, tot1]], float))
    num = old - entropy_bits(table)
    gains = np.where(np.abs(num) < SMALL, 0.0, num / n)
    best, best_i, i = 0.0, -1, 0
    while True:  # the first cut beating the best so far by more than SMALL, in order (Utils.gr)
        beat = np.flatnonzero(gains[i:] - best > SMALL)
        if len(beat) == 0:
            break
        i += beat[0]
        best, best_i, i = gains[i], i, i + 1
    info = best - np.log2(len(cut)) / n  # MDL correction: log2(number of candidate cuts) / n
    if info < SMALL:
        return None
    s = cut[best_i]
    point = (xs[s] + xs[s + 1]) / 2
    if point == xs[s + 1]:
        point = xs[s]
    den = split_bits(np.array([left[best_i], n - left[best_i]]), n)
    ratio = 0.0 if abs(den) < SMALL else info / (den / n)
    return Split("num", attr, 2, info, ratio, point)


def nominal_split(codes, n_values, y, attr, min_no_obj=2):
    """C45Split.handleEnumeratedAttribute: one bag per value; valid when two bags hold at least min_no_obj."""
    n = len(y)
    table = np.bincount(2 * codes + y, minlength=2 * n_values).reshape(n_values, 2).astype(float)
    bags = table.sum(1)
    if np.sum(bags - min_no_obj > -SMALL) < 2:
        return None
    num = entropy_bits(table.sum(0, keepdims=True)) - entropy_bits(table)
    info = 0.0 if abs(num) < SMALL else num / n
    den = split_bits(bags, n)
    ratio = 0.0 if abs(den) < SMALL else info / (den / n)
    return Split("nom", attr, n_values, info, ratio)


class Node:
    """An LMT node: its model g = c0 + x @ coef (its ancestors' rounds and its own `n_rounds`), its training errors,
    and, when split, its test and children (`sons` kept when a pruning pass only marks it a leaf)."""

    def __init__(self, c0, coef, n_rounds, wrong, total):
        self.c0, self.coef, self.n_rounds, self.wrong_model, self.total = c0, coef, n_rounds, wrong, total
        self.leaf, self.sons, self.split, self.wrong_tree, self.alpha = True, None, None, wrong, MAX


def inner_nodes(node, out=None):
    """LMTNode.getNodes: the non-leaf nodes in preorder."""
    out = [] if out is None else out
    if not node.leaf:
        out.append(node)
        for s in node.sons:
            inner_nodes(s, out)
    return out


def num_leaves(node):
    """LMTNode.getNumLeaves: leaves below node, the empty ones (no rounds of their own) under one parent as one."""
    if node.leaf:
        return 1
    n = sum(num_leaves(s) for s in node.sons)
    empty = sum(1 for s in node.sons if s.leaf and s.n_rounds == 0)
    return n - (empty - 1) if empty > 1 else n


def tree_errors(node):
    """LMTNode.treeErrors: training errors of the (current) subtree."""
    if node.leaf:
        node.wrong_tree = node.wrong_model
    else:
        node.wrong_tree = sum(tree_errors(s) for s in node.sons)
    return node.wrong_tree


def calculate_alphas(node):
    """LMTNode.calculateAlphas: cost-complexity alpha of every inner node; a split that does not lower the training
    errors is pruned at once (children dropped)."""
    if node.leaf:
        node.alpha = MAX
        return
    diff = node.wrong_model - node.wrong_tree
    if diff <= 0:
        node.leaf, node.sons, node.alpha = True, None, MAX
        return
    leaves = num_leaves(node) - 1
    node.alpha = diff / node.total / leaves if leaves else np.inf
    for s in node.sons:
        calculate_alphas(s)


def weakest(nodes):
    """Collections.min by alpha: the first node of least alpha in preorder."""
    return min(nodes, key=lambda nd: nd.alpha)


class LMTLearner:
    """Weka's LMT, default settings (module docstring). `logitboost`: the SimpleLogistic learner whose LogitBoost
    rounds (`_boost`) and CV (`n_rounds`) LMT shares (Weka's LMTNode extends LogisticBase); `attrs`: the attributes
    in Weka's order, each ('num', column) or ('nom', one-hot columns) of the design X."""

    def __init__(self, logitboost, attrs, min_num_instances=15, min_no_obj=2, prune_folds=5, max_iter=200):
        self.lb, self.attrs = logitboost, attrs
        self.min_inst, self.min_no_obj = min_num_instances, min_no_obj
        self.prune_folds, self.max_iter = prune_folds, max_iter

    def _values(self, X):
        """The attributes' values: a numeric column as it is, a nominal one as the code of its one-hot column."""
        return [X[:, c] if kind == "num" else np.argmax(X[:, c], axis=1) for kind, c in self.attrs]

    def select_split(self, rows):
        """C45ModelSelection.selectModel on the node's records (None: no split)."""
        y, n = self.y[rows], len(rows)
        n1 = y.sum()
        if 2 * self.min_no_obj - n > SMALL or abs(max(n1, n - n1) - n) < SMALL:
            return None
        # C45ModelSelection's multiVal: every attribute nominal with at least 0.3 x the training set's values
        multi_val = all(kind == "nom" and not 0.3 * self.n_all - len(c) > SMALL for kind, c in self.attrs)
        models, gains = [], []
        for i, (kind, c) in enumerate(self.attrs):
            v = self.vals[i][rows]
            m = (numeric_split(v, y, i, self.min_no_obj) if kind == "num"
                 else nominal_split(v, len(c), y, i, self.min_no_obj))
            models.append(m)
            # a nominal attribute with that many values counts in the average info gain only under multiVal
            if m is not None and (kind == "num" or multi_val or 0.3 * self.n_all - len(c) > SMALL):
                gains.append(m.info_gain)
        if not gains:
            return None
        avg = np.mean(gains)
        best, best_ratio = None, 0.0
        for m in models:
            if m is not None and m.info_gain >= avg - 1e-3 and m.gain_ratio - best_ratio > SMALL:
                best, best_ratio = m, m.gain_ratio
        if best is None or abs(best_ratio) < SMALL:
            return None
        if best.kind == "num":  # C45Split.setSplitPoint: the largest training value at or below the cut
            col = self.all_sorted[best.attr]
            best.point = col[np.searchsorted(col, best.point, side="right") - 1]
        return best

    def build(self, rows, c0, coef, g, total):
        """LMTNode.buildTree on records `rows` with the parent's function (c0, coef), whose scores there are g."""
        X, y = self.X, self.y
        n_rounds = 0
        if len(rows) >= 5:
            Xn, XXn, yn = X[rows], self.XX[rows], y[rows]
            k = self.k if self.k > 0 else self.lb.n_rounds(Xn, yn, g, self.max_iter)
            c0, coef, g, n_rounds = self.lb._boost(Xn, yn, k, g, XXn, c0, coef)
        node = Node(c0, coef, n_rounds, int(np.sum((g < 0) != (y[rows] == 1))), total)
        if len(rows) > self.min_inst:
            split = self.select_split(rows)
            if split is not None and split.n_sub > 1:
                node.leaf, node.split = False, split
                sub = split.route(self.vals[split.attr][rows])
                node.sons = [self.build(rows[sub == j], c0, coef, g[sub == j], total) for j in range(split.n_sub)]
        return node

    @staticmethod
    def scores(node, vals, Xq, idx=None, out=None):
        """The two-class scores of the current tree at the query rows idx (leaves: marked leaf, children or not)."""
        idx = np.arange(len(Xq)) if idx is None else idx
        out = np.empty(len(Xq)) if out is None else out
        if node.leaf:
            out[idx] = node.c0 + Xq[idx] @ node.coef
        else:
            sub = node.split.route(vals[node.split.attr][idx])
            for j, s in enumerate(node.sons):
                if np.any(sub == j):
                    LMTLearner.scores(s, vals, Xq, idx[sub == j], out)
        return out

    def prune_sequence(self, root, test=None):
        """LMTNode.prune(alphas, errors, test): weakest-link pruning to the root, marking nodes leaves (children
        kept). Returns the alphas [0, a_1, ..., a_m, 1] and, with test rows, the test error rate after each step."""
        tree_errors(root)
        calculate_alphas(root)
        alphas, errors = [0.0], []

        def err():
            if test is not None:
                errors.append(self.lb.error_rate(self.scores(root, self.vals_test, self.X_test), self.y[test]))

        if test is not None:
            self.X_test = self.X[test]
            self.vals_test = [v[test] for v in self.vals]
        err()
        nodes = inner_nodes(root)
        while nodes:
            nd = weakest(nodes)
            nd.leaf = True
            alphas.append(nd.alpha)
            err()
            tree_errors(root)
            calculate_alphas(root)
            nodes = inner_nodes(root)
        alphas.append(1.0)
        return alphas, errors

    @staticmethod
    def unprune(node):
        if node.sons is not None:
            node.leaf = False
            for s in node.sons:
                LMTLearner.unprune(s)

    @staticmethod
    def prune_at(root, alpha):
        """LMTNode.prune(alpha): prune weakest links while their alpha is at most alpha."""
        tree_errors(root)
        calculate_alphas(root)
        nodes = inner_nodes(root)
        while nodes:
            nd = weakest(nodes)
            if nd.alpha > alpha:
                break
            nd.leaf, nd.sons = True, None
            tree_errors(root)
            calculate_alphas(root)
            nodes = inner_nodes(root)

    def fit(self, X, y):
        """LMT.buildClassifier / LMTNode.buildClassifier. Returns the pruned root."""
        self.X, self.y, self.n_all = X, y, len(y)
        self.XX = np.hstack([X, X * X])
        self.vals = self._values(X)
        self.all_sorted = [np.sort(v) if kind == "num" else None for v, (kind, _) in zip(self.vals, self.attrs)]
        d = X.shape[1]
        self.k = self.lb.n_rounds(X, y, max_iter=self.max_iter)  # tryLogistic
        fold_alphas, fold_errors = [], []
        for tr, te in self.lb.cv_folds(y, self.prune_folds):
            root = self.build(tr, 0.0, np.zeros(d), np.zeros(len(tr)), len(tr))
            a, e = self.prune_sequence(root, te)
            fold_alphas.append(a)
            fold_errors.append(e)
        root = self.build(np.arange(len(y)), 0.0, np.zeros(d), np.zeros(len(y)), len(y))
        alphas, _ = self.prune_sequence(root)
        tree_err = []
        for i in range(len(alphas) - 1):
            mid = np.sqrt(alphas[i] * alphas[i + 1])
            e = 0.0
            for fa, fe in zip(fold_alphas, fold_errors):
                l = 0
                while l < len(fa) and fa[l] <= mid:
                    l += 1
                e += fe[min(l, len(fe)) - 1]
            tree_err.append(e)
        best = max(i for i, e in enumerate(tree_err) if e == min(tree_err))  # from the most pruned, strict <
        self.unprune(root)
        self.prune_at(root, np.sqrt(alphas[best] * alphas[best + 1]))
        self.root = root
        return root

    def fit_predict(self, X, y, Xq):
        root = self.fit(X, y)
        return self.lb.proba(self.scores(root, self._values(Xq), Xq))


def leaves(node):
    """The leaves of the (pruned) tree, for inspection."""
    return [node] if node.leaf else [lf for s in node.sons for lf in leaves(s)]
