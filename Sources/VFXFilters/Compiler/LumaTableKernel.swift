#if arch(x86_64) && VFX_HASWELL
import _Builtin_intrinsics.intel
import VFXFiltersAVX512
#endif
import VFXCore

/// Luma through a 256-entry table (or left alone) and, for runs that remove chroma, chroma set to neutral
/// (128). Used for gray frames and for YUV runs that only bend luma or remove chroma (`mono`, `brightness`,
/// `threshold`): chroma planes are never read. On x86-64 release builds the table is read 32 or 64 samples at a time
/// (`ByteTable`), elsewhere one sample at a time.
///
/// ```swift
/// let mono = LumaTableKernel(map: nil, fillsChroma: true, chromaInterleaved: false)
/// mono.apply(to: frame.planes, width: 1280, height: 720, slices: SliceRunner(threads: 1))
/// ```
final class LumaTableKernel: ColorKernel {
    private let map: ByteTable?
    let fillsChroma: Bool
    let chromaInterleaved: Bool

    init(map: [UInt8]?, fillsChroma: Bool, chromaInterleaved: Bool) {
        self.map = map.map(ByteTable.init)
        self.fillsChroma = fillsChroma
        self.chromaInterleaved = chromaInterleaved
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if let map {
            let luma = planes[0]
            slices.run(rows: luma.height) { rows in
                for y in rows { map.apply(to: luma.row(y), count: width) }
            }
        }
        guard fillsChroma else { return }
        for plane in planes.dropFirst() {
            slices.run(rows: plane.height) { rows in
                for y in rows { plane.row(y).update(repeating: 128, count: plane.width * plane.bytesPerPixel) }
            }
        }
    }
}

/// A 256-entry byte table applied in place to a row of bytes.
///
/// With AVX-512 VBMI (`FilterKernels.usesAVX512`) the table lies in four registers and 64 samples take five
/// operations (`ByteTables512`). With AVX2 it is sixteen 16-entry pieces, each held in a register: for 32 samples at a
/// time, every piece is looked up by the samples' low four bits (`vpshufb`) and kept where their high four bits name it
/// (`vpcmpeqb`, `vpblendvb`): 48 vector operations per 32 samples, about four times a scalar loop's speed. Exact, as a
/// table is.
///
/// ```swift
/// let brighter = ByteTable((0..<256).map { UInt8(min($0 + 22, 255)) })
/// brighter.apply(to: row, count: 1920)
/// ```
final class ByteTable {
    /// The 256 entries (what the AVX-512 and scalar paths read).
    let entries: [UInt8]
    #if arch(x86_64) && VFX_HASWELL
    /// The table as sixteen 16-entry pieces, each twice over (one per 128-bit half of a register).
    private let pieces: [__m256i]
    #endif

    init(_ map: [UInt8]) {
        precondition(map.count == 256, "a byte table has 256 entries")
        entries = map
        #if arch(x86_64) && VFX_HASWELL
        pieces = (0..<16).map { piece in
            let bytes = map[(16 * piece)..<(16 * piece + 16)]
            return unsafeBitCast(SIMD32<UInt8>(bytes + bytes), to: __m256i.self)
        }
        #endif
    }

    /// `row[x] = table[row[x]]` for x in 0..<count; with AVX2 whole chunks of 32 and with AVX-512 of 64, so the last
    /// may run into the row padding (rows are padded to 64 bytes). `wide: false` keeps to AVX2 (for comparisons).
    func apply(to row: UnsafeMutablePointer<UInt8>, count: Int, wide: Bool = FilterKernels.usesAVX512) {
        #if arch(x86_64) && VFX_HASWELL
        if wide {
            entries.withUnsafeBufferPointer { ByteTables512.apply($0.baseAddress!, to: row, count: count) }
            return
        }
        let lowBits = _mm256_set1_epi8(0x0F)
        pieces.withUnsafeBufferPointer { pieces in
            var x = 0
            while x < count {
                let samples = UnsafeRawPointer(row + x).loadUnaligned(as: __m256i.self)
                let low = _mm256_and_si256(samples, lowBits)
                let high = _mm256_and_si256(_mm256_srli_epi16(samples, 4), lowBits)
                var result = _mm256_shuffle_epi8(pieces[0], low)
                for piece in 1..<16 {
                    let named = _mm256_cmpeq_epi8(high, _mm256_set1_epi8(CChar(piece)))
                    result = _mm256_blendv_epi8(result, _mm256_shuffle_epi8(pieces[piece], low), named)
                }
                UnsafeMutableRawPointer(row + x).storeBytes(of: result, as: __m256i.self)
                x += 32
            }
        }
        #else
        entries.withUnsafeBufferPointer { table in
            for x in 0..<count { row[x] = table[Int(row[x])] }
        }
        #endif
    }

    /// Bytes that alternate between two tables (NV12's chroma: Cb at even offsets, Cr at odd ones), x in 0..<count:
    /// with AVX-512 VBMI 64 at a time (the last chunk may run into the row padding), else one at a time.
    static func apply(even: ByteTable, odd: ByteTable, to row: UnsafeMutablePointer<UInt8>, count: Int,
                      wide: Bool = FilterKernels.usesAVX512) {
        #if arch(x86_64) && VFX_HASWELL
        if wide {
            even.entries.withUnsafeBufferPointer { even in
                odd.entries.withUnsafeBufferPointer { odd in
                    ByteTables512.apply(even: even.baseAddress!, odd: odd.baseAddress!, to: row, count: count)
                }
            }
            return
        }
        #endif
        even.entries.withUnsafeBufferPointer { even in
            odd.entries.withUnsafeBufferPointer { odd in
                for x in stride(from: 0, to: count, by: 2) {
                    row[x] = even[Int(row[x])]
                    if x + 1 < count { row[x + 1] = odd[Int(row[x + 1])] }
                }
            }
        }
    }
}
