import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Mosaic: each `scale`×`scale` block (aligned to the top-left corner) becomes the mean of its pixels.
    /// - `scale`: block side in pixels, integer 1…512, default 8. Chroma planes of I420/NV12 use blocks of
    ///   the same size in frame pixels (scale/2 chroma samples, boundaries rounded when scale is odd).
    /// - Formats: all (every plane and channel).
    /// - FFmpeg: `pixelize=w=S:h=S` (mode `avg`) has the same blocks; it truncates the mean where VideoFX rounds it.
    ///
    /// Chain: `pixellate:scale=16` · Swift: `FilterDescription.pixellate(scale: 16)`
    public static let pixellate = FilterSpec(
        name: "pixellate", family: .stylize, summary: "Mosaic: each scale×scale block becomes the mean of its pixels.",
        coreImage: "CIPixellate",
        parameters: [ParameterSpec("scale", .integer(1...512), default: 8, "block side in pixels")],
        example: "pixellate:scale=16", swift: "FilterDescription.pixellate(scale: 16)",
        ffmpeg: { "pixelize=w=\($0.integer("scale")):h=\($0.integer("scale"))" }
    ) { arguments, context in
        .processor(PixellateProcessor(scale: arguments.integer("scale"), slices: context.slices))
    }
}

extension FilterDescription {
    public static func pixellate(scale: Int = 8) -> FilterDescription {
        FilterDescription(builtIn: "pixellate", ["scale": .integer(scale)])
    }
}

/// The stage of `pixellate`, in place, one band of block rows at a time (bands in slices). Block boundaries per
/// plane are computed at configure time.
///
/// Per band: the band's rows are added column by column into 16-bit sums, 32 bytes per step (at most 257 rows of
/// 255 fit 16 bits; taller bands carry each 257-row chunk into 32-bit totals); each block's sum over its columns
/// gives its mean, rounded half up, written once into a pattern row; the pattern is copied into every row of the
/// band. So the frame is read once and written once.
///
/// ```swift
/// let stage = PixellateProcessor(scale: 16, slices: SliceRunner(threads: 1))
/// let output = try stage.configure(for: format)
/// ```
final class PixellateProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let scale: Int
    let slices: SliceRunner
    /// Per plane: block boundaries along x (in pixels) and along y (rows), each starting at 0 and ending at the size.
    private var columns: [[Int]] = []
    private var rows: [[Int]] = []
    private var pool: BufferPool?

    /// Rows whose bytes can be added in 16 bits: 257 · 255 = 65535.
    static let rowsPer16BitSum = 257

    init(scale: Int, slices: SliceRunner) {
        self.scale = scale
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        func boundaries(_ count: Int, _ frameCount: Int) -> [Int] {
            let step = Double(scale) * Double(count) / Double(frameCount)
            var result = [0]
            var k = 1
            while result[result.count - 1] < count {
                result.append(min(count, max(result[result.count - 1] + 1, Int((Double(k) * step).rounded()))))
                k += 1
            }
            return result
        }
        columns = (0..<format.planeCount).map { boundaries(format.planeSize($0, width: input.width, height: input.height).width, input.width) }
        rows = (0..<format.planeCount).map { boundaries(format.planeSize($0, width: input.width, height: input.height).height, input.height) }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "pixellate")
        guard scale > 1 else { return frame }
        var frame = frame
        frame.withMutablePlanes(pool: pool) { planes in
            for (index, plane) in planes.enumerated() {
                let columns = self.columns[index], bands = self.rows[index]
                slices.run(rows: bands.count - 1) { range in
                    let count = plane.width * plane.bytesPerPixel
                    // Scratch for this slice: 16-bit column sums (padded to whole 32-byte steps), 32-bit totals,
                    // and the pattern row.
                    let padded = (count + 31) / 32 * 32
                    let sums = UnsafeMutablePointer<UInt16>.allocate(capacity: padded)
                    let totals = UnsafeMutablePointer<UInt32>.allocate(capacity: count)
                    let pattern = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
                    defer { sums.deallocate(); totals.deallocate(); pattern.deallocate() }
                    for band in range {
                        Self.average(plane, rows: bands[band]..<bands[band + 1], columns: columns,
                                     sums: sums, totals: totals, pattern: pattern)
                    }
                }
            }
        }
        return frame
    }

    /// Replaces each block of `rows` by its mean (see the type's comment).
    private static func average(_ plane: Plane, rows: Range<Int>, columns: [Int], sums: UnsafeMutablePointer<UInt16>,
                                totals: UnsafeMutablePointer<UInt32>, pattern: UnsafeMutablePointer<UInt8>) {
        let c = plane.bytesPerPixel, count = plane.width * c
        let vectors = count / 32, whole = vectors * 32
        let tall = rows.count > rowsPer16BitSum
        if tall { totals.initialize(repeating: 0, count: count) }
        var chunkStart = rows.lowerBound
        while chunkStart < rows.upperBound {
            let chunk = chunkStart..<min(rows.upperBound, chunkStart + rowsPer16BitSum)
            sums.initialize(repeating: 0, count: count)
            for y in chunk {
                let row = plane.row(y)
                for v in 0..<vectors {
                    let bytes = UnsafeRawPointer(row + 32 * v).loadUnaligned(as: SIMD32<UInt8>.self)
                    let target = UnsafeMutableRawPointer(sums + 32 * v)
                    target.storeBytes(of: target.load(as: SIMD32<UInt16>.self) &+ SIMD32<UInt16>(truncatingIfNeeded: bytes),
                                      as: SIMD32<UInt16>.self)
                }
                for i in whole..<count { sums[i] &+= UInt16(row[i]) }
            }
            if tall { for i in 0..<count { totals[i] += UInt32(sums[i]) } }
            chunkStart = chunk.upperBound
        }
        var divisor = RoundedDivision(by: 1)
        for block in 0..<(columns.count - 1) {
            let start = columns[block] * c, end = columns[block + 1] * c
            let pixels = UInt64((columns[block + 1] - columns[block]) * rows.count)
            if divisor.divisor != pixels { divisor = RoundedDivision(by: pixels) }
            for channel in 0..<c {
                var total: UInt64 = 0
                var i = start + channel
                while i < end { total += tall ? UInt64(totals[i]) : UInt64(sums[i]); i += c }
                let mean = UInt8(divisor.quotient(total))
                i = start + channel
                while i < end { pattern[i] = mean; i += c }
            }
        }
        for y in rows { plane.row(y).update(from: pattern, count: count) }
    }

    func release() {
        pool = nil
    }
}

/// `n / d` rounded half up by one multiply and shift instead of a division (a division per block cost most of a
/// small-block frame), exact for the sums a block can have: n < 2²⁶ (512² bytes of 255) and d ≤ 2¹⁸. With
/// q = 2n + d < 2²⁸ and D = 2d ≤ 2¹⁹, ⌊q / D⌋ = ⌊q·m / 2⁴⁷⌋ for m = ⌈2⁴⁷ / D⌉, because q·D < 2⁴⁷ (the
/// round-up of m adds less than q/2⁴⁷ < 1/D); q·m < 2⁴⁷·256, so the product fits 64 bits.
///
/// ```swift
/// RoundedDivision(by: 256).quotient(32_896)   // 128.5 rounds up: 129
/// ```
struct RoundedDivision {
    let divisor: UInt64
    private let multiplier: UInt64

    init(by divisor: UInt64) {
        self.divisor = divisor
        let twice = 2 * divisor
        multiplier = ((1 << 47) + twice - 1) / twice
    }

    @inline(__always) func quotient(_ n: UInt64) -> UInt64 { ((2 * n + divisor) * multiplier) >> 47 }
}
