/// Byte ↔ float and byte ↔ 16-bit vector conversions and clamps written lane by lane, which the optimizer
/// turns into a few vector instructions (the generic SIMD conversion initializers, `rounded` and
/// `pointwiseMin` on float vectors stay calls that run lane by lane in the package's release build).
///
/// ```swift
/// let v = SIMD8<Float>(bytesAt: row + x)
/// (row + x).storeBytes(roundedBytes(v * 0.5))
/// ```
extension SIMD8 where Scalar == Float {
    /// 8 bytes at `pointer` as floats.
    @inline(__always) init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init()
        for lane in 0..<8 { self[lane] = Float(pointer[lane]) }
    }

    /// Each lane clamped to `low…high` (as compare-and-blend).
    @inline(__always) func clamped(_ low: Float, _ high: Float) -> SIMD8<Float> {
        let a = replacing(with: low, where: self .< low)
        return a.replacing(with: high, where: a .> high)
    }
}

extension SIMD16 where Scalar == Float {
    @inline(__always) init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init()
        for lane in 0..<16 { self[lane] = Float(pointer[lane]) }
    }

    @inline(__always) func clamped(_ low: Float, _ high: Float) -> SIMD16<Float> {
        let a = replacing(with: low, where: self .< low)
        return a.replacing(with: high, where: a .> high)
    }
}

/// Values in 0…255 rounded to the nearest byte (adding 2²³ leaves the integer in the low mantissa bits).
/// Values outside are clamped first.
@inline(__always) func roundedBytes(_ values: SIMD8<Float>) -> SIMD8<UInt8> {
    let bits = unsafeBitCast(values.clamped(0, 255) + 8_388_608, to: SIMD8<UInt32>.self)
    var bytes = SIMD8<UInt8>()
    for lane in 0..<8 { bytes[lane] = UInt8(truncatingIfNeeded: bits[lane]) }
    return bytes
}

@inline(__always) func roundedBytes(_ values: SIMD16<Float>) -> SIMD16<UInt8> {
    let bits = unsafeBitCast(values.clamped(0, 255) + 8_388_608, to: SIMD16<UInt32>.self)
    var bytes = SIMD16<UInt8>()
    for lane in 0..<16 { bytes[lane] = UInt8(truncatingIfNeeded: bits[lane]) }
    return bytes
}

extension UnsafeMutablePointer where Pointee == UInt8 {
    @inline(__always) func store(_ bytes: SIMD8<UInt8>) { UnsafeMutableRawPointer(self).storeBytes(of: bytes, as: SIMD8<UInt8>.self) }
    @inline(__always) func store(_ bytes: SIMD16<UInt8>) { UnsafeMutableRawPointer(self).storeBytes(of: bytes, as: SIMD16<UInt8>.self) }
}

/// Bytes widened to 16 bits.
@inline(__always) func widened(_ v: SIMD8<UInt8>) -> SIMD8<UInt16> {
    var r = SIMD8<UInt16>()
    for lane in 0..<8 { r[lane] = UInt16(v[lane]) }
    return r
}

@inline(__always) func widened(_ v: SIMD16<UInt8>) -> SIMD16<UInt16> {
    var r = SIMD16<UInt16>()
    for lane in 0..<16 { r[lane] = UInt16(v[lane]) }
    return r
}

/// Bytes widened to 32-bit integers.
@inline(__always) func widenedInt32(_ v: SIMD8<UInt8>) -> SIMD8<Int32> {
    var r = SIMD8<Int32>()
    for lane in 0..<8 { r[lane] = Int32(v[lane]) }
    return r
}

/// 16-bit values (at most 255) narrowed to bytes.
@inline(__always) func narrowed(_ v: SIMD8<UInt16>) -> SIMD8<UInt8> {
    var r = SIMD8<UInt8>()
    for lane in 0..<8 { r[lane] = UInt8(truncatingIfNeeded: v[lane]) }
    return r
}

/// |a − b| of bytes, lane by lane (as compare-and-blend).
@inline(__always) func absoluteDifference(_ a: SIMD8<UInt8>, _ b: SIMD8<UInt8>) -> SIMD8<UInt8> {
    (a &- b).replacing(with: b &- a, where: a .< b)
}

@inline(__always) func absoluteDifference(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> {
    (a &- b).replacing(with: b &- a, where: a .< b)
}
