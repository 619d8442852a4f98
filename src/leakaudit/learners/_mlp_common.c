/* Mini-batch Adam/SGD training of one one-hidden-layer MLP on sparse (or dense) rows, float32 (leakaudit).
 *
 * TorchMLP's fast mode: one call trains one model's whole run, its parameters, gradient and Adam moments (about
 * 110 KB for Adult's 104-64-2 net) staying in the core's L1/L2 cache; the Python side spreads models over threads
 * (one model a call, so results do not depend on the thread count). Each step computes, for the rows of one
 * mini-batch of the model (the rows of its own order, or the member rows of a shared batch):
 *
 *  - forward: z = b1 + x W1 from the listed inputs of each row (the non-zero ones on sparse data, a CSR row
 *    list), a = act(z), logits a W2 + b2;
 *  - the mean NLL of the log-softmax over the batch rows; its gradient in the logits is
 *    (softmax - onehot(y)) / n_rows;
 *  - backward by hand, all gradients at the old weights;
 *  - the update of every weight, in torch.optim semantics: SGD p <- p - lr (g + wd p); Adam (Kingma & Ba 2015,
 *    Algorithm 1, with PyTorch's L2 weight_decay added to the gradient and eps outside the square root):
 *        g <- g + wd p;  m <- m + (1 - beta1) (g - m) (torch's lerp);  v <- beta2 v + (1 - beta2) g^2;
 *        p <- p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *    with t the model's own step count (a model with no row in a shared batch takes no step).
 *
 * So it trains what torch's batched trainer (_torch_batched.py, the reference the tests compare it with) trains,
 * to float32 rounding: a row's hidden pre-activations are summed in vector registers (GCC vector extensions, 8
 * floats a vector; 16 in the AVX-512 build's rows where H is a multiple of 16, the same numbers: _mlp_lanes.h) over
 * its listed inputs, the row's forward and backward passes are fused, and tanh is Eigen's
 * rational approximation (<= 4.4 ulp) instead of libm's. Dense rows (the DENSE copies) take the first layer as
 * two register-blocked matrix products a step instead (dense_forward, dense_weight_grad), with the same sums as
 * CSR rows listing every column.
 *
 * Parameter row layout (as _mlp_native.pack_1h): [W1 (d, H) row-major | b1 (H) | W2^T (C, H) | b2 (C)], the
 * output layer transposed so every inner loop runs over the H hidden units contiguously.
 * No fast-math: every operation is IEEE float32 (FMA contraction allowed).
 *
 * This file is the kernel's shared code (static functions; never compiled by itself). The library is three
 * translation units, compiled in parallel, that include it: _mlp_native.c (the entry points, their dispatchers,
 * per-example SGD, prediction layers, one-hot groups, noise, permutations), _mlp_train.c (the mini-batch training
 * copies) and _mlp_dp.c (the DP-SGD copies); the copies, one per hidden width, activation and kind of rows, are most
 * of the code. The parts of a copy that run once a mini-batch step (the rows' forward and backward passes,
 * ROWS_COPIES; the parameter updates) are functions of their own rather than inlined into its training loop.
 */
#ifndef LEAKAUDIT_MLP_COMMON
#define LEAKAUDIT_MLP_COMMON

#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __AVX__
#include <immintrin.h>
#endif

typedef float v8f __attribute__((vector_size(32), aligned(4)));
#define LOADV(ptr) (*(const v8f *)(ptr))
#define STOREV(ptr, x) (*(v8f *)(ptr) = (x))

typedef int32_t v8i __attribute__((vector_size(32), aligned(4)));

/* The hidden widths the kernels have specialised copies for, as NV = H / 8 vectors; every list of copies, every
 * dispatcher and leakaudit_native_supports expand this one list. */
#define FOR_EACH_NV(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(10) X(12) X(16) X(24) X(32)

/* Rows a mini-batch step takes together (rows_grouped) for NV vectors of hidden units: 4 up to 64 hidden units,
 * 2 up to 96, 1 (a row at a time) above, where the rows' activations and gradients outgrow the 32 vector registers
 * (the measured gains per width are in benchmarks/README.md). -DLEAKAUDIT_ROW_GROUP=K builds
 * with K for every width (the tests compare K = 1 with the default bit for bit). */
#ifdef LEAKAUDIT_ROW_GROUP
#if LEAKAUDIT_ROW_GROUP < 1 || LEAKAUDIT_ROW_GROUP > 4
#error "LEAKAUDIT_ROW_GROUP must be 1-4 (the scratch g holds 4 rows' logits: _mlp_native.ROW_GROUP_MAX)"
#endif
#define ROW_GROUP(NV) (LEAKAUDIT_ROW_GROUP)
#else
#define ROW_GROUP(NV) ((NV) <= 8 ? 4 : (NV) <= 12 ? 2 : 1)
#endif

#ifdef __AVX__
/* x86 with AVX: one instruction each for what the portable forms below spell out (the same lanes, NaN included) */
/* lanes of a where m is set (all ones), else of b */
static inline v8f vsel(v8i m, v8f a, v8f b) { return (v8f)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)m); }
/* a < b ? a : b, lane by lane (minps: b where either is NaN) */
static inline v8f vmin(v8f a, v8f b) { return (v8f)_mm256_min_ps((__m256)a, (__m256)b); }
/* a > b ? a : b, lane by lane (maxps: b where either is NaN) */
static inline v8f vmax(v8f a, v8f b) { return (v8f)_mm256_max_ps((__m256)a, (__m256)b); }
/* a * b + c, rounded once (the fused multiply-add every build uses, whatever it would contract by itself) */
#ifdef __FMA__
static inline v8f vfma(v8f a, v8f b, v8f c) { return (v8f)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
#else
static inline v8f vfma(v8f a, v8f b, v8f c) { return a * b + c; }
#endif
/* |x| with the sign bit cleared */
static inline v8f vabs(v8f x) { return (v8f)_mm256_andnot_ps(_mm256_set1_ps(-0.0f), (__m256)x); }
#else
static inline v8f vsel(v8i m, v8f a, v8f b) { return (v8f)(((v8i)a & m) | ((v8i)b & ~m)); }
static inline v8f vmin(v8f a, v8f b) { return vsel(a < b, a, b); }
static inline v8f vmax(v8f a, v8f b) { return vsel(a > b, a, b); }
static inline v8f vabs(v8f x) { return vsel(x < 0.0f, -x, x); }  /* -0 stays -0: only compared, below */
static inline v8f vfma(v8f a, v8f b, v8f c) { return a * b + c; }
#endif
/* x in every lane, exactly (-0 too; a broadcast load when x is in memory, where 0 + x cost an add first) */
static inline v8f vbcast(float x) { return (v8f){x, x, x, x, x, x, x, x}; }

/* 16-lane vectors in the AVX-512 build (-DLEAKAUDIT_VEC16=0 leaves them out, for the tests and benchmarks that compare
 * the two widths), for the 16-lane copies of _mlp_lanes.h. Lane by lane the same operations as the 8-lane forms above. */
#ifndef LEAKAUDIT_VEC16
#define LEAKAUDIT_VEC16 1
#endif
#if defined(__AVX512F__) && defined(__AVX512DQ__) && LEAKAUDIT_VEC16
#define LEAKAUDIT_V16 1
typedef float v16f __attribute__((vector_size(64), aligned(4)));
typedef int32_t v16i __attribute__((vector_size(64), aligned(4)));
#define LOADV16(ptr) (*(const v16f *)(ptr))
#define STOREV16(ptr, x) (*(v16f *)(ptr) = (x))
static inline v16f vsel16(v16i m, v16f a, v16f b)
{
    return (v16f)_mm512_mask_blend_ps(_mm512_movepi32_mask((__m512i)m), (__m512)b, (__m512)a);
}
static inline v16f vmin16(v16f a, v16f b) { return (v16f)_mm512_min_ps((__m512)a, (__m512)b); }
static inline v16f vmax16(v16f a, v16f b) { return (v16f)_mm512_max_ps((__m512)a, (__m512)b); }
static inline v16f vfma16(v16f a, v16f b, v16f c) { return (v16f)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c); }
static inline v16f vabs16(v16f x) { return (v16f)_mm512_andnot_ps(_mm512_set1_ps(-0.0f), (__m512)x); }
static inline v16f vbcast16(float x) { return (v16f){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
/* the low and high 8 lanes */
static inline v8f lo8(v16f x) { return (v8f)_mm512_castps512_ps256((__m512)x); }
static inline v8f hi8(v16f x) { return (v8f)_mm512_extractf32x8_ps((__m512)x, 1); }
#else
#define LEAKAUDIT_V16 0
#endif

/* Eigen's rational tanh (generic_fast_tanh_float, <= 4.4 ulp; coefficients _mlp_native.TANH_COEFS), lane by lane:
 * tanh_rat (8 lanes) and tanh_rat16 (16) */
#define TANH_RAT(NAME, VT, VMIN, VMAX, VSEL, VABS)                                                        \
    static inline VT NAME(VT x, const float *c)                                                          \
    {                                                                                                     \
        const VT hi = (VT){0} + c[0];                                                                     \
        VT xc = VMIN(hi, x); /* x > hi ? hi : x, NaN kept */                                              \
        xc = VMAX(-hi, xc);  /* xc < -hi ? -hi : xc */                                                    \
        const VT x2 = xc * xc;                                                                            \
        VT p = x2 * c[7] + c[6];                                                                          \
        p = x2 * p + c[5];                                                                                \
        p = x2 * p + c[4];                                                                                \
        p = x2 * p + c[3];                                                                                \
        p = x2 * p + c[2];                                                                                \
        p = x2 * p + c[1];                                                                                \
        p = xc * p;                                                                                       \
        VT q = x2 * c[11] + c[10];                                                                        \
        q = x2 * q + c[9];                                                                                \
        q = x2 * q + c[8];                                                                                \
        const VT r = p / q;                                                                               \
        return VSEL(VABS(x) < c[12], x, r);                                                               \
    }
TANH_RAT(tanh_rat, v8f, vmin, vmax, vsel, vabs)
#if LEAKAUDIT_V16
TANH_RAT(tanh_rat16, v16f, vmin16, vmax16, vsel16, vabs16)
#endif

/* expf as glibc (2.28 and later) computes it on a CPU with FMA and AVX2, which glibc's expf picks on every CPU an
 * FMA build of this kernel runs on: its algorithm (x = (k + r) ln2 / 32, 2^(k/32) from a table, a cubic in r, in
 * double) with its constants and its fused multiply-adds, bit for bit (tests/learners/test_mlp_native.py compares it
 * with libm's expf over every float). A second copy of libm's function, for one reason: written here it is inlined
 * into a row group's softmax, where a call to libm made the compiler spill every live vector register around it.
 * The inputs glibc sends down its own special path (|x| >= 88, infinities, NaN) still call libm. Builds without FMA
 * (the portable variant) call libm throughout. */
#if defined(__FMA__) && !defined(LEAKAUDIT_LIBM_EXPF)
static const uint64_t EXPF_TAB[32] = {  /* 2^(i/32) with i << 47 taken off its bits (glibc's __exp2f_data.tab) */
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
static inline float exp_f32(float x)
{
    uint32_t ux;
    memcpy(&ux, &x, 4);
    if (__builtin_expect(((ux >> 20) & 0x7ff) > 0x42a, 0)) return expf(x);
    const double xd = (double)x, invln2n = 0x1.71547652b82fep+5, shift = 0x1.8p52;  /* 32 / ln 2; 1.5 2^52 */
    double kd = fma(invln2n, xd, shift);  /* k = round(32 x / ln 2) in kd's low bits */
    uint64_t ki;
    memcpy(&ki, &kd, 8);
    kd -= shift;
    const double r = fma(invln2n, xd, -kd);
    const uint64_t t = EXPF_TAB[ki & 31] + (ki << 47);
    double s;  /* 2^(k/32) */
    memcpy(&s, &t, 8);
    const double z = fma(0x1.c6af84b912394p-20, r, 0x1.ebfce50fac4f3p-13);
    const double r2 = r * r;
    double y = fma(r, 0x1.62e42ff0c52d6p-6, 1.0);
    y = fma(z, r2, y);
    return (float)(y * s);
}
#else
#define exp_f32 expf
#endif

/* One row's d(mean NLL)/d logits = (softmax - onehot(y)) * inv, in place: g[c0..C) holds the logits on entry (g[0] = 0
 * when c0 = 1, the logistic unit's fixed class-0 logit); only g[c0..C) is meaningful on exit. */
static inline void softmax_grad(float *restrict g, int64_t C, int64_t c0, int64_t yr, float inv)
{
    if (c0) g[0] = 0.0f;
    float mx = g[0];
    for (int64_t c = 1; c < C; c++)
        if (g[c] > mx) mx = g[c];
    if (C == 2) {  /* softmax of two: the larger logit's exp(0) = 1 needs no exp call */
        const float ex = exp_f32((g[0] > g[1] ? g[1] : g[0]) - mx);
        const float se = 1.0f + ex;
        const int big = g[0] > g[1] ? 0 : 1;
        g[big] = 1.0f / se;
        g[1 - big] = ex / se;
    } else {
        float se = 0.0f;
        for (int64_t c = 0; c < C; c++) {
            g[c] = exp_f32(g[c] - mx);
            se += g[c];
        }
        for (int64_t c = 0; c < C; c++) g[c] = g[c] / se;
    }
    g[yr] -= 1.0f;
    for (int64_t c = c0; c < C; c++) g[c] *= inv;
}

#ifndef LEAKAUDIT_SHARED_PREFIX
#define LEAKAUDIT_SHARED_PREFIX 1
#endif

/* The dense first layer (train_impl's DENSE copies: rows of X given as an (n, d) row-major array): the step's
 * pre-activations and weight gradient as two register-blocked matrix products over the step's rows, instead of
 * row by row, so a weight vector loaded once serves DENSE_RB rows and a gradient vector is loaded and stored once a
 * step. Each sum is still one FMA per input in the order of the sparse path's listed inputs (all d, ascending) and
 * one per row in row order: the same numbers as the sparse path given every column of every row. DENSE_NB 8-lane
 * vectors of hidden units a block: 4 with 32 vector registers (AVX-512VL), else 2 (16); in the AVX-512 build
 * DENSE_NB16 16-lane vectors first (dense_forward_block and dense_grad_block: _mlp_lanes.h). */
#ifndef DENSE_RB
#define DENSE_RB 6
#endif
#ifndef DENSE_TB
#define DENSE_TB 6
#endif
#ifndef DENSE_NB
#ifdef __AVX512VL__
#define DENSE_NB 4
#else
#define DENSE_NB 2
#endif
#endif
#ifndef DENSE_NB16
#define DENSE_NB16 4
#endif
#if LEAKAUDIT_V16 && (2 * DENSE_NB16) % DENSE_NB != 0
#error "the 16-lane dense blocks must cover a multiple of DENSE_NB 8-lane vectors (the 8-lane remainder counts NV % DENSE_NB)"
#endif

/* The code written once per vector width (_mlp_lanes.h: rows_grouped, the rows of one mini-batch step, and the dense
 * first layer's blocks), its names suffixed with the lanes: in 8-lane vectors, every build */
#define LANES(name) LANES_(name, VL)
#define LANES_(name, lanes) LANES__(name, lanes)
#define LANES__(name, lanes) name##lanes
#define VNB DENSE_NB
#define VT v8f
#define VL 8
#define VLD LOADV
#define VST STOREV
#define VB vbcast
#define VFMA vfma
#define VSEL vsel
#define VTANH tanh_rat
#define VACC8(s, x, y) ((s) += (x) * (y))
#include "_mlp_lanes.h"

#if LEAKAUDIT_V16
/* ... and in 16-lane vectors (AVX-512): half the loads, stores and multiply-adds of the 8-lane copy for the same
 * lanes, on even NV (H a multiple of 16) */
#define VNB DENSE_NB16
#define VT v16f
#define VL 16
#define VLD LOADV16
#define VST STOREV16
#define VB vbcast16
#define VFMA vfma16
#define VSEL vsel16
#define VTANH tanh_rat16
#define VACC8(s, x, y) ((s) += lo8(x) * lo8(y), (s) += hi8(x) * hi8(y))
#include "_mlp_lanes.h"
#endif

/* The rows of a step for width NV: 16-lane vectors where the build has them and H is a multiple of 16, else 8 */
#if LEAKAUDIT_V16
#define rows_grouped(NV, ...) ((NV) % 2 == 0 ? rows_grouped16(NV, __VA_ARGS__) : rows_grouped8(NV, __VA_ARGS__))
#else
#define rows_grouped rows_grouped8
#endif

/* rows_grouped's arguments after its compile-time constants, and its copies: each copy of train_impl and dp_impl calls
 * two (RG rows at a time, then one at a time: ROWS_COPIES) that are functions of their own, not inlined into the
 * training loop. A call per mini-batch step costs nothing next to the step, and the compiler's later passes
 * (register allocation above all) take time growing faster than a function's size: out of line, the same code
 * compiles much faster. */
#define ROWS_DECL                                                                                         \
    const float *restrict xsq, float clipc, float *restrict nout, float *restrict zd, const float *restrict w1, \
        const float *restrict b1, const float *restrict w2, const float *restrict b2, float *restrict gw1,     \
        float *restrict gb1, float *restrict gw2, float *restrict gb2, const int64_t *restrict rstart,       \
        const int64_t *restrict rend, const int64_t *restrict indices, const float *restrict values,          \
        const int64_t *restrict y, const int64_t *restrict rows, int64_t cnt, int64_t C, int64_t c0, float inv, \
        const float *restrict coefs, float *restrict g
#define ROWS_PASS                                                                                         \
    xsq, clipc, nout, zd, w1, b1, w2, b2, gw1, gb1, gw2, gb2, rstart, rend, indices, values, y, rows, cnt, C, c0, inv, \
        coefs, g
typedef int64_t (*rows_fn)(ROWS_DECL);
/* NAME_g (ROW_GROUP(NVC) rows at a time) and NAME_1 (one at a time): rows_grouped for width NVC, activation ACT,
 * DENSE and DP */
#define ROWS_COPIES(NAME, NVC, ACT, DENSE, DP)                                                            \
    static __attribute__((noinline)) int64_t NAME##_g(ROWS_DECL)                                          \
    {                                                                                                     \
        return rows_grouped(NVC, ACT, ROW_GROUP(NVC), DENSE, DP, ROWS_PASS);                              \
    }                                                                                                     \
    static __attribute__((noinline)) int64_t NAME##_1(ROWS_DECL)                                          \
    {                                                                                                     \
        return rows_grouped(NVC, ACT, 1, DENSE, DP, ROWS_PASS);                                           \
    }

/* One-hot groups (leakaudit_onehot_prepare): columns of which every training row holds exactly one, equal to 1.
 * Group g's dominant (most frequent) column gdom[g] is dropped from the rows' lists, and its share is carried by
 * the first-layer table the forward pass reads: table[c] = W1[c] - W1[gdom[g]] for the group's other columns c,
 * W1[c] for every other column, and bias row table[d] = b1 + sum over groups of W1[gdom[g]]; so a row's sum over
 * its listed columns is b1 + x W1, with the group's dominant column in it or not (Eq.: sum_g W1[col_g] =
 * sum_g W1[gdom_g] + sum over the non-dominant col_g of (W1[col_g] - W1[gdom_g])). Built from the weights before
 * every step. gcols[gptr[G]:gptr[G + 1]] lists the columns of no group (the rows the table copies). */
static inline __attribute__((always_inline)) void onehot_table(
    const int NV, const float *restrict w1, const float *restrict b1, int64_t d, int64_t G,
    const int64_t *restrict gptr, const int64_t *restrict gcols, const int64_t *restrict gdom, float *restrict table)
{
    const int64_t H = (int64_t)NV * 8;
    for (int64_t q = gptr[G]; q < gptr[G + 1]; q++)  /* the columns of no group: W1's rows */
        memcpy(table + gcols[q] * H, w1 + gcols[q] * H, sizeof(float) * (size_t)H);
    v8f bias[NV];
    for (int v = 0; v < NV; v++) bias[v] = LOADV(b1 + 8 * v);
    for (int64_t g = 0; g < G; g++) {
        const float *wd = w1 + gdom[g] * H;
        v8f dv[NV];
        for (int v = 0; v < NV; v++) {
            dv[v] = LOADV(wd + 8 * v);
            bias[v] += dv[v];
        }
        for (int64_t q = gptr[g]; q < gptr[g + 1]; q++) {
            const int64_t c = gcols[q];
            for (int v = 0; v < NV; v++) STOREV(table + c * H + 8 * v, LOADV(w1 + c * H + 8 * v) - dv[v]);
        }
    }
    for (int v = 0; v < NV; v++) STOREV(table + d * H + 8 * v, bias[v]);
}

/* The dropped columns' weight gradients: every row of a step holds one column of group g, so the rows' dz summed
 * over the group's columns is the bias gradient, and gW1[gdom[g]] = gb1 - sum of the group's other rows of gW1
 * (not scattered: zero until here). */
static inline __attribute__((always_inline)) void onehot_complement(
    const int NV, float *restrict gw1, const float *restrict gb1, int64_t G, const int64_t *restrict gptr,
    const int64_t *restrict gcols, const int64_t *restrict gdom)
{
    const int64_t H = (int64_t)NV * 8;
    for (int64_t g = 0; g < G; g++) {
        v8f acc[NV];
        for (int v = 0; v < NV; v++) acc[v] = LOADV(gb1 + 8 * v);
        for (int64_t q = gptr[g]; q < gptr[g + 1]; q++)
            for (int v = 0; v < NV; v++) acc[v] -= LOADV(gw1 + gcols[q] * H + 8 * v);
        for (int v = 0; v < NV; v++) STOREV(gw1 + gdom[g] * H + 8 * v, acc[v]);
    }
}

/* RB rows starting at rows[0] into z (row-major, H a row), every vector of hidden units */
static inline __attribute__((always_inline)) void dense_forward_rows(
    const int NV, const int RB, const float *restrict x, const int64_t *restrict rows, int64_t d,
    const float *restrict w1, const float *restrict b1, float *restrict z)
{
    const int64_t H = (int64_t)NV * 8;
    const float *xr[DENSE_RB];
    #pragma GCC unroll 16
    for (int j = 0; j < RB; j++) xr[j] = x + rows[j] * d;
    int v0 = 0;
#if LEAKAUDIT_V16
    for (; v0 + 2 * DENSE_NB16 <= NV; v0 += 2 * DENSE_NB16)
        dense_forward_block16(RB, DENSE_NB16, H, xr, d, w1, b1, z, v0);
#endif
    for (; v0 + DENSE_NB <= NV; v0 += DENSE_NB) dense_forward_block8(RB, DENSE_NB, H, xr, d, w1, b1, z, v0);
    if (NV % DENSE_NB == 1) dense_forward_block8(RB, 1, H, xr, d, w1, b1, z, NV - 1);
    if (NV % DENSE_NB == 2) dense_forward_block8(RB, 2, H, xr, d, w1, b1, z, NV - 2);
    if (NV % DENSE_NB == 3) dense_forward_block8(RB, 3, H, xr, d, w1, b1, z, NV - 3);
}

/* z (cnt, H) = b1 + X[rows] W1 */
static inline __attribute__((always_inline)) void dense_forward(
    const int NV, const float *restrict x, const int64_t *restrict rows, int64_t cnt, int64_t d,
    const float *restrict w1, const float *restrict b1, float *restrict z)
{
    const int64_t H = (int64_t)NV * 8;
    int64_t i = 0;
    for (; i + DENSE_RB <= cnt; i += DENSE_RB) dense_forward_rows(NV, DENSE_RB, x, rows + i, d, w1, b1, z + i * H);
    for (; i < cnt; i++) dense_forward_rows(NV, 1, x, rows + i, d, w1, b1, z + i * H);
}

static inline __attribute__((always_inline)) void dense_grad_inputs(
    const int NV, const int TB, const float *restrict x, const int64_t *restrict rows, int64_t cnt, int64_t d,
    int64_t t0, const float *restrict dz, float *restrict gw1)
{
    const int64_t H = (int64_t)NV * 8;
    int v0 = 0;
#if LEAKAUDIT_V16
    for (; v0 + 2 * DENSE_NB16 <= NV; v0 += 2 * DENSE_NB16)
        dense_grad_block16(TB, DENSE_NB16, H, x, rows, cnt, d, t0, dz, gw1, v0);
#endif
    for (; v0 + DENSE_NB <= NV; v0 += DENSE_NB) dense_grad_block8(TB, DENSE_NB, H, x, rows, cnt, d, t0, dz, gw1, v0);
    if (NV % DENSE_NB == 1) dense_grad_block8(TB, 1, H, x, rows, cnt, d, t0, dz, gw1, NV - 1);
    if (NV % DENSE_NB == 2) dense_grad_block8(TB, 2, H, x, rows, cnt, d, t0, dz, gw1, NV - 2);
    if (NV % DENSE_NB == 3) dense_grad_block8(TB, 3, H, x, rows, cnt, d, t0, dz, gw1, NV - 3);
}

/* gW1 += X[rows]^T dz, dz (cnt, H) */
static inline __attribute__((always_inline)) void dense_weight_grad(
    const int NV, const float *restrict x, const int64_t *restrict rows, int64_t cnt, int64_t d,
    const float *restrict dz, float *restrict gw1)
{
    int64_t t0 = 0;
    for (; t0 + DENSE_TB <= d; t0 += DENSE_TB) dense_grad_inputs(NV, DENSE_TB, x, rows, cnt, d, t0, dz, gw1);
    for (; t0 < d; t0++) dense_grad_inputs(NV, 1, x, rows, cnt, d, t0, dz, gw1);
}

/* The parameter updates after a step's gradient (torch.optim semantics; the gradient is reset on the way), the same
 * for every width: one function each, called once a step, rather than a copy in every specialised copy. Adam (Kingma
 * & Ba 2015, Algorithm 1, with PyTorch's L2 weight decay and eps outside the square root), step_size = lr / (1 -
 * beta1^t), bc2s = sqrt(1 - beta2^t): */
static __attribute__((noinline)) void adam_update(float *restrict p, float *restrict m1, float *restrict m2,
                                                  float *restrict grad, int64_t P, float wd, float omb1, float b2c,
                                                  float omb2, float eps, float step_size, float bc2s)
{
    for (int64_t q = 0; q < P; q++) {
        const float gq = grad[q] + wd * p[q];
        grad[q] = 0.0f;
        const float mq = m1[q] + omb1 * (gq - m1[q]);
        const float vq = b2c * m2[q] + omb2 * gq * gq;
        m1[q] = mq;
        m2[q] = vq;
        p[q] -= step_size * mq / (sqrtf(vq) / bc2s + eps);
    }
}

/* SGD: p <- p - lr (g + wd p) */
static __attribute__((noinline)) void sgd_update(float *restrict p, float *restrict grad, int64_t P, float lr, float wd)
{
    for (int64_t q = 0; q < P; q++) {
        p[q] -= lr * (grad[q] + wd * p[q]);
        grad[q] = 0.0f;
    }
}

/* NV = H / 8 vectors of hidden units and DENSE: compile-time constants in the specialised copies (_mlp_train.c), whose
 * rows_grouped copies (grouped: ROW_GROUP(NV) rows at a time, single: one at a time; ROWS_COPIES, for the copy's
 * activation) have NV and the activation as constants too, so that a row's hidden vectors stay in registers from the
 * forward pass to the scatter of its gradient */
static inline __attribute__((always_inline)) int64_t train_impl(
    const int NV, const int DENSE, rows_fn grouped, rows_fn single, float *restrict p, float *restrict m1,
    float *restrict m2,
    int64_t *restrict steps,
    const int64_t *restrict rstart, const int64_t *restrict rend, const int64_t *restrict indices,
    const float *restrict values, const int64_t *restrict y, const int64_t *restrict order,
    const int64_t *restrict rowmap,
    const uint8_t *restrict member, int64_t length, int64_t n_epochs, int64_t B, int64_t d, int64_t C,
    const double *restrict hyper, int adam, const float *restrict coefs,
    float *restrict grad, int64_t *restrict rows, float *restrict g, int64_t G, const int64_t *restrict gptr,
    const int64_t *restrict gcols, const int64_t *restrict gdom, float *restrict table, const float *restrict xd,
    float *restrict zd)
{
    const int64_t H = (int64_t)NV * 8;
    if (DENSE) G = 0; /* dense rows come without one-hot groups (the dispatchers refuse both) */
    const int64_t P = d * H + H + C * H + C;
    float *w1 = p, *b1 = p + d * H, *w2 = b1 + H, *b2 = w2 + C * H;
    /* the first layer the forward pass reads: W1 and b1, or with one-hot groups the table of onehot_table */
    const float *t1 = G ? table : w1, *tb1 = G ? table + d * H : b1;
    float *gw1 = grad, *gb1 = grad + d * H, *gw2 = gb1 + H, *gb2 = gw2 + C * H;
    const double lr64 = hyper[0], beta1 = hyper[2], beta2 = hyper[3];
    const float wd = (float)hyper[1], omb1 = (float)(1.0 - beta1), b2c = (float)beta2;
    const float omb2 = (float)(1.0 - beta2), eps = (float)hyper[4], lr = (float)lr64;
    /* one logistic unit: class 0's logit is held at 0 (its weights stay 0 and get no gradient), so its logit
     * and its rows of the backward pass are skipped: the same numbers as computing them */
    const int64_t c0 = hyper[5] != 0.0 ? 1 : 0;
    int64_t taken = 0;
    memset(grad, 0, sizeof(float) * (size_t)P);
    if (G) onehot_table(NV, w1, b1, d, G, gptr, gcols, gdom, table);
    for (int64_t e = 0; e < n_epochs; e++) {
        const int64_t base = e * length;
        for (int64_t s = 0; s < length; s += B) {
            const int64_t stop = s + B < length ? s + B : length;
            int64_t cnt = 0;
            for (int64_t q = base + s; q < base + stop; q++) {
                int64_t r = rowmap[order[q]];
                if (member && !member[r]) continue;
                rows[cnt++] = r;
            }
            if (cnt == 0) continue;
            const float inv = (float)(1.0 / (double)cnt);
            /* the rows ROW_GROUP(NV) at a time, then the rest one at a time: the same sums either way */
            if (DENSE) dense_forward(NV, xd, rows, cnt, d, t1, tb1, zd);
            const int64_t i0 = grouped(0, 0.0f, 0, zd, t1, tb1, w2, b2, gw1, gb1, gw2, gb2, rstart, rend, indices,
                                       values, y, rows, cnt, C, c0, inv, coefs, g);
            single(0, 0.0f, 0, zd + i0 * H, t1, tb1, w2, b2, gw1, gb1, gw2, gb2, rstart, rend, indices, values, y,
                   rows + i0, cnt - i0, C, c0, inv, coefs, g);
            if (DENSE) dense_weight_grad(NV, xd, rows, cnt, d, zd, gw1);
            if (G) onehot_complement(NV, gw1, gb1, G, gptr, gcols, gdom);
            /* update every parameter (torch.optim semantics); the gradient is reset on the way */
            taken++;
            if (adam) {
                steps[0] += 1;
                const double t = (double)steps[0];
                const float step_size = (float)(lr64 / (1.0 - pow(beta1, t)));
                const float bc2s = (float)sqrt(1.0 - pow(beta2, t));
                adam_update(p, m1, m2, grad, P, wd, omb1, b2c, omb2, eps, step_size, bc2s);
            } else {
                sgd_update(p, grad, P, lr, wd);
            }
            if (G) onehot_table(NV, w1, b1, d, G, gptr, gcols, gdom, table);
        }
    }
    return taken;
}

/* Per-example SGD (TorchMLP's faithful mode, no weight decay): one model,
 * ``epochs`` passes over its row order; every row is one step at the old weights. W2 is stored transposed
 * (C, H). Only the weight rows of a row's listed (non-zero) inputs are read and updated. */
static inline __attribute__((always_inline)) void sgd_impl(
    const int NV, float *restrict w1, float *restrict b1, float *restrict w2, float *restrict b2,
    const int64_t *restrict indptr, const int64_t *restrict indices, const float *restrict values,
    const int64_t *restrict y, const int64_t *restrict order, int64_t m, int64_t epochs, int64_t C, float lr,
    int activation, const float *restrict coefs, float *restrict lo)
{
    const int64_t H = (int64_t)NV * 8;
    const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t e = 0; e < epochs; e++) {
        for (int64_t t = 0; t < m; t++) {
            const int64_t r = order[t];
            const int64_t q0 = indptr[r], q1 = indptr[r + 1];
            v8f zv[NV], a[NV], gh[NV];
            for (int v = 0; v < NV; v++) zv[v] = LOADV(b1 + 8 * v);
            for (int64_t q = q0; q < q1; q++) {
                const float xv = values[q];
                const float *w = w1 + indices[q] * H;
                for (int v = 0; v < NV; v++) zv[v] += xv * LOADV(w + 8 * v);
            }
            for (int v = 0; v < NV; v++)
                a[v] = activation == 0 ? tanh_rat(zv[v], coefs) : vsel(zv[v] > 0.0f, zv[v], zero);
            /* log-softmax's gradient: softmax - onehot(y), the softmax by exp(logit - logsumexp) */
            float mx = 0.0f;
            for (int64_t c = 0; c < C; c++) {
                v8f sv = zero;
                const float *wc = w2 + c * H;
                for (int v = 0; v < NV; v++) sv += a[v] * LOADV(wc + 8 * v);
                lo[c] = b2[c] + (((sv[0] + sv[1]) + (sv[2] + sv[3])) + ((sv[4] + sv[5]) + (sv[6] + sv[7])));
                if (c == 0 || lo[c] > mx) mx = lo[c];
            }
            float se = 0.0f;
            for (int64_t c = 0; c < C; c++) se += expf(lo[c] - mx);
            const float lse = mx + logf(se);
            for (int64_t c = 0; c < C; c++) lo[c] = expf(lo[c] - lse);  /* lo now holds g */
            lo[y[r]] -= 1.0f;
            /* backward at the old weights, then the step */
            for (int v = 0; v < NV; v++) gh[v] = zero;
            for (int64_t c = 0; c < C; c++) {
                const float gc = lo[c];
                const float *wc = w2 + c * H;
                for (int v = 0; v < NV; v++) gh[v] += LOADV(wc + 8 * v) * gc;
            }
            for (int v = 0; v < NV; v++)
                gh[v] = activation == 0 ? gh[v] * (lr * (1.0f - a[v] * a[v]))
                                        : vsel(zv[v] > 0.0f, lr * gh[v], zero);
            for (int64_t c = 0; c < C; c++) {
                const float gc = lr * lo[c];
                float *wc = w2 + c * H;
                for (int v = 0; v < NV; v++) STOREV(wc + 8 * v, LOADV(wc + 8 * v) - a[v] * gc);
                b2[c] -= gc;
            }
            for (int64_t q = q0; q < q1; q++) {
                const float xv = values[q];
                float *w = w1 + indices[q] * H;
                for (int v = 0; v < NV; v++) STOREV(w + 8 * v, LOADV(w + 8 * v) - xv * gh[v]);
            }
            for (int v = 0; v < NV; v++) STOREV(b1 + 8 * v, LOADV(b1 + 8 * v) - gh[v]);
        }
    }
}

/* The typed interface: one struct per part of a call, mirrored field for field by ctypes.Structure classes in
 * _mlp_native.py (Rows, TrainRule, Model, SgdRule, SgdModel, OnehotOut). Arrays are C-contiguous. */
typedef struct {
    /* row r's listed inputs: indices/values[rstart[r]:rend[r]] (CSR rows: rstart = indptr, rend = indptr + 1) */
    const int64_t *rstart, *rend, *indices;
    const float *values;
    const float *xd; /* or the dense rows (n, d), every column (the DENSE copies; the CSR pointers are not read) */
    const int64_t *y;
    int64_t d, C;
} leakaudit_rows;

typedef struct { /* the mini-batch training rule */
    int64_t H, activation, adam, n_epochs, batch_size; /* activation 0 tanh, 1 relu; adam 0 plain SGD */
    const double *hyper;  /* lr, weight decay, beta1, beta2, eps, logistic output (train_impl) */
    const float *coefs;   /* tanh_rat's coefficients */
} leakaudit_train_rule;

typedef struct { /* one model of a mini-batch call: its parameters, rows, groups and scratch */
    float *p, *m1, *m2;  /* parameters (P floats, pack_1h's layout) and Adam's moments */
    int64_t *steps;      /* Adam's step count (1) */
    const int64_t *order, *rowmap; /* its row order (positions in its row map, n_epochs length), its row map */
    const uint8_t *member;         /* (n,) rows the model trains on, or NULL: every row of the map */
    int64_t length;
    int64_t G;                     /* one-hot groups (leakaudit_onehot_prepare), 0: none */
    const int64_t *gptr, *gcols, *gdom;
    float *grad, *g, *table, *zd;  /* scratch: P floats (32-byte aligned), 4 C, (d + 1) H, B H */
    int64_t *rows;                 /* scratch: B */
} leakaudit_model;

typedef struct { /* per-example SGD's rule */
    int64_t H, epochs, activation;
    double lr;
    const float *coefs;
} leakaudit_sgd_rule;

typedef struct { /* one model of a per-example SGD call */
    float *w1, *b1, *w2, *b2; /* W1 (d, H), b1 (H), W2^T (C, H), b2 (C) */
    const int64_t *order;     /* the rows it visits, in order, every epoch */
    int64_t m;
    float *lo;                /* scratch: C */
} leakaudit_sgd_model;

typedef struct { /* what leakaudit_onehot_prepare writes */
    int64_t *work, *gptr, *gcols, *gdom; /* scratch 3 d; the groups (d + 2, d, d) */
    int64_t *rstart, *rend, *ridx;       /* the rows without the dominant columns (n, n, the rows' listed inputs) */
    float *rval;
} leakaudit_onehot_out;

#define ARGS_DECL                                                                                         \
    float *restrict p, float *restrict m1, float *restrict m2, int64_t *restrict steps,                  \
        const int64_t *restrict rstart, const int64_t *restrict rend, const int64_t *restrict indices,   \
        const float *restrict values,                                                                    \
        const int64_t *restrict y, const int64_t *restrict order, const int64_t *restrict rowmap,        \
        const uint8_t *restrict member, int64_t length, int64_t n_epochs, int64_t B, int64_t d,          \
        int64_t C, const double *restrict hyper, int adam, const float *restrict coefs,                  \
        float *restrict grad, int64_t *restrict rows, float *restrict g, int64_t G,                      \
        const int64_t *restrict gptr, const int64_t *restrict gcols, const int64_t *restrict gdom,       \
        float *restrict table, const float *restrict xd, float *restrict zd
#define ARGS_PASS                                                                                         \
    p, m1, m2, steps, rstart, rend, indices, values, y, order, rowmap, member, length, n_epochs, B, d, C, hyper, \
        adam, coefs, grad, rows, g, G, gptr, gcols, gdom, table, xd, zd

/* Gaussian noise for the DP step: 8 lanes of xoshiro128** (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", ACM TOMS 2021; 128-bit state a lane, period 2^128 - 1), a v8u lane each, and the Box-Muller
 * transform (Box & Muller 1958): two uniforms u1 in (0, 1), u2 in [0, 1) (the top 24 bits of two outputs) give
 * z1 = r cos(2 pi u2), z2 = r sin(2 pi u2), r = sqrt(-2 log u1), independent standard normals. log and sincos are
 * Cephes' single-precision minimax polynomials (Moshier's logf, sinf, cosf; a few ulp): the draws are float32
 * normals, their tails cut at sqrt(-2 log 2^-25) = 5.9 (as any Box-Muller on 24-bit uniforms). */
typedef uint32_t v8u __attribute__((vector_size(32), aligned(4)));

static inline v8u rotl8u(v8u x, int k) { return (x << k) | (x >> (32 - k)); }

/* the next output of each lane (xoshiro128**: rotl(s1 * 5, 7) * 9), its state s[0..4) advanced */
static inline v8u xoshiro8(v8u *restrict s)
{
    const v8u out = rotl8u(s[1] * 5u, 7) * 9u;
    const v8u t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl8u(s[3], 11);
    return out;
}

/* natural log of x in (0, 1], 8 lanes (Cephes logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), a degree-9 series
 * in m - 1, e log 2 in two parts) */
static inline v8f vlog(v8f x)
{
    const v8i bits = (v8i)x;
    v8i e = ((bits >> 23) & 0xff) - 126;
    v8f m = (v8f)((bits & 0x007fffff) | 0x3f000000);  /* in [0.5, 1) */
    const v8i small = m < 0.70710678118654752f;
    e = e + (small & -1);  /* e - 1 where m < sqrt(1/2) ... */
    m = vsel(small, m + m, m) - 1.0f;  /* ... and m doubled */
    const v8f z = m * m;
    v8f y = m * 7.0376836292e-2f - 1.1514610310e-1f;
    y = y * m + 1.1676998740e-1f;
    y = y * m - 1.2420140846e-1f;
    y = y * m + 1.4249322787e-1f;
    y = y * m - 1.6668057665e-1f;
    y = y * m + 2.0000714765e-1f;
    y = y * m - 2.4999993993e-1f;
    y = y * m + 3.3333331174e-1f;
    y = y * m * z;
    const v8f ef = __builtin_convertvector(e, v8f);
    y = y + ef * -2.12194440e-4f;
    y = y - 0.5f * z;
    return m + y + ef * 0.693359375f;
}

/* sin and cos of 2 pi u for u in [0, 1), 8 lanes: quadrant j = round(4 u), a = 2 pi (u - j / 4) in [-pi/4, pi/4]
 * (exact: u has 24 bits), Cephes' sinf / cosf polynomials on a, rotated by j quarter turns */
static inline void vsincos2pi(v8f u, v8f *restrict s, v8f *restrict c)
{
    const v8f jf = __builtin_convertvector(__builtin_convertvector(u * 4.0f + 0.5f, v8i), v8f);  /* u >= 0 */
    const v8f a = (u - jf * 0.25f) * 6.28318530717958648f;
    const v8f z = a * a;
    const v8f sa = ((z * -1.9515295891e-4f + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * a + a;
    const v8f ca = ((z * 2.443315711809948e-5f - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z
                   - 0.5f * z + 1.0f;
    const v8i j = __builtin_convertvector(jf, v8i) & 3;
    const v8i odd = (j & 1) != 0, neg_s = (j == 2) | (j == 3), neg_c = (j == 1) | (j == 2);
    const v8f s0 = vsel(odd, ca, sa), c0 = vsel(odd, sa, ca);  /* a quarter turn: (sin, cos) -> (cos, -sin) */
    *s = vsel(neg_s, -s0, s0);
    *c = vsel(neg_c, -c0, c0);
}

/* 16 standard normals from the 8 lanes' next 16 outputs: z[0:8] the cosines, z[8:16] the sines */
static inline void gauss16(v8u *restrict st, float *restrict z)
{
    const v8u a = xoshiro8(st), b = xoshiro8(st);
    const v8f u1 = __builtin_convertvector(a >> 8, v8f) * 5.9604644775390625e-8f + 2.98023223876953125e-8f;
    const v8f u2 = __builtin_convertvector(b >> 8, v8f) * 5.9604644775390625e-8f;
    v8f r2 = vlog(u1) * -2.0f, sv, cv;
    v8f r;
    for (int l = 0; l < 8; l++) r[l] = sqrtf(r2[l]);
    vsincos2pi(u2, &sv, &cv);
    STOREV(z, r * cv);
    STOREV(z + 8, r * sv);
}

/* DP-SGD's update of the P parameters, p <- p - lr (grad + ns noise), the gradient reset on the way; the noise (ns
 * not 0) 16 standard normal draws at a time from the lanes' state st (gauss16; the last group's unused draws are
 * discarded), straight into the update. The same for every width: one function, called once a step. */
static __attribute__((noinline)) void dp_update(float *restrict p, float *restrict grad, int64_t P, float lr, float ns,
                                                v8u *restrict st)
{
    if (ns != 0.0f) {
        float z[16];
        int64_t q = 0;
        for (; q + 16 <= P; q += 16) {
            gauss16(st, z);
            for (int k = 0; k < 16; k++) {
                p[q + k] -= lr * (grad[q + k] + ns * z[k]);
                grad[q + k] = 0.0f;
            }
        }
        if (q < P) {
            gauss16(st, z);
            for (int k = 0; q + k < P; k++) {
                p[q + k] -= lr * (grad[q + k] + ns * z[k]);
                grad[q + k] = 0.0f;
            }
        }
    } else {
        for (int64_t q = 0; q < P; q++) {
            p[q] -= lr * grad[q];
            grad[q] = 0.0f;
        }
    }
}

/* DP-SGD (DPSGD's compiled path; Abadi et al. 2016, Algorithm 1): n_steps steps of one model, step t on the rows
 * batch[step_ptr[t] : step_ptr[t + 1]] (row indices of the rows R; an empty batch takes a step of noise alone).
 * A step sums the rows' NLL gradients, each clipped to norm clipc (rows_grouped's DP copy, gradients carrying the
 * factor inv = 1 / the expected batch size), and updates every parameter
 *     p <- p - lr (inv (sum of the clipped gradients) + nscale[t] noise_t)
 * noise_t: the step's P standard normal draws (gauss16 from the lanes' state rng, in parameter order, 16 at a
 * time; rng NULL or nscale[t] = 0: none drawn); nscale[t] = noise_multiplier clip inv (the noise of the sum,
 * divided like it). The parameters, the one-hot groups and the dense rows as in
 * train_impl (softmax output only: c0 = 0). norms (or NULL): each batch row's gradient norm before clipping, at
 * the batch's positions. Scratch as train_impl's.
 * Gradient canaries (the one-run audit's white-box canaries; E = 0: none): E parameters of the auditor's own after
 * the net's, p[P : P + E] (grad likewise), that no row's gradient reaches. Canary c, when in step t's batch
 * (cbatch[cstep_ptr[t] : cstep_ptr[t + 1]], distinct indices in [0, E)), is an example whose gradient is cnorm on
 * parameter P + c alone, clipped by the rows' rule and summed with them; the step's noise and update then cover
 * all P + E parameters in one loop, from one stream (the net's draws are the first P of each step's). */
static inline __attribute__((always_inline)) int64_t dp_impl(
    const int NV, const int DENSE, rows_fn grouped, rows_fn single, float *restrict p, const int64_t *restrict rstart,
    const int64_t *restrict rend, const int64_t *restrict indices, const float *restrict values,
    const int64_t *restrict y, const float *restrict xd, int64_t d, int64_t C, const int64_t *restrict batch,
    const int64_t *restrict step_ptr, int64_t n_steps, uint32_t *restrict rng, const float *restrict nscale,
    const float *restrict xsq, float *restrict norms, float lr, float inv, float clipc, const float *restrict coefs,
    float *restrict grad, float *restrict g, float *restrict zd, int64_t G, const int64_t *restrict gptr,
    const int64_t *restrict gcols, const int64_t *restrict gdom, float *restrict table, int64_t E,
    const int64_t *restrict cbatch, const int64_t *restrict cstep_ptr, float cnorm)
{
    const int64_t H = (int64_t)NV * 8;
    if (DENSE) G = 0; /* dense rows come without one-hot groups (the dispatchers refuse both) */
    const int64_t Pnet = d * H + H + C * H + C, P = Pnet + E;  /* the net's parameters; with the canaries' */
    float cscale = clipc / (cnorm + 1e-6f);  /* a canary's clipped gradient (the rows' rule), times inv */
    if (!(cscale < 1.0f)) cscale = 1.0f;
    const float cgrad = cnorm * cscale * inv;
    float *w1 = p, *b1 = p + d * H, *w2 = b1 + H, *b2 = w2 + C * H;
    const float *t1 = G ? table : w1, *tb1 = G ? table + d * H : b1;
    float *gw1 = grad, *gb1 = grad + d * H, *gw2 = gb1 + H, *gb2 = gw2 + C * H;
    v8u st[4];  /* the noise lanes' state, in registers for the call (lane l's word w: rng[8 w + l]) */
    for (int w = 0; w < 4; w++) st[w] = rng ? *(const v8u *)(rng + 8 * w) : (v8u){0, 0, 0, 0, 0, 0, 0, 0};
    memset(grad, 0, sizeof(float) * (size_t)P);
    if (G) onehot_table(NV, w1, b1, d, G, gptr, gcols, gdom, table);
    for (int64_t t = 0; t < n_steps; t++) {
        const int64_t *rows = batch + step_ptr[t];
        const int64_t cnt = step_ptr[t + 1] - step_ptr[t];
        float *nout = norms ? norms + step_ptr[t] : 0;
        if (cnt > 0) {
            if (DENSE) dense_forward(NV, xd, rows, cnt, d, t1, tb1, zd);
            const int64_t i0 = grouped(xsq, clipc, nout, zd, t1, tb1, w2, b2, gw1, gb1, gw2, gb2, rstart, rend,
                                       indices, values, y, rows, cnt, C, 0, inv, coefs, g);
            single(xsq, clipc, nout ? nout + i0 : 0, zd + i0 * H, t1, tb1, w2, b2, gw1, gb1, gw2, gb2, rstart, rend,
                   indices, values, y, rows + i0, cnt - i0, C, 0, inv, coefs, g);
            if (DENSE) dense_weight_grad(NV, xd, rows, cnt, d, zd, gw1);
            if (G) onehot_complement(NV, gw1, gb1, G, gptr, gcols, gdom);
        }
        if (E)
            for (int64_t i = cstep_ptr[t]; i < cstep_ptr[t + 1]; i++) grad[Pnet + cbatch[i]] += cgrad;
        const float ns = rng ? nscale[t] : 0.0f;
        dp_update(p, grad, P, lr, ns, st);
        if (G) onehot_table(NV, w1, b1, d, G, gptr, gcols, gdom, table);
    }
    if (rng)
        for (int w = 0; w < 4; w++) *(v8u *)(rng + 8 * w) = st[w];
    return n_steps;
}

typedef struct { /* DP-SGD's rule */
    int64_t H, activation;  /* activation 0 tanh, 1 relu */
    double lr, inv, clip;   /* step size; 1 / the expected batch size; clip norm (infinity: no clipping) */
    const float *coefs;     /* tanh_rat's coefficients */
} leakaudit_dp_rule;

typedef struct { /* one model of a DP-SGD call: its parameters, this call's steps, one-hot groups and scratch */
    float *p;                         /* parameters (P floats, pack_1h's layout) */
    const int64_t *batch, *step_ptr;  /* step t's rows: batch[step_ptr[t] : step_ptr[t + 1]] */
    int64_t n_steps;
    uint32_t *rng;                    /* the noise lanes' state (8 x 4 uint32, advanced), or NULL: no noise */
    const float *nscale;              /* (n_steps): the noise scale of each step */
    const float *xsq;                 /* (n,) each row's squared norm, all its inputs */
    float *norms;                     /* NULL or (step_ptr[n_steps]): the rows' gradient norms before clipping */
    int64_t G;                        /* one-hot groups (leakaudit_onehot_prepare), 0: none */
    const int64_t *gptr, *gcols, *gdom;
    float *grad, *g, *table, *zd;     /* scratch: P + E floats (32-byte aligned), 4 C, (d + 1) H, B H */
    int64_t E;                        /* gradient canaries' parameters after the net's (p, grad), 0: none */
    const int64_t *cbatch, *cstep_ptr; /* step t's canaries: cbatch[cstep_ptr[t] : cstep_ptr[t + 1]] */
    double cnorm;                     /* a canary's gradient norm before clipping */
} leakaudit_dp_model;

#define DP_DECL                                                                                           \
    float *restrict p, const int64_t *restrict rstart, const int64_t *restrict rend,                     \
        const int64_t *restrict indices, const float *restrict values, const int64_t *restrict y,        \
        const float *restrict xd, int64_t d, int64_t C, const int64_t *restrict batch,                   \
        const int64_t *restrict step_ptr, int64_t n_steps, uint32_t *restrict rng,                       \
        const float *restrict nscale, const float *restrict xsq, float *restrict norms, float lr, float inv, \
        float clipc, const float *restrict coefs, float *restrict grad, float *restrict g, float *restrict zd, \
        int64_t G, const int64_t *restrict gptr, const int64_t *restrict gcols, const int64_t *restrict gdom, \
        float *restrict table, int64_t E, const int64_t *restrict cbatch, const int64_t *restrict cstep_ptr,     \
        float cnorm
#define DP_PASS                                                                                           \
    p, rstart, rend, indices, values, y, xd, d, C, batch, step_ptr, n_steps, rng, nscale, xsq, norms, lr, inv, \
        clipc, coefs, grad, g, zd, G, gptr, gcols, gdom, table, E, cbatch, cstep_ptr, cnorm

/* The specialised copies of train_impl (_mlp_train.c) and dp_impl (_mlp_dp.c), one per hidden width (H = 8 NV) and
 * activation, sparse or dense rows; called by the dispatchers in _mlp_native.c. Not exported from the library. */
#define MLP_COPY __attribute__((visibility("hidden")))
#define DECLARE_TRAIN_COPIES(NVC)                                                                         \
    MLP_COPY int64_t train_nv##NVC##_tanh(ARGS_DECL);                                                    \
    MLP_COPY int64_t train_nv##NVC##_relu(ARGS_DECL);                                                    \
    MLP_COPY int64_t train_nv##NVC##_tanh_dense(ARGS_DECL);                                              \
    MLP_COPY int64_t train_nv##NVC##_relu_dense(ARGS_DECL);
FOR_EACH_NV(DECLARE_TRAIN_COPIES)
#define DECLARE_DP_COPIES(NVC)                                                                            \
    MLP_COPY int64_t dp_nv##NVC##_tanh(DP_DECL);                                                         \
    MLP_COPY int64_t dp_nv##NVC##_relu(DP_DECL);                                                         \
    MLP_COPY int64_t dp_nv##NVC##_tanh_dense(DP_DECL);                                                   \
    MLP_COPY int64_t dp_nv##NVC##_relu_dense(DP_DECL);
FOR_EACH_NV(DECLARE_DP_COPIES)

#endif
