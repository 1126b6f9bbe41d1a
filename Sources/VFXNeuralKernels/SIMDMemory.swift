/// Unaligned SIMD loads and stores on float pointers, the building blocks of every kernel.
///
/// ```swift
/// let v = SIMD16<Float>(loadingFrom: pointer)
/// v.store(to: output)
/// ```
extension SIMD where Scalar == Float {
    @inlinable @inline(__always)
    public init(loadingFrom pointer: UnsafePointer<Float>) {
        self = UnsafeRawPointer(pointer).loadUnaligned(as: Self.self)
    }

    @inlinable @inline(__always)
    public func store(to pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: self, as: Self.self)
    }

    /// Stores the first `count` lanes only (for the last, partial block of a row).
    @inlinable @inline(__always)
    public func store(to pointer: UnsafeMutablePointer<Float>, count: Int) {
        if count >= scalarCount {
            store(to: pointer)
        } else {
            for lane in 0..<count { pointer[lane] = self[lane] }
        }
    }

    /// Clamps every lane to `lower...upper` (a fused activation: ReLU is 0...inf, ReLU6 is 0...6).
    @inlinable @inline(__always)
    public func clamped(_ lower: Float, _ upper: Float) -> Self {
        pointwiseMin(pointwiseMax(self, Self(repeating: lower)), Self(repeating: upper))
    }
}
