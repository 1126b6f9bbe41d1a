import VFXCore

/// A fused color run as a 3D table in the frame's own Y'CbCr, applied on I420/NV12 planes in one pass per
/// 2×2 block.
///
/// The table has a node at every 8-bit luma code (256) and 33 nodes along Cb and Cr. Tetrahedral
/// interpolation on such a grid, at an integer luma, is exact along luma and reduces to interpolation on a
/// triangle in (Cb, Cr): three table reads per output sample, with the triangle and its weights found once per
/// block (all four pixels of a 4:2:0 block share their chroma).
///
/// How luma varies in a block: each pixel's Y' is read at its own luma. The block's output chroma is read at
/// the block's mean luma. That is exact when the run's chroma output is affine in luma within the block
/// (any matrix-like run without clipping) and off by the curvature otherwise; on real photos the difference
/// from averaging the four pixels' own output chroma is below one code in nearly every block (see the tests).
///
/// ```swift
/// let kernel = YUVTableKernel(coding: YUVCoding(.bt709), chromaInterleaved: false) { 1 - $0 }
/// kernel.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class YUVTableKernel: ColorKernel {
    /// Nodes along Cb and along Cr.
    static let chromaNodes = 33
    /// Output luma ×256, index `(cr·N + cb)·256 + y`.
    private let lumaTable: UnsafeMutablePointer<UInt16>
    /// Output (Cb, Cr) ×256, index `((cr·N + cb)·256 + y)·2`.
    private let chromaTable: UnsafeMutablePointer<UInt16>
    /// For each chroma code: its cell (lower node) and the position inside the cell (0…1).
    private let cell: UnsafeMutablePointer<Int32>
    private let fraction: UnsafeMutablePointer<Float>
    let chromaInterleaved: Bool

    init(coding: YUVCoding, chromaInterleaved: Bool, evaluate: @Sendable (SIMD3<Float>) -> SIMD3<Float>) {
        let n = YUVTableKernel.chromaNodes
        self.chromaInterleaved = chromaInterleaved
        lumaTable = .allocate(capacity: n * n * 256)
        chromaTable = .allocate(capacity: n * n * 256 * 2)
        cell = .allocate(capacity: 256)
        fraction = .allocate(capacity: 256)
        for code in 0..<256 {
            let position = Float(code) * Float(n - 1) / 255
            let lower = min(Int(position), n - 2)
            cell[code] = Int32(lower)
            fraction[code] = position - Float(lower)
        }
        for cr in 0..<n {
            let v = Float(cr) * 255 / Float(n - 1)
            for cb in 0..<n {
                let u = Float(cb) * 255 / Float(n - 1)
                let node = (cr * n + cb) * 256
                for y in 0..<256 {
                    let out = coding.codes(evaluate(coding.rgb(y: Float(y), u: u, v: v).clampedToUnit))
                    let scaled = pointwiseMin(pointwiseMax(out, .zero), SIMD3(repeating: 255)) * 256
                    lumaTable[node + y] = UInt16(scaled.x.rounded())
                    chromaTable[(node + y) * 2] = UInt16(scaled.y.rounded())
                    chromaTable[(node + y) * 2 + 1] = UInt16(scaled.z.rounded())
                }
            }
        }
    }

    deinit {
        lumaTable.deallocate()
        chromaTable.deallocate()
        cell.deallocate()
        fraction.deallocate()
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let luma = planes[0]
        let cbPlane = planes[1]
        let crPlane = chromaInterleaved ? planes[1] : planes[2]
        let crOffset = chromaInterleaved ? 1 : 0
        let step = chromaInterleaved ? 2 : 1
        let chromaWidth = (width + 1) / 2
        let n = YUVTableKernel.chromaNodes
        let (lumaTable, chromaTable, cell, fraction) = (self.lumaTable, self.chromaTable, self.cell, self.fraction)
        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                let top = luma.row(2 * cy)
                let bottom = luma.row(min(2 * cy + 1, height - 1))
                let cbRow = cbPlane.row(cy)
                let crRow = crPlane.row(cy) + crOffset
                for cx in 0..<chromaWidth {
                    let cb = Int(cbRow[cx * step]), cr = Int(crRow[cx * step])
                    let iu = Int(cell[cb]), iv = Int(cell[cr])
                    let fu = fraction[cb], fv = fraction[cr]
                    // The triangle of the (Cb, Cr) cell that holds the point, and its barycentric weights
                    // (pre-divided by the tables' ×256).
                    let base = (iv * n + iu) * 256
                    let far = base + (n + 1) * 256
                    let middle: Int, w0: Float, w1: Float, w2: Float
                    if fu >= fv {
                        middle = base + 256
                        (w0, w1, w2) = ((1 - fu) / 256, (fu - fv) / 256, fv / 256)
                    } else {
                        middle = base + n * 256
                        (w0, w1, w2) = ((1 - fv) / 256, (fv - fu) / 256, fu / 256)
                    }
                    let x0 = 2 * cx, x1 = min(2 * cx + 1, width - 1)
                    let y00 = Int(top[x0]), y01 = Int(top[x1]), y10 = Int(bottom[x0]), y11 = Int(bottom[x1])
                    @inline(__always) func lookup(_ y: Int) -> UInt8 {
                        let value = w0 * Float(lumaTable[base + y]) + w1 * Float(lumaTable[middle + y])
                            + w2 * Float(lumaTable[far + y]) + 0.5
                        return UInt8(truncatingIfNeeded: Int32(value))
                    }
                    top[x0] = lookup(y00)
                    top[x1] = lookup(y01)
                    bottom[x0] = lookup(y10)
                    bottom[x1] = lookup(y11)
                    let mean = (y00 + y01 + y10 + y11 + 2) >> 2
                    let c0 = (base + mean) * 2, c1 = (middle + mean) * 2, c2 = (far + mean) * 2
                    let outCb = w0 * Float(chromaTable[c0]) + w1 * Float(chromaTable[c1]) + w2 * Float(chromaTable[c2]) + 0.5
                    let outCr = w0 * Float(chromaTable[c0 + 1]) + w1 * Float(chromaTable[c1 + 1])
                        + w2 * Float(chromaTable[c2 + 1]) + 0.5
                    cbRow[cx * step] = UInt8(truncatingIfNeeded: Int32(outCb))
                    crRow[cx * step] = UInt8(truncatingIfNeeded: Int32(outCr))
                }
            }
        }
    }
}
