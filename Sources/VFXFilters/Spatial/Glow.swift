// Glow effects: a Gaussian blur of the image blended back over it (bloom brightens, gloom darkens).

extension FilterSpec {
    /// Soft glow around bright areas: the blurred image screen-blended over the original,
    /// `out = 1 − (1 − x)(1 − intensity · blur_radius(x))` on values normalized to black 0, white 1.
    /// - `radius`: σ of the glow in pixels, 0…500, default 10. `intensity`: 0…1, default 0.5.
    /// - Formats: all. YUV: luma only (the glow keeps the colors); RGB: color channels, alpha kept.
    ///
    /// Chain: `bloom:radius=10:intensity=0.5` · Swift: `FilterDescription.bloom(radius: 10, intensity: 0.5)`
    public static let bloom = FilterSpec(
        name: "bloom", family: .stylize, summary: "Soft glow: a Gaussian blur of the image screen-blended over it.",
        coreImage: "CIBloom",
        parameters: [ParameterSpec("radius", .number(0...500, unit: "px"), default: 10, "σ of the glow"),
                     ParameterSpec("intensity", .number(0...1), default: 0.5, "strength of the glow")],
        example: "bloom:radius=10:intensity=0.5", swift: "FilterDescription.bloom(radius: 10, intensity: 0.5)"
    ) { arguments, context in
        .processor(BlurCombineProcessor(radius: arguments.number("radius"), amount: arguments.float("intensity"),
                                        effect: .bloom, slices: context.slices))
    }

    /// Dulls highlights: the image multiplied by its blur, blended by intensity,
    /// `out = x · (1 − intensity + intensity · blur_radius(x))` on values normalized to black 0, white 1.
    /// - `radius`: σ in pixels, 0…500, default 10. `intensity`: 0…1, default 0.5.
    /// - Formats: all. YUV: luma only; RGB: color channels, alpha kept.
    ///
    /// Chain: `gloom:radius=10:intensity=0.5` · Swift: `FilterDescription.gloom(radius: 10, intensity: 0.5)`
    public static let gloom = FilterSpec(
        name: "gloom", family: .stylize, summary: "Dulls highlights: the image multiplied by its Gaussian blur, blended by intensity.",
        coreImage: "CIGloom",
        parameters: [ParameterSpec("radius", .number(0...500, unit: "px"), default: 10, "σ of the blur"),
                     ParameterSpec("intensity", .number(0...1), default: 0.5, "strength of the effect")],
        example: "gloom:radius=10:intensity=0.5", swift: "FilterDescription.gloom(radius: 10, intensity: 0.5)"
    ) { arguments, context in
        .processor(BlurCombineProcessor(radius: arguments.number("radius"), amount: arguments.float("intensity"),
                                        effect: .gloom, slices: context.slices))
    }
}

extension FilterDescription {
    public static func bloom(radius: Double = 10, intensity: Double = 0.5) -> FilterDescription {
        FilterDescription(builtIn: "bloom", ["radius": .number(radius), "intensity": .number(intensity)])
    }

    public static func gloom(radius: Double = 10, intensity: Double = 0.5) -> FilterDescription {
        FilterDescription(builtIn: "gloom", ["radius": .number(radius), "intensity": .number(intensity)])
    }
}
