// Sharpen: a 3×3 Laplacian added to the image.

extension FilterSpec {
    /// Sharpens fine detail: `out = x + sharpness · (4x − up − down − left − right)` (edges repeat the border).
    /// - `sharpness`: 0…2, default 0.4.
    /// - Formats: all. YUV and gray: luma only (chroma copied); RGB: each color channel, alpha kept.
    ///
    /// Chain: `sharpen:sharpness=0.6` · Swift: `FilterDescription.sharpen(sharpness: 0.6)`
    public static let sharpen = FilterSpec(
        name: "sharpen", family: .sharpen, summary: "Sharpens fine detail: adds sharpness × a 3×3 Laplacian of the luma.",
        coreImage: "CISharpenLuminance",
        parameters: [ParameterSpec("sharpness", .number(0...2), default: 0.4, "how much of the Laplacian is added")],
        example: "sharpen:sharpness=0.6", swift: "FilterDescription.sharpen(sharpness: 0.6)"
    ) { arguments, context in
        .processor(StencilProcessor(.sharpen(arguments.float("sharpness")), slices: context.slices))
    }
}

extension FilterDescription {
    public static func sharpen(sharpness: Double = 0.4) -> FilterDescription {
        FilterDescription(builtIn: "sharpen", ["sharpness": .number(sharpness)])
    }
}

/// `x + amount · (4x − north − south − west − east)`; alpha lanes keep x.
struct SharpenKernel: StencilKernel, Sendable {
    let amount: Float
    let levels: PlaneLevels

    @inline(__always)
    func apply(_ n: Neighborhood) -> SIMD16<Float> {
        let laplacian = 4 * n.center - n.north - n.south - n.west - n.east
        return n.center + amount * laplacian * levels.colorLanes
    }
}
