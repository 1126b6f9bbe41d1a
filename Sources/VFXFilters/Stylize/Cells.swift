import Foundation
import VFXCore
import VFXPipeline

// Cell effects: the picture cut into cells that each take the colour found at their centre (crystallize,
// pointillize, hexagonal pixellate). Each is a `WarpMap` with nearest sampling (Distortion/Warp.swift): the cell
// lookup runs once per sample at configure time, a frame costs one gather per sample.

/// Seeds on a jittered grid: cell (i, j) of side `step` has its seed at ((i + ½ + a·(u − ½))·step,
/// (j + ½ + a·(v − ½))·step), u and v the low two 16-bit fields of `CellGrid.hash(i, j)` divided by 65536.
struct CellGrid: Sendable {
    let step: Double
    let jitter: Double

    /// A 64-bit mix of the cell indices: h = i·0x9E3779B97F4A7C15 ⊕ j·0xC2B2AE3D27D4EB4F, then h ⊕= h≫29,
    /// h ·= 0xBF58476D1CE4E5B9, h ⊕= h≫32 (wrapping arithmetic).
    static func hash(_ i: Int, _ j: Int) -> UInt64 {
        var h = UInt64(bitPattern: Int64(i)) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: Int64(j)) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 29
        h &*= 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        return h
    }

    func seed(_ i: Int, _ j: Int) -> SIMD2<Double> {
        let h = CellGrid.hash(i, j)
        let u = Double(h & 0xffff) / 65536, v = Double((h >> 16) & 0xffff) / 65536
        return SIMD2((Double(i) + 0.5 + jitter * (u - 0.5)) * step, (Double(j) + 0.5 + jitter * (v - 0.5)) * step)
    }

    /// The seed nearest to `p` (cells i−1…i+1, j−1…j+1 around p's own; the first in row order on a tie) and its
    /// squared distance.
    func nearest(_ p: SIMD2<Double>) -> (SIMD2<Double>, Double) {
        let i0 = Int((p.x / step).rounded(.down)), j0 = Int((p.y / step).rounded(.down))
        var best = seed(i0, j0), bestDistance = Double.infinity
        for j in (j0 - 1)...(j0 + 1) {
            for i in (i0 - 1)...(i0 + 1) {
                let s = seed(i, j), d = s - p
                let distance = (d * d).sum()
                if distance < bestDistance { (best, bestDistance) = (s, distance) }
            }
        }
        return (best, bestDistance)
    }
}

extension FilterSpec {
    /// Crystals: each pixel takes the colour at the nearest seed of a jittered grid (`CellGrid`, step = radius,
    /// jitter 0.8): a Voronoi mosaic.
    /// - `radius` 2…500 px (default 20). Formats: all.
    /// - Chain: `crystallize:radius=12` · Swift: `try FilterDescription("crystallize", ["radius": .number(12)])`
    public static let crystallize = FilterSpec(
        name: "crystallize", family: .stylize, summary: "Voronoi crystals, each the colour at its seed.",
        coreImage: "CICrystallize",
        parameters: [ParameterSpec("radius", .number(2...500, unit: "px"), default: 20, "spacing of the seeds")],
        example: "crystallize:radius=12", swift: "try FilterDescription(\"crystallize\", [\"radius\": .number(12)])"
    ) { arguments, context in
        let grid = CellGrid(step: arguments.number("radius"), jitter: 0.8)
        let map = WarpMap(sampling: .nearest) { p, _ in grid.nearest(p).0 }
        return .processor(WarpProcessor(name: "crystallize", map: map, slices: context.slices))
    }

    /// Dots of the colour at their centre on a plain background: seeds on a jittered grid (`CellGrid`, step =
    /// 2·radius, jitter 0.5); pixels within `radius` of their nearest seed take the seed's colour, others `background`.
    /// - `radius` 1…250 px (default 8), `background` (default white). Formats: all.
    /// - Chain: `pointillize:radius=6:background=black` · Swift: `try FilterDescription("pointillize", ["radius": .number(6)])`
    public static let pointillize = FilterSpec(
        name: "pointillize", family: .stylize, summary: "Round dots of the colour at their centres on a plain background.",
        coreImage: "CIPointillize",
        parameters: [ParameterSpec("radius", .number(1...250, unit: "px"), default: 8, "radius of the dots"),
                     ParameterSpec("background", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "colour between dots")],
        example: "pointillize:radius=6:background=black", swift: "try FilterDescription(\"pointillize\", [\"radius\": .number(6)])"
    ) { arguments, context in
        let radius = arguments.number("radius")
        let grid = CellGrid(step: 2 * radius, jitter: 0.5)
        let map = WarpMap(sampling: .nearest, fill: arguments.color("background").rgb) { p, _ in
            let (seed, distance) = grid.nearest(p)
            return distance <= radius * radius ? seed : nil
        }
        return .processor(WarpProcessor(name: "pointillize", map: map, slices: context.slices))
    }

    /// Hexagonal mosaic: each pixel takes the colour at the centre of its hexagon (pointy-top hexagons whose
    /// centres are `scale` px apart along a row, rows 0.75·(2·scale/√3) apart and shifted by half a hexagon).
    /// - `scale` 2…500 px (default 16). Formats: all.
    /// - Chain: `hexagonal-pixellate:scale=24` · Swift: `try FilterDescription("hexagonal-pixellate", ["scale": .number(24)])`
    public static let hexagonalPixellate = FilterSpec(
        name: "hexagonal-pixellate", family: .stylize, summary: "Hexagonal mosaic, each hexagon the colour at its centre.",
        coreImage: "CIHexagonalPixellate",
        parameters: [ParameterSpec("scale", .number(2...500, unit: "px"), default: 16, "distance between hexagon centres")],
        example: "hexagonal-pixellate:scale=24", swift: "try FilterDescription(\"hexagonal-pixellate\", [\"scale\": .number(24)])"
    ) { arguments, context in
        let a = arguments.number("scale") / 3.0.squareRoot()
        let map = WarpMap(sampling: .nearest) { p, _ in Hexagons.center(of: p, size: a) }
        return .processor(WarpProcessor(name: "hexagonal-pixellate", map: map, slices: context.slices))
    }
}

/// Pointy-top hexagons of circumradius `size` with a centre at the origin.
enum Hexagons {
    static func center(of p: SIMD2<Double>, size a: Double) -> SIMD2<Double> {
        let q = (3.0.squareRoot() / 3 * p.x - p.y / 3) / a, r = (2.0 / 3 * p.y) / a
        // Round the cube coordinates (q, r, −q−r), fixing the one that moved most.
        var (rq, rr, rs) = (q.rounded(), r.rounded(), (-q - r).rounded())
        let (dq, dr, ds) = (abs(rq - q), abs(rr - r), abs(rs + q + r))
        if dq > dr && dq > ds { rq = -rr - rs } else if dr > ds { rr = -rq - rs } else { rs = -rq - rr }
        _ = rs
        return SIMD2(a * 3.0.squareRoot() * (rq + rr / 2), a * 1.5 * rr)
    }
}
