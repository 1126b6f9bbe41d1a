import Foundation
import VFXCore
import VFXPipeline

// Colour reduction and components: palettes, per-channel thresholds, ordered dither, the largest or smallest
// component, and luma turned into alpha. Step functions (palette, threshold, dither) run exactly per pixel on RGBA
// (`RGBAProcessor`); the smooth ones are point-wise `.color` transforms and fuse with their neighbours.

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

/// Each pixel becomes the nearest palette colour: the smallest (R − Rᵢ)² + (G − Gᵢ)² + (B − Bᵢ)² over the palette,
/// on the bytes, the first colour on a tie; alpha is kept.
///
/// Exactly, through a table of 32³ cells of 8×8×8 byte values (128 KiB) and finer tables where it is needed. Colour i wins at p when d(p, cᵢ) < d(p, cⱼ)
/// for every j < i and d(p, cᵢ) ≤ d(p, cⱼ) for every j > i; since d(p, cᵢ) − d(p, cⱼ) = −2p·(cᵢ − cⱼ) + |cᵢ|² − |cⱼ|²
/// is linear in p, each condition is a half-space and the region where colour i wins (its Voronoi cell with the tie
/// rule) is convex. A cell of the table is the box spanned by its 8 corners (each coordinate 8n or 8n + 7), so when
/// the same colour wins at all 8 corners it wins everywhere in the box: the table holds that colour. In the other
/// cells a colour j can win only if its distance to the nearest point of the box is at most some colour's distance to
/// the box's farthest corner (else it is farther than that colour from every point of the box, so it neither wins
/// nor ties); such a cell is split into 8 subcells of 4×4×4, each settled the same way among those colours, and each
/// of the 64 values of a subcell that is still mixed is settled by searching its colours in palette order with the tie
/// rule. A pixel costs one to three lookups.
///
/// ```swift
/// let kernel = PaletteKernel(codes: Palettes.codes("gameboy"))
/// ```
struct PaletteKernel: RGBARowKernel {
    /// Per cell (index R/8 + 32·G/8 + 1024·B/8): the winning colour as an RGBA pixel with alpha 0, or `mixed` plus the
    /// number of the cell's block of 8 subcells in `subcells`.
    private let cells: [UInt32]
    /// Per subcell (4×4×4 values; block n holds the 8 of cell n, index bit 2 of R + 2·bit 2 of G + 4·bit 2 of B): the
    /// winning colour as a pixel with alpha 0, or `mixed` plus the number of its block of 64 values in `values`.
    private let subcells: [UInt32]
    /// Per value of a mixed subcell (block n holds the 64 of the n-th, index R mod 4 + 4·(G mod 4) + 16·(B mod 4)): the
    /// index of the winning colour.
    private let values: [UInt8]
    /// The palette's colours as RGBA pixels with alpha 0.
    private let pixels: [UInt32]
    private static let mixed: UInt32 = 0x8000_0000

    var readsOnlyItsPixel: Bool { true }

    /// `codes` 0xRRGGBB, 1 to 31 of them.
    init(codes: [UInt32]) {
        precondition((1...31).contains(codes.count), "a palette has 1 to 31 colours")
        let colors = codes.map { SIMD3<Int32>(Int32(($0 >> 16) & 0xff), Int32(($0 >> 8) & 0xff), Int32($0 & 0xff)) }
        pixels = colors.map { UInt32($0.x) | UInt32($0.y) << 8 | UInt32($0.z) << 16 }
        let all = UInt32(1 << colors.count) - 1
        var cells = [UInt32](repeating: 0, count: 32 * 32 * 32), subcells: [UInt32] = [], values: [UInt8] = []
        for b in 0..<32 {
            for g in 0..<32 {
                for r in 0..<32 {
                    let low = SIMD3<Int32>(Int32(8 * r), Int32(8 * g), Int32(8 * b))
                    let entry = PaletteKernel.entry(low: low, size: 8, colors: colors, mask: all)
                    guard entry & PaletteKernel.mixed != 0 else {
                        cells[(b * 32 + g) * 32 + r] = entry
                        continue
                    }
                    cells[(b * 32 + g) * 32 + r] = PaletteKernel.mixed | UInt32(subcells.count / 8)
                    for k in 0..<8 {
                        let corner = low &+ 4 &* SIMD3<Int32>(Int32(k & 1), Int32((k >> 1) & 1), Int32(k >> 2))
                        let subentry = PaletteKernel.entry(low: corner, size: 4, colors: colors, mask: entry & ~PaletteKernel.mixed)
                        guard subentry & PaletteKernel.mixed != 0 else {
                            subcells.append(subentry)
                            continue
                        }
                        subcells.append(PaletteKernel.mixed | UInt32(values.count / 64))
                        for v in 0..<64 {
                            let point = corner &+ SIMD3<Int32>(Int32(v & 3), Int32((v >> 2) & 3), Int32(v >> 4))
                            values.append(UInt8(PaletteKernel.nearest(point, among: colors, mask: subentry & ~PaletteKernel.mixed)))
                        }
                    }
                }
            }
        }
        self.cells = cells
        self.subcells = subcells
        self.values = values
    }

    /// The entry of the box `low`…`low` + `size` − 1 (each axis) when the colours of `mask` include every colour that can
    /// win in it: the winner's pixel when the same colour wins at the box's 8 corners, else `mixed` plus the colours
    /// of `mask` that may win somewhere in it.
    static func entry(low: SIMD3<Int32>, size: Int32, colors: [SIMD3<Int32>], mask: UInt32) -> UInt32 {
        let high = low &+ (size - 1)
        let winners = (0..<8).map { k in
            nearest(SIMD3(k & 1 == 0 ? low.x : high.x, k & 2 == 0 ? low.y : high.y, k & 4 == 0 ? low.z : high.z), among: colors, mask: mask)
        }
        if winners.allSatisfy({ $0 == winners[0] }) {
            let c = colors[winners[0]]
            return UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16
        }
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
        return candidates.reduce(mixed) { nearestPoint(colors[$1]) <= bound ? $0 | 1 << UInt32($1) : $0 }
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

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = UnsafeRawPointer(source.row(y)), output = UnsafeMutableRawPointer(target.row(y))
        cells.withUnsafeBufferPointer { cells in
            subcells.withUnsafeBufferPointer { subcells in
                values.withUnsafeBufferPointer { values in
                    guard let table = cells.baseAddress else { return }
                    for x in 0..<width {
                        let p = input.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self)
                        var entry = table[Int(truncatingIfNeeded: (p >> 3) & 0x1F | (p >> 6) & 0x3E0 | (p >> 9) & 0x7C00)]
                        if entry & PaletteKernel.mixed != 0 {
                            let block = Int(truncatingIfNeeded: entry & ~PaletteKernel.mixed) << 3
                            entry = subcells[block | Int(truncatingIfNeeded: (p >> 2) & 1 | (p >> 9) & 2 | (p >> 16) & 4)]
                            if entry & PaletteKernel.mixed != 0 {
                                let start = Int(truncatingIfNeeded: entry & ~PaletteKernel.mixed) << 6
                                entry = pixels[Int(values[start | Int(truncatingIfNeeded: p & 3 | (p >> 6) & 0xC | (p >> 12) & 0x30)])]
                            }
                        }
                        output.storeBytes(of: entry | (p & 0xFF00_0000), toByteOffset: 4 &* x, as: UInt32.self)
                    }
                }
            }
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
/// M·2s − 2^(16 + e) < 2s ≤ 2^(16 + e − 15), the product's error stays below 1/2s for every numerator < 2¹⁵. Plain
/// loops over blocks of 8 pixels, which the compiler vectorizes (a 16-bit high multiply for M); the test checks every
/// code at every position and level against the formula.
///
/// ```swift
/// let kernel = DitherKernel(levels: 4)
/// ```
struct DitherKernel: RGBARowKernel {
    /// s = L − 1.
    let steps: UInt16
    /// M and e above.
    let multiplier: UInt16, shift: UInt16
    /// Per y mod 8, the bytes of 8 pixels (x mod 8 = 0…7): a_B on the colour bytes, 0 on alpha.
    let addends: [UInt16]
    /// The bytes of 8 pixels: 0xFF on alpha (kept), 0 on colour.
    let kept: [UInt8]

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
        addends = (0..<256).map { i in
            let (y, byte) = (i / 32, i % 32)
            return byte % 4 == 3 ? 0 : UInt16(255 * (2 * DitherKernel.bayer[y * 8 + byte / 4] + 1) / 128)
        }
        kept = (0..<32).map { $0 % 4 == 3 ? 0xFF : 0 }
    }

    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = source.row(y), output = target.row(y)
        let (s, multiplier, shift) = (steps, UInt32(self.multiplier), self.shift)
        addends.withUnsafeBufferPointer { addends in
            kept.withUnsafeBufferPointer { kept in
                let addend = addends.baseAddress! + 32 * (y & 7), kept = kept.baseAddress!
                // Byte j of a block of 8 pixels: its code dithered, or kept when it is alpha.
                @inline(__always) func dither(_ code: UInt8, _ j: Int) -> UInt8 {
                    let n = UInt16(code) &* s &+ addend[j]
                    let level = (n &+ 1 &+ (n &>> 8)) &>> 8
                    let value = UInt16(truncatingIfNeeded: (UInt32(level &* 510 &+ s) &* multiplier) &>> 16) &>> shift
                    return (UInt8(truncatingIfNeeded: value) & ~kept[j]) | (code & kept[j])
                }
                // Plain loops over blocks of 32 bytes (the compiler vectorizes them), then the row's last pixels.
                let blocks = width / 8
                for block in 0..<blocks {
                    let from = input + 32 &* block, to = output + 32 &* block
                    for j in 0..<32 { to[j] = dither(from[j], j) }
                }
                for j in 0..<(4 * (width - 8 * blocks)) { output[32 * blocks + j] = dither(input[32 * blocks + j], j) }
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
        .processor(RGBAProcessor(name: "palettize", kernel: PaletteKernel(codes: Palettes.codes(arguments.text("palette"))),
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
        .processor(RGBAProcessor(name: "dither", kernel: DitherKernel(levels: arguments.integer("levels")), slices: context.slices))
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
