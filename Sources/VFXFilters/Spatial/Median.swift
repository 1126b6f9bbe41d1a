import VFXCore
// Median: the middle of the nine values around each sample, which removes specks and keeps edges.

extension FilterSpec {
    /// 3×3 median of each channel (edges repeat the border): removes salt-and-pepper noise, keeps edges.
    /// - No parameters. Formats: all (every plane and channel; RGB alpha too, unchanged when opaque).
    ///
    /// Chain: `median` · Swift: `FilterDescription.median`
    public static let median = FilterSpec(
        name: "median", family: .blur, summary: "3×3 median of each channel: removes specks, keeps edges.", coreImage: "CIMedianFilter",
        parameters: [], example: "median", swift: "FilterDescription.median",
        ffmpeg: { _ in "median=radius=1" }
    ) { _, context in
        .processor(StencilProcessor(.median, slices: context.slices))
    }
}

extension FilterDescription {
    public static let median = FilterDescription(builtIn: "median", [:])
}

/// The median of nine vectors lane by lane, with a 19-exchange sorting network.
struct MedianKernel: StencilKernel, Sendable {
    @inline(__always)
    func apply(_ n: Neighborhood) -> SIMD16<Float> {
        var p = (n.northWest, n.north, n.northEast, n.west, n.center, n.east, n.southWest, n.south, n.southEast)
        @inline(__always) func order(_ a: inout SIMD16<Float>, _ b: inout SIMD16<Float>) {
            let low = lanewiseMin(a, b)
            b = lanewiseMax(a, b)
            a = low
        }
        order(&p.1, &p.2); order(&p.4, &p.5); order(&p.7, &p.8)
        order(&p.0, &p.1); order(&p.3, &p.4); order(&p.6, &p.7)
        order(&p.1, &p.2); order(&p.4, &p.5); order(&p.7, &p.8)
        order(&p.0, &p.3); order(&p.5, &p.8); order(&p.4, &p.7)
        order(&p.3, &p.6); order(&p.1, &p.4); order(&p.2, &p.5)
        order(&p.4, &p.7); order(&p.4, &p.2); order(&p.6, &p.4)
        order(&p.4, &p.2)
        return p.4
    }
}
