import VFXCore

/// A run of affine colour transforms that each keep luma and chroma apart (`invert`, `hue`, `color-controls`, `tint`,
/// `brightness`-like offsets…) applied to an I420/NV12 frame plane by plane, as FFmpeg's `negate`, `hue` and `eq` do:
/// each transform is, on 8-bit codes, luma `Y → a·Y + b` and chroma `(Cb, Cr) → P·(Cb − 128, Cr − 128) + c`, each
/// clamped to 0…255, one after the other; 16 samples at a time, one pass over each plane for the whole run.
///
/// A transform, written in Y'CbCr codes, is affine; it qualifies when its luma output ignores chroma and its chroma
/// output ignores luma (checked at configure time). Values are clamped to 0…255 per plane after each transform, not
/// in R'G'B': on colours that the R'G'B' definition would clip (a hue turned out of gamut), the result differs by that
/// clip, as FFmpeg's per-plane filters do. Luma maps of that form compose exactly: `clamp(a·Y + b, low, high)`, one
/// multiply-add and one clamp for the whole run; chroma steps are applied one after the other (a clamp in 2D does not
/// compose), each a few multiply-adds on data already in registers.
///
/// ```swift
/// if let kernel = PlanarYUVKernel(matrices: [hue, contrast], coding: YUVCoding(.bt709), chromaInterleaved: false) { … }
/// ```
final class PlanarYUVKernel: ColorKernel {
    /// The whole run on luma: `clamp(lumaGain·Y + lumaOffset, lumaLow, lumaHigh)`.
    let lumaGain: Float, lumaOffset: Float, lumaLow: Float, lumaHigh: Float
    /// Each transform on chroma, in order.
    let chromaSteps: [ChromaStep]
    let chromaInterleaved: Bool
    /// The luma map and every chroma step in whole codes, when each is `±x + k` (`invert`, `brightness`-like offsets):
    /// then the planes are mapped in 16-bit integer lanes, exactly as the Float path rounds (its values lie within 0.05
    /// of a whole code). Nil otherwise.
    let unitMaps: (luma: UnitMap, chroma: [(cb: UnitMap, cr: UnitMap)])?

    /// `clamp(sign·x + offset, low, high)` on whole codes.
    struct UnitMap {
        var sign: Int16, offset: Int16, low: Int16, high: Int16

        /// The map `clamp(gain·x + offset, low, high)` in whole codes, when `gain` is ±1 and `offset` whole (each within
        /// Float rounding: 1e-4 · 255 + 0.01 moves no value by 0.04 codes), with the bounds rounded as the result is.
        init?(gain: Float, offset: Float, low: Float = 0, high: Float = 255) {
            guard abs(abs(gain) - 1) < 1e-4, abs(offset - offset.rounded()) < 0.01, abs(offset) < 1000 else { return nil }
            (sign, self.offset) = (gain > 0 ? 1 : -1, Int16(offset.rounded()))
            (self.low, self.high) = (Int16(low.rounded()), Int16(high.rounded()))
        }

        init(sign: Int16, offset: Int16, low: Int16, high: Int16) {
            (self.sign, self.offset, self.low, self.high) = (sign, offset, low, high)
        }
    }

    /// Cb' = cbFromCb·(Cb−128) + cbFromCr·(Cr−128) + cbOffset, likewise Cr', both then clamped to 0…255.
    struct ChromaStep {
        var cbFromCb: Float, cbFromCr: Float, cbOffset: Float
        var crFromCb: Float, crFromCr: Float, crOffset: Float
        /// The same with the −128 folded into the offsets: Cb' = cbFromCb·Cb + cbFromCr·Cr + cbConstant.
        var cbConstant: Float { cbOffset - 128 * (cbFromCb + cbFromCr) }
        var crConstant: Float { crOffset - 128 * (crFromCb + crFromCr) }
        /// Within Float rounding of the identity (no sample moves by more than 0.05 codes).
        var isIdentity: Bool {
            max(abs(cbFromCb - 1), abs(cbFromCr), abs(crFromCb), abs(crFromCr - 1)) < 1e-4
                && max(abs(cbOffset - 128), abs(crOffset - 128)) < 0.01
        }
    }

    convenience init?(matrix: ColorMatrix, coding: YUVCoding, chromaInterleaved: Bool) {
        self.init(matrices: [matrix], coding: coding, chromaInterleaved: chromaInterleaved)
    }

    init?(matrices: [ColorMatrix], coding: YUVCoding, chromaInterleaved: Bool) {
        guard !matrices.isEmpty else { return nil }
        var (gain, offset, low, high): (Float, Float, Float, Float) = (1, 0, 0, 255)
        var steps: [ChromaStep] = []
        for matrix in matrices {
            func f(_ codes: SIMD3<Float>) -> SIMD3<Float> { coding.codes(matrix.apply(coding.rgb(y: codes.x, u: codes.y, v: codes.z))) }
            let base = f(SIMD3(0, 128, 128))
            let dy = f(SIMD3(1, 128, 128)) - base, du = f(SIMD3(0, 129, 128)) - base, dv = f(SIMD3(0, 128, 129)) - base
            // Differences of codes near 255 in Float carry ~1e-5 of rounding; 1e-3 of a code per code is far below a code.
            let tolerance: Float = 1e-3
            guard abs(du.x) < tolerance, abs(dv.x) < tolerance, abs(dy.y) < tolerance, abs(dy.z) < tolerance else { return nil }
            // clamp(a·clamp(g·Y + o, low, high) + b, 0, 255) = clamp(a·g·Y + a·o + b, low', high') with the bounds mapped
            // by a (swapped when a < 0) and cut to 0…255; when they miss 0…255 the run is a constant there.
            let (a, b) = (dy.x, base.x)
            let mapped = (a * low + b, a * high + b)
            let (newLow, newHigh) = (min(mapped.0, mapped.1), max(mapped.0, mapped.1))
            (gain, offset) = (a * gain, a * offset + b)
            low = min(max(newLow, 0), 255)
            high = max(min(newHigh, 255), low)
            let step = ChromaStep(cbFromCb: du.y, cbFromCr: dv.y, cbOffset: base.y, crFromCb: du.z, crFromCr: dv.z, crOffset: base.z)
            if !step.isIdentity { steps.append(step) }
        }
        // A run that keeps luma (hue, saturation) comes out within Float rounding of the identity: snap it, so the
        // luma plane is not rewritten (|gain − 1| < 1e-4 and |offset| < 0.01 move no sample by more than 0.04 codes).
        if abs(gain - 1) < 1e-4, abs(offset) < 0.01, low < 0.01, high > 254.99 { (gain, offset, low, high) = (1, 0, 0, 255) }
        (lumaGain, lumaOffset, lumaLow, lumaHigh) = (gain, offset, low, high)
        chromaSteps = steps
        self.chromaInterleaved = chromaInterleaved
        let chromaMaps = steps.map { step -> (cb: UnitMap, cr: UnitMap)? in
            guard abs(step.cbFromCr) < 1e-4, abs(step.crFromCb) < 1e-4,
                  let cb = UnitMap(gain: step.cbFromCb, offset: step.cbConstant),
                  let cr = UnitMap(gain: step.crFromCr, offset: step.crConstant) else { return nil }
            return (cb, cr)
        }
        if let luma = UnitMap(gain: gain, offset: offset, low: low, high: high), !chromaMaps.contains(where: { $0 == nil }) {
            unitMaps = (luma, chromaMaps.compactMap { $0 })
        } else {
            unitMaps = nil
        }
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if let unitMaps { return applyUnitMaps(unitMaps, to: planes, width: width, height: height, slices: slices) }
        let luma = planes[0]
        let (gain, offset, low, high) = (lumaGain, lumaOffset, lumaLow, lumaHigh)
        if gain != 1 || offset != 0 || low != 0 || high != 255 {
            slices.run(rows: luma.height) { rows in
                for y in rows {
                    let row = luma.row(y)
                    var x = 0
                    while x < width {
                        // Whole chunks: the last may run into the row padding (rows are padded to 64 bytes).
                        let mapped = SIMD16<Float>(repeating: offset).addingProduct(SIMD16<Float>(bytesAt: row + x), gain)
                        (row + x).store(roundedBytes(mapped.clamped(low, high)))
                        x += 16
                    }
                }
            }
        }
        guard !chromaSteps.isEmpty else { return }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        if chromaInterleaved {
            // Lanes alternate Cb, Cr: each output lane mixes its own value and its neighbour's.
            let lanes = chromaSteps.map { step in
                var same = SIMD16<Float>(), other = SIMD16<Float>(), constant = SIMD16<Float>()
                for lane in 0..<16 {
                    let isCb = lane % 2 == 0
                    same[lane] = isCb ? step.cbFromCb : step.crFromCr
                    other[lane] = isCb ? step.cbFromCr : step.crFromCb
                    constant[lane] = isCb ? step.cbConstant : step.crConstant
                }
                return (same, other, constant)
            }
            let plane = planes[1]
            slices.run(rows: chromaHeight) { rows in
                lanes.withUnsafeBufferPointer { lanes in
                    for y in rows {
                        let row = plane.row(y)
                        var i = 0
                        while i < 2 * chromaWidth {
                            var values = SIMD16<Float>(bytesAt: row + i)
                            for (same, other, constant) in lanes {
                                var swapped = SIMD16<Float>()
                                for lane in 0..<16 { swapped[lane] = values[lane ^ 1] }
                                values = (values * same + swapped * other + constant).clamped(0, 255)
                            }
                            (row + i).store(roundedBytes(values))
                            i += 16
                        }
                    }
                }
            }
        } else {
            let (cbPlane, crPlane) = (planes[1], planes[2])
            let steps = chromaSteps.map { step in
                SIMD8(step.cbFromCb, step.cbFromCr, step.crFromCb, step.crFromCr, step.cbConstant, step.crConstant, 0, 0)
            }
            slices.run(rows: chromaHeight) { rows in
                steps.withUnsafeBufferPointer { steps in
                    for y in rows {
                        let cbRow = cbPlane.row(y), crRow = crPlane.row(y)
                        var x = 0
                        while x < chromaWidth {
                            var cb = SIMD16<Float>(bytesAt: cbRow + x), cr = SIMD16<Float>(bytesAt: crRow + x)
                            for step in steps {
                                (cb, cr) = ((cb * step[0] + cr * step[1] + step[4]).clamped(0, 255),
                                            (cb * step[2] + cr * step[3] + step[5]).clamped(0, 255))
                            }
                            (cbRow + x).store(roundedBytes(cb))
                            (crRow + x).store(roundedBytes(cr))
                            x += 16
                        }
                    }
                }
            }
        }
    }

    /// The planes through `maps` in 16-bit lanes, 16 samples at a time (whole chunks: the last may run into the row
    /// padding, rows being padded to 64 bytes).
    private func applyUnitMaps(_ maps: (luma: UnitMap, chroma: [(cb: UnitMap, cr: UnitMap)]), to planes: [Plane], width: Int,
                               height: Int, slices: SliceRunner) {
        func lanes(_ even: UnitMap, _ odd: UnitMap) -> UnitLanes {
            var lanes = UnitLanes()
            for lane in 0..<16 {
                let map = lane % 2 == 0 ? even : odd
                (lanes.sign[lane], lanes.offset[lane], lanes.low[lane], lanes.high[lane]) = (map.sign, map.offset, map.low, map.high)
            }
            return lanes
        }
        func run(_ plane: Plane, rows: Int, bytes: Int, _ steps: [UnitLanes]) {
            slices.run(rows: rows) { rows in
                steps.withUnsafeBufferPointer { steps in
                    for y in rows {
                        let row = plane.row(y)
                        var x = 0
                        while x < bytes {
                            var values = UnsafeRawPointer(row + x).loadUnaligned(as: SIMD16<UInt8>.self)
                            for step in steps { values = step.apply(values) }
                            UnsafeMutableRawPointer(row + x).storeBytes(of: values, as: SIMD16<UInt8>.self)
                            x += 16
                        }
                    }
                }
            }
        }
        let luma = maps.luma
        if (luma.sign, luma.offset, luma.low, luma.high) != (1, 0, 0, 255) {
            run(planes[0], rows: planes[0].height, bytes: width, [lanes(luma, luma)])
        }
        guard !maps.chroma.isEmpty else { return }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        if chromaInterleaved {
            run(planes[1], rows: chromaHeight, bytes: 2 * chromaWidth, maps.chroma.map { lanes($0.cb, $0.cr) })
        } else {
            run(planes[1], rows: chromaHeight, bytes: chromaWidth, maps.chroma.map { lanes($0.cb, $0.cb) })
            run(planes[2], rows: chromaHeight, bytes: chromaWidth, maps.chroma.map { lanes($0.cr, $0.cr) })
        }
    }
}

/// A `PlanarYUVKernel.UnitMap` per lane (Cb and Cr alternate for NV12).
private struct UnitLanes {
    var sign = SIMD16<Int16>(), offset = SIMD16<Int16>(), low = SIMD16<Int16>(), high = SIMD16<Int16>()

    /// Each lane `clamp(sign·x + offset, low, high)`: widening, `vpmullw`, `vpaddw`, then `vpmaxsw`, `vpminsw` and a
    /// pack (lane loops on values held in registers, which the vectorizer turns into those).
    @inline(__always) func apply(_ x: SIMD16<UInt8>) -> SIMD16<UInt8> {
        var wide = SIMD16<Int16>()
        for lane in 0..<16 { wide[lane] = Int16(x[lane]) }
        let value = wide &* sign &+ offset
        let (low, high) = (self.low, self.high)
        var result = SIMD16<UInt8>()
        for lane in 0..<16 { result[lane] = UInt8(truncatingIfNeeded: min(max(value[lane], low[lane]), high[lane])) }
        return result
    }
}
