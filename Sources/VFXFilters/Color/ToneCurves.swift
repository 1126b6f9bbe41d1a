import Foundation
import VFXCore
import VFXPipeline

// Tone curves: highlight/shadow adjustment, a tone curve through points, a polynomial per channel, the sRGB transfer
// curve both ways, and a colour map read from a gradient image. All are point-wise (`.color`) and fuse with their
// neighbours; per-channel ones run as exact 256-entry tables on RGB frames.

extension FilterSpec {
    /// Lifts shadows and pulls down highlights on luma: Y' → Y' + shadows · ¼ · (27/4)·Y'(1−Y')² − (1 − highlights) ·
    /// ¼ · (27/4)·Y'²(1−Y') (the two bumps peak at Y' = ⅓ and ⅔ with height ¼ at full strength); chroma kept.
    /// - `highlights` 0…1 (default 1: unchanged; lower darkens highlights), `shadows` −1…1 (default 0.3). Formats: all.
    /// - Chain: `highlight-shadow:shadows=0.5:highlights=0.7` · Swift: `try FilterDescription("highlight-shadow", ["shadows": .number(0.5)])`
    public static let highlightShadow = FilterSpec(
        name: "highlight-shadow", family: .colorAdjustment, summary: "Lifts shadows and tames highlights on luma.",
        coreImage: "CIHighlightShadowAdjust",
        parameters: [ParameterSpec("highlights", .number(0...1), default: 1, "1 leaves highlights alone, 0 darkens them most"),
                     ParameterSpec("shadows", .number(-1...1), default: 0.3, "positive lifts shadows, negative deepens them")],
        example: "highlight-shadow:shadows=0.5:highlights=0.7",
        swift: "try FilterDescription(\"highlight-shadow\", [\"shadows\": .number(0.5)])"
    ) { arguments, context in
        let shadows = arguments.float("shadows"), highlights = arguments.float("highlights")
        return .color(.lumaCurve(context.luma) { y in
            y + shadows * 1.6875 * y * (1 - y) * (1 - y) - (1 - highlights) * 1.6875 * y * y * (1 - y)
        })
    }

    /// A curve through five points applied to each channel: the natural cubic spline through the points (as FFmpeg's
    /// `curves`), flat beyond the first and last point, clamped to 0…1.
    /// - `point0`…`point4`: points `x/y`-style as `XxY` in 0…1 with increasing x (defaults on the diagonal). Formats: all.
    /// - Chain: `tone-curve:point1=0.25x0.15:point3=0.75x0.85` · Swift: `try FilterDescription("tone-curve", ["point1": .point(FilterPoint(x: 0.25, y: 0.15))])`
    public static let toneCurve = FilterSpec(
        name: "tone-curve", family: .colorAdjustment, summary: "A smooth curve through five points on each channel.",
        coreImage: "CIToneCurve",
        parameters: (0..<5).map { i in
            ParameterSpec("point\(i)", .point, default: .point(FilterPoint(x: Double(i) / 4, y: Double(i) / 4)), "point \(i) of the curve (input x, output y)")
        },
        example: "tone-curve:point1=0.25x0.15:point3=0.75x0.85",
        swift: "try FilterDescription(\"tone-curve\", [\"point1\": .point(FilterPoint(x: 0.25, y: 0.15))])",
        ffmpeg: { arguments in
            let points = (0..<5).map { arguments.point("point\($0)") }
            return "curves=all='" + points.map { "\(ParameterValue.format($0.x))/\(ParameterValue.format($0.y))" }.joined(separator: " ") + "'"
        }
    ) { arguments, _ in
        let points = (0..<5).map { arguments.point("point\($0)") }
        for i in 1..<5 where points[i].x <= points[i - 1].x {
            throw FilterError.badValue(filter: "tone-curve", key: "point\(i)", value: points[i].description,
                                       expected: "a point to the right of point\(i - 1)")
        }
        let spline = NaturalSpline(points.map { SIMD2($0.x, $0.y) })
        let table = (0..<256).map { Float(spline.value(at: Double($0) / 255).clamped(0, 1)) }
        return .color(.channels { rgb in
            SIMD3(ToneTable.read(table, rgb.x), ToneTable.read(table, rgb.y), ToneTable.read(table, rgb.z))
        })
    }

    /// The same cubic on each channel: v → a0 + a1·v + a2·v² + a3·v³, clamped to 0…1.
    /// - `a0`…`a3` −4…4 (defaults 0, 1, 0, 0: unchanged). Formats: all.
    /// - Chain: `color-polynomial:a1=0.8:a2=0.4:a3=-0.2` · Swift: `try FilterDescription("color-polynomial", ["a2": .number(0.4)])`
    public static let colorPolynomial = FilterSpec(
        name: "color-polynomial", family: .colorAdjustment, summary: "A cubic polynomial applied to each channel.",
        coreImage: "CIColorPolynomial",
        parameters: [ParameterSpec("a0", .number(-4...4), default: 0, "constant term"),
                     ParameterSpec("a1", .number(-4...4), default: 1, "linear term"),
                     ParameterSpec("a2", .number(-4...4), default: 0, "quadratic term"),
                     ParameterSpec("a3", .number(-4...4), default: 0, "cubic term")],
        example: "color-polynomial:a1=0.8:a2=0.4:a3=-0.2", swift: "try FilterDescription(\"color-polynomial\", [\"a2\": .number(0.4)])",
        ffmpeg: { arguments in
            let a = (0..<4).map { ParameterValue.format(arguments.number("a\($0)")) }
            let v = "val/255"
            let expression = "'clip(255*(\(a[0])+\(a[1])*\(v)+\(a[2])*pow(\(v),2)+\(a[3])*pow(\(v),3))+0.5,0,255)'"
            return "lutrgb=r=\(expression):g=\(expression):b=\(expression)"
        }
    ) { arguments, _ in
        let a = (0..<4).map { arguments.float("a\($0)") }
        return .color(.channels { v in a[0] + v * (a[1] + v * (a[2] + v * a[3])) })
    }

    /// Gamma-encoded sRGB values decoded to linear light on each channel: v ≤ 0.04045 ? v/12.92 : ((v+0.055)/1.055)^2.4.
    /// - No parameters. Formats: all.
    /// - Chain: `srgb-to-linear` · Swift: `try FilterDescription("srgb-to-linear")`
    public static let srgbToLinear = FilterSpec(
        name: "srgb-to-linear", family: .colorAdjustment, summary: "Decodes the sRGB curve: values become linear light.",
        coreImage: "CISRGBToneCurveToLinear", parameters: [], example: "srgb-to-linear", swift: "try FilterDescription(\"srgb-to-linear\")"
    ) { _, _ in .color(.channels { rgb in SIMD3(SRGB.decode(rgb.x), SRGB.decode(rgb.y), SRGB.decode(rgb.z)) }) }

    /// Linear-light values encoded with the sRGB curve on each channel: v ≤ 0.0031308 ? 12.92v : 1.055·v^(1/2.4) − 0.055.
    /// - No parameters. Formats: all.
    /// - Chain: `linear-to-srgb` · Swift: `try FilterDescription("linear-to-srgb")`
    public static let linearToSRGB = FilterSpec(
        name: "linear-to-srgb", family: .colorAdjustment, summary: "Encodes linear light with the sRGB curve.",
        coreImage: "CILinearToSRGBToneCurve", parameters: [], example: "linear-to-srgb", swift: "try FilterDescription(\"linear-to-srgb\")"
    ) { _, _ in .color(.channels { rgb in SIMD3(SRGB.encode(rgb.x), SRGB.encode(rgb.y), SRGB.encode(rgb.z)) }) }

    /// Luma looked up in a gradient image: the image's middle row is the ramp (left = black, right = white);
    /// with n pixels, luma Y' reads position Y'·(n−1) between pixel centres, linearly.
    /// - `file`: the gradient image (PNG, JPEG), required. Formats: all.
    /// - Chain: `color-map:file=ramp.png` · Swift: `try FilterDescription("color-map", ["file": .text("ramp.png")])`
    public static let colorMap = FilterSpec(
        name: "color-map", family: .colorEffect, summary: "Luma mapped through the colours of a gradient image.",
        coreImage: "CIColorMap",
        parameters: [ParameterSpec("file", .file(extensions: ["png", "jpg", "jpeg"]), "the gradient image; its middle row is used")],
        example: "color-map:file=ramp.png", swift: "try FilterDescription(\"color-map\", [\"file\": .text(\"ramp.png\")])"
    ) { arguments, context in
        let image = try FilterImage(path: arguments.text("file"), filter: "color-map")
        let row = image.height / 2
        let ramp = (0..<image.width).map { x -> SIMD3<Float> in
            let p = image.pixel(x, row)
            return SIMD3(p.x, p.y, p.z)
        }
        let weights = context.luma
        return .color(.fromLuma(weights) { luma in
            let position = luma * Float(ramp.count - 1)
            let i = min(Int(position), max(ramp.count - 2, 0)), t = position - Float(i)
            return ramp.count == 1 ? ramp[0] : ramp[i] + (ramp[i + 1] - ramp[i]) * t
        })
    }
}

/// The sRGB transfer curve.
enum SRGB {
    @inline(__always) static func decode(_ v: Float) -> Float { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
    @inline(__always) static func encode(_ v: Float) -> Float { v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055 }
}

/// A 256-entry curve read with linear interpolation.
enum ToneTable {
    @inline(__always) static func read(_ table: [Float], _ v: Float) -> Float {
        let position = v.clamped(0, 1) * 255
        let i = min(Int(position), 254), t = position - Float(i)
        return table[i] + (table[i + 1] - table[i]) * t
    }
}

/// The natural cubic spline through points with increasing x (second derivative zero at both ends), constant
/// beyond the first and last point.
struct NaturalSpline: Sendable {
    let points: [SIMD2<Double>]
    /// Second derivatives at the points.
    let second: [Double]

    init(_ points: [SIMD2<Double>]) {
        self.points = points
        let n = points.count
        var second = [Double](repeating: 0, count: n)
        if n > 2 {
            // Tridiagonal system for the inner second derivatives (Thomas algorithm).
            var diagonal = [Double](repeating: 0, count: n), rhs = diagonal, upper = diagonal
            for i in 1..<(n - 1) {
                let h0 = points[i].x - points[i - 1].x, h1 = points[i + 1].x - points[i].x
                let lower = h0
                diagonal[i] = 2 * (h0 + h1)
                upper[i] = h1
                rhs[i] = 6 * ((points[i + 1].y - points[i].y) / h1 - (points[i].y - points[i - 1].y) / h0)
                if i > 1 {
                    let m = lower / diagonal[i - 1]
                    diagonal[i] -= m * upper[i - 1]
                    rhs[i] -= m * rhs[i - 1]
                }
            }
            for i in stride(from: n - 2, through: 1, by: -1) {
                second[i] = (rhs[i] - (i < n - 2 ? upper[i] * second[i + 1] : 0)) / diagonal[i]
            }
        }
        self.second = second
    }

    func value(at x: Double) -> Double {
        guard let first = points.first, let last = points.last else { return x }
        if x <= first.x { return first.y }
        if x >= last.x { return last.y }
        var i = 1
        while points[i].x < x { i += 1 }
        let (p0, p1) = (points[i - 1], points[i])
        let h = p1.x - p0.x, a = (p1.x - x) / h, b = (x - p0.x) / h
        return a * p0.y + b * p1.y + ((a * a * a - a) * second[i - 1] + (b * b * b - b) * second[i]) * h * h / 6
    }
}
