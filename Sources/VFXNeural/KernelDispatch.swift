import CVFXCPU
import VFXNeuralAVX512
import VFXNeuralKernels

/// The kernel sets this CPU can run, baseline first: the AVX-512 build is added when CPUID and the
/// operating system report AVX-512 F/BW/DQ/VL.
///
/// ```swift
/// for kernels in availableKernelSets() { print(kernels.name) }   // "baseline", "avx512"
/// ```
func availableKernelSets() -> [KernelSet] {
    vfx_cpu_has_avx512() != 0 ? [baselineKernels, avx512Kernels] : [baselineKernels]
}
