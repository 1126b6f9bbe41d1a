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
    let parallel: Parallel
    let input: Int, output: Int
    let rows: Int, depth: Int, columns: Int
    let weights: AlignedFloats, bias: AlignedFloats
    let activation: Activation

    /// `weights` is `columns × depth`, output channel major.
    init(kernels: KernelSet, parallel: Parallel = Parallel(threads: 1), input: Int, output: Int, rows: Int, depth: Int,
         columns: Int, weights: [Float], bias: [Float], activation: Activation) {
        self.kernels = kernels
        self.parallel = parallel
        self.input = input; self.output = output
        self.rows = rows; self.depth = depth; self.columns = columns
        let layout = kernels.gemmLayout(columns: columns)
        self.weights = AlignedFloats(packGEMMWeights(weights, columns: columns, depth: depth, layout: layout))
        self.bias = AlignedFloats(padBias(bias, layout: layout))
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        parallel.forEachChunk(of: rows, work: rows * depth * columns) { band, _ in
            kernels.gemm(GEMMArguments(a: arena + input + band.lowerBound * depth, lda: depth, rows: band.count,
                                       depth: depth, packed: weights.pointer, columns: columns, bias: bias.pointer,
                                       c: arena + output + band.lowerBound * columns, ldc: columns,
                                       lower: activation.lower, upper: activation.upper))
        }
    }
}

/// A full convolution (any kernel size, stride and padding) by im2col bands and GEMM.
final class ConvolutionLayer: Layer {
    let kernels: KernelSet
    let parallel: Parallel
    let input: Int, output: Int, scratch: Int
    let geometry: WindowGeometry
    let weights: AlignedFloats, bias: AlignedFloats
    let activation: Activation

    /// Floats of arena scratch the layer needs for its im2col bands (one per thread).
    static func scratchCount(_ geometry: WindowGeometry, threads: Int = 1) -> Int {
        convolutionScratchCount(depth: geometry.kernelHeight * geometry.kernelWidth * geometry.inputChannels) * threads
    }

    /// `weights` is TFLite's `[outC][kh][kw][inC]`.
    init(kernels: KernelSet, parallel: Parallel = Parallel(threads: 1), input: Int, output: Int, scratch: Int,
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
        parallel.forEachChunk(of: geometry.outputHeight, work: geometry.multiplyAdds) { rows, chunk in
            kernels.convolution(geometry.arguments(input: arena + input, output: arena + output, weights: weights.pointer,
                                                   bias: bias.pointer, activation: activation, rows: rows),
                                arena + scratch + chunk * band)
        }
    }
}

/// A depthwise convolution (depth multiplier 1).
final class DepthwiseConvolutionLayer: Layer {
    let kernels: KernelSet
    let parallel: Parallel
    let input: Int, output: Int
    let geometry: WindowGeometry
    let weights: AlignedFloats, bias: AlignedFloats
    let activation: Activation

    /// `weights` is TFLite's `[1][kh][kw][channels]`.
    init(kernels: KernelSet, parallel: Parallel = Parallel(threads: 1), input: Int, output: Int,
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
        parallel.forEachChunk(of: geometry.outputHeight, work: geometry.multiplyAdds / max(geometry.inputChannels, 1)) {
            rows, _ in
            kernels.depthwise(geometry.arguments(input: arena + input, output: arena + output, weights: weights.pointer,
                                                 bias: bias.pointer, activation: activation, rows: rows))
        }
    }
}

/// MediaPipe's `Convolution2DTransposeBias`: every input pixel adds its kh×kw block of
/// `dot(input channels, weights)` to the output (which starts as the bias), at stride × its position
/// minus the padding. The dot products of all pixels are one GEMM into scratch, then scattered.
final class TransposeConvolutionLayer: Layer {
    let kernels: KernelSet
    let input: Int, output: Int, scratch: Int
    let geometry: WindowGeometry
    /// GEMM panels of `[kh·kw·outC]` columns over `inC`.
    let weights: AlignedFloats, zeros: AlignedFloats
    let bias: [Float]

    static func scratchCount(_ geometry: WindowGeometry) -> Int {
        geometry.inputHeight * geometry.inputWidth * geometry.kernelHeight * geometry.kernelWidth * geometry.outputChannels
    }

    /// `weights` is `[outC][kh][kw][inC]` as the file stores it; `geometry` describes the transposed
    /// window (input → output upsampling).
    init(kernels: KernelSet, input: Int, output: Int, scratch: Int, geometry: WindowGeometry, weights: [Float],
         bias: [Float]) {
        self.kernels = kernels
        self.input = input; self.output = output; self.scratch = scratch
        self.geometry = geometry
        let taps = geometry.kernelHeight * geometry.kernelWidth
        let outC = geometry.outputChannels, inC = geometry.inputChannels
        var columns = [Float](repeating: 0, count: weights.count)
        for o in 0..<outC {
            for t in 0..<taps {
                for i in 0..<inC { columns[((t * outC + o) * inC) + i] = weights[(o * taps + t) * inC + i] }
            }
        }
        let layout = kernels.gemmLayout(columns: taps * outC)
        self.weights = AlignedFloats(packGEMMWeights(columns, columns: taps * outC, depth: inC, layout: layout))
        zeros = AlignedFloats(count: layout.paddedColumns)
        self.bias = bias
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let g = geometry
        let outC = g.outputChannels, taps = g.kernelHeight * g.kernelWidth, blocks = arena + scratch
        kernels.gemm(GEMMArguments(a: arena + input, lda: g.inputChannels, rows: g.inputHeight * g.inputWidth,
                                   depth: g.inputChannels, packed: weights.pointer, columns: taps * outC,
                                   bias: zeros.pointer, c: blocks, ldc: taps * outC, lower: -.infinity, upper: .infinity))
        let out = arena + output
        bias.withUnsafeBufferPointer { bias in
            for pixel in 0..<(g.outputHeight * g.outputWidth) {
                for c in 0..<outC { out[pixel * outC + c] = bias[c] }
            }
        }
        var block = UnsafePointer(blocks)
        for y in 0..<g.inputHeight {
            for x in 0..<g.inputWidth {
                for ky in 0..<g.kernelHeight {
                    let oy = y * g.strideY + ky - g.padTop
                    for kx in 0..<g.kernelWidth {
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
