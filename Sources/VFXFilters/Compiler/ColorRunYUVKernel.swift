import VFXCore

/// A run of colour transforms (matrices, smooth per-channel curves, luma curves) evaluated directly on each pixel of
/// an I420/NV12 frame in SIMD floats, with no 3D table: a lone curve (`gamma`, `tone-curve`, `levels`…) or a run such as
/// `sepia,hue,gamma`, optionally ending with a vignette.
///
/// The frame is walked a chunk of 128 blocks (2 rows × 256 columns) at a time: the chunk's R'G'B' is written to a
/// 6 KB scratch area in L1 cache, each step runs over the whole chunk in its own tight loop (its constants in
/// registers), and the chunk is converted back.
///
/// Per pixel: R'G'B' from its luma and its block's chroma through the run's first matrix (folded into the conversion
/// and applied to the unclipped R'G'B', as `AffineYUVKernel` does for a lone matrix), clamped; then each further step
/// with its clamp, as `FusedColorProcessor.evaluate` defines the run:
/// - a matrix: `clamp(M·rgb + offset)`; consecutive matrices are multiplied into one when the first keeps the unit
///   cube inside itself (its clamp can then never act, so the product is exact);
/// - a per-channel curve: each channel read at the nearest of `CurveTable.size` entries;
/// - a luma curve: `rgb + (curve(Y') − Y')` (or gray `curve(Y')` when it removes chroma), the curve read the same way.
/// Then the output luma; each block's output chroma from the mean of its four output R'G'B' values, as converting the
/// block to RGB, filtering and converting back with box-filtered 4:2:0 chroma gives. With a vignette (`fuse`), the
/// output luma is scaled toward black and the chroma toward neutral by the vignette's factor at each sample before
/// rounding.
///
/// `init` returns nil for a run this kernel cannot evaluate (a general function of R'G'B', or a curve that jumps:
/// posterize, threshold, solarize); `FixedPointRunKernel` takes the jumps it knows in runs of up to three steps, and
/// the 3D table the rest.
///
/// ```swift
/// let kernel = ColorRunYUVKernel([sepiaTransform, hueTransform, gammaTransform], coding: YUVCoding(.bt709),
///                                chromaInterleaved: false)
/// kernel?.apply(to: frame.planes, width: 1920, height: 1080, slices: SliceRunner(threads: 1))
/// ```
final class ColorRunYUVKernel: VignetteFusing {
    /// The steps after the first matrix, `count` of them (plain values: the hot loop reads them with no reference counting).
    private let steps: UnsafeMutablePointer<RunStep>
    private let count: Int
    /// The curve tables the steps point into.
    private let tables: [CurveTable]
    /// The first matrix's coefficients (or the identity's) on Y'CbCr codes, and the frame's coding.
    let toRGB: AffineYUVKernel
    /// A vignette applied in the conversion back to Y'CbCr, as a gain per pixel (nil: none).
    private(set) var vignette: VignetteGains?

    init?(_ run: [ColorTransform], coding: YUVCoding, chromaInterleaved: Bool) {
        let (first, rest) = ColorMatrix.leading(run)
        var compiled: [RunStep] = []
        var tables: [CurveTable] = []
        let weights = coding.weights
        for transform in rest {
            switch transform.kind {
            case .general, .fromLuma:
                return nil
            case .affine(let matrix):
                if let last = compiled.last, last.kind == .matrix, last.matrix.keepsUnitCube {
                    compiled[compiled.count - 1] = RunStep(matrix: matrix.after(last.matrix))
                } else {
                    compiled.append(RunStep(matrix: matrix))
                }
            case .perChannel:
                guard let table = CurveTable(channels: transform.apply) else { return nil }
                tables.append(table)
                compiled.append(RunStep(kind: .curves, table: table.values, channelStride: table.channelStride))
            case .luma(let curve, let removesChroma):
                var table: CurveTable?
                if let curve {
                    guard let made = CurveTable(luma: curve) else { return nil }
                    table = made
                    tables.append(made)
                }
                if table == nil && !removesChroma { continue }
                compiled.append(RunStep(kind: removesChroma ? .gray : .luma, table: table?.values, weights: weights))
            }
        }
        steps = .allocate(capacity: max(compiled.count, 1))
        steps.initialize(from: compiled, count: compiled.count)
        count = compiled.count
        self.tables = tables
        toRGB = AffineYUVKernel(matrix: first, coding: coding, chromaInterleaved: chromaInterleaved)
    }

    deinit { steps.deallocate() }

    /// Makes the pass end with `vignette` (configured for the same frame format): luma scaled toward black and
    /// chroma toward neutral by the vignette's factor at each sample, before rounding (one rounding instead of two).
    func fuse(_ vignette: VignetteProcessor, width: Int, height: Int) -> Bool {
        self.vignette = vignette.isActive ? VignetteGains(vignette, width: width, height: height) : nil
        return true
    }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        withExtendedLifetime(tables) {
            if let vignette {
                run(planes, width: width, height: height, slices: slices, gains: vignette)
            } else {
                run(planes, width: width, height: height, slices: slices, gains: NoGains())
            }
        }
    }

    private func run<Gains: BlockGains>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner, gains: Gains) {
        if toRGB.chromaInterleaved {
            run(planes, width: width, height: height, slices: slices, layout: InterleavedChroma.self, gains: gains)
        } else {
            run(planes, width: width, height: height, slices: slices, layout: SeparateChroma.self, gains: gains)
        }
    }

    /// Blocks per chunk: the chunk's R'G'B' (16 groups of 8 blocks × 4 pixels × 3 floats = 6 KB) stays in L1 cache
    /// while every step runs over it.
    static let chunkGroups = 16

    private func run<Layout: ChromaLayout, Gains: BlockGains>(_ planes: [Plane], width: Int, height: Int, slices: SliceRunner,
                                                              layout: Layout.Type, gains: Gains) {
        let luma = planes[0]
        let cbPlane = planes[1]
        let crPlane = planes[planes.count - 1]
        let chromaWidth = (width + 1) / 2
        let (gain, fromCb, fromCr, constant) = (toRGB.lumaGain, toRGB.fromCb, toRGB.fromCr, toRGB.constant)
        let coding = toRGB.coding
        let weights = coding.weights
        let outScale = coding.lumaScale, outOffset = coding.lumaOffset
        let toCb = coding.chromaScale / coding.blueFromPb, toCr = coding.chromaScale / coding.redFromPr
        let (steps, count) = (self.steps, self.count)
        let chunkVectors = 4 * Self.chunkGroups
        slices.run(rows: (height + 1) / 2) { chromaRows in
            withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: 3 * chunkVectors) { scratch in
                // Vector (group·2 + row)·2 + parity of the chunk: 8 pixels of one luma row, one column parity.
                let red = scratch.baseAddress.unsafelyUnwrapped
                let green = red + chunkVectors, blue = green + chunkVectors
                for cy in chromaRows {
                    // A last single row is processed twice (its block mean over 4 values is then its own mean).
                    let (topY, bottomY) = blockRows(of: luma, chromaRow: cy, width: width, height: height)
                    let top = luma.row(topY), bottom = luma.row(bottomY)
                    let cbRow = cbPlane.row(cy), crRow = crPlane.row(cy)
                    var chunk = 0
                    while chunk < chromaWidth {
                        let groups = min(Self.chunkGroups, (chromaWidth - chunk + 7) / 8)
                        // R'G'B' of each pixel through the first matrix, clamped.
                        for group in 0..<groups {
                            let cx = chunk + 8 * group
                            let (cb, cr) = Layout.load(cbRow, crRow, at: cx)
                            let kR = SIMD8(repeating: constant.x).addingProduct(cb, fromCb.x).addingProduct(cr, fromCr.x)
                            let kG = SIMD8(repeating: constant.y).addingProduct(cb, fromCb.y).addingProduct(cr, fromCr.y)
                            let kB = SIMD8(repeating: constant.z).addingProduct(cb, fromCb.z).addingProduct(cr, fromCr.z)
                            for row in 0..<2 {
                                let (even, odd) = evenAndOddBytes((row == 0 ? top : bottom) + 2 * cx)
                                let v = 4 * group + 2 * row
                                red[v] = kR.addingProduct(even, gain.x).clampedToUnit
                                green[v] = kG.addingProduct(even, gain.y).clampedToUnit
                                blue[v] = kB.addingProduct(even, gain.z).clampedToUnit
                                red[v + 1] = kR.addingProduct(odd, gain.x).clampedToUnit
                                green[v + 1] = kG.addingProduct(odd, gain.y).clampedToUnit
                                blue[v + 1] = kB.addingProduct(odd, gain.z).clampedToUnit
                            }
                        }
                        // Each further step over the whole chunk.
                        for index in 0..<count {
                            steps[index].apply(red, green, blue, vectors: 4 * groups)
                        }
                        // Back to Y'CbCr: each pixel's luma, each block's chroma from its mean R'G'B'.
                        for group in 0..<groups {
                            let cx = chunk + 8 * group
                            var sumR = SIMD8<Float>(), sumG = SIMD8<Float>(), sumB = SIMD8<Float>()
                            for row in 0..<2 {
                                let v = 4 * group + 2 * row
                                var output = (SIMD8<Float>(), SIMD8<Float>())
                                for parity in 0..<2 {
                                    let (r, g, b) = (red[v + parity], green[v + parity], blue[v + parity])
                                    let luma = (r * weights.red).addingProduct(g, weights.green).addingProduct(b, weights.blue)
                                    let gain = gains.luma(row: row == 0 ? topY : bottomY, column: 2 * cx + parity)
                                    let code = luma * (gain * outScale) + outOffset
                                    if parity == 0 { output.0 = code } else { output.1 = code }
                                    sumR += r
                                    sumG += g
                                    sumB += b
                                }
                                storeInterleaved(roundedBytes(output.0), roundedBytes(output.1),
                                                 at: (row == 0 ? top : bottom) + 2 * cx)
                            }
                            let r = sumR * 0.25, g = sumG * 0.25, b = sumB * 0.25
                            let y = (r * weights.red).addingProduct(g, weights.green).addingProduct(b, weights.blue)
                            let chromaGain = gains.chroma(row: cy, block: cx)
                            Layout.store(roundedBytes((b - y) * (chromaGain * toCb) + 128),
                                         roundedBytes((r - y) * (chromaGain * toCr) + 128), cbRow, crRow, at: cx)
                        }
                        chunk += 8 * groups
                    }
                }
            }
        }
    }
}

/// A gain per output sample applied as the pass converts back to Y'CbCr (luma scaled toward black, chroma toward
/// neutral): none, or a vignette's.
protocol BlockGains {
    /// The gains of 8 luma samples of frame row `row`, at columns `column`, `column + 2`, … `column + 14`.
    func luma(row: Int, column: Int) -> SIMD8<Float>
    /// The gains of 8 blocks of chroma row `row` from block `block`.
    func chroma(row: Int, block: Int) -> SIMD8<Float>
}

struct NoGains: BlockGains {
    @inline(__always) func luma(row: Int, column: Int) -> SIMD8<Float> { SIMD8(repeating: 1) }
    @inline(__always) func chroma(row: Int, block: Int) -> SIMD8<Float> { SIMD8(repeating: 1) }
}

/// `vignette`'s factor at each sample, from its planes' own distance tables (the same factor its own pass applies),
/// with the luma columns split by parity to line up with the blocks.
struct VignetteGains: BlockGains, @unchecked Sendable {
    // Sendable: the arrays are written once in init and only read afterwards.
    /// The luma plane's vignette (its formula; chroma uses the same radius and intensity).
    let formula: VignettePlane
    /// Squared horizontal distance of luma columns 2·i and 2·i + 1, and of chroma block i, at index i; padded with the
    /// last value to a whole number of 8-block groups.
    let evenColumns: [Float], oddColumns: [Float], chromaColumns: [Float]
    /// Squared vertical distance of each luma row and chroma row.
    let lumaRows: [Float], chromaRows: [Float]

    init(_ vignette: VignetteProcessor, width: Int, height: Int) {
        let (lumaPlane, chromaPlane) = (vignette.planes[0], vignette.planes[1])
        formula = lumaPlane
        let blocks = ((width + 1) / 2 + 7) / 8 * 8
        evenColumns = (0..<blocks).map { i in lumaPlane.horizontal[min(2 * i, width - 1)] }
        oddColumns = (0..<blocks).map { i in lumaPlane.horizontal[min(2 * i + 1, width - 1)] }
        chromaColumns = (0..<blocks).map { i in chromaPlane.horizontal[min(i, (width + 1) / 2 - 1) * chromaPlane.channels] }
        lumaRows = lumaPlane.vertical
        chromaRows = chromaPlane.vertical
    }

    @inline(__always) private func factor(_ distance2: SIMD8<Float>) -> SIMD8<Float> { formula.factor(distance2) }

    @inline(__always) func luma(row: Int, column: Int) -> SIMD8<Float> {
        (column & 1 == 0 ? evenColumns : oddColumns).withUnsafeBufferPointer { columns in
            factor(SIMD8(loadingFrom: columns.baseAddress.unsafelyUnwrapped + column / 2) + lumaRows[row])
        }
    }

    @inline(__always) func chroma(row: Int, block: Int) -> SIMD8<Float> {
        chromaColumns.withUnsafeBufferPointer { columns in
            factor(SIMD8(loadingFrom: columns.baseAddress.unsafelyUnwrapped + block) + chromaRows[row])
        }
    }
}

/// One step of a run after its first matrix, as plain values.
struct RunStep {
    enum Kind: UInt8 { case matrix, curves, luma, gray }
    var kind: Kind
    /// `.matrix`: the matrix and its offset.
    var matrix = ColorMatrix.identity
    /// `.curves`: red, green and blue tables one after the other; `.luma`, `.gray`: one table of the luma curve (nil:
    /// luma kept).
    var table: UnsafeMutablePointer<Float>?
    /// `.curves`: entries from the red table to the green one and from the green to the blue one.
    var channelStride = 0
    /// `.luma`, `.gray`: the frame's luma weights.
    var weights = SIMD3<Float>()

    init(matrix: ColorMatrix) {
        kind = .matrix
        self.matrix = matrix
    }

    init(kind: Kind, table: UnsafeMutablePointer<Float>?, channelStride: Int = 0, weights: LumaWeights? = nil) {
        self.kind = kind
        self.table = table
        self.channelStride = channelStride
        if let weights { self.weights = SIMD3(weights.red, weights.green, weights.blue) }
    }
}

/// A smooth curve on 0…1 sampled at `CurveTable.size` points (three channels, or one for luma),
/// each value clamped to 0…1; nil when neighbouring entries jump by more than `CurveTable.maximumJump`.
final class CurveTable {
    /// Entries per curve: the nearest entry is off by at most half a step times the curve's slope (0.03 codes × slope).
    static let size = 4096
    /// The largest step between neighbouring entries (in 0…1) of a curve taken: 4 codes.
    static let maximumJump: Float = 4 / 255

    let values: UnsafeMutablePointer<Float>
    /// Entries from one channel's table to the next: 0 when the three are the same (one 16 KB table stays in L1 cache).
    private(set) var channelStride = 0

    /// Red, green and blue of `function` (which works on each channel alone), one table after the other.
    init?(channels function: (SIMD3<Float>) -> SIMD3<Float>) {
        let n = CurveTable.size
        values = .allocate(capacity: 3 * n)
        for i in 0..<n {
            let value = function(SIMD3(repeating: Float(i) / Float(n - 1))).clampedToUnit
            (values[i], values[n + i], values[2 * n + i]) = (value.x, value.y, value.z)
        }
        // A failed init of a fully initialized object still runs `deinit`, which frees the table.
        guard CurveTable.isSmooth(values, count: 3 * n, rowLength: n) else { return nil }
        channelStride = (0..<n).allSatisfy { values[$0] == values[n + $0] && values[$0] == values[2 * n + $0] } ? 0 : n
    }

    /// One table of `curve`.
    init?(luma curve: (Float) -> Float) {
        let n = CurveTable.size
        values = .allocate(capacity: n)
        for i in 0..<n { values[i] = curve(Float(i) / Float(n - 1)).clamped(0, 1) }
        guard CurveTable.isSmooth(values, count: n, rowLength: n) else { return nil }
    }

    deinit { values.deallocate() }

    private static func isSmooth(_ values: UnsafeMutablePointer<Float>, count: Int, rowLength: Int) -> Bool {
        (0..<count).allSatisfy { i in i % rowLength == 0 || abs(values[i] - values[i - 1]) <= CurveTable.maximumJump }
    }
}

extension RunStep {
    /// The step on `vectors` vectors of 8 pixels' R'G'B' (each in 0…1), in place.
    @inline(__always)
    func apply(_ red: UnsafeMutablePointer<SIMD8<Float>>, _ green: UnsafeMutablePointer<SIMD8<Float>>,
               _ blue: UnsafeMutablePointer<SIMD8<Float>>, vectors: Int) {
        switch kind {
        case .matrix:
            let (m, o) = ((matrix.red, matrix.green, matrix.blue), matrix.offset)
            for v in 0..<vectors {
                let (r, g, b) = (red[v], green[v], blue[v])
                red[v] = ((r * m.0.x).addingProduct(g, m.0.y).addingProduct(b, m.0.z) + o.x).clampedToUnit
                green[v] = ((r * m.1.x).addingProduct(g, m.1.y).addingProduct(b, m.1.z) + o.y).clampedToUnit
                blue[v] = ((r * m.2.x).addingProduct(g, m.2.y).addingProduct(b, m.2.z) + o.z).clampedToUnit
            }
        case .curves:
            let (table, n) = (self.table.unsafelyUnwrapped, channelStride)
            lookUp(table, red, vectors: vectors)
            lookUp(table + n, green, vectors: vectors)
            lookUp(table + 2 * n, blue, vectors: vectors)
        case .luma, .gray:
            let w = weights
            for v in 0..<vectors {
                let (r, g, b) = (red[v], green[v], blue[v])
                let luma = (r * w.x).addingProduct(g, w.y).addingProduct(b, w.z)
                let out = table.map { nearestEntry($0, luma) } ?? luma
                if kind == .gray {
                    (red[v], green[v], blue[v]) = (out, out, out)
                } else {
                    let shift = out - luma
                    red[v] = (r + shift).clampedToUnit
                    green[v] = (g + shift).clampedToUnit
                    blue[v] = (b + shift).clampedToUnit
                }
            }
        }
    }
}

/// Each value (in 0…1) of `vectors` vectors replaced by the entry of a `CurveTable.size`-entry table nearest to it:
/// the entries' indices computed 8 at a time, then one scalar load per value (AVX2 has no gather worth its cost). The
/// indices are taken from the vector register two at a time (`vpextrq`) and the values written two at a time (one
/// 64-bit store per pair), so a value costs one load and half a store (2 and 1 through a scratch of indices):
/// loads and stores are what bound this loop.
@inline(__always)
func lookUp(_ table: UnsafeMutablePointer<Float>, _ values: UnsafeMutablePointer<SIMD8<Float>>, vectors: Int) {
    let scale = Float(CurveTable.size - 1)
    // x + 2²³ holds round(x) in its low mantissa bits (for 0 ≤ x < 2²²).
    values.withMemoryRebound(to: UInt64.self, capacity: 4 * vectors) { pairs in
        for v in 0..<vectors {
            let index = unsafeBitCast(values[v] * scale + 8_388_608, to: SIMD8<Int32>.self) & 0x3F_FFFF
            let quads = unsafeBitCast(index, to: SIMD4<UInt64>.self)
            for k in 0..<4 {
                let both = quads[k]
                let first = table[Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: both))].bitPattern
                let second = table[Int(truncatingIfNeeded: both >> 32)].bitPattern
                pairs[4 * v + k] = UInt64(second) << 32 | UInt64(first)
            }
        }
    }
}

/// The entry of a `CurveTable.size`-entry table nearest to each lane of `value` (in 0…1).
@inline(__always)
func nearestEntry(_ table: UnsafeMutablePointer<Float>, _ value: SIMD8<Float>) -> SIMD8<Float> {
    let position = value * Float(CurveTable.size - 1) + 0.5
    var result = SIMD8<Float>()
    for lane in 0..<8 { result[lane] = table[Int(Int32(position[lane]))] }
    return result
}

extension ColorMatrix {
    /// The run's first transform when it is a matrix (the identity otherwise), and the transforms after it: the matrix a
    /// per-pixel kernel folds into its conversion from Y'CbCr.
    static func leading(_ run: [ColorTransform]) -> (ColorMatrix, ArraySlice<ColorTransform>) {
        if case .affine(let matrix) = run.first?.kind { return (matrix, run.dropFirst()) }
        return (.identity, run[...])
    }

    /// `self` applied after `first`: `self·(first·rgb + first.offset) + self.offset`.
    func after(_ first: ColorMatrix) -> ColorMatrix {
        func column(_ c: Int) -> SIMD3<Float> { SIMD3(first.red[c], first.green[c], first.blue[c]) }
        let columns = (column(0), column(1), column(2))
        func row(_ r: SIMD3<Float>) -> SIMD3<Float> { SIMD3((r * columns.0).sum(), (r * columns.1).sum(), (r * columns.2).sum()) }
        return ColorMatrix(rows: (row(red), row(green), row(blue)), offset: apply(first.offset))
    }

    /// True when every point of the unit cube maps inside it (checked on its 8 corners; the map is affine), so the
    /// clamp after this matrix never acts on clamped input.
    var keepsUnitCube: Bool {
        (0..<8).allSatisfy { corner in
            let point = SIMD3<Float>(Float(corner & 1), Float((corner >> 1) & 1), Float((corner >> 2) & 1))
            let out = apply(point)
            return out.min() >= 0 && out.max() <= 1
        }
    }
}
