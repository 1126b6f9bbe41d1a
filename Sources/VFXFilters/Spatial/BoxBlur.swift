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

/// The stage of `box-blur`: one `PlaneBoxBlur` per plane; the result goes back in place (or to a pool
/// buffer when the frame's pixels are shared).
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
        var source = frame
        if source.isUniquelyReferenced() {
            source.withMutablePlanes { planes in
                for (blur, plane) in zip(blurs, planes) { blur.run(source: plane, target: plane) }
            }
            return source
        }
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

/// A box blur of one plane with integer running sums: each row's horizontal sums go to an Int32 scratch
/// plane (rows in slices), then sixteen columns at a time are summed vertically and divided exactly
/// (columns in slices). Target may be the source.
///
/// ```swift
/// let blur = PlaneBoxBlur(width: 1920, height: 1080, channels: 1, radius: 4, slices: 1)
/// blur.run(source: plane, target: plane)
/// ```
final class PlaneBoxBlur: @unchecked Sendable {
    // Sendable: the scratch plane is owned here; slices write disjoint rows, then disjoint columns.
    let width: Int, height: Int, channels: Int, radius: Int, slices: Int
    private let samples: Int
    private let stride: Int
    private let sums: UnsafeMutablePointer<Int32>

    init(width: Int, height: Int, channels: Int, radius: Int, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.radius = radius
        self.slices = max(1, slices)
        samples = width * channels
        stride = (samples + 15) / 16 * 16 + 16
        sums = UnsafeMutableRawPointer.allocate(byteCount: stride * height * 4, alignment: 64)
            .bindMemory(to: Int32.self, capacity: stride * height)
    }

    deinit { sums.deallocate() }

    func run(source: Plane, target: Plane) {
        guard radius > 0 else {
            if source.baseAddress != target.baseAddress { source.copy(to: target) }
            return
        }
        SliceRunner(threads: slices).forEachSlice(of: height) { range, _ in
            for y in range { self.horizontal(source, row: y) }
        }
        let strips = (samples + 15) / 16
        SliceRunner(threads: slices).forEachSlice(of: strips) { range, _ in
            for strip in range { self.vertical(target, firstSample: strip * 16) }
        }
    }

    /// Running sums along row `y`, one per channel. Only the first `radius` and last `radius + 1` pixels need
    /// their neighbours clamped; the loop between them reads both ends of the window directly.
    private func horizontal(_ source: Plane, row y: Int) {
        let input = UnsafePointer(source.row(y))
        let output = sums + y * stride
        let c = channels, last = width - 1, r = radius
        let interior = r..<max(r, width - r - 1)
        for channel in 0..<c {
            let row = input + channel, out = output + channel
            var sum: Int32 = 0
            for k in -r...r { sum += Int32(row[min(max(k, 0), last) * c]) }
            @inline(__always) func clampedStep(_ x: Int) {
                out[x * c] = sum
                sum += Int32(row[min(x + r + 1, last) * c]) - Int32(row[max(x - r, 0) * c])
            }
            for x in 0..<min(r, width) { clampedStep(x) }
            if c == 1 {
                for x in interior {
                    out[x] = sum
                    sum += Int32(row[x + r + 1]) - Int32(row[x - r])
                }
            } else {
                for x in interior {
                    out[x * c] = sum
                    sum += Int32(row[(x + r + 1) * c]) - Int32(row[(x - r) * c])
                }
            }
            for x in min(interior.upperBound, width)..<width { clampedStep(x) }
        }
    }

    private func vertical(_ target: Plane, firstSample: Int) {
        let column = sums + firstSample
        let count = min(16, samples - firstSample)
        @inline(__always) func load(_ y: Int) -> SIMD16<Int32> {
            UnsafeRawPointer(column + min(max(y, 0), height - 1) * stride).loadUnaligned(as: SIMD16<Int32>.self)
        }
        let area = Int32((2 * radius + 1) * (2 * radius + 1))
        let inverse = 1 / Float(2 * area)
        var sum = SIMD16<Int32>()
        for k in -radius...radius { sum &+= load(k) }
        for y in 0..<height {
            // Nearest integer to sum / area = ⌊(2·sum + area) / (2·area)⌋ (area is odd: no ties), estimated in
            // floats and corrected exactly in integers with sign shifts (no masks).
            let numerator = (sum &* 2) &+ area
            // Lane loops for the conversions: the generic SIMD initializers stay out-of-line calls here.
            var estimate = SIMD16<Float>()
            for lane in 0..<16 { estimate[lane] = Float(numerator[lane]) }
            estimate = estimate * inverse - 0.5 + 12_582_912
            var q = unsafeBitCast(estimate, to: SIMD16<Int32>.self) &- 0x4B40_0000
            let excess = numerator &- q &* (2 * area)
            q &+= excess &>> 31
            q &-= ((2 * area - 1) &- excess) &>> 31
            var bytes = SIMD16<UInt8>()
            for lane in 0..<16 { bytes[lane] = UInt8(truncatingIfNeeded: q[lane]) }
            let output = target.row(y) + firstSample
            if count == 16 {
                UnsafeMutableRawPointer(output).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
            } else {
                for lane in 0..<count { output[lane] = bytes[lane] }
            }
            sum &+= load(y + radius + 1) &- load(y - radius)
        }
    }
}
