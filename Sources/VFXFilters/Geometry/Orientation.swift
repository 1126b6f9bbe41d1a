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
        name: "flip", family: .geometry, summary: "Mirrors the frame left-right (horizontal) or top-bottom (vertical).",
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
        name: "rotate", family: .geometry, summary: "Rotates clockwise by angle degrees (90/180/270 exact, others bilinear, black corners).",
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

/// The stage of `flip`: each output row is a straight copy of the mirrored row (vertical) or the source row with its
/// pixels reversed sixteen bytes at a time (horizontal, `reversePixels`), into a pool buffer.
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
        let source = frame
        let output = source.makeSibling(pool: pool)
        let vertical = self.vertical
        for index in 0..<source.planeCount {
            let (plane, target) = (source.plane(index), output.plane(index))
            let bytes = plane.width * plane.bytesPerPixel
            slices.run(rows: plane.height) { rows in
                for y in rows {
                    if vertical {
                        target.row(y).update(from: plane.row(plane.height - 1 - y), count: bytes)
                    } else {
                        reversePixels(plane.row(y), into: target.row(y), pixels: plane.width, bytesPerPixel: plane.bytesPerPixel)
                    }
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() { pool = nil }
}

/// Copies `pixels` pixels of `bytesPerPixel` bytes from `source` to `target` in reverse order (each pixel's bytes
/// stay in order): sixteen bytes per step with their 1-, 2- or 4-byte lanes reversed; other pixel sizes and the last
/// few pixels one by one. `source` and `target` must not overlap.
func reversePixels(_ source: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>, pixels: Int, bytesPerPixel c: Int) {
    let count = pixels * c
    var done = 0
    if c == 1 || c == 2 || c == 4 {
        // Target bytes done..<done+16 come from source bytes count−done−16..<count−done, lanes reversed.
        while done + 16 <= count {
            let block = UnsafeRawPointer(source + count - done - 16).loadUnaligned(as: SIMD16<UInt8>.self)
            var reversed = block
            switch c {
            case 1:
                for lane in 0..<16 { reversed[lane] = block[15 - lane] }
            case 2:
                let words = unsafeBitCast(block, to: SIMD8<UInt16>.self)
                var out = words
                for lane in 0..<8 { out[lane] = words[7 - lane] }
                reversed = unsafeBitCast(out, to: SIMD16<UInt8>.self)
            default:
                let words = unsafeBitCast(block, to: SIMD4<UInt32>.self)
                reversed = unsafeBitCast(SIMD4(words[3], words[2], words[1], words[0]), to: SIMD16<UInt8>.self)
            }
            (target + done).store(reversed)
            done += 16
        }
    }
    // The rest, pixel by pixel (16 bytes are whole pixels of 1, 2 or 4 bytes).
    for x in (done / c)..<pixels {
        for k in 0..<c { target[x * c + k] = source[(pixels - 1 - x) * c + k] }
    }
}

/// The stage of `rotate`: quarter turns by exact index mapping (half a turn as reversed rows; the transposing ones as
/// 16×16 byte-block transposes in registers on planes of one byte per sample, in 32×32 tiles otherwise), other angles by
/// bilinear sampling about the centre; output buffers come from a pool.
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
                switch quarterTurns {
                case 2?:
                    // Half a turn: row y is source row h − 1 − y, its pixels reversed.
                    slices.run(rows: target.height) { rows in
                        for y in rows {
                            reversePixels(plane.row(plane.height - 1 - y), into: target.row(y), pixels: plane.width,
                                          bytesPerPixel: plane.bytesPerPixel)
                        }
                    }
                case let turns? where plane.bytesPerPixel == 1:
                    slices.run(rows: target.height) { rows in quarterTurnBytes(plane, into: target, clockwise: turns == 1, rows: rows) }
                case let turns?:
                    slices.run(rows: target.height) { rows in
                        quarterTurn(plane, into: target, turns: turns, rows: rows, columns: 0..<target.width)
                    }
                case nil:
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

/// Output rows `rows` of a plane of one byte per sample turned a quarter turn clockwise (or counter-clockwise), in
/// 16×16 blocks: sixteen source rows of sixteen bytes are transposed in registers (`transposed16`), so each result is
/// sixteen consecutive bytes of one output row, one store. The clockwise turn reads the block's source rows bottom up,
/// the counter-clockwise one stores its output rows bottom up; no byte is reversed. The blocks go in tiles of 64 output
/// rows across the whole width: the 64 output rows being filled stay in the first-level cache until their lines are
/// complete, and each step reads whole 64-byte lines of 16 source rows. The rows and columns that do not fill a block
/// go through `quarterTurn`. Exact.
private func quarterTurnBytes(_ source: Plane, into target: Plane, clockwise: Bool, rows: Range<Int>) {
    let lastX = source.width - 1, lastY = source.height - 1
    let blockRowsEnd = rows.lowerBound + rows.count / 16 * 16
    let blockColumnsEnd = target.width / 16 * 16
    let sourceStride = source.bytesPerRow, targetStride = target.bytesPerRow
    let sourceBase = UnsafePointer(source.baseAddress), targetBase = target.baseAddress
    // Clockwise: output rows y… are source columns y…, output columns x0… source rows lastY − x0 upwards. Counter-
    // clockwise: output row y is source column lastX − y, output columns x0… source rows x0 downwards; each block's
    // sixteen output rows are stored bottom up.
    let readStride = clockwise ? -sourceStride : sourceStride, writeStride = clockwise ? targetStride : -targetStride
    let readStep = clockwise ? 16 : -16
    var tile = rows.lowerBound
    while tile < blockRowsEnd {
        let tileEnd = min(tile + 64, blockRowsEnd)
        var x0 = 0
        while x0 < blockColumnsEnd {
            var read = clockwise ? sourceBase + (lastY - x0) * sourceStride + tile : sourceBase + x0 * sourceStride + lastX - tile - 15
            var write = clockwise ? targetBase + tile * targetStride + x0 : targetBase + (tile + 15) * targetStride + x0
            for _ in 0..<((tileEnd - tile) / 16) {
                transposed16(from: read, stride: readStride, to: write, stride: writeStride)
                read += readStep
                write += 16 * targetStride
            }
            x0 += 16
        }
        tile = tileEnd
    }
    let turns = clockwise ? 1 : 3
    if blockColumnsEnd < target.width {
        quarterTurn(source, into: target, turns: turns, rows: rows.lowerBound..<blockRowsEnd, columns: blockColumnsEnd..<target.width)
    }
    if blockRowsEnd < rows.upperBound {
        quarterTurn(source, into: target, turns: turns, rows: blockRowsEnd..<rows.upperBound, columns: 0..<target.width)
    }
}

/// Stores the transpose of the 16×16 byte block whose rows start at `source` (`sourceStride` bytes apart, either way):
/// row j of the output, at `target` + j·`targetStride`, is byte j of each source row in order. Four rounds of
/// interleaving pairs of rows (bytes, then 16-, 32- and 64-bit lanes), written as lane selections with constant
/// indices so that each is one `punpckl`/`punpckh` instruction: 64 of them per 256 bytes.
@inline(__always)
private func transposed16(from source: UnsafePointer<UInt8>, stride sourceStride: Int, to target: UnsafeMutablePointer<UInt8>,
                          stride targetStride: Int) {
    @inline(__always) func row(_ i: Int) -> SIMD16<UInt8> { UnsafeRawPointer(source + i * sourceStride).loadUnaligned(as: SIMD16<UInt8>.self) }
    @inline(__always) func store(_ i: Int, _ v: SIMD16<UInt8>) {
        UnsafeMutableRawPointer(target + i * targetStride).storeBytes(of: v, as: SIMD16<UInt8>.self)
    }
    let a = (row(0), row(1), row(2), row(3), row(4), row(5), row(6), row(7),
             row(8), row(9), row(10), row(11), row(12), row(13), row(14), row(15))
    // Bytes of rows 2i and 2i + 1 interleaved.
    let b = (zip8(a.0, a.1, high: false), zip8(a.0, a.1, high: true), zip8(a.2, a.3, high: false), zip8(a.2, a.3, high: true),
             zip8(a.4, a.5, high: false), zip8(a.4, a.5, high: true), zip8(a.6, a.7, high: false), zip8(a.6, a.7, high: true),
             zip8(a.8, a.9, high: false), zip8(a.8, a.9, high: true), zip8(a.10, a.11, high: false), zip8(a.10, a.11, high: true),
             zip8(a.12, a.13, high: false), zip8(a.12, a.13, high: true), zip8(a.14, a.15, high: false), zip8(a.14, a.15, high: true))
    // Byte pairs of four rows interleaved.
    let c = (zip16(b.0, b.2, high: false), zip16(b.0, b.2, high: true), zip16(b.1, b.3, high: false), zip16(b.1, b.3, high: true),
             zip16(b.4, b.6, high: false), zip16(b.4, b.6, high: true), zip16(b.5, b.7, high: false), zip16(b.5, b.7, high: true),
             zip16(b.8, b.10, high: false), zip16(b.8, b.10, high: true), zip16(b.9, b.11, high: false), zip16(b.9, b.11, high: true),
             zip16(b.12, b.14, high: false), zip16(b.12, b.14, high: true), zip16(b.13, b.15, high: false), zip16(b.13, b.15, high: true))
    // Four-byte groups of eight rows interleaved: each half of d_i holds one column of eight rows.
    let d = (zip32(c.0, c.4, high: false), zip32(c.0, c.4, high: true), zip32(c.1, c.5, high: false), zip32(c.1, c.5, high: true),
             zip32(c.2, c.6, high: false), zip32(c.2, c.6, high: true), zip32(c.3, c.7, high: false), zip32(c.3, c.7, high: true),
             zip32(c.8, c.12, high: false), zip32(c.8, c.12, high: true), zip32(c.9, c.13, high: false), zip32(c.9, c.13, high: true),
             zip32(c.10, c.14, high: false), zip32(c.10, c.14, high: true), zip32(c.11, c.15, high: false), zip32(c.11, c.15, high: true))
    store(0, zip64(d.0, d.8, high: false)); store(1, zip64(d.0, d.8, high: true))
    store(2, zip64(d.1, d.9, high: false)); store(3, zip64(d.1, d.9, high: true))
    store(4, zip64(d.2, d.10, high: false)); store(5, zip64(d.2, d.10, high: true))
    store(6, zip64(d.3, d.11, high: false)); store(7, zip64(d.3, d.11, high: true))
    store(8, zip64(d.4, d.12, high: false)); store(9, zip64(d.4, d.12, high: true))
    store(10, zip64(d.5, d.13, high: false)); store(11, zip64(d.5, d.13, high: true))
    store(12, zip64(d.6, d.14, high: false)); store(13, zip64(d.6, d.14, high: true))
    store(14, zip64(d.7, d.15, high: false)); store(15, zip64(d.7, d.15, high: true))
}

/// The bytes of the low (or high) halves of `a` and `b`, interleaved: a0 b0 a1 b1 …
@inline(__always) private func zip8(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>, high: Bool) -> SIMD16<UInt8> {
    high ? SIMD16(a[8], b[8], a[9], b[9], a[10], b[10], a[11], b[11], a[12], b[12], a[13], b[13], a[14], b[14], a[15], b[15])
         : SIMD16(a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3], a[4], b[4], a[5], b[5], a[6], b[6], a[7], b[7])
}

/// As `zip8`, on 16-bit lanes.
@inline(__always) private func zip16(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>, high: Bool) -> SIMD16<UInt8> {
    let (x, y) = (unsafeBitCast(a, to: SIMD8<UInt16>.self), unsafeBitCast(b, to: SIMD8<UInt16>.self))
    let zipped = high ? SIMD8(x[4], y[4], x[5], y[5], x[6], y[6], x[7], y[7]) : SIMD8(x[0], y[0], x[1], y[1], x[2], y[2], x[3], y[3])
    return unsafeBitCast(zipped, to: SIMD16<UInt8>.self)
}

/// As `zip8`, on 32-bit lanes.
@inline(__always) private func zip32(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>, high: Bool) -> SIMD16<UInt8> {
    let (x, y) = (unsafeBitCast(a, to: SIMD4<UInt32>.self), unsafeBitCast(b, to: SIMD4<UInt32>.self))
    return unsafeBitCast(high ? SIMD4(x[2], y[2], x[3], y[3]) : SIMD4(x[0], y[0], x[1], y[1]), to: SIMD16<UInt8>.self)
}

/// As `zip8`, on 64-bit lanes.
@inline(__always) private func zip64(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>, high: Bool) -> SIMD16<UInt8> {
    let (x, y) = (unsafeBitCast(a, to: SIMD2<UInt64>.self), unsafeBitCast(b, to: SIMD2<UInt64>.self))
    return unsafeBitCast(high ? SIMD2(x[1], y[1]) : SIMD2(x[0], y[0]), to: SIMD16<UInt8>.self)
}

/// Output rows `rows`, columns `columns` of `source` turned clockwise `turns` quarter turns. Output pixel (x, y) reads
/// source pixel (ox + x·dxx + y·dxy, oy + x·dyx + y·dyy); the walk is done in 32×32 tiles so the column-wise reads
/// of the transposing turns stay in cache.
private func quarterTurn(_ source: Plane, into target: Plane, turns: Int, rows: Range<Int>, columns: Range<Int>) {
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
        var x0 = columns.lowerBound
        while x0 < columns.upperBound {
            let x1 = min(x0 + tile, columns.upperBound)
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
/// source position falls outside the plane get `fill`. Along a row the source position moves by (cos, −sin) per
/// pixel: it is stepped in 32.32 fixed point (the error after 16384 steps stays below 10⁻⁵ px) and the four samples
/// are mixed with 11-bit weights in integers; the output goes in tiles of 16 × 128 so the source stays in cache.
private func rotateBilinear(_ source: Plane, into target: Plane, radians: Double, fill: [UInt8], rows: Range<Int>) {
    let c = source.bytesPerPixel
    let cosine = cos(radians), sine = sin(radians)
    let one = Double(Int64(1) << 32)
    let maxX = source.width - 1, maxY = source.height - 1
    let stepX = Int64((cosine * one).rounded()), stepY = Int64((-sine * one).rounded())
    // Inside when −½ ≤ position ≤ size − ½ on both axes.
    let lowest = -Int64(1) << 31
    let highestX = Int64(((Double(source.width) - 0.5) * one).rounded()), highestY = Int64(((Double(source.height) - 0.5) * one).rounded())
    let sourceBase = UnsafePointer(source.baseAddress), bytesPerRow = source.bytesPerRow
    /// The source position of output pixel (0, y), in 32.32 fixed point.
    func rowStart(_ y: Int) -> (Int64, Int64) {
        // Inverse of the clockwise rotation (y points down), back to pixel-centre coordinates.
        let u = 0.5 - Double(target.width) / 2, v = Double(y) + 0.5 - Double(target.height) / 2
        return (Int64(((u * cosine + v * sine + Double(source.width) / 2 - 0.5) * one).rounded()),
                Int64(((-u * sine + v * cosine + Double(source.height) / 2 - 0.5) * one).rounded()))
    }
    // Tiles of 16 rows × 128 columns, so the source samples one tile reads (a rotated rectangle) stay in cache.
    var stripStart = rows.lowerBound
    while stripStart < rows.upperBound {
        let stripEnd = min(stripStart + 16, rows.upperBound)
        var x0 = 0
        while x0 < target.width {
            let x1 = min(x0 + 128, target.width)
            for y in stripStart..<stripEnd {
                let output = target.row(y)
                let start = rowStart(y)
                var px = start.0 + Int64(x0) * stepX, py = start.1 + Int64(x0) * stepY
                var x = x0
                let raw = UnsafeRawPointer(sourceBase)
                let limitX = Int64(maxX) << 32, limitY = Int64(maxY) << 32
                while x < x1 {
                    // Eight pixels per step when all eight sit inside the plane with their right and lower neighbours
                    // (the positions are on a line, so checking the first and the last is enough): no clamping, the
                    // mix in 32-bit lanes, the same arithmetic as the pixel-by-pixel path below.
                    let lastX = px + 7 * stepX, lastY = py + 7 * stepY
                    if c == 1, x + 8 <= x1, min(px, lastX) >= 0, max(px, lastX) < limitX, min(py, lastY) >= 0, max(py, lastY) < limitY {
                        var top = SIMD8<UInt32>(), bottom = SIMD8<UInt32>(), fx = SIMD8<UInt32>(), fy = SIMD8<UInt32>()
                        for lane in 0..<8 {
                            let qx = px + Int64(lane) * stepX, qy = py + Int64(lane) * stepY
                            let offset = Int(qy >> 32) * bytesPerRow + Int(qx >> 32)
                            top[lane] = UInt32(raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
                            bottom[lane] = UInt32(raw.loadUnaligned(fromByteOffset: offset + bytesPerRow, as: UInt16.self))
                            fx[lane] = UInt32(truncatingIfNeeded: (qx >> 21) & 2047)
                            fy[lane] = UInt32(truncatingIfNeeded: (qy >> 21) & 2047)
                        }
                        let upper = (top & 0xff) &* (2048 &- fx) &+ (top &>> 8) &* fx
                        let lower = (bottom & 0xff) &* (2048 &- fx) &+ (bottom &>> 8) &* fx
                        let mixed = (upper &* (2048 &- fy) &+ lower &* fy &+ (1 << 21)) &>> 22
                        var bytes = SIMD8<UInt8>()
                        for lane in 0..<8 { bytes[lane] = UInt8(truncatingIfNeeded: mixed[lane]) }
                        (output + x).store(bytes)
                        px += 8 * stepX
                        py += 8 * stepY
                        x += 8
                        continue
                    }
                    defer {
                        px += stepX
                        py += stepY
                        x += 1
                    }
                    guard px >= lowest, py >= lowest, px <= highestX, py <= highestY else {
                        for k in 0..<c { output[x * c + k] = fill[k] }
                        continue
                    }
                    // Whole part (floor) and the fraction in 1/2048.
                    let ix = Int(px >> 32), iy = Int(py >> 32)
                    let fx = UInt32(truncatingIfNeeded: (px >> 21) & 2047), fy = UInt32(truncatingIfNeeded: (py >> 21) & 2047)
                    let left = min(max(ix, 0), maxX) * c, right = min(max(ix + 1, 0), maxX) * c
                    let top = sourceBase + min(max(iy, 0), maxY) * bytesPerRow
                    let bottom = sourceBase + min(max(iy + 1, 0), maxY) * bytesPerRow
                    for k in 0..<c {
                        let upper = UInt32(top[left + k]) * (2048 - fx) + UInt32(top[right + k]) * fx
                        let lower = UInt32(bottom[left + k]) * (2048 - fx) + UInt32(bottom[right + k]) * fx
                        output[x * c + k] = UInt8(truncatingIfNeeded: (upper * (2048 - fy) + lower * fy + (1 << 21)) >> 22)
                    }
                }
            }
            x0 = x1
        }
        stripStart = stripEnd
    }
}
