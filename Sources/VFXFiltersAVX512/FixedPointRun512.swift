#if arch(x86_64)
import _Builtin_intrinsics.intel

/// `FixedPointRunKernel`'s loop (VFXFilters) for a run that is its first matrix alone (`sepia`, `color-matrix`,
/// `false-color`, with a tail composed into its conversion: `sepia,hue,color-controls`), with no vignette: 32 blocks
/// (2 rows × 64 pixels) per step in 512-bit registers of 32 Int16 lanes, against 16 blocks in AVX2's 256-bit ones.
///
/// The arithmetic is the AVX2 loop's, lane for lane (`vpmulhrsw`, `vpaddsw`, `vpavgw`, saturating stores), so the bytes
/// are the same. The affine path (`FixedPointRunKernel.AffineCodes`) is chosen per 16 blocks as there: each half of the
/// register is checked on its own (a 32-bit mask of the lanes where a channel leaves 0…1), a half that is not wholly
/// inside the row takes the per-channel path, and a step whose halves disagree computes both paths and blends them.
/// Call only on CPUs with AVX-512 BW (`vfx_cpu_has_avx512_vbmi`); VFXFilters does.
///
/// ```swift
/// FixedPointRun512.blocks(coefficients, top: luma.row(0), bottom: luma.row(1), cbRow: cb.row(0), crRow: cr.row(0),
///                         count: 960, interleaved: false)
/// ```
public enum FixedPointRun512 {
    /// The kernel's integer coefficients, as plain integers (VFXFilters is compiled for another CPU: no vectors cross).
    /// Triples are red, green, blue; quads are an output's luma factor, Cb and Cr factors and constant.
    public struct Coefficients: Sendable {
        /// The first matrix folded into the conversion from Y'CbCr (Q14 block term constant; chroma and luma factors
        /// taken against codes shifted left by `chromaShift` and `lumaShift`).
        public let constant: (Int16, Int16, Int16), fromCb: (Int16, Int16, Int16), fromCr: (Int16, Int16, Int16)
        public let fromY: (Int16, Int16, Int16)
        public let chromaShift: Int, lumaShift: Int
        /// The conversion of output R'G'B' (Q15) to codes: weights and offsets (with the rounding half) in Q(`shift`).
        public let toY: (Int16, Int16, Int16), toCb: (Int16, Int16, Int16), toCr: (Int16, Int16, Int16)
        public let lumaOffset: Int16, cbOffset: Int16, crOffset: Int16
        public let conversionShift: Int
        /// The affine maps of luma, Cb and Cr codes and their shift; nil: every block per channel.
        public let affine: (luma: (Int16, Int16, Int16, Int16), cb: (Int16, Int16, Int16, Int16),
                            cr: (Int16, Int16, Int16, Int16), shift: Int)?

        public init(constant: (Int16, Int16, Int16), fromCb: (Int16, Int16, Int16), fromCr: (Int16, Int16, Int16),
                    fromY: (Int16, Int16, Int16), chromaShift: Int, lumaShift: Int,
                    toY: (Int16, Int16, Int16), toCb: (Int16, Int16, Int16), toCr: (Int16, Int16, Int16),
                    lumaOffset: Int16, cbOffset: Int16, crOffset: Int16, conversionShift: Int,
                    affine: (luma: (Int16, Int16, Int16, Int16), cb: (Int16, Int16, Int16, Int16),
                             cr: (Int16, Int16, Int16, Int16), shift: Int)?) {
            (self.constant, self.fromCb, self.fromCr, self.fromY) = (constant, fromCb, fromCr, fromY)
            (self.chromaShift, self.lumaShift) = (chromaShift, lumaShift)
            (self.toY, self.toCb, self.toCr) = (toY, toCb, toCr)
            (self.lumaOffset, self.cbOffset, self.crOffset, self.conversionShift) = (lumaOffset, cbOffset, crOffset, conversionShift)
            self.affine = affine
        }
    }

    /// The blocks `0 ..< count` of one chroma row: luma rows `top` and `bottom` (the same row for a last single one),
    /// Cb and Cr rows (NV12, `interleaved`: both in `cbRow`). Whole steps of 32 blocks: the last may run into the rows'
    /// padding (VideoFX pads rows to 64 bytes), whose bytes never decide a block's path.
    public static func blocks(_ coefficients: Coefficients, top: UnsafeMutablePointer<UInt8>, bottom: UnsafeMutablePointer<UInt8>,
                              cbRow: UnsafeMutablePointer<UInt8>, crRow: UnsafeMutablePointer<UInt8>, count: Int, interleaved: Bool) {
        if interleaved {
            Loop<InterleavedChroma>(coefficients).run(top: top, bottom: bottom, cbRow: cbRow, crRow: crRow, count: count)
        } else {
            Loop<SeparateChroma>(coefficients).run(top: top, bottom: bottom, cbRow: cbRow, crRow: crRow, count: count)
        }
    }

    private typealias V = __m512i

    /// How 32 blocks' Cb and Cr are read and written: I420 keeps them in two planes, NV12 alternates them in one.
    private protocol ChromaLayout {
        static func load(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) -> (V, V)
        /// Codes, each lane saturated to 0…255.
        static func store(_ cb: V, _ cr: V, _ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int)
    }

    private enum SeparateChroma: ChromaLayout {
        @inline(__always) static func load(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) -> (V, V) {
            (_mm512_cvtepu8_epi16(UnsafeRawPointer(cbRow + x).loadUnaligned(as: __m256i.self)),
             _mm512_cvtepu8_epi16(UnsafeRawPointer(crRow + x).loadUnaligned(as: __m256i.self)))
        }
        @inline(__always) static func store(_ cb: V, _ cr: V, _ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>,
                                            at x: Int) {
            // Negative lanes to 0 first, then the unsigned saturating narrowing (`vpmovuswb`) takes the rest to ≤ 255.
            let zero = _mm512_setzero_si512()
            UnsafeMutableRawPointer(cbRow + x).storeBytes(of: _mm512_cvtusepi16_epi8(_mm512_max_epi16(cb, zero)), as: __m256i.self)
            UnsafeMutableRawPointer(crRow + x).storeBytes(of: _mm512_cvtusepi16_epi8(_mm512_max_epi16(cr, zero)), as: __m256i.self)
        }
    }

    private enum InterleavedChroma: ChromaLayout {
        @inline(__always) static func load(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, at x: Int) -> (V, V) {
            let pairs = UnsafeRawPointer(cbRow + 2 * x).loadUnaligned(as: V.self)
            return (lowBytes(pairs), _mm512_srli_epi16(pairs, 8))
        }
        @inline(__always) static func store(_ cb: V, _ cr: V, _ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>,
                                            at x: Int) {
            UnsafeMutableRawPointer(cbRow + 2 * x).storeBytes(of: joinBytesSaturating(cb, cr), as: V.self)
        }
    }

    /// The low byte of each lane.
    @inline(__always) private static func lowBytes(_ a: V) -> V { _mm512_and_si512(a, _mm512_set1_epi16(0xFF)) }

    /// Lanes `low` and `high`, each saturated to 0…255, as the low and high byte of each lane (`vpackuswb` within each
    /// 128-bit quarter, then `vpshufb` interleaves its eight `low` and eight `high` bytes).
    @inline(__always) private static func joinBytesSaturating(_ low: V, _ high: V) -> V {
        let interleave = _mm512_broadcast_i32x4(_mm_setr_epi32(0x0901_0800, 0x0B03_0A02, 0x0D05_0C04, 0x0F07_0E06))
        return _mm512_shuffle_epi8(_mm512_packus_epi16(low, high), interleave)
    }

    /// The loop with the coefficients splatted once per row.
    private struct Loop<Layout: ChromaLayout> {
        let constant: (V, V, V), fromCb: (V, V, V), fromCr: (V, V, V), fromY: (V, V, V)
        let toY: (V, V, V), toCb: (V, V, V), toCr: (V, V, V)
        let lumaOffset: V, cbOffset: V, crOffset: V
        let chromaShift: UInt32, lumaShift: UInt32, conversionShift: UInt32
        let affineY: (V, V, V, V), affineCb: (V, V, V, V), affineCr: (V, V, V, V)
        let affineShift: UInt32, usesAffine: Bool

        @inline(__always) init(_ c: Coefficients) {
            func splat(_ t: (Int16, Int16, Int16)) -> (V, V, V) { (_mm512_set1_epi16(t.0), _mm512_set1_epi16(t.1), _mm512_set1_epi16(t.2)) }
            func splat(_ q: (Int16, Int16, Int16, Int16)) -> (V, V, V, V) {
                (_mm512_set1_epi16(q.0), _mm512_set1_epi16(q.1), _mm512_set1_epi16(q.2), _mm512_set1_epi16(q.3))
            }
            (constant, fromCb, fromCr, fromY) = (splat(c.constant), splat(c.fromCb), splat(c.fromCr), splat(c.fromY))
            (toY, toCb, toCr) = (splat(c.toY), splat(c.toCb), splat(c.toCr))
            (lumaOffset, cbOffset, crOffset) = (_mm512_set1_epi16(c.lumaOffset), _mm512_set1_epi16(c.cbOffset), _mm512_set1_epi16(c.crOffset))
            (chromaShift, lumaShift, conversionShift) = (UInt32(c.chromaShift), UInt32(c.lumaShift), UInt32(c.conversionShift))
            let none: (Int16, Int16, Int16, Int16) = (0, 0, 0, 0)
            (affineY, affineCb, affineCr) = (splat(c.affine?.luma ?? none), splat(c.affine?.cb ?? none), splat(c.affine?.cr ?? none))
            (affineShift, usesAffine) = (UInt32(c.affine?.shift ?? 0), c.affine != nil)
        }

        /// A step's output: both rows' luma byte pairs (one lane per block), and the blocks' Cb and Cr codes (unsaturated).
        typealias Output = (top: V, bottom: V, cb: V, cr: V)

        @inline(__always) func run(top: UnsafeMutablePointer<UInt8>, bottom: UnsafeMutablePointer<UInt8>, cbRow: UnsafeMutablePointer<UInt8>,
                                   crRow: UnsafeMutablePointer<UInt8>, count: Int) {
            let (minus128, outsideUnit) = (_mm512_set1_epi16(-128), _mm512_set1_epi16(Int16(bitPattern: 0xC000)))
            var cx = 0
            while cx < count {
                let (cbCodes, crCodes) = Layout.load(cbRow, crRow, at: cx)
                let cb = _mm512_slli_epi16(_mm512_adds_epi16(cbCodes, minus128), chromaShift)
                let cr = _mm512_slli_epi16(_mm512_adds_epi16(crCodes, minus128), chromaShift)
                @inline(__always) func term(_ c: V, _ b: V, _ r: V) -> V {
                    _mm512_adds_epi16(c, _mm512_adds_epi16(_mm512_mulhrs_epi16(cb, b), _mm512_mulhrs_epi16(cr, r)))
                }
                let k = (term(constant.0, fromCb.0, fromCr.0), term(constant.1, fromCb.1, fromCr.1), term(constant.2, fromCb.2, fromCr.2))
                let upper = UnsafeRawPointer(top + 2 * cx).loadUnaligned(as: V.self)
                let lower = UnsafeRawPointer(bottom + 2 * cx).loadUnaligned(as: V.self)
                // One bit per block (lane) on the affine path: each 16 blocks wholly inside the row where no channel
                // leaves 0…1 at the darkest or the brightest luma of any of their blocks, as AVX2's loop decides.
                var affineBlocks: UInt32 = 0
                if usesAffine && cx + 16 <= count {
                    let darkest = _mm512_min_epu8(upper, lower), brightest = _mm512_max_epu8(upper, lower)
                    let yMin = _mm512_slli_epi16(_mm512_min_epi16(lowBytes(darkest), _mm512_srli_epi16(darkest, 8)), lumaShift)
                    let yMax = _mm512_slli_epi16(_mm512_max_epi16(lowBytes(brightest), _mm512_srli_epi16(brightest, 8)), lumaShift)
                    @inline(__always) func ends(_ k: V, _ gain: V) -> V {
                        _mm512_or_si512(_mm512_adds_epi16(k, _mm512_mulhrs_epi16(yMin, gain)),
                                        _mm512_adds_epi16(k, _mm512_mulhrs_epi16(yMax, gain)))
                    }
                    let all = _mm512_or_si512(_mm512_or_si512(ends(k.0, fromY.0), ends(k.1, fromY.1)), ends(k.2, fromY.2))
                    let outside = _mm512_test_epi16_mask(all, outsideUnit)
                    let first: UInt32 = outside & 0xFFFF == 0 ? 0xFFFF : 0
                    let second: UInt32 = cx + 32 <= count && outside >> 16 == 0 ? 0xFFFF_0000 : 0
                    affineBlocks = first | second
                }
                var output: Output
                if affineBlocks == 0xFFFF_FFFF {
                    output = affinePath(upper, lower, cbCodes, crCodes)
                } else {
                    output = perChannelPath(upper, lower, k)
                    if affineBlocks != 0 {
                        let affine = affinePath(upper, lower, cbCodes, crCodes)
                        output = (_mm512_mask_blend_epi16(affineBlocks, output.top, affine.top),
                                  _mm512_mask_blend_epi16(affineBlocks, output.bottom, affine.bottom),
                                  _mm512_mask_blend_epi16(affineBlocks, output.cb, affine.cb),
                                  _mm512_mask_blend_epi16(affineBlocks, output.cr, affine.cr))
                    }
                }
                UnsafeMutableRawPointer(top + 2 * cx).storeBytes(of: output.top, as: V.self)
                UnsafeMutableRawPointer(bottom + 2 * cx).storeBytes(of: output.bottom, as: V.self)
                Layout.store(output.cb, output.cr, cbRow, crRow, at: cx)
                cx += 32
            }
        }

        /// `AffineCodes`: per output `(d + mulhrs(Cb'·2⁸, b) + mulhrs(Cr'·2⁸, c) + mulhrs(Y·2⁷, a)) >> shift`, a block's
        /// chroma from the sum of its four luma codes times 2⁵.
        @inline(__always) func affinePath(_ upper: V, _ lower: V, _ cbCodes: V, _ crCodes: V) -> Output {
            let minus128 = _mm512_set1_epi16(-128)
            let cbIn = _mm512_slli_epi16(_mm512_adds_epi16(cbCodes, minus128), 8)
            let crIn = _mm512_slli_epi16(_mm512_adds_epi16(crCodes, minus128), 8)
            @inline(__always) func blockTerm(_ m: (V, V, V, V)) -> V {
                _mm512_adds_epi16(m.3, _mm512_adds_epi16(_mm512_mulhrs_epi16(cbIn, m.1), _mm512_mulhrs_epi16(crIn, m.2)))
            }
            @inline(__always) func codes(_ term: V, _ luma: V, _ a: V) -> V {
                _mm512_srai_epi16(_mm512_adds_epi16(term, _mm512_mulhrs_epi16(luma, a)), affineShift)
            }
            let kY = blockTerm(affineY)
            let (upperEven, upperOdd) = (lowBytes(upper), _mm512_srli_epi16(upper, 8))
            let (lowerEven, lowerOdd) = (lowBytes(lower), _mm512_srli_epi16(lower, 8))
            let topOut = joinBytesSaturating(codes(kY, _mm512_slli_epi16(upperEven, 7), affineY.0),
                                             codes(kY, _mm512_slli_epi16(upperOdd, 7), affineY.0))
            let bottomOut = joinBytesSaturating(codes(kY, _mm512_slli_epi16(lowerEven, 7), affineY.0),
                                                codes(kY, _mm512_slli_epi16(lowerOdd, 7), affineY.0))
            let sum = _mm512_slli_epi16(_mm512_add_epi16(_mm512_add_epi16(upperEven, upperOdd), _mm512_add_epi16(lowerEven, lowerOdd)), 5)
            return (topOut, bottomOut, codes(blockTerm(affineCb), sum, affineCb.0), codes(blockTerm(affineCr), sum, affineCr.0))
        }

        /// Each pixel's R'G'B' clamped to 0…1, its luma code, and each block's chroma codes from the mean of its four.
        @inline(__always) func perChannelPath(_ upper: V, _ lower: V, _ k: (V, V, V)) -> Output {
            let (zero, one) = (_mm512_setzero_si512(), _mm512_set1_epi16(16383))
            /// Q15 R'G'B' of 32 pixels with luma codes `y`.
            @inline(__always) func pixels(_ y: V) -> (V, V, V) {
                let scaled = _mm512_slli_epi16(y, lumaShift)
                @inline(__always) func channel(_ k: V, _ gain: V) -> V {
                    let value = _mm512_adds_epi16(k, _mm512_mulhrs_epi16(scaled, gain))
                    return _mm512_slli_epi16(_mm512_min_epi16(_mm512_max_epi16(value, zero), one), 1)
                }
                return (channel(k.0, fromY.0), channel(k.1, fromY.1), channel(k.2, fromY.2))
            }
            @inline(__always) func codes(_ p: (V, V, V), _ to: (V, V, V), _ offset: V) -> V {
                let sum = _mm512_adds_epi16(_mm512_adds_epi16(_mm512_mulhrs_epi16(p.0, to.0), _mm512_mulhrs_epi16(p.1, to.1)),
                                            _mm512_mulhrs_epi16(p.2, to.2))
                return _mm512_srai_epi16(_mm512_adds_epi16(sum, offset), conversionShift)
            }
            /// A row's output luma byte pairs, and the mean of each block's two pixels.
            @inline(__always) func row(_ pairs: V) -> (V, (V, V, V)) {
                let even = pixels(lowBytes(pairs)), odd = pixels(_mm512_srli_epi16(pairs, 8))
                let out = joinBytesSaturating(codes(even, toY, lumaOffset), codes(odd, toY, lumaOffset))
                return (out, (_mm512_avg_epu16(even.0, odd.0), _mm512_avg_epu16(even.1, odd.1), _mm512_avg_epu16(even.2, odd.2)))
            }
            let (topOut, above) = row(upper), (bottomOut, below) = row(lower)
            let mean = (_mm512_avg_epu16(above.0, below.0), _mm512_avg_epu16(above.1, below.1), _mm512_avg_epu16(above.2, below.2))
            return (topOut, bottomOut, codes(mean, toCb, cbOffset), codes(mean, toCr, crOffset))
        }
    }
}
#endif
