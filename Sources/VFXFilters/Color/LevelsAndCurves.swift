import VFXCore
import Foundation

// Levels and curves: posterize, threshold, solarize, levels, luma gamma, color clamp.

extension FilterSpec {
    /// Each channel quantized to `levels` evenly spaced values: `round(v·(levels−1))/(levels−1)`.
    /// - `levels` 2…256 (6). Formats: all (RGB: exact tables; I420/NV12: in 16-bit lanes, a multiply and a rounding
    ///   shift per channel).
    /// - FFmpeg: `lutrgb` with the same rounding on each byte.
    ///
    /// Chain: `posterize:levels=4` · Swift: `FilterDescription.posterize(levels: 4)`
    public static let posterize = FilterSpec(
        name: "posterize", family: .colorEffect, summary: "Each channel quantized to a number of levels.", coreImage: "CIColorPosterize",
        parameters: [ParameterSpec("levels", .integer(2...256), default: 6, "values per channel")],
        example: "posterize:levels=4", swift: "FilterDescription.posterize(levels: 4)",
        ffmpeg: { arguments in
            // The level of each byte, back to a byte; lutrgb truncates, so the half is added.
            let steps = arguments.integer("levels") - 1
            let expression = "round(val*\(steps)/255)*255/\(steps)+0.5"
            return "lutrgb=r=\(expression):g=\(expression):b=\(expression)"
        }
    ) { arguments, _ in
        .color(.quantized(levels: arguments.integer("levels")))
    }

    /// Black or white by luma: white where `Y ≥ threshold`.
    /// - `threshold` 0…1 (0.5). Formats: all (YUV: luma table plus neutral chroma).
    ///
    /// Chain: `threshold:threshold=0.4` · Swift: `FilterDescription.threshold(0.4)`
    public static let threshold = FilterSpec(
        name: "threshold", family: .colorEffect, summary: "Black or white by luma.", coreImage: "CIColorThreshold",
        parameters: [ParameterSpec("threshold", .number(0...1), default: 0.5, "luma from which a pixel is white")],
        example: "threshold:threshold=0.4", swift: "FilterDescription.threshold(0.4)"
    ) { arguments, context in
        let level = arguments.float("threshold")
        return .color(.removingChroma(context.luma) { $0 >= level ? 1 : 0 })
    }

    /// Channels above `threshold` inverted (`1 − v`), as film exposed to light while developing.
    /// - `threshold` 0…1 (0.5). Formats: all (RGB: exact tables; I420/NV12: in 16-bit lanes, a compare and a select
    ///   per channel).
    /// - FFmpeg: `lutrgb` inverting the bytes above the last one the threshold keeps.
    ///
    /// Chain: `solarize:threshold=0.6` · Swift: `FilterDescription.solarize(threshold: 0.6)`
    public static let solarize = FilterSpec(
        name: "solarize", family: .colorEffect, summary: "Channels above a threshold inverted.", coreImage: nil,
        parameters: [ParameterSpec("threshold", .number(0...1), default: 0.5, "channel value from which it inverts")],
        example: "solarize:threshold=0.6", swift: "FilterDescription.solarize(threshold: 0.6)",
        ffmpeg: { arguments in
            // The last byte kept, by the same comparison in Float the filter makes (code/255 > threshold inverts).
            let threshold = arguments.float("threshold")
            let kept = (0...255).last { Float($0) / 255 <= threshold } ?? -1
            let expression = "'if(gt(val,\(kept)),255-val,val)'"
            return "lutrgb=r=\(expression):g=\(expression):b=\(expression)"
        }
    ) { arguments, _ in
        .color(.invertedAbove(arguments.float("threshold")))
    }

    /// Input levels: `((v − black)/(white − black))^(1/gamma)` on each channel.
    /// - `black` 0…1 (0), `white` 0…1 (1, above black), `gamma` 0.1…10 (1, >1 brightens mid-tones). Formats: all.
    ///
    /// Chain: `levels:black=0.05:white=0.9:gamma=1.2` · Swift: `FilterDescription.levels(black: 0.05, white: 0.9, gamma: 1.2)`
    public static let levels = FilterSpec(
        name: "levels", family: .colorAdjustment, summary: "Input black and white points and a mid-tone gamma on each channel.", coreImage: nil,
        parameters: [ParameterSpec("black", .number(0...1), default: 0, "input value that becomes black"),
                     ParameterSpec("white", .number(0...1), default: 1, "input value that becomes white"),
                     ParameterSpec("gamma", .number(0.1...10), default: 1, "mid-tone gamma (>1 brightens)")],
        example: "levels:black=0.05:white=0.9:gamma=1.2", swift: "FilterDescription.levels(black: 0.05, white: 0.9, gamma: 1.2)",
        ffmpeg: { arguments in
            let (black, white) = (arguments.number("black"), arguments.number("white"))
            return "colorlevels=rimin=\(black):gimin=\(black):bimin=\(black):rimax=\(white):gimax=\(white):bimax=\(white)"
        }
    ) { arguments, _ in
        let black = arguments.float("black"), white = arguments.float("white"), exponent = 1 / arguments.float("gamma")
        guard white > black else {
            throw FilterError.badValue(filter: "levels", key: "white", value: ParameterValue.format(Double(white)),
                                       expected: "above black (\(ParameterValue.format(Double(black))))")
        }
        return .color(.channels { rgb in
            let t = ((rgb - black) / (white - black)).clampedToUnit
            return SIMD3(pow(t.x, exponent), pow(t.y, exponent), pow(t.z, exponent))
        })
    }

    /// Luma raised to a power, chroma kept: on YUV frames a 256-entry table on the luma plane only.
    /// - `power` 0.1…10 (1, >1 darkens). Formats: all.
    ///
    /// Chain: `luma-gamma:power=0.8` · Swift: `FilterDescription.lumaGamma(power: 0.8)`
    public static let lumaGamma = FilterSpec(
        name: "luma-gamma", family: .colorAdjustment, summary: "Luma raised to a power, chroma kept (YUV: luma plane only).", coreImage: nil,
        parameters: [ParameterSpec("power", .number(0.1...10), default: 1, "the exponent (>1 darkens)")],
        example: "luma-gamma:power=0.8", swift: "FilterDescription.lumaGamma(power: 0.8)",
        ffmpeg: { "lutyuv=y=gammaval(\(1 / $0.number("power")))" }
    ) { arguments, context in
        let power = arguments.float("power")
        return .color(.lumaCurve(context.luma) { pow($0, power) })
    }

    /// Each channel clamped between the channels of `low` and `high`.
    /// - `low` color (#000000), `high` color (#ffffff). Formats: all.
    ///
    /// Chain: `color-clamp:low=#202020:high=#e0e0e0` · Swift: `FilterDescription.colorClamp(low: FilterColor(red: 0.1, green: 0.1, blue: 0.1), high: FilterColor(red: 0.9, green: 0.9, blue: 0.9))`
    public static let colorClamp = FilterSpec(
        name: "color-clamp", family: .colorAdjustment, summary: "Each channel clamped between two colors' channels.", coreImage: "CIColorClamp",
        parameters: [ParameterSpec("low", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "lowest value per channel"),
                     ParameterSpec("high", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "highest value per channel")],
        example: "color-clamp:low=#202020:high=#e0e0e0",
        swift: "FilterDescription.colorClamp(low: FilterColor(red: 0.1, green: 0.1, blue: 0.1), high: FilterColor(red: 0.9, green: 0.9, blue: 0.9))"
    ) { arguments, _ in
        let low = arguments.color("low").rgb, high = arguments.color("high").rgb
        return .color(.channels { pointwiseMin(pointwiseMax($0, low), high) })
    }
}

extension FilterDescription {
    public static func posterize(levels: Int) -> FilterDescription {
        FilterDescription(builtIn: "posterize", ["levels": .integer(levels)])
    }
    public static func threshold(_ level: Double) -> FilterDescription {
        FilterDescription(builtIn: "threshold", ["threshold": .number(level)])
    }
    public static func solarize(threshold: Double) -> FilterDescription {
        FilterDescription(builtIn: "solarize", ["threshold": .number(threshold)])
    }
    public static func levels(black: Double = 0, white: Double = 1, gamma: Double = 1) -> FilterDescription {
        FilterDescription(builtIn: "levels", ["black": .number(black), "white": .number(white), "gamma": .number(gamma)])
    }
    public static func lumaGamma(power: Double) -> FilterDescription {
        FilterDescription(builtIn: "luma-gamma", ["power": .number(power)])
    }
    public static func colorClamp(low: FilterColor, high: FilterColor) -> FilterDescription {
        FilterDescription(builtIn: "color-clamp", ["low": .color(low), "high": .color(high)])
    }
}
