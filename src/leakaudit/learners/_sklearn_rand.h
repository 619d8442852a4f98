/* scikit-learn's tree splitters' random stream (sklearn/tree/_utils.pyx our_rand_r), shared by the forest and the
 * gradient-boosting kernels: a 32-bit xorshift whose state 0 is replaced by 1 (DEFAULT_SEED); a draw in [low, high)
 * is low + (state & 0x7FFFFFFF) % (high - low), as rand_int computes it. */
#ifndef LEAKAUDIT_SKLEARN_RAND_H
#define LEAKAUDIT_SKLEARN_RAND_H
#include <stdint.h>

static inline uint32_t xorshift(uint32_t s) {  /* our_rand_r's state update */
    if (s == 0) s = 1;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

#endif
