/* The MLP kernel's entry points (mini-batch training, per-example SGD, DP-SGD, one-hot groups, prediction layers,
 * noise, permutations) and their dispatchers to the specialised copies. What the kernel computes, and how, is
 * described in _mlp_common.c, the code this file shares with _mlp_train.c and _mlp_dp.c. */
#include "_mlp_common.c"

#define SGD_DECL                                                                                          \
    float *restrict w1, float *restrict b1, float *restrict w2, float *restrict b2,                      \
        const int64_t *restrict indptr, const int64_t *restrict indices, const float *restrict values,   \
        const int64_t *restrict y, const int64_t *restrict order, int64_t m, int64_t epochs, int64_t C,  \
        float lr, int activation, const float *restrict coefs, float *restrict lo
#define SGD_PASS w1, b1, w2, b2, indptr, indices, values, y, order, m, epochs, C, lr, activation, coefs, lo
#define SGD_SPECIALISE(NVC) \
    static void sgd_nv##NVC(SGD_DECL) { sgd_impl(NVC, SGD_PASS); }
FOR_EACH_NV(SGD_SPECIALISE)

/* Per-example SGD of one model (faithful mode); returns 0, or -1 for a width with no copy. Scratch: lo (C floats). */
static int64_t sgd_dispatch(int64_t H, SGD_DECL)
{
#define SGD_CASE(NVC) case 8 * NVC: sgd_nv##NVC(SGD_PASS); return 0;
    switch (H) {
    FOR_EACH_NV(SGD_CASE)
    default: return -1;
    }
}

/* n standard normals into out (16 at a time; the last group's unused draws are discarded), lanes' state st (8 x 4
 * uint32, lane l's word w at st[8 w + l]) advanced: the DP step's noise, for tests and for callers wanting it */
void leakaudit_gauss_f32(uint32_t *restrict st, float *restrict out, int64_t n)
{
    v8u s[4];
    for (int w = 0; w < 4; w++) s[w] = *(const v8u *)(st + 8 * w);
    float z[16];
    for (int64_t i = 0; i < n; i += 16) {
        gauss16(s, z);
        const int64_t k = n - i < 16 ? n - i : 16;
        for (int64_t q = 0; q < k; q++) out[i + q] = z[q];
    }
    for (int w = 0; w < 4; w++) *(v8u *)(st + 8 * w) = s[w];
}

/* The DP step's interface version (2: leakaudit_dp_model ends with the gradient canaries' E, cbatch, cstep_ptr and
 * cnorm), so that Python can tell a library built before them, which would ignore those fields. */
int64_t leakaudit_dp_abi(void) { return 2; }

/* n_steps of DP-SGD of one model (dp_impl) on the rows R (CSR, with the model's one-hot groups in M, or dense xd);
 * returns the steps taken, -1 for a width with no copy, -2 for dense rows with one-hot groups, -3 for canaries
 * (E > 0) without their batches. */
int64_t leakaudit_dp_train_1h_f32(const leakaudit_rows *R, const leakaudit_dp_rule *D, const leakaudit_dp_model *M)
{
    float *p = M->p, *norms = M->norms, *grad = M->grad, *g = M->g, *zd = M->zd, *table = M->table;
    const int64_t *rstart = R->rstart, *rend = R->rend, *indices = R->indices, *y = R->y;
    const float *values = R->values, *xd = R->xd, *nscale = M->nscale, *xsq = M->xsq;
    uint32_t *rng = M->rng;
    const float *coefs = D->coefs;
    const int64_t d = R->d, C = R->C, n_steps = M->n_steps, G = M->G;
    const int64_t *batch = M->batch, *step_ptr = M->step_ptr, *gptr = M->gptr, *gcols = M->gcols, *gdom = M->gdom;
    const float lr = (float)D->lr, inv = (float)D->inv, clipc = (float)D->clip;
    const int64_t E = M->E, *cbatch = M->cbatch, *cstep_ptr = M->cstep_ptr;
    const float cnorm = (float)M->cnorm;
    if (xd && G) return -2;
    if (E && !(cbatch && cstep_ptr)) return -3;
#define DP_CASE(NVC)                                                                                      \
    case 8 * NVC:                                                                                         \
        if (xd) return D->activation == 0 ? dp_nv##NVC##_tanh_dense(DP_PASS) : dp_nv##NVC##_relu_dense(DP_PASS); \
        return D->activation == 0 ? dp_nv##NVC##_tanh(DP_PASS) : dp_nv##NVC##_relu(DP_PASS);
    switch (D->H) {
    FOR_EACH_NV(DP_CASE)
    default: return -1;
    }
}

/* The one-hot groups of one model's training rows (rowmap[0:length], the member rows of them if member is given)
 * and those rows without the groups' dominant columns; returns G, the number of groups (0: none, and nothing else
 * written). A group: a run of adjacent columns whose listed values are all 1, of which every row holds exactly one
 * (no row holds two of the run's columns: no two of a row's consecutive such columns fall in it; and the counts add
 * up to the rows), at least 2 columns, the most frequent (the first of equals, the dominant) in at least min_share
 * of the rows. Writes gdom[g], the group's other columns that some row holds gcols[gptr[g]:gptr[g + 1]], then the
 * columns of no group that some row lists gcols[gptr[G]:gptr[G + 1]]; and each row r's listed inputs but the
 * dominant columns at ridx/rval[rstart[r]:rend[r]] (capacity: the rows' listed inputs). Depends on the model's rows
 * only, so a model's groups do not depend on the models trained beside it. Scratch work: 3 d. */
static int64_t onehot_prepare_impl(
    const int64_t *restrict indptr, const int64_t *restrict indices, const float *restrict values,
    const int64_t *restrict rowmap, const uint8_t *restrict member, int64_t length, int64_t d, double min_share,
    int64_t *restrict work, int64_t *restrict gptr, int64_t *restrict gcols, int64_t *restrict gdom,
    int64_t *restrict rstart, int64_t *restrict rend, int64_t *restrict ridx, float *restrict rval)
{
    /* per column: rows holding a 1; the last column before it that a row holds next to it; 0 candidate, 1 a value
     * other than 1 listed, 2 in a group, 3 a group's dominant */
    int64_t *cnt = work, *left = work + d, *state = work + 2 * d;
    for (int64_t c = 0; c < d; c++) {
        cnt[c] = 0;
        left[c] = -1;
        state[c] = 0;
    }
    int64_t m = 0;
    for (int64_t i = 0; i < length; i++) {
        const int64_t r = rowmap[i];
        if (member && !member[r]) continue;
        m++;
        for (int64_t q = indptr[r]; q < indptr[r + 1]; q++) {
            if (values[q] == 1.0f) cnt[indices[q]]++;
            else state[indices[q]] = 1;
        }
    }
    if (m == 0) return 0;
    for (int64_t i = 0; i < length; i++) {
        const int64_t r = rowmap[i];
        if (member && !member[r]) continue;
        int64_t last = -1;
        for (int64_t q = indptr[r]; q < indptr[r + 1]; q++) {
            const int64_t c = indices[q];
            if (state[c]) continue;
            if (last > left[c]) left[c] = last;
            last = c;
        }
    }
    int64_t G = 0, nc = 0, a = -1;
    gptr[0] = 0;
    for (int64_t j = 0; j <= d; j++) {
        const int cand = j < d && state[j] == 0;
        if (a >= 0 && (!cand || left[j] >= a)) {  /* the run [a, j) ends */
            int64_t tot = 0, mx = -1, dom = -1;
            for (int64_t c = a; c < j; c++) {
                tot += cnt[c];
                if (cnt[c] > mx) {
                    mx = cnt[c];
                    dom = c;
                }
            }
            if (j - a >= 2 && tot == m && (double)mx >= min_share * (double)m) {
                gdom[G] = dom;
                state[dom] = 3;
                for (int64_t c = a; c < j; c++)
                    if (c != dom && cnt[c] > 0) {
                        gcols[nc++] = c;
                        state[c] = 2;
                    }
                gptr[++G] = nc;
            }
            a = -1;
        }
        if (cand && a < 0) a = j;
    }
    if (G == 0) return 0;
    for (int64_t c = 0; c < d; c++)
        if (state[c] < 2 && (cnt[c] > 0 || state[c] == 1)) gcols[nc++] = c;
    gptr[G + 1] = nc;
    int64_t pos = 0;
    for (int64_t i = 0; i < length; i++) {
        const int64_t r = rowmap[i];
        if (member && !member[r]) continue;
        rstart[r] = pos;
        for (int64_t q = indptr[r]; q < indptr[r + 1]; q++) {
            if (state[indices[q]] == 3) continue;
            ridx[pos] = indices[q];
            rval[pos++] = values[q];
        }
        rend[r] = pos;
    }
    return G;
}

/* Train one model for n_epochs of its row order (positions in its row map); activation 0 is tanh, 1 relu.
 * Returns the number of steps taken, or -1 for a hidden width H with no specialised copy (H must be 8 NV for a
 * listed NV), -2 for dense rows with one-hot groups. Row r's listed inputs: indices/values[rstart[r]:rend[r]] (CSR
 * rows: rstart = indptr, rend = indptr + 1); or, with xd (the DENSE copies; the CSR pointers are then not read), row r
 * of the row-major (n, d) array xd, every column, with scratch zd (B H floats).
 * Scratch: grad (P floats, 32-byte aligned), rows (B), g (4 C: ROW_GROUP rows' logits), table
 * ((d + 1) H floats, with G > 0 one-hot groups: group g's other columns gcols[gptr[g]:gptr[g + 1]], its dominant
 * column gdom[g], dropped from the rows' lists, then the columns of no group, gcols[gptr[G]:gptr[G + 1]]; see
 * onehot_table and leakaudit_onehot_prepare). */
static int64_t train_dispatch(int64_t H, int activation, ARGS_DECL)
{
#define TRAIN_CASE(NVC)                                                                                    \
    case 8 * NVC:                                                                                          \
        if (xd)                                                                                            \
            return activation == 0 ? train_nv##NVC##_tanh_dense(ARGS_PASS) : train_nv##NVC##_relu_dense(ARGS_PASS); \
        return activation == 0 ? train_nv##NVC##_tanh(ARGS_PASS) : train_nv##NVC##_relu(ARGS_PASS);
    if (xd && G) return -2;  /* dense rows have no one-hot groups */
    switch (H) {
    FOR_EACH_NV(TRAIN_CASE)
    default: return -1;
    }
}

int64_t leakaudit_train_1h_f32(const leakaudit_rows *R, const leakaudit_train_rule *T, const leakaudit_model *M)
{
    return train_dispatch(T->H, (int)T->activation, M->p, M->m1, M->m2, M->steps, R->rstart, R->rend, R->indices,
                          R->values, R->y, M->order, M->rowmap, M->member, M->length, T->n_epochs, T->batch_size,
                          R->d, R->C, T->hyper, (int)T->adam, T->coefs, M->grad, M->rows, M->g, M->G, M->gptr,
                          M->gcols, M->gdom, M->table, R->xd, M->zd);
}

/* Per-example SGD of one model on CSR rows (R: rstart = indptr, rend = indptr + 1; R->xd is not read). */
int64_t leakaudit_sgd_1h_f32(const leakaudit_rows *R, const leakaudit_sgd_rule *S, const leakaudit_sgd_model *M)
{
    return sgd_dispatch(S->H, M->w1, M->b1, M->w2, M->b2, R->rstart, R->indices, R->values, R->y, M->order, M->m,
                        S->epochs, R->C, (float)S->lr, (int)S->activation, S->coefs, M->lo);
}

/* The one-hot groups of one model's rows (M: its rowmap, member, length; the rest is not read) from the CSR rows R
 * (rstart = indptr): onehot_prepare_impl, its outputs in O. */
int64_t leakaudit_onehot_prepare(const leakaudit_rows *R, const leakaudit_model *M, const leakaudit_onehot_out *O,
                                 double min_share)
{
    return onehot_prepare_impl(R->rstart, R->indices, R->values, M->rowmap, M->member, M->length, R->d, min_share,
                               O->work, O->gptr, O->gcols, O->gdom, O->rstart, O->rend, O->ridx, O->rval);
}

/* One layer of one net, in registers: out[i, :] = b + sum over row i's non-zero inputs c, ascending, of
 * x_ic W[c, :]; so a row's outputs do not depend on the rows queried with it (BLAS picks its kernel by the
 * matrices' sizes). CSR (a compile-time constant): the rows' listed inputs (indptr, indices, values; a first layer
 * on one-hot data, as nets trained with a sparse first layer are queried), else the dense rows x (n, d), zeros
 * skipped: the same sums either way. */
static inline __attribute__((always_inline)) void layer_impl(
    const int NV, const int CSR, const float *restrict w, const float *restrict b, const int64_t *restrict indptr,
    const int64_t *restrict indices, const float *restrict values, const float *restrict x, int64_t n, int64_t d,
    float *restrict out)
{
    const int64_t H = (int64_t)NV * 8;
    for (int64_t i = 0; i < n; i++) {
        v8f acc[NV];
        for (int v = 0; v < NV; v++) acc[v] = LOADV(b + 8 * v);
        const int64_t q0 = CSR ? indptr[i] : 0, q1 = CSR ? indptr[i + 1] : d;
        for (int64_t q = q0; q < q1; q++) {
            const float xv = CSR ? values[q] : x[i * d + q];
            if (!CSR && xv == 0.0f) continue;
            const float *wc = w + (CSR ? indices[q] : q) * H;
            for (int v = 0; v < NV; v++) acc[v] += xv * LOADV(wc + 8 * v);
        }
        for (int v = 0; v < NV; v++) STOREV(out + i * H + 8 * v, acc[v]);
    }
}

int64_t leakaudit_native_supports(int64_t H);

#define FL_DECL                                                                                           \
    const float *restrict w, const float *restrict b, const int64_t *restrict indptr,                  \
        const int64_t *restrict indices, const float *restrict values, int64_t n, float *restrict out
#define DL_DECL \
    const float *restrict w, const float *restrict b, const float *restrict x, int64_t n, int64_t d, float *restrict out
#define LAYER_SPECIALISE(NVC)                                                                                         \
    static void first_layer_nv##NVC(FL_DECL) { layer_impl(NVC, 1, w, b, indptr, indices, values, 0, n, 0, out); } \
    static void dense_layer_nv##NVC(DL_DECL) { layer_impl(NVC, 0, w, b, 0, 0, 0, x, n, d, out); }
FOR_EACH_NV(LAYER_SPECIALISE)

/* The first layer of one net on n CSR rows into out (n, H); returns 0, or -1 for a width with no copy. */
int64_t leakaudit_first_layer_1h_f32(int64_t H, FL_DECL)
{
#define FL_CASE(NVC) case 8 * NVC: first_layer_nv##NVC(w, b, indptr, indices, values, n, out); return 0;
    switch (H) {
    FOR_EACH_NV(FL_CASE)
    default: return -1;
    }
}

/* A layer of fewer than 8 outputs (a net's logits), H a compile-time constant: 8 rows at a time, vectors along the
 * rows, every input added (zeros too) in ascending order by one FMA each,
 * so a row's outputs do not depend on the rows queried with it. */
static inline __attribute__((always_inline)) void small_impl(const int H, DL_DECL)
{
    for (int64_t i0 = 0; i0 < n; i0 += 8) {
        const int64_t r = n - i0 < 8 ? n - i0 : 8;
        const float *xr = x + i0 * d;
        v8f acc[H];
        for (int j = 0; j < H; j++) acc[j] = vbcast(b[j]);
        for (int64_t c = 0; c < d; c++) {
            v8f xc = vbcast(0.0f);
            if (r == 8)
                for (int q = 0; q < 8; q++) xc[q] = xr[q * d + c];
            else
                for (int q = 0; q < r; q++) xc[q] = xr[q * d + c];
            for (int j = 0; j < H; j++) acc[j] = vfma(xc, vbcast(w[c * H + j]), acc[j]);
        }
        for (int q = 0; q < r; q++)
            for (int j = 0; j < H; j++) out[(i0 + q) * H + j] = acc[j][q];
    }
}

#define SMALL_SPECIALISE(HC) static void small_layer_h##HC(DL_DECL) { small_impl(HC, w, b, x, n, d, out); }
SMALL_SPECIALISE(1) SMALL_SPECIALISE(2) SMALL_SPECIALISE(3) SMALL_SPECIALISE(4) SMALL_SPECIALISE(5)
SMALL_SPECIALISE(6) SMALL_SPECIALISE(7)

/* One dense layer of one net on n rows of x (n, d) into out (n, H): H = 8 NV for a listed NV (zero inputs skipped)
 * or H < 8 (every input added); returns 0, or -1 for a width with no copy. */
int64_t leakaudit_dense_layer_f32(int64_t H, DL_DECL)
{
#define DL_CASE(NVC) case 8 * NVC: dense_layer_nv##NVC(w, b, x, n, d, out); return 0;
#define SMALL_CASE(HC) case HC: small_layer_h##HC(w, b, x, n, d, out); return 0;
    switch (H) {
    FOR_EACH_NV(DL_CASE)
    SMALL_CASE(1) SMALL_CASE(2) SMALL_CASE(3) SMALL_CASE(4) SMALL_CASE(5) SMALL_CASE(6) SMALL_CASE(7)
    default: return -1;
    }
}

/* Any layer, any width, float32 or float64 (the widths and dtypes the specialised copies do not take): out[i, :] =
 * b + sum over row i's non-zero inputs c, ascending, of x_ic W[c, :], in the layer's own precision, a row at a
 * time; so, as in the copies above, a row's outputs do not depend on the rows queried with it. */
#define GENERIC_LAYER(NAME, T)                                                                                     \
    int64_t NAME(int64_t H, const T *restrict w, const T *restrict b, const T *restrict x, int64_t n, int64_t d,  \
                 T *restrict out)                                                                                 \
    {                                                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                                         \
            T *restrict o = out + i * H;                                                                          \
            for (int64_t h = 0; h < H; h++) o[h] = b[h];                                                          \
            for (int64_t c = 0; c < d; c++) {                                                                     \
                const T xv = x[i * d + c];                                                                        \
                if (xv == 0) continue;                                                                            \
                const T *restrict wc = w + c * H;                                                                 \
                for (int64_t h = 0; h < H; h++) o[h] += xv * wc[h];                                               \
            }                                                                                                     \
        }                                                                                                         \
        return 0;                                                                                                 \
    }
GENERIC_LAYER(leakaudit_layer_f32, float)
GENERIC_LAYER(leakaudit_layer_f64, double)

/* whether leakaudit_dense_layer_f32 has a copy for H outputs */
int64_t leakaudit_dense_supports(int64_t H)
{
    return (H >= 1 && H < 8) || leakaudit_native_supports(H);
}

/* the widths the dispatcher accepts, for the Python side */
int64_t leakaudit_native_supports(int64_t H)
{
#define SUPPORTED_CASE(NVC) case 8 * NVC: return 1;
    switch (H) {
    FOR_EACH_NV(SUPPORTED_CASE)
    default: return 0;
    }
}

/* numpy's bit generator interface (numpy/random/bitgen.h), as Generator.bit_generator.ctypes.bit_generator
 * points to it */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

/* numpy's random_interval (numpy/random/src/distributions/distributions.c): a uniform integer in [0, max] by
 * masked rejection */
static inline uint64_t random_interval(bitgen_t *bg, uint64_t max)
{
    if (max == 0) return 0;
    uint64_t mask = max, value;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    if (max <= 0xffffffffUL) {
        while ((value = (bg->next_uint32(bg->state) & mask)) > max)
            ;
    } else {
        while ((value = (bg->next_uint64(bg->state) & mask)) > max)
            ;
    }
    return value;
}

/* n_epochs permutations of range(m) into out (n_epochs m), one after the other, each exactly as numpy's
 * Generator.permutation(m) draws it (shuffle(arange(m)): Fisher-Yates from the last element down, numpy's
 * _shuffle_raw), from the same generator state and leaving it where numpy would. The caller holds the bit
 * generator's lock. */
void leakaudit_permutations(bitgen_t *bg, int64_t *restrict out, int64_t m, int64_t n_epochs)
{
    for (int64_t e = 0; e < n_epochs; e++) {
        int64_t *v = out + e * m;
        for (int64_t i = 0; i < m; i++) v[i] = i;
        for (int64_t i = m - 1; i >= 1; i--) {
            const int64_t j = (int64_t)random_interval(bg, (uint64_t)i);
            const int64_t t = v[j];
            v[j] = v[i];
            v[i] = t;
        }
    }
}
