import VFXCore

/// The per-pixel blend of a motion-compensated temporal filter, for one plane.
///
/// `prediction` is the previous output moved onto the current frame; `history` says how many frames of
/// averaging it already holds (per pixel, in 1/16 frame). Each pixel becomes
/// `current + w · (prediction − current)` with `w = c · n / (n + 1)`: the running average of the `n`
/// frames that matched, where the match confidence `c` falls from 1 to 0 as the mean absolute difference
/// over the 3×3 neighbourhood grows from `lower·σ` to `upper·σ`. So a pixel whose compensated history
/// does not match (a moving edge the motion search missed, an uncovered area, a scene cut) keeps the
/// current frame: no smear, no ghost. The new history is `c · n + 1`, at most `maximumHistory` frames.
///
/// ```swift
/// let blend = TemporalBlend(sigma: 10)
/// blend.apply(current: noisy, prediction: moved.plane, history: movedCounts.plane, output: out, newHistory: counts.plane,
///             scratch: scratch)
/// ```
public struct TemporalBlend: Sendable {
    public var sigma: Float
    public var lower: Float = 1.2
    public var upper: Float = 2.6
    public var maximumHistory: Float = 12

    public init(sigma: Float) {
        self.sigma = sigma
    }

    /// `scratch` is a plane of at least (width + 2)×(height + 2) samples for the padded absolute differences.
    /// `output` must not be `current` (the last vector of a row overlaps the one before it).
    public func apply(current: Plane, prediction: Plane, history: Plane, output: Plane, newHistory: Plane, scratch: Plane) {
        let width = current.width, height = current.height
        precondition(scratch.width >= width + 2 && scratch.height >= height + 2, "scratch plane too small")
        // |current − prediction| with a one-sample border repeated around it.
        for y in 0..<height {
            let c = current.row(y), p = prediction.row(y), d = scratch.row(y + 1) + 1
            var x = 0
            while x + 16 <= width {
                let a = UnsafeRawPointer(c + x).loadUnaligned(as: SIMD16<UInt8>.self)
                let b = UnsafeRawPointer(p + x).loadUnaligned(as: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(d + x).storeBytes(of: absoluteDifference(a, b), as: SIMD16<UInt8>.self)
                x += 16
            }
            while x < width {
                d[x] = c[x] > p[x] ? c[x] - p[x] : p[x] - c[x]
                x += 1
            }
            d[-1] = d[0]
            d[width] = d[width - 1]
        }
        scratch.row(0).update(from: scratch.row(1), count: width + 2)
        scratch.row(height + 1).update(from: scratch.row(height), count: width + 2)

        let sigma = max(self.sigma, 0.5)
        let start = SIMD8<Float>(repeating: upper * sigma * 9)          // thresholds on the 3×3 sum
        let slope = SIMD8<Float>(repeating: 1 / ((upper - lower) * sigma * 9))
        for y in 0..<height {
            let c = current.row(y), p = prediction.row(y), h = history.row(y), o = output.row(y), nh = newHistory.row(y)
            let d0 = scratch.row(y), d1 = scratch.row(y + 1), d2 = scratch.row(y + 2)
            var x = 0
            while x < width {
                // The last vector of a row may overlap the one before; it recomputes the same values.
                let at = min(x, max(0, width - 8))
                if width < 8 { blendScalar(y: y, current: current, prediction: prediction, history: history, output: output,
                                           newHistory: newHistory, scratch: scratch, sigma: sigma); break }
                @inline(__always) func bytes(_ row: UnsafeMutablePointer<UInt8>, _ offset: Int) -> SIMD8<Float> {
                    SIMD8<Float>(bytesAt: row + at + offset)
                }
                let cur = bytes(c, 0), pred = bytes(p, 0), n = bytes(h, 0) * (1 / 16)
                // The 3×3 sum in 16-bit integers (at most 9 × 255), converted once.
                @inline(__always) func wide(_ row: UnsafeMutablePointer<UInt8>, _ offset: Int) -> SIMD8<UInt16> {
                    widened(UnsafeRawPointer(row + at + offset).loadUnaligned(as: SIMD8<UInt8>.self))
                }
                let total = wide(d0, 0) &+ wide(d0, 1) &+ wide(d0, 2) &+ wide(d1, 0) &+ wide(d1, 1) &+ wide(d1, 2)
                    &+ wide(d2, 0) &+ wide(d2, 1) &+ wide(d2, 2)
                var sum = SIMD8<Float>()
                for lane in 0..<8 { sum[lane] = Float(total[lane]) }
                let confidence = ((start - sum) * slope).clamped(0, 1)
                let weight = confidence * n / (n + 1)
                (o + at).store(roundedBytes((cur + weight * (pred - cur)).clamped(0, 255)))
                (nh + at).store(roundedBytes(((confidence * n + 1).clamped(0, maximumHistory) * 16).clamped(0, 255)))
                x = at + 8
            }
        }
    }

    /// The same blend, one sample at a time, for rows narrower than a vector.
    private func blendScalar(y: Int, current: Plane, prediction: Plane, history: Plane, output: Plane, newHistory: Plane,
                             scratch: Plane, sigma: Float) {
        for x in 0..<current.width {
            var sum: Float = 0
            for dy in 0...2 { for dx in 0...2 { sum += Float(scratch.row(y + dy)[x + dx]) } }
            let confidence = min(max((upper * sigma * 9 - sum) / ((upper - lower) * sigma * 9), 0), 1)
            let n = Float(history.row(y)[x]) / 16
            let cur = Float(current.row(y)[x]), pred = Float(prediction.row(y)[x])
            let weight = confidence * n / (n + 1)
            output.row(y)[x] = UInt8((cur + weight * (pred - cur)).rounded())
            newHistory.row(y)[x] = UInt8(min(confidence * n + 1, maximumHistory) * 16)
        }
    }
}
