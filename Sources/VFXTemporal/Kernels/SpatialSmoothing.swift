import Foundation
import VFXCore

/// Edge-aware smoothing of what temporal filtering left noisy, for one plane.
///
/// Each sample `t` is compared with `g`, its 5×5 Gaussian average (σ = 1 sample, separable); the output is
/// `t + a · (g − t)` with `a = β·r² / (β·r² + (g − t)²)`, where `r = σ / √n` is the noise the temporal
/// filter left at that sample (`n` frames averaged, from the history plane, in 1/16 frame). Where many
/// frames were averaged or the difference is larger than the remaining noise (an edge, texture) the
/// sample stays; a newly uncovered area, whose history is one frame, is smoothed as a single frame.
///
/// ```swift
/// SpatialSmoothing(sigma: 10).apply(source: temporal, history: counts, output: out, rows: &scratchRow)
/// ```
public struct SpatialSmoothing: Sendable {
    public var sigma: Float
    /// How far above the remaining noise a difference must be before it is kept (β above).
    public var tolerance: Float = 7

    public init(sigma: Float) {
        self.sigma = sigma
    }

    /// The 5 taps of a Gaussian with σ = 1, normalized.
    static let taps: [Float] = {
        let raw = (-2...2).map { expf(-Float($0 * $0) / 2) }
        let total = raw.reduce(0, +)
        return raw.map { $0 / total }
    }()

    /// `source` and `output` must be distinct planes of one size; `history` as `TemporalBlend` writes it.
    /// `row` is scratch for `source.width + 12` floats.
    public func apply(source: Plane, history: Plane, output: Plane, row: UnsafeMutablePointer<Float>) {
        let width = source.width, height = source.height
        let k = SpatialSmoothing.taps
        let (k0, k1, k2) = (SIMD8<Float>(repeating: k[2]), SIMD8<Float>(repeating: k[1]), SIMD8<Float>(repeating: k[0]))
        let scale = SIMD8<Float>(repeating: tolerance * sigma * sigma * 16)   // history is in 1/16 frame
        let tiny = SIMD8<Float>(repeating: .leastNormalMagnitude)
        let padded = row + 4
        for y in 0..<height {
            @inline(__always) func clampedRow(_ offset: Int) -> UnsafeMutablePointer<UInt8> {
                source.row(min(max(y + offset, 0), height - 1))
            }
            let rows = (clampedRow(-2), clampedRow(-1), clampedRow(0), clampedRow(1), clampedRow(2))
            // Vertical pass into the padded row (8-wide, the tail recomputed from the last full vector).
            var x = 0
            while x < width {
                let at = width >= 8 ? min(x, width - 8) : x
                if width < 8 {
                    padded[at] = k[2] * Float(rows.2[at]) + k[1] * (Float(rows.1[at]) + Float(rows.3[at]))
                        + k[0] * (Float(rows.0[at]) + Float(rows.4[at]))
                    x += 1
                    continue
                }
                let v = k0 * SIMD8<Float>(bytesAt: rows.2 + at)
                    + k1 * (SIMD8<Float>(bytesAt: rows.1 + at) + SIMD8<Float>(bytesAt: rows.3 + at))
                    + k2 * (SIMD8<Float>(bytesAt: rows.0 + at) + SIMD8<Float>(bytesAt: rows.4 + at))
                UnsafeMutableRawPointer(padded + at).storeBytes(of: v, as: SIMD8<Float>.self)
                x = at + 8
            }
            for i in 1...4 {
                padded[-i] = padded[0]
                padded[width - 1 + i] = padded[width - 1]
            }
            let s = source.row(y), h = history.row(y), o = output.row(y)
            x = 0
            while x < width {
                let at = width >= 8 ? min(x, width - 8) : x
                if width < 8 {
                    let g = k[2] * padded[at] + k[1] * (padded[at - 1] + padded[at + 1]) + k[0] * (padded[at - 2] + padded[at + 2])
                    let t = Float(s[at]), d = g - t
                    let scale = tolerance * sigma * sigma * 16, n = max(Float(h[at]), 1)
                    let a = scale / (scale + n * d * d + Float.leastNormalMagnitude)
                    o[at] = UInt8(min(max((t + a * d).rounded(), 0), 255))
                    x += 1
                    continue
                }
                @inline(__always) func load(_ offset: Int) -> SIMD8<Float> {
                    UnsafeRawPointer(padded + at + offset).loadUnaligned(as: SIMD8<Float>.self)
                }
                let g = k0 * load(0) + k1 * (load(-1) + load(1)) + k2 * (load(-2) + load(2))
                let t = SIMD8<Float>(bytesAt: s + at), d = g - t
                let n = SIMD8<Float>(bytesAt: h + at).clamped(1, 255)
                // βr² / (βr² + d²) with r² = σ²/n, as one division; without noise (σ = 0) the sample stays.
                let a = scale / (scale + n * d * d + tiny)
                (o + at).store(roundedBytes((t + a * d).clamped(0, 255)))
                x = at + 8
            }
        }
    }
}
