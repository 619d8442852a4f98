/* The gradient-boosting kernel: scikit-learn's GradientBoostingClassifier (version 1.9, log loss) trained and queried.
 *
 * leakaudit_gb_fit() trains one model as sklearn/ensemble/_gb.py does, stage after stage:
 *
 *  - raw predictions start at the caller's init values (the prior's logit, as the DummyClassifier init gives);
 *  - each stage takes the negative gradient once (y - expit(raw), or y_k - softmax_k(raw) with K classes, the
 *    formulas of sklearn/_loss/_loss.pyx.tp), then grows one regression tree per class on it;
 *  - a tree is scikit-learn's DecisionTreeRegressor(criterion="squared_error", splitter="best") grown depth-first
 *    (left child first): the splitter's stream is its 32-bit xorshift (our_rand_r) seeded with the caller's seed
 *    for the tree (RandomState(random_state).randint(0, 2**31 - 1), one draw a tree in order), driving the same
 *    Fisher-Yates draw of candidate features over the same features / constant_features arrays; the proxy
 *    improvement is sum_left^2 / n_left + sum_right^2 / n_right, the first strictly better split kept; thresholds
 *    are the midpoints of adjacent float32 values (values closer than FEATURE_THRESHOLD, 1e-7 in float32, never
 *    split apart); a node is a leaf at max_depth, below min_samples_split or 2 min_samples_leaf rows, or at
 *    impurity <= machine epsilon;
 *  - every leaf's value is then replaced by one Newton step, mean(neg_g) / mean(p (1 - p)) (times (K - 1) / K
 *    with K classes; 0 where the denominator is below 1e-150), and the raw predictions move by learning_rate times
 *    it.
 *
 * Where it differs from scikit-learn: a feature's candidate splits are read from a histogram of the node's rows over
 * the feature's rank codes (its distinct float32 values, ascending) instead of a sort, and a two-valued feature
 * (a one-hot column) from the node's sums over the rows holding its upper value; both give the same candidate
 * thresholds in the same order and the same sums up to the order of floating-point additions. So the trees are
 * scikit-learn's except where candidate splits tie in exact arithmetic (scikit-learn's pick then depends on the
 * order its sort left the rows in, which this kernel does not reproduce): gradient_boosting.py says where.
 *
 * The query rows (rows of the same coded pool) descend every tree as it is grown, so a call returns their raw
 * predictions, and, where the caller gives node buffers, the trees themselves (for a model kept to be queried later,
 * leakaudit_gb_predict). Training rows are unweighted (scikit-learn's sample_weight of ones). One call trains one
 * model and allocates its own work buffers: the Python side runs calls on several threads (ctypes releases the GIL).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_sklearn_rand.h"

#define T32 1e-7f
#define EPS 2.220446049250313e-16

typedef struct {
    /* the coded pool: codes[f * n + r] is row r's rank among feature f's distinct values vals[voff[f] ...] */
    const int32_t *codes;
    int64_t n, F;
    /* the model's features: pool columns fmap[0 .. F) (NULL: the pool's columns 0 .. F) */
    const int64_t *fmap;
    const float *vals;
    const int64_t *voff;
    int64_t maxnv;
    /* two-valued features: bslot[f] (-1 for others); pool row r's features at their upper value: bidx[bptr[r] ...] */
    const int64_t *bslot, *bptr, *bidx;
    int64_t nbin;
    /* the model's training rows (pool rows) and their classes 0 .. C - 1 */
    const int64_t *rows, *y;
    int64_t m, C;
    /* the recipe: K trees a stage (1 with two classes, else C) */
    int64_t K, n_stages, max_depth, mss, msl, max_features;
    double min_weight_leaf, learning_rate;
    const double *raw0;          /* (K,) the initial raw prediction */
    const uint32_t *seeds;       /* (n_stages * K,) the trees' splitter seeds */
    /* the query rows (pool rows) and their raw predictions (nq, K), filled */
    const int64_t *qrows;
    int64_t nq;
    double *qraw;
    /* optional: the trees, cap nodes each, in scikit-learn's node order (NULL: not kept) */
    int64_t cap;
    int32_t *feat, *left, *right;
    double *thr, *value;
    int64_t *n_nodes;
} leakaudit_gb;

int64_t leakaudit_gb_struct_size(void) { return (int64_t)sizeof(leakaudit_gb); }


/* y - expit(raw): minus sklearn's cgradient_half_binomial */
static inline double neg_grad_binomial(double y, double raw) {
    if (raw > -37) {
        const double e = exp(-raw);
        return -(((1 - y) - y * e) / (1 + e));
    }
    return -(exp(raw) - y);
}

typedef struct {
    int64_t start, end, depth, parent, is_left, n_const;
    double impurity;
} entry;

typedef struct {
    double proxy, thr;
    int64_t f;
} best_split;

/* The split of a node's nl rows with values <= lo_v (target sum sl) from its nn - nl rows with values >= hi_v, kept
 * when it respects the leaf rules and its proxy improvement is strictly the best so far (node_split_best's test). */
static inline void consider(best_split *b, int64_t f, int64_t nl, int64_t nn, double sl, double sum, float lo_v,
                            float hi_v, int64_t msl, double mwl) {
    const int64_t nr = nn - nl;
    if (nl < msl || nr < msl || (double)nl < mwl || (double)nr < mwl) return;
    const double sr = sum - sl;
    const double proxy = sl * sl / (double)nl + sr * sr / (double)nr;
    if (proxy > b->proxy) {
        b->proxy = proxy;
        double t = lo_v / 2.0 + hi_v / 2.0;
        if (t == hi_v || isinf(t)) t = lo_v;
        b->thr = t;
        b->f = f;
    }
}

/* Grow one tree on targets g (training rows in samples[0 .. m)), its nodes written to feat .. right (thresholds,
 * node ranges). Returns the number of nodes, or -1 when out of memory. */
static int64_t grow(const leakaudit_gb *a, const double *g, int64_t *samples, int64_t *tmp, uint32_t seed,
                    int64_t *features, int64_t *const_f, int64_t *bcnt, double *bsum, int32_t *hcnt, double *hsum,
                    entry *stack, int32_t *feat, double *thr, int32_t *left, int32_t *right, int64_t *nstart,
                    int64_t *nend, int64_t cap, const uint64_t *modm) {
    const int64_t F = a->F, n = a->n, m = a->m;
    const int64_t mss = a->mss, msl = a->msl, max_depth = a->max_depth;
    const double mwl = a->min_weight_leaf;
    for (int64_t f = 0; f < F; f++) {
        features[f] = f;
        const_f[f] = 0;
    }
    for (int64_t i = 0; i < m; i++) samples[i] = i;
    uint32_t rs = seed;
    int64_t sp = 0, n_nodes = 0;
    stack[sp++] = (entry){0, m, 0, -1, 0, 0, INFINITY};
    int first = 1;
    while (sp > 0) {
        const entry e = stack[--sp];
        const int64_t start = e.start, end = e.end, nn = end - start;
        const double wn = (double)nn;
        int is_leaf = e.depth >= max_depth || nn < mss || nn < 2 * msl || wn < 2 * mwl;
        double sum = 0.0, sq = 0.0, lo = INFINITY, hi = -INFINITY;
        for (int64_t p = start; p < end; p++) {
            const double v = g[samples[p]];
            sum += v;
            sq += v * v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double impurity = e.impurity;
        if (first) {
            impurity = sq / wn - (sum / wn) * (sum / wn);
            first = 0;
        }
        /* a node whose targets are all equal has impurity 0; scikit-learn's formula leaves a rounding error there
         * (its sign set by the order the rows were added in), and splits the node when it exceeds EPS: children with
         * the node's own value, so the same outputs, but a tree that draws more features afterwards */
        if (lo == hi) impurity = 0.0;
        is_leaf = is_leaf || impurity <= EPS;
        if (n_nodes >= cap) return -1;
        const int64_t node = n_nodes++;
        if (e.parent >= 0) {
            if (e.is_left)
                left[e.parent] = (int32_t)node;
            else
                right[e.parent] = (int32_t)node;
        }
        feat[node] = -2;
        thr[node] = -2.0;
        left[node] = right[node] = -1;
        nstart[node] = start;
        nend[node] = end;
        if (is_leaf) continue;

        /* ---- node_split_best ---- */
        if (a->nbin > 0) {
            memset(bcnt, 0, sizeof(int64_t) * a->nbin);
            memset(bsum, 0, sizeof(double) * a->nbin);
            for (int64_t p = start; p < end; p++) {
                const int64_t i = samples[p], r = a->rows[i];
                const double v = g[i];
                for (int64_t j = a->bptr[r]; j < a->bptr[r + 1]; j++) {
                    bcnt[a->bidx[j]] += 1;
                    bsum[a->bidx[j]] += v;
                }
            }
        }
        const int64_t n_known = e.n_const;
        int64_t f_i = F, n_visited = 0, n_found = 0, n_drawn = 0, n_total = n_known;
        best_split best = {-INFINITY, 0.0, -1};
        while (f_i > n_total && (n_visited < a->max_features || n_visited <= n_found + n_drawn)) {
            n_visited++;
            rs = xorshift(rs);
            const uint32_t dj = (uint32_t)(f_i - n_found - n_drawn);
            int64_t f_j = n_drawn + (int64_t)mod_by(rs & 0x7FFFFFFFu, dj, modm[dj]);
            if (f_j < n_known) {
                const int64_t t = features[n_drawn];
                features[n_drawn] = features[f_j];
                features[f_j] = t;
                n_drawn++;
                continue;
            }
            f_j += n_found;
            const int64_t f = a->fmap != NULL ? a->fmap[features[f_j]] : features[f_j];
            const float *fv = a->vals + a->voff[f];
            const int64_t slot = a->bslot[f];
            const int32_t *cf = a->codes + f * n;
            int64_t n0 = 0;
            int32_t lo = 0, hi = 1;
            if (slot >= 0) {  /* a two-valued feature: its node sums from the rows holding the upper value */
                n0 = nn - bcnt[slot];
                lo = n0 == 0;
                hi = n0 < nn;
            } else {  /* a histogram of the node's rows over the feature's codes */
                lo = INT32_MAX;
                hi = -1;
                for (int64_t p = start; p < end; p++) {
                    const int64_t i = samples[p];
                    const int32_t c = cf[a->rows[i]];
                    hcnt[c] += 1;
                    hsum[c] += g[i];
                    lo = c < lo ? c : lo;
                    hi = c > hi ? c : hi;
                }
            }
            if (fv[hi] <= fv[lo] + T32) {  /* constant in the node */
                const int64_t t = features[f_j];
                features[f_j] = features[n_total];
                features[n_total] = t;
                n_found++;
                n_total++;
            } else {
                f_i--;
                const int64_t t = features[f_i];
                features[f_i] = features[f_j];
                features[f_j] = t;
                if (slot >= 0) {
                    consider(&best, f, n0, nn, sum - bsum[slot], sum, fv[0], fv[1], msl, mwl);
                } else {
                    /* the thresholds in ascending order: between adjacent occupied codes further apart than T32 */
                    int64_t nl = hcnt[lo];
                    double sl = hsum[lo];
                    int32_t prev = lo;
                    for (int32_t c = lo + 1; c <= hi; c++) {
                        if (hcnt[c] == 0) continue;
                        if (fv[c] > fv[prev] + T32) consider(&best, f, nl, nn, sl, sum, fv[prev], fv[c], msl, mwl);
                        nl += hcnt[c];
                        sl += hsum[c];
                        prev = c;
                    }
                }
            }
            if (slot < 0) {
                for (int32_t c = lo; c <= hi; c++) {
                    hcnt[c] = 0;
                    hsum[c] = 0.0;
                }
            }
        }
        /* invariant on constant features for siblings and children (sklearn's two memcpy) */
        for (int64_t i = 0; i < n_known; i++) features[i] = const_f[i];
        for (int64_t i = n_known; i < n_total; i++) const_f[i] = features[i];
        if (best.f < 0) continue;
        const int64_t best_f = best.f;
        const double best_thr = best.thr;
        /* partition on x <= threshold, left rows first in their order, then the right ones */
        const int32_t *cf = a->codes + best_f * n;
        const float *fv = a->vals + a->voff[best_f];
        int64_t li = start, ri = 0;
        double sq_l = 0.0;
        for (int64_t p = start; p < end; p++) {
            const int64_t i = samples[p];
            if ((double)fv[cf[a->rows[i]]] <= best_thr) {
                samples[li++] = i;
                sq_l += g[i] * g[i];
            } else {
                tmp[ri++] = i;
            }
        }
        memcpy(samples + li, tmp, sizeof(int64_t) * ri);
        const int64_t pos = li;
        if (pos >= end || pos <= start) continue;  /* cannot happen with a valid threshold; a leaf if it does */
        double sl = 0.0;
        for (int64_t p = start; p < pos; p++) sl += g[samples[p]];
        const double wl = (double)(pos - start), wr = (double)(end - pos), sr = sum - sl, sq_r = sq - sq_l;
        const double imp_l = sq_l / wl - (sl / wl) * (sl / wl);
        const double imp_r = sq_r / wr - (sr / wr) * (sr / wr);
        feat[node] = (int32_t)best_f;
        thr[node] = best_thr;
        stack[sp++] = (entry){pos, end, e.depth + 1, node, 0, n_total, imp_r};
        stack[sp++] = (entry){start, pos, e.depth + 1, node, 1, n_total, imp_l};
    }
    return n_nodes;
}

/* Train one model; returns 0, or -1 when out of memory (or a tree outgrew the caller's node buffers). */
int64_t leakaudit_gb_fit(const leakaudit_gb *a) {
    const int64_t m = a->m, K = a->K, F = a->F, n = a->n;
    const int64_t cap = 2 * m + 1;
    int64_t *samples = malloc(sizeof(int64_t) * m), *tmp = malloc(sizeof(int64_t) * m);
    int64_t *features = malloc(sizeof(int64_t) * (F + 1)), *const_f = malloc(sizeof(int64_t) * (F + 1));
    int64_t *bcnt = malloc(sizeof(int64_t) * (a->nbin + 1));
    double *bsum = malloc(sizeof(double) * (a->nbin + 1));
    int32_t *hcnt = calloc(a->maxnv + 1, sizeof(int32_t));
    double *hsum = calloc(a->maxnv + 1, sizeof(double));
    entry *stack = malloc(sizeof(entry) * (cap + 2));
    int32_t *feat = malloc(sizeof(int32_t) * cap), *left = malloc(sizeof(int32_t) * cap),
            *right = malloc(sizeof(int32_t) * cap);
    double *thr = malloc(sizeof(double) * cap), *val = malloc(sizeof(double) * cap);
    int64_t *nstart = malloc(sizeof(int64_t) * cap), *nend = malloc(sizeof(int64_t) * cap);
    double *raw = malloc(sizeof(double) * m * K), *ng = malloc(sizeof(double) * m * K);
    double *g = malloc(sizeof(double) * m), *prob = malloc(sizeof(double) * (K + 1));
    uint64_t *modm = malloc(sizeof(uint64_t) * (F + 1));  /* modm[d] = mod_magic(d): the draws' remainders */
    int64_t rc = 0;
    if (!samples || !tmp || !features || !const_f || !bcnt || !bsum || !hcnt || !hsum || !stack || !feat || !left ||
        !right || !thr || !val || !nstart || !nend || !raw || !ng || !g || !prob || !modm) {
        rc = -1;
        goto done;
    }
    mod_magic_table(modm, F);
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = 0; k < K; k++) raw[i * K + k] = a->raw0[k];
    for (int64_t q = 0; q < a->nq; q++)
        for (int64_t k = 0; k < K; k++) a->qraw[q * K + k] = a->raw0[k];
    for (int64_t s = 0; s < a->n_stages; s++) {
        /* the negative gradient, once a stage */
        if (K == 1) {
            for (int64_t i = 0; i < m; i++) ng[i] = neg_grad_binomial((double)a->y[i], raw[i]);
        } else {
            for (int64_t i = 0; i < m; i++) {
                const double *r = raw + i * K;
                double mx = r[0], se = 0.0;
                for (int64_t k = 1; k < K; k++)
                    if (mx < r[k]) mx = r[k];
                for (int64_t k = 0; k < K; k++) {
                    prob[k] = exp(r[k] - mx);
                    se += prob[k];
                }
                for (int64_t k = 0; k < K; k++) ng[i * K + k] = -(prob[k] / se - (double)(a->y[i] == k));
            }
        }
        for (int64_t k = 0; k < K; k++) {
            for (int64_t i = 0; i < m; i++) g[i] = ng[i * K + k];
            const int64_t nodes = grow(a, g, samples, tmp, a->seeds[s * K + k], features, const_f, bcnt, bsum, hcnt,
                                       hsum, stack, feat, thr, left, right, nstart, nend, cap, modm);
            if (nodes < 0) {
                rc = -1;
                goto done;
            }
            /* the Newton step of every leaf, and the training rows' raw predictions */
            for (int64_t v = 0; v < nodes; v++) {
                val[v] = 0.0;
                if (feat[v] >= 0) continue;
                double num = 0.0, den = 0.0;
                for (int64_t p = nstart[v]; p < nend[v]; p++) {
                    const int64_t i = samples[p];
                    const double yk = K == 1 ? (double)a->y[i] : (double)(a->y[i] == k);
                    const double pr = yk - g[i];
                    num += g[i];
                    den += pr * (1 - pr);
                }
                const double cnt = (double)(nend[v] - nstart[v]);
                num /= cnt;
                den /= cnt;
                if (K > 1) num *= (double)(K - 1) / (double)K;
                const double u = fabs(den) < 1e-150 ? 0.0 : num / den;
                val[v] = u;
                const double step = a->learning_rate * u;
                for (int64_t p = nstart[v]; p < nend[v]; p++) raw[samples[p] * K + k] += step;
            }
            for (int64_t q = 0; q < a->nq; q++) {
                const int64_t r = a->qrows[q];
                int64_t v = 0;
                while (feat[v] >= 0) {
                    const int64_t f = feat[v];
                    v = (double)a->vals[a->voff[f] + a->codes[f * n + r]] <= thr[v] ? left[v] : right[v];
                }
                a->qraw[q * K + k] += a->learning_rate * val[v];
            }
            if (a->feat != NULL) {
                const int64_t t = s * K + k;
                if (nodes > a->cap) {
                    rc = -1;
                    goto done;
                }
                memcpy(a->feat + t * a->cap, feat, sizeof(int32_t) * nodes);
                memcpy(a->left + t * a->cap, left, sizeof(int32_t) * nodes);
                memcpy(a->right + t * a->cap, right, sizeof(int32_t) * nodes);
                memcpy(a->thr + t * a->cap, thr, sizeof(double) * nodes);
                memcpy(a->value + t * a->cap, val, sizeof(double) * nodes);
                a->n_nodes[t] = nodes;
            }
        }
    }
done:
    free(samples); free(tmp); free(features); free(const_f); free(bcnt); free(bsum); free(hcnt); free(hsum);
    free(stack); free(feat); free(left); free(right); free(thr); free(val); free(nstart); free(nend); free(raw);
    free(ng); free(g); free(prob); free(modm);
    return rc;
}

/* Raw predictions of kept trees (n_trees = n_stages * K, cap nodes each) on float32 rows X (nx, F), added to
 * out (nx, K) as scikit-learn's predict_stages adds them: out[i, k] += learning_rate * value, stage by stage. */
void leakaudit_gb_predict(const float *X, int64_t nx, int64_t F, int64_t n_stages, int64_t K, int64_t cap,
                          const int32_t *feat, const int32_t *left, const int32_t *right, const double *thr,
                          const double *value, double learning_rate, double *out) {
    for (int64_t i = 0; i < nx; i++) {
        const float *x = X + i * F;
        for (int64_t t = 0; t < n_stages * K; t++) {
            const int64_t o = t * cap;
            int64_t v = 0;
            while (feat[o + v] >= 0) v = (double)x[feat[o + v]] <= thr[o + v] ? left[o + v] : right[o + v];
            out[i * K + t % K] += learning_rate * value[o + v];
        }
    }
}
