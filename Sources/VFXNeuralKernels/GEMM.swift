import VFXCore
/// Matrix multiply C = clamp(A·B + bias) for 1×1 convolutions and fully connected layers, with B
/// (the weights) packed once at load time into column panels.
///
/// A is row-major `rows × depth` (one row per output pixel, stride `lda`), B is packed by
/// `packGEMMWeights` into panels of `Tile.width` columns (see `GEMMLayout`), each `depth × width`, and C is
/// row-major `rows × columns` (stride `ldc`). A register tile of `Tile.rows × Tile.width` accumulators is
/// kept in SIMD registers over the whole depth.
///
/// ```swift
/// let layout = GEMMLayout(columns: n, width: 16, tailWidth: 16, narrowWidth: 8)
/// let packed = packGEMMWeights(weights, columns: n, depth: k, layout: layout)
/// gemm(GEMMTile6x16.self, tail: GEMMTile6x16.self, narrow: GEMMTile8x8.self, arguments)
/// ```
public struct GEMMArguments {
    public var a: UnsafePointer<Float>
    public var lda: Int
    public var rows: Int
    public var depth: Int
    public var packed: UnsafePointer<Float>
    public var columns: Int
    /// Bias padded with zeros to a whole number of panels.
    public var bias: UnsafePointer<Float>
    public var c: UnsafeMutablePointer<Float>
    public var ldc: Int
    /// A tensor laid out like C that is added before the clamp (a fused residual ADD), or nil. Its rows
    /// are read in whole vectors, so up to 31 floats past a row's end must be readable.
    public var residual: UnsafePointer<Float>?
    public var lower: Float
    public var upper: Float

    @inlinable
    public init(a: UnsafePointer<Float>, lda: Int, rows: Int, depth: Int, packed: UnsafePointer<Float>, columns: Int,
                bias: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>, ldc: Int,
                residual: UnsafePointer<Float>? = nil, lower: Float, upper: Float) {
        self.a = a; self.lda = lda; self.rows = rows; self.depth = depth; self.packed = packed
        self.columns = columns; self.bias = bias; self.c = c; self.ldc = ldc; self.residual = residual
        self.lower = lower; self.upper = upper
    }
}

/// A register tile shape for `gemm`: `rows` rows of A against one `width`-column panel of B.
public protocol GEMMTile {
    static var rows: Int { get }
    static var width: Int { get }
    /// Computes `rows` full rows starting at `a`, `c` (and `residual`, laid out like `c`) for the panel at
    /// `b` (`columns` ≤ width valid).
    static func block(a: UnsafePointer<Float>, lda: Int, depth: Int, b: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                      c: UnsafeMutablePointer<Float>, ldc: Int, residual: UnsafePointer<Float>?, columns: Int,
                      lower: Float, upper: Float)
    /// Computes a single row (for the rows left over after the last whole block).
    static func row(a: UnsafePointer<Float>, depth: Int, b: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                    c: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?, columns: Int, lower: Float,
                    upper: Float)
}

/// How `columns` output channels are cut into weight panels: whole panels of `width`, then for the
/// remainder at most one panel of `tailWidth` and one of `narrowWidth` (8), whichever wastes least. With
/// 32-wide tiles, 48 channels become 32 + 16 and 24 become 16 + 8 instead of 64 and 32.
public struct GEMMLayout: Sendable {
    public let width: Int
    public let tailWidth: Int
    public let narrowWidth: Int
    /// Panels of `width` columns.
    public let widePanels: Int
    /// Whether a panel of `tailWidth` follows the wide ones.
    public let hasTail: Bool
    /// Whether a last panel of `narrowWidth` follows.
    public let hasNarrow: Bool

    @inlinable
    public init(columns: Int, width: Int, tailWidth: Int, narrowWidth: Int) {
        self.width = width
        self.tailWidth = tailWidth
        self.narrowWidth = narrowWidth
        let remainder = columns % width
        let tailUsable = tailWidth < width
        var wide = columns / width, tail = false, narrow = false
        if remainder == 0 {
        } else if remainder <= narrowWidth {
            narrow = true
        } else if tailUsable && remainder <= tailWidth {
            tail = true
        } else if tailUsable && remainder <= tailWidth + narrowWidth {
            tail = true
            narrow = true
        } else {
            wide += 1
        }
        widePanels = wide
        hasTail = tail
        hasNarrow = narrow
    }

    /// First column of the tail panel.
    @inlinable
    public var tailStart: Int { widePanels * width }

    /// First column of the narrow panel.
    @inlinable
    public var narrowStart: Int { tailStart + (hasTail ? tailWidth : 0) }

    /// Columns including the zero padding of the last panel.
    @inlinable
    public var paddedColumns: Int { narrowStart + (hasNarrow ? narrowWidth : 0) }
}

/// Runs the whole multiply: row blocks outside (their A rows stay in L1), wide panels inside, then the
/// tail and narrow panels if the layout has them.
@inlinable
public func gemm<Tile: GEMMTile, Tail: GEMMTile, Narrow: GEMMTile>(_ tile: Tile.Type, tail: Tail.Type,
                                                                   narrow: Narrow.Type, _ p: GEMMArguments) {
    let layout = GEMMLayout(columns: p.columns, width: Tile.width, tailWidth: Tail.width, narrowWidth: Narrow.width)
    gemmPanels(Tile.self, p, firstColumn: 0, panels: layout.widePanels)
    if layout.hasTail {
        gemmPanels(Tail.self, p, firstColumn: layout.tailStart, panels: 1)
    }
    if layout.hasNarrow {
        gemmPanels(Narrow.self, p, firstColumn: layout.narrowStart, panels: 1)
    }
}

/// `panels` panels of `Tile.width` columns starting at `firstColumn`.
@inlinable @inline(__always)
func gemmPanels<Tile: GEMMTile>(_ tile: Tile.Type, _ p: GEMMArguments, firstColumn: Int, panels: Int) {
    let width = Tile.width
    let panelStride = p.depth * width
    let packed = p.packed + firstColumn * p.depth
    let end = firstColumn + panels * width
    var row = 0
    while row + Tile.rows <= p.rows {
        var column = firstColumn, b = packed
        while column < end {
            Tile.block(a: p.a + row * p.lda, lda: p.lda, depth: p.depth, b: b, bias: p.bias + column,
                       c: p.c + row * p.ldc + column, ldc: p.ldc, residual: p.residual.map { $0 + row * p.ldc + column },
                       columns: min(width, p.columns - column), lower: p.lower, upper: p.upper)
            column += width
            b += panelStride
        }
        row += Tile.rows
    }
    while row < p.rows {
        var column = firstColumn, b = packed
        while column < end {
            Tile.row(a: p.a + row * p.lda, depth: p.depth, b: b, bias: p.bias + column, c: p.c + row * p.ldc + column,
                     residual: p.residual.map { $0 + row * p.ldc + column }, columns: min(width, p.columns - column),
                     lower: p.lower, upper: p.upper)
            column += width
            b += panelStride
        }
        row += 1
    }
}

/// Packs row-major weights `columns × depth` (output channel major, as TFLite stores conv and fully
/// connected filters) into the panels of `layout`: a panel holds, for each k, the weights of its
/// channels side by side, zero-padded past `columns`.
public func packGEMMWeights(_ weights: [Float], columns: Int, depth: Int, layout: GEMMLayout) -> [Float] {
    var packed = [Float](repeating: 0, count: layout.paddedColumns * depth)
    for column in 0..<columns {
        let (start, width): (Int, Int)
        if column < layout.tailStart {
            (start, width) = (column / layout.width * layout.width, layout.width)
        } else if column < layout.narrowStart {
            (start, width) = (layout.tailStart, layout.tailWidth)
        } else {
            (start, width) = (layout.narrowStart, layout.narrowWidth)
        }
        for k in 0..<depth {
            packed[start * depth + k * width + column - start] = weights[column * depth + k]
        }
    }
    return packed
}

/// Pads a bias vector with zeros to the padded columns of `layout`.
public func padBias(_ bias: [Float], layout: GEMMLayout) -> [Float] {
    bias + [Float](repeating: 0, count: max(layout.paddedColumns - bias.count, 0))
}

/// 6 rows × 16 columns: 6 SIMD16 accumulators, 12 of the 16 AVX2 registers (the baseline tile).
public enum GEMMTile6x16: GEMMTile {
    public static let rows = 6
    public static let width = 16

    @inlinable @inline(__always)
    public static func block(a: UnsafePointer<Float>, lda: Int, depth: Int, b: UnsafePointer<Float>,
                             bias: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>, ldc: Int,
                             residual: UnsafePointer<Float>?, columns: Int, lower: Float, upper: Float) {
        typealias V = SIMD16<Float>
        let initial = V(loadingFrom: bias)
        var c0 = gemmStart(initial, residual, 0), c1 = gemmStart(initial, residual, ldc)
        var c2 = gemmStart(initial, residual, 2 * ldc), c3 = gemmStart(initial, residual, 3 * ldc)
        var c4 = gemmStart(initial, residual, 4 * ldc), c5 = gemmStart(initial, residual, 5 * ldc)
        let a0 = a, a1 = a + lda, a2 = a + 2 * lda, a3 = a + 3 * lda, a4 = a + 4 * lda, a5 = a + 5 * lda
        var bp = b
        for k in 0..<depth {
            let bv = V(loadingFrom: bp)
            bp += 16
            c0 = c0.addingProduct(V(repeating: a0[k]), bv)
            c1 = c1.addingProduct(V(repeating: a1[k]), bv)
            c2 = c2.addingProduct(V(repeating: a2[k]), bv)
            c3 = c3.addingProduct(V(repeating: a3[k]), bv)
            c4 = c4.addingProduct(V(repeating: a4[k]), bv)
            c5 = c5.addingProduct(V(repeating: a5[k]), bv)
        }
        c0.clamped(lower, upper).store(to: c, count: columns)
        c1.clamped(lower, upper).store(to: c + ldc, count: columns)
        c2.clamped(lower, upper).store(to: c + 2 * ldc, count: columns)
        c3.clamped(lower, upper).store(to: c + 3 * ldc, count: columns)
        c4.clamped(lower, upper).store(to: c + 4 * ldc, count: columns)
        c5.clamped(lower, upper).store(to: c + 5 * ldc, count: columns)
    }

    @inlinable @inline(__always)
    public static func row(a: UnsafePointer<Float>, depth: Int, b: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                           c: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?, columns: Int, lower: Float,
                           upper: Float) {
        typealias V = SIMD16<Float>
        var c0 = gemmStart(V(loadingFrom: bias), residual, 0)
        var bp = b
        for k in 0..<depth {
            c0 = c0.addingProduct(V(repeating: a[k]), V(loadingFrom: bp))
            bp += 16
        }
        c0.clamped(lower, upper).store(to: c, count: columns)
    }
}

/// 8 rows × 32 columns: 16 SIMD16 accumulators, half of the 32 AVX-512 registers (the AVX-512 tile).
public enum GEMMTile8x32: GEMMTile {
    public static let rows = 8
    public static let width = 32

    @inlinable @inline(__always)
    public static func block(a: UnsafePointer<Float>, lda: Int, depth: Int, b: UnsafePointer<Float>,
                             bias: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>, ldc: Int,
                             residual: UnsafePointer<Float>?, columns: Int, lower: Float, upper: Float) {
        typealias V = SIMD16<Float>
        let i0 = V(loadingFrom: bias), i1 = V(loadingFrom: bias + 16)
        var c00 = gemmStart(i0, residual, 0), c01 = gemmStart(i1, residual, 16)
        var c10 = gemmStart(i0, residual, ldc), c11 = gemmStart(i1, residual, ldc + 16)
        var c20 = gemmStart(i0, residual, 2 * ldc), c21 = gemmStart(i1, residual, 2 * ldc + 16)
        var c30 = gemmStart(i0, residual, 3 * ldc), c31 = gemmStart(i1, residual, 3 * ldc + 16)
        var c40 = gemmStart(i0, residual, 4 * ldc), c41 = gemmStart(i1, residual, 4 * ldc + 16)
        var c50 = gemmStart(i0, residual, 5 * ldc), c51 = gemmStart(i1, residual, 5 * ldc + 16)
        var c60 = gemmStart(i0, residual, 6 * ldc), c61 = gemmStart(i1, residual, 6 * ldc + 16)
        var c70 = gemmStart(i0, residual, 7 * ldc), c71 = gemmStart(i1, residual, 7 * ldc + 16)
        let a0 = a, a1 = a + lda, a2 = a + 2 * lda, a3 = a + 3 * lda
        let a4 = a + 4 * lda, a5 = a + 5 * lda, a6 = a + 6 * lda, a7 = a + 7 * lda
        var bp = b
        for k in 0..<depth {
            let b0 = V(loadingFrom: bp), b1 = V(loadingFrom: bp + 16)
            bp += 32
            var s = V(repeating: a0[k]); c00 = c00.addingProduct(s, b0); c01 = c01.addingProduct(s, b1)
            s = V(repeating: a1[k]); c10 = c10.addingProduct(s, b0); c11 = c11.addingProduct(s, b1)
            s = V(repeating: a2[k]); c20 = c20.addingProduct(s, b0); c21 = c21.addingProduct(s, b1)
            s = V(repeating: a3[k]); c30 = c30.addingProduct(s, b0); c31 = c31.addingProduct(s, b1)
            s = V(repeating: a4[k]); c40 = c40.addingProduct(s, b0); c41 = c41.addingProduct(s, b1)
            s = V(repeating: a5[k]); c50 = c50.addingProduct(s, b0); c51 = c51.addingProduct(s, b1)
            s = V(repeating: a6[k]); c60 = c60.addingProduct(s, b0); c61 = c61.addingProduct(s, b1)
            s = V(repeating: a7[k]); c70 = c70.addingProduct(s, b0); c71 = c71.addingProduct(s, b1)
        }
        storePair(c00, c01, c, columns, lower, upper)
        storePair(c10, c11, c + ldc, columns, lower, upper)
        storePair(c20, c21, c + 2 * ldc, columns, lower, upper)
        storePair(c30, c31, c + 3 * ldc, columns, lower, upper)
        storePair(c40, c41, c + 4 * ldc, columns, lower, upper)
        storePair(c50, c51, c + 5 * ldc, columns, lower, upper)
        storePair(c60, c61, c + 6 * ldc, columns, lower, upper)
        storePair(c70, c71, c + 7 * ldc, columns, lower, upper)
    }

    @inlinable @inline(__always)
    public static func row(a: UnsafePointer<Float>, depth: Int, b: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                           c: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?, columns: Int, lower: Float,
                           upper: Float) {
        typealias V = SIMD16<Float>
        var c0 = gemmStart(V(loadingFrom: bias), residual, 0), c1 = gemmStart(V(loadingFrom: bias + 16), residual, 16)
        var bp = b
        for k in 0..<depth {
            let s = V(repeating: a[k])
            c0 = c0.addingProduct(s, V(loadingFrom: bp))
            c1 = c1.addingProduct(s, V(loadingFrom: bp + 16))
            bp += 32
        }
        storePair(c0, c1, c, columns, lower, upper)
    }

    /// Stores a row of two vectors, clamped, the second only as far as `columns` reaches.
    @_transparent
    public static func storePair(_ v0: SIMD16<Float>, _ v1: SIMD16<Float>, _ c: UnsafeMutablePointer<Float>, _ columns: Int,
                          _ lower: Float, _ upper: Float) {
        v0.clamped(lower, upper).store(to: c, count: columns)
        if columns > 16 { v1.clamped(lower, upper).store(to: c + 16, count: columns - 16) }
    }
}

/// 8 rows × 16 columns: the AVX-512 tile for a last panel of at most 16 channels.
public enum GEMMTile8x16: GEMMTile {
    public static let rows = 8
    public static let width = 16

    @inlinable @inline(__always)
    public static func block(a: UnsafePointer<Float>, lda: Int, depth: Int, b: UnsafePointer<Float>,
                             bias: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>, ldc: Int,
                             residual: UnsafePointer<Float>?, columns: Int, lower: Float, upper: Float) {
        typealias V = SIMD16<Float>
        let initial = V(loadingFrom: bias)
        var c0 = gemmStart(initial, residual, 0), c1 = gemmStart(initial, residual, ldc)
        var c2 = gemmStart(initial, residual, 2 * ldc), c3 = gemmStart(initial, residual, 3 * ldc)
        var c4 = gemmStart(initial, residual, 4 * ldc), c5 = gemmStart(initial, residual, 5 * ldc)
        var c6 = gemmStart(initial, residual, 6 * ldc), c7 = gemmStart(initial, residual, 7 * ldc)
        let a0 = a, a1 = a + lda, a2 = a + 2 * lda, a3 = a + 3 * lda
        let a4 = a + 4 * lda, a5 = a + 5 * lda, a6 = a + 6 * lda, a7 = a + 7 * lda
        var bp = b
        for k in 0..<depth {
            let bv = V(loadingFrom: bp)
            bp += 16
            c0 = c0.addingProduct(V(repeating: a0[k]), bv)
            c1 = c1.addingProduct(V(repeating: a1[k]), bv)
            c2 = c2.addingProduct(V(repeating: a2[k]), bv)
            c3 = c3.addingProduct(V(repeating: a3[k]), bv)
            c4 = c4.addingProduct(V(repeating: a4[k]), bv)
            c5 = c5.addingProduct(V(repeating: a5[k]), bv)
            c6 = c6.addingProduct(V(repeating: a6[k]), bv)
            c7 = c7.addingProduct(V(repeating: a7[k]), bv)
        }
        c0.clamped(lower, upper).store(to: c, count: columns)
        c1.clamped(lower, upper).store(to: c + ldc, count: columns)
        c2.clamped(lower, upper).store(to: c + 2 * ldc, count: columns)
        c3.clamped(lower, upper).store(to: c + 3 * ldc, count: columns)
        c4.clamped(lower, upper).store(to: c + 4 * ldc, count: columns)
        c5.clamped(lower, upper).store(to: c + 5 * ldc, count: columns)
        c6.clamped(lower, upper).store(to: c + 6 * ldc, count: columns)
        c7.clamped(lower, upper).store(to: c + 7 * ldc, count: columns)
    }

    @inlinable @inline(__always)
    public static func row(a: UnsafePointer<Float>, depth: Int, b: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                           c: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?, columns: Int, lower: Float,
                           upper: Float) {
        GEMMTile6x16.row(a: a, depth: depth, b: b, bias: bias, c: c, residual: residual, columns: columns, lower: lower,
                         upper: upper)
    }
}

/// The start value of one accumulator vector: the bias, plus the residual at `offset` when there is one.
@_transparent
public func gemmStart(_ bias: SIMD16<Float>, _ residual: UnsafePointer<Float>?, _ offset: Int) -> SIMD16<Float> {
    guard let residual else { return bias }
    return bias + SIMD16(loadingFrom: residual + offset)
}

/// 8 rows × 8 columns in SIMD8 accumulators (one YMM register each): the panel for a remainder of at
/// most 8 channels, on both kernel sets.
public enum GEMMTile8x8: GEMMTile {
    public static let rows = 8
    public static let width = 8

    @inlinable @inline(__always)
    public static func block(a: UnsafePointer<Float>, lda: Int, depth: Int, b: UnsafePointer<Float>,
                             bias: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>, ldc: Int,
                             residual: UnsafePointer<Float>?, columns: Int, lower: Float, upper: Float) {
        typealias V = SIMD8<Float>
        let initial = V(loadingFrom: bias)
        var c0 = gemmStart(initial, residual, 0), c1 = gemmStart(initial, residual, ldc)
        var c2 = gemmStart(initial, residual, 2 * ldc), c3 = gemmStart(initial, residual, 3 * ldc)
        var c4 = gemmStart(initial, residual, 4 * ldc), c5 = gemmStart(initial, residual, 5 * ldc)
        var c6 = gemmStart(initial, residual, 6 * ldc), c7 = gemmStart(initial, residual, 7 * ldc)
        let a0 = a, a1 = a + lda, a2 = a + 2 * lda, a3 = a + 3 * lda
        let a4 = a + 4 * lda, a5 = a + 5 * lda, a6 = a + 6 * lda, a7 = a + 7 * lda
        var bp = b
        for k in 0..<depth {
            let bv = V(loadingFrom: bp)
            bp += 8
            c0 = c0.addingProduct(V(repeating: a0[k]), bv)
            c1 = c1.addingProduct(V(repeating: a1[k]), bv)
            c2 = c2.addingProduct(V(repeating: a2[k]), bv)
            c3 = c3.addingProduct(V(repeating: a3[k]), bv)
            c4 = c4.addingProduct(V(repeating: a4[k]), bv)
            c5 = c5.addingProduct(V(repeating: a5[k]), bv)
            c6 = c6.addingProduct(V(repeating: a6[k]), bv)
            c7 = c7.addingProduct(V(repeating: a7[k]), bv)
        }
        c0.clamped(lower, upper).store(to: c, count: columns)
        c1.clamped(lower, upper).store(to: c + ldc, count: columns)
        c2.clamped(lower, upper).store(to: c + 2 * ldc, count: columns)
        c3.clamped(lower, upper).store(to: c + 3 * ldc, count: columns)
        c4.clamped(lower, upper).store(to: c + 4 * ldc, count: columns)
        c5.clamped(lower, upper).store(to: c + 5 * ldc, count: columns)
        c6.clamped(lower, upper).store(to: c + 6 * ldc, count: columns)
        c7.clamped(lower, upper).store(to: c + 7 * ldc, count: columns)
    }

    @inlinable @inline(__always)
    public static func row(a: UnsafePointer<Float>, depth: Int, b: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                           c: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>?, columns: Int, lower: Float,
                           upper: Float) {
        typealias V = SIMD8<Float>
        var c0 = gemmStart(V(loadingFrom: bias), residual, 0)
        var bp = b
        for k in 0..<depth {
            c0 = c0.addingProduct(V(repeating: a[k]), V(loadingFrom: bp))
            bp += 8
        }
        c0.clamped(lower, upper).store(to: c, count: columns)
    }
}

/// The start value of one 8-lane accumulator: the bias, plus the residual at `offset` when there is one.
@_transparent
public func gemmStart(_ bias: SIMD8<Float>, _ residual: UnsafePointer<Float>?, _ offset: Int) -> SIMD8<Float> {
    guard let residual else { return bias }
    return bias + SIMD8(loadingFrom: residual + offset)
}
