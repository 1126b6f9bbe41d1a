import Foundation
import VFXCore
import VFXPipeline

// Variable blurs: the frame mixed with its Gaussian blur by a weight that varies over the frame, inside the blur's
// last pass (no second pass over the frame): out = original + w · (blurred − original).

/// Writes original + w · (blurred − original), w per row or per sample.
struct MixBlurred: BlurredRowWriter, @unchecked Sendable {
    // Sendable: `sampleWeights` points into a buffer the processor owns and only reads while a frame is processed;
    // it is freed only in `release`/`deinit`, which never run during `process`.
    let target: Plane
    let source: Plane
    /// Weight of each row (tilt-shift), or nil.
    let rowWeights: [Float]?
    /// Weight of each sample, row after row with `samplesPerRow` per row (masked blur), or nil.
    let sampleWeights: UnsafePointer<Float>?
    let samplesPerRow: Int

    @inline(__always)
    func write(_ blurred: SIMD16<Float>, row y: Int, at index: Int, count: Int) {
        let original = loadBytes(source.row(y) + index, count: count)
        let weight: SIMD16<Float>
        if let rowWeights {
            weight = SIMD16(repeating: rowWeights[y])
        } else if let sampleWeights {
            // Sixteen weights in one vector load; lane by lane only for a row's last few samples (a lane loop here
            // on every step, through the stack, took most of the masked blur's time).
            let weights = sampleWeights + (y &* samplesPerRow &+ index)
            if count == 16 {
                weight = SIMD16<Float>(loadingFrom: weights)
            } else {
                var lanes = SIMD16<Float>()
                for lane in 0..<count { lanes[lane] = weights[lane] }
                weight = lanes
            }
        } else {
            weight = SIMD16(repeating: 1)
        }
        storeBytes(original + (blurred - original) * weight, to: target.row(y) + index, count: count)
    }
}

/// The stage of `tilt-shift` and `masked-variable-blur`: a Gaussian blur whose result is mixed with the original by
/// per-plane weights made at configure time.
final class VariableBlurProcessor: VideoProcessor {
    enum Weights: Sendable {
        /// w(y) from the frame row's position (0…1 down the frame).
        case rows(@Sendable (Double) -> Double)
        /// w from a mask image's luma, resampled to each plane.
        case mask(FilterImage)
    }

    let name: String
    let sigma: Double
    let weights: Weights
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var blur: FrameBlur?
    private var rowWeights: [[Float]] = []
    /// Per plane (masked blur): the weight of each sample, owned here (allocated in configure).
    private var sampleWeights: [UnsafeMutableBufferPointer<Float>] = []

    init(name: String, sigma: Double, weights: Weights, slices: SliceRunner) {
        self.name = name
        self.sigma = sigma
        self.weights = weights
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        release()
        blur = FrameBlur(sigma: sigma, format: input, slices: slices.threads) { _, _ in true }
        for index in 0..<format.planeCount {
            let size = format.planeSize(index, width: input.width, height: input.height)
            let channels = format.bytesPerPixel(plane: index)
            switch weights {
            case .rows(let weight):
                rowWeights.append((0..<size.height).map { y in Float(weight((Double(y) + 0.5) / Double(size.height)).clamped(0, 1)) })
            case .mask(let image):
                let mask = image.resized(width: size.width, height: size.height)
                let luma = LumaWeights(input.color.matrix)
                let values = UnsafeMutableBufferPointer<Float>.allocate(capacity: size.width * channels * size.height)
                for y in 0..<size.height {
                    for x in 0..<size.width {
                        let p = mask.pixel(x, y)
                        let w = luma.luma(SIMD3(p.x, p.y, p.z))
                        for k in 0..<channels { values[(y * size.width + x) * channels + k] = w }
                    }
                }
                sampleWeights.append(values)
            }
        }
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let blur else { return frame }
        let rowWeights = self.rowWeights, sampleWeights = self.sampleWeights
        return blur.apply(frame) { target, source, index in
            if rowWeights.isEmpty {
                return MixBlurred(target: target, source: source, rowWeights: nil, sampleWeights: UnsafePointer(sampleWeights[index].baseAddress),
                                  samplesPerRow: target.width * target.bytesPerPixel)
            }
            return MixBlurred(target: target, source: source, rowWeights: rowWeights[index], sampleWeights: nil, samplesPerRow: 0)
        }
    }

    func release() {
        blur = nil
        rowWeights = []
        for buffer in sampleWeights { buffer.deallocate() }
        sampleWeights = []
    }

    deinit { for buffer in sampleWeights { buffer.deallocate() } }
}

extension FilterSpec {
    /// Miniature look: a sharp horizontal band and blur above and below it. With v the row's position down the
    /// frame (0…1), w = clamp((|v − center| − width/2) / falloff, 0, 1) and out = original + w · (blur_σ − original).
    /// - `center` 0…1 (default 0.5), `width` 0…1 (default 0.3), `falloff` 0.01…1 (default 0.2), `radius` σ 0…100 px
    ///   (default 8). Formats: all.
    /// - Chain: `tilt-shift:center=0.6:width=0.2` · Swift: `try FilterDescription("tilt-shift", ["center": .number(0.6)])`
    public static let tiltShift = FilterSpec(
        name: "tilt-shift", family: .blur, summary: "Miniature look: a sharp band with blur above and below.",
        parameters: [ParameterSpec("center", .number(0...1), default: 0.5, "middle of the sharp band (0 top, 1 bottom)"),
                     ParameterSpec("width", .number(0...1), default: 0.3, "height of the sharp band"),
                     ParameterSpec("falloff", .number(0.01...1), default: 0.2, "distance over which blur reaches full strength"),
                     ParameterSpec("radius", .number(0...100, unit: "px"), default: 8, "σ of the full blur")],
        example: "tilt-shift:center=0.6:width=0.2", swift: "try FilterDescription(\"tilt-shift\", [\"center\": .number(0.6)])"
    ) { arguments, context in
        let center = arguments.number("center"), width = arguments.number("width"), falloff = arguments.number("falloff")
        return .processor(VariableBlurProcessor(name: "tilt-shift", sigma: arguments.number("radius"), weights: .rows { v in
            (abs(v - center) - width / 2) / falloff
        }, slices: context.slices))
    }

    /// Blur where a mask image is light: with m the mask's luma (0…1, the mask scaled to the frame),
    /// out = original + m · (blur_σ − original).
    /// - `mask` image (PNG, JPEG), required; `radius` σ 0…100 px (default 10). Formats: all.
    /// - Chain: `masked-variable-blur:mask=mask.png:radius=12` · Swift: `try FilterDescription("masked-variable-blur", ["mask": .text("mask.png")])`
    public static let maskedVariableBlur = FilterSpec(
        name: "masked-variable-blur", family: .blur, summary: "Blur whose strength follows a mask image (white = full blur).",
        coreImage: "CIMaskedVariableBlur",
        parameters: [ParameterSpec("mask", .file(extensions: ["png", "jpg", "jpeg"]), "the mask: white blurs, black stays sharp"),
                     ParameterSpec("radius", .number(0...100, unit: "px"), default: 10, "σ where the mask is white")],
        example: "masked-variable-blur:mask=mask.png:radius=12",
        swift: "try FilterDescription(\"masked-variable-blur\", [\"mask\": .text(\"mask.png\")])"
    ) { arguments, context in
        let mask = try FilterImage(path: arguments.text("mask"), filter: "masked-variable-blur")
        return .processor(VariableBlurProcessor(name: "masked-variable-blur", sigma: arguments.number("radius"), weights: .mask(mask),
                                                slices: context.slices))
    }
}
