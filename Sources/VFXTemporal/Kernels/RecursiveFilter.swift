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
/// blend.apply(current: noisy, prediction: moved.plane, history: movedCounts.plane, output: out, newHistory: counts.plane)
/// ```
public struct TemporalBlend: Sendable {
    public var sigma: Float
    public var lower: Float = 1.0
    public var upper: Float = 2.4
    public var maximumHistory: Float = 12

    public init(sigma: Float) {
        self.sigma = sigma
    }

    /// `output` must not be `current` (the last vector of a row overlaps the one before it).
    public func apply(current: Plane, prediction: Plane, history: Plane, output: Plane, newHistory: Plane) {
        apply(rows: 0..<current.height, current: current, prediction: StripRows(prediction), history: StripRows(history),
              output: output, newHistory: newHistory)
    }

    /// The blend of the rows `rows` only (a strip of the plane): `prediction` must hold the rows from one
    /// above the strip to one below it (inside the plane), `history` the strip's rows.
    func apply(rows: Range<Int>, current: Plane, prediction: StripRows, history: StripRows, output: Plane, newHistory: Plane) {
        guard !rows.isEmpty else { return }
        let width = current.width, height = current.height
        let sigma = max(self.sigma, 0.5)
        let start = SIMD8<Float>(repeating: upper * sigma * 9)          // thresholds on the 3×3 sum
        let slope = SIMD8<Float>(repeating: 1 / ((upper - lower) * sigma * 9))
        let historyLimit = SIMD8<Float>(repeating: min(maximumHistory * 16, 255))
        let stride = width + 2 + 16
        // |current − prediction| of three rows at a time (a ring: row r in slot r mod 3), each with its edge
        // samples repeated on both sides, and their column sums: the 3×3 sums, separably, while the rows
        // are still in the cache. Rows above the first and below the last repeat them.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * stride) { ringBuffer in
            withUnsafeTemporaryAllocation(of: UInt16.self, capacity: stride) { columnBuffer in
                let ring = ringBuffer.baseAddress!, columns = columnBuffer.baseAddress!
                func differences(_ y: Int) -> UnsafeMutablePointer<UInt8> { ring + (y % 3) * stride }
                func computeDifferences(_ y: Int) {
                    let c = current.row(y), p = prediction.row(y), d = differences(y) + 1
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
                computeDifferences(max(rows.lowerBound - 1, 0))
                computeDifferences(rows.lowerBound)
                for y in rows {
                    if y + 1 < height { computeDifferences(y + 1) }
                    let d0 = differences(max(y - 1, 0)), d1 = differences(y), d2 = differences(min(y + 1, height - 1))
                    var i = 0
                    while i + 16 <= width + 2 {
                        @inline(__always) func wide(_ row: UnsafeMutablePointer<UInt8>) -> SIMD16<UInt16> {
                            widened(UnsafeRawPointer(row + i).loadUnaligned(as: SIMD16<UInt8>.self))
                        }
                        UnsafeMutableRawPointer(columns + i).storeBytes(of: wide(d0) &+ wide(d1) &+ wide(d2), as: SIMD16<UInt16>.self)
                        i += 16
                    }
                    while i < width + 2 {
                        columns[i] = UInt16(d0[i]) + UInt16(d1[i]) + UInt16(d2[i])
                        i += 1
                    }
                    let c = current.row(y), p = prediction.row(y), h = history.row(y), o = output.row(y), nh = newHistory.row(y)
                    if width < 8 {
                        blendScalar(c: c, p: p, h: h, o: o, nh: nh, columns: columns, width: width, sigma: sigma)
                        continue
                    }
                    var x = 0
                    while x < width {
                        // The last vector of a row may overlap the one before; it recomputes the same values.
                        let at = min(x, width - 8)
                        let cur = SIMD8<Float>(bytesAt: c + at), pred = SIMD8<Float>(bytesAt: p + at)
                        let n16 = SIMD8<Float>(bytesAt: h + at)   // n in 1/16 frame
                        @inline(__always) func sums(_ offset: Int) -> SIMD8<UInt16> {
                            UnsafeRawPointer(columns + at + offset).loadUnaligned(as: SIMD8<UInt16>.self)
                        }
                        let total = sums(0) &+ sums(1) &+ sums(2)
                        var sum = SIMD8<Float>()
                        for lane in 0..<8 { sum[lane] = Float(total[lane]) }
                        let confidence = ((start - sum) * slope).clamped(0, 1)
                        // c·n/(n + 1) and c·n + 1 with n in 1/16 frame; the blend lies between two bytes.
                        let weight = confidence * n16 / (n16 + 16)
                        (o + at).store(roundedBytes(cur + weight * (pred - cur)))
                        let grown = confidence * n16 + 16
                        (nh + at).store(roundedBytes(grown.replacing(with: historyLimit, where: historyLimit .< grown)))
                        x = at + 8
                    }
                }
            }
        }
    }

    /// The same blend, one sample at a time, for rows narrower than a vector (`columns`: the row's sums of
    /// three differences down each padded column).
    private func blendScalar(c: UnsafeMutablePointer<UInt8>, p: UnsafeMutablePointer<UInt8>, h: UnsafeMutablePointer<UInt8>,
                             o: UnsafeMutablePointer<UInt8>, nh: UnsafeMutablePointer<UInt8>, columns: UnsafeMutablePointer<UInt16>,
                             width: Int, sigma: Float) {
        for x in 0..<width {
            let sum = Float(Int(columns[x]) + Int(columns[x + 1]) + Int(columns[x + 2]))
            let confidence = min(max((upper * sigma * 9 - sum) / ((upper - lower) * sigma * 9), 0), 1)
            let n = Float(h[x]) / 16
            let cur = Float(c[x]), pred = Float(p[x])
            let weight = confidence * n / (n + 1)
            o[x] = UInt8((cur + weight * (pred - cur)).rounded())
            nh[x] = UInt8(min(confidence * n + 1, maximumHistory) * 16)
        }
    }
}
