// Edge filters: Sobel gradient magnitude (edges) and directional relief (emboss).

extension FilterSpec {
    /// Bright edges on black: the Sobel gradient magnitude, `out = intensity · √(gx² + gy²) / 4` in byte units
    /// above black (gx, gy the 3×3 Sobel responses; edges repeat the border).
    /// - `intensity`: 0…10, default 1.
    /// - Formats: all. YUV: on luma, chroma made neutral (gray edges); RGB: each color channel, alpha kept.
    ///
    /// Chain: `edges:intensity=2` · Swift: `FilterDescription.edges(intensity: 2)`
    public static let edges = FilterSpec(
        name: "edges", family: .stylize, summary: "Bright edges on black: Sobel gradient magnitude times intensity.", coreImage: "CIEdges",
        parameters: [ParameterSpec("intensity", .number(0...10), default: 1, "gain on the gradient magnitude")],
        example: "edges:intensity=2", swift: "FilterDescription.edges(intensity: 2)",
        ffmpeg: { _ in "sobel" }
    ) { arguments, context in
        .processor(StencilProcessor(.edges(arguments.float("intensity")), slices: context.slices))
    }

    /// Relief lit from the top left: `out = mid + intensity · (southEast − northWest + (east + south − west − north) / 2)`
    /// where mid is halfway between black and white.
    /// - `intensity`: 0…10, default 1.
    /// - Formats: all. YUV: on luma, chroma made neutral; RGB: each color channel, alpha kept.
    ///
    /// Chain: `emboss:intensity=1.5` · Swift: `FilterDescription.emboss(intensity: 1.5)`
    public static let emboss = FilterSpec(
        name: "emboss", family: .stylize, summary: "Gray relief lit from the top left.",
        parameters: [ParameterSpec("intensity", .number(0...10), default: 1, "depth of the relief")],
        example: "emboss:intensity=1.5", swift: "FilterDescription.emboss(intensity: 1.5)"
    ) { arguments, context in
        .processor(StencilProcessor(.emboss(arguments.float("intensity")), slices: context.slices))
    }
}

extension FilterDescription {
    public static func edges(intensity: Double = 1) -> FilterDescription {
        FilterDescription(builtIn: "edges", ["intensity": .number(intensity)])
    }

    public static func emboss(intensity: Double = 1) -> FilterDescription {
        FilterDescription(builtIn: "emboss", ["intensity": .number(intensity)])
    }
}

/// Sobel magnitude / 4 times `amount`, above black; alpha lanes keep the centre.
struct EdgesKernel: StencilKernel, Sendable {
    let amount: Float
    let levels: PlaneLevels

    @inline(__always)
    func apply(_ n: Neighborhood) -> SIMD16<Float> {
        let gx = (n.northEast + 2 * n.east + n.southEast) - (n.northWest + 2 * n.west + n.southWest)
        let gy = (n.southWest + 2 * n.south + n.southEast) - (n.northWest + 2 * n.north + n.northEast)
        let magnitude = (gx * gx + gy * gy).squareRoot() * (amount / 4) + levels.black
        return n.center + (magnitude - n.center) * levels.colorLanes
    }
}

/// Mid gray plus the top-left-to-bottom-right difference; alpha lanes keep the centre.
struct EmbossKernel: StencilKernel, Sendable {
    let amount: Float
    let levels: PlaneLevels

    @inline(__always)
    func apply(_ n: Neighborhood) -> SIMD16<Float> {
        let relief = n.southEast - n.northWest + 0.5 * (n.east + n.south - n.west - n.north)
        let value = (levels.black + levels.white) / 2 + amount * relief
        return n.center + (value - n.center) * levels.colorLanes
    }
}
