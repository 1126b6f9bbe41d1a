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

    /// Running sums of row `y`: entry i·c + k is the sum of channel k over padded positions 0..<i. Padded position p
    /// holds the sample at x = clamp(p − reach); in flat byte terms entry j + c = entry j + that position's byte.
    func sum(row y: Int, of plane: Plane) {
        let input = plane.row(y), out = sums + y * rowLength, c = channels
        let left = reach * c, middle = width * c
        for k in 0..<c { out[k] = 0 }
        for j in 0..<left { out[j + c] = out[j] + Int32(input[j % c]) }
        for j in 0..<middle { out[left + j + c] = out[left + j] + Int32(input[j]) }
        let last = input + middle - c
        for j in 0..<left { out[left + middle + j + c] = out[left + middle + j] + Int32(last[j % c]) }
    }

    /// Output row `y`: eight samples at a time, each disc row adding the difference of two running sums that sit at
    /// fixed offsets from the samples (so both are plain vector loads); the mean, rounded half up, by one Float
    /// division per lane, exact because the sums stay below 2²³ (255 · 31 417 for radius 100) and a quotient that is
    /// not a whole number lies at least 1/count from one.
    func blur(row y: Int, into plane: Plane) {
        let output = plane.row(y), c = channels, n = width * c
        let half = count / 2
        withUnsafeTemporaryAllocation(of: (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>).self,
                                      capacity: halfWidths.count) { spans in
            for (index, hw) in halfWidths.enumerated() {
                let row = sums + min(max(y + index - reach, 0), height - 1) * rowLength
                // Sample i = x·c + k: its span x − hw … x + hw is padded positions x + reach − hw … x + reach + hw.
                spans[index] = (row + (reach + hw + 1) * c, row + (reach - hw) * c)
            }
            let (halfVector, countVector) = (SIMD8<Int32>(repeating: half), SIMD8<Float>(repeating: Float(count)))
            var i = 0
            while i + 8 <= n {
                var total = halfVector
                for (end, start) in spans {
                    total &+= UnsafeRawPointer(end + i).loadUnaligned(as: SIMD8<Int32>.self)
                        &- UnsafeRawPointer(start + i).loadUnaligned(as: SIMD8<Int32>.self)
                }
                // Whole numbers below 2²³ as Float through the mantissa of 2²³ + v (no generic conversion).
                let floats = unsafeBitCast(unsafeBitCast(total, to: SIMD8<UInt32>.self) | 0x4B00_0000, to: SIMD8<Float>.self) - 8_388_608
                UnsafeMutableRawPointer(output + i).storeBytes(of: roundedBytes((floats / countVector).rounded(.down)), as: SIMD8<UInt8>.self)
                i += 8
            }
            while i < n {
                var total = half
                for (end, start) in spans { total += end[i] - start[i] }
                output[i] = UInt8(truncatingIfNeeded: total / count)
                i += 1
            }
        }
    }
}
