#ifndef VFX_CPU_H
#define VFX_CPU_H

/// 1 when the CPU and the operating system support the AVX-512 subsets the AVX-512 kernels are compiled
/// for (F, BW, DQ, VL), else 0 (always 0 on other architectures).
int vfx_cpu_has_avx512(void);

/// 1 when the CPU also has AVX-512 VBMI (byte permutes across a whole register, `vpermi2b`), which the filters'
/// AVX-512 kernels are compiled for, else 0 (always 0 on other architectures).
int vfx_cpu_has_avx512_vbmi(void);

#endif
