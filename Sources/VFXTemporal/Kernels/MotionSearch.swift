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
        let lambda = smoothness
        for row in 0..<field.rows {
            for column in 0..<field.columns {
                let ox = field.originX(column), oy = field.originY(row)
                var best = MotionVector.zero
                var bestCost = Int.max, bestSAD = 0
                var anchor = MotionVector.zero
                func consider(_ v: MotionVector) {
                    guard let sad = evaluator.cost(ox, oy, v) else { return }
                    let cost = sad + lambda * (abs(v.x - anchor.x) + abs(v.y - anchor.y))
                    if cost < bestCost { (best, bestCost, bestSAD) = (v, cost, sad) }
                }
                var temporal: MotionVector?
                if let predictor {
                    // The previous field's vector at this block's centre, in this level's pixels.
                    let scale = 1 << level
                    let cx = (ox + blockSize / 2) * scale, cy = (oy + blockSize / 2) * scale
                    let v = predictor[predictor.column(ofX: cx), predictor.row(ofY: cy)]
                    temporal = MotionVector(x: v.x / scale, y: v.y / scale)
                }
                if let parent {
                    let pc = min(column / 2, parent.columns - 1), pr = min(row / 2, parent.rows - 1)
                    anchor = parent[pc, pr].scaled(2)
                    consider(anchor)
                    if column > 0 { consider(field[column - 1, row]) }
                    if row > 0 { consider(field[column, row - 1]) }
                    if level > 0 || thoroughAtFullSize {
                        if pc > 0 { consider(parent[pc - 1, pr].scaled(2)) }
                        if pc + 1 < parent.columns { consider(parent[pc + 1, pr].scaled(2)) }
                        if pr > 0 { consider(parent[pc, pr - 1].scaled(2)) }
                        if pr + 1 < parent.rows { consider(parent[pc, pr + 1].scaled(2)) }
                        if let temporal { consider(temporal) }
                        consider(.zero)
                    }
                } else {
                    for dy in -range...range {
                        for dx in -range...range { consider(MotionVector(x: dx, y: dy)) }
                    }
                    if let temporal {
                        for dy in -1...1 {
                            for dx in -1...1 { consider(MotionVector(x: temporal.x + dx, y: temporal.y + dy)) }
                        }
                    }
                }
                // Descent: move to the best of the 4 nearest neighbours until none is better.
                if parent != nil {
                    for _ in 0..<4 {
                        let center = best
                        consider(MotionVector(x: center.x - 1, y: center.y))
                        consider(MotionVector(x: center.x + 1, y: center.y))
                        consider(MotionVector(x: center.x, y: center.y - 1))
                        consider(MotionVector(x: center.x, y: center.y + 1))
                        if best == center { break }
                    }
                }
                field[column, row] = best
                field.costs[row * field.columns + column] = Int32(clamping: bestSAD)
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

    /// nil when the vector takes a block outside a plane.
    @inline(__always)
    func cost(_ ox: Int, _ oy: Int, _ v: MotionVector) -> Int? {
        var ax = ox, ay = oy, bx = ox + v.x, by = oy + v.y
        if case .symmetric = mode {
            let h = v.floorHalf
            (ax, ay) = (ox - h.x, oy - h.y)
            (bx, by) = (ax + v.x, ay + v.y)
        }
        let limitX = a.width - blockSize, limitY = a.height - blockSize
        guard ax >= 0, ay >= 0, bx >= 0, by >= 0, ax <= limitX, bx <= limitX, ay <= limitY, by <= limitY else { return nil }
        return Int(sad8x8(a.row(ay) + ax, a.bytesPerRow, b.row(by) + bx, b.bytesPerRow))
    }
}

/// Sum of absolute differences of two 8×8 blocks (two rows per 16-byte vector).
@inline(__always)
func sad8x8(_ p: UnsafeMutablePointer<UInt8>, _ pStride: Int, _ q: UnsafeMutablePointer<UInt8>, _ qStride: Int) -> UInt32 {
    var total = SIMD16<UInt16>(repeating: 0)
    var p = UnsafeRawPointer(p), q = UnsafeRawPointer(q)
    for _ in 0..<4 {
        let x = SIMD16<UInt8>(lowHalf: p.loadUnaligned(as: SIMD8<UInt8>.self), highHalf: (p + pStride).loadUnaligned(as: SIMD8<UInt8>.self))
        let y = SIMD16<UInt8>(lowHalf: q.loadUnaligned(as: SIMD8<UInt8>.self), highHalf: (q + qStride).loadUnaligned(as: SIMD8<UInt8>.self))
        total &+= widened(absoluteDifference(x, y))
        p += 2 * pStride
        q += 2 * qStride
    }
    return UInt32(total.wrappedSum())
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
