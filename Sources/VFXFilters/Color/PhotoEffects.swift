import VFXCore
import Foundation

// Photo effects: the looks of Core Image's CIPhotoEffect* family, defined here by explicit formulas (Core Image
// does not publish its own). All work on gamma-encoded R'G'B' in 0…1; none takes parameters.

extension FilterSpec {
    /// Vivid "chrome" look: saturation ×1.3 and contrast ×1.1 (color-controls with those values).
    /// Formats: all. Chain: `photo-chrome` · Swift: `FilterDescription.photoChrome`
    public static let photoChrome = photoEffect("photo-chrome", "Vivid look: saturation ×1.3, contrast ×1.1.", "CIPhotoEffectChrome") { weights in
        .affine(Adjust.colorControls(brightness: 0, contrast: 1.1, saturation: 1.3, weights: weights))
    }

    /// Faded look: saturation ×0.6, then `0.1 + 0.8·rgb` (lifted blacks, dimmed whites).
    /// Formats: all. Chain: `photo-fade` · Swift: `FilterDescription.photoFade`
    public static let photoFade = photoEffect("photo-fade", "Faded look: less saturation, lifted blacks, dimmed whites.", "CIPhotoEffectFade") { weights in
        .affine(ColorMatrix { rgb in
            let luma = weights.luma(rgb)
            return 0.1 + (luma + (rgb - luma) * 0.6) * 0.8
        })
    }

    /// Instant-camera look: saturation ×0.8, warm cast (red ×1.05 + 0.04, blue ×0.9), lifted blacks.
    /// Formats: all. Chain: `photo-instant` · Swift: `FilterDescription.photoInstant`
    public static let photoInstant = photoEffect("photo-instant", "Instant-camera look: warm, slightly faded.", "CIPhotoEffectInstant") { weights in
        .affine(ColorMatrix { rgb in
            let luma = weights.luma(rgb)
            let muted = luma + (rgb - luma) * 0.8
            return muted * SIMD3(1.05, 0.98, 0.9) * 0.92 + SIMD3(0.06, 0.05, 0.04)
        })
    }

    /// Black-and-white with strong contrast: gray of luma through `½ + (Y − ½)·1.5`.
    /// Formats: all (YUV: luma table plus neutral chroma). Chain: `photo-noir` · Swift: `FilterDescription.photoNoir`
    public static let photoNoir = photoEffect("photo-noir", "Black and white with strong contrast.", "CIPhotoEffectNoir") { weights in
        .removingChroma(weights) { 0.5 + ($0 - 0.5) * 1.5 }
    }

    /// Cool, contrasty "process" look: an S-curve `3x² − 2x³` mixed 60 % into each channel, blue +0.04, red −0.02.
    /// Formats: all. Chain: `photo-process` · Swift: `FilterDescription.photoProcess`
    public static let photoProcess = photoEffect("photo-process", "Cool and contrasty: S-curve on each channel, blue cast.", "CIPhotoEffectProcess") { _ in
        .channels { rgb in
            let curve = rgb * rgb * (3 - 2 * rgb)
            return rgb + (curve - rgb) * 0.6 + SIMD3(-0.02, 0, 0.04)
        }
    }

    /// Soft black-and-white: gray of luma through `Y^0.9` scaled to 0.05…0.95 (low contrast).
    /// Formats: all (YUV: luma table plus neutral chroma). Chain: `photo-tonal` · Swift: `FilterDescription.photoTonal`
    public static let photoTonal = photoEffect("photo-tonal", "Soft black and white with low contrast.", "CIPhotoEffectTonal") { weights in
        .removingChroma(weights) { 0.05 + 0.9 * pow($0, 0.9) }
    }

    /// Warm vintage "transfer" look: red ×1.08, green ×1.0, blue ×0.85 plus a warm lift (+0.03, +0.02, 0).
    /// Formats: all. Chain: `photo-transfer` · Swift: `FilterDescription.photoTransfer`
    public static let photoTransfer = photoEffect("photo-transfer", "Warm vintage look.", "CIPhotoEffectTransfer") { _ in
        .affine(ColorMatrix(rows: (SIMD3(1.08, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 0.85)), offset: SIMD3(0.03, 0.02, 0)))
    }

    /// A parameterless point-wise look.
    private static func photoEffect(_ name: String, _ summary: String, _ coreImage: String,
                                    _ transform: @escaping @Sendable (LumaWeights) -> ColorTransform) -> FilterSpec {
        let swiftName = name.split(separator: "-").enumerated()
            .map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
        return FilterSpec(name: name, family: .colorEffect, summary: summary, coreImage: coreImage, parameters: [], example: name,
                          swift: "FilterDescription.\(swiftName)") { _, context in .color(transform(context.luma)) }
    }
}

extension FilterDescription {
    public static let photoChrome = FilterDescription(builtIn: "photo-chrome", [:])
    public static let photoFade = FilterDescription(builtIn: "photo-fade", [:])
    public static let photoInstant = FilterDescription(builtIn: "photo-instant", [:])
    public static let photoNoir = FilterDescription(builtIn: "photo-noir", [:])
    public static let photoProcess = FilterDescription(builtIn: "photo-process", [:])
    public static let photoTonal = FilterDescription(builtIn: "photo-tonal", [:])
    public static let photoTransfer = FilterDescription(builtIn: "photo-transfer", [:])
}
