import Foundation
import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Resizes the frame to `width`×`height` with a separable resampling kernel, each plane at its own
    /// resolution (sample centres aligned, edges clamped).
    /// - `width`, `height`: integer 0…16384 pixels; 0 keeps the aspect ratio from the other one (both 0:
    ///   unchanged). I420/NV12: a computed size is rounded to even.
    /// - `kernel`: `bicubic` (Keys, a = −0.5, i.e. Catmull-Rom; default), `bilinear` or `area` (box). When
    ///   shrinking, the kernel is widened by the ratio so it averages rather than skips (no aliasing).
    /// - Formats: all.
    ///
    /// Chain: `scale:width=1280:height=720` · Swift: `FilterDescription.scale(width: 1280, height: 720)`
    public static let scale = FilterSpec(
        name: "scale", family: .geometry, summary: "Resizes to width×height (0 keeps the aspect ratio) with a bicubic, bilinear or area kernel.",
        coreImage: "CILanczosScaleTransform",
        parameters: [ParameterSpec("width", .integer(0...16384), default: 0, "output width in pixels (0: from height and aspect)"),
                     ParameterSpec("height", .integer(0...16384), default: 0, "output height in pixels (0: from width and aspect)"),
                     ParameterSpec("kernel", .choice(["bicubic", "bilinear", "area"]), default: .text("bicubic"), "resampling kernel")],
        example: "scale:width=1280:height=720", swift: "FilterDescription.scale(width: 1280, height: 720)",
        ffmpeg: { arguments in
            let flags = arguments.text("kernel") == "bicubic" ? "bicubic:param0=0:param1=0.5" : arguments.text("kernel")
            return "scale=\(arguments.integer("width") == 0 ? -2 : arguments.integer("width")):\(arguments.integer("height") == 0 ? -2 : arguments.integer("height")):flags=\(flags)"
        }
    ) { arguments, context in
        .processor(ScaleProcessor(width: arguments.integer("width"), height: arguments.integer("height"),
                                  kernel: ResamplingKernel(rawValue: arguments.text("kernel")) ?? .bicubic, slices: context.slices))
    }
}

extension FilterDescription {
    public static func scale(width: Int, height: Int, kernel: String = "bicubic") -> FilterDescription {
        FilterDescription(builtIn: "scale", ["width": .integer(width), "height": .integer(height), "kernel": .text(kernel)])
    }
}

/// A resampling kernel: its weight at distance `x` (in source samples at unit scale) and its half width.
enum ResamplingKernel: String, Sendable {
    case bicubic, bilinear, area

    var support: Double {
        switch self {
        case .bicubic: 2
        case .bilinear: 1
        case .area: 0.5
        }
    }

    func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .bicubic:
            // Keys' cubic convolution with a = −0.5.
            if x < 1 { return 1.5 * x * x * x - 2.5 * x * x + 1 }
            if x < 2 { return -0.5 * x * x * x + 2.5 * x * x - 4 * x + 2 }
            return 0
        case .bilinear:
            return max(0, 1 - x)
        case .area:
            return x < 0.5 ? 1 : (x == 0.5 ? 0.5 : 0)
        }
    }
}

/// For each output position along one axis: the first source index and the weights of the taps from there
/// (indices clamped into the source, so every tap reads a real sample).
struct ResamplingTaps: Sendable {
    let taps: Int
    /// `count × taps` source indices and weights.
    let indices: [Int32]
    let weights: [Float]

    init(source: Int, destination: Int, kernel: ResamplingKernel) {
        let ratio = Double(source) / Double(destination)
        let stretch = max(1, ratio)
        let reach = kernel.support * stretch
        taps = Int((2 * reach).rounded(.up)) + 1
        var indices: [Int32] = [], weights: [Float] = []
        for d in 0..<destination {
            let center = (Double(d) + 0.5) * ratio - 0.5
            let first = Int((center - reach).rounded(.up))
            var row = (0..<taps).map { kernel.weight((Double(first + $0) - center) / stretch) }
            let total = row.reduce(0, +)
            row = row.map { $0 / (total == 0 ? 1 : total) }
            for k in 0..<taps {
                indices.append(Int32(min(max(first + k, 0), source - 1)))
                weights.append(Float(row[k]))
            }
        }
        self.indices = indices
        self.weights = weights
    }
}

/// The stage of `scale`: per plane and output row, a vertical pass (sixteen source samples per vector, from bytes)
/// into a row of floats, then a horizontal pass over that row in blocks of eight output samples (`BlockTaps`), fused
/// so the intermediate row stays in the first-level cache; both keep several independent multiply-add chains in
/// flight. Taps are made at configure time.
final class ScaleProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let width: Int, height: Int
    let kernel: ResamplingKernel
    let slices: SliceRunner
    private var planes: [PlaneScaler] = []
    private var pool: BufferPool?
    private var passThrough = false

    init(width: Int, height: Int, kernel: ResamplingKernel, slices: SliceRunner) {
        self.width = width
        self.height = height
        self.kernel = kernel
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        func even(_ value: Double) -> Int {
            let rounded = Int(value.rounded())
            return max(format.isYUV ? 2 : 1, format.isYUV ? (rounded + 1) & ~1 : rounded)
        }
        var outWidth = width, outHeight = height
        if width == 0 && height == 0 {
            (outWidth, outHeight) = (input.width, input.height)
        } else if width == 0 {
            outWidth = even(Double(height) * Double(input.width) / Double(input.height))
        } else if height == 0 {
            outHeight = even(Double(width) * Double(input.height) / Double(input.width))
        }
        passThrough = outWidth == input.width && outHeight == input.height
        planes = (0..<format.planeCount).map { index in
            let from = format.planeSize(index, width: input.width, height: input.height)
            let to = format.planeSize(index, width: outWidth, height: outHeight)
            return PlaneScaler(from: from, to: to, channels: format.bytesPerPixel(plane: index), kernel: kernel)
        }
        pool = BufferPool(format: format, width: outWidth, height: outHeight, capacity: 4)
        var output = input
        output.width = outWidth
        output.height = outHeight
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "scale")
        guard let pool, !passThrough else { return frame }
        let source = frame
        let output = source.makeSibling(pool: pool)
        for (index, scaler) in planes.enumerated() {
            let (plane, target) = (source.plane(index), output.plane(index))
            slices.run(rows: target.height) { rows in scaler.run(from: plane, into: target, rows: rows) }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// The horizontal taps of one plane as dense blocks: block b makes output samples 8b..<8b+8 (samples, so the channels
/// of a pixel are separate lanes) from the `span` source samples that start at `starts[b]`, with weight
/// `weights[(b · span + j) · 8 + lane]` for source sample starts[b] + j (zero where the lane's taps do not reach).
/// Spending `span` vector multiply-adds per eight outputs (≈ taps + 7 × ratio) instead of one scalar one per tap and
/// output keeps the pass in vectors.
struct BlockTaps: Sendable {
    let span: Int
    let starts: [Int]
    let weights: [Float]

    init(_ taps: ResamplingTaps, outputPixels: Int, channels c: Int, sourceSamples: Int) {
        let outSamples = outputPixels * c
        let blocks = (outSamples + 7) / 8
        /// Source samples of output sample s's taps.
        func sources(_ s: Int) -> [(Int, Float)] {
            let (x, channel) = s.quotientAndRemainder(dividingBy: c)
            return (0..<taps.taps).map { (Int(taps.indices[x * taps.taps + $0]) * c + channel, taps.weights[x * taps.taps + $0]) }
        }
        var ranges: [(Int, Int)] = []
        var span = 1
        for b in 0..<blocks {
            let all = (8 * b..<min(outSamples, 8 * b + 8)).flatMap(sources).map(\.0)
            let (low, high) = (all.min() ?? 0, all.max() ?? 0)
            ranges.append((low, high))
            span = max(span, high - low + 1)
        }
        span = min(span, sourceSamples)
        var starts: [Int] = [], weights = [Float](repeating: 0, count: blocks * span * 8)
        for b in 0..<blocks {
            let start = min(ranges[b].0, sourceSamples - span)
            starts.append(start)
            for s in 8 * b..<min(outSamples, 8 * b + 8) {
                for (source, weight) in sources(s) { weights[(b * span + source - start) * 8 + s - 8 * b] += weight }
            }
        }
        self.span = span
        self.starts = starts
        self.weights = weights
    }
}

/// Resampling of one plane (see `ScaleProcessor`).
struct PlaneScaler: Sendable {
    let channels: Int
    private let across: BlockTaps, down: ResamplingTaps
    private let sourceSamples: Int
    private let outSamples: Int

    init(from: (width: Int, height: Int), to: (width: Int, height: Int), channels: Int, kernel: ResamplingKernel) {
        self.channels = channels
        sourceSamples = from.width * channels
        outSamples = to.width * channels
        across = BlockTaps(ResamplingTaps(source: from.width, destination: to.width, kernel: kernel), outputPixels: to.width,
                           channels: channels, sourceSamples: sourceSamples)
        down = ResamplingTaps(source: from.height, destination: to.height, kernel: kernel)
    }

    /// Output rows `rows` of `target` from `source`.
    func run(from source: Plane, into target: Plane, rows: Range<Int>) {
        let (taps, span, sourceSamples, outSamples) = (down.taps, across.span, sourceSamples, outSamples)
        // One row of vertically filtered source samples, rounded up to whole vectors.
        withUnsafeTemporaryAllocation(of: Float.self, capacity: (sourceSamples + 15) / 16 * 16) { line in
            guard let line = line.baseAddress else { return }
            down.indices.withUnsafeBufferPointer { indices in
                down.weights.withUnsafeBufferPointer { verticalWeights in
                    across.starts.withUnsafeBufferPointer { starts in
                        across.weights.withUnsafeBufferPointer { blockWeights in
                            guard let blockWeights = blockWeights.baseAddress, let indices = indices.baseAddress,
                                  let verticalWeights = verticalWeights.baseAddress else { return }
                            for y in rows {
                                let rowTaps = indices + y * taps, rowWeights = verticalWeights + y * taps
                                // Vertical: 32 samples per step (four independent chains of multiply-adds), then 16.
                                var index = 0
                                while index + 32 <= sourceSamples {
                                    var first = SIMD16<Float>(), second = SIMD16<Float>()
                                    for k in 0..<taps {
                                        let row = source.row(Int(rowTaps[k])) + index, weight = rowWeights[k]
                                        first = first.addingProduct(loadBytes(row), weight)
                                        second = second.addingProduct(loadBytes(row + 16), weight)
                                    }
                                    first.store(to: line + index)
                                    second.store(to: line + index + 16)
                                    index += 32
                                }
                                while index < sourceSamples {
                                    let count = min(16, sourceSamples - index)
                                    var sum = SIMD16<Float>()
                                    for k in 0..<taps {
                                        sum = sum.addingProduct(loadBytes(source.row(Int(rowTaps[k])) + index, count: count), rowWeights[k])
                                    }
                                    sum.store(to: line + index)
                                    index += 16
                                }
                                // Horizontal: each block's span in four interleaved chains.
                                let output = target.row(y)
                                var block = 0, sample = 0
                                while sample < outSamples {
                                    let input = line + starts[block]
                                    let weights = blockWeights + block * span * 8
                                    var sums = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
                                    var j = 0
                                    while j + 4 <= span {
                                        sums.0 = sums.0.addingProduct(SIMD8<Float>(loadingFrom: weights + 8 * j), input[j])
                                        sums.1 = sums.1.addingProduct(SIMD8<Float>(loadingFrom: weights + 8 * j + 8), input[j + 1])
                                        sums.2 = sums.2.addingProduct(SIMD8<Float>(loadingFrom: weights + 8 * j + 16), input[j + 2])
                                        sums.3 = sums.3.addingProduct(SIMD8<Float>(loadingFrom: weights + 8 * j + 24), input[j + 3])
                                        j += 4
                                    }
                                    while j < span {
                                        sums.0 = sums.0.addingProduct(SIMD8<Float>(loadingFrom: weights + 8 * j), input[j])
                                        j += 1
                                    }
                                    let sum = (sums.0 + sums.1) + (sums.2 + sums.3)
                                    let bytes = roundedBytes(sum.clamped(0, 255))
                                    if sample + 8 <= outSamples {
                                        (output + sample).store(bytes)
                                    } else {
                                        for lane in 0..<(outSamples - sample) { output[sample + lane] = bytes[lane] }
                                    }
                                    block += 1
                                    sample += 8
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
