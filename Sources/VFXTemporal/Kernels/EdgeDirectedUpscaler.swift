import Foundation
import VFXCore

/// Enlarges a plane by 2, 3 or 4 with trained, edge-directed filters.
///
/// Each low-resolution sample is put in one of 72 classes by the structure tensor of its neighbourhood
/// (central-difference gradients, smoothed by `[1 2 1]ᵀ[1 2 1]/16`): the angle of the dominant gradient in
/// 8 bins, its strength (√λ₁ below 2, 2…6, above 6 code values) and its coherence ((√λ₁ − √λ₂)/(√λ₁ + √λ₂)
/// below 0.25, 0.25…0.5, above). The `scale × scale` output samples it covers are each a linear filter of its
/// 5×5 neighbourhood plus a constant, chosen by class and position: along an edge the filters interpolate
/// along it, across it they restore the contrast that the camera's (or a box) downscale averaged away.
/// The filters come from `scripts/train-super-resolution.py` (least squares on photos, box-downscaled).
///
/// ```swift
/// let upscaler = try EdgeDirectedUpscaler(scale: 2, maximumWidth: 640, maximumHeight: 360)
/// upscaler.upscale(frame.plane(0), into: output.plane(0))
/// ```
public final class EdgeDirectedUpscaler {
    public let scale: Int
    static let classCount = 72
    static let taps = 26
    /// Filters as `[class][tap][lane]` with `lanes` ≥ scale² (padded with zeros).
    private let filters: [Float]
    private let lanes: Int
    private let classes: UnsafeMutablePointer<UInt8>
    private let gradients: UnsafeMutablePointer<Float>
    private let capacity: Int

    /// An upscaler for low-resolution planes of up to `maximumWidth`×`maximumHeight` samples.
    public init(scale: Int, maximumWidth: Int, maximumHeight: Int) {
        precondition((2...4).contains(scale), "scale must be 2, 3 or 4")
        self.scale = scale
        let encoded = scale == 2 ? SuperResolutionFilters.scale2 : scale == 3 ? SuperResolutionFilters.scale3 : SuperResolutionFilters.scale4
        let phases = scale * scale
        lanes = phases <= 4 ? 4 : 16
        // The table is part of the build (checked in); its size is checked by the tests.
        let data = Data(base64Encoded: encoded) ?? Data()
        let raw: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }.map { Float(bitPattern: $0.bitPattern.littleEndian) }
        var filters = [Float](repeating: 0, count: EdgeDirectedUpscaler.classCount * EdgeDirectedUpscaler.taps * lanes)
        for index in 0..<min(raw.count / phases, EdgeDirectedUpscaler.classCount * EdgeDirectedUpscaler.taps) {
            for phase in 0..<phases { filters[index * lanes + phase] = raw[index * phases + phase] }
        }
        self.filters = filters
        capacity = max(1, maximumWidth * maximumHeight)
        classes = .allocate(capacity: capacity)
        gradients = .allocate(capacity: 2 * capacity)
    }

    deinit {
        classes.deallocate()
        gradients.deallocate()
    }

    /// Number of filter weights decoded from the trained table (72 × 26 × scale²).
    var trainedWeightCount: Int {
        let data = Data(base64Encoded: scale == 2 ? SuperResolutionFilters.scale2 : scale == 3 ? SuperResolutionFilters.scale3
                        : SuperResolutionFilters.scale4) ?? Data()
        return data.count / 4
    }

    /// Writes `high` (at most `scale` times `low` in each direction; samples past `scale ×` the low size
    /// repeat the edge) from `low`.
    /// `slices` splits each pass over rows between its threads (the result is the same with any count).
    public func upscale(_ low: Plane, into high: Plane, slices: SliceRunner = SliceRunner(threads: 1)) {
        precondition(low.width * low.height <= capacity, "plane larger than the upscaler was made for")
        classify(low, slices: slices)
        if lanes == 4 { run(low, high, SIMD4<Float>.self, slices: slices) } else { run(low, high, SIMD16<Float>.self, slices: slices) }
    }

    /// The class of every low-resolution sample, as the training script computes it (the angle bin from the
    /// doubled-angle vector's octant, which is what the script's `arctan2` bins are, without the arctangent).
    func classify(_ low: Plane, slices: SliceRunner = SliceRunner(threads: 1)) {
        let width = low.width, height = low.height
        let gx = gradients, gy = gradients + capacity
        let work = 40 * width * height
        slices.forEachSlice(of: height, work: work) { range, _ in for y in range {
            let row = low.row(y), up = low.row(max(y - 1, 0)), down = low.row(min(y + 1, height - 1))
            let ox = gx + y * width, oy = gy + y * width
            ox[0] = (Float(row[min(1, width - 1)]) - Float(row[0])) * 0.5
            var x = 1
            while x + 8 <= width - 1 {
                let d = SIMD8<Float>(bytesAt: row + x + 1) - SIMD8<Float>(bytesAt: row + x - 1)
                UnsafeMutableRawPointer(ox + x).storeBytes(of: d * 0.5, as: SIMD8<Float>.self)
                x += 8
            }
            while x < width {
                ox[x] = (Float(row[min(x + 1, width - 1)]) - Float(row[x - 1])) * 0.5
                x += 1
            }
            x = 0
            while x + 8 <= width {
                let d = SIMD8<Float>(bytesAt: down + x) - SIMD8<Float>(bytesAt: up + x)
                UnsafeMutableRawPointer(oy + x).storeBytes(of: d * 0.5, as: SIMD8<Float>.self)
                x += 8
            }
            while x < width {
                oy[x] = (Float(down[x]) - Float(up[x])) * 0.5
                x += 1
            }
        } }
        // Vertical [1 2 1] of the three products into padded rows (each slice its own), then horizontal
        // [1 2 1], then the class.
        slices.forEachSlice(of: height, work: work) { range, _ in
        let rows = UnsafeMutablePointer<Float>.allocate(capacity: 3 * (width + 2))
        defer { rows.deallocate() }
        let sxx = rows + 1, syy = rows + (width + 2) + 1, sxy = rows + 2 * (width + 2) + 1
        for y in range {
            let a0 = gx + max(y - 1, 0) * width, a1 = gx + y * width, a2 = gx + min(y + 1, height - 1) * width
            let b0 = gy + max(y - 1, 0) * width, b1 = gy + y * width, b2 = gy + min(y + 1, height - 1) * width
            var x = 0
            @inline(__always) func load(_ p: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
                UnsafeRawPointer(p + x).loadUnaligned(as: SIMD8<Float>.self)
            }
            while x + 8 <= width {
                let p0 = load(a0), p1 = load(a1), p2 = load(a2), q0 = load(b0), q1 = load(b1), q2 = load(b2)
                UnsafeMutableRawPointer(sxx + x).storeBytes(of: p0 * p0 + 2 * p1 * p1 + p2 * p2, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(syy + x).storeBytes(of: q0 * q0 + 2 * q1 * q1 + q2 * q2, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(sxy + x).storeBytes(of: p0 * q0 + 2 * p1 * q1 + p2 * q2, as: SIMD8<Float>.self)
                x += 8
            }
            while x < width {
                sxx[x] = a0[x] * a0[x] + 2 * a1[x] * a1[x] + a2[x] * a2[x]
                syy[x] = b0[x] * b0[x] + 2 * b1[x] * b1[x] + b2[x] * b2[x]
                sxy[x] = a0[x] * b0[x] + 2 * a1[x] * b1[x] + a2[x] * b2[x]
                x += 1
            }
            for row in [sxx, syy, sxy] {
                row[-1] = row[0]
                row[width] = row[width - 1]
            }
            let out = classes + y * width
            for x in 0..<width {
                let xx = (sxx[x - 1] + 2 * sxx[x] + sxx[x + 1]) / 16
                let yy = (syy[x - 1] + 2 * syy[x] + syy[x + 1]) / 16
                let xy = (sxy[x - 1] + 2 * sxy[x] + sxy[x + 1]) / 16
                out[x] = EdgeDirectedUpscaler.classOf(xx: xx, yy: yy, xy: xy)
            }
        }
        }
    }

    /// The class of a structure tensor: angle bin × 9 + strength bin × 3 + coherence bin.
    ///
    /// With `s = √λ`, the bins' tests become tests on the eigenvalues themselves (`s₁ < 2` is `λ₁ < 4`;
    /// coherence `(s₁ − s₂)/(s₁ + s₂) < ¼` is `3s₁ < 5s₂`, i.e. `9λ₁ < 25λ₂`), and the angle bin
    /// `⌊(φ + π)/(π/4)⌋` of the doubled angle `φ = atan2(2xy, xx − yy)` is the octant of `(yy − xx, −2xy)`:
    /// its quadrant, then which component is larger. No square root of λ, no arctangent, no division.
    @inline(__always)
    static func classOf(xx: Float, yy: Float, xy: Float) -> UInt8 {
        let halfTrace = (xx + yy) / 2
        let root = max(halfTrace * halfTrace - (xx * yy - xy * xy), 0).squareRoot()
        let l1 = halfTrace + root, l2 = max(halfTrace - root, 0)
        let u = yy - xx, v = -2 * xy
        let angle: Int
        if v >= 0 {
            angle = u >= 0 ? (u == 0 && v == 0 ? 0 : (v >= u ? 1 : 0)) : (-u >= v ? 3 : 2)
        } else {
            angle = u < 0 ? (-v >= -u ? 5 : 4) : (u >= -v ? 7 : 6)
        }
        let strength = l1 < 4 ? 0 : (l1 < 36 ? 1 : 2)
        let coherence = 9 * l1 < 25 * l2 ? 0 : (l1 < 9 * l2 ? 1 : 2)
        return UInt8((angle * 3 + strength) * 3 + coherence)
    }

    private func run<V: SIMD>(_ low: Plane, _ high: Plane, _: V.Type, slices: SliceRunner) where V.Scalar == Float {
        let width = low.width, height = low.height, scale = self.scale
        // The low plane as floats with two columns of edge samples on each side (in the gradient scratch,
        // which `classify` no longer needs).
        let paddedWidth = width + 4
        let samples = gradients
        precondition(paddedWidth * height <= 2 * capacity, "scratch too small for the padded plane")
        let work = 26 * scale * scale * width * height
        slices.forEachSlice(of: height, work: work) { range, _ in
            for y in range {
                let row = low.row(y), out = samples + y * paddedWidth + 2
                for x in -2..<(width + 2) { out[x] = Float(row[min(max(x, 0), width - 1)]) }
            }
        }
        filters.withUnsafeBufferPointer { table in
            let base = UnsafeRawPointer(table.baseAddress!)
            let stride = EdgeDirectedUpscaler.taps * MemoryLayout<V>.stride
            // Each slice writes the output rows of its own low rows.
            slices.forEachSlice(of: height, work: work) { range, _ in
            for y in range {
                let rows = (-2...2).map { samples + min(max(y + $0, 0), height - 1) * paddedWidth + 2 }
                let (r0, r1, r2, r3, r4) = (rows[0], rows[1], rows[2], rows[3], rows[4])
                let outputRows = (0..<scale).map { high.row(min(y * scale + $0, high.height - 1)) }
                let writableRows = min(scale, high.height - y * scale)
                for x in 0..<width {
                    let filter = base + Int(classes[y * width + x]) * stride
                    @inline(__always) func weight(_ tap: Int) -> V {
                        filter.load(fromByteOffset: tap * MemoryLayout<V>.stride, as: V.self)
                    }
                    var sum = weight(25)
                    @inline(__always) func add(_ row: UnsafeMutablePointer<Float>, _ first: Int) {
                        let p = row + x
                        sum = sum.addingProduct(V(repeating: p[-2]), weight(first))
                        sum = sum.addingProduct(V(repeating: p[-1]), weight(first + 1))
                        sum = sum.addingProduct(V(repeating: p[0]), weight(first + 2))
                        sum = sum.addingProduct(V(repeating: p[1]), weight(first + 3))
                        sum = sum.addingProduct(V(repeating: p[2]), weight(first + 4))
                    }
                    add(r0, 0)
                    add(r1, 5)
                    add(r2, 10)
                    add(r3, 15)
                    add(r4, 20)
                    for dy in 0..<writableRows {
                        let out = outputRows[dy]
                        for dx in 0..<scale where x * scale + dx < high.width {
                            // Clamped to 0…255, rounded half up.
                            let value = min(max(sum[dy * scale + dx], 0), 255)
                            out[x * scale + dx] = UInt8(truncatingIfNeeded: Int32(value + 0.5))
                        }
                    }
                }
            }
            }
        }
        // Samples past `scale ×` the low size (an odd chroma size) repeat the last computed row and column.
        let filledWidth = min(high.width, width * scale), filledHeight = min(high.height, height * scale)
        for y in 0..<high.height {
            let source = high.row(min(y, filledHeight - 1)), out = high.row(y)
            if y >= filledHeight { out.update(from: source, count: filledWidth) }
            for x in filledWidth..<max(filledWidth, high.width) { out[x] = out[filledWidth - 1] }
        }
    }
}
