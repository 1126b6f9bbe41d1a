/// Byte ↔ float vector conversions and clamps that compile to a few vector instructions (the generic SIMD
/// conversion initializers, `rounded` and `pointwiseMin` on float vectors run lane by lane).
///
/// ```swift
/// let v = SIMD8<Float>(bytesAt: row + x)
/// (row + x).storeBytes(roundedBytes(v * 0.5))
/// ```
extension SIMD8 where Scalar == Float {
    /// 8 bytes at `pointer` as floats.
    @inline(__always) init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init(SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<UInt8>.self)))
    }

    /// Each lane clamped to `low…high` (as compare-and-blend).
    @inline(__always) func clamped(_ low: Float, _ high: Float) -> SIMD8<Float> {
        let a = replacing(with: low, where: self .< low)
        return a.replacing(with: high, where: a .> high)
    }
}

extension SIMD16 where Scalar == Float {
    @inline(__always) init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init(SIMD16<Int32>(truncatingIfNeeded: UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<UInt8>.self)))
    }

    @inline(__always) func clamped(_ low: Float, _ high: Float) -> SIMD16<Float> {
        let a = replacing(with: low, where: self .< low)
        return a.replacing(with: high, where: a .> high)
    }
}

/// Values in 0…255 rounded to the nearest byte (adding 2²³ leaves the integer in the low mantissa bits).
/// Values outside are clamped first.
@inline(__always) func roundedBytes(_ values: SIMD8<Float>) -> SIMD8<UInt8> {
    SIMD8<UInt8>(truncatingIfNeeded: unsafeBitCast(values.clamped(0, 255) + 8_388_608, to: SIMD8<UInt32>.self))
}

@inline(__always) func roundedBytes(_ values: SIMD16<Float>) -> SIMD16<UInt8> {
    SIMD16<UInt8>(truncatingIfNeeded: unsafeBitCast(values.clamped(0, 255) + 8_388_608, to: SIMD16<UInt32>.self))
}

extension UnsafeMutablePointer where Pointee == UInt8 {
    @inline(__always) func store(_ bytes: SIMD8<UInt8>) { UnsafeMutableRawPointer(self).storeBytes(of: bytes, as: SIMD8<UInt8>.self) }
    @inline(__always) func store(_ bytes: SIMD16<UInt8>) { UnsafeMutableRawPointer(self).storeBytes(of: bytes, as: SIMD16<UInt8>.self) }
}
