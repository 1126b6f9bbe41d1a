import VFXCore

/// A lone per-channel transform (`gamma`, `tone-curve`, `levels`, `color-polynomial`…) evaluated on each pixel of
/// an I420/NV12 frame, 8 blocks (32 pixels) at a time, with no 3D table.
///
/// Per pixel: R'G'B' from its luma and its block's chroma, clamped to 0…1; each channel read from its own table of
/// `tableSize` entries sampled from the transform at 0, 1/(tableSize − 1), … 1, at the entry nearest to the value
/// (off by at most half an entry's step times the curve's slope: 0.03 codes × slope for 4096 entries); then the
/// output luma. Each block's output chroma comes from the mean of its four output R'G'B' values, as converting the
/// block to RGB, filtering and converting back with box-filtered 4:2:0 chroma gives (as `AffineYUVKernel` does for
/// a lone matrix).
///
/// Only smooth curves are taken (`init` returns nil when a table jumps by more than `maximumJump` between
/// neighbouring entries: posterize, threshold, solarize keep the exact 3D table).
///
/// ```swift
/// let kernel = ChannelCurveYUVKernel(gamma, coding: YUVCoding(.bt709), chromaInterleaved: false)
/// kernel?.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class ChannelCurveYUVKernel: ColorKernel {
    /// Entries per channel of the tables.
    static let tableSize = 4096
    /// The largest step between neighbouring table entries (in 0…1) of a curve this kernel takes: 4 codes.
    static let maximumJump: Float = 4 / 255

    /// Red, green and blue tables, `tableSize` entries each, one after the other.
    private let table: UnsafeMutablePointer<Float>
    /// R'G'B' in 0…1 (before clamping) = `Y·lumaGain + Cb·fromCb + Cr·fromCr + constant` on 8-bit codes.
    let toRGB: AffineYUVKernel
    let coding: YUVCoding
    let chromaInterleaved: Bool

    init?(_ transform: ColorTransform, coding: YUVCoding, chromaInterleaved: Bool) {
        guard case .perChannel = transform.kind else { return nil }
        let n = ChannelCurveYUVKernel.tableSize
        let table = UnsafeMutablePointer<Float>.allocate(capacity: 3 * n)
        var smooth = true
        for i in 0..<n {
            let value = transform.apply(SIMD3(repeating: Float(i) / Float(n - 1))).clampedToUnit
            table[i] = value.x
            table[n + i] = value.y
            table[2 * n + i] = value.z
            if i > 0 {
                let jump = SIMD3(table[i] - table[i - 1], table[n + i] - table[n + i - 1], table[2 * n + i] - table[2 * n + i - 1])
                smooth = smooth && jump.x.magnitude <= Self.maximumJump && jump.y.magnitude <= Self.maximumJump
                    && jump.z.magnitude <= Self.maximumJump
            }
        }
        guard smooth else {
            table.deallocate()
            return nil
        }
        self.table = table
        self.coding = coding
        self.chromaInterleaved = chromaInterleaved
        toRGB = AffineYUVKernel(matrix: .identity, coding: coding, chromaInterleaved: chromaInterleaved)
    }

    deinit { table.deallocate() }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if chromaInterleaved {
            run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self)
        } else {
            run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self)
        }
    }

    /// The table entry nearest to each lane of `value` (in 0…1).
    @inline(__always)
    private static func lookup(_ table: UnsafeMutablePointer<Float>, _ value: SIMD8<Float>) -> SIMD8<Float> {
        let position = value * Float(tableSize - 1) + 0.5
        var result = SIMD8<Float>()
        for lane in 0..<8 { result[lane] = table[Int(Int32(position[lane]))] }
        return result
    }

    private func run<Layout: ChromaLayout>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner,
                                           layout: Layout.Type) {
        let luma = planes[0]
        let cbPlane = planes[1]
        let crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let (gain, fromCb, fromCr, constant) = (toRGB.lumaGain, toRGB.fromCb, toRGB.fromCr, toRGB.constant)
        let weights = coding.weights
        let outScale = coding.lumaScale, outOffset = coding.lumaOffset
        let (red, green, blue) = (table, table + Self.tableSize, table + 2 * Self.tableSize)
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
                            let r = Self.lookup(red, kR.addingProduct(y, gain.x).clampedToUnit)
                            let g = Self.lookup(green, kG.addingProduct(y, gain.y).clampedToUnit)
                            let b = Self.lookup(blue, kB.addingProduct(y, gain.z).clampedToUnit)
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
