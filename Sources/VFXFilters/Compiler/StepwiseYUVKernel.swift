import VFXCore

/// A run of affine and per-channel transforms (`sepia,hue,gamma`, `tone-curve`, `levels`…) evaluated on each
/// pixel of an I420/NV12 frame, step after step as the run defines it, 8 blocks (32 pixels) at a time.
///
/// Per pixel: R'G'B' from its luma and its block's chroma, clamped to 0…1; then each step, clamped again:
/// - an affine step is its matrix, in SIMD;
/// - a per-channel step reads one table per channel, `tableSize` entries sampled from the transform at
///   0, 1/(tableSize − 1), … 1, at the entry nearest to the value (off by at most half an entry's step times
///   the curve's slope: 0.03 codes × slope for 4096 entries);
///
/// then the output luma. Each block's output chroma comes from the mean of its four output R'G'B' values, as
/// converting the block to RGB, filtering and converting back with box-filtered 4:2:0 chroma gives (as
/// `AffineYUVKernel` does for a lone matrix).
///
/// Only smooth per-channel steps are taken (`init` returns nil when a table jumps by more than `maximumJump`
/// between neighbouring entries: posterize, threshold, solarize keep the exact 3D table).
///
/// ```swift
/// let kernel = StepwiseYUVKernel(run: [sepia, hue, gamma], coding: YUVCoding(.bt709), chromaInterleaved: false)
/// kernel?.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class StepwiseYUVKernel: ColorKernel {
    /// Entries per channel of a per-channel step's table.
    static let tableSize = 4096
    /// The largest step between neighbouring table entries (in 0…1) of a curve this kernel takes: 4 codes.
    static let maximumJump: Float = 4 / 255

    enum Step {
        /// `clamp(matrix · rgb + offset)`.
        case affine(ColorMatrix)
        /// Red, green and blue tables, `tableSize` entries each, one after the other.
        case tables(UnsafeMutablePointer<Float>)
    }

    let steps: [Step]
    /// R'G'B' in 0…1 (before clamping) = `Y·lumaGain + Cb·fromCb + Cr·fromCr + constant` on 8-bit codes.
    let toRGB: AffineYUVKernel
    let coding: YUVCoding
    let chromaInterleaved: Bool

    init?(run: [ColorTransform], coding: YUVCoding, chromaInterleaved: Bool) {
        var steps: [Step] = []
        for transform in run {
            switch transform.kind {
            case .affine(let matrix):
                steps.append(.affine(matrix))
            case .perChannel:
                let n = StepwiseYUVKernel.tableSize
                let table = UnsafeMutablePointer<Float>.allocate(capacity: 3 * n)
                var smooth = true
                for i in 0..<n {
                    let value = transform.apply(SIMD3(repeating: Float(i) / Float(n - 1))).clampedToUnit
                    table[i] = value.x
                    table[n + i] = value.y
                    table[2 * n + i] = value.z
                    if i > 0 {
                        let jump = SIMD3(table[i] - table[i - 1], table[n + i] - table[n + i - 1],
                                         table[2 * n + i] - table[2 * n + i - 1])
                        smooth = smooth && jump.x.magnitude <= Self.maximumJump && jump.y.magnitude <= Self.maximumJump
                            && jump.z.magnitude <= Self.maximumJump
                    }
                }
                steps.append(.tables(table))
                guard smooth else {
                    StepwiseYUVKernel.deallocate(steps)
                    return nil
                }
            case .general, .luma:
                StepwiseYUVKernel.deallocate(steps)
                return nil
            }
        }
        self.steps = steps
        self.coding = coding
        self.chromaInterleaved = chromaInterleaved
        toRGB = AffineYUVKernel(matrix: .identity, coding: coding, chromaInterleaved: chromaInterleaved)
    }

    private static func deallocate(_ steps: [Step]) {
        for case .tables(let table) in steps { table.deallocate() }
    }

    deinit { StepwiseYUVKernel.deallocate(steps) }

    /// The loop is compiled once per layout and per program: a lone per-channel step (`gamma`, `tone-curve`,
    /// `levels`) gets its own copy with the three lookups inlined; other runs go through the list of steps.
    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        if steps.count == 1, case .tables(let table) = steps[0] {
            let program = OneCurveStep(table: table)
            if chromaInterleaved {
                run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self, program: program)
            } else {
                run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self, program: program)
            }
            return
        }
        let program = StepList(steps: steps)
        if chromaInterleaved {
            run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self, program: program)
        } else {
            run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self, program: program)
        }
    }

    private func run<Layout: ChromaLayout, Program: StepProgram>(_ planes: [Plane], width: Int, height: Int,
                                                                 slices: SliceRunner, layout: Layout.Type,
                                                                 program: Program) {
        let luma = planes[0]
        let cbPlane = planes[1]
        let crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let (gain, fromCb, fromCr, constant) = (toRGB.lumaGain, toRGB.fromCb, toRGB.fromCr, toRGB.constant)
        let weights = coding.weights
        let outScale = coding.lumaScale, outOffset = coding.lumaOffset
        let toCb = coding.chromaScale / coding.blueFromPb, toCr = coding.chromaScale / coding.redFromPr
        slices.run(rows: (height + 1) / 2) { chromaRows in
            for cy in chromaRows {
                let rowCount = 2 * cy + 1 < height ? 2 : 1
                let top = luma.row(2 * cy), bottom = luma.row(2 * cy + rowCount - 1)
                if width % 2 == 1 {
                    // The last block has one column: repeat it into the row padding so the block mean is right.
                    top[width] = top[width - 1]
                    bottom[width] = bottom[width - 1]
                }
                let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy)
                let meanScale = 1 / Float(2 * rowCount)
                var cx = 0
                while cx < chromaWidth {
                    // Even and odd luma columns are kept apart, so each lines up with its block's chroma lane.
                    let (cb, cr) = Layout.load(cbRow, crRow, at: cx)
                    let kR = SIMD8(repeating: constant.x).addingProduct(cb, fromCb.x).addingProduct(cr, fromCr.x)
                    let kG = SIMD8(repeating: constant.y).addingProduct(cb, fromCb.y).addingProduct(cr, fromCr.y)
                    let kB = SIMD8(repeating: constant.z).addingProduct(cb, fromCb.z).addingProduct(cr, fromCr.z)
                    var sumR = SIMD8<Float>(), sumG = SIMD8<Float>(), sumB = SIMD8<Float>()
                    for index in 0..<rowCount {
                        let pointer = (index == 0 ? top : bottom) + 2 * cx
                        let (even, odd) = evenAndOddBytes(pointer)
                        var output = (SIMD8<Float>(), SIMD8<Float>())
                        for parity in 0..<2 {
                            let y = parity == 0 ? even : odd
                            var r = kR.addingProduct(y, gain.x).clampedToUnit
                            var g = kG.addingProduct(y, gain.y).clampedToUnit
                            var b = kB.addingProduct(y, gain.z).clampedToUnit
                            program.apply(&r, &g, &b)
                            let luma = (r * (weights.red * outScale)).addingProduct(g, weights.green * outScale)
                                .addingProduct(b, weights.blue * outScale) + outOffset
                            if parity == 0 { output.0 = luma } else { output.1 = luma }
                            sumR += r
                            sumG += g
                            sumB += b
                        }
                        storeInterleaved(roundedBytes(output.0), roundedBytes(output.1), at: pointer)
                    }
                    let r = sumR * meanScale, g = sumG * meanScale, b = sumB * meanScale
                    let y = (r * weights.red).addingProduct(g, weights.green).addingProduct(b, weights.blue)
                    let outCb = ((b - y) * toCb) + 128
                    let outCr = ((r - y) * toCr) + 128
                    Layout.store(roundedBytes(outCb), roundedBytes(outCr), cbRow, crRow, at: cx)
                    cx += 8
                }
            }
        }
    }
}

/// What `StepwiseYUVKernel` does to 8 pixels' clamped R'G'B'.
private protocol StepProgram {
    func apply(_ r: inout SIMD8<Float>, _ g: inout SIMD8<Float>, _ b: inout SIMD8<Float>)
}

/// The table entry nearest to each lane of `value` (in 0…1).
@inline(__always)
private func lookup(_ table: UnsafeMutablePointer<Float>, _ value: SIMD8<Float>) -> SIMD8<Float> {
    let position = value * Float(StepwiseYUVKernel.tableSize - 1) + 0.5
    var result = SIMD8<Float>()
    for lane in 0..<8 { result[lane] = table[Int(Int32(position[lane]))] }
    return result
}

/// A lone per-channel step.
private struct OneCurveStep: StepProgram {
    let table: UnsafeMutablePointer<Float>

    @inline(__always)
    func apply(_ r: inout SIMD8<Float>, _ g: inout SIMD8<Float>, _ b: inout SIMD8<Float>) {
        let n = StepwiseYUVKernel.tableSize
        r = lookup(table, r)
        g = lookup(table + n, g)
        b = lookup(table + 2 * n, b)
    }
}

/// Any list of steps, one after the other.
private struct StepList: StepProgram {
    let steps: [StepwiseYUVKernel.Step]

    @inline(__always)
    func apply(_ r: inout SIMD8<Float>, _ g: inout SIMD8<Float>, _ b: inout SIMD8<Float>) {
        let n = StepwiseYUVKernel.tableSize
        for step in steps {
            switch step {
            case .affine(let m):
                let red = (r * m.red.x).addingProduct(g, m.red.y).addingProduct(b, m.red.z) + m.offset.x
                let green = (r * m.green.x).addingProduct(g, m.green.y).addingProduct(b, m.green.z) + m.offset.y
                let blue = (r * m.blue.x).addingProduct(g, m.blue.y).addingProduct(b, m.blue.z) + m.offset.z
                r = red.clampedToUnit
                g = green.clampedToUnit
                b = blue.clampedToUnit
            case .tables(let table):
                r = lookup(table, r)
                g = lookup(table + n, g)
                b = lookup(table + 2 * n, b)
            }
        }
    }
}
