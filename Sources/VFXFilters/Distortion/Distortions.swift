import Foundation
import VFXCore
import VFXPipeline

// Distortions: geometric warps around a centre (bump, pinch, twirl, vortex, hole, circle splash), a glass ripple,
// and radial lens distortion with its inverse. Each is a `WarpMap` (output position → source position) evaluated
// once per sample at configure time; frames cost one bilinear gather per sample (Distortion/Warp.swift).
//
// Shared notation: c is `center` in pixels, d = p − c, r = |d|, R = `radius` × the frame's height, t = r / R.
// Pixels with t ≥ 1 are left alone unless a filter says otherwise. Sources outside the frame repeat its edge.

/// The parameters most distortions share.
private enum Distortion {
    static let center = ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "centre of the effect")
    static func radius(_ value: Double) -> ParameterSpec {
        ParameterSpec("radius", .number(0...2), default: value, "radius as a fraction of the frame's height")
    }

    /// A radial warp: `factor(t)` scales d for t < 1 (source = c + d · factor).
    static func radial(_ arguments: FilterArguments, _ factor: @escaping @Sendable (Double) -> Double) -> WarpMap {
        let center = arguments.point("center"), radius = arguments.number("radius")
        return WarpMap { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y), d = p - c
            let r = (d * d).sum().squareRoot(), big = radius * size.y
            guard big > 0, r < big else { return p }
            return c + d * factor(r / big)
        }
    }

    /// A rotational warp: d turned by `angle(t)` radians for t < 1.
    static func rotating(_ arguments: FilterArguments, _ angle: @escaping @Sendable (Double) -> Double) -> WarpMap {
        let center = arguments.point("center"), radius = arguments.number("radius")
        return WarpMap { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y), d = p - c
            let r = (d * d).sum().squareRoot(), big = radius * size.y
            guard big > 0, r < big else { return p }
            let theta = angle(r / big)
            return c + SIMD2(d.x * cos(theta) - d.y * sin(theta), d.x * sin(theta) + d.y * cos(theta))
        }
    }

    static func stage(_ name: String, _ map: WarpMap, _ context: FilterContext) -> FilterStage {
        .processor(WarpProcessor(name: name, map: map, slices: context.slices))
    }
}

extension FilterSpec {
    /// A bulge (or dent) inside a circle: source = c + d · (1 − scale · (1 − t²)²) for t < 1.
    /// - `center` point, `radius` 0…2 (× height, default 0.3), `scale` −1…1 (default 0.5; negative dents).
    /// - Formats: all. Chain: `bump-distortion:radius=0.4:scale=0.6` · Swift: `try FilterDescription("bump-distortion", ["scale": .number(0.6)])`
    public static let bumpDistortion = FilterSpec(
        name: "bump-distortion", family: .distortion, summary: "A bulge (scale > 0) or dent (scale < 0) inside a circle.",
        coreImage: "CIBumpDistortion",
        parameters: [Distortion.center, Distortion.radius(0.3),
                     ParameterSpec("scale", .number(-1...1), default: 0.5, "strength: 1 magnifies the centre most")],
        example: "bump-distortion:radius=0.4:scale=0.6", swift: "try FilterDescription(\"bump-distortion\", [\"scale\": .number(0.6)])"
    ) { arguments, context in
        let scale = arguments.number("scale")
        return Distortion.stage("bump-distortion", Distortion.radial(arguments) { t in 1 - scale * (1 - t * t) * (1 - t * t) }, context)
    }

    /// Pulls the picture toward the centre: source = c + d · sin(πt/2)^(−scale) for 0 < t < 1.
    /// - `center`, `radius` (× height, default 0.3), `scale` 0…1 (default 0.5).
    /// - Formats: all. Chain: `pinch-distortion:scale=0.7` · Swift: `try FilterDescription("pinch-distortion", ["scale": .number(0.7)])`
    public static let pinchDistortion = FilterSpec(
        name: "pinch-distortion", family: .distortion, summary: "Pinches the picture toward a centre inside a circle.",
        coreImage: "CIPinchDistortion",
        parameters: [Distortion.center, Distortion.radius(0.3),
                     ParameterSpec("scale", .number(0...1), default: 0.5, "strength of the pinch")],
        example: "pinch-distortion:scale=0.7", swift: "try FilterDescription(\"pinch-distortion\", [\"scale\": .number(0.7)])"
    ) { arguments, context in
        let scale = arguments.number("scale")
        return Distortion.stage("pinch-distortion", Distortion.radial(arguments) { t in
            t <= 0 ? 0 : pow(sin(Double.pi / 2 * t), -scale)
        }, context)
    }

    /// A twirl that fades out at the radius: d turned by angle · (1 − s(t)), s(t) = t²(3 − 2t).
    /// - `center`, `radius` (× height, default 0.3), `angle` −1800…1800° (default 180).
    /// - Formats: all. Chain: `twirl-distortion:angle=270` · Swift: `try FilterDescription("twirl-distortion", ["angle": .number(270)])`
    public static let twirlDistortion = FilterSpec(
        name: "twirl-distortion", family: .distortion, summary: "Rotates the picture around a centre, fading out at the radius.",
        coreImage: "CITwirlDistortion",
        parameters: [Distortion.center, Distortion.radius(0.3),
                     ParameterSpec("angle", .angle(-1800...1800), default: 180, "rotation at the centre")],
        example: "twirl-distortion:angle=270", swift: "try FilterDescription(\"twirl-distortion\", [\"angle\": .number(270)])"
    ) { arguments, context in
        let angle = arguments.number("angle") * .pi / 180
        return Distortion.stage("twirl-distortion", Distortion.rotating(arguments) { t in angle * (1 - t * t * (3 - 2 * t)) }, context)
    }

    /// A whirlpool: d turned by angle · (1 − t)² (tighter toward the centre than a twirl).
    /// - `center`, `radius` (× height, default 0.3), `angle` −7200…7200° (default 720).
    /// - Formats: all. Chain: `vortex-distortion:angle=1440` · Swift: `try FilterDescription("vortex-distortion", ["angle": .number(1440)])`
    public static let vortexDistortion = FilterSpec(
        name: "vortex-distortion", family: .distortion, summary: "A whirlpool around a centre, tightest at the centre.",
        coreImage: "CIVortexDistortion",
        parameters: [Distortion.center, Distortion.radius(0.3),
                     ParameterSpec("angle", .angle(-7200...7200), default: 720, "rotation at the centre")],
        example: "vortex-distortion:angle=1440", swift: "try FilterDescription(\"vortex-distortion\", [\"angle\": .number(1440)])"
    ) { arguments, context in
        let angle = arguments.number("angle") * .pi / 180
        return Distortion.stage("vortex-distortion", Distortion.rotating(arguments) { t in angle * (1 - t) * (1 - t) }, context)
    }

    /// A hole pushing the picture outward: inside the radius the fill colour; outside, source = c + d · (1 − R²/r²).
    /// - `center`, `radius` (× height, default 0.1), `color` of the hole (default black).
    /// - Formats: all. Chain: `hole-distortion:radius=0.15` · Swift: `try FilterDescription("hole-distortion", ["radius": .number(0.15)])`
    public static let holeDistortion = FilterSpec(
        name: "hole-distortion", family: .distortion, summary: "A round hole that pushes the picture outward.",
        coreImage: "CIHoleDistortion",
        parameters: [Distortion.center, Distortion.radius(0.1),
                     ParameterSpec("color", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "colour inside the hole")],
        example: "hole-distortion:radius=0.15", swift: "try FilterDescription(\"hole-distortion\", [\"radius\": .number(0.15)])"
    ) { arguments, context in
        let center = arguments.point("center"), radius = arguments.number("radius")
        let map = WarpMap(fill: arguments.color("color").rgb) { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y), d = p - c
            let r2 = (d * d).sum(), big = radius * size.y
            guard r2 > big * big else { return nil }
            return c + d * (1 - big * big / r2)
        }
        return Distortion.stage("hole-distortion", map, context)
    }

    /// Outside the circle, each pixel takes the colour of the circle's edge on its ray: source = c + d · R / r.
    /// - `center`, `radius` (× height, default 0.3). Formats: all.
    /// - Chain: `circle-splash-distortion:radius=0.25` · Swift: `try FilterDescription("circle-splash-distortion")`
    public static let circleSplashDistortion = FilterSpec(
        name: "circle-splash-distortion", family: .distortion, summary: "Streaks the colours of a circle's edge outward.",
        coreImage: "CICircleSplashDistortion",
        parameters: [Distortion.center, Distortion.radius(0.3)],
        example: "circle-splash-distortion:radius=0.25", swift: "try FilterDescription(\"circle-splash-distortion\")"
    ) { arguments, context in
        let center = arguments.point("center"), radius = arguments.number("radius")
        let map = WarpMap { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y), d = p - c
            let r = (d * d).sum().squareRoot(), big = radius * size.y
            guard r > big, r > 0 else { return p }
            return c + d * (big / r)
        }
        return Distortion.stage("circle-splash-distortion", map, context)
    }

    /// Looking through rippled glass: source = p + amplitude · (sin(2πy/λ), sin(2πx/λ)).
    /// - `amplitude` 0…100 px (default 6), `wavelength` λ 2…1000 px (default 40). Formats: all.
    /// - Chain: `glass:amplitude=8:wavelength=30` · Swift: `try FilterDescription("glass", ["amplitude": .number(8)])`
    public static let glass = FilterSpec(
        name: "glass", family: .distortion, summary: "Looking through rippled glass: a sine displacement across and down.",
        parameters: [ParameterSpec("amplitude", .number(0...100, unit: "px"), default: 6, "largest displacement"),
                     ParameterSpec("wavelength", .number(2...1000, unit: "px"), default: 40, "distance between ripples")],
        example: "glass:amplitude=8:wavelength=30", swift: "try FilterDescription(\"glass\", [\"amplitude\": .number(8)])"
    ) { arguments, context in
        let amplitude = arguments.number("amplitude"), k = 2 * Double.pi / arguments.number("wavelength")
        let map = WarpMap { p, _ in p + amplitude * SIMD2(sin(k * p.y), sin(k * p.x)) }
        return Distortion.stage("glass", map, context)
    }

    /// Barrel (k1 < 0) or pincushion (k1 > 0) distortion, FFmpeg's `lenscorrection` model: with ρ = r / half the
    /// frame's diagonal, source = c + d · (1 + k1·ρ² + k2·ρ⁴); sources outside the frame take `color`.
    /// - `k1`, `k2` −1…1 (default −0.2, 0), `center` (default the middle), `color` (default black). Formats: all.
    /// - Chain: `lens-distortion:k1=-0.3:k2=0.05` · Swift: `try FilterDescription("lens-distortion", ["k1": .number(-0.3)])`
    public static let lensDistortion = FilterSpec(
        name: "lens-distortion", family: .distortion, summary: "Radial lens distortion (barrel or pincushion), FFmpeg's lenscorrection model.",
        parameters: Lens.parameters(k1: -0.2),
        example: "lens-distortion:k1=-0.3:k2=0.05", swift: "try FilterDescription(\"lens-distortion\", [\"k1\": .number(-0.3)])",
        ffmpeg: { arguments in
            let center = arguments.point("center")
            return "lenscorrection=cx=\(ParameterValue.format(center.x)):cy=\(ParameterValue.format(center.y))"
                + ":k1=\(ParameterValue.format(arguments.number("k1"))):k2=\(ParameterValue.format(arguments.number("k2")))"
        }
    ) { arguments, context in
        Distortion.stage("lens-distortion", Lens.map(arguments, inverse: false), context)
    }

    /// The inverse of `lens-distortion` with the same k1, k2: straightens what it bent. For each output radius ρ
    /// the source radius s solves s · (1 + k1·s² + k2·s⁴) = ρ (Newton's method at configure time).
    /// - `k1`, `k2` −1…1 (default 0.2, 0), `center`, `color`. Formats: all.
    /// - Chain: `lens-correction:k1=-0.3:k2=0.05` · Swift: `try FilterDescription("lens-correction", ["k1": .number(-0.3)])`
    public static let lensCorrection = FilterSpec(
        name: "lens-correction", family: .distortion, summary: "Undoes lens-distortion with the same coefficients.",
        parameters: Lens.parameters(k1: 0.2),
        example: "lens-correction:k1=-0.3:k2=0.05", swift: "try FilterDescription(\"lens-correction\", [\"k1\": .number(-0.3)])"
    ) { arguments, context in
        Distortion.stage("lens-correction", Lens.map(arguments, inverse: true), context)
    }
}

/// The radial lens model shared by `lens-distortion` and `lens-correction`.
enum Lens {
    static func parameters(k1: Double) -> [ParameterSpec] {
        [ParameterSpec("k1", .number(-1...1), default: k1, "coefficient of ρ² (negative: barrel)"),
         ParameterSpec("k2", .number(-1...1), default: 0, "coefficient of ρ⁴"),
         ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "optical centre"),
         ParameterSpec("color", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "colour where the source is outside the frame")]
    }

    /// The source radius s (in half diagonals) with s · (1 + k1 s² + k2 s⁴) = ρ, or nil when there is none nearby.
    static func inverseRadius(_ rho: Double, k1: Double, k2: Double) -> Double? {
        var s = rho
        for _ in 0..<30 {
            let s2 = s * s
            let f = s * (1 + k1 * s2 + k2 * s2 * s2) - rho
            let derivative = 1 + 3 * k1 * s2 + 5 * k2 * s2 * s2
            guard abs(derivative) > 1e-9 else { return nil }
            let next = s - f / derivative
            if abs(next - s) < 1e-12 { return next >= 0 ? next : nil }
            s = next
        }
        return abs(s * (1 + k1 * s * s + k2 * s * s * s * s) - rho) < 1e-6 && s >= 0 ? s : nil
    }

    static func map(_ arguments: FilterArguments, inverse: Bool) -> WarpMap {
        let k1 = arguments.number("k1"), k2 = arguments.number("k2"), center = arguments.point("center")
        return WarpMap(fill: arguments.color("color").rgb) { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y), d = p - c
            let halfDiagonal = (size * size).sum().squareRoot() / 2
            let rho = (d * d).sum().squareRoot() / halfDiagonal
            let factor: Double
            if inverse {
                guard rho > 0 else { return p }
                guard let s = inverseRadius(rho, k1: k1, k2: k2) else { return nil }
                factor = s / rho
            } else {
                factor = 1 + k1 * rho * rho + k2 * rho * rho * rho * rho
            }
            let source = c + d * factor
            guard source.x >= 0, source.y >= 0, source.x <= size.x, source.y <= size.y else { return nil }
            return source
        }
    }
}
