#include "vfx_cpu.h"

int vfx_cpu_has_avx512(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

int vfx_cpu_has_avx512_vbmi(void) {
#if defined(__x86_64__)
    return vfx_cpu_has_avx512() && __builtin_cpu_supports("avx512vbmi");
#else
    return 0;
#endif
}
