import VFXCore
import VFXPipeline

/// What a filter becomes once its parameters and the frame format are known: the compiler's input.
///
/// - `.color`: a point-wise function on gamma-encoded RGB in 0…1. The compiler fuses every run of
///   consecutive `.color` stages into one pass in the frame's own pixel format (a 3D table for YUV or RGB, a
///   256-entry luma table when the run only bends luma, a chroma fill when it only removes chroma, exact
///   per-channel tables on RGB, an exact vector kernel for a lone affine transform on YUV). Write the function,
///   not the kernel (see docs/filter-engine.md).
/// - `.processor`: anything else (spatial, geometric, temporal). It is a `FrameProcessor` (usually the simple
///   form, a `VideoProcessor`; a temporal stage may hold frames and emit several) the compiler configures for the
///   format reaching it (it may return another format: crop, scale, rotate) and then calls once per frame.
///   Make its output buffers from a `BufferPool` in `configure` (no allocation per frame) and split work with
///   `context.slices` (one slice on the calling thread when the chain runs with one thread).
///
/// A spatial filter, written against this interface:
///
/// ```swift
/// extension FilterSpec {
///     static let boxBlur = FilterSpec(
///         name: "box-blur", summary: "Averages a square around each pixel.", coreImage: "CIBoxBlur",
///         parameters: [ParameterSpec("radius", .number(0...200, unit: "px"), default: 10, "half the square's side")],
///         example: "box-blur:radius=4", swift: "FilterDescription(\"box-blur\", [\"radius\": .number(4)])",
///         ffmpeg: { "boxblur=\(Int($0.number("radius")))" }
///     ) { arguments, context in
///         .processor(BoxBlurProcessor(radius: arguments.number("radius"), slices: context.slices))
///     }
/// }
///
/// final class BoxBlurProcessor: VideoProcessor {
///     let radius: Double
///     let slices: SliceRunner
///     private var pool: BufferPool?
///     init(radius: Double, slices: SliceRunner) { (self.radius, self.slices) = (radius, slices) }
///     func configure(for input: FrameFormat) throws -> FrameFormat {
///         pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height)
///         return input
///     }
///     func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
///         let output = frame.makeSibling(pool: pool)
///         for (source, target) in zip(frame.planes, output.planes) {
///             slices.run(rows: source.height) { rows in /* blur rows of source into target */ }
///         }
///         return output
///     }
/// }
/// ```
public enum FilterStage {
    /// A point-wise color transform (fused with its neighbours).
    case color(ColorTransform)
    /// A stage that sees whole frames (spatial or geometric filters).
    case processor(any FrameProcessor)
}

/// An affine map on gamma-encoded RGB: `out = matrix · rgb + offset`, rows are output channels.
///
/// ```swift
/// let sepia = ColorMatrix(rows: (SIMD3(0.393, 0.769, 0.189), SIMD3(0.349, 0.686, 0.168), SIMD3(0.272, 0.534, 0.131)))
/// ```
public struct ColorMatrix: Sendable, Hashable {
    public var red: SIMD3<Float>
    public var green: SIMD3<Float>
    public var blue: SIMD3<Float>
    public var offset: SIMD3<Float>

    public init(rows: (SIMD3<Float>, SIMD3<Float>, SIMD3<Float>), offset: SIMD3<Float> = .zero) {
        (red, green, blue) = rows
        self.offset = offset
    }

    public static let identity = ColorMatrix(rows: (SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)))

    @inlinable public func apply(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3((red * rgb).sum(), (green * rgb).sum(), (blue * rgb).sum()) + offset
    }

    /// `self` blended with the identity: `amount` 0 leaves colors alone, 1 is the full matrix.
    public func blended(_ amount: Float) -> ColorMatrix {
        let keep = 1 - amount
        return ColorMatrix(rows: (red * amount + SIMD3(keep, 0, 0), green * amount + SIMD3(0, keep, 0),
                                  blue * amount + SIMD3(0, 0, keep)), offset: offset * amount)
    }
}

/// A point-wise color transform on gamma-encoded RGB in 0…1, plus what it leaves alone, so the compiler can
/// pick the cheapest kernel. Results are clamped to 0…1 after each transform.
///
/// ```swift
/// ColorTransform.rgb { rgb in 1 - rgb }                            // any function: fused into a 3D table
/// ColorTransform.affine(ColorMatrix.identity.blended(0.5))         // a matrix: exact vector kernel when alone
/// ColorTransform.channels { pointwiseMin($0 * 2, .one) }           // per channel: exact tables on RGB
/// ColorTransform.lumaCurve(luma) { y in y * y }                   // only luma changes: 256-entry table on YUV
/// ColorTransform.removingChroma(luma)                              // gray: YUV frames touch only chroma
/// ColorTransform.fromLuma(luma) { y in SIMD3(y, y * y, 1 - y) }      // colour from luma: three 256-entry maps on YUV
/// ```
public struct ColorTransform: Sendable {
    /// What the transform does, from the most specific (cheapest) to the most general.
    public enum Kind: Sendable {
        /// Any function of RGB.
        case general
        /// `clamp(matrix · rgb + offset)`.
        case affine(ColorMatrix)
        /// Each output channel depends only on the same input channel (curves, gains, posterize, a 1D table).
        case perChannel
        /// Luma (with the frame's weights) goes through the curve; chroma (R'−Y', B'−Y') is kept, or removed
        /// when `removesChroma`.
        case luma(curve: (@Sendable (Float) -> Float)?, removesChroma: Bool)
        /// The output depends on luma alone (with the frame's weights): palettes and gradient maps (`thermal`,
        /// `x-ray`, `color-map`). On Y'CbCr frames the luma is the frame's own Y', as for the luma curves.
        case fromLuma
    }

    /// A function with jumps, or a choice between channels, that the 16-bit fixed-point kernel on Y'CbCr frames
    /// (`FixedPointRunKernel`) evaluates in its lanes as defined rather than through cubic pieces or a 3D table. The
    /// transform's `apply` stays its definition (and what RGB and gray frames use).
    enum Piecewise: Sendable, Hashable {
        /// Each channel `round(v·(levels − 1))/(levels − 1)`, halves rounded up (`posterize`); levels 2…256.
        case quantized(levels: Int)
        /// Each channel `v > threshold ? 1 − v : v` (`solarize`).
        case invertedAbove(Float)
        /// Gray of the largest channel (`maximum-component`).
        case largestChannel
        /// Gray of the smallest channel (`minimum-component`).
        case smallestChannel
    }

    public let kind: Kind
    /// The function itself on gamma-encoded RGB; the compiler clamps its result to 0…1.
    public let apply: @Sendable (SIMD3<Float>) -> SIMD3<Float>
    /// Nodes per axis of a 3D table that holds this transform exactly (a `.cube` file's size), if any: the
    /// compiler then picks a table grid that contains these nodes.
    public let gridSize: Int?
    /// What the function is when it is one of the jumps or channel choices the fixed-point kernel knows; nil otherwise.
    let piecewise: Piecewise?

    public init(kind: Kind, gridSize: Int? = nil, apply: @escaping @Sendable (SIMD3<Float>) -> SIMD3<Float>) {
        self.init(kind: kind, gridSize: gridSize, piecewise: nil, apply: apply)
    }

    init(kind: Kind, gridSize: Int? = nil, piecewise: Piecewise?, apply: @escaping @Sendable (SIMD3<Float>) -> SIMD3<Float>) {
        self.kind = kind
        self.gridSize = gridSize
        self.piecewise = piecewise
        self.apply = apply
    }

    /// Any point-wise function of RGB.
    public static func rgb(_ function: @escaping @Sendable (SIMD3<Float>) -> SIMD3<Float>) -> ColorTransform {
        ColorTransform(kind: .general, apply: function)
    }

    public static func affine(_ matrix: ColorMatrix) -> ColorTransform {
        ColorTransform(kind: .affine(matrix)) { matrix.apply($0) }
    }

    /// A function applied to each channel on its own (`function` must not mix channels): exact 256-entry tables
    /// per channel on RGB frames.
    public static func channels(_ function: @escaping @Sendable (SIMD3<Float>) -> SIMD3<Float>) -> ColorTransform {
        ColorTransform(kind: .perChannel, apply: function)
    }

    /// True when each output channel depends only on the same input channel.
    var isPerChannel: Bool {
        switch kind {
        case .perChannel: true
        case .affine(let m): m.red.y == 0 && m.red.z == 0 && m.green.x == 0 && m.green.z == 0 && m.blue.x == 0 && m.blue.y == 0
        case .general, .luma, .fromLuma: false
        }
    }

    /// Each channel quantized to `levels` (2…256) evenly spaced values: `round(v·(levels − 1))/(levels − 1)`.
    static func quantized(levels: Int) -> ColorTransform {
        let steps = Float(levels - 1)
        return ColorTransform(kind: .perChannel, piecewise: .quantized(levels: levels)) {
            ($0 * steps).rounded(.toNearestOrAwayFromZero) / steps
        }
    }

    /// Each channel above `threshold` inverted: `v > threshold ? 1 − v : v`.
    static func invertedAbove(_ threshold: Float) -> ColorTransform {
        ColorTransform(kind: .perChannel, piecewise: .invertedAbove(threshold)) { $0.replacing(with: 1 - $0, where: $0 .> threshold) }
    }

    /// Gray of the largest of the three channels.
    static let largestChannel = ColorTransform(kind: .general, piecewise: .largestChannel) { SIMD3(repeating: $0.max()) }

    /// Gray of the smallest of the three channels.
    static let smallestChannel = ColorTransform(kind: .general, piecewise: .smallestChannel) { SIMD3(repeating: $0.min()) }

    /// A colour made from luma alone (`map` of the luma with `weights`, in 0…1): a 256-entry map per output
    /// component on Y'CbCr frames (`LumaMapKernel`).
    public static func fromLuma(_ weights: LumaWeights, _ map: @escaping @Sendable (Float) -> SIMD3<Float>) -> ColorTransform {
        ColorTransform(kind: .fromLuma) { rgb in map(weights.luma(rgb).clamped(0, 1)) }
    }

    /// Luma through `curve` (its result clamped to 0…1), chroma kept: `rgb + (clamp(curve(Y')) − Y')`.
    public static func lumaCurve(_ weights: LumaWeights, _ curve: @escaping @Sendable (Float) -> Float) -> ColorTransform {
        ColorTransform(kind: .luma(curve: curve, removesChroma: false)) { rgb in
            let y = weights.luma(rgb)
            return rgb + (curve(y).clamped(0, 1) - y)
        }
    }

    /// Gray of the same luma (optionally through `curve`): chroma removed.
    public static func removingChroma(_ weights: LumaWeights, curve: (@Sendable (Float) -> Float)? = nil) -> ColorTransform {
        ColorTransform(kind: .luma(curve: curve, removesChroma: true)) { rgb in
            let y = weights.luma(rgb)
            return SIMD3(repeating: (curve?(y) ?? y).clamped(0, 1))
        }
    }
}

extension ColorMatrix {
    /// The affine map that `function` is, read off from its values at black and the three primaries.
    /// (Only meaningful when `function` is affine: mixes, channel matrices, chroma rotations.)
    public init(fitting function: (SIMD3<Float>) -> SIMD3<Float>) {
        let origin = function(.zero)
        let columns = [SIMD3<Float>(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)].map { function($0) - origin }
        self.init(rows: (SIMD3(columns[0].x, columns[1].x, columns[2].x),
                         SIMD3(columns[0].y, columns[1].y, columns[2].y),
                         SIMD3(columns[0].z, columns[1].z, columns[2].z)), offset: origin)
    }

    /// The nine coefficients as FFmpeg's `colorchannelmixer` takes them (its offsets are zero), or nil when
    /// the matrix has an offset.
    public var ffmpegChannelMixer: String? {
        guard offset == .zero else { return nil }
        let values = [red, green, blue].flatMap { [$0.x, $0.y, $0.z] }
        let names = ["rr", "rg", "rb", "gr", "gg", "gb", "br", "bg", "bb"]
        return "colorchannelmixer=" + zip(names, values).map { "\($0)=\(String(format: "%.6g", $1))" }.joined(separator: ":")
    }
}
