#if arch(x86_64) && VFX_HASWELL
import _Builtin_intrinsics.intel
#endif

/// Sixteen Int16 lanes and the few operations the fixed-point colour kernels need: AVX2 instructions on x86-64 release
/// builds (`vpmulhrsw`, `vpaddsw`, `vpackuswb`…), the same arithmetic lane by lane elsewhere (arm64, debug builds).
enum Lanes16 {
    #if arch(x86_64) && VFX_HASWELL
    typealias Vector = __m256i

    @inline(__always) static func splat(_ value: Int16) -> Vector { _mm256_set1_epi16(value) }
    @inline(__always) static func vector(_ lanes: SIMD16<Int16>) -> Vector { unsafeBitCast(lanes, to: Vector.self) }
    @inline(__always) static func lanes(_ vector: Vector) -> SIMD16<Int16> { unsafeBitCast(vector, to: SIMD16<Int16>.self) }

    @inline(__always) static func alternating(_ even: Int16, _ odd: Int16) -> Vector {
        _mm256_set1_epi32(Int32(bitPattern: UInt32(UInt16(bitPattern: odd)) << 16 | UInt32(UInt16(bitPattern: even))))
    }

    /// 32 bytes at `pointer`, widened: the first sixteen, then the next.
    @inline(__always) static func widen32(_ pointer: UnsafeMutablePointer<UInt8>) -> (Vector, Vector) {
        let raw = UnsafeRawPointer(pointer)
        return (_mm256_cvtepu8_epi16(raw.loadUnaligned(as: __m128i.self)),
                _mm256_cvtepu8_epi16(raw.loadUnaligned(fromByteOffset: 16, as: __m128i.self)))
    }

    /// 32 bytes at `pointer`, widened in the order `narrowInHalves` undoes: bytes 0–7 and 16–23, then 8–15 and 24–31
    /// (no shuffle across the 128-bit halves), for maps that treat every sample alike.
    @inline(__always) static func widenInHalves(_ pointer: UnsafeMutablePointer<UInt8>) -> (Vector, Vector) {
        let bytes = UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self), zero = _mm256_setzero_si256()
        return (_mm256_unpacklo_epi8(bytes, zero), _mm256_unpackhi_epi8(bytes, zero))
    }

    /// `widenInHalves`' two vectors back as 32 bytes at `pointer`, each lane saturated to 0…255.
    @inline(__always) static func narrowInHalves(_ a: Vector, _ b: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: _mm256_packus_epi16(a, b), as: Vector.self)
    }

    /// `a` then `b` as 32 bytes at `pointer`, each lane saturated to 0…255.
    @inline(__always) static func narrow32(_ a: Vector, _ b: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        // vpackuswb packs within 128-bit halves: a₀ b₀ a₁ b₁ in quarters; vpermd puts them back in order.
        let packed = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7))
        UnsafeMutableRawPointer(pointer).storeBytes(of: packed, as: Vector.self)
    }

    @inline(__always) static func multiplyHighRounded(_ a: Vector, _ b: Vector) -> Vector { _mm256_mulhrs_epi16(a, b) }
    @inline(__always) static func addSaturating(_ a: Vector, _ b: Vector) -> Vector { _mm256_adds_epi16(a, b) }
    @inline(__always) static func shiftLeft(_ a: Vector, _ count: Int) -> Vector { _mm256_slli_epi16(a, Int32(count)) }
    @inline(__always) static func shiftRight(_ a: Vector, _ count: Int) -> Vector { _mm256_srai_epi16(a, Int32(count)) }
    @inline(__always) static func clamp(_ a: Vector, _ low: Vector, _ high: Vector) -> Vector {
        _mm256_min_epi16(_mm256_max_epi16(a, low), high)
    }
    @inline(__always) static func maximum(_ a: Vector, _ b: Vector) -> Vector { _mm256_max_epi16(a, b) }
    @inline(__always) static func minimum(_ a: Vector, _ b: Vector) -> Vector { _mm256_min_epi16(a, b) }
    /// a − b, wrapping (`vpsubw`).
    @inline(__always) static func subtract(_ a: Vector, _ b: Vector) -> Vector { _mm256_sub_epi16(a, b) }
    /// `a` in lanes where `mask` is all ones, `b` where it is zero (`vpblendvb`; each lane of `mask` is one or the other).
    @inline(__always) static func select(_ mask: Vector, _ a: Vector, _ b: Vector) -> Vector { _mm256_blendv_epi8(b, a, mask) }

    /// 32 bytes at `pointer` as sixteen little-endian pairs (lane i: byte 2i low, byte 2i + 1 high).
    @inline(__always) static func load(_ pointer: UnsafeMutablePointer<UInt8>) -> Vector {
        UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self)
    }

    @inline(__always) static func store(_ a: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: a, as: Vector.self)
    }

    /// 16 bytes at `pointer`, widened.
    @inline(__always) static func widen16(_ pointer: UnsafeMutablePointer<UInt8>) -> Vector {
        _mm256_cvtepu8_epi16(UnsafeRawPointer(pointer).loadUnaligned(as: __m128i.self))
    }

    /// The lanes (each in 0…255) as 16 bytes at `pointer`.
    @inline(__always) static func narrow16(_ a: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        // vpackuswb packs within 128-bit halves; vpermd brings the upper half's 8 bytes next to the lower half's.
        let packed = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, a), _mm256_setr_epi32(0, 1, 4, 5, 0, 1, 4, 5))
        UnsafeMutableRawPointer(pointer).storeBytes(of: _mm256_castsi256_si128(packed), as: __m128i.self)
    }

    /// The low byte of each lane, and the high byte (the even and the odd bytes of a `load`).
    @inline(__always) static func lowBytes(_ a: Vector) -> Vector { _mm256_and_si256(a, _mm256_set1_epi16(0xFF)) }
    @inline(__always) static func highBytes(_ a: Vector) -> Vector { _mm256_srli_epi16(a, 8) }

    /// Lanes `low` and `high` (each in 0…255) as the low and high byte of each lane.
    @inline(__always) static func joinBytes(_ low: Vector, _ high: Vector) -> Vector {
        _mm256_or_si256(low, _mm256_slli_epi16(high, 8))
    }

    /// Lanes `low` and `high`, each saturated to 0…255, as the low and high byte of each lane: `vpackuswb` puts each
    /// half's eight `low` bytes before its eight `high` bytes, `vpshufb` interleaves them (no clamp needed before).
    @inline(__always) static func joinBytesSaturating(_ low: Vector, _ high: Vector) -> Vector {
        // Bytes 0, 8, 1, 9, … 7, 15 of each half.
        let interleave = _mm256_setr_epi32(0x0901_0800, 0x0B03_0A02, 0x0D05_0C04, 0x0F07_0E06,
                                           0x0901_0800, 0x0B03_0A02, 0x0D05_0C04, 0x0F07_0E06)
        return _mm256_shuffle_epi8(_mm256_packus_epi16(low, high), interleave)
    }

    /// (a + b + 1) >> 1 on lanes read as unsigned.
    @inline(__always) static func average(_ a: Vector, _ b: Vector) -> Vector { _mm256_avg_epu16(a, b) }

    /// 32 bytes at `pointer` as sixteen Int16 lanes.
    @inline(__always) static func load(_ pointer: UnsafePointer<Int16>) -> Vector { UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self) }
    /// Eight lanes at `low` as the first 128-bit half and eight at `high` as the second (two loads, `vinserti128`).
    @inline(__always) static func load(low: UnsafePointer<Int16>, high: UnsafePointer<Int16>) -> Vector {
        _mm256_set_m128i(UnsafeRawPointer(high).loadUnaligned(as: __m128i.self), UnsafeRawPointer(low).loadUnaligned(as: __m128i.self))
    }
    @inline(__always) static func negate(_ a: Vector) -> Vector { _mm256_sub_epi16(_mm256_setzero_si256(), a) }

    /// The low 16 bits of a·b.
    @inline(__always) static func multiplyLow(_ a: Vector, _ b: Int16) -> Vector { _mm256_mullo_epi16(a, _mm256_set1_epi16(b)) }
    @inline(__always) static func shiftRightLogical(_ a: Vector, _ count: Int) -> Vector { _mm256_srli_epi16(a, Int32(count)) }
    @inline(__always) static func and(_ a: Vector, _ b: Vector) -> Vector { _mm256_and_si256(a, b) }
    @inline(__always) static func or(_ a: Vector, _ b: Vector) -> Vector { _mm256_or_si256(a, b) }
    /// Whether every bit of `a` is zero (`vptest`).
    @inline(__always) static func isZero(_ a: Vector) -> Bool { _mm256_testz_si256(a, a) != 0 }

    /// Byte i of each 128-bit half: byte `control[i] & 15` of the same half of `table` (`vpshufb`; control bytes here
    /// never have their top bit set).
    @inline(__always) static func shuffleBytes(_ table: Vector, _ control: Vector) -> Vector { _mm256_shuffle_epi8(table, control) }

    @inline(__always) static func absolute(_ a: Vector) -> Vector { _mm256_abs_epi16(a) }
    /// All ones in lanes where `a > b`, else zero (`vpcmpgtw`).
    @inline(__always) static func greaterThan(_ a: Vector, _ b: Vector) -> Vector { _mm256_cmpgt_epi16(a, b) }
    /// `b` with the bits of `mask` cleared (`vpandn`).
    @inline(__always) static func andNot(_ mask: Vector, _ b: Vector) -> Vector { _mm256_andnot_si256(mask, b) }

    /// The lanes as Floats: lanes 0–7, then 8–15.
    @inline(__always) static func floats(_ a: Vector) -> (SIMD8<Float>, SIMD8<Float>) {
        (_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(a))),
         _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(
            _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(4, 5, 6, 7, 4, 5, 6, 7))))))
    }
    /// Floats truncated toward zero into lanes 0–7 and 8–15, saturated to Int16.
    @inline(__always) static func truncating(_ low: SIMD8<Float>, _ high: SIMD8<Float>) -> Vector {
        // vpackssdw packs within 128-bit halves: low₀ high₀ low₁ high₁ in quarters; vpermd puts them back in order.
        let packed = _mm256_packs_epi32(_mm256_cvttps_epi32(low), _mm256_cvttps_epi32(high))
        return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7))
    }

    /// Each pair of neighbouring lanes swapped.
    @inline(__always) static func swapPairs(_ a: Vector) -> Vector {
        _mm256_shuffle_epi8(a, _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                                                2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13))
    }

    /// Eight sums of neighbouring products, a₂ᵢ·b₂ᵢ + a₂ᵢ₊₁·b₂ᵢ₊₁, exact in 32 bits (`vpmaddwd`).
    @inline(__always) static func multiplyAddPairs(_ a: Vector, _ b: Vector) -> SIMD8<Int32> {
        unsafeBitCast(_mm256_madd_epi16(a, b), to: SIMD8<Int32>.self)
    }

    /// 16 bytes at `a` and 16 at `b` interleaved (a₀ b₀ a₁ b₁ …) and widened: pairs 0–7, then 8–15.
    @inline(__always) static func zipWidened(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>) -> (Vector, Vector) {
        let x = UnsafeRawPointer(a).loadUnaligned(as: __m128i.self), y = UnsafeRawPointer(b).loadUnaligned(as: __m128i.self)
        return (_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(x, y)), _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(x, y)))
    }

    /// Sixteen lanes as 32 bytes at `pointer`.
    @inline(__always) static func store(_ a: Vector, to pointer: UnsafeMutablePointer<Int16>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: a, as: Vector.self)
    }

    /// Running sums along the lanes of every `stride`-th lane (stride 1, 2, 4 or 8), wrapping: the interleaved channels
    /// of a row (one for gray and planar chroma, two for NV12's chroma, four for RGBA) each summed on its own.
    ///
    /// ```swift
    /// let scan = Lanes16.Scan(stride: 2)
    /// let sums = scan.prefix(Lanes16.widen16(row))   // lane i: row[i] + row[i − 2] + row[i − 4] + …
    /// ```
    struct Scan {
        /// `vpshufb` controls moving each 128-bit half up by `stride`, 2·`stride` and 4·`stride` lanes (those of 8 or
        /// more stay zero: no step), filling with zeros.
        private let shifts: (Vector, Vector, Vector)
        private let steps: Int
        /// Repeats the last `stride` lanes of a half over the high half (the low half zero), and over both halves.
        private let carryUp: Vector, repeatLast: Vector

        init(stride: Int) {
            precondition([1, 2, 4, 8].contains(stride), "Lanes16.Scan strides are 1, 2, 4 or 8 lanes")
            func control(_ byte: (Int) -> Int) -> Vector {
                var bytes = SIMD32<Int8>()
                for j in 0..<32 { bytes[j] = Int8(truncatingIfNeeded: byte(j)) }
                return unsafeBitCast(bytes, to: Vector.self)
            }
            func shift(_ lanes: Int) -> Vector { control { j in j % 16 >= 2 * lanes ? j % 16 - 2 * lanes : 0x80 } }
            shifts = (shift(stride), shift(2 * stride), shift(4 * stride))
            steps = stride == 1 ? 3 : stride == 2 ? 2 : stride == 4 ? 1 : 0
            let last = { (j: Int) in 16 - 2 * stride + j % (2 * stride) }
            carryUp = control { j in j < 16 ? 0x80 : last(j) }
            repeatLast = control(last)
        }

        @inline(__always) func prefix(_ a: Vector) -> Vector {
            var x = a
            if steps > 0 { x = _mm256_add_epi16(x, _mm256_shuffle_epi8(x, shifts.0)) }
            if steps > 1 { x = _mm256_add_epi16(x, _mm256_shuffle_epi8(x, shifts.1)) }
            if steps > 2 { x = _mm256_add_epi16(x, _mm256_shuffle_epi8(x, shifts.2)) }
            // The low half's sums carried into the high half: vpermd copies the low half up, vpshufb repeats its last lanes.
            let low = _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3))
            return _mm256_add_epi16(x, _mm256_shuffle_epi8(low, carryUp))
        }

        /// The last `stride` lanes repeated over the vector (the running totals to carry into the next vector).
        @inline(__always) func last(_ a: Vector) -> Vector {
            _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(4, 5, 6, 7, 4, 5, 6, 7)), repeatLast)
        }
    }

    /// Byte operations on the 32 bytes of a vector (the sigma filter's closeness test on 32 samples at once).
    @inline(__always) static func splatBytes(_ value: UInt8) -> Vector { _mm256_set1_epi8(Int8(bitPattern: value)) }
    /// max(a − b, 0) and min(a + b, 255) per byte (`vpsubusb`, `vpaddusb`).
    @inline(__always) static func subtractSaturatingBytes(_ a: Vector, _ b: Vector) -> Vector { _mm256_subs_epu8(a, b) }
    @inline(__always) static func addSaturatingBytes(_ a: Vector, _ b: Vector) -> Vector { _mm256_adds_epu8(a, b) }
    /// a − b per byte, wrapping (`vpsubb`).
    @inline(__always) static func subtractBytes(_ a: Vector, _ b: Vector) -> Vector { _mm256_sub_epi8(a, b) }
    /// All ones in the bytes where a == b, else zero (`vpcmpeqb`).
    @inline(__always) static func equalBytes(_ a: Vector, _ b: Vector) -> Vector { _mm256_cmpeq_epi8(a, b) }
    /// max(a, b) and min(a, b) per unsigned byte (`vpmaxub`, `vpminub`).
    @inline(__always) static func maximumBytes(_ a: Vector, _ b: Vector) -> Vector { _mm256_max_epu8(a, b) }
    @inline(__always) static func minimumBytes(_ a: Vector, _ b: Vector) -> Vector { _mm256_min_epu8(a, b) }

    /// a + b, wrapping (`vpaddw`).
    @inline(__always) static func add(_ a: Vector, _ b: Vector) -> Vector { _mm256_add_epi16(a, b) }

    /// The lanes read as unsigned, widened to 32 bits in two halves: lanes 0–3 and 8–11, then 4–7 and 12–15
    /// (`vpunpcklwd`/`vpunpckhwd`, no lane crossing). Work on the halves lane by lane; `truncatingHalves` puts the
    /// lanes back in order.
    @inline(__always) static func widenedHalves(_ a: Vector) -> (SIMD8<Int32>, SIMD8<Int32>) {
        let zero = _mm256_setzero_si256()
        return (unsafeBitCast(_mm256_unpacklo_epi16(a, zero), to: SIMD8<Int32>.self),
                unsafeBitCast(_mm256_unpackhi_epi16(a, zero), to: SIMD8<Int32>.self))
    }

    /// Floats in the halves of `widenedHalves`, truncated toward zero and saturated to Int16, back in lane order.
    @inline(__always) static func truncatingHalves(_ low: SIMD8<Float>, _ high: SIMD8<Float>) -> Vector {
        // vpackssdw packs within 128-bit halves, the inverse of the unpacks: no permutation needed.
        _mm256_packs_epi32(_mm256_cvttps_epi32(low), _mm256_cvttps_epi32(high))
    }

    /// (a·b) >> 16 with both lanes read as unsigned (`vpmulhuw`).
    @inline(__always) static func multiplyHighUnsigned(_ a: Vector, _ b: Vector) -> Vector { _mm256_mulhi_epu16(a, b) }

    /// `a` and `b` interleaved within each 128-bit half: a₀ b₀ a₁ b₁ a₂ b₂ a₃ b₃ | a₈ b₈ … a₁₁ b₁₁ (`vpunpcklwd`); with
    /// `interleaveHigh` (lanes 4–7 and 12–15) the operands of `multiplyAddPairs` for a weighted sum of two vectors,
    /// whose results `packInterleaved` puts back in order.
    @inline(__always) static func interleaveLow(_ a: Vector, _ b: Vector) -> Vector { _mm256_unpacklo_epi16(a, b) }
    /// a₄ b₄ … a₇ b₇ | a₁₂ b₁₂ … a₁₅ b₁₅ (`vpunpckhwd`).
    @inline(__always) static func interleaveHigh(_ a: Vector, _ b: Vector) -> Vector { _mm256_unpackhi_epi16(a, b) }
    /// Sums of pairs made from `interleaveLow` (lanes 0–3, 8–11) and `interleaveHigh` (4–7, 12–15) as sixteen lanes in
    /// order, each saturated to Int16 (`vpackssdw`).
    @inline(__always) static func packInterleaved(_ low: SIMD8<Int32>, _ high: SIMD8<Int32>) -> Vector {
        _mm256_packs_epi32(unsafeBitCast(low, to: Vector.self), unsafeBitCast(high, to: Vector.self))
    }

    /// The lanes sign-extended to 32 bits: lanes 0–7, then 8–15.
    @inline(__always) static func int32s(_ a: Vector) -> (SIMD8<Int32>, SIMD8<Int32>) {
        (unsafeBitCast(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(a)), to: SIMD8<Int32>.self),
         unsafeBitCast(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(
            _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(4, 5, 6, 7, 4, 5, 6, 7)))), to: SIMD8<Int32>.self))
    }

    /// Lanes 0–7 from `low`, 8–15 from `high`, each saturated to Int16.
    @inline(__always) static func narrowing(_ low: SIMD8<Int32>, _ high: SIMD8<Int32>) -> Vector {
        // vpackssdw packs within 128-bit halves: low₀ high₀ low₁ high₁ in quarters; vpermd puts them back in order.
        let packed = _mm256_packs_epi32(unsafeBitCast(low, to: Vector.self), unsafeBitCast(high, to: Vector.self))
        return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7))
    }
    #else
    typealias Vector = SIMD16<Int16>

    @inline(__always) static func splat(_ value: Int16) -> Vector { Vector(repeating: value) }
    @inline(__always) static func vector(_ lanes: SIMD16<Int16>) -> Vector { lanes }
    @inline(__always) static func lanes(_ vector: Vector) -> SIMD16<Int16> { vector }

    @inline(__always) static func alternating(_ even: Int16, _ odd: Int16) -> Vector {
        var v = Vector()
        for lane in 0..<16 { v[lane] = lane % 2 == 0 ? even : odd }
        return v
    }

    @inline(__always) static func widen32(_ pointer: UnsafeMutablePointer<UInt8>) -> (Vector, Vector) {
        let bytes = UnsafeRawPointer(pointer).loadUnaligned(as: SIMD32<UInt8>.self)
        var (a, b) = (Vector(), Vector())
        for lane in 0..<16 { (a[lane], b[lane]) = (Int16(bytes[lane]), Int16(bytes[16 + lane])) }
        return (a, b)
    }

    /// Byte `lane` of the 32 that lane `lane` of `widenInHalves`' first (`second`: its second) vector holds.
    @inline(__always) private static func halvesByte(_ lane: Int, second: Bool) -> Int {
        (lane < 8 ? lane : lane + 8) + (second ? 8 : 0)
    }

    @inline(__always) static func widenInHalves(_ pointer: UnsafeMutablePointer<UInt8>) -> (Vector, Vector) {
        let bytes = UnsafeRawPointer(pointer).loadUnaligned(as: SIMD32<UInt8>.self)
        var (a, b) = (Vector(), Vector())
        for lane in 0..<16 {
            (a[lane], b[lane]) = (Int16(bytes[halvesByte(lane, second: false)]), Int16(bytes[halvesByte(lane, second: true)]))
        }
        return (a, b)
    }

    @inline(__always) static func narrowInHalves(_ a: Vector, _ b: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        var bytes = SIMD32<UInt8>()
        for lane in 0..<16 {
            bytes[halvesByte(lane, second: false)] = UInt8(clamping: a[lane])
            bytes[halvesByte(lane, second: true)] = UInt8(clamping: b[lane])
        }
        UnsafeMutableRawPointer(pointer).storeBytes(of: bytes, as: SIMD32<UInt8>.self)
    }

    @inline(__always) static func narrow32(_ a: Vector, _ b: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        var bytes = SIMD32<UInt8>()
        for lane in 0..<16 { (bytes[lane], bytes[16 + lane]) = (UInt8(clamping: a[lane]), UInt8(clamping: b[lane])) }
        UnsafeMutableRawPointer(pointer).storeBytes(of: bytes, as: SIMD32<UInt8>.self)
    }

    /// (a·b + 2¹⁴) >> 15, as `vpmulhrsw` and NEON's `sqrdmulh` compute it.
    @inline(__always) static func multiplyHighRounded(_ a: Vector, _ b: Vector) -> Vector {
        var v = Vector()
        for lane in 0..<16 { v[lane] = Int16(truncatingIfNeeded: (Int32(a[lane]) * Int32(b[lane]) + 0x4000) >> 15) }
        return v
    }

    @inline(__always) static func addSaturating(_ a: Vector, _ b: Vector) -> Vector {
        var v = Vector()
        for lane in 0..<16 { v[lane] = Int16(clamping: Int32(a[lane]) + Int32(b[lane])) }
        return v
    }

    @inline(__always) static func shiftLeft(_ a: Vector, _ count: Int) -> Vector { a &<< Int16(count) }
    @inline(__always) static func shiftRight(_ a: Vector, _ count: Int) -> Vector { a &>> Int16(count) }
    @inline(__always) static func clamp(_ a: Vector, _ low: Vector, _ high: Vector) -> Vector {
        a.replacing(with: low, where: a .< low).replacing(with: high, where: a .> high)
    }
    @inline(__always) static func maximum(_ a: Vector, _ b: Vector) -> Vector { pointwiseMax(a, b) }
    @inline(__always) static func minimum(_ a: Vector, _ b: Vector) -> Vector { pointwiseMin(a, b) }
    @inline(__always) static func subtract(_ a: Vector, _ b: Vector) -> Vector { a &- b }
    @inline(__always) static func select(_ mask: Vector, _ a: Vector, _ b: Vector) -> Vector { (a & mask) | (b & ~mask) }

    @inline(__always) static func load(_ pointer: UnsafeMutablePointer<UInt8>) -> Vector {
        // Both targets (x86-64, arm64) are little-endian: lane i holds byte 2i low and byte 2i + 1 high.
        Vector(truncatingIfNeeded: UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<UInt16>.self))
    }

    @inline(__always) static func store(_ a: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: SIMD16<UInt16>(truncatingIfNeeded: a), as: SIMD16<UInt16>.self)
    }

    @inline(__always) static func widen16(_ pointer: UnsafeMutablePointer<UInt8>) -> Vector {
        let bytes = UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<UInt8>.self)
        var v = Vector()
        for lane in 0..<16 { v[lane] = Int16(bytes[lane]) }
        return v
    }

    @inline(__always) static func narrow16(_ a: Vector, to pointer: UnsafeMutablePointer<UInt8>) {
        var bytes = SIMD16<UInt8>()
        for lane in 0..<16 { bytes[lane] = UInt8(clamping: a[lane]) }
        UnsafeMutableRawPointer(pointer).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
    }

    @inline(__always) static func lowBytes(_ a: Vector) -> Vector { a & 0xFF }
    @inline(__always) static func highBytes(_ a: Vector) -> Vector {
        Vector(truncatingIfNeeded: SIMD16<UInt16>(truncatingIfNeeded: a) &>> 8)
    }

    @inline(__always) static func joinBytes(_ low: Vector, _ high: Vector) -> Vector { low | (high &<< 8) }

    @inline(__always) static func joinBytesSaturating(_ low: Vector, _ high: Vector) -> Vector {
        let (zero, byte) = (Vector(repeating: 0), Vector(repeating: 255))
        return joinBytes(low.clamped(lowerBound: zero, upperBound: byte), high.clamped(lowerBound: zero, upperBound: byte))
    }

    @inline(__always) static func average(_ a: Vector, _ b: Vector) -> Vector {
        var v = Vector()
        for lane in 0..<16 {
            v[lane] = Int16(truncatingIfNeeded: (Int32(UInt16(bitPattern: a[lane])) + Int32(UInt16(bitPattern: b[lane])) + 1) >> 1)
        }
        return v
    }

    @inline(__always) static func load(_ pointer: UnsafePointer<Int16>) -> Vector { UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self) }
    @inline(__always) static func load(low: UnsafePointer<Int16>, high: UnsafePointer<Int16>) -> Vector {
        Vector(lowHalf: UnsafeRawPointer(low).loadUnaligned(as: SIMD8<Int16>.self),
               highHalf: UnsafeRawPointer(high).loadUnaligned(as: SIMD8<Int16>.self))
    }
    @inline(__always) static func negate(_ a: Vector) -> Vector { 0 &- a }
    @inline(__always) static func multiplyLow(_ a: Vector, _ b: Int16) -> Vector { a &* Vector(repeating: b) }
    @inline(__always) static func shiftRightLogical(_ a: Vector, _ count: Int) -> Vector {
        Vector(truncatingIfNeeded: SIMD16<UInt16>(truncatingIfNeeded: a) &>> UInt16(count))
    }
    @inline(__always) static func and(_ a: Vector, _ b: Vector) -> Vector { a & b }
    @inline(__always) static func or(_ a: Vector, _ b: Vector) -> Vector { a | b }
    @inline(__always) static func isZero(_ a: Vector) -> Bool { a == Vector() }

    @inline(__always) static func shuffleBytes(_ table: Vector, _ control: Vector) -> Vector {
        let (bytes, indices) = (unsafeBitCast(table, to: SIMD32<UInt8>.self), unsafeBitCast(control, to: SIMD32<UInt8>.self))
        var result = SIMD32<UInt8>()
        for i in 0..<32 { result[i] = bytes[i & 16 | Int(indices[i] & 15)] }
        return unsafeBitCast(result, to: Vector.self)
    }

    @inline(__always) static func absolute(_ a: Vector) -> Vector { a.replacing(with: 0 &- a, where: a .< 0) }
    @inline(__always) static func greaterThan(_ a: Vector, _ b: Vector) -> Vector {
        Vector(repeating: 0).replacing(with: -1, where: a .> b)
    }
    @inline(__always) static func andNot(_ mask: Vector, _ b: Vector) -> Vector { ~mask & b }

    @inline(__always) static func floats(_ a: Vector) -> (SIMD8<Float>, SIMD8<Float>) {
        var (low, high) = (SIMD8<Float>(), SIMD8<Float>())
        for lane in 0..<8 { (low[lane], high[lane]) = (Float(a[lane]), Float(a[lane + 8])) }
        return (low, high)
    }
    @inline(__always) static func truncating(_ low: SIMD8<Float>, _ high: SIMD8<Float>) -> Vector {
        func lane(_ f: Float) -> Int16 { f.isNaN ? Int16.min : Int16(max(min(f, 32767), -32768)) }
        var v = Vector()
        for index in 0..<8 { (v[index], v[index + 8]) = (lane(low[index]), lane(high[index])) }
        return v
    }

    @inline(__always) static func swapPairs(_ a: Vector) -> Vector {
        var v = Vector()
        for lane in 0..<16 { v[lane] = a[lane ^ 1] }
        return v
    }

    @inline(__always) static func multiplyAddPairs(_ a: Vector, _ b: Vector) -> SIMD8<Int32> {
        var v = SIMD8<Int32>()
        for lane in 0..<8 { v[lane] = Int32(a[2 * lane]) * Int32(b[2 * lane]) &+ Int32(a[2 * lane + 1]) * Int32(b[2 * lane + 1]) }
        return v
    }

    @inline(__always) static func zipWidened(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>) -> (Vector, Vector) {
        var (low, high) = (Vector(), Vector())
        for i in 0..<8 {
            (low[2 * i], low[2 * i + 1]) = (Int16(a[i]), Int16(b[i]))
            (high[2 * i], high[2 * i + 1]) = (Int16(a[8 + i]), Int16(b[8 + i]))
        }
        return (low, high)
    }

    @inline(__always) static func store(_ a: Vector, to pointer: UnsafeMutablePointer<Int16>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: a, as: Vector.self)
    }

    struct Scan {
        private let stride: Int

        init(stride: Int) {
            precondition([1, 2, 4, 8].contains(stride), "Lanes16.Scan strides are 1, 2, 4 or 8 lanes")
            self.stride = stride
        }

        @inline(__always) func prefix(_ a: Vector) -> Vector {
            var x = a
            for lane in stride..<16 { x[lane] = x[lane] &+ x[lane - stride] }
            return x
        }

        @inline(__always) func last(_ a: Vector) -> Vector {
            var x = Vector()
            for lane in 0..<16 { x[lane] = a[16 - stride + lane % stride] }
            return x
        }
    }

    @inline(__always) static func splatBytes(_ value: UInt8) -> Vector { unsafeBitCast(SIMD32<UInt8>(repeating: value), to: Vector.self) }
    /// The two vectors as 32 bytes each, `operation` applied byte by byte.
    @inline(__always) private static func bytewise(_ a: Vector, _ b: Vector, _ operation: (UInt8, UInt8) -> UInt8) -> Vector {
        let (x, y) = (unsafeBitCast(a, to: SIMD32<UInt8>.self), unsafeBitCast(b, to: SIMD32<UInt8>.self))
        var result = SIMD32<UInt8>()
        for i in 0..<32 { result[i] = operation(x[i], y[i]) }
        return unsafeBitCast(result, to: Vector.self)
    }
    @inline(__always) static func subtractSaturatingBytes(_ a: Vector, _ b: Vector) -> Vector { bytewise(a, b) { $0 > $1 ? $0 - $1 : 0 } }
    @inline(__always) static func addSaturatingBytes(_ a: Vector, _ b: Vector) -> Vector { bytewise(a, b) { UInt8(min(Int($0) + Int($1), 255)) } }
    @inline(__always) static func subtractBytes(_ a: Vector, _ b: Vector) -> Vector { bytewise(a, b) { $0 &- $1 } }
    @inline(__always) static func equalBytes(_ a: Vector, _ b: Vector) -> Vector { bytewise(a, b) { $0 == $1 ? 0xFF : 0 } }
    @inline(__always) static func maximumBytes(_ a: Vector, _ b: Vector) -> Vector { bytewise(a, b) { max($0, $1) } }
    @inline(__always) static func minimumBytes(_ a: Vector, _ b: Vector) -> Vector { bytewise(a, b) { min($0, $1) } }

    @inline(__always) static func add(_ a: Vector, _ b: Vector) -> Vector { a &+ b }

    /// Lanes 0–7, then 8–15 (any split works: callers only work lane by lane and undo it with `truncatingHalves`).
    @inline(__always) static func widenedHalves(_ a: Vector) -> (SIMD8<Int32>, SIMD8<Int32>) {
        var (low, high) = (SIMD8<Int32>(), SIMD8<Int32>())
        for lane in 0..<8 {
            (low[lane], high[lane]) = (Int32(UInt16(bitPattern: a[lane])), Int32(UInt16(bitPattern: a[lane + 8])))
        }
        return (low, high)
    }

    @inline(__always) static func truncatingHalves(_ low: SIMD8<Float>, _ high: SIMD8<Float>) -> Vector {
        truncating(low, high)
    }

    @inline(__always) static func multiplyHighUnsigned(_ a: Vector, _ b: Vector) -> Vector {
        var v = Vector()
        for lane in 0..<16 {
            let product = UInt32(UInt16(bitPattern: a[lane])) * UInt32(UInt16(bitPattern: b[lane]))
            v[lane] = Int16(bitPattern: UInt16(truncatingIfNeeded: product >> 16))
        }
        return v
    }

    @inline(__always) static func interleaveLow(_ a: Vector, _ b: Vector) -> Vector {
        var v = Vector()
        for i in 0..<4 { (v[2 * i], v[2 * i + 1], v[8 + 2 * i], v[9 + 2 * i]) = (a[i], b[i], a[8 + i], b[8 + i]) }
        return v
    }

    @inline(__always) static func interleaveHigh(_ a: Vector, _ b: Vector) -> Vector {
        var v = Vector()
        for i in 0..<4 { (v[2 * i], v[2 * i + 1], v[8 + 2 * i], v[9 + 2 * i]) = (a[4 + i], b[4 + i], a[12 + i], b[12 + i]) }
        return v
    }

    @inline(__always) static func packInterleaved(_ low: SIMD8<Int32>, _ high: SIMD8<Int32>) -> Vector {
        var v = Vector()
        for i in 0..<4 {
            (v[i], v[4 + i]) = (Int16(clamping: low[i]), Int16(clamping: high[i]))
            (v[8 + i], v[12 + i]) = (Int16(clamping: low[4 + i]), Int16(clamping: high[4 + i]))
        }
        return v
    }

    @inline(__always) static func int32s(_ a: Vector) -> (SIMD8<Int32>, SIMD8<Int32>) {
        var (low, high) = (SIMD8<Int32>(), SIMD8<Int32>())
        for lane in 0..<8 { (low[lane], high[lane]) = (Int32(a[lane]), Int32(a[lane + 8])) }
        return (low, high)
    }

    @inline(__always) static func narrowing(_ low: SIMD8<Int32>, _ high: SIMD8<Int32>) -> Vector {
        var v = Vector()
        for lane in 0..<8 { (v[lane], v[lane + 8]) = (Int16(clamping: low[lane]), Int16(clamping: high[lane])) }
        return v
    }
    #endif
}
