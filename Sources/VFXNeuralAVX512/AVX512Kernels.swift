import VFXCore
import VFXNeuralKernels

/// The generic kernels of `VFXNeuralKernels` specialized in this module, which is compiled for
/// `skylake-avx512` (see Package.swift): 8×32 GEMM tiles in 16 of the 32 ZMM registers (8×16 and 8×8 for the remainder). Only call these
/// after checking the CPU (`vfx_cpu_has_avx512`); the interpreter does.
///
/// ```swift
/// let kernels = vfx_cpu_has_avx512() != 0 ? avx512Kernels : baselineKernels
/// ```
public let avx512Kernels = KernelSet(
    name: "avx512", gemmWidth: GEMMTile8x32.width, gemmTailWidth: GEMMTile8x16.width,
    gemmNarrowWidth: GEMMTile8x8.width,
    gemm: { gemm(GEMMTile8x32.self, tail: GEMMTile8x16.self, narrow: GEMMTile8x8.self, $0) },
    convolution: { convolution(GEMMTile8x32.self, tail: GEMMTile8x16.self, narrow: GEMMTile8x8.self, $0, scratch: $1) },
    depthwise: { depthwiseConvolution($0) })
