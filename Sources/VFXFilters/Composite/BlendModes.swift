import Foundation
import VFXCore
import VFXPipeline

// Blend modes: the frame (the backdrop, Cb) combined with a layer (the source, Cs) by the separable and
// non-separable modes of the W3C Compositing and Blending spec, on gamma-encoded R'G'B' in 0…1. The layer is a
// colour, a vertical gradient between two colours, or an image with alpha scaled to the frame. The result is
// Cb + (clamp(B(Cb, Cs)) − Cb) · α · opacity, α the layer's alpha.
//
// Against a colour, the smooth separable modes (multiply, screen, overlay, soft and hard light, exclusion) and
// luminosity are a point-wise `.color` transform, fused with neighbouring colour filters (luminosity through the 3D
// table). The others (see `BlendMode.runsPerPixel`) and
// every gradient or image layer run per pixel in SIMD floats (`BlendKernels.swift`, the layer's share of each formula
// worked out once per row for a colour or gradient): on I420/NV12 each pixel's R'G'B' comes from its luma and its
// block's chroma, unrounded, and each block's output chroma from the mean of its four results (as converting to RGB,
// blending and converting back with box-filtered 4:2:0 chroma); RGBA frames are blended as they are.

/// The blend modes and their formulas.
enum BlendMode: String, CaseIterable, Sendable {
    case multiply, screen, overlay, softLight = "soft-light", hardLight = "hard-light", colorDodge = "color-dodge"
    case colorBurn = "color-burn", darken, lighten, difference, exclusion, hue, saturation, color, luminosity

    var coreImage: String {
        switch self {
        case .multiply: "CIMultiplyBlendMode"
        case .screen: "CIScreenBlendMode"
        case .overlay: "CIOverlayBlendMode"
        case .softLight: "CISoftLightBlendMode"
        case .hardLight: "CIHardLightBlendMode"
        case .colorDodge: "CIColorDodgeBlendMode"
        case .colorBurn: "CIColorBurnBlendMode"
        case .darken: "CIDarkenBlendMode"
        case .lighten: "CILightenBlendMode"
        case .difference: "CIDifferenceBlendMode"
        case .exclusion: "CIExclusionBlendMode"
        case .hue: "CIHueBlendMode"
        case .saturation: "CISaturationBlendMode"
        case .color: "CIColorBlendMode"
        case .luminosity: "CILuminosityBlendMode"
        }
    }

    var summary: String {
        switch self {
        case .multiply: "Cb·Cs: darkens."
        case .screen: "Cb + Cs − Cb·Cs: lightens."
        case .overlay: "Multiply or screen by the backdrop: hard-light with the layers swapped."
        case .softLight: "Darkens or lightens by the layer, softly (the W3C soft-light curve)."
        case .hardLight: "Multiply where the layer is dark (2·Cs), screen where it is light (2·Cs − 1)."
        case .colorDodge: "Brightens the backdrop toward the layer: Cb / (1 − Cs), clamped."
        case .colorBurn: "Darkens the backdrop toward the layer: 1 − (1 − Cb) / Cs, clamped."
        case .darken: "The darker of the two, per channel."
        case .lighten: "The lighter of the two, per channel."
        case .difference: "|Cb − Cs| per channel."
        case .exclusion: "Cb + Cs − 2·Cb·Cs: a softer difference."
        case .hue: "The layer's hue with the backdrop's saturation and luminosity."
        case .saturation: "The layer's saturation with the backdrop's hue and luminosity."
        case .color: "The layer's hue and saturation with the backdrop's luminosity."
        case .luminosity: "The layer's luminosity with the backdrop's hue and saturation."
        }
    }

    /// Against a colour, the modes that run per pixel (`BlendProcessor`) rather than as a fused colour transform:
    /// darken, lighten and difference (a corner where Cb = Cs, which the fixed-point curves cannot follow: fused, they
    /// took the float curve-table kernel), dodge and burn (steps where the layer's channel is 0 or 1), saturation (a
    /// jump at gray that the fused 3D table smears), color and hue (they mix the channels: fused, they need the 3D
    /// table, within 6 codes; per pixel, with the layer's terms once per row, they are exact to the code and as fast or
    /// faster). Luminosity stays fused through the 3D table: its per-pixel formula (two divisions) costs more. The smooth separable modes are fused fixed-point curves (1.8 ms per 1080p frame), fused with neighbouring
    /// colour filters.
    var runsPerPixel: Bool {
        switch self {
        case .colorDodge, .colorBurn, .darken, .lighten, .difference, .hue, .saturation, .color: true
        default: false
        }
    }

    /// FFmpeg's `blend` mode of the same definition, where there is one.
    var ffmpegMode: String? {
        switch self {
        case .multiply, .screen, .overlay, .darken, .lighten, .difference, .exclusion: rawValue
        case .hardLight: "hardlight"
        default: nil
        }
    }

    /// One channel of a fused (smooth separable) mode; the per-pixel modes are written on vectors (`BlendKernels.swift`).
    @inline(__always) static func channel(_ mode: BlendMode, _ b: Float, _ s: Float) -> Float {
        switch mode {
        case .multiply: return b * s
        case .screen: return b + s - b * s
        case .overlay: return channel(.hardLight, s, b)
        case .hardLight: return s <= 0.5 ? b * 2 * s : channel(.screen, b, 2 * s - 1)
        case .softLight:
            if s <= 0.5 { return b - (1 - 2 * s) * b * (1 - b) }
            let d = b <= 0.25 ? ((16 * b - 12) * b + 4) * b : b.squareRoot()
            return b + (2 * s - 1) * (d - b)
        case .exclusion: return b + s - 2 * b * s
        default: preconditionFailure("\(mode) runs per pixel")
        }
    }

    /// A fused mode channel by channel.
    func apply(backdrop b: SIMD3<Float>, source s: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(BlendMode.channel(self, b.x, s.x), BlendMode.channel(self, b.y, s.y), BlendMode.channel(self, b.z, s.z))
    }
}

extension FilterSpec {
    /// The filter `<mode>-blend` for one blend mode.
    static func blend(_ mode: BlendMode) -> FilterSpec {
        let name = mode.rawValue + "-blend"
        let parameters: [ParameterSpec] = [
            ParameterSpec("layer", .choice(["color", "gradient", "image"]), default: .text("color"), "what is blended over the frame"),
            ParameterSpec("color", .color, default: .color(FilterColor(red: 0.5, green: 0.5, blue: 0.5)), "the colour (or the gradient's top)",
                          only: .when("layer", is: "color", "gradient")),
            ParameterSpec("color2", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "the gradient's bottom colour",
                          only: .when("layer", is: "gradient")),
            ParameterSpec("image", .file(extensions: ["png", "jpg", "jpeg"]), default: .text(""), "the image layer (scaled to the frame)",
                          only: .when("layer", is: "image").naming("an image")),
            ParameterSpec("opacity", .number(0...1), default: 1, "how much of the blend is applied"),
        ]
        var ffmpeg: (@Sendable (FilterArguments) -> String?)?
        if let ffmpegMode = mode.ffmpegMode {
            ffmpeg = { arguments in BlendStage.ffmpegGraph(arguments, mode: ffmpegMode) }
        }
        return FilterSpec(
            name: name, family: .composite, summary: "Blend mode \(mode.rawValue) with a colour, gradient or image: " + mode.summary,
            coreImage: mode.coreImage, parameters: parameters,
            example: "\(name):color=#ff8800", swift: "try FilterDescription(\"\(name)\", [\"color\": .color(FilterColor(parsing: \"#ff8800\")!)])",
            ffmpeg: ffmpeg
        ) { arguments, context in try BlendStage.make(mode, name: name, arguments, context) }
    }

    // The fifteen blend filters (`multiply-blend` … `luminosity-blend`); formulas in `BlendMode`.
    // Chain: `soft-light-blend:layer=gradient:color=#ffcc88:color2=#224488`.
    public static let multiplyBlend = blend(.multiply)
    public static let screenBlend = blend(.screen)
    public static let overlayBlend = blend(.overlay)
    public static let softLightBlend = blend(.softLight)
    public static let hardLightBlend = blend(.hardLight)
    public static let colorDodgeBlend = blend(.colorDodge)
    public static let colorBurnBlend = blend(.colorBurn)
    public static let darkenBlend = blend(.darken)
    public static let lightenBlend = blend(.lighten)
    public static let differenceBlend = blend(.difference)
    public static let exclusionBlend = blend(.exclusion)
    public static let hueBlend = blend(.hue)
    public static let saturationBlend = blend(.saturation)
    public static let colorBlend = blend(.color)
    public static let luminosityBlend = blend(.luminosity)
}

/// How a blend filter becomes a stage.
enum BlendStage {
    static func ffmpegGraph(_ arguments: FilterArguments, mode: String) -> String? {
        guard arguments.text("layer") == "color", arguments.number("opacity") == 1 else { return nil }
        let color = arguments.color("color").description.dropFirst()
        return "format=gbrp,split[a][b];[b]drawbox=c=0x\(color):t=fill[c];[a][c]blend=all_mode=\(mode)"
    }

    static func make(_ mode: BlendMode, name: String, _ arguments: FilterArguments, _ context: FilterContext) throws -> FilterStage {
        // A colour, colour2 or image the layer does not use is refused when the chain is parsed (the table's conditions).
        let opacity = arguments.float("opacity")
        let layer: BlendRows.Layer
        switch arguments.text("layer") {
        case "color" where !mode.runsPerPixel:
            let color = arguments.color("color").rgb
            if mode == .luminosity {
                // The vector formula on one colour, tabulated by the fused run's 3D table.
                let source = PixelVectors(splat: color)
                return .color(.rgb { b in
                    let v = LuminosityBlend.blend(PixelVectors(splat: b), source)
                    return b + (SIMD3(v.r[0], v.g[0], v.b[0]).clampedToUnit - b) * opacity
                })
            }
            return .color(.channels { b in b + (mode.apply(backdrop: b, source: color).clampedToUnit - b) * opacity })
        case "color":
            layer = .color(arguments.color("color").rgb)
        case "gradient":
            let top = arguments.color("color").rgb, bottom = arguments.color("color2").rgb
            let height = context.format.height
            layer = .rows((0..<height).map { y in top + (bottom - top) * ((Float(y) + 0.5) / Float(height)) })
        default:
            let path = arguments.text("image")
            guard !path.isEmpty else { throw FilterError.missingParameter(filter: name, key: "image") }
            layer = .image(try FilterImage(path: path, filter: name).resized(width: context.format.width, height: context.format.height))
        }
        return .processor(BlendProcessor(name: name, rows: BlendRows(mode: mode, opacity: opacity, layer: layer), slices: context.slices))
    }
}
