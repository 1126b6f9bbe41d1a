import VFXCore

/// A fused color run as a 3D table in R'G'B' (`size`³ nodes), applied to RGBA/BGRA pixels with tetrahedral
/// interpolation; alpha is kept.
///
/// Each pixel reads the four corners of one tetrahedron of its cell (`tetrahedral`), so an affine run is
/// reproduced exactly.
///
/// ```swift
/// let kernel = RGBTableKernel(size: 33, redOffset: 0) { SIMD3($0.y, $0.z, $0.x) }
/// kernel.apply(to: frame.planes, width: 512, height: 512, slices: SliceRunner(threads: 1))
/// ```
final class RGBTableKernel: ColorKernel {
    let size: Int
    /// Byte offset of red in a pixel (0 for RGBA, 2 for BGRA); blue is at `2 − redOffset`.
    let redOffset: Int
    /// Output R, G, B in 0…255 (fourth lane unused), index `(b·size + g)·size + r`.
    private let table: UnsafeMutablePointer<SIMD4<Float>>
    /// For each code: its cell (lower node) and the position inside it.
    private let cell: UnsafeMutablePointer<Int32>
    private let fraction: UnsafeMutablePointer<Float>

    /// A grid size whose nodes include those of a `cubeSize`-node table (so resampling it loses nothing),
    /// at least 33 and at most 65 nodes.
    static func gridSize(for cubeSize: Int) -> Int {
        guard cubeSize > 1, cubeSize <= 65 else { return 65 }
        let cells = cubeSize - 1
        return cells * ((32 + cells - 1) / cells) + 1
    }

    init(size: Int, redOffset: Int, evaluate: @Sendable (SIMD3<Float>) -> SIMD3<Float>) {
        self.size = size
        self.redOffset = redOffset
        table = .allocate(capacity: size * size * size)
        cell = .allocate(capacity: 256)
        fraction = .allocate(capacity: 256)
        for code in 0..<256 {
            let position = Float(code) * Float(size - 1) / 255
            let lower = min(Int(position), size - 2)
            cell[code] = Int32(lower)
            fraction[code] = position - Float(lower)
        }
        let step = 1 / Float(size - 1)
        for b in 0..<size {
            for g in 0..<size {
                for r in 0..<size {
                    let out = evaluate(SIMD3(Float(r), Float(g), Float(b)) * step).clampedToUnit * 255
                    table[(b * size + g) * size + r] = SIMD4(out, 0)
                }
            }
        }
    }

    deinit {
        table.deallocate()
        cell.deallocate()
        fraction.deallocate()
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let plane = planes[0]
        let (table, cell, fraction, size) = (self.table, self.cell, self.fraction, self.size)
        let redOffset = self.redOffset, blueOffset = 2 - self.redOffset
        let dg = size, db = size * size
        slices.run(rows: height) { rows in
            for y in rows {
                var pixel = plane.row(y)
                for _ in 0..<width {
                    let r = Int(pixel[redOffset]), g = Int(pixel[1]), b = Int(pixel[blueOffset])
                    let fr = fraction[r], fg = fraction[g], fb = fraction[b]
                    let origin = table + ((Int(cell[b]) * size + Int(cell[g])) * size + Int(cell[r]))
                    var out = tetrahedral(SIMD3(fr, fg, fb), greenStride: dg, blueStride: db) { origin[$0] }
                    out += 0.5
                    pixel[redOffset] = UInt8(truncatingIfNeeded: Int32(out.x))
                    pixel[1] = UInt8(truncatingIfNeeded: Int32(out.y))
                    pixel[blueOffset] = UInt8(truncatingIfNeeded: Int32(out.z))
                    pixel += 4
                }
            }
        }
    }
}

/// Tetrahedral interpolation in one cell of a 3D table: the cell is cut into six tetrahedra along its main
/// diagonal, the ordering of the fractions `f` (red, green, blue) picks one, and its four corners are blended.
/// `node(offset)` reads the node at `offset` from the cell's lower corner (red stride 1).
///
/// ```swift
/// let value = tetrahedral(SIMD3(0.2, 0.7, 0.1), greenStride: 33, blueStride: 33 * 33) { table[origin + $0] }
/// ```
@inline(__always)
func tetrahedral<Value: SIMD>(_ f: SIMD3<Float>, greenStride dg: Int, blueStride db: Int,
                              node: (Int) -> Value) -> Value where Value.Scalar == Float {
    let (fr, fg, fb) = (f.x, f.y, f.z)
    let c000 = node(0), c111 = node(db + dg + 1)
    if fr > fg {
        if fg > fb {
            return (1 - fr) * c000 + (fr - fg) * node(1) + (fg - fb) * node(dg + 1) + fb * c111
        } else if fr > fb {
            return (1 - fr) * c000 + (fr - fb) * node(1) + (fb - fg) * node(db + 1) + fg * c111
        } else {
            return (1 - fb) * c000 + (fb - fr) * node(db) + (fr - fg) * node(db + 1) + fg * c111
        }
    } else if fb > fg {
        return (1 - fb) * c000 + (fb - fg) * node(db) + (fg - fr) * node(db + dg) + fr * c111
    } else if fb > fr {
        return (1 - fg) * c000 + (fg - fb) * node(dg) + (fb - fr) * node(db + dg) + fr * c111
    } else {
        return (1 - fg) * c000 + (fg - fr) * node(dg) + (fr - fb) * node(dg + 1) + fb * c111
    }
}
