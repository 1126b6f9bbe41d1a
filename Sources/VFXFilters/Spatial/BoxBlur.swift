import VFXCore
import VFXPipeline

extension FilterSpec {
    /// The mean of the (2r+1)×(2r+1) square around each pixel, edges clamped (the border repeats).
    /// - `radius`: r in pixels, integer 0…200, default 10. Chroma planes of I420/NV12 use r/2 rounded.
    /// - Formats: all (every plane and channel; RGB alpha too, unchanged when opaque).
    /// - Kernel: running sums in integers (constant cost per pixel); the result is the exact mean rounded
    ///   to the nearest byte.
    ///
    /// Chain: `box-blur:radius=4` · Swift: `FilterDescription.boxBlur(radius: 4)`
    public static let boxBlur = FilterSpec(
        name: "box-blur", family: .blur, summary: "Mean of the (2·radius+1)² square around each pixel, edges clamped.",
        coreImage: "CIBoxBlur",
        parameters: [ParameterSpec("radius", .integer(0...200), default: 10, "half the square's side, in pixels")],
        example: "box-blur:radius=4", swift: "FilterDescription.boxBlur(radius: 4)",
        ffmpeg: { "boxblur=\($0.integer("radius"))" }
    ) { arguments, context in
        .processor(BoxBlurProcessor(radius: arguments.integer("radius"), slices: context.slices))
    }
}

extension FilterDescription {
    public static func boxBlur(radius: Int = 10) -> FilterDescription {
        FilterDescription(builtIn: "box-blur", ["radius": .integer(radius)])
    }
}

/// The stage of `box-blur`: one `PlaneBoxBlur` per plane, writing into a buffer from the pool (the sweep reads
/// rows above the one it writes, so it does not work in place).
final class BoxBlurProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let radius: Int
    let slices: SliceRunner
    private var blurs: [PlaneBoxBlur] = []
    private var pool: BufferPool?

    init(radius: Int, slices: SliceRunner) {
        self.radius = radius
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        blurs = (0..<format.planeCount).map { index in
            let size = format.planeSize(index, width: input.width, height: input.height)
            let planeRadius = Int((Double(radius) * Double(size.width) / Double(input.width)).rounded())
            return PlaneBoxBlur(width: size.width, height: size.height, channels: format.bytesPerPixel(plane: index),
                                radius: planeRadius, slices: slices.threads)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "box-blur")
        let source = frame
        var output = source.makeSibling(pool: pool)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() { blurs[index].run(source: source.plane(index), target: target) }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        blurs = []
        pool = nil
    }
}

/// A box blur of one plane in one sweep down the rows, with integer running sums: each slice of rows keeps, for
/// every column, the sum of the 2r+1 source rows around its current row (moved down a row by adding the row that
/// enters the window and subtracting the one that leaves it, sixteen columns at a time), sums 2r+1 of those along
/// the row, and divides exactly. Everything it touches per row stays in cache: no scratch plane.
/// Source and target must be different planes.
///
/// ```swift
/// let blur = PlaneBoxBlur(width: 1920, height: 1080, channels: 1, radius: 4, slices: 1)
/// blur.run(source: plane, target: output)
/// ```
final class PlaneBoxBlur: @unchecked Sendable {
    // Sendable: the scratch rows are owned here, one pair per slice; slices write disjoint target rows.
    let width: Int, height: Int, channels: Int, radius: Int, slices: Int
    private let samples: Int
    private let stride: Int
    /// Per slice: the column sums, then one row of window sums (`stride` each).
    private let scratch: UnsafeMutablePointer<Int32>

    init(width: Int, height: Int, channels: Int, radius: Int, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.radius = radius
        self.slices = max(1, slices)
        samples = width * channels
        stride = (samples + 15) / 16 * 16 + 16
        scratch = UnsafeMutableRawPointer.allocate(byteCount: 2 * stride * self.slices * 4, alignment: 64)
            .bindMemory(to: Int32.self, capacity: 2 * stride * self.slices)
    }

    deinit { scratch.deallocate() }

    func run(source: Plane, target: Plane) {
        guard radius > 0 else {
            source.copy(to: target)
            return
        }
        SliceRunner(threads: slices).forEachSlice(of: height) { range, slice in
            self.sweep(source, target, rows: range, slice: slice)
        }
    }

    /// Sixteen bytes of a row as 32-bit integers (rows are padded, so a chunk may run into the padding).
    @inline(__always)
    private static func integers(_ pointer: UnsafePointer<UInt8>) -> SIMD16<Int32> {
        var values = SIMD16<Int32>()
        for lane in 0..<16 { values[lane] = Int32(pointer[lane]) }
        return values
    }

    private func sweep(_ source: Plane, _ target: Plane, rows: Range<Int>, slice: Int) {
        guard let first = rows.first else { return }
        let columns = scratch + slice * 2 * stride
        let window = columns + stride
        let r = radius, last = height - 1
        let vectors = (samples + 15) / 16
        @inline(__always) func row(_ y: Int) -> UnsafePointer<UInt8> { UnsafePointer(source.row(min(max(y, 0), last))) }
        for v in 0..<vectors { UnsafeMutableRawPointer(columns + 16 * v).storeBytes(of: SIMD16<Int32>(), as: SIMD16<Int32>.self) }
        for k in (first - r)...(first + r) {
            let input = row(k)
            for v in 0..<vectors {
                let cell = columns + 16 * v
                let sum = UnsafeRawPointer(cell).loadUnaligned(as: SIMD16<Int32>.self) &+ PlaneBoxBlur.integers(input + 16 * v)
                UnsafeMutableRawPointer(cell).storeBytes(of: sum, as: SIMD16<Int32>.self)
            }
        }
        for y in rows {
            horizontal(columns, into: window)
            store(window, into: target.row(y))
            guard y + 1 < rows.upperBound else { break }
            let entering = row(y + r + 1), leaving = row(y - r)
            for v in 0..<vectors {
                let cell = columns + 16 * v
                let sum = UnsafeRawPointer(cell).loadUnaligned(as: SIMD16<Int32>.self)
                    &+ PlaneBoxBlur.integers(entering + 16 * v) &- PlaneBoxBlur.integers(leaving + 16 * v)
                UnsafeMutableRawPointer(cell).storeBytes(of: sum, as: SIMD16<Int32>.self)
            }
        }
    }

    /// Running sums of 2r+1 column sums along the row, one per channel. Only the first `radius` and last
    /// `radius + 1` pixels need their neighbours clamped; the loop between them reads both ends of the window directly.
    private func horizontal(_ columns: UnsafeMutablePointer<Int32>, into output: UnsafeMutablePointer<Int32>) {
        let c = channels, last = width - 1, r = radius
        let interior = r..<max(r, width - r - 1)
        for channel in 0..<c {
            let row = UnsafePointer(columns) + channel, out = output + channel
            var sum: Int32 = 0
            for k in -r...r { sum += row[min(max(k, 0), last) * c] }
            @inline(__always) func clampedStep(_ x: Int) {
                out[x * c] = sum
                sum += row[min(x + r + 1, last) * c] - row[max(x - r, 0) * c]
            }
            for x in 0..<min(r, width) { clampedStep(x) }
            if c == 1 {
                for x in interior {
                    out[x] = sum
                    sum += row[x + r + 1] - row[x - r]
                }
            } else {
                for x in interior {
                    out[x * c] = sum
                    sum += row[(x + r + 1) * c] - row[(x - r) * c]
                }
            }
            for x in min(interior.upperBound, width)..<width { clampedStep(x) }
        }
    }

    /// Each window sum divided by the area, rounded to the nearest integer, stored as bytes.
    private func store(_ window: UnsafeMutablePointer<Int32>, into target: UnsafeMutablePointer<UInt8>) {
        let area = Int32((2 * radius + 1) * (2 * radius + 1))
        let inverse = 1 / Float(2 * area)
        var index = 0
        while index < samples {
            let sum = UnsafeRawPointer(window + index).loadUnaligned(as: SIMD16<Int32>.self)
            // Nearest integer to sum / area = ⌊(2·sum + area) / (2·area)⌋ (area is odd: no ties), estimated in
            // floats and corrected exactly in integers with sign shifts (no masks). Lane loops for the
            // conversions: the generic SIMD initializers stay out-of-line calls here.
            let numerator = (sum &* 2) &+ area
            var estimate = SIMD16<Float>()
            for lane in 0..<16 { estimate[lane] = Float(numerator[lane]) }
            estimate = estimate * inverse - 0.5 + 12_582_912
            var q = unsafeBitCast(estimate, to: SIMD16<Int32>.self) &- 0x4B40_0000
            let excess = numerator &- q &* (2 * area)
            q &+= excess &>> 31
            q &-= ((2 * area - 1) &- excess) &>> 31
            var exact = SIMD16<Float>()
            for lane in 0..<16 { exact[lane] = Float(q[lane]) }
            storeBytes(exact, to: target + index, count: min(16, samples - index))
            index += 16
        }
    }
}
