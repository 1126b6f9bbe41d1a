/// Luma weights (Kr, Kg, Kb) of a YUV matrix: `Y' = Kr·R' + Kg·G' + Kb·B'` on gamma-encoded values.
public struct LumaWeights: Sendable, Hashable {
    public let red: Float
    public let green: Float
    public let blue: Float

    public init(_ matrix: ColorDescription.Matrix) {
        let (kr, kb) = matrix.weights
        red = kr
        blue = kb
        green = 1 - kr - kb
    }

    /// The luma of a gamma-encoded RGB value.
    @inlinable public func luma(_ rgb: SIMD3<Float>) -> Float { red * rgb.x + green * rgb.y + blue * rgb.z }

    public var vector: SIMD3<Float> { SIMD3(red, green, blue) }
}

/// 8-bit Y'CbCr codes ↔ gamma-encoded R'G'B' in 0…1 for one matrix and range (the formulas of BT.601/BT.709:
/// `R = Y + 2(1−Kr)·Pr`, `B = Y + 2(1−Kb)·Pb`, `G = (Y − Kr·R − Kb·B)/Kg`): VideoFX's one definition of the YUV
/// coding. The filter compiler evaluates it in floats; frame conversions take their fixed-point
/// coefficients from it.
///
/// ```swift
/// let coding = YUVCoding(.bt709)
/// let rgb = coding.rgb(y: 235, u: 128, v: 128)   // (1, 1, 1)
/// ```
public struct YUVCoding: Sendable, Hashable {
    public let weights: LumaWeights
    /// Luma code = `lumaOffset + lumaScale · Y'`; chroma code = 128 + `chromaScale` · Pb (or Pr).
    public let lumaScale: Float
    public let lumaOffset: Float
    public let chromaScale: Float
    /// R = Y' + `redFromPr`·Pr, B = Y' + `blueFromPb`·Pb.
    public let redFromPr: Float
    public let blueFromPb: Float

    public init(_ color: ColorDescription) {
        weights = LumaWeights(color.matrix)
        switch color.range {
        case .limited: (lumaScale, lumaOffset, chromaScale) = (219, 16, 224)
        case .full: (lumaScale, lumaOffset, chromaScale) = (255, 0, 255)
        }
        redFromPr = 2 * (1 - weights.red)
        blueFromPb = 2 * (1 - weights.blue)
    }

    /// R'G'B' (not clamped) of the codes.
    @inlinable public func rgb(y: Float, u: Float, v: Float) -> SIMD3<Float> {
        let luma = (y - lumaOffset) / lumaScale
        let pb = (u - 128) / chromaScale
        let pr = (v - 128) / chromaScale
        let red = luma + redFromPr * pr
        let blue = luma + blueFromPb * pb
        let green = (luma - weights.red * red - weights.blue * blue) / weights.green
        return SIMD3(red, green, blue)
    }

    /// Codes (not rounded, not clamped) of an R'G'B' value.
    @inlinable public func codes(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        let luma = weights.luma(rgb)
        let pb = (rgb.z - luma) / blueFromPb
        let pr = (rgb.x - luma) / redFromPr
        return SIMD3(lumaOffset + lumaScale * luma, 128 + chromaScale * pb, 128 + chromaScale * pr)
    }
}

extension SIMD3 where Scalar == Float {
    /// Each component clamped to 0…1, component by component (the generic `pointwiseMin`/`pointwiseMax` can stay
    /// calls in other modules' per-pixel loops).
    @inlinable public var clampedToUnit: SIMD3<Float> {
        SIMD3(Swift.min(Swift.max(x, 0), 1), Swift.min(Swift.max(y, 0), 1), Swift.min(Swift.max(z, 0), 1))
    }
}
