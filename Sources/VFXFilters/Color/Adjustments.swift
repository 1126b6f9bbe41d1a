import VFXCore
import Foundation

// Adjustments: brightness, contrast, saturation, exposure, gamma, hue, vibrance, white balance, temperature.
// Formulas work on gamma-encoded R'G'B' in 0…1 unless they say "linear light" (sRGB transfer function).

extension FilterSpec {
    /// Core Image's color controls: saturation around luma, then brightness added, then contrast around ½.
    /// `out = ((Y + (rgb − Y)·saturation + brightness) − ½)·contrast + ½`.
    /// - `brightness` −1…1 (0), `contrast` 0…4 (1), `saturation` 0…4 (1). Formats: all.
    ///
    /// Chain: `color-controls:brightness=0.05:contrast=1.2:saturation=1.3` · Swift: `FilterDescription.colorControls(brightness: 0.05, contrast: 1.2, saturation: 1.3)`
    public static let colorControls = FilterSpec(
        name: "color-controls", family: .colorAdjustment, summary: "Saturation around luma, brightness added, contrast around mid-gray.",
        coreImage: "CIColorControls",
        parameters: [ParameterSpec("brightness", .number(-1...1), default: 0, "added to every channel"),
                     ParameterSpec("contrast", .number(0...4), default: 1, "gain around 0.5"),
                     ParameterSpec("saturation", .number(0...4), default: 1, "0 gray, 1 unchanged, >1 more color")],
        example: "color-controls:brightness=0.05:contrast=1.2:saturation=1.3",
        swift: "FilterDescription.colorControls(brightness: 0.05, contrast: 1.2, saturation: 1.3)",
        ffmpeg: { "eq=brightness=\($0.number("brightness")):contrast=\($0.number("contrast")):saturation=\($0.number("saturation"))" }
    ) { arguments, context in
        .color(.affine(Adjust.colorControls(brightness: arguments.float("brightness"), contrast: arguments.float("contrast"),
                                            saturation: arguments.float("saturation"), weights: context.luma)))
    }

    /// Luma raised (or lowered) by `amount`, chroma kept: on YUV frames only the luma plane is written (one
    /// 256-entry table).
    /// - `amount` −1…1 (0.1). Formats: all.
    ///
    /// Chain: `brightness:amount=0.1` · Swift: `FilterDescription.brightness(amount: 0.1)`
    public static let brightness = FilterSpec(
        name: "brightness", family: .colorAdjustment, summary: "Luma raised or lowered by amount; chroma kept (YUV: luma plane only).",
        coreImage: nil,
        parameters: [ParameterSpec("amount", .number(-1...1), default: 0.1, "added to luma")],
        example: "brightness:amount=0.1", swift: "FilterDescription.brightness(amount: 0.1)",
        ffmpeg: { "lutyuv=y=val+\(Int(($0.number("amount") * 219).rounded()))" }
    ) { arguments, context in
        let amount = arguments.float("amount")
        return .color(.lumaCurve(context.luma) { $0 + amount })
    }

    /// Exposure in stops, in linear light: `encode(decode(rgb) · 2^ev)` with the sRGB transfer function.
    /// - `ev` −10…10 (0.5) stops. Formats: all.
    ///
    /// Chain: `exposure:ev=1` · Swift: `FilterDescription.exposure(ev: 1)`
    public static let exposure = FilterSpec(
        name: "exposure", family: .colorAdjustment, summary: "Exposure change in stops, applied in linear light.", coreImage: "CIExposureAdjust",
        parameters: [ParameterSpec("ev", .number(-10...10, unit: "EV"), default: 0.5, "stops: +1 doubles the light")],
        example: "exposure:ev=1", swift: "FilterDescription.exposure(ev: 1)"
    ) { arguments, _ in
        let gain = Float(pow(2, arguments.number("ev")))
        return .color(.channels { Transfer.encode(Transfer.decode($0) * gain) })
    }

    /// Power law on each channel: `rgb^power` (power > 1 darkens mid-tones).
    /// - `power` 0.1…10 (1). Formats: all.
    ///
    /// Chain: `gamma:power=0.8` · Swift: `FilterDescription.gamma(power: 0.8)`
    public static let gamma = FilterSpec(
        name: "gamma", family: .colorAdjustment, summary: "Each channel raised to a power (>1 darkens mid-tones).", coreImage: "CIGammaAdjust",
        parameters: [ParameterSpec("power", .number(0.1...10), default: 1, "the exponent")],
        example: "gamma:power=0.8", swift: "FilterDescription.gamma(power: 0.8)",
        ffmpeg: { arguments in
            let inverse = 1 / arguments.number("power")
            return "lutrgb=r=gammaval(\(inverse)):g=gammaval(\(inverse)):b=gammaval(\(inverse))"
        }
    ) { arguments, _ in
        let power = arguments.float("power")
        return .color(.channels { SIMD3(pow($0.x, power), pow($0.y, power), pow($0.z, power)) })
    }

    /// Hue rotation: the chroma vector (Cb, Cr) of the frame's matrix turned by `angle`; luma kept.
    /// - `angle` −180…180° (0). Formats: all.
    ///
    /// Chain: `hue:angle=90` · Swift: `FilterDescription.hue(angle: 90)`
    public static let hue = FilterSpec(
        name: "hue", family: .colorAdjustment, summary: "Hue rotation: chroma turned by an angle around gray; luma kept.", coreImage: "CIHueAdjust",
        parameters: [ParameterSpec("angle", .angle(-180...180), default: 0, "degrees of rotation")],
        example: "hue:angle=90", swift: "FilterDescription.hue(angle: 90)",
        ffmpeg: { "hue=h=\($0.number("angle"))" }
    ) { arguments, context in
        .color(.affine(Adjust.hueRotation(degrees: arguments.float("angle"), weights: context.luma)))
    }

    /// Saturation raised mostly where colors are dull: factor `1 + amount·(1 − (max − min))` around luma.
    /// - `amount` −1…1 (0.5). Formats: all.
    ///
    /// Chain: `vibrance:amount=0.5` · Swift: `FilterDescription.vibrance(amount: 0.5)`
    public static let vibrance = FilterSpec(
        name: "vibrance", family: .colorAdjustment, summary: "Saturation raised mostly in dull colors (skin and saturated colors change less).",
        coreImage: "CIVibrance",
        parameters: [ParameterSpec("amount", .number(-1...1), default: 0.5, "negative mutes dull colors")],
        example: "vibrance:amount=0.5", swift: "FilterDescription.vibrance(amount: 0.5)"
    ) { arguments, context in
        let amount = arguments.float("amount")
        let weights = context.luma
        return .color(.rgb { rgb in
            let saturation = rgb.max() - rgb.min()
            let luma = weights.luma(rgb)
            return luma + (rgb - luma) * (1 + amount * (1 - saturation))
        })
    }

    /// White balance: corrects light of color temperature `temperature` (K) to 6500 K and shifts green–magenta by
    /// `tint`, as per-channel gains in linear light (a lower temperature makes the picture cooler).
    /// - `temperature` 1500…15000 K (6500), `tint` −100…100 (0, positive = magenta). Formats: all.
    ///
    /// Chain: `white-balance:temperature=4500:tint=10` · Swift: `FilterDescription.whiteBalance(temperature: 4500, tint: 10)`
    public static let whiteBalance = FilterSpec(
        name: "white-balance", family: .colorAdjustment, summary: "Corrects a light's color temperature to 6500 K, plus a green–magenta tint.",
        coreImage: "CITemperatureAndTint",
        parameters: [ParameterSpec("temperature", .number(1500...15000, unit: "K"), default: 6500, "the light to correct"),
                     ParameterSpec("tint", .number(-100...100), default: 0, "positive adds magenta, negative green")],
        example: "white-balance:temperature=4500:tint=10",
        swift: "FilterDescription.whiteBalance(temperature: 4500, tint: 10)"
    ) { arguments, _ in
        let gains = Adjust.whiteBalanceGains(kelvin: arguments.float("temperature"), tint: arguments.float("tint"))
        return .color(.channels { Transfer.encode(Transfer.decode($0) * gains) })
    }

    /// Warmer (positive) or cooler (negative): red and blue gains `1 ± 0.15·amount` on gamma-encoded values.
    /// - `amount` −1…1 (0.2). Formats: all.
    ///
    /// Chain: `temperature:amount=0.3` · Swift: `FilterDescription.temperature(amount: 0.3)`
    public static let temperature = FilterSpec(
        name: "temperature", family: .colorAdjustment, summary: "Warmer (positive) or cooler (negative) by red and blue gains.",
        coreImage: nil,
        parameters: [ParameterSpec("amount", .number(-1...1), default: 0.2, "+ warmer, − cooler")],
        example: "temperature:amount=0.3", swift: "FilterDescription.temperature(amount: 0.3)",
        ffmpeg: { Adjust.temperature($0.float("amount")).ffmpegChannelMixer }
    ) { arguments, _ in .color(.affine(Adjust.temperature(arguments.float("amount")))) }
}

extension FilterDescription {
    public static func colorControls(brightness: Double = 0, contrast: Double = 1, saturation: Double = 1) -> FilterDescription {
        FilterDescription(builtIn: "color-controls", ["brightness": .number(brightness), "contrast": .number(contrast),
                                                      "saturation": .number(saturation)])
    }
    public static func brightness(amount: Double) -> FilterDescription {
        FilterDescription(builtIn: "brightness", ["amount": .number(amount)])
    }
    public static func exposure(ev: Double) -> FilterDescription { FilterDescription(builtIn: "exposure", ["ev": .number(ev)]) }
    public static func gamma(power: Double) -> FilterDescription { FilterDescription(builtIn: "gamma", ["power": .number(power)]) }
    public static func hue(angle: Double) -> FilterDescription { FilterDescription(builtIn: "hue", ["angle": .number(angle)]) }
    public static func vibrance(amount: Double) -> FilterDescription {
        FilterDescription(builtIn: "vibrance", ["amount": .number(amount)])
    }
    public static func whiteBalance(temperature: Double, tint: Double = 0) -> FilterDescription {
        FilterDescription(builtIn: "white-balance", ["temperature": .number(temperature), "tint": .number(tint)])
    }
    public static func temperature(amount: Double) -> FilterDescription {
        FilterDescription(builtIn: "temperature", ["amount": .number(amount)])
    }
}

/// The sRGB transfer function (IEC 61966-2-1).
enum Transfer {
    /// Gamma-encoded → linear light.
    static func decode(_ value: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(decode(value.x), decode(value.y), decode(value.z))
    }

    static func decode(_ value: Float) -> Float {
        value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// Linear light → gamma-encoded (values above 1 stay above 1; the compiler clamps).
    static func encode(_ value: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(encode(value.x), encode(value.y), encode(value.z))
    }

    static func encode(_ value: Float) -> Float {
        value <= 0.0031308 ? value * 12.92 : 1.055 * pow(value, 1 / 2.4) - 0.055
    }
}

/// Matrices and gains for the adjustments.
enum Adjust {
    static func colorControls(brightness: Float, contrast: Float, saturation: Float, weights: LumaWeights) -> ColorMatrix {
        ColorMatrix { rgb in
            let luma = weights.luma(rgb)
            return ((luma + (rgb - luma) * saturation + brightness) - 0.5) * contrast + 0.5
        }
    }

    /// Rotation of (Pb, Pr) by `degrees` with `weights`' matrix, luma fixed.
    static func hueRotation(degrees: Float, weights: LumaWeights) -> ColorMatrix {
        let angle = degrees * .pi / 180
        let (c, s) = (cos(angle), sin(angle))
        let redFromPr = 2 * (1 - weights.red), blueFromPb = 2 * (1 - weights.blue)
        return ColorMatrix { rgb in
            let luma = weights.luma(rgb)
            let pb = (rgb.z - luma) / blueFromPb, pr = (rgb.x - luma) / redFromPr
            let (pb2, pr2) = (c * pb - s * pr, s * pb + c * pr)
            let red = luma + redFromPr * pr2, blue = luma + blueFromPb * pb2
            return SIMD3(red, (luma - weights.red * red - weights.blue * blue) / weights.green, blue)
        }
    }

    static func temperature(_ amount: Float) -> ColorMatrix {
        ColorMatrix(rows: (SIMD3(1 + 0.15 * amount, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1 - 0.15 * amount)))
    }

    /// Linear-light gains that turn the white of a black body at `kelvin` into the white of 6500 K, with a
    /// green gain of `1 − tint/200`; normalised so that gray keeps its luminance.
    static func whiteBalanceGains(kelvin: Float, tint: Float) -> SIMD3<Float> {
        var gains = blackBody(6500) / blackBody(kelvin)
        gains.y *= 1 - tint / 200
        return gains / (0.2126 * gains.x + 0.7152 * gains.y + 0.0722 * gains.z)
    }

    /// Linear RGB of a black body at `kelvin` (a fit of the Planckian locus in sRGB primaries), max component 1.
    static func blackBody(_ kelvin: Float) -> SIMD3<Float> {
        let t = kelvin / 100
        let red: Float = t <= 66 ? 1 : min(1, 1.292936 * pow(t - 60, -0.1332047592))
        let green: Float = t <= 66 ? (0.3900816 * log(t) - 0.6318414).clamped(0, 1)
                                   : min(1, 1.1298909 * pow(t - 60, -0.0755148492))
        let blue: Float = t >= 66 ? 1 : (t <= 19 ? 0 : (0.5432068 * log(t - 10) - 1.1962541).clamped(0, 1))
        return pointwiseMax(Transfer.decode(SIMD3(red, green, blue)), SIMD3(repeating: 1e-3))
    }
}
