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
    /// Output (Y, Cb, Cr, unused) ×256 of node `(cr·N + cb)·256 + y`, four values per entry so that a block's chroma
    /// lookups fall in the cache lines of its luma lookups.
    private let table: UnsafeMutablePointer<UInt16>
    /// For each chroma code: its cell (lower node) and the position inside the cell in 1/256.
    private let cell: UnsafeMutablePointer<Int32>
    private let fraction: UnsafeMutablePointer<Int32>
    let chromaInterleaved: Bool

    init(coding: YUVCoding, chromaInterleaved: Bool, evaluate: @Sendable (SIMD3<Float>) -> SIMD3<Float>) {
        let n = YUVTableKernel.chromaNodes
        self.chromaInterleaved = chromaInterleaved
        table = .allocate(capacity: n * n * 256 * 4)
        cell = .allocate(capacity: 256)
        fraction = .allocate(capacity: 256)
        for code in 0..<256 {
            let position = Float(code) * Float(n - 1) / 255
            let lower = min(Int(position), n - 2)
            cell[code] = Int32(lower)
            fraction[code] = Int32(((position - Float(lower)) * 256).rounded())
        }
        for cr in 0..<n {
            let v = Float(cr) * 255 / Float(n - 1)
            for cb in 0..<n {
                let u = Float(cb) * 255 / Float(n - 1)
                let node = (cr * n + cb) * 256
                for y in 0..<256 {
                    let out = coding.codes(evaluate(coding.rgb(y: Float(y), u: u, v: v).clampedToUnit))
                    let scaled = pointwiseMin(pointwiseMax(out, .zero), SIMD3(repeating: 255)) * 256
                    let entry = table + (node + y) * 4
                    entry[0] = UInt16(scaled.x.rounded())
                    entry[1] = UInt16(scaled.y.rounded())
                    entry[2] = UInt16(scaled.z.rounded())
                    entry[3] = 0
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
        let luma = planes[0]
        let cbPlane = planes[1]
        let crPlane = chromaInterleaved ? planes[1] : planes[2]
        let crOffset = chromaInterleaved ? 1 : 0
        let step = chromaInterleaved ? 2 : 1
        let chromaWidth = (width + 1) / 2
        let n = YUVTableKernel.chromaNodes
        let (table, cell, fraction) = (self.table, self.cell, self.fraction)
        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                let top = luma.row(2 * cy)
                let bottom = luma.row(min(2 * cy + 1, height - 1))
                let cbRow = cbPlane.row(cy)
                let crRow = crPlane.row(cy) + crOffset
                for cx in 0..<chromaWidth {
                    let cb = Int(cbRow[cx * step]), cr = Int(crRow[cx * step])
                    let fu = fraction[cb], fv = fraction[cr]
                    // The triangle of the (Cb, Cr) cell that holds the point and its barycentric weights in 1/256:
                    // (0,0), then (1,0) or (0,1) by the larger fraction, then (1,1). No branch: the choice is
                    // a conditional move.
                    let base = table + (Int(cell[cr]) * n + Int(cell[cb])) * 1024
                    let far = base + (n + 1) * 1024
                    let middle = base + (fu >= fv ? 1024 : n * 1024)
                    let w0 = 256 - max(fu, fv), w1 = abs(fu - fv), w2 = min(fu, fv)
                    let x0 = 2 * cx, x1 = min(2 * cx + 1, width - 1)
                    let y00 = Int(top[x0]), y01 = Int(top[x1]), y10 = Int(bottom[x0]), y11 = Int(bottom[x1])
                    @inline(__always) func lookup(_ y: Int) -> UInt8 {
                        let sum = w0 * Int32(base[4 * y]) + w1 * Int32(middle[4 * y]) + w2 * Int32(far[4 * y])
                        return UInt8(truncatingIfNeeded: (sum + 32768) >> 16)
                    }
                    top[x0] = lookup(y00)
                    top[x1] = lookup(y01)
                    bottom[x0] = lookup(y10)
                    bottom[x1] = lookup(y11)
                    let mean = 4 * ((y00 + y01 + y10 + y11 + 2) >> 2)
                    let outCb = w0 * Int32(base[mean + 1]) + w1 * Int32(middle[mean + 1]) + w2 * Int32(far[mean + 1])
                    let outCr = w0 * Int32(base[mean + 2]) + w1 * Int32(middle[mean + 2]) + w2 * Int32(far[mean + 2])
                    cbRow[cx * step] = UInt8(truncatingIfNeeded: (outCb + 32768) >> 16)
                    crRow[cx * step] = UInt8(truncatingIfNeeded: (outCr + 32768) >> 16)
                }
            }
        }
    }
}
