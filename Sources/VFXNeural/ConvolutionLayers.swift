import VFXCore
import VFXNeuralKernels

/// Sizes of a 2-D convolution or pooling window over an NHWC tensor (batch 1).
struct WindowGeometry: Equatable {
    var inputHeight: Int, inputWidth: Int, inputChannels: Int
    var outputHeight: Int, outputWidth: Int, outputChannels: Int
    var kernelHeight: Int, kernelWidth: Int
    var strideY: Int, strideX: Int
    var padTop: Int, padLeft: Int

    /// Output size and leading padding along one axis for TFLite's SAME (output = ⌈in/stride⌉, padding
    /// split with the smaller half first) or VALID (no padding) schemes.
    static func axis(input: Int, kernel: Int, stride: Int, same: Bool) throws(ModelError) -> (output: Int, padBefore: Int) {
        guard stride >= 1, kernel >= 1 else { throw ModelError("bad window: kernel \(kernel), stride \(stride)") }
        if same {
            let output = (input + stride - 1) / stride
            return (output, max((output - 1) * stride + kernel - input, 0) / 2)
        }
        guard input >= kernel else { throw ModelError("window of \(kernel) does not fit input of \(input)") }
        return ((input - kernel) / stride + 1, 0)
    }

    /// Kernel arguments for the output rows `rows` only (the window of output row r starts at input row
    /// r·strideY − padTop, so a band is the whole problem with the padding shifted by the band's start).
    func arguments(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, weights: UnsafePointer<Float>,
                   bias: UnsafePointer<Float>, activation: Activation, rows: Range<Int>) -> ConvolutionArguments {
        ConvolutionArguments(input: input, inputHeight: inputHeight, inputWidth: inputWidth, inputChannels: inputChannels,
                             output: output + rows.lowerBound * outputWidth * outputChannels, outputHeight: rows.count,
                             outputWidth: outputWidth, outputChannels: outputChannels, kernelHeight: kernelHeight,
                             kernelWidth: kernelWidth, strideY: strideY, strideX: strideX,
                             padTop: padTop - rows.lowerBound * strideY, padLeft: padLeft,
                             weights: weights, bias: bias, lower: activation.lower, upper: activation.upper)
    }

    /// Multiply-adds of a full convolution with this window (depthwise: divide by the input channels).
    var multiplyAdds: Int { outputHeight * outputWidth * outputChannels * kernelHeight * kernelWidth * inputChannels }
}

/// A matrix multiply with packed weights: 1×1 convolutions with stride 1 (rows = pixels) and fully
/// connected layers (rows = batch).
final class MatrixMultiplyLayer: Layer {
    let kernels: KernelSet
    let parallel: SliceRunner
    let input: Int, output: Int
    /// A tensor shaped like the output added before the activation (a fused residual ADD).
    let residual: Int?
    let rows: Int, depth: Int, columns: Int
    let weights: AlignedFloats, bias: AlignedFloats
    let activation: Activation

    /// `weights` is `columns × depth`, output channel major.
    init(kernels: KernelSet, parallel: SliceRunner = SliceRunner(threads: 1), input: Int, residual: Int? = nil, output: Int,
         rows: Int, depth: Int, columns: Int, weights: [Float], bias: [Float], activation: Activation) {
        self.kernels = kernels
        self.parallel = parallel
        self.input = input; self.output = output; self.residual = residual
        self.rows = rows; self.depth = depth; self.columns = columns
        let layout = kernels.gemmLayout(columns: columns)
        self.weights = AlignedFloats(packGEMMWeights(weights, columns: columns, depth: depth, layout: layout))
        self.bias = AlignedFloats(padBias(bias, layout: layout))
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        parallel.forEachSlice(of: rows, work: rows * depth * columns) { band, _ in
            kernels.gemm(GEMMArguments(a: arena + input + band.lowerBound * depth, lda: depth, rows: band.count,
                                       depth: depth, packed: weights.pointer, columns: columns, bias: bias.pointer,
                                       c: arena + output + band.lowerBound * columns, ldc: columns,
                                       residual: residual.map { UnsafePointer(arena + $0 + band.lowerBound * columns) },
                                       lower: activation.lower, upper: activation.upper))
        }
    }
}

/// A full convolution (any kernel size, stride and padding) by im2col bands and GEMM.
final class ConvolutionLayer: Layer {
    let kernels: KernelSet
    let parallel: SliceRunner
    let input: Int, output: Int, scratch: Int
    let geometry: WindowGeometry
    let weights: AlignedFloats, bias: AlignedFloats
    let activation: Activation

    /// Floats of arena scratch the layer needs for its im2col bands (one per thread).
    static func scratchCount(_ geometry: WindowGeometry, threads: Int = 1) -> Int {
        convolutionScratchCount(depth: geometry.kernelHeight * geometry.kernelWidth * geometry.inputChannels) * threads
    }

    /// `weights` is TFLite's `[outC][kh][kw][inC]`.
    init(kernels: KernelSet, parallel: SliceRunner = SliceRunner(threads: 1), input: Int, output: Int, scratch: Int,
         geometry: WindowGeometry, weights: [Float], bias: [Float], activation: Activation) {
        self.kernels = kernels
        self.parallel = parallel
        self.input = input; self.output = output; self.scratch = scratch
        self.geometry = geometry
        let depth = geometry.kernelHeight * geometry.kernelWidth * geometry.inputChannels
        let layout = kernels.gemmLayout(columns: geometry.outputChannels)
        self.weights = AlignedFloats(packGEMMWeights(weights, columns: geometry.outputChannels, depth: depth, layout: layout))
        self.bias = AlignedFloats(padBias(bias, layout: layout))
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let band = ConvolutionLayer.scratchCount(geometry)
        parallel.forEachSlice(of: geometry.outputHeight, work: geometry.multiplyAdds) { rows, chunk in
            kernels.convolution(geometry.arguments(input: arena + input, output: arena + output, weights: weights.pointer,
                                                   bias: bias.pointer, activation: activation, rows: rows),
                                arena + scratch + chunk * band)
        }
    }
}

/// A depthwise convolution (depth multiplier 1).
final class DepthwiseConvolutionLayer: Layer {
    let kernels: KernelSet
    let parallel: SliceRunner
    let input: Int, output: Int
    let geometry: WindowGeometry
    let weights: AlignedFloats, bias: AlignedFloats
    let activation: Activation

    /// `weights` is TFLite's `[1][kh][kw][channels]`.
    init(kernels: KernelSet, parallel: SliceRunner = SliceRunner(threads: 1), input: Int, output: Int,
         geometry: WindowGeometry, weights: [Float], bias: [Float], activation: Activation) {
        self.kernels = kernels
        self.parallel = parallel
        self.input = input; self.output = output
        self.geometry = geometry
        self.weights = AlignedFloats(packDepthwiseWeights(weights, taps: geometry.kernelHeight * geometry.kernelWidth,
                                                          channels: geometry.inputChannels))
        self.bias = AlignedFloats(bias + [Float](repeating: 0, count: (16 - bias.count % 16) % 16))
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        parallel.forEachSlice(of: geometry.outputHeight, work: geometry.multiplyAdds / max(geometry.inputChannels, 1)) {
            rows, _ in
            kernels.depthwise(geometry.arguments(input: arena + input, output: arena + output, weights: weights.pointer,
                                                 bias: bias.pointer, activation: activation, rows: rows))
        }
    }
}

/// MediaPipe's `Convolution2DTransposeBias`: every input pixel adds its kh×kw block of
/// `dot(input channels, weights)` to the output (which starts as the bias), at stride × its position
/// minus the padding.
///
/// When the blocks tile the output exactly (stride = kernel size, no padding, as in the selfie models),
/// kernel row ky of input row y is one GEMM whose results land directly, contiguously, in output row
/// y·kh + ky. Otherwise all pixels' blocks are one GEMM into scratch, then added where they land.
final class TransposeConvolutionLayer: Layer {
    let kernels: KernelSet
    let input: Int, output: Int, scratch: Int
    let geometry: WindowGeometry
    /// Whether the blocks tile the output exactly.
    let tiles: Bool
    /// Tiling: one GEMM panel set per kernel row, columns `[kw][outC]`. Otherwise one set, columns
    /// `[kh][kw][outC]`. Both over `inC`.
    let weights: [AlignedFloats]
    /// Tiling: the bias repeated for each kw, padded. Otherwise zeros.
    let gemmBias: AlignedFloats
    let bias: [Float]

    static func tiles(_ g: WindowGeometry) -> Bool {
        g.strideY == g.kernelHeight && g.strideX == g.kernelWidth && g.padTop == 0 && g.padLeft == 0
            && g.outputHeight == g.inputHeight * g.kernelHeight && g.outputWidth == g.inputWidth * g.kernelWidth
    }

    static func scratchCount(_ g: WindowGeometry) -> Int {
        tiles(g) ? 0 : g.inputHeight * g.inputWidth * g.kernelHeight * g.kernelWidth * g.outputChannels
    }

    /// `weights` is `[outC][kh][kw][inC]` as the file stores it; `geometry` describes the transposed
    /// window (input → output upsampling).
    init(kernels: KernelSet, input: Int, output: Int, scratch: Int, geometry g: WindowGeometry, weights: [Float],
         bias: [Float]) {
        self.kernels = kernels
        self.input = input; self.output = output; self.scratch = scratch
        self.geometry = g
        tiles = Self.tiles(g)
        let outC = g.outputChannels, inC = g.inputChannels, kh = g.kernelHeight, kw = g.kernelWidth
        /// GEMM weights (columns × inC) for the taps of kernel rows `rows`, columns ordered [ky][kx][o].
        func columns(_ rows: Range<Int>) -> [Float] {
            var result: [Float] = []
            for ky in rows {
                for kx in 0..<kw {
                    for o in 0..<outC {
                        let start: Int = ((o * kh + ky) * kw + kx) * inC
                        result.append(contentsOf: weights[start..<start + inC])
                    }
                }
            }
            return result
        }
        let columnCount = tiles ? kw * outC : kh * kw * outC
        let layout = kernels.gemmLayout(columns: columnCount)
        self.weights = (tiles ? (0..<kh).map { $0..<$0 + 1 } : [0..<kh]).map {
            AlignedFloats(packGEMMWeights(columns($0), columns: columnCount, depth: inC, layout: layout))
        }
        let repeated = tiles ? (0..<kw).flatMap { _ in bias } : [Float](repeating: 0, count: columnCount)
        gemmBias = AlignedFloats(padBias(repeated, layout: layout))
        self.bias = bias
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let g = geometry
        let outC = g.outputChannels, inC = g.inputChannels, kh = g.kernelHeight, kw = g.kernelWidth
        let out = arena + output, source = arena + input
        if tiles {
            for y in 0..<g.inputHeight {
                for ky in 0..<kh {
                    kernels.gemm(GEMMArguments(a: source + y * g.inputWidth * inC, lda: inC, rows: g.inputWidth, depth: inC,
                                               packed: weights[ky].pointer, columns: kw * outC, bias: gemmBias.pointer,
                                               c: out + (y * kh + ky) * g.outputWidth * outC, ldc: kw * outC,
                                               lower: -.infinity, upper: .infinity))
                }
            }
            return
        }
        let blocks = arena + scratch
        kernels.gemm(GEMMArguments(a: source, lda: inC, rows: g.inputHeight * g.inputWidth, depth: inC,
                                   packed: weights[0].pointer, columns: kh * kw * outC, bias: gemmBias.pointer,
                                   c: blocks, ldc: kh * kw * outC, lower: -.infinity, upper: .infinity))
        bias.withUnsafeBufferPointer { bias in
            for pixel in 0..<(g.outputHeight * g.outputWidth) {
                for c in 0..<outC { out[pixel * outC + c] = bias[c] }
            }
        }
        var block = UnsafePointer(blocks)
        for y in 0..<g.inputHeight {
            for x in 0..<g.inputWidth {
                for ky in 0..<kh {
                    let oy = y * g.strideY + ky - g.padTop
                    for kx in 0..<kw {
                        let ox = x * g.strideX + kx - g.padLeft
                        if oy >= 0 && oy < g.outputHeight && ox >= 0 && ox < g.outputWidth {
                            let target = out + (oy * g.outputWidth + ox) * outC
                            for c in 0..<outC { target[c] += block[c] }
                        }
                        block += outC
                    }
                }
            }
        }
    }
}
