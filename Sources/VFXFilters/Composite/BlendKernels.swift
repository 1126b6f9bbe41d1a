import VFXCore
import VFXPipeline

/// Eight pixels' R', G', B' (0…1), one SIMD vector per channel: what the vector blend kernels work on.
struct PixelVectors: Sendable {
    var r: SIMD8<Float>, g: SIMD8<Float>, b: SIMD8<Float>

    init(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>) { (self.r, self.g, self.b) = (r, g, b) }
    init(splat c: SIMD3<Float>) { (r, g, b) = (SIMD8(repeating: c.x), SIMD8(repeating: c.y), SIMD8(repeating: c.z)) }

    /// Eight packed RGBA pixels (little-endian: red in the low byte) as channel vectors in 0…1, and their alpha bytes.
    @_transparent init(rgba p: SIMD8<UInt32>) {
        r = Self.unit(p & 0xFF)
        g = Self.unit(p &>> 8 & 0xFF)
        b = Self.unit(p &>> 16 & 0xFF)
    }

    /// Byte values (0…255, in the low bits) as floats in 0…1: the byte put in the mantissa of 2²³, 2²³ taken away.
    @_transparent static func unit(_ bytes: SIMD8<UInt32>) -> SIMD8<Float> {
        (unsafeBitCast(bytes | 0x4B00_0000, to: SIMD8<Float>.self) - 8_388_608) * (1 / 255)
    }

    /// Rounded to bytes (values clamped to 0…1 first) and packed with `alpha` (bytes already in place).
    @_transparent func packed(alpha: SIMD8<UInt32>) -> SIMD8<UInt32> {
        let red = unsafeBitCast(r.clampedToUnit * 255 + 8_388_608, to: SIMD8<UInt32>.self) & 0xFF
        let green = unsafeBitCast(g.clampedToUnit * 255 + 8_388_608, to: SIMD8<UInt32>.self) & 0xFF
        let blue = unsafeBitCast(b.clampedToUnit * 255 + 8_388_608, to: SIMD8<UInt32>.self) & 0xFF
        return red | green &<< 8 | blue &<< 16 | alpha
    }

    @_transparent static func + (a: PixelVectors, b: SIMD8<Float>) -> PixelVectors { PixelVectors(a.r + b, a.g + b, a.b + b) }
    @_transparent static func - (a: PixelVectors, b: SIMD8<Float>) -> PixelVectors { PixelVectors(a.r - b, a.g - b, a.b - b) }
    @_transparent static func * (a: PixelVectors, b: SIMD8<Float>) -> PixelVectors { PixelVectors(a.r * b, a.g * b, a.b * b) }
    @_transparent static func - (a: PixelVectors, b: PixelVectors) -> PixelVectors { PixelVectors(a.r - b.r, a.g - b.g, a.b - b.b) }
    @_transparent static func + (a: PixelVectors, b: PixelVectors) -> PixelVectors { PixelVectors(a.r + b.r, a.g + b.g, a.b + b.b) }

    /// The W3C spec's Lum (weights .3, .59, .11).
    @_transparent var lum: SIMD8<Float> { 0.3 * r + 0.59 * g + 0.11 * b }
    @_transparent var low: SIMD8<Float> { min8(min8(r, g), b) }
    @_transparent var high: SIMD8<Float> { max8(max8(r, g), b) }

    /// l + (c − l) · k per channel.
    @_transparent func centred(on l: SIMD8<Float>, scaledBy k: SIMD8<Float>) -> PixelVectors {
        PixelVectors(l + (r - l) * k, l + (g - l) * k, l + (b - l) * k)
    }

    /// ClipColor as the spec writes it: toward Lum by l / (l − min) where min < 0, then by (1 − l) / (max − l) where
    /// max > 1 (min and max of the colour given), both steps as one factor.
    @_transparent var clipped: PixelVectors {
        let l = lum, n = low, x = high
        // Where n < 0 (or x > 1) with 0 ≤ l ≤ 1, the channels are not all equal and l, a mean of them with positive
        // weights, lies strictly between n and x: the denominators are positive where they are used.
        let below = l / (l - n).replacing(with: 1, where: n .>= 0)
        let above = (1 - l) / (x - l).replacing(with: 1, where: x .<= 1)
        let factor = SIMD8<Float>(repeating: 1).replacing(with: below, where: n .< 0)
        return centred(on: l, scaledBy: factor.replacing(with: factor * above, where: x .> 1))
    }

    /// SetLum: shifted to Lum `l`, then clipped.
    @_transparent func withLum(_ l: SIMD8<Float>) -> PixelVectors { (self + (l - lum)).clipped }

    /// SetSat: (c − min) · s / (max − min), zero where the colour is gray.
    @_transparent func withSat(_ s: SIMD8<Float>) -> PixelVectors {
        let n = low, x = high, range = x - n
        let k = (s / range.replacing(with: 1, where: range .<= 0)).replacing(with: 0, where: range .<= 0)
        return (self - n) * k
    }

    /// `self` mixed toward `other` by `weight` (0: self, 1: other).
    @_transparent func mixed(toward other: PixelVectors, by weight: SIMD8<Float>) -> PixelVectors {
        PixelVectors(r.addingProduct(other.r - r, weight), g.addingProduct(other.g - g, weight), b.addingProduct(other.b - b, weight))
    }
}

@_transparent func min8(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> { a.replacing(with: b, where: b .< a) }
@_transparent func max8(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> { a.replacing(with: b, where: b .> a) }
/// `a` in the lanes where `mask` is set, `b` in the others.
@_transparent func select8(_ mask: SIMDMask<SIMD8<Int32>>, _ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
    b.replacing(with: a, where: mask)
}

/// 1 / v where v > 0, +∞ where v ≤ 0 (−0 included).
@_transparent func reciprocalOrInfinity(_ v: SIMD8<Float>) -> SIMD8<Float> { 1 / select8(v .<= 0, SIMD8(), v) }

/// A blend mode as a type: the kernels' loops are generic over it, so each is specialized with its mode's formulas
/// alone. The formula is split in two: `terms`, what it needs of the layer's colour alone (soft light's 2Cs − 1, split;
/// dodge's and burn's reciprocals; color's Cs − Lum(Cs), ClipColor bounds and their reciprocals; the colour itself for
/// the others), and `blend`, the rest. The kernels work the terms out once per row for a colour or gradient layer and per pixel for an
/// image layer, so that against a colour dodge, burn and color need no division per pixel.
///
/// Every `blend` returns values in 0…1 for a backdrop and a layer in 0…1 (ClipColor keeps the non-separable ones
/// there), up to Float rounding, which the rounding to codes absorbs: the kernels do not clamp them.
///
/// ```swift
/// let out = ColorDodgeBlend.blend(backdrop, ColorDodgeBlend.terms(PixelVectors(splat: SIMD3(1, 0.5, 0))))
/// ```
protocol BlendModeKind {
    associatedtype Terms
    static func terms(_ source: PixelVectors) -> Terms
    static func blend(_ backdrop: PixelVectors, _ terms: Terms) -> PixelVectors
    /// The backdrop mixed toward the blend by `weight` (α · opacity), what the kernels write; a mode whose blend is a
    /// factor on Cb − Lum(Cb) (saturation) folds the mix into that factor.
    static func weighted(_ backdrop: PixelVectors, _ terms: Terms, _ weight: SIMD8<Float>) -> PixelVectors
}
extension BlendModeKind {
    @_transparent static func weighted(_ backdrop: PixelVectors, _ terms: Terms, _ weight: SIMD8<Float>) -> PixelVectors {
        backdrop.mixed(toward: blend(backdrop, terms), by: weight)
    }
}

/// The separable modes whose formula needs nothing of the layer but its colour: `BlendMode.channels` on each channel.
protocol SeparableBlend: BlendModeKind where Terms == PixelVectors { static var mode: BlendMode { get } }
extension SeparableBlend {
    @_transparent static func terms(_ source: PixelVectors) -> PixelVectors { source }
    @_transparent static func blend(_ b: PixelVectors, _ s: PixelVectors) -> PixelVectors {
        PixelVectors(BlendMode.channels(mode, b.r, s.r), BlendMode.channels(mode, b.g, s.g), BlendMode.channels(mode, b.b, s.b))
    }
}
enum MultiplyBlend: SeparableBlend { static var mode: BlendMode { .multiply } }
enum ScreenBlend: SeparableBlend { static var mode: BlendMode { .screen } }
enum OverlayBlend: SeparableBlend { static var mode: BlendMode { .overlay } }
enum HardLightBlend: SeparableBlend { static var mode: BlendMode { .hardLight } }
enum DarkenBlend: SeparableBlend { static var mode: BlendMode { .darken } }
enum LightenBlend: SeparableBlend { static var mode: BlendMode { .lighten } }
enum DifferenceBlend: SeparableBlend { static var mode: BlendMode { .difference } }
enum ExclusionBlend: SeparableBlend { static var mode: BlendMode { .exclusion } }

/// Soft light, the W3C curve: Cb − (1 − 2Cs)·Cb·(1 − Cb) where Cs ≤ 0.5, else Cb + (2Cs − 1)·(D(Cb) − Cb), with
/// D(Cb) = ((16Cb − 12)·Cb + 4)·Cb where Cb ≤ 0.25, else √Cb. With t = 2Cs − 1 (exact in Float; t ≤ 0 where Cs ≤ 0.5)
/// both halves are Cb + t⁻·Cb·(1 − Cb) + t⁺·(D(Cb) − Cb), t⁻ = min(t, 0) and t⁺ = max(t, 0) the terms (per row for a
/// colour or gradient layer): no select between the halves, and the mix toward the blend by the weight w is
/// Cb + w·(…), one product (`weighted`).
///
/// Swift's float SIMD arithmetic is written lane by lane, and LLVM's vectorizer puts it back together only for
/// expression trees up to about a dozen operations deep (deeper, the rest was compiled lane by lane: 7.5–10 ms per
/// 1080p frame against a gradient). A comparison takes its operands as whole vectors, where a new tree starts: so D's
/// branch is chosen by comparing both candidates with 0.5, their common value at Cb = 0.25 (both increase through
/// it, and agree there to the second order, so a lane that Float rounding puts on the other side changes by no more
/// than that rounding), which gives the root and the cubic a tree each. √Cb comes from `rootsAboveQuarter`, in SIMD arithmetic
/// alone: `squareRoot()` on a vector is a scalar call per lane (it made the whole formula lane-by-lane code, 12.5 ms
/// against an image layer), and the AVX reciprocal-root intrinsic (`RampLanes.squareRoots`) stayed an out-of-line
/// call in the YUV loop, every vector register spilled around it (5.2 ms against a gradient).
///
/// ```swift
/// let out = SoftLightBlend.blend(backdrop, SoftLightBlend.terms(PixelVectors(splat: SIMD3(1, 0.5, 0))))
/// ```
enum SoftLightBlend: BlendModeKind {
    /// t⁻ and t⁺ per channel.
    struct Terms { var darkening: PixelVectors, lightening: PixelVectors }

    @_transparent static func terms(_ s: PixelVectors) -> Terms {
        let t = PixelVectors(2 * s.r - 1, 2 * s.g - 1, 2 * s.b - 1), zero = SIMD8<Float>()
        return Terms(darkening: PixelVectors(min8(t.r, zero), min8(t.g, zero), min8(t.b, zero)),
                     lightening: PixelVectors(max8(t.r, zero), max8(t.g, zero), max8(t.b, zero)))
    }
    @_transparent static func blend(_ b: PixelVectors, _ t: Terms) -> PixelVectors {
        PixelVectors(b.r + change(b.r, t.darkening.r, t.lightening.r), b.g + change(b.g, t.darkening.g, t.lightening.g),
                     b.b + change(b.b, t.darkening.b, t.lightening.b))
    }
    @_transparent static func weighted(_ b: PixelVectors, _ t: Terms, _ weight: SIMD8<Float>) -> PixelVectors {
        PixelVectors(b.r + weight * change(b.r, t.darkening.r, t.lightening.r),
                     b.g + weight * change(b.g, t.darkening.g, t.lightening.g),
                     b.b + weight * change(b.b, t.darkening.b, t.lightening.b))
    }
    /// The blend minus the backdrop on one channel: t⁻·Cb·(1 − Cb) + t⁺·(D(Cb) − Cb).
    @_transparent static func change(_ b: SIMD8<Float>, _ darkening: SIMD8<Float>, _ lightening: SIMD8<Float>) -> SIMD8<Float> {
        let root = rootsAboveQuarter(b), cubic = ((16 * b - 12) * b + 4) * b
        let d = select8(root .> 0.5 .& cubic .> 0.5, root, cubic)
        return darkening * (b * (1 - b)) + lightening * (d - b)
    }

    /// √v for v in 0.25…1, within 5·10⁻⁶ of it (relative; every Float there checked against √ in Double), finite for
    /// v in 0…0.25 (0 gives 0). 1/√v estimated from v's bits (the exponent halved and negated: 0x5F37_5A86 − bits / 2,
    /// within 3.5 %; integer vector operations, where the vectorizer starts afresh too), two Newton steps
    /// r·(1.5 − ½v·r²) (1.8·10⁻³, then 5·10⁻⁶), then √v = v·r: ten multiplies and subtractions, no division.
    @_transparent static func rootsAboveQuarter(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let half = 0.5 * v
        var r = unsafeBitCast(0x5F37_5A86 &- unsafeBitCast(v, to: SIMD8<UInt32>.self) &>> 1, to: SIMD8<Float>.self)
        r = r * (1.5 - half * r * r)
        r = r * (1.5 - half * r * r)
        return v * r
    }
}

/// Color dodge: min(1, Cb / (1 − Cs)), 0 where Cb = 0, 1 where Cs = 1. Terms: 1 / (1 − Cs), +∞ where Cs = 1, so that
/// Cb·∞ = ∞ gives 1 (and 0·∞, NaN, is replaced by the Cb = 0 case).
enum ColorDodgeBlend: BlendModeKind {
    @_transparent static func terms(_ s: PixelVectors) -> PixelVectors {
        PixelVectors(reciprocalOrInfinity(1 - s.r), reciprocalOrInfinity(1 - s.g), reciprocalOrInfinity(1 - s.b))
    }
    @_transparent static func blend(_ b: PixelVectors, _ inverse: PixelVectors) -> PixelVectors {
        PixelVectors(dodge(b.r, inverse.r), dodge(b.g, inverse.g), dodge(b.b, inverse.b))
    }
    @_transparent static func dodge(_ b: SIMD8<Float>, _ inverse: SIMD8<Float>) -> SIMD8<Float> {
        select8(b .== 0, SIMD8(), min8(b * inverse, SIMD8(repeating: 1)))
    }
}

/// Color burn: 1 − min(1, (1 − Cb) / Cs), 1 where Cb = 1, 0 where Cs = 0. Terms: 1 / Cs, +∞ where Cs = 0 (as dodge's).
enum ColorBurnBlend: BlendModeKind {
    @_transparent static func terms(_ s: PixelVectors) -> PixelVectors {
        PixelVectors(reciprocalOrInfinity(s.r), reciprocalOrInfinity(s.g), reciprocalOrInfinity(s.b))
    }
    @_transparent static func blend(_ b: PixelVectors, _ inverse: PixelVectors) -> PixelVectors {
        PixelVectors(burn(b.r, inverse.r), burn(b.g, inverse.g), burn(b.b, inverse.b))
    }
    @_transparent static func burn(_ b: SIMD8<Float>, _ inverse: SIMD8<Float>) -> SIMD8<Float> {
        select8(b .>= 1, SIMD8(repeating: 1), 1 - min8((1 - b) * inverse, SIMD8(repeating: 1)))
    }
}

/// Hue: SetLum(SetSat(Cs, Sat(Cb)), Lum(Cb)). SetSat(Cs, S) is u·S with u = (Cs − min) / (max − min) (0 for a gray
/// layer), whose min is 0 and max 1; moved to Lum(Cb) = L it is L + S·v, v = u − Lum(u), so its min is L − S·Lum(u) and
/// its max L + S·(1 − Lum(u)), and ClipColor scales S·v to L / Lum(u) where the min is below 0, to
/// (1 − L) / (1 − Lum(u)) where the max is above 1 (both at once would take S > 1). Terms: v, Lum(u) and the two
/// reciprocals; per pixel no division.
enum HueBlend: BlendModeKind {
    struct Terms { var v: PixelVectors, lum: SIMD8<Float>, belowScale: SIMD8<Float>, aboveScale: SIMD8<Float> }
    @_transparent static func terms(_ s: PixelVectors) -> Terms {
        let n = s.low, range = s.high - n
        let u = (s - n) * select8(range .<= 0, SIMD8(), 1 / select8(range .<= 0, SIMD8(repeating: 1), range))
        let l = u.lum
        return Terms(v: u - l, lum: l, belowScale: reciprocalOrInfinity(l), aboveScale: reciprocalOrInfinity(1 - l))
    }
    @_transparent static func blend(_ b: PixelVectors, _ t: Terms) -> PixelVectors {
        let l = b.lum, saturation = b.high - b.low
        let scale = select8(l.addingProduct(saturation, 1 - t.lum) .> 1, (1 - l) * t.aboveScale,
                            select8(l .< saturation * t.lum, l * t.belowScale, saturation))
        return PixelVectors(l.addingProduct(t.v.r, scale), l.addingProduct(t.v.g, scale), l.addingProduct(t.v.b, scale))
    }
}

/// Saturation: SetLum(SetSat(Cb, Sat(Cs)), Lum(Cb)) as L + g·(Cb − L), L = Lum(Cb). SetSat and the shift back to L give
/// g = k = Sat(Cs) / (max − min); ClipColor lowers it to L / (L − min) where the minimum, L − k·(L − min), is below 0,
/// and to (1 − L) / (max − L) where the maximum, L + k·(max − L), is above 1 (never both: that would take
/// k·(max − min) = Sat(Cs) > 1). So g is the least of the three quotients, found by comparing cross products (the
/// denominators are positive), then one division; 0 for a gray backdrop, set apart explicitly: there L, rounded, may
/// lie an ulp outside min…max (65 of the 256 byte grays) and a quotient of rounding errors would be picked. Mixed
/// toward by a weight w, the result is Cb + (g − 1)·w·(Cb − L), one factor again (`weighted`).
///
/// The layer's terms are its colour as it is: with Sat(Cs) as the terms, an image layer's were worked out lane by lane.
enum SaturationBlend: BlendModeKind {
    @_transparent static func terms(_ s: PixelVectors) -> PixelVectors { s }
    @_transparent static func blend(_ b: PixelVectors, _ s: PixelVectors) -> PixelVectors {
        let l = b.lum
        return b.centred(on: l, scaledBy: factor(b, l, s.high - s.low))
    }
    @_transparent static func weighted(_ b: PixelVectors, _ s: PixelVectors, _ weight: SIMD8<Float>) -> PixelVectors {
        let l = b.lum
        let step = (factor(b, l, s.high - s.low) - 1) * weight
        return PixelVectors(b.r.addingProduct(b.r - l, step), b.g.addingProduct(b.g - l, step), b.b.addingProduct(b.b - l, step))
    }
    /// g for backdrop `b` of Lum `l` and a layer of saturation `saturation`.
    @_transparent static func factor(_ b: PixelVectors, _ l: SIMD8<Float>, _ saturation: SIMD8<Float>) -> SIMD8<Float> {
        let n = b.low, x = b.high, range = x - n
        let down = l - n, up = x - l, headroom = 1 - l
        // k > L / (L − min): the minimum would fall below 0.
        let clipsLow = l * range .< saturation * down
        let numerator = select8(clipsLow, l, saturation), denominator = select8(clipsLow, down, range)
        // (1 − L) / (max − L) below the least so far: the maximum would rise above 1.
        let clipsHigh = headroom * denominator .< numerator * up
        let g = select8(clipsHigh, headroom, numerator) / select8(clipsHigh, up, denominator)
        return select8(range .> 0, g, SIMD8())
    }
}

/// Color: SetLum(Cs, Lum(Cb)) = ClipColor(Cs + Lum(Cb) − Lum(Cs)). With L = Lum(Cb) its min is L − (Lum(Cs) − min(Cs))
/// and its max L + (max(Cs) − Lum(Cs)): ClipColor scales Cs − Lum(Cs) by L / (Lum(Cs) − min(Cs)) where the first is
/// below 0, by (1 − L) / (max(Cs) − Lum(Cs)) where the second is above 1 (never both: that would take Sat(Cs) > 1).
/// Terms: Cs − Lum(Cs), the two bounds and their reciprocals; per pixel no division.
enum ColorBlend: BlendModeKind {
    struct Terms { var v: PixelVectors, below: SIMD8<Float>, above: SIMD8<Float>, belowScale: SIMD8<Float>, aboveScale: SIMD8<Float> }
    @_transparent static func terms(_ s: PixelVectors) -> Terms {
        let l = s.lum, down = l - s.low, up = s.high - l
        return Terms(v: s - l, below: down, above: 1 - up, belowScale: reciprocalOrInfinity(down), aboveScale: reciprocalOrInfinity(up))
    }
    @_transparent static func blend(_ b: PixelVectors, _ t: Terms) -> PixelVectors {
        let l = b.lum
        let scale = select8(l .> t.above, (1 - l) * t.aboveScale, select8(l .< t.below, l * t.belowScale, SIMD8(repeating: 1)))
        return PixelVectors(l.addingProduct(t.v.r, scale), l.addingProduct(t.v.g, scale), l.addingProduct(t.v.b, scale))
    }
}

/// Luminosity: SetLum(Cb, Lum(Cs)). Terms: the layer's colour as it is.
enum LuminosityBlend: BlendModeKind {
    @_transparent static func terms(_ source: PixelVectors) -> PixelVectors { source }
    @_transparent static func blend(_ b: PixelVectors, _ s: PixelVectors) -> PixelVectors { b.withLum(s.lum) }
}

extension BlendMode {
    /// One channel of a separable mode on eight pixels: the formulas of `channel(_:_:_:)`, as selects (soft light, dodge
    /// and burn have their own kinds, `SoftLightBlend`, `ColorDodgeBlend` and `ColorBurnBlend`, which take the layer's
    /// 2Cs − 1 or reciprocal once).
    @_transparent static func channels(_ mode: BlendMode, _ b: SIMD8<Float>, _ s: SIMD8<Float>) -> SIMD8<Float> {
        switch mode {
        case .multiply: return b * s
        case .screen: return b + s - b * s
        case .overlay: return hardLight(s, b)
        case .hardLight: return hardLight(b, s)
        case .darken: return min8(b, s)
        case .lighten: return max8(b, s)
        case .difference: return max8(b - s, s - b)
        case .exclusion: return b + s - 2 * b * s
        case .softLight, .colorDodge, .colorBurn, .hue, .saturation, .color, .luminosity: preconditionFailure("\(mode) has its own kind")
        }
    }

    @_transparent static func hardLight(_ b: SIMD8<Float>, _ s: SIMD8<Float>) -> SIMD8<Float> {
        let t = 2 * s - 1
        return select8(s .<= 0.5, b * 2 * s, b + t - b * t)
    }
}

/// A blend layer over RGBA rows, eight pixels per step in SIMD floats: the frame's pixel is the backdrop, the layer's
/// the source; out = Cb + (clamp(B(Cb, Cs)) − Cb) · α · opacity, rounded to the nearest byte; the frame's alpha is kept.
/// The same formulas as `BlendMode.apply` in Float, as selects instead of branches. Runs in `RGBAProcessor` (the
/// banded path on YUV and BGRA frames).
///
/// ```swift
/// let stage = RGBAProcessor(name: "hue-blend", kernel: BlendRows(mode: .hue, opacity: 1, layer: .color(SIMD3(1, 0.5, 0))), slices: slices)
/// ```
struct BlendRows: RGBARowKernel {
    enum Layer: Sendable {
        /// One colour over the whole frame.
        case color(SIMD3<Float>)
        /// A colour per frame row (a vertical gradient).
        case rows([SIMD3<Float>])
        /// Straight RGBA bytes at the frame's size.
        case image(FilterImage)
    }

    let mode: BlendMode
    let opacity: Float
    let layer: Layer
    var readsOnlyItsPixel: Bool { true }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        // One loop per mode (a type, so that each loop is specialized with only its formulas).
        switch mode {
        case .multiply: run(MultiplyBlend.self, y, source, target, width)
        case .screen: run(ScreenBlend.self, y, source, target, width)
        case .overlay: run(OverlayBlend.self, y, source, target, width)
        case .softLight: run(SoftLightBlend.self, y, source, target, width)
        case .hardLight: run(HardLightBlend.self, y, source, target, width)
        case .colorDodge: run(ColorDodgeBlend.self, y, source, target, width)
        case .colorBurn: run(ColorBurnBlend.self, y, source, target, width)
        case .darken: run(DarkenBlend.self, y, source, target, width)
        case .lighten: run(LightenBlend.self, y, source, target, width)
        case .difference: run(DifferenceBlend.self, y, source, target, width)
        case .exclusion: run(ExclusionBlend.self, y, source, target, width)
        case .hue: run(HueBlend.self, y, source, target, width)
        case .saturation: run(SaturationBlend.self, y, source, target, width)
        case .color: run(ColorBlend.self, y, source, target, width)
        case .luminosity: run(LuminosityBlend.self, y, source, target, width)
        }
    }

    @inline(__always)
    private func run<Kind: BlendModeKind>(_ kind: Kind.Type, _ y: Int, _ source: Plane, _ target: Plane, _ width: Int) {
        let input = UnsafeRawPointer(source.row(y)), output = UnsafeMutableRawPointer(target.row(y))
        let opacity = SIMD8<Float>(repeating: self.opacity)
        /// Eight pixels blended with the row's colour (its terms) or, when `layer` is given, with the image's pixels.
        @inline(__always) func blend(_ pixels: SIMD8<UInt32>, _ layer: SIMD8<UInt32>?, _ rowTerms: Kind.Terms) -> SIMD8<UInt32> {
            let backdrop = PixelVectors(rgba: pixels)
            var weight = opacity
            var terms = rowTerms
            if let layer {
                terms = Kind.terms(PixelVectors(rgba: layer))
                weight = PixelVectors.unit(layer &>> 24) * opacity
            }
            return Kind.weighted(backdrop, terms, weight).packed(alpha: pixels & 0xFF00_0000)
        }
        @inline(__always) func loop(_ layer: UnsafeRawPointer?, _ terms: Kind.Terms) {
            var x = 0
            while x + 8 <= width {
                let pixels = input.loadUnaligned(fromByteOffset: 4 &* x, as: SIMD8<UInt32>.self)
                let source = layer.map { $0.loadUnaligned(fromByteOffset: 4 &* x, as: SIMD8<UInt32>.self) }
                output.storeBytes(of: blend(pixels, source, terms), toByteOffset: 4 &* x, as: SIMD8<UInt32>.self)
                x &+= 8
            }
            guard x < width else { return }
            // The last few pixels through a full vector.
            var (pixels, source) = (SIMD8<UInt32>(), SIMD8<UInt32>())
            for lane in 0..<(width - x) {
                pixels[lane] = input.loadUnaligned(fromByteOffset: 4 &* (x + lane), as: UInt32.self)
                if let layer { source[lane] = layer.loadUnaligned(fromByteOffset: 4 &* (x + lane), as: UInt32.self) }
            }
            let result = blend(pixels, layer == nil ? nil : source, terms)
            for lane in 0..<(width - x) { output.storeBytes(of: result[lane], toByteOffset: 4 &* (x + lane), as: UInt32.self) }
        }
        switch layer {
        case .color(let color): loop(nil, Kind.terms(PixelVectors(splat: color)))
        case .rows(let rows): loop(nil, Kind.terms(PixelVectors(splat: rows[y])))
        case .image(let image):
            image.pixels.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                // The row's terms are not used: each step takes its pixels' own.
                loop(base + 4 * image.width * y, Kind.terms(PixelVectors(splat: .zero)))
            }
        }
    }
}

/// A blend layer over an I420 or NV12 frame in place, 8 blocks (2 rows × 16 pixels) per step in SIMD floats, with no
/// RGBA buffer: each pixel's R'G'B' from its luma and its block's chroma (clamped to 0…1, not rounded), the blend of
/// `BlendRows`, its luma per pixel, and each block's chroma from the mean of its four blended R'G'B' values: what
/// converting the frame to RGB, blending and converting back with box-filtered 4:2:0 chroma gives, the last column or
/// row repeated at odd sizes (the layout of `AffineYUVKernel`, whose chroma helpers it uses).
///
/// ```swift
/// let kernel = BlendYUVKernel(rows: BlendRows(mode: .saturation, opacity: 1, layer: .color(SIMD3(1, 0.5, 0))), width: 1920, height: 1080)
/// kernel.apply(to: frame.planes, coding: YUVCoding(frame.color), interleaved: false, width: 1920, height: 1080, slices: slices)
/// ```
struct BlendYUVKernel: Sendable {
    let mode: BlendMode
    let opacity: Float
    /// Colour and gradient layers: the colour of each frame row.
    private let rowColors: [SIMD3<Float>]
    /// Image layers: straight RGBA rows of `paddedWidth` pixels, the last column repeated to a whole step.
    private let padded: [UInt8]
    private let paddedWidth: Int

    init(rows: BlendRows, width: Int, height: Int) {
        (mode, opacity) = (rows.mode, rows.opacity)
        switch rows.layer {
        case .color(let color): rowColors = [SIMD3<Float>](repeating: color, count: height)
        case .rows(let colors): rowColors = colors
        case .image: rowColors = []
        }
        guard case .image(let image) = rows.layer else { (padded, paddedWidth) = ([], 0); return }
        // Whole steps of 16 pixels (8 blocks) covering the row's blocks.
        let stepped = ((width + 1) / 2 + 7) / 8 * 16
        var bytes = [UInt8](repeating: 0, count: stepped * image.height * 4)
        for y in 0..<image.height {
            for x in 0..<stepped {
                let from = (y * image.width + min(x, image.width - 1)) * 4, to = (y * stepped + x) * 4
                for c in 0..<4 { bytes[to + c] = image.pixels[from + c] }
            }
        }
        (padded, paddedWidth) = (bytes, stepped)
    }

    func apply(to planes: [Plane], coding: YUVCoding, interleaved: Bool, width: Int, height: Int, slices: SliceRunner) {
        if interleaved {
            run(planes, coding: coding, width: width, height: height, slices: slices, layout: InterleavedChroma.self)
        } else {
            run(planes, coding: coding, width: width, height: height, slices: slices, layout: SeparateChroma.self)
        }
    }

    /// Eight pixels of luma codes `code` in blocks of chroma terms `chroma` (R'G'B' = code · gain + chroma, clamped),
    /// blended with a layer of terms `terms` and weight `weight`.
    @_transparent
    private static func blend<Kind: BlendModeKind>(_ kind: Kind.Type, _ code: SIMD8<Float>, _ gain: Float, _ chroma: PixelVectors,
                                                   _ terms: Kind.Terms, _ weight: SIMD8<Float>) -> PixelVectors {
        let base = code * gain
        let backdrop = PixelVectors((base + chroma.r).clampedToUnit, (base + chroma.g).clampedToUnit, (base + chroma.b).clampedToUnit)
        return Kind.weighted(backdrop, terms, weight)
    }

    /// Output luma codes of eight R'G'B' results: Y' · scale (in `toLuma`) + offset, rounded (as `roundedBytes`), each in
    /// its lane's byte `byte` (0 or 1), the lane's other bytes zero.
    @_transparent private static func lumaCodes(_ p: PixelVectors, _ toLuma: SIMD3<Float>, _ offset: Float, inByte byte: Int) -> SIMD8<UInt32> {
        let y = (p.r * toLuma.x).addingProduct(p.g, toLuma.y).addingProduct(p.b, toLuma.z) + offset
        return (unsafeBitCast(y + 8_388_608, to: SIMD8<UInt32>.self) & 0xFF) &<< UInt32(truncatingIfNeeded: 8 &* byte)
    }

    /// Eight 16-bit lanes of `pairs` (the even pixel's code in the low byte, the odd one's in the high byte) stored as 16
    /// bytes at `pointer`: the row's 16 codes in order.
    @_transparent private static func storePairs(_ pairs: SIMD8<UInt32>, at pointer: UnsafeMutablePointer<UInt8>) {
        var halves = SIMD8<UInt16>()
        for lane in 0..<8 { halves[lane] = UInt16(truncatingIfNeeded: pairs[lane]) }
        UnsafeMutableRawPointer(pointer).storeBytes(of: halves, as: SIMD8<UInt16>.self)
    }

    private func run<Layout: ChromaLayout>(_ planes: [Plane], coding: YUVCoding, width: Int, height: Int, slices: SliceRunner,
                                           layout: Layout.Type) {
        // One loop per mode (a type, so that each loop is specialized with only its formulas).
        switch mode {
        case .multiply: run(MultiplyBlend.self, planes, coding, width, height, slices, layout)
        case .screen: run(ScreenBlend.self, planes, coding, width, height, slices, layout)
        case .overlay: run(OverlayBlend.self, planes, coding, width, height, slices, layout)
        case .softLight: run(SoftLightBlend.self, planes, coding, width, height, slices, layout)
        case .hardLight: run(HardLightBlend.self, planes, coding, width, height, slices, layout)
        case .colorDodge: run(ColorDodgeBlend.self, planes, coding, width, height, slices, layout)
        case .colorBurn: run(ColorBurnBlend.self, planes, coding, width, height, slices, layout)
        case .darken: run(DarkenBlend.self, planes, coding, width, height, slices, layout)
        case .lighten: run(LightenBlend.self, planes, coding, width, height, slices, layout)
        case .difference: run(DifferenceBlend.self, planes, coding, width, height, slices, layout)
        case .exclusion: run(ExclusionBlend.self, planes, coding, width, height, slices, layout)
        case .hue: run(HueBlend.self, planes, coding, width, height, slices, layout)
        case .saturation: run(SaturationBlend.self, planes, coding, width, height, slices, layout)
        case .color: run(ColorBlend.self, planes, coding, width, height, slices, layout)
        case .luminosity: run(LuminosityBlend.self, planes, coding, width, height, slices, layout)
        }
    }

    @inline(__always)
    private func run<Kind: BlendModeKind, Layout: ChromaLayout>(_ kind: Kind.Type, _ planes: [Plane], _ coding: YUVCoding, _ width: Int,
                                                                _ height: Int, _ slices: SliceRunner, _ layout: Layout.Type) {
        let luma = planes[0], cbPlane = planes[1], crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let w = coding.weights
        // R' = Y'·gain + Cr·rFromCr + rConstant, and so on, on 8-bit codes (the conversion of `YUVCoding`).
        // The gain rounded up, so that the top luma code (235, 255 in full range) with neutral chroma comes out at 1 or
        // just above and clamps to 1 exactly, as in the definition: dodge's and burn's jumps at 0 and 1 take it.
        let gain = (1 / coding.lumaScale).nextUp
        let rFromCr = coding.redFromPr / coding.chromaScale, bFromCb = coding.blueFromPb / coding.chromaScale
        let gFromCb = -w.blue * bFromCb / w.green, gFromCr = -w.red * rFromCr / w.green
        let lumaConstant = -coding.lumaOffset * gain
        let (outScale, outOffset) = (coding.lumaScale, coding.lumaOffset)
        let toLuma = SIMD3(w.red, w.green, w.blue) * outScale
        let toCb = coding.chromaScale / coding.blueFromPb, toCr = coding.chromaScale / coding.redFromPr
        let opacity = SIMD8<Float>(repeating: self.opacity), paddedWidth = self.paddedWidth, isImage = !padded.isEmpty
        let blankTerms = Kind.terms(PixelVectors(splat: .zero))
        padded.withUnsafeBytes { image in
            rowColors.withUnsafeBufferPointer { rowColors in
                slices.run(rows: (height + 1) / 2) { chromaRows in
                    for cy in chromaRows {
                        let (topRow, bottomRow) = blockRows(of: luma, chromaRow: cy, width: width, height: height)
                        let rowCount = bottomRow > topRow ? 2 : 1
                        let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy)
                        let meanScale = 1 / Float(2 * rowCount)
                        // The layer's terms for the two rows (colour and gradient layers; an image's are per pixel).
                        let rowTerms = isImage ? (blankTerms, blankTerms)
                            : (Kind.terms(PixelVectors(splat: rowColors[topRow])), Kind.terms(PixelVectors(splat: rowColors[bottomRow])))
                        var cx = 0
                        while cx < chromaWidth {
                            let (cb, cr) = Layout.load(cbRow, crRow, at: cx)
                            let chromaR = (cr - 128) * rFromCr + lumaConstant
                            let chromaG = ((cb - 128) * gFromCb).addingProduct(cr - 128, gFromCr) + lumaConstant
                            let chromaB = (cb - 128) * bFromCb + lumaConstant
                            let chroma = PixelVectors(chromaR, chromaG, chromaB)
                            var sum = PixelVectors(SIMD8(), SIMD8(), SIMD8())
                            for index in 0..<rowCount {
                                let y = index == 0 ? topRow : bottomRow
                                let pointer = luma.row(y) + 2 * cx
                                let (even, odd) = evenAndOddBytes(pointer)
                                // The layer's terms and weights for the even and the odd pixels.
                                var terms = index == 0 ? (rowTerms.0, rowTerms.0) : (rowTerms.1, rowTerms.1), weights = (opacity, opacity)
                                if isImage {
                                    let pairs = image.loadUnaligned(fromByteOffset: 4 * (y * paddedWidth + 2 * cx), as: SIMD8<UInt64>.self)
                                    var (evenPixels, oddPixels) = (SIMD8<UInt32>(), SIMD8<UInt32>())
                                    for lane in 0..<8 {
                                        evenPixels[lane] = UInt32(truncatingIfNeeded: pairs[lane])
                                        oddPixels[lane] = UInt32(truncatingIfNeeded: pairs[lane] &>> 32)
                                    }
                                    terms = (Kind.terms(PixelVectors(rgba: evenPixels)), Kind.terms(PixelVectors(rgba: oddPixels)))
                                    weights = (PixelVectors.unit(evenPixels &>> 24) * opacity, PixelVectors.unit(oddPixels &>> 24) * opacity)
                                }
                                // One parity at a time, as a loop: with both in one body the larger formulas (saturation,
                                // color) were compiled lane by lane (12.5 and 7.7 ms per 1080p frame instead of 4.4 and 4.3).
                                // The codes gather in one vector, each parity in its byte of the 16-bit pairs: kept as
                                // two vectors picked by parity, they went through the stack and were interleaved byte
                                // by byte (saturation 4.4 → 5.1 ms).
                                var pairs = SIMD8<UInt32>()
                                for parity in 0..<2 {
                                    let result = Self.blend(Kind.self, parity == 0 ? even : odd, gain, chroma, parity == 0 ? terms.0 : terms.1,
                                                            parity == 0 ? weights.0 : weights.1)
                                    sum = sum + result
                                    pairs |= Self.lumaCodes(result, toLuma, outOffset, inByte: parity)
                                }
                                Self.storePairs(pairs, at: pointer)
                            }
                            let r = sum.r * meanScale, g = sum.g * meanScale, b = sum.b * meanScale
                            let y = (r * w.red).addingProduct(g, w.green).addingProduct(b, w.blue)
                            Layout.store(roundedBytes((b - y) * toCb + 128), roundedBytes((r - y) * toCr + 128), cbRow, crRow, at: cx)
                            cx += 8
                        }
                    }
                }
            }
        }
    }
}

/// The stage of a blend filter whose layer is not fused as a colour transform: I420 and NV12 frames through
/// `BlendYUVKernel` in place (into a pool buffer when the frame is shared), every other format through
/// `RGBAProcessor` with `BlendRows` (RGBA in place, BGRA a row at a time, gray as RGBA).
///
/// ```swift
/// let stage = BlendProcessor(name: "saturation-blend", rows: BlendRows(mode: .saturation, opacity: 1, layer: .color(SIMD3(1, 0.5, 0))), slices: slices)
/// ```
final class BlendProcessor: VideoProcessor {
    let name: String
    let rows: BlendRows
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var yuv: BlendYUVKernel?
    private var pool: BufferPool?
    private var rgba: RGBAProcessor<BlendRows>?

    init(name: String, rows: BlendRows, slices: SliceRunner) {
        self.name = name
        self.rows = rows
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        release()
        configured = input
        guard input.pixelFormat.isYUV else {
            let processor = RGBAProcessor(name: name, kernel: rows, slices: slices)
            rgba = processor
            return try processor.configure(for: input)
        }
        yuv = BlendYUVKernel(rows: rows, width: input.width, height: input.height)
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        if let rgba { return try rgba.process(frame) }
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let yuv else { return frame }
        var frame = frame
        let (width, height, interleaved, coding, slices) = (frame.width, frame.height, frame.format == .nv12, YUVCoding(frame.color), self.slices)
        frame.withMutablePlanes(pool: pool) { planes in
            yuv.apply(to: planes, coding: coding, interleaved: interleaved, width: width, height: height, slices: slices)
        }
        return frame
    }

    func release() {
        configured = nil
        yuv = nil
        pool = nil
        rgba?.release()
        rgba = nil
    }
}
