import VFXCore

/// A lone affine colour transform that keeps luma and chroma apart (`invert`, `hue`, `color-controls`, `tint`,
/// `brightness`-like offsets…) applied to an I420/NV12 frame plane by plane, as FFmpeg's `negate`, `hue` and `eq` do:
/// luma `Y → a·Y + b`, chroma `(Cb, Cr) → P·(Cb − 128, Cr − 128) + c`, on 8-bit codes, 16 samples at a time.
///
/// The transform, written in Y'CbCr codes, is affine; it qualifies when its luma output ignores chroma and its chroma
/// output ignores luma (checked at configure time). Values are clamped to 0…255 per plane, not in R'G'B': on
/// colours that the R'G'B' definition would clip (a hue turned out of gamut), the result differs by that clip, as
/// FFmpeg's per-plane filters do.
///
/// ```swift
/// if let kernel = PlanarYUVKernel(matrix: invert, coding: YUVCoding(.bt709), chromaInterleaved: false) { … }
/// ```
final class PlanarYUVKernel: ColorKernel {
    let lumaGain: Float, lumaOffset: Float
    /// Cb' = cbFromCb·(Cb−128) + cbFromCr·(Cr−128) + cbOffset, likewise Cr'.
    let cbFromCb: Float, cbFromCr: Float, cbOffset: Float
    let crFromCb: Float, crFromCr: Float, crOffset: Float
    let chromaInterleaved: Bool

    init?(matrix: ColorMatrix, coding: YUVCoding, chromaInterleaved: Bool) {
        func f(_ codes: SIMD3<Float>) -> SIMD3<Float> { coding.codes(matrix.apply(coding.rgb(y: codes.x, u: codes.y, v: codes.z))) }
        let base = f(SIMD3(0, 128, 128))
        let dy = f(SIMD3(1, 128, 128)) - base, du = f(SIMD3(0, 129, 128)) - base, dv = f(SIMD3(0, 128, 129)) - base
        // Differences of codes near 255 in Float carry ~1e-5 of rounding; 1e-3 of a code per code is far below a code.
        let tolerance: Float = 1e-3
        guard abs(du.x) < tolerance, abs(dv.x) < tolerance, abs(dy.y) < tolerance, abs(dy.z) < tolerance else { return nil }
        lumaGain = dy.x
        lumaOffset = base.x
        (cbFromCb, cbFromCr, cbOffset) = (du.y, dv.y, base.y)
        (crFromCb, crFromCr, crOffset) = (du.z, dv.z, base.z)
        self.chromaInterleaved = chromaInterleaved
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let luma = planes[0]
        let (gain, offset) = (lumaGain, lumaOffset)
        if gain != 1 || offset != 0 {
            slices.run(rows: luma.height) { rows in
                for y in rows {
                    let row = luma.row(y)
                    var x = 0
                    while x < width {
                        let count = min(16, width - x)
                        storeBytes(loadBytes(row + x, count: count) * gain + offset, to: row + x, count: count)
                        x += 16
                    }
                }
            }
        }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        if chromaInterleaved {
            // Lanes alternate Cb, Cr: each output lane mixes its own value and its neighbour's.
            var same = SIMD16<Float>(), other = SIMD16<Float>(), constant = SIMD16<Float>()
            for lane in 0..<16 {
                let isCb = lane % 2 == 0
                same[lane] = isCb ? cbFromCb : crFromCr
                other[lane] = isCb ? cbFromCr : crFromCb
                constant[lane] = (isCb ? cbOffset : crOffset) - 128 * (same[lane] + other[lane])
            }
            let plane = planes[1]
            let (s, o, k) = (same, other, constant)
            slices.run(rows: chromaHeight) { rows in
                for y in rows {
                    let row = plane.row(y)
                    var i = 0
                    while i < 2 * chromaWidth {
                        let count = min(16, 2 * chromaWidth - i)
                        let values = loadBytes(row + i, count: count)
                        var swapped = SIMD16<Float>()
                        for lane in 0..<16 { swapped[lane] = values[lane ^ 1] }
                        storeBytes(values * s + swapped * o + k, to: row + i, count: count)
                        i += 16
                    }
                }
            }
        } else {
            let (cbPlane, crPlane) = (planes[1], planes[2])
            let cbConstant = cbOffset - 128 * (cbFromCb + cbFromCr), crConstant = crOffset - 128 * (crFromCb + crFromCr)
            let (a, b, c, d) = (cbFromCb, cbFromCr, crFromCb, crFromCr)
            slices.run(rows: chromaHeight) { rows in
                for y in rows {
                    let cbRow = cbPlane.row(y), crRow = crPlane.row(y)
                    var x = 0
                    while x < chromaWidth {
                        let count = min(16, chromaWidth - x)
                        let cb = loadBytes(cbRow + x, count: count), cr = loadBytes(crRow + x, count: count)
                        storeBytes(cb * a + cr * b + cbConstant, to: cbRow + x, count: count)
                        storeBytes(cb * c + cr * d + crConstant, to: crRow + x, count: count)
                        x += 16
                    }
                }
            }
        }
    }
}
