#if arch(x86_64)
import _Builtin_intrinsics.intel

/// The rows of a colour made from luma alone (`thermal`, `x-ray`, `color-map`: `LumaMapKernel` in VFXFilters) with
/// AVX-512 VBMI, 32 blocks (64 pixels × 2 rows) at a time. Each pixel's output Cb and Cr come from tables in 1/64 code
/// (16 bits, up to 255·64), held as a low-byte and a high-byte table and read like `ByteTables512`; a block's chroma is
/// `(sum of its four pixels' values + 128) >> 8`, the rounded mean, summed with `vpmaddubsw` (pairs along the row) and
/// a 16-bit add (the two rows: at most 4·255·64 = 65,280). The luma goes through its table once the chroma is read.
/// The same bytes as the scalar loop. Call only on CPUs with AVX-512 BW and VBMI; VFXFilters does.
///
/// ```swift
/// LumaMapRows512.apply(tables, upper: top, lower: bottom, cb: cbRow, cr: crRow, blocks: 960)
/// ```
public enum LumaMapRows512 {
    /// The tables `apply` reads, one after the other, 256 entries each: output luma, then Cb's low and high bytes,
    /// then Cr's low and high bytes.
    public static let tableBytes = 5 * 256

    /// One chroma row: `blocks` blocks of the luma rows `upper` and `lower` (the same pointer for a frame's last row
    /// of an odd height), their chroma written to `cb` and `cr`, or to `cb` alone as NV12's Cb, Cr pairs when `cr` is
    /// nil, then their luma mapped in place. Whole chunks of 32 blocks: the last may run into the rows' padding (VideoFX
    /// pads rows to 64 bytes).
    public static func apply(_ tables: UnsafePointer<UInt8>, upper: UnsafeMutablePointer<UInt8>, lower: UnsafeMutablePointer<UInt8>,
                             cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>?, blocks: Int) {
        let luma = TableRegisters(tables), cbLow = TableRegisters(tables + 256), cbHigh = TableRegisters(tables + 512)
        let crLow = TableRegisters(tables + 768), crHigh = TableRegisters(tables + 1024)
        let ones = _mm512_set1_epi8(1), half = _mm512_set1_epi16(128)
        /// Per pair of neighbours in a row of 64 pixels, the sum of their two 16-bit table values (32 sums).
        @inline(__always) func pairSums(_ samples: __m512i, _ top: __mmask64, _ low: TableRegisters, _ high: TableRegisters) -> __m512i {
            let lowSums = _mm512_maddubs_epi16(low.lookUp(samples, top: top), ones)
            let highSums = _mm512_maddubs_epi16(high.lookUp(samples, top: top), ones)
            return _mm512_add_epi16(lowSums, _mm512_slli_epi16(highSums, 8))
        }
        let sameRow = upper == lower
        var block = 0
        while block < blocks {
            let x = 2 * block
            let a = UnsafeRawPointer(upper + x).loadUnaligned(as: __m512i.self)
            let b = UnsafeRawPointer(lower + x).loadUnaligned(as: __m512i.self)
            let (aTop, bTop) = (_mm512_movepi8_mask(a), _mm512_movepi8_mask(b))
            let cbSums = _mm512_add_epi16(pairSums(a, aTop, cbLow, cbHigh), pairSums(b, bTop, cbLow, cbHigh))
            let crSums = _mm512_add_epi16(pairSums(a, aTop, crLow, crHigh), pairSums(b, bTop, crLow, crHigh))
            let cbCodes = _mm512_srli_epi16(_mm512_add_epi16(cbSums, half), 8)
            let crCodes = _mm512_srli_epi16(_mm512_add_epi16(crSums, half), 8)
            if let cr {
                UnsafeMutableRawPointer(cb + block).storeBytes(of: _mm512_cvtepi16_epi8(cbCodes), as: __m256i.self)
                UnsafeMutableRawPointer(cr + block).storeBytes(of: _mm512_cvtepi16_epi8(crCodes), as: __m256i.self)
            } else {
                let pairs = _mm512_or_si512(cbCodes, _mm512_slli_epi16(crCodes, 8))
                UnsafeMutableRawPointer(cb + 2 * block).storeBytes(of: pairs, as: __m512i.self)
            }
            UnsafeMutableRawPointer(upper + x).storeBytes(of: luma.lookUp(a, top: aTop), as: __m512i.self)
            if !sameRow { UnsafeMutableRawPointer(lower + x).storeBytes(of: luma.lookUp(b, top: bTop), as: __m512i.self) }
            block += 32
        }
    }
}
#endif
