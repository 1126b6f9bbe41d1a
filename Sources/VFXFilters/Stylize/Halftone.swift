import Foundation
import VFXCore
import VFXPipeline

// Halftone screens: the picture's luma Y' compared with a periodic pattern P in 0…1 to print black or white, as
// a press does. With (u, v) the pixel centre relative to `center`, turned by −`angle`, and w the `width` of a
// period, the output is gray g = clamp(½ + (Y' − P) / (1 − sharpness), 0, 1) (sharpness 1 would be a hard edge).
// Patterns: dot ½ + ¼(cos 2πu/w + cos 2πv/w); line ½ + ½ cos 2πv/w; circular ½ + ½ cos 2πr/w (r = |(u, v)|);
// hatched min(½ + ½ cos 2πu/w, ½ + ½ cos 2πv/w).

/// The patterns of the screens.
enum ScreenPattern: Sendable {
    case dot, line, circular, hatched

    func value(u: Double, v: Double, width: Double) -> Double {
        let k = 2 * Double.pi / width
        switch self {
        case .dot: return 0.5 + 0.25 * (cos(k * u) + cos(k * v))
        case .line: return 0.5 + 0.5 * cos(k * v)
        case .circular: return 0.5 + 0.5 * cos(k * (u * u + v * v).squareRoot())
        case .hatched: return min(0.5 + 0.5 * cos(k * u), 0.5 + 0.5 * cos(k * v))
        }
    }
}

struct ScreenKernel: PixelKernel {
    let pattern: ScreenPattern
    let center: SIMD2<Double>, angle: Double, width: Double, softness: Float
    let weights: LumaWeights

    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float> {
        let d = SIMD2(Double(x) + 0.5, Double(y) + 0.5) - center
        let (c, s) = (cos(angle), sin(angle))
        let p = Float(pattern.value(u: d.x * c + d.y * s, v: -d.x * s + d.y * c, width: width))
        let luma = weights.luma(SIMD3(pixel.x, pixel.y, pixel.z))
        let gray = (0.5 + (luma - p) / softness).clamped(0, 1)
        return SIMD4(gray, gray, gray, pixel.w)
    }
}

extension FilterSpec {
    static func screen(_ name: String, _ pattern: ScreenPattern, coreImage: String, summary: String, width: Double) -> FilterSpec {
        FilterSpec(
            name: name, family: .halftone, summary: summary, coreImage: coreImage,
            parameters: [ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "origin of the pattern"),
                         ParameterSpec("angle", .angle(-360...360), default: 0, "rotation of the pattern"),
                         ParameterSpec("width", .number(2...500, unit: "px"), default: width, "period of the pattern"),
                         ParameterSpec("sharpness", .number(0...0.99), default: 0.7, "0 soft, towards 1 hard black and white")],
            example: "\(name):width=8:angle=45", swift: "try FilterDescription(\"\(name)\", [\"width\": .number(8)])"
        ) { arguments, context in
            let center = arguments.point("center")
            let kernel = ScreenKernel(pattern: pattern, center: SIMD2(center.x * Double(context.format.width), center.y * Double(context.format.height)),
                                      angle: arguments.number("angle") * .pi / 180, width: arguments.number("width"),
                                      softness: 1 - arguments.float("sharpness"), weights: context.luma)
            return .processor(RGBAProcessor(name: name, kernel: PerPixel(kernel), slices: context.slices))
        }
    }

    /// Dot halftone (see the file's comment for the formula). Formats: all (gray frames come out RGBA).
    /// Chain: `dot-screen:width=8:angle=45` · Swift: `try FilterDescription("dot-screen", ["width": .number(8)])`
    public static let dotScreen = screen("dot-screen", .dot, coreImage: "CIDotScreen", summary: "Black-and-white dot halftone of luma.", width: 6)
    /// Line halftone. Chain: `line-screen:width=8:angle=45`.
    public static let lineScreen = screen("line-screen", .line, coreImage: "CILineScreen", summary: "Black-and-white line halftone of luma.", width: 6)
    /// Concentric-circle halftone. Chain: `circular-screen:width=8`.
    public static let circularScreen = screen("circular-screen", .circular, coreImage: "CICircularScreen",
                                              summary: "Black-and-white halftone of concentric circles.", width: 6)
    /// Cross-hatched halftone. Chain: `hatched-screen:width=8:angle=45`.
    public static let hatchedScreen = screen("hatched-screen", .hatched, coreImage: "CIHatchedScreen",
                                             summary: "Black-and-white cross-hatched halftone of luma.", width: 6)
}
