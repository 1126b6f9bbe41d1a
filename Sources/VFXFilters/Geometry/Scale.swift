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
        name: "scale", summary: "Resizes to width×height (0 keeps the aspect ratio) with a bicubic, bilinear or area kernel.",
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

/// The stage of `scale`: per plane, two separable passes through a float plane. The vertical pass runs sixteen
/// samples per vector; the horizontal one is scalar, so it goes second (on the output's rows) when the height
/// shrinks or stays, first (on the source's rows) when it grows. Taps and buffers are made at configure time.
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
        var output = VideoFrame(buffer: pool.makeBuffer(), metadataFrom: source)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() {
                let scaler = planes[index], plane = source.plane(index)
                if scaler.verticalFirst {
                    slices.run(rows: target.height) { rows in scaler.vertical(from: plane, rows: rows) }
                    slices.run(rows: target.height) { rows in scaler.horizontal(into: target, rows: rows) }
                } else {
                    slices.run(rows: plane.height) { rows in scaler.horizontal(plane, rows: rows) }
                    slices.run(rows: target.height) { rows in scaler.vertical(into: target, rows: rows) }
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// Resampling of one plane (see `ScaleProcessor`).
final class PlaneScaler: @unchecked Sendable {
    // Sendable: the float plane is owned here; the first pass writes disjoint rows of it, the second only reads it.
    let channels: Int
    /// True when the vertical pass goes first (the height does not grow).
    let verticalFirst: Bool
    private let across: ResamplingTaps, down: ResamplingTaps
    private let sourceSamples: Int
    private let outSamples: Int
    private let stride: Int
    private let buffer: UnsafeMutablePointer<Float>

    init(from: (width: Int, height: Int), to: (width: Int, height: Int), channels: Int, kernel: ResamplingKernel) {
        self.channels = channels
        across = ResamplingTaps(source: from.width, destination: to.width, kernel: kernel)
        down = ResamplingTaps(source: from.height, destination: to.height, kernel: kernel)
        verticalFirst = to.height <= from.height
        sourceSamples = from.width * channels
        outSamples = to.width * channels
        // Vertical first: output height × source width; else source height × output width.
        let (rows, samples) = verticalFirst ? (to.height, sourceSamples) : (from.height, outSamples)
        stride = (samples + 15) / 16 * 16 + 16
        buffer = UnsafeMutableRawPointer.allocate(byteCount: stride * rows * 4, alignment: 64)
            .bindMemory(to: Float.self, capacity: stride * rows)
    }

    deinit { buffer.deallocate() }

    /// Vertical pass first: output rows `rows` at source width, from bytes into the float plane.
    func vertical(from source: Plane, rows: Range<Int>) {
        let taps = down.taps
        down.indices.withUnsafeBufferPointer { indices in
            down.weights.withUnsafeBufferPointer { weights in
                for y in rows {
                    var index = 0
                    while index < sourceSamples {
                        let count = min(16, sourceSamples - index)
                        var sum = SIMD16<Float>()
                        for k in 0..<taps {
                            sum = sum.addingProduct(loadBytes(source.row(Int(indices[y * taps + k])) + index, count: count),
                                                    weights[y * taps + k])
                        }
                        UnsafeMutableRawPointer(buffer + y * stride + index).storeBytes(of: sum, as: SIMD16<Float>.self)
                        index += 16
                    }
                }
            }
        }
    }

    /// Horizontal pass second: output rows `rows` from the float plane into bytes.
    func horizontal(into target: Plane, rows: Range<Int>) {
        let c = channels, taps = across.taps
        across.indices.withUnsafeBufferPointer { indices in
            across.weights.withUnsafeBufferPointer { weights in
                for y in rows {
                    let input = buffer + y * stride
                    let output = target.row(y)
                    for x in 0..<(outSamples / c) {
                        for channel in 0..<c {
                            var sum: Float = 0
                            for k in 0..<taps { sum += weights[x * taps + k] * input[Int(indices[x * taps + k]) * c + channel] }
                            output[x * c + channel] = UInt8(min(max(sum, 0), 255).rounded(.toNearestOrEven))
                        }
                    }
                }
            }
        }
    }

    func horizontal(_ source: Plane, rows: Range<Int>) {
        let c = channels, taps = across.taps
        across.indices.withUnsafeBufferPointer { indices in
            across.weights.withUnsafeBufferPointer { weights in
                for y in rows {
                    let input = source.row(y)
                    let output = buffer + y * stride
                    for x in 0..<(outSamples / c) {
                        for channel in 0..<c {
                            var sum: Float = 0
                            for k in 0..<taps {
                                sum += weights[x * taps + k] * Float(input[Int(indices[x * taps + k]) * c + channel])
                            }
                            output[x * c + channel] = sum
                        }
                    }
                }
            }
        }
    }

    func vertical(into target: Plane, rows: Range<Int>) {
        let taps = down.taps
        down.indices.withUnsafeBufferPointer { indices in
            down.weights.withUnsafeBufferPointer { weights in
                for y in rows {
                    var index = 0
                    while index < outSamples {
                        var sum = SIMD16<Float>()
                        for k in 0..<taps {
                            sum = sum.addingProduct(loadFloats(buffer + Int(indices[y * taps + k]) * stride + index), weights[y * taps + k])
                        }
                        storeBytes(sum, to: target.row(y) + index, count: min(16, outSamples - index))
                        index += 16
                    }
                }
            }
        }
    }
}
