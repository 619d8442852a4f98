/* The MLP kernel's DP-SGD copies (dp_impl in _mlp_common.c): one per hidden width the dispatcher
 * (_mlp_native.c, leakaudit_dp_train_1h_f32) accepts, activation, and sparse or dense rows. */
#include "_mlp_common.c"

/* the copy NAME for width NVC, activation ACT (0 tanh, 1 relu) and DENSE rows: its rows_grouped copies (with
 * per-example clipping), and dp_impl calling them */
#define DP_COPY(NAME, NVC, ACT, DENSE)                                                                    \
    ROWS_COPIES(rows_##NAME, NVC, ACT, DENSE, 1)                                                          \
    int64_t NAME(DP_DECL) { return dp_impl(NVC, DENSE, rows_##NAME##_g, rows_##NAME##_1, DP_PASS); }
#define DP_SPECIALISE(NVC)                                                                                \
    DP_COPY(dp_nv##NVC##_tanh, NVC, 0, 0)                                                                 \
    DP_COPY(dp_nv##NVC##_relu, NVC, 1, 0)                                                                 \
    DP_COPY(dp_nv##NVC##_tanh_dense, NVC, 0, 1)                                                           \
    DP_COPY(dp_nv##NVC##_relu_dense, NVC, 1, 1)
FOR_EACH_NV(DP_SPECIALISE)
