import VFXCore

/// A lone affine color transform (`clamp(M·rgb + offset)`: sepia, color-matrix, channel-mixer…) applied
/// exactly to each pixel of an I420/NV12 frame, 16 pixels at a time, with no table.
///
/// Per pixel: R'G'B' from its luma and its block's chroma, the matrix, the clamp, and the output luma. Each
/// block's output chroma is computed from the mean of its four clamped output R'G'B' values, which is what
/// converting the block to RGB, filtering and converting back with box-filtered 4:2:0 chroma gives.
///
/// Because the matrix is linear, `M·(Y'·1 + chroma)` splits into `Y'·(M·1)` plus a term that depends only on the
/// block's chroma, computed once per block.
///
/// ```swift
/// let kernel = AffineYUVKernel(matrix: sepiaMatrix, coding: YUVCoding(.bt709), chromaInterleaved: false)
/// kernel.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class AffineYUVKernel: ColorKernel {
    /// Output channel c (R, G, B) = `clamp(Y·lumaGain[c] + Cb·fromCb[c] + Cr·fromCr[c] + constant[c])` on 8-bit codes.
    let lumaGain: SIMD3<Float>
    let fromCb: SIMD3<Float>
    let fromCr: SIMD3<Float>
    let constant: SIMD3<Float>
    let coding: YUVCoding
    let chromaInterleaved: Bool

    init(matrix: ColorMatrix, coding: YUVCoding, chromaInterleaved: Bool) {
        self.coding = coding
        self.chromaInterleaved = chromaInterleaved
        let w = coding.weights
        let rows = [matrix.red, matrix.green, matrix.blue]
        // R = Y' + rP·Pr, G = Y' − (Kr·rP·Pr + Kb·bP·Pb)/Kg, B = Y' + bP·Pb; Y' = (Y − offset)/scale, P = (C − 128)/cs.
        let rP = coding.redFromPr, bP = coding.blueFromPb, cs = coding.chromaScale
        let gain = rows.map { $0.sum() / coding.lumaScale }
        let cb = rows.map { ($0.z * bP - $0.y * w.blue * bP / w.green) / cs }
        let cr = rows.map { ($0.x * rP - $0.y * w.red * rP / w.green) / cs }
        let offsets = [matrix.offset.x, matrix.offset.y, matrix.offset.z]
        let constants = (0..<3).map { c in offsets[c] - coding.lumaOffset * gain[c] - 128 * (cb[c] + cr[c]) }
        lumaGain = SIMD3(gain[0], gain[1], gain[2])
        fromCb = SIMD3(cb[0], cb[1], cb[2])
        fromCr = SIMD3(cr[0], cr[1], cr[2])
        constant = SIMD3(constants[0], constants[1], constants[2])
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if chromaInterleaved {
            run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self)
        } else {
            run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self)
        }
    }

    private func run<Layout: ChromaLayout>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner, layout: Layout.Type) {
        let luma = planes[0]
        let cbPlane = planes[1]
        let crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let (gain, fromCb, fromCr, constant) = (lumaGain, self.fromCb, self.fromCr, self.constant)
        let weights = coding.weights
        let outScale = coding.lumaScale, outOffset = coding.lumaOffset
        let toCb = coding.chromaScale / coding.blueFromPb, toCr = coding.chromaScale / coding.redFromPr
        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                let rowCount = 2 * cy + 1 < height ? 2 : 1
                let top = luma.row(2 * cy), bottom = luma.row(2 * cy + rowCount - 1)
                if width % 2 == 1 {
                    // The last block has one column: repeat it into the row padding so the block mean is right.
                    top[width] = top[width - 1]
                    bottom[width] = bottom[width - 1]
                }
                let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy)
                let meanScale = 1 / Float(2 * rowCount)
                var cx = 0
                while cx < chromaWidth {
                    // Even and odd luma columns are kept apart, so each lines up with its block's chroma lane.
                    let (cb, cr) = Layout.load(cbRow, crRow, at: cx)
                    let kR = SIMD8(repeating: constant.x).addingProduct(cb, fromCb.x).addingProduct(cr, fromCr.x)
                    let kG = SIMD8(repeating: constant.y).addingProduct(cb, fromCb.y).addingProduct(cr, fromCr.y)
                    let kB = SIMD8(repeating: constant.z).addingProduct(cb, fromCb.z).addingProduct(cr, fromCr.z)
                    var sumR = SIMD8<Float>(), sumG = SIMD8<Float>(), sumB = SIMD8<Float>()
                    for index in 0..<rowCount {
                        let pointer = (index == 0 ? top : bottom) + 2 * cx
                        let (even, odd) = evenAndOddBytes(pointer)
                        var output = (SIMD8<Float>(), SIMD8<Float>())
                        for parity in 0..<2 {
                            let y = parity == 0 ? even : odd
                            let r = kR.addingProduct(y, gain.x).clampedToUnit
                            let g = kG.addingProduct(y, gain.y).clampedToUnit
                            let b = kB.addingProduct(y, gain.z).clampedToUnit
                            let luma = (r * (weights.red * outScale)).addingProduct(g, weights.green * outScale)
                                .addingProduct(b, weights.blue * outScale) + outOffset
                            if parity == 0 { output.0 = luma } else { output.1 = luma }
                            sumR += r
                            sumG += g
                            sumB += b
                        }
                        storeInterleaved(roundedBytes(output.0), roundedBytes(output.1), at: pointer)
                    }
                    let r = sumR * meanScale, g = sumG * meanScale, b = sumB * meanScale
                    let y = (r * weights.red).addingProduct(g, weights.green).addingProduct(b, weights.blue)
                    let outCb = ((b - y) * toCb) + 128
                    let outCr = ((r - y) * toCr) + 128
                    Layout.store(roundedBytes(outCb), roundedBytes(outCr), cbRow, crRow, at: cx)
                    cx += 8
                }
            }
        }
    }
}

/// 16 bytes as floats of the even and of the odd positions (read as 8 little-endian 16-bit pairs: the even byte is the
/// low half; masks and shifts that stay vector instructions wherever this is inlined).
@inline(__always) func evenAndOddBytes(_ pointer: UnsafePointer<UInt8>) -> (SIMD8<Float>, SIMD8<Float>) {
    let pairs = UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<UInt16>.self)
    let evenBytes = pairs & 0xFF, oddBytes = pairs &>> 8
    var even = SIMD8<Float>(), odd = SIMD8<Float>()
    for lane in 0..<8 {
        even[lane] = Float(Int32(truncatingIfNeeded: evenBytes[lane]))
        odd[lane] = Float(Int32(truncatingIfNeeded: oddBytes[lane]))
    }
    return (even, odd)
}

/// The frame rows of chroma row `cy`'s blocks (a last single row stands for both). With an odd width, each row's last
/// sample is repeated into its padding, so the one-column blocks at the right edge average the right values.
@inline(__always) func blockRows(of luma: Plane, chromaRow cy: Int, width: Int, height: Int) -> (top: Int, bottom: Int) {
    let (top, bottom) = (2 * cy, min(2 * cy + 1, height - 1))
    if width % 2 == 1 {
        luma.row(top)[width] = luma.row(top)[width - 1]
        luma.row(bottom)[width] = luma.row(bottom)[width - 1]
    }
    return (top, bottom)
}

/// Writes `even` and `odd` interleaved as 16 bytes.
@inline(__always) func storeInterleaved(_ even: SIMD8<UInt8>, _ odd: SIMD8<UInt8>, at pointer: UnsafeMutablePointer<UInt8>) {
    var bytes = SIMD16<UInt8>()
    for lane in 0..<8 {
        bytes[2 * lane] = even[lane]
        bytes[2 * lane + 1] = odd[lane]
    }
    UnsafeMutableRawPointer(pointer).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
}

/// How 8 chroma pairs are read and written: I420 keeps Cb and Cr in two planes, NV12 interleaves them.
/// Chunks may run past the plane's width into its row padding (rows are padded to 64 bytes).
protocol ChromaLayout {
    /// Cb and Cr of 8 blocks from `x`.
    static func load(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
        -> (SIMD8<Float>, SIMD8<Float>)
    static func store(_ cb: SIMD8<UInt8>, _ cr: SIMD8<UInt8>, _ cbRow: UnsafeMutablePointer<UInt8>,
                      _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
    /// Cb and Cr codes of 16 blocks from `x`, as 16-bit lanes (the fixed-point kernels).
    static func loadLanes(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
        -> (Lanes16.Vector, Lanes16.Vector)
    /// Stores 16 blocks' Cb and Cr codes from `x`, each lane saturated to 0…255.
    static func storeLanes(_ cb: Lanes16.Vector, _ cr: Lanes16.Vector, _ cbRow: UnsafeMutablePointer<UInt8>,
                           _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
}

enum SeparateChroma: ChromaLayout {
    @inline(__always)
    static func load(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
        -> (SIMD8<Float>, SIMD8<Float>) {
        (SIMD8<Float>(bytesAt: cbRow + x), SIMD8<Float>(bytesAt: crRow + x))
    }

    @inline(__always)
    static func store(_ cb: SIMD8<UInt8>, _ cr: SIMD8<UInt8>, _ cbRow: UnsafeMutablePointer<UInt8>,
                      _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) {
        UnsafeMutableRawPointer(cbRow + x).storeBytes(of: cb, as: SIMD8<UInt8>.self)
        UnsafeMutableRawPointer(crRow + x).storeBytes(of: cr, as: SIMD8<UInt8>.self)
    }

    @inline(__always)
    static func loadLanes(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
        -> (Lanes16.Vector, Lanes16.Vector) {
        (Lanes16.widen16(cbRow + x), Lanes16.widen16(crRow + x))
    }

    @inline(__always)
    static func storeLanes(_ cb: Lanes16.Vector, _ cr: Lanes16.Vector, _ cbRow: UnsafeMutablePointer<UInt8>,
                           _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) {
        Lanes16.narrow16(cb, to: cbRow + x)
        Lanes16.narrow16(cr, to: crRow + x)
    }
}

enum InterleavedChroma: ChromaLayout {
    @inline(__always)
    static func load(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
        -> (SIMD8<Float>, SIMD8<Float>) {
        evenAndOddBytes(cbRow + 2 * x)
    }

    @inline(__always)
    static func store(_ cb: SIMD8<UInt8>, _ cr: SIMD8<UInt8>, _ cbRow: UnsafeMutablePointer<UInt8>,
                      _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) {
        storeInterleaved(cb, cr, at: cbRow + 2 * x)
    }

    @inline(__always)
    static func loadLanes(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
        -> (Lanes16.Vector, Lanes16.Vector) {
        let pairs = Lanes16.load(cbRow + 2 * x)
        return (Lanes16.lowBytes(pairs), Lanes16.highBytes(pairs))
    }

    @inline(__always)
    static func storeLanes(_ cb: Lanes16.Vector, _ cr: Lanes16.Vector, _ cbRow: UnsafeMutablePointer<UInt8>,
                           _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) {
        Lanes16.store(Lanes16.joinBytesSaturating(cb, cr), to: cbRow + 2 * x)
    }
}
