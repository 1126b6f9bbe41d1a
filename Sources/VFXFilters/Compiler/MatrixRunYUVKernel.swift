import VFXCore

/// A run of colour matrices (`sepia`, `color-matrix`, `sepia,hue,color-controls`…) applied to each pixel of an
/// I420/NV12 frame in 16-bit fixed point, 16 blocks (2 rows × 32 pixels) per step of the loop, with no scratch memory.
///
/// The definition is `ColorRunYUVKernel`'s for matrices: per pixel, R'G'B' from its luma and its block's chroma
/// through the first matrix (applied to the unclipped R'G'B'), clamped; each further matrix `clamp(M·rgb + offset)`;
/// then the output luma, and each block's chroma from the mean of its four output R'G'B' values. Consecutive matrices
/// are multiplied into one when the first keeps the unit cube inside itself.
///
/// Arithmetic on each 16-bit lane (`Lanes16`):
/// - R'G'B' in Q14 (1 = 16384), clamped to 0…16383. A value enters a product shifted left once (Q15) against a
///   coefficient in Q14 through a rounding high multiply (`vpmulhrsw`), so products stay in Q14 and coefficients up to
///   ±2 fit.
/// - The first matrix: per block `K = k + mulhrs(Cb'·2^s, fCb) + mulhrs(Cr'·2^s, fCr)` (Cb' = Cb − 128), per pixel
///   `clamp(K + mulhrs(Y·2^t, g))`, s and t the largest shifts (≤ 8, ≤ 7) for which the coefficients fit 16 bits.
/// - Output luma and chroma in Q7 codes, rounded by adding 64 and shifting right by 7; block means by `vpavgw`.
/// Sums saturate; `init` checks that no saturated sum can change a clamped result, and returns nil for a matrix
/// with gains of 2 or more, which the Float kernels take. A product rounds to 2⁻¹⁵ of full scale (0.008 codes), so
/// an output is within 0.1 code of its exact value before the final rounding.
///
/// ```swift
/// let kernel = MatrixRunYUVKernel([sepiaMatrix, hueMatrix], coding: YUVCoding(.bt709), chromaInterleaved: false)
/// kernel?.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class MatrixRunYUVKernel: ColorKernel {
    /// The first matrix folded into the conversion from Y'CbCr: per channel (red, green, blue) the block term's
    /// constant and chroma factors, and the luma factor.
    private let constant: SIMD3<Int16>, fromCb: SIMD3<Int16>, fromCr: SIMD3<Int16>, fromY: SIMD3<Int16>
    /// The shifts of centred chroma and of luma codes before their products.
    private let chromaShift: Int, lumaShift: Int
    /// Each further matrix as 12 splatted vectors: the 9 coefficients row by row, then the 3 offsets.
    private let steps: UnsafeMutablePointer<Lanes16.Vector>
    private let stepCount: Int
    /// Output luma (Q7 codes) from Q15 R'G'B': weights and offset (with the rounding half); the same for Cb and Cr.
    private let toY: SIMD3<Int16>, toCb: SIMD3<Int16>, toCr: SIMD3<Int16>, lumaOffset: Int16
    let chromaInterleaved: Bool

    init?(_ matrices: [ColorMatrix], coding: YUVCoding, chromaInterleaved: Bool) {
        guard let firstMatrix = matrices.first else { return nil }
        var later: [ColorMatrix] = []
        for matrix in matrices.dropFirst() {
            if let last = later.last, last.keepsUnitCube { later[later.count - 1] = matrix.after(last) } else { later.append(matrix) }
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
        // Further matrices: each row's coefficients and offset within ±2 together.
        for matrix in later {
            for row in [matrix.red, matrix.green, matrix.blue].enumerated() {
                guard magnitude(row.element).sum() + abs(matrix.offset[row.offset]) < 1.99 else { return nil }
            }
        }
        // More than two further matrices (rare: each pair that can be multiplied was) are left to the Float kernels.
        guard later.count <= 2 else { return nil }
        stepCount = later.count
        steps = .allocate(capacity: max(12 * later.count, 1))
        for (index, matrix) in later.enumerated() {
            let values = [matrix.red, matrix.green, matrix.blue].flatMap { [$0.x, $0.y, $0.z] } + [matrix.offset.x, matrix.offset.y, matrix.offset.z]
            for (k, value) in values.enumerated() {
                (steps + 12 * index + k).initialize(to: Lanes16.splat(Int16((Double(value) * 16384).rounded())))
            }
        }
        // Y = offset + scale·(w·rgb); Cb = 128 + (b − y)·toCb; Cr = 128 + (r − y)·toCr; in Q7 codes.
        let w = SIMD3(coding.weights.red, coding.weights.green, coding.weights.blue)
        let cbScale = coding.chromaScale / coding.blueFromPb, crScale = coding.chromaScale / coding.redFromPr
        toY = fixed(w * coding.lumaScale, 128)
        toCb = fixed((SIMD3(0, 0, 1) - w) * cbScale, 128)
        toCr = fixed((SIMD3(1, 0, 0) - w) * crScale, 128)
        lumaOffset = Int16((coding.lumaOffset * 128).rounded()) + 64
        self.chromaInterleaved = chromaInterleaved
    }

    deinit { steps.deallocate() }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        switch (chromaInterleaved, stepCount) {
        case (false, 0): run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self, steps: NoStep.self)
        case (false, 1): run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self, steps: OneStep.self)
        case (false, _): run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self, steps: TwoSteps.self)
        case (true, 0): run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self, steps: NoStep.self)
        case (true, 1): run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self, steps: OneStep.self)
        case (true, _): run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self, steps: TwoSteps.self)
        }
    }

    /// The number of matrices after the first, as a type, so the loop over them is unrolled.
    private protocol StepCount { static var count: Int { get } }
    private enum NoStep: StepCount { static var count: Int { 0 } }
    private enum OneStep: StepCount { static var count: Int { 1 } }
    private enum TwoSteps: StepCount { static var count: Int { 2 } }

    private func run<Layout: ChromaLayout, Steps: StepCount>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner,
                                                             layout: Layout.Type, steps stepsType: Steps.Type) {
        typealias L = Lanes16
        let luma = planes[0], cbPlane = planes[1], crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let steps = self.steps
        let (chromaShift, lumaShift) = (self.chromaShift, self.lumaShift)
        let constant = (L.splat(self.constant.x), L.splat(self.constant.y), L.splat(self.constant.z))
        let fromCb = (L.splat(self.fromCb.x), L.splat(self.fromCb.y), L.splat(self.fromCb.z))
        let fromCr = (L.splat(self.fromCr.x), L.splat(self.fromCr.y), L.splat(self.fromCr.z))
        let fromY = (L.splat(self.fromY.x), L.splat(self.fromY.y), L.splat(self.fromY.z))
        let toY = (L.splat(self.toY.x), L.splat(self.toY.y), L.splat(self.toY.z))
        let toCb = (L.splat(self.toCb.x), L.splat(self.toCb.y), L.splat(self.toCb.z))
        let toCr = (L.splat(self.toCr.x), L.splat(self.toCr.y), L.splat(self.toCr.z))
        let (lumaOffset, chromaOffset, minus128) = (L.splat(self.lumaOffset), L.splat(128 * 128 + 64), L.splat(-128))
        let (zero, one) = (L.splat(0), L.splat(16383))

        /// One matrix row on Q15 inputs, plus its offset, clamped (Q14).
        @inline(__always) func matrixRow(_ r: L.Vector, _ g: L.Vector, _ b: L.Vector, _ c: UnsafeMutablePointer<L.Vector>, _ k: Int) -> L.Vector {
            let sum = L.addSaturating(L.addSaturating(L.multiplyHighRounded(r, c[3 * k]), L.multiplyHighRounded(g, c[3 * k + 1])),
                                      L.addSaturating(L.multiplyHighRounded(b, c[3 * k + 2]), c[9 + k]))
            return L.clamp(sum, zero, one)
        }
        /// The output R'G'B' (Q15) of 16 pixels with luma codes `y` whose blocks' terms are `k`.
        @inline(__always) func pixels(_ y: L.Vector, _ k: (L.Vector, L.Vector, L.Vector)) -> (L.Vector, L.Vector, L.Vector) {
            let scaled = L.shiftLeft(y, lumaShift)
            var r = L.shiftLeft(L.clamp(L.addSaturating(k.0, L.multiplyHighRounded(scaled, fromY.0)), zero, one), 1)
            var g = L.shiftLeft(L.clamp(L.addSaturating(k.1, L.multiplyHighRounded(scaled, fromY.1)), zero, one), 1)
            var b = L.shiftLeft(L.clamp(L.addSaturating(k.2, L.multiplyHighRounded(scaled, fromY.2)), zero, one), 1)
            for index in 0..<Steps.count {
                let c = steps + 12 * index
                (r, g, b) = (L.shiftLeft(matrixRow(r, g, b, c, 0), 1), L.shiftLeft(matrixRow(r, g, b, c, 1), 1),
                          L.shiftLeft(matrixRow(r, g, b, c, 2), 1))
            }
            return (r, g, b)
        }
        /// Q7 codes → whole codes (the sums already hold the rounding half).
        @inline(__always) func codes(_ r: L.Vector, _ g: L.Vector, _ b: L.Vector, _ to: (L.Vector, L.Vector, L.Vector),
                                     _ offset: L.Vector) -> L.Vector {
            let sum = L.addSaturating(L.addSaturating(L.multiplyHighRounded(r, to.0), L.multiplyHighRounded(g, to.1)),
                                      L.addSaturating(L.multiplyHighRounded(b, to.2), offset))
            return L.shiftRight(sum, 7)
        }

        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                // A last single row stands for both rows of its blocks (both loads read it before either store).
                let top = luma.row(2 * cy), bottom = luma.row(min(2 * cy + 1, height - 1))
                if width % 2 == 1 {
                    // The last block has one column: repeat it into the row padding so the block mean is right.
                    top[width] = top[width - 1]
                    bottom[width] = bottom[width - 1]
                }
                let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy)
                var cx = 0
                while cx < chromaWidth {
                    let (cbCodes, crCodes) = Layout.loadLanes(cbRow, crRow, at: cx)
                    let cb = L.shiftLeft(L.addSaturating(cbCodes, minus128), chromaShift)
                    let cr = L.shiftLeft(L.addSaturating(crCodes, minus128), chromaShift)
                    let k = (L.addSaturating(constant.0, L.addSaturating(L.multiplyHighRounded(cb, fromCb.0), L.multiplyHighRounded(cr, fromCr.0))),
                             L.addSaturating(constant.1, L.addSaturating(L.multiplyHighRounded(cb, fromCb.1), L.multiplyHighRounded(cr, fromCr.1))),
                             L.addSaturating(constant.2, L.addSaturating(L.multiplyHighRounded(cb, fromCb.2), L.multiplyHighRounded(cr, fromCr.2))))
                    let (upper, lower) = (L.load(top + 2 * cx), L.load(bottom + 2 * cx))
                    // Both rows' output luma stored, and each row's mean of its two columns.
                    @inline(__always) func row(_ pairs: L.Vector, to target: UnsafeMutablePointer<UInt8>) -> (L.Vector, L.Vector, L.Vector) {
                        let even = pixels(L.lowBytes(pairs), k), odd = pixels(L.highBytes(pairs), k)
                        L.store(L.joinBytes(codes(even.0, even.1, even.2, toY, lumaOffset), codes(odd.0, odd.1, odd.2, toY, lumaOffset)),
                                to: target + 2 * cx)
                        return (L.average(even.0, odd.0), L.average(even.1, odd.1), L.average(even.2, odd.2))
                    }
                    let (above, below) = (row(upper, to: top), row(lower, to: bottom))
                    let (r, g, b) = (L.average(above.0, below.0), L.average(above.1, below.1), L.average(above.2, below.2))
                    Layout.storeLanes(codes(r, g, b, toCb, chromaOffset), codes(r, g, b, toCr, chromaOffset), cbRow, crRow, at: cx)
                    cx += 16
                }
            }
        }
    }
}
