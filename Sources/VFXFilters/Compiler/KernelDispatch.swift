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
/// print(FilterKernels.name)   // "avx512", "avx2" or "portable"
/// ```
public enum FilterKernels {
    /// The kernels filters run here: "avx512" (the AVX2 ones plus VFXFiltersAVX512's), "avx2", or "portable" (Swift SIMD
    /// lane by lane: arm64, debug builds, `VFX_PORTABLE_KERNELS`).
    public static var name: String {
        #if arch(x86_64) && VFX_HASWELL
        return usesAVX512 ? "avx512" : "avx2"
        #else
        return "portable"
        #endif
    }

    static let usesAVX512: Bool = {
        #if arch(x86_64) && VFX_HASWELL
        return vfx_cpu_has_avx512_vbmi() != 0 && ProcessInfo.processInfo.environment["VFX_FILTER_KERNELS"] != "avx2"
        #else
        return false
        #endif
    }()
}
