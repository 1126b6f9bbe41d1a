import Foundation
import VFXCore
import VFXPipeline

// Orientation: mirror images and rotations.

extension FilterSpec {
    /// Mirrors the frame: `horizontal` swaps left and right, `vertical` swaps top and bottom. Exact.
    /// - `axis`: horizontal|vertical, default horizontal. Formats: all.
    ///
    /// Chain: `flip:vertical` · Swift: `FilterDescription.flip(.vertical)`
    public static let flip = FilterSpec(
        name: "flip", summary: "Mirrors the frame left-right (horizontal) or top-bottom (vertical).",
        parameters: [ParameterSpec("axis", .choice(["horizontal", "vertical"]), default: .text("horizontal"),
                                   "horizontal: left↔right, vertical: top↔bottom")],
        example: "flip:vertical", swift: "FilterDescription.flip(.vertical)",
        ffmpeg: { $0.text("axis") == "vertical" ? "vflip" : "hflip" }
    ) { arguments, context in
        .processor(FlipProcessor(vertical: arguments.text("axis") == "vertical", slices: context.slices))
    }

    /// Rotates clockwise by `angle` degrees. 90, 180 and 270 (and their negatives) are exact and swap width
    /// and height for 90/270; any other angle rotates about the centre with bilinear sampling, keeps the frame
    /// size, and fills uncovered corners with black.
    /// - `angle`: degrees −360…360, default 90. Formats: all.
    ///
    /// Chain: `rotate:angle=90` · Swift: `FilterDescription.rotate(angle: 90)`
    public static let rotate = FilterSpec(
        name: "rotate", summary: "Rotates clockwise by angle degrees (90/180/270 exact, others bilinear, black corners).",
        parameters: [ParameterSpec("angle", .angle(-360...360), default: 90, "clockwise rotation in degrees")],
        example: "rotate:angle=90", swift: "FilterDescription.rotate(angle: 90)",
        ffmpeg: { arguments in
            let degrees = arguments.number("angle")
            guard degrees.truncatingRemainder(dividingBy: 90) == 0 else { return "rotate=\(degrees)*PI/180" }
            return switch (Int(degrees) / 90 % 4 + 4) % 4 {
            case 1: "transpose=clock"
            case 2: "hflip,vflip"
            case 3: "transpose=cclock"
            default: "null"
            }
        }
    ) { arguments, context in
        .processor(RotateProcessor(degrees: arguments.number("angle"), slices: context.slices))
    }
}

extension FilterDescription {
    public enum FlipAxis: String, Sendable { case horizontal, vertical }

    public static func flip(_ axis: FlipAxis = .horizontal) -> FilterDescription {
        FilterDescription(builtIn: "flip", ["axis": .text(axis.rawValue)])
    }

    public static func rotate(angle: Double = 90) -> FilterDescription {
        FilterDescription(builtIn: "rotate", ["angle": .number(angle)])
    }
}

/// The stage of `flip`: in place (or into a pool buffer when the pixels are shared).
final class FlipProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let vertical: Bool
    let slices: SliceRunner
    private var pool: BufferPool?

    init(vertical: Bool, slices: SliceRunner) {
        self.vertical = vertical
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "flip")
        var frame = frame
        let vertical = self.vertical
        frame.withMutablePlanes(pool: pool) { planes in
            for plane in planes {
                let bytes = plane.width * plane.bytesPerPixel
                if vertical {
                    slices.run(rows: plane.height / 2) { rows in
                        for y in rows { swapRows(plane.row(y), plane.row(plane.height - 1 - y), count: bytes) }
                    }
                } else {
                    slices.run(rows: plane.height) { rows in
                        for y in rows { mirror(plane.row(y), pixels: plane.width, bytesPerPixel: plane.bytesPerPixel) }
                    }
                }
            }
        }
        return frame
    }

    func release() { pool = nil }
}

private func swapRows(_ a: UnsafeMutablePointer<UInt8>, _ b: UnsafeMutablePointer<UInt8>, count: Int) {
    for i in 0..<count {
        let t = a[i]
        a[i] = b[i]
        b[i] = t
    }
}

/// Reverses the order of the pixels of one row (each pixel's bytes stay in order).
private func mirror(_ row: UnsafeMutablePointer<UInt8>, pixels: Int, bytesPerPixel c: Int) {
    var left = 0, right = pixels - 1
    while left < right {
        for k in 0..<c {
            let t = row[left * c + k]
            row[left * c + k] = row[right * c + k]
            row[right * c + k] = t
        }
        left += 1
        right -= 1
    }
}

/// The stage of `rotate`: quarter turns by exact index mapping (in 32×32 tiles for the transposing ones),
/// other angles by bilinear sampling about the centre; output buffers come from a pool.
final class RotateProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let degrees: Double
    let slices: SliceRunner
    /// Quarter turns clockwise when the angle is a multiple of 90°, else nil.
    private let quarterTurns: Int?
    private var pool: BufferPool?
    private var fill: [[UInt8]] = []

    init(degrees: Double, slices: SliceRunner) {
        self.degrees = degrees
        self.slices = slices
        quarterTurns = degrees.truncatingRemainder(dividingBy: 90) == 0 ? ((Int(degrees) / 90) % 4 + 4) % 4 : nil
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        var output = input
        if quarterTurns == 1 || quarterTurns == 3 {
            output.width = input.height
            output.height = input.width
        }
        pool = BufferPool(format: input.pixelFormat, width: output.width, height: output.height, capacity: 4)
        let format = input.pixelFormat
        // Black in every plane: (16, 128, 128) for limited-range YUV, (0, 128, 128) full range, opaque black for RGB.
        fill = (0..<format.planeCount).map { index in
            if format.isYUV { return index == 0 ? [input.color.range == .limited ? 16 : 0] : [128, 128] }
            return format.isRGB ? [0, 0, 0, 255] : [0]
        }
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "rotate")
        guard let pool else { return frame }
        if quarterTurns == 0 { return frame }
        let source = frame
        var output = VideoFrame(buffer: pool.makeBuffer(), metadataFrom: source)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() {
                let plane = source.plane(index)
                if let turns = quarterTurns {
                    slices.run(rows: target.height) { rows in quarterTurn(plane, into: target, turns: turns, rows: rows) }
                } else {
                    let fill = self.fill[index]
                    let radians = degrees * .pi / 180
                    slices.run(rows: target.height) { rows in
                        rotateBilinear(plane, into: target, radians: radians, fill: fill, rows: rows)
                    }
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() { pool = nil }
}

/// Output rows `rows` of `source` turned clockwise `turns` quarter turns. Output pixel (x, y) reads source
/// pixel (sx + x·dx + y·ex, sy + x·dy + y·ey); the walk is done in 32×32 tiles so the column-wise reads of the
/// transposing turns stay in cache.
private func quarterTurn(_ source: Plane, into target: Plane, turns: Int, rows: Range<Int>) {
    let c = source.bytesPerPixel
    let lastX = source.width - 1, lastY = source.height - 1
    // (origin x, origin y, step of x per output x, of y per output x, of x per output y, of y per output y)
    let (ox, oy, dxx, dyx, dxy, dyy) = switch turns {
    case 1: (0, lastY, 0, -1, 1, 0)
    case 2: (lastX, lastY, -1, 0, 0, -1)
    default: (lastX, 0, 0, 1, -1, 0)
    }
    let pixelStep = dxx * c + dyx * source.bytesPerRow
    let tile = 32
    var y0 = rows.lowerBound
    while y0 < rows.upperBound {
        let y1 = min(y0 + tile, rows.upperBound)
        var x0 = 0
        while x0 < target.width {
            let x1 = min(x0 + tile, target.width)
            for y in y0..<y1 {
                let output = target.row(y)
                var input = UnsafePointer(source.baseAddress) + (ox + x0 * dxx + y * dxy) * c
                    + (oy + x0 * dyx + y * dyy) * source.bytesPerRow
                if c == 1 {
                    for x in x0..<x1 {
                        output[x] = input[0]
                        input += pixelStep
                    }
                } else {
                    for x in x0..<x1 {
                        for k in 0..<c { output[x * c + k] = input[k] }
                        input += pixelStep
                    }
                }
            }
            x0 = x1
        }
        y0 = y1
    }
}

/// Output rows `rows` of `source` rotated clockwise by `radians` about the centre, bilinear; samples whose
/// source position falls outside the plane get `fill`.
private func rotateBilinear(_ source: Plane, into target: Plane, radians: Double, fill: [UInt8], rows: Range<Int>) {
    let c = source.bytesPerPixel
    let cosine = Float(cos(radians)), sine = Float(sin(radians))
    let width = Float(source.width), height = Float(source.height)
    let maxX = source.width - 1, maxY = source.height - 1
    for y in rows {
        let output = target.row(y)
        let v = Float(y) + 0.5 - Float(target.height) / 2
        for x in 0..<target.width {
            let u = Float(x) + 0.5 - Float(target.width) / 2
            // Inverse of the clockwise rotation (y points down), back to pixel-centre coordinates.
            let sx = u * cosine + v * sine + width / 2 - 0.5
            let sy = -u * sine + v * cosine + height / 2 - 0.5
            guard sx >= -0.5, sy >= -0.5, sx <= width - 0.5, sy <= height - 0.5 else {
                for k in 0..<c { output[x * c + k] = fill[k] }
                continue
            }
            let fx = sx.rounded(.down), fy = sy.rounded(.down)
            let tx = sx - fx, ty = sy - fy
            let x0 = min(max(Int(fx), 0), maxX), x1 = min(max(Int(fx) + 1, 0), maxX)
            let y0 = min(max(Int(fy), 0), maxY), y1 = min(max(Int(fy) + 1, 0), maxY)
            let top = source.row(y0), bottom = source.row(y1)
            for k in 0..<c {
                let a = Float(top[x0 * c + k]), b = Float(top[x1 * c + k])
                let d = Float(bottom[x0 * c + k]), e = Float(bottom[x1 * c + k])
                let upper = a + (b - a) * tx, lower = d + (e - d) * tx
                output[x * c + k] = UInt8(min(max(upper + (lower - upper) * ty + 0.5, 0), 255))
            }
        }
    }
}
