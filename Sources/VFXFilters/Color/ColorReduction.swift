import Foundation
import VFXCore
import VFXPipeline

// Colour reduction and components: palettes, per-channel thresholds, ordered dither, the largest or smallest
// component, and luma turned into alpha. Step functions (palette, threshold, dither) run exactly per pixel on RGBA
// (`RGBAProcessor`); palettes and dither work on I420/NV12 frames in their own planes with the same bytes
// (`PlanarPixelPass`); the smooth ones are point-wise `.color` transforms and fuse with their neighbours.

/// The palettes `palettize` knows.
enum Palettes {
    static let all: [String: [UInt32]] = [
        "gameboy": [0x0f380f, 0x306230, 0x8bac0f, 0x9bbc0f],
        "cga": [0x000000, 0x55ffff, 0xff55ff, 0xffffff],
        "gray4": [0x000000, 0x555555, 0xaaaaaa, 0xffffff],
        "rgb8": [0x000000, 0xff0000, 0x00ff00, 0x0000ff, 0xffff00, 0xff00ff, 0x00ffff, 0xffffff],
        "pico8": [0x000000, 0x1d2b53, 0x7e2553, 0x008751, 0xab5236, 0x5f574f, 0xc2c3c7, 0xfff1e8,
                  0xff004d, 0xffa300, 0xffec27, 0x00e436, 0x29adff, 0x83769c, 0xff77a8, 0xffccaa],
    ]

    /// The colours of palette `name` (0xRRGGBB).
    static func codes(_ name: String) -> [UInt32] { all[name] ?? all["gray4", default: []] }
}

/// The pixels of one step of `PlanarPixelPass`: 2 rows × 32 columns as 4 groups of 16 pixels (row 0's even columns,
/// row 0's odd columns, row 1's even, row 1's odd; lane i of a group is column 2i or 2i + 1 of the step), each group as
/// three vectors of 16 Int16 lanes (R', G', B' codes, 0…255), followed by `scratchBytes` bytes for the kernel.
struct PlanarStep {
    let base: UnsafeMutablePointer<UInt8>
    static let scratchBytes = 256
    static let byteCount = 12 * 32 + scratchBytes

    /// The 16 lanes (32 bytes) of `channel` (0 R', 1 G', 2 B') of `group`.
    @inline(__always) func channel(_ group: Int, _ channel: Int) -> UnsafeMutablePointer<UInt8> { base + 32 &* (3 &* group &+ channel) }
    /// One lane of a channel.
    @inline(__always) func code(_ group: Int, _ channel: Int, _ lane: Int) -> Int16 {
        UnsafeRawPointer(self.channel(group, channel)).load(fromByteOffset: 2 &* lane, as: Int16.self)
    }
    var scratch: UnsafeMutablePointer<UInt8> { base + 12 * 32 }
}

/// A colour reduction that can work on the R', G', B' codes of a `PlanarStep`: `map` rewrites them in place (`rows` are
/// the frame rows of the step's two rows, the same row twice for the last row of an odd height). `runPlanar` is
/// `pass.run(self, …)`, written in each kernel so that the pass is compiled for that kernel (a generic stage calls it
/// once per frame; called from the stage's generic code, the pass would reach `map` and the chroma layout through
/// witness tables at every step).
protocol PlanarPixelKernel: Sendable {
    func map(_ step: PlanarStep, rows: (Int, Int))
    func runPlanar(_ pass: PlanarPixelPass, source: [Plane], target: [Plane], format: PixelFormat, width: Int, height: Int,
                   slices: SliceRunner)
}

/// An I420 or NV12 frame through a `PlanarPixelKernel` in its own planes, with the bytes of converting the frame to
/// RGBA (`YUVRows`), applying the kernel to each pixel and converting back, and no RGBA buffer. A step is 2 rows × 32
/// columns (16 chroma samples): each pixel's R', G', B' from its luma and its block's chroma with the conversion's
/// 16.16 fixed point (`ColorConversion.Coefficients`, in 32-bit lanes, clamped to 0…255), the kernel, then each
/// pixel's luma (sums of 16-bit products in pairs, `multiplyAddPairs`) and each block's chroma from the sums of its four
/// pixels' codes (32-bit lanes), the same arithmetic again. The last column or row stands for the missing one at odd
/// sizes, as in the conversion (the odd column's pixel in the padding takes the last pixel's codes after the kernel).
/// Steps read and write whole vectors into the rows' padding (VideoFX's kernel layout: rows padded to 64 bytes); the
/// source may be the target.
///
/// ```swift
/// let pass = PlanarPixelPass(unpack: ColorConversion.Coefficients(frame.color), pack: ColorConversion.Coefficients(frame.color))
/// pass.run(DitherKernel(levels: 4), source: frame.planes, target: output.planes, format: .i420, width: 1920, height: 1080, slices: slices)
/// ```
struct PlanarPixelPass {
    let unpack: ColorConversion.Coefficients, pack: ColorConversion.Coefficients

    func run<Kernel: PlanarPixelKernel>(_ kernel: Kernel, source: [Plane], target: [Plane], format: PixelFormat, width: Int,
                                        height: Int, slices: SliceRunner) {
        if format == .nv12 {
            run(kernel, InterleavedChroma.self, source: source, target: target, width: width, height: height, slices: slices)
        } else {
            run(kernel, SeparateChroma.self, source: source, target: target, width: width, height: height, slices: slices)
        }
    }

    private func run<Kernel: PlanarPixelKernel, Layout: ChromaLayout>(_ kernel: Kernel, _ layout: Layout.Type, source: [Plane],
                                                                      target: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
        let (u, p) = (unpack, pack)
        let lumaConstant = SIMD8<Int32>(repeating: (1 << 15) &- u.yOffset &* u.yScale)
        let yAdd = SIMD8<Int32>(repeating: p.yAdd), chromaAdd = SIMD8<Int32>(repeating: (128 << 18) + (1 << 17))
        let (zero, top) = (Lanes16.splat(0), Lanes16.splat(255))
        // The luma weights as 16-bit pairs: (rToY, gToY − 2¹⁵) for (R, G) and (bToY, 2¹⁴) for (B, 2G). Every matrix has
        // Kr, Kb < 0.5 and Kg < 1, so rToY, bToY < 2¹⁵ and gToY < 2¹⁶.
        precondition(p.rToY < 32768 && p.bToY < 32768 && p.gToY < 65536, "luma weights outside the 16-bit pairs")
        let lumaWeights = (redGreen: Lanes16.alternating(Int16(p.rToY), Int16(p.gToY - 32768)),
                           blueGreen: Lanes16.alternating(Int16(p.bToY), 16384))
        // Codes (0…255) of 16-lane vectors of 32-bit values, clamped.
        @inline(__always) func codes(_ low: SIMD8<Int32>, _ high: SIMD8<Int32>, shift: Int32) -> Lanes16.Vector {
            Lanes16.clamp(Lanes16.narrowing(low &>> shift, high &>> shift), zero, top)
        }
        slices.run(rows: chromaHeight) { chromaRows in
            withUnsafeTemporaryAllocation(byteCount: PlanarStep.byteCount, alignment: 64) { memory in
                let step = PlanarStep(base: memory.baseAddress!.assumingMemoryBound(to: UInt8.self))
                for cy in chromaRows {
                    let rows = (2 * cy, min(2 * cy + 1, height - 1))
                    let lumaIn = (source[0].row(rows.0), source[0].row(rows.1)), lumaOut = (target[0].row(rows.0), target[0].row(rows.1))
                    let (cbIn, crIn) = (source[1].row(cy), source[source.count - 1].row(cy))
                    let (cbOut, crOut) = (target[1].row(cy), target[target.count - 1].row(cy))
                    var cx = 0
                    while cx < chromaWidth {
                        // Chroma terms of the step's 16 samples: R = l + red, G = l − green, B = l + blue.
                        let (cbLanes, crLanes) = Layout.loadLanes(cbIn, crIn, at: cx)
                        let (cbLow, cbHigh) = Lanes16.int32s(cbLanes), (crLow, crHigh) = Lanes16.int32s(crLanes)
                        let (cb0, cb1, cr0, cr1) = (cbLow &- 128, cbHigh &- 128, crLow &- 128, crHigh &- 128)
                        let red = (cr0 &* u.crToR, cr1 &* u.crToR), blue = (cb0 &* u.cbToB, cb1 &* u.cbToB)
                        let green = (cb0 &* u.cbToG &+ cr0 &* u.crToG, cb1 &* u.cbToG &+ cr1 &* u.crToG)
                        for row in 0..<2 {
                            let pairs = Lanes16.load((row == 0 ? lumaIn.0 : lumaIn.1) + 2 &* cx)
                            for parity in 0..<2 {
                                let (low, high) = Lanes16.int32s(parity == 0 ? Lanes16.lowBytes(pairs) : Lanes16.highBytes(pairs))
                                let l = (low &* u.yScale &+ lumaConstant, high &* u.yScale &+ lumaConstant)
                                let group = 2 &* row &+ parity
                                Lanes16.store(codes(l.0 &+ red.0, l.1 &+ red.1, shift: 16), to: step.channel(group, 0))
                                Lanes16.store(codes(l.0 &- green.0, l.1 &- green.1, shift: 16), to: step.channel(group, 1))
                                Lanes16.store(codes(l.0 &+ blue.0, l.1 &+ blue.1, shift: 16), to: step.channel(group, 2))
                            }
                        }
                        kernel.map(step, rows: rows)
                        if width % 2 == 1 && cx &+ 16 >= chromaWidth {
                            // The odd column's pixel (column `width`, in the padding) repeats the last one.
                            let lane = chromaWidth &- 1 &- cx
                            for even in [0, 2] {
                                for channel in 0..<3 {
                                    let codes = UnsafeMutableRawPointer(step.channel(even &+ 1, channel))
                                    codes.storeBytes(of: step.code(even, channel, lane), toByteOffset: 2 &* lane, as: Int16.self)
                                }
                            }
                        }
                        // Luma of each pixel, and the sums of each block's four codes.
                        var sums = (zero, zero, zero)
                        for row in 0..<2 {
                            var luma = (zero, zero)
                            for parity in 0..<2 {
                                let group = 2 &* row &+ parity
                                let (r, g, b) = (Lanes16.load(step.channel(group, 0)), Lanes16.load(step.channel(group, 1)),
                                                 Lanes16.load(step.channel(group, 2)))
                                sums = (Lanes16.add(sums.0, r), Lanes16.add(sums.1, g), Lanes16.add(sums.2, b))
                                // R·rToY + G·(gToY − 2¹⁵) + B·bToY + 2G·2¹⁴ in pairs of 16-bit products.
                                let (g2, redGreen, blueGreen) = (Lanes16.add(g, g), lumaWeights.redGreen, lumaWeights.blueGreen)
                                let y0 = Lanes16.multiplyAddPairs(Lanes16.interleaveLow(r, g), redGreen)
                                    &+ Lanes16.multiplyAddPairs(Lanes16.interleaveLow(b, g2), blueGreen) &+ yAdd
                                let y1 = Lanes16.multiplyAddPairs(Lanes16.interleaveHigh(r, g), redGreen)
                                    &+ Lanes16.multiplyAddPairs(Lanes16.interleaveHigh(b, g2), blueGreen) &+ yAdd
                                let y = Lanes16.clamp(Lanes16.packInterleaved(y0 &>> 16, y1 &>> 16), zero, top)
                                if parity == 0 { luma.0 = y } else { luma.1 = y }
                            }
                            Lanes16.store(Lanes16.joinBytes(luma.0, luma.1), to: (row == 0 ? lumaOut.0 : lumaOut.1) + 2 &* cx)
                        }
                        let (r0, r1) = Lanes16.int32s(sums.0), (g0, g1) = Lanes16.int32s(sums.1), (b0, b1) = Lanes16.int32s(sums.2)
                        let cb = codes(r0 &* p.rToU &+ g0 &* p.gToU &+ b0 &* p.bToU &+ chromaAdd,
                                       r1 &* p.rToU &+ g1 &* p.gToU &+ b1 &* p.bToU &+ chromaAdd, shift: 18)
                        let cr = codes(r0 &* p.rToV &+ g0 &* p.gToV &+ b0 &* p.bToV &+ chromaAdd,
                                       r1 &* p.rToV &+ g1 &* p.gToV &+ b1 &* p.bToV &+ chromaAdd, shift: 18)
                        Layout.storeLanes(cb, cr, cbOut, crOut, at: cx)
                        cx &+= 16
                    }
                }
            }
        }
    }
}

/// The stage of `palettize` and `dither`: I420 and NV12 frames in their own planes through `PlanarPixelPass` (in place
/// when the frame is not shared, else into a pool buffer), every other format (and planes without VideoFX's kernel
/// layout) through `RGBAProcessor` with the same kernel. Both give the bytes of converting the frame to RGBA, applying
/// the kernel and converting back (YUV read with the frame's colour description, written with the configured one).
///
/// ```swift
/// let stage = ColorReductionProcessor(name: "dither", kernel: DitherKernel(levels: 4), slices: SliceRunner(threads: 1))
/// ```
final class ColorReductionProcessor<Kernel: RGBARowKernel & PlanarPixelKernel>: VideoProcessor {
    let name: String
    let kernel: Kernel
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var pool: BufferPool?
    private var rgba: RGBAProcessor<Kernel>?

    init(name: String, kernel: Kernel, slices: SliceRunner) {
        self.name = name
        self.kernel = kernel
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        release()
        configured = input
        let processor = RGBAProcessor(name: name, kernel: kernel, slices: slices)
        rgba = processor
        if input.pixelFormat.isYUV { pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3) }
        return try processor.configure(for: input)
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let configured, let rgba else { return frame }
        guard frame.format.isYUV && frame.buffer.hasKernelLayout else { return try rgba.process(frame) }
        let (format, width, height) = (frame.format, frame.width, frame.height)
        var target = frame.isUniquelyReferenced() ? frame : frame.makeSibling(pool: pool)
        let pass = PlanarPixelPass(unpack: ColorConversion.Coefficients(frame.color), pack: ColorConversion.Coefficients(configured.color))
        kernel.runPlanar(pass, source: frame.planes, target: target.planes, format: format, width: width, height: height, slices: slices)
        withExtendedLifetime(frame) {}
        target.color = configured.color
        return target
    }

    func release() {
        configured = nil
        pool = nil
        rgba?.release()
        rgba = nil
    }
}

/// Each pixel becomes the nearest palette colour: the smallest (R − Rᵢ)² + (G − Gᵢ)² + (B − Bᵢ)² over the palette,
/// on the bytes, the first colour on a tie; alpha is kept.
///
/// Exactly, through a table of 32³ cells of 8×8×8 byte values (32 KiB) and finer tables where it is needed. Colour i
/// wins at p when d(p, cᵢ) < d(p, cⱼ) for every j < i and d(p, cᵢ) ≤ d(p, cⱼ) for every j > i; since
/// d(p, cᵢ) − d(p, cⱼ) = −2p·(cᵢ − cⱼ) + |cᵢ|² − |cⱼ|² is linear in p, each condition is a half-space and the region
/// where colour i wins (its Voronoi cell with the tie rule) is convex. A cell of the table is the box spanned by its 8
/// corners (each coordinate 8n or 8n + 7), so when the same colour wins at all 8 corners it wins everywhere in the box:
/// the table holds that colour. In the other cells a colour j can win only if its distance to the nearest point of the
/// box is at most some colour's distance to the box's farthest corner (else it is farther than that colour from every
/// point of the box, so it neither wins nor ties); such a cell is split into 8 subcells of 4×4×4, each settled the same
/// way among those colours, and each of the 64 values of a subcell that is still mixed is settled by searching its
/// colours in palette order with the tie rule. A pixel costs one to three lookups.
///
/// RGBA rows are looked up pixel by pixel (`run`, in the same two rounds as below). I420/NV12 steps (`map`, see `PlanarPixelKernel`) take the cell
/// numbers of 64 pixels in 16-bit lanes, look the 64 cells up one by one without a branch (noting the mixed ones in a
/// bit mask), settle the mixed ones after (one by one through the finer tables when they are fewer than half the
/// colours, else every pixel of the step by the search over the whole palette in 32-bit lanes, `nearestInLanes`), and
/// turn the colour numbers back into R', G', B' codes with three 16-entry byte shuffles.
///
/// ```swift
/// let kernel = PaletteKernel(codes: Palettes.codes("gameboy"))
/// ```
struct PaletteKernel: RGBARowKernel, PlanarPixelKernel {
    /// Per cell (index R/8 + 32·G/8 + 1024·B/8): the number of the winning colour, or `mixed`.
    private let cells: [UInt8]
    /// Per mixed cell: the number of its block of 8 subcells in `subcells` (0 for the other cells).
    private let cellBlocks: [UInt16]
    /// Per subcell (4×4×4 values; block n holds the 8 of a cell, index bit 2 of R + 2·bit 2 of G + 4·bit 2 of B): the
    /// number of the winning colour, or `mixedSubcell` plus the number of its block of 64 values in `values`.
    private let subcells: [UInt16]
    /// Per value of a mixed subcell (block n holds the 64 of the n-th, index R mod 4 + 4·(G mod 4) + 16·(B mod 4)): the
    /// number of the winning colour.
    private let values: [UInt8]
    /// The palette's colours as RGBA pixels with alpha 0.
    private let pixels: [UInt32]
    /// R', G' and B' of colour n at byte n of both 16-byte halves (the shuffle tables of `map`).
    private let channelTables: [SIMD16<Int16>]
    /// Per colour n, the 16-bit weights of `nearestInLanes`: (Rₙ, Gₙ) alternating at 2n, (Bₙ, 0) at 2n + 1.
    private let laneWeights: [SIMD16<Int16>]
    /// Per colour n, 16·|cₙ|² − (15 − n) (`nearestInLanes`).
    private let laneOffsets: [Int32]
    private static let mixed: UInt8 = 0xFF
    private static let mixedSubcell: UInt16 = 0x8000

    var readsOnlyItsPixel: Bool { true }

    /// `codes` 0xRRGGBB, 1 to 16 of them.
    init(codes: [UInt32]) {
        precondition((1...16).contains(codes.count), "a palette has 1 to 16 colours")
        let colors = codes.map { SIMD3<Int32>(Int32(($0 >> 16) & 0xff), Int32(($0 >> 8) & 0xff), Int32($0 & 0xff)) }
        pixels = colors.map { UInt32($0.x) | UInt32($0.y) << 8 | UInt32($0.z) << 16 }
        channelTables = (0..<3).map { channel in
            var bytes = SIMD32<UInt8>()
            for (n, color) in colors.enumerated() { (bytes[n], bytes[16 + n]) = (UInt8(color[channel]), UInt8(color[channel])) }
            return unsafeBitCast(bytes, to: SIMD16<Int16>.self)
        }
        laneWeights = colors.flatMap { color in
            [0, 1].map { half in
                SIMD16<Int16>((0..<16).map { lane in lane % 2 == 1 ? (half == 0 ? Int16(color.y) : 0) : Int16(half == 0 ? color.x : color.z) })
            }
        }
        laneOffsets = colors.enumerated().map { n, color in 16 &* (color &* color).wrappedSum() &- Int32(15 - n) }
        let all = UInt32(1 << colors.count) - 1
        var cells = [UInt8](repeating: 0, count: 32 * 32 * 32), cellBlocks = [UInt16](repeating: 0, count: 32 * 32 * 32)
        var subcells: [UInt16] = [], values: [UInt8] = []
        for b in 0..<32 {
            for g in 0..<32 {
                for r in 0..<32 {
                    let cell = (b * 32 + g) * 32 + r
                    let low = SIMD3<Int32>(Int32(8 * r), Int32(8 * g), Int32(8 * b))
                    let (winner, candidates) = PaletteKernel.settle(low: low, size: 8, colors: colors, mask: all)
                    if let winner {
                        cells[cell] = UInt8(winner)
                        continue
                    }
                    cells[cell] = PaletteKernel.mixed
                    cellBlocks[cell] = UInt16(subcells.count / 8)
                    for k in 0..<8 {
                        let corner = low &+ 4 &* SIMD3<Int32>(Int32(k & 1), Int32((k >> 1) & 1), Int32(k >> 2))
                        let (subwinner, subcandidates) = PaletteKernel.settle(low: corner, size: 4, colors: colors, mask: candidates)
                        if let subwinner {
                            subcells.append(UInt16(subwinner))
                            continue
                        }
                        subcells.append(PaletteKernel.mixedSubcell | UInt16(values.count / 64))
                        for v in 0..<64 {
                            let point = corner &+ SIMD3<Int32>(Int32(v & 3), Int32((v >> 2) & 3), Int32(v >> 4))
                            values.append(UInt8(PaletteKernel.nearest(point, among: colors, mask: subcandidates)))
                        }
                    }
                }
            }
        }
        precondition(subcells.count / 8 <= Int(UInt16.max) && values.count / 64 < Int(PaletteKernel.mixedSubcell),
                     "the palette's finer tables outgrow their 16-bit block numbers")
        self.cells = cells
        self.cellBlocks = cellBlocks
        self.subcells = subcells
        self.values = values
    }

    /// The box `low`…`low` + `size` − 1 (each axis), when the colours of `mask` include every colour that can win in it:
    /// the winner when the same colour wins at the box's 8 corners, else nil and the colours of `mask` that may win
    /// somewhere in it.
    static func settle(low: SIMD3<Int32>, size: Int32, colors: [SIMD3<Int32>], mask: UInt32) -> (winner: Int?, candidates: UInt32) {
        let high = low &+ (size - 1)
        let winners = (0..<8).map { k in
            nearest(SIMD3(k & 1 == 0 ? low.x : high.x, k & 2 == 0 ? low.y : high.y, k & 4 == 0 ? low.z : high.z), among: colors, mask: mask)
        }
        if winners.allSatisfy({ $0 == winners[0] }) { return (winners[0], 1 << UInt32(winners[0])) }
        func nearestPoint(_ c: SIMD3<Int32>) -> Int32 {
            let d = c.clamped(lowerBound: low, upperBound: high) &- c
            return (d &* d).wrappedSum()
        }
        func farthestCorner(_ c: SIMD3<Int32>) -> Int32 {
            let d = SIMD3<Int32>(max(abs(c.x - low.x), abs(c.x - high.x)), max(abs(c.y - low.y), abs(c.y - high.y)),
                                 max(abs(c.z - low.z), abs(c.z - high.z)))
            return (d &* d).wrappedSum()
        }
        let candidates = colors.indices.filter { mask & (1 << UInt32($0)) != 0 }
        let bound = candidates.map { farthestCorner(colors[$0]) }.min() ?? 0
        return (nil, candidates.reduce(0) { nearestPoint(colors[$1]) <= bound ? $0 | 1 << UInt32($1) : $0 })
    }

    /// The index of the nearest of the colours whose bit is set in `mask` (the first on a tie).
    @inline(__always)
    static func nearest(_ p: SIMD3<Int32>, among colors: [SIMD3<Int32>], mask: UInt32) -> Int {
        var best = 0, distance = Int32.max
        for (i, c) in colors.enumerated() where mask & (1 << UInt32(i)) != 0 {
            let (dr, dg, db) = (c.x &- p.x, c.y &- p.y, c.z &- p.z)
            let squared = dr &* dr &+ dg &* dg &+ db &* db
            if squared < distance { (best, distance) = (i, squared) }
        }
        return best
    }

    /// The table pointers of one pass (the arrays are not copied).
    private struct Tables {
        let cells: UnsafePointer<UInt8>, cellBlocks: UnsafePointer<UInt16>, subcells: UnsafePointer<UInt16>
        let values: UnsafePointer<UInt8>

        /// The colour number of `p` (R in the low byte) in cell `cell`.
        @inline(__always) func number(cell: Int, _ p: UInt32) -> Int {
            let entry = cells[cell]
            if entry != PaletteKernel.mixed { return Int(entry) }
            let block = Int(truncatingIfNeeded: cellBlocks[cell]) &<< 3
            let subentry = subcells[block | Int(truncatingIfNeeded: (p >> 2) & 1 | (p >> 9) & 2 | (p >> 16) & 4)]
            if subentry & PaletteKernel.mixedSubcell == 0 { return Int(truncatingIfNeeded: subentry) }
            let start = Int(truncatingIfNeeded: subentry & ~PaletteKernel.mixedSubcell) &<< 6
            return Int(values[start | Int(truncatingIfNeeded: p & 3 | (p >> 6) & 0xC | (p >> 12) & 0x30)])
        }
    }

    @inline(__always) private func withTables<R>(_ body: (Tables) -> R) -> R {
        cells.withUnsafeBufferPointer { cells in
            cellBlocks.withUnsafeBufferPointer { cellBlocks in
                subcells.withUnsafeBufferPointer { subcells in
                    values.withUnsafeBufferPointer { values in
                        body(Tables(cells: cells.baseAddress!, cellBlocks: cellBlocks.baseAddress!,
                                    subcells: subcells.baseAddress ?? cellBlocks.baseAddress!, values: values.baseAddress ?? cells.baseAddress!))
                    }
                }
            }
        }
    }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = UnsafeRawPointer(source.row(y)), output = UnsafeMutableRawPointer(target.row(y))
        @inline(__always) func cell(_ p: UInt32) -> Int { Int(truncatingIfNeeded: (p >> 3) & 0x1F | (p >> 6) & 0x3E0 | (p >> 9) & 0x7C00) }
        withTables { tables in
            pixels.withUnsafeBufferPointer { pixels in
                // 64 pixels at a time: each pixel of a settled cell written without a branch (the others keep their
                // colour and get a bit in `mixed`), then the mixed ones, read back from the output.
                var start = 0
                while start < width {
                    let count = min(64, width &- start)
                    var mixed: UInt64 = 0
                    for i in 0..<count {
                        let offset = 4 &* (start &+ i)
                        let p = input.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                        let entry = tables.cells[cell(p)]
                        let settled = entry != PaletteKernel.mixed
                        output.storeBytes(of: settled ? pixels[Int(entry & 15)] | (p & 0xFF00_0000) : p, toByteOffset: offset, as: UInt32.self)
                        mixed |= UInt64(truncatingIfNeeded: entry &>> 7) &<< UInt64(i)
                    }
                    while mixed != 0 {
                        let offset = 4 &* (start &+ mixed.trailingZeroBitCount)
                        mixed &= mixed &- 1
                        let p = output.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                        output.storeBytes(of: pixels[tables.number(cell: cell(p), p)] | (p & 0xFF00_0000), toByteOffset: offset, as: UInt32.self)
                    }
                    start &+= count
                }
            }
        }
    }

    func runPlanar(_ pass: PlanarPixelPass, source: [Plane], target: [Plane], format: PixelFormat, width: Int, height: Int,
                   slices: SliceRunner) {
        pass.run(self, source: source, target: target, format: format, width: width, height: height, slices: slices)
    }

    /// The numbers of the nearest colours of the step's 64 pixels, over the whole palette in 32-bit lanes, in 16-bit
    /// lanes at `numbers` (32 bytes per group). d(p, cₙ) = |p|² − (2p·cₙ − |cₙ|²), so the nearest colour has the largest
    /// 2p·cₙ − |cₙ|²; each colour's score is 16(2p·cₙ − |cₙ|²) + (15 − n), the same order with the tie broken towards
    /// the first colour in the low 4 bits, and the largest score over the colours gives the number as 15 − its low
    /// bits. p·cₙ comes from two sums of 16-bit products, (R·Rₙ + G·Gₙ) and (B·Bₙ + 0), exact in 32 bits; the scores stay
    /// within ±2²³.
    @inline(__always) func nearestInLanes(_ step: PlanarStep, to numbers: UnsafeMutablePointer<UInt8>) {
        let zero = Lanes16.splat(0), fifteen = SIMD8<Int32>(repeating: 15)
        laneWeights.withUnsafeBufferPointer { weights in
            laneOffsets.withUnsafeBufferPointer { offsets in
                for group in 0..<4 {
                    let red = Lanes16.load(step.channel(group, 0)), green = Lanes16.load(step.channel(group, 1))
                    let blue = Lanes16.load(step.channel(group, 2))
                    let redGreen = (Lanes16.interleaveLow(red, green), Lanes16.interleaveHigh(red, green))
                    let blueZero = (Lanes16.interleaveLow(blue, zero), Lanes16.interleaveHigh(blue, zero))
                    var best = (SIMD8<Int32>(repeating: .min), SIMD8<Int32>(repeating: .min))
                    for n in 0..<offsets.count {
                        let (first, second) = (Lanes16.vector(weights[2 &* n]), Lanes16.vector(weights[2 &* n &+ 1]))
                        let offset = SIMD8<Int32>(repeating: offsets[n])
                        let low = (Lanes16.multiplyAddPairs(redGreen.0, first) &+ Lanes16.multiplyAddPairs(blueZero.0, second)) &<< 5
                        let high = (Lanes16.multiplyAddPairs(redGreen.1, first) &+ Lanes16.multiplyAddPairs(blueZero.1, second)) &<< 5
                        best = (pointwiseMax(best.0, low &- offset), pointwiseMax(best.1, high &- offset))
                    }
                    Lanes16.store(Lanes16.packInterleaved(fifteen &- (best.0 & fifteen), fifteen &- (best.1 & fifteen)),
                                  to: numbers + 32 &* group)
                }
            }
        }
    }

    func map(_ step: PlanarStep, rows: (Int, Int)) {
        // The 64 cell numbers R/8 + 32·G/8 + 1024·B/8 in 16-bit lanes, then each looked up; mixed cells read the
        // pixel's codes back from the step.
        let cellNumbers = step.scratch, numbers = step.scratch + 128
        for group in 0..<4 {
            let red = Lanes16.load(step.channel(group, 0)), green = Lanes16.load(step.channel(group, 1))
            let blue = Lanes16.load(step.channel(group, 2))
            let cell = Lanes16.add(Lanes16.add(Lanes16.shiftRightLogical(red, 3), Lanes16.shiftLeft(Lanes16.shiftRightLogical(green, 3), 5)),
                                   Lanes16.shiftLeft(Lanes16.shiftRightLogical(blue, 3), 10))
            Lanes16.store(cell, to: cellNumbers + 32 * group)
        }
        withTables { tables in
            let cells = UnsafeRawPointer(cellNumbers).assumingMemoryBound(to: UInt16.self)
            let out = UnsafeMutableRawPointer(numbers).assumingMemoryBound(to: UInt16.self)
            // Every pixel's cell entry without a branch, a bit per mixed cell; then the mixed ones alone (a branch per
            // pixel would be mispredicted at most of them).
            var mixed: UInt64 = 0
            for i in 0..<64 {
                let entry = tables.cells[Int(truncatingIfNeeded: cells[i])]
                out[i] = UInt16(truncatingIfNeeded: entry)
                mixed |= UInt64(truncatingIfNeeded: entry &>> 7) &<< UInt64(i)
            }
            // Many mixed pixels: every pixel of the step searched in lanes instead (the same numbers, cheaper than
            // settling them one by one when they are at least half as many as the colours).
            if mixed.nonzeroBitCount &* 2 >= pixels.count {
                nearestInLanes(step, to: numbers)
                mixed = 0
            }
            while mixed != 0 {
                let i = mixed.trailingZeroBitCount
                mixed &= mixed &- 1
                let (group, lane) = (i >> 4, i & 15)
                @inline(__always) func code(_ channel: Int) -> UInt32 { UInt32(UInt16(bitPattern: step.code(group, channel, lane))) }
                let p = code(0) | code(1) << 8 | code(2) << 16
                out[i] = UInt16(truncatingIfNeeded: tables.number(cell: Int(truncatingIfNeeded: cells[i]), p))
            }
        }
        let tables = (Lanes16.vector(channelTables[0]), Lanes16.vector(channelTables[1]), Lanes16.vector(channelTables[2]))
        for group in 0..<4 {
            // Each lane's number (high byte 0) picks its colour's byte; the high byte's pick (colour 0) is masked off.
            let number = Lanes16.load(numbers + 32 * group)
            Lanes16.store(Lanes16.lowBytes(Lanes16.shuffleBytes(tables.0, number)), to: step.channel(group, 0))
            Lanes16.store(Lanes16.lowBytes(Lanes16.shuffleBytes(tables.1, number)), to: step.channel(group, 1))
            Lanes16.store(Lanes16.lowBytes(Lanes16.shuffleBytes(tables.2, number)), to: step.channel(group, 2))
        }
    }
}

/// Each channel becomes 255 when its value v = code/255 is at or above the threshold (less 10⁻⁶, in Float), else 0;
/// alpha is kept. The comparison depends on the code alone, so it is made once per code: the channel is 255 from
/// code `first` on (`first` = 256: never). A plain loop over the pixels, which the compiler vectorizes.
///
/// ```swift
/// let kernel = ThresholdKernel(threshold: 0.4)   // codes 102…255 → 255
/// ```
struct ThresholdKernel: RGBARowKernel {
    /// The first code that becomes 255 (256: none).
    let first: UInt32

    var readsOnlyItsPixel: Bool { true }

    init(threshold: Float) {
        first = UInt32((0..<256).first { Float($0) * (1 / 255) >= threshold - 1e-6 } ?? 256)
    }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = UnsafeRawPointer(source.row(y)), output = UnsafeMutableRawPointer(target.row(y))
        let first = self.first
        for x in 0..<width {
            let p = input.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self)
            let red: UInt32 = p & 0xFF >= first ? 0xFF : 0
            let green: UInt32 = (p >> 8) & 0xFF >= first ? 0xFF00 : 0
            let blue: UInt32 = (p >> 16) & 0xFF >= first ? 0xFF_0000 : 0
            output.storeBytes(of: red | green | blue | (p & 0xFF00_0000), toByteOffset: 4 &* x, as: UInt32.self)
        }
    }
}

/// Ordered dither with the 8×8 Bayer matrix to L levels per channel, on the codes: with s = L − 1, v = code/255 and
/// B the Bayer index of (x mod 8, y mod 8), the level is k = ⌊v·s + (B + ½)/64⌋ and the code round(255·k/s)
/// (halves up); alpha is kept.
///
/// In 16-bit lanes, exactly: k = ⌊(128·code·s + 255(2B + 1)) / (255·128)⌋ = ⌊(code·s + a_B) / 255⌋ with
/// a_B = ⌊255(2B + 1)/128⌋ (dropping the fraction 255(2B + 1)/128 − a_B < 1 from an integer numerator cannot cross a
/// multiple of 255); n = code·s + a_B < 2¹⁵, and ⌊n/255⌋ = (n + 1 + ⌊n/256⌋) >> 8 for every n < 65535. The code is
/// ⌊(510k + s) / 2s⌋ = ⌊(510k + s)·M / 2^(16 + e)⌋ with M = ⌈2^(16 + e) / 2s⌉ < 2¹⁶, 16 + e = 15 + ⌈log₂ 2s⌉: since
/// M·2s − 2^(16 + e) < 2s ≤ 2^(16 + e − 15), the product's error stays below 1/2s for every numerator < 2¹⁵ (an
/// unsigned 16-bit high multiply, then a shift by e). RGBA rows go 8 pixels (two vectors of 16 bytes) at a time, each
/// byte with its pixel's a_B and alpha put back; I420/NV12 steps (`map`) dither each group's R', G', B' vectors with
/// the a_B of their row and column parity. The test checks every code at every position and level against the formula.
///
/// ```swift
/// let kernel = DitherKernel(levels: 4)
/// ```
struct DitherKernel: RGBARowKernel, PlanarPixelKernel {
    /// s = L − 1.
    let steps: UInt16
    /// M and e above.
    let multiplier: UInt16, shift: UInt16
    /// Per y mod 8, a_B of the bytes of 8 pixels (x mod 8 = 0…7), 0 on alpha: two vectors of 16 lanes.
    let byteAddends: [SIMD16<Int16>]
    /// Per y mod 8 and column parity (even, odd), a_B of 16 pixels of that parity from a column that is a multiple of 8.
    let pixelAddends: [SIMD16<Int16>]

    var readsOnlyItsPixel: Bool { true }

    /// The 8×8 Bayer matrix, row-major: M(2n)[y][x] = 4·M(n)[y mod n][x mod n] + M(2)[y / n][x / n], M(2) = [[0, 2], [3, 1]].
    static let bayer: [Int] = {
        var matrix = [0]
        var size = 1
        while size < 8 {
            let two = [[0, 2], [3, 1]]
            var next = [Int](repeating: 0, count: 4 * size * size)
            for y in 0..<(2 * size) {
                for x in 0..<(2 * size) {
                    next[y * 2 * size + x] = 4 * matrix[(y % size) * size + x % size] + two[y / size][x / size]
                }
            }
            matrix = next
            size *= 2
        }
        return matrix
    }()

    init(levels: Int) {
        let s = max(1, min(levels - 1, 63))
        steps = UInt16(s)
        let exponent = 15 + (Int.bitWidth - (2 * s - 1).leadingZeroBitCount)   // 15 + ⌈log₂ 2s⌉
        multiplier = UInt16(((1 << exponent) + 2 * s - 1) / (2 * s))
        shift = UInt16(exponent - 16)
        func addend(x: Int, y: Int) -> Int16 { Int16(255 * (2 * DitherKernel.bayer[(y & 7) * 8 + (x & 7)] + 1) / 128) }
        byteAddends = (0..<16).map { vector in
            let (y, half) = (vector / 2, vector % 2)
            var lanes = SIMD16<Int16>()
            for byte in 0..<16 where byte % 4 != 3 { lanes[byte] = addend(x: 4 * half + byte / 4, y: y) }
            return lanes
        }
        pixelAddends = (0..<16).map { vector in
            let (y, parity) = (vector / 2, vector % 2)
            var lanes = SIMD16<Int16>()
            for lane in 0..<16 { lanes[lane] = addend(x: 2 * lane + parity, y: y) }
            return lanes
        }
    }

    /// Dithered codes of 16 codes in 16-bit lanes, with their a_B.
    @inline(__always) private func dither(_ code: Lanes16.Vector, _ addend: Lanes16.Vector) -> Lanes16.Vector {
        let s = Int16(steps)
        let n = Lanes16.add(Lanes16.multiplyLow(code, s), addend)
        let level = Lanes16.shiftRightLogical(Lanes16.add(Lanes16.add(n, Lanes16.splat(1)), Lanes16.shiftRightLogical(n, 8)), 8)
        let numerator = Lanes16.add(Lanes16.multiplyLow(level, 510), Lanes16.splat(s))
        let product = Lanes16.multiplyHighUnsigned(numerator, Lanes16.splat(Int16(bitPattern: multiplier)))
        return Lanes16.shiftRightLogical(product, Int(shift))
    }

    /// The same for one code (the last pixels of an RGBA row).
    @inline(__always) private func dither(_ code: UInt8, _ addend: Int16) -> UInt8 {
        let n = UInt16(code) &* steps &+ UInt16(addend)
        let level = (n &+ 1 &+ (n &>> 8)) &>> 8
        return UInt8(truncatingIfNeeded: UInt16(truncatingIfNeeded: (UInt32(level &* 510 &+ steps) &* UInt32(multiplier)) &>> 16) &>> shift)
    }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = source.row(y), output = target.row(y)
        let (low, high) = (Lanes16.vector(byteAddends[2 * (y & 7)]), Lanes16.vector(byteAddends[2 * (y & 7) + 1]))
        // Alpha bytes (every fourth lane) keep their code.
        let alpha = Lanes16.vector(SIMD16<Int16>(0, 0, 0, -1, 0, 0, 0, -1, 0, 0, 0, -1, 0, 0, 0, -1))
        let blocks = width / 8
        for block in 0..<blocks {
            let (a, b) = Lanes16.widen32(input + 32 &* block)
            Lanes16.narrow32(Lanes16.select(alpha, a, dither(a, low)), Lanes16.select(alpha, b, dither(b, high)), to: output + 32 &* block)
        }
        for j in 0..<(4 * (width - 8 * blocks)) {
            let (x, byte) = (8 * blocks + j / 4, 32 * blocks + j)
            output[byte] = j % 4 == 3 ? input[byte] : dither(input[byte], byteAddends[2 * (y & 7) + (x & 7) / 4][4 * (x & 3) + j % 4])
        }
    }

    func runPlanar(_ pass: PlanarPixelPass, source: [Plane], target: [Plane], format: PixelFormat, width: Int, height: Int,
                   slices: SliceRunner) {
        pass.run(self, source: source, target: target, format: format, width: width, height: height, slices: slices)
    }

    func map(_ step: PlanarStep, rows: (Int, Int)) {
        for group in 0..<4 {
            let y = group < 2 ? rows.0 : rows.1
            let addend = Lanes16.vector(pixelAddends[2 * (y & 7) + (group & 1)])
            for channel in 0..<3 {
                let codes = step.channel(group, channel)
                Lanes16.store(dither(Lanes16.load(codes), addend), to: codes)
            }
        }
    }
}

/// White with alpha = luma: alpha = Kr·R + Kg·G + Kb·B on the codes, rounded, with the weights in 1/65536 (summing to
/// 65536, so white stays 255): within 0.006 of a code of the exact value, 8 pixels per step in 32-bit lanes.
///
/// ```swift
/// let kernel = MaskToAlphaKernel(weights: LumaWeights(.bt709))
/// ```
struct MaskToAlphaKernel: RGBARowKernel {
    let red: UInt32, green: UInt32, blue: UInt32

    init(weights: LumaWeights) {
        red = UInt32((weights.red * 65536).rounded())
        green = UInt32((weights.green * 65536).rounded())
        blue = 65536 - red - green
    }

    var readsOnlyItsPixel: Bool { true }

    @inline(__always) private func pixels<V: SIMD>(_ p: V) -> V where V.Scalar == UInt32 {
        let mask = V(repeating: 0xFF)
        let luma = (p & mask) &* red &+ ((p &>> 8) & mask) &* green &+ ((p &>> 16) & mask) &* blue &+ 32768
        return (luma &>> 16) &<< 24 | 0x00FF_FFFF
    }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = UnsafeRawPointer(source.row(y)), output = UnsafeMutableRawPointer(target.row(y))
        var x = 0
        while x + 8 <= width {
            output.storeBytes(of: pixels(input.loadUnaligned(fromByteOffset: 4 &* x, as: SIMD8<UInt32>.self)),
                              toByteOffset: 4 &* x, as: SIMD8<UInt32>.self)
            x += 8
        }
        while x < width {
            let p = SIMD2<UInt32>(repeating: input.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self))
            output.storeBytes(of: pixels(p).x, toByteOffset: 4 &* x, as: UInt32.self)
            x += 1
        }
    }
}

extension FilterSpec {
    /// Each pixel becomes the nearest colour of a palette (squared R'G'B' distance).
    /// - `palette` one of cga|gameboy|gray4|pico8|rgb8 (default pico8). Formats: all (gray frames come out RGBA).
    /// - Chain: `palettize:palette=gameboy` · Swift: `try FilterDescription("palettize", ["palette": .text("gameboy")])`
    public static let palettize = FilterSpec(
        name: "palettize", family: .colorEffect, summary: "Each pixel becomes the nearest colour of a fixed palette.",
        coreImage: "CIPalettize",
        parameters: [ParameterSpec("palette", .choice(Palettes.all.keys.sorted()), default: .text("pico8"), "the palette")],
        example: "palettize:palette=gameboy", swift: "try FilterDescription(\"palettize\", [\"palette\": .text(\"gameboy\")])"
    ) { arguments, context in
        .processor(ColorReductionProcessor(name: "palettize", kernel: PaletteKernel(codes: Palettes.codes(arguments.text("palette"))),
                                           slices: context.slices))
    }

    /// Each channel becomes 1 at or above `threshold`, else 0 (eight colours).
    /// - `threshold` 0…1 (default 0.5). Formats: all (gray frames come out RGBA).
    /// - Chain: `color-threshold:threshold=0.4` · Swift: `try FilterDescription("color-threshold", ["threshold": .number(0.4)])`
    public static let colorThreshold = FilterSpec(
        name: "color-threshold", family: .colorEffect, summary: "Each channel set to 0 or 1 at a threshold.",
        coreImage: "CIColorThreshold",
        parameters: [ParameterSpec("threshold", .number(0...1), default: 0.5, "channels at or above it become 1")],
        example: "color-threshold:threshold=0.4", swift: "try FilterDescription(\"color-threshold\", [\"threshold\": .number(0.4)])"
    ) { arguments, context in
        .processor(RGBAProcessor(name: "color-threshold", kernel: ThresholdKernel(threshold: arguments.float("threshold")),
                                 slices: context.slices))
    }

    /// Ordered dither: each channel v → ⌊v·(L−1) + (B + ½)/64⌋ / (L−1), B the 8×8 Bayer index of the pixel's
    /// position (x mod 8, y mod 8).
    /// - `levels` L 2…64 (default 4). Formats: all (gray frames come out RGBA).
    /// - Chain: `dither:levels=2` · Swift: `try FilterDescription("dither", ["levels": .integer(2)])`
    public static let dither = FilterSpec(
        name: "dither", family: .colorEffect, summary: "Ordered (Bayer 8×8) dither to a few levels per channel.",
        coreImage: "CIDither",
        parameters: [ParameterSpec("levels", .integer(2...64), default: 4, "values per channel")],
        example: "dither:levels=2", swift: "try FilterDescription(\"dither\", [\"levels\": .integer(2)])"
    ) { arguments, context in
        .processor(ColorReductionProcessor(name: "dither", kernel: DitherKernel(levels: arguments.integer("levels")),
                                           slices: context.slices))
    }

    /// Gray of the largest of R', G', B'.
    /// - No parameters. Formats: all (I420/NV12: the largest of the three in 16-bit lanes, per pixel). Chain: `maximum-component` · Swift: `try FilterDescription("maximum-component")`
    public static let maximumComponent = FilterSpec(
        name: "maximum-component", family: .colorEffect, summary: "Gray of the largest of R, G and B.",
        coreImage: "CIMaximumComponent", parameters: [], example: "maximum-component", swift: "try FilterDescription(\"maximum-component\")"
    ) { _, _ in .color(.largestChannel) }

    /// Gray of the smallest of R', G', B'.
    /// - No parameters. Formats: all (I420/NV12: the smallest of the three in 16-bit lanes, per pixel). Chain: `minimum-component` · Swift: `try FilterDescription("minimum-component")`
    public static let minimumComponent = FilterSpec(
        name: "minimum-component", family: .colorEffect, summary: "Gray of the smallest of R, G and B.",
        coreImage: "CIMinimumComponent", parameters: [], example: "minimum-component", swift: "try FilterDescription(\"minimum-component\")"
    ) { _, _ in .color(.smallestChannel) }

    /// A mask made from the picture: white whose alpha is the pixel's luma (for compositing).
    /// - No parameters. Formats: RGBA, BGRA (the formats with alpha); other frames are converted to RGBA before it.
    /// - Chain: `mask-to-alpha` · Swift: `try FilterDescription("mask-to-alpha")`
    public static let maskToAlpha = FilterSpec(
        name: "mask-to-alpha", family: .colorEffect, summary: "White with alpha equal to the pixel's luma.",
        coreImage: "CIMaskToAlpha", parameters: [], pixelFormats: [.rgba, .bgra],
        example: "mask-to-alpha", swift: "try FilterDescription(\"mask-to-alpha\")"
    ) { _, context in
        .processor(RGBAProcessor(name: "mask-to-alpha", kernel: MaskToAlphaKernel(weights: context.luma), slices: context.slices))
    }
}
