import VFXCore
import VFXPipeline

// Ink effects: looks drawn from the picture's edges. Each pixel's edge strength is e = √(gx² + gy²) / 4, gx and gy the
// 3×3 Sobel responses on luma Y' = Kr·R' + Kg·G' + Kb·B' (0…1, the frame's weights; edges repeat the border). An ink
// factor k comes from e, hard (k = 0 where e ≥ threshold, else 1) or soft (k = 1 − clamp((e − threshold)·contrast, 0, 1)),
// and the output is a colour times k:
// - edge-work: white · k, hard;                      - line-overlay: R'G'B' · k, soft;
// - comic-effect: posterize(R'G'B', 5) · k, hard;     - cartoon: posterize(R'G'B', levels) · k, soft;
// with posterize(v, L) = round(v·(L − 1)) / (L − 1) per channel. Alpha is kept; gray frames come out RGBA (R' = G' = B').
// On I420 and NV12 the picture is the one the RGB frame shows: each pixel's R'G'B' decoded from its luma code and its
// 2×2 block's chroma and clamped to the R'G'B' cube (Y' is that colour's luma, which is the luma code's own value except
// for pixels outside the cube); the result is coded back with the frame's coding, luma per pixel and each chroma sample
// from the mean of its block's pixels (as converting to RGB, applying the effect and converting back would, without the
// rounding to bytes in between).

/// What an ink effect does with a pixel's colour and its edge strength.
enum InkStyle: Sendable {
    /// Black where e ≥ threshold, white elsewhere.
    case edgeWork(threshold: Float)
    /// The colour darkened by ink: rgb · (1 − clamp((e − threshold) · contrast)).
    case lineOverlay(threshold: Float, contrast: Float)
    /// Posterized colour (levels per channel, rounded) under hard black lines where e ≥ threshold.
    case comic(levels: Float, threshold: Float)
    /// Posterized colour darkened by soft ink: posterize(rgb) · (1 − clamp((e − threshold) · contrast)).
    case cartoon(levels: Float, threshold: Float, contrast: Float)
}

/// The stage of the ink effects. Every format is worked on in its own planes, without converting the frame; each
/// slice keeps three rows of luma (in Float, padded by one repeated pixel on each side) and one or two rows of k:
/// 1. a frame row's luma is computed once (RGBA/BGRA: the weighted bytes; GRAY8: the byte; I420/NV12: the luma of the
///    decoded, clamped R'G'B', 16 pixels at a time) into the ring, for the row below the one being inked;
/// 2. the Sobel responses of eight pixels are nine vector loads from the ring, and k comes from q = gx² + gy² (in the
///    luma's units, `scale` per 1 of Y'): hard ink compares q with (4·scale·threshold)² (no square root), soft ink
///    takes √q from `RampLanes.squareRoots`;
/// 3. the row is written: RGBA/BGRA/GRAY8 eight pixels at a time as 32-bit words (each channel painted, times k,
///    rounded); I420/NV12 a chroma row at a time with its two luma rows, 16 columns at a time (edge-work on luma alone,
///    chroma neutral).
/// The output goes into a pool buffer (the ring reads the rows around the one written). Rows are split over `slices`
/// (YUV by chroma rows).
///
/// ```swift
/// let stage = InkProcessor(name: "cartoon", style: .cartoon(levels: 6, threshold: 0.06, contrast: 10),
///                          slices: SliceRunner(threads: 1))
/// ```
final class InkProcessor: VideoProcessor {
    let name: String
    let style: InkStyle
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var rows: InkRows?
    private var pool: BufferPool?

    init(name: String, style: InkStyle, slices: SliceRunner) {
        self.name = name
        self.style = style
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let output = input.colorCapable
        pool = BufferPool(format: output.pixelFormat, width: input.width, height: input.height, capacity: 3)
        rows = InkRows(width: input.width, height: input.height, slices: slices.threads)
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let rows, let pool else { return frame }
        let source = frame
        var output = VideoFrame(buffer: pool.makeBuffer(), metadataFrom: source)
        if source.format == .gray8 { output.color = ColorDescription(matrix: source.color.matrix, range: .full) }
        let units = InkUnits(format: source.format, color: source.color)
        let (planes, slices, scale) = (source.planes, self.slices, units.scale)
        output.withMutablePlanes { targets in
            switch style {
            case .edgeWork(let threshold):
                rows.run(units, HardInk(threshold: threshold, scale: scale), WhitePaper(white: scale), planes, targets, slices)
            case .lineOverlay(let threshold, let contrast):
                rows.run(units, SoftInk(threshold: threshold, contrast: contrast, scale: scale), PicturePaper(), planes, targets, slices)
            case .comic(let levels, let threshold):
                rows.run(units, HardInk(threshold: threshold, scale: scale), PosterPaper(levels: levels, scale: scale), planes, targets, slices)
            case .cartoon(let levels, let threshold, let contrast):
                rows.run(units, SoftInk(threshold: threshold, contrast: contrast, scale: scale), PosterPaper(levels: levels, scale: scale),
                         planes, targets, slices)
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        rows = nil
        pool = nil
    }
}

/// How the ink factor k follows from q = gx² + gy², the squared Sobel responses in luma units of `scale` per 1 of Y'
/// (so e = √q / (4·scale)), eight pixels at a time.
protocol InkRule: Sendable {
    func factor(_ q: SIMD8<Float>) -> SIMD8<Float>
}

/// k = 0 where e ≥ threshold, else 1: where q ≥ (4·scale·threshold)², taken as clamp((limit − q)·2¹⁰⁰, 0, 1). A q below
/// the limit is below it by at least limit·2⁻²⁴ (Floats), which times 2¹⁰⁰ is ≥ 1 for every limit from 2⁻⁷⁶ (any threshold
/// from 10⁻¹⁴, and 0, whose limit 0 makes every pixel black).
struct HardInk: InkRule {
    let limit: Float

    init(threshold: Float, scale: Float) {
        let root = 4 * scale * threshold
        limit = root * root
    }

    @inline(__always) func factor(_ q: SIMD8<Float>) -> SIMD8<Float> {
        RampLanes.unitClamped((SIMD8(repeating: limit) - q) * 0x1p100)
    }
}

/// k = 1 − clamp((e − threshold)·contrast, 0, 1) = clamp(1 + threshold·contrast − √q·contrast / (4·scale), 0, 1).
struct SoftInk: InkRule {
    let offset: Float, slope: Float

    init(threshold: Float, contrast: Float, scale: Float) {
        offset = 1 + threshold * contrast
        slope = contrast / (4 * scale)
    }

    @inline(__always) func factor(_ q: SIMD8<Float>) -> SIMD8<Float> {
        RampLanes.unitClamped(SIMD8(repeating: offset) - RampLanes.squareRoots(q) * SIMD8(repeating: slope))
    }
}

/// What the ink is laid on: a colour channel (bytes, or YUV codes above black, clamped to 0…scale) before the ink, eight
/// or sixteen lanes at a time.
protocol InkPaper: Sendable {
    /// False when the result does not depend on the pixel's colour (white paper).
    var usesColour: Bool { get }
    func paint(_ channel: SIMD8<Float>) -> SIMD8<Float>
    func paint(_ channel: SIMD16<Float>) -> SIMD16<Float>
}

/// White whatever the colour: `white` is 1 in the channel's units.
struct WhitePaper: InkPaper {
    let white: Float
    var usesColour: Bool { false }
    @inline(__always) func paint(_ channel: SIMD8<Float>) -> SIMD8<Float> { SIMD8(repeating: white) }
    @inline(__always) func paint(_ channel: SIMD16<Float>) -> SIMD16<Float> { SIMD16(repeating: white) }
}

/// The picture's own colour.
struct PicturePaper: InkPaper {
    var usesColour: Bool { true }
    @inline(__always) func paint(_ channel: SIMD8<Float>) -> SIMD8<Float> { channel }
    @inline(__always) func paint(_ channel: SIMD16<Float>) -> SIMD16<Float> { channel }
}

/// The colour posterized to `levels` per channel: v → round(v·(levels − 1)/scale)·scale/(levels − 1), rounding by adding
/// and taking away 1.5·2²³. On bytes there are no halves to break (2v(L − 1) is even, 255·odd is odd); on YUV a channel
/// exactly halfway between two levels goes to the even index.
struct PosterPaper: InkPaper {
    let toIndex: Float, fromIndex: Float
    var usesColour: Bool { true }

    init(levels: Float, scale: Float) {
        toIndex = (levels - 1) / scale
        fromIndex = scale / (levels - 1)
    }

    @inline(__always) func paint(_ channel: SIMD8<Float>) -> SIMD8<Float> {
        let magic = SIMD8<Float>(repeating: 12_582_912)
        return ((channel * SIMD8(repeating: toIndex) + magic) - magic) * SIMD8(repeating: fromIndex)
    }

    @inline(__always) func paint(_ channel: SIMD16<Float>) -> SIMD16<Float> {
        let magic = SIMD16<Float>(repeating: 12_582_912)
        return ((channel * SIMD16(repeating: toIndex) + magic) - magic) * SIMD16(repeating: fromIndex)
    }
}

/// The units an ink stage works in on one frame format and colour description.
struct InkUnits: Sendable {
    let format: PixelFormat
    /// Y' = 1 in the stage's units (255 on bytes, the luma code scale on YUV), black at `offset` (YUV's luma offset).
    let scale: Float, offset: Float
    /// The luma weights in the order of the stored channels (RGBA and YUV: R, G, B; BGRA: B, G, R).
    let weights: SIMD3<Float>
    /// YUV: R', G', B' codes minus the luma code, per chroma code above 128.
    let redFromCr: Float, greenFromCb: Float, greenFromCr: Float, blueFromCb: Float
    /// YUV: Cb − 128 per code of B − Y, Cr − 128 per code of R − Y.
    let cbFromBlue: Float, crFromRed: Float

    init(format: PixelFormat, color: ColorDescription) {
        self.format = format
        let coding = YUVCoding(color), luma = coding.weights
        switch format {
        case .i420, .nv12: (scale, offset, weights) = (coding.lumaScale, coding.lumaOffset, luma.vector)
        case .bgra: (scale, offset, weights) = (255, 0, SIMD3(luma.blue, luma.green, luma.red))
        case .rgba, .gray8: (scale, offset, weights) = (255, 0, luma.vector)
        }
        let toLuma = coding.lumaScale / coding.chromaScale
        redFromCr = coding.redFromPr * toLuma
        blueFromCb = coding.blueFromPb * toLuma
        greenFromCr = -luma.red * coding.redFromPr / luma.green * toLuma
        greenFromCb = -luma.blue * coding.blueFromPb / luma.green * toLuma
        cbFromBlue = 1 / blueFromCb
        crFromRed = 1 / redFromCr
    }
}

/// One chroma row of a 4:2:0 frame: Cb and Cr samples `step` bytes apart (I420: two planes, step 1; NV12: one plane of
/// pairs, step 2).
struct ChromaRow {
    let cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>
    let interleaved: Bool

    init(_ planes: [Plane], row: Int, interleaved: Bool) {
        self.interleaved = interleaved
        if interleaved {
            cb = planes[1].row(row)
            cr = cb + 1
        } else {
            (cb, cr) = (planes[1].row(row), planes[2].row(row))
        }
    }

    /// `count` (≤ 8) samples from `cx`, minus 128 (zero after them).
    @inline(__always) func samples(at cx: Int, count: Int) -> (cb: SIMD8<Float>, cr: SIMD8<Float>) {
        guard interleaved else { return (loadFloats(cb + cx, count: count) - 128, loadFloats(cr + cx, count: count) - 128) }
        var (blue, red) = (SIMD8<Float>(), SIMD8<Float>())
        if count == 8 {
            let pairs = UnsafeRawPointer(cb + 2 * cx).loadUnaligned(as: SIMD16<UInt8>.self)
            for lane in 0..<8 { (blue[lane], red[lane]) = (Float(pairs[2 * lane]), Float(pairs[2 * lane + 1])) }
        } else {
            for lane in 0..<count { (blue[lane], red[lane]) = (Float(cb[2 * (cx + lane)]), Float(cr[2 * (cx + lane)])) }
        }
        return (blue - 128, red - 128)
    }

    /// Stores the first `count` (≤ 8) samples of `bytes` from `cx` (`RampLanes.chromaBytes`' layout).
    @inline(__always) func store(_ bytes: SIMD16<UInt8>, at cx: Int, count: Int) {
        if count == 8 {
            if interleaved {
                (cb + 2 * cx).store(bytes)
            } else {
                (cb + cx).store(bytes.lowHalf)
                (cr + cx).store(bytes.highHalf)
            }
        } else if interleaved {
            for lane in 0..<2 * count { cb[2 * cx + lane] = bytes[lane] }
        } else {
            for lane in 0..<count { (cb[cx + lane], cr[cx + lane]) = (bytes[lane], bytes[8 + lane]) }
        }
    }

    /// Every sample of a row of `count` set to `value`.
    func fill(_ value: UInt8, count: Int) {
        if interleaved {
            cb.update(repeating: value, count: 2 * count)
        } else {
            cb.update(repeating: value, count: count)
            cr.update(repeating: value, count: count)
        }
    }
}

/// The R', G', B' offsets from the luma code of 16 pixels from their 8 chroma samples (minus 128), each sample for its
/// two pixels: pixels 0…7, then 8…15.
@_transparent
private func offsets(_ samples: (cb: SIMD8<Float>, cr: SIMD8<Float>), _ units: InkUnits)
    -> (low: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>), high: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)) {
    let (cb, cr) = samples
    let red = cr * SIMD8(repeating: units.redFromCr), blue = cb * SIMD8(repeating: units.blueFromCb)
    let green = (cb * SIMD8(repeating: units.greenFromCb)).addingProduct(cr, SIMD8(repeating: units.greenFromCr))
    return ((doubled(red, from: 0), doubled(green, from: 0), doubled(blue, from: 0)),
            (doubled(red, from: 4), doubled(green, from: 4), doubled(blue, from: 4)))
}

/// Lanes `first`…`first + 3`, each twice (a chroma sample's two pixels).
@_transparent
private func doubled(_ values: SIMD8<Float>, from first: Int) -> SIMD8<Float> {
    var result = SIMD8<Float>()
    for lane in 0..<8 { result[lane] = values[first + lane / 2] }
    return result
}

/// The luma (codes above black) of 16 pixels' R'G'B' clamped to the cube, from their luma codes and chroma samples:
/// pixels 0…7, then 8…15.
@_transparent
private func clampedLuma(_ codes: SIMD16<Float>, _ samples: (cb: SIMD8<Float>, cr: SIMD8<Float>), _ units: InkUnits)
    -> (SIMD8<Float>, SIMD8<Float>) {
    let (low, high) = offsets(samples, units)
    let black = SIMD8<Float>(repeating: units.offset), scale = units.scale
    let (wr, wg, wb) = (SIMD8(repeating: units.weights.x), SIMD8(repeating: units.weights.y), SIMD8(repeating: units.weights.z))
    @_transparent func luma(_ y: SIMD8<Float>, _ offsets: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)) -> SIMD8<Float> {
        (RampLanes.clamped(y + offsets.0, scale) * wr).addingProduct(RampLanes.clamped(y + offsets.1, scale), wg)
            .addingProduct(RampLanes.clamped(y + offsets.2, scale), wb)
    }
    return (luma(codes.lowHalf - black, low), luma(codes.highHalf - black, high))
}

/// Eight pixels of a YUV row: their luma codes minus black, k and R', G', B' offsets → the painted colour's luma times k
/// (codes above black), and k·(B − Y), k·(R − Y).
@_transparent
private func inkedPixels<Paper: InkPaper>(_ y: SIMD8<Float>, _ k: SIMD8<Float>, _ offsets: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>),
                                          _ paper: Paper, _ units: InkUnits) -> (luma: SIMD8<Float>, blue: SIMD8<Float>, red: SIMD8<Float>) {
    let scale = units.scale
    let red = paper.paint(RampLanes.clamped(y + offsets.0, scale))
    let green = paper.paint(RampLanes.clamped(y + offsets.1, scale))
    let blue = paper.paint(RampLanes.clamped(y + offsets.2, scale))
    let luma = (red * SIMD8(repeating: units.weights.x)).addingProduct(green, SIMD8(repeating: units.weights.y))
        .addingProduct(blue, SIMD8(repeating: units.weights.z))
    return (luma * k, k * (blue - luma), k * (red - luma))
}

/// The rows of one ink stage (see `InkProcessor`): per slice, a ring of three luma rows and two rows of k, each
/// `stride` floats (pixel x of a luma row at index x + 1, with the border repeated at 0 and width + 1).
final class InkRows: @unchecked Sendable {
    // Sendable: the scratch is written only during `run`, each slice in its own part (offset by its slice number), and
    // `run` is called by one thread at a time.
    let width: Int, height: Int
    private let stride: Int
    private let slices: Int
    private let scratch: UnsafeMutablePointer<Float>

    init(width: Int, height: Int, slices: Int) {
        self.width = width
        self.height = height
        self.slices = max(1, slices)
        // Room for whole blocks of 16 past the row and the two border pixels.
        stride = (width + 15) / 16 * 16 + 32
        let count = self.slices * 5 * stride
        scratch = .allocate(capacity: count)
        scratch.initialize(repeating: 0, count: count)
    }

    deinit { scratch.deallocate() }

    /// Inks `source` into `target` (planes of a frame of `units.format`; gray frames into RGBA), split over `slices`
    /// (at most as many threads as this was made for).
    func run<Rule: InkRule, Paper: InkPaper>(_ units: InkUnits, _ rule: Rule, _ paper: Paper, _ source: [Plane], _ target: [Plane],
                                             _ slices: SliceRunner) {
        let parts = min(slices.threads, self.slices)
        if units.format.isYUV {
            SliceRunner(threads: parts).forEachSlice(of: (height + 1) / 2) { chromaRows, slice in
                yuvSlice(chromaRows, scratch: scratch + slice * 5 * stride, units, rule, paper, source, target)
            }
        } else {
            SliceRunner(threads: parts).forEachSlice(of: height) { rows, slice in
                packedSlice(rows, scratch: scratch + slice * 5 * stride, units, rule, paper, source, target)
            }
        }
    }

    private func packedSlice<Rule: InkRule, Paper: InkPaper>(_ rows: Range<Int>, scratch: UnsafeMutablePointer<Float>, _ units: InkUnits,
                                                             _ rule: Rule, _ paper: Paper, _ source: [Plane], _ target: [Plane]) {
        guard let first = rows.first else { return }
        var (above, here, below) = (scratch, scratch + stride, scratch + 2 * stride)
        let ink = scratch + 3 * stride
        fillLuma(first - 1, units, source, into: above)
        fillLuma(first, units, source, into: here)
        let gray = units.format == .gray8
        for y in rows {
            fillLuma(y + 1, units, source, into: below)
            inkRow(above, here, below, into: ink, rule)
            packedRow(source[0].row(y), into: target[0].row(y), ink: ink, paper, gray: gray)
            (above, here, below) = (here, below, above)
        }
    }

    private func yuvSlice<Rule: InkRule, Paper: InkPaper>(_ chromaRows: Range<Int>, scratch: UnsafeMutablePointer<Float>, _ units: InkUnits,
                                                          _ rule: Rule, _ paper: Paper, _ source: [Plane], _ target: [Plane]) {
        guard let first = chromaRows.first else { return }
        var (above, here, below) = (scratch, scratch + stride, scratch + 2 * stride)
        let (inkTop, inkBottom) = (scratch + 3 * stride, scratch + 4 * stride)
        fillLuma(2 * first - 1, units, source, into: above)
        fillLuma(2 * first, units, source, into: here)
        for cy in chromaRows {
            let top = 2 * cy, pair = top + 1 < height
            fillLuma(top + 1, units, source, into: below)
            inkRow(above, here, below, into: inkTop, rule)
            (above, here, below) = (here, below, above)
            if pair {
                fillLuma(top + 2, units, source, into: below)
                inkRow(above, here, below, into: inkBottom, rule)
                (above, here, below) = (here, below, above)
            }
            yuvRows(cy, inkTop: inkTop, inkBottom: pair ? inkBottom : inkTop, units, paper, source, target)
        }
    }

    /// The luma of frame row `y` (clamped to the frame) into `ring` at indices 1…width, the border repeated.
    @inline(__always)
    private func fillLuma(_ y: Int, _ units: InkUnits, _ source: [Plane], into ring: UnsafeMutablePointer<Float>) {
        let row = source[0].row(min(max(y, 0), height - 1))
        // Whole blocks, then the rest (loads of a constant size compile to plain vector loads).
        switch units.format {
        case .gray8:
            for block in 0..<width / 16 { loadBytes(row + 16 * block).store(to: ring + 1 + 16 * block) }
            if width % 16 > 0 { loadBytes(row + width / 16 * 16, count: width % 16).store(to: ring + 1 + width / 16 * 16) }
        case .rgba, .bgra:
            let mask = SIMD8<UInt32>(repeating: 0xFF), weights = units.weights
            let (w0, w1, w2) = (SIMD8<Float>(repeating: weights.x), SIMD8<Float>(repeating: weights.y), SIMD8<Float>(repeating: weights.z))
            @inline(__always) func luma(_ words: SIMD8<UInt32>) -> SIMD8<Float> {
                (bytesAsFloats(words & mask) * w0).addingProduct(bytesAsFloats((words &>> 8) & mask), w1)
                    .addingProduct(bytesAsFloats((words &>> 16) & mask), w2)
            }
            for block in 0..<width / 8 { luma(loadWords(row + 32 * block, count: 8)).store(to: ring + 1 + 8 * block) }
            if width % 8 > 0 { luma(loadWords(row + width / 8 * 32, count: width % 8)).store(to: ring + 1 + width / 8 * 8) }
        case .i420, .nv12:
            let chroma = ChromaRow(source, row: min(max(y, 0), height - 1) / 2, interleaved: units.format == .nv12)
            for block in 0..<width / 16 {
                let x = 16 * block
                let (low, high) = clampedLuma(loadBytes(row + x), chroma.samples(at: 8 * block, count: 8), units)
                low.store(to: ring + 1 + x)
                high.store(to: ring + 9 + x)
            }
            if width % 16 > 0 {
                let x = width / 16 * 16
                let (low, high) = clampedLuma(loadBytes(row + x, count: width % 16), chroma.samples(at: x / 2, count: (width % 16 + 1) / 2), units)
                low.store(to: ring + 1 + x)
                high.store(to: ring + 9 + x)
            }
        }
        ring[0] = ring[1]
        ring[width + 1] = ring[width]
    }

    /// k of one row from the luma rows above, at and below it, eight pixels at a time.
    @inline(__always)
    private func inkRow<Rule: InkRule>(_ above: UnsafeMutablePointer<Float>, _ here: UnsafeMutablePointer<Float>,
                                       _ below: UnsafeMutablePointer<Float>, into ink: UnsafeMutablePointer<Float>, _ rule: Rule) {
        for block in 0..<(width + 7) / 8 {
            let x = 8 * block
            let (nw, n, ne) = (SIMD8<Float>(loadingFrom: above + x), SIMD8<Float>(loadingFrom: above + x + 1), SIMD8<Float>(loadingFrom: above + x + 2))
            let (w, e) = (SIMD8<Float>(loadingFrom: here + x), SIMD8<Float>(loadingFrom: here + x + 2))
            let (sw, s, se) = (SIMD8<Float>(loadingFrom: below + x), SIMD8<Float>(loadingFrom: below + x + 1), SIMD8<Float>(loadingFrom: below + x + 2))
            let gx = (ne - nw) + (se - sw) + 2 * (e - w)
            let gy = (sw - nw) + (se - ne) + 2 * (s - n)
            rule.factor(gx * gx + gy * gy).store(to: ink + x)
        }
    }

    /// One RGBA, BGRA or GRAY8 row into an RGBA/BGRA row: each channel painted, times k, rounded (values in 0…255 plus
    /// 2²³: the rounded integer sits in the low mantissa bits); alpha kept (GRAY8: 255).
    @inline(__always)
    private func packedRow<Paper: InkPaper>(_ input: UnsafeMutablePointer<UInt8>, into output: UnsafeMutablePointer<UInt8>,
                                            ink: UnsafeMutablePointer<Float>, _ paper: Paper, gray: Bool) {
        let mask = SIMD8<UInt32>(repeating: 0xFF), half = SIMD8<Float>(repeating: 8_388_608)
        @inline(__always) func code(_ channel: SIMD8<Float>, _ k: SIMD8<Float>) -> SIMD8<UInt32> {
            unsafeBitCast(paper.paint(channel) * k + half, to: SIMD8<UInt32>.self) & mask
        }
        @inline(__always) func inked(_ words: SIMD8<UInt32>, _ k: SIMD8<Float>) -> SIMD8<UInt32> {
            code(bytesAsFloats(words & mask), k) | code(bytesAsFloats((words &>> 8) & mask), k) &<< 8
                | code(bytesAsFloats((words &>> 16) & mask), k) &<< 16 | (words & 0xFF00_0000)
        }
        // Whole blocks of 8, then the rest.
        let (whole, rest) = (width / 8 * 8, width % 8)
        if gray {
            for block in 0..<whole / 8 {
                let x = 8 * block
                storeWords(code(SIMD8(bytesAt: input + x), SIMD8(loadingFrom: ink + x)) &* 0x01_0101 | 0xFF00_0000, to: output + 4 * x, count: 8)
            }
            if rest > 0 {
                storeWords(code(loadFloats(input + whole, count: rest), SIMD8(loadingFrom: ink + whole)) &* 0x01_0101 | 0xFF00_0000,
                           to: output + 4 * whole, count: rest)
            }
            return
        }
        for block in 0..<whole / 8 {
            let x = 8 * block
            storeWords(inked(loadWords(input + 4 * x, count: 8), SIMD8(loadingFrom: ink + x)), to: output + 4 * x, count: 8)
        }
        if rest > 0 {
            storeWords(inked(loadWords(input + 4 * whole, count: rest), SIMD8(loadingFrom: ink + whole)), to: output + 4 * whole, count: rest)
        }
    }

    /// Chroma row `cy` of an I420/NV12 frame with its luma rows (one at an odd height's last row), 16 columns at a time:
    /// luma per pixel, Cb and Cr from the mean of each 2×2 block's painted, inked colours. R', G', B' are codes above
    /// black clamped to 0…scale, decoded from each pixel's luma code and its chroma sample. On an odd width the last
    /// block's lone column stands for both of its columns (its lane is copied into the next one).
    @inline(__always)
    private func yuvRows<Paper: InkPaper>(_ cy: Int, inkTop: UnsafeMutablePointer<Float>, inkBottom: UnsafeMutablePointer<Float>,
                                          _ units: InkUnits, _ paper: Paper, _ source: [Plane], _ target: [Plane]) {
        let top = 2 * cy, bottom = min(2 * cy + 1, height - 1)
        let (outTop, outBottom) = (target[0].row(top), target[0].row(bottom))
        let interleaved = units.format == .nv12
        let output = ChromaRow(target, row: cy, interleaved: interleaved)
        let chromaWidth = (width + 1) / 2
        let black = SIMD16<Float>(repeating: units.offset)
        let (cbGain, crGain) = (units.cbFromBlue * 0.25, units.crFromRed * 0.25)
        guard paper.usesColour else {
            // White paper: luma black + k·white, chroma neutral.
            let white = paper.paint(SIMD16<Float>())
            for block in 0..<(width + 15) / 16 {
                let x = 16 * block
                storeLuma(RampLanes.bytes(black.addingProduct(SIMD16(loadingFrom: inkTop + x), white),
                                          black.addingProduct(SIMD16(loadingFrom: inkBottom + x), white)),
                          outTop + x, outBottom + x, count: min(16, width - x))
            }
            output.fill(128, count: chromaWidth)
            return
        }
        let input = ChromaRow(source, row: cy, interleaved: interleaved)
        let (lumaTop, lumaBottom) = (source[0].row(top), source[0].row(bottom))
        // 16 columns: the luma codes of both rows, their chroma samples and k → the luma bytes of both rows and the
        // chroma bytes (`RampLanes.chromaBytes`' layout).
        @inline(__always) func inked(_ yTop: SIMD16<Float>, _ yBottom: SIMD16<Float>, _ samples: (cb: SIMD8<Float>, cr: SIMD8<Float>),
                                     _ kTop: SIMD16<Float>, _ kBottom: SIMD16<Float>) -> ((SIMD16<UInt8>, SIMD16<UInt8>), SIMD16<UInt8>) {
            let (low, high) = offsets(samples, units)
            let (yTop, yBottom) = (yTop - black, yBottom - black)
            let a = inkedPixels(yTop.lowHalf, kTop.lowHalf, low, paper, units), b = inkedPixels(yTop.highHalf, kTop.highHalf, high, paper, units)
            let c = inkedPixels(yBottom.lowHalf, kBottom.lowHalf, low, paper, units)
            let d = inkedPixels(yBottom.highHalf, kBottom.highHalf, high, paper, units)
            // k·(B − Y) and k·(R − Y) summed over each block: Cb − 128 and Cr − 128 are their means times the gains.
            let blue = SIMD16(lowHalf: a.blue + c.blue, highHalf: b.blue + d.blue), red = SIMD16(lowHalf: a.red + c.red, highHalf: b.red + d.red)
            let cb = SIMD8<Float>(repeating: 128).addingProduct(blue.evenHalf + blue.oddHalf, SIMD8(repeating: cbGain))
            let cr = SIMD8<Float>(repeating: 128).addingProduct(red.evenHalf + red.oddHalf, SIMD8(repeating: crGain))
            return (RampLanes.bytes(black + SIMD16(lowHalf: a.luma, highHalf: b.luma), black + SIMD16(lowHalf: c.luma, highHalf: d.luma)),
                    RampLanes.chromaBytes(RampLanes.clamped(cb, 255), RampLanes.clamped(cr, 255), interleaved: interleaved))
        }
        for block in 0..<width / 16 {
            let x = 16 * block
            let (luma, chroma) = inked(loadBytes(lumaTop + x), loadBytes(lumaBottom + x), input.samples(at: x / 2, count: 8),
                                       SIMD16(loadingFrom: inkTop + x), SIMD16(loadingFrom: inkBottom + x))
            storeLuma(luma, outTop + x, outBottom + x, count: 16)
            output.store(chroma, at: x / 2, count: 8)
        }
        if width % 16 > 0 {
            let x = width / 16 * 16, count = width % 16
            var (kTop, kBottom) = (SIMD16<Float>(loadingFrom: inkTop + x), SIMD16<Float>(loadingFrom: inkBottom + x))
            var (yTop, yBottom) = (loadBytes(lumaTop + x, count: count), loadBytes(lumaBottom + x, count: count))
            (kTop[count], kBottom[count]) = (kTop[count - 1], kBottom[count - 1])
            (yTop[count], yBottom[count]) = (yTop[count - 1], yBottom[count - 1])
            let (luma, chroma) = inked(yTop, yBottom, input.samples(at: x / 2, count: (count + 1) / 2), kTop, kBottom)
            storeLuma(luma, outTop + x, outBottom + x, count: count)
            output.store(chroma, at: x / 2, count: (count + 1) / 2)
        }
    }

    /// Stores `count` (≤ 16) luma bytes of each of two rows.
    @inline(__always)
    private func storeLuma(_ bytes: (SIMD16<UInt8>, SIMD16<UInt8>), _ top: UnsafeMutablePointer<UInt8>, _ bottom: UnsafeMutablePointer<UInt8>,
                           count: Int) {
        if count == 16 {
            top.store(bytes.0)
            bottom.store(bytes.1)
        } else {
            for lane in 0..<count { (top[lane], bottom[lane]) = (bytes.0[lane], bytes.1[lane]) }
        }
    }
}

private func ink(_ name: String, _ style: InkStyle, _ context: FilterContext) -> FilterStage {
    .processor(InkProcessor(name: name, style: style, slices: context.slices))
}

extension FilterSpec {
    /// Woodcut look: black where the edge strength e ≥ `threshold`, white elsewhere.
    /// - `threshold` 0…1.5 (default 0.08). Formats: all (gray frames come out RGBA).
    /// - Chain: `edge-work:threshold=0.05` · Swift: `try FilterDescription("edge-work", ["threshold": .number(0.05)])`
    public static let edgeWork = FilterSpec(
        name: "edge-work", family: .stylize, summary: "Woodcut look: black edges on white.", coreImage: "CIEdgeWork",
        parameters: [ParameterSpec("threshold", .number(0...1.5), default: 0.08, "edge strength that becomes black")],
        example: "edge-work:threshold=0.05", swift: "try FilterDescription(\"edge-work\", [\"threshold\": .number(0.05)])"
    ) { arguments, context in ink("edge-work", .edgeWork(threshold: arguments.float("threshold")), context) }

    /// Ink lines over the picture: rgb · (1 − clamp((e − threshold) · contrast)).
    /// - `threshold` 0…1.5 (default 0.05), `contrast` 1…200 (default 20). Formats: all (gray frames come out RGBA).
    /// - Chain: `line-overlay:threshold=0.04:contrast=30` · Swift: `try FilterDescription("line-overlay")`
    public static let lineOverlay = FilterSpec(
        name: "line-overlay", family: .stylize, summary: "Dark ink lines drawn over the picture's edges.", coreImage: "CILineOverlay",
        parameters: [ParameterSpec("threshold", .number(0...1.5), default: 0.05, "edge strength where ink starts"),
                     ParameterSpec("contrast", .number(1...200), default: 20, "how fast ink becomes black")],
        example: "line-overlay:threshold=0.04:contrast=30", swift: "try FilterDescription(\"line-overlay\")"
    ) { arguments, context in
        ink("line-overlay", .lineOverlay(threshold: arguments.float("threshold"), contrast: arguments.float("contrast")), context)
    }

    /// Comic-book look: each channel posterized to 5 levels (v → round(4v)/4) under hard black lines where
    /// e ≥ `threshold`.
    /// - `threshold` 0…1.5 (default 0.1). Formats: all (gray frames come out RGBA).
    /// - Chain: `comic-effect:threshold=0.08` · Swift: `try FilterDescription("comic-effect")`
    public static let comicEffect = FilterSpec(
        name: "comic-effect", family: .stylize, summary: "Comic-book look: flat colours and black outlines.", coreImage: "CIComicEffect",
        parameters: [ParameterSpec("threshold", .number(0...1.5), default: 0.1, "edge strength that becomes a black line")],
        example: "comic-effect:threshold=0.08", swift: "try FilterDescription(\"comic-effect\")"
    ) { arguments, context in ink("comic-effect", .comic(levels: 5, threshold: arguments.float("threshold")), context) }

    /// Posterized cartoon: each channel posterized to `levels` (v → round(v·(L−1))/(L−1)) and darkened by soft ink,
    /// · (1 − clamp((e − threshold) · contrast)).
    /// - `levels` 2…32 (default 6), `threshold` 0…1.5 (default 0.06), `contrast` 1…200 (default 10). Formats: all.
    /// - Chain: `cartoon:levels=4` · Swift: `try FilterDescription("cartoon", ["levels": .integer(4)])`
    public static let cartoon = FilterSpec(
        name: "cartoon", family: .stylize, summary: "Posterized colours with soft dark outlines.",
        parameters: [ParameterSpec("levels", .integer(2...32), default: 6, "values per channel"),
                     ParameterSpec("threshold", .number(0...1.5), default: 0.06, "edge strength where ink starts"),
                     ParameterSpec("contrast", .number(1...200), default: 10, "how fast ink becomes black")],
        example: "cartoon:levels=4", swift: "try FilterDescription(\"cartoon\", [\"levels\": .integer(4)])"
    ) { arguments, context in
        ink("cartoon", .cartoon(levels: Float(arguments.integer("levels")), threshold: arguments.float("threshold"),
                                contrast: arguments.float("contrast")), context)
    }
}
