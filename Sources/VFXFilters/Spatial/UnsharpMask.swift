import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Sharpens by adding back the difference between the image and a Gaussian blur of it:
    /// `out = x + intensity · (x − blur_radius(x))`.
    /// - `radius`: σ of the blur in pixels, 0…100, default 2.5. `intensity`: 0…10, default 0.5.
    /// - Formats: all. YUV: luma only (sharpening chroma adds color noise); RGB: color channels, alpha kept.
    ///
    /// Chain: `unsharp-mask:radius=2.5:intensity=0.8` · Swift: `FilterDescription.unsharpMask(radius: 2.5, intensity: 0.8)`
    public static let unsharpMask = FilterSpec(
        name: "unsharp-mask", family: .sharpen, summary: "Sharpens: adds intensity × (image − Gaussian blur of radius) to the image.",
        coreImage: "CIUnsharpMask",
        parameters: [ParameterSpec("radius", .number(0...100, unit: "px"), default: 2.5, "σ of the blur that is subtracted"),
                     ParameterSpec("intensity", .number(0...10), default: 0.5, "how much of the difference is added")],
        example: "unsharp-mask:radius=2.5:intensity=0.8", swift: "FilterDescription.unsharpMask(radius: 2.5, intensity: 0.8)"
    ) { arguments, context in
        .processor(BlurCombineProcessor(radius: arguments.number("radius"), amount: arguments.float("intensity"),
                                        effect: .unsharp, slices: context.slices))
    }
}

extension FilterDescription {
    public static func unsharpMask(radius: Double = 2.5, intensity: Double = 0.5) -> FilterDescription {
        FilterDescription(builtIn: "unsharp-mask", ["radius": .number(radius), "intensity": .number(intensity)])
    }
}

/// The stage of unsharp-mask, bloom and gloom: a Gaussian blur of the luma (YUV) or color (RGB, gray) plane
/// whose result is combined with the original sample in the blur's last pass, with no extra pass or buffer.
///
/// ```swift
/// let stage = BlurCombineProcessor(radius: 10, amount: 0.5, effect: .bloom, slices: SliceRunner(threads: 1))
/// ```
final class BlurCombineProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    enum Effect: Sendable {
        /// `x + amount · (x − blur)`.
        case unsharp
        /// Screen blend of `amount · blur` over the image (normalized): `1 − (1 − x)(1 − amount · blur)`.
        case bloom
        /// The image multiplied by its blur, blended by amount: `x · (1 − amount + amount · blur)`.
        case gloom

        var name: String {
            switch self {
            case .unsharp: "unsharp-mask"
            case .bloom: "bloom"
            case .gloom: "gloom"
            }
        }
    }

    let radius: Double
    let amount: Float
    let effect: Effect
    let slices: SliceRunner
    private var blur: FrameBlur?
    private var levels: PlaneLevels?

    init(radius: Double, amount: Float, effect: Effect, slices: SliceRunner) {
        self.radius = radius
        self.amount = amount
        self.effect = effect
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        blur = FrameBlur(sigma: radius, format: input, slices: slices.threads) { _, index in index == 0 }
        levels = PlaneLevels(format: input.pixelFormat, color: input.color, plane: 0)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: effect.name)
        guard let blur, let levels else { return frame }
        let effect = self.effect, amount = self.amount
        return blur.apply(frame) { target, source, _ in
            CombineBlurred(target: target, source: source, levels: levels, effect: effect, amount: amount)
        }
    }

    func release() {
        blur = nil
    }
}

/// Combines each blurred sample with the original one at the same place (see `BlurCombineProcessor.Effect`)
/// and stores the result as a byte; alpha lanes keep the original.
struct CombineBlurred: BlurredRowWriter {
    let target: Plane
    let source: Plane
    let levels: PlaneLevels
    let effect: BlurCombineProcessor.Effect
    let amount: Float

    @inline(__always)
    func write(_ blurred: SIMD16<Float>, row y: Int, at index: Int, count: Int) {
        let x = loadBytes(source.row(y) + index, count: count)
        let combined: SIMD16<Float>
        switch effect {
        case .unsharp:
            combined = x + amount * (x - blurred)
        case .bloom:
            combined = levels.code(1 - (1 - levels.normalized(x)) * (1 - amount * levels.normalized(blurred)))
        case .gloom:
            combined = levels.code(levels.normalized(x) * (1 - amount + amount * levels.normalized(blurred)))
        }
        storeBytes(x + (combined - x) * levels.colorLanes, to: target.row(y) + index, count: count)
    }
}
