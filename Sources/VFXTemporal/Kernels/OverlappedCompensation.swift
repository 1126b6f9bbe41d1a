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
        precondition(window % 8 == 0, "blocks of a multiple of 4 samples")
        let profile = (0..<window).map { i -> Float in
            let s = sinf(Float.pi * (Float(i) + 0.5) / Float(window))
            return s * s
        }
        let chunks = stride(from: 0, to: window, by: 8).map { SIMD8<Float>(profile[$0..<($0 + 8)]) }
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
                let a = BilinearTap(dx: ax, dy: ay), b = BilinearTap(dx: bx, dy: by)
                // The vector path needs the whole window and both sources' 2×2 taps inside the planes.
                let inside = wx >= 0 && wy >= 0 && wx + window <= width && wy + window <= height
                    && a.covers(wx, wy, window, width, height) && b.covers(wx, wy, window, width, height)
                for j in 0..<window {
                    let y = wy + j
                    guard y >= 0 && y < height else { continue }
                    let rowWeight = profile[j]
                    if inside {
                        let a0 = first.row(y + a.y) + a.x, a1 = a0 + first.bytesPerRow
                        let b0 = second.row(y + b.y) + b.x, b1 = b0 + second.bytesPerRow
                        var i = 0
                        while i < window {
                            let x = wx + i
                            let pa = a.sample(a0 + x, a1 + x), pb = b.sample(b0 + x, b1 + x)
                            let w = rowWeight * chunks[i >> 3]
                            let at = y * width + x
                            let sum = UnsafeMutableRawPointer(sums + at), total = UnsafeMutableRawPointer(weights + at)
                            sum.storeBytes(of: sum.loadUnaligned(as: SIMD8<Float>.self) + w * (side.x * pa + side.y * pb),
                                           as: SIMD8<Float>.self)
                            total.storeBytes(of: total.loadUnaligned(as: SIMD8<Float>.self) + w, as: SIMD8<Float>.self)
                            i += 8
                        }
                        continue
                    }
                    for i in 0..<window {
                        let x = wx + i
                        guard x >= 0 && x < width else { continue }
                        let w = rowWeight * profile[i]
                        let pa = sample(first, Float(x) + ax, Float(y) + ay)
                        let pb = sample(second, Float(x) + bx, Float(y) + by)
                        sums[y * width + x] += w * (side.x * pa + side.y * pb)
                        weights[y * width + x] += w
                    }
                }
            }
        }
        for y in 0..<height {
            let o = output.row(y), s = sums + y * width, w = weights + y * width
            var x = 0
            while x + 8 <= width {
                let total = UnsafeRawPointer(w + x).loadUnaligned(as: SIMD8<Float>.self)
                let value = UnsafeRawPointer(s + x).loadUnaligned(as: SIMD8<Float>.self) / total.clamped(1e-6, .infinity)
                (o + x).store(roundedBytes(value.clamped(0, 255)))
                x += 8
            }
            while x < width {
                o[x] = UInt8(min(max((s[x] / max(w[x], 1e-6)).rounded(), 0), 255))
                x += 1
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

/// A constant sub-sample displacement: the whole-sample offset and the bilinear weights of its 2×2 taps.
struct BilinearTap {
    let x: Int
    let y: Int
    let fx: Float
    let fy: Float

    init(dx: Float, dy: Float) {
        let ix = dx.rounded(.down), iy = dy.rounded(.down)
        x = Int(ix)
        y = Int(iy)
        fx = dx - ix
        fy = dy - iy
    }

    /// Whether the 2×2 taps of a `size`-sample square window at (wx, wy) all lie inside the plane.
    func covers(_ wx: Int, _ wy: Int, _ size: Int, _ width: Int, _ height: Int) -> Bool {
        wx + x >= 0 && wy + y >= 0 && wx + x + size + 1 <= width && wy + y + size + 1 <= height
    }

    /// 8 bilinear samples from rows `top` and `bottom` (at the tap offset already).
    @inline(__always)
    func sample(_ top: UnsafeMutablePointer<UInt8>, _ bottom: UnsafeMutablePointer<UInt8>) -> SIMD8<Float> {
        let t0 = SIMD8<Float>(bytesAt: top), t1 = SIMD8<Float>(bytesAt: top + 1)
        let b0 = SIMD8<Float>(bytesAt: bottom), b1 = SIMD8<Float>(bytesAt: bottom + 1)
        let upper = t0 + fx * (t1 - t0), lower = b0 + fx * (b1 - b0)
        return upper + fy * (lower - upper)
    }
}
