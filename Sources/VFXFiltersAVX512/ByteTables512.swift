#if arch(x86_64)
import _Builtin_intrinsics.intel

/// 256-entry byte tables read 64 samples at a time with AVX-512 VBMI: the table lies in four registers, one
/// `vpermi2b` looks a sample up in entries 0…127 and one in 128…255, and the sample's top bit picks between the two
/// (`vpmovb2m`, `vpblendmb`). Five operations per 64 samples against AVX2's 48 per 32 (`ByteTable` in VFXFilters), so
/// a table runs at the speed of a plain copy. Exact, as a table is. Call only on CPUs with AVX-512 BW and VBMI
/// (`vfx_cpu_has_avx512_vbmi`); VFXFilters does.
///
/// ```swift
/// let brighter = (0..<256).map { UInt8(min($0 + 22, 255)) }
/// brighter.withUnsafeBufferPointer { ByteTables512.apply($0.baseAddress!, to: row, count: 1920) }
/// ```
public enum ByteTables512 {
    /// `row[x] = table[row[x]]` for x in 0..<count, in whole chunks of 64: the last may run into the row padding
    /// (VideoFX pads rows to 64 bytes). `table` holds 256 entries.
    public static func apply(_ table: UnsafePointer<UInt8>, to row: UnsafeMutablePointer<UInt8>, count: Int) {
        let entries = TableRegisters(table)
        var x = 0
        while x < count {
            let samples = UnsafeRawPointer(row + x).loadUnaligned(as: __m512i.self)
            UnsafeMutableRawPointer(row + x).storeBytes(of: entries.lookUp(samples), as: __m512i.self)
            x += 64
        }
    }

    /// Bytes that alternate between two tables (NV12's chroma row: Cb at even offsets, Cr at odd ones): `row[x] =
    /// even[row[x]]` for even x, `odd[row[x]]` for odd x, x in 0..<count, in whole chunks of 64 as `apply(_:to:count:)`.
    public static func apply(even: UnsafePointer<UInt8>, odd: UnsafePointer<UInt8>, to row: UnsafeMutablePointer<UInt8>,
                             count: Int) {
        let (evenEntries, oddEntries) = (TableRegisters(even), TableRegisters(odd))
        let oddBytes: __mmask64 = 0xAAAA_AAAA_AAAA_AAAA
        var x = 0
        while x < count {
            let samples = UnsafeRawPointer(row + x).loadUnaligned(as: __m512i.self)
            let result = _mm512_mask_blend_epi8(oddBytes, evenEntries.lookUp(samples), oddEntries.lookUp(samples))
            UnsafeMutableRawPointer(row + x).storeBytes(of: result, as: __m512i.self)
            x += 64
        }
    }
}

/// A byte table's 256 entries in four 64-byte registers, loaded once before a loop.
struct TableRegisters {
    let first: __m512i, second: __m512i, third: __m512i, fourth: __m512i

    @inline(__always) init(_ table: UnsafePointer<UInt8>) {
        let raw = UnsafeRawPointer(table)
        first = raw.loadUnaligned(as: __m512i.self)
        second = raw.loadUnaligned(fromByteOffset: 64, as: __m512i.self)
        third = raw.loadUnaligned(fromByteOffset: 128, as: __m512i.self)
        fourth = raw.loadUnaligned(fromByteOffset: 192, as: __m512i.self)
    }

    /// Each byte of `samples` replaced by its entry: `vpermi2b` reads each sample's low seven bits, so one look-up
    /// covers entries 0…127 and one 128…255, and the sample's top bit picks.
    @inline(__always) func lookUp(_ samples: __m512i) -> __m512i { lookUp(samples, top: _mm512_movepi8_mask(samples)) }

    /// The same with the samples' top bits given (`vpmovb2m` of `samples`), for several tables read at the same samples.
    @inline(__always) func lookUp(_ samples: __m512i, top: __mmask64) -> __m512i {
        _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(first, samples, second), _mm512_permutex2var_epi8(third, samples, fourth))
    }
}
#endif
