import Foundation
import VFXCore
import VFXPipeline

// Directional blurs: along one direction (motion-blur) and along rays from a centre (zoom-blur).

extension FilterSpec {
    /// Blurs along a direction, as a camera moving during the exposure: the mean of 2K+1 samples on the line
    /// through each pixel, one pixel apart along the line's major axis (x when |angle| ≤ 45° from horizontal,
    /// else y), sampled linearly across it, with coordinates clamped to the frame. K = round(radius / √(1 + t²)),
    /// t the slope, so the line spans `2·radius` pixels.
    /// - `radius`: half the length in pixels, 0…500, default 20. `angle`: degrees, 0 = horizontal, positive
    ///   clockwise (y points down), −360…360, default 0.
    /// - Formats: all (every plane at its own resolution; chroma with half the radius).
    /// - Kernel: running sums along every line of the direction (constant cost per pixel whatever the radius);
    ///   a pixel between two lines interpolates their sums.
    ///
    /// Chain: `motion-blur:radius=20:angle=30` · Swift: `FilterDescription.motionBlur(radius: 20, angle: 30)`
    public static let motionBlur = FilterSpec(
        name: "motion-blur", family: .blur, summary: "Blur along a direction (angle, clockwise from horizontal) over 2·radius pixels.",
        coreImage: "CIMotionBlur",
        parameters: [ParameterSpec("radius", .number(0...500, unit: "px"), default: 20, "half the length of the streak"),
                     ParameterSpec("angle", .angle(-360...360), default: 0, "direction, clockwise from horizontal")],
        example: "motion-blur:radius=20:angle=30", swift: "FilterDescription.motionBlur(radius: 20, angle: 30)"
    ) { arguments, context in
        .processor(MotionBlurProcessor(radius: arguments.number("radius"), degrees: arguments.number("angle"), slices: context.slices))
    }

    /// Blurs along rays from `center`, as zooming during the exposure: the mean of N = 2ⁿ samples at
    /// `center + (p − center) · sᵐ`, m = 0…N−1, where `s^(N−1) = 1 − amount / (half diagonal)` (so a pixel in a
    /// corner is smeared over `amount` pixels toward the centre) and N ≥ amount + 1.
    /// - `center`: normalized point, default 0.5x0.5. `amount`: pixels, 0…500, default 20.
    /// - Formats: all (every plane, chroma at its own resolution).
    /// - Kernel: n = log₂N passes, each averaging the previous pass with itself scaled by s^(2ᵏ) about the centre
    ///   (bilinear); cost grows with log(amount), not amount.
    ///
    /// Chain: `zoom-blur:center=0.5x0.4:amount=30` · Swift: `FilterDescription.zoomBlur(center: FilterPoint(x: 0.5, y: 0.4), amount: 30)`
    public static let zoomBlur = FilterSpec(
        name: "zoom-blur", family: .blur, summary: "Blur along rays from a center, as zooming during the exposure.",
        coreImage: "CIZoomBlur",
        parameters: [ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "center of the zoom"),
                     ParameterSpec("amount", .number(0...500, unit: "px"), default: 20, "smear in pixels at the corners")],
        example: "zoom-blur:center=0.5x0.4:amount=30",
        swift: "FilterDescription.zoomBlur(center: FilterPoint(x: 0.5, y: 0.4), amount: 30)"
    ) { arguments, context in
        .processor(ZoomBlurProcessor(center: arguments.point("center"), amount: arguments.number("amount"), slices: context.slices))
    }
}

extension FilterDescription {
    public static func motionBlur(radius: Double = 20, angle: Double = 0) -> FilterDescription {
        FilterDescription(builtIn: "motion-blur", ["radius": .number(radius), "angle": .number(angle)])
    }

    public static func zoomBlur(center: FilterPoint = FilterPoint(x: 0.5, y: 0.5), amount: Double = 20) -> FilterDescription {
        FilterDescription(builtIn: "zoom-blur", ["center": .point(center), "amount": .number(amount)])
    }
}

/// The stage of `motion-blur`: `PlaneMotionBlur` per plane, into a pool buffer.
final class MotionBlurProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let radius: Double, degrees: Double
    let slices: SliceRunner
    private var planes: [PlaneMotionBlur] = []
    private var pool: BufferPool?

    init(radius: Double, degrees: Double, slices: SliceRunner) {
        self.radius = radius
        self.degrees = degrees
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        planes = (0..<format.planeCount).map { index in
            let size = format.planeSize(index, width: input.width, height: input.height)
            return PlaneMotionBlur(width: size.width, height: size.height, channels: format.bytesPerPixel(plane: index),
                                   radius: radius * Double(size.width) / Double(input.width), degrees: degrees)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "motion-blur")
        let source = frame
        var output = source.makeSibling(pool: pool)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() {
                let blur = planes[index], plane = source.plane(index)
                slices.run(rows: blur.sliceCount) { range in blur.run(source: plane, target: target, lines: range) }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// Motion blur of one plane. The major axis is the one the direction moves along faster; t = minor step per
/// major step (|t| ≤ 1). For an intercept j, the line is `minor = j + major · t`. Walking the major axis, each
/// intercept in use keeps a running sum over its 2K+1 samples (linear across the minor axis); an output pixel
/// at minor position v lies between intercepts ⌊v − major·t⌋ and the next, and interpolates their means.
///
/// Work is split over bands of 64 minor positions. A band uses a window of intercepts that slides by |t| per
/// major step; an intercept entering the window starts with a full sum (2K+1 samples), so the cost per pixel is
/// about two samples plus (2K+1)/64.
final class PlaneMotionBlur: @unchecked Sendable {
    // Sendable: configuration is immutable; each band uses only its own part of `sums`.
    let width: Int, height: Int, channels: Int
    let steps: Int
    let slope: Float
    let horizontalMajor: Bool
    /// Bands of output minor positions, for slicing.
    let sliceCount: Int
    private let majorCount: Int, minorCount: Int
    private let bandIntercepts: Int
    private let sums: UnsafeMutablePointer<Float>

    init(width: Int, height: Int, channels: Int, radius: Double, degrees: Double) {
        self.width = width
        self.height = height
        self.channels = channels
        let radians = degrees * .pi / 180
        let dx = cos(radians), dy = sin(radians)
        horizontalMajor = abs(dx) >= abs(dy)
        let t = horizontalMajor ? dy / dx : dx / dy
        slope = Float(t)
        steps = Int((radius / (1 + t * t).squareRoot()).rounded())
        majorCount = horizontalMajor ? width : height
        minorCount = horizontalMajor ? height : width
        sliceCount = max(1, minorCount / 64)
        bandIntercepts = (minorCount + sliceCount - 1) / sliceCount + Int(abs(Float(majorCount) * Float(t)).rounded(.up)) + 4
        sums = .allocate(capacity: bandIntercepts * channels * sliceCount)
    }

    deinit { sums.deallocate() }

    /// Blurs the output minor positions of bands `bands`.
    func run(source: Plane, target: Plane, lines bands: Range<Int>) {
        for band in bands { run(source: source, target: target, band: band) }
    }

    private func run(source: Plane, target: Plane, band: Int) {
        let first = band * minorCount / sliceCount, end = (band + 1) * minorCount / sliceCount
        guard first < end else { return }
        let c = channels, slope = self.slope, steps = self.steps
        let drift = Float(majorCount - 1) * slope
        let low = Int((Float(first) - max(drift, 0)).rounded(.down)) - 1
        let intercepts = min(bandIntercepts, Int((Float(end - 1) - min(drift, 0)).rounded(.up)) + 2 - low)
        let sums = self.sums + band * bandIntercepts * c
        let maxMajor = majorCount - 1, maxMinor = Float(minorCount - 1), lastMinor = minorCount - 1
        let rowBytes = source.bytesPerRow
        let base = UnsafePointer(source.baseAddress)
        let horizontal = horizontalMajor
        /// Adds `weight` × the sample of intercept j at major position m (clamped coordinates).
        @inline(__always) func add(_ j: Int, major m: Int, weight: Float) {
            let mm = min(max(m, 0), maxMajor)
            let position = min(max(Float(low + j) + Float(m) * slope, 0), maxMinor)
            let lower = Int(position)
            let upper = min(lower + 1, lastMinor)
            let f = position - Float(lower)
            let a = horizontal ? base + lower * rowBytes + mm * c : base + mm * rowBytes + lower * c
            let b = horizontal ? base + upper * rowBytes + mm * c : base + mm * rowBytes + upper * c
            for k in 0..<c {
                let va = Float(a[k]), vb = Float(b[k])
                sums[j * c + k] += weight * (va + (vb - va) * f)
            }
        }
        let scale = 1 / Float(2 * steps + 1)
        var validLow = Int.max, validHigh = Int.min
        for m in 0..<majorCount {
            let shift = Float(m) * slope
            let windowLow = max(Int((Float(first) - shift - Float(low)).rounded(.down)), 0)
            let windowHigh = min(Int((Float(end - 1) - shift - Float(low)).rounded(.down)) + 1, intercepts - 1)
            guard windowLow < windowHigh else { continue }
            for j in windowLow...windowHigh where j < validLow || j > validHigh {
                for k in 0..<c { sums[j * c + k] = 0 }
                for step in -steps...steps { add(j, major: m + step, weight: 1) }
            }
            validLow = windowLow
            validHigh = windowHigh
            for v in first..<end {
                let position = Float(v) - shift - Float(low)
                let j = min(max(Int(position.rounded(.down)), windowLow), windowHigh - 1)
                let f = position - Float(j)
                let output = horizontal ? target.row(v) + m * c : target.row(m) + v * c
                for k in 0..<c {
                    let a = sums[j * c + k], b = sums[(j + 1) * c + k]
                    output[k] = UInt8(min(max((a + (b - a) * f) * scale + 0.5, 0), 255))
                }
            }
            if m + 1 < majorCount {
                for j in windowLow...windowHigh {
                    add(j, major: m + 1 + steps, weight: 1)
                    add(j, major: m - steps, weight: -1)
                }
            }
        }
    }
}

/// The stage of `zoom-blur`: per plane, n passes between two float planes made at configure time.
final class ZoomBlurProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let center: FilterPoint, amount: Double
    let slices: SliceRunner
    private var planes: [PlaneZoomBlur] = []
    private var pool: BufferPool?

    init(center: FilterPoint, amount: Double, slices: SliceRunner) {
        self.center = center
        self.amount = amount
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        let halfDiagonal = (Double(input.width * input.width + input.height * input.height)).squareRoot() / 2
        planes = (0..<format.planeCount).map { index in
            let size = format.planeSize(index, width: input.width, height: input.height)
            return PlaneZoomBlur(width: size.width, height: size.height, channels: format.bytesPerPixel(plane: index),
                                 center: (center.x * Double(size.width), center.y * Double(size.height)),
                                 totalScale: max(0, 1 - amount / halfDiagonal), samples: Int(amount.rounded(.up)) + 1)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "zoom-blur")
        guard amount > 0 else { return frame }
        var frame = frame
        frame.withMutablePlanes(pool: pool) { targets in
            for (blur, plane) in zip(planes, targets) { blur.run(plane, slices: slices) }
        }
        return frame
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// Zoom blur of one plane (see `FilterSpec.zoomBlur`): pass k averages the previous result with itself scaled
/// about the centre by `s^(2ᵏ)`, sampled bilinearly with clamped coordinates.
///
/// Scaling about a point is separable: a source row depends only on the output row and a source column only on the
/// output column. So each pass's rows and columns (two neighbours and a weight each) are tabulated at configure
/// time, and an output row is the vertical mix of its two source rows (eight samples at a time) followed by the
/// horizontal mix through the column table.
final class PlaneZoomBlur: @unchecked Sendable {
    // Sendable: the two float planes are owned here; each pass writes disjoint rows of one and reads the other.
    let width: Int, height: Int, channels: Int
    let center: (x: Double, y: Double)
    /// Scale of each pass: s, s², s⁴, …
    let scales: [Float]
    private let samples: Int
    private let planes: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    /// Per pass: for each output row and each output column, the lower source neighbour, the upper one (clamped) and
    /// the upper one's weight.
    private let rowTaps: [[Tap]], columnTaps: [[Tap]]

    struct Tap {
        let lower: Int, upper: Int
        let weight: Float
    }

    init(width: Int, height: Int, channels: Int, center: (Double, Double), totalScale: Double, samples: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.center = center
        var passes = 0
        while (1 << passes) < samples { passes += 1 }
        let step = passes == 0 ? 1 : pow(totalScale, 1 / Double((1 << passes) - 1))
        let scales = (0..<passes).map { Float(pow(step, Double(1 << $0))) }
        self.scales = scales
        self.samples = width * channels
        planes = (.allocate(capacity: self.samples * height), .allocate(capacity: self.samples * height))
        func taps(count: Int, centre: Double, scale: Float) -> [Tap] {
            let c = Float(centre) - 0.5, last = Float(count - 1)
            return (0..<count).map { i in
                let position = min(max(c + (Float(i) - c) * scale, 0), last)
                let lower = Int(position)
                return Tap(lower: lower, upper: min(lower + 1, count - 1), weight: position - Float(lower))
            }
        }
        rowTaps = scales.map { taps(count: height, centre: center.1, scale: $0) }
        columnTaps = scales.map { taps(count: width, centre: center.0, scale: $0) }
    }

    deinit {
        planes.0.deallocate()
        planes.1.deallocate()
    }

    func run(_ plane: Plane, slices: SliceRunner) {
        guard !scales.isEmpty else { return }
        let samples = self.samples, whole = samples / 16 * 16
        slices.run(rows: height) { rows in
            for y in rows {
                let input = plane.row(y), target = self.planes.0 + y * samples
                for i in stride(from: 0, to: whole, by: 16) { loadBytes(input + i).store(to: target + i) }
                for i in whole..<samples { target[i] = Float(input[i]) }
            }
        }
        var (from, to) = planes
        for pass in scales.indices {
            slices.run(rows: height) { rows in self.pass(pass, from: from, to: to, rows: rows) }
            swap(&from, &to)
        }
        let result = from
        slices.run(rows: height) { rows in
            for y in rows {
                let output = plane.row(y), source = result + y * samples
                // Rounded half up: ⌊v + ½⌋, as the scalar tail does.
                for i in stride(from: 0, to: whole, by: 16) {
                    let values = SIMD16<Float>(loadingFrom: source + i)
                    output.advanced(by: i).store(roundedBytes((values + 0.5).rounded(.down).clamped(0, 255)))
                }
                for i in whole..<samples { output[i] = UInt8(min(max(source[i] + 0.5, 0), 255)) }
            }
        }
    }

    private func pass(_ pass: Int, from: UnsafeMutablePointer<Float>, to: UnsafeMutablePointer<Float>, rows: Range<Int>) {
        let c = channels, samples = self.samples, whole = samples / 8 * 8
        let rowTaps = self.rowTaps[pass], columnTaps = self.columnTaps[pass]
        withUnsafeTemporaryAllocation(of: Float.self, capacity: samples) { mixed in
            let mixed = mixed.baseAddress.unsafelyUnwrapped
            for y in rows {
                let tap = rowTaps[y]
                let top = from + tap.lower * samples, bottom = from + tap.upper * samples
                let fy = SIMD8<Float>(repeating: tap.weight)
                for i in stride(from: 0, to: whole, by: 8) {
                    let a = SIMD8<Float>(loadingFrom: top + i)
                    let b = SIMD8<Float>(loadingFrom: bottom + i)
                    (a + (b - a) * fy).store(to: mixed + i)
                }
                for i in whole..<samples { mixed[i] = top[i] + (bottom[i] - top[i]) * tap.weight }
                let here = from + y * samples, output = to + y * samples
                columnTaps.withUnsafeBufferPointer { columns in
                    for x in 0..<width {
                        let column = columns[x]
                        for k in 0..<c {
                            let a = mixed[column.lower * c + k], b = mixed[column.upper * c + k]
                            output[x * c + k] = 0.5 * (here[x * c + k] + a + (b - a) * column.weight)
                        }
                    }
                }
            }
        }
    }
}
