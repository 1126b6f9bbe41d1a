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
/// multiply-add and one clamp for the whole run; chroma steps are applied one after the other (a clamp in 2D does not
/// compose), each a few multiply-adds on data already in registers. A run whose gains reach 32 (or whose offsets do not
/// fit 16 bits) is not taken: the general kernels run it.
///
/// ```swift
/// if let kernel = PlanarYUVKernel(matrices: [hue, contrast], coding: YUVCoding(.bt709), chromaInterleaved: false) { … }
/// ```
final class PlanarYUVKernel: ColorKernel {
    /// The run in 16-bit fixed point: luma `clamp(a·Y + b, low, high)`, then each chroma step in order.
    let fixedPoint: PlanarYUVFixedPoint

    /// Cb' = cbFromCb·(Cb−128) + cbFromCr·(Cr−128) + cbOffset, likewise Cr', both then clamped to 0…255.
    struct ChromaStep {
        var cbFromCb: Float, cbFromCr: Float, cbOffset: Float
        var crFromCb: Float, crFromCr: Float, crOffset: Float
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
        // Gains of 32 or more and offsets beyond the fixed point's range take the general kernels.
        guard let fixedPoint = PlanarYUVFixedPoint(lumaGain: gain, offset: offset, low: low, high: high, chroma: steps,
                                                   interleaved: chromaInterleaved) else { return nil }
        self.fixedPoint = fixedPoint
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        fixedPoint.apply(to: planes, width: width, height: height, slices: slices)
    }
}
