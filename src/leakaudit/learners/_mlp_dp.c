/* The MLP kernel's DP-SGD copies (dp_impl in _mlp_common.c): one per hidden width the dispatcher
 * (_mlp_native.c, leakaudit_dp_train_1h_f32) accepts, activation, and sparse or dense rows. */
#include "_mlp_common.c"

#define DP_SPECIALISE(NVC)                                                                                \
    int64_t dp_nv##NVC##_tanh(DP_DECL) { return dp_impl(NVC, 0, 0, DP_PASS); }                   \
    int64_t dp_nv##NVC##_relu(DP_DECL) { return dp_impl(NVC, 1, 0, DP_PASS); }                   \
    int64_t dp_nv##NVC##_tanh_dense(DP_DECL) { return dp_impl(NVC, 0, 1, DP_PASS); }             \
    int64_t dp_nv##NVC##_relu_dense(DP_DECL) { return dp_impl(NVC, 1, 1, DP_PASS); }
FOR_EACH_NV(DP_SPECIALISE)
