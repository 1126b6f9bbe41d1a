// Tone effects: colors remapped as a whole (sepia, mono, thermal, x-ray, invert, false color, monochrome, tint).
// Every formula works on gamma-encoded R'G'B' in 0…1; "luma" uses the frame's matrix weights (BT.601/BT.709).

extension FilterSpec {
    /// The classic sepia matrix on gamma-encoded RGB (rows .393 .769 .189 / .349 .686 .168 / .272 .534 .131),
    /// blended with the identity by `intensity`, clipped to 0…1.
    /// - `intensity`: 0…1, default 1 (0 leaves the frame alone).
    /// - Formats: all. Kernel: exact affine kernel on YUV, 3D table on RGB.
    ///
    /// Chain: `sepia:intensity=0.8` · Swift: `FilterDescription.sepia(intensity: 0.8)`
    public static let sepia = FilterSpec(
        name: "sepia", family: .colorEffect, summary: "Classic sepia tone: the .393/.769/.189 matrix on gamma-encoded RGB, blended by intensity.",
        coreImage: "CISepiaTone",
        parameters: [ParameterSpec("intensity", .number(0...1), default: 1, "blend with the original: 0 none, 1 full sepia")],
        example: "sepia:intensity=0.8", swift: "FilterDescription.sepia(intensity: 0.8)",
        ffmpeg: { ToneMatrices.sepia.blended($0.float("intensity")).ffmpegChannelMixer }
    ) { arguments, _ in .color(.affine(ToneMatrices.sepia.blended(arguments.float("intensity")))) }

    /// Gray of the same luma: chroma removed, luma untouched (on YUV frames only the chroma planes are written).
    /// - No parameters. Formats: all.
    ///
    /// Chain: `mono` · Swift: `FilterDescription.mono`
    public static let mono = FilterSpec(
        name: "mono", family: .colorEffect, summary: "Grayscale of the same luma (YUV frames: only chroma is touched).",
        coreImage: "CIPhotoEffectMono", parameters: [], example: "mono", swift: "FilterDescription.mono",
        ffmpeg: { _ in "hue=s=0" }
    ) { _, context in .color(.removingChroma(context.luma)) }

    /// Heat-camera look: luma mapped through black → blue → magenta → red → yellow → white.
    /// - No parameters. Formats: all.
    ///
    /// Chain: `thermal` · Swift: `FilterDescription.thermal`
    public static let thermal = FilterSpec(
        name: "thermal", family: .colorEffect, summary: "Heat-camera palette on luma: black, blue, magenta, red, yellow, white.",
        coreImage: "CIThermal", parameters: [], example: "thermal", swift: "FilterDescription.thermal"
    ) { _, context in
        let weights = context.luma
        return .color(.fromLuma(weights) { Palette.thermal.color(at: $0) })
    }

    /// X-ray film look: inverted luma tinted cold blue (dark bones on bright film become bright on dark).
    /// - No parameters. Formats: all.
    ///
    /// Chain: `x-ray` · Swift: `FilterDescription.xRay`
    public static let xRay = FilterSpec(
        name: "x-ray", family: .colorEffect, summary: "X-ray film look: inverted luma with a cold blue cast.",
        coreImage: "CIXRay", parameters: [], example: "x-ray", swift: "FilterDescription.xRay"
    ) { _, context in
        let weights = context.luma
        return .color(.fromLuma(weights) { Palette.xRay.color(at: 1 - $0) })
    }

    /// Negative: each channel becomes 1 − value.
    /// - No parameters. Formats: all.
    ///
    /// Chain: `invert` · Swift: `FilterDescription.invert`
    public static let invert = FilterSpec(
        name: "invert", family: .colorEffect, summary: "Negative: each channel becomes 1 − value.", coreImage: "CIColorInvert",
        parameters: [], example: "invert", swift: "FilterDescription.invert", ffmpeg: { _ in "negate" }
    ) { _, _ in
        .color(.affine(ColorMatrix(rows: (SIMD3(-1, 0, 0), SIMD3(0, -1, 0), SIMD3(0, 0, -1)), offset: .one)))
    }

    /// Luma mapped linearly from `dark` (at black) to `light` (at white).
    /// - `dark`: color, default #4c0000. `light`: color, default #ffe6cc. Formats: all.
    ///
    /// Chain: `false-color:dark=navy:light=gold` · Swift: `FilterDescription.falseColor(dark: .init(parsing: "navy")!, light: .init(parsing: "gold")!)`
    public static let falseColor = FilterSpec(
        name: "false-color", family: .colorEffect, summary: "Luma mapped linearly from one color (black) to another (white).",
        coreImage: "CIFalseColor",
        parameters: [ParameterSpec("dark", .color, default: .color(FilterColor(red: 0.3, green: 0, blue: 0)), "color of black"),
                     ParameterSpec("light", .color, default: .color(FilterColor(red: 1, green: 0.9, blue: 0.8)), "color of white")],
        example: "false-color:dark=navy:light=gold",
        swift: "FilterDescription.falseColor(dark: .init(parsing: \"navy\")!, light: .init(parsing: \"gold\")!)"
    ) { arguments, context in
        let dark = arguments.color("dark").rgb, light = arguments.color("light").rgb
        let weights = context.luma
        return .color(.affine(ColorMatrix { rgb in dark + (light - dark) * weights.luma(rgb) }))
    }

    /// Monochrome in a color: luma times `color`, blended with the original by `intensity`.
    /// - `color`: default #998066 (a warm brown). `intensity`: 0…1, default 1. Formats: all.
    ///
    /// Chain: `color-monochrome:color=#336699:intensity=0.7` · Swift: `FilterDescription.colorMonochrome(color: FilterColor(red: 0.2, green: 0.4, blue: 0.6), intensity: 0.7)`
    public static let colorMonochrome = FilterSpec(
        name: "color-monochrome", family: .colorEffect, summary: "Luma times a color, blended with the original by intensity.",
        coreImage: "CIColorMonochrome",
        parameters: [ParameterSpec("color", .color, default: .color(FilterColor(red: 0.6, green: 0.5, blue: 0.4)), "the tone"),
                     ParameterSpec("intensity", .number(0...1), default: 1, "blend with the original")],
        example: "color-monochrome:color=#336699:intensity=0.7",
        swift: "FilterDescription.colorMonochrome(color: FilterColor(red: 0.2, green: 0.4, blue: 0.6), intensity: 0.7)"
    ) { arguments, context in
        let color = arguments.color("color").rgb, amount = arguments.float("intensity")
        let weights = context.luma
        return .color(.affine(ColorMatrix { rgb in rgb + (color * weights.luma(rgb) - rgb) * amount }))
    }

    /// Chroma mixed toward the chroma of `color` by `amount`; luma kept (on YUV: Cb and Cr move toward the color's
    /// Cb and Cr, as a red tint does in a YUV shader).
    /// - `color`: default #ff0000. `amount`: 0…1, default 0.5. Formats: all.
    ///
    /// Chain: `tint:color=#ff0000:amount=0.5` · Swift: `FilterDescription.tint(color: FilterColor(red: 1, green: 0, blue: 0), amount: 0.5)`
    public static let tint = FilterSpec(
        name: "tint", family: .colorEffect, summary: "Chroma mixed toward a color's chroma by amount; luma kept.",
        coreImage: nil,
        parameters: [ParameterSpec("color", .color, default: .color(FilterColor(red: 1, green: 0, blue: 0)), "the tint color"),
                     ParameterSpec("amount", .number(0...1), default: 0.5, "0 none, 1 the color's chroma")],
        example: "tint:color=#ff0000:amount=0.5",
        swift: "FilterDescription.tint(color: FilterColor(red: 1, green: 0, blue: 0), amount: 0.5)"
    ) { arguments, context in
        let color = arguments.color("color").rgb, amount = arguments.float("amount")
        let weights = context.luma
        let colorChroma = color - weights.luma(color)
        return .color(.affine(ColorMatrix { rgb in
            let luma = weights.luma(rgb)
            return luma + (rgb - luma) * (1 - amount) + colorChroma * amount
        }))
    }
}

extension FilterDescription {
    public static func sepia(intensity: Double = 1) -> FilterDescription {
        FilterDescription(builtIn: "sepia", ["intensity": .number(intensity)])
    }
    public static let mono = FilterDescription(builtIn: "mono", [:])
    public static let thermal = FilterDescription(builtIn: "thermal", [:])
    public static let xRay = FilterDescription(builtIn: "x-ray", [:])
    public static let invert = FilterDescription(builtIn: "invert", [:])
    public static func falseColor(dark: FilterColor, light: FilterColor) -> FilterDescription {
        FilterDescription(builtIn: "false-color", ["dark": .color(dark), "light": .color(light)])
    }
    public static func colorMonochrome(color: FilterColor, intensity: Double = 1) -> FilterDescription {
        FilterDescription(builtIn: "color-monochrome", ["color": .color(color), "intensity": .number(intensity)])
    }
    public static func tint(color: FilterColor = FilterColor(red: 1, green: 0, blue: 0), amount: Double = 0.5) -> FilterDescription {
        FilterDescription(builtIn: "tint", ["color": .color(color), "amount": .number(amount)])
    }
}

/// Matrices shared by the tone filters.
enum ToneMatrices {
    /// The classic sepia matrix (rows are output R, G, B).
    static let sepia = ColorMatrix(rows: (SIMD3(0.393, 0.769, 0.189), SIMD3(0.349, 0.686, 0.168), SIMD3(0.272, 0.534, 0.131)))
}

/// A piecewise-linear color ramp over 0…1.
struct Palette: Sendable {
    /// Stops in increasing position.
    let stops: [(position: Float, color: SIMD3<Float>)]

    func color(at position: Float) -> SIMD3<Float> {
        let t = position.clamped(0, 1)
        guard let upper = stops.firstIndex(where: { $0.position >= t }) else { return stops[stops.count - 1].color }
        if upper == 0 { return stops[0].color }
        let (p0, c0) = stops[upper - 1], (p1, c1) = stops[upper]
        return c0 + (c1 - c0) * ((t - p0) / (p1 - p0))
    }

    static let thermal = Palette(stops: [
        (0, SIMD3(0, 0, 0)), (0.2, SIMD3(0.1, 0, 0.6)), (0.4, SIMD3(0.75, 0, 0.6)),
        (0.6, SIMD3(1, 0.25, 0)), (0.8, SIMD3(1, 0.85, 0)), (1, SIMD3(1, 1, 1)),
    ])

    static let xRay = Palette(stops: [
        (0, SIMD3(0, 0.02, 0.06)), (0.5, SIMD3(0.35, 0.47, 0.6)), (1, SIMD3(0.88, 0.96, 1)),
    ])
}
