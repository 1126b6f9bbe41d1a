#if arch(x86_64) && VFX_HASWELL
import VFXFiltersAVX512
#endif
import VFXCore

/// A run whose colour is made from luma alone (it starts with `thermal`, `x-ray` or `color-map`; whatever follows
/// sees only that colour) on I420/NV12, through tables made once per luma code: the output's luma code, and its Cb
/// and Cr in 1/64 code.
///
/// Per pixel the luma goes through its table (`ByteTable`: 32 or 64 samples at a time on x86-64); per block the chroma is
/// the rounded mean of its four pixels' table values, read before their luma is replaced. That is the mean of the
/// four output R'G'B' values converted, since the conversion is affine. The luma is the frame's own Y' (clamped to
/// 0…1), as for the luma curves; the tables hold chroma to 1/128 code, so a block's chroma is within 1 code of its
/// exact mean. With AVX-512 VBMI (`wide`) a chroma row and its two luma rows go 32 blocks at a time through
/// `LumaMapRows512`, with the same tables split into bytes: the same output, byte for byte.
///
/// ```swift
/// let thermal = LumaMapKernel(coding: YUVCoding(.bt709), chromaInterleaved: false) { y in Palette.thermal.color(at: y) }
/// thermal.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class LumaMapKernel: ColorKernel {
    private let luma: ByteTable
    /// Cb and Cr of each luma code's output colour, in 1/64 code (at most 255 · 64: four fit 16 bits).
    private let cb: [UInt16], cr: [UInt16]
    let chromaInterleaved: Bool
    /// With AVX-512 VBMI: the luma table, then Cb's low and high bytes, then Cr's (`LumaMapRows512`' layout).
    private let wideTables: [UInt8]?

    init(coding: YUVCoding, chromaInterleaved: Bool, wide: Bool = FilterKernels.usesAVX512, map: (Float) -> SIMD3<Float>) {
        var lumaCodes: [UInt8] = [], cb: [UInt16] = [], cr: [UInt16] = []
        for code in 0..<256 {
            let y = ((Float(code) - coding.lumaOffset) / coding.lumaScale).clamped(0, 1)
            let out = coding.codes(map(y).clampedToUnit)
            lumaCodes.append(UInt8(out.x.rounded().clamped(0, 255)))
            cb.append(UInt16((out.y * 64).rounded().clamped(0, 255 * 64)))
            cr.append(UInt16((out.z * 64).rounded().clamped(0, 255 * 64)))
        }
        luma = ByteTable(lumaCodes)
        (self.cb, self.cr) = (cb, cr)
        self.chromaInterleaved = chromaInterleaved
        wideTables = wide ? lumaCodes + cb.map { UInt8($0 & 0xFF) } + cb.map { UInt8($0 >> 8) }
            + cr.map { UInt8($0 & 0xFF) } + cr.map { UInt8($0 >> 8) } : nil
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let lumaPlane = planes[0], cbPlane = planes[1], crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        // NV12: Cb at even bytes, Cr at odd ones of the one chroma plane.
        let (step, crOffset) = chromaInterleaved ? (2, 1) : (1, 0)
        #if arch(x86_64) && VFX_HASWELL
        if let wideTables {
            slices.run(rows: (height + 1) / 2) { chromaRows in
                wideTables.withUnsafeBufferPointer { tables in
                    for cy in chromaRows {
                        let (top, bottom) = blockRows(of: lumaPlane, chromaRow: cy, width: width, height: height)
                        LumaMapRows512.apply(tables.baseAddress!, upper: lumaPlane.row(top), lower: lumaPlane.row(bottom),
                                             cb: cbPlane.row(cy), cr: chromaInterleaved ? nil : crPlane.row(cy), blocks: chromaWidth)
                    }
                }
            }
            return
        }
        #endif
        let (luma, cbTable, crTable) = (self.luma, self.cb, self.cr)
        slices.run(rows: (height + 1) / 2) { chromaRows in
            cbTable.withUnsafeBufferPointer { cb in
                crTable.withUnsafeBufferPointer { cr in
                    for cy in chromaRows {
                        let (top, bottom) = blockRows(of: lumaPlane, chromaRow: cy, width: width, height: height)
                        let upper = lumaPlane.row(top), lower = lumaPlane.row(bottom)
                        let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy) + crOffset
                        for x in 0..<chromaWidth {
                            let (a, b) = (Int(upper[2 * x]), Int(upper[2 * x + 1]))
                            let (c, d) = (Int(lower[2 * x]), Int(lower[2 * x + 1]))
                            // Four values in 1/64 code: their mean in codes, rounded half up, is (sum + 128) >> 8.
                            let sumCb = UInt32(cb[a]) + UInt32(cb[b]) + UInt32(cb[c]) + UInt32(cb[d])
                            let sumCr = UInt32(cr[a]) + UInt32(cr[b]) + UInt32(cr[c]) + UInt32(cr[d])
                            cbRow[x * step] = UInt8((sumCb + 128) >> 8)
                            crRow[x * step] = UInt8((sumCr + 128) >> 8)
                        }
                        luma.apply(to: upper, count: width)
                        if bottom != top { luma.apply(to: lower, count: width) }
                    }
                }
            }
        }
    }
}
