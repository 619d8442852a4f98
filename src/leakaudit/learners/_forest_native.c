/* The native (C) twin of _forest_numba._grow_tree: one scikit-learn CART tree, grown depth-first.
 *
 * A line-by-line port of the numba kernel (see _forest_numba.py for the algorithm and for why the trees are
 * scikit-learn's): the same random streams, the same order of features drawn, the same sums in the same order,
 * so the same tree, node for node (tests/learners/test_forest.py compares the two kernels and scikit-learn).
 * Compiled with -ffp-contract=off: a fused multiply-add would round differently from numba's separate ones.
 * What C adds is only the code generation: no negative-index wrap-around on every array access, and the hot
 * variables kept in registers (numba's version of this function spills them around every loop).
 *
 * Arrays are C-contiguous; "n" is the row stride of codes (F, n); scratch comes from _forest_numba._grow_work.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define T32 1e-7f
#define EPS 2.220446049250313e-16

static inline uint32_t xorshift(uint32_t s) {  /* sklearn our_rand_r's state update */
    if (s == 0) s = 1;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

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

static inline void add_binary_hist(int64_t *restrict h, const int64_t *restrict rows, const int64_t *restrict pk,
                                   int64_t p0, int64_t p1, const int64_t *restrict bptr,
                                   const int64_t *restrict bidx) {
    for (int64_t p = p0; p < p1; p++) {
        int64_t r = rows[p], v = pk[p];
        for (int64_t j = bptr[r]; j < bptr[r + 1]; j++) h[bidx[j]] += v;
    }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

#define CODE(f, r) (wide ? (int64_t)c32[(f) * n + (r)] : (int64_t)c16[(f) * n + (r)])

static inline __attribute__((always_inline)) int64_t grow(
    const uint16_t *restrict c16, const int32_t *restrict c32, const int wide, int64_t n, int64_t F,
    const float *restrict vals, const int64_t *restrict voff, const int64_t *restrict yv,
    const int64_t *restrict rows_sub, int64_t m, int64_t seed, int64_t n_boot, int64_t bootstrap,
    int64_t max_features, int64_t max_depth, int64_t mss, int64_t msl, int64_t crit,
    const int64_t *restrict bslot, const int64_t *restrict bptr, const int64_t *restrict bidx, int64_t nbin,
    int32_t *restrict feat_o, double *restrict thr_o, int32_t *restrict left_o, int32_t *restrict right_o,
    double *restrict val_o, int64_t C, int64_t m_max, int64_t *restrict i64, double *restrict f64,
    int64_t *restrict mt, int64_t *hst0, int64_t hst_rows, int64_t *restrict hs, int64_t *restrict features,
    int64_t *restrict const_f, int64_t *restrict st, double *restrict sts, double *restrict cs,
    double *restrict hw, int64_t *restrict hn, int64_t *restrict hp) {
    int64_t *restrict cnt = i64, *restrict rows = i64 + m_max, *restrict sy = i64 + 2 * m_max;
    int64_t *restrict pk = i64 + 3 * m_max, *restrict keys = i64 + 4 * m_max, *restrict t_rows = i64 + 5 * m_max;
    int64_t *restrict t_sy = i64 + 6 * m_max, *restrict t_pk = i64 + 7 * m_max;
    double *restrict sw = f64, *restrict t_sw = f64 + m_max;
    double *restrict stot = cs, *restrict sl = cs + C, *restrict sr = cs + 2 * C, *restrict best_sl = cs + 3 * C;
    const int64_t nb = nbin > 0 ? nbin : 1;
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
    const int packed = C == 2 && w_total < 2097152.0 && m < 2097152;
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
        add_binary_hist(hst, rows, pk, 0, ns, bptr, bidx);
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
            int64_t f_j = n_drawn + (int64_t)((rsu & 0x7FFFFFFFu) % (uint32_t)(f_i - n_found - n_drawn));
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
            } else if (nvf <= 16 * nn) {
                /* class histogram over the node's codes, bins scanned in ascending order */
                int64_t cmin = nvf, cmax = -1;
                if (packed) {
                    for (int64_t p = start; p < end; p++) {
                        const int64_t cc = CODE(f, rows[p]);
                        hp[cc] += pk[p];
                        cmin = cc < cmin ? cc : cmin;
                        cmax = cc > cmax ? cc : cmax;
                    }
                } else {
                    for (int64_t p = start; p < end; p++) {
                        const int64_t cc = CODE(f, rows[p]);
                        hw[cc * C + sy[p]] += sw[p];
                        hn[cc] += 1;
                        cmin = cc < cmin ? cc : cmin;
                        cmax = cc > cmax ? cc : cmax;
                    }
                }
                if (fv[cmax] <= fv[cmin] + T32) {
                    constant = 1;
                    for (int64_t cc = cmin; cc <= cmax; cc++) {
                        if (packed) {
                            hp[cc] = 0;
                        } else {
                            hn[cc] = 0;
                            for (int64_t c = 0; c < C; c++) hw[cc * C + c] = 0.0;
                        }
                    }
                } else {
                    for (int64_t c = 0; c < C; c++) sl[c] = 0.0;
                    double wl = 0.0;
                    int64_t nl = 0, prev = -1;
                    for (int64_t cc = cmin; cc <= cmax; cc++) {
                        int64_t h = 0, hcount;
                        if (packed) {
                            h = hp[cc];
                            if (h == 0) continue;
                            hcount = h & 0x1FFFFF;
                        } else {
                            hcount = hn[cc];
                            if (hcount == 0) continue;
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
                            hp[cc] = 0;
                        } else {
                            for (int64_t c = 0; c < C; c++) {
                                sl[c] += hw[cc * C + c];
                                wl += hw[cc * C + c];
                                hw[cc * C + c] = 0.0;
                            }
                            hn[cc] = 0;
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
                add_binary_hist(hs, rows, pk, start, pos, bptr, bidx);
            else
                add_binary_hist(hs, rows, pk, pos, end, bptr, bidx);
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

#define GROW_ARGS                                                                                                \
    int64_t n, int64_t F, const float *vals, const int64_t *voff, const int64_t *yv, const int64_t *rows_sub,   \
        int64_t m, int64_t seed, int64_t n_boot, int64_t bootstrap, int64_t max_features, int64_t max_depth,     \
        int64_t mss, int64_t msl, int64_t crit, const int64_t *bslot, const int64_t *bptr, const int64_t *bidx,  \
        int64_t nbin, int32_t *feat_o, double *thr_o, int32_t *left_o, int32_t *right_o, double *val_o,          \
        int64_t C, int64_t m_max, int64_t *i64, double *f64, int64_t *mt, int64_t *hst, int64_t hst_rows,        \
        int64_t *hs, int64_t *features, int64_t *const_f, int64_t *st, double *sts, double *cs, double *hw,      \
        int64_t *hn, int64_t *hp
#define GROW_CALL                                                                                                \
    n, F, vals, voff, yv, rows_sub, m, seed, n_boot, bootstrap, max_features, max_depth, mss, msl, crit, bslot, \
        bptr, bidx, nbin, feat_o, thr_o, left_o, right_o, val_o, C, m_max, i64, f64, mt, hst, hst_rows, hs,      \
        features, const_f, st, sts, cs, hw, hn, hp

/* One tree, codes uint16 (F, n); returns its number of nodes, -1 if memory ran out. */
int64_t leakaudit_grow_tree_u16(const uint16_t *codes, GROW_ARGS) {
    return grow(codes, NULL, 0, GROW_CALL);
}

/* One tree, codes int32 (F, n). */
int64_t leakaudit_grow_tree_i32(const int32_t *codes, GROW_ARGS) {
    return grow(NULL, codes, 1, GROW_CALL);
}

/* The C twin of _forest_numba._add_tree_bits, on the grower's depth-first arrays (no breadth-first copy):
 * out[i] += the leaf fractions every query row i reaches in one tree, the rows moving down as bitsets of W words.
 * P/pptr/qv/qvptr come from _forest_numba.query_bitsets: at a split on f with threshold t, the rows sent left are
 * P[pptr[f] + j], j the number of f's distinct query values <= t (float32 x <= float64 t exactly when the query
 * does so in the bank, whose threshold is t rounded down to float32). Each row gets one leaf a tree, so the sums
 * are the bank's. stk (stk_rows x W) and stn (stk_rows) are scratch; a deeper tree gets its own, freed here.
 * Returns 0, or -1 if memory ran out. */
int64_t leakaudit_query_tree_bits(const uint64_t *restrict P, int64_t W, const int64_t *restrict pptr,
                                  const float *restrict qv, const int64_t *restrict qvptr, const int32_t *feat,
                                  const double *thr, const int32_t *left, const int32_t *right, const double *value,
                                  int64_t C, double *restrict out, int64_t nq, uint64_t *stk, int64_t stk_rows,
                                  int64_t *stn) {
    if (nq == 0) return 0;
    uint64_t *stk_own = NULL;
    int64_t *stn_own = NULL;
    for (int64_t w = 0; w < W; w++) stk[w] = ~(uint64_t)0;
    if (nq % 64) stk[W - 1] = ((uint64_t)1 << (nq % 64)) - 1;
    stn[0] = 0;
    int64_t sp = 1;
    while (sp > 0) {
        sp--;
        const int64_t u = stn[sp];
        uint64_t *cur = stk + sp * W;
        const int64_t f = feat[u];
        if (f < 0) {
            const double *v = value + u * C;
            if (C == 2) {
                const double v0 = v[0], v1 = v[1];
                for (int64_t w = 0; w < W; w++) {
                    for (uint64_t x = cur[w]; x != 0; x &= x - 1) {
                        double *o = out + 2 * (w * 64 + __builtin_ctzll(x));
                        o[0] += v0;
                        o[1] += v1;
                    }
                }
            } else {
                for (int64_t w = 0; w < W; w++) {
                    for (uint64_t x = cur[w]; x != 0; x &= x - 1) {
                        double *o = out + C * (w * 64 + __builtin_ctzll(x));
                        for (int64_t c = 0; c < C; c++) o[c] += v[c];
                    }
                }
            }
            continue;
        }
        const double t = thr[u];
        int64_t lo = qvptr[f], hi = qvptr[f + 1];
        while (lo < hi) {
            const int64_t mid = (lo + hi) >> 1;
            if ((double)qv[mid] <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        const uint64_t *mask = P + (pptr[f] + (lo - qvptr[f])) * W;
        if (sp + 2 > stk_rows) {
            const int64_t rows = 2 * stk_rows;
            uint64_t *s2 = malloc(sizeof(uint64_t) * (size_t)(rows * W));
            int64_t *n2 = malloc(sizeof(int64_t) * (size_t)rows);
            if (s2 == NULL || n2 == NULL) {
                free(s2);
                free(n2);
                free(stk_own);
                free(stn_own);
                return -1;
            }
            memcpy(s2, stk, sizeof(uint64_t) * (size_t)((sp + 1) * W));
            memcpy(n2, stn, sizeof(int64_t) * (size_t)(sp + 1));
            free(stk_own);
            free(stn_own);
            stk = stk_own = s2;
            stn = stn_own = n2;
            stk_rows = rows;
            cur = stk + sp * W;
        }
        uint64_t *nxt = cur + W;
        uint64_t anyl = 0, anyr = 0;
        for (int64_t w = 0; w < W; w++) {  /* right child's rows into this slot, left child's into the next */
            const uint64_t s = cur[w], mw = mask[w];
            const uint64_t lw = s & mw, rw = s & ~mw;
            cur[w] = rw;
            nxt[w] = lw;
            anyl |= lw;
            anyr |= rw;
        }
        if (anyr != 0) {
            stn[sp++] = right[u];
            if (anyl != 0) stn[sp++] = left[u];
        } else if (anyl != 0) {
            memcpy(cur, nxt, sizeof(uint64_t) * (size_t)W);
            stn[sp++] = left[u];
        }
    }
    free(stk_own);
    free(stn_own);
    return 0;
}

/* The next task of a shared counter (an atomic fetch-and-add): the forest's workers take models one by one, so
 * a thread the machine slows takes fewer of them. Which thread grows a model does not change its numbers. */
int64_t leakaudit_next_task(int64_t *counter) {
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}
