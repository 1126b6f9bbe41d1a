import VFXCore

/// `PlanarYUVKernel`'s run in 16-bit fixed point: the luma map and each chroma step with integer coefficients, 32
/// samples per step of the loop; a luma map runs at the speed of a plain copy (`docs/filter-engine.md`).
///
/// Arithmetic, on each 16-bit lane:
/// - luma: `x·2⁷` times the gain in Q(15 − s) with a rounding high multiply (`vpmulhrsw`) gives `g·x` in Q(7 − s); the
///   offset (with the rounding half) is added with saturation, an arithmetic shift drops the fraction and the value is
///   clamped to the run's bounds. `s` is the smallest of 1…5 for which the gain and offset fit 16 bits.
/// - chroma: samples centred on 128 in Q7; each step is two rounding high multiplies per output, the offset, and the
///   clamp to its bounds (−128…127 codes; narrower, and not always whole codes, for steps folded together), kept in Q7
///   for the next step (no rounding to whole codes between steps, as in Float); the last step goes straight to rounded
///   codes, and the saturating narrowing to bytes is its clamp unless its bounds are narrower.
/// - rows are widened and narrowed within the 128-bit halves (`Lanes16.widenInHalves`), with no cross-half shuffle, and
///   a luma map whose bounds are 0…255 leaves its clamp to the narrowing.
/// Each multiply rounds to 2^-(8 - s) of a code and the gain is held to 2^-(16 - s): with s = 1 (gains below 2) a step
/// is within 0.025 codes of the exact value, so the result rounds differently from exact arithmetic only where the
/// exact value lies that close to a half code, and then by one code. Maps of whole codes (`invert`, offsets) are exact.
///
/// ```swift
/// let fixed = PlanarYUVFixedPoint(lumaGain: 1.2, offset: -25.6, low: 0, high: 255, chroma: steps, interleaved: false)
/// fixed?.apply(to: planes, width: 1920, height: 1080, slices: slices)
/// ```
struct PlanarYUVFixedPoint {
    /// `clamp((mulhrs(x·2⁷, gain) + offset) >> shift, low, high)`.
    struct LumaMap {
        var gain: Int16, offset: Int16, shift: Int, low: Int16, high: Int16
        /// The map's numbers splatted, made once before a loop.
        var lanes: LumaLanes {
            LumaLanes(gain: Lanes16.splat(gain), offset: Lanes16.splat(offset), low: Lanes16.splat(low), high: Lanes16.splat(high),
                      shift: shift, clamps: low > 0 || high < 255)
        }
    }
    struct LumaLanes {
        var gain: Lanes16.Vector, offset: Lanes16.Vector, low: Lanes16.Vector, high: Lanes16.Vector, shift: Int
        /// Whether the bounds are narrower than 0…255 (else a saturating narrowing clamps as well).
        var clamps: Bool
    }

    /// On centred Q7 samples: `cb' = mulhrs(cb, m00) + mulhrs(cr, m01) + o0` in Q(7 − s), clamped to the step's
    /// bounds (−128…127 codes, or narrower for steps folded together), then shifted left by `s` back to Q7 (likewise
    /// cr'), with its lanes made once at configure time.
    struct ChromaStep {
        /// An output's factors: for its own channel, for the other one, its offset and its bounds (I420: the same in
        /// every lane; NV12: Cb's and Cr's alternating, as the samples do).
        struct Mix {
            var own: Lanes16.Vector, other: Lanes16.Vector, offset: Lanes16.Vector
            var low: Lanes16.Vector, high: Lanes16.Vector
            /// The offset plus 128 codes and the rounding half, in Q(7 − s): what turns the last step's sum into codes.
            var codesOffset: Lanes16.Vector
        }
        /// I420: Cb's mix, then Cr's; NV12: both in `cb`.
        var cb: Mix, cr: Mix
        /// 128 codes and the rounding half in Q(7 − s).
        var toCodes: Lanes16.Vector
        var s: Int
        /// No cross terms (saturation, contrast, invert): one multiply per output, not two.
        var isDiagonal: Bool
        /// Bounds narrower than −128…127 codes, which the saturating narrowing of the last step cannot apply alone.
        var narrowsBounds: Bool

        /// `own·value + other·partner + offset`, clamped and back in Q7 (`partner` unused in a diagonal step).
        @inline(__always) func apply(_ mix: Mix, _ value: Lanes16.Vector, partner: Lanes16.Vector) -> Lanes16.Vector {
            Lanes16.shiftLeft(clamped(mix, value, partner: partner), s)
        }

        /// The same as the last step, straight to codes: `apply` then `codes`, but with bounds of −128…127 left to the
        /// saturating narrowing (or a clamp), which takes values out of 0…255 to the same byte. A saturated sum plus the
        /// offset stays beyond 0…255 on its own side (see `scale`), so it lands on the same byte too.
        @inline(__always) func codes(_ mix: Mix, _ value: Lanes16.Vector, partner: Lanes16.Vector) -> Lanes16.Vector {
            guard !narrowsBounds else {
                return Lanes16.shiftRight(Lanes16.addSaturating(clamped(mix, value, partner: partner), toCodes), 7 - s)
            }
            return Lanes16.shiftRight(Lanes16.addSaturating(products(mix, value, partner: partner), mix.codesOffset), 7 - s)
        }

        /// `own·value + other·partner + offset` clamped to the bounds, in Q(7 − s).
        @inline(__always) private func clamped(_ mix: Mix, _ value: Lanes16.Vector, partner: Lanes16.Vector) -> Lanes16.Vector {
            Lanes16.clamp(Lanes16.addSaturating(products(mix, value, partner: partner), mix.offset), mix.low, mix.high)
        }

        /// `own·value + other·partner` in Q(7 − s) (one product in a diagonal step).
        @inline(__always) private func products(_ mix: Mix, _ value: Lanes16.Vector, partner: Lanes16.Vector) -> Lanes16.Vector {
            let product = Lanes16.multiplyHighRounded(value, mix.own)
            return isDiagonal ? product : Lanes16.addSaturating(product, Lanes16.multiplyHighRounded(partner, mix.other))
        }
    }

    let luma: LumaMap?
    let chroma: [ChromaStep]
    let chromaInterleaved: Bool
    /// With AVX-512 VBMI (`wide`), the maps as byte tables, which there cost no more than a copy (`ByteTable`).
    let tables: Tables?

    /// Byte tables made by running this run's own loops on every code, so they give the same bytes: luma's (nil when
    /// the run keeps luma), and Cb's and Cr's when no chroma step mixes the two (else nil: the steps run as arithmetic).
    struct Tables {
        var luma: ByteTable?, cb: ByteTable?, cr: ByteTable?
    }
    /// The run as `init` was given it, in Float codes (for kernels that compose it into their own maps).
    let definition: Definition

    /// Luma `clamp(gain·Y + offset, low, high)`, then the chroma steps in order, in Float codes.
    struct Definition {
        let gain: Float, offset: Float, low: Float, high: Float
        let chroma: [PlanarYUVKernel.ChromaStep]
    }

    /// The run in fixed point (luma `clamp(gain·Y + offset, low, high)`, then the chroma steps), or nil when a gain
    /// reaches 32 or an offset does not fit (the general kernels take such a run). `wide` makes the byte tables.
    init?(lumaGain gain: Float, offset: Float, low: Float, high: Float, chroma steps: [PlanarYUVKernel.ChromaStep],
          interleaved: Bool, wide: Bool = FilterKernels.usesAVX512) {
        if gain == 1, offset == 0, low == 0, high == 255 {
            luma = nil
        } else {
            guard let map = Self.lumaMap(gain: gain, offset: offset, low: low, high: high) else { return nil }
            luma = map
        }
        var fixedSteps: [ChromaStep] = []
        for step in steps {
            guard let fixed = Self.chromaStep(step, interleaved: interleaved) else { return nil }
            fixedSteps.append(fixed)
        }
        chroma = fixedSteps
        chromaInterleaved = interleaved
        definition = Definition(gain: gain, offset: offset, low: low, high: high, chroma: steps)
        tables = wide ? Self.tables(luma: luma, chroma: fixedSteps, interleaved: interleaved) : nil
    }

    /// The run's maps on every code, through the loops that `apply` runs otherwise.
    private static func tables(luma: LumaMap?, chroma: [ChromaStep], interleaved: Bool) -> Tables {
        let codes = (0...255).map { UInt8($0) }
        var tables = Tables()
        if let luma {
            var table = codes
            table.withUnsafeMutableBufferPointer { mapLuma($0.baseAddress!, count: 256, luma) }
            tables.luma = ByteTable(table)
        }
        guard !chroma.isEmpty, chroma.allSatisfy(\.isDiagonal) else { return tables }
        chroma.withUnsafeBufferPointer { steps in
            if interleaved {
                var pairs = codes.flatMap { [$0, $0] }
                pairs.withUnsafeMutableBufferPointer { mapInterleaved($0.baseAddress!, count: 512, steps) }
                tables.cb = ByteTable((0..<256).map { pairs[2 * $0] })
                tables.cr = ByteTable((0..<256).map { pairs[2 * $0 + 1] })
            } else {
                var (cb, cr) = (codes, codes)
                cb.withUnsafeMutableBufferPointer { cbRow in
                    cr.withUnsafeMutableBufferPointer { crRow in mapChroma(cbRow.baseAddress!, crRow.baseAddress!, count: 256, steps) }
                }
                (tables.cb, tables.cr) = (ByteTable(cb), ByteTable(cr))
            }
        }
        return tables
    }

    /// The smallest s in 1…5 with each `gain·2^(15−s)` in 16 bits and each `(|offset| + 1)·2^(7−s)` below `limit`.
    ///
    /// Sums saturate (`vpaddsw`) rather than wrap: a saturated chroma sum plus an offset below 2¹⁴ stays beyond the
    /// clamp bounds (±127·2^(7−s)), on the side the exact value lies, so it clamps as the exact value would.
    private static func scale(gains: [Float], offsets: [Float], limit: Float) -> Int? {
        (1...5).first { s in
            gains.allSatisfy { abs($0) * Float(1 << (15 - s)) < 32_767 }
                && offsets.allSatisfy { (abs($0) + 1) * Float(1 << (7 - s)) < limit }
        }
    }

    private static func lumaMap(gain: Float, offset: Float, low: Float, high: Float) -> LumaMap? {
        guard let s = scale(gains: [gain], offsets: [offset], limit: 32_767) else { return nil }
        let shift = 7 - s
        // The rounding half of the final shift folded into the offset.
        let fixedOffset = Int16((offset * Float(1 << shift)).rounded()) + Int16(1 << (shift - 1))
        // The bounds as whole codes, rounded as the result is (`low`/`high` are where the run clips).
        return LumaMap(gain: Int16((gain * Float(1 << (15 - s))).rounded()), offset: fixedOffset, shift: shift,
                       low: Int16(low.rounded()), high: Int16(high.rounded()))
    }

    private static func chromaStep(_ step: PlanarYUVKernel.ChromaStep, interleaved: Bool) -> ChromaStep? {
        let (o0, o1) = (step.cbOffset - 128, step.crOffset - 128)
        guard let s = scale(gains: [step.cbFromCb, step.cbFromCr, step.crFromCb, step.crFromCr], offsets: [o0, o1],
                            limit: 16_384) else { return nil }
        let q = Float(1 << (15 - s)), fraction = Float(1 << (7 - s))
        func fixed(_ value: Float, _ scale: Float) -> Int16 { Int16((value * scale).rounded()) }
        let (m00, m01, m10, m11) = (fixed(step.cbFromCb, q), fixed(step.cbFromCr, q), fixed(step.crFromCb, q), fixed(step.crFromCr, q))
        let (cbOffset, crOffset) = (fixed(o0, fraction), fixed(o1, fraction))
        // The bounds centred, in Q(7 − s) (whole codes exactly; a folded step's may fall between codes).
        let (cbLow, cbHigh) = (fixed(step.cbLow - 128, fraction), fixed(step.cbHigh - 128, fraction))
        let (crLow, crHigh) = (fixed(step.crLow - 128, fraction), fixed(step.crHigh - 128, fraction))
        // 128 codes and the rounding half in Q(7 − s); with an offset under 2¹⁴ (`scale`) the sum fits 16 bits.
        let toCodes = Int16(128 << (7 - s) + 1 << (6 - s))
        let cb = interleaved
            ? ChromaStep.Mix(own: Lanes16.alternating(m00, m11), other: Lanes16.alternating(m01, m10),
                             offset: Lanes16.alternating(cbOffset, crOffset), low: Lanes16.alternating(cbLow, crLow),
                             high: Lanes16.alternating(cbHigh, crHigh),
                             codesOffset: Lanes16.alternating(cbOffset + toCodes, crOffset + toCodes))
            : ChromaStep.Mix(own: Lanes16.splat(m00), other: Lanes16.splat(m01), offset: Lanes16.splat(cbOffset),
                             low: Lanes16.splat(cbLow), high: Lanes16.splat(cbHigh), codesOffset: Lanes16.splat(cbOffset + toCodes))
        let cr = ChromaStep.Mix(own: Lanes16.splat(m11), other: Lanes16.splat(m10), offset: Lanes16.splat(crOffset),
                                low: Lanes16.splat(crLow), high: Lanes16.splat(crHigh), codesOffset: Lanes16.splat(crOffset + toCodes))
        let full = Int16(-128 << (7 - s))...Int16(127 << (7 - s))
        let narrows = [cbLow, crLow].contains { $0 > full.lowerBound } || [cbHigh, crHigh].contains { $0 < full.upperBound }
        return ChromaStep(cb: cb, cr: cr, toCodes: Lanes16.splat(toCodes), s: s, isDiagonal: m01 == 0 && m10 == 0,
                          narrowsBounds: narrows)
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if let table = tables?.luma {
            let plane = planes[0]
            slices.run(rows: plane.height) { rows in
                for y in rows { table.apply(to: plane.row(y), count: width) }
            }
        } else if let luma {
            let plane = planes[0]
            slices.run(rows: plane.height) { rows in
                for y in rows { Self.mapLuma(plane.row(y), count: width, luma) }
            }
        }
        guard !chroma.isEmpty else { return }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        if let cb = tables?.cb, let cr = tables?.cr {
            if chromaInterleaved {
                let plane = planes[1]
                slices.run(rows: chromaHeight) { rows in
                    for y in rows { ByteTable.apply(even: cb, odd: cr, to: plane.row(y), count: 2 * chromaWidth) }
                }
            } else {
                let (cbPlane, crPlane) = (planes[1], planes[2])
                slices.run(rows: chromaHeight) { rows in
                    for y in rows {
                        cb.apply(to: cbPlane.row(y), count: chromaWidth)
                        cr.apply(to: crPlane.row(y), count: chromaWidth)
                    }
                }
            }
        } else if chromaInterleaved {
            let plane = planes[1]
            slices.run(rows: chromaHeight) { rows in
                chroma.withUnsafeBufferPointer { steps in
                    for y in rows { Self.mapInterleaved(plane.row(y), count: 2 * chromaWidth, steps) }
                }
            }
        } else {
            let (cbPlane, crPlane) = (planes[1], planes[2])
            slices.run(rows: chromaHeight) { rows in
                chroma.withUnsafeBufferPointer { steps in
                    for y in rows { Self.mapChroma(cbPlane.row(y), crPlane.row(y), count: chromaWidth, steps) }
                }
            }
        }
    }

    /// The luma map on 16 codes (each lane in 0…255): mapped codes, clamped to the run's bounds.
    @inline(__always) static func mapped(_ x: Lanes16.Vector, _ map: LumaLanes) -> Lanes16.Vector {
        Lanes16.clamp(unclamped(x, map), map.low, map.high)
    }

    /// The luma map before its clamp (for a row whose saturating narrowing clamps to 0…255 anyway).
    @inline(__always) private static func unclamped(_ x: Lanes16.Vector, _ map: LumaLanes) -> Lanes16.Vector {
        let value = Lanes16.addSaturating(Lanes16.multiplyHighRounded(Lanes16.shiftLeft(x, 7), map.gain), map.offset)
        return Lanes16.shiftRight(value, map.shift)
    }

    /// The chroma steps on the Cb and Cr codes of 16 blocks in separate vectors (each lane in 0…255): codes before the
    /// clamp to 0…255 (a saturating narrowing applies it). Steps made for I420 (`interleaved: false`); at least one.
    @inline(__always) private static func unclamped(cb: Lanes16.Vector, cr: Lanes16.Vector,
                                                    _ steps: UnsafeBufferPointer<ChromaStep>) -> (Lanes16.Vector, Lanes16.Vector) {
        var (cb, cr) = (centred(cb), centred(cr))
        for step in steps.dropLast() { (cb, cr) = (step.apply(step.cb, cb, partner: cr), step.apply(step.cr, cr, partner: cb)) }
        let last = steps[steps.count - 1]
        return (last.codes(last.cb, cb, partner: cr), last.codes(last.cr, cr, partner: cb))
    }

    /// The chroma steps on the Cb and Cr codes of 16 blocks in separate vectors: codes clamped to 0…255.
    @inline(__always) static func mapped(cb: Lanes16.Vector, cr: Lanes16.Vector,
                                         _ steps: UnsafeBufferPointer<ChromaStep>) -> (Lanes16.Vector, Lanes16.Vector) {
        let (outCb, outCr) = unclamped(cb: cb, cr: cr, steps)
        let (zero, byte) = (Lanes16.splat(0), Lanes16.splat(255))
        return (Lanes16.clamp(outCb, zero, byte), Lanes16.clamp(outCr, zero, byte))
    }

    /// One luma row, 32 samples at a time (the last chunk may run into the row padding: rows are padded to 64 bytes).
    private static func mapLuma(_ row: UnsafeMutablePointer<UInt8>, count: Int, _ map: LumaMap) {
        let map = map.lanes
        var x = 0
        if map.clamps {
            while x < count {
                let (a, b) = Lanes16.widenInHalves(row + x)
                Lanes16.narrowInHalves(mapped(a, map), mapped(b, map), to: row + x)
                x += 32
            }
        } else {
            while x < count {
                let (a, b) = Lanes16.widenInHalves(row + x)
                Lanes16.narrowInHalves(unclamped(a, map), unclamped(b, map), to: row + x)
                x += 32
            }
        }
    }

    /// Cb and Cr rows of I420, 32 samples of each at a time.
    private static func mapChroma(_ cbRow: UnsafeMutablePointer<UInt8>, _ crRow: UnsafeMutablePointer<UInt8>, count: Int,
                                  _ steps: UnsafeBufferPointer<ChromaStep>) {
        var x = 0
        while x < count {
            let (cb0, cb1) = Lanes16.widenInHalves(cbRow + x), (cr0, cr1) = Lanes16.widenInHalves(crRow + x)
            let (outCb0, outCr0) = unclamped(cb: cb0, cr: cr0, steps), (outCb1, outCr1) = unclamped(cb: cb1, cr: cr1, steps)
            Lanes16.narrowInHalves(outCb0, outCb1, to: cbRow + x)
            Lanes16.narrowInHalves(outCr0, outCr1, to: crRow + x)
            x += 32
        }
    }

    /// An NV12 chroma row (Cb, Cr alternating), 32 samples at a time: each lane mixes its own value and its neighbour's.
    private static func mapInterleaved(_ row: UnsafeMutablePointer<UInt8>, count: Int, _ steps: UnsafeBufferPointer<ChromaStep>) {
        var x = 0
        let last = steps[steps.count - 1]
        while x < count {
            var (v0, v1) = Lanes16.widenInHalves(row + x)
            (v0, v1) = (centred(v0), centred(v1))
            for step in steps.dropLast() {
                (v0, v1) = (step.apply(step.cb, v0, partner: Lanes16.swapPairs(v0)),
                            step.apply(step.cb, v1, partner: Lanes16.swapPairs(v1)))
            }
            Lanes16.narrowInHalves(last.codes(last.cb, v0, partner: Lanes16.swapPairs(v0)),
                                   last.codes(last.cb, v1, partner: Lanes16.swapPairs(v1)), to: row + x)
            x += 32
        }
    }

    /// Codes 0…255 to centred Q7: (x − 128)·2⁷.
    @inline(__always) private static func centred(_ x: Lanes16.Vector) -> Lanes16.Vector {
        Lanes16.addSaturating(Lanes16.shiftLeft(x, 7), Lanes16.splat(-16_384))
    }

}
