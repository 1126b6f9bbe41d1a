import Foundation
import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Resizes the frame to `width`×`height` with a separable resampling kernel, each plane at its own
    /// resolution (sample centres aligned, edges clamped).
    /// - `width`, `height`: integer 0…16384 pixels; 0 keeps the aspect ratio from the other one (both 0:
    ///   unchanged, so a `kernel` given without a size is refused). I420/NV12: a computed size is rounded to even.
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
                     ParameterSpec("kernel", .choice(["bicubic", "bilinear", "area"]), default: .text("bicubic"), "resampling kernel",
                                   only: .when("width", "height", above: 0))],
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

/// The stage of `scale`: per plane, the phase path when the plane has one sample per pixel and its width changes by p:q
/// with p ≤ 3, q ≤ 2 (1080p → 720p is 3:2, halving 2:1, doubling 1:2): `ShuffleScaler` (AVX2, x86-64 release builds) where
/// its windows fit, else `PhaseScaler` (16-bit fixed point); otherwise per
/// output row a vertical pass (sixteen source samples per vector, from bytes) into a row of floats, then a horizontal
/// pass over that row in blocks of eight output samples (`BlockTaps`), fused so the intermediate row stays in the
/// first-level cache. Taps and scratch memory are made at configure time.
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
            return PlaneScaler(from: from, to: to, channels: format.bytesPerPixel(plane: index), kernel: kernel, slices: slices.threads)
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
            slices.forEachSlice(of: target.height) { rows, slice in scaler.run(from: plane, into: target, rows: rows, slice: slice) }
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

/// A scaler of one plane made at configure time: `run` writes output rows `rows` with the scratch memory of slice `slice`.
///
/// ```swift
/// scaler.run(from: source.plane(0), into: output.plane(0), rows: 0..<360, slice: 0)
/// ```
protocol PlaneRowScaler: Sendable {
    func run(from source: Plane, into target: Plane, rows: Range<Int>, slice: Int)
}

/// Resampling of one plane (see `ScaleProcessor`): the phase path when the plane has one sample per pixel and its width
/// changes by a ratio of small integers (`ShuffleScaler` on x86-64 with AVX2 where its windows fit, else `PhaseScaler`),
/// else the blocked path below.
struct PlaneScaler: Sendable {
    let channels: Int
    private let across: BlockTaps, down: ResamplingTaps
    private let sourceSamples: Int
    private let outSamples: Int
    private let phases: (any PlaneRowScaler)?

    init(from: (width: Int, height: Int), to: (width: Int, height: Int), channels: Int, kernel: ResamplingKernel, slices: Int) {
        self.channels = channels
        sourceSamples = from.width * channels
        outSamples = to.width * channels
        across = BlockTaps(ResamplingTaps(source: from.width, destination: to.width, kernel: kernel), outputPixels: to.width,
                           channels: channels, sourceSamples: sourceSamples)
        let down = ResamplingTaps(source: from.height, destination: to.height, kernel: kernel)
        self.down = down
        phases = channels == 1 ? PhaseTaps(source: from.width, destination: to.width, kernel: kernel)
            .flatMap { Self.phasePath(across: $0, down: down, slices: slices) } : nil
    }

    private static func phasePath(across: PhaseTaps, down: ResamplingTaps, slices: Int) -> (any PlaneRowScaler)? {
        #if arch(x86_64) && VFX_HASWELL
        if let scaler = ShuffleScaler(across: across, down: down, slices: slices) { return scaler }
        #endif
        return PhaseScaler(across: across, down: down, slices: slices)
    }

    /// Output rows `rows` of `target` from `source`, with the scratch memory of slice `slice`.
    func run(from source: Plane, into target: Plane, rows: Range<Int>, slice: Int) {
        if let phases {
            phases.run(from: source, into: target, rows: rows, slice: slice)
            return
        }
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

/// The horizontal taps of a width change by a ratio of small integers: the source row is `groups` periods of `p`
/// samples, the output row `groups` periods of `q`, and output sample q·m + r (phase r) has the same weights for
/// every m, on source samples p·m + o for its offsets o. With the source row split into p phase arrays
/// (D_s[m] = sample p·m + s, padded on both sides with the border sample, the clamped edge), tap o of phase r
/// reads D_{o mod p}[m + ⌊o/p⌋]: consecutive floats for consecutive m, so sixteen outputs of one phase take one
/// vector multiply-add per tap, with no broadcasts and no shuffles.
///
/// Made for p ≤ 3 and q ≤ 2 (1080p → 720p is 3:2 on both axes, halving 2:1, doubling 1:2); nil otherwise.
///
/// ```swift
/// let taps = PhaseTaps(source: 1920, destination: 1280, kernel: .bicubic)   // p 3, q 2, groups 640
/// ```
struct PhaseTaps: Sendable {
    /// Source and output samples per period.
    let p: Int, q: Int
    /// Periods per row.
    let groups: Int
    /// Phase-array entries before m = 0 (and at least as many after the last period).
    let pad: Int
    /// Samples per phase array (a multiple of 32); the split row is p arrays, one after the other.
    let length: Int
    /// Entries before m = 0 and from m = groups on that a tap reads for an output inside the row (the rest of the pads
    /// only feed lanes that are not stored).
    let before: Int, after: Int
    /// The taps of phase 0, then phase 1: for each, the float of the split row read for m = 0, and its weight.
    let offsets: [Int]
    let weights: [Float]
    /// The same taps as source offsets: tap o of phase r reads source sample p·m + o (clamped to the row).
    let sourceOffsets: [Int]
    /// Taps of each phase.
    let counts: [Int]

    init?(source: Int, destination: Int, kernel: ResamplingKernel) {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(source, destination)
        let (p, q) = (source / g, destination / g)
        guard p <= 3, q <= 2, g >= 16 else { return nil }
        (self.p, self.q, groups) = (p, q, g)
        // The same centres, reach and weights as `ResamplingTaps`, per phase, with the ratio exactly p/q.
        let ratio = Double(p) / Double(q)
        let stretch = max(1, ratio)
        let reach = kernel.support * stretch
        let count = Int((2 * reach).rounded(.up)) + 1
        let phases = (0..<q).map { r in
            let center = (Double(r) + 0.5) * ratio - 0.5
            let first = Int((center - reach).rounded(.up))
            var taps = (0..<count).map { (first + $0, kernel.weight((Double(first + $0) - center) / stretch)) }
            let total = taps.reduce(0) { $0 + $1.1 }
            taps = taps.map { ($0.0, $0.1 / (total == 0 ? 1 : total)) }
            // Zero weights at the kernel's edges add nothing.
            while taps.count > 1, taps.last?.1 == 0 { taps.removeLast() }
            while taps.count > 1, taps.first?.1 == 0 { taps.removeFirst() }
            return taps
        }
        // Every offset o satisfies |o| ≤ reach + p, so |⌊o/p⌋| ≤ pad.
        let pad = Int(reach) / p + 3
        self.pad = pad
        let length = (2 * pad + g + 16 + 31) / 32 * 32
        self.length = length
        let shifts = phases.joined().map { (o, _) in o >= 0 ? o / p : -((p - 1 - o) / p) }
        before = max(0, -(shifts.min() ?? 0))
        after = max(0, (shifts.max() ?? 0) + 1)
        offsets = phases.flatMap { taps in
            taps.map { (o, _) in
                let s = (o % p + p) % p
                return s * length + pad + (o - s) / p
            }
        }
        weights = phases.flatMap { $0.map { Float($0.1) } }
        sourceOffsets = phases.flatMap { $0.map(\.0) }
        counts = phases.map(\.count)
    }
}

/// The phase path of `scale` for one plane of one byte per sample (see `PhaseTaps`), in 16-bit fixed point. Each source
/// row a slice needs is split once into its phase arrays (pads included) as samples × 2⁷, in a ring of rows; an output
/// row is then the vertical taps over ring rows, then the horizontal taps over that line phase by phase, with the phases
/// interleaved back as bytes. Every tap is one `vpmulhw` (the high half of sample × weight, weights × 2¹⁵) and one add
/// on sixteen samples, so the line is samples × 2⁶ and the output sums samples × 2⁵; each product is rounded down, and
/// the sum gets back the average of those roundings before its own rounding. Worst case ≈ 0.2 of a code from the
/// exact value (vertical ≤ 7 × 2⁻⁶ and horizontal ≤ 7 × 2⁻⁵ before that correction).
/// Scratch memory (the ring and the line, one set per slice) is made here; `run` allocates nothing.
///
/// ```swift
/// let scaler = PhaseScaler(across: taps, down: ResamplingTaps(source: 1080, destination: 720, kernel: .bicubic), slices: 1)
/// scaler?.run(from: source, into: target, rows: 0..<720, slice: 0)
/// ```
final class PhaseScaler: PlaneRowScaler, @unchecked Sendable {
    // Sendable: the scratch memory is owned here; `run` is called by one frame at a time (the processor contract)
    // and each concurrent call gets its own slice number, whose ring, line and ring table no other slice touches.
    let across: PhaseTaps
    /// Vertical taps: per output row, `taps` source rows and weights × 2¹⁵.
    private let rows: [Int32], factors: [Int16], taps: Int
    /// Horizontal weights × 2¹⁵, phase after phase (`across.offsets`' order).
    private let weights: [Int16]
    /// Added to each output sum (samples × 2⁵) before the shift: a half for rounding plus the mean rounding-down.
    private let bias: [Int16]
    /// Samples in a split row (p phase arrays).
    private let rowSamples: Int
    /// Rows in each slice's ring: enough for one output row's taps (consecutive source rows), rounded up to a power of
    /// two so that a row's slot is a mask, not a division.
    private let ringRows: Int
    private let slices: Int
    /// Per slice: `ringRows` split rows, then the line.
    private let scratch: UnsafeMutablePointer<Int16>
    /// Per slice and ring row: the source row it holds (−1: none).
    private let held: UnsafeMutablePointer<Int>

    /// Nil when the vertical taps are too many for a ring (a height shrunk more than 8 times) or a sum of weights
    /// could overflow 16 bits.
    init?(across: PhaseTaps, down: ResamplingTaps, slices: Int) {
        guard down.taps <= 32 else { return nil }
        /// Weights × 2¹⁵ that sum to exactly 2¹⁵, each kept below 2¹⁵.
        func fixed(_ weights: ArraySlice<Float>) -> [Int16] {
            fixedPoint(weights, one: 32768).map { Int16(min(max($0, -32768), 32767)) }
        }
        // Samples × 2⁷ times the positive or the negative weights stay inside 16 bits only while they sum below 2.
        let positive = stride(from: 0, to: down.weights.count, by: down.taps).map { start in
            down.weights[start..<(start + down.taps)].filter { $0 > 0 }.reduce(0, +)
        }.max() ?? 1
        guard positive < 1.9, across.weights.allSatisfy({ abs($0) < 1 }) else { return nil }
        self.across = across
        taps = down.taps
        rows = down.indices
        factors = stride(from: 0, to: down.weights.count, by: down.taps).flatMap { fixed(down.weights[$0..<($0 + down.taps)]) }
        var weights: [Int16] = [], bias: [Int16] = []
        var first = 0
        for count in across.counts {
            weights += fixed(across.weights[first..<(first + count)])
            bias.append(Int16(16 + (down.taps + 2 * count + 2) / 4))
            first += count
        }
        self.weights = weights
        self.bias = bias
        rowSamples = across.p * across.length
        ringRows = 1 << (Int.bitWidth - (down.taps - 1).leadingZeroBitCount)
        self.slices = max(1, slices)
        scratch = .allocate(capacity: self.slices * (ringRows + 1) * rowSamples)
        scratch.initialize(repeating: 0, count: self.slices * (ringRows + 1) * rowSamples)
        held = .allocate(capacity: self.slices * ringRows)
    }

    deinit {
        scratch.deallocate()
        held.deallocate()
    }

    /// Output rows `rows` of `target` from `source`, with slice `slice`'s scratch.
    func run(from source: Plane, into target: Plane, rows outputRows: Range<Int>, slice: Int) {
        let ring = scratch + slice * (ringRows + 1) * rowSamples
        let line = ring + ringRows * rowSamples
        let held = self.held + slice * ringRows
        held.update(repeating: -1, count: ringRows)
        let taps = self.taps
        withUnsafeTemporaryAllocation(of: UnsafePointer<Int16>.self, capacity: taps) { inputs in
            withUnsafeTemporaryAllocation(of: Int16.self, capacity: taps) { factors in
                guard let inputs = inputs.baseAddress, let factors = factors.baseAddress else { return }
                for y in outputRows {
                    var count = 0
                    for k in 0..<taps {
                        let factor = self.factors[y * taps + k]
                        guard factor != 0 else { continue }
                        let row = Int(rows[y * taps + k])
                        let slot = ring + (row & (ringRows - 1)) * rowSamples
                        if held[row & (ringRows - 1)] != row {
                            split(source.row(row), into: slot)
                            held[row & (ringRows - 1)] = row
                        }
                        inputs[count] = UnsafePointer(slot)
                        factors[count] = factor
                        count += 1
                    }
                    vertical(inputs, factors, count: count, into: line)
                    horizontal(line, into: target.row(y))
                }
            }
        }
    }

    /// Source row `bytes` as samples × 2⁷ in its phase arrays, pads repeating the border sample. Bytes are split with
    /// byte shuffles, then widened (the standard library's conversions, specialized here, are vector instructions).
    private func split(_ bytes: UnsafeMutablePointer<UInt8>, into row: UnsafeMutablePointer<Int16>) {
        let (p, pad, length, groups) = (across.p, across.pad, across.length, across.groups)
        let last = p * groups - 1
        @inline(__always) func store(_ samples: SIMD8<UInt8>, phase: Int, at m: Int) {
            UnsafeMutableRawPointer(row + phase * length + pad + m)
                .storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: samples) &<< 7, as: SIMD8<Int16>.self)
        }
        var m = 0
        switch p {
        case 1:
            while m + 8 <= groups {
                store(UnsafeRawPointer(bytes + m).loadUnaligned(as: SIMD8<UInt8>.self), phase: 0, at: m)
                m += 8
            }
        case 2:
            while m + 8 <= groups {
                let pair = UnsafeRawPointer(bytes + 2 * m).loadUnaligned(as: SIMD16<UInt8>.self)
                store(pair.evenHalf, phase: 0, at: m)
                store(pair.oddHalf, phase: 1, at: m)
                m += 8
            }
        default:
            // 24 bytes: sixteen, then the eight after them.
            while m + 8 <= groups {
                let head = UnsafeRawPointer(bytes + 3 * m).loadUnaligned(as: SIMD16<UInt8>.self)
                let tail = UnsafeRawPointer(bytes + 3 * m + 16).loadUnaligned(as: SIMD8<UInt8>.self)
                var phases = (SIMD8<UInt8>(), SIMD8<UInt8>(), SIMD8<UInt8>())
                for lane in 0..<8 {
                    let (a, b, c) = (3 * lane, 3 * lane + 1, 3 * lane + 2)
                    phases.0[lane] = a < 16 ? head[a] : tail[a - 16]
                    phases.1[lane] = b < 16 ? head[b] : tail[b - 16]
                    phases.2[lane] = c < 16 ? head[c] : tail[c - 16]
                }
                store(phases.0, phase: 0, at: m)
                store(phases.1, phase: 1, at: m)
                store(phases.2, phase: 2, at: m)
                m += 8
            }
        }
        // The rest and the pads the taps read, one by one.
        for s in 0..<p {
            let phase = row + s * length + pad
            for n in -across.before..<0 { phase[n] = Int16(bytes[min(max(p * n + s, 0), last)]) << 7 }
            for n in m..<(groups + across.after) { phase[n] = Int16(bytes[min(max(p * n + s, 0), last)]) << 7 }
        }
    }

    /// `line` = Σ high half of inputs[k] × factors[k], over the whole split row: 64 samples per step (each tap's weight
    /// and row loaded once for four vectors), the last 32 on their own.
    private func vertical(_ inputs: UnsafeMutablePointer<UnsafePointer<Int16>>, _ factors: UnsafeMutablePointer<Int16>, count: Int,
                          into line: UnsafeMutablePointer<Int16>) {
        @inline(__always) func load(_ pointer: UnsafePointer<Int16>) -> SIMD16<Int16> {
            UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Int16>.self)
        }
        @inline(__always) func store(_ value: SIMD16<Int16>, at i: Int) {
            UnsafeMutableRawPointer(line + i).storeBytes(of: value, as: SIMD16<Int16>.self)
        }
        var i = 0
        while i + 64 <= rowSamples {
            var sums = (SIMD16<Int16>(), SIMD16<Int16>(), SIMD16<Int16>(), SIMD16<Int16>())
            for k in 0..<count {
                let input = inputs[k] + i, factor = SIMD16<Int16>(repeating: factors[k])
                sums.0 &+= multipliedHigh(load(input), factor)
                sums.1 &+= multipliedHigh(load(input + 16), factor)
                sums.2 &+= multipliedHigh(load(input + 32), factor)
                sums.3 &+= multipliedHigh(load(input + 48), factor)
            }
            store(sums.0, at: i)
            store(sums.1, at: i + 16)
            store(sums.2, at: i + 32)
            store(sums.3, at: i + 48)
            i += 64
        }
        if i < rowSamples {
            var sums = (SIMD16<Int16>(), SIMD16<Int16>())
            for k in 0..<count {
                let input = inputs[k] + i, factor = SIMD16<Int16>(repeating: factors[k])
                sums.0 &+= multipliedHigh(load(input), factor)
                sums.1 &+= multipliedHigh(load(input + 16), factor)
            }
            store(sums.0, at: i)
            store(sums.1, at: i + 16)
        }
    }

    /// Output row `output` from the vertically filtered split `line`: sixteen periods at a time, each phase's taps on
    /// sixteen consecutive samples of its arrays, rounded and clamped to bytes, the phases interleaved.
    private func horizontal(_ line: UnsafeMutablePointer<Int16>, into output: UnsafeMutablePointer<UInt8>) {
        let (q, groups) = (across.q, across.groups)
        across.offsets.withUnsafeBufferPointer { offsets in
            weights.withUnsafeBufferPointer { weights in
                guard let offsets = offsets.baseAddress, let weights = weights.baseAddress else { return }
                /// One phase of periods m…m+15 (and m+16…m+31 when `pair`) from its taps at `offsets`, `weights`, as
                /// bytes: each tap's offset and weight are loaded once for both vectors.
                @inline(__always) func phase(_ offsets: UnsafePointer<Int>, _ weights: UnsafePointer<Int16>, count: Int,
                                             bias: Int16, at m: Int, pair: Bool) -> (SIMD16<UInt8>, SIMD16<UInt8>) {
                    var sums = (SIMD16<Int16>(repeating: bias), SIMD16<Int16>(repeating: bias))
                    for k in 0..<count {
                        let samples = line + offsets[k] + m, weight = SIMD16<Int16>(repeating: weights[k])
                        sums.0 &+= multipliedHigh(UnsafeRawPointer(samples).loadUnaligned(as: SIMD16<Int16>.self), weight)
                        if pair {
                            sums.1 &+= multipliedHigh(UnsafeRawPointer(samples + 16).loadUnaligned(as: SIMD16<Int16>.self), weight)
                        }
                    }
                    return (clampedBytes(sums.0 &>> 5), clampedBytes(sums.1 &>> 5))
                }
                let firstCount = across.counts[0], firstBias = bias[0]
                var m = 0
                if q == 1 {
                    while m + 32 <= groups {
                        let bytes = phase(offsets, weights, count: firstCount, bias: firstBias, at: m, pair: true)
                        (output + m).store(bytes.0)
                        (output + m + 16).store(bytes.1)
                        m += 32
                    }
                    while m < groups {
                        let bytes = phase(offsets, weights, count: firstCount, bias: firstBias, at: m, pair: false).0
                        let count = min(16, groups - m)
                        if count == 16 { (output + m).store(bytes) } else { for lane in 0..<count { output[m + lane] = bytes[lane] } }
                        m += 16
                    }
                    return
                }
                let secondCount = across.counts[1], secondBias = bias[1]
                while m + 32 <= groups {
                    let even = phase(offsets, weights, count: firstCount, bias: firstBias, at: m, pair: true)
                    let odd = phase(offsets + firstCount, weights + firstCount, count: secondCount, bias: secondBias, at: m, pair: true)
                    UnsafeMutableRawPointer(output + 2 * m).storeBytes(of: interleaved(even.0, odd.0), as: SIMD16<UInt16>.self)
                    UnsafeMutableRawPointer(output + 2 * m + 32).storeBytes(of: interleaved(even.1, odd.1), as: SIMD16<UInt16>.self)
                    m += 32
                }
                while m < groups {
                    let even = phase(offsets, weights, count: firstCount, bias: firstBias, at: m, pair: false).0
                    let odd = phase(offsets + firstCount, weights + firstCount, count: secondCount, bias: secondBias, at: m, pair: false).0
                    let pairs = interleaved(even, odd)
                    let count = 2 * min(16, groups - m)
                    if count == 32 {
                        UnsafeMutableRawPointer(output + 2 * m).storeBytes(of: pairs, as: SIMD16<UInt16>.self)
                    } else {
                        withUnsafeBytes(of: pairs) { bytes in
                            for lane in 0..<count { output[2 * m + lane] = bytes[lane] }
                        }
                    }
                    m += 16
                }
            }
        }
    }
}

/// `weights` × `one` rounded to integers that sum to exactly `one` (the largest takes the rounding error), so a flat
/// area keeps its value exactly.
///
/// ```swift
/// fixedPoint([0.25, 0.5, 0.25], one: 64)   // [16, 32, 16]
/// ```
func fixedPoint(_ weights: ArraySlice<Float>, one: Int) -> [Int] {
    var values = weights.map { Int(($0 * Float(one)).rounded()) }
    if let largest = values.indices.max(by: { abs(values[$0]) < abs(values[$1]) }) {
        values[largest] += one - values.reduce(0, +)
    }
    return values
}

/// The high half of each lane's 32-bit product, (a · b) >> 16. Written as a lane loop in this module so that the
/// optimizer makes it one `vpmulhw` (the standard library's vector conversions and `pointwiseMin`/`Max` on 16-bit
/// lanes stay calls or 32-bit multiplies).
@inline(__always) private func multipliedHigh(_ a: SIMD16<Int16>, _ b: SIMD16<Int16>) -> SIMD16<Int16> {
    var result = SIMD16<Int16>()
    for lane in 0..<16 { result[lane] = Int16(truncatingIfNeeded: (Int32(a[lane]) &* Int32(b[lane])) &>> 16) }
    return result
}

/// Each lane clamped to 0…255, as bytes (a lane loop, for the same reason: `vpmaxsw`, `vpminsw`, a pack).
@inline(__always) private func clampedBytes(_ v: SIMD16<Int16>) -> SIMD16<UInt8> {
    var result = SIMD16<UInt8>()
    for lane in 0..<16 { result[lane] = UInt8(truncatingIfNeeded: min(max(v[lane], 0), 255)) }
    return result
}

/// `even` in the low byte of each 16-bit lane and `odd` in the high one: in memory, the two interleaved.
@inline(__always) private func interleaved(_ even: SIMD16<UInt8>, _ odd: SIMD16<UInt8>) -> SIMD16<UInt16> {
    var result = SIMD16<UInt16>()
    for lane in 0..<16 { result[lane] = UInt16(even[lane]) | UInt16(odd[lane]) &<< 8 }
    return result
}
