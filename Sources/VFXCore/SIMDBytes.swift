/// VideoFX's SIMD helpers, used by every kernel module: bytes ↔ float vectors, float vector loads and stores,
/// rounding and clamping. (The generic SIMD conversion initializers and `pointwiseMin`/`Max` run lane by
/// lane through library calls; these compile to a few vector instructions.)
///
/// ```swift
/// let y = SIMD16<Float>(bytesAt: row + x)             // 16 bytes → 16 floats
/// storeBytes(y * 0.5, to: row + x, count: 16)          // clamped to 0…255, rounded to nearest
/// let v = SIMD16<Float>(loadingFrom: floats + i)      // 16 floats, any alignment
/// v.store(to: output + i, count: remaining)
/// ```
extension SIMD16 where Scalar == Float {
    /// 16 bytes at `pointer` as floats.
    @inlinable @inline(__always) public init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init()
        for lane in 0..<16 { self[lane] = Float(pointer[lane]) }
    }

    /// Each lane clamped to 0…1 (as compare-and-blend).
    @inlinable @inline(__always) public var clampedToUnit: SIMD16<Float> {
        let low = replacing(with: 0, where: self .< 0)
        return low.replacing(with: 1, where: low .> 1)
    }
}

extension SIMD8 where Scalar == Float {
    /// 8 bytes at `pointer` as floats.
    @inlinable @inline(__always) public init(bytesAt pointer: UnsafePointer<UInt8>) {
        self.init()
        for lane in 0..<8 { self[lane] = Float(pointer[lane]) }
    }

    /// Each lane clamped to 0…1 (as compare-and-blend).
    @inlinable @inline(__always) public var clampedToUnit: SIMD8<Float> {
        let low = replacing(with: 0, where: self .< 0)
        return low.replacing(with: 1, where: low .> 1)
    }
}

extension SIMD where Scalar == Float {
    /// A vector of floats at `pointer` (any alignment).
    @_transparent
    public init(loadingFrom pointer: UnsafePointer<Float>) {
        self = UnsafeRawPointer(pointer).loadUnaligned(as: Self.self)
    }

    /// Stores every lane at `pointer` (any alignment).
    @_transparent
    public func store(to pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: self, as: Self.self)
    }

    /// Stores the first `count` lanes only (for the last, partial block of a row).
    @_transparent
    public func store(to pointer: UnsafeMutablePointer<Float>, count: Int) {
        if count >= scalarCount {
            store(to: pointer)
        } else {
            for lane in 0..<count { pointer[lane] = self[lane] }
        }
    }
}

/// Lane-wise minimum, as one compare and one blend (the standard library's generic `pointwiseMin` runs lane by
/// lane).
///
/// Written as `replacing(with:where:)`, not as a loop over the lanes: these helpers are used from other modules,
/// which receive their bodies as SIL already optimized by VFXCore, and a lane loop arrives there as sixteen
/// scalar compare-and-selects that the client no longer turns into vector instructions (a loop written in the
/// client itself is vectorized). That cost the Gaussian blur a third of its speed; the compare-and-blend form
/// stays a vector operation wherever it is inlined.
@inlinable @inline(__always)
public func lanewiseMin(_ a: SIMD16<Float>, _ b: SIMD16<Float>) -> SIMD16<Float> {
    a.replacing(with: b, where: b .< a)
}

/// Lane-wise maximum (see `lanewiseMin`).
@inlinable @inline(__always)
public func lanewiseMax(_ a: SIMD16<Float>, _ b: SIMD16<Float>) -> SIMD16<Float> {
    a.replacing(with: b, where: b .> a)
}

/// Rounds values already in 0…255 to the nearest byte: adding 2²³ leaves the integer in the low mantissa bits.
/// The lanes are narrowed one by one, which the optimizer turns into packs or shuffles (the standard library's
/// `init(truncatingIfNeeded:)` between vector types stays a call when the caller is in another module).
@inlinable @inline(__always) public func roundedBytes(_ values: SIMD16<Float>) -> SIMD16<UInt8> {
    let bits = unsafeBitCast(values + 8_388_608, to: SIMD16<UInt32>.self)
    var result = SIMD16<UInt8>()
    for lane in 0..<16 { result[lane] = UInt8(truncatingIfNeeded: bits[lane]) }
    return result
}

@inlinable @inline(__always) public func roundedBytes(_ values: SIMD8<Float>) -> SIMD8<UInt8> {
    let bits = unsafeBitCast(values + 8_388_608, to: SIMD8<UInt32>.self)
    var result = SIMD8<UInt8>()
    for lane in 0..<8 { result[lane] = UInt8(truncatingIfNeeded: bits[lane]) }
    return result
}

/// Clamps `values` to 0…255, rounds them to bytes and stores the first `count` at `pointer`.
@inlinable @inline(__always)
public func storeBytes(_ values: SIMD16<Float>, to pointer: UnsafeMutablePointer<UInt8>, count: Int) {
    let bytes = roundedBytes(values.clamped(0, 255))
    if count == 16 {
        UnsafeMutableRawPointer(pointer).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
    } else {
        for lane in 0..<count { pointer[lane] = bytes[lane] }
    }
}

/// Sixteen bytes of a row as floats (the caller guarantees that sixteen bytes are readable).
@inlinable @inline(__always)
public func loadBytes(_ pointer: UnsafePointer<UInt8>) -> SIMD16<Float> {
    SIMD16<Float>(bytesAt: pointer)
}

/// Sixteen bytes of a row as floats; near the row's end only `count` are read and the rest are zero.
@inlinable @inline(__always)
public func loadBytes(_ pointer: UnsafePointer<UInt8>, count: Int) -> SIMD16<Float> {
    if count == 16 { return SIMD16<Float>(bytesAt: pointer) }
    var values = SIMD16<Float>()
    for lane in 0..<count { values[lane] = Float(pointer[lane]) }
    return values
}

extension SIMD8 where Scalar == Float {
    /// Each lane clamped to `lower…upper` (as compare-and-blend; also the neural kernels' fused activations).
    @_transparent public func clamped(_ lower: Float, _ upper: Float) -> SIMD8<Float> {
        replacing(with: lower, where: self .< lower).replacing(with: upper, where: self .> upper)
    }
}

extension SIMD16 where Scalar == Float {
    /// Each lane clamped to `lower…upper` (as compare-and-blend; also the neural kernels' fused activations).
    @_transparent public func clamped(_ lower: Float, _ upper: Float) -> SIMD16<Float> {
        replacing(with: lower, where: self .< lower).replacing(with: upper, where: self .> upper)
    }
}

extension UnsafeMutablePointer where Pointee == UInt8 {
    /// Stores 8 bytes here (any alignment).
    @inlinable @inline(__always) public func store(_ bytes: SIMD8<UInt8>) {
        UnsafeMutableRawPointer(self).storeBytes(of: bytes, as: SIMD8<UInt8>.self)
    }

    /// Stores 16 bytes here (any alignment).
    @inlinable @inline(__always) public func store(_ bytes: SIMD16<UInt8>) {
        UnsafeMutableRawPointer(self).storeBytes(of: bytes, as: SIMD16<UInt8>.self)
    }
}

/// Bytes widened to 16 bits.
@inlinable @inline(__always) public func widened(_ v: SIMD8<UInt8>) -> SIMD8<UInt16> {
    var r = SIMD8<UInt16>()
    for lane in 0..<8 { r[lane] = UInt16(v[lane]) }
    return r
}

@inlinable @inline(__always) public func widened(_ v: SIMD16<UInt8>) -> SIMD16<UInt16> {
    var r = SIMD16<UInt16>()
    for lane in 0..<16 { r[lane] = UInt16(v[lane]) }
    return r
}

/// Bytes widened to 32-bit integers.
@inlinable @inline(__always) public func widenedInt32(_ v: SIMD8<UInt8>) -> SIMD8<Int32> {
    var r = SIMD8<Int32>()
    for lane in 0..<8 { r[lane] = Int32(v[lane]) }
    return r
}

/// 16-bit values (at most 255) narrowed to bytes.
@inlinable @inline(__always) public func narrowed(_ v: SIMD8<UInt16>) -> SIMD8<UInt8> {
    var r = SIMD8<UInt8>()
    for lane in 0..<8 { r[lane] = UInt8(truncatingIfNeeded: v[lane]) }
    return r
}

/// |a − b| of bytes, lane by lane (as compare-and-blend).
@inlinable @inline(__always) public func absoluteDifference(_ a: SIMD8<UInt8>, _ b: SIMD8<UInt8>) -> SIMD8<UInt8> {
    (a &- b).replacing(with: b &- a, where: a .< b)
}

@inlinable @inline(__always) public func absoluteDifference(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> {
    (a &- b).replacing(with: b &- a, where: a .< b)
}
