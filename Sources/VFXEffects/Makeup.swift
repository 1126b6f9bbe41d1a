import Foundation
import VFXCore
import VFXFilters
import VFXPipeline
import VFXVision

// Makeup from the face mesh: lipstick on the lips polygon only, and skin smoothing on the skin only.

extension FilterSpec {
    /// `lipstick`: the lips tinted, feathered at their edge.
    ///
    /// ```
    /// vfx apply call.mp4 -o red-lips.mp4 --filter lipstick:color=#b0103a:amount=0.6
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("lipstick", ["color": .color(FilterColor(parsing: "#b0103a")!)])])
    /// ```
    public static let lipstick = FilterSpec(
        name: "lipstick",
        summary: "Tints the lips (the face mesh's outer lip outline minus the mouth opening, feathered over 2 px) toward "
            + "a color: its hue and saturation fully at amount=1, half its lightness, so the lips keep their shading.",
        parameters: [
            ParameterSpec("color", .color, default: .color(FilterColor(red: 0.69, green: 0.06, blue: 0.23)), "the lipstick color"),
            ParameterSpec("amount", .number(0...1), default: 0.6, "how far the lips move toward the color"),
        ],
        example: "lipstick:color=#b0103a:amount=0.6",
        swift: "try FilterDescription(\"lipstick\", [\"color\": .color(FilterColor(parsing: \"#b0103a\")!)])"
    ) { arguments, _ in
        .processor(MakeupProcessor(look: .lipstick(arguments.color("color")), amount: arguments.float("amount")))
    }

    /// `skin-smooth`: skin smoothed, edges kept, eyes, brows, lips, hair and background untouched.
    ///
    /// ```
    /// vfx apply call.mp4 -o soft.mp4 --filter skin-smooth:amount=0.7
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("skin-smooth", ["amount": .number(0.7)])])
    /// ```
    public static let skinSmooth = FilterSpec(
        name: "skin-smooth",
        summary: "Smooths the skin with an edge-preserving (self-guided) filter inside the face outline, leaving out "
            + "the eyes, brows and lips (each grown by 3 px) and everything outside the face.",
        parameters: [
            ParameterSpec("amount", .number(0...1), default: 0.7, "how much of the smoothed skin to blend in"),
        ],
        example: "skin-smooth:amount=0.7",
        swift: "try FilterDescription(\"skin-smooth\", [\"amount\": .number(0.7)])"
    ) { arguments, _ in
        .processor(MakeupProcessor(look: .skinSmooth, amount: arguments.float("amount")))
    }
}

/// Outlines in the face mesh (MediaPipe's point numbers, in order around each outline).
enum MeshOutline {
    static let lipsOuter = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185]
    static let lipsInner = [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 415, 310, 311, 312, 13, 82, 81, 80, 191]
    static let rightEye = [33, 246, 161, 160, 159, 158, 157, 173, 133, 155, 154, 153, 145, 144, 163, 7]
    static let leftEye = [362, 398, 384, 385, 386, 387, 388, 466, 263, 249, 390, 373, 374, 380, 381, 382]
    static let rightBrow = [70, 63, 105, 66, 107, 55, 65, 52, 53, 46]
    static let leftBrow = [336, 296, 334, 293, 300, 276, 283, 282, 295, 285]
    static let faceOval = [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148,
                           176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109]

    /// The outline in frame pixels.
    static func pixels(_ outline: [Int], of mesh: FaceLandmarks, width: Int, height: Int) -> [(x: Float, y: Float)] {
        outline.map { (mesh.points[$0].x * Float(width), mesh.points[$0].y * Float(height)) }
    }

    /// Writes the outline in frame pixels over `corners` (which already holds one entry per point), in place.
    static func update(_ corners: inout [(x: Float, y: Float)], _ outline: [Int], of mesh: FaceLandmarks, width: Int, height: Int) {
        for (k, index) in outline.enumerated() { corners[k] = (mesh.points[index].x * Float(width), mesh.points[index].y * Float(height)) }
    }
}

/// A polygon in frame pixels with a soft edge: coverage 1 inside, 0 outside, and a linear ramp across the
/// `feather`-pixel band centred on the outline (`grow` moves the outline outward).
struct SoftPolygon {
    var corners: [(x: Float, y: Float)]
    var feather: Float = 2
    var grow: Float = 0

    var bounds: (x0: Float, y0: Float, x1: Float, y1: Float) {
        let margin = grow + feather
        var box = (x0: Float.infinity, y0: Float.infinity, x1: -Float.infinity, y1: -Float.infinity)
        for corner in corners {
            box = (min(box.x0, corner.x), min(box.y0, corner.y), max(box.x1, corner.x), max(box.y1, corner.y))
        }
        return (box.x0 - margin, box.y0 - margin, box.x1 + margin, box.y1 + margin)
    }

    /// Signed distance from (x, y) to the outline, positive inside.
    func distance(_ x: Float, _ y: Float) -> Float {
        var inside = false
        var nearest = Float.infinity
        var j = corners.count - 1
        for i in corners.indices {
            let a = corners[j], b = corners[i]
            if (b.y > y) != (a.y > y) && x < (a.x - b.x) * (y - b.y) / (a.y - b.y) + b.x { inside.toggle() }
            let ex = b.x - a.x, ey = b.y - a.y
            let t = min(max(((x - a.x) * ex + (y - a.y) * ey) / max(ex * ex + ey * ey, 1e-6), 0), 1)
            let dx = a.x + t * ex - x, dy = a.y + t * ey - y
            nearest = min(nearest, dx * dx + dy * dy)
            j = i
        }
        return inside ? nearest.squareRoot() : -nearest.squareRoot()
    }

    /// Coverage 0…1 of the pixel centred at (x + 0.5, y + 0.5).
    func coverage(_ x: Int, _ y: Int) -> Float {
        let d = distance(Float(x) + 0.5, Float(y) + 0.5) + grow
        return min(max(0.5 + d / feather, 0), 1)
    }

    /// The coverage of pixels x0..<x1 of row y into `row` (indexed by x). Pixels farther than |grow| + feather/2
    /// from the outline are 0 or 1 by the even-odd rule on the row's crossings; only those nearer get the exact
    /// distance, so the cost follows the outline's length, not the area. `crossings` is scratch space kept by
    /// the caller (emptied here), so drawing allocates nothing once it has grown.
    func fill(row y: Int, from x0: Int, to x1: Int, into row: UnsafeMutablePointer<Float>, crossings: inout [Float]) {
        let py = Float(y) + 0.5
        crossings.removeAll(keepingCapacity: true)
        var j = corners.count - 1
        for i in corners.indices {
            let a = corners[j], b = corners[i]
            if (b.y > py) != (a.y > py) { crossings.append((a.x - b.x) * (py - b.y) / (a.y - b.y) + b.x) }
            j = i
        }
        crossings.sort()
        for x in x0..<x1 { row[x] = 0 }
        var k = 0
        while k + 1 < crossings.count {
            let start = max(x0, Int((crossings[k] - 0.5).rounded(.up))), end = min(x1, Int((crossings[k + 1] - 0.5).rounded(.up)))
            if start < end { for x in start..<end { row[x] = 1 } }
            k += 2
        }
        let band = abs(grow) + feather / 2 + 1
        j = corners.count - 1
        for i in corners.indices {
            let a = corners[j], b = corners[i]
            j = i
            guard py >= min(a.y, b.y) - band, py <= max(a.y, b.y) + band else { continue }
            let start = max(x0, Int((min(a.x, b.x) - band).rounded(.down))), end = min(x1, Int((max(a.x, b.x) + band).rounded(.up)))
            if start < end { for x in start..<end { row[x] = coverage(x, y) } }
        }
    }
}

/// The stage behind `lipstick` and `skin-smooth`: the tracked face mesh (`FaceLandmarker`, or the frame's
/// attached `FaceMeshes`), a coverage map drawn from its outlines, and the look applied through it.
final class MakeupProcessor: VideoProcessor {
    enum Look {
        case lipstick(FilterColor)
        case skinSmooth
    }

    let look: Look
    let amount: Float
    private var landmarker: FaceLandmarker?
    private var weights: PlaneWeights?
    private var shapes: [PlaneShape] = []
    /// The lipstick color in the frame's format, one value per channel of each plane.
    private var colorSamples: [[Float]] = []
    private var format: PixelFormat = .i420
    private var smoothing: [Float] = []
    /// The summed-area table of `boxMean`.
    private var table: [Double] = []
    /// Two rows of coverage (the face's, then one outline's) while drawing the map.
    private var rowCoverage: [Float] = []
    /// A row's crossings of an outline while drawing the map.
    private var crossings: [Float] = []
    /// The outlines of the look (made once, their corners rewritten for each face) and the faces' boxes.
    private var regions: (include: [SoftPolygon], exclude: [SoftPolygon]) = ([], [])
    private var boxes: [(x0: Int, y0: Int, x1: Int, y1: Int)] = []

    init(look: Look, amount: Float) {
        self.look = look
        self.amount = amount
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        landmarker = try FaceLandmarker()
        format = input.pixelFormat
        shapes = PlaneShape.shapes(of: input.pixelFormat, width: input.width, height: input.height)
        weights = PlaneWeights(format: input.pixelFormat, width: input.width, height: input.height)
        if case .lipstick(let color) = look {
            let swatch = VideoFrame(format: .rgba, width: 2, height: 2)
            let rgba = [color.red, color.green, color.blue, 1].map { UInt8(($0 * 255).rounded()) }
            for y in 0..<2 { for x in 0..<2 { for c in 0..<4 { swatch.plane(0).row(y)[4 * x + c] = rgba[c] } } }
            let converted = swatch.converted(to: input.pixelFormat, color: input.color)
            colorSamples = PlaneShape.shapes(of: input.pixelFormat, width: 2, height: 2).map { shape in
                (0..<shape.channels).map { Float(converted.plane(shape.index).row(0)[$0]) }
            }
        }
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        guard let weights, let landmarker else { return frame }
        let meshes = frame.attachments[FaceMeshes.self]?.faces ?? landmarker.process(frame)
        guard !meshes.isEmpty else { return frame }
        let width = frame.width, height = frame.height
        boxes.removeAll(keepingCapacity: true)
        weights.fill(clear: true) { plane in
            for mesh in meshes {
                Self.update(&regions, for: look, mesh: mesh, width: width, height: height)
                guard let include = regions.include.first else { continue }
                let b = include.bounds
                let x0 = max(0, Int(b.x0) & ~1), y0 = max(0, Int(b.y0) & ~1)
                let x1 = min(width, Int(b.x1.rounded(.up)) + 2), y1 = min(height, Int(b.y1.rounded(.up)) + 2)
                guard x1 > x0, y1 > y0 else { continue }
                boxes.append((x0, y0, x1, y1))
                if rowCoverage.count < 2 * width { rowCoverage = [Float](repeating: 0, count: 2 * width) }
                rowCoverage.withUnsafeMutableBufferPointer { buffer in
                    let inside = buffer.baseAddress!, hole = inside + width
                    for y in y0..<y1 {
                        for x in x0..<x1 { inside[x] = 1 }
                        for polygon in regions.include {
                            polygon.fill(row: y, from: x0, to: x1, into: hole, crossings: &crossings)
                            for x in x0..<x1 { inside[x] *= hole[x] }
                        }
                        for polygon in regions.exclude {
                            polygon.fill(row: y, from: x0, to: x1, into: hole, crossings: &crossings)
                            for x in x0..<x1 { inside[x] *= 1 - hole[x] }
                        }
                        let row = plane.row(y)
                        for x in x0..<x1 { row[x] = max(row[x], UInt8(inside[x] * 255 + 0.5)) }
                    }
                }
            }
        }
        guard !boxes.isEmpty else { return frame }
        let shapes = self.shapes, amount = self.amount
        frame.withMutablePlanes { planes in
            switch look {
            case .lipstick:
                for shape in shapes {
                    let plane = planes[shape.index], color = colorSamples[shape.index]
                    // Luma (or, on RGB, every channel) moves half as far as chroma: the lips keep their shading.
                    for box in boxes {
                        let s = shape.subsampling
                        for y in (box.y0 / s)..<min(shape.height, (box.y1 + s - 1) / s) {
                            let row = plane.row(y), w = weights.row(shape, y)
                            for x in (box.x0 / s)..<min(shape.width, (box.x1 + s - 1) / s) where w[x] != 0 {
                                tint(row + x * shape.channels, color: color, shape: shape, amount: amount * Float(w[x]) / 255)
                            }
                        }
                    }
                }
            case .skinSmooth:
                for shape in shapes where !(format.isYUV && shape.index > 0) {
                    for box in boxes { smooth(planes[shape.index], shape: shape, box: box, weights: weights, amount: amount) }
                }
            }
        }
        return frame
    }

    /// One pixel toward the lipstick color. On YUV planes Y moves half as far as U and V; on RGB the color's
    /// luma difference is halved the same way (the same arithmetic written in RGB).
    private func tint(_ pixel: UnsafeMutablePointer<UInt8>, color: [Float], shape: PlaneShape, amount: Float) {
        if format.isRGB {
            let (r, g, b) = format == .rgba ? (0, 1, 2) : (2, 1, 0)
            let delta = SIMD3(color[r] - Float(pixel[r]), color[g] - Float(pixel[g]), color[b] - Float(pixel[b]))
            let luma = 0.299 * delta.x + 0.587 * delta.y + 0.114 * delta.z
            let moved = delta - SIMD3(repeating: luma * 0.5)
            for (channel, change) in [(r, moved.x), (g, moved.y), (b, moved.z)] {
                pixel[channel] = UInt8(min(max(Float(pixel[channel]) + change * amount + 0.5, 0), 255))
            }
            return
        }
        let strength = format.isYUV && shape.index == 0 || format == .gray8 ? amount * 0.5 : amount
        for c in 0..<shape.channels {
            let value = Float(pixel[c])
            pixel[c] = UInt8(min(max(value + (color[c] - value) * strength + 0.5, 0), 255))
        }
    }

    /// What the coverage map holds for a face: the lips (outer minus inner outline) or the skin (face outline
    /// minus the eyes, brows and lips, each grown by 3 px).
    static func regions(for look: Look, mesh: FaceLandmarks, width: Int, height: Int)
        -> (include: [SoftPolygon], exclude: [SoftPolygon]) {
        func polygon(_ outline: [Int], grow: Float = 0) -> SoftPolygon {
            SoftPolygon(corners: MeshOutline.pixels(outline, of: mesh, width: width, height: height), grow: grow)
        }
        switch look {
        case .lipstick:
            return ([polygon(lipsOutlines.include[0])], [polygon(lipsOutlines.exclude[0])])
        case .skinSmooth:
            return ([polygon(skinOutlines.include[0], grow: -2)], skinOutlines.exclude.map { polygon($0, grow: 3) })
        }
    }

    /// The outlines behind `regions`: those that bound the look, then those cut out of it.
    static let lipsOutlines = (include: [MeshOutline.lipsOuter], exclude: [MeshOutline.lipsInner])
    static let skinOutlines = (include: [MeshOutline.faceOval],
                               exclude: [MeshOutline.rightEye, MeshOutline.leftEye, MeshOutline.rightBrow, MeshOutline.leftBrow,
                                         MeshOutline.lipsOuter])

    /// `regions(for:mesh:width:height:)` written into `regions` in place: made on the first face, then only
    /// their corners rewritten, so a frame allocates nothing.
    static func update(_ regions: inout (include: [SoftPolygon], exclude: [SoftPolygon]), for look: Look, mesh: FaceLandmarks,
                       width: Int, height: Int) {
        guard !regions.include.isEmpty else {
            regions = Self.regions(for: look, mesh: mesh, width: width, height: height)
            return
        }
        let outlines = if case .lipstick = look { lipsOutlines } else { skinOutlines }
        for k in regions.include.indices {
            MeshOutline.update(&regions.include[k].corners, outlines.include[k], of: mesh, width: width, height: height)
        }
        for k in regions.exclude.indices {
            MeshOutline.update(&regions.exclude[k].corners, outlines.exclude[k], of: mesh, width: width, height: height)
        }
    }

    /// He, Sun and Tang's guided filter with the plane as its own guide (edge-preserving: a strong edge keeps
    /// a ≈ 1, flat skin gets the window mean), radius 1/60 of the face box width (at least 2 px), ε = 12² in 8-bit
    /// levels; blended in through the skin coverage.
    private func smooth(_ plane: Plane, shape: PlaneShape, box: (x0: Int, y0: Int, x1: Int, y1: Int), weights: PlaneWeights, amount: Float) {
        let channels = shape.channels
        let w = box.x1 - box.x0, h = box.y1 - box.y0
        guard w > 4, h > 4 else { return }
        let radius = max(2, w / 60)
        let epsilon: Float = 144
        let count = w * h
        if smoothing.count < 6 * count { smoothing = [Float](repeating: 0, count: 6 * count) }
        if table.count < (w + 1) * (h + 1) { table = [Double](repeating: 0, count: (w + 1) * (h + 1)) }
        smoothing.withUnsafeMutableBufferPointer { storage in
          table.withUnsafeMutableBufferPointer { table in
            let table = table.baseAddress!
            let guide = storage.baseAddress!, squares = guide + count, mean = guide + 2 * count, meanSquares = guide + 3 * count
            let a = guide + 4 * count, b = guide + 5 * count
            for c in 0..<channels {
                for y in 0..<h {
                    let row = plane.row(box.y0 + y)
                    for x in 0..<w {
                        let value = Float(row[(box.x0 + x) * channels + c])
                        guide[y * w + x] = value
                        squares[y * w + x] = value * value
                    }
                }
                Self.boxMean(guide, into: mean, width: w, height: h, radius: radius, table: table)
                Self.boxMean(squares, into: meanSquares, width: w, height: h, radius: radius, table: table)
                for i in 0..<count {
                    let variance = max(meanSquares[i] - mean[i] * mean[i], 0)
                    a[i] = variance / (variance + epsilon)
                    b[i] = mean[i] * (1 - a[i])
                }
                Self.boxMean(a, into: squares, width: w, height: h, radius: radius, table: table)
                Self.boxMean(b, into: meanSquares, width: w, height: h, radius: radius, table: table)
                for y in 0..<h {
                    let row = plane.row(box.y0 + y), coverage = weights.row(shape, box.y0 + y)
                    for x in 0..<w where coverage[box.x0 + x] != 0 {
                        let i = y * w + x
                        let smoothed = squares[i] * guide[i] + meanSquares[i]
                        let blend = amount * Float(coverage[box.x0 + x]) / 255
                        let value = guide[i] + (smoothed - guide[i]) * blend
                        row[(box.x0 + x) * channels + c] = UInt8(min(max(value + 0.5, 0), 255))
                    }
                }
            }
          }
        }
    }

    /// Mean over the (2r+1)² window, clipped at the edges, through a summed-area table (`table`: room for
    /// (width + 1)·(height + 1) values, kept by the caller).
    static func boxMean(_ source: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, width: Int, height: Int, radius: Int,
                        table: UnsafeMutablePointer<Double>) {
        table.update(repeating: 0, count: width + 1)
        for y in 0..<height {
            table[(y + 1) * (width + 1)] = 0
            var rowSum: Double = 0
            for x in 0..<width {
                rowSum += Double(source[y * width + x])
                table[(y + 1) * (width + 1) + x + 1] = table[y * (width + 1) + x + 1] + rowSum
            }
        }
        for y in 0..<height {
            let y0 = max(y - radius, 0), y1 = min(y + radius + 1, height)
            for x in 0..<width {
                let x0 = max(x - radius, 0), x1 = min(x + radius + 1, width)
                let sum = table[y1 * (width + 1) + x1] - table[y0 * (width + 1) + x1] - table[y1 * (width + 1) + x0] + table[y0 * (width + 1) + x0]
                target[y * width + x] = Float(sum / Double((y1 - y0) * (x1 - x0)))
            }
        }
    }

    func release() { landmarker?.reset() }
}
