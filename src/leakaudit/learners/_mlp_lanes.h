/* The MLP kernel's code for one vector width (leakaudit): rows_grouped (a step's per-row forward and backward passes)
 * and the dense first layer's register blocks, written once for vectors of VL floats and included by _mlp_common.c
 * once for each width it builds (8 lanes in every build, 16 more in the AVX-512 one), their names suffixed with VL
 * (LANES(name): rows_grouped8, rows_grouped16, ...). Before each inclusion _mlp_common.c defines:
 *   VT, VL, VNB  the vector type, its lanes, and the most vectors a dense block holds (DENSE_NB, DENSE_NB16)
 *   VLD(p), VST(p, x), VB(x)            unaligned load and store, broadcast of a float
 *   VFMA(a, b, c), VSEL(m, a, b), VTANH(x, coefs)   a * b + c rounded once; a where m, else b; tanh_rat
 *   VACC8(s, x, y)                      s += x * y for an 8-lane s, the VL lanes 8 at a time in ascending order
 * and it undefines them at its end, ready for the next width.
 * Every lane's arithmetic is the same whatever VL (the sums over a row's inputs, the activations, the backward
 * pass and the scatter run lane by lane; the sums across hidden units, VACC8, in 8-lane vectors taken in order), so
 * both widths train the same models bit for bit (tests/learners/test_mlp_native.py). */

/* The rows of one mini-batch, RG at a time (RG a compile-time constant): forward, activation, logits, softmax and
 * backward of RG rows interleave, so their chains of dependent operations (the sums over a row's inputs, the tanh,
 * the exp) overlap instead of running one after another; every gradient term is still added in row order, so the
 * sums are bit for bit those of one row at a time (RG = 1, which also takes the rows left over). The first layer's
 * multiply-adds are explicit FMAs: left to the compiler, 8-unit nets came out fused in one copy and not in the other.
 * Returns how many of the cnt rows it took (a multiple of RG). Scratch g: RG * C floats.
 * DENSE (a compile-time constant): the first layer is done by dense_forward and dense_weight_grad around this call;
 * row i's pre-activations are read from zd[i H : (i + 1) H] and its d loss / d z written back there.
 * DP (a compile-time constant; 0 in the non-private copies, which never read xsq, clipc or nout): DP-SGD's
 * per-example clipping (dp_impl). Each row's whole gradient is computed before any of it is added: the row's
 * gradient norm is exact from the rank-one layers, |g|^2 = (|x|^2 + 1) |dz|^2 + (|a|^2 + 1) |dlogits|^2
 * (xsq[r] = |x_r|^2 over all of the row's inputs; the + 1 the biases), and the row's dlogits and dz are scaled by
 * min(1, clipc / (|g| + 1e-6)) (DPSGD's torch rule) before they are summed, in the same order as without DP; its
 * norm (before clipping) goes to nout[i] when nout is given. Gradients here carry the factor inv, so |g| is
 * the row's norm divided by inv: at a scale of 1 the sums are bit for bit the non-private ones. */
static inline __attribute__((always_inline)) int64_t LANES(rows_grouped)(
    const int NV, const int ACT, const int RG, const int DENSE, const int DP, const float *restrict xsq, float clipc,
    float *restrict nout, float *restrict zd, const float *restrict w1,
    const float *restrict b1,
    const float *restrict w2, const float *restrict b2, float *restrict gw1, float *restrict gb1,
    float *restrict gw2, float *restrict gb2, const int64_t *restrict rstart, const int64_t *restrict rend,
    const int64_t *restrict indices, const float *restrict values, const int64_t *restrict y,
    const int64_t *restrict rows, int64_t cnt, int64_t C,
    int64_t c0, float inv, const float *restrict coefs, float *restrict g)
{
    const int64_t H = (int64_t)NV * 8;
    const int NW = NV * 8 / VL;  /* vectors of VL hidden units a row */
    const VT zero = {0};
    const v8f zero8 = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i0 = 0;
    for (; i0 + RG <= cnt; i0 += RG) {
        int64_t q0s[RG], q1s[RG], nmin = INT64_MAX;
        VT a[RG][NW], dz[RG][NW];
        if (DENSE) {
            for (int j = 0; j < RG; j++)
                for (int v = 0; v < NW; v++) a[j][v] = VLD(zd + (i0 + j) * H + VL * v);
        } else {
            for (int j = 0; j < RG; j++) {
                const int64_t r = rows[i0 + j];
                q0s[j] = rstart[r];
                q1s[j] = rend[r];
                if (q1s[j] - q0s[j] < nmin) nmin = q1s[j] - q0s[j];
                for (int v = 0; v < NW; v++) a[j][v] = VLD(b1 + VL * v);
            }
            /* forward: the rows' t-th listed inputs together, then each row's rest */
            for (int64_t t = 0; t < nmin; t++)
                for (int j = 0; j < RG; j++) {
                    const float xv = values[q0s[j] + t];
                    const float *w = w1 + indices[q0s[j] + t] * H;
                    for (int v = 0; v < NW; v++) a[j][v] = VFMA(VB(xv), VLD(w + VL * v), a[j][v]);
                }
            for (int j = 0; j < RG; j++)
                for (int64_t q = q0s[j] + nmin; q < q1s[j]; q++) {
                    const float xv = values[q];
                    const float *w = w1 + indices[q] * H;
                    for (int v = 0; v < NW; v++) a[j][v] = VFMA(VB(xv), VLD(w + VL * v), a[j][v]);
                }
        }
        for (int j = 0; j < RG; j++)
            for (int v = 0; v < NW; v++)
                a[j][v] = ACT == 0 ? VTANH(a[j][v], coefs) : VSEL(a[j][v] < 0.0f, zero, a[j][v]);
        for (int64_t c = c0; c < C; c++) {
            const float *wc = w2 + c * H;
            for (int j = 0; j < RG; j++) {
                v8f sv = zero8;  /* 8 lanes whatever VL: the sum over the hidden units in the 8-lane order */
                for (int v = 0; v < NW; v++) VACC8(sv, a[j][v], VLD(wc + VL * v));
                g[j * C + c] = ((sv[0] + sv[1]) + (sv[2] + sv[3])) + ((sv[4] + sv[5]) + (sv[6] + sv[7])) + b2[c];
            }
        }
        for (int j = 0; j < RG; j++) softmax_grad(g + j * C, C, c0, y[rows[i0 + j]], inv);
        /* backward at the old weights: output layer (its gradient summed over the rows in order), d loss / d z */
        for (int j = 0; j < RG; j++)
            for (int v = 0; v < NW; v++) dz[j][v] = zero;
        if (DP) {  /* each row's dz and norm first, then its clipped gradient: the sums below, in the same order */
            for (int64_t c = c0; c < C; c++) {
                const float *wc = w2 + c * H;
                for (int v = 0; v < NW; v++) {
                    const VT wv = VLD(wc + VL * v);
                    for (int j = 0; j < RG; j++) dz[j][v] += g[j * C + c] * wv;
                }
            }
            for (int j = 0; j < RG; j++) {
                v8f sa = zero8, sd = zero8;
                for (int v = 0; v < NW; v++) {
                    dz[j][v] = ACT == 0 ? dz[j][v] * (1.0f - a[j][v] * a[j][v])
                                        : VSEL(a[j][v] <= 0.0f, zero, dz[j][v]);
                    VACC8(sa, a[j][v], a[j][v]);
                    VACC8(sd, dz[j][v], dz[j][v]);
                }
                float sg = 0.0f;
                for (int64_t c = c0; c < C; c++) sg += g[j * C + c] * g[j * C + c];
                const float na = ((sa[0] + sa[1]) + (sa[2] + sa[3])) + ((sa[4] + sa[5]) + (sa[6] + sa[7]));
                const float nd = ((sd[0] + sd[1]) + (sd[2] + sd[3])) + ((sd[4] + sd[5]) + (sd[6] + sd[7]));
                const float norm = sqrtf((xsq[rows[i0 + j]] + 1.0f) * nd + (na + 1.0f) * sg) / inv;
                if (nout) nout[i0 + j] = norm;
                float scale = clipc / (norm + 1e-6f);
                if (!(scale < 1.0f)) scale = 1.0f;  /* no clipping (clipc infinite: none asked), or within C */
                for (int64_t c = c0; c < C; c++) g[j * C + c] *= scale;
                for (int v = 0; v < NW; v++) dz[j][v] *= scale;
            }
            for (int64_t c = c0; c < C; c++) {
                float *gwc = gw2 + c * H;
                for (int v = 0; v < NW; v++) {
                    VT acc = VLD(gwc + VL * v);
                    for (int j = 0; j < RG; j++) acc += g[j * C + c] * a[j][v];
                    VST(gwc + VL * v, acc);
                }
                float sb = gb2[c];
                for (int j = 0; j < RG; j++) sb += g[j * C + c];
                gb2[c] = sb;
            }
            for (int v = 0; v < NW; v++) {
                VT acc = VLD(gb1 + VL * v);
                for (int j = 0; j < RG; j++) acc += dz[j][v];
                VST(gb1 + VL * v, acc);
            }
        }
        for (int64_t c = c0; c < C && !DP; c++) {
            const float *wc = w2 + c * H;
            float *gwc = gw2 + c * H;
            for (int v = 0; v < NW; v++) {
                const VT wv = VLD(wc + VL * v);
                VT acc = VLD(gwc + VL * v);
                for (int j = 0; j < RG; j++) {
                    dz[j][v] += g[j * C + c] * wv;
                    acc += g[j * C + c] * a[j][v];
                }
                VST(gwc + VL * v, acc);
            }
            float sb = gb2[c];
            for (int j = 0; j < RG; j++) sb += g[j * C + c];
            gb2[c] = sb;
        }
        for (int v = 0; v < NW && !DP; v++) {
            VT acc = VLD(gb1 + VL * v);
            for (int j = 0; j < RG; j++) {
                dz[j][v] = ACT == 0 ? dz[j][v] * (1.0f - a[j][v] * a[j][v])  /* tanh' = 1 - a^2 */
                                    : VSEL(a[j][v] <= 0.0f, zero, dz[j][v]);  /* relu' = [a > 0] */
                acc += dz[j][v];
            }
            VST(gb1 + VL * v, acc);
        }
        if (DENSE) {  /* the first layer's weight gradient: dense_weight_grad, after every row of the step */
            for (int j = 0; j < RG; j++)
                for (int v = 0; v < NW; v++) VST(zd + (i0 + j) * H + VL * v, dz[j][v]);
            continue;
        }
        /* first layer: scatter-add into the rows of dW1 of each row's listed inputs, row after row. The inputs
         * that all RG rows list at the same positions first (Adult's numeric columns: every row lists them first)
         * take the RG rows' terms in one pass, in row order, loaded and stored once: the same sums, without a
         * gradient row stored by one row and loaded back by the next (-DLEAKAUDIT_SHARED_PREFIX=0: row after row,
         * for benchmarks/kernel_ab.py mlp-prefix). */
        int64_t nsame = 0;
        if (RG > 1 && LEAKAUDIT_SHARED_PREFIX)
            for (; nsame < nmin; nsame++) {
                const int64_t c = indices[q0s[0] + nsame];
                int all = 1;
                for (int j = 1; j < RG; j++) all &= indices[q0s[j] + nsame] == c;
                if (!all) break;
            }
        for (int64_t t = 0; t < nsame; t++) {
            float *gw = gw1 + indices[q0s[0] + t] * H;
            for (int v = 0; v < NW; v++) {
                VT acc = VLD(gw + VL * v);
                for (int j = 0; j < RG; j++) acc = VFMA(VB(values[q0s[j] + t]), dz[j][v], acc);
                VST(gw + VL * v, acc);
            }
        }
        for (int j = 0; j < RG; j++)
            for (int64_t q = q0s[j] + nsame; q < q1s[j]; q++) {
                const float xv = values[q];
                float *gw = gw1 + indices[q] * H;
                for (int v = 0; v < NW; v++) VST(gw + VL * v, VFMA(VB(xv), dz[j][v], VLD(gw + VL * v)));
            }
    }
    return i0;
}

/* z[j, 8 v0 : 8 v0 + VL NB] = b1 + sum over t ascending of xr[j][t] W1[t] for RB rows, NB vectors */
static inline __attribute__((always_inline)) void LANES(dense_forward_block)(
    const int RB, const int NB, int64_t H, const float *const *xr, int64_t d, const float *restrict w1,
    const float *restrict b1, float *restrict z, int v0)
{
    VT acc[DENSE_RB][VNB];  /* fixed sizes (RB, NB: at most these), not VLAs: kept in registers */
    #pragma GCC unroll 16
    for (int j = 0; j < RB; j++)
        #pragma GCC unroll 16
        for (int v = 0; v < NB; v++) acc[j][v] = VLD(b1 + 8 * v0 + VL * v);
    for (int64_t t = 0; t < d; t++) {
        VT wv[VNB];
        #pragma GCC unroll 16
        for (int v = 0; v < NB; v++) wv[v] = VLD(w1 + t * H + 8 * v0 + VL * v);
        #pragma GCC unroll 16
        for (int j = 0; j < RB; j++) {
            const VT xv = VB(xr[j][t]);
            #pragma GCC unroll 16
            for (int v = 0; v < NB; v++) acc[j][v] = VFMA(xv, wv[v], acc[j][v]);
        }
    }
    #pragma GCC unroll 16
    for (int j = 0; j < RB; j++)
        #pragma GCC unroll 16
        for (int v = 0; v < NB; v++) VST(z + j * H + 8 * v0 + VL * v, acc[j][v]);
}

/* gW1[t0 : t0 + TB, 8 v0 : 8 v0 + VL NB] += sum over the rows i in order of x[rows[i], t] dz[i] */
static inline __attribute__((always_inline)) void LANES(dense_grad_block)(
    const int TB, const int NB, int64_t H, const float *restrict x, const int64_t *restrict rows, int64_t cnt,
    int64_t d, int64_t t0, const float *restrict dz, float *restrict gw1, int v0)
{
    VT acc[DENSE_TB][VNB];
    #pragma GCC unroll 16
    for (int t = 0; t < TB; t++)
        #pragma GCC unroll 16
        for (int v = 0; v < NB; v++) acc[t][v] = VLD(gw1 + (t0 + t) * H + 8 * v0 + VL * v);
    for (int64_t i = 0; i < cnt; i++) {
        const float *xi = x + rows[i] * d + t0;
        VT gv[VNB];
        #pragma GCC unroll 16
        for (int v = 0; v < NB; v++) gv[v] = VLD(dz + i * H + 8 * v0 + VL * v);
        #pragma GCC unroll 16
        for (int t = 0; t < TB; t++) {
            const VT xv = VB(xi[t]);
            #pragma GCC unroll 16
            for (int v = 0; v < NB; v++) acc[t][v] = VFMA(xv, gv[v], acc[t][v]);
        }
    }
    #pragma GCC unroll 16
    for (int t = 0; t < TB; t++)
        #pragma GCC unroll 16
        for (int v = 0; v < NB; v++) VST(gw1 + (t0 + t) * H + 8 * v0 + VL * v, acc[t][v]);
}

#undef VNB
#undef VT
#undef VL
#undef VLD
#undef VST
#undef VB
#undef VFMA
#undef VSEL
#undef VTANH
#undef VACC8
