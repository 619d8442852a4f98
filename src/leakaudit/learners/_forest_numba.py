"""Compiled kernels of :class:`~leakaudit.learners.RandomForest`: growing and querying many CART trees.

The trees are scikit-learn's (``sklearn/tree/_splitter.pyx`` ``node_split_best``,
``_tree.pyx`` ``DepthFirstTreeBuilder``, ``_criterion.pyx`` ``Gini``/``Entropy``,
``sklearn/ensemble/_forest.py`` ``_parallel_build_trees``, version 1.9), re-implemented
step by step, including its random streams:

* the bootstrap of a tree with seed ``s`` is ``RandomState(s).randint(0, m, n_boot)``
  (legacy MT19937 with masked rejection sampling, written out below), the rows
  weighted by their counts and rows drawn zero times left out of the tree;
* the splitter's stream is sklearn's 32-bit xorshift (``our_rand_r``) seeded with
  ``RandomState(s).randint(0, 2**31 - 1)``; it drives the same Fisher-Yates draw
  of candidate features over the same ``features`` / ``constant_features``
  arrays, with the same depth-first order of nodes (left child first).

So a tree grown here equals scikit-learn's tree with the same seed, split for
split, whenever the proxy impurity improvements are computed from the same
numbers (they are: class sums of integer weights are exact in float64, and the
formulas below are sklearn's, term for term).

What differs is only how a candidate feature's best threshold is found (same
answer, less work). Every feature's values are replaced once by their rank
among the feature's distinct float32 values (``codes``). At a node, a feature
with few distinct values (a one-hot column has two) gets a weighted class
histogram over its codes in O(n_node) and the bins are scanned in order; a
feature with many distinct values compared with the node's size has the node's
(code, position) keys sorted instead. Both visit the candidate thresholds in
ascending order, group values closer than sklearn's ``FEATURE_THRESHOLD``
(1e-7, in float32 arithmetic) exactly as ``next_p`` does, and keep the first
strictly better split, so both return sklearn's split. With two classes, every
node that is split-searched also holds the packed class sums of all two-valued
features (the smaller child's by a pass over its rows' code-1 lists, the larger
child's by subtraction from the parent's), so a drawn one-hot column is
evaluated in O(1).

Tree layout: a tree is grown depth-first into its task's scratch arrays
(``feature``, -1 at a leaf; ``threshold``, float64, go left when
``float32(x) <= threshold``; ``left``, ``right``; ``value``: the node's
weighted class fractions), renumbered breadth-first by the same task into its
row of the build buffers (children adjacent, float32 thresholds, leaf values
only), and :func:`copy_trees` packs the rows into the flat arrays that
:func:`predict_forests` reads. :func:`grow_and_query` queries the trees as they
are grown instead, the query rows moving down as bitsets (:func:`query_bitsets`,
:func:`_add_tree_bits`).

C twins (``_forest_native.c``): :func:`_grow_tree` and :func:`_add_tree_bits` exist
once more in C, line for line, and the parallel kernels call them through ctypes
function pointers passed as arguments (``native``, ``native_q``; None: the numba
functions). Both give the same trees and sums, bit for bit (tests/learners/test_forest.py);
a change to one must be made to the other.
"""

from __future__ import annotations

import numpy as np

try:  # numba is optional for the package; the forest needs it
    from numba import get_num_threads, njit, prange

    from ._torch_numba import HAVE_NUMBA, KERNEL_LOCK, set_threads
except ImportError:  # pragma: no cover - exercised only without numba
    HAVE_NUMBA = False
    KERNEL_LOCK = None
    set_threads = get_num_threads = None

__all__ = ["HAVE_NUMBA", "KERNEL_LOCK", "set_threads", "get_num_threads", "grow_trees", "grow_and_query",
           "copy_trees", "predict_forests", "tree_seeds", "round_down_f32", "query_bitsets", "RAND_R_MAX"]

#: sklearn's RAND_R_MAX (the splitter seed is drawn from [0, RAND_R_MAX))
RAND_R_MAX = 0x7FFFFFFF
#: sklearn's FEATURE_THRESHOLD: sorted values closer than this (float32 arithmetic) are not split apart
FEATURE_THRESHOLD = np.float32(1e-7)
#: sklearn's EPSILON (np.finfo("double").eps): a node with impurity <= EPSILON is a leaf
EPSILON = float(np.finfo(np.float64).eps)

if HAVE_NUMBA:

    # -- numpy's legacy MT19937 (RandomState(int)) and its masked bounded integers ------------------
    @njit(cache=True)
    def _mt_init(mt, seed):
        """``mt19937_seed``: the state of ``RandomState(seed)``; mt[624] holds the position."""
        s = seed & 0xFFFFFFFF
        for i in range(624):
            mt[i] = s
            s = (1812433253 * (s ^ (s >> 30)) + i + 1) & 0xFFFFFFFF
        mt[624] = 624

    @njit(cache=True, inline="always")
    def _mt_mix(a, b, c):
        """One word of ``mt19937_gen``: ``c ^ (y >> 1) ^ (0x9908B0DF if y odd)``, y = upper bit of a, lower of b."""
        y = (a & 0x80000000) | (b & 0x7FFFFFFF)
        return c ^ (y >> 1) ^ (-(y & 1) & 0x9908B0DF)

    @njit(cache=True)
    def _mt_twist(mt):
        """``mt19937_gen``: the next 624 words, in numpy's three ranges (no per-word select or branch)."""
        for i in range(227):
            mt[i] = _mt_mix(mt[i], mt[i + 1], mt[i + 397])
        for i in range(227, 623):
            mt[i] = _mt_mix(mt[i], mt[i + 1], mt[i - 227])
        mt[623] = _mt_mix(mt[623], mt[0], mt[396])
        mt[624] = 0

    @njit(cache=True, inline="always")
    def _mt_temper(v):
        """MT19937's tempering of one state word."""
        v ^= v >> 11
        v ^= (v << 7) & 0x9D2C5680
        v ^= (v << 15) & 0xEFC60000
        v ^= v >> 18
        return v

    @njit(cache=True, inline="always")
    def _mt_next(mt):
        """``mt19937_next32``: the next 32-bit output (int64 arithmetic, values < 2**32)."""
        if mt[624] >= 624:
            _mt_twist(mt)
        pos = mt[624]
        mt[624] = pos + 1
        return _mt_temper(mt[pos])

    @njit(cache=True, inline="always")
    def _mt_bounded(mt, rng):
        """An integer uniform on [0, rng] (rng < 2**32), as legacy ``randint`` draws it (masked rejection)."""
        if rng == 0:
            return 0
        mask = rng
        mask |= mask >> 1
        mask |= mask >> 2
        mask |= mask >> 4
        mask |= mask >> 8
        mask |= mask >> 16
        while True:
            v = _mt_next(mt) & mask
            if v <= rng:
                return v

    @njit(cache=True)
    def tree_seeds(seeds, n_trees, high):
        """Model k's ``RandomState(seeds[k]).randint(0, high, n_trees)`` at rows ``k * n_trees ...``: the seeds
        ``RandomForestClassifier(random_state=seeds[k])`` hands its trees, one call for every model."""
        mt = np.empty(625, np.int64)
        out = np.empty(seeds.shape[0] * n_trees, np.int64)
        for k in range(seeds.shape[0]):
            _mt_init(mt, seeds[k])
            for j in range(n_trees):
                out[k * n_trees + j] = _mt_bounded(mt, high - 1)
        return out

    # -- sklearn's splitter stream ------------------------------------------------------------------
    @njit(cache=True, inline="always")
    def _xorshift(s):
        """sklearn ``our_rand_r`` state update (32-bit xorshift); the draw is ``s % (RAND_R_MAX + 1)``."""
        if s == 0:
            s = 1
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        return s

    # -- impurities, as in sklearn's _criterion.pyx (n_outputs = 1) ---------------------------------
    @njit(cache=True, inline="always")
    def _impurity(s, w, crit):
        """Gini ``1 - sum_c s_c^2 / w^2`` (crit 0) or entropy ``-sum_c p_c log2 p_c`` (crit 1) of class sums s."""
        if crit == 0:
            sq = 0.0
            for c in range(s.shape[0]):
                sq += s[c] * s[c]
            return 1.0 - sq / (w * w)
        ent = 0.0
        for c in range(s.shape[0]):
            p = s[c]
            if p > 0.0:
                p /= w
                ent -= p * (np.log(p) / np.log(2.0))
        return ent

    @njit(cache=True, inline="always")
    def _impurity2(a, b, w, crit):
        """:func:`_impurity` of two class sums (a, b), same operations, scalars only."""
        if crit == 0:
            sq = 0.0
            sq += a * a
            sq += b * b
            return 1.0 - sq / (w * w)
        ent = 0.0
        if a > 0.0:
            p = a / w
            ent -= p * (np.log(p) / np.log(2.0))
        if b > 0.0:
            p = b / w
            ent -= p * (np.log(p) / np.log(2.0))
        return ent

    @njit(cache=True, inline="always")
    def _proxy2(l0, l1, wl, t0, t1, wn, crit):
        """:func:`_proxy` for two classes: left sums (l0, l1) of weight wl, node sums (t0, t1) of weight wn."""
        wr = wn - wl
        return -wr * _impurity2(t0 - l0, t1 - l1, wr, crit) - wl * _impurity2(l0, l1, wl, crit)

    @njit(cache=True, inline="always")
    def _proxy(sl, wl, stot, wn, sr, crit):
        """sklearn ``proxy_impurity_improvement``: ``-w_R * imp_R - w_L * imp_L`` (fills sr = stot - sl)."""
        for c in range(sl.shape[0]):
            sr[c] = stot[c] - sl[c]
        wr = wn - wl
        return -wr * _impurity(sr, wr, crit) - wl * _impurity(sl, wl, crit)

    # -- one tree ---------------------------------------------------------------------------------
    @njit(cache=True, inline="always")
    def _add_binary_hist(h, rows, pk, p0, p1, bptr, bidx):
        """``h[s] += pk[p]`` for every row ``rows[p]``, p in [p0, p1), and every two-valued feature slot s it holds
        code 1 in (CSR ``bptr``/``bidx``): the packed sums a scan of each such feature over those rows would give."""
        for p in range(p0, p1):
            r = rows[p]
            v = pk[p]
            for j in range(bptr[r], bptr[r + 1]):
                h[bidx[j]] += v

    @njit(cache=True, inline="always")
    def _searched(nn, depth, max_depth, mss, msl, impurity):
        """Whether a node of nn rows at ``depth`` with this impurity is split-searched (else it is a leaf)."""
        return not (depth >= max_depth or nn < mss or nn < 2 * msl or impurity <= 2.220446049250313e-16)

    @njit(cache=True, inline="always")
    def _will_split(nn, depth, max_depth, mss, msl, s0, s1, crit):
        """:func:`_searched` for a two-class child with class sums (s0, s1), before it is popped."""
        return _searched(nn, depth, max_depth, mss, msl, _impurity2(s0, s1, s0 + s1, crit))

    @njit(cache=True, inline="always")
    def _tree_scratch(max_nodes, C):
        """A worker's depth-first scratch for one tree at a time: feature, threshold, left, right, values."""
        return (np.empty(max_nodes, np.int32), np.empty(max_nodes, np.float64), np.empty(max_nodes, np.int32),
                np.empty(max_nodes, np.int32), np.empty((max_nodes, C), np.float64))

    @njit(cache=True)
    def _work_sizes(sub_ptr, bslot):
        """(the most rows a model trains on, the number of two-valued features): :func:`_grow_work`'s sizes."""
        m_max = 0
        for k in range(sub_ptr.shape[0] - 1):
            m_max = max(m_max, sub_ptr[k + 1] - sub_ptr[k])
        nbin = 0
        for f in range(bslot.shape[0]):
            nbin = max(nbin, bslot[f] + 1)
        return m_max, nbin

    @njit(cache=True)
    def _grow_work(m_max, F, nbin, maxnv, max_nodes, C):
        """A worker's scratch for :func:`_grow_tree`, allocated once and reused tree after tree (fresh arrays a tree
        cost ~5 us of allocation and first touches: the ~130 KB stack arrays come back from malloc unmapped).

        Rows of ``i64`` (m_max long): bootstrap counts, rows, labels, packed counters, sort keys and the partition
        buffers of rows, labels and packed counters; ``f64``: weights and their buffer. ``hst``/``hs``: two-valued
        features' node sums; ``features``, ``const_f``: sklearn's feature arrays; ``st``/``sts``: the node stack;
        ``cs``: four class-sum vectors; ``hw``/``hn``/``hp``: the histogram path's bins, zero between uses (every use
        resets the bins it filled), so zero from one tree to the next.
        """
        nb = max(nbin, 1)
        return (np.empty((8, m_max), np.int64), np.empty((2, m_max), np.float64), np.empty(625, np.int64),
                np.empty((64, nb), np.int64), np.empty(nb, np.int64), np.empty(F, np.int64), np.empty(F, np.int64),
                np.empty((max_nodes + 1, 6), np.int64), np.empty((max_nodes + 1, C)), np.empty((4, C)),
                np.zeros((maxnv, C)), np.zeros(maxnv, np.int64), np.zeros(maxnv, np.int64))

    @njit(cache=True)
    def _grow_tree(codes, vals, voff, yv, rows_sub, seed, n_boot, bootstrap, max_features, max_depth, mss, msl,
                   crit, maxnv, bslot, bptr, bidx, feat_o, thr_o, left_o, right_o, val_o, work):
        """Grow one tree into the row buffers ``*_o``; return its number of nodes. ``work``: :func:`_grow_work`.

        ``bslot[f]`` is feature f's slot among the two-valued features (-1 for the others) and ``bptr``/``bidx``
        list, per row, the slots where the row holds code 1. With two classes (packed counters) every node that is
        split-searched gets those features' packed sums at once: the smaller child's by a pass over its rows' lists,
        the larger's as the parent's minus it (integer sums: exact). A drawn two-valued feature is then evaluated
        in O(1) instead of a pass over the node's rows: the same numbers, so the same tree.
        """
        i64, f64, mt, hst, hs, features, const_f, st, sts, cs, hw, hn, hp = work
        cnt = i64[0]
        rows = i64[1]
        sy = i64[2]
        pk = i64[3]
        keys = i64[4]
        t_rows = i64[5]
        t_sy = i64[6]
        t_pk = i64[7]
        sw = f64[0]
        t_sw = f64[1]
        stot = cs[0]
        sl = cs[1]
        sr = cs[2]
        best_sl = cs[3]
        m = rows_sub.shape[0]
        F = codes.shape[0]
        C = val_o.shape[1]
        T32 = np.float32(1e-7)
        # samples and weights (sklearn _parallel_build_trees + Splitter.init: zero-weight rows left out)
        for i in range(m):
            cnt[i] = 0
        # both streams start from RandomState(seed): the splitter's seed is randint(0, RAND_R_MAX), the first
        # output whose low 31 bits are <= RAND_R_MAX - 1, read off the fresh state before the bootstrap draws
        _mt_init(mt, seed)
        _mt_twist(mt)
        rs = -1
        for i in range(624):
            v = _mt_temper(mt[i]) & 0x7FFFFFFF
            if v <= 0x7FFFFFFE:
                rs = v
                break
        if rs < 0:  # 624 rejections in a row (probability 2**-19344): draw as RandomState would
            _mt_init(mt, seed)
            rs = _mt_bounded(mt, 0x7FFFFFFE)
            _mt_init(mt, seed)
            _mt_twist(mt)
        w_total = 0.0
        if bootstrap:
            for _ in range(n_boot):
                cnt[_mt_bounded(mt, m - 1)] += 1
            w_total = float(n_boot)
        else:
            for i in range(m):
                cnt[i] = 1
            w_total = float(m)
        # two classes and sums below 2**21: one integer counter per row holds (count, weight, weight of class 1),
        # packed as 1 + (w << 21) + (w * y << 42)
        packed = C == 2 and w_total < 2.0 ** 21 and m < 2 ** 21
        ns = 0
        for i in range(m):
            if cnt[i] != 0:
                r = rows_sub[i]
                rows[ns] = r
                sy[ns] = yv[r]
                sw[ns] = float(cnt[i])
                pk[ns] = 1 + (cnt[i] << 21) + ((cnt[i] * yv[r]) << 42) if packed else 0
                ns += 1
        # node sums of the two-valued features (packed mode): one row a stack entry
        nbin = 0
        for f in range(F):
            nbin = max(nbin, bslot[f] + 1)
        use_bh = packed and nbin > 0
        # hst: rows for the stack's depth (grown when a deep tree needs more; not zeroed: every row used is
        # written); st: start, end, depth, parent*2 + is_left, n_constant, has sums; sts: class sums of the
        # stacked node (children get them from the split)
        for f in range(F):
            features[f] = f

        st[0, 0] = 0
        st[0, 1] = ns
        st[0, 2] = 0
        st[0, 3] = -1
        st[0, 4] = 0
        for c in range(C):
            sts[0, c] = 0.0
        for p in range(ns):
            sts[0, sy[p]] += sw[p]
        st[0, 5] = 0
        if use_bh:
            hst[0, :] = 0
            _add_binary_hist(hst[0], rows, pk, 0, ns, bptr, bidx)
            st[0, 5] = 1
        sp = 1
        n_nodes = 0
        while sp > 0:
            sp -= 1
            start = st[sp, 0]
            end = st[sp, 1]
            depth = st[sp, 2]
            pcode = st[sp, 3]
            n_known = st[sp, 4]
            has_h = st[sp, 5] == 1
            nn = end - start
            wn = 0.0
            for c in range(C):
                stot[c] = sts[sp, c]
                wn += stot[c]
            impurity = _impurity(stot, wn, crit)
            node = n_nodes
            n_nodes += 1
            if pcode >= 0:
                if pcode & 1:
                    left_o[pcode >> 1] = node
                else:
                    right_o[pcode >> 1] = node
            for c in range(C):
                val_o[node, c] = stot[c] / wn
            feat_o[node] = -1
            thr_o[node] = -2.0
            left_o[node] = -1
            right_o[node] = -1
            if not _searched(nn, depth, max_depth, mss, msl, impurity):
                continue

            # ---- node_split_best ----
            f_i = F
            n_visited = 0
            n_found = 0
            n_drawn = 0
            n_total = n_known
            best_proxy = -np.inf
            best_f = -1
            best_thr = 0.0
            best_nl = 0
            best_wl = 0.0
            while f_i > n_total and (n_visited < max_features or n_visited <= n_found + n_drawn):
                n_visited += 1
                rs = _xorshift(rs)  # sklearn rand_int(n_drawn, f_i - n_found)
                f_j = n_drawn + (rs % 0x80000000) % (f_i - n_found - n_drawn)
                if f_j < n_known:
                    tmp = features[n_drawn]
                    features[n_drawn] = features[f_j]
                    features[f_j] = tmp
                    n_drawn += 1
                    continue
                f_j += n_found
                f = features[f_j]
                base = voff[f]
                nvf = voff[f + 1] - base
                constant = False
                if nvf == 2 and packed:
                    # two values: one packed sum over the rows holding code 1 (the node's, when it has them)
                    acc = 0
                    if has_h:
                        acc = hst[sp, bslot[f]]
                    else:
                        for p in range(start, end):
                            acc += np.int64(codes[f, rows[p]]) * pk[p]
                    n1 = acc & 0x1FFFFF
                    w1 = float((acc >> 21) & 0x1FFFFF)
                    w1y = float(acc >> 42)
                    if n1 == 0 or n1 == nn or vals[base + 1] <= vals[base] + T32:
                        constant = True
                    elif nn - n1 >= msl and n1 >= msl:
                        # left = code 0
                        l1 = stot[1] - w1y
                        l0 = stot[0] - (w1 - w1y)
                        wl = wn - w1
                        pr = _proxy2(l0, l1, wl, stot[0], stot[1], wn, crit)
                        if pr > best_proxy:
                            best_proxy = pr
                            best_f = f
                            best_thr = vals[base] / 2.0 + vals[base + 1] / 2.0
                            best_nl = nn - n1
                            best_wl = wl
                            best_sl[0] = l0
                            best_sl[1] = l1
                elif nvf <= 16 * nn:
                    # class histogram over the node's codes, bins scanned in ascending order
                    cmin = nvf
                    cmax = -1
                    if packed:
                        for p in range(start, end):
                            cc = np.int64(codes[f, rows[p]])
                            hp[cc] += pk[p]
                            cmin = min(cmin, cc)
                            cmax = max(cmax, cc)
                    else:
                        for p in range(start, end):
                            cc = np.int64(codes[f, rows[p]])
                            hw[cc, sy[p]] += sw[p]
                            hn[cc] += 1
                            cmin = min(cmin, cc)
                            cmax = max(cmax, cc)
                    if vals[base + cmax] <= vals[base + cmin] + T32:
                        constant = True
                        for cc in range(cmin, cmax + 1):
                            if packed:
                                hp[cc] = 0
                            else:
                                hn[cc] = 0
                                for c in range(C):
                                    hw[cc, c] = 0.0
                    else:
                        for c in range(C):
                            sl[c] = 0.0
                        wl = 0.0
                        nl = 0
                        prev = -1
                        for cc in range(cmin, cmax + 1):
                            if packed:
                                h = hp[cc]
                                if h == 0:
                                    continue
                                hcount = h & 0x1FFFFF
                            else:
                                hcount = hn[cc]
                                if hcount == 0:
                                    continue
                            v = vals[base + cc]
                            if prev >= 0 and v > vals[base + prev] + T32:
                                if nl >= msl and nn - nl >= msl:
                                    if packed:
                                        pr = _proxy2(sl[0], sl[1], wl, stot[0], stot[1], wn, crit)
                                    else:
                                        pr = _proxy(sl, wl, stot, wn, sr, crit)
                                    if pr > best_proxy:
                                        best_proxy = pr
                                        best_f = f
                                        best_thr = vals[base + prev] / 2.0 + v / 2.0
                                        best_nl = nl
                                        best_wl = wl
                                        for c in range(C):
                                            best_sl[c] = sl[c]
                            if packed:
                                hwt = float((h >> 21) & 0x1FFFFF)
                                hwy = float(h >> 42)
                                sl[1] += hwy
                                sl[0] += hwt - hwy
                                wl += hwt
                                hp[cc] = 0
                            else:
                                for c in range(C):
                                    sl[c] += hw[cc, c]
                                    wl += hw[cc, c]
                                    hw[cc, c] = 0.0
                                hn[cc] = 0
                            nl += hcount
                            prev = cc
                else:
                    # sort the node's (code, position) keys
                    for p in range(start, end):
                        keys[p - start] = (np.int64(codes[f, rows[p]]) << 32) | (p - start)
                    ks = keys[:nn]
                    if nn <= 64:  # insertion sort (numba's quicksort costs ~50 ns a key on small arrays)
                        for j in range(1, nn):
                            kj = ks[j]
                            i = j - 1
                            while i >= 0 and ks[i] > kj:
                                ks[i + 1] = ks[i]
                                i -= 1
                            ks[i + 1] = kj
                    else:
                        ks.sort()
                    c_first = ks[0] >> 32
                    c_last = ks[nn - 1] >> 32
                    if vals[base + c_last] <= vals[base + c_first] + T32:
                        constant = True
                    else:
                        for c in range(C):
                            sl[c] = 0.0
                        wl = 0.0
                        prevv = vals[base + c_first]
                        for j in range(nn):  # j = 0 never splits (v == prevv): it only adds the first row
                            v = vals[base + (ks[j] >> 32)]
                            if v > prevv + T32:
                                if j >= msl and nn - j >= msl:
                                    pr = _proxy(sl, wl, stot, wn, sr, crit)
                                    if pr > best_proxy:
                                        best_proxy = pr
                                        best_f = f
                                        best_thr = prevv / 2.0 + v / 2.0
                                        best_nl = j
                                        best_wl = wl
                                        for c in range(C):
                                            best_sl[c] = sl[c]
                            q = start + (ks[j] & 0xFFFFFFFF)
                            if packed:  # rows carry (count, weight, class-1 weight) in pk only
                                wq = float((pk[q] >> 21) & 0x1FFFFF)
                                wyq = float(pk[q] >> 42)
                                sl[1] += wyq
                                sl[0] += wq - wyq
                                wl += wq
                            else:
                                sl[sy[q]] += sw[q]
                                wl += sw[q]
                            prevv = v
                if constant:
                    tmp = features[f_j]
                    features[f_j] = features[n_total]
                    features[n_total] = tmp
                    n_found += 1
                    n_total += 1
                    continue
                f_i -= 1
                tmp = features[f_i]
                features[f_i] = features[f_j]
                features[f_j] = tmp
            # invariant on constant features for siblings and children (sklearn's two memcpy)
            for i in range(n_known):
                features[i] = const_f[i]
            for i in range(n_known, n_total):
                const_f[i] = features[i]
            if best_f < 0:
                continue
            wl = best_wl
            wr = wn - wl
            for c in range(C):
                sr[c] = stot[c] - best_sl[c]
            imp_l = _impurity(best_sl, wl, crit)
            imp_r = _impurity(sr, wr, crit)
            improvement = (wn / w_total) * (impurity - (wr / wn * imp_r) - (wl / wn * imp_l))
            if improvement + 2.220446049250313e-16 < 0.0:
                continue
            # partition samples[start:end] on x <= threshold (branch-free, through the t_* buffers:
            # the order of rows inside a node does not change any sum, all weights being integers)
            # codes are ranks of sorted values: x <= threshold exactly when code <= c_split
            base = voff[best_f]
            lo = 0
            hi = voff[best_f + 1] - base
            while lo < hi:
                mid = (lo + hi) // 2
                if vals[base + mid] <= best_thr:
                    lo = mid + 1
                else:
                    hi = mid
            c_split = lo - 1
            pos = start + best_nl
            li = 0
            ri = best_nl
            if packed:  # (sy, sw are not read again in packed mode)
                # left rows compacted in place (position start + li <= p was read already), right rows to the
                # buffer and back after: the same stable order, half the copying
                li = start
                ri = 0
                for p in range(start, end):
                    r = rows[p]
                    v = pk[p]
                    go = np.int64(np.int64(codes[best_f, r]) <= c_split)
                    rows[li] = r
                    pk[li] = v
                    t_rows[ri] = r
                    t_pk[ri] = v
                    li += go
                    ri += 1 - go
                for j in range(ri):
                    rows[pos + j] = t_rows[j]
                    pk[pos + j] = t_pk[j]
            else:
                for p in range(start, end):
                    go = np.int64(np.int64(codes[best_f, rows[p]]) <= c_split)
                    d = ri + go * (li - ri)
                    t_rows[d] = rows[p]
                    t_sy[d] = sy[p]
                    t_sw[d] = sw[p]
                    li += go
                    ri += 1 - go
                for p in range(start, end):
                    rows[p] = t_rows[p - start]
                    sy[p] = t_sy[p - start]
                    sw[p] = t_sw[p - start]
            feat_o[node] = best_f
            thr_o[node] = best_thr
            # the children's two-valued sums, for those that will be split-searched: the smaller child's by a
            # pass, the other's as the parent's (hst[sp], overwritten last: right goes to sp) minus it
            need_l = False
            need_r = False
            if use_bh:
                need_l = _will_split(best_nl, depth + 1, max_depth, mss, msl, best_sl[0], best_sl[1], crit)
                need_r = _will_split(nn - best_nl, depth + 1, max_depth, mss, msl, sr[0], sr[1], crit)
            if need_l or need_r:
                if sp + 2 > hst.shape[0]:
                    grown = np.empty((2 * hst.shape[0], nbin), np.int64)
                    grown[: sp + 1] = hst[: sp + 1]
                    hst = grown
                left_small = best_nl <= nn - best_nl
                hs[:] = 0
                if left_small:
                    _add_binary_hist(hs, rows, pk, start, pos, bptr, bidx)
                else:
                    _add_binary_hist(hs, rows, pk, pos, end, bptr, bidx)
                if need_l:
                    if left_small:
                        hst[sp + 1, :] = hs
                    else:
                        for i in range(nbin):
                            hst[sp + 1, i] = hst[sp, i] - hs[i]
                if need_r:
                    if left_small:
                        for i in range(nbin):
                            hst[sp, i] -= hs[i]
                    else:
                        hst[sp, :] = hs
            st[sp, 5] = 1 if need_r else 0
            st[sp + 1, 5] = 1 if need_l else 0
            # right child first, then left (popped first)
            st[sp, 0] = pos
            st[sp, 1] = end
            st[sp, 2] = depth + 1
            st[sp, 3] = node * 2
            st[sp, 4] = n_total
            st[sp + 1, 0] = start
            st[sp + 1, 1] = pos
            st[sp + 1, 2] = depth + 1
            st[sp + 1, 3] = node * 2 + 1
            st[sp + 1, 4] = n_total
            for c in range(C):
                sts[sp, c] = sr[c]
                sts[sp + 1, c] = best_sl[c]
            sp += 2
        return n_nodes

    @njit(cache=True)
    def _grow_one(native, codes, vals, voff, yv, rows_sub, seed, n_boot, bootstrap, max_features, max_depth, mss, msl,
                  crit, maxnv, bslot, bptr, bidx, nbin, fo, th, lo, ro, vo, m_max, work):
        """One tree by :func:`_grow_tree`, or by its C twin ``native`` (``_forest_native.grow_function``; None: numba).
        The same arguments and scratch; the same tree."""
        if native is None:
            return _grow_tree(codes, vals, voff, yv, rows_sub, seed, n_boot, bootstrap, max_features, max_depth, mss,
                              msl, crit, maxnv, bslot, bptr, bidx, fo, th, lo, ro, vo, work)
        i64, f64, mt, hst, hs, features, const_f, st, sts, cs, hw, hn, hp = work
        boot = np.int64(0)
        if bootstrap:
            boot = np.int64(1)
        n = native(codes.ctypes, codes.shape[1], codes.shape[0], vals.ctypes, voff.ctypes, yv.ctypes, rows_sub.ctypes,
                   rows_sub.shape[0], seed, n_boot, boot, max_features, max_depth, mss, msl,
                   crit, bslot.ctypes, bptr.ctypes, bidx.ctypes, nbin, fo.ctypes, th.ctypes, lo.ctypes, ro.ctypes,
                   vo.ctypes, vo.shape[1], m_max, i64.ctypes, f64.ctypes, mt.ctypes, hst.ctypes, hst.shape[0],
                   hs.ctypes, features.ctypes, const_f.ctypes, st.ctypes, sts.ctypes, cs.ctypes, hw.ctypes, hn.ctypes,
                   hp.ctypes)
        if n < 0:
            raise MemoryError("the native tree kernel could not allocate its node-sum rows")
        return n

    @njit(parallel=True, cache=True)
    def grow_trees(codes, vals, voff, yv, sub_rows, sub_ptr, tree_model, tree_seed, n_boot, bootstrap,
                   max_features, max_depth, mss, msl, crit, maxnv, bslot, bptr, bidx, n_workers, max_nodes, feat_b,
                   thr_b, left_b, leaf_b, val_b, n_nodes, depth, native):
        """Grow trees ``t = 0 .. len(tree_seed)-1`` in parallel; tree t belongs to model ``tree_model[t]``.

        Worker w (of ``n_workers`` = W, one a thread) grows trees w, w + W, ... depth-first into its own scratch
        arrays (``max_nodes`` long, hot in cache, allocated once a call) and writes each, renumbered
        breadth-first (:func:`_to_breadth_first`), into row t of the ``*_b`` buffers, for :func:`copy_trees`
        to pack into a bank.

        Parameters
        ----------
        codes : uint16/int32 (F, n)  rank of each row's float32 value among the feature's distinct values
        vals : float32 (sum nv,)   the distinct values of feature f at ``vals[voff[f]:voff[f+1]]``, ascending
        voff : int64 (F+1,)
        yv : int64 (n,)            labels
        sub_rows, sub_ptr : int64  model k trains on rows ``sub_rows[sub_ptr[k]:sub_ptr[k+1]]``
        tree_model, tree_seed : int64 (T,)
        n_boot : int64 (K,)        bootstrap draws of model k
        mss, msl : int64 (K,)      min_samples_split (already >= 2 * min_samples_leaf) and min_samples_leaf
        bslot : int64 (F,)         slot of each two-valued feature (0, 1, ...), -1 for the others
        bptr, bidx : int64         CSR (n+1,), (nnz,): the slots where row i holds code 1
        feat_b, left_b, leaf_b : int32 (T, max_nodes); thr_b : float32 (T, max_nodes);
        val_b : float64 (T, (max_nodes + 1) // 2, C); n_nodes, depth : int64 (T,)   outputs
        """
        W = n_workers
        m_max, nbin = _work_sizes(sub_ptr, bslot)
        C = val_b.shape[2]
        nt = tree_seed.shape[0]
        for wp in prange(W):
            w = np.int64(wp)  # (prange's index may be unsigned: mixed with int64 it would become a float)
            fo, th, lo, ro, vo = _tree_scratch(max_nodes, C)
            work = _grow_work(m_max, codes.shape[0], nbin, maxnv, max_nodes, C)
            for t in range(w, nt, W):
                k = tree_model[t]
                n = _grow_one(native, codes, vals, voff, yv, sub_rows[sub_ptr[k]:sub_ptr[k + 1]], tree_seed[t],
                              n_boot[k], bootstrap, max_features, max_depth, mss[k], msl[k], crit, maxnv, bslot, bptr,
                              bidx, nbin, fo, th, lo, ro, vo, m_max, work)
                n_nodes[t] = n
                depth[t] = _to_breadth_first(fo, th, lo, ro, vo, n, feat_b[t], thr_b[t], left_b[t], leaf_b[t],
                                             val_b[t])

    # -- the query rows as bitsets: a tree partitions them node by node ----------------------------------------

    #: de Bruijn sequence and table: the index of the lowest set bit b of a uint64 is _DEBRUIJN[(b * magic) >> 58]
    _DEBRUIJN_MAGIC = np.uint64(0x03F79D71B4CB0A89)
    _DEBRUIJN = np.array([0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22,
                          45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
                          46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6], np.int64)

    @njit(cache=True)
    def query_bitsets(Xq, qvptr):
        """The query rows ``Xq`` (n_q, F) float32 as bitsets for :func:`_add_tree_bits`: ``(P, pptr, qv)``.

        ``qv[qvptr[f]:qvptr[f + 1]]`` are feature f's distinct query values, ascending (``qvptr`` from the caller:
        the counts' cumulative sum). ``P[pptr[f] + j]`` (``W = ceil(n_q / 64)`` words; bit i of word i // 64 is row
        i) is the set of rows whose value of f is <= the j-th smallest (j = 1 .. u_f), ``P[pptr[f]]`` the empty set:
        the rows a split on f sends left, for any threshold, by a binary search among ``qv``.
        """
        nq, F = Xq.shape
        W = (nq + 63) // 64
        pptr = np.empty(F + 1, np.int64)
        for f in range(F + 1):
            pptr[f] = qvptr[f] + f
        P = np.zeros((pptr[F], W), np.uint64)
        qv = np.empty(qvptr[F], np.float32)
        col = np.empty(nq, np.float32)
        for f in range(F):
            for i in range(nq):
                col[i] = Xq[i, f]
            order = np.argsort(col, kind="mergesort")
            row = pptr[f]
            pos = qvptr[f]
            i = 0
            while i < nq:
                if pos == qvptr[f + 1]:  # the caller counted fewer distinct values (finite inputs: cannot happen)
                    raise ValueError("query_bitsets: qvptr holds fewer distinct values than the query rows have")
                v = col[order[i]]
                qv[pos] = v
                pos += 1
                row += 1
                P[row, :] = P[row - 1, :]
                while i < nq and col[order[i]] == v:
                    r = order[i]
                    P[row, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
                    i += 1
        return P, pptr, qv

    @njit(cache=True)
    def _add_tree_bits(P, pptr, qv, qvptr, feat, thr, left, leaf, value, out, stk, stn):
        """``out[i] +=`` the leaf fractions that every query row i reaches in one tree (breadth-first layout, as
        :func:`_add_tree`), the rows moving down as sets: at a split on f with threshold t the node's set is cut by
        ``P[pptr[f] + j]`` (j = the number of f's distinct query values <= t: exactly the rows with x <= t, the
        rows :func:`_add_tree` sends left), empty sets stop, and a leaf adds its fractions to its set's rows. The
        same additions as :func:`_add_tree`, so the same sums; the work is a few word operations a node
        (``W = ceil(n_q / 64)`` words) plus one addition a row, instead of one step a row and level.
        ``stk`` (>= depth + 2, W) uint64 and ``stn`` (>= depth + 2) int64 are scratch.
        """
        W = P.shape[1]
        C = out.shape[1]
        nq = out.shape[0]
        if nq == 0:
            return
        for w in range(W):
            stk[0, w] = ~np.uint64(0)
        if nq % 64:
            stk[0, W - 1] = (np.uint64(1) << np.uint64(nq % 64)) - np.uint64(1)
        stn[0] = 0
        sp = 1
        while sp > 0:
            sp -= 1
            u = stn[sp]
            lf = leaf[u]
            if lf >= 0:
                for w in range(W):
                    x = stk[sp, w]
                    while x != 0:
                        b = x & (~x + np.uint64(1))
                        i = w * 64 + _DEBRUIJN[(b * _DEBRUIJN_MAGIC) >> np.uint64(58)]
                        for c in range(C):
                            out[i, c] += value[lf, c]
                        x ^= b
                continue
            f = feat[u]
            t = thr[u]
            lo = qvptr[f]
            hi = qvptr[f + 1]
            while lo < hi:  # the first of f's distinct query values > t
                mid = (lo + hi) >> 1
                if qv[mid] <= t:
                    lo = mid + 1
                else:
                    hi = mid
            m = pptr[f] + (lo - qvptr[f])
            anyl = np.uint64(0)
            anyr = np.uint64(0)
            for w in range(W):  # right child's rows into this slot, left child's into the next
                sw = stk[sp, w]
                mw = P[m, w]
                lw = sw & mw
                rw = sw & ~mw
                stk[sp, w] = rw
                stk[sp + 1, w] = lw
                anyl |= lw
                anyr |= rw
            cl = left[u]
            if anyr != 0:
                stn[sp] = cl + 1
                sp += 1
                if anyl != 0:
                    stn[sp] = cl
                    sp += 1
            elif anyl != 0:
                for w in range(W):
                    stk[sp, w] = stk[sp + 1, w]
                stn[sp] = cl
                sp += 1

    @njit(parallel=True, cache=True)
    def grow_and_query(codes, vals, voff, yv, sub_rows, sub_ptr, tree_seed, n_trees, n_boot, bootstrap,
                       max_features, max_depth, mss, msl, crit, maxnv, bslot, bptr, bidx, n_workers, group, max_nodes,
                       Xq, out, qblock, bits, P, pptr, qv, qvptr, native, native_q, native_next):
        """Grow every model's ``n_trees`` trees and query them on the float32 rows ``Xq`` (n_q, F) without keeping
        them: ``out[k]`` (zeros on entry) gets model k's mean leaf fractions.

        Worker w (of ``n_workers`` = W) takes models w, w + W, ... and grows each model's trees in order
        (``tree_seed[k * n_trees + j]``), ``group`` at a time (depth-first scratch, then breadth-first rows of the
        worker's own), then lets the group's trees descend the query rows ``qblock`` rows at a time (the block
        stays in cache across the group) with :func:`_add_tree`: each row's leaf fractions are added tree after
        tree and divided by ``n_trees``, the additions and order of :func:`predict_forests` on the bank. With
        ``bits`` the group's trees partition the query rows as bitsets instead (:func:`_add_tree_bits` on
        :func:`query_bitsets`' ``P, pptr, qv`` and ``qvptr``): the same additions in the same order. With
        ``native_q`` (``_forest_native.query_function()``, the C twin of :func:`_add_tree_bits`) and ``bits``,
        the group's trees are queried on the grower's depth-first arrays (no breadth-first copy): again the same
        additions; the workers then take the models one at a time from a shared counter (``native_next``, an
        atomic fetch-and-add), which does not change any model's numbers. Parameters as in :func:`grow_trees`.
        """
        W = n_workers
        m_max, nbin = _work_sizes(sub_ptr, bslot)
        K = out.shape[0]
        C = out.shape[2]
        nq = Xq.shape[0]
        F = Xq.shape[1]
        Xf = Xq.reshape(-1)
        max_leaves = (max_nodes + 1) // 2
        failed = np.zeros(W, np.bool_)  # (a raise inside the prange loop would make numba run it serially)
        counter = np.zeros(1, np.int64)
        for wp in prange(W):
            w = np.int64(wp)
            fo, th, lo, ro, vo = _tree_scratch(max_nodes, C)
            work = _grow_work(m_max, F, nbin, maxnv, max_nodes, C)
            gb = 1 if bits and native_q is not None else group  # breadth-first rows: the numba query's only
            feat_b = np.empty((gb, max_nodes), np.int32)
            thr_b = np.empty((gb, max_nodes), np.float32)
            left_b = np.empty((gb, max_nodes), np.int32)
            leaf_b = np.empty((gb, max_nodes), np.int32)
            val_b = np.empty((gb, max_leaves, C), np.float64)
            depth_b = np.zeros(gb, np.int64)
            stk = np.empty((66, P.shape[1]), np.uint64)
            stn = np.empty(66, np.int64)
            gq = group if native_q is not None else 1  # the group's depth-first trees, for the C query
            dfo = np.empty((gq, max_nodes), np.int32)
            dth = np.empty((gq, max_nodes), np.float64)
            dlo = np.empty((gq, max_nodes), np.int32)
            dro = np.empty((gq, max_nodes), np.int32)
            dvo = np.empty((gq, max_nodes, C), np.float64)
            if bits and native_q is not None:
                # models handed out one at a time (an atomic counter): a thread the machine slows takes fewer
                k = native_next(counter.ctypes)
                while k < K:
                    rows_sub = sub_rows[sub_ptr[k]:sub_ptr[k + 1]]
                    for g0 in range(0, n_trees, group):
                        g1 = min(n_trees, g0 + group)
                        for j in range(g0, g1):
                            g = j - g0
                            _grow_one(native, codes, vals, voff, yv, rows_sub, tree_seed[k * n_trees + j], n_boot[k],
                                      bootstrap, max_features, max_depth, mss[k], msl[k], crit, maxnv, bslot, bptr,
                                      bidx, nbin, dfo[g], dth[g], dlo[g], dro[g], dvo[g], m_max, work)
                        for g in range(g1 - g0):  # then the group's trees, the bitsets staying in cache
                            failed[w] |= native_q(P.ctypes, P.shape[1], pptr.ctypes, qv.ctypes, qvptr.ctypes,
                                                  dfo[g].ctypes, dth[g].ctypes, dlo[g].ctypes, dro[g].ctypes,
                                                  dvo[g].ctypes, C, out[k].ctypes, nq, stk.ctypes, stk.shape[0],
                                                  stn.ctypes) < 0
                    for i in range(nq):
                        for c in range(C):
                            out[k, i, c] /= n_trees
                    k = native_next(counter.ctypes)
                continue
            for k in range(w, K, W):
                rows_sub = sub_rows[sub_ptr[k]:sub_ptr[k + 1]]
                for g0 in range(0, n_trees, group):
                    g1 = min(n_trees, g0 + group)
                    for j in range(g0, g1):
                        n = _grow_one(native, codes, vals, voff, yv, rows_sub, tree_seed[k * n_trees + j], n_boot[k],
                                      bootstrap, max_features, max_depth, mss[k], msl[k], crit, maxnv, bslot, bptr,
                                      bidx, nbin, fo, th, lo, ro, vo, m_max, work)
                        g = j - g0
                        depth_b[g] = _to_breadth_first(fo, th, lo, ro, vo, n, feat_b[g], thr_b[g], left_b[g],
                                                       leaf_b[g], val_b[g])
                    if bits:
                        for g in range(g1 - g0):
                            if depth_b[g] + 2 > stn.shape[0]:
                                stk = np.empty((depth_b[g] + 2, P.shape[1]), np.uint64)
                                stn = np.empty(depth_b[g] + 2, np.int64)
                            _add_tree_bits(P, pptr, qv, qvptr, feat_b[g], thr_b[g], left_b[g], leaf_b[g], val_b[g],
                                           out[k], stk, stn)
                        continue
                    for i0 in range(0, nq, qblock):
                        i1 = min(nq, i0 + qblock)
                        for g in range(g1 - g0):
                            _add_tree(Xf, F, i0, i1, np.uint64(0), 0, feat_b[g], thr_b[g], left_b[g], leaf_b[g],
                                      val_b[g], out[k])
                for i in range(nq):
                    for c in range(C):
                        out[k, i, c] /= n_trees
        if failed.any():
            raise MemoryError("the native forest query could not allocate its stack of bitsets")

    @njit(cache=True, inline="always")
    def _round_down(t):
        """The largest float32 <= the float64 ``t``: for a float32 x, ``x <= t`` iff ``x <= _round_down(t)``."""
        t32 = np.float32(t)
        if np.float64(t32) > t:
            t32 = np.nextafter(t32, np.float32(-np.inf))
        return t32

    @njit(cache=True)
    def round_down_f32(t):
        """:func:`_round_down` of every entry of a float64 array, as a float32 array."""
        out = np.empty(t.shape[0], np.float32)
        for i in range(t.shape[0]):
            out[i] = _round_down(t[i])
        return out

    @njit(cache=True)
    def _to_breadth_first(feat_o, thr_o, left_o, right_o, val_o, n, feat, thr, left, leaf, value):
        """One tree grown depth-first (``*_o``, n nodes) renumbered breadth-first into ``feat``, ``thr``, ``left``,
        ``leaf``, ``value``; returns its depth.

        Breadth-first numbering puts the two children of a node next to each other
        (``right = left + 1``), so a step is ``left + (x > threshold)``, without a
        branch. A leaf steps to itself (feature 0, threshold +inf, left = itself),
        so rows descending together may overshoot their leaf harmlessly. ``leaf`` is -1
        at an internal node and the leaf's row in ``value`` at a leaf; ``value`` holds
        leaves only. ``thr`` is float32: the float64 threshold rounded down
        (:func:`_round_down`), so float32 inputs take the same branches. Indices are
        the tree's own (the bank adds each tree's offsets when it reads them).
        """
        queue = np.empty(n, np.int64)
        level = np.empty(n, np.int64)
        queue[0] = 0
        level[0] = 0
        tail = 1
        n_leaf = 0
        dmax = 0
        for head in range(n):
            u = queue[head]
            f = feat_o[u]
            if level[head] > dmax:
                dmax = level[head]
            if f >= 0:
                feat[head] = f
                thr[head] = _round_down(thr_o[u])
                left[head] = tail
                leaf[head] = -1
                queue[tail] = left_o[u]
                queue[tail + 1] = right_o[u]
                level[tail] = level[head] + 1
                level[tail + 1] = level[head] + 1
                tail += 2
            else:
                feat[head] = 0
                thr[head] = np.float32(np.inf)
                left[head] = head
                leaf[head] = n_leaf
                for c in range(val_o.shape[1]):
                    value[n_leaf, c] = val_o[u, c]
                n_leaf += 1
        return dmax

    @njit(parallel=True, cache=True)
    def copy_trees(feat_b, thr_b, left_b, leaf_b, val_b, n_nodes, node_off, leaf_off, feat, thr, left, leaf, value):
        """Copy buffer row t's tree (:func:`grow_trees`' output) to ``node_off[t]`` / ``leaf_off[t]`` of the flat
        arrays (trees in parallel; a binary tree of n nodes has (n + 1) / 2 leaves)."""
        for t in prange(n_nodes.shape[0]):
            n = n_nodes[t]
            o = node_off[t]
            feat[o : o + n] = feat_b[t, :n]
            thr[o : o + n] = thr_b[t, :n]
            left[o : o + n] = left_b[t, :n]
            leaf[o : o + n] = leaf_b[t, :n]
            nl = (n + 1) // 2
            value[leaf_off[t] : leaf_off[t] + nl] = val_b[t, :nl]

    @njit(cache=True)
    def _add_tree(Xf, F, i0, i1, o, lo, feat, thr, left, leaf, value, out):
        """``out[i] +=`` the leaf fractions that rows i0 .. i1-1 of ``Xf`` (flattened (n, F) float32) reach in the
        tree whose nodes start at ``o`` and leaf values at ``lo`` of the given arrays (breadth-first layout).

        Eight rows descend the tree together (independent chains of loads: a step's latency is two dependent
        loads, hidden by the other rows) until all eight reached a leaf (leaves step to themselves). Measured on
        2,000 Adult rows x 2,000 trees, one thread: 4 rows 35.8 ns a row and tree, 8 rows 27.1, 16 rows 29.6
        (registers run out), 4 or 8 lanes each taking a new row as soon as its row reached a leaf 37.6 / 35.5
        (the branches cost more than the steps saved). Node indices are unsigned (no negative-index wraparound
        code in the loop).
        """
        C = out.shape[1]
        i = i0
        while i + 8 <= i1:
            r0 = np.uint64(i * F)
            r1 = np.uint64((i + 1) * F)
            r2 = np.uint64((i + 2) * F)
            r3 = np.uint64((i + 3) * F)
            r4 = np.uint64((i + 4) * F)
            r5 = np.uint64((i + 5) * F)
            r6 = np.uint64((i + 6) * F)
            r7 = np.uint64((i + 7) * F)
            a0 = o
            a1 = o
            a2 = o
            a3 = o
            a4 = o
            a5 = o
            a6 = o
            a7 = o
            while True:  # until all 8 reached a leaf (the OR of their leaf ids is >= 0)
                a0 = o + np.uint64(left[a0]) + np.uint64(Xf[r0 + np.uint64(feat[a0])] > thr[a0])
                a1 = o + np.uint64(left[a1]) + np.uint64(Xf[r1 + np.uint64(feat[a1])] > thr[a1])
                a2 = o + np.uint64(left[a2]) + np.uint64(Xf[r2 + np.uint64(feat[a2])] > thr[a2])
                a3 = o + np.uint64(left[a3]) + np.uint64(Xf[r3 + np.uint64(feat[a3])] > thr[a3])
                a4 = o + np.uint64(left[a4]) + np.uint64(Xf[r4 + np.uint64(feat[a4])] > thr[a4])
                a5 = o + np.uint64(left[a5]) + np.uint64(Xf[r5 + np.uint64(feat[a5])] > thr[a5])
                a6 = o + np.uint64(left[a6]) + np.uint64(Xf[r6 + np.uint64(feat[a6])] > thr[a6])
                a7 = o + np.uint64(left[a7]) + np.uint64(Xf[r7 + np.uint64(feat[a7])] > thr[a7])
                if (leaf[a0] | leaf[a1] | leaf[a2] | leaf[a3] | leaf[a4] | leaf[a5] | leaf[a6] | leaf[a7]) >= 0:
                    break
            for c in range(C):
                out[i, c] += value[lo + leaf[a0], c]
                out[i + 1, c] += value[lo + leaf[a1], c]
                out[i + 2, c] += value[lo + leaf[a2], c]
                out[i + 3, c] += value[lo + leaf[a3], c]
                out[i + 4, c] += value[lo + leaf[a4], c]
                out[i + 5, c] += value[lo + leaf[a5], c]
                out[i + 6, c] += value[lo + leaf[a6], c]
                out[i + 7, c] += value[lo + leaf[a7], c]
            i += 8
        while i < i1:
            a0 = o
            r0 = np.uint64(i * F)
            while leaf[a0] < 0:
                a0 = o + np.uint64(left[a0]) + np.uint64(Xf[r0 + np.uint64(feat[a0])] > thr[a0])
            for c in range(C):
                out[i, c] += value[lo + leaf[a0], c]
            i += 1

    @njit(parallel=True, cache=True)
    def predict_forests(Xf, F, tree_ptr, node_off, leaf_off, feat, thr, left, leaf, value, out, block):
        """Mean leaf fractions: ``out[k, i] = mean over trees t of model k of value[leaf_t(x_i)]``.

        ``Xf`` is the float32 query matrix (n, F) flattened row-major and ``thr``
        float32 (scikit-learn's float64 threshold rounded down to float32: for a
        float32 x, ``x <= thr64`` exactly when ``x <= thr32``); a tree's rows descend
        by :func:`_add_tree`. The trees of a model are summed in order, then
        divided by their number, as ``RandomForestClassifier.predict_proba`` does.
        Work is split over (model, block of rows) pairs.
        """
        K = tree_ptr.shape[0] - 1
        n = Xf.shape[0] // F
        C = value.shape[1]
        nb = (n + block - 1) // block
        for j in prange(K * nb):
            k = j // nb
            i0 = (j % nb) * block
            i1 = min(n, i0 + block)
            for t in range(tree_ptr[k], tree_ptr[k + 1]):
                _add_tree(Xf, F, i0, i1, np.uint64(node_off[t]), leaf_off[t], feat, thr, left, leaf, value, out[k])
            T = tree_ptr[k + 1] - tree_ptr[k]
            for i in range(i0, i1):
                for c in range(C):
                    out[k, i, c] /= T

else:  # pragma: no cover

    def _missing(*args, **kwargs):
        raise RuntimeError("numba is not installed")

    grow_trees = grow_and_query = copy_trees = predict_forests = tree_seeds = round_down_f32 = _missing
    query_bitsets = _missing
