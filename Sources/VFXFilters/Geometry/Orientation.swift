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
/// 8×8 byte-block transposes, four at once, on planes of one byte per sample, in 32×32 tiles otherwise), other angles by bilinear
/// sampling about the centre; output buffers come from a pool.
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

/// Output rows `rows` of a plane of one byte per sample turned a quarter turn clockwise (or counter-clockwise). The
/// source is read as 8×8 blocks, four side by side at once: row j of the four blocks is one 32-byte load, kept as four
/// 64-bit lanes, so the transpose (three rounds of masked swaps between rows 4, 2 and 1 apart) runs on all four blocks
/// lane by lane with no shuffles; each lane of each result is one 8-byte output row (byte-reversed for the clockwise
/// turn). Output rows left over below a multiple of 32 take the same steps one block at a time; the columns that do not
/// fill a block go through `quarterTurn`. Exact.
private func quarterTurnBytes(_ source: Plane, into target: Plane, clockwise: Bool, rows: Range<Int>) {
    let lastX = source.width - 1, lastY = source.height - 1
    let blockRowsEnd = rows.lowerBound + rows.count / 8 * 8
    let blockColumnsEnd = target.width / 8 * 8
    let sourceBase = UnsafeRawPointer(source.baseAddress), stride = source.bytesPerRow
    /// Stores the transposed column `column` of the source (a whole output row of 8 samples) at output column x0.
    @inline(__always) func store(_ bytes: UInt64, column: Int, x0: Int) {
        let (row, value) = clockwise ? (column, bytes.byteSwapped) : (lastX - column, bytes)
        UnsafeMutableRawPointer(target.row(row) + x0).storeBytes(of: value, as: UInt64.self)
    }
    var x0 = 0
    while x0 < blockColumnsEnd {
        // Source rows sy…sy+7 make output columns x0…x0+7.
        let sy = clockwise ? lastY - x0 - 7 : x0
        let rowsStart = sourceBase + sy * stride
        var y0 = rows.lowerBound
        while y0 + 32 <= blockRowsEnd {
            // Output rows y0…y0+31 are source columns sx…sx+31.
            let sx = clockwise ? y0 : lastX - y0 - 31
            let block = rowsStart + sx
            var r = blockRows(block, stride: stride, as: SIMD4<UInt64>.self)
            transposeBytes(&r)
            // Lane L of r_i: source column sx + 8L + i, byte j from source row sy + j.
            for lane in 0..<4 {
                let column = sx + 8 * lane
                store(r.0[lane], column: column, x0: x0)
                store(r.1[lane], column: column + 1, x0: x0)
                store(r.2[lane], column: column + 2, x0: x0)
                store(r.3[lane], column: column + 3, x0: x0)
                store(r.4[lane], column: column + 4, x0: x0)
                store(r.5[lane], column: column + 5, x0: x0)
                store(r.6[lane], column: column + 6, x0: x0)
                store(r.7[lane], column: column + 7, x0: x0)
            }
            y0 += 32
        }
        while y0 < blockRowsEnd {
            let sx = clockwise ? y0 : lastX - y0 - 7
            let block = rowsStart + sx
            var r = blockRows(block, stride: stride, as: UInt64.self)
            transposeBytes(&r)
            store(r.0, column: sx, x0: x0)
            store(r.1, column: sx + 1, x0: x0)
            store(r.2, column: sx + 2, x0: x0)
            store(r.3, column: sx + 3, x0: x0)
            store(r.4, column: sx + 4, x0: x0)
            store(r.5, column: sx + 5, x0: x0)
            store(r.6, column: sx + 6, x0: x0)
            store(r.7, column: sx + 7, x0: x0)
            y0 += 8
        }
        x0 += 8
    }
    let turns = clockwise ? 1 : 3
    if blockColumnsEnd < target.width {
        quarterTurn(source, into: target, turns: turns, rows: rows.lowerBound..<blockRowsEnd, columns: blockColumnsEnd..<target.width)
    }
    if blockRowsEnd < rows.upperBound {
        quarterTurn(source, into: target, turns: turns, rows: blockRowsEnd..<rows.upperBound, columns: 0..<target.width)
    }
}

/// Eight rows of 8×8 byte blocks, one 64-bit word per block and row: `UInt64` for one block, `SIMD4<UInt64>` for four
/// side by side.
private protocol ByteBlockRow: BitwiseCopyable {
    /// Exchanges the bytes of `a` at the positions `mask` leaves out with the bytes of `b` `shift` bits lower: one
    /// round of an 8×8 byte transpose.
    static func swapBlocks(_ a: inout Self, _ b: inout Self, shift: UInt64, mask: UInt64)
}

extension UInt64: ByteBlockRow {
    @inline(__always) fileprivate static func swapBlocks(_ a: inout UInt64, _ b: inout UInt64, shift: UInt64, mask: UInt64) {
        let t = ((a >> shift) ^ b) & mask
        b ^= t
        a ^= t << shift
    }
}

extension SIMD4: ByteBlockRow where Scalar == UInt64 {
    @inline(__always) fileprivate static func swapBlocks(_ a: inout Self, _ b: inout Self, shift: UInt64, mask: UInt64) {
        let t = ((a &>> shift) ^ b) & mask
        b ^= t
        a ^= t &<< shift
    }
}

/// Rows 0…7 (`stride` bytes apart) of the block(s) at `block`.
@inline(__always)
private func blockRows<Row: ByteBlockRow>(_ block: UnsafeRawPointer, stride: Int, as: Row.Type)
    -> (Row, Row, Row, Row, Row, Row, Row, Row) {
    (block.loadUnaligned(as: Row.self), block.loadUnaligned(fromByteOffset: stride, as: Row.self),
     block.loadUnaligned(fromByteOffset: 2 * stride, as: Row.self), block.loadUnaligned(fromByteOffset: 3 * stride, as: Row.self),
     block.loadUnaligned(fromByteOffset: 4 * stride, as: Row.self), block.loadUnaligned(fromByteOffset: 5 * stride, as: Row.self),
     block.loadUnaligned(fromByteOffset: 6 * stride, as: Row.self), block.loadUnaligned(fromByteOffset: 7 * stride, as: Row.self))
}

/// Transposes 8×8 byte blocks in place: three rounds of masked swaps between rows 4, 2 and 1 apart. Afterwards byte j
/// of row i is byte i of source row j.
@inline(__always)
private func transposeBytes<Row: ByteBlockRow>(_ r: inout (Row, Row, Row, Row, Row, Row, Row, Row)) {
    Row.swapBlocks(&r.0, &r.4, shift: 32, mask: 0x0000_0000_FFFF_FFFF)
    Row.swapBlocks(&r.1, &r.5, shift: 32, mask: 0x0000_0000_FFFF_FFFF)
    Row.swapBlocks(&r.2, &r.6, shift: 32, mask: 0x0000_0000_FFFF_FFFF)
    Row.swapBlocks(&r.3, &r.7, shift: 32, mask: 0x0000_0000_FFFF_FFFF)
    Row.swapBlocks(&r.0, &r.2, shift: 16, mask: 0x0000_FFFF_0000_FFFF)
    Row.swapBlocks(&r.1, &r.3, shift: 16, mask: 0x0000_FFFF_0000_FFFF)
    Row.swapBlocks(&r.4, &r.6, shift: 16, mask: 0x0000_FFFF_0000_FFFF)
    Row.swapBlocks(&r.5, &r.7, shift: 16, mask: 0x0000_FFFF_0000_FFFF)
    Row.swapBlocks(&r.0, &r.1, shift: 8, mask: 0x00FF_00FF_00FF_00FF)
    Row.swapBlocks(&r.2, &r.3, shift: 8, mask: 0x00FF_00FF_00FF_00FF)
    Row.swapBlocks(&r.4, &r.5, shift: 8, mask: 0x00FF_00FF_00FF_00FF)
    Row.swapBlocks(&r.6, &r.7, shift: 8, mask: 0x00FF_00FF_00FF_00FF)
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
