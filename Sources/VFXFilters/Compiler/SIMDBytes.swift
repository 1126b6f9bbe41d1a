/// Fast conversions between bytes and float vectors. (The generic SIMD conversion initializers become
/// lane-by-lane library calls for float → integer; these compile to a few vector instructions.)
///
/// ```swift
/// let y = SIMD16<Float>(bytesAt: row + x)       // 16 bytes → 16 floats
/// row.storeRounded(y * 0.5, at: x)              // 16 floats in 0…255 → 16 bytes, rounded to nearest
/// ```
extension SIMD16 where Scalar == Float {
    /// 16 bytes at `pointer` as floats.
    @inline(__always) init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init()
        for lane in 0..<16 { self[lane] = Float(pointer[lane]) }
    }
}


extension SIMD8 where Scalar == Float {
    /// 8 bytes at `pointer` as floats.
    @inline(__always) init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init()
        for lane in 0..<8 { self[lane] = Float(pointer[lane]) }
    }
}

/// Rounds values in 0…255 to the nearest byte: adding 2²³ leaves the integer in the low mantissa bits.
@inline(__always) func roundedBytes(_ values: SIMD16<Float>) -> SIMD16<UInt8> {
    SIMD16<UInt8>(truncatingIfNeeded: unsafeBitCast(values + 8_388_608, to: SIMD16<UInt32>.self))
}

@inline(__always) func roundedBytes(_ values: SIMD8<Float>) -> SIMD8<UInt8> {
    SIMD8<UInt8>(truncatingIfNeeded: unsafeBitCast(values + 8_388_608, to: SIMD8<UInt32>.self))
}

extension SIMD16 where Scalar == Float {
    /// Each lane clamped to 0…1 (as compare-and-blend; the generic `pointwiseMin` runs lane by lane).
    @inline(__always) var clampedToUnit: SIMD16<Float> {
        let low = replacing(with: 0, where: self .< 0)
        return low.replacing(with: 1, where: low .> 1)
    }
}

extension SIMD8 where Scalar == Float {
    /// Each lane clamped to 0…1 (as compare-and-blend).
    @inline(__always) var clampedToUnit: SIMD8<Float> {
        let low = replacing(with: 0, where: self .< 0)
        return low.replacing(with: 1, where: low .> 1)
    }
}
