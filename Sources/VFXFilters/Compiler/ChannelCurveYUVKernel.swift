import VFXCore

/// A lone per-channel transform (`gamma`, `tone-curve`, `levels`, `color-polynomial`…) evaluated on each pixel of
/// an I420/NV12 frame, 8 blocks (32 pixels) at a time, with no 3D table.
///
/// Per pixel: R'G'B' from its luma and its block's chroma, clamped to 0…1; each channel read from its own table of
/// `tableSize` entries sampled from the transform at 0, 1/(tableSize − 1), … 1, at the entry nearest to the value
/// (off by at most half an entry's step times the curve's slope: 0.03 codes × slope for 4096 entries); then the
/// output luma. Each block's output chroma comes from the mean of its four output R'G'B' values, as converting the
/// block to RGB, filtering and converting back with box-filtered 4:2:0 chroma gives (as `AffineYUVKernel` does for
/// a lone matrix).
///
/// Only smooth curves are taken (`init` returns nil when a table jumps by more than `maximumJump` between
/// neighbouring entries: posterize, threshold, solarize keep the exact 3D table).
///
/// ```swift
/// let kernel = ChannelCurveYUVKernel(gamma, coding: YUVCoding(.bt709), chromaInterleaved: false)
/// kernel?.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class ChannelCurveYUVKernel: ColorKernel {
    /// Entries per channel of the tables.
    static let tableSize = 4096
    /// The largest step between neighbouring table entries (in 0…1) of a curve this kernel takes: 4 codes.
    static let maximumJump: Float = 4 / 255

    /// Red, green and blue tables, `tableSize` entries each, one after the other.
    private let table: UnsafeMutablePointer<Float>
    /// The identity matrix's kernel: it walks the frame, and the tables go between its R'G'B' and its conversion back.
    let toRGB: AffineYUVKernel

    init?(_ transform: ColorTransform, coding: YUVCoding, chromaInterleaved: Bool) {
        guard case .perChannel = transform.kind else { return nil }
        let n = ChannelCurveYUVKernel.tableSize
        let table = UnsafeMutablePointer<Float>.allocate(capacity: 3 * n)
        var smooth = true
        for i in 0..<n {
            let value = transform.apply(SIMD3(repeating: Float(i) / Float(n - 1))).clampedToUnit
            table[i] = value.x
            table[n + i] = value.y
            table[2 * n + i] = value.z
            if i > 0 {
                let jump = SIMD3(table[i] - table[i - 1], table[n + i] - table[n + i - 1], table[2 * n + i] - table[2 * n + i - 1])
                smooth = smooth && jump.x.magnitude <= Self.maximumJump && jump.y.magnitude <= Self.maximumJump
                    && jump.z.magnitude <= Self.maximumJump
            }
        }
        guard smooth else {
            table.deallocate()
            return nil
        }
        self.table = table
        toRGB = AffineYUVKernel(matrix: .identity, coding: coding, chromaInterleaved: chromaInterleaved)
    }

    deinit { table.deallocate() }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        toRGB.apply(to: planes, width: width, height: height, slices: slices, then: CurveTables(red: table))
    }
}

/// Each channel through its own table (red, green and blue, `tableSize` entries each, one after the other).
private struct CurveTables: PixelMap {
    let red: UnsafeMutablePointer<Float>

    @inline(__always)
    func map(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>) -> (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>) {
        let n = ChannelCurveYUVKernel.tableSize
        return (Self.lookup(red, r), Self.lookup(red + n, g), Self.lookup(red + 2 * n, b))
    }

    /// The table entry nearest to each lane of `value` (in 0…1).
    @inline(__always)
    private static func lookup(_ table: UnsafeMutablePointer<Float>, _ value: SIMD8<Float>) -> SIMD8<Float> {
        let position = value * Float(ChannelCurveYUVKernel.tableSize - 1) + 0.5
        var result = SIMD8<Float>()
        for lane in 0..<8 { result[lane] = table[Int(Int32(position[lane]))] }
        return result
    }
}
