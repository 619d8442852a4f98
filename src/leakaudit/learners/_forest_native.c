/* The forest kernel: scikit-learn's CART trees (RandomForestClassifier, version 1.9) grown, queried and packed.
 *
 * grow() grows one tree depth-first exactly as scikit-learn does (sklearn/tree/_splitter.pyx node_split_best,
 * _tree.pyx DepthFirstTreeBuilder, _criterion.pyx Gini/Entropy, ensemble/_forest.py _parallel_build_trees),
 * random streams included:
 *
 *  - the bootstrap of a tree with seed s is RandomState(s).randint(0, m, n_boot) (legacy MT19937 with masked
 *    rejection sampling, written out below), each row weighted by its count, rows drawn zero times left out;
 *  - the splitter's stream is scikit-learn's 32-bit xorshift (our_rand_r) seeded with
 *    RandomState(s).randint(0, 2**31 - 1); it drives the same Fisher-Yates draw of candidate features over the
 *    same features / constant_features arrays, in the same depth-first order of nodes (left child first);
 *  - the impurities are scikit-learn's formulas term for term, and class sums of integer weights are exact in
 *    float64, so the proxy improvements are the same numbers: compiled with -ffp-contract=off, since a fused
 *    multiply-add would round them differently.
 *
 * So a tree grown here is scikit-learn's tree with the same seed, split for split (tests/learners/test_forest.py
 * compares them with RandomForestClassifier). What differs is how a candidate feature's best threshold is found
 * (the same answer, less work): every feature's float32 values are replaced once by their rank among its distinct
 * values (codes); at a node a feature with few distinct values gets a weighted class histogram over its codes in
 * O(n_node) (up to 64 codes a row; the occupied codes marked in a bitmap and visited by its set bits, so an empty
 * bin costs a bit), one with many has the node's (code, position) keys sorted (insertion
 * sort up to 64 keys, then a radix sort on 16-bit codes, qsort on int32 ones). Both visit the thresholds in
 * ascending order, group values closer than scikit-learn's FEATURE_THRESHOLD (1e-7 in float32) as next_p does and
 * keep the first strictly better split.
 * With two classes every searched node also holds the packed class sums of all two-valued features (the smaller
 * child's by a pass over its rows' code-1 lists, the larger's by subtraction), so a drawn one-hot column is
 * evaluated in O(1); with fewer than 256 such features a worker reads those lists from a table of uint8 slots,
 * every row padded to the longest with an unused slot (a fixed-width row, 1 byte a slot instead of 8). The common case (two classes, gini, packed sums) runs a copy of the grower compiled with
 * those as constants (grow_u16_spec); the others run the generic one.
 *
 * The exported calls take the structs below (mirrored by ctypes Structures in _forest_native.py). Each is one
 * worker: the Python side runs as many as it wants threads (ctypes releases the GIL), and the workers share a
 * task counter (an atomic fetch-and-add), so which thread grows a tree or model never changes its numbers.
 *  - leakaudit_forest_grow: trees, renumbered breadth-first into rows of build buffers (children adjacent,
 *    float32 thresholds rounded down, leaf values only); leakaudit_forest_pack packs the rows into a bank;
 *  - leakaudit_forest_predict: a bank's mean leaf fractions, eight rows descending a tree together;
 *  - leakaudit_forest_grow_query: whole models grown and queried as they grow (fit_predict_many), the query rows
 *    moving down as bitsets (split by leakaudit_forest_query_bitsets' sets, or on the training rows by their rank
 *    codes), without keeping the trees;
 *  - leakaudit_forest_tree_seeds: the seeds RandomForestClassifier hands its trees (MT19937 draws, as numpy's).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_sklearn_rand.h"
#if defined(__AVX512BW__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#define T32 1e-7f
/* a node's numeric feature takes the histogram up to this many codes a row, else the sort (0: always sorts) */
#ifndef LEAKAUDIT_FOREST_HIST_ROWS
#define LEAKAUDIT_FOREST_HIST_ROWS 64
#endif
#define EPS 2.220446049250313e-16


static void mt_init(int64_t *mt, int64_t seed) {
    uint32_t s = (uint32_t)(seed & 0xFFFFFFFF);
    for (int i = 0; i < 624; i++) {
        mt[i] = s;
        s = 1812433253u * (s ^ (s >> 30)) + (uint32_t)(i + 1);
    }
    mt[624] = 624;
}

static inline int64_t mt_mix(int64_t a, int64_t b, int64_t c) {
    int64_t y = (a & 0x80000000) | (b & 0x7FFFFFFF);
    return c ^ (y >> 1) ^ (-(y & 1) & 0x9908B0DF);
}

static void mt_twist(int64_t *mt) {
    for (int i = 0; i < 227; i++) mt[i] = mt_mix(mt[i], mt[i + 1], mt[i + 397]);
    for (int i = 227; i < 623; i++) mt[i] = mt_mix(mt[i], mt[i + 1], mt[i - 227]);
    mt[623] = mt_mix(mt[623], mt[0], mt[396]);
    mt[624] = 0;
}

static inline int64_t mt_temper(int64_t v) {
    v ^= v >> 11;
    v ^= (v << 7) & 0x9D2C5680;
    v ^= (v << 15) & 0xEFC60000;
    v ^= v >> 18;
    return v;
}

static inline int64_t mt_next(int64_t *mt) {
    if (mt[624] >= 624) mt_twist(mt);
    int64_t pos = mt[624];
    mt[624] = pos + 1;
    return mt_temper(mt[pos]);
}

static inline int64_t mt_bounded(int64_t *mt, int64_t rng) {
    if (rng == 0) return 0;
    int64_t mask = rng;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    for (;;) {
        int64_t v = mt_next(mt) & mask;
        if (v <= rng) return v;
    }
}

static inline double impurity(const double *s, int64_t C, double w, int64_t crit) {
    if (crit == 0) {
        double sq = 0.0;
        for (int64_t c = 0; c < C; c++) sq += s[c] * s[c];
        return 1.0 - sq / (w * w);
    }
    double ent = 0.0;
    for (int64_t c = 0; c < C; c++) {
        double p = s[c];
        if (p > 0.0) {
            p /= w;
            ent -= p * (log(p) / log(2.0));
        }
    }
    return ent;
}

static inline double impurity2(double a, double b, double w, int64_t crit) {
    if (crit == 0) {
        double sq = 0.0;
        sq += a * a;
        sq += b * b;
        return 1.0 - sq / (w * w);
    }
    double ent = 0.0;
    if (a > 0.0) {
        double p = a / w;
        ent -= p * (log(p) / log(2.0));
    }
    if (b > 0.0) {
        double p = b / w;
        ent -= p * (log(p) / log(2.0));
    }
    return ent;
}

static inline double proxy2(double l0, double l1, double wl, double t0, double t1, double wn, int64_t crit) {
    double wr = wn - wl;
    return -wr * impurity2(t0 - l0, t1 - l1, wr, crit) - wl * impurity2(l0, l1, wl, crit);
}

static inline double proxy(const double *sl, double wl, const double *stot, double wn, double *sr, int64_t C,
                           int64_t crit) {
    for (int64_t c = 0; c < C; c++) sr[c] = stot[c] - sl[c];
    double wr = wn - wl;
    return -wr * impurity(sr, C, wr, crit) - wl * impurity(sl, C, wl, crit);
}

static inline int searched(int64_t nn, int64_t depth, int64_t max_depth, int64_t mss, int64_t msl, double imp) {
    return !(depth >= max_depth || nn < mss || nn < 2 * msl || imp <= EPS);
}

/* h[slot] += pk[p] for every two-valued feature's slot where row rows[p] holds code 1, p0 <= p < p1: from the
 * fixed-width table bfix (bk slots a row, bk a multiple of 4, padded with the unused slot nbin) when the worker
 * built one, else from the CSR lists bptr / bidx. */
static inline void add_binary_hist(int64_t *restrict h, const int64_t *restrict rows, const int64_t *restrict pk,
                                   int64_t p0, int64_t p1, const int64_t *restrict bptr,
                                   const int64_t *restrict bidx, const uint8_t *restrict bfix, int64_t bk) {
    if (bfix != NULL) {
        for (int64_t p = p0; p < p1; p++) {
            const uint8_t *b = bfix + rows[p] * bk;
            const int64_t v = pk[p];
            for (int64_t j = 0; j < bk; j += 4) {
                h[b[j]] += v;
                h[b[j + 1]] += v;
                h[b[j + 2]] += v;
                h[b[j + 3]] += v;
            }
        }
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        int64_t r = rows[p], v = pk[p];
        for (int64_t j = bptr[r]; j < bptr[r + 1]; j++) h[bidx[j]] += v;
    }
}

/* Sort n keys (code << 32 | position, code < 2**16, positions ascending on entry) by code: a stable least-significant
 * digit radix sort (two passes of 8 bits, the high byte's skipped when every code shares it), so equal codes keep
 * their positions' order, the keys' own order. a and b hold n keys each, cnt 256 counters; returns the sorted
 * array (a or b). */
static int64_t *radix_sort16(int64_t *restrict a, int64_t *restrict b, int64_t n, int64_t *restrict cnt) {
    int64_t lo = a[0] >> 32, hi = lo;
    for (int64_t i = 1; i < n; i++) {
        const int64_t c = a[i] >> 32;
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    for (int shift = 32; shift < 48; shift += 8) {
        if (shift == 40 && (lo >> 8) == (hi >> 8)) break;
        memset(cnt, 0, sizeof(int64_t) * 256);
        for (int64_t i = 0; i < n; i++) cnt[(a[i] >> shift) & 255]++;
        int64_t sum = 0;
        for (int d = 0; d < 256; d++) {
            const int64_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) b[cnt[(a[i] >> shift) & 255]++] = a[i];
        int64_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

#define CODE(f, r) (wide ? (int64_t)c32[(f) * n + (r)] : (int64_t)c16[(f) * n + (r)])

static inline __attribute__((always_inline)) int64_t grow(
    const int spec, const uint16_t *restrict c16, const int32_t *restrict c32, const int wide, int64_t n, int64_t F,
    const float *restrict vals, const int64_t *restrict voff, const int64_t *restrict yv,
    const int64_t *restrict rows_sub, int64_t m, int64_t seed, int64_t n_boot, int64_t bootstrap,
    int64_t max_features, int64_t max_depth, int64_t mss, int64_t msl, int64_t crit,
    const int64_t *restrict bslot, const int64_t *restrict bptr, const int64_t *restrict bidx, int64_t nbin,
    int32_t *restrict feat_o, double *restrict thr_o, int32_t *restrict left_o, int32_t *restrict right_o,
    double *restrict val_o, int64_t C, int64_t m_max, int64_t *restrict i64, double *restrict f64,
    int64_t *restrict mt, int64_t *hst0, int64_t hst_rows, int64_t *restrict hs, int64_t *restrict features,
    int64_t *restrict const_f, int64_t *restrict st, double *restrict sts, double *restrict cs,
    double *restrict hw, int64_t *restrict hn, int64_t *restrict hp, int32_t *restrict csplit_o,
    const uint8_t *restrict bfix, int64_t bk, uint64_t *restrict occ, const uint64_t *restrict modm) {
    if (spec) {  /* the caller checked: two classes, packed sums, gini (constants from here on) */
        C = 2;
        crit = 0;
    }
    int64_t *restrict cnt = i64, *restrict rows = i64 + m_max, *restrict sy = i64 + 2 * m_max;
    int64_t *restrict pk = i64 + 3 * m_max, *restrict keys = i64 + 4 * m_max, *restrict t_rows = i64 + 5 * m_max;
    int64_t *restrict t_sy = i64 + 6 * m_max, *restrict t_pk = i64 + 7 * m_max;
    double *restrict sw = f64, *restrict t_sw = f64 + m_max;
    double *restrict stot = cs, *restrict sl = cs + C, *restrict sr = cs + 2 * C, *restrict best_sl = cs + 3 * C;
    const int64_t nb = nbin + 1;  /* a row of two-valued sums: nbin slots and the unused one bfix pads with */
    int64_t rbin[256];
    int64_t *hst = hst0, *hst_own = NULL;

    for (int64_t i = 0; i < m; i++) cnt[i] = 0;
    /* both streams start from RandomState(seed): the splitter's seed is the first output whose low 31 bits are
       <= RAND_R_MAX - 1, read off the fresh state before the bootstrap draws */
    mt_init(mt, seed);
    mt_twist(mt);
    int64_t rs = -1;
    for (int i = 0; i < 624; i++) {
        int64_t v = mt_temper(mt[i]) & 0x7FFFFFFF;
        if (v <= 0x7FFFFFFE) {
            rs = v;
            break;
        }
    }
    if (rs < 0) {
        mt_init(mt, seed);
        rs = mt_bounded(mt, 0x7FFFFFFE);
        mt_init(mt, seed);
        mt_twist(mt);
    }
    double w_total;
    if (bootstrap) {
        for (int64_t b = 0; b < n_boot; b++) cnt[mt_bounded(mt, m - 1)] += 1;
        w_total = (double)n_boot;
    } else {
        for (int64_t i = 0; i < m; i++) cnt[i] = 1;
        w_total = (double)m;
    }
    const int packed = spec || (C == 2 && w_total < 2097152.0 && m < 2097152);
    int64_t ns = 0;
    for (int64_t i = 0; i < m; i++) {  /* rows drawn at least once, written branch-free (ns advances if so) */
        const int64_t r = rows_sub[i], c = cnt[i];
        rows[ns] = r;
        sy[ns] = yv[r];
        sw[ns] = (double)c;
        pk[ns] = packed ? 1 + (c << 21) + ((c * yv[r]) << 42) : 0;
        ns += c != 0;
    }
    const int use_bh = packed && nbin > 0;
    for (int64_t f = 0; f < F; f++) features[f] = f;

    st[0] = 0;
    st[1] = ns;
    st[2] = 0;
    st[3] = -1;
    st[4] = 0;
    for (int64_t c = 0; c < C; c++) sts[c] = 0.0;
    for (int64_t p = 0; p < ns; p++) sts[sy[p]] += sw[p];
    st[5] = 0;
    if (use_bh) {
        memset(hst, 0, sizeof(int64_t) * nb);
        add_binary_hist(hst, rows, pk, 0, ns, bptr, bidx, bfix, bk);
        st[5] = 1;
    }
    int64_t sp = 1, n_nodes = 0;
    uint32_t rsu = (uint32_t)rs;
    while (sp > 0) {
        sp--;
        const int64_t start = st[sp * 6], end = st[sp * 6 + 1], depth = st[sp * 6 + 2], pcode = st[sp * 6 + 3];
        const int64_t n_known = st[sp * 6 + 4];
        const int has_h = st[sp * 6 + 5] == 1;
        const int64_t nn = end - start;
        double wn = 0.0;
        for (int64_t c = 0; c < C; c++) {
            stot[c] = sts[sp * C + c];
            wn += stot[c];
        }
        const double imp = C == 2 ? impurity2(stot[0], stot[1], wn, crit) : impurity(stot, C, wn, crit);
        const int64_t node = n_nodes++;
        if (pcode >= 0) {
            if (pcode & 1)
                left_o[pcode >> 1] = (int32_t)node;
            else
                right_o[pcode >> 1] = (int32_t)node;
        }
        for (int64_t c = 0; c < C; c++) val_o[node * C + c] = stot[c] / wn;
        feat_o[node] = -1;
        thr_o[node] = -2.0;
        left_o[node] = -1;
        right_o[node] = -1;
        if (!searched(nn, depth, max_depth, mss, msl, imp)) continue;

        /* ---- node_split_best ---- */
        int64_t f_i = F, n_visited = 0, n_found = 0, n_drawn = 0, n_total = n_known;
        double best_proxy = -INFINITY, best_thr = 0.0, best_wl = 0.0;
        int64_t best_f = -1, best_nl = 0;
        const int64_t *hrow = hst + sp * nb;
        while (f_i > n_total && (n_visited < max_features || n_visited <= n_found + n_drawn)) {
            n_visited++;
            rsu = xorshift(rsu);
            const uint32_t dj = (uint32_t)(f_i - n_found - n_drawn);
            int64_t f_j = n_drawn + (int64_t)mod_by(rsu & 0x7FFFFFFFu, dj, modm[dj]);
            if (f_j < n_known) {
                int64_t tmp = features[n_drawn];
                features[n_drawn] = features[f_j];
                features[f_j] = tmp;
                n_drawn++;
                continue;
            }
            f_j += n_found;
            const int64_t f = features[f_j];
            const int64_t base = voff[f], nvf = voff[f + 1] - base;
            const float *fv = vals + base;
            int constant = 0;
            if (nvf == 2 && packed) {
                int64_t acc = 0;
                if (has_h) {
                    acc = hrow[bslot[f]];
                } else {
                    for (int64_t p = start; p < end; p++) acc += CODE(f, rows[p]) * pk[p];
                }
                const int64_t n1 = acc & 0x1FFFFF;
                const double w1 = (double)((acc >> 21) & 0x1FFFFF), w1y = (double)(acc >> 42);
                if (n1 == 0 || n1 == nn || fv[1] <= fv[0] + T32) {
                    constant = 1;
                } else if (nn - n1 >= msl && n1 >= msl) {
                    const double l1 = stot[1] - w1y, l0 = stot[0] - (w1 - w1y), wl = wn - w1;
                    const double pr = proxy2(l0, l1, wl, stot[0], stot[1], wn, crit);
                    if (pr > best_proxy) {
                        best_proxy = pr;
                        best_f = f;
                        best_thr = (double)fv[0] / 2.0 + (double)fv[1] / 2.0;
                        best_nl = nn - n1;
                        best_wl = wl;
                        best_sl[0] = l0;
                        best_sl[1] = l1;
                    }
                }
            } else if (nvf <= LEAKAUDIT_FOREST_HIST_ROWS * nn) {
                /* class histogram over the node's codes, the occupied codes marked in a bitmap (in a register up
                   to 64 codes) and visited in ascending order by its set bits, empty ones skipped word by word */
                int64_t cmin = nvf, cmax = -1;
                uint64_t o = 0;
                for (int64_t p = start; p < end; p++) {
                    const int64_t cc = CODE(f, rows[p]);
                    if (packed) {
                        hp[cc] += pk[p];
                    } else {
                        hw[cc * C + sy[p]] += sw[p];
                        hn[cc] += 1;
                    }
                    if (nvf <= 64) {
                        o |= (uint64_t)1 << cc;
                    } else {
                        occ[cc >> 6] |= (uint64_t)1 << (cc & 63);
                        cmin = cc < cmin ? cc : cmin;
                        cmax = cc > cmax ? cc : cmax;
                    }
                }
                if (nvf <= 64) {
                    occ[0] = o;
                    cmin = __builtin_ctzll(o);
                    cmax = 63 - __builtin_clzll(o);
                }
                const int is_const = fv[cmax] <= fv[cmin] + T32;
                constant = is_const;
                for (int64_t c = 0; c < C; c++) sl[c] = 0.0;
                double wl = 0.0;
                int64_t nl = 0, prev = -1;
                for (int64_t wi = cmin >> 6; wi <= cmax >> 6; wi++) {
                    uint64_t z = occ[wi];
                    occ[wi] = 0;
                    for (; z != 0; z &= z - 1) {  /* every bin is emptied; a constant column's only that */
                        const int64_t cc = 64 * wi + __builtin_ctzll(z);
                        int64_t h = 0, hcount;
                        if (packed) {
                            h = hp[cc];
                            hp[cc] = 0;
                            hcount = h & 0x1FFFFF;
                        } else {
                            hcount = hn[cc];
                            hn[cc] = 0;
                        }
                        if (is_const) {
                            if (!packed)
                                for (int64_t c = 0; c < C; c++) hw[cc * C + c] = 0.0;
                            continue;
                        }
                        const float v = fv[cc];
                        if (prev >= 0 && v > fv[prev] + T32) {
                            if (nl >= msl && nn - nl >= msl) {
                                const double pr = packed ? proxy2(sl[0], sl[1], wl, stot[0], stot[1], wn, crit)
                                                         : proxy(sl, wl, stot, wn, sr, C, crit);
                                if (pr > best_proxy) {
                                    best_proxy = pr;
                                    best_f = f;
                                    best_thr = (double)fv[prev] / 2.0 + (double)v / 2.0;
                                    best_nl = nl;
                                    best_wl = wl;
                                    for (int64_t c = 0; c < C; c++) best_sl[c] = sl[c];
                                }
                            }
                        }
                        if (packed) {
                            const double hwt = (double)((h >> 21) & 0x1FFFFF), hwy = (double)(h >> 42);
                            sl[1] += hwy;
                            sl[0] += hwt - hwy;
                            wl += hwt;
                        } else {
                            for (int64_t c = 0; c < C; c++) {
                                sl[c] += hw[cc * C + c];
                                wl += hw[cc * C + c];
                                hw[cc * C + c] = 0.0;
                            }
                        }
                        nl += hcount;
                        prev = cc;
                    }
                }
            } else {
                /* sort the node's (code, position) keys */
                for (int64_t p = start; p < end; p++) keys[p - start] = (CODE(f, rows[p]) << 32) | (p - start);
                int64_t *ks = keys;
                if (nn <= 64) {
                    for (int64_t j = 1; j < nn; j++) {
                        const int64_t kj = ks[j];
                        int64_t i = j - 1;
                        while (i >= 0 && ks[i] > kj) {
                            ks[i + 1] = ks[i];
                            i--;
                        }
                        ks[i + 1] = kj;
                    }
                } else if (!wide) {
                    ks = radix_sort16(keys, t_sy, nn, rbin);
                } else {
                    qsort(ks, (size_t)nn, sizeof(int64_t), cmp_i64);
                }
                const int64_t c_first = ks[0] >> 32, c_last = ks[nn - 1] >> 32;
                if (fv[c_last] <= fv[c_first] + T32) {
                    constant = 1;
                } else {
                    for (int64_t c = 0; c < C; c++) sl[c] = 0.0;
                    double wl = 0.0;
                    float prevv = fv[c_first];
                    for (int64_t j = 0; j < nn; j++) {
                        const float v = fv[ks[j] >> 32];
                        if (v > prevv + T32) {
                            if (j >= msl && nn - j >= msl) {
                                const double pr = C == 2 ? proxy2(sl[0], sl[1], wl, stot[0], stot[1], wn, crit)
                                                         : proxy(sl, wl, stot, wn, sr, C, crit);
                                if (pr > best_proxy) {
                                    best_proxy = pr;
                                    best_f = f;
                                    best_thr = (double)prevv / 2.0 + (double)v / 2.0;
                                    best_nl = j;
                                    best_wl = wl;
                                    for (int64_t c = 0; c < C; c++) best_sl[c] = sl[c];
                                }
                            }
                        }
                        const int64_t q = start + (ks[j] & 0xFFFFFFFF);
                        if (packed) {
                            const double wq = (double)((pk[q] >> 21) & 0x1FFFFF), wyq = (double)(pk[q] >> 42);
                            sl[1] += wyq;
                            sl[0] += wq - wyq;
                            wl += wq;
                        } else {
                            sl[sy[q]] += sw[q];
                            wl += sw[q];
                        }
                        prevv = v;
                    }
                }
            }
            if (constant) {
                const int64_t tmp = features[f_j];
                features[f_j] = features[n_total];
                features[n_total] = tmp;
                n_found++;
                n_total++;
                continue;
            }
            f_i--;
            const int64_t tmp = features[f_i];
            features[f_i] = features[f_j];
            features[f_j] = tmp;
        }
        /* invariant on constant features for siblings and children (sklearn's two memcpy) */
        for (int64_t i = 0; i < n_known; i++) features[i] = const_f[i];
        for (int64_t i = n_known; i < n_total; i++) const_f[i] = features[i];
        if (best_f < 0) continue;
        const double wl = best_wl, wr = wn - wl;
        for (int64_t c = 0; c < C; c++) sr[c] = stot[c] - best_sl[c];
        double imp_l, imp_r;
        if (C == 2) {
            imp_l = impurity2(best_sl[0], best_sl[1], wl, crit);
            imp_r = impurity2(sr[0], sr[1], wr, crit);
        } else {
            imp_l = impurity(best_sl, C, wl, crit);
            imp_r = impurity(sr, C, wr, crit);
        }
        const double improvement = (wn / w_total) * (imp - (wr / wn * imp_r) - (wl / wn * imp_l));
        if (improvement + EPS < 0.0) continue;
        /* partition on x <= threshold: codes are ranks, so x <= threshold exactly when code <= c_split */
        const int64_t base = voff[best_f];
        int64_t lo = 0, hi = voff[best_f + 1] - base;
        while (lo < hi) {
            const int64_t mid = (lo + hi) / 2;
            if ((double)vals[base + mid] <= best_thr)
                lo = mid + 1;
            else
                hi = mid;
        }
        const int64_t c_split = lo - 1;
        const int64_t pos = start + best_nl;
        if (packed) {
            int64_t li = start, ri = 0;
            for (int64_t p = start; p < end; p++) {
                const int64_t r = rows[p], v = pk[p];
                const int64_t go = CODE(best_f, r) <= c_split;
                rows[li] = r;
                pk[li] = v;
                t_rows[ri] = r;
                t_pk[ri] = v;
                li += go;
                ri += 1 - go;
            }
            for (int64_t j = 0; j < ri; j++) {
                rows[pos + j] = t_rows[j];
                pk[pos + j] = t_pk[j];
            }
        } else {
            int64_t li = 0, ri = best_nl;
            for (int64_t p = start; p < end; p++) {
                const int64_t go = CODE(best_f, rows[p]) <= c_split;
                const int64_t d = ri + go * (li - ri);
                t_rows[d] = rows[p];
                t_sy[d] = sy[p];
                t_sw[d] = sw[p];
                li += go;
                ri += 1 - go;
            }
            for (int64_t p = start; p < end; p++) {
                rows[p] = t_rows[p - start];
                sy[p] = t_sy[p - start];
                sw[p] = t_sw[p - start];
            }
        }
        feat_o[node] = (int32_t)best_f;
        thr_o[node] = best_thr;
        csplit_o[node] = (int32_t)c_split;
        int need_l = 0, need_r = 0;
        if (use_bh) {
            need_l = searched(best_nl, depth + 1, max_depth, mss, msl,
                              impurity2(best_sl[0], best_sl[1], best_sl[0] + best_sl[1], crit));
            need_r = searched(nn - best_nl, depth + 1, max_depth, mss, msl,
                              impurity2(sr[0], sr[1], sr[0] + sr[1], crit));
        }
        if (need_l || need_r) {
            if (sp + 2 > hst_rows) {
                int64_t *grown = malloc(sizeof(int64_t) * (size_t)(2 * hst_rows * nb));
                if (grown == NULL) {
                    free(hst_own);
                    return -1;
                }
                memcpy(grown, hst, sizeof(int64_t) * (size_t)((sp + 1) * nb));
                free(hst_own);
                hst = hst_own = grown;
                hst_rows *= 2;
            }
            int64_t *hcur = hst + sp * nb, *hnext = hst + (sp + 1) * nb;
            const int left_small = best_nl <= nn - best_nl;
            memset(hs, 0, sizeof(int64_t) * nb);
            if (left_small)
                add_binary_hist(hs, rows, pk, start, pos, bptr, bidx, bfix, bk);
            else
                add_binary_hist(hs, rows, pk, pos, end, bptr, bidx, bfix, bk);
            if (need_l) {
                if (left_small)
                    memcpy(hnext, hs, sizeof(int64_t) * nb);
                else
                    for (int64_t i = 0; i < nbin; i++) hnext[i] = hcur[i] - hs[i];
            }
            if (need_r) {
                if (left_small)
                    for (int64_t i = 0; i < nbin; i++) hcur[i] -= hs[i];
                else
                    memcpy(hcur, hs, sizeof(int64_t) * nb);
            }
        }
        int64_t *s0 = st + sp * 6, *s1 = st + (sp + 1) * 6;
        s0[5] = need_r ? 1 : 0;
        s1[5] = need_l ? 1 : 0;
        s0[0] = pos;
        s0[1] = end;
        s0[2] = depth + 1;
        s0[3] = node * 2;
        s0[4] = n_total;
        s1[0] = start;
        s1[1] = pos;
        s1[2] = depth + 1;
        s1[3] = node * 2 + 1;
        s1[4] = n_total;
        for (int64_t c = 0; c < C; c++) {
            sts[sp * C + c] = sr[c];
            sts[(sp + 1) * C + c] = best_sl[c];
        }
        sp += 2;
    }
    free(hst_own);
    return n_nodes;
}

/* ---- the calls' typed interface (mirrored by ctypes Structures in _forest_native.py) ---------------------- */

/* What every tree of a call is grown from: the rank codes, the models' rows and the splitting rules. Tree t
 * (0 .. n_models * n_trees - 1) is tree t % n_trees of model t / n_trees and has seed tree_seed[t]. */
typedef struct {
    const void *codes;        /* (F, n) rank codes: uint16 (wide 0) or int32 (wide 1) */
    int64_t wide, n, F;
    const float *vals;        /* feature f's distinct values at vals[voff[f]:voff[f + 1]], ascending */
    const int64_t *voff;      /* (F + 1,) */
    const int64_t *yv;        /* (n,) labels */
    const int64_t *sub_rows;  /* model k trains on rows sub_rows[sub_ptr[k]:sub_ptr[k + 1]] */
    const int64_t *sub_ptr;   /* (n_models + 1,) */
    int64_t n_models, n_trees;
    const int64_t *tree_seed; /* (n_models * n_trees,) */
    const int64_t *n_boot, *mss, *msl;  /* (n_models,): bootstrap draws, min_samples_split, min_samples_leaf */
    int64_t bootstrap, max_features, max_depth, crit, maxnv;
    const int64_t *bslot;     /* (F,) slot of each two-valued feature, -1 for the others */
    const int64_t *bptr, *bidx;  /* CSR: the slots where row i holds code 1 */
    int64_t nbin, C, max_nodes, m_max;
    int64_t hst_rows;         /* node-sum rows a worker starts with (grown as a tree needs; 0: 64) */
} leakaudit_forest;

/* grow: trees t0 .. t1 - 1 into rows t - t0 of the breadth-first buffers. */
typedef struct {
    int64_t t0, t1;
    int32_t *feat;            /* (t1 - t0, max_nodes) */
    float *thr;               /* (t1 - t0, max_nodes) */
    int32_t *left, *leaf;     /* (t1 - t0, max_nodes) */
    double *value;            /* (t1 - t0, (max_nodes + 1) / 2, C) */
    int64_t *n_nodes, *depth; /* (t1 - t0,) */
    int64_t *counter;         /* the next tree to grow (shared by the workers, zero at the start) */
} leakaudit_forest_grown;

/* grow and query: every model's trees, grown group by group and queried on Xq as they are, then dropped. */
typedef struct {
    const float *Xq;          /* (nq, F) */
    int64_t nq, group;
    double *out;              /* (n_models, nq, C), zero on entry: each model's mean leaf fractions */
    int64_t bits;             /* 1: the rows move down as bitsets (P, pptr, qv, qvptr); 0: a row at a time */
    int64_t same;             /* 1: query row i is the forest's row i (uint16 codes[:, i]): with bits, a split's
                                 words of rows sent left are read off the codes (P, pptr, qv, qvptr unused) */
    const uint64_t *P;
    int64_t W;                /* words of a bitset: ceil(nq / 64) */
    const int64_t *pptr, *qvptr;
    const float *qv;
    int64_t *counter;         /* the next model (shared, zero at the start) */
} leakaudit_forest_query;

/* predict: the mean leaf fractions of every model's trees (a bank's flat arrays, breadth-first) on X. */
typedef struct {
    const float *X;           /* (n, F) */
    int64_t n, F, n_models, C, block;
    const int64_t *tree_ptr, *node_off, *leaf_off;
    const int32_t *feat;
    const float *thr;
    const int32_t *left, *leaf;
    const double *value;
    double *out;              /* (n_models, n, C), zero on entry */
    int64_t *counter;         /* the next (model, block of rows) item (shared, zero at the start) */
} leakaudit_forest_bank;

/* A worker's scratch for growing trees, allocated once a call and reused tree after tree. */
typedef struct {
    int64_t *i64, *mt, *hst, *hs, *features, *const_f, *st, *hn, *hp, *queue;
    uint64_t *occ;  /* a bit per code of the widest feature: the histogram's occupied bins (zero between uses) */
    uint64_t *modm; /* modm[d] = mod_magic(d), 1 <= d <= F: the feature draws' remainders without a division */
    double *f64, *sts, *cs, *hw;
    int64_t hst_rows;
    /* the CSR lists bptr / bidx as a table of bk uint8 slots a row (NULL when a slot or a row's count is too
       large): fixed-width rows, a sixteenth of bidx's bytes, read without bptr */
    uint8_t *bfix;
    int64_t bk;
    /* depth-first trees (group of them), max_nodes long; cso: a split's threshold as a rank code (the rows with
       codes <= cso go left) */
    int32_t *fo, *lo, *ro, *cso;
    double *th, *vo;
} work_t;

static void work_free(work_t *w) {
    free(w->i64); free(w->mt); free(w->hst); free(w->hs); free(w->features); free(w->const_f); free(w->st);
    free(w->hn); free(w->hp); free(w->queue); free(w->f64); free(w->sts); free(w->cs); free(w->hw);
    free(w->fo); free(w->lo); free(w->ro); free(w->th); free(w->vo); free(w->cso); free(w->bfix);
    free(w->occ); free(w->modm);
}

/* The scratch of _grow: group depth-first trees; returns 0, or -1 if memory ran out (nothing left allocated). */
static int work_alloc(work_t *w, const leakaudit_forest *f, int64_t group) {
    const int64_t nb = f->nbin + 1, mm = f->m_max > 0 ? f->m_max : 1, C = f->C;
    const int64_t mn = f->max_nodes, nv = f->maxnv > 0 ? f->maxnv : 1;
    memset(w, 0, sizeof(*w));
    w->hst_rows = f->hst_rows > 0 ? f->hst_rows : 64;
    w->i64 = malloc(sizeof(int64_t) * (size_t)(8 * mm));
    w->f64 = malloc(sizeof(double) * (size_t)(2 * mm));
    w->mt = malloc(sizeof(int64_t) * 625);
    w->hst = malloc(sizeof(int64_t) * (size_t)(w->hst_rows * nb));
    w->hs = malloc(sizeof(int64_t) * (size_t)nb);
    w->features = malloc(sizeof(int64_t) * (size_t)(f->F + 1));
    w->const_f = malloc(sizeof(int64_t) * (size_t)(f->F + 1));
    w->st = malloc(sizeof(int64_t) * (size_t)((mn + 1) * 6));
    w->sts = malloc(sizeof(double) * (size_t)((mn + 1) * C));
    w->cs = malloc(sizeof(double) * (size_t)(4 * C));
    w->hw = calloc((size_t)(nv * C), sizeof(double));  /* the histogram bins start at zero, and stay so */
    w->hn = calloc((size_t)nv, sizeof(int64_t));
    w->hp = calloc((size_t)nv, sizeof(int64_t));
    w->occ = calloc((size_t)((nv + 63) / 64), sizeof(uint64_t));
    w->modm = malloc(sizeof(uint64_t) * (size_t)(f->F + 1));
    w->queue = malloc(sizeof(int64_t) * (size_t)(2 * mn));
    w->fo = malloc(sizeof(int32_t) * (size_t)(group * mn));
    w->lo = malloc(sizeof(int32_t) * (size_t)(group * mn));
    w->ro = malloc(sizeof(int32_t) * (size_t)(group * mn));
    w->th = malloc(sizeof(double) * (size_t)(group * mn));
    w->vo = malloc(sizeof(double) * (size_t)(group * mn * C));
    w->cso = malloc(sizeof(int32_t) * (size_t)(group * mn));
    if (!w->i64 || !w->f64 || !w->mt || !w->hst || !w->hs || !w->features || !w->const_f || !w->st || !w->sts ||
        !w->cs || !w->hw || !w->hn || !w->hp || !w->occ || !w->queue || !w->fo || !w->lo || !w->ro || !w->th ||
        !w->vo || !w->cso || !w->modm) {
        work_free(w);
        return -1;
    }
    mod_magic_table(w->modm, f->F);
#ifndef LEAKAUDIT_FOREST_CSR  /* defined: the CSR lists always (benchmarks/kernel_ab.py forest-table) */
    if (f->nbin > 0 && f->nbin < 256) {
        int64_t kmax = 0;
        for (int64_t r = 0; r < f->n; r++) {
            const int64_t k = f->bptr[r + 1] - f->bptr[r];
            kmax = k > kmax ? k : kmax;
        }
        w->bk = (kmax + 3) / 4 * 4;
        if (w->bk <= 32) {
            w->bfix = malloc((size_t)(f->n > 0 ? f->n : 1) * (size_t)(w->bk > 0 ? w->bk : 1));
            if (w->bfix == NULL) {
                work_free(w);
                return -1;
            }
            for (int64_t r = 0; r < f->n; r++) {
                uint8_t *b = w->bfix + r * w->bk;
                int64_t j = 0;
                for (int64_t q = f->bptr[r]; q < f->bptr[r + 1]; q++) b[j++] = (uint8_t)f->bidx[q];
                for (; j < w->bk; j++) b[j] = (uint8_t)f->nbin;
            }
        }
    }
#endif
    return 0;
}

#define GROW_TAIL(g)                                                                                            \
    f->n, f->F, f->vals, f->voff, f->yv, f->sub_rows + f->sub_ptr[k], f->sub_ptr[k + 1] - f->sub_ptr[k],         \
        f->tree_seed[t], f->n_boot[k], f->bootstrap, f->max_features, f->max_depth, f->mss[k], f->msl[k],         \
        f->crit, f->bslot, f->bptr, f->bidx, f->nbin, w->fo + (g) * f->max_nodes, w->th + (g) * f->max_nodes,     \
        w->lo + (g) * f->max_nodes, w->ro + (g) * f->max_nodes, w->vo + (g) * f->max_nodes * f->C, f->C,          \
        f->m_max, w->i64, w->f64, w->mt, w->hst, w->hst_rows, w->hs, w->features, w->const_f, w->st, w->sts,      \
        w->cs, w->hw, w->hn, w->hp, w->cso + (g) * f->max_nodes, w->bfix, w->bk, w->occ, w->modm

static __attribute__((noinline)) int64_t grow_u16(const leakaudit_forest *f, work_t *w, int64_t t, int64_t g) {
    const int64_t k = t / f->n_trees;
    return grow(0, (const uint16_t *)f->codes, NULL, 0, GROW_TAIL(g));
}

static __attribute__((noinline)) int64_t grow_u16_spec(const leakaudit_forest *f, work_t *w, int64_t t, int64_t g) {
    const int64_t k = t / f->n_trees;
    return grow(1, (const uint16_t *)f->codes, NULL, 0, GROW_TAIL(g));
}

static __attribute__((noinline)) int64_t grow_i32(const leakaudit_forest *f, work_t *w, int64_t t, int64_t g) {
    const int64_t k = t / f->n_trees;
    return grow(0, NULL, (const int32_t *)f->codes, 1, GROW_TAIL(g));
}

/* Tree t, depth-first, into the worker's g-th tree scratch: its number of nodes, or -1 if memory ran out. */
static int64_t grow_tree(const leakaudit_forest *f, work_t *w, int64_t t, int64_t g) {
    if (f->wide) return grow_i32(f, w, t, g);
    const int64_t k = t / f->n_trees, m = f->sub_ptr[k + 1] - f->sub_ptr[k];
    const int64_t w_total = f->bootstrap ? f->n_boot[k] : m;
    if (f->C == 2 && f->crit == 0 && w_total < 2097152 && m < 2097152) return grow_u16_spec(f, w, t, g);
    return grow_u16(f, w, t, g);
}

/* The largest float32 <= the float64 t: for a float32 x, x <= t exactly when x <= round_down(t). */
static inline float round_down(double t) {
    float t32 = (float)t;
    if ((double)t32 > t) t32 = nextafterf(t32, -INFINITY);
    return t32;
}

/* The depth-first tree (n nodes, feature -1 at a leaf) renumbered breadth-first, so that a node's children are
 * left and left + 1: feature 0, threshold +inf and left = itself at a leaf (a row that overshoots its leaf stays
 * there), leaf = the leaf's row in value (leaves only) or -1, thresholds rounded down to float32 (the same
 * decisions for float32 inputs). Returns the tree's depth. queue: 2 n int64 of scratch. */
static int64_t to_breadth_first(const int32_t *feat_o, const double *thr_o, const int32_t *left_o,
                                const int32_t *right_o, const double *val_o, int64_t n, int64_t C, int32_t *feat,
                                float *thr, int32_t *left, int32_t *leaf, double *value, int64_t *queue) {
    int64_t *level = queue + n;
    queue[0] = 0;
    level[0] = 0;
    int64_t tail = 1, n_leaf = 0, dmax = 0;
    for (int64_t head = 0; head < n; head++) {
        const int64_t u = queue[head];
        if (level[head] > dmax) dmax = level[head];
        if (feat_o[u] >= 0) {
            feat[head] = feat_o[u];
            thr[head] = round_down(thr_o[u]);
            left[head] = (int32_t)tail;
            leaf[head] = -1;
            queue[tail] = left_o[u];
            queue[tail + 1] = right_o[u];
            level[tail] = level[tail + 1] = level[head] + 1;
            tail += 2;
        } else {
            feat[head] = 0;
            thr[head] = INFINITY;
            left[head] = (int32_t)head;
            leaf[head] = (int32_t)n_leaf;
            memcpy(value + n_leaf * C, val_o + u * C, sizeof(double) * (size_t)C);
            n_leaf++;
        }
    }
    return dmax;
}

/* Bit b of the result: whether c[b] <= t, for the rows 64 w + b < nq of a code column c (none read past nq). */
static inline uint64_t codes_le(const uint16_t *restrict c, int64_t w, int64_t nq, uint16_t t) {
    const uint16_t *x = c + 64 * w;
    const int64_t k = nq - 64 * w;
#if defined(__AVX512BW__)
    const __m512i tv = _mm512_set1_epi16((short)t);
    if (k >= 64)
        return (uint64_t)_mm512_cmple_epu16_mask(_mm512_loadu_si512(x), tv) |
               (uint64_t)_mm512_cmple_epu16_mask(_mm512_loadu_si512(x + 32), tv) << 32;
#elif defined(__AVX2__)
    if (k >= 64) {  /* unsigned x <= t as signed (x ^ 0x8000) > (t ^ 0x8000) negated, 16 lanes at a time */
        const __m256i bias = _mm256_set1_epi16((short)0x8000), tv = _mm256_set1_epi16((short)(t ^ 0x8000));
        uint64_t gt = 0;
        for (int h = 0; h < 2; h++) {
            const __m256i a = _mm256_cmpgt_epi16(
                _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + 32 * h)), bias), tv);
            const __m256i b = _mm256_cmpgt_epi16(
                _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + 32 * h + 16)), bias), tv);
            const __m256i ab = _mm256_permute4x64_epi64(_mm256_packs_epi16(a, b), 0xD8);
            gt |= (uint64_t)(uint32_t)_mm256_movemask_epi8(ab) << (32 * h);
        }
        return ~gt;
    }
#endif
    uint64_t m = 0;
    for (int64_t b = 0; b < (k < 64 ? k : 64); b++) m |= (uint64_t)(x[b] <= t) << b;
    return m;
}

/* On the grower's depth-first arrays (no breadth-first copy):
 * out[i] += the leaf fractions every query row i reaches in one tree, the rows moving down as bitsets of W words.
 * P/pptr/qv/qvptr come from leakaudit_forest_query_bitsets: at a split on f with threshold t, the rows sent left are
 * P[pptr[f] + j], j the number of f's distinct query values <= t (float32 x <= float64 t exactly when the query
 * does so in the bank, whose threshold is t rounded down to float32). Each row gets one leaf a tree, so the sums
 * are the bank's. When the query rows are the forest's rows (qc: its uint16 codes (F, nq), else NULL), a split's
 * rows sent left are those with code <= csplit[u] (the grower's partition test, so the same sets), read 64 at a time
 * off the split's code column instead of P. A stack slot holds a node's bitset (W words) and, after it, which of
 * those words are non-zero (NZ = ceil(W / 64) words of bits): a deep node holds a few rows, so a split and a leaf
 * visit only its non-zero words (the others are stale, never read). stk (stk_rows slots of W + NZ words) and stn
 * (stk_rows) are scratch; a deeper tree gets its own, freed here. Returns 0, or -1 if memory ran out. */
static int64_t query_tree_bits(const uint64_t *restrict P, int64_t W, const int64_t *restrict pptr,
                              const float *restrict qv, const int64_t *restrict qvptr, const int32_t *feat,
                              const double *thr, const int32_t *left, const int32_t *right, const double *value,
                              int64_t C, double *restrict out, int64_t nq, uint64_t *stk, int64_t stk_rows,
                              int64_t *stn, const uint16_t *restrict qc, const int32_t *restrict csplit) {
    if (nq == 0) return 0;
    const int64_t NZ = (W + 63) / 64, S = W + NZ;
    uint64_t *stk_own = NULL;
    int64_t *stn_own = NULL;
    for (int64_t w = 0; w < W; w++) stk[w] = ~(uint64_t)0;
    if (nq % 64) stk[W - 1] = ((uint64_t)1 << (nq % 64)) - 1;
    for (int64_t i = 0; i < NZ; i++) stk[W + i] = W - 64 * i >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (W - 64 * i)) - 1;
    stn[0] = 0;
    int64_t sp = 1;
    while (sp > 0) {
        sp--;
        const int64_t u = stn[sp];
        uint64_t *cur = stk + sp * S;
        const int64_t f = feat[u];
        if (f < 0) {
            const double *v = value + u * C;
            for (int64_t i = 0; i < NZ; i++) {
                for (uint64_t z = cur[W + i]; z != 0; z &= z - 1) {
                    const int64_t w = 64 * i + __builtin_ctzll(z);
                    if (C == 2) {
                        const double v0 = v[0], v1 = v[1];
                        for (uint64_t x = cur[w]; x != 0; x &= x - 1) {
                            double *o = out + 2 * (w * 64 + __builtin_ctzll(x));
                            o[0] += v0;
                            o[1] += v1;
                        }
                    } else {
                        for (uint64_t x = cur[w]; x != 0; x &= x - 1) {
                            double *o = out + C * (w * 64 + __builtin_ctzll(x));
                            for (int64_t c = 0; c < C; c++) o[c] += v[c];
                        }
                    }
                }
            }
            continue;
        }
        const uint64_t *mask = NULL;
        const uint16_t *col = NULL;
        uint16_t cth = 0;
        if (qc != NULL) {  /* the query rows are the training rows: x <= thr exactly when code <= csplit */
            col = qc + f * nq;
            cth = (uint16_t)csplit[u];
        } else {
            const double t = thr[u];
            int64_t lo = qvptr[f], hi = qvptr[f + 1];
            while (lo < hi) {
                const int64_t mid = (lo + hi) >> 1;
                if ((double)qv[mid] <= t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            mask = P + (pptr[f] + (lo - qvptr[f])) * W;
        }
        if (sp + 2 > stk_rows) {
            const int64_t rows = 2 * stk_rows;
            uint64_t *s2 = malloc(sizeof(uint64_t) * (size_t)(rows * S));
            int64_t *n2 = malloc(sizeof(int64_t) * (size_t)rows);
            if (s2 == NULL || n2 == NULL) {
                free(s2);
                free(n2);
                free(stk_own);
                free(stn_own);
                return -1;
            }
            memcpy(s2, stk, sizeof(uint64_t) * (size_t)((sp + 1) * S));
            memcpy(n2, stn, sizeof(int64_t) * (size_t)(sp + 1));
            free(stk_own);
            free(stn_own);
            stk = stk_own = s2;
            stn = stn_own = n2;
            stk_rows = rows;
            cur = stk + sp * S;
        }
        uint64_t *nxt = cur + S;
        uint64_t anyl = 0, anyr = 0;
        for (int64_t i = 0; i < NZ; i++) {  /* right child's rows into this slot, left child's into the next */
            uint64_t lm = 0, rm = 0;
            for (uint64_t z = cur[W + i]; z != 0; z &= z - 1) {
                const int b = __builtin_ctzll(z);
                const int64_t w = 64 * i + b;
                const uint64_t s = cur[w], mw = col != NULL ? codes_le(col, w, nq, cth) : mask[w];
                const uint64_t lw = s & mw, rw = s & ~mw;
                cur[w] = rw;
                nxt[w] = lw;
                lm |= (uint64_t)(lw != 0) << b;
                rm |= (uint64_t)(rw != 0) << b;
            }
            cur[W + i] = rm;
            nxt[W + i] = lm;
            anyl |= lm;
            anyr |= rm;
        }
        if (anyr != 0) {
            stn[sp++] = right[u];
            if (anyl != 0) stn[sp++] = left[u];
        } else if (anyl != 0) {
            memcpy(cur, nxt, sizeof(uint64_t) * (size_t)S);
            stn[sp++] = left[u];
        }
    }
    free(stk_own);
    free(stn_own);
    return 0;
}

static inline int64_t next_task(int64_t *counter) {
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* A worker growing trees: it takes trees o->t0 + (counter++) until o->t1 (any number of workers may share the
 * counter; which one grows a tree does not change the tree) and writes each, breadth-first, into its row of the
 * buffers. Returns 0, or -1 if memory ran out (the other workers then stop after their current tree). */
int64_t leakaudit_forest_grow(const leakaudit_forest *f, const leakaudit_forest_grown *o) {
    work_t w;
    if (work_alloc(&w, f, 1) < 0) return -1;
    const int64_t mn = f->max_nodes, ml = (mn + 1) / 2, C = f->C, nt = o->t1 - o->t0;
    int64_t rc = 0;
    for (;;) {
        const int64_t r = next_task(o->counter);
        if (r >= nt) break;
        const int64_t n = grow_tree(f, &w, o->t0 + r, 0);
        if (n < 0) {
            __atomic_store_n(o->counter, nt, __ATOMIC_RELAXED);
            rc = -1;
            break;
        }
        o->n_nodes[r] = n;
        o->depth[r] = to_breadth_first(w.fo, w.th, w.lo, w.ro, w.vo, n, C, o->feat + r * mn, o->thr + r * mn,
                                       o->left + r * mn, o->leaf + r * mn, o->value + r * ml * C, w.queue);
    }
    work_free(&w);
    return rc;
}

/* out[i] += the leaf fractions rows i0 .. i1 - 1 of X reach in one breadth-first tree (arrays from its first node
 * and first leaf). Eight rows descend together (independent chains of loads: a step's two dependent loads are
 * hidden by the other rows) until all eight reached a leaf; leaves step to themselves. */
static void add_tree(const float *restrict X, int64_t F, int64_t i0, int64_t i1, const int32_t *restrict feat,
                     const float *restrict thr, const int32_t *restrict left, const int32_t *restrict leaf,
                     const double *restrict value, int64_t C, double *restrict out) {
    int64_t i = i0;
    for (; i + 8 <= i1; i += 8) {
        const float *x0 = X + i * F, *x1 = x0 + F, *x2 = x1 + F, *x3 = x2 + F;
        const float *x4 = x3 + F, *x5 = x4 + F, *x6 = x5 + F, *x7 = x6 + F;
        uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
        do {
#define STEP(a, x) a = (uint64_t)left[a] + (x[feat[a]] > thr[a])
            STEP(a0, x0); STEP(a1, x1); STEP(a2, x2); STEP(a3, x3);
            STEP(a4, x4); STEP(a5, x5); STEP(a6, x6); STEP(a7, x7);
#undef STEP
        } while ((leaf[a0] | leaf[a1] | leaf[a2] | leaf[a3] | leaf[a4] | leaf[a5] | leaf[a6] | leaf[a7]) < 0);
        const uint64_t a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
        for (int r = 0; r < 8; r++) {
            const double *v = value + (int64_t)leaf[a[r]] * C;
            double *o = out + (i + r) * C;
            for (int64_t c = 0; c < C; c++) o[c] += v[c];
        }
    }
    for (; i < i1; i++) {
        const float *x = X + i * F;
        uint32_t u = 0;
        while (leaf[u] < 0) u = (uint32_t)left[u] + (x[feat[u]] > thr[u]);
        const double *v = value + (int64_t)leaf[u] * C;
        double *o = out + i * C;
        for (int64_t c = 0; c < C; c++) o[c] += v[c];
    }
}

/* out[i] += the leaf fractions row i of X reaches in one depth-first tree (the grower's arrays), for i0 .. i1 - 1:
 * a float32 x goes left when x <= the float64 threshold, as it does in the bank (threshold rounded down). */
static void add_tree_depth_first(const float *restrict X, int64_t F, int64_t i0, int64_t i1,
                                 const int32_t *restrict feat, const double *restrict thr,
                                 const int32_t *restrict left, const int32_t *restrict right,
                                 const double *restrict value, int64_t C, double *restrict out) {
    for (int64_t i = i0; i < i1; i++) {
        const float *x = X + i * F;
        int64_t u = 0;
        while (feat[u] >= 0) u = (double)x[feat[u]] <= thr[u] ? left[u] : right[u];
        const double *v = value + u * C;
        double *o = out + i * C;
        for (int64_t c = 0; c < C; c++) o[c] += v[c];
    }
}

/* A worker growing and querying whole models: it takes models (counter++) until n_models, grows each model's
 * trees q->group at a time and adds their leaf fractions on the query rows (as bitsets, or a block of rows at a
 * time), tree after tree, then divides by the number of trees: the additions of leakaudit_forest_predict on the
 * bank, in the same order, so the same numbers. Returns 0, or -1 if memory ran out. */
int64_t leakaudit_forest_grow_query(const leakaudit_forest *f, const leakaudit_forest_query *q) {
    const int64_t group = q->group > 0 ? q->group : 1;
    work_t w;
    if (work_alloc(&w, f, group) < 0) return -1;
    const int64_t mn = f->max_nodes, C = f->C, T = f->n_trees, nq = q->nq, stk_rows = 66;
    const int64_t W = q->bits ? q->W : 1;
    const uint16_t *qc = q->bits && q->same && !f->wide && nq == f->n ? (const uint16_t *)f->codes : NULL;
    uint64_t *stk = malloc(sizeof(uint64_t) * (size_t)(stk_rows * (W + (W + 63) / 64)));
    int64_t *stn = malloc(sizeof(int64_t) * (size_t)stk_rows);
    int64_t rc = stk != NULL && stn != NULL ? 0 : -1;
    while (rc == 0) {
        const int64_t k = next_task(q->counter);
        if (k >= f->n_models) break;
        double *out = q->out + k * nq * C;
        for (int64_t g0 = 0; g0 < T && rc == 0; g0 += group) {
            const int64_t g1 = g0 + group < T ? g0 + group : T;
            for (int64_t j = g0; j < g1; j++) {
                if (grow_tree(f, &w, k * T + j, j - g0) < 0) {
                    rc = -1;
                    break;
                }
            }
            if (rc < 0) break;
            if (q->bits) {
                for (int64_t g = 0; g < g1 - g0 && rc == 0; g++)  /* the group's trees, the bitsets in cache */
                    rc = query_tree_bits(q->P, q->W, q->pptr, q->qv, q->qvptr, w.fo + g * mn, w.th + g * mn,
                                         w.lo + g * mn, w.ro + g * mn, w.vo + g * mn * C, C, out, nq, stk,
                                         stk_rows, stn, qc, w.cso + g * mn);
            } else {
                for (int64_t i0 = 0; i0 < nq; i0 += 64) {  /* a block of rows stays in cache across the group */
                    const int64_t i1 = i0 + 64 < nq ? i0 + 64 : nq;
                    for (int64_t g = 0; g < g1 - g0; g++)
                        add_tree_depth_first(q->Xq, f->F, i0, i1, w.fo + g * mn, w.th + g * mn, w.lo + g * mn,
                                             w.ro + g * mn, w.vo + g * mn * C, C, out);
                }
            }
        }
        for (int64_t i = 0; i < nq * C; i++) out[i] /= (double)T;
    }
    if (rc < 0) __atomic_store_n(q->counter, f->n_models, __ATOMIC_RELAXED);
    free(stk);
    free(stn);
    work_free(&w);
    return rc;
}

/* A worker querying a bank: it takes (model, block of rows) items (counter++) and sets out[k, rows] to the mean
 * over the model's trees, added in order, of the leaf fractions (as RandomForestClassifier.predict_proba). */
int64_t leakaudit_forest_predict(const leakaudit_forest_bank *b) {
    const int64_t nb = (b->n + b->block - 1) / b->block, C = b->C;
    for (;;) {
        const int64_t j = next_task(b->counter);
        if (j >= b->n_models * nb) break;
        const int64_t k = j / nb, i0 = (j % nb) * b->block;
        const int64_t i1 = i0 + b->block < b->n ? i0 + b->block : b->n;
        double *out = b->out + k * b->n * C;
        for (int64_t t = b->tree_ptr[k]; t < b->tree_ptr[k + 1]; t++) {
            const int64_t o = b->node_off[t];
            add_tree(b->X, b->F, i0, i1, b->feat + o, b->thr + o, b->left + o, b->leaf + o,
                     b->value + b->leaf_off[t] * C, C, out);
        }
        const double T = (double)(b->tree_ptr[k + 1] - b->tree_ptr[k]);
        for (int64_t i = i0 * C; i < i1 * C; i++) out[i] /= T;
    }
    return 0;
}

/* Pack grown trees (rows 0 .. nt - 1 of g's buffers) into a bank's flat arrays at node_off[t] / leaf_off[t]
 * (a binary tree of n nodes has (n + 1) / 2 leaves). */
int64_t leakaudit_forest_pack(const leakaudit_forest_grown *g, int64_t max_nodes, const leakaudit_forest_bank *b) {
    const int64_t ml = (max_nodes + 1) / 2, C = b->C, nt = g->t1 - g->t0;
    for (int64_t t = 0; t < nt; t++) {
        const int64_t n = g->n_nodes[t], o = b->node_off[t], nl = (n + 1) / 2;
        memcpy((int32_t *)b->feat + o, g->feat + t * max_nodes, sizeof(int32_t) * (size_t)n);
        memcpy((float *)b->thr + o, g->thr + t * max_nodes, sizeof(float) * (size_t)n);
        memcpy((int32_t *)b->left + o, g->left + t * max_nodes, sizeof(int32_t) * (size_t)n);
        memcpy((int32_t *)b->leaf + o, g->leaf + t * max_nodes, sizeof(int32_t) * (size_t)n);
        memcpy((double *)b->value + b->leaf_off[t] * C, g->value + t * ml * C, sizeof(double) * (size_t)(nl * C));
    }
    return 0;
}

/* The query rows Xq (nq, F) as bitsets for query_tree_bits. order (F, nq): each column's rows in ascending order
 * of value; qvptr (F + 1,): the cumulative numbers of distinct values of the columns. Writes qv (feature f's
 * distinct values at qv[qvptr[f]:qvptr[f + 1]], ascending), pptr[f] = qvptr[f] + f and P (zeroed on entry,
 * pptr[F] rows of W words; bit i of word i / 64 is row i): P[pptr[f] + j] holds the rows whose value of f is
 * <= the j-th smallest (j = 1 .. u_f), P[pptr[f]] none. Returns 0, or -1 if qvptr counts fewer values. */
int64_t leakaudit_forest_query_bitsets(const float *Xq, int64_t nq, int64_t F, const int64_t *order,
                                       const int64_t *qvptr, uint64_t *P, int64_t W, int64_t *pptr, float *qv) {
    for (int64_t f = 0; f <= F; f++) pptr[f] = qvptr[f] + f;
    for (int64_t f = 0; f < F; f++) {
        const int64_t *ord = order + f * nq;
        int64_t row = pptr[f], pos = qvptr[f], i = 0;
        while (i < nq) {
            if (pos == qvptr[f + 1]) return -1;
            const float v = Xq[ord[i] * F + f];
            qv[pos++] = v;
            row++;
            memcpy(P + row * W, P + (row - 1) * W, sizeof(uint64_t) * (size_t)W);
            while (i < nq && Xq[ord[i] * F + f] == v) {
                const int64_t r = ord[i++];
                P[row * W + (r >> 6)] |= (uint64_t)1 << (r & 63);
            }
        }
    }
    return 0;
}

/* out[k * T + j] = the j-th draw of RandomState(seeds[k]).randint(0, 2**31 - 1), j < T: the seeds
 * RandomForestClassifier(random_state=seeds[k]) hands its T trees (each seed in [0, 2**32 - 1]). */
int64_t leakaudit_forest_tree_seeds(const int64_t *seeds, int64_t K, int64_t T, int64_t *out) {
    int64_t mt[625];
    for (int64_t k = 0; k < K; k++) {
        mt_init(mt, seeds[k]);
        for (int64_t j = 0; j < T; j++) out[k * T + j] = mt_bounded(mt, 0x7FFFFFFE);
    }
    return 0;
}

/* sizeof each struct, so that the ctypes side can check it declares the same layout. */
int64_t leakaudit_forest_struct_size(int64_t which) {
    switch (which) {
    case 0: return (int64_t)sizeof(leakaudit_forest);
    case 1: return (int64_t)sizeof(leakaudit_forest_grown);
    case 2: return (int64_t)sizeof(leakaudit_forest_query);
    case 3: return (int64_t)sizeof(leakaudit_forest_bank);
    default: return -1;
    }
}
