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

/* x % d for d >= 1 by two products instead of a division (Lemire, Kaser & Kurz, "Faster remainder by direct
 * computation", 2019: exact for every 32-bit x and d), m = mod_magic(d) computed once: rand_int's remainder is on
 * the feature draw's path, where a 32-bit division waits ~26 cycles on Intel's Cascade Lake. */
static inline uint64_t mod_magic(uint64_t d) { return UINT64_MAX / d + 1; }

/* m[d] = mod_magic(d) for 1 <= d <= dmax (m[0] unused, 0): a splitter's table of every divisor its draws can meet */
static inline void mod_magic_table(uint64_t *m, int64_t dmax) {
    m[0] = 0;
    for (int64_t d = 1; d <= dmax; d++) m[d] = mod_magic((uint64_t)d);
}

static inline uint32_t mod_by(uint32_t x, uint32_t d, uint64_t m) {
#ifdef __SIZEOF_INT128__
    return (uint32_t)(((unsigned __int128)(m * x) * d) >> 64);
#else  /* a compiler without 128-bit integers divides */
    (void)m;
    return x % d;
#endif
}

#endif
