import VFXCore
/// Spatial convolutions in NHWC (batch 1): depthwise with SIMD over channels, and full convolutions as
/// an im2col gather of a band of output pixels followed by `gemm`.
///
/// ```swift
/// depthwiseConvolution(arguments)                 // weights packed by packDepthwiseWeights
/// convolution(GEMMTile6x16.self, tail: GEMMTile6x16.self, narrow: GEMMTile8x8.self, arguments, scratch: band)
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
/// Channels go 16, 8, 4 and then 1 at a time. Interior output pixels go four at a time (each weight vector loaded once for four pixels); border
/// pixels one at a time with their window clipped to the input.
///
/// Always inlined: the AVX-512 module must compile its own copy rather than call the baseline one.
@inlinable @inline(__always)
public func depthwiseConvolution(_ p: ConvolutionArguments) {
    let channels = p.inputChannels
    let weightStride = (channels + 15) / 16 * 16
    // Output columns whose window lies wholly inside the input: ox·stride − padLeft ≥ 0 and
    // ox·stride − padLeft + kw ≤ inputWidth.
    let interiorStart = (p.padLeft + p.strideX - 1) / p.strideX
    let lastFit = p.inputWidth - p.kernelWidth + p.padLeft
    let interiorEnd = lastFit < 0 ? 0 : min(p.outputWidth, lastFit / p.strideX + 1)
    for oy in 0..<p.outputHeight {
        let iy0 = oy * p.strideY - p.padTop
        let ky = max(0, -iy0)..<min(p.kernelHeight, p.inputHeight - iy0)
        let outputRow = p.output + oy * p.outputWidth * channels
        var ox = 0
        while ox < p.outputWidth {
            let ix0 = ox * p.strideX - p.padLeft
            if ox >= interiorStart && ox + 4 <= interiorEnd {
                var channel = 0
                while channel + 16 <= channels {
                    depthwiseQuad(SIMD16<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                                  ky: ky, out: outputRow + ox * channels)
                    channel += 16
                }
                if channel + 8 <= channels {
                    depthwiseQuad(SIMD8<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                                  ky: ky, out: outputRow + ox * channels)
                    channel += 8
                }
                if channel + 4 <= channels {
                    depthwiseQuad(SIMD4<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                                  ky: ky, out: outputRow + ox * channels)
                    channel += 4
                }
                for pixel in 0..<4 where channel < channels {
                    depthwiseScalar(p, channels: channel..<channels, weightStride: weightStride, iy0: iy0,
                                    ix0: ix0 + pixel * p.strideX, ky: ky, kx: 0..<p.kernelWidth,
                                    out: outputRow + (ox + pixel) * channels)
                }
                ox += 4
            } else {
                let kx = max(0, -ix0)..<min(p.kernelWidth, p.inputWidth - ix0)
                let out = outputRow + ox * channels
                var channel = 0
                while channel + 16 <= channels {
                    depthwiseTap(SIMD16<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                                 ky: ky, kx: kx, out: out)
                    channel += 16
                }
                if channel + 8 <= channels {
                    depthwiseTap(SIMD8<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                                 ky: ky, kx: kx, out: out)
                    channel += 8
                }
                if channel + 4 <= channels {
                    depthwiseTap(SIMD4<Float>.self, p, channel: channel, weightStride: weightStride, iy0: iy0, ix0: ix0,
                                 ky: ky, kx: kx, out: out)
                    channel += 4
                }
                depthwiseScalar(p, channels: channel..<channels, weightStride: weightStride, iy0: iy0, ix0: ix0, ky: ky,
                                kx: kx, out: out)
                ox += 1
            }
        }
    }
}

/// One vector of channels of one output pixel, window clipped to `ky` × `kx`.
@_transparent @usableFromInline
func depthwiseTap<V: FloatVector>(_ vector: V.Type, _ p: ConvolutionArguments, channel: Int, weightStride: Int, iy0: Int,
                                  ix0: Int, ky: Range<Int>, kx: Range<Int>, out: UnsafeMutablePointer<Float>) {
    let channels = p.inputChannels
    var sum = V(loadingFrom: p.bias + channel)
    for y in ky {
        let inputRow = p.input + ((iy0 + y) * p.inputWidth + ix0) * channels + channel
        let weightRow = p.weights + y * p.kernelWidth * weightStride + channel
        for x in kx {
            sum = sum.multiplyAdd(V(loadingFrom: inputRow + x * channels), V(loadingFrom: weightRow + x * weightStride))
        }
    }
    sum.clamped(p.lower, p.upper).store(to: out + channel)
}

/// One vector of channels of four neighbouring interior output pixels: each weight vector is loaded once.
@_transparent @usableFromInline
func depthwiseQuad<V: FloatVector>(_ vector: V.Type, _ p: ConvolutionArguments, channel: Int, weightStride: Int, iy0: Int,
                                   ix0: Int, ky: Range<Int>, out: UnsafeMutablePointer<Float>) {
    let channels = p.inputChannels
    let step = p.strideX * channels
    let initial = V(loadingFrom: p.bias + channel)
    var s0 = initial, s1 = initial, s2 = initial, s3 = initial
    for y in ky {
        var input = p.input + ((iy0 + y) * p.inputWidth + ix0) * channels + channel
        var weight = p.weights + y * p.kernelWidth * weightStride + channel
        if p.strideX == 1 {
            // Stride 1: the four windows overlap, so each input vector is loaded once and slides
            // through the four accumulators' positions.
            var v0 = V(loadingFrom: input), v1 = V(loadingFrom: input + channels), v2 = V(loadingFrom: input + 2 * channels)
            input += 3 * channels
            for _ in 0..<p.kernelWidth {
                let v3 = V(loadingFrom: input), w = V(loadingFrom: weight)
                s0 = s0.multiplyAdd(v0, w)
                s1 = s1.multiplyAdd(v1, w)
                s2 = s2.multiplyAdd(v2, w)
                s3 = s3.multiplyAdd(v3, w)
                v0 = v1
                v1 = v2
                v2 = v3
                input += channels
                weight += weightStride
            }
            continue
        }
        for _ in 0..<p.kernelWidth {
            let w = V(loadingFrom: weight)
            s0 = s0.multiplyAdd(V(loadingFrom: input), w)
            s1 = s1.multiplyAdd(V(loadingFrom: input + step), w)
            s2 = s2.multiplyAdd(V(loadingFrom: input + 2 * step), w)
            s3 = s3.multiplyAdd(V(loadingFrom: input + 3 * step), w)
            input += channels
            weight += weightStride
        }
    }
    s0.clamped(p.lower, p.upper).store(to: out + channel)
    s1.clamped(p.lower, p.upper).store(to: out + channels + channel)
    s2.clamped(p.lower, p.upper).store(to: out + 2 * channels + channel)
    s3.clamped(p.lower, p.upper).store(to: out + 3 * channels + channel)
}

/// The channels left after the last whole vector, one at a time.
@_transparent @usableFromInline
func depthwiseScalar(_ p: ConvolutionArguments, channels range: Range<Int>, weightStride: Int, iy0: Int, ix0: Int,
                     ky: Range<Int>, kx: Range<Int>, out: UnsafeMutablePointer<Float>) {
    let channels = p.inputChannels
    for channel in range {
        var sum = p.bias[channel]
        for y in ky {
            for x in kx {
                sum += p.input[((iy0 + y) * p.inputWidth + ix0 + x) * channels + channel]
                    * p.weights[(y * p.kernelWidth + x) * weightStride + channel]
            }
        }
        out[channel] = min(max(sum, p.lower), p.upper)
    }
}

/// Output pixels gathered per im2col band: a multiple of every tile's row count, small enough for L2.
public let convolutionBandPixels = 96

/// Scratch floats `convolution` needs for a `depth = kh·kw·inputChannels`.
public func convolutionScratchCount(depth: Int) -> Int { convolutionBandPixels * depth }

/// Full convolution: gathers `convolutionBandPixels` output pixels' receptive fields into `scratch`
/// (zeros where the window hangs over the border), then multiplies the band by the packed weights.
@inlinable
public func convolution<Tile: GEMMTile, Tail: GEMMTile, Narrow: GEMMTile>(
    _ tile: Tile.Type, tail: Tail.Type, narrow: Narrow.Type, _ p: ConvolutionArguments, scratch: UnsafeMutablePointer<Float>
) {
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
                    fillZeros(destination, rowLength)
                } else if ix0 >= 0 && ix0 + p.kernelWidth <= p.inputWidth {
                    copyFloats(destination, p.input + (iy * p.inputWidth + ix0) * p.inputChannels, rowLength)
                } else {
                    for kx in 0..<p.kernelWidth {
                        let ix = ix0 + kx
                        let target = destination + kx * p.inputChannels
                        if ix < 0 || ix >= p.inputWidth {
                            fillZeros(target, p.inputChannels)
                        } else {
                            copyFloats(target, p.input + (iy * p.inputWidth + ix) * p.inputChannels, p.inputChannels)
                        }
                    }
                }
                destination += rowLength
            }
        }
        gemm(Tile.self, tail: Tail.self, narrow: Narrow.self, GEMMArguments(a: scratch, lda: depth, rows: count, depth: depth, packed: p.weights,
                                      columns: p.outputChannels, bias: p.bias,
                                      c: p.output + first * p.outputChannels, ldc: p.outputChannels,
                                      lower: p.lower, upper: p.upper))
        first += count
    }
}

/// Copies a short run of floats inline (a library call costs more than the copy for im2col's rows).
@inlinable @inline(__always)
func copyFloats(_ target: UnsafeMutablePointer<Float>, _ source: UnsafePointer<Float>, _ count: Int) {
    var i = 0
    while i + 8 <= count {
        SIMD8<Float>(loadingFrom: source + i).store(to: target + i)
        i += 8
    }
    while i < count {
        target[i] = source[i]
        i += 1
    }
}

@inlinable @inline(__always)
func fillZeros(_ target: UnsafeMutablePointer<Float>, _ count: Int) {
    var i = 0
    while i + 8 <= count {
        SIMD8<Float>().store(to: target + i)
        i += 8
    }
    while i < count {
        target[i] = 0
        i += 1
    }
}
