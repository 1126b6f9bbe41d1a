import VFXCore

/// Edge-aware smoothing of what temporal filtering left noisy, for one plane.
///
/// Each sample `t` is compared with `g`, its 5×5 binomial average (taps 1 4 6 4 1 / 16 each way: a Gaussian
/// of σ = 1 sample, exact in 16-bit integers); the output is `t + a · (g − t)` with
/// `a = β·r² / (β·r² + (g − t)²)`, where `r = σ / √n` is the noise the temporal filter left at that sample
/// (`n` frames averaged, from the history plane, in 1/16 frame). Where many frames were averaged or the
/// difference is larger than the remaining noise (an edge, texture) the sample stays; a newly uncovered area,
/// whose history is one frame, is smoothed as a single frame.
///
/// ```swift
/// let scratch = UnsafeMutablePointer<UInt16>.allocate(capacity: plane.width + 24)
/// SpatialSmoothing(sigma: 10).apply(source: temporal, history: counts, output: out, row: scratch)
/// ```
public struct SpatialSmoothing: Sendable {
    public var sigma: Float
    /// How far above the remaining noise a difference must be before it is kept (β above).
    public var tolerance: Float = 7

    public init(sigma: Float) {
        self.sigma = sigma
    }

    /// `source` and `output` must be distinct planes of one size; `history` as `TemporalBlend` writes it.
    /// `row` is scratch for `source.width + 24` values.
    public func apply(source: Plane, history: Plane, output: Plane, row: UnsafeMutablePointer<UInt16>) {
        apply(rows: 0..<source.height, source: source, history: history, output: output, row: row)
    }

    /// The rows `rows` of the output only (a strip: it reads the source two rows above and below it).
    func apply(rows: Range<Int>, source: Plane, history: Plane, output: Plane, row: UnsafeMutablePointer<UInt16>) {
        let width = source.width, height = source.height
        let scale = SIMD8<Float>(repeating: tolerance * sigma * sigma * 16 * 256 * 256)   // history in 1/16 frame, g in 1/256
        let tiny = SIMD8<Float>(repeating: .leastNormalMagnitude)
        let padded = row + 8
        for y in rows {
            @inline(__always) func clampedRow(_ offset: Int) -> UnsafeMutablePointer<UInt8> {
                source.row(min(max(y + offset, 0), height - 1))
            }
            let rows = (clampedRow(-2), clampedRow(-1), clampedRow(0), clampedRow(1), clampedRow(2))
            // Vertical pass into the padded row, ×16 (16 wide, the tail one sample at a time).
            var x = 0
            while x + 16 <= width {
                @inline(__always) func load(_ p: UnsafeMutablePointer<UInt8>) -> SIMD16<UInt16> {
                    widened(UnsafeRawPointer(p + x).loadUnaligned(as: SIMD16<UInt8>.self))
                }
                let v = load(rows.0) &+ load(rows.4) &+ 4 &* (load(rows.1) &+ load(rows.3)) &+ 6 &* load(rows.2)
                UnsafeMutableRawPointer(padded + x).storeBytes(of: v, as: SIMD16<UInt16>.self)
                x += 16
            }
            while x < width {
                padded[x] = UInt16(rows.0[x]) + UInt16(rows.4[x]) + 4 * (UInt16(rows.1[x]) + UInt16(rows.3[x])) + 6 * UInt16(rows.2[x])
                x += 1
            }
            for i in 1...2 {
                padded[-i] = padded[0]
                padded[width - 1 + i] = padded[width - 1]
            }
            // Horizontal pass (×256 in all: at most 255 · 256, exact in 16 bits) and the edge-aware step.
            let s = source.row(y), h = history.row(y), o = output.row(y)
            x = 0
            while x < width {
                let at = width >= 8 ? min(x, width - 8) : x
                if width < 8 {
                    let g = Int(padded[at - 2]) + Int(padded[at + 2]) + 4 * (Int(padded[at - 1]) + Int(padded[at + 1])) + 6 * Int(padded[at])
                    let t = Float(s[at]), d = Float(g) - 256 * t
                    let scale = tolerance * sigma * sigma * 16 * 256 * 256, n = Float(h[at])
                    let a = scale / (scale + n * d * d + Float.leastNormalMagnitude)
                    o[at] = UInt8(min(max((t + a * d / 256).rounded(), 0), 255))
                    x += 1
                    continue
                }
                @inline(__always) func load(_ offset: Int) -> SIMD8<UInt16> {
                    UnsafeRawPointer(padded + at + offset).loadUnaligned(as: SIMD8<UInt16>.self)
                }
                let sum = load(-2) &+ load(2) &+ 4 &* (load(-1) &+ load(1)) &+ 6 &* load(0)
                var g = SIMD8<Float>()
                for lane in 0..<8 { g[lane] = Float(sum[lane]) }
                let t = SIMD8<Float>(bytesAt: s + at), d = g - 256 * t
                let n = SIMD8<Float>(bytesAt: h + at)
                // βr² / (βr² + d²) with r² = σ²/n, as one division; without noise (σ = 0) the sample stays.
                // The result lies between t and g/256, so between two bytes.
                let a = scale / (scale + n * d * d + tiny)
                (o + at).store(roundedBytes(t + a * d * (1 / 256)))
                x = at + 8
            }
        }
    }
}
