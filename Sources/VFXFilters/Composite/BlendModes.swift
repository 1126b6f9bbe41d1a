import Foundation
import VFXCore
import VFXPipeline

// Blend modes: the frame (the backdrop, Cb) combined with a layer (the source, Cs) by the separable and
// non-separable modes of the W3C Compositing and Blending spec, on gamma-encoded R'G'B' in 0…1. The layer is a
// colour (a point-wise `.color` transform, fused with neighbouring colour filters), a vertical gradient between
// two colours, or an image with alpha scaled to the frame. The result is Cb + (B(Cb, Cs) − Cb) · α · opacity, α the
// layer's alpha.

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

    var isSeparable: Bool {
        switch self {
        case .hue, .saturation, .color, .luminosity: false
        default: true
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
        case .colorDodge:
            if b == 0 { return 0 }
            return s >= 1 ? 1 : min(1, b / (1 - s))
        case .colorBurn:
            if b >= 1 { return 1 }
            return s <= 0 ? 0 : 1 - min(1, (1 - b) / s)
        case .darken: return min(b, s)
        case .lighten: return max(b, s)
        case .difference: return abs(b - s)
        case .exclusion: return b + s - 2 * b * s
        default: return s
        }
    }

    // The spec's non-separable helpers (Lum weights .3/.59/.11).
    @inline(__always) static func lum(_ c: SIMD3<Float>) -> Float { 0.3 * c.x + 0.59 * c.y + 0.11 * c.z }
    static func clipColor(_ c: SIMD3<Float>) -> SIMD3<Float> {
        let l = lum(c), n = c.min(), x = c.max()
        var out = c
        if n < 0 { out = l + (out - l) * l / (l - n) }
        if x > 1 { out = l + (out - l) * (1 - l) / (x - l) }
        return out
    }
    static func setLum(_ c: SIMD3<Float>, _ l: Float) -> SIMD3<Float> { clipColor(c + (l - lum(c))) }
    static func sat(_ c: SIMD3<Float>) -> Float { c.max() - c.min() }
    static func setSat(_ c: SIMD3<Float>, _ s: Float) -> SIMD3<Float> {
        let low = c.min(), high = c.max()
        guard high > low else { return .zero }
        return (c - low) * (s / (high - low))
    }

    func apply(backdrop b: SIMD3<Float>, source s: SIMD3<Float>) -> SIMD3<Float> {
        switch self {
        case .hue: return BlendMode.setLum(BlendMode.setSat(s, BlendMode.sat(b)), BlendMode.lum(b))
        case .saturation: return BlendMode.setLum(BlendMode.setSat(b, BlendMode.sat(s)), BlendMode.lum(b))
        case .color: return BlendMode.setLum(s, BlendMode.lum(b))
        case .luminosity: return BlendMode.setLum(b, BlendMode.lum(s))
        default: return SIMD3(BlendMode.channel(self, b.x, s.x), BlendMode.channel(self, b.y, s.y), BlendMode.channel(self, b.z, s.z))
        }
    }
}

/// The layer of a blend filter (a gradient or an image), per pixel, blended over the frame.
struct BlendLayerKernel: PixelKernel {
    let mode: BlendMode
    let opacity: Float
    /// Image layer: straight RGBA bytes at frame size; nil for a gradient.
    let image: FilterImage?
    /// Gradient layer: the colour of each row.
    let rows: [SIMD3<Float>]

    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float> {
        let backdrop = SIMD3(pixel.x, pixel.y, pixel.z)
        let source: SIMD3<Float>, alpha: Float
        if let image {
            let i = (y * image.width + x) * 4
            source = SIMD3(Float(image.pixels[i]), Float(image.pixels[i + 1]), Float(image.pixels[i + 2])) / 255
            alpha = Float(image.pixels[i + 3]) / 255
        } else {
            source = rows[y]
            alpha = 1
        }
        let blended = mode.apply(backdrop: backdrop, source: source).clampedToUnit
        return SIMD4(backdrop + (blended - backdrop) * (alpha * opacity), pixel.w)
    }
}

extension FilterSpec {
    /// The filter `<mode>-blend` for one blend mode.
    static func blend(_ mode: BlendMode) -> FilterSpec {
        let name = mode.rawValue + "-blend"
        let parameters: [ParameterSpec] = [
            ParameterSpec("layer", .choice(["color", "gradient", "image"]), default: .text("color"), "what is blended over the frame"),
            ParameterSpec("color", .color, default: .color(FilterColor(red: 0.5, green: 0.5, blue: 0.5)), "the colour (or the gradient's top)"),
            ParameterSpec("color2", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "the gradient's bottom colour"),
            ParameterSpec("image", .file(extensions: ["png", "jpg", "jpeg"]), default: .text(""), "the image layer (scaled to the frame)"),
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
        let opacity = arguments.float("opacity")
        switch arguments.text("layer") {
        case "color" where mode == .saturation:
            // The backdrop's own chroma direction is rescaled to the layer's saturation: a jump at gray, which a
            // fused 3D table would smear; computed exactly per pixel instead.
            let rows = [SIMD3<Float>](repeating: arguments.color("color").rgb, count: context.format.height)
            let kernel = BlendLayerKernel(mode: mode, opacity: opacity, image: nil, rows: rows)
            return .processor(RGBAProcessor(name: name, kernel: PerPixel(kernel), slices: context.slices))
        case "color":
            let color = arguments.color("color").rgb
            let function: @Sendable (SIMD3<Float>) -> SIMD3<Float> = { b in
                b + (mode.apply(backdrop: b, source: color).clampedToUnit - b) * opacity
            }
            return .color(mode.isSeparable ? .channels(function) : .rgb(function))
        case "gradient":
            let top = arguments.color("color").rgb, bottom = arguments.color("color2").rgb
            let height = context.format.height
            let rows: [SIMD3<Float>] = (0..<height).map { y in top + (bottom - top) * ((Float(y) + 0.5) / Float(height)) }
            let kernel = BlendLayerKernel(mode: mode, opacity: opacity, image: nil, rows: rows)
            return .processor(RGBAProcessor(name: name, kernel: PerPixel(kernel), slices: context.slices))
        default:
            let path = arguments.text("image")
            guard !path.isEmpty else { throw FilterError.missingParameter(filter: name, key: "image") }
            let image = try FilterImage(path: path, filter: name).resized(width: context.format.width, height: context.format.height)
            let kernel = BlendLayerKernel(mode: mode, opacity: opacity, image: image, rows: [])
            return .processor(RGBAProcessor(name: name, kernel: PerPixel(kernel), slices: context.slices))
        }
    }
}
