import Foundation
import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Bokeh-like blur: each sample becomes the mean of the samples whose centres lie within `radius` of it (a
    /// disc; edges repeat the border). Chroma planes of I420/NV12 use radius/2. The disc is cut into rows: each row
    /// of the disc is one difference of running sums, so a sample costs 2r + 1 additions.
    /// - `radius` 0…100 px (default 8). Formats: all (RGBA/BGRA: all four channels).
    /// - Chain: `disc-blur:radius=12` · Swift: `try FilterDescription("disc-blur", ["radius": .number(12)])`
    public static let discBlur = FilterSpec(
        name: "disc-blur", family: .blur, summary: "Bokeh-like blur: the mean over a disc of the given radius.",
        coreImage: "CIDiscBlur",
        parameters: [ParameterSpec("radius", .number(0...100, unit: "px"), default: 8, "radius of the disc")],
        example: "disc-blur:radius=12", swift: "try FilterDescription(\"disc-blur\", [\"radius\": .number(12)])"
    ) { arguments, context in
        .processor(DiscBlurProcessor(radius: arguments.number("radius"), slices: context.slices))
    }
}

/// The stage of `disc-blur`: per plane, running sums of every row (padded by the radius with the border repeated),
/// then each output sample adds one span per disc row.
final class DiscBlurProcessor: VideoProcessor {
    let radius: Double
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var planes: [DiscPlane] = []
    private var pool: BufferPool?

    init(radius: Double, slices: SliceRunner) {
        self.radius = radius
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        planes = (0..<input.pixelFormat.planeCount).map { index in
            let size = input.pixelFormat.planeSize(index, width: input.width, height: input.height)
            return DiscPlane(width: size.width, height: size.height, channels: input.pixelFormat.bytesPerPixel(plane: index),
                             radius: radius * Double(size.width) / Double(input.width))
        }
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "disc-blur")
        guard radius >= 1 else { return frame }
        let source = frame
        let output = source.makeSibling(pool: pool)
        for (index, plane) in planes.enumerated() {
            let (input, target) = (source.plane(index), output.plane(index))
            slices.run(rows: plane.height) { rows in for y in rows { plane.sum(row: y, of: input) } }
            slices.run(rows: plane.height) { rows in for y in rows { plane.blur(row: y, into: target) } }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// One plane's disc: the half-width of each disc row and the running-sum buffer (made once).
final class DiscPlane: @unchecked Sendable {
    // Sendable: `sum` writes only the running sums of its own row and `blur` only reads them (the two passes are
    // separated by the slice runner's wait); each pass writes disjoint rows.
    let width: Int, height: Int, channels: Int
    let reach: Int
    /// Half-width of the disc at each vertical offset −reach…reach.
    let halfWidths: [Int]
    let count: Int32
    private let rowLength: Int
    private let sums: UnsafeMutablePointer<Int32>

    init(width: Int, height: Int, channels: Int, radius: Double) {
        self.width = width
        self.height = height
        self.channels = channels
        reach = Int(radius.rounded(.down))
        halfWidths = (-reach...reach).map { dy in Int((radius * radius - Double(dy * dy)).squareRoot().rounded(.down)) }
        count = Int32(halfWidths.reduce(0) { $0 + 2 * $1 + 1 })
        rowLength = (width + 2 * reach + 1) * channels
        sums = .allocate(capacity: max(rowLength * height, 1))
    }

    deinit { sums.deallocate() }

    /// Running sums of row `y`: entry i·c + k is the sum of channel k over padded positions 0..<i.
    func sum(row y: Int, of plane: Plane) {
        let input = plane.row(y), out = sums + y * rowLength, c = channels
        for k in 0..<c { out[k] = 0 }
        for i in 0..<(width + 2 * reach) {
            let x = min(max(i - reach, 0), width - 1)
            for k in 0..<c { out[(i + 1) * c + k] = out[i * c + k] + Int32(input[x * c + k]) }
        }
    }

    func blur(row y: Int, into plane: Plane) {
        let output = plane.row(y), c = channels
        let half = count / 2
        for x in 0..<width {
            for k in 0..<c {
                var total: Int32 = 0
                for (index, hw) in halfWidths.enumerated() {
                    let row = sums + min(max(y + index - reach, 0), height - 1) * rowLength
                    // Padded position of x is x + reach; the span is x − hw … x + hw.
                    total += row[(x + reach + hw + 1) * c + k] - row[(x + reach - hw) * c + k]
                }
                output[x * c + k] = UInt8(truncatingIfNeeded: (total + half) / count)
            }
        }
    }
}
