import Foundation
import VFXCore
import VFXPipeline

// Tile and mirror effects: the picture (or part of it) repeated with reflections. Each is a `WarpMap`
// (Distortion/Warp.swift). Positions are in frame pixels, origin top-left.

/// `value` folded into 0…period by reflection (a triangle wave): 0 → 0, period → period, 2·period → 0.
@inline(__always) func reflect(_ value: Double, period: Double) -> Double {
    let m = value - 2 * period * (value / (2 * period)).rounded(.down)
    return m <= period ? m : 2 * period - m
}

extension FilterSpec {
    /// A kaleidoscope: the wedge of angle 360°/count starting at `angle` around `center` is mirrored into every
    /// other wedge. With φ the angle of d = p − c minus `angle`, φ' = φ mod w (w = 360°/count) and, past w/2,
    /// φ' = w − φ'; source = c + |d|·(cos(φ' + angle), sin(φ' + angle)).
    /// - `count` 2…64 (default 6), `angle` (default 0°), `center`. Formats: all.
    /// - Chain: `kaleidoscope:count=8` · Swift: `try FilterDescription("kaleidoscope", ["count": .integer(8)])`
    public static let kaleidoscope = FilterSpec(
        name: "kaleidoscope", family: .tile, summary: "Mirrors one wedge around a centre into count wedges.",
        coreImage: "CIKaleidoscope",
        parameters: [ParameterSpec("count", .integer(2...64), default: 6, "number of wedges"),
                     ParameterSpec("angle", .angle(-360...360), default: 0, "direction of the first wedge"),
                     ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "centre")],
        example: "kaleidoscope:count=8", swift: "try FilterDescription(\"kaleidoscope\", [\"count\": .integer(8)])"
    ) { arguments, context in
        let wedge = 2 * Double.pi / Double(arguments.integer("count")), angle = arguments.number("angle") * .pi / 180
        let center = arguments.point("center")
        let map = WarpMap { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y), d = p - c
            let r = (d * d).sum().squareRoot()
            var phi = atan2(d.y, d.x) - angle
            phi -= wedge * (phi / wedge).rounded(.down)
            if phi > wedge / 2 { phi = wedge - phi }
            return c + r * SIMD2(cos(phi + angle), sin(phi + angle))
        }
        return .processor(WarpProcessor(name: "kaleidoscope", map: map, slices: context.slices))
    }

    /// An equilateral triangle (side `size` px, one corner at `center`, its base turned by `angle`) reflected across
    /// its sides to tile the whole frame. In the triangle's frame, with h its height and n₁ = (0, 1),
    /// n₂ = (√3/2, −½), n₃ = (−√3/2, −½): t₁ = p·n₁/h, t₂ = p·n₂/h, t₃ = p·n₃/h + 1 (always summing to 1; the
    /// triangle is where all three lie in 0…1); each tᵢ outside 0…1 is reflected into it (p moves along nᵢ) until
    /// all are inside.
    /// - `size` 4…4000 px (default 200), `angle`, `center` (default 0.5x0.5). Formats: all.
    /// - Chain: `triangle-kaleidoscope:size=300` · Swift: `try FilterDescription("triangle-kaleidoscope", ["size": .number(300)])`
    public static let triangleKaleidoscope = FilterSpec(
        name: "triangle-kaleidoscope", family: .tile, summary: "A triangle of the picture reflected across its sides to tile the frame.",
        coreImage: "CITriangleKaleidoscope",
        parameters: [ParameterSpec("size", .number(4...4000, unit: "px"), default: 200, "side of the triangle"),
                     ParameterSpec("angle", .angle(-360...360), default: 0, "rotation of the triangle"),
                     ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "one corner of the triangle")],
        example: "triangle-kaleidoscope:size=300", swift: "try FilterDescription(\"triangle-kaleidoscope\", [\"size\": .number(300)])"
    ) { arguments, context in
        let side = arguments.number("size"), angle = arguments.number("angle") * .pi / 180, center = arguments.point("center")
        let map = WarpMap { p, size in
            let c = SIMD2(center.x * size.x, center.y * size.y)
            let (cosA, sinA) = (cos(angle), sin(angle))
            let d = p - c
            var q = SIMD2(d.x * cosA + d.y * sinA, -d.x * sinA + d.y * cosA)
            q = TriangleFold.fold(q, side: side)
            return c + SIMD2(q.x * cosA - q.y * sinA, q.x * sinA + q.y * cosA)
        }
        return .processor(WarpProcessor(name: "triangle-kaleidoscope", map: map, slices: context.slices))
    }

    /// One half of the frame mirrored onto the other: `left` keeps the left half and mirrors it onto the right
    /// (source x = min(x, W − x)); `right`, `top`, `bottom` likewise.
    /// - `keep` one of left|right|top|bottom (default left). Formats: all.
    /// - Chain: `mirror:keep=top` · Swift: `try FilterDescription("mirror", ["keep": .text("top")])`
    public static let mirror = FilterSpec(
        name: "mirror", family: .tile, summary: "One half of the frame mirrored onto the other.",
        parameters: [ParameterSpec("keep", .choice(["left", "right", "top", "bottom"]), default: .text("left"), "the half that is kept")],
        example: "mirror:keep=top", swift: "try FilterDescription(\"mirror\", [\"keep\": .text(\"top\")])",
        ffmpeg: { arguments in
            switch arguments.text("keep") {
            case "right": "split[a][b];[a]crop=iw/2:ih:iw/2:0,hflip[l];[b]crop=iw/2:ih:iw/2:0[r];[l][r]hstack"
            case "top": "split[a][b];[a]crop=iw:ih/2:0:0[t];[b]crop=iw:ih/2:0:0,vflip[u];[t][u]vstack"
            case "bottom": "split[a][b];[a]crop=iw:ih/2:0:ih/2,vflip[t];[b]crop=iw:ih/2:0:ih/2[u];[t][u]vstack"
            default: "split[a][b];[a]crop=iw/2:ih:0:0[l];[b]crop=iw/2:ih:0:0,hflip[r];[l][r]hstack"
            }
        }
    ) { arguments, context in
        let keep = arguments.text("keep")
        let map = WarpMap(sampling: .nearest) { p, size in
            switch keep {
            case "right": SIMD2(max(p.x, size.x - p.x), p.y)
            case "top": SIMD2(p.x, min(p.y, size.y - p.y))
            case "bottom": SIMD2(p.x, max(p.y, size.y - p.y))
            default: SIMD2(min(p.x, size.x - p.x), p.y)
            }
        }
        // Even frame sizes (chroma exactly half): plain sample copies; odd sizes go through the general warp.
        guard context.format.width % 2 == 0, context.format.height % 2 == 0 else {
            return .processor(WarpProcessor(name: "mirror", map: map, slices: context.slices))
        }
        return .processor(MirrorProcessor(keep: keep, slices: context.slices))
    }

    /// The whole frame shrunk `count` times and repeated count × count times: source = (p mod (S/count)) · count.
    /// - `count` 1…32 (default 2). Formats: all.
    /// - Chain: `tile:count=3` · Swift: `try FilterDescription("tile", ["count": .integer(3)])`
    public static let tile = FilterSpec(
        name: "tile", family: .tile, summary: "The frame shrunk and repeated count × count times.",
        coreImage: "CIAffineTile",
        parameters: [ParameterSpec("count", .integer(1...32), default: 2, "copies along each side")],
        example: "tile:count=3", swift: "try FilterDescription(\"tile\", [\"count\": .integer(3)])"
    ) { arguments, context in
        let n = Double(arguments.integer("count"))
        let map = WarpMap { p, size in
            let cell = size / n
            return (p - cell * (p / cell).rounded(.down)) * n
        }
        return .processor(WarpProcessor(name: "tile", map: map, slices: context.slices))
    }

    /// Tiles of the frame's top-left cell (side S/count) reflected at every edge, so neighbours are mirror
    /// images: source = reflect(p, S/count) · count.
    /// - `count` 1…32 (default 2). Formats: all.
    /// - Chain: `fourfold-reflected-tile:count=4` · Swift: `try FilterDescription("fourfold-reflected-tile", ["count": .integer(4)])`
    public static let fourfoldReflectedTile = FilterSpec(
        name: "fourfold-reflected-tile", family: .tile, summary: "Tiles reflected at every edge, each a shrunk copy of the frame.",
        coreImage: "CIFourfoldReflectedTile",
        parameters: [ParameterSpec("count", .integer(1...32), default: 2, "tiles along each side")],
        example: "fourfold-reflected-tile:count=4", swift: "try FilterDescription(\"fourfold-reflected-tile\", [\"count\": .integer(4)])"
    ) { arguments, context in
        let n = Double(arguments.integer("count"))
        let map = WarpMap { p, size in
            let cell = size / n
            return SIMD2(reflect(p.x, period: cell.x), reflect(p.y, period: cell.y)) * n
        }
        return .processor(WarpProcessor(name: "fourfold-reflected-tile", map: map, slices: context.slices))
    }
}

/// Folding the plane into the equilateral triangle (0, 0), (s, 0), (s/2, s√3/2) by reflections across the lines
/// of its tiling.
enum TriangleFold {
    static let normals = [SIMD2<Double>(0, 1), SIMD2(3.0.squareRoot() / 2, -0.5), SIMD2(-(3.0.squareRoot()) / 2, -0.5)]

    static func fold(_ point: SIMD2<Double>, side: Double) -> SIMD2<Double> {
        let h = side * 3.0.squareRoot() / 2
        var q = point
        for _ in 0..<64 {
            var moved = false
            for (index, n) in normals.enumerated() {
                let t = (q * n).sum() / h + (index == 2 ? 1 : 0)
                guard t < 0 || t > 1 else { continue }
                q += (reflect(t, period: 1) - t) * h * n
                moved = true
            }
            if !moved { break }
        }
        return q
    }
}

/// The stage of `mirror` on frames of even size: each plane's kept half copied, the other half filled with the kept
/// half's samples in reverse order (sample x of a row of W takes min(x, W−1−x) for `left`, max(x, W−1−x) for
/// `right`; rows likewise for `top` and `bottom`), which is the nearest-sample warp exactly, at the cost of a copy.
final class MirrorProcessor: VideoProcessor {
    let keep: String
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var pool: BufferPool?

    init(keep: String, slices: SliceRunner) {
        self.keep = keep
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "mirror")
        let source = frame
        let output = source.makeSibling(pool: pool)
        let vertical = keep == "top" || keep == "bottom", keepsFirst = keep == "top" || keep == "left"
        for index in 0..<source.planeCount {
            let (input, target) = (source.plane(index), output.plane(index))
            let (w, h, c) = (input.width, input.height, input.bytesPerPixel)
            // Samples 0..<(w+1)/2 are the first half (the middle one of an odd row belongs to both).
            let firstHalf = (w + 1) / 2
            slices.run(rows: h) { rows in
                for y in rows {
                    if vertical {
                        let from = keepsFirst ? min(y, h - 1 - y) : max(y, h - 1 - y)
                        target.row(y).update(from: input.row(from), count: w * c)
                        continue
                    }
                    let (row, out) = (input.row(y), target.row(y))
                    if keepsFirst {
                        out.update(from: row, count: firstHalf * c)
                        reversePixels(row, into: out + firstHalf * c, pixels: w - firstHalf, bytesPerPixel: c)
                    } else {
                        (out + (w / 2) * c).update(from: row + (w / 2) * c, count: (w - w / 2) * c)
                        reversePixels(row + (w - w / 2) * c, into: out, pixels: w / 2, bytesPerPixel: c)
                    }
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() { pool = nil }
}
