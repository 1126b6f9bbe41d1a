import Foundation
import VFXCore
import VFXPipeline

// Ink effects: looks drawn from the picture's edges. All use the edge strength
// e = √(gx² + gy²) / 4 of the Sobel responses gx, gy on luma Y' (0…1, the frame's weights; edges repeat the border),
// computed per pixel on RGBA.

/// What an ink effect does with a pixel's colour and its edge strength.
enum InkStyle: Sendable {
    /// Black where e ≥ threshold, white elsewhere.
    case edgeWork(threshold: Float)
    /// The colour darkened by ink: rgb · (1 − clamp((e − threshold) · contrast)).
    case lineOverlay(threshold: Float, contrast: Float)
    /// Posterized colour (levels per channel, rounded) under hard black lines where e ≥ threshold.
    case comic(levels: Float, threshold: Float)
    /// Posterized colour darkened by soft ink: posterize(rgb) · (1 − clamp((e − threshold) · contrast)).
    case cartoon(levels: Float, threshold: Float, contrast: Float)
}

struct InkKernel: RGBARowKernel {
    let style: InkStyle
    let weights: LumaWeights
    var readsOnlyItsPixel: Bool { false }

    @inline(__always) private func luma(_ row: UnsafeMutablePointer<UInt8>, _ x: Int) -> Float {
        weights.luma(SIMD3(Float(row[4 * x]), Float(row[4 * x + 1]), Float(row[4 * x + 2]))) * (1 / 255)
    }

    @inline(__always) private func posterize(_ rgb: SIMD3<Float>, _ levels: Float) -> SIMD3<Float> {
        (rgb * (levels - 1)).rounded(.toNearestOrAwayFromZero) / (levels - 1)
    }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let above = source.row(max(y - 1, 0)), here = source.row(y), below = source.row(min(y + 1, height - 1))
        let output = target.row(y)
        for x in 0..<width {
            let (l, r) = (max(x - 1, 0), min(x + 1, width - 1))
            let (nw, n, ne) = (luma(above, l), luma(above, x), luma(above, r))
            let (w, e) = (luma(here, l), luma(here, r))
            let (sw, s, se) = (luma(below, l), luma(below, x), luma(below, r))
            let gx = (ne + 2 * e + se) - (nw + 2 * w + sw), gy = (sw + 2 * s + se) - (nw + 2 * n + ne)
            let edge = (gx * gx + gy * gy).squareRoot() / 4
            let rgb = SIMD3(Float(here[4 * x]), Float(here[4 * x + 1]), Float(here[4 * x + 2])) * (1 / 255)
            let out: SIMD3<Float>
            switch style {
            case .edgeWork(let threshold):
                out = SIMD3(repeating: edge >= threshold ? 0 : 1)
            case .lineOverlay(let threshold, let contrast):
                out = rgb * (1 - ((edge - threshold) * contrast).clamped(0, 1))
            case .comic(let levels, let threshold):
                out = edge >= threshold ? .zero : posterize(rgb, levels)
            case .cartoon(let levels, let threshold, let contrast):
                out = posterize(rgb, levels) * (1 - ((edge - threshold) * contrast).clamped(0, 1))
            }
            let bytes = out.clampedToUnit * 255 + 0.5
            output[4 * x] = UInt8(bytes.x)
            output[4 * x + 1] = UInt8(bytes.y)
            output[4 * x + 2] = UInt8(bytes.z)
            output[4 * x + 3] = here[4 * x + 3]
        }
    }
}

private func ink(_ name: String, _ style: InkStyle, _ context: FilterContext) -> FilterStage {
    .processor(RGBAProcessor(name: name, kernel: InkKernel(style: style, weights: context.luma), slices: context.slices))
}

extension FilterSpec {
    /// Woodcut look: black where the edge strength e ≥ `threshold`, white elsewhere.
    /// - `threshold` 0…1.5 (default 0.08). Formats: all (gray frames come out RGBA).
    /// - Chain: `edge-work:threshold=0.05` · Swift: `try FilterDescription("edge-work", ["threshold": .number(0.05)])`
    public static let edgeWork = FilterSpec(
        name: "edge-work", family: .stylize, summary: "Woodcut look: black edges on white.", coreImage: "CIEdgeWork",
        parameters: [ParameterSpec("threshold", .number(0...1.5), default: 0.08, "edge strength that becomes black")],
        example: "edge-work:threshold=0.05", swift: "try FilterDescription(\"edge-work\", [\"threshold\": .number(0.05)])"
    ) { arguments, context in ink("edge-work", .edgeWork(threshold: arguments.float("threshold")), context) }

    /// Ink lines over the picture: rgb · (1 − clamp((e − threshold) · contrast)).
    /// - `threshold` 0…1.5 (default 0.05), `contrast` 1…200 (default 20). Formats: all (gray frames come out RGBA).
    /// - Chain: `line-overlay:threshold=0.04:contrast=30` · Swift: `try FilterDescription("line-overlay")`
    public static let lineOverlay = FilterSpec(
        name: "line-overlay", family: .stylize, summary: "Dark ink lines drawn over the picture's edges.", coreImage: "CILineOverlay",
        parameters: [ParameterSpec("threshold", .number(0...1.5), default: 0.05, "edge strength where ink starts"),
                     ParameterSpec("contrast", .number(1...200), default: 20, "how fast ink becomes black")],
        example: "line-overlay:threshold=0.04:contrast=30", swift: "try FilterDescription(\"line-overlay\")"
    ) { arguments, context in
        ink("line-overlay", .lineOverlay(threshold: arguments.float("threshold"), contrast: arguments.float("contrast")), context)
    }

    /// Comic-book look: each channel posterized to 5 levels (v → round(4v)/4) under hard black lines where
    /// e ≥ `threshold`.
    /// - `threshold` 0…1.5 (default 0.1). Formats: all (gray frames come out RGBA).
    /// - Chain: `comic-effect:threshold=0.08` · Swift: `try FilterDescription("comic-effect")`
    public static let comicEffect = FilterSpec(
        name: "comic-effect", family: .stylize, summary: "Comic-book look: flat colours and black outlines.", coreImage: "CIComicEffect",
        parameters: [ParameterSpec("threshold", .number(0...1.5), default: 0.1, "edge strength that becomes a black line")],
        example: "comic-effect:threshold=0.08", swift: "try FilterDescription(\"comic-effect\")"
    ) { arguments, context in ink("comic-effect", .comic(levels: 5, threshold: arguments.float("threshold")), context) }

    /// Posterized cartoon: each channel posterized to `levels` (v → round(v·(L−1))/(L−1)) and darkened by soft ink,
    /// · (1 − clamp((e − threshold) · contrast)).
    /// - `levels` 2…32 (default 6), `threshold` 0…1.5 (default 0.06), `contrast` 1…200 (default 10). Formats: all.
    /// - Chain: `cartoon:levels=4` · Swift: `try FilterDescription("cartoon", ["levels": .integer(4)])`
    public static let cartoon = FilterSpec(
        name: "cartoon", family: .stylize, summary: "Posterized colours with soft dark outlines.",
        parameters: [ParameterSpec("levels", .integer(2...32), default: 6, "values per channel"),
                     ParameterSpec("threshold", .number(0...1.5), default: 0.06, "edge strength where ink starts"),
                     ParameterSpec("contrast", .number(1...200), default: 10, "how fast ink becomes black")],
        example: "cartoon:levels=4", swift: "try FilterDescription(\"cartoon\", [\"levels\": .integer(4)])"
    ) { arguments, context in
        ink("cartoon", .cartoon(levels: Float(arguments.integer("levels")), threshold: arguments.float("threshold"),
                                contrast: arguments.float("contrast")), context)
    }
}
