import Foundation
import XCTest
@testable import VFXNeural
import VFXNeuralKernels

/// Each layer against the operator's definition evaluated here in Float64 with plain loops, on small
/// random tensors whose sizes hit the kernels' edge paths (rows and channels that are not multiples of
/// the register tiles, borders, strides, SAME and VALID padding), for every kernel set this CPU runs.
///
/// Tolerance: 1e-4 of max(1, |expected|). The kernels accumulate at most a few hundred float32 products
/// of values in [-1, 1]; the rounding error of such a sum stays below 300 · 2⁻²⁴ · 300 ≈ 5e-3 in the
/// worst case and ~1e-5 in practice, while any indexing mistake changes results by O(0.1).
final class KernelTests: XCTestCase {
    let tolerance = 1e-4

    func testMatrixMultiplyMatchesDefinition() {
        var random = SeededGenerator(seed: 1)
        for kernels in availableKernelSets() {
            for (rows, depth, columns) in [(1, 1, 1), (7, 5, 3), (13, 24, 40), (50, 33, 17), (9, 64, 64), (16, 100, 72),
                                              (17, 9, 24), (11, 20, 36), (8, 7, 8), (19, 12, 56), (5, 3, 30)] {
                for (activation, withResidual) in [(Activation.none, false), (.relu, false), (.relu6, false), (.relu, true)] {
                    let a = random.floats(rows * depth, in: -2...2), w = random.floats(columns * depth)
                    let bias = random.floats(columns), r = random.floats(rows * columns)
                    let arena = TestArena()
                    let input = arena.add(a), output = arena.reserve(rows * columns)
                    let residual = withResidual ? arena.add(r) : nil
                    arena.run(MatrixMultiplyLayer(kernels: kernels, input: input, residual: residual, output: output,
                                                  rows: rows, depth: depth, columns: columns, weights: w, bias: bias,
                                                  activation: activation))
                    var expected: [Double] = []
                    for row in 0..<rows {
                        for c in 0..<columns {
                            var sum = Double(bias[c]) + (withResidual ? Double(r[row * columns + c]) : 0)
                            for k in 0..<depth { sum += Double(a[row * depth + k]) * Double(w[c * depth + k]) }
                            expected.append(min(max(sum, Double(activation.lower)), Double(activation.upper)))
                        }
                    }
                    let error = maximumError(arena.read(output, rows * columns), expected)
                    XCTAssertLessThan(error, tolerance, "\(kernels.name) \(rows)×\(depth)×\(columns) \(activation) residual \(withResidual)")
                }
            }
        }
    }

    /// Definition of CONV_2D / DEPTHWISE_CONV_2D (NHWC, weights [O][kh][kw][I] or [1][kh][kw][C]).
    func referenceConvolution(input: [Float], height: Int, width: Int, channels: Int, weights: [Float], bias: [Float],
                              outChannels: Int, kernel: (Int, Int), stride: (Int, Int), same: Bool, depthwise: Bool,
                              activation: Activation) -> (values: [Double], height: Int, width: Int) {
        let (kh, kw) = kernel
        let vertical = referencePadding(input: height, kernel: kh, stride: stride.0, same: same)
        let horizontal = referencePadding(input: width, kernel: kw, stride: stride.1, same: same)
        var result: [Double] = []
        for oy in 0..<vertical.output {
            for ox in 0..<horizontal.output {
                for o in 0..<outChannels {
                    var sum = Double(bias[o])
                    for ky in 0..<kh {
                        for kx in 0..<kw {
                            let iy = oy * stride.0 - vertical.before + ky, ix = ox * stride.1 - horizontal.before + kx
                            guard iy >= 0, iy < height, ix >= 0, ix < width else { continue }
                            if depthwise {
                                sum += Double(input[(iy * width + ix) * channels + o]) * Double(weights[(ky * kw + kx) * outChannels + o])
                            } else {
                                for i in 0..<channels {
                                    sum += Double(input[(iy * width + ix) * channels + i])
                                        * Double(weights[((o * kh + ky) * kw + kx) * channels + i])
                                }
                            }
                        }
                    }
                    result.append(min(max(sum, Double(activation.lower)), Double(activation.upper)))
                }
            }
        }
        return (result, vertical.output, horizontal.output)
    }

    func geometry(height: Int, width: Int, channels: Int, outChannels: Int, kernel: (Int, Int), stride: (Int, Int),
                  same: Bool) throws -> WindowGeometry {
        let vertical = try WindowGeometry.axis(input: height, kernel: kernel.0, stride: stride.0, same: same)
        let horizontal = try WindowGeometry.axis(input: width, kernel: kernel.1, stride: stride.1, same: same)
        return WindowGeometry(inputHeight: height, inputWidth: width, inputChannels: channels,
                              outputHeight: vertical.output, outputWidth: horizontal.output, outputChannels: outChannels,
                              kernelHeight: kernel.0, kernelWidth: kernel.1, strideY: stride.0, strideX: stride.1,
                              padTop: vertical.padBefore, padLeft: horizontal.padBefore)
    }

    func testConvolutionMatchesDefinition() throws {
        var random = SeededGenerator(seed: 2)
        for kernels in availableKernelSets() {
            for (height, width, channels, outChannels, kernel, stride, same) in [
                (9, 11, 3, 8, (3, 3), (2, 2), true), (12, 12, 3, 24, (5, 5), (2, 2), true), (7, 6, 5, 33, (3, 3), (1, 1), true),
                (10, 9, 4, 7, (3, 3), (1, 2), false), (8, 8, 16, 16, (1, 1), (2, 2), false), (6, 5, 2, 3, (2, 3), (3, 3), true),
            ] as [(Int, Int, Int, Int, (Int, Int), (Int, Int), Bool)] {
                let input = random.floats(height * width * channels)
                let weights = random.floats(outChannels * kernel.0 * kernel.1 * channels), bias = random.floats(outChannels)
                let g = try geometry(height: height, width: width, channels: channels, outChannels: outChannels,
                                     kernel: kernel, stride: stride, same: same)
                let expected = referenceConvolution(input: input, height: height, width: width, channels: channels,
                                                    weights: weights, bias: bias, outChannels: outChannels, kernel: kernel,
                                                    stride: stride, same: same, depthwise: false, activation: .relu)
                XCTAssertEqual(g.outputHeight, expected.height)
                XCTAssertEqual(g.outputWidth, expected.width)
                let arena = TestArena()
                let x = arena.add(input), y = arena.reserve(expected.values.count)
                let scratch = arena.reserve(ConvolutionLayer.scratchCount(g))
                arena.run(ConvolutionLayer(kernels: kernels, input: x, output: y, scratch: scratch, geometry: g,
                                           weights: weights, bias: bias, activation: .relu))
                XCTAssertLessThan(maximumError(arena.read(y, expected.values.count), expected.values), tolerance,
                                  "\(kernels.name) conv \(height)×\(width)×\(channels)→\(outChannels) k\(kernel) s\(stride) same=\(same)")
            }
        }
    }

    func testDepthwiseConvolutionMatchesDefinition() throws {
        var random = SeededGenerator(seed: 3)
        for kernels in availableKernelSets() {
            for kernel in [1, 3, 5] {
                for stride in [1, 2] {
                    for same in [true, false] {
                        for channels in [1, 8, 16, 24, 28, 37, 42] {
                            let (height, width) = (11, 13)
                            let input = random.floats(height * width * channels)
                            let weights = random.floats(kernel * kernel * channels), bias = random.floats(channels)
                            let g = try geometry(height: height, width: width, channels: channels, outChannels: channels,
                                                 kernel: (kernel, kernel), stride: (stride, stride), same: same)
                            let expected = referenceConvolution(
                                input: input, height: height, width: width, channels: channels, weights: weights, bias: bias,
                                outChannels: channels, kernel: (kernel, kernel), stride: (stride, stride), same: same,
                                depthwise: true, activation: .relu6)
                            let arena = TestArena()
                            let x = arena.add(input), y = arena.reserve(expected.values.count)
                            arena.run(DepthwiseConvolutionLayer(kernels: kernels, input: x, output: y, geometry: g,
                                                                weights: weights, bias: bias, activation: .relu6))
                            XCTAssertLessThan(maximumError(arena.read(y, expected.values.count), expected.values), tolerance,
                                              "\(kernels.name) depthwise k\(kernel) s\(stride) same=\(same) c\(channels)")
                        }
                    }
                }
            }
        }
    }

    /// The transposed convolution's definition: out = bias + Σ over input pixels and taps that land on it.
    func testTransposeConvolutionMatchesDefinition() throws {
        var random = SeededGenerator(seed: 4)
        for kernels in availableKernelSets() {
            for (height, width, inC, outC, kernel, stride, pad) in [
                (5, 6, 16, 1, 2, 2, 0), (4, 5, 7, 3, 2, 2, 0), (3, 4, 9, 2, 3, 3, 0), (4, 3, 5, 3, 3, 2, 1),
                (3, 3, 8, 20, 2, 1, 0),
            ] as [(Int, Int, Int, Int, Int, Int, Int)] {
                let (outH, outW) = ((height - 1) * stride + kernel - 2 * pad, (width - 1) * stride + kernel - 2 * pad)
                let input = random.floats(height * width * inC)
                let weights = random.floats(outC * kernel * kernel * inC), bias = random.floats(outC)
                var expected = [Double](repeating: 0, count: outH * outW * outC)
                for i in 0..<expected.count { expected[i] = Double(bias[i % outC]) }
                for y in 0..<height {
                    for x in 0..<width {
                        for ky in 0..<kernel {
                            for kx in 0..<kernel {
                                let oy = y * stride + ky - pad, ox = x * stride + kx - pad
                                guard oy >= 0, oy < outH, ox >= 0, ox < outW else { continue }
                                for o in 0..<outC {
                                    for i in 0..<inC {
                                        expected[(oy * outW + ox) * outC + o] += Double(input[(y * width + x) * inC + i])
                                            * Double(weights[((o * kernel + ky) * kernel + kx) * inC + i])
                                    }
                                }
                            }
                        }
                    }
                }
                let g = WindowGeometry(inputHeight: height, inputWidth: width, inputChannels: inC, outputHeight: outH,
                                       outputWidth: outW, outputChannels: outC, kernelHeight: kernel, kernelWidth: kernel,
                                       strideY: stride, strideX: stride, padTop: pad, padLeft: pad)
                let arena = TestArena()
                let x = arena.add(input), out = arena.reserve(expected.count)
                let scratch = arena.reserve(TransposeConvolutionLayer.scratchCount(g))
                arena.run(TransposeConvolutionLayer(kernels: kernels, input: x, output: out, scratch: scratch, geometry: g,
                                                    weights: weights, bias: bias))
                XCTAssertLessThan(maximumError(arena.read(out, expected.count), expected), tolerance, "\(kernels.name)")
            }
        }
    }

    func testBinaryOperationsBroadcast() {
        var random = SeededGenerator(seed: 5)
        let shape = [1, 3, 5, 20]
        let total = 300
        let a = random.floats(total)
        for (bShape, broadcast) in [
            ([1, 3, 5, 20], BinaryLayer.Broadcast.none), ([1, 1, 1, 20], .channels(20)), ([1, 1, 1, 1], .scalar),
            ([1, 3, 1, 20], .general(shape: shape, first: [300, 100, 20, 1], second: [0, 20, 0, 1])),
        ] {
            let b = random.floats(bShape.reduce(1, *))
            for operation in [BinaryLayer.Operation.add, .multiply] {
                var expected: [Double] = []
                for i1 in 0..<3 {
                    for i2 in 0..<5 {
                        for i3 in 0..<20 {
                            let x = Double(a[(i1 * 5 + i2) * 20 + i3])
                            let j1 = bShape[1] == 1 ? 0 : i1, j2 = bShape[2] == 1 ? 0 : i2, j3 = bShape[3] == 1 ? 0 : i3
                            let y = Double(b[(j1 * bShape[2] + j2) * bShape[3] + j3])
                            expected.append(max(operation == .add ? x + y : x * y, 0))
                        }
                    }
                }
                let arena = TestArena()
                let first = arena.add(a), second = arena.add(b), out = arena.reserve(total)
                arena.run(BinaryLayer(operation: operation, first: first, second: second, output: out, count: total,
                                      broadcast: broadcast, activation: .relu))
                XCTAssertLessThan(maximumError(arena.read(out, total), expected), 1e-6, "\(operation) \(bShape)")
            }
        }
    }

    /// Elementwise functions from their formulas (LOGISTIC 1/(1+e^−x), HARD_SWISH x·relu6(x+3)/6, PRELU).
    func testActivationsMatchFormulas() {
        var random = SeededGenerator(seed: 6)
        let count = 53
        let x = random.floats(count, in: -20...20)
        let cases: [(ActivationLayer.Function, (Double) -> Double)] = [
            (.clamp(.relu), { max($0, 0) }), (.clamp(.relu6), { min(max($0, 0), 6) }),
            (.hardSwish, { $0 * min(max($0 + 3, 0), 6) / 6 }), (.logistic, { 1 / (1 + exp(-$0)) }),
        ]
        for (function, formula) in cases {
            let arena = TestArena()
            let input = arena.add(x), output = arena.reserve(count)
            arena.run(ActivationLayer(function: function, input: input, output: output, count: count))
            XCTAssertLessThan(maximumError(arena.read(output, count), x.map { formula(Double($0)) }), 1e-6, "\(function)")
        }
        // The vector exponential behind LOGISTIC, over the range where e^x is a normal float.
        var worst = 0.0
        for start in stride(from: -86.0, to: 86.0, by: 0.37) {
            let lanes = SIMD16<Float>((0..<16).map { Float(start + Double($0) * 0.0213) })
            let values = exponential(lanes)
            for lane in 0..<16 {
                let expected = exp(Double(lanes[lane]))
                worst = max(worst, abs(Double(values[lane]) - expected) / expected)
            }
        }
        XCTAssertLessThan(worst, 1e-6, "relative error of exponential")

        let slopes = random.floats(20)
        let values = random.floats(60)
        let arena = TestArena()
        let input = arena.add(values), output = arena.reserve(60)
        arena.run(PReLULayer(input: input, output: output, count: 60, slopes: slopes))
        let expected = values.enumerated().map { Double($1 < 0 ? $1 * slopes[$0 % 20] : $1) }
        XCTAssertLessThan(maximumError(arena.read(output, 60), expected), 1e-7)
    }

    /// MAX_POOL_2D and AVERAGE_POOL_2D with SAME padding: the average counts only in-bounds elements.
    func testPoolingMatchesDefinition() throws {
        var random = SeededGenerator(seed: 7)
        let (height, width, channels) = (7, 9, 31)
        let input = random.floats(height * width * channels)
        for kind in [PoolingLayer.Kind.maximum, .average] {
            for (kernel, stride) in [(2, 2), (3, 2), (3, 1)] {
                let g = try geometry(height: height, width: width, channels: channels, outChannels: channels,
                                     kernel: (kernel, kernel), stride: (stride, stride), same: true)
                let v = referencePadding(input: height, kernel: kernel, stride: stride, same: true)
                let h = referencePadding(input: width, kernel: kernel, stride: stride, same: true)
                var expected: [Double] = []
                for oy in 0..<v.output {
                    for ox in 0..<h.output {
                        for c in 0..<channels {
                            var values: [Double] = []
                            for ky in 0..<kernel {
                                for kx in 0..<kernel {
                                    let iy = oy * stride - v.before + ky, ix = ox * stride - h.before + kx
                                    if iy >= 0, iy < height, ix >= 0, ix < width {
                                        values.append(Double(input[(iy * width + ix) * channels + c]))
                                    }
                                }
                            }
                            expected.append(kind == .maximum ? values.max() ?? 0 : values.reduce(0, +) / Double(values.count))
                        }
                    }
                }
                let arena = TestArena()
                let x = arena.add(input), y = arena.reserve(expected.count)
                arena.run(PoolingLayer(kind: kind, input: x, output: y, geometry: g, activation: .none))
                XCTAssertLessThan(maximumError(arena.read(y, expected.count), expected), 1e-6, "\(kind) k\(kernel) s\(stride)")
            }
        }
    }

    func testMeanOverAxes() {
        var random = SeededGenerator(seed: 8)
        let shape = [1, 4, 6, 10]
        let input = random.floats(240)
        for reduced in [Set([1, 2]), Set([3]), Set([1])] {
            var sums: [[Int]: (Double, Int)] = [:]
            for y in 0..<4 {
                for x in 0..<6 {
                    for c in 0..<10 {
                        let key = [reduced.contains(1) ? 0 : y, reduced.contains(2) ? 0 : x, reduced.contains(3) ? 0 : c]
                        let old = sums[key] ?? (0, 0)
                        sums[key] = (old.0 + Double(input[(y * 6 + x) * 10 + c]), old.1 + 1)
                    }
                }
            }
            let expected = sums.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { sums[$0]!.0 / Double(sums[$0]!.1) }
            let arena = TestArena()
            let x = arena.add(input), y = arena.reserve(expected.count)
            arena.run(MeanLayer(input: x, output: y, shape: shape, reduced: reduced))
            XCTAssertLessThan(maximumError(arena.read(y, expected.count), expected), 1e-6, "axes \(reduced)")
        }
    }

    func testPadConcatenationAndDepthToSpace() {
        var random = SeededGenerator(seed: 9)
        // PAD [1,2,3,4] by before (0,1,0,2), after (0,0,2,1) → [1,3,5,7].
        let input = random.floats(24)
        var arena = TestArena()
        var x = arena.add(input), y = arena.reserve(105)
        arena.run(PadLayer(input: x, output: y, inputShape: [1, 2, 3, 4], outputShape: [1, 3, 5, 7], before: [0, 1, 0, 2]))
        var expected = [Double](repeating: 0, count: 105)
        for i1 in 0..<2 {
            for i2 in 0..<3 {
                for i3 in 0..<4 { expected[((i1 + 1) * 5 + i2) * 7 + i3 + 2] = Double(input[(i1 * 3 + i2) * 4 + i3]) }
            }
        }
        XCTAssertEqual(maximumError(arena.read(y, 105), expected), 0)

        // CONCATENATION of [2,3,2] and [2,1,2] along axis 1.
        let a = random.floats(12), b = random.floats(4)
        arena = TestArena()
        let first = arena.add(a), second = arena.add(b)
        y = arena.reserve(16)
        arena.run(ConcatenationLayer(inputs: [first, second], output: y, outer: 2, runs: [6, 2], activation: .none))
        expected = (a[0..<6] + b[0..<2] + a[6..<12] + b[2..<4]).map(Double.init)
        XCTAssertEqual(maximumError(arena.read(y, 16), expected), 0)

        // DEPTH_TO_SPACE block 2 of [1,2,3,8] → [1,4,6,2].
        let d = random.floats(48)
        arena = TestArena()
        x = arena.add(d)
        y = arena.reserve(48)
        arena.run(DepthToSpaceLayer(input: x, output: y, height: 2, width: 3, block: 2, outputChannels: 2))
        expected = []
        for oy in 0..<4 {
            for ox in 0..<6 {
                for c in 0..<2 {
                    expected.append(Double(d[((oy / 2) * 3 + ox / 2) * 8 + ((oy % 2) * 2 + ox % 2) * 2 + c]))
                }
            }
        }
        XCTAssertEqual(maximumError(arena.read(y, 48), expected), 0)
    }

    /// RESIZE_BILINEAR from TFLite's definition: source coordinate (o + ½)·in/out − ½ with half-pixel
    /// centers, o·(in−1)/(out−1) with aligned corners, o·in/out otherwise; lower index clamped at 0,
    /// upper at in−1, weights from the distance to the lower index.
    func testResizeBilinearMatchesDefinition() {
        var random = SeededGenerator(seed: 10)
        let (height, width, channels) = (4, 5, 18)
        let input = random.floats(height * width * channels)
        for (outH, outW, align, half) in [(8, 10, false, true), (7, 3, false, true), (8, 9, true, false), (6, 7, false, false)] {
            func source(_ o: Int, _ inSize: Int, _ outSize: Int) -> (Int, Int, Double) {
                let scale = align && outSize > 1 ? Double(inSize - 1) / Double(outSize - 1) : Double(inSize) / Double(outSize)
                let position = half ? (Double(o) + 0.5) * scale - 0.5 : Double(o) * scale
                let low = max(Int(position.rounded(.down)), 0), high = min(Int(position.rounded(.up)), inSize - 1)
                return (low, high, position - Double(low))
            }
            var expected: [Double] = []
            for oy in 0..<outH {
                let (y0, y1, fy) = source(oy, height, outH)
                for ox in 0..<outW {
                    let (x0, x1, fx) = source(ox, width, outW)
                    for c in 0..<channels {
                        func at(_ y: Int, _ x: Int) -> Double { Double(input[(y * width + x) * channels + c]) }
                        expected.append(at(y0, x0) * (1 - fy) * (1 - fx) + at(y0, x1) * (1 - fy) * fx
                                        + at(y1, x0) * fy * (1 - fx) + at(y1, x1) * fy * fx)
                    }
                }
            }
            let arena = TestArena()
            let x = arena.add(input), y = arena.reserve(expected.count)
            arena.run(ResizeBilinearLayer(input: x, output: y, inputHeight: height, inputWidth: width, outputHeight: outH,
                                          outputWidth: outW, channels: channels, alignCorners: align, halfPixelCenters: half))
            XCTAssertLessThan(maximumError(arena.read(y, expected.count), expected), 1e-5, "\(outH)×\(outW) \(align) \(half)")
        }
    }

    /// The arena plan never overlaps two tensors that are alive at the same step.
    func testArenaPlanKeepsLiveTensorsApart() {
        var random = SeededGenerator(seed: 11)
        let items = (0..<60).map { id -> ArenaItem in
            let first = Int.random(in: -1...30, using: &random)
            return ArenaItem(id: id, count: Int.random(in: 1...5000, using: &random), first: first,
                             last: first + Int.random(in: 0...8, using: &random))
        }
        let (offsets, size) = planArena(items)
        for a in items {
            for b in items where a.id < b.id && a.first <= b.last && b.first <= a.last {
                let ra = offsets[a.id]!..<(offsets[a.id]! + a.count), rb = offsets[b.id]!..<(offsets[b.id]! + b.count)
                XCTAssertFalse(ra.overlaps(rb), "\(a) and \(b)")
            }
            XCTAssertLessThanOrEqual(offsets[a.id]! + a.count, size)
            XCTAssertEqual(offsets[a.id]! % 16, 0)
        }
        XCTAssertLessThan(size, items.reduce(0) { $0 + ($1.count + 15) / 16 * 16 }, "liveness lets tensors share memory")
    }
}
