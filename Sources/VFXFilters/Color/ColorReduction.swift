import Foundation
import VFXCore
import VFXPipeline

// Colour reduction and components: palettes, per-channel thresholds, ordered dither, the largest or smallest
// component, and luma turned into alpha. Step functions (palette, threshold, dither) run exactly per pixel on RGBA
// (`RGBAProcessor`); the smooth ones are point-wise `.color` transforms and fuse with their neighbours.

/// The palettes `palettize` knows.
enum Palettes {
    static let all: [String: [UInt32]] = [
        "gameboy": [0x0f380f, 0x306230, 0x8bac0f, 0x9bbc0f],
        "cga": [0x000000, 0x55ffff, 0xff55ff, 0xffffff],
        "gray4": [0x000000, 0x555555, 0xaaaaaa, 0xffffff],
        "rgb8": [0x000000, 0xff0000, 0x00ff00, 0x0000ff, 0xffff00, 0xff00ff, 0x00ffff, 0xffffff],
        "pico8": [0x000000, 0x1d2b53, 0x7e2553, 0x008751, 0xab5236, 0x5f574f, 0xc2c3c7, 0xfff1e8,
                  0xff004d, 0xffa300, 0xffec27, 0x00e436, 0x29adff, 0x83769c, 0xff77a8, 0xffccaa],
    ]

    static func colors(_ name: String) -> [SIMD3<Float>] {
        (all[name] ?? all["gray4", default: []]).map { code in
            SIMD3(Float((code >> 16) & 0xff), Float((code >> 8) & 0xff), Float(code & 0xff)) / 255
        }
    }
}

/// Each pixel becomes the nearest palette colour (squared distance in R'G'B'; the first on a tie).
struct PaletteKernel: PixelKernel {
    let colors: [SIMD3<Float>]

    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float> {
        let rgb = SIMD3(pixel.x, pixel.y, pixel.z)
        var best = colors[0], distance = Float.infinity
        for color in colors {
            let d = color - rgb
            let squared = (d * d).sum()
            if squared < distance { (best, distance) = (color, squared) }
        }
        return SIMD4(best, pixel.w)
    }
}

/// Each channel becomes 1 at or above the threshold, else 0.
struct ThresholdKernel: PixelKernel {
    let threshold: Float

    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float> {
        let rgb = SIMD3(pixel.x, pixel.y, pixel.z)
        return SIMD4(SIMD3<Float>(repeating: 0).replacing(with: 1, where: rgb .>= threshold - 1e-6), pixel.w)
    }
}

/// Ordered dither with the 8×8 Bayer matrix to `levels` values per channel.
struct DitherKernel: PixelKernel {
    let steps: Float
    /// (B + ½)/64 for each position (x mod 8, y mod 8), B the Bayer index 0…63.
    let thresholds: [Float]

    init(levels: Int) {
        steps = Float(levels - 1)
        var matrix = [0]
        var size = 1
        while size < 8 {
            // M(2n)[y][x] = 4·M(n)[y mod n][x mod n] + M(2)[y / n][x / n], M(2) = [[0, 2], [3, 1]].
            let two = [[0, 2], [3, 1]]
            var next = [Int](repeating: 0, count: 4 * size * size)
            for y in 0..<(2 * size) {
                for x in 0..<(2 * size) {
                    next[y * 2 * size + x] = 4 * matrix[(y % size) * size + x % size] + two[y / size][x / size]
                }
            }
            matrix = next
            size *= 2
        }
        thresholds = matrix.map { (Float($0) + 0.5) / 64 }
    }

    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float> {
        let t = thresholds[(y & 7) * 8 + (x & 7)]
        let rgb = (SIMD3(pixel.x, pixel.y, pixel.z) * steps + t).rounded(.down) / steps
        return SIMD4(rgb.clampedToUnit, pixel.w)
    }
}

/// White with alpha = luma.
struct MaskToAlphaKernel: PixelKernel {
    let weights: LumaWeights

    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float> {
        SIMD4(1, 1, 1, weights.luma(SIMD3(pixel.x, pixel.y, pixel.z)))
    }
}

extension FilterSpec {
    /// Each pixel becomes the nearest colour of a palette (squared R'G'B' distance).
    /// - `palette` one of cga|gameboy|gray4|pico8|rgb8 (default pico8). Formats: all (gray frames come out RGBA).
    /// - Chain: `palettize:palette=gameboy` · Swift: `try FilterDescription("palettize", ["palette": .text("gameboy")])`
    public static let palettize = FilterSpec(
        name: "palettize", family: .colorEffect, summary: "Each pixel becomes the nearest colour of a fixed palette.",
        coreImage: "CIPalettize",
        parameters: [ParameterSpec("palette", .choice(Palettes.all.keys.sorted()), default: .text("pico8"), "the palette")],
        example: "palettize:palette=gameboy", swift: "try FilterDescription(\"palettize\", [\"palette\": .text(\"gameboy\")])"
    ) { arguments, context in
        .processor(RGBAProcessor(name: "palettize", kernel: PerPixel(PaletteKernel(colors: Palettes.colors(arguments.text("palette")))),
                                 slices: context.slices))
    }

    /// Each channel becomes 1 at or above `threshold`, else 0 (eight colours).
    /// - `threshold` 0…1 (default 0.5). Formats: all (gray frames come out RGBA).
    /// - Chain: `color-threshold:threshold=0.4` · Swift: `try FilterDescription("color-threshold", ["threshold": .number(0.4)])`
    public static let colorThreshold = FilterSpec(
        name: "color-threshold", family: .colorEffect, summary: "Each channel set to 0 or 1 at a threshold.",
        coreImage: "CIColorThreshold",
        parameters: [ParameterSpec("threshold", .number(0...1), default: 0.5, "channels at or above it become 1")],
        example: "color-threshold:threshold=0.4", swift: "try FilterDescription(\"color-threshold\", [\"threshold\": .number(0.4)])"
    ) { arguments, context in
        .processor(RGBAProcessor(name: "color-threshold", kernel: PerPixel(ThresholdKernel(threshold: arguments.float("threshold"))),
                                 slices: context.slices))
    }

    /// Ordered dither: each channel v → ⌊v·(L−1) + (B + ½)/64⌋ / (L−1), B the 8×8 Bayer index of the pixel's
    /// position (x mod 8, y mod 8).
    /// - `levels` L 2…64 (default 4). Formats: all (gray frames come out RGBA).
    /// - Chain: `dither:levels=2` · Swift: `try FilterDescription("dither", ["levels": .integer(2)])`
    public static let dither = FilterSpec(
        name: "dither", family: .colorEffect, summary: "Ordered (Bayer 8×8) dither to a few levels per channel.",
        coreImage: "CIDither",
        parameters: [ParameterSpec("levels", .integer(2...64), default: 4, "values per channel")],
        example: "dither:levels=2", swift: "try FilterDescription(\"dither\", [\"levels\": .integer(2)])"
    ) { arguments, context in
        .processor(RGBAProcessor(name: "dither", kernel: PerPixel(DitherKernel(levels: arguments.integer("levels"))), slices: context.slices))
    }

    /// Gray of the largest of R', G', B'.
    /// - No parameters. Formats: all. Chain: `maximum-component` · Swift: `try FilterDescription("maximum-component")`
    public static let maximumComponent = FilterSpec(
        name: "maximum-component", family: .colorEffect, summary: "Gray of the largest of R, G and B.",
        coreImage: "CIMaximumComponent", parameters: [], example: "maximum-component", swift: "try FilterDescription(\"maximum-component\")"
    ) { _, _ in .color(.rgb { SIMD3(repeating: $0.max()) }) }

    /// Gray of the smallest of R', G', B'.
    /// - No parameters. Formats: all. Chain: `minimum-component` · Swift: `try FilterDescription("minimum-component")`
    public static let minimumComponent = FilterSpec(
        name: "minimum-component", family: .colorEffect, summary: "Gray of the smallest of R, G and B.",
        coreImage: "CIMinimumComponent", parameters: [], example: "minimum-component", swift: "try FilterDescription(\"minimum-component\")"
    ) { _, _ in .color(.rgb { SIMD3(repeating: $0.min()) }) }

    /// A mask made from the picture: white whose alpha is the pixel's luma (for compositing).
    /// - No parameters. Formats: RGBA, BGRA (the formats with alpha).
    /// - Chain: `mask-to-alpha` · Swift: `try FilterDescription("mask-to-alpha")`
    public static let maskToAlpha = FilterSpec(
        name: "mask-to-alpha", family: .colorEffect, summary: "White with alpha equal to the pixel's luma.",
        coreImage: "CIMaskToAlpha", parameters: [], pixelFormats: [.rgba, .bgra],
        example: "mask-to-alpha", swift: "try FilterDescription(\"mask-to-alpha\")"
    ) { _, context in
        .processor(RGBAProcessor(name: "mask-to-alpha", kernel: PerPixel(MaskToAlphaKernel(weights: context.luma)), slices: context.slices))
    }
}
