import Foundation
import VFXCore

/// The filter catalog: the built-in filters, listed once, plus those other modules register (vision effects,
/// temporal effects…). Parsing, `vfx filters` and the docs read `all`, so a registered filter works everywhere
/// a built-in does without `VFXFilters` knowing of it.
///
/// ```swift
/// FilterRegistry.spec(named: "sepia")?.summary
/// FilterRegistry.register([.temporalDenoise, .interpolate])   // from another module, once at startup
/// FilterRegistry.all.map(\.name)
/// ```
public enum FilterRegistry: FilterCatalog {
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

    /// Every filter: the built-ins, then the registered ones in the order they were registered.
    public static var all: [FilterSpec] { catalog.withLock { $0.specs } }

    /// Adds filters from another module. Registering a name again is harmless (the first spec is kept), so a
    /// module's `register()` may be called more than once.
    public static func register(_ specs: [FilterSpec]) {
        catalog.withLock { catalog in
            for spec in specs where catalog.byName[spec.name] == nil {
                catalog.specs.append(spec)
                catalog.byName[spec.name] = spec
            }
        }
    }

    /// The filter named `name` (case-insensitive), or nil.
    public static func spec(named name: String) -> FilterSpec? { catalog.withLock { $0.byName[name.lowercased()] } }

    public static func unknownFilter(_ name: String) -> any Error { FilterError.unknownFilter(name) }

    public static func unknownParameter(filter: String, key: String) -> any Error { FilterError.unknownParameter(filter: filter, key: key) }

    /// The catalog behind a lock: registration may happen on any thread.
    private struct Catalog {
        var specs: [FilterSpec]
        var byName: [String: FilterSpec]
    }

    private static let catalog = Locked(Catalog(specs: builtIns, byName: Dictionary(builtIns.map { ($0.name, $0) },
                                                                                   uniquingKeysWith: { first, _ in first })))

    /// Names close to `name` (for "did you mean").
    static func suggestions(for name: String) -> [String] {
        NameSuggestions.near(name, in: all.map(\.name))
    }
}
