/* Which of the kernels' compiled variants this CPU (and its operating system) can run: 2 the AVX-512 one, 1 the
 * AVX2+FMA one, 0 the portable one. Built as its own library with the compiler's baseline flags, so that asking
 * never executes an instruction the CPU may lack (learners/_native.py opens it before any kernel library). */
#include <stdint.h>

int64_t leakaudit_cpu_level(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init(); /* a shared library may run before libgcc's constructor has filled the feature table */
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512dq"))
        return 2;
    return 1;
#else
    return 0;
#endif
}
