#if arch(x86_64) && VFX_HASWELL
import _Builtin_intrinsics.intel
#endif
import VFXCore
import VFXPipeline

/// The stage of the generators (`checkerboard`, `linear-gradient`, `radial-gradient`): it writes the picture straight
/// into the output frame's planes, in the frame's own pixel format, and never reads the input's pixels.
///
/// - I420 and NV12: each pixel's R'G'B' is converted with the frame's Y'CbCr coding (`YUVCoding` of its colour
///   description); luma per pixel, each chroma sample from the mean R'G'B' of its 2×2 block (a block on an odd
///   right or bottom edge has fewer pixels), as converting an RGB picture with box-filtered 4:2:0 chroma gives.
/// - RGBA and BGRA: bytes in their order, alpha 255. Gray frames come out RGBA (full range, the input's matrix),
///   since a generator makes colour.
///
/// The kernel is chosen in `configure` (`GeneratorPattern.writer(for:)`): a checkerboard is two kinds of rows
/// copied from rows made once; a gradient evaluates t 16 pixels at a time in SIMD floats (AVX where VideoFX is built for
/// Haswell), fills rows whose t is constant (a vertical ramp) and copies rows that mirror others (a radial ramp centred
/// on a row edge). Rows are split over `slices`. The output is the input's buffer when nothing else shares it, else a
/// buffer from a pool.
///
/// ```swift
/// let stage = GeneratorProcessor(name: "checkerboard", pattern: Checkerboard(first: .one, second: .zero, size: 40,
///                                origin: .zero), slices: SliceRunner(threads: 1))
/// let output = try stage.configure(for: FrameFormat(pixelFormat: .i420, width: 1920, height: 1080))
/// ```
final class GeneratorProcessor: VideoProcessor {
    let name: String
    let pattern: any GeneratorPattern
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var output: FrameFormat?
    private var writer: (any GeneratorWriter)?
    private var pool: BufferPool?

    init(name: String, pattern: any GeneratorPattern, slices: SliceRunner) {
        self.name = name
        self.pattern = pattern
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        let output = input.colorCapable
        configured = input
        self.output = output
        writer = pattern.writer(for: output)
        pool = BufferPool(format: output.pixelFormat, width: output.width, height: output.height, capacity: 3)
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let output, let writer, let pool else { return frame }
        var result = frame
        if result.format != output.pixelFormat {
            result = VideoFrame(buffer: pool.makeBuffer(), metadataFrom: result)
            result.color = output.color
        } else if !result.isUniquelyReferenced() {
            result.replaceBuffer(pool.makeBuffer())
        }
        let slices = self.slices
        result.withMutablePlanes { planes in writer.write(planes, slices: slices) }
        return result
    }

    func release() {
        writer = nil
        pool = nil
    }
}

/// A picture a generator draws, made ready for one output format (pixel format, size, colour description).
protocol GeneratorPattern: Sendable {
    /// The kernel that writes the picture into frames of `format` (never gray8: gray frames come out RGBA).
    func writer(for format: FrameFormat) -> any GeneratorWriter
}

/// Writes a whole picture into a frame's planes (rows split with `slices`).
protocol GeneratorWriter: Sendable {
    func write(_ planes: [Plane], slices: SliceRunner)
}

/// A float colour channel in 0…1 as the rounded byte the RGBA kernels store.
private func byte(_ value: Float) -> UInt8 { UInt8((value * 255).rounded().clamped(0, 255)) }

// MARK: - Checkerboard

/// Squares of two colours: the square containing (x + ½ − ox, y + ½ − oy) with ⌊·/size⌋ summing to an even number
/// is `first`, else `second` (`origin` in frame pixels).
///
/// Every row is one of two rows (the square row's parity), and every 4:2:0 chroma row one of four (the parities of
/// its two frame rows), so the writer makes those rows once and copies them.
struct Checkerboard: GeneratorPattern {
    let first: SIMD3<Float>, second: SIMD3<Float>
    let size: Double, origin: SIMD2<Double>

    /// 0 or 1: the parity of ⌊(p + ½ − o) / size⌋.
    func parity(_ p: Int, _ o: Double) -> Int { Int(((Double(p) + 0.5 - o) / size).rounded(.down)) & 1 }

    func writer(for format: FrameFormat) -> any GeneratorWriter {
        let (width, height) = (format.width, format.height)
        let columns = (0..<width).map { parity($0, origin.x) }
        let rowParity = (0..<height).map { UInt8(parity($0, origin.y)) }
        func color(_ x: Int, row: Int) -> SIMD3<Float> { columns[x] ^ row == 0 ? first : second }
        guard format.pixelFormat.isYUV else {
            let rows = (0..<2).map { row in
                (0..<width).flatMap { x -> [UInt8] in
                    let c = color(x, row: row)
                    var pixel: [UInt8] = [byte(c.x), byte(c.y), byte(c.z), 255]
                    if format.pixelFormat == .bgra { pixel.swapAt(0, 2) }
                    return pixel
                }
            }
            return RowCopies(rowParity: rowParity, lumaRows: rows, chromaRows: [], layout: .packed)
        }
        let coding = YUVCoding(format.color)
        func code(_ value: Float) -> UInt8 { UInt8(value.rounded().clamped(0, 255)) }
        let lumaRows = (0..<2).map { row in (0..<width).map { x in code(coding.codes(color(x, row: row)).x) } }
        // Chroma rows by (top parity, bottom parity): Cb then Cr (I420), or Cb, Cr pairs (NV12).
        let chromaWidth = (width + 1) / 2
        let interleaved = format.pixelFormat == .nv12
        let chromaRows = (0..<4).map { kind -> [UInt8] in
            let rows = [kind >> 1, kind & 1]
            let samples = (0..<chromaWidth).map { cx -> SIMD3<Float> in
                let xs = [2 * cx, min(2 * cx + 1, width - 1)]
                let sum = rows.flatMap { row in xs.map { color($0, row: row) } }.reduce(SIMD3<Float>.zero, +)
                return coding.codes(sum / 4)
            }
            return interleaved ? samples.flatMap { [code($0.y), code($0.z)] } : samples.map { code($0.y) } + samples.map { code($0.z) }
        }
        return RowCopies(rowParity: rowParity, lumaRows: lumaRows, chromaRows: chromaRows,
                         layout: interleaved ? .interleavedChroma : .separateChroma)
    }
}

/// How a writer lays out what it stores: packed RGBA/BGRA (one plane), or luma plus 4:2:0 chroma in two planes
/// (I420) or one interleaved plane (NV12).
enum GeneratorLayout: Sendable {
    case packed, separateChroma, interleavedChroma
}

/// A picture whose frame rows are each a copy of one of two rows (`lumaRows[rowParity[y]]`: luma, or packed pixels),
/// and whose chroma rows are each one of four (`chromaRows[2·top parity + bottom parity]`).
struct RowCopies: GeneratorWriter {
    let rowParity: [UInt8]
    let lumaRows: [[UInt8]]
    let chromaRows: [[UInt8]]
    let layout: GeneratorLayout

    func write(_ planes: [Plane], slices: SliceRunner) {
        let (rowParity, lumaRows, chromaRows) = (self.rowParity, self.lumaRows, self.chromaRows)
        let height = rowParity.count
        let main = planes[0]
        let rowBytes = main.width * main.bytesPerPixel
        @inline(__always) func copyRow(_ y: Int) {
            lumaRows[Int(rowParity[y])].withUnsafeBufferPointer { main.row(y).update(from: $0.baseAddress!, count: rowBytes) }
        }
        guard layout != .packed else {
            slices.run(rows: height) { rows in
                for y in rows { copyRow(y) }
            }
            return
        }
        let chromaWidth = planes[1].width
        slices.run(rows: (height + 1) / 2) { rows in
            for cy in rows {
                let top = 2 * cy, bottom = min(2 * cy + 1, height - 1)
                copyRow(top)
                if bottom != top { copyRow(bottom) }
                chromaRows[2 * Int(rowParity[top]) + Int(rowParity[bottom])].withUnsafeBufferPointer { source in
                    let samples = source.baseAddress!
                    if layout == .interleavedChroma {
                        planes[1].row(cy).update(from: samples, count: 2 * chromaWidth)
                    } else {
                        planes[1].row(cy).update(from: samples, count: chromaWidth)
                        planes[2].row(cy).update(from: samples + chromaWidth, count: chromaWidth)
                    }
                }
            }
        }
    }
}

// MARK: - Gradients

/// Where a gradient is along a frame row: t clamped to 0…1 at pixel centres, 8 pixels at a time.
protocol RampShape: Sendable {
    /// What a row needs, computed once per row.
    associatedtype Row
    func row(_ y: Int) -> Row
    /// clamp(t, 0, 1) at the centres of the pixels whose x (column numbers, as floats) are `x`.
    func values(_ row: Row, x: SIMD8<Float>) -> SIMD8<Float>
    /// clamp(t, 0, 1) when it is the same all along the row, else nil.
    func constant(_ row: Row) -> Float?
    /// c when frame rows y and 2c − 1 − y have the same values (a row of pixel edges the ramp is symmetric about, inside
    /// a frame of `height` rows), else nil.
    func mirrorAxis(height: Int) -> Int?
}

/// A gradient's shape. (An enum, so the writer picks the concrete shape once per frame and its loops are
/// specialized for it, though the processor holds the writer as an existential.)
enum Ramp: Sendable {
    case linear(LinearRamp)
    case radial(RadialRamp)
}

/// t = ((p − start)·(end − start)) / |end − start|² at pixel centres p (frame pixels): affine along a row, so each row
/// is its value at x = 0 plus x times one step (constant rows when the ramp runs straight down).
struct LinearRamp: RampShape {
    let start: SIMD2<Double>, axis: SIMD2<Double>, length2: Double
    /// t from one pixel to the next along a row.
    let step: Float

    init(start: SIMD2<Double>, end: SIMD2<Double>) {
        self.start = start
        axis = end - start
        length2 = max((axis * axis).sum(), 1e-12)
        step = Float(axis.x / length2)
    }

    /// t at (x + ½, y + ½), in Double (the definition).
    func t(x: Double, y: Double) -> Double { ((SIMD2(x + 0.5, y + 0.5) - start) * axis).sum() / length2 }

    /// t at the row's first pixel.
    @inline(__always) func row(_ y: Int) -> Float { Float(t(x: 0, y: Double(y))) }

    @inline(__always) func values(_ row: Float, x: SIMD8<Float>) -> SIMD8<Float> {
        RampLanes.unitClamped(SIMD8(repeating: row).addingProduct(x, step))
    }

    @inline(__always) func constant(_ row: Float) -> Float? { step == 0 ? min(max(row, 0), 1) : nil }

    func mirrorAxis(height: Int) -> Int? { nil }
}

/// t = (|p − center| − inner) / (outer − inner) at pixel centres p (frame pixels).
struct RadialRamp: RampShape {
    let center: SIMD2<Double>, inner: Double, span: Double
    /// t = radius·scale − offset; dx of pixel 0.
    let scale: Float, offset: Float, firstX: Float

    init(center: SIMD2<Double>, inner: Double, outer: Double) {
        self.center = center
        self.inner = inner
        span = outer > inner ? outer - inner : 1e-9
        scale = Float(1 / span)
        offset = Float(inner / span)
        firstX = Float(0.5 - center.x)
    }

    /// dy² of the row.
    @inline(__always) func row(_ y: Int) -> Float {
        let dy = Double(y) + 0.5 - center.y
        return Float(dy * dy)
    }

    @inline(__always) func values(_ dy2: Float, x: SIMD8<Float>) -> SIMD8<Float> {
        let dx = x + firstX
        let radius = RampLanes.squareRoots(SIMD8(repeating: dy2).addingProduct(dx, dx))
        return RampLanes.unitClamped(SIMD8(repeating: -offset).addingProduct(radius, scale))
    }

    @inline(__always) func constant(_ dy2: Float) -> Float? { nil }

    /// The centre's row, when it lies on an edge between pixel rows: dy of rows y and 2c − 1 − y are opposite.
    func mirrorAxis(height: Int) -> Int? {
        center.y == center.y.rounded() && center.y >= 1 && center.y < Double(height) ? Int(center.y) : nil
    }
}

/// A ramp from `first` (t = 0) to `second` (t = 1): R'G'B' = first + (second − first)·t.
struct Gradient: GeneratorPattern {
    let ramp: Ramp
    let first: SIMD3<Float>, second: SIMD3<Float>

    func writer(for format: FrameFormat) -> any GeneratorWriter {
        // Every stored channel is affine in t: luma and chroma codes as the coding's matrix is linear, bytes of R'G'B'.
        // Both ends are within 0…255, so every value between them is, and the kernels round without clamping.
        func clamped(_ v: SIMD3<Float>) -> SIMD3<Float> { v.replacing(with: 0, where: v .< 0).replacing(with: 255, where: v .> 255) }
        if format.pixelFormat.isYUV {
            let coding = YUVCoding(format.color)
            let base = clamped(coding.codes(first)), end = clamped(coding.codes(second))
            return GradientWriter(ramp: ramp, width: format.width, height: format.height, base: base, gain: end - base,
                                  layout: format.pixelFormat == .nv12 ? .interleavedChroma : .separateChroma)
        }
        var base = clamped(first * 255), end = clamped(second * 255)
        if format.pixelFormat == .bgra {
            base = SIMD3(base.z, base.y, base.x)
            end = SIMD3(end.z, end.y, end.x)
        }
        return GradientWriter(ramp: ramp, width: format.width, height: format.height, base: base, gain: end - base, layout: .packed)
    }
}

/// Writes a gradient, each stored channel as `base + gain·t`. Packed pixels: channel k is byte k, alpha 255, 16 pixels
/// at a time. YUV: the two frame rows of a chroma row together, 16 columns at a time: luma per pixel, and per 2×2
/// block Cb and Cr from the block's mean t (the mean R'G'B', as R'G'B' is affine in t). Rows whose t is constant
/// are filled with their one value.
struct GradientWriter: GeneratorWriter {
    let ramp: Ramp
    let width: Int, height: Int
    let base: SIMD3<Float>, gain: SIMD3<Float>
    let layout: GeneratorLayout

    func write(_ planes: [Plane], slices: SliceRunner) {
        switch ramp {
        case .linear(let shape): write(planes, slices: slices, shape: shape)
        case .radial(let shape): write(planes, slices: slices, shape: shape)
        }
    }

    /// Rows in units: frame rows (packed pixels) or chroma rows with their two frame rows (YUV). When the ramp has a
    /// mirror row (`RampShape.mirrorAxis`), the units past it whose mirror image is a whole unit are copied from it
    /// in a second pass (half the work for a radial gradient centred on the frame).
    private func write<Shape: RampShape>(_ planes: [Plane], slices: SliceRunner, shape: Shape) {
        let packed = layout == .packed
        let units = packed ? height : (height + 1) / 2
        // Unit u is the mirror image of unit `axis − u`.
        var axis = 0, copied = 0..<0
        if let center = shape.mirrorAxis(height: height) {
            axis = packed ? 2 * center - 1 : center - 1
            let last = min(axis, packed ? height - 1 : height / 2 - 1)
            if axis / 2 + 1 <= last { copied = (axis / 2 + 1)..<(last + 1) }
        }
        let chromaWidth = (width + 1) / 2
        slices.run(rows: units - copied.count) { range in
            for index in range {
                let unit = index < copied.lowerBound ? index : index + copied.count
                if packed {
                    let row = shape.row(unit), target = planes[0].row(unit)
                    if let t = shape.constant(row) {
                        fillPackedRow(target, t: t)
                    } else {
                        packedRow(target, shape: shape, row: row)
                    }
                    continue
                }
                let top = 2 * unit, bottom = min(2 * unit + 1, height - 1)
                let cbRow = planes[1].row(unit), crRow = planes[planes.count - 1].row(unit)
                let upper = shape.row(top), lower = shape.row(bottom)
                if let t = shape.constant(upper), let u = shape.constant(lower) {
                    fillRows(planes[0].row(top), planes[0].row(bottom), cbRow, crRow, upper: t, lower: u, chromaWidth: chromaWidth)
                } else {
                    yuvRows(planes[0].row(top), planes[0].row(bottom), cbRow, crRow, shape: shape, upper: upper, lower: lower,
                            chromaWidth: chromaWidth)
                }
            }
        }
        guard !copied.isEmpty else { return }
        slices.run(rows: copied.count) { range in
            for index in range {
                let unit = copied.lowerBound + index, source = axis - unit
                if packed {
                    planes[0].row(unit).update(from: planes[0].row(source), count: 4 * width)
                    continue
                }
                // Frame row 2u mirrors 2·source + 1, and 2u + 1 mirrors 2·source; the block's chroma is the same.
                planes[0].row(2 * unit).update(from: planes[0].row(2 * source + 1), count: width)
                planes[0].row(2 * unit + 1).update(from: planes[0].row(2 * source), count: width)
                if layout == .interleavedChroma {
                    planes[1].row(unit).update(from: planes[1].row(source), count: 2 * chromaWidth)
                } else {
                    planes[1].row(unit).update(from: planes[1].row(source), count: chromaWidth)
                    planes[2].row(unit).update(from: planes[2].row(source), count: chromaWidth)
                }
            }
        }
    }

    /// Column numbers 0…7 as floats.
    private static var firstColumns: SIMD8<Float> { SIMD8(0, 1, 2, 3, 4, 5, 6, 7) }

    @inline(__always)
    private func packedRow<Shape: RampShape>(_ target: UnsafeMutablePointer<UInt8>, shape: Shape, row: Shape.Row) {
        let pixels = UnsafeMutableRawPointer(target)
        var columns = Self.firstColumns
        var x = 0
        while x < width {
            let t = SIMD16(lowHalf: shape.values(row, x: columns), highHalf: shape.values(row, x: columns + 8))
            // Values in 0…255 plus 2²³: the rounded integer sits in the low mantissa bits.
            @inline(__always) func channel(_ k: Int) -> SIMD16<UInt32> {
                unsafeBitCast(SIMD16(repeating: base[k]).addingProduct(t, gain[k]) + 8_388_608, to: SIMD16<UInt32>.self) & 0xFF
            }
            let packed = channel(0) | channel(1) &<< 8 | channel(2) &<< 16 | 0xFF00_0000
            let count = min(16, width - x)
            if count == 16 {
                pixels.storeBytes(of: packed, toByteOffset: 4 * x, as: SIMD16<UInt32>.self)
            } else {
                for lane in 0..<count { pixels.storeBytes(of: packed[lane], toByteOffset: 4 * (x + lane), as: UInt32.self) }
            }
            columns += 16
            x += 16
        }
    }

    /// Two frame rows (the same row twice for a last single row) and their chroma row.
    @inline(__always)
    private func yuvRows<Shape: RampShape>(_ top: UnsafeMutablePointer<UInt8>, _ bottom: UnsafeMutablePointer<UInt8>,
                                          _ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>,
                                          shape: Shape, upper: Shape.Row, lower: Shape.Row, chromaWidth: Int) {
        let interleaved = layout == .interleavedChroma
        // Chroma from the sum of a block's four t: the gains take the quarter.
        let blockGain = gain * 0.25
        var columns = Self.firstColumns
        var x = 0
        while x < width {
            var a = SIMD16(lowHalf: shape.values(upper, x: columns), highHalf: shape.values(upper, x: columns + 8))
            var b = SIMD16(lowHalf: shape.values(lower, x: columns), highHalf: shape.values(lower, x: columns + 8))
            let count = min(16, width - x)
            if count % 2 == 1 {
                // An odd width's last block has one column: it stands for both.
                a[count] = a[count - 1]
                b[count] = b[count - 1]
            }
            let (lumaTop, lumaBottom) = RampLanes.bytes(SIMD16(repeating: base.x).addingProduct(a, gain.x),
                                                        SIMD16(repeating: base.x).addingProduct(b, gain.x))
            let columnSums = a + b
            let sums = columnSums.evenHalf + columnSums.oddHalf
            let chroma = RampLanes.chromaBytes(SIMD8(repeating: base.y).addingProduct(sums, blockGain.y),
                                               SIMD8(repeating: base.z).addingProduct(sums, blockGain.z), interleaved: interleaved)
            let cx = x / 2
            if count == 16 {
                (top + x).store(lumaTop)
                (bottom + x).store(lumaBottom)
                if interleaved {
                    (cbRow + 2 * cx).store(chroma)
                } else {
                    (cbRow + cx).store(chroma.lowHalf)
                    (crRow + cx).store(chroma.highHalf)
                }
            } else {
                for lane in 0..<count {
                    top[x + lane] = lumaTop[lane]
                    bottom[x + lane] = lumaBottom[lane]
                }
                for lane in 0..<(chromaWidth - cx) {
                    if interleaved {
                        cbRow[2 * (cx + lane)] = chroma[2 * lane]
                        cbRow[2 * (cx + lane) + 1] = chroma[2 * lane + 1]
                    } else {
                        cbRow[cx + lane] = chroma[lane]
                        crRow[cx + lane] = chroma[8 + lane]
                    }
                }
            }
            columns += 16
            x += 16
        }
    }

    /// A row of packed pixels whose t is constant.
    private func fillPackedRow(_ target: UnsafeMutablePointer<UInt8>, t: Float) {
        let value = (base + gain * t).rounded(.toNearestOrAwayFromZero)
        let (red, green, blue) = (UInt32(value.x), UInt32(value.y) << 8, UInt32(value.z) << 16)
        let pixel: UInt32 = red | green | blue | 0xFF00_0000
        let pixels = UnsafeMutableRawPointer(target)
        for x in 0..<width { pixels.storeBytes(of: pixel, toByteOffset: 4 * x, as: UInt32.self) }
    }

    /// Two frame rows whose t is constant along each: each luma row one byte, the chroma row one Cb, Cr pair.
    private func fillRows(_ top: UnsafeMutablePointer<UInt8>, _ bottom: UnsafeMutablePointer<UInt8>,
                          _ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>,
                          upper: Float, lower: Float, chromaWidth: Int) {
        func code(_ channel: Int, _ t: Float) -> UInt8 { UInt8((base[channel] + gain[channel] * t).rounded()) }
        top.update(repeating: code(0, upper), count: width)
        bottom.update(repeating: code(0, lower), count: width)
        let mean = (upper + lower) / 2
        let (cb, cr) = (code(1, mean), code(2, mean))
        if layout == .interleavedChroma {
            let pair = UInt16(cb) | UInt16(cr) << 8, pairs = UnsafeMutableRawPointer(cbRow)
            for cx in 0..<chromaWidth { pairs.storeBytes(of: pair, toByteOffset: 2 * cx, as: UInt16.self) }
        } else {
            cbRow.update(repeating: cb, count: chromaWidth)
            crRow.update(repeating: cr, count: chromaWidth)
        }
    }
}

/// Clamping to 0…1, square roots, and rounding to bytes (values in 0…255, so no clamping) on eight floats: AVX instructions where VideoFX is built for Haswell (Swift's SIMD
/// comparisons become compare, mask and blend sequences, and its `squareRoot()` a scalar call per lane), the same in
/// portable Swift elsewhere.
enum RampLanes {
    #if arch(x86_64) && VFX_HASWELL
    @inline(__always) static func unitClamped(_ v: SIMD8<Float>) -> SIMD8<Float> {
        _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(1))
    }

    /// Each lane clamped to 0…`high` (also the ink effects' R'G'B' cube).
    @inline(__always) static func clamped(_ v: SIMD8<Float>, _ high: Float) -> SIMD8<Float> {
        _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(high))
    }

    /// √v from the 12-bit reciprocal root estimate (`vrsqrtps`, one cycle for eight lanes where `vsqrtps` takes six) and
    /// one Newton step: s = v·r, √v ≈ s·(1.5 − ½·s·r), relative error below 3·10⁻⁷. v is raised to 10⁻²⁰ first, so that
    /// v = 0 gives 10⁻¹⁰ rather than 0·∞.
    @inline(__always) static func squareRoots(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let value = _mm256_max_ps(v, _mm256_set1_ps(1e-20))
        let estimate = _mm256_rsqrt_ps(value)
        let root = value * estimate
        return root * (1.5 - 0.5 * root * estimate)
    }
    @inline(__always) private static func integers(_ v: SIMD8<Float>) -> __m256i { _mm256_cvtps_epi32(v) }

    /// Two rows of 16 values in 0…255, rounded to bytes: one conversion per eight, two packs and one permutation for
    /// all 32 (the packs work within 128-bit halves; the permutation puts each row's four-byte groups back in order).
    @inline(__always) static func bytes(_ a: SIMD16<Float>, _ b: SIMD16<Float>) -> (SIMD16<UInt8>, SIMD16<UInt8>) {
        let words = _mm256_packus_epi16(_mm256_packus_epi32(integers(a.lowHalf), integers(a.highHalf)),
                                        _mm256_packus_epi32(integers(b.lowHalf), integers(b.highHalf)))
        let ordered = unsafeBitCast(_mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)),
                                    to: SIMD32<UInt8>.self)
        return (ordered.lowHalf, ordered.highHalf)
    }

    /// Eight Cb and eight Cr values in 0…255, rounded to bytes: the eight Cb then the eight Cr, or (`interleaved`)
    /// Cb, Cr pairs.
    @inline(__always) static func chromaBytes(_ cb: SIMD8<Float>, _ cr: SIMD8<Float>, interleaved: Bool) -> SIMD16<UInt8> {
        let blue = integers(cb), red = integers(cr)
        let ordered: __m256i
        if interleaved {
            let pairs = _mm256_or_si256(blue, _mm256_slli_epi32(red, 8))
            let words = _mm256_packus_epi32(pairs, pairs)
            ordered = _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 1, 4, 5, 0, 1, 4, 5))
        } else {
            let words = _mm256_packus_epi32(blue, red)
            ordered = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(words, words), _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5))
        }
        return unsafeBitCast(ordered, to: SIMD32<UInt8>.self).lowHalf
    }
    #else
    @inline(__always) static func unitClamped(_ v: SIMD8<Float>) -> SIMD8<Float> { v.clamped(0, 1) }

    @inline(__always) static func clamped(_ v: SIMD8<Float>, _ high: Float) -> SIMD8<Float> { v.clamped(0, high) }

    @inline(__always) static func bytes(_ a: SIMD16<Float>, _ b: SIMD16<Float>) -> (SIMD16<UInt8>, SIMD16<UInt8>) {
        (roundedBytes(a), roundedBytes(b))
    }

    @inline(__always) static func chromaBytes(_ cb: SIMD8<Float>, _ cr: SIMD8<Float>, interleaved: Bool) -> SIMD16<UInt8> {
        let (blue, red) = (roundedBytes(cb), roundedBytes(cr))
        var bytes = SIMD16<UInt8>()
        for lane in 0..<8 {
            if interleaved {
                bytes[2 * lane] = blue[lane]
                bytes[2 * lane + 1] = red[lane]
            } else {
                bytes[lane] = blue[lane]
                bytes[8 + lane] = red[lane]
            }
        }
        return bytes
    }

    @inline(__always) static func squareRoots(_ v: SIMD8<Float>) -> SIMD8<Float> {
        var roots = SIMD8<Float>()
        for lane in 0..<8 { roots[lane] = v[lane].squareRoot() }
        return roots
    }
    #endif
}
