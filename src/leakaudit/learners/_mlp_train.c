/* The MLP kernel's mini-batch training copies (train_impl in _mlp_common.c): one per hidden width the dispatcher
 * (_mlp_native.c, train_dispatch) accepts, activation, and sparse or dense rows. */
#include "_mlp_common.c"

/* one specialised copy per hidden width the dispatcher accepts (H = 8 NV) and activation */
#define SPECIALISE(NVC)                                                                                   \
    int64_t train_nv##NVC##_tanh(ARGS_DECL) { return train_impl(NVC, 0, 0, ARGS_PASS); }          \
    int64_t train_nv##NVC##_relu(ARGS_DECL) { return train_impl(NVC, 1, 0, ARGS_PASS); }          \
    int64_t train_nv##NVC##_tanh_dense(ARGS_DECL) { return train_impl(NVC, 0, 1, ARGS_PASS); }    \
    int64_t train_nv##NVC##_relu_dense(ARGS_DECL) { return train_impl(NVC, 1, 1, ARGS_PASS); }
FOR_EACH_NV(SPECIALISE)
