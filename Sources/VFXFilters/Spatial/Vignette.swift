import Foundation
import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Darkens toward the corners. With d the distance from the frame's centre divided by half its diagonal
    /// (0 at the centre, 1 in the corners), values are scaled toward black by
    /// `f = 1 − intensity · s(t)`, `t = clamp((d² − radius²) / (1 − radius²), 0, 1)`, `s(t) = t²(3 − 2t)`
    /// (a smooth step in d², so no square root per pixel).
    /// - `radius`: 0…1, default 0.5 (where darkening starts). `intensity`: 0…1, default 0.6 (darkening in the corners).
    /// - Formats: all. YUV: luma scaled toward black and chroma toward neutral by the same f (the same as
    ///   scaling gamma-encoded RGB); RGB: color channels, alpha kept.
    /// - Kernel: one in-place pass that skips the untouched centre; the factor is computed per sample in SIMD.
    ///
    /// Chain: `vignette:radius=0.4:intensity=0.8` · Swift: `FilterDescription.vignette(radius: 0.4, intensity: 0.8)`
    public static let vignette = FilterSpec(
        name: "vignette", family: .colorEffect, summary: "Darkens toward the corners, smoothly from radius (fraction of the half diagonal).",
        coreImage: "CIVignette",
        parameters: [ParameterSpec("radius", .number(0...1), default: 0.5, "where darkening starts, as a fraction of the half diagonal"),
                     ParameterSpec("intensity", .number(0...1), default: 0.6, "how dark the corners get (1 = black)")],
        example: "vignette:radius=0.4:intensity=0.8", swift: "FilterDescription.vignette(radius: 0.4, intensity: 0.8)",
        ffmpeg: { _ in "vignette" }
    ) { arguments, context in
        .processor(VignetteProcessor(radius: arguments.float("radius"), intensity: arguments.float("intensity"),
                                     slices: context.slices))
    }
}

extension FilterDescription {
    public static func vignette(radius: Double = 0.5, intensity: Double = 0.6) -> FilterDescription {
        FilterDescription(builtIn: "vignette", ["radius": .number(radius), "intensity": .number(intensity)])
    }
}

/// The stage of `vignette`: per plane, a table of each sample's squared horizontal distance (made at configure
/// time); each row adds its vertical distance and computes the factor for sixteen samples at a time.
final class VignetteProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let radius: Float
    let intensity: Float
    let slices: SliceRunner
    /// One per plane of the configured format (empty before `configure`).
    private(set) var planes: [VignettePlane] = []
    private var pool: BufferPool?

    init(radius: Float, intensity: Float, slices: SliceRunner) {
        self.radius = radius
        self.intensity = intensity
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        planes = (0..<format.planeCount).map { index in
            VignettePlane(format: input, plane: index, radius: radius, intensity: intensity)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "vignette")
        guard isActive else { return frame }
        var frame = frame
        frame.withMutablePlanes(pool: pool) { targets in
            for (plane, target) in zip(planes, targets) {
                slices.run(rows: target.height) { rows in
                    for y in rows { plane.darken(target, row: y) }
                }
            }
        }
        return frame
    }

    func release() {
        planes = []
        pool = nil
    }

    /// False when the vignette leaves frames alone.
    var isActive: Bool { intensity > 0 && radius < 1 }

    /// Darkens, in place, the rows of each plane that belong to frame rows `rows` (4:2:0 chroma: rows/2, `rows`
    /// starting on an even row): used when a colour run and the vignette share one pass.
    func darken(_ targets: [Plane], frameRows rows: Range<Int>) {
        guard let configured, isActive else { return }
        for (index, (plane, target)) in zip(planes, targets).enumerated() {
            let planeRows = configured.pixelFormat.isYUV && index > 0 ? (rows.lowerBound / 2)..<((rows.upperBound + 1) / 2) : rows
            for y in planeRows where y < target.height { plane.darken(target, row: y) }
        }
    }
}

/// The vignette of one plane: distances in units of the frame's half diagonal, at the plane's sample positions.
struct VignettePlane: @unchecked Sendable {
    // Sendable: the tables are written once in init and only read afterwards.
    let levels: PlaneLevels
    let radius: Float, intensity: Float
    let samples: Int
    let channels: Int
    /// Squared horizontal distance of each sample (padded to a multiple of 16).
    let horizontal: [Float]
    /// Squared vertical distance of each row.
    let vertical: [Float]
    /// Pixel (not sample) position of the centre and the inside circle's radius in pixels, per row.
    let centerPixel: Float, pixelsPerUnit: Float

    init(format: FrameFormat, plane: Int, radius: Float, intensity: Float) {
        let size = format.pixelFormat.planeSize(plane, width: format.width, height: format.height)
        channels = format.pixelFormat.bytesPerPixel(plane: plane)
        levels = PlaneLevels(format: format.pixelFormat, color: format.color, plane: plane)
        self.radius = radius
        self.intensity = intensity
        samples = size.width * channels
        let halfDiagonal = (Float(format.width * format.width + format.height * format.height)).squareRoot() / 2
        let scaleX = Float(format.width) / Float(size.width), scaleY = Float(format.height) / Float(size.height)
        let width = size.width, c = channels
        let padded = (samples + 15) / 16 * 16
        horizontal = (0..<padded).map { i in
            let dx = ((Float(min(i / c, width - 1)) + 0.5) * scaleX - Float(format.width) / 2) / halfDiagonal
            return dx * dx
        }
        vertical = (0..<size.height).map { y in
            let dy = ((Float(y) + 0.5) * scaleY - Float(format.height) / 2) / halfDiagonal
            return dy * dy
        }
        centerPixel = Float(size.width) / 2 - 0.5
        pixelsPerUnit = halfDiagonal / scaleX
    }

    func darken(_ plane: Plane, row y: Int) {
        let dy2 = vertical[y]
        // Samples strictly inside the radius keep their value: skip the vectors that lie wholly inside.
        var skipStart = samples, skipEnd = samples
        if dy2 < radius * radius {
            let inside = (radius * radius - dy2).squareRoot() * pixelsPerUnit
            let first = Int((centerPixel - inside).rounded(.up)) + 1, last = Int((centerPixel + inside).rounded(.down)) - 1
            if last > first {
                skipStart = (first * channels + 15) / 16 * 16
                skipEnd = (last + 1) * channels / 16 * 16
            }
        }
        let row = plane.row(y)
        var index = 0
        while index < samples {
            if index >= skipStart && index < skipEnd {
                index = skipEnd
                continue
            }
            let count = min(16, samples - index)
            storeBytes(darkened(loadBytes(row + index, count: count), row: y, at: index), to: row + index, count: count)
            index += 16
        }
    }

    /// Samples `index ..< index + 16` of row `y` (`index` a multiple of 16), darkened: the vignette's one formula,
    /// used by its own pass and inside a blur's last pass (`VignetteBlurred`).
    @inline(__always)
    func darkened(_ value: SIMD16<Float>, row y: Int, at index: Int) -> SIMD16<Float> {
        let radius2 = radius * radius
        let inverseSpan = 1 / max(1 - radius2, 1e-6)
        let distance2 = horizontal.withUnsafeBufferPointer { SIMD16<Float>(loadingFrom: $0.baseAddress! + index) } + vertical[y]
        let t = ((distance2 - radius2) * inverseSpan).clampedToUnit
        let factor = 1 - intensity * t * t * (3 - 2 * t) * levels.colorLanes
        return levels.black + (value - levels.black) * factor
    }
}

extension VignettePlane {
    /// The factor `darkened` applies to colour samples, for 8 samples at squared distances `distance2`: used where a
    /// colour run's pass applies the vignette as it converts back to Y'CbCr (`ColorRunYUVKernel`).
    @inline(__always)
    func factor(_ distance2: SIMD8<Float>) -> SIMD8<Float> {
        let radius2 = radius * radius
        let inverseSpan = 1 / max(1 - radius2, 1e-6)
        let t = ((distance2 - radius2) * inverseSpan).clampedToUnit
        return 1 - intensity * t * t * (3 - 2 * t)
    }
}

/// A Gaussian blur's last pass with the vignette that follows it in the chain: each row of blurred samples is
/// darkened before it is rounded and stored, so the vignette costs no pass of its own (see
/// `FilterChainProcessor.compile`).
struct VignetteBlurred: BlurredRowWriter {
    let target: Plane
    let vignette: VignettePlane

    @inline(__always)
    func write(_ blurred: SIMD16<Float>, row y: Int, at index: Int, count: Int) {
        storeBytes(vignette.darkened(blurred, row: y, at: index), to: target.row(y) + index, count: count)
    }
}
