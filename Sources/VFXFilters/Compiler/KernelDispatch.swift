#if arch(x86_64) && VFX_HASWELL
import CVFXCPU
#endif
import Foundation

/// Whether the filters' AVX-512 kernels (module VFXFiltersAVX512) run in this process: in x86-64 release builds that
/// use the AVX2 kernels (not `VFX_PORTABLE_KERNELS`), on CPUs with AVX-512 BW and VBMI, unless the environment sets
/// `VFX_FILTER_KERNELS=avx2` (to compare the two, or to rule the wide kernels out).
///
/// ```swift
/// if FilterKernels.usesAVX512 { /* tables through ByteTables512 */ }
/// ```
enum FilterKernels {
    static let usesAVX512: Bool = {
        #if arch(x86_64) && VFX_HASWELL
        return vfx_cpu_has_avx512_vbmi() != 0 && ProcessInfo.processInfo.environment["VFX_FILTER_KERNELS"] != "avx2"
        #else
        return false
        #endif
    }()
}
