#if arch(x86_64) && VFX_HASWELL
import VFXFiltersAVX512
#endif
import VFXCore

/// A run of colour matrices, smooth per-channel curves and the step functions the lanes can evaluate as defined
/// (`sepia`, `color-matrix`, `sepia,hue,gamma`, `gamma`, `tone-curve`, `sepia,hue,gamma`, `posterize`,
/// `solarize`, `maximum-component`…) applied to each pixel of an I420/NV12 frame in 16-bit fixed point, 16 blocks
/// (2 rows × 32 pixels) per step of the loop, with no scratch memory.
///
/// The definition is `ColorRunYUVKernel`'s: per pixel, R'G'B' from its luma and its block's chroma through the first
/// matrix (applied to the unclipped R'G'B'; the identity when the run starts with another step), clamped; then each
/// further step clamped: a matrix `clamp(M·rgb + offset)`, a curve on each channel, or a `ColorTransform.Piecewise`
/// function; then the output luma, and each block's chroma from the mean of its four output R'G'B' values.
/// Consecutive matrices are multiplied into one when the first keeps the unit cube inside itself. At most two steps
/// follow the first matrix.
/// Per-plane transforms before and after the run (`head`, `tail`: `FusedColorProcessor.planarEnds`) are applied in the
/// same loop with `PlanarYUVFixedPoint`'s arithmetic: the head on the codes read, the tail on the output codes once
/// rounded, so that the pass equals the three parts applied one after the other, byte for byte. Without a vignette,
/// a tail whose clamps are only the final one to 0…255 is instead part of the conversion back to codes (`composing`,
/// `Conversion`): one rounding for the whole run, and no ends in the loop.
///
/// Arithmetic on each 16-bit lane (`Lanes16`):
/// - R'G'B' in Q14 (1 = 16384), clamped to 0…16383. A value enters a product shifted left once (Q15) against a
///   coefficient in Q14 through a rounding high multiply (`vpmulhrsw`), so products stay in Q14 and coefficients up to
///   ±2 fit.
/// - The first matrix: per block `K = k + mulhrs(Cb'·2^s, fCb) + mulhrs(Cr'·2^s, fCr)` (Cb' = Cb − 128), per pixel
///   `clamp(K + mulhrs(Y·2^t, g))`, s and t the largest shifts (≤ 8, ≤ 7) for which the coefficients fit 16 bits.
/// - A curve: eight cubic pieces, one per eighth of 0…1 (`CurvePieces16`, within 0.125 code of the curve); a value's
///   top 3 bits pick its piece's four coefficients with a byte shuffle (`vpshufb`: the 8 coefficients of a kind fill
///   16 bytes), the other 12 bits are `t` for three Horner steps.
/// - Quantizing to `levels` (`posterize`): the level n = round(v·(levels − 1)) by one rounding high multiply of the Q15
///   value by levels − 1 (halves round up, as the definition's do), then n·2^s by a second one with a factor of
///   2^(29 − s)/(levels − 1), s the largest shift with (levels − 1)·2^s < 2^15: the level's value in Q14 within 1.5 of
///   16384 (0.025 code), clamped. A value within the conversion's rounding of a level boundary may take the next level.
/// - Inverting above a threshold (`solarize`): a compare of the Q15 value with ⌊threshold·2^15⌋ (exact on Q15 values)
///   and a select of 2^15 − v.
/// - The largest or smallest channel (`maximum-component`, `minimum-component`): two lane maxima or minima, written to
///   all three channels.
/// - Output luma and chroma in Q7 codes (Q6 or Q5 for a composed tail whose gains need it), rounded by adding half and
///   shifting right; block means by `vpavgw`; stores saturate to 0…255 (`vpackuswb`).
/// Sums saturate; `init` checks that no saturated sum can change a clamped result, and returns nil for a matrix
/// with gains of 2 or more, a curve the pieces cannot follow within 0.125 code (a kink, a steep start: `gamma` under
/// 0.95), a luma curve or a general function (other than the largest or smallest channel); `ColorRunYUVKernel` or the 3D
/// table takes those. A product rounds to 2⁻¹⁵ of full scale (0.008 codes), so an output is within about 0.1 code of
/// its exact value before the final rounding, 0.25 with a curve.
///
/// A run that is the first matrix alone (`sepia`, `color-matrix`, `false-color`: no further step, no vignette, no head;
/// a tail that composes is part of its maps) is, wherever that matrix's clamp does not act, one affine map from a
/// pixel's luma and its block's chroma to each output code (`AffineCodes`): one product per output luma code instead of
/// three channels and their weights. Each 16 blocks inside the row are checked first, in the clamp's own arithmetic:
/// the three channels at the darkest and the brightest luma of each block (each channel is monotonic in luma). Blocks
/// where a channel leaves 0…1 anywhere take the per-channel path; on `testsrc2` and natural video that is a sixth to a
/// quarter of them. Both paths are within about 0.1 code of
/// the exact value before the final rounding.
///
/// ```swift
/// let kernel = FixedPointRunKernel([sepia, hue, gamma], coding: YUVCoding(.bt709), chromaInterleaved: false)
/// kernel?.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class FixedPointRunKernel: VignetteFusing {
    /// The first matrix folded into the conversion from Y'CbCr: per channel (red, green, blue) the block term's
    /// constant and chroma factors, and the luma factor.
    private let constant: SIMD3<Int16>, fromCb: SIMD3<Int16>, fromCr: SIMD3<Int16>, fromY: SIMD3<Int16>
    /// The shifts of centred chroma and of luma codes before their products.
    private let chromaShift: Int, lumaShift: Int
    /// Each further step as 12 vectors: a matrix's 9 coefficients row by row then its 3 offsets, splatted; a curve's
    /// pieces, the t³, t², t and 1 coefficients of red, then of green, then of blue; for quantizing, levels − 1 and the
    /// factor; for inverting, the threshold in Q15 (all splatted).
    private let steps: UnsafeMutablePointer<Lanes16.Vector>
    private let stepCount: Int
    /// What step 0 and step 1 are, and the shift of a quantizing step's level.
    private let kinds: (StepKind, StepKind)
    private let shifts: (Int, Int)

    /// The kinds of further step.
    private enum StepKind { case matrix, curves, quantized, invertedAbove, largest, smallest }
    /// The conversion of output R'G'B' to codes, and the same with the tail composed into it (nil: no tail, a head, or a
    /// tail that does not compose; see `composing`).
    private let conversion: Conversion, composedConversion: Conversion?
    let chromaInterleaved: Bool
    /// A vignette applied as the pass converts back to Y'CbCr (nil: none).
    private(set) var vignette: VignetteDarkness?
    /// The run as one affine map per output code where the first matrix's clamp cannot act (nil: steps follow it, or
    /// the coefficients do not fit).
    let affine: AffineCodes?
    /// The per-plane transforms before and after the run (`FusedColorProcessor.planarEnds`), on the codes it reads and
    /// on the codes it writes, in the same loop; made for separate chroma vectors (`interleaved: false`) on both layouts.
    let head: PlanarYUVFixedPoint?, tail: PlanarYUVFixedPoint?

    init?(_ run: [ColorTransform], coding: YUVCoding, chromaInterleaved: Bool, head: PlanarYUVFixedPoint? = nil,
          tail: PlanarYUVFixedPoint? = nil) {
        (self.head, self.tail) = (head, tail)
        let (firstMatrix, rest) = ColorMatrix.leading(run)
        enum Step { case matrix(ColorMatrix), curves(CurvePieces16, CurvePieces16, CurvePieces16), piecewise(ColorTransform.Piecewise) }
        var later: [Step] = []
        for transform in rest {
            if let piecewise = transform.piecewise {
                switch piecewise {
                case .quantized(let levels): guard (2...256).contains(levels) else { return nil }
                case .invertedAbove(let threshold): guard threshold >= 0 else { return nil }
                case .largestChannel, .smallestChannel: break
                }
                later.append(.piecewise(piecewise))
                continue
            }
            switch transform.kind {
            case .affine(let matrix):
                if case .matrix(let last) = later.last, last.keepsUnitCube {
                    later[later.count - 1] = .matrix(matrix.after(last))
                } else {
                    later.append(.matrix(matrix))
                }
            case .perChannel:
                let apply = transform.apply
                guard let red = CurvePieces16(fitting: { apply(SIMD3(repeating: $0)).x }),
                      let green = CurvePieces16(fitting: { apply(SIMD3(repeating: $0)).y }),
                      let blue = CurvePieces16(fitting: { apply(SIMD3(repeating: $0)).z }) else { return nil }
                later.append(.curves(red, green, blue))
            case .luma, .general, .fromLuma:
                return nil
            }
        }
        let first = AffineYUVKernel(matrix: firstMatrix, coding: coding, chromaInterleaved: chromaInterleaved)
        // Largest shifts for which every factor fits: factor·2^(29 − shift) ≤ 32767.
        func magnitude(_ v: SIMD3<Float>) -> SIMD3<Float> { SIMD3(abs(v.x), abs(v.y), abs(v.z)) }
        func shift(for factors: SIMD3<Float>, most: Int) -> Int? {
            let largest = Double(max(magnitude(factors).max(), 1e-9))
            return (0...most).reversed().first { largest * Double(1 << (29 - $0)) <= 32767 }
        }
        guard let lumaShift = shift(for: first.lumaGain, most: 7),
              let chromaShift = shift(for: SIMD3(magnitude(first.fromCb).max(), magnitude(first.fromCr).max(), 0), most: 8) else { return nil }
        // The block term with chroma centred on 128. Sums saturate at ±2 (Q14); a saturated partial sum still clamps
        // right when what is left to add cannot pull ±2 back across 0…1: after the chroma terms, the constant and the
        // luma term (range lo…hi); after the constant, the luma term.
        let centred = first.constant + 128 * (first.fromCb + first.fromCr)
        for c in 0..<3 {
            let luma = 255 * first.lumaGain[c]
            let (lo, hi) = (min(0, luma), max(0, luma))
            guard abs(centred[c]) < 1.99, hi < 1.99, lo >= -1, centred[c] + lo >= -1, centred[c] + hi <= 2 else { return nil }
        }
        func fixed(_ values: SIMD3<Float>, _ scale: Double) -> SIMD3<Int16> {
            SIMD3((0..<3).map { Int16((Double(values[$0]) * scale).rounded()) })
        }
        constant = fixed(centred, 16384)
        fromCb = fixed(first.fromCb, Double(1 << (29 - chromaShift)))
        fromCr = fixed(first.fromCr, Double(1 << (29 - chromaShift)))
        fromY = fixed(first.lumaGain, Double(1 << (29 - lumaShift)))
        (self.chromaShift, self.lumaShift) = (chromaShift, lumaShift)
        // Further matrices: each row's coefficients and offset within ±2 together (no sum saturates).
        for case .matrix(let matrix) in later {
            for row in [matrix.red, matrix.green, matrix.blue].enumerated() {
                guard magnitude(row.element).sum() + abs(matrix.offset[row.offset]) < 1.99 else { return nil }
            }
        }
        // More than two further steps (rare: each pair of matrices that can be multiplied was) are left to the Float kernels.
        guard later.count <= 2 else { return nil }
        stepCount = later.count
        steps = .allocate(capacity: max(12 * later.count, 1))
        var kinds = [StepKind.matrix, .matrix], shifts = [0, 0]
        for (index, step) in later.enumerated() {
            var vectors: [Lanes16.Vector] = []
            switch step {
            case .matrix(let matrix):
                let values = [matrix.red, matrix.green, matrix.blue].flatMap { [$0.x, $0.y, $0.z] } + [matrix.offset.x, matrix.offset.y, matrix.offset.z]
                vectors = values.map { Lanes16.splat(Int16((Double($0) * 16384).rounded())) }
            case .curves(let red, let green, let blue):
                vectors = [red, green, blue].flatMap(\.tables)
                kinds[index] = .curves
            case .piecewise(.quantized(let levels)):
                // n·2^shift stays under 2^15; factor·(levels − 1)·2^shift ≈ 2^29 (2^15 itself does not fit: 32767).
                let shift = (0...14).last { (levels - 1) << $0 <= 32767 } ?? 0
                let factor = min(32767, (Double(1 << (29 - shift)) / Double(levels - 1)).rounded())
                vectors = [Lanes16.splat(Int16(levels - 1)), Lanes16.splat(Int16(factor))]
                (kinds[index], shifts[index]) = (.quantized, shift)
            case .piecewise(.invertedAbove(let threshold)):
                vectors = [Lanes16.splat(Int16(min(32767, (Double(threshold) * 32768).rounded(.down))))]
                kinds[index] = .invertedAbove
            case .piecewise(.largestChannel):
                kinds[index] = .largest
            case .piecewise(.smallestChannel):
                kinds[index] = .smallest
            }
            vectors += Array(repeating: Lanes16.splat(0), count: 12 - vectors.count)
            (steps + 12 * index).initialize(from: vectors, count: 12)
        }
        (self.kinds, self.shifts) = ((kinds[0], kinds[1]), (shifts[0], shifts[1]))
        // Y = offset + scale·(w·rgb); Cb = 128 + (b − y)·toCb; Cr = 128 + (r − y)·toCr; in codes.
        let w = SIMD3(coding.weights.red, coding.weights.green, coding.weights.blue)
        let cbScale = coding.chromaScale / coding.blueFromPb, crScale = coding.chromaScale / coding.redFromPr
        let (toLuma, toBlue, toRed) = (w * coding.lumaScale, (SIMD3(0, 0, 1) - w) * cbScale, (SIMD3(1, 0, 0) - w) * crScale)
        let forms = (luma: SIMD4(toLuma, coding.lumaOffset), cb: SIMD4(toBlue, 128), cr: SIMD4(toRed, 128))
        conversion = Conversion(forms, shift: 7)
        let composedTail = head == nil ? tail.map(\.definition) : nil
        composedConversion = composedTail.flatMap { Self.composing($0, into: forms) }.flatMap { Conversion(fitting: $0) }
        self.chromaInterleaved = chromaInterleaved
        // Output codes as affine maps of (luma, Cb − 128, Cr − 128): R'G'B' = centred + fromCb·Cb' + fromCr·Cr' + gain·Y.
        func map(_ to: SIMD3<Float>, _ offset: Float) -> SIMD4<Float> {
            SIMD4((to * first.lumaGain).sum(), (to * first.fromCb).sum(), (to * first.fromCr).sum(), offset + (to * centred).sum())
        }
        let maps = (luma: map(toLuma, coding.lumaOffset), cb: map(toBlue, 128), cr: map(toRed, 128))
        if !later.isEmpty || head != nil {
            affine = nil
        } else if let composedTail {
            affine = Self.composing(composedTail, into: maps).flatMap { AffineCodes(luma: $0.luma, cb: $0.cb, cr: $0.cr) }
        } else {
            affine = AffineCodes(luma: maps.luma, cb: maps.cb, cr: maps.cr)
        }
    }

    /// Whether the tail is part of the conversion back to codes (and of the affine maps), so that without a vignette the
    /// loop has no ends: what `FusedColorProcessor` runs a run with such a tail in, instead of bands.
    var composesTail: Bool { composedConversion != nil }

    /// Output codes as affine forms (three factors and a constant, in codes: of R'G'B', or of a pixel's luma and its
    /// block's centred chroma) followed by the tail: luma `gain·Y + offset`, chroma its step on (Cb − 128, Cr − 128).
    /// Nil unless the tail's clamps are only the final one to 0…255 (luma bounds 0…255, at most one chroma step, with
    /// full bounds): the codes the run computes lie within 16…240 (its R'G'B' is clamped, or no clamp acts on the
    /// affine path), so no clamp acts before the tail's, and the stores saturate to 0…255.
    ///
    /// `sepia,hue,color-controls:contrast=1.1`: Y → 1.1·(a·Y + b·Cb' + c·Cr' + d) + o; Cb, Cr turned by the hue.
    private static func composing(_ tail: PlanarYUVFixedPoint.Definition, into forms: (luma: SIMD4<Float>, cb: SIMD4<Float>, cr: SIMD4<Float>))
        -> (luma: SIMD4<Float>, cb: SIMD4<Float>, cr: SIMD4<Float>)? {
        guard tail.low == 0, tail.high == 255, tail.chroma.count <= 1,
              tail.chroma.allSatisfy({ $0.bounds == PlanarYUVKernel.ChromaStep.fullBounds }) else { return nil }
        let constant = SIMD4<Float>(0, 0, 0, 1)
        let luma = tail.gain * forms.luma + tail.offset * constant
        guard let step = tail.chroma.first else { return (luma, forms.cb, forms.cr) }
        let (cb, cr) = (forms.cb - 128 * constant, forms.cr - 128 * constant)
        return (luma, step.cbFromCb * cb + step.cbFromCr * cr + step.cbOffset * constant,
                step.crFromCb * cb + step.crFromCr * cr + step.crOffset * constant)
    }

    /// Output codes from Q15 R'G'B' in fixed point (`codes` in the loop): per output (luma, Cb, Cr) the three weights
    /// and the offset with the rounding half, in Q(shift) codes. The plain conversion is Q7; a vignette or a tail in
    /// the loop works on it in Q7.
    struct Conversion {
        let toY: SIMD3<Int16>, toCb: SIMD3<Int16>, toCr: SIMD3<Int16>
        let lumaOffset: Int16, cbOffset: Int16, crOffset: Int16
        let shift: Int

        init(_ forms: (luma: SIMD4<Float>, cb: SIMD4<Float>, cr: SIMD4<Float>), shift: Int) {
            let scale = Float(1 << shift)
            func fixed(_ form: SIMD4<Float>) -> SIMD3<Int16> { SIMD3((0..<3).map { Int16((form[$0] * scale).rounded()) }) }
            func offset(_ form: SIMD4<Float>) -> Int16 { Int16((form.w * scale).rounded()) + Int16(1 << (shift - 1)) }
            (toY, toCb, toCr) = (fixed(forms.luma), fixed(forms.cb), fixed(forms.cr))
            (lumaOffset, cbOffset, crOffset) = (offset(forms.luma), offset(forms.cb), offset(forms.cr))
            self.shift = shift
        }

        /// In the most fractional bits (7, 6 or 5) with which no sum can saturate: with R'G'B' in 0…1 each partial sum
        /// lies between the totals of its negative and of its positive weights, and the offset comes last. Nil when none.
        init?(fitting forms: (luma: SIMD4<Float>, cb: SIMD4<Float>, cr: SIMD4<Float>)) {
            func fits(_ shift: Int) -> Bool {
                [forms.luma, forms.cb, forms.cr].allSatisfy { form in
                    let scale = Float(1 << shift)
                    let weights = SIMD3(form.x, form.y, form.z) * scale, offset = form.w * scale + scale / 2
                    let low = weights.replacing(with: 0, where: weights .> 0).sum()
                    let high = weights.replacing(with: 0, where: weights .< 0).sum()
                    return min(low, low + offset) >= -32767 && max(high, high + offset) <= 32766
                }
            }
            guard let shift = (5...7).reversed().first(where: fits) else { return nil }
            self.init(forms, shift: shift)
        }
    }

    /// Output codes as affine maps of a pixel's luma code and its block's centred chroma codes, in fixed point: per output
    /// `(d + mulhrs(Cb'·2⁸, b) + mulhrs(Cr'·2⁸, c) + mulhrs(Y·2⁷, a)) >> shift`, the factors in Q(shift + 8) (luma) and
    /// Q(shift + 7) (chroma), the constant in Q(shift) with the rounding half; a block's chroma takes the sum of its
    /// four luma codes times 2⁵ (their mean times 2⁷) for `Y·2⁷`. `shift` is the largest of 5…7 for which no sum can
    /// saturate; nil when none is.
    struct AffineCodes {
        /// Per output (luma, Cb, Cr): a, b, c and d.
        let luma: SIMD4<Int16>, cb: SIMD4<Int16>, cr: SIMD4<Int16>
        let shift: Int

        init?(luma: SIMD4<Float>, cb: SIMD4<Float>, cr: SIMD4<Float>) {
            func fits(_ m: SIMD4<Float>, _ p: Int) -> Bool {
                let scale = Float(1 << p)
                return abs(m.x) * scale * 256 <= 32767 && max(abs(m.y), abs(m.z)) * scale * 128 <= 32767
                    && (abs(m.w) + 255 * abs(m.x) + 128 * (abs(m.y) + abs(m.z)) + 1) * scale <= 32767
            }
            guard let p = (5...7).reversed().first(where: { p in [luma, cb, cr].allSatisfy { fits($0, p) } }) else { return nil }
            func fixed(_ m: SIMD4<Float>) -> SIMD4<Int16> {
                let scale = Float(1 << p)
                return SIMD4(Int16((m.x * scale * 256).rounded()), Int16((m.y * scale * 128).rounded()),
                             Int16((m.z * scale * 128).rounded()), Int16((m.w * scale).rounded()) + Int16(1 << (p - 1)))
            }
            (self.luma, self.cb, self.cr, shift) = (fixed(luma), fixed(cb), fixed(cr), p)
        }
    }

    deinit { steps.deallocate() }

    /// Makes the pass end with `vignette` (configured for the same frame format): luma scaled toward black and chroma
    /// toward neutral by the vignette's factor at each sample, before rounding. False (and no vignette) when its radius
    /// is too large for the fixed point (over 0.86); the vignette then runs after the pass.
    func fuse(_ vignette: VignetteProcessor, width: Int, height: Int) -> Bool {
        self.vignette = vignette.isActive ? VignetteDarkness(vignette, width: width, height: height) : nil
        return self.vignette != nil || !vignette.isActive
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        apply(to: planes, width: width, height: height, slices: slices, wide: FilterKernels.usesAVX512)
    }

    /// The pass, with `wide: true` through `FixedPointRun512` (32 blocks per step in AVX-512 registers, the same bytes)
    /// where the run is the first matrix alone with no vignette and no per-plane ends in the loop; `wide: false` keeps
    /// to the 16-block loop (for comparisons). Pass `wide: true` only where `FilterKernels.usesAVX512` is.
    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner, wide: Bool) {
        #if arch(x86_64) && VFX_HASWELL
        if wide, let coefficients = wideCoefficients {
            let luma = planes[0], cbPlane = planes[1], crPlane = planes[planes.count - 1]
            let (chromaWidth, interleaved) = ((width + 1) / 2, chromaInterleaved)
            slices.run(rows: (height + 1) / 2) { chromaRows in
                for cy in chromaRows {
                    let (topY, bottomY) = blockRows(of: luma, chromaRow: cy, width: width, height: height)
                    FixedPointRun512.blocks(coefficients, top: luma.row(topY), bottom: luma.row(bottomY), cbRow: cbPlane.row(cy),
                                            crRow: crPlane.row(cy), count: chromaWidth, interleaved: interleaved)
                }
            }
            return
        }
        #endif
        if let vignette {
            apply(planes, width: width, height: height, slices: slices, darkness: vignette)
        } else {
            apply(planes, width: width, height: height, slices: slices, darkness: NoDarkness())
        }
    }

    /// Whether `apply(…, wide: true)` runs this kernel through `FixedPointRun512` (false where that loop is not built).
    var runsWide: Bool {
        #if arch(x86_64) && VFX_HASWELL
        return wideCoefficients != nil
        #else
        return false
        #endif
    }

    #if arch(x86_64) && VFX_HASWELL
    /// The coefficients `FixedPointRun512` takes, for a run it covers: the first matrix alone, no vignette, and no ends in
    /// the loop (none, or a tail composed into the conversion); nil otherwise.
    private var wideCoefficients: FixedPointRun512.Coefficients? {
        guard stepCount == 0, vignette == nil, let conversion = composedConversion ?? (head == nil && tail == nil ? conversion : nil)
        else { return nil }
        func triple(_ v: SIMD3<Int16>) -> (Int16, Int16, Int16) { (v.x, v.y, v.z) }
        func quad(_ v: SIMD4<Int16>) -> (Int16, Int16, Int16, Int16) { (v.x, v.y, v.z, v.w) }
        return FixedPointRun512.Coefficients(
            constant: triple(constant), fromCb: triple(fromCb), fromCr: triple(fromCr), fromY: triple(fromY),
            chromaShift: chromaShift, lumaShift: lumaShift, toY: triple(conversion.toY), toCb: triple(conversion.toCb),
            toCr: triple(conversion.toCr), lumaOffset: conversion.lumaOffset, cbOffset: conversion.cbOffset,
            crOffset: conversion.crOffset, conversionShift: conversion.shift,
            affine: affine.map { (quad($0.luma), quad($0.cb), quad($0.cr), $0.shift) })
    }
    #endif

    private func apply<Darkness: BlockDarkness>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner, darkness: Darkness) {
        // Without a vignette a tail that composes is part of the conversion (and of the affine maps): no ends in the loop.
        if Darkness.self == NoDarkness.self, let composedConversion {
            return apply(planes, width: width, height: height, slices: slices, darkness: darkness, ends: NoPlanarEnds(),
                         conversion: composedConversion)
        }
        guard head != nil || tail != nil else {
            return apply(planes, width: width, height: height, slices: slices, darkness: darkness, ends: NoPlanarEnds(), conversion: conversion)
        }
        (head?.chroma ?? []).withUnsafeBufferPointer { headChroma in
            (tail?.chroma ?? []).withUnsafeBufferPointer { tailChroma in
                let ends = PlanarEndMaps(head: head?.luma, headChroma: headChroma, tail: tail?.luma, tailChroma: tailChroma)
                apply(planes, width: width, height: height, slices: slices, darkness: darkness, ends: ends, conversion: conversion)
            }
        }
    }

    private func apply<Darkness: BlockDarkness, Ends: PlanarEnds>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner,
                                                                  darkness: Darkness, ends: Ends, conversion: Conversion) {
        let (w, h, d, e, c) = (width, height, darkness, ends, conversion)
        switch (chromaInterleaved, stepCount) {
        case (false, 0): run(planes, width: w, height: h, slices: slices, layout: SeparateChroma.self, steps: NoStep.self, darkness: d, ends: e, conversion: c)
        case (false, 1): run(planes, width: w, height: h, slices: slices, layout: SeparateChroma.self, steps: OneStep.self, darkness: d, ends: e, conversion: c)
        case (false, _): run(planes, width: w, height: h, slices: slices, layout: SeparateChroma.self, steps: TwoSteps.self, darkness: d, ends: e, conversion: c)
        case (true, 0): run(planes, width: w, height: h, slices: slices, layout: InterleavedChroma.self, steps: NoStep.self, darkness: d, ends: e, conversion: c)
        case (true, 1): run(planes, width: w, height: h, slices: slices, layout: InterleavedChroma.self, steps: OneStep.self, darkness: d, ends: e, conversion: c)
        case (true, _): run(planes, width: w, height: h, slices: slices, layout: InterleavedChroma.self, steps: TwoSteps.self, darkness: d, ends: e, conversion: c)
        }
    }

    /// The number of steps after the first matrix, as a type, so the loop over them is unrolled.
    private protocol StepCount { static var count: Int { get } }
    private enum NoStep: StepCount { static var count: Int { 0 } }
    private enum OneStep: StepCount { static var count: Int { 1 } }
    private enum TwoSteps: StepCount { static var count: Int { 2 } }

    private func run<Layout: ChromaLayout, Steps: StepCount, Darkness: BlockDarkness, Ends: PlanarEnds>(
        _ planes: [Plane], width: Int, height: Int, slices: SliceRunner, layout: Layout.Type, steps stepsType: Steps.Type,
        darkness: Darkness, ends: Ends, conversion: Conversion) {
        typealias L = Lanes16
        let luma = planes[0], cbPlane = planes[1], crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let (steps, kinds, shifts) = (self.steps, self.kinds, self.shifts)
        let (chromaShift, lumaShift) = (self.chromaShift, self.lumaShift)
        let constant = (L.splat(self.constant.x), L.splat(self.constant.y), L.splat(self.constant.z))
        let fromCb = (L.splat(self.fromCb.x), L.splat(self.fromCb.y), L.splat(self.fromCb.z))
        let fromCr = (L.splat(self.fromCr.x), L.splat(self.fromCr.y), L.splat(self.fromCr.z))
        let fromY = (L.splat(self.fromY.x), L.splat(self.fromY.y), L.splat(self.fromY.z))
        let toY = (L.splat(conversion.toY.x), L.splat(conversion.toY.y), L.splat(conversion.toY.z))
        let toCb = (L.splat(conversion.toCb.x), L.splat(conversion.toCb.y), L.splat(conversion.toCb.z))
        let toCr = (L.splat(conversion.toCr.x), L.splat(conversion.toCr.y), L.splat(conversion.toCr.z))
        let (lumaOffset, cbOffset, crOffset) = (L.splat(conversion.lumaOffset), L.splat(conversion.cbOffset), L.splat(conversion.crOffset))
        let (minus128, conversionShift) = (L.splat(-128), conversion.shift)
        let (zero, one, byte) = (L.splat(0), L.splat(16383), L.splat(255))
        let outsideUnit = L.splat(Int16(bitPattern: 0xC000))
        let (lumaCentre, chromaCentre) = (L.splat(conversion.lumaOffset - 64), L.splat(128 * 128))

        /// One matrix row on Q15 inputs, plus its offset, clamped (Q14).
        @inline(__always) func matrixRow(_ r: L.Vector, _ g: L.Vector, _ b: L.Vector, _ c: UnsafeMutablePointer<L.Vector>, _ k: Int) -> L.Vector {
            let sum = L.addSaturating(L.addSaturating(L.multiplyHighRounded(r, c[3 * k]), L.multiplyHighRounded(g, c[3 * k + 1])),
                                      L.addSaturating(L.multiplyHighRounded(b, c[3 * k + 2]), c[9 + k]))
            return L.clamp(sum, zero, one)
        }
        /// Red's, green's or blue's (`k`) curve of a curve step on Q15 values, clamped (Q15).
        @inline(__always) func curve(_ v: L.Vector, _ c: UnsafeMutablePointer<L.Vector>, _ k: Int) -> L.Vector {
            // Piece p = v >> 12 picks bytes 2p and 2p + 1 of each 16-byte table; t = the 12 bits below it, in Q15.
            let control = L.addSaturating(L.multiplyLow(L.shiftRightLogical(v, 12), 514), L.splat(256))
            let t = L.shiftLeft(L.and(v, L.splat(4095)), 3)
            var sum = L.addSaturating(L.multiplyHighRounded(L.shuffleBytes(c[4 * k], control), t), L.shuffleBytes(c[4 * k + 1], control))
            sum = L.addSaturating(L.multiplyHighRounded(sum, t), L.shuffleBytes(c[4 * k + 2], control))
            sum = L.addSaturating(L.multiplyHighRounded(sum, t), L.shuffleBytes(c[4 * k + 3], control))
            return L.shiftLeft(L.clamp(sum, zero, one), 1)
        }
        /// A quantizing step on one channel's Q15 values (Q15 out): the level, then its value.
        @inline(__always) func quantized(_ v: L.Vector, _ c: UnsafeMutablePointer<L.Vector>, _ shift: Int) -> L.Vector {
            let level = L.multiplyHighRounded(v, c[0])
            return L.shiftLeft(L.minimum(L.multiplyHighRounded(L.shiftLeft(level, shift), c[1]), one), 1)
        }
        /// An inverting step on one channel's Q15 values: 2^15 − v where v is above the threshold (v ≥ 1 there, so the
        /// wrapping difference is the value).
        @inline(__always) func invertedAbove(_ v: L.Vector, _ c: UnsafeMutablePointer<L.Vector>) -> L.Vector {
            L.select(L.greaterThan(v, c[0]), L.subtract(L.splat(Int16.min), v), v)
        }
        /// The output R'G'B' (Q15) of 16 pixels with luma codes `y` whose blocks' terms are `k`.
        @inline(__always) func pixels(_ y: L.Vector, _ k: (L.Vector, L.Vector, L.Vector)) -> (L.Vector, L.Vector, L.Vector) {
            let scaled = L.shiftLeft(y, lumaShift)
            var r = L.shiftLeft(L.clamp(L.addSaturating(k.0, L.multiplyHighRounded(scaled, fromY.0)), zero, one), 1)
            var g = L.shiftLeft(L.clamp(L.addSaturating(k.1, L.multiplyHighRounded(scaled, fromY.1)), zero, one), 1)
            var b = L.shiftLeft(L.clamp(L.addSaturating(k.2, L.multiplyHighRounded(scaled, fromY.2)), zero, one), 1)
            for index in 0..<Steps.count {
                let c = steps + 12 * index
                switch index == 0 ? kinds.0 : kinds.1 {
                case .matrix:
                    (r, g, b) = (L.shiftLeft(matrixRow(r, g, b, c, 0), 1), L.shiftLeft(matrixRow(r, g, b, c, 1), 1),
                                 L.shiftLeft(matrixRow(r, g, b, c, 2), 1))
                case .curves:
                    (r, g, b) = (curve(r, c, 0), curve(g, c, 1), curve(b, c, 2))
                case .quantized:
                    let shift = index == 0 ? shifts.0 : shifts.1
                    (r, g, b) = (quantized(r, c, shift), quantized(g, c, shift), quantized(b, c, shift))
                case .invertedAbove:
                    (r, g, b) = (invertedAbove(r, c), invertedAbove(g, c), invertedAbove(b, c))
                case .largest:
                    let largest = L.maximum(L.maximum(r, g), b)
                    (r, g, b) = (largest, largest, largest)
                case .smallest:
                    let smallest = L.minimum(L.minimum(r, g), b)
                    (r, g, b) = (smallest, smallest, smallest)
                }
            }
            return (r, g, b)
        }
        /// Whole codes: the weighted sum in Q(shift) of the conversion (Q7 with a vignette), less its share `dark` (Q15)
        /// for the vignette, plus the offset (which holds the rounding half), shifted right.
        @inline(__always) func codes(_ r: L.Vector, _ g: L.Vector, _ b: L.Vector, _ to: (L.Vector, L.Vector, L.Vector),
                                     _ offset: L.Vector, dark: L.Vector?) -> L.Vector {
            var sum = L.addSaturating(L.addSaturating(L.multiplyHighRounded(r, to.0), L.multiplyHighRounded(g, to.1)),
                                      L.multiplyHighRounded(b, to.2))
            if let dark { sum = L.addSaturating(sum, L.negate(L.multiplyHighRounded(sum, dark))) }
            return L.shiftRight(L.addSaturating(sum, offset), conversionShift)
        }
        /// Whole codes after the tail (each clamped to 0…255 first, as a stored byte is), then darkened by `dark` toward
        /// `centre` (Q7; luma's offset, or 128) as `codes` darkens, and rounded again.
        @inline(__always) func afterTail(_ codes: L.Vector, centre: L.Vector, offset: L.Vector, dark: L.Vector?,
                                         _ map: (L.Vector) -> L.Vector) -> L.Vector {
            let mapped = map(L.clamp(codes, zero, byte))
            guard let dark else { return mapped }
            let sum = L.subtract(L.shiftLeft(mapped, 7), centre)
            return L.shiftRight(L.addSaturating(L.addSaturating(sum, L.negate(L.multiplyHighRounded(sum, dark))), offset), 7)
        }
        /// Output luma codes of 16 pixels.
        @inline(__always) func lumaCodes(_ p: (L.Vector, L.Vector, L.Vector), dark: L.Vector?) -> L.Vector {
            guard ends.hasTail else { return codes(p.0, p.1, p.2, toY, lumaOffset, dark: dark) }
            return afterTail(codes(p.0, p.1, p.2, toY, lumaOffset, dark: nil), centre: lumaCentre, offset: lumaOffset, dark: dark,
                             ends.tailLuma)
        }
        /// Output Cb and Cr codes of 16 blocks from their mean R'G'B'.
        @inline(__always) func chromaCodes(_ r: L.Vector, _ g: L.Vector, _ b: L.Vector, dark: L.Vector?) -> (L.Vector, L.Vector) {
            guard ends.hasTail else {
                return (codes(r, g, b, toCb, cbOffset, dark: dark), codes(r, g, b, toCr, crOffset, dark: dark))
            }
            let mapped = ends.tailChroma(L.clamp(codes(r, g, b, toCb, cbOffset, dark: nil), zero, byte),
                                         L.clamp(codes(r, g, b, toCr, crOffset, dark: nil), zero, byte))
            return (afterTail(mapped.0, centre: chromaCentre, offset: cbOffset, dark: dark, { $0 }),
                    afterTail(mapped.1, centre: chromaCentre, offset: crOffset, dark: dark, { $0 }))
        }

        // The affine path (`AffineCodes`): only for the first matrix alone (and a tail composed into it), no vignette.
        let affine = Steps.count == 0 && Darkness.self == NoDarkness.self ? self.affine : nil
        let (usesAffine, affineShift) = (affine != nil, affine?.shift ?? 0)
        func splatted(_ m: SIMD4<Int16>?) -> (L.Vector, L.Vector, L.Vector, L.Vector) {
            let m = m ?? SIMD4()
            return (L.splat(m.x), L.splat(m.y), L.splat(m.z), L.splat(m.w))
        }
        let (affineY, affineCb, affineCr) = (splatted(affine?.luma), splatted(affine?.cb), splatted(affine?.cr))

        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                // A last single row stands for both rows of its blocks (both loads read it before either store).
                let (topY, bottomY) = blockRows(of: luma, chromaRow: cy, width: width, height: height)
                let top = luma.row(topY), bottom = luma.row(bottomY)
                let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy)
                var cx = 0
                while cx < chromaWidth {
                    let (cbCodes, crCodes) = ends.headChroma(Layout.loadLanes(cbRow, crRow, at: cx))
                    let cb = L.shiftLeft(L.addSaturating(cbCodes, minus128), chromaShift)
                    let cr = L.shiftLeft(L.addSaturating(crCodes, minus128), chromaShift)
                    let k = (L.addSaturating(constant.0, L.addSaturating(L.multiplyHighRounded(cb, fromCb.0), L.multiplyHighRounded(cr, fromCr.0))),
                             L.addSaturating(constant.1, L.addSaturating(L.multiplyHighRounded(cb, fromCb.1), L.multiplyHighRounded(cr, fromCr.1))),
                             L.addSaturating(constant.2, L.addSaturating(L.multiplyHighRounded(cb, fromCb.2), L.multiplyHighRounded(cr, fromCr.2))))
                    let (upper, lower) = (L.load(top + 2 * cx), L.load(bottom + 2 * cx))
                    // Only 16 blocks inside the row: lanes past its end read padding, whose bytes must not decide the path.
                    if usesAffine && cx + 16 <= chromaWidth {
                        // Each channel at the darkest and at the brightest luma of each block, as the path below computes
                        // it before its clamp: all within 0…1 (Q14: 0…16383, bits 14 and 15 clear), so no clamp acts on
                        // any pixel of the 16 blocks (a channel is monotonic in luma: both ends inside, all inside).
                        let darkest = L.minimumBytes(upper, lower), brightest = L.maximumBytes(upper, lower)
                        let yMin = L.shiftLeft(L.minimum(L.lowBytes(darkest), L.highBytes(darkest)), lumaShift)
                        let yMax = L.shiftLeft(L.maximum(L.lowBytes(brightest), L.highBytes(brightest)), lumaShift)
                        @inline(__always) func ends(_ k: L.Vector, _ gain: L.Vector) -> L.Vector {
                            L.or(L.addSaturating(k, L.multiplyHighRounded(yMin, gain)), L.addSaturating(k, L.multiplyHighRounded(yMax, gain)))
                        }
                        if L.isZero(L.and(L.or(L.or(ends(k.0, fromY.0), ends(k.1, fromY.1)), ends(k.2, fromY.2)), outsideUnit)) {
                            let cbIn = L.shiftLeft(L.addSaturating(cbCodes, minus128), 8)
                            let crIn = L.shiftLeft(L.addSaturating(crCodes, minus128), 8)
                            @inline(__always) func blockTerm(_ m: (L.Vector, L.Vector, L.Vector, L.Vector)) -> L.Vector {
                                L.addSaturating(m.3, L.addSaturating(L.multiplyHighRounded(cbIn, m.1), L.multiplyHighRounded(crIn, m.2)))
                            }
                            /// Codes from a block term and luma codes times 2⁷, unclamped: the stores saturate them to 0…255.
                            @inline(__always) func codes(_ term: L.Vector, _ luma: L.Vector, _ a: L.Vector) -> L.Vector {
                                L.shiftRight(L.addSaturating(term, L.multiplyHighRounded(luma, a)), affineShift)
                            }
                            let kY = blockTerm(affineY)
                            let (upperEven, upperOdd) = (L.lowBytes(upper), L.highBytes(upper))
                            let (lowerEven, lowerOdd) = (L.lowBytes(lower), L.highBytes(lower))
                            L.store(L.joinBytesSaturating(codes(kY, L.shiftLeft(upperEven, 7), affineY.0),
                                                          codes(kY, L.shiftLeft(upperOdd, 7), affineY.0)), to: top + 2 * cx)
                            L.store(L.joinBytesSaturating(codes(kY, L.shiftLeft(lowerEven, 7), affineY.0),
                                                          codes(kY, L.shiftLeft(lowerOdd, 7), affineY.0)), to: bottom + 2 * cx)
                            let sum = L.shiftLeft(L.add(L.add(upperEven, upperOdd), L.add(lowerEven, lowerOdd)), 5)
                            Layout.storeLanes(codes(blockTerm(affineCb), sum, affineCb.0), codes(blockTerm(affineCr), sum, affineCr.0),
                                              cbRow, crRow, at: cx)
                            cx += 16
                            continue
                        }
                    }
                    // Both rows' output luma stored, and each row's mean of its two columns.
                    @inline(__always) func row(_ pairs: L.Vector, to target: UnsafeMutablePointer<UInt8>, y: Int) -> (L.Vector, L.Vector, L.Vector) {
                        let even = pixels(ends.headLuma(L.lowBytes(pairs)), k), odd = pixels(ends.headLuma(L.highBytes(pairs)), k)
                        let (evenDark, oddDark) = darkness.luma(row: y, block: cx)
                        L.store(L.joinBytesSaturating(lumaCodes(even, dark: evenDark), lumaCodes(odd, dark: oddDark)), to: target + 2 * cx)
                        return (L.average(even.0, odd.0), L.average(even.1, odd.1), L.average(even.2, odd.2))
                    }
                    let (above, below) = (row(upper, to: top, y: topY), row(lower, to: bottom, y: bottomY))
                    let (r, g, b) = (L.average(above.0, below.0), L.average(above.1, below.1), L.average(above.2, below.2))
                    let dark = darkness.chroma(row: cy, block: cx)
                    let (outCb, outCr) = chromaCodes(r, g, b, dark: dark)
                    Layout.storeLanes(outCb, outCr, cbRow, crRow, at: cx)
                    cx += 16
                }
            }
        }
    }
}

/// The per-plane maps at the ends of a `FixedPointRunKernel` run, on 16-bit lanes of codes: none, or some.
protocol PlanarEnds {
    /// Whether output codes go through `tailLuma`/`tailChroma` (then rounded before a vignette darkens them).
    var hasTail: Bool { get }
    func headLuma(_ codes: Lanes16.Vector) -> Lanes16.Vector
    func headChroma(_ codes: (Lanes16.Vector, Lanes16.Vector)) -> (Lanes16.Vector, Lanes16.Vector)
    func tailLuma(_ codes: Lanes16.Vector) -> Lanes16.Vector
    func tailChroma(_ cb: Lanes16.Vector, _ cr: Lanes16.Vector) -> (Lanes16.Vector, Lanes16.Vector)
}

struct NoPlanarEnds: PlanarEnds {
    var hasTail: Bool { false }
    @inline(__always) func headLuma(_ codes: Lanes16.Vector) -> Lanes16.Vector { codes }
    @inline(__always) func headChroma(_ codes: (Lanes16.Vector, Lanes16.Vector)) -> (Lanes16.Vector, Lanes16.Vector) { codes }
    @inline(__always) func tailLuma(_ codes: Lanes16.Vector) -> Lanes16.Vector { codes }
    @inline(__always) func tailChroma(_ cb: Lanes16.Vector, _ cr: Lanes16.Vector) -> (Lanes16.Vector, Lanes16.Vector) { (cb, cr) }
}

/// `PlanarYUVFixedPoint`'s luma map and chroma steps of the head and of the tail (a map left out or no steps: that
/// plane unchanged).
struct PlanarEndMaps: PlanarEnds {
    /// The maps' lanes (unused where `mapsHeadLuma`/`mapsTailLuma` is false), splatted once, not optional: the loop
    /// reads them in place.
    let headLuma: PlanarYUVFixedPoint.LumaLanes, tailLuma: PlanarYUVFixedPoint.LumaLanes
    let mapsHeadLuma: Bool, mapsTailLuma: Bool
    let headChroma: UnsafeBufferPointer<PlanarYUVFixedPoint.ChromaStep>, tailChroma: UnsafeBufferPointer<PlanarYUVFixedPoint.ChromaStep>
    let hasTail: Bool

    init(head: PlanarYUVFixedPoint.LumaMap?, headChroma: UnsafeBufferPointer<PlanarYUVFixedPoint.ChromaStep>,
         tail: PlanarYUVFixedPoint.LumaMap?, tailChroma: UnsafeBufferPointer<PlanarYUVFixedPoint.ChromaStep>) {
        let none = PlanarYUVFixedPoint.LumaMap(gain: 0, offset: 0, shift: 0, low: 0, high: 0)
        (headLuma, tailLuma) = ((head ?? none).lanes, (tail ?? none).lanes)
        (mapsHeadLuma, mapsTailLuma) = (head != nil, tail != nil)
        (self.headChroma, self.tailChroma) = (headChroma, tailChroma)
        hasTail = tail != nil || !tailChroma.isEmpty
    }

    @inline(__always) func headLuma(_ codes: Lanes16.Vector) -> Lanes16.Vector {
        mapsHeadLuma ? PlanarYUVFixedPoint.mapped(codes, headLuma) : codes
    }
    @inline(__always) func headChroma(_ codes: (Lanes16.Vector, Lanes16.Vector)) -> (Lanes16.Vector, Lanes16.Vector) {
        headChroma.isEmpty ? codes : PlanarYUVFixedPoint.mapped(cb: codes.0, cr: codes.1, headChroma)
    }
    @inline(__always) func tailLuma(_ codes: Lanes16.Vector) -> Lanes16.Vector {
        mapsTailLuma ? PlanarYUVFixedPoint.mapped(codes, tailLuma) : codes
    }
    @inline(__always) func tailChroma(_ cb: Lanes16.Vector, _ cr: Lanes16.Vector) -> (Lanes16.Vector, Lanes16.Vector) {
        tailChroma.isEmpty ? (cb, cr) : PlanarYUVFixedPoint.mapped(cb: cb, cr: cr, tailChroma)
    }
}

/// How much a vignette darkens each output sample of `FixedPointRunKernel`, in Q15 (0: unchanged, 1: to black or
/// neutral): none, or a vignette's.
protocol BlockDarkness {
    /// The darkness of the even and of the odd luma samples of frame row `row` in blocks `block ..< block + 16`.
    func luma(row: Int, block: Int) -> (Lanes16.Vector?, Lanes16.Vector?)
    /// The darkness of chroma row `row`'s blocks `block ..< block + 16`.
    func chroma(row: Int, block: Int) -> Lanes16.Vector?
}

struct NoDarkness: BlockDarkness {
    @inline(__always) func luma(row: Int, block: Int) -> (Lanes16.Vector?, Lanes16.Vector?) { (nil, nil) }
    @inline(__always) func chroma(row: Int, block: Int) -> Lanes16.Vector? { nil }
}

/// A vignette's darkness `intensity·s(t)` at each sample (`VignettePlane`'s formula: `t = clamp((d² − r²)/(1 − r²))`,
/// `s = t²(3 − 2t)`), in 16-bit lanes: `t` is a column's term `dx²/(1 − r²)` plus a row's `(dy² − r²)/(1 − r²)`, both in
/// Q13 (±4) from the vignette's own distance tables, the column term capped where it could no longer matter
/// (`1 + r²/(1 − r²)`). Radii over 0.86 need more range than Q13 has: nil.
struct VignetteDarkness: BlockDarkness, @unchecked Sendable {
    // Sendable: the tables are written once in init and only read afterwards.
    /// Column terms of even and odd luma columns and of chroma blocks (index: block), padded to whole 16-block chunks.
    let evenColumns: [Int16], oddColumns: [Int16], chromaColumns: [Int16]
    /// Row terms of luma rows and chroma rows.
    let lumaRows: [Int16], chromaRows: [Int16]
    /// The intensity in Q15.
    let intensity: Int16

    init?(_ vignette: VignetteProcessor, width: Int, height: Int) {
        let (lumaPlane, chromaPlane) = (vignette.planes[0], vignette.planes[1])
        let radius2 = Double(vignette.radius * vignette.radius)
        let inverseSpan = 1 / max(1 - radius2, 1e-6)
        let cap = 1 + radius2 * inverseSpan
        guard cap < 3.9 else { return nil }
        func q13(_ value: Double) -> Int16 { Int16((min(value, cap) * 8192).rounded()) }
        let blocks = ((width + 1) / 2 + 15) / 16 * 16
        let chromaWidth = (width + 1) / 2
        evenColumns = (0..<blocks).map { q13(Double(lumaPlane.horizontal[min(2 * $0, width - 1)]) * inverseSpan) }
        oddColumns = (0..<blocks).map { q13(Double(lumaPlane.horizontal[min(2 * $0 + 1, width - 1)]) * inverseSpan) }
        chromaColumns = (0..<blocks).map {
            q13(Double(chromaPlane.horizontal[min($0, chromaWidth - 1) * chromaPlane.channels]) * inverseSpan)
        }
        lumaRows = lumaPlane.vertical.map { q13((Double($0) - radius2) * inverseSpan) }
        chromaRows = chromaPlane.vertical.map { q13((Double($0) - radius2) * inverseSpan) }
        intensity = Int16((Double(vignette.intensity) * 32767).rounded())
    }

    /// `intensity·s(t)` in Q15 for 16 samples whose column terms start at `columns` and whose row term is `row`.
    @inline(__always) private func darkness(_ columns: UnsafePointer<Int16>, _ row: Int16) -> Lanes16.Vector {
        typealias L = Lanes16
        // t in Q15 (just under 1 at most: 1 itself does not fit), t², and 3 − 2t in Q13.
        let t = L.shiftLeft(L.clamp(L.addSaturating(L.load(columns), L.splat(row)), L.splat(0), L.splat(8191)), 2)
        let square = L.multiplyHighRounded(t, t)
        let rise = L.addSaturating(L.splat(24576), L.negate(L.multiplyHighRounded(t, L.splat(16384))))
        let scaled = L.multiplyHighRounded(square, L.multiplyHighRounded(rise, L.splat(intensity)))   // Q13
        return L.addSaturating(L.addSaturating(scaled, scaled), L.addSaturating(scaled, scaled))      // × 4, at most 32767
    }

    @inline(__always) func luma(row: Int, block: Int) -> (Lanes16.Vector?, Lanes16.Vector?) {
        let term = lumaRows[row]
        return (evenColumns.withUnsafeBufferPointer { darkness($0.baseAddress.unsafelyUnwrapped + block, term) },
                oddColumns.withUnsafeBufferPointer { darkness($0.baseAddress.unsafelyUnwrapped + block, term) })
    }

    @inline(__always) func chroma(row: Int, block: Int) -> Lanes16.Vector? {
        chromaColumns.withUnsafeBufferPointer { darkness($0.baseAddress.unsafelyUnwrapped + block, chromaRows[row]) }
    }
}

/// A smooth curve on 0…1 as eight cubic pieces in Q14, one per eighth, in the form `FixedPointRunKernel` evaluates:
/// for a Q15 value v, piece p = v >> 12 and t = (v mod 4096)·8 (Q15), `((a·t + b)·t + c)·t + d` by rounding high
/// multiplies and saturating adds, clamped to 0…16383. The pieces are fitted to the curve at 513 points of each
/// eighth; nil unless every Q15 input then comes within `tolerance` of the curve and every coefficient
/// fits Q14 (a kink or a steep start, as `gamma` 0.5 has at 0, does not).
///
/// ```swift
/// let pieces = CurvePieces16 { pow($0, 1.2) }
/// pieces?.evaluate(16384)   // 0.5^1.2 in Q14: 7132
/// ```
struct CurvePieces16 {
    /// The largest difference allowed from the curve: 8 of 16384 (0.125 code of 255). `gamma` of 1 and more fits;
    /// under about 0.95 the steep start at 0 does not.
    static let tolerance = 8
    /// Coefficients of t³, t², t and 1 of pieces 0…7, in Q14.
    let coefficients: [[Int16]]

    init?(fitting curve: (Float) -> Float) {
        func target(_ v: Int) -> Double { Double(curve(Float(v) / 32768).clamped(0, 1)) * 16384 }
        var coefficients = [[Int16]](repeating: [], count: 4)
        for piece in 0..<8 {
            // Least squares reweighted by each point's error (Lawson's iteration), which moves the fit toward the
            // smallest largest error: a third of plain least squares' at the ends of a piece.
            let points = stride(from: 0, through: 4096, by: 8).map { j -> (powers: [Double], value: Double) in
                let t = Double(j) / 4096
                return ([t * t * t, t * t, t, 1], target(min(4096 * piece + j, 32767)))
            }
            var weights = [Double](repeating: 1, count: points.count)
            var solution: [Double] = []
            for _ in 0..<10 {
                var normal = [[Double]](repeating: [Double](repeating: 0, count: 5), count: 4)
                for (point, weight) in zip(points, weights) {
                    for row in 0..<4 {
                        for column in 0..<4 { normal[row][column] += weight * point.powers[row] * point.powers[column] }
                        normal[row][4] += weight * point.powers[row] * point.value
                    }
                }
                guard let next = CurvePieces16.solve(normal) else { return nil }
                solution = next
                let errors = points.map { point in abs(zip(point.powers, solution).map { $0 * $1 }.reduce(0, +) - point.value) + 1e-9 }
                let total = zip(weights, errors).map { $0 * $1 }.reduce(0, +)
                weights = zip(weights, errors).map { $0 * $1 / total }
            }
            guard solution.allSatisfy({ abs($0) < 32767 }) else { return nil }
            for k in 0..<4 { coefficients[k].append(Int16(solution[k].rounded())) }
        }
        self.coefficients = coefficients
        for v in 0...32766 where abs(Double(evaluate(v)) - target(v)) > Double(CurvePieces16.tolerance) { return nil }
    }

    /// The pieces at the Q15 value `v`, in Q14, exactly as the kernel's lanes compute it.
    func evaluate(_ v: Int) -> Int {
        func multiplyHighRounded(_ a: Int, _ b: Int) -> Int { (a * b + 0x4000) >> 15 }
        func add(_ a: Int, _ b: Int) -> Int { min(max(a + b, -32768), 32767) }
        let (piece, t) = (v >> 12, (v & 4095) << 3)
        var sum = add(multiplyHighRounded(Int(coefficients[0][piece]), t), Int(coefficients[1][piece]))
        sum = add(multiplyHighRounded(sum, t), Int(coefficients[2][piece]))
        sum = add(multiplyHighRounded(sum, t), Int(coefficients[3][piece]))
        return min(max(sum, 0), 16383)
    }

    /// The four 16-byte tables the kernel shuffles from (each coefficient kind's 8 pieces, in both 128-bit halves).
    var tables: [Lanes16.Vector] {
        coefficients.map { kind in Lanes16.vector(SIMD16<Int16>((0..<16).map { kind[$0 % 8] })) }
    }

    /// The solution of the 4 equations whose augmented rows are `rows` (Gaussian elimination with partial pivoting);
    /// nil when they are singular.
    private static func solve(_ rows: [[Double]]) -> [Double]? {
        var m = rows
        for column in 0..<4 {
            guard let pivot = (column..<4).max(by: { abs(m[$0][column]) < abs(m[$1][column]) }),
                  abs(m[pivot][column]) > 1e-12 else { return nil }
            m.swapAt(column, pivot)
            for row in 0..<4 where row != column {
                let factor = m[row][column] / m[column][column]
                for k in column..<5 { m[row][k] -= factor * m[column][k] }
            }
        }
        return (0..<4).map { m[$0][4] / m[$0][$0] }
    }
}
