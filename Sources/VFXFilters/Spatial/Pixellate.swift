import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Mosaic: each `scale`×`scale` block (aligned to the top-left corner) becomes the mean of its pixels.
    /// - `scale`: block side in pixels, integer 1…512, default 8. Chroma planes of I420/NV12 use blocks of
    ///   the same size in frame pixels (scale/2 chroma samples, boundaries rounded when scale is odd).
    /// - Formats: all (every plane and channel).
    ///
    /// Chain: `pixellate:scale=16` · Swift: `FilterDescription.pixellate(scale: 16)`
    public static let pixellate = FilterSpec(
        name: "pixellate", family: .stylize, summary: "Mosaic: each scale×scale block becomes the mean of its pixels.",
        coreImage: "CIPixellate",
        parameters: [ParameterSpec("scale", .integer(1...512), default: 8, "block side in pixels")],
        example: "pixellate:scale=16", swift: "FilterDescription.pixellate(scale: 16)"
    ) { arguments, context in
        .processor(PixellateProcessor(scale: arguments.integer("scale"), slices: context.slices))
    }
}

extension FilterDescription {
    public static func pixellate(scale: Int = 8) -> FilterDescription {
        FilterDescription(builtIn: "pixellate", ["scale": .integer(scale)])
    }
}

/// The stage of `pixellate`: for each band of block rows, sums every block's channels and writes the means
/// back in place (bands in slices). Block boundaries per plane are computed at configure time.
final class PixellateProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let scale: Int
    let slices: SliceRunner
    /// Per plane: block boundaries along x (in pixels) and along y (rows), each starting at 0 and ending at the size.
    private var columns: [[Int]] = []
    private var rows: [[Int]] = []
    private var pool: BufferPool?

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
                    for band in range { Self.average(plane, rows: bands[band]..<bands[band + 1], columns: columns) }
                }
            }
        }
        return frame
    }

    private static func average(_ plane: Plane, rows: Range<Int>, columns: [Int]) {
        let c = plane.bytesPerPixel
        withUnsafeTemporaryAllocation(of: Int.self, capacity: c) { sums in
            for block in 0..<(columns.count - 1) {
                let start = columns[block] * c, end = columns[block + 1] * c
                for channel in 0..<c { sums[channel] = 0 }
                for y in rows {
                    let row = plane.row(y)
                    var i = start
                    while i < end {
                        for channel in 0..<c { sums[channel] += Int(row[i + channel]) }
                        i += c
                    }
                }
                let count = (end - start) / c * rows.count
                for y in rows {
                    let row = plane.row(y)
                    var i = start
                    while i < end {
                        for channel in 0..<c { row[i + channel] = UInt8((sums[channel] + count / 2) / count) }
                        i += c
                    }
                }
            }
        }
    }

    func release() {
        pool = nil
    }
}
