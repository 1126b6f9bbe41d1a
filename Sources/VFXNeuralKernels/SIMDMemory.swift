import VFXCore

/// The float vector operations the kernels use, implemented on the concrete SIMD types (all helpers
/// here are `@_transparent`: the optimizer otherwise leaves some of them as calls inside the large
/// unrolled tiles, which costs a round trip of the vector through memory per call). Generic code
/// over `SIMD` would pick the standard library's generic lane-by-lane versions of comparisons, min/max
/// and `addingProduct`; through this protocol a specialized kernel reaches the concrete vector
/// instructions instead.
///
/// ```swift
/// func relu<V: FloatVector>(_ v: V) -> V { v.clamped(0, .infinity) }
/// ```
public protocol FloatVector: SIMD where Scalar == Float {
    /// Clamps every lane to `lower...upper` (a fused activation: ReLU is 0...inf, ReLU6 is 0...6).
    func clamped(_ lower: Float, _ upper: Float) -> Self
    /// The lane-wise maximum.
    func lanewiseMaximum(_ other: Self) -> Self
    /// `self + a·b` with one rounding (fused multiply-add).
    func multiplyAdd(_ a: Self, _ b: Self) -> Self
}

extension SIMD16: FloatVector where Scalar == Float {
    // `clamped` is VFXCore's (SIMDBytes.swift).
    @_transparent
    public func lanewiseMaximum(_ other: Self) -> Self { replacing(with: other, where: other .> self) }

    @_transparent
    public func multiplyAdd(_ a: Self, _ b: Self) -> Self { addingProduct(a, b) }
}

extension SIMD8: FloatVector where Scalar == Float {
    // `clamped` is VFXCore's (SIMDBytes.swift).
    @_transparent
    public func lanewiseMaximum(_ other: Self) -> Self { replacing(with: other, where: other .> self) }

    @_transparent
    public func multiplyAdd(_ a: Self, _ b: Self) -> Self { addingProduct(a, b) }
}

extension SIMD4: FloatVector where Scalar == Float {
    @_transparent
    public func clamped(_ lower: Float, _ upper: Float) -> Self {
        replacing(with: lower, where: self .< lower).replacing(with: upper, where: self .> upper)
    }

    @_transparent
    public func lanewiseMaximum(_ other: Self) -> Self { replacing(with: other, where: other .> self) }

    @_transparent
    public func multiplyAdd(_ a: Self, _ b: Self) -> Self { addingProduct(a, b) }
}
