import Foundation
import VFXCore

/// Overlapped-block motion compensation of an in-between frame.
///
/// Each block of the field (`blockSize` samples, after `divisor`) is predicted over a window twice its
/// size centred on it, weighted by a raised cosine `sin²(π(i + ½)/2b)` in each direction, so neighbouring
/// windows overlap by half and their weights sum to one: block edges never show, and a pixel between two
/// motions gets a smooth mix of both predictions. A block's prediction at phase `φ` (0 = first frame,
/// 1 = second) with motion `v` (first → second) is `wA · first(p − φv) + wB · second(p + (1 − φ)v)`, both
/// sampled bilinearly; `(wA, wB)` comes per block from `sides` (default `(1 − φ, φ)`; `(1, 0)` takes a
/// pixel only from the first frame, where it is covered in the second).
///
/// ```swift
/// let compensation = OverlappedCompensation(width: 1280, height: 720)
/// compensation.predict(first: a, second: b, into: out, field: field, phase: 0.5, sides: sides)
/// ```
public final class OverlappedCompensation {
    private let sums: UnsafeMutablePointer<Float>
    private let weights: UnsafeMutablePointer<Float>
    private let capacity: Int
    /// How much a block's prediction counts where its two sides disagree: its window weight times
    /// `agreement / (agreement + (a − b)²)`, so at a motion boundary the vector that fits the pixel wins.
    public var agreement: Float = 64

    /// Scratch for planes of up to `width`×`height` samples.
    public init(width: Int, height: Int) {
        capacity = width * height
        sums = .allocate(capacity: capacity)
        weights = .allocate(capacity: capacity)
    }

    deinit {
        sums.deallocate()
        weights.deallocate()
    }

    /// Predicts `output` (same size as `first` and `second`). `sides` has one `(wA, wB)` per block of
    /// `field`, or is empty for the default weights. `divisor` 2 maps a luma field onto 4:2:0 chroma.
    public func predict(first: Plane, second: Plane, into output: Plane, field: MotionField, phase: Float,
                        sides: [SIMD2<Float>] = [], divisor: Int = 1) {
        let width = output.width, height = output.height
        precondition(width * height <= capacity, "plane larger than the compensation scratch")
        let block = field.blockSize / divisor
        let window = 2 * block
        sums.update(repeating: 0, count: width * height)
        weights.update(repeating: 0, count: width * height)
        let profile = (0..<window).map { i -> Float in
            let s = sinf(Float.pi * (Float(i) + 0.5) / Float(window))
            return s * s
        }
        let columns = (width + block - 1) / block, rows = (height + block - 1) / block
        for row in 0..<rows {
            let oy = max(0, min(row * block, height - block))
            for column in 0..<columns {
                let ox = max(0, min(column * block, width - block))
                let fc = min(column, field.columns - 1), fr = min(row, field.rows - 1)
                let v = field[fc, fr]
                let vx = Float(v.x) / Float(divisor), vy = Float(v.y) / Float(divisor)
                let side = sides.isEmpty ? SIMD2<Float>(1 - phase, phase) : sides[fr * field.columns + fc]
                let ax = -phase * vx, ay = -phase * vy, bx = (1 - phase) * vx, by = (1 - phase) * vy
                let wx = ox - block / 2, wy = oy - block / 2
                for j in 0..<window {
                    let y = wy + j
                    guard y >= 0 && y < height else { continue }
                    let rowWeight = profile[j]
                    for i in 0..<window {
                        let x = wx + i
                        guard x >= 0 && x < width else { continue }
                        let a = sample(first, Float(x) + ax, Float(y) + ay)
                        let b = sample(second, Float(x) + bx, Float(y) + by)
                        let w = rowWeight * profile[i] / (agreement + (a - b) * (a - b))
                        sums[y * width + x] += w * (side.x * a + side.y * b)
                        weights[y * width + x] += w
                    }
                }
            }
        }
        for y in 0..<height {
            let o = output.row(y)
            for x in 0..<width {
                let value = sums[y * width + x] / max(weights[y * width + x], 1e-6)
                o[x] = UInt8(min(max(value.rounded(), 0), 255))
            }
        }
    }

    /// Bilinear sample at (x, y), edges clamped.
    @inline(__always)
    private func sample(_ plane: Plane, _ x: Float, _ y: Float) -> Float {
        let fx = x.rounded(.down), fy = y.rounded(.down)
        let tx = x - fx, ty = y - fy
        let x0 = max(0, min(plane.width - 1, Int(fx))), x1 = max(0, min(plane.width - 1, Int(fx) + 1))
        let y0 = max(0, min(plane.height - 1, Int(fy))), y1 = max(0, min(plane.height - 1, Int(fy) + 1))
        let r0 = plane.row(y0), r1 = plane.row(y1)
        let top = Float(r0[x0]) + tx * (Float(r0[x1]) - Float(r0[x0]))
        let bottom = Float(r1[x0]) + tx * (Float(r1[x1]) - Float(r1[x0]))
        return top + ty * (bottom - top)
    }
}
