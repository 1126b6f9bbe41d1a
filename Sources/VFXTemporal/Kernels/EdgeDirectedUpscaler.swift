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
    public func upscale(_ low: Plane, into high: Plane) {
        precondition(low.width * low.height <= capacity, "plane larger than the upscaler was made for")
        classify(low)
        if lanes == 4 { run(low, high, SIMD4<Float>.self) } else { run(low, high, SIMD16<Float>.self) }
    }

    /// The class of every low-resolution sample, as the training script computes it.
    func classify(_ low: Plane) {
        let width = low.width, height = low.height
        let gx = gradients, gy = gradients + capacity
        for y in 0..<height {
            let row = low.row(y), up = low.row(max(y - 1, 0)), down = low.row(min(y + 1, height - 1))
            for x in 0..<width {
                gx[y * width + x] = (Float(row[min(x + 1, width - 1)]) - Float(row[max(x - 1, 0)])) * 0.5
                gy[y * width + x] = (Float(down[x]) - Float(up[x])) * 0.5
            }
        }
        let kernel: [Float] = [1, 2, 1]
        let strengthEdges: (Float, Float) = (2, 6)
        for y in 0..<height {
            for x in 0..<width {
                var xx: Float = 0, yy: Float = 0, xy: Float = 0
                for dy in -1...1 {
                    let sy = min(max(y + dy, 0), height - 1)
                    for dx in -1...1 {
                        let sx = min(max(x + dx, 0), width - 1)
                        let w = kernel[dy + 1] * kernel[dx + 1] / 16
                        let a = gx[sy * width + sx], b = gy[sy * width + sx]
                        xx += w * a * a
                        yy += w * b * b
                        xy += w * a * b
                    }
                }
                let halfTrace = (xx + yy) / 2
                let root = max(halfTrace * halfTrace - (xx * yy - xy * xy), 0).squareRoot()
                let l1 = halfTrace + root, l2 = max(halfTrace - root, 0)
                let doubled = atan2f(2 * xy, xx - yy)
                let angle = Int(((doubled + .pi) / (2 * .pi) * 8).rounded(.down)) & 7
                let s1 = l1.squareRoot(), s2 = l2.squareRoot()
                let strength = s1 < strengthEdges.0 ? 0 : (s1 < strengthEdges.1 ? 1 : 2)
                let c = (s1 - s2) / (s1 + s2 + 1e-6)
                let coherence = c < 0.25 ? 0 : (c < 0.5 ? 1 : 2)
                classes[y * width + x] = UInt8((angle * 3 + strength) * 3 + coherence)
            }
        }
    }

    private func run<V: SIMD>(_ low: Plane, _ high: Plane, _: V.Type) where V.Scalar == Float {
        let width = low.width, height = low.height, scale = self.scale
        filters.withUnsafeBufferPointer { table in
            let base = UnsafeRawPointer(table.baseAddress!)
            let stride = EdgeDirectedUpscaler.taps * MemoryLayout<V>.stride
            for y in 0..<height {
                let rows = (-2...2).map { low.row(min(max(y + $0, 0), height - 1)) }
                for x in 0..<width {
                    let filter = base + Int(classes[y * width + x]) * stride
                    var sum = filter.loadUnaligned(fromByteOffset: 25 * MemoryLayout<V>.stride, as: V.self)
                    var tap = 0
                    if x >= 2 && x < width - 2 {
                        for row in rows {
                            for dx in -2...2 {
                                sum += V(repeating: Float(row[x + dx])) * filter.loadUnaligned(fromByteOffset: tap * MemoryLayout<V>.stride, as: V.self)
                                tap += 1
                            }
                        }
                    } else {
                        for row in rows {
                            for dx in -2...2 {
                                let sx = min(max(x + dx, 0), width - 1)
                                sum += V(repeating: Float(row[sx])) * filter.loadUnaligned(fromByteOffset: tap * MemoryLayout<V>.stride, as: V.self)
                                tap += 1
                            }
                        }
                    }
                    for dy in 0..<scale {
                        let oy = y * scale + dy
                        guard oy < high.height else { break }
                        let out = high.row(oy)
                        for dx in 0..<scale {
                            let ox = x * scale + dx
                            guard ox < high.width else { break }
                            out[ox] = UInt8(min(max(sum[dy * scale + dx], 0), 255).rounded())
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
