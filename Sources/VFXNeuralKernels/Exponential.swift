import VFXCore
/// e^x for 16 lanes at once (for LOGISTIC), to about 3e-7 relative error for |x| ≤ 86; inputs are
/// clamped to [-87, 88], the range where the result is a normal float.
///
/// x = n·ln 2 + r with n an integer and |r| ≤ ln 2 / 2; e^r comes from its Taylor polynomial to degree 6
/// (truncation error below 2e-7), 2^n from writing n + 127 into the float's exponent bits. n is rounded by
/// adding 1.5·2²³, which leaves it in the low mantissa bits.
///
/// ```swift
/// let sigmoid = 1 / (1 + exponential(-x))
/// ```
@_transparent
public func exponential(_ value: SIMD16<Float>) -> SIMD16<Float> {
    let x = value.clamped(-87, 88)
    let shifter = SIMD16<Float>(repeating: 12_582_912)
    let t = shifter.addingProduct(x, SIMD16(repeating: 1.442_695_04))
    let n = t - shifter
    // ln 2 in two parts, the first exact in few bits, so n·ln2high has no rounding error.
    var r = x.addingProduct(n, SIMD16(repeating: -0.693_145_751_953_125))
    r = r.addingProduct(n, SIMD16(repeating: -1.428_606_765_330_187e-6))
    var p = SIMD16<Float>(repeating: 1.0 / 720)
    p = SIMD16(repeating: 1.0 / 120).addingProduct(p, r)
    p = SIMD16(repeating: 1.0 / 24).addingProduct(p, r)
    p = SIMD16(repeating: 1.0 / 6).addingProduct(p, r)
    p = SIMD16(repeating: 0.5).addingProduct(p, r)
    p = SIMD16(repeating: 1).addingProduct(p, r)
    p = SIMD16(repeating: 1).addingProduct(p, r)
    let integer = unsafeBitCast(t, to: SIMD16<Int32>.self) &- unsafeBitCast(shifter, to: SIMD16<Int32>.self)
    return p * unsafeBitCast((integer &+ 127) &<< 23, to: SIMD16<Float>.self)
}
