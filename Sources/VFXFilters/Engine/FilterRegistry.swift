/// Every built-in filter, listed once. Parsing, `vfx filters` and the docs read this list.
///
/// ```swift
/// FilterRegistry.spec(named: "sepia")?.summary
/// FilterRegistry.builtIns.map(\.name)
/// ```
public enum FilterRegistry {
    public static let builtIns: [FilterSpec] = [
        // Tone effects (Color/ToneEffects.swift)
        .sepia, .mono, .thermal, .xRay, .invert, .falseColor, .colorMonochrome, .tint,
        // Photo effects (Color/PhotoEffects.swift)
        .photoChrome, .photoFade, .photoInstant, .photoNoir, .photoProcess, .photoTonal, .photoTransfer,
        // Adjustments (Color/Adjustments.swift)
        .colorControls, .brightness, .exposure, .gamma, .hue, .vibrance, .whiteBalance, .temperature,
        // Levels and curves (Color/LevelsAndCurves.swift)
        .posterize, .threshold, .solarize, .levels, .lumaGamma, .colorClamp,
        // Matrices (Color/Matrices.swift)
        .colorMatrix, .channelSwap,
        // Lookup tables (Color/CubeLUT.swift)
        .lut,
        // Spatial filters (Spatial/*.swift)
        .gaussianBlur, .boxBlur, .motionBlur, .zoomBlur, .unsharpMask, .bloom, .gloom, .sharpen, .edges, .emboss, .median, .vignette, .pixellate,
        // Geometry (Geometry/*.swift)
        .crop, .scale, .flip, .rotate,
        // Tone curves and colour reduction (Color/ToneCurves.swift, Color/ColorReduction.swift)
        .highlightShadow, .toneCurve, .colorPolynomial, .srgbToLinear, .linearToSRGB, .colorMap,
        .palettize, .colorThreshold, .dither, .maximumComponent, .minimumComponent, .maskToAlpha,
        // Distortions (Distortion/Distortions.swift)
        .bumpDistortion, .pinchDistortion, .twirlDistortion, .vortexDistortion, .holeDistortion, .circleSplashDistortion,
        .glass, .lensDistortion, .lensCorrection,
        // Tiles and mirrors (Distortion/TileEffects.swift)
        .kaleidoscope, .triangleKaleidoscope, .mirror, .tile, .fourfoldReflectedTile,
        // Cells (Stylize/Cells.swift)
        .crystallize, .pointillize, .hexagonalPixellate,
        // Blend modes (Composite/BlendModes.swift)
        .multiplyBlend, .screenBlend, .overlayBlend, .softLightBlend, .hardLightBlend, .colorDodgeBlend, .colorBurnBlend,
        .darkenBlend, .lightenBlend, .differenceBlend, .exclusionBlend, .hueBlend, .saturationBlend, .colorBlend, .luminosityBlend,
        // Halftone screens and ink effects (Stylize/Halftone.swift, Stylize/InkEffects.swift)
        .dotScreen, .lineScreen, .circularScreen, .hatchedScreen, .edgeWork, .lineOverlay, .comicEffect, .cartoon,
        // Blurs (Spatial/DiscBlur.swift, Spatial/VariableBlur.swift, Spatial/NoiseReduction.swift)
        .discBlur, .tiltShift, .maskedVariableBlur, .noiseReduction,
        // Overlays (Composite/Overlay.swift, Composite/Text.swift)
        .overlay, .text,
        // Generators (Generators/Generators.swift)
        .solidColor, .checkerboard, .linearGradient, .radialGradient,
    ]

    private static let byName: [String: FilterSpec] = Dictionary(builtIns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// The built-in named `name` (case-insensitive), or nil.
    public static func spec(named name: String) -> FilterSpec? { byName[name.lowercased()] }

    /// Names close to `name` (for "did you mean").
    static func suggestions(for name: String) -> [String] {
        let lower = name.lowercased()
        return builtIns.map(\.name).filter { candidate in
            candidate.hasPrefix(lower) || lower.hasPrefix(candidate) || editDistance(candidate, lower) <= 2
        }.prefix(3).map { $0 }
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
