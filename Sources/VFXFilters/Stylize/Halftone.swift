import Foundation
import VFXCore
import VFXPipeline

// Halftone screens: the picture's luma Y' compared with a periodic pattern P in 0…1 to print black or white, as
// a press does. With (u, v) the pixel centre relative to `center`, turned by −`angle`, and w the `width` of a
// period, the output is gray g = clamp(½ + (Y' − P) / (1 − sharpness), 0, 1) (sharpness 1 would be a hard edge).
// Patterns: dot ½ + ¼(cos 2πu/w + cos 2πv/w); line ½ + ½ cos 2πv/w; circular ½ + ½ cos 2πr/w (r = |(u, v)|);
// hatched min(½ + ½ cos 2πu/w, ½ + ½ cos 2πv/w).

/// The patterns of the screens.
enum ScreenPattern: Sendable {
    case dot, line, circular, hatched
}

extension FilterSpec {
    /// A screen filter. Concentric circles look the same turned by any angle, so `circular-screen` takes no `angle`.
    static func screen(_ name: String, _ pattern: ScreenPattern, coreImage: String, summary: String, width: Double) -> FilterSpec {
        let turns = pattern != .circular
        return FilterSpec(
            name: name, family: .halftone, summary: summary, coreImage: coreImage,
            parameters: [ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "origin of the pattern")]
                + (turns ? [ParameterSpec("angle", .angle(-360...360), default: 0, "rotation of the pattern")] : [])
                + [ParameterSpec("width", .number(2...500, unit: "px"), default: width, "period of the pattern"),
                   ParameterSpec("sharpness", .number(0...0.99), default: 0.7, "0 soft, towards 1 hard black and white")],
            example: turns ? "\(name):width=8:angle=45" : "\(name):width=8",
            swift: "try FilterDescription(\"\(name)\", [\"width\": .number(8)])"
        ) { arguments, context in
            let center = arguments.point("center")
            let screen = Screen(pattern: pattern, center: SIMD2(center.x, center.y), angle: arguments.number("angle") * .pi / 180,
                                period: arguments.number("width"), softness: 1 - arguments.number("sharpness"))
            return .processor(ScreenProcessor(name: name, screen: screen, slices: context.slices))
        }
    }

    /// Dot halftone (see the file's comment for the formula). Formats: all (gray frames come out RGBA).
    /// Chain: `dot-screen:width=8:angle=45` · Swift: `try FilterDescription("dot-screen", ["width": .number(8)])`
    public static let dotScreen = screen("dot-screen", .dot, coreImage: "CIDotScreen", summary: "Black-and-white dot halftone of luma.", width: 6)
    /// Line halftone. Chain: `line-screen:width=8:angle=45`.
    public static let lineScreen = screen("line-screen", .line, coreImage: "CILineScreen", summary: "Black-and-white line halftone of luma.", width: 6)
    /// Concentric-circle halftone (no `angle`: the rings are the same turned). Chain: `circular-screen:width=8`.
    public static let circularScreen = screen("circular-screen", .circular, coreImage: "CICircularScreen",
                                              summary: "Black-and-white halftone of concentric circles.", width: 6)
    /// Cross-hatched halftone. Chain: `hatched-screen:width=8:angle=45`.
    public static let hatchedScreen = screen("hatched-screen", .hatched, coreImage: "CIHatchedScreen",
                                             summary: "Black-and-white cross-hatched halftone of luma.", width: 6)
}

/// One screen's parameters: `center` normalized (0…1 across the frame), `angle` in radians, `period` (the `width`
/// parameter) in pixels, `softness` = 1 − sharpness.
struct Screen: Sendable {
    let pattern: ScreenPattern
    let center: SIMD2<Double>
    let angle: Double
    let period: Double
    let softness: Double
}

/// The stage of the screens. Every format is worked on in its own planes, eight pixels at a time:
/// - I420/NV12: Y' from each pixel's R'G'B' (its luma code and its 2×2 block's chroma, clamped to the R'G'B'
///   cube, so pixels outside the cube count as the RGB frame shows them); the output gray is written as luma
///   codes and the chroma planes are set to 128 (the chroma of every gray).
/// - RGBA/BGRA: Y' from the bytes, gray written to R, G, B, alpha kept.
/// - GRAY8: Y' is the byte; the frames come out RGBA (full range, the input's matrix), alpha 255.
/// The pattern of a row costs two multiply-adds per cosine (see `ScreenRows`). Frames owned by the stage alone are
/// written in place, others into a pool buffer.
///
/// ```swift
/// let stage = ScreenProcessor(name: "dot-screen", screen: Screen(pattern: .dot, center: [0.5, 0.5], angle: 0,
///                                                                period: 8, softness: 0.3), slices: SliceRunner(threads: 1))
/// ```
final class ScreenProcessor: VideoProcessor {
    let name: String
    let screen: Screen
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var rows: ScreenRows?
    private var pool: BufferPool?
    private var outputColor: ColorDescription?

    init(name: String, screen: Screen, slices: SliceRunner) {
        self.name = name
        self.screen = screen
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let output = input.colorCapable
        outputColor = output.color
        pool = BufferPool(format: output.pixelFormat, width: input.width, height: input.height, capacity: 3)
        rows = ScreenRows(screen, format: input, slices: slices.threads)
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let rows, let outputColor else { return frame }
        var source = frame
        if source.format == .gray8 {
            var output = VideoFrame(buffer: pool?.makeBuffer() ?? PixelBuffer(format: .rgba, width: source.width, height: source.height),
                                    metadataFrom: source)
            output.color = outputColor
            output.withMutablePlanes { targets in rows.run(source: source.planes, target: targets, slices: slices) }
            return withExtendedLifetime(source) { output }
        }
        if source.isUniquelyReferenced() {
            source.withMutablePlanes { planes in rows.run(source: planes, target: planes, slices: slices) }
            return source
        }
        var output = source.makeSibling(pool: pool)
        output.withMutablePlanes { targets in rows.run(source: source.planes, target: targets, slices: slices) }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        rows = nil
        pool = nil
    }
}

/// A screen laid over one frame format: the tables that make a row of the pattern cheap, the constants that turn
/// (Y', P) into output codes, and each slice's scratch rows.
///
/// The output code is `clamp(Q + L / softness, low, low + scale)` with L the pixel's luma in the format's units and
/// Q = K − (scale / softness)·(P − ½), one value per pixel of the row (`fill`):
/// - dot, line, hatched: u and v are affine in x, so cos(2πu/w) = cu[x]·cos β − su[x]·sin β with cu, su the cosine
///   and sine of the column's part (tables made here) and β the row's part: two multiply-adds per cosine.
/// - circular: r/w = √((dx/w)² + (dy/w)²) from a column table and the row's term, then cos 2π(r/w) by a
///   polynomial on the fraction of a period (Taylor to f¹⁶ on |f| ≤ ½: within 1.4·10⁻⁷).
/// Errors in P: dot, line, hatched ≤ 10⁻⁶ (Float tables and products); circular ≤ 2·10⁻⁶ + 10⁻⁶·(r/w) (r/w held in a
/// Float to ≤ 3·10⁻⁷ of itself: ≤ 1.4·10⁻⁴ at the corners of 1080p with w = 8). The output moves by that times
/// scale/softness, in codes (0.1 code there at the default sharpness).
final class ScreenRows: @unchecked Sendable {
    // Sendable: the tables are written in init and only read afterwards; during a frame each slice writes only its
    // own scratch (offset by its slice number) and the rows of its range.
    let pattern: ScreenPattern
    let width: Int, height: Int
    let format: PixelFormat
    /// Floats per table row: the width rounded up to 16 (so a chroma row's 8-sample blocks fill whole pixel blocks).
    let padded: Int
    /// Four column tables of `padded` floats: cu, su, cv, sv (circular: (dx/w)² in the first).
    private let columns: UnsafeMutablePointer<Float>
    /// Circular screen whose centre lies on a pixel boundary or centre (e.g. the middle of the frame): its column
    /// table is symmetric, (dx/w)² of column x the same Float as that of column width − 1 − x, so Q is too and the
    /// columns below this multiple of 8 (≤ width/2) are copied from their mirror images. 0 otherwise.
    private let mirrored: Int
    /// Per row: the multipliers of cu, su, cv, sv (circular: (dy/w)² in the first lane).
    private let rowTerms: [SIMD4<Float>]
    /// K, and for the circular screen the polynomial's coefficients (lanes 0…8) already times −(scale / softness)/2.
    private let constant: Float
    private let cosine: SIMD16<Float>
    /// Output codes: `low…high`; `gain` = 1 / softness; the luma weights in byte order (RGBA/BGRA) or R, G, B.
    private let low: Float, high: Float, gain: Float
    private let weights: SIMD3<Float>
    /// YUV: chroma (minus 128) to the R'G'B' offsets from the luma code, in luma codes.
    private let redFromCr: Float, greenFromCb: Float, greenFromCr: Float, blueFromCb: Float
    /// Per slice: the pattern row Q, then per pixel of the chroma row (YUV) the R, G, B offsets and the range of luma
    /// codes that keeps R', G', B' in the cube.
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchPerSlice: Int

    init(_ screen: Screen, format: FrameFormat, slices: Int) {
        pattern = screen.pattern
        width = format.width
        height = format.height
        self.format = format.pixelFormat
        let padded = (format.width + 15) / 16 * 16
        self.padded = padded
        let coding = YUVCoding(format.color)
        let luma = coding.weights
        // Luma units: YUV luma codes (offset included), else bytes 0…255.
        let scale: Double, offset: Double
        switch format.pixelFormat {
        case .i420, .nv12:
            (scale, offset) = (Double(coding.lumaScale), Double(coding.lumaOffset))
            weights = luma.vector
        case .bgra:
            (scale, offset) = (255, 0)
            weights = SIMD3(luma.blue, luma.green, luma.red)
        case .rgba:
            (scale, offset) = (255, 0)
            weights = luma.vector
        case .gray8:
            (scale, offset) = (255, 0)
            weights = SIMD3(repeating: luma.red + luma.green + luma.blue)
        }
        let softness = screen.softness
        let slope = scale / softness
        (low, high, gain) = (Float(offset), Float(offset + scale), Float(1 / softness))
        constant = Float(offset + scale / 2 - offset / softness - slope / 2)
        let toLuma = coding.lumaScale / coding.chromaScale
        redFromCr = coding.redFromPr * toLuma
        blueFromCb = coding.blueFromPb * toLuma
        greenFromCr = -luma.red * coding.redFromPr / luma.green * toLuma
        greenFromCb = -luma.blue * coding.blueFromPb / luma.green * toLuma

        let k = 2 * Double.pi / screen.period, w2 = screen.period * screen.period
        let (c, s) = (cos(screen.angle), sin(screen.angle))
        let cx = screen.center.x * Double(format.width), cy = screen.center.y * Double(format.height)
        let pattern = screen.pattern
        let table = UnsafeMutablePointer<Float>.allocate(capacity: 4 * padded)
        for x in 0..<padded {
            let dx = Double(x) + 0.5 - cx
            if pattern == .circular {
                table[x] = Float(dx * dx / w2)
            } else {
                // u = dx·c + dy·s, v = −dx·s + dy·c.
                table[x] = Float(cos(k * c * dx))
                table[padded + x] = Float(sin(k * c * dx))
                table[2 * padded + x] = Float(cos(-k * s * dx))
                table[3 * padded + x] = Float(sin(-k * s * dx))
            }
        }
        columns = table
        let half = format.width / 2 / 8 * 8
        mirrored = pattern == .circular && (0..<format.width).allSatisfy { table[$0] == table[format.width - 1 - $0] } ? half : 0
        rowTerms = (0..<format.height).map { y in
            let dy = Double(y) + 0.5 - cy
            let (bu, bv) = (k * s * dy, k * c * dy)
            // cos(a + β) = cos a cos β − sin a sin β, each cosine times −slope·(its share of P − ½).
            let share: Double
            switch pattern {
            case .dot: share = 0.25
            case .line, .hatched: share = 0.5
            case .circular: return SIMD4(Float(dy * dy / w2), 0, 0, 0)
            }
            let m = slope * share
            return SIMD4(Float(-m * cos(bu)), Float(m * sin(bu)), Float(-m * cos(bv)), Float(m * sin(bv)))
        }
        // cos 2πf = Σ (−1)ⁿ (2πf)²ⁿ / (2n)!, n ≤ 8, times −slope/2.
        var polynomial = SIMD16<Float>(), term = -slope / 2
        for n in 0...8 {
            polynomial[n] = Float(term)
            term *= -4 * Double.pi * Double.pi / Double((2 * n + 1) * (2 * n + 2))
        }
        cosine = polynomial
        scratchPerSlice = 6 * padded
        scratch = .allocate(capacity: max(1, slices) * 6 * padded)
        scratch.initialize(repeating: 0, count: max(1, slices) * 6 * padded)
    }

    deinit {
        columns.deallocate()
        scratch.deallocate()
    }

    /// Screens `source` into `target` (the same planes when in place), split over `slices` (YUV: by chroma rows).
    func run(source: [Plane], target: [Plane], slices: SliceRunner) {
        switch format {
        case .i420, .nv12:
            slices.forEachSlice(of: (height + 1) / 2) { chromaRows, slice in
                for cy in chromaRows { yuvRows(cy, source: source, target: target, slice: slice) }
            }
        case .rgba, .bgra, .gray8:
            slices.forEachSlice(of: height) { rows, slice in
                let q = scratch + slice * scratchPerSlice
                for y in rows {
                    fill(row: y, into: q)
                    if format == .gray8 {
                        grayRow(source[0].row(y), into: target[0].row(y), q: q)
                    } else {
                        packedRow(source[0].row(y), into: target[0].row(y), q: q)
                    }
                }
            }
        }
    }

    /// Q for every pixel of row `y` (and the padding after it).
    @inline(__always)
    func fill(row y: Int, into q: UnsafeMutablePointer<Float>) {
        let terms = rowTerms[y], k = SIMD8<Float>(repeating: constant)
        let (cu, su, cv, sv) = (columns, columns + padded, columns + 2 * padded, columns + 3 * padded)
        let r0 = SIMD8<Float>(repeating: terms.x), r1 = SIMD8<Float>(repeating: terms.y)
        let r2 = SIMD8<Float>(repeating: terms.z), r3 = SIMD8<Float>(repeating: terms.w)
        switch pattern {
        case .dot:
            for block in 0..<padded / 8 {
                let x = 8 * block
                k.addingProduct(SIMD8(loadingFrom: cu + x), r0).addingProduct(SIMD8(loadingFrom: su + x), r1)
                    .addingProduct(SIMD8(loadingFrom: cv + x), r2).addingProduct(SIMD8(loadingFrom: sv + x), r3).store(to: q + x)
            }
        case .line:
            for block in 0..<padded / 8 {
                let x = 8 * block
                k.addingProduct(SIMD8(loadingFrom: cv + x), r2).addingProduct(SIMD8(loadingFrom: sv + x), r3).store(to: q + x)
            }
        case .hatched:
            // −min(a, b) = max(−a, −b): the row terms already carry the minus sign.
            for block in 0..<padded / 8 {
                let x = 8 * block
                let a = (SIMD8(loadingFrom: cu + x) * r0).addingProduct(SIMD8(loadingFrom: su + x), r1)
                let b = (SIMD8(loadingFrom: cv + x) * r2).addingProduct(SIMD8(loadingFrom: sv + x), r3)
                (k + a.replacing(with: b, where: b .> a)).store(to: q + x)
            }
        case .circular:
            let c = cosine
            let (c0, c1, c2) = (SIMD8<Float>(repeating: c[0]), SIMD8<Float>(repeating: c[1]), SIMD8<Float>(repeating: c[2]))
            let (c3, c4, c5) = (SIMD8<Float>(repeating: c[3]), SIMD8<Float>(repeating: c[4]), SIMD8<Float>(repeating: c[5]))
            let (c6, c7, c8) = (SIMD8<Float>(repeating: c[6]), SIMD8<Float>(repeating: c[7]), SIMD8<Float>(repeating: c[8]))
            // Columns left of `mirrored` repeat, in reverse, those right of the frame's middle (see `mirrored`).
            for block in mirrored / 8..<padded / 8 {
                let x = 8 * block
                let t = squareRoot(SIMD8(loadingFrom: cu + x) + r0)
                // The nearest whole period (t < 2²²): adding 1.5·2²³ rounds to an integer.
                let f = t - ((t + 12_582_912) - 12_582_912)
                let z = f * f
                let high = c4.addingProduct(c5.addingProduct(c6.addingProduct(c7.addingProduct(c8, z), z), z), z)
                let p = c0.addingProduct(c1.addingProduct(c2.addingProduct(c3.addingProduct(high, z), z), z), z)
                (k + p).store(to: q + x)
            }
            for block in 0..<mirrored / 8 {
                let x = 8 * block
                let right = SIMD8<Float>(loadingFrom: q + width - 8 - x)
                var left = SIMD8<Float>()
                for lane in 0..<8 { left[lane] = right[7 - lane] }
                left.store(to: q + x)
            }
        }
    }

    /// One RGBA or BGRA row: gray from the weighted bytes, alpha kept.
    @inline(__always)
    func packedRow(_ input: UnsafeMutablePointer<UInt8>, into output: UnsafeMutablePointer<UInt8>, q: UnsafeMutablePointer<Float>) {
        let mask = SIMD8<UInt32>(repeating: 0xFF)
        let (w0, w1, w2) = (SIMD8<Float>(repeating: weights.x * gain), SIMD8<Float>(repeating: weights.y * gain),
                            SIMD8<Float>(repeating: weights.z * gain))
        @inline(__always) func gray(_ pixels: SIMD8<UInt32>, at x: Int) -> SIMD8<UInt32> {
            let codes = outputCodes(SIMD8(loadingFrom: q + x).addingProduct(bytesAsFloats(pixels & mask), w0)
                .addingProduct(bytesAsFloats((pixels &>> 8) & mask), w1).addingProduct(bytesAsFloats((pixels &>> 16) & mask), w2))
            return codes &* 0x01_0101 | (pixels & 0xFF00_0000)
        }
        let (whole, rest) = (width / 8 * 8, width % 8)
        for block in 0..<whole / 8 {
            let x = 8 * block
            storeWords(gray(loadWords(input + 4 * x, count: 8), at: x), to: output + 4 * x, count: 8)
        }
        if rest > 0 {
            storeWords(gray(loadWords(input + 4 * whole, count: rest), at: whole), to: output + 4 * whole, count: rest)
        }
    }

    /// One GRAY8 row into an RGBA row, alpha 255.
    @inline(__always)
    func grayRow(_ input: UnsafeMutablePointer<UInt8>, into output: UnsafeMutablePointer<UInt8>, q: UnsafeMutablePointer<Float>) {
        let w = SIMD8<Float>(repeating: weights.x * gain)
        @inline(__always) func gray(_ values: SIMD8<Float>, at x: Int) -> SIMD8<UInt32> {
            outputCodes(SIMD8(loadingFrom: q + x).addingProduct(values, w)) &* 0x01_0101 | 0xFF00_0000
        }
        let (whole, rest) = (width / 8 * 8, width % 8)
        for block in 0..<whole / 8 {
            let x = 8 * block
            storeWords(gray(SIMD8<Float>(bytesAt: input + x), at: x), to: output + 4 * x, count: 8)
        }
        if rest > 0 {
            storeWords(gray(loadFloats(input + whole, count: rest), at: whole), to: output + 4 * whole, count: rest)
        }
    }

    /// Chroma row `cy` of a YUV frame: its two luma rows, then neutral chroma.
    @inline(__always)
    func yuvRows(_ cy: Int, source: [Plane], target: [Plane], slice: Int) {
        let q = scratch + slice * scratchPerSlice
        let (red, green, blue) = (q + padded, q + 2 * padded, q + 3 * padded)
        let (lower, upper) = (q + 4 * padded, q + 5 * padded)
        let chromaWidth = (width + 1) / 2
        let nv12 = format == .nv12
        // R'G'B' offsets from the luma code of each pixel, from its block's chroma (each sample covers two pixels).
        let (u, v) = nv12 ? (source[1].row(cy), source[1].row(cy) + 1) : (source[1].row(cy), source[2].row(cy))
        let (rCr, gCb, gCr, bCb) = (redFromCr, greenFromCb, greenFromCr, blueFromCb)
        for block in 0..<(chromaWidth + 7) / 8 {
            let cx = 8 * block
            let count = min(8, chromaWidth - cx)
            var cb = SIMD8<Float>(), cr = SIMD8<Float>()
            if nv12 {
                for lane in 0..<count { cb[lane] = Float(u[2 * (cx + lane)]); cr[lane] = Float(v[2 * (cx + lane)]) }
            } else {
                cb = loadFloats(u + cx, count: count)
                cr = loadFloats(v + cx, count: count)
            }
            cb -= 128
            cr -= 128
            let (r, g, b) = (cr * rCr, (cb * gCb).addingProduct(cr, gCr), cb * bCb)
            storeDoubled(r, to: red + 2 * cx)
            storeDoubled(g, to: green + 2 * cx)
            storeDoubled(b, to: blue + 2 * cx)
            // The luma codes whose R', G', B' all lie in the cube: there the clamps change nothing and L is the code.
            let (rgLeast, rgMost) = (r.replacing(with: g, where: g .< r), r.replacing(with: g, where: g .> r))
            let (least, most) = (rgLeast.replacing(with: b, where: b .< rgLeast), rgMost.replacing(with: b, where: b .> rgMost))
            storeDoubled(SIMD8(repeating: low) - least, to: lower + 2 * cx)
            storeDoubled(SIMD8(repeating: high) - most, to: upper + 2 * cx)
        }
        let (w0, w1, w2) = (SIMD8<Float>(repeating: weights.x * gain), SIMD8<Float>(repeating: weights.y * gain),
                            SIMD8<Float>(repeating: weights.z * gain))
        let (lowest, highest, slope) = (low, high, SIMD8<Float>(repeating: gain))
        for y in (2 * cy)..<min(2 * cy + 2, height) {
            fill(row: y, into: q)
            let input = source[0].row(y), output = target[0].row(y)
            for block in 0..<(width + 7) / 8 {
                let x = 8 * block
                let count = min(8, width - x)
                let luma = loadFloats(input + x, count: count)
                let inside = (luma .>= SIMD8(loadingFrom: lower + x)) .& (luma .<= SIMD8(loadingFrom: upper + x))
                var codes = SIMD8<Float>(loadingFrom: q + x)
                if all(inside) {
                    codes = codes.addingProduct(luma, slope)
                } else {
                    let r = (luma + SIMD8(loadingFrom: red + x)).clamped(lowest, highest)
                    let g = (luma + SIMD8(loadingFrom: green + x)).clamped(lowest, highest)
                    let b = (luma + SIMD8(loadingFrom: blue + x)).clamped(lowest, highest)
                    codes = codes.addingProduct(r, w0).addingProduct(g, w1).addingProduct(b, w2)
                }
                let bytes = roundedBytes(codes.clamped(lowest, highest))
                if count == 8 {
                    output.advanced(by: x).store(bytes)
                } else {
                    for lane in 0..<count { output[x + lane] = bytes[lane] }
                }
            }
        }
        if nv12 {
            target[1].row(cy).update(repeating: 128, count: 2 * chromaWidth)
        } else {
            target[1].row(cy).update(repeating: 128, count: chromaWidth)
            target[2].row(cy).update(repeating: 128, count: chromaWidth)
        }
    }

    /// Clamps to `low…high` and rounds to whole codes, as 32-bit lanes.
    @inline(__always)
    private func outputCodes(_ values: SIMD8<Float>) -> SIMD8<UInt32> {
        unsafeBitCast(values.clamped(low, high) + 8_388_608, to: SIMD8<UInt32>.self) & 0xFF
    }
}

/// √q of non-negative lanes: 1/√q from the exponent-halving guess (within 3.5 %) refined by three Newton steps
/// (each squares the relative error: 2·10⁻³, 5·10⁻⁶, then Float rounding, ≤ 2 ulp), times q. q = 0 gives 0.
/// (`Float.squareRoot` on Linux becomes a call guarded for negative input, lane by lane.)
@inline(__always)
private func squareRoot(_ q: SIMD8<Float>) -> SIMD8<Float> {
    let bits = unsafeBitCast(q, to: SIMD8<UInt32>.self)
    var y = unsafeBitCast(0x5F37_59DF &- (bits &>> 1), to: SIMD8<Float>.self)
    let half = q * 0.5
    for _ in 0..<3 { y *= SIMD8<Float>(repeating: 1.5).addingProduct(-half * y, y) }
    return q * y
}

/// Values below 2²³ as floats: the value in the low mantissa bits of 2²³, minus 2²³. (This and the loads and stores
/// below are shared with the ink effects.)
@inline(__always)
func bytesAsFloats(_ values: SIMD8<UInt32>) -> SIMD8<Float> {
    unsafeBitCast(values | 0x4B00_0000, to: SIMD8<Float>.self) - 8_388_608
}

/// `count` (≤ 8) bytes as floats, zero after them.
@inline(__always)
func loadFloats(_ pointer: UnsafePointer<UInt8>, count: Int) -> SIMD8<Float> {
    if count == 8 { return SIMD8<Float>(bytesAt: pointer) }
    var values = SIMD8<Float>()
    for lane in 0..<count { values[lane] = Float(pointer[lane]) }
    return values
}

/// `count` (≤ 8) packed pixels as 32-bit words, zero after them.
@inline(__always)
func loadWords(_ pointer: UnsafeMutablePointer<UInt8>, count: Int) -> SIMD8<UInt32> {
    let raw = UnsafeRawPointer(pointer)
    if count == 8 { return raw.loadUnaligned(as: SIMD8<UInt32>.self) }
    var words = SIMD8<UInt32>()
    for lane in 0..<count { words[lane] = raw.loadUnaligned(fromByteOffset: 4 * lane, as: UInt32.self) }
    return words
}

/// Stores the first `count` (≤ 8) words as packed pixels.
@inline(__always)
func storeWords(_ words: SIMD8<UInt32>, to pointer: UnsafeMutablePointer<UInt8>, count: Int) {
    let raw = UnsafeMutableRawPointer(pointer)
    if count == 8 {
        raw.storeBytes(of: words, as: SIMD8<UInt32>.self)
    } else {
        for lane in 0..<count { raw.storeBytes(of: words[lane], toByteOffset: 4 * lane, as: UInt32.self) }
    }
}

/// Stores each of 8 lanes twice (a chroma sample's two pixels): 16 floats.
@inline(__always)
private func storeDoubled(_ values: SIMD8<Float>, to pointer: UnsafeMutablePointer<Float>) {
    var low = SIMD8<Float>(), high = SIMD8<Float>()
    for lane in 0..<8 {
        low[lane] = values[lane / 2]
        high[lane] = values[4 + lane / 2]
    }
    low.store(to: pointer)
    high.store(to: pointer + 8)
}
