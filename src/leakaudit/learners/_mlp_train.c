/* The MLP kernel's mini-batch training copies (train_impl in _mlp_common.c): one per hidden width the dispatcher
 * (_mlp_native.c, train_dispatch) accepts, activation, and sparse or dense rows. */
#include "_mlp_common.c"

/* the copy NAME for width NVC, activation ACT (0 tanh, 1 relu) and DENSE rows: its rows_grouped copies, and
 * train_impl calling them */
#define TRAIN_COPY(NAME, NVC, ACT, DENSE)                                                                 \
    ROWS_COPIES(rows_##NAME, NVC, ACT, DENSE, 0)                                                          \
    int64_t NAME(ARGS_DECL) { return train_impl(NVC, DENSE, rows_##NAME##_g, rows_##NAME##_1, ARGS_PASS); }
/* one specialised copy per hidden width the dispatcher accepts (H = 8 NV), activation and rows */
#define SPECIALISE(NVC)                                                                                   \
    TRAIN_COPY(train_nv##NVC##_tanh, NVC, 0, 0)                                                           \
    TRAIN_COPY(train_nv##NVC##_relu, NVC, 1, 0)                                                           \
    TRAIN_COPY(train_nv##NVC##_tanh_dense, NVC, 0, 1)                                                     \
    TRAIN_COPY(train_nv##NVC##_relu_dense, NVC, 1, 1)
FOR_EACH_NV(SPECIALISE)
