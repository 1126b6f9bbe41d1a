#if arch(x86_64) && VFX_HASWELL
import _Builtin_intrinsics.intel
#endif
import VFXCore

/// A fused color run as a 3D table in the frame's own Y'CbCr, applied on I420/NV12 planes in one pass per
/// 2×2 block.
///
/// The table has a node at every 8-bit luma code (256) and 33 nodes along Cb and Cr. Tetrahedral
/// interpolation on such a grid, at an integer luma, is exact along luma and reduces to interpolation on a
/// triangle in (Cb, Cr), with the triangle and its weights found once per block (all four pixels of a 4:2:0
/// block share their chroma).
///
/// The table is stored per (Cb, Cr) cell and luma code as the run's outputs at the cell's four corners, in 1/128 of
/// a code (Int16): a luma entry is 8 bytes (Y' at the four corners), a chroma entry 16 (Cb', then Cr'). A block's
/// triangle is a weight vector over the four corners (the corner off the triangle weighs 0), so each output sample is
/// one load and one multiply-add of four 16-bit pairs (`pmaddwd`): the block's four luma lookups are two such vectors,
/// its chroma one.
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
    /// Cells along Cb and along Cr.
    static let cells = chromaNodes - 1
    /// Y'·128 at the corners (Cb₀Cr₀, Cb₁Cr₀, Cb₀Cr₁, Cb₁Cr₁) of cell `(cr·cells + cb)`, at luma `y`: entry `cell·256 + y`.
    private let luma: UnsafeMutablePointer<SIMD4<Int16>>
    /// Cb'·128 at the four corners, then Cr'·128: entry `cell·256 + y`.
    private let chroma: UnsafeMutablePointer<SIMD8<Int16>>
    /// For each chroma code: its cell (lower node) and the position inside the cell in 1/256.
    private let cell: UnsafeMutablePointer<Int32>
    private let fraction: UnsafeMutablePointer<Int32>
    let chromaInterleaved: Bool

    init(coding: YUVCoding, chromaInterleaved: Bool, evaluate: @Sendable (SIMD3<Float>) -> SIMD3<Float>) {
        let (n, cells) = (YUVTableKernel.chromaNodes, YUVTableKernel.cells)
        self.chromaInterleaved = chromaInterleaved
        luma = .allocate(capacity: cells * cells * 256)
        chroma = .allocate(capacity: cells * cells * 256)
        cell = .allocate(capacity: 256)
        fraction = .allocate(capacity: 256)
        for code in 0..<256 {
            let position = Float(code) * Float(cells) / 255
            let lower = min(Int(position), cells - 1)
            cell[code] = Int32(lower)
            fraction[code] = Int32(((position - Float(lower)) * 256).rounded())
        }
        // The run's outputs at every node, in 1/128 of a code, then copied to the corners of each cell.
        var nodes = [SIMD3<Int16>](repeating: .zero, count: n * n * 256)
        for cr in 0..<n {
            let v = Float(cr) * 255 / Float(cells)
            for cb in 0..<n {
                let u = Float(cb) * 255 / Float(cells)
                for y in 0..<256 {
                    let out = coding.codes(evaluate(coding.rgb(y: Float(y), u: u, v: v).clampedToUnit))
                    let scaled = pointwiseMin(pointwiseMax(out, .zero), SIMD3(repeating: 255)) * 128
                    nodes[(cr * n + cb) * 256 + y] = SIMD3(Int16(scaled.x.rounded()), Int16(scaled.y.rounded()), Int16(scaled.z.rounded()))
                }
            }
        }
        for cr in 0..<cells {
            for cb in 0..<cells {
                let first = (cr * n + cb) * 256, above = ((cr + 1) * n + cb) * 256
                for y in 0..<256 {
                    let (a, b, c, d) = (nodes[first + y], nodes[first + 256 + y], nodes[above + y], nodes[above + 256 + y])
                    let entry = (cr * cells + cb) * 256 + y
                    luma[entry] = SIMD4(a.x, b.x, c.x, d.x)
                    chroma[entry] = SIMD8(a.y, b.y, c.y, d.y, a.z, b.z, c.z, d.z)
                }
            }
        }
    }

    deinit {
        luma.deallocate()
        chroma.deallocate()
        cell.deallocate()
        fraction.deallocate()
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let lumaPlane = planes[0]
        let cbPlane = planes[1]
        let crPlane = chromaInterleaved ? planes[1] : planes[2]
        let crOffset = chromaInterleaved ? 1 : 0
        let step = chromaInterleaved ? 2 : 1
        let chromaWidth = (width + 1) / 2
        let cells = YUVTableKernel.cells
        let (luma, chroma, cell, fraction) = (self.luma, self.chroma, self.cell, self.fraction)
        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                let top = lumaPlane.row(2 * cy)
                let bottom = lumaPlane.row(min(2 * cy + 1, height - 1))
                let cbRow = cbPlane.row(cy)
                let crRow = crPlane.row(cy) + crOffset
                for cx in 0..<chromaWidth {
                    let cb = Int(cbRow[cx * step]), cr = Int(crRow[cx * step])
                    let fu = fraction[cb], fv = fraction[cr]
                    // The triangle of the (Cb, Cr) cell that holds the point, as weights in 1/256 on the cell's four
                    // corners: (0,0), then (1,0) or (0,1) by the larger fraction, then (1,1); the fourth weighs 0.
                    // Packed as four 16-bit lanes of one integer (cheaper than building a vector lane by lane).
                    let middle = UInt64(abs(fu - fv)), alongCb = fu >= fv
                    let weights = UInt64(256 - max(fu, fv)) | (alongCb ? middle << 16 : middle << 32) | UInt64(min(fu, fv)) << 48
                    let entry = (Int(cell[cr]) * cells + Int(cell[cb])) * 256
                    let x0 = 2 * cx, x1 = min(2 * cx + 1, width - 1)
                    let y00 = Int(top[x0]), y01 = Int(top[x1]), y10 = Int(bottom[x0]), y11 = Int(bottom[x1])
                    let mean = (y00 + y01 + y10 + y11 + 2) >> 2
                    let block = Self.lookup(luma + entry, y00, y01, y10, y11, chroma: chroma + entry + mean, weights)
                    // Written one byte at a time: at an odd width x1 is x0, and both writes carry the same value.
                    top[x0] = UInt8(truncatingIfNeeded: block.luma)
                    top[x1] = UInt8(truncatingIfNeeded: block.luma >> 8)
                    bottom[x0] = UInt8(truncatingIfNeeded: block.luma >> 16)
                    bottom[x1] = UInt8(truncatingIfNeeded: block.luma >> 24)
                    cbRow[cx * step] = block.cb
                    crRow[cx * step] = block.cr
                }
            }
        }
    }

    /// The four pixels' output luma codes (bytes 0–3 of `luma`: top left, top right, bottom left, bottom right) and the
    /// block's output chroma, each the weighted sum of its entry's corners (`weights`: four 16-bit lanes, lowest first),
    /// rounded from 1/(128·256) of a code.
    @inline(__always)
    private static func lookup(_ luma: UnsafeMutablePointer<SIMD4<Int16>>, _ y00: Int, _ y01: Int, _ y10: Int, _ y11: Int,
                               chroma: UnsafeMutablePointer<SIMD8<Int16>>, _ weights: UInt64)
        -> (luma: UInt32, cb: UInt8, cr: UInt8) {
        #if arch(x86_64) && VFX_HASWELL
        let w = _mm_set1_epi64x(Int64(bitPattern: weights))
        func pair(_ a: Int, _ b: Int) -> __m128i {
            _mm_set_epi64x(unsafeBitCast(luma[b], to: Int64.self), unsafeBitCast(luma[a], to: Int64.self))
        }
        // madd: two partial sums per pixel; hadd: one sum per pixel (top left, top right, bottom left, bottom right).
        let sums = _mm_hadd_epi32(_mm_madd_epi16(pair(y00, y01), w), _mm_madd_epi16(pair(y10, y11), w))
        let rounded = _mm_srai_epi32(_mm_add_epi32(sums, _mm_set1_epi32(1 << 14)), 15)
        let bytes = _mm_packus_epi16(_mm_packus_epi32(rounded, rounded), _mm_setzero_si128())
        let c = _mm_madd_epi16(unsafeBitCast(chroma.pointee, to: __m128i.self), w)
        let cbcr = unsafeBitCast(_mm_srai_epi32(_mm_add_epi32(_mm_hadd_epi32(c, c), _mm_set1_epi32(1 << 14)), 15),
                                 to: SIMD4<Int32>.self)
        return (UInt32(truncatingIfNeeded: _mm_cvtsi128_si32(bytes)), UInt8(truncatingIfNeeded: cbcr[0]),
                UInt8(truncatingIfNeeded: cbcr[1]))
        #else
        let w = SIMD4<Int32>(truncatingIfNeeded: unsafeBitCast(weights, to: SIMD4<Int16>.self))
        @inline(__always) func code(_ corners: SIMD4<Int16>) -> UInt32 {
            UInt32(truncatingIfNeeded: ((SIMD4<Int32>(truncatingIfNeeded: corners) &* w).wrappedSum() + (1 << 14)) >> 15)
        }
        let entry = chroma.pointee
        let cb = code(entry.lowHalf), cr = code(entry.highHalf)
        return (code(luma[y00]) | code(luma[y01]) << 8 | code(luma[y10]) << 16 | code(luma[y11]) << 24,
                UInt8(truncatingIfNeeded: cb), UInt8(truncatingIfNeeded: cr))
        #endif
    }
}
