import VFXCore

/// A displacement in whole pixels (x right, y down).
public struct MotionVector: Hashable, Sendable {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public static let zero = MotionVector(x: 0, y: 0)

    /// The vector `factor` times longer (a coarse level's vector at the next finer level).
    func scaled(_ factor: Int) -> MotionVector { MotionVector(x: x * factor, y: y * factor) }

    /// Half of the vector rounded toward −∞: the part of a symmetric vector taken on the first frame's side.
    var floorHalf: MotionVector { MotionVector(x: x >> 1, y: y >> 1) }
}

/// One motion vector per block of a plane: blocks of `blockSize`×`blockSize` pixels on a grid that covers
/// the plane (the last column and row of blocks are moved inward so they lie fully inside it).
///
/// ```swift
/// let field = MotionSearch().estimate(from: previous, to: current, mode: .forward)
/// let v = field[field.column(ofX: 100), field.row(ofY: 40)]
/// ```
public struct MotionField: Sendable {
    public let blockSize: Int
    /// Size of the plane the field describes.
    public let width: Int
    public let height: Int
    public let columns: Int
    public let rows: Int
    public var vectors: [MotionVector]
    /// The match cost of each block's vector: the sum of absolute differences over the block.
    public var costs: [Int32]

    public init(width: Int, height: Int, blockSize: Int) {
        self.blockSize = blockSize
        self.width = width
        self.height = height
        columns = max(1, (width + blockSize - 1) / blockSize)
        rows = max(1, (height + blockSize - 1) / blockSize)
        vectors = Array(repeating: .zero, count: columns * rows)
        costs = Array(repeating: 0, count: columns * rows)
    }

    public subscript(column: Int, row: Int) -> MotionVector {
        get { vectors[row * columns + column] }
        set { vectors[row * columns + column] = newValue }
    }

    /// Left edge of the blocks in `column` (the last column is moved inward to end at the plane's edge).
    @inline(__always) public func originX(_ column: Int) -> Int { max(0, min(column * blockSize, width - blockSize)) }
    @inline(__always) public func originY(_ row: Int) -> Int { max(0, min(row * blockSize, height - blockSize)) }
    /// The column of blocks that covers x (clamped into the grid).
    @inline(__always) public func column(ofX x: Int) -> Int { max(0, min(columns - 1, x / blockSize)) }
    @inline(__always) public func row(ofY y: Int) -> Int { max(0, min(rows - 1, y / blockSize)) }

    /// The mean absolute difference per pixel of the block's match.
    public func meanCost(column: Int, row: Int) -> Float { Float(costs[row * columns + column]) / Float(blockSize * blockSize) }
}

/// How a block's vector relates the two planes searched.
public enum MotionSearchMode: Sendable {
    /// The block of the first plane at `o` matches the second plane at `o + v` (vectors point from the first
    /// frame into the second).
    case forward
    /// The block lies at `o` in an image halfway between the planes: the first plane at `o − ⌊v/2⌋` matches
    /// the second at `o + v − ⌊v/2⌋` (`v` is the whole motion from first to second). Every block of the
    /// in-between image gets a vector, so the interpolated frame has no holes.
    case symmetric
}

/// Block motion estimation, coarse to fine: an exhaustive search on the coarsest pyramid level, then at
/// each finer level the best of the doubled vectors of the parent block and its neighbours (and an optional
/// vector from the previous field) refined by a ±1-pixel descent. 8×8 blocks at every level, so a coarse
/// block covers a large area of the full frame and is robust to noise.
///
/// ```swift
/// let a = PlanePyramid(width: 1280, height: 720, count: 3); a.build(from: previous.plane(0))
/// let b = PlanePyramid(width: 1280, height: 720, count: 3); b.build(from: current.plane(0))
/// let field = MotionSearch(range: 6).estimate(from: a, to: b, mode: .forward)
/// ```
public struct MotionSearch: Sendable {
    /// Exhaustive search radius on the coarsest level, in that level's pixels (×4 at full size with 3 levels).
    public var range: Int
    /// Cost added per pixel that a candidate differs from its predictor (keeps the field smooth where the
    /// picture is flat or noisy), in units of summed absolute difference.
    public var smoothness: Int
    /// How much worse per pixel (mean absolute difference) the neighbourhood's median vector may match than
    /// a block's own before it replaces it (0: no median pass).
    public var outlierTolerance: Int
    public let blockSize = 8
    /// Whether the full-size level tries every candidate (true) or only the parent's vector and the left and
    /// upper neighbours before its descent (false: about half the work, for the noise filter).
    public var thoroughAtFullSize = true
    /// The exhaustive radius when a previous field is given: its vectors and the neighbours' carry on motion
    /// that goes beyond it (`range` by default: the same search as without one).
    public var trackingRange = Int.max

    public init(range: Int = 6, smoothness: Int = 4, outlierTolerance: Int = 3) {
        self.range = range
        self.smoothness = smoothness
        self.outlierTolerance = outlierTolerance
    }

    /// The field at level 0 of the pyramids (which must have the same sizes). `predictor`, a field of the
    /// same layout from the previous frame pair, adds its vectors as candidates.
    ///
    /// `finestLevel` 1 stops at half resolution (a quarter of the work): the field then describes level 1
    /// (8×8 blocks of the half-size plane, vectors in its pixels).
    public func estimate(from first: PlanePyramid, to second: PlanePyramid, mode: MotionSearchMode,
                         predictor: MotionField? = nil, finestLevel: Int = 0) -> MotionField {
        let levelCount = min(first.count, second.count)
        let finest = min(finestLevel, levelCount - 1)
        var coarser: MotionField?
        for level in stride(from: levelCount - 1, through: finest, by: -1) {
            let a = first.plane(level), b = second.plane(level)
            coarser = search(a, b, mode: mode, level: level, parent: coarser, predictor: predictor)
        }
        return coarser ?? MotionField(width: first.plane(finest).width, height: first.plane(finest).height, blockSize: blockSize)
    }

    private func search(_ a: Plane, _ b: Plane, mode: MotionSearchMode, level: Int, parent: MotionField?,
                        predictor: MotionField?) -> MotionField {
        var field = MotionField(width: a.width, height: a.height, blockSize: blockSize)
        guard a.width >= blockSize && a.height >= blockSize else { return field }
        let evaluator = BlockCost(a: a, b: b, blockSize: blockSize, mode: mode)
        // The exhaustive level (no parent) bounds its candidates by the blocks' sums.
        let sums = parent == nil ? (a: BlockSums(a, blockSize: blockSize), b: BlockSums(b, blockSize: blockSize)) : nil
        // The previous field's block under each block's centre (full-size coordinates), per column and row.
        let scale = 1 << level
        let predictorColumns = predictor.map { p in (0..<field.columns).map { p.column(ofX: (field.originX($0) + blockSize / 2) * scale) } }
        let predictorRows = predictor.map { p in (0..<field.rows).map { p.row(ofY: (field.originY($0) + blockSize / 2) * scale) } }
        for row in 0..<field.rows {
            for column in 0..<field.columns {
                var block = BlockSearch(evaluator: evaluator, ox: field.originX(column), oy: field.originY(row), lambda: smoothness)
                var temporal: MotionVector?
                if let predictor, let predictorColumns, let predictorRows {
                    // The previous field's vector at this block's centre, in this level's pixels.
                    let v = predictor[predictorColumns[column], predictorRows[row]]
                    temporal = level == 0 ? v : MotionVector(x: v.x / scale, y: v.y / scale)
                }
                if let parent {
                    let pc = min(column / 2, parent.columns - 1), pr = min(row / 2, parent.rows - 1)
                    block.anchor = parent[pc, pr].scaled(2)
                    block.considerOnce(block.anchor)
                    if column > 0 { block.considerOnce(field[column - 1, row]) }
                    if row > 0 { block.considerOnce(field[column, row - 1]) }
                    if level > 0 || thoroughAtFullSize {
                        if pc > 0 { block.considerOnce(parent[pc - 1, pr].scaled(2)) }
                        if pc + 1 < parent.columns { block.considerOnce(parent[pc + 1, pr].scaled(2)) }
                        if pr > 0 { block.considerOnce(parent[pc, pr - 1].scaled(2)) }
                        if pr + 1 < parent.rows { block.considerOnce(parent[pc, pr + 1].scaled(2)) }
                        if let temporal { block.considerOnce(temporal) }
                        block.considerOnce(.zero)
                    }
                } else if let sums {
                    let range = temporal != nil ? min(self.range, trackingRange) : self.range
                    for dy in -range...range {
                        for dx in -range...range { block.consider(MotionVector(x: dx, y: dy), sums: sums) }
                    }
                    if let temporal {
                        // With a narrowed window, the neighbours' vectors found already; and around the previous
                        // field's vector, where the window did not reach.
                        if range < self.range {
                            if column > 0 { block.consider(field[column - 1, row], sums: sums) }
                            if row > 0 { block.consider(field[column, row - 1], sums: sums) }
                        }
                        for dy in -1...1 {
                            for dx in -1...1 where abs(temporal.x + dx) > range || abs(temporal.y + dy) > range {
                                block.consider(MotionVector(x: temporal.x + dx, y: temporal.y + dy), sums: sums)
                            }
                        }
                    }
                }
                // Descent: move to the best of the 4 nearest neighbours until none is better.
                // A step never goes back to where it came from (already tried, and worse).
                if parent != nil {
                    var from: MotionVector?
                    for _ in 0..<4 {
                        let center = block.best
                        let left = MotionVector(x: center.x - 1, y: center.y), right = MotionVector(x: center.x + 1, y: center.y)
                        let up = MotionVector(x: center.x, y: center.y - 1), down = MotionVector(x: center.x, y: center.y + 1)
                        if left != from { block.consider(left) }
                        if right != from { block.consider(right) }
                        if up != from { block.consider(up) }
                        if down != from { block.consider(down) }
                        if block.best == center { break }
                        from = center
                    }
                }
                field[column, row] = block.best
                field.costs[row * field.columns + column] = Int32(clamping: block.bestSAD)
            }
        }
        return medianSmoothed(field, evaluator)
    }

    /// Replaces each vector by the median of its 3×3 neighbourhood (per component) when that costs at most
    /// `outlierTolerance` more per pixel: lone wrong vectors (a flat block that matched noise, a repeated
    /// pattern) take their neighbours' motion, real motion boundaries stay.
    private func medianSmoothed(_ field: MotionField, _ evaluator: BlockCost) -> MotionField {
        guard outlierTolerance > 0 else { return field }
        var result = field
        let allowance = outlierTolerance * blockSize * blockSize
        for row in 0..<field.rows {
            for column in 0..<field.columns {
                // The 3×3 neighbourhood (edges repeated), by a 19-exchange median network per component.
                let own = field[column, row]
                let up = max(row - 1, 0), down = min(row + 1, field.rows - 1)
                let left = max(column - 1, 0), right = min(column + 1, field.columns - 1)
                let n = (field[left, up], field[column, up], field[right, up], field[left, row], own, field[right, row],
                         field[left, down], field[column, down], field[right, down])
                let median = MotionVector(
                    x: median9(n.0.x, n.1.x, n.2.x, n.3.x, n.4.x, n.5.x, n.6.x, n.7.x, n.8.x),
                    y: median9(n.0.y, n.1.y, n.2.y, n.3.y, n.4.y, n.5.y, n.6.y, n.7.y, n.8.y))
                guard median != own,
                      let cost = evaluator.cost(field.originX(column), field.originY(row), median) else { continue }
                if cost <= Int(field.costs[row * field.columns + column]) + allowance {
                    result[column, row] = median
                    result.costs[row * field.columns + column] = Int32(clamping: cost)
                }
            }
        }
        return result
    }
}

/// The sum of absolute differences between the two planes' blocks that a vector pairs.
struct BlockCost {
    let a: Plane
    let b: Plane
    let blockSize: Int
    let mode: MotionSearchMode

    /// The top-left corners of the two blocks that `v` pairs for the block at (ox, oy), nil when one lies
    /// outside its plane.
    @inline(__always)
    func corners(_ ox: Int, _ oy: Int, _ v: MotionVector) -> (ax: Int, ay: Int, bx: Int, by: Int)? {
        var ax = ox, ay = oy, bx = ox + v.x, by = oy + v.y
        if case .symmetric = mode {
            let h = v.floorHalf
            (ax, ay) = (ox - h.x, oy - h.y)
            (bx, by) = (ax + v.x, ay + v.y)
        }
        // One unsigned comparison per coordinate: a negative one wraps above the limit.
        let limitX = UInt(bitPattern: a.width - blockSize), limitY = UInt(bitPattern: a.height - blockSize)
        guard UInt(bitPattern: ax) <= limitX, UInt(bitPattern: bx) <= limitX, UInt(bitPattern: ay) <= limitY,
              UInt(bitPattern: by) <= limitY else { return nil }
        return (ax, ay, bx, by)
    }

    /// nil when the vector takes a block outside a plane.
    @inline(__always)
    func cost(_ ox: Int, _ oy: Int, _ v: MotionVector) -> Int? {
        guard let (ax, ay, bx, by) = corners(ox, oy, v) else { return nil }
        return Int(sad8x8(a.row(ay) + ax, a.bytesPerRow, b.row(by) + bx, b.bytesPerRow))
    }
}

/// The sum of every 8×8 block of a plane, by its top-left corner: `|sum(A) − sum(B)|` is a lower bound of
/// the blocks' sum of absolute differences, so an exhaustive search skips, without changing its result, a
/// candidate whose bound alone already costs more than the best so far (successive elimination).
final class BlockSums {
    let columns: Int
    let rows: Int
    private(set) var sums: [Int32]

    init(_ plane: Plane, blockSize: Int) {
        columns = max(0, plane.width - blockSize + 1)
        rows = max(0, plane.height - blockSize + 1)
        sums = Array(repeating: 0, count: columns * rows)
        guard columns > 0 && rows > 0 else { return }
        // Sums of `blockSize` samples along each row, then of `blockSize` of those down each column.
        var across = Array(repeating: Int32(0), count: columns * plane.height)
        for y in 0..<plane.height {
            let row = plane.row(y)
            var total: Int32 = 0
            for x in 0..<blockSize { total += Int32(row[x]) }
            across[y * columns] = total
            for x in 1..<max(columns, 1) {
                total += Int32(row[x + blockSize - 1]) - Int32(row[x - 1])
                across[y * columns + x] = total
            }
        }
        for x in 0..<columns {
            var total: Int32 = 0
            for y in 0..<blockSize { total += across[y * columns + x] }
            sums[x] = total
            for y in 1..<max(rows, 1) {
                total += across[(y + blockSize - 1) * columns + x] - across[(y - 1) * columns + x]
                sums[y * columns + x] = total
            }
        }
    }

    @inline(__always) subscript(x: Int, y: Int) -> Int32 { sums[y * columns + x] }
}

/// The search state of one block: the best candidate so far, its cost (match plus the smoothness penalty
/// for straying from `anchor`) and its match alone. A value type, so the candidates' loop keeps it in
/// registers.
///
/// `considerOnce` skips the vector that is already the best: the parent, the neighbours and the previous
/// field often propose the same one, and trying it again cannot change the result.
struct BlockSearch {
    let evaluator: BlockCost
    let ox: Int
    let oy: Int
    let lambda: Int
    var anchor = MotionVector.zero
    var best = MotionVector.zero
    var bestCost = Int.max
    var bestSAD = 0

    init(evaluator: BlockCost, ox: Int, oy: Int, lambda: Int) {
        self.evaluator = evaluator
        self.ox = ox
        self.oy = oy
        self.lambda = lambda
    }

    /// Takes `v` when it costs less than the best so far (vectors that leave a plane are skipped).
    @inline(__always)
    mutating func consider(_ v: MotionVector) {
        guard let sad = evaluator.cost(ox, oy, v) else { return }
        let cost = sad + lambda * (abs(v.x - anchor.x) + abs(v.y - anchor.y))
        if cost < bestCost { (best, bestCost, bestSAD) = (v, cost, sad) }
    }

    /// `consider`, unless the blocks' sums alone show that `v` cannot beat the best so far.
    @inline(__always)
    mutating func consider(_ v: MotionVector, sums: (a: BlockSums, b: BlockSums)) {
        guard let (ax, ay, bx, by) = evaluator.corners(ox, oy, v) else { return }
        let penalty = lambda * (abs(v.x - anchor.x) + abs(v.y - anchor.y))
        let bound = Int(abs(sums.a[ax, ay] - sums.b[bx, by]))
        if bound + penalty >= bestCost { return }
        let sad = Int(sad8x8(evaluator.a.row(ay) + ax, evaluator.a.bytesPerRow, evaluator.b.row(by) + bx, evaluator.b.bytesPerRow))
        let cost = sad + penalty
        if cost < bestCost { (best, bestCost, bestSAD) = (v, cost, sad) }
    }

    /// `consider`, unless `v` is the best so far.
    @inline(__always)
    mutating func considerOnce(_ v: MotionVector) {
        if v == best && bestCost != Int.max { return }
        consider(v)
    }
}

/// Sum of absolute differences of two 8×8 blocks, two rows per 16-byte vector (`sumOfAbsoluteDifferences`:
/// one `psadbw` each on x86-64).
@inline(__always)
func sad8x8(_ p: UnsafeMutablePointer<UInt8>, _ pStride: Int, _ q: UnsafeMutablePointer<UInt8>, _ qStride: Int) -> UInt32 {
    var total: Int32 = 0
    var p = UnsafeRawPointer(p), q = UnsafeRawPointer(q)
    for _ in 0..<4 {
        let x = SIMD16<UInt8>(lowHalf: p.loadUnaligned(as: SIMD8<UInt8>.self), highHalf: (p + pStride).loadUnaligned(as: SIMD8<UInt8>.self))
        let y = SIMD16<UInt8>(lowHalf: q.loadUnaligned(as: SIMD8<UInt8>.self), highHalf: (q + qStride).loadUnaligned(as: SIMD8<UInt8>.self))
        total &+= sumOfAbsoluteDifferences(x, y)
        p += 2 * pStride
        q += 2 * qStride
    }
    return UInt32(total)
}

/// The median of nine values with a 19-exchange sorting network (branch-free min and max).
@inline(__always)
func median9(_ a0: Int, _ a1: Int, _ a2: Int, _ a3: Int, _ a4: Int, _ a5: Int, _ a6: Int, _ a7: Int, _ a8: Int) -> Int {
    var p = (a0, a1, a2, a3, a4, a5, a6, a7, a8)
    @inline(__always) func order(_ a: inout Int, _ b: inout Int) {
        let low = min(a, b)
        b = max(a, b)
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
