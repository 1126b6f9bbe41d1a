import VFXCore

/// A run of affine colour transforms that each keep luma and chroma apart (`invert`, `hue`, `color-controls`, `tint`,
/// `brightness`-like offsets…) applied to an I420/NV12 frame plane by plane, as FFmpeg's `negate`, `hue` and `eq` do:
/// each transform is, on 8-bit codes, luma `Y → a·Y + b` and chroma `(Cb, Cr) → P·(Cb − 128, Cr − 128) + c`, each
/// clamped to 0…255, one after the other; one pass over each plane for the whole run, in 16-bit fixed point
/// (`PlanarYUVFixedPoint`, 32 samples at a time).
///
/// A transform, written in Y'CbCr codes, is affine; it qualifies when its luma output ignores chroma and its chroma
/// output ignores luma (checked at configure time). Values are clamped to 0…255 per plane after each transform, not
/// in R'G'B': on colours that the R'G'B' definition would clip (a hue turned out of gamut), the result differs by that
/// clip, as FFmpeg's per-plane filters do. Luma maps of that form compose exactly: `clamp(a·Y + b, low, high)`, one
/// multiply-add and one clamp for the whole run. Chroma steps compose where the clamp between two of them allows
/// (`ChromaStep.followed(by:inputs:)`): always when the second keeps Cb and Cr apart (`color-controls`' saturation,
/// `invert`), else only when the first one's clamp cannot act; `hue,color-controls,invert` is one chroma step. The
/// others are applied one after the other (a clamp in 2D does not compose), each a few multiply-adds on data already in
/// registers. A run whose gains reach 32 (or whose offsets do not fit 16 bits) is not taken: the general kernels run it.
///
/// ```swift
/// if let kernel = PlanarYUVKernel(matrices: [hue, contrast], coding: YUVCoding(.bt709), chromaInterleaved: false) { … }
/// ```
final class PlanarYUVKernel: ColorKernel {
    /// The run in 16-bit fixed point: luma `clamp(a·Y + b, low, high)`, then each chroma step in order.
    let fixedPoint: PlanarYUVFixedPoint

    /// Cb' = clamp(cbFromCb·(Cb−128) + cbFromCr·(Cr−128) + cbOffset, cbLow, cbHigh), likewise Cr' (bounds 0…255 but
    /// for steps folded together, whose bounds are the clamps between them carried to the end).
    struct ChromaStep {
        var cbFromCb: Float, cbFromCr: Float, cbOffset: Float
        var crFromCb: Float, crFromCr: Float, crOffset: Float
        var cbLow: Float = 0, cbHigh: Float = 255, crLow: Float = 0, crHigh: Float = 255

        /// Within Float rounding of the identity (no sample moves by more than 0.05 codes), with the full bounds.
        var isIdentity: Bool {
            max(abs(cbFromCb - 1), abs(cbFromCr), abs(crFromCb), abs(crFromCr - 1)) < 1e-4
                && max(abs(cbOffset - 128), abs(crOffset - 128)) < 0.01 && bounds == Self.fullBounds
        }

        /// No cross terms, within Float rounding (a cross term under 10⁻⁴ moves a sample by under 0.013 codes).
        var keepsChannelsApart: Bool { max(abs(cbFromCr), abs(crFromCb)) < 1e-4 }

        /// The bounds as (Cb low, Cr low) and (Cb high, Cr high), in codes.
        var bounds: (low: SIMD2<Float>, high: SIMD2<Float>) {
            get { (SIMD2(cbLow, crLow), SIMD2(cbHigh, crHigh)) }
            set { (cbLow, crLow, cbHigh, crHigh) = (newValue.low.x, newValue.low.y, newValue.high.x, newValue.high.y) }
        }
        static let fullBounds = (low: SIMD2<Float>(0, 0), high: SIMD2<Float>(255, 255))

        /// `next` applied after this step, as one step, when the clamp between them cannot change a result; nil otherwise.
        /// `inputs` are the bounds of the codes this step reads (the previous step's, or 0…255).
        /// - `next` keeps Cb and Cr apart: each of its outputs is a monotonic map `a·c + b` of this step's clamped output,
        ///   and `a·clamp(c, low, high) + b = clamp(a·c + b, a·low + b, a·high + b)` (bounds swapped when a < 0), so
        ///   the two clamps become one, to the mapped bounds cut by `next`'s own. Bounds that miss `next`'s entirely
        ///   leave a constant, `next`'s nearest bound.
        /// - otherwise the two compose only when this step's outputs stay within its bounds for every input in `inputs`.
        ///
        /// ```swift
        /// let one = turn.followed(by: saturate, inputs: PlanarYUVKernel.ChromaStep.fullBounds)   // hue, then saturation
        /// ```
        func followed(by next: ChromaStep, inputs: (low: SIMD2<Float>, high: SIMD2<Float>)) -> ChromaStep? {
            let apart = next.keepsChannelsApart
            var low = next.bounds.low, high = next.bounds.high
            if apart {
                let gains = SIMD2(next.cbFromCb, next.crFromCr), offsets = SIMD2(next.cbOffset, next.crOffset) - 128
                let mapped = (gains * (bounds.low - 128) + offsets + 128, gains * (bounds.high - 128) + offsets + 128)
                let (mappedLow, mappedHigh) = (pointwiseMin(mapped.0, mapped.1), pointwiseMax(mapped.0, mapped.1))
                low = pointwiseMax(low, mappedLow)
                high = pointwiseMin(high, mappedHigh)
                // Mapped bounds wholly below or above next's: the output is next's nearest bound.
                low = low.replacing(with: next.bounds.high, where: mappedLow .> next.bounds.high)
                high = high.replacing(with: next.bounds.low, where: mappedHigh .< next.bounds.low)
                low = low.replacing(with: high, where: low .> high)
            } else {
                // This step's outputs over the box of its inputs (centred), unclamped.
                let (inLow, inHigh) = (inputs.low - 128, inputs.high - 128)
                func extent(fromCb: Float, fromCr: Float, _ offset: Float) -> (Float, Float) {
                    let a = (fromCb * inLow.x, fromCb * inHigh.x), b = (fromCr * inLow.y, fromCr * inHigh.y)
                    return (offset + min(a.0, a.1) + min(b.0, b.1), offset + max(a.0, a.1) + max(b.0, b.1))
                }
                let cb = extent(fromCb: cbFromCb, fromCr: cbFromCr, cbOffset), cr = extent(fromCb: crFromCb, fromCr: crFromCr, crOffset)
                guard cb.0 >= cbLow, cb.1 <= cbHigh, cr.0 >= crLow, cr.1 <= crHigh else { return nil }
            }
            // next·(this step's map): products of the 2×2 factors, and next's factors on this step's centred offsets.
            let (n0, n1) = apart ? (0, 0) : (next.cbFromCr, next.crFromCb)
            let (o0, o1) = (cbOffset - 128, crOffset - 128)
            var step = ChromaStep(cbFromCb: next.cbFromCb * cbFromCb + n0 * crFromCb,
                                  cbFromCr: next.cbFromCb * cbFromCr + n0 * crFromCr,
                                  cbOffset: next.cbFromCb * o0 + n0 * o1 + next.cbOffset,
                                  crFromCb: n1 * cbFromCb + next.crFromCr * crFromCb,
                                  crFromCr: n1 * cbFromCr + next.crFromCr * crFromCr,
                                  crOffset: n1 * o0 + next.crFromCr * o1 + next.crOffset)
            step.bounds = (low, high)
            return step
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
            guard !step.isIdentity else { continue }
            let inputs = steps.count > 1 ? steps[steps.count - 2].bounds : ChromaStep.fullBounds
            if let last = steps.last, let folded = last.followed(by: step, inputs: inputs) {
                if folded.isIdentity { steps.removeLast() } else { steps[steps.count - 1] = folded }
            } else {
                steps.append(step)
            }
        }
        // A run that keeps luma (hue, saturation) comes out within Float rounding of the identity: snap it, so the
        // luma plane is not rewritten (|gain − 1| < 1e-4 and |offset| < 0.01 move no sample by more than 0.04 codes).
        if abs(gain - 1) < 1e-4, abs(offset) < 0.01, low < 0.01, high > 254.99 { (gain, offset, low, high) = (1, 0, 0, 255) }
        // Gains of 32 or more and offsets beyond the fixed point's range take the general kernels.
        guard let fixedPoint = PlanarYUVFixedPoint(lumaGain: gain, offset: offset, low: low, high: high, chroma: steps,
                                                   interleaved: chromaInterleaved) else { return nil }
        self.fixedPoint = fixedPoint
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        fixedPoint.apply(to: planes, width: width, height: height, slices: slices)
    }
}
