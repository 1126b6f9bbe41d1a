import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Edge-preserving smoothing (Lee's sigma filter): each sample becomes the mean of the samples in the
    /// (2·radius + 1)² square around it (edges repeat the border) that differ from it by at most `threshold` codes,
    /// so noise is averaged away while edges, which differ by more, stay sharp. Alpha is kept.
    /// - `threshold` 0…255 codes (default 12), `radius` 1…4 (default 2). Formats: all.
    /// - Chain: `noise-reduction:threshold=10` · Swift: `try FilterDescription("noise-reduction", ["threshold": .number(10)])`
    public static let noiseReduction = FilterSpec(
        name: "noise-reduction", family: .blur, summary: "Edge-preserving smoothing: averages only the neighbours close in value.",
        coreImage: "CINoiseReduction",
        parameters: [ParameterSpec("threshold", .number(0...255), default: 12, "largest difference (codes) that is averaged"),
                     ParameterSpec("radius", .integer(1...4), default: 2, "half the side of the square")],
        example: "noise-reduction:threshold=10", swift: "try FilterDescription(\"noise-reduction\", [\"threshold\": .number(10)])"
    ) { arguments, context in
        .processor(NoiseReductionProcessor(threshold: Int(arguments.number("threshold")), radius: arguments.integer("radius"),
                                           slices: context.slices))
    }
}

/// The stage of `noise-reduction`: out of place, per plane, rows in slices.
///
/// Samples whose whole square lies inside the row are done 32 at a time (`Lanes16`'s byte operations): per neighbour
/// one load, the closeness test on bytes (a neighbour is close when it lies in [centre − threshold, centre + threshold],
/// both ends saturated, i.e. when clamping it to that range leaves it unchanged), the close count raised in 8-bit
/// lanes, and the close neighbours added into 16-bit lanes; then the mean rounded half up by one Float division per
/// lane. The samples within `radius` of the row's ends, whose squares repeat the border, go one at a time.
///
/// ```swift
/// let stage = NoiseReductionProcessor(threshold: 10, radius: 2, slices: SliceRunner(threads: 1))
/// let output = try stage.configure(for: format)
/// ```
final class NoiseReductionProcessor: VideoProcessor {
    let threshold: Int
    let radius: Int
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var pool: BufferPool?

    init(threshold: Int, radius: Int, slices: SliceRunner) {
        self.threshold = threshold
        self.radius = radius
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "noise-reduction")
        let source = frame
        let output = source.makeSibling(pool: pool)
        let keepsAlpha = source.format.isRGB
        for index in 0..<source.planeCount {
            let (input, target) = (source.plane(index), output.plane(index))
            let (radius, threshold) = (self.radius, self.threshold)
            slices.run(rows: input.height) { rows in
                // The square's row pointers, refilled for each output row.
                withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>.self, capacity: 2 * radius + 1) { square in
                    for y in rows {
                        for dy in -radius...radius { square[dy + radius] = input.row(min(max(y + dy, 0), input.height - 1)) }
                        Self.filter(row: y, square: UnsafeBufferPointer(square), input: input, target: target, radius: radius,
                                    threshold: threshold, keepsAlpha: keepsAlpha)
                    }
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    private static func filter(row y: Int, square rows: UnsafeBufferPointer<UnsafeMutablePointer<UInt8>>, input: Plane,
                               target: Plane, radius: Int, threshold: Int, keepsAlpha: Bool) {
        let c = input.bytesPerPixel, width = input.width
        let output = target.row(y), here = input.row(y)
        // Byte offsets whose squares lie inside the row: first ..< last; the samples outside go one at a time.
        let first = radius * c, last = (width - radius) * c
        /// The samples `range`, one at a time, with the square's columns clamped to the row.
        func scalar(_ range: Range<Int>) {
            for i in range {
                let x = i / c
                var sum = 0, count = 0
                let center = Int(here[i])
                for row in rows {
                    for dx in -radius...radius {
                        let value = Int(row[min(max(x + dx, 0), width - 1) * c + i % c])
                        if abs(value - center) <= threshold {
                            sum += value
                            count += 1
                        }
                    }
                }
                output[i] = UInt8((sum + count / 2) / count)
            }
        }
        if last - first >= 32 {
            var offset = first
            while offset < last {
                let start = min(offset, last - 32)   // the last step overlaps the one before: same values written twice
                vector32(at: start, rows: rows, here: here, output: output, c: c, radius: radius, threshold: threshold)
                offset += 32
            }
            scalar(0..<first)
            scalar(last..<(width * c))
        } else {
            scalar(0..<(width * c))
        }
        if keepsAlpha {
            for x in 0..<width { output[4 * x + 3] = here[4 * x + 3] }
        }
    }

    /// The 32 samples at byte offset `offset` (all of whose neighbours are inside the row).
    @inline(__always)
    private static func vector32(at offset: Int, rows: UnsafeBufferPointer<UnsafeMutablePointer<UInt8>>, here: UnsafeMutablePointer<UInt8>,
                                 output: UnsafeMutablePointer<UInt8>, c: Int, radius: Int, threshold: Int) {
        typealias L = Lanes16
        let center = L.load(here + offset), limit = L.splatBytes(UInt8(threshold)), zero = L.splat(0)
        let (low, high) = (L.subtractSaturatingBytes(center, limit), L.addSaturatingBytes(center, limit))
        // Per byte: the close count (at most 81). Per 16-bit lane: the sum of both close bytes as one number, and the sum
        // of the odd (high) bytes alone; each true sum is at most 81 · 255 < 2¹⁵, so the even bytes' sum is
        // pairs − 256 · odd, exact in wrapping 16 bits.
        var (count, pairs, odd) = (zero, zero, zero)
        for row in rows {
            var p = row + offset - radius * c
            for _ in 0...(2 * radius) {
                let value = L.load(p)
                let close = L.equalBytes(L.minimumBytes(L.maximumBytes(value, low), high), value)
                count = L.subtractBytes(count, close)
                let kept = L.and(value, close)
                pairs = L.add(pairs, kept)
                odd = L.add(odd, L.highBytes(kept))
                p += c
            }
        }
        let even = L.subtract(pairs, L.shiftLeft(odd, 8))
        L.store(L.joinBytes(mean(even, L.lowBytes(count)), mean(odd, L.highBytes(count))), to: output + offset)
    }

    /// ⌊(sum + ⌊count/2⌋) / count⌋ per lane (sum < 2¹⁵, 1 ≤ count ≤ 81): both exact in Float, and a quotient that is not
    /// a whole number lies at least 1/count from one, far beyond the division's rounding, so truncating it is exact.
    @inline(__always)
    static func mean(_ sum: Lanes16.Vector, _ count: Lanes16.Vector) -> Lanes16.Vector {
        typealias L = Lanes16
        let (s0, s1) = L.floats(L.add(sum, L.shiftRight(count, 1))), (n0, n1) = L.floats(count)
        return L.truncating(s0 / n0, s1 / n1)
    }

    func release() { pool = nil }
}
