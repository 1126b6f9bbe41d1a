// swift-tools-version:6.0
import PackageDescription

// Release builds name a baseline CPU so SIMD code becomes vector instructions instead of scalar
// library calls (see docs/building.md). x86-64: Haswell (AVX2 + FMA, 2013 and later). arm64: the
// toolchain's default, which already has NEON and FMA.
// `VFX_HASWELL` tells code that may use AVX2 intrinsics that it is compiled for that baseline.
// `VFX_PORTABLE_KERNELS=1` in the environment of `swift build` leaves `VFX_HASWELL` out (same baseline CPU), so
// the kernels' portable code, which arm64 runs, is what an x86-64 build runs: `scripts/test-portable.sh`.
#if arch(x86_64)
let portableKernels = Context.environment["VFX_PORTABLE_KERNELS"] == "1"
let baselineCPU: [SwiftSetting] = [
    .unsafeFlags(["-target-cpu", "haswell"], .when(configuration: .release)),
] + (portableKernels ? [] : [.define("VFX_HASWELL", .when(configuration: .release))])
#else
let baselineCPU: [SwiftSetting] = []
#endif

/// The AVX-512 variants of the neural kernels (module VFXNeuralAVX512): the generic kernels specialized
/// for Skylake-AVX512 and later, chosen at run time only on CPUs that have it (see docs/neural.md).
#if arch(x86_64)
let avx512Kernels: [SwiftSetting] = [
    .unsafeFlags(["-target-cpu", "skylake-avx512", "-Ounchecked"], .when(configuration: .release)),
]
#else
let avx512Kernels: [SwiftSetting] = []
#endif

/// The filters' AVX-512 kernels (module VFXFiltersAVX512): Skylake-AVX512 plus VBMI's byte permutes (Ice Lake, Zen 4
/// and later), chosen at run time only on CPUs that have both (see docs/filter-engine.md). The target applies to debug
/// builds too, so the intrinsics compile there; VFXFilters calls these kernels only where it uses its AVX2 ones.
#if arch(x86_64)
let avx512FilterKernels: [SwiftSetting] = [
    .unsafeFlags(["-target-cpu", "skylake-avx512", "-Xcc", "-mavx512vbmi"]),
    .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
]
#else
let avx512FilterKernels: [SwiftSetting] = []
#endif

/// Settings for every Swift module: Swift 6 language mode (strict concurrency) plus the baseline CPU.
let common: [SwiftSetting] = baselineCPU

/// Hot numeric kernels: also drop overflow checks and preconditions in release builds. Only the kernel
/// modules take this (VFXFilters' compiled kernels, VFXNeuralKernels); VFXCore, VFXMedia and VFXNeural (which
/// parses model files) keep every check, so the code that reads input is guarded.
let kernels: [SwiftSetting] = common + [
    .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "VideoFX",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "VideoFX", targets: ["VFXCore", "VFXMedia", "VFXPipeline", "VFXFilters", "VFXNeural", "VFXVision", "VFXAudio",
                                            "VFXTemporal", "VFXEffects"]),
        .executable(name: "vfx", targets: ["vfx"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    targets: [
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat libavcodec libavutil libswscale libswresample libavdevice",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev",
                                         "libswresample-dev", "libavdevice-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .target(name: "VFXCore", swiftSettings: common),
        .target(name: "VFXMedia", dependencies: ["VFXCore", "VFXPipeline", "CFFmpeg"], swiftSettings: common),
        .target(name: "VFXAudio", dependencies: ["VFXCore", "VFXPipeline", "VFXFilters"], swiftSettings: kernels),
        .target(name: "VFXPipeline", dependencies: ["VFXCore"], swiftSettings: common),
        .target(name: "VFXFilters", dependencies: ["VFXCore", "VFXPipeline", "VFXMedia", "CFreeType", "CVFXCPU", "VFXFiltersAVX512"],
                swiftSettings: kernels),
        .target(name: "VFXFiltersAVX512", swiftSettings: avx512FilterKernels),
        .target(name: "VFXTemporal", dependencies: ["VFXCore", "VFXPipeline", "VFXFilters"], swiftSettings: kernels),
        .target(name: "CVFXCPU"),
        .target(name: "VFXNeuralKernels", dependencies: ["VFXCore"], swiftSettings: kernels),
        .target(name: "VFXNeuralAVX512", dependencies: ["VFXCore", "VFXNeuralKernels"], swiftSettings: avx512Kernels),
        .target(name: "VFXNeural", dependencies: ["VFXCore", "VFXNeuralKernels", "VFXNeuralAVX512", "CVFXCPU"],
                swiftSettings: common),
        .target(name: "VFXVision", dependencies: ["VFXCore", "VFXPipeline", "VFXNeural"], swiftSettings: kernels),
        .target(name: "VFXEffects", dependencies: ["VFXCore", "VFXPipeline", "VFXFilters", "VFXMedia", "VFXVision"],
                swiftSettings: kernels),
        .target(name: "VFXBench", dependencies: ["VFXCore", "VFXMedia", "VFXPipeline", "VFXFilters", "VFXNeural"],
                swiftSettings: common),
        .executableTarget(name: "vfx", dependencies: ["VFXCore", "VFXMedia", "VFXPipeline", "VFXFilters", "VFXNeural",
                                                      "VFXVision", "VFXAudio", "VFXTemporal", "VFXEffects", "VFXBench", "CFFmpeg"],
                          swiftSettings: common),
        .executableTarget(name: "bench", dependencies: ["VFXBench", "VFXNeural"], swiftSettings: common),
        .target(name: "VFXTestSupport", dependencies: ["VFXCore"], path: "Tests/VFXTestSupport", swiftSettings: common),
        .testTarget(name: "VFXCoreTests", dependencies: ["VFXCore", "VFXTestSupport"], swiftSettings: common),
        .testTarget(name: "VFXMediaTests", dependencies: ["VFXCore", "VFXMedia", "VFXTestSupport"], swiftSettings: common),
        .testTarget(name: "VFXPipelineTests", dependencies: ["VFXCore", "VFXPipeline", "VFXMedia"], swiftSettings: common),
        .testTarget(name: "VFXFiltersTests", dependencies: ["VFXCore", "VFXFilters", "VFXMedia", "VFXTestSupport"], swiftSettings: common),
        .testTarget(name: "VFXNeuralTests", dependencies: ["VFXNeural", "VFXNeuralKernels", "VFXNeuralAVX512", "CVFXCPU"],
                    swiftSettings: common),
        .testTarget(name: "VFXAudioTests", dependencies: ["VFXAudio", "VFXMedia", "VFXTestSupport"], swiftSettings: common),
        .testTarget(name: "VFXVisionTests", dependencies: ["VFXVision", "VFXCore", "VFXMedia", "VFXNeural", "VFXTestSupport"],
                    swiftSettings: common),
        .testTarget(name: "VFXTemporalTests", dependencies: ["VFXCore", "VFXPipeline", "VFXFilters", "VFXTemporal", "VFXMedia",
                                                            "VFXTestSupport"], swiftSettings: common),
        .testTarget(name: "VFXEffectsTests", dependencies: ["VFXEffects", "VFXVision", "VFXFilters", "VFXCore", "VFXMedia",
                                                            "VFXTestSupport"], swiftSettings: common),
        .testTarget(name: "vfxTests", dependencies: ["vfx", "VFXNeural", "VFXTestSupport"], swiftSettings: common),
    ],
    swiftLanguageModes: [.v6]
)
