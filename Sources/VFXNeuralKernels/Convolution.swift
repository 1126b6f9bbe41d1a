/// Spatial convolutions in NHWC (batch 1): depthwise with SIMD over channels, and full convolutions as
/// an im2col gather of a band of output pixels followed by `gemm`.
///
/// ```swift
/// depthwiseConvolution(arguments)                 // weights packed by packDepthwiseWeights
/// convolution(GEMMTile6x16.self, arguments, scratch: band)
/// ```
public struct ConvolutionArguments {
    public var input: UnsafePointer<Float>
    public var inputHeight: Int, inputWidth: Int, inputChannels: Int
    public var output: UnsafeMutablePointer<Float>
    public var outputHeight: Int, outputWidth: Int, outputChannels: Int
    public var kernelHeight: Int, kernelWidth: Int
    public var strideY: Int, strideX: Int
    /// Zero rows above and columns left of the input (implicit padding; the rest follows from the sizes).
    public var padTop: Int, padLeft: Int
    /// Depthwise: `[kh][kw][channels rounded up to 16]`. Full: GEMM panels of `[kh·kw·inputChannels]` rows.
    public var weights: UnsafePointer<Float>
    /// Padded with zeros like the weights.
    public var bias: UnsafePointer<Float>
    public var lower: Float, upper: Float

    @inlinable
    public init(input: UnsafePointer<Float>, inputHeight: Int, inputWidth: Int, inputChannels: Int,
                output: UnsafeMutablePointer<Float>, outputHeight: Int, outputWidth: Int, outputChannels: Int,
                kernelHeight: Int, kernelWidth: Int, strideY: Int, strideX: Int, padTop: Int, padLeft: Int,
                weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, lower: Float, upper: Float) {
        self.input = input; self.inputHeight = inputHeight; self.inputWidth = inputWidth
        self.inputChannels = inputChannels; self.output = output; self.outputHeight = outputHeight
        self.outputWidth = outputWidth; self.outputChannels = outputChannels; self.kernelHeight = kernelHeight
        self.kernelWidth = kernelWidth; self.strideY = strideY; self.strideX = strideX; self.padTop = padTop
        self.padLeft = padLeft; self.weights = weights; self.bias = bias; self.lower = lower; self.upper = upper
    }
}

/// Lays depthwise weights `[kh][kw][channels]` out with each tap's channel row padded to a multiple of 16.
public func packDepthwiseWeights(_ weights: [Float], taps: Int, channels: Int) -> [Float] {
    let stride = (channels + 15) / 16 * 16
    var packed = [Float](repeating: 0, count: taps * stride)
    for tap in 0..<taps {
        for channel in 0..<channels { packed[tap * stride + channel] = weights[tap * channels + channel] }
    }
    return packed
}

/// Depthwise convolution with depth multiplier 1: each channel is filtered by its own kh×kw kernel.
@inlinable
public func depthwiseConvolution(_ p: ConvolutionArguments) {
    let channels = p.inputChannels
    let weightStride = (channels + 15) / 16 * 16
    for oy in 0..<p.outputHeight {
        let iy0 = oy * p.strideY - p.padTop
        let kyStart = max(0, -iy0), kyEnd = min(p.kernelHeight, p.inputHeight - iy0)
        for ox in 0..<p.outputWidth {
            let ix0 = ox * p.strideX - p.padLeft
            let kxStart = max(0, -ix0), kxEnd = min(p.kernelWidth, p.inputWidth - ix0)
            let out = p.output + (oy * p.outputWidth + ox) * channels
            var channel = 0
            while channel + 16 <= channels {
                depthwiseTap(SIMD16<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                             ky: kyStart..<kyEnd, kx: kxStart..<kxEnd, out: out)
                channel += 16
            }
            if channel + 8 <= channels {
                depthwiseTap(SIMD8<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                             ky: kyStart..<kyEnd, kx: kxStart..<kxEnd, out: out)
                channel += 8
            }
            while channel < channels {
                var sum = p.bias[channel]
                for ky in kyStart..<kyEnd {
                    for kx in kxStart..<kxEnd {
                        sum += p.input[((iy0 + ky) * p.inputWidth + ix0 + kx) * channels + channel]
                            * p.weights[(ky * p.kernelWidth + kx) * weightStride + channel]
                    }
                }
                out[channel] = min(max(sum, p.lower), p.upper)
                channel += 1
            }
        }
    }
}

@inlinable @inline(__always)
func depthwiseTap<V: SIMD>(_ vector: V.Type, _ p: ConvolutionArguments, channel: Int, weightStride: Int, iy0: Int,
                           ix0: Int, ky: Range<Int>, kx: Range<Int>, out: UnsafeMutablePointer<Float>)
where V.Scalar == Float {
    let channels = p.inputChannels
    var sum = V(loadingFrom: p.bias + channel)
    for y in ky {
        let inputRow = p.input + ((iy0 + y) * p.inputWidth + ix0) * channels + channel
        let weightRow = p.weights + y * p.kernelWidth * weightStride + channel
        for x in kx {
            sum = sum.addingProduct(V(loadingFrom: inputRow + x * channels), V(loadingFrom: weightRow + x * weightStride))
        }
    }
    sum.clamped(p.lower, p.upper).store(to: out + channel)
}

/// Output pixels gathered per im2col band: a multiple of every tile's row count, small enough for L2.
public let convolutionBandPixels = 96

/// Scratch floats `convolution` needs for a `depth = kh·kw·inputChannels`.
public func convolutionScratchCount(depth: Int) -> Int { convolutionBandPixels * depth }

/// Full convolution: gathers `convolutionBandPixels` output pixels' receptive fields into `scratch`
/// (zeros where the window hangs over the border), then multiplies the band by the packed weights.
@inlinable
public func convolution<Tile: GEMMTile>(_ tile: Tile.Type, _ p: ConvolutionArguments, scratch: UnsafeMutablePointer<Float>) {
    let depth = p.kernelHeight * p.kernelWidth * p.inputChannels
    let pixels = p.outputHeight * p.outputWidth
    let rowLength = p.kernelWidth * p.inputChannels
    var first = 0
    while first < pixels {
        let count = min(convolutionBandPixels, pixels - first)
        for index in 0..<count {
            let pixel = first + index
            let oy = pixel / p.outputWidth, ox = pixel % p.outputWidth
            let iy0 = oy * p.strideY - p.padTop, ix0 = ox * p.strideX - p.padLeft
            var destination = scratch + index * depth
            for ky in 0..<p.kernelHeight {
                let iy = iy0 + ky
                if iy < 0 || iy >= p.inputHeight {
                    destination.update(repeating: 0, count: rowLength)
                } else if ix0 >= 0 && ix0 + p.kernelWidth <= p.inputWidth {
                    destination.update(from: p.input + (iy * p.inputWidth + ix0) * p.inputChannels, count: rowLength)
                } else {
                    for kx in 0..<p.kernelWidth {
                        let ix = ix0 + kx
                        let target = destination + kx * p.inputChannels
                        if ix < 0 || ix >= p.inputWidth {
                            target.update(repeating: 0, count: p.inputChannels)
                        } else {
                            target.update(from: p.input + (iy * p.inputWidth + ix) * p.inputChannels, count: p.inputChannels)
                        }
                    }
                }
                destination += rowLength
            }
        }
        gemm(Tile.self, GEMMArguments(a: scratch, lda: depth, rows: count, depth: depth, packed: p.weights,
                                      columns: p.outputChannels, bias: p.bias,
                                      c: p.output + first * p.outputChannels, ldc: p.outputChannels,
                                      lower: p.lower, upper: p.upper))
        first += count
    }
}
