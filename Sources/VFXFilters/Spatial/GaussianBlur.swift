import VFXCore
import VFXPipeline

/// One `PlaneBlur` per selected plane of a frame format, each plane at its own resolution (σ scaled to the
/// plane: halved for I420/NV12 chroma). The building block of gaussian-blur, unsharp-mask, bloom and gloom.
///
/// `apply` blurs in place when nobody else holds the frame's pixels; otherwise the result goes to a buffer
/// from the pool made here (never a copy first). Call it with a concrete writer so the kernel is compiled for
/// that writer.
///
/// ```swift
/// let blur = FrameBlur(sigma: 5, format: format, slices: 2) { _, _ in true }
/// let output = blur.apply(frame) { target, _, _ in StoreBlurred(target: target) }
/// ```
final class FrameBlur {
    private let blurs: [PlaneBlur?]
    private let pool: BufferPool

    init(sigma: Double, format: FrameFormat, slices: Int, planes selectsPlane: (PixelFormat, Int) -> Bool) {
        let pixelFormat = format.pixelFormat
        blurs = (0..<pixelFormat.planeCount).map { index in
            guard selectsPlane(pixelFormat, index) else { return nil }
            let size = pixelFormat.planeSize(index, width: format.width, height: format.height)
            let planeSigma = sigma * Double(size.width) / Double(format.width)
            return PlaneBlur(width: size.width, height: size.height, channels: pixelFormat.bytesPerPixel(plane: index),
                             sigma: planeSigma, slices: slices)
        }
        pool = BufferPool(format: pixelFormat, width: format.width, height: format.height, capacity: 4)
    }

    /// Blurs the selected planes of `frame`, handing each to the writer made for it from the target plane,
    /// the source plane (the same plane when in place) and the plane index. Other planes pass unchanged.
    @inline(__always)
    func apply<Writer: BlurredRowWriter>(_ frame: consuming VideoFrame,
                                         writer makeWriter: (_ target: Plane, _ source: Plane, _ index: Int) -> Writer) -> VideoFrame {
        var source = frame
        if source.isUniquelyReferenced() {
            source.withMutablePlanes { planes in
                for (index, plane) in planes.enumerated() {
                    blurs[index]?.blur(source: plane, into: makeWriter(plane, plane, index))
                }
            }
            return source
        }
        var output = source.makeSibling(pool: pool)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() {
                let plane = source.plane(index)
                if let blur = blurs[index] {
                    blur.blur(source: plane, into: makeWriter(target, plane, index))
                } else {
                    plane.copy(to: target)
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }
}

extension FilterSpec {
    /// A Gaussian blur of standard deviation `radius` on every plane, with clamped edges (no dark border, the
    /// frame does not grow).
    /// - `radius`: σ in pixels of the frame, 0…500, default 10 (0 leaves the frame alone). Chroma planes of
    ///   I420/NV12 are blurred at their own resolution with σ/2.
    /// - Formats: I420, NV12, RGBA, BGRA, GRAY8 (RGBA/BGRA: all four channels).
    /// - Kernel: recursive Young–van Vliet filter (cost independent of σ); from σ = 4 the plane is first
    ///   averaged down by up to 8× (see docs/filters-spatial.md). ≥ 45 dB from an exact Gaussian on photos.
    ///
    /// Chain: `gaussian-blur:radius=5` · Swift: `FilterDescription.gaussianBlur(radius: 5)`
    public static let gaussianBlur = FilterSpec(
        name: "gaussian-blur", family: .blur, summary: "Gaussian blur of standard deviation radius (pixels), edges clamped.",
        coreImage: "CIGaussianBlur",
        parameters: [ParameterSpec("radius", .number(0...500, unit: "px"), default: 10, "standard deviation σ of the Gaussian")],
        example: "gaussian-blur:radius=5", swift: "FilterDescription.gaussianBlur(radius: 5)",
        ffmpeg: { "gblur=sigma=\(ParameterValue.format($0.number("radius")))" }
    ) { arguments, context in
        .processor(GaussianBlurProcessor(radius: arguments.number("radius"), slices: context.slices))
    }
}

extension FilterDescription {
    public static func gaussianBlur(radius: Double = 10) -> FilterDescription {
        FilterDescription(builtIn: "gaussian-blur", ["radius": .number(radius)])
    }
}

/// The stage of `gaussian-blur` (see `FilterSpec.gaussianBlur`).
///
/// ```swift
/// let blur = GaussianBlurProcessor(radius: 5, slices: SliceRunner(threads: 1))
/// ```
final class GaussianBlurProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let radius: Double
    let slices: SliceRunner
    private var blur: FrameBlur?
    /// A vignette that follows the blur in the chain, applied in the blur's last pass (`fuse`).
    private(set) var vignette: VignetteProcessor?

    init(radius: Double, slices: SliceRunner) {
        self.radius = radius
        self.slices = slices
    }

    /// Takes over `vignette`, the next stage of the chain: its darkening is applied to the blurred rows as they are
    /// stored. Call before `configure`.
    func fuse(_ vignette: VignetteProcessor) {
        self.vignette = vignette
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        blur = FrameBlur(sigma: radius, format: input, slices: slices.threads) { _, _ in true }
        if let vignette { _ = try vignette.configure(for: input) }
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "gaussian-blur")
        guard let blur else { return frame }
        if let vignette, vignette.isActive {
            let planes = vignette.planes
            return blur.apply(frame) { target, _, index in VignetteBlurred(target: target, vignette: planes[index]) }
        }
        return blur.apply(frame) { target, _, _ in StoreBlurred(target: target) }
    }

    func release() {
        blur = nil
        vignette?.release()
    }
}
