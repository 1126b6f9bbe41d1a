import VFXCore

/// A displacement in half pixels (x right, y down): (3, −1) is 1.5 pixels right and half a pixel up.
public struct HalfPixelVector: Hashable, Sendable {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    /// The whole-pixel vector `v` in half pixels.
    public init(_ v: MotionVector) {
        self.init(x: 2 * v.x, y: 2 * v.y)
    }

    /// The vector in pixels.
    public var pixels: (x: Double, y: Double) { (Double(x) / 2, Double(y) / 2) }
}

/// A block field whose vectors are in half pixels: a whole-pixel `MotionField` refined by
/// `refineToHalfPixel`. Same layout as the field it refines (`blocks`: block size, grid, origins).
///
/// ```swift
/// let refined = refineToHalfPixel(field, from: current, to: previous)
/// let v = refined[refined.blocks.column(ofX: 100), refined.blocks.row(ofY: 40)]   // half pixels
/// ```
public struct HalfPixelField: Sendable {
    /// The whole-pixel field refined (its layout; its vectors and costs as they were before refinement).
    public let blocks: MotionField
    public var vectors: [HalfPixelVector]
    /// The match cost of each block's vector (sum of absolute differences against the interpolated block).
    public var costs: [Int32]

    /// The field's own vectors, unrefined.
    public init(_ field: MotionField) {
        blocks = field
        vectors = field.vectors.map(HalfPixelVector.init)
        costs = field.costs
    }

    public subscript(column: Int, row: Int) -> HalfPixelVector {
        get { vectors[row * blocks.columns + column] }
        set { vectors[row * blocks.columns + column] = newValue }
    }

    /// The mean absolute difference per pixel of the block's match.
    public func meanCost(column: Int, row: Int) -> Float {
        Float(costs[row * blocks.columns + column]) / Float(blocks.blockSize * blocks.blockSize)
    }
}

/// Refines a forward field (blocks of `first` found in `second`) to half pixels: each block's vector becomes
/// the best of itself, its four half-pixel neighbours along the axes, and the diagonal one between the better
/// neighbour across and the better one up or down (five matches instead of eight: the same vector wherever
/// the match improves along each axis separately, as it does for smooth pictures). For the match, `second`
/// between its pixels is
/// the rounded average of its neighbours (horizontally, then vertically): cheap, and close enough to the
/// cubic that `compensateHalfPixel` uses to rank the candidates. A half-pixel vector must beat the whole
/// one by `margin` per pixel (mean absolute difference), so noise alone does not move a vector whose
/// whole-pixel match is exact: averaging lowers the noise of the interpolated block, which would otherwise
/// favour half-pixel positions. Blocks whose candidates would read outside `second` keep their vector.
///
/// ```swift
/// let field = MotionSearch().estimate(from: current, to: previous, mode: .forward)
/// let refined = refineToHalfPixel(field, from: current.plane(0), to: previous.plane(0))
/// ```
public func refineToHalfPixel(_ field: MotionField, from first: Plane, to second: Plane, margin: Float = 0.25) -> HalfPixelField {
    precondition(first.width == field.width && first.height == field.height && second.width == first.width
                 && second.height == first.height && field.blockSize == 8, "refinement needs the field's planes and 8×8 blocks")
    var refined = HalfPixelField(field)
    let allowance = Int32(margin * 64)
    let scratch = UnsafeMutablePointer<SIMD8<UInt8>>.allocate(capacity: 47)
    defer { scratch.deallocate() }
    for row in 0..<field.rows {
        let oy = field.originY(row)
        for column in 0..<field.columns {
            let ox = field.originX(column)
            let index = row * field.columns + column
            let v = field.vectors[index]
            let sx = ox + v.x, sy = oy + v.y
            // Rows sy − 1 … sy + 8 and columns sx − 1 … sx + 8 of `second` (the second loaded 8 wide at sx + 1).
            guard sx >= 1, sy >= 1, sx + 9 <= second.width, sy + 9 <= second.height else { continue }
            let best = bestHalfPixel(first.row(oy) + ox, first.bytesPerRow, second.row(sy) + sx, second.bytesPerRow,
                                     wholeCost: field.costs[index], scratch: scratch)
            if best.cost < field.costs[index] - allowance {
                refined.vectors[index] = HalfPixelVector(x: 2 * v.x + best.dx, y: 2 * v.y + best.dy)
                refined.costs[index] = best.cost
            }
        }
    }
    return refined
}

/// The best half-pixel position around `q` in the other plane for the 8×8 block at `p` (along the axes,
/// then one diagonal; `wholeCost` is the match at `q` itself): (dx, dy) in half pixels, each −1…1, and its
/// sum of absolute differences. `q`'s plane must be readable from one row and column before the block to one row
/// and column after it; `scratch` holds 47 rows of 8.
@inline(__always)
func bestHalfPixel(_ p: UnsafeMutablePointer<UInt8>, _ pStride: Int, _ q: UnsafeMutablePointer<UInt8>, _ qStride: Int,
                   wholeCost: Int32, scratch: UnsafeMutablePointer<SIMD8<UInt8>>) -> (dx: Int, dy: Int, cost: Int32) {
    @inline(__always) func load(_ pointer: UnsafeMutablePointer<UInt8>) -> SIMD8<UInt8> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<UInt8>.self)
    }
    // Per row −1…8: the samples half a pixel left, on, and half a pixel right of the whole position.
    let left = scratch, whole = scratch + 10, right = scratch + 20, block = scratch + 30, halves = scratch + 38
    for r in 0..<10 {
        let row = q + (r - 1) * qStride
        let here = load(row)
        (left[r], whole[r], right[r]) = (average(load(row - 1), here), here, average(here, load(row + 1)))
    }
    for r in 0..<8 { block[r] = load(p + r * pStride) }
    var best = (dx: 0, dy: 0, cost: Int32.max)
    @inline(__always) func cost(_ rows: UnsafeMutablePointer<SIMD8<UInt8>>) -> Int32 {
        var total: Int32 = 0
        for r in stride(from: 0, to: 8, by: 2) {
            total &+= sumOfAbsoluteDifferences(SIMD16(lowHalf: block[r], highHalf: block[r + 1]),
                                               SIMD16(lowHalf: rows[r], highHalf: rows[r + 1]))
        }
        return total
    }
    // The four half-pixel neighbours along the axes, then the diagonal between the better one across and
    // the better one up or down.
    var across = (dx: 0, cost: Int32.max), upDown = (dy: 0, cost: Int32.max)
    for dx in stride(from: -1, through: 1, by: 2) {
        let total = cost((dx < 0 ? left : right) + 1)
        if total < across.cost { across = (dx, total) }
        if total < best.cost { best = (dx, 0, total) }
    }
    for r in 0..<9 { halves[r] = average(whole[r], whole[r + 1]) }
    for dy in stride(from: -1, through: 1, by: 2) {
        let total = cost(dy < 0 ? halves : halves + 1)
        if total < upDown.cost { upDown = (dy, total) }
        if total < best.cost { best = (0, dy, total) }
    }
    do {
        let columns = across.dx < 0 ? left : right
        // Rounded down this time: the horizontal averages were rounded up (+¼ on average), so the four-sample
        // mean is not biased upwards (which would hand diagonal shifts to an axis neighbour).
        for r in 0..<9 { halves[r] = narrowed((widened(columns[r]) &+ widened(columns[r + 1])) &>> 1) }
        let total = cost(upDown.dy < 0 ? halves : halves + 1)
        if total < best.cost { best = (across.dx, upDown.dy, total) }
    }
    return best
}

/// The rounded average of two byte vectors (`pavgb`).
@inline(__always)
func average(_ a: SIMD8<UInt8>, _ b: SIMD8<UInt8>) -> SIMD8<UInt8> {
    narrowed((widened(a) &+ widened(b) &+ 1) &>> 1)
}

/// The sum of |x − y| over 16 lanes, written so that the optimizer makes it one `psadbw`.
@inline(__always)
func sumOfAbsoluteDifferences(_ x: SIMD16<UInt8>, _ y: SIMD16<UInt8>) -> Int32 {
    var total: Int32 = 0
    for lane in 0..<16 {
        let difference = Int32(x[lane]) &- Int32(y[lane])
        total &+= difference < 0 ? 0 &- difference : difference
    }
    return total
}

/// Copies each block of `source`, displaced by its half-pixel vector, into `target`: the motion-compensated
/// prediction. Between pixels the samples are interpolated by the 4-tap cubic `(−1, 9, 9, −1) / 16`
/// (horizontally, then vertically; rounded, clamped), which keeps more detail than a bilinear average: the
/// denoiser moves its own output along the vectors frame after frame, and a bilinear average would blur it
/// a little more each time. `divisor` 2 maps the field to a 4:2:0 chroma plane (blocks halved, vectors
/// halved in half chroma pixels, rounded toward −∞). Displaced blocks are clamped to lie inside the plane
/// with the samples the filter needs (a half-pixel part that would reach outside is dropped). Rows are read
/// 16 bytes at a time: `source` must be readable 15 bytes past each row's end (a `PlaneStorage` plane is:
/// rows padded to 64 bytes and 64 bytes of slack after the last).
///
/// ```swift
/// compensateHalfPixel(previous.plane(0), into: prediction.plane, field: refined)
/// ```
public func compensateHalfPixel(_ source: Plane, into target: Plane, field: HalfPixelField, divisor: Int = 1) {
    precondition(target.width == source.width && target.height == source.height, "compensation needs planes of one size")
    compensateHalfPixel(source, rows: 0..<source.height, into: StripRows(target), field: field, divisor: divisor)
}

/// The blocks of a plane that a field of 8×8 luma blocks maps onto (`divisor` 2: 4×4 blocks of 4:2:0 chroma):
/// the block row and column that own a sample (the last ones are moved inward to end at the plane's edge
/// and own the samples they share with the ones before) and their field entries.
struct BlockGrid {
    let size: Int
    let width: Int
    let height: Int
    let columns: Int
    let rows: Int
    let fieldColumns: Int
    let fieldRows: Int

    init(plane: Plane, field: MotionField, divisor: Int) {
        size = min(field.blockSize / divisor, plane.width, plane.height)
        width = plane.width
        height = plane.height
        columns = (width + size - 1) / size
        rows = (height + size - 1) / size
        fieldColumns = field.columns
        fieldRows = field.rows
    }

    /// The block row that owns row `y`, its top row and its row in the field.
    @inline(__always) func blockRow(ofY y: Int) -> (origin: Int, field: Int) {
        let row = y >= height - size ? rows - 1 : y / size
        return (min(row * size, height - size), min(row, fieldRows - 1))
    }

    @inline(__always) func originX(_ column: Int) -> Int { min(column * size, width - size) }
    @inline(__always) func fieldColumn(_ column: Int) -> Int { min(column, fieldColumns - 1) }
}

/// `compensateHalfPixel` for the target's rows `rows` only.
func compensateHalfPixel(_ source: Plane, rows: Range<Int>, into target: StripRows,
                         field: HalfPixelField, divisor: Int) {
    precondition(source.bytesPerPixel == 1, "compensation needs single-byte planes")
    let grid = BlockGrid(plane: source, field: field.blocks, divisor: divisor)
    guard grid.size > 0, !rows.isEmpty else { return }
    let size = grid.size, width = source.width, height = source.height, stride = source.bytesPerRow
    @inline(__always) func samples(_ q: UnsafeMutablePointer<UInt8>) -> SIMD8<Int16> {
        SIMD8<Int16>(truncatingIfNeeded: widened(UnsafeRawPointer(q).loadUnaligned(as: SIMD8<UInt8>.self)))
    }
    @inline(__always) func cubic(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>, _ c: SIMD8<Int16>, _ d: SIMD8<Int16>) -> SIMD8<Int16> {
        (9 &* (b &+ c) &- a &- d &+ 8) &>> 4
    }
    @inline(__always) func bytes(_ v: SIMD8<Int16>) -> SIMD8<UInt8> {
        SIMD8<UInt8>(truncatingIfNeeded: v.clamped(lowerBound: SIMD8(repeating: 0), upperBound: SIMD8(repeating: 255)))
    }
    // Block row by block row: the rows of `rows` that each owns.
    var y = rows.lowerBound
    while y < rows.upperBound {
        let (oy, fieldRow) = grid.blockRow(ofY: y)
        let end = min(rows.upperBound, oy + size >= height ? height : min(oy + size, height - size))
        for column in 0..<grid.columns {
            let ox = grid.originX(column)
            var v = field[grid.fieldColumn(column), fieldRow]
            if divisor != 1 { v = HalfPixelVector(x: v.x >> 1, y: v.y >> 1) }
            var fx = v.x & 1, fy = v.y & 1
            var sx = ox + (v.x >> 1), sy = oy + (v.y >> 1)
            // The cubic reads one sample before and two after the block's span along a half-pixel axis.
            if sx - fx < 0 || sx + size + 2 * fx > width { (sx, fx) = (max(0, min(width - size, sx)), 0) }
            if sy - fy < 0 || sy + size + 2 * fy > height { (sy, fy) = (max(0, min(height - size, sy)), 0) }
            @inline(__always) func store(_ value: SIMD8<UInt8>, _ row: Int) {
                let out = target.row(row) + ox
                if size == 8 {
                    UnsafeMutableRawPointer(out).storeBytes(of: value, as: SIMD8<UInt8>.self)
                } else if size == 4 {
                    UnsafeMutableRawPointer(out).storeBytes(of: value.lowHalf, as: SIMD4<UInt8>.self)
                } else {
                    for i in 0..<size { out[i] = value[i] }
                }
            }
            var p = source.row(sy + y - oy) + sx
            if fx == 0 && fy == 0 {
                for row in y..<end {
                    store(UnsafeRawPointer(p).loadUnaligned(as: SIMD8<UInt8>.self), row)
                    p += stride
                }
            } else {
                @inline(__always) func horizontal(_ q: UnsafeMutablePointer<UInt8>) -> SIMD8<Int16> {
                    if fx == 0 { return samples(q) }
                    // One 16-byte load from q − 1 and its lanes shifted by 1, 2 and 3 (byte shifts, where four
                    // overlapping loads would be stitched together from scalar loads by the optimizer).
                    let w = UnsafeRawPointer(q - 1).loadUnaligned(as: SIMD16<UInt8>.self)
                    @inline(__always) func lanes(_ k: Int) -> SIMD8<Int16> {
                        SIMD8<Int16>(truncatingIfNeeded: widened(SIMD8<UInt8>(w[k], w[k + 1], w[k + 2], w[k + 3], w[k + 4],
                                                                              w[k + 5], w[k + 6], w[k + 7])))
                    }
                    return cubic(lanes(0), lanes(1), lanes(2), lanes(3))
                }
                if fy == 0 {
                    for row in y..<end {
                        store(bytes(horizontal(p)), row)
                        p += stride
                    }
                } else {
                    // A window of four filtered rows slides down the block: each row is filtered once.
                    var (a, b, c) = (horizontal(p - stride), horizontal(p), horizontal(p + stride))
                    for row in y..<end {
                        let d = horizontal(p + 2 * stride)
                        store(bytes(cubic(a, b, c, d)), row)
                        (a, b, c) = (b, c, d)
                        p += stride
                    }
                }
            }
        }
        y = end
    }
}

/// Moves a history plane (frames averaged per sample, as `TemporalBlend` keeps it) along the field's vectors
/// for the target's rows `rows`, whole pixels only (the half-pixel vectors rounded toward −∞), and clears
/// the blocks whose match costs more than `limit` per sample (mean absolute difference): a scene cut or an
/// occlusion starts a new history there.
func compensateHistory(_ source: Plane, rows: Range<Int>, into target: StripRows,
                       field: HalfPixelField, divisor: Int, limit: Float) {
    let grid = BlockGrid(plane: source, field: field.blocks, divisor: divisor)
    guard grid.size > 0 else { return }
    let size = grid.size, width = source.width, height = source.height
    let costLimit = Int32(clamping: Int((limit * Float(field.blocks.blockSize * field.blocks.blockSize)).rounded(.down)))
    var y = rows.lowerBound
    while y < rows.upperBound {
        let (oy, fieldRow) = grid.blockRow(ofY: y)
        let end = min(rows.upperBound, oy + size >= height ? height : min(oy + size, height - size))
        for column in 0..<grid.columns {
            let ox = grid.originX(column)
            let index = fieldRow * field.blocks.columns + grid.fieldColumn(column)
            if field.costs[index] > costLimit {
                for row in y..<end { (target.row(row) + ox).update(repeating: 0, count: size) }
                continue
            }
            var v = field.vectors[index]
            if divisor != 1 { v = HalfPixelVector(x: v.x >> 1, y: v.y >> 1) }
            let sx = max(0, min(width - size, ox + (v.x >> 1))), sy = max(0, min(height - size, oy + (v.y >> 1)))
            var p = source.row(sy + y - oy) + sx
            for row in y..<end {
                let out = target.row(row) + ox
                if size == 8 {
                    UnsafeMutableRawPointer(out).storeBytes(of: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self), as: UInt64.self)
                } else if size == 4 {
                    UnsafeMutableRawPointer(out).storeBytes(of: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self), as: UInt32.self)
                } else {
                    out.update(from: p, count: size)
                }
                p += source.bytesPerRow
            }
        }
        y = end
    }
}
