import VFXCore
import VFXPipeline

/// What the bytes of one plane mean, for spatial filters that do arithmetic on values rather than only
/// averaging them: the codes of black and white, and which of the sixteen lanes a kernel handles at a time
/// carry color (alpha lanes of RGBA/BGRA do not, and filters leave them alone).
///
/// ```swift
/// let levels = PlaneLevels(format: .i420, color: .bt709, plane: 0)   // black 16, white 235
/// ```
struct PlaneLevels: Sendable {
    /// Code of black (luma, RGB, gray) or of zero chroma (128).
    let black: Float
    /// Code of white; for chroma, `black + 112` (the largest excursion in limited range).
    let white: Float
    /// 1 on lanes that carry color, 0 on alpha lanes (sixteen consecutive bytes starting at a multiple of 16).
    let colorLanes: SIMD16<Float>
    /// True for a chroma plane of I420/NV12.
    let isChroma: Bool

    init(format: PixelFormat, color: ColorDescription, plane: Int) {
        isChroma = format.isYUV && plane > 0
        if isChroma {
            black = 128
            white = color.range == .limited ? 240 : 255
        } else if format.isYUV && color.range == .limited {
            black = 16
            white = 235
        } else {
            black = 0
            white = 255
        }
        var lanes = SIMD16<Float>(repeating: 1)
        if format.isRGB { for lane in stride(from: 3, to: 16, by: 4) { lanes[lane] = 0 } }
        colorLanes = lanes
    }

    /// `value` mapped so that black is 0 and white is 1.
    @inline(__always) func normalized(_ value: SIMD16<Float>) -> SIMD16<Float> { (value - black) * (1 / (white - black)) }

    /// The inverse of `normalized`.
    @inline(__always) func code(_ value: SIMD16<Float>) -> SIMD16<Float> { value * (white - black) + black }
}

/// Spatial and geometric stages hold buffers sized for the format they were configured for: a frame of another
/// pixel format or size is refused with a one-line error instead of being read or written out of bounds.
///
/// ```swift
/// try FrameCheck.require(frame, matches: configured, filter: "box-blur")
/// ```
enum FrameCheck {
    static func require(_ frame: borrowing VideoFrame, matches format: FrameFormat?, filter: String) throws {
        guard let format else { throw FilterError.unsupportedFormat(filter: filter, format: "frames before configure") }
        guard frame.format == format.pixelFormat, frame.width == format.width, frame.height == format.height else {
            throw FilterError.unsupportedFormat(filter: filter, format: "\(frame.format) \(frame.width)x\(frame.height) "
                + "(configured for \(format.pixelFormat) \(format.width)x\(format.height))")
        }
    }
}
