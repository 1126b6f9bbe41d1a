import Foundation
import VFXCore
import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// The second round's colour filters on RGBA pixels against their formulas, written again here in Double (the same
/// 4096 random colours and cube corners as `FormulaTests`, and the same tolerances by kernel: exact tables ≤ 1 code,
/// 3D-table runs ≤ 6 codes and ≥ 40 dB, step functions exact with a few flips where a value sits on the step).
final class CatalogColorTests: XCTestCase {
    typealias Color = SIMD3<Double>
    typealias Case = FormulaTests.Case
    static func luma(_ c: Color) -> Double { FormulaTests.luma(c) }

    /// W3C separable blend of backdrop b with source s.
    static func separable(_ mode: String, _ b: Double, _ s: Double) -> Double {
        switch mode {
        case "multiply": return b * s
        case "screen": return 1 - (1 - b) * (1 - s)
        case "overlay": return b <= 0.5 ? 2 * b * s : 1 - 2 * (1 - b) * (1 - s)
        case "hard-light": return s <= 0.5 ? 2 * b * s : 1 - 2 * (1 - b) * (1 - s)
        case "soft-light":
            if s <= 0.5 { return b - (1 - 2 * s) * b * (1 - b) }
            let d = b <= 0.25 ? ((16 * b - 12) * b + 4) * b : sqrt(b)
            return b + (2 * s - 1) * (d - b)
        case "color-dodge": return b == 0 ? 0 : (s >= 1 ? 1 : min(1, b / (1 - s)))
        case "color-burn": return b >= 1 ? 1 : (s <= 0 ? 0 : 1 - min(1, (1 - b) / s))
        case "darken": return min(b, s)
        case "lighten": return max(b, s)
        case "difference": return abs(b - s)
        default: return b + s - 2 * b * s   // exclusion
        }
    }

    static func lum(_ c: Color) -> Double { 0.3 * c.x + 0.59 * c.y + 0.11 * c.z }
    static func setLum(_ c: Color, _ l: Double) -> Color {
        var out = c + (l - lum(c))
        let mid = lum(out), low = out.min(), high = out.max()
        if low < 0 { out = mid + (out - mid) * mid / (mid - low) }
        if high > 1 { out = mid + (out - mid) * (1 - mid) / (high - mid) }
        return out
    }
    static func setSat(_ c: Color, _ s: Double) -> Color {
        let low = c.min(), high = c.max()
        return high > low ? (c - low) * s / (high - low) : Color(0, 0, 0)
    }

    static func blend(_ mode: String, _ b: Color, _ s: Color) -> Color {
        switch mode {
        case "hue": return setLum(setSat(s, b.max() - b.min()), lum(b))
        case "saturation": return setLum(setSat(b, s.max() - s.min()), lum(b))
        case "color": return setLum(s, lum(b))
        case "luminosity": return setLum(b, lum(s))
        default: return Color(separable(mode, b.x, s.x), separable(mode, b.y, s.y), separable(mode, b.z, s.z))
        }
    }

    static let separableModes = ["multiply", "screen", "overlay", "soft-light", "hard-light", "color-dodge", "color-burn",
                                 "darken", "lighten", "difference", "exclusion"]
    static let layer = Color(0xc0, 0x60, 0x30) / 255

    static let pico8: [Color] = [0x000000, 0x1d2b53, 0x7e2553, 0x008751, 0xab5236, 0x5f574f, 0xc2c3c7, 0xfff1e8,
                                 0xff004d, 0xffa300, 0xffec27, 0x00e436, 0x29adff, 0x83769c, 0xff77a8, 0xffccaa].map { (code: Int) in
        Color(Double((code >> 16) & 0xff), Double((code >> 8) & 0xff), Double(code & 0xff)) / 255
    }

    static let cases: [Case] = [
        Case(chain: "highlight-shadow:shadows=0.6:highlights=0.4") { c in
            let y = luma(c)
            let curve = y + 0.6 * 0.25 * 27 / 4 * y * (1 - y) * (1 - y) - 0.6 * 0.25 * 27 / 4 * y * y * (1 - y)
            return c + (min(max(curve, 0), 1) - y)
        }.tolerant(),
        Case(chain: "color-polynomial:a0=0.05:a1=0.7:a2=0.6:a3=-0.4") { c in
            0.05 + 0.7 * c + 0.6 * c * c - 0.4 * c * c * c
        },
        Case(chain: "srgb-to-linear") { c in
            Color(c.x <= 0.04045 ? c.x / 12.92 : pow((c.x + 0.055) / 1.055, 2.4), c.y <= 0.04045 ? c.y / 12.92 : pow((c.y + 0.055) / 1.055, 2.4),
                  c.z <= 0.04045 ? c.z / 12.92 : pow((c.z + 0.055) / 1.055, 2.4))
        },
        Case(chain: "linear-to-srgb") { c in
            func f(_ v: Double) -> Double { v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055 }
            return Color(f(c.x), f(c.y), f(c.z))
        },
        Case(chain: "maximum-component") { Color(repeating: $0.max()) }.tolerant(),
        Case(chain: "minimum-component") { Color(repeating: $0.min()) }.tolerant(),
        Case(chain: "solid-color:color=#336699") { _ in Color(0x33, 0x66, 0x99) / 255 },
        Case(chain: "color-threshold:threshold=0.45", formula: { c in
            Color(c.x >= 0.45 ? 1 : 0, c.y >= 0.45 ? 1 : 0, c.z >= 0.45 ? 1 : 0)
        }, maxError: 0, allowedFlips: 0.002),
        Case(chain: "palettize:palette=pico8", formula: { c in
            pico8.min { a, b in ((a - c) * (a - c)).sum() < ((b - c) * (b - c)).sum() } ?? c
        }, maxError: 0, allowedFlips: 0.002),
    ] + separableModes.map { mode in
        Case(chain: "\(mode)-blend:color=#c06030") { blend(mode, $0, layer) }
    } + ["hue", "saturation", "color", "luminosity"].map { mode in
        Case(chain: "\(mode)-blend:color=#c06030") { blend(mode, $0, layer) }.tolerant()
    } + [
        Case(chain: "screen-blend:color=#c06030:opacity=0.4") { c in c + (blend("screen", c, layer) - c) * 0.4 },
        // The first round's photo looks, from their documented formulas.
        Case(chain: "photo-chrome") { c in ((luma(c) + (c - luma(c)) * 1.3) - 0.5) * 1.1 + 0.5 }.tolerant(),
        Case(chain: "photo-instant") { c in
            (luma(c) + (c - luma(c)) * 0.8) * Color(1.05, 0.98, 0.9) * 0.92 + Color(0.06, 0.05, 0.04)
        }.tolerant(),
        Case(chain: "photo-process") { c in c + (c * c * (3 - 2 * c) - c) * 0.6 + Color(-0.02, 0, 0.04) },
        Case(chain: "photo-tonal") { c in Color(repeating: 0.05 + 0.9 * pow(luma(c), 0.9)) },
        Case(chain: "photo-transfer") { c in c * Color(1.08, 1, 0.85) + Color(0.03, 0.02, 0) }.tolerant(),
    ]

    func testColorFiltersMatchTheirFormulas() throws {
        let input = FormulaTests.pixels()
        let frame = RawFrames.frame(input, format: .rgba, width: 64, height: 64)
        for item in Self.cases {
            let output = RawFrames.bytes(try TestSupport.apply(item.chain, to: frame))
            var expected = output
            var worst = 0, flips = 0
            for pixel in stride(from: 0, to: input.count, by: 4) {
                let color = Color(Double(input[pixel]), Double(input[pixel + 1]), Double(input[pixel + 2])) / 255
                let value = FormulaTests.clamp(item.formula(color)) * 255
                var flipped = false
                for c in 0..<3 {
                    let want = Int(value[c].rounded())
                    expected[pixel + c] = UInt8(want)
                    let error = abs(Int(output[pixel + c]) - want)
                    if error > item.maxError && item.allowedFlips > 0 { flipped = true } else { worst = max(worst, error) }
                }
                if flipped { flips += 1 }
            }
            XCTAssertLessThanOrEqual(worst, item.maxError, item.chain)
            XCTAssertLessThanOrEqual(Double(flips) / Double(input.count / 4), item.allowedFlips, item.chain)
            if item.allowedFlips == 0 {
                XCTAssertGreaterThanOrEqual(Quality.psnr(output, expected, skipEvery: 4), item.minPSNR, item.chain)
            }
        }
    }

    /// Colours made from luma (`thermal`, `x-ray`) on I420 and NV12 at 83×41 (odd: one-column and one-row blocks),
    /// two slices: each pixel's palette colour at its own luma Y' (clamped to 0…1), converted with the frame's coding
    /// here in Double; luma per pixel, chroma the rounded mean over the block's pixels. Tolerance 1 code (the tables
    /// hold luma to the code and chroma to 1/128 code, then round).
    func testColoursFromLumaOnYUVFrames() throws {
        func palette(_ stops: [(Double, Color)]) -> (Double) -> Color {
            { t in
                guard let upper = stops.firstIndex(where: { $0.0 >= t }) else { return stops[stops.count - 1].1 }
                if upper == 0 { return stops[0].1 }
                let (p0, c0) = stops[upper - 1], (p1, c1) = stops[upper]
                return c0 + (c1 - c0) * ((t - p0) / (p1 - p0))
            }
        }
        let thermal = palette([(0, Color(0, 0, 0)), (0.2, Color(0.1, 0, 0.6)), (0.4, Color(0.75, 0, 0.6)),
                               (0.6, Color(1, 0.25, 0)), (0.8, Color(1, 0.85, 0)), (1, Color(1, 1, 1))])
        let xRayFilm = palette([(0, Color(0, 0.02, 0.06)), (0.5, Color(0.35, 0.47, 0.6)), (1, Color(0.88, 0.96, 1))])
        let (w, h) = (83, 41)
        for (format, name) in [(PixelFormat.i420, "yuv420p"), (.nv12, "nv12")] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (w, h)), format: format, width: w, height: h)
            let coding = YUVCoding(frame.color)
            let (kr, kb) = (Double(coding.weights.red), Double(coding.weights.blue))
            let (scale, offset, chroma) = (Double(coding.lumaScale), Double(coding.lumaOffset), Double(coding.chromaScale))
            let lumaRows = SpatialFixtures.rows(frame, 0)
            for (chain, formula) in [("thermal", thermal), ("x-ray", { xRayFilm(1 - $0) })] as [(String, (Double) -> Color)] {
                let output = try TestSupport.apply(chain, to: frame, threads: 2)
                // The output codes of each input pixel.
                let codes = lumaRows.map { row in
                    row.map { code -> Color in
                        let rgb = FormulaTests.clamp(formula(min(max((Double(code) - offset) / scale, 0), 1)))
                        let y = kr * rgb.x + (1 - kr - kb) * rgb.y + kb * rgb.z
                        return Color(offset + scale * y, 128 + chroma * (rgb.z - y) / (2 * (1 - kb)), 128 + chroma * (rgb.x - y) / (2 * (1 - kr)))
                    }
                }
                var worst = 0
                for (y, row) in SpatialFixtures.rows(output, 0).enumerated() {
                    for x in 0..<w { worst = max(worst, abs(Int(row[x]) - Int(codes[y][x].x.rounded()))) }
                }
                let chromaRows = (1..<frame.planeCount).map { SpatialFixtures.rows(output, $0) }
                for cy in 0..<((h + 1) / 2) {
                    for cx in 0..<((w + 1) / 2) {
                        let block = [(2 * cy, 2 * cx), (2 * cy, 2 * cx + 1), (2 * cy + 1, 2 * cx), (2 * cy + 1, 2 * cx + 1)]
                            .filter { $0.0 < h && $0.1 < w }.map { codes[$0.0][$0.1] }
                        let mean = block.reduce(Color(), +) / Double(block.count)
                        let (cb, cr) = format == .nv12 ? (chromaRows[0][cy][2 * cx], chromaRows[0][cy][2 * cx + 1])
                            : (chromaRows[0][cy][cx], chromaRows[1][cy][cx])
                        worst = max(worst, abs(Int(cb) - Int(mean.y.rounded())), abs(Int(cr) - Int(mean.z.rounded())))
                    }
                }
                XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(format)")
            }
        }
    }

    /// Issue 7: colour effects on a gray picture make colour. A gray8 frame through sepia, thermal or color-monochrome
    /// comes out RGBA with each gray g mapped by the formula on (g, g, g) (exact 256-entry tables: ≤ 1 code).
    func testColorEffectsOnGrayMakeColor() throws {
        let gray = (0..<256).map { UInt8($0) } + (0..<256).map { UInt8(255 - $0) }
        let frame = RawFrames.frame(gray, format: .gray8, width: 32, height: 16)
        func thermal(_ t: Double) -> Color {
            let stops: [(Double, Color)] = [(0, Color(0, 0, 0)), (0.2, Color(0.1, 0, 0.6)), (0.4, Color(0.75, 0, 0.6)),
                                            (0.6, Color(1, 0.25, 0)), (0.8, Color(1, 0.85, 0)), (1, Color(1, 1, 1))]
            let k = min(max(Int(t / 0.2), 0), 4)
            return stops[k].1 + (stops[k + 1].1 - stops[k].1) * ((t - stops[k].0) / 0.2)
        }
        let checks: [(String, (Double) -> Color)] = [
            ("sepia", { g in Color(1.351 * g, 1.203 * g, 0.937 * g) }),
            ("thermal", thermal),
            ("color-monochrome:color=#336699", { g in Color(0x33, 0x66, 0x99) / 255 * g }),
        ]
        for (chain, formula) in checks {
            let processor = try FilterChain(parsing: chain).makeProcessor(threads: 1)
            let format = try processor.configure(for: FrameFormat(of: frame))
            XCTAssertEqual(format.pixelFormat, .rgba, chain)
            let output = try XCTUnwrap(processor.frames(from: frame).first)
            XCTAssertEqual(output.format, .rgba, chain)
            let bytes = RawFrames.bytes(output)
            var worst = 0
            for (index, g) in gray.enumerated() {
                let want = FormulaTests.clamp(formula(Double(g) / 255)) * 255
                for c in 0..<3 { worst = max(worst, abs(Int(bytes[4 * index + c]) - Int(want[c].rounded()))) }
                XCTAssertEqual(bytes[4 * index + 3], 255)
            }
            XCTAssertLessThanOrEqual(worst, 1, chain)
        }
        // Gray stays gray (and one plane) when the run makes no colour.
        let processor = try FilterChain(parsing: "mono,gamma:power=0.8").makeProcessor(threads: 1)
        XCTAssertEqual(try processor.configure(for: FrameFormat(of: frame)).pixelFormat, .gray8)
    }
}
