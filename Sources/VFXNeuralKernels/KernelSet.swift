/// The hot kernels compiled for one instruction set. `baselineKernels` is built for the package's baseline
/// CPU; the `VFXNeuralAVX512` module builds the same generic kernels for AVX-512 and the interpreter picks
/// one set at load time.
///
/// ```swift
/// let kernels = baselineKernels
/// let packed = packGEMMWeights(weights, columns: n, depth: k, layout: kernels.gemmLayout(columns: n))
/// kernels.gemm(arguments)
/// ```
public struct KernelSet: Sendable {
    public let name: String
    /// Panel widths the GEMM weights must be packed with (see `gemmLayout(columns:)`).
    public let gemmWidth: Int
    public let gemmTailWidth: Int
    public let gemmNarrowWidth: Int
    public let gemm: @Sendable (GEMMArguments) -> Void
    public let convolution: @Sendable (ConvolutionArguments, UnsafeMutablePointer<Float>) -> Void
    public let depthwise: @Sendable (ConvolutionArguments) -> Void

    /// The weight panel layout this set's GEMM expects for `columns` output channels.
    public func gemmLayout(columns: Int) -> GEMMLayout {
        GEMMLayout(columns: columns, width: gemmWidth, tailWidth: gemmTailWidth, narrowWidth: gemmNarrowWidth)
    }

    public init(name: String, gemmWidth: Int, gemmTailWidth: Int, gemmNarrowWidth: Int, gemm: @escaping @Sendable (GEMMArguments) -> Void,
                convolution: @escaping @Sendable (ConvolutionArguments, UnsafeMutablePointer<Float>) -> Void,
                depthwise: @escaping @Sendable (ConvolutionArguments) -> Void) {
        self.name = name; self.gemmWidth = gemmWidth; self.gemmTailWidth = gemmTailWidth
        self.gemmNarrowWidth = gemmNarrowWidth; self.gemm = gemm
        self.convolution = convolution; self.depthwise = depthwise
    }
}

/// The kernels built for the baseline CPU (Haswell on x86-64, the default on arm64): 6×16 GEMM tiles, 8×8
/// for a remainder of at most 8 channels.
public let baselineKernels = KernelSet(
    name: "baseline", gemmWidth: GEMMTile6x16.width, gemmTailWidth: GEMMTile6x16.width,
    gemmNarrowWidth: GEMMTile8x8.width,
    gemm: { gemm(GEMMTile6x16.self, tail: GEMMTile6x16.self, narrow: GEMMTile8x8.self, $0) },
    convolution: { convolution(GEMMTile6x16.self, tail: GEMMTile6x16.self, narrow: GEMMTile8x8.self, $0, scratch: $1) },
    depthwise: { depthwiseConvolution($0) })
