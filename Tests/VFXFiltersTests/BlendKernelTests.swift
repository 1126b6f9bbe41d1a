import Foundation
import VFXCore
import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// The blend modes' per-pixel kernels (`BlendKernels.swift`: `BlendYUVKernel` on I420/NV12, `BlendRows` on RGBA/BGRA)
/// against the W3C formulas written again here in Double (`CatalogColorTests.blend`), on small frames of odd size
/// (one-column and one-row 4:2:0 blocks at the edges), two slices.
///
/// The definition checked: out = Cb + (clamp(B(Cb, Cs)) − Cb) · α · opacity. On RGBA and BGRA, Cb is the pixel's bytes
/// / 255. On I420 and NV12, Cb is the pixel's R'G'B' from its luma and its block's chroma with the frame's coding,
/// clamped to 0…1 and not rounded; the output luma is each pixel's, the output chroma that of the mean of the block's
/// results. Tolerance 1 code everywhere: the kernels compute in Float and round once at the end, so a value within
/// Float's error of a half code may round the other way (the Double value is never more than 1 code away). On YUV
/// frames the pixels where the definition jumps and Float rounding decides the side are left out, and counted
/// (`nearStep`): saturation's backdrops within 10⁻³ of gray, dodge's and burn's within 10⁻⁵ of 0 or 1 before clamping.
final class BlendKernelTests: XCTestCase {
    typealias Color = SIMD3<Double>

    /// What is blended: the chain's layer parameters and the layer's colour and alpha at frame pixel (x, y).
    struct Layer {
        let name: String
        let parameters: String
        let source: (Int, Int) -> (Color, Double)
    }

    static let (width, height) = (45, 27)
    static let allModes = ["multiply", "screen", "overlay", "soft-light", "hard-light", "color-dodge", "color-burn", "darken",
                           "lighten", "difference", "exclusion", "hue", "saturation", "color", "luminosity"]
    /// The modes that run per pixel against a colour (the others are fused colour transforms, `CatalogColorTests`).
    static let perPixelModes = ["color-dodge", "color-burn", "darken", "lighten", "difference", "hue", "saturation", "color"]
    /// Layer colours at the edges of the formulas: black and white (dodge's and burn's Cs = 0 and 1), gray
    /// (color's gray layer, saturation's Sat(Cs) = 0), the primaries and a secondary (Sat(Cs) = 1, ClipColor at both
    /// ends), and two ordinary colours.
    static let edgeColors = ["000000", "ffffff", "808080", "ff0000", "00ff00", "0000ff", "ffff00", "ff8800", "3366cc"]

    /// The layer image's straight RGBA bytes at frame size: a pattern in every channel, alpha from 0 to 255.
    static let imageBytes: [UInt8] = (0..<(width * height)).flatMap { i -> [UInt8] in
        let (x, y) = (i % width, i / width)
        return [UInt8((x * 37 + y * 11) & 255), UInt8((x * 5 + y * 53 + 90) & 255), UInt8((x * y * 7 + 30) & 255),
                UInt8([0, 255, 128, 40, 255, 200][(x + 2 * y) % 6])]
    }

    /// Writes `imageBytes` as a PNG with FFmpeg (rawvideo in, PNG out), in a folder removed by the caller.
    static func writeImage(in folder: URL) throws -> String {
        try writePNG(imageBytes, width: width, height: height, named: "layer", in: folder)
    }

    /// Straight RGBA bytes as a PNG written by FFmpeg (rawvideo in, PNG out), in a folder removed by the caller.
    static func writePNG(_ bytes: [UInt8], width: Int, height: Int, named name: String, in folder: URL) throws -> String {
        let raw = folder.appendingPathComponent("\(name).raw"), png = folder.appendingPathComponent("\(name).png")
        try Data(bytes).write(to: raw)
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt", "rgba", "-s",
                                                             "\(width)x\(height)", "-i", raw.path, "-frames:v", "1", "-y", png.path])
        guard result.status == 0 else { throw SpatialFixtures.Failure(description: "ffmpeg could not write the layer PNG") }
        return png.path
    }

    static func layers(imagePath: String) -> [Layer] {
        let orange = Color(1, Double(0x88) / 255, 0), top = Color(0x33, 0x66, 0xcc) / 255, bottom = Color(0xff, 0xcc, 0x00) / 255
        return [
            Layer(name: "color", parameters: "color=#ff8800") { _, _ in (orange, 1) },
            Layer(name: "gradient", parameters: "layer=gradient:color=#3366cc:color2=#ffcc00:opacity=0.8") { _, y in
                (top + (bottom - top) * ((Double(y) + 0.5) / Double(height)), 0.8)
            },
            Layer(name: "image", parameters: "layer=image:image=\(imagePath):opacity=0.7") { x, y in
                let i = (y * width + x) * 4
                let color = Color(Double(imageBytes[i]), Double(imageBytes[i + 1]), Double(imageBytes[i + 2])) / 255
                return (color, Double(imageBytes[i + 3]) / 255 * 0.7)
            },
        ]
    }

    /// The definition on one backdrop colour.
    static func blended(_ mode: String, _ backdrop: Color, _ layer: (Color, Double)) -> Color {
        backdrop + (FormulaTests.clamp(CatalogColorTests.blend(mode, backdrop, layer.0)) - backdrop) * layer.1
    }

    /// Each mode and layer (the per-pixel modes against a colour, every mode against a gradient and an image) on
    /// RGBA (random colours and the cube's corners) and BGRA (the astronaut) frames.
    func testPackedFramesMatchTheDefinition() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-blend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (w, h) = (Self.width, Self.height)
        let random = Array(FormulaTests.pixels().prefix(w * h * 4))
        let astronaut = try SpatialFixtures.decode("astronaut.png", pixelFormat: "bgra", size: (w, h))
        let inputs: [(PixelFormat, [UInt8])] = [(.rgba, random), (.bgra, astronaut)]
        for layer in Self.layers(imagePath: try Self.writeImage(in: folder)) {
            for mode in layer.name == "color" ? Self.perPixelModes : Self.allModes {
                let chain = "\(mode)-blend:\(layer.parameters)"
                for (format, bytes) in inputs {
                    let output = RawFrames.bytes(try SpatialFixtures.apply(chain, to: RawFrames.frame(bytes, format: format, width: w, height: h)))
                    let (red, blue) = format == .rgba ? (0, 2) : (2, 0)
                    var worst = 0
                    for i in 0..<(w * h) {
                        let p = 4 * i
                        let backdrop = Color(Double(bytes[p + red]), Double(bytes[p + 1]), Double(bytes[p + blue])) / 255
                        let want = Self.blended(mode, backdrop, layer.source(i % w, i / w)) * 255
                        for (offset, value) in [(red, want.x), (1, want.y), (blue, want.z)] {
                            worst = max(worst, abs(Int(output[p + offset]) - Int(value.rounded())))
                        }
                        XCTAssertEqual(output[p + 3], bytes[p + 3], "\(chain) keeps alpha")
                    }
                    XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(format)")
                }
            }
        }
    }

    /// Pixels where the definition jumps and Float rounding decides the side: saturation's backdrops within 10⁻³ of gray
    /// (not gray: their hue is Float's), dodge's and burn's with a channel within 10⁻⁵ of 0 or 1 before clamping but
    /// not exactly there (black and white themselves, which the kernels must get right, stay in).
    static func nearStep(_ mode: String, clamped: Color, unclamped: Color) -> Bool {
        switch mode {
        case "saturation": return clamped.max() - clamped.min() < 1e-3 && clamped.max() > clamped.min()
        case "color-dodge", "color-burn":
            return (0..<3).contains { abs(unclamped[$0]) < 1e-5 && unclamped[$0] != 0 || abs(unclamped[$0] - 1) < 1e-5 && unclamped[$0] != 1 }
        default: return false
        }
    }

    /// `chain` (mode `mode`, layer colour and weight `source` at each pixel) on an I420 or NV12 frame against the
    /// definition in Double: the worst difference in codes over luma and chroma, and the pixels left out (`nearStep`).
    static func yuvError(_ frame: VideoFrame, chain: String, mode: String, source: (Int, Int) -> (Color, Double)) throws
        -> (worst: Int, skipped: Int) {
        let (w, h) = (frame.width, frame.height), nv12 = frame.format == .nv12
        let coding = YUVCoding(frame.color)
        let (kr, kb) = (Double(coding.weights.red), Double(coding.weights.blue)), kg = 1 - kr - kb
        let (scale, offset, chromaScale) = (Double(coding.lumaScale), Double(coding.lumaOffset), Double(coding.chromaScale))
        let (redFromPr, blueFromPb) = (2 * (1 - kr), 2 * (1 - kb))
        let luma = SpatialFixtures.rows(frame, 0)
        let chroma = (1..<frame.planeCount).map { SpatialFixtures.rows(frame, $0) }
        func chromaCodes(_ rows: [[[UInt8]]], _ cx: Int, _ cy: Int) -> (Int, Int) {
            nv12 ? (Int(rows[0][cy][2 * cx]), Int(rows[0][cy][2 * cx + 1])) : (Int(rows[0][cy][cx]), Int(rows[1][cy][cx]))
        }
        // Each pixel's R'G'B' from its luma and its block's chroma, in Double, before and after clamping.
        let unclamped: [[Color]] = (0..<h).map { y in
            (0..<w).map { x in
                let (cb, cr) = chromaCodes(chroma, x / 2, y / 2)
                let yp = (Double(luma[y][x]) - offset) / scale
                let (pb, pr) = ((Double(cb) - 128) / chromaScale, (Double(cr) - 128) / chromaScale)
                let (r, b) = (yp + redFromPr * pr, yp + blueFromPb * pb)
                return Color(r, (yp - kr * r - kb * b) / kg, b)
            }
        }
        let backdrop = unclamped.map { $0.map(FormulaTests.clamp) }
        let output = try SpatialFixtures.apply(chain, to: frame)
        let result = (0..<h).map { y in (0..<w).map { x in blended(mode, backdrop[y][x], source(x, y)) } }
        let skip = { (y: Int, x: Int) in nearStep(mode, clamped: backdrop[y][x], unclamped: unclamped[y][x]) }
        var skipped = 0
        var worst = 0
        for (y, row) in SpatialFixtures.rows(output, 0).enumerated() {
            for x in 0..<w {
                if skip(y, x) { skipped += 1; continue }
                let rgb = result[y][x]
                worst = max(worst, abs(Int(row[x]) - Int((offset + scale * (kr * rgb.x + kg * rgb.y + kb * rgb.z)).rounded())))
            }
        }
        let outputChroma = (1..<output.planeCount).map { SpatialFixtures.rows(output, $0) }
        for cy in 0..<((h + 1) / 2) {
            for cx in 0..<((w + 1) / 2) {
                let positions = [(2 * cy, 2 * cx), (2 * cy, 2 * cx + 1), (2 * cy + 1, 2 * cx), (2 * cy + 1, 2 * cx + 1)]
                    .filter { $0.0 < h && $0.1 < w }
                if positions.contains(where: { skip($0.0, $0.1) }) { continue }
                let block = positions.map { result[$0.0][$0.1] }
                let mean = block.reduce(Color(), +) / Double(block.count)
                let y = kr * mean.x + kg * mean.y + kb * mean.z
                let (cb, cr) = chromaCodes(outputChroma, cx, cy)
                worst = max(worst, abs(cb - Int((128 + chromaScale * (mean.z - y) / blueFromPb).rounded())),
                            abs(cr - Int((128 + chromaScale * (mean.x - y) / redFromPr).rounded())))
            }
        }
        return (worst, skipped)
    }

    /// The same on I420 and NV12 frames (the astronaut, 45×27), through `BlendYUVKernel`.
    func testYUVFramesMatchTheDefinition() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-blend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (w, h) = (Self.width, Self.height)
        for (format, name) in [(PixelFormat.i420, "yuv420p"), (.nv12, "nv12")] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (w, h)), format: format, width: w, height: h)
            for layer in Self.layers(imagePath: try Self.writeImage(in: folder)) {
                for mode in layer.name == "color" ? Self.perPixelModes : Self.allModes {
                    let chain = "\(mode)-blend:\(layer.parameters)"
                    let (worst, skipped) = try Self.yuvError(frame, chain: chain, mode: mode, source: layer.source)
                    XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(format)")
                    XCTAssertLessThanOrEqual(skipped, w * h / 50, "\(chain) on \(format): pixels near a step left out")
                }
            }
        }
    }

    /// Every per-pixel mode against the edge colours (`edgeColors`), opaque and at opacity 0.6: on RGBA (random
    /// colours and the cube's corners, so channels of 0 and 255 and gray pixels) and on I420 and NV12 frames of random
    /// codes with luma and chroma at 0, 16, 128, 235 and 255 (backdrops clamped at both ends, grays, saturated
    /// colours; black and white with neutral chroma in the first blocks), 45×27. Tolerance 1 code, as above.
    func testEdgeColorsMatchTheDefinition() throws {
        let (w, h) = (Self.width, Self.height), (cw, ch) = ((Self.width + 1) / 2, (Self.height + 1) / 2)
        let rgba = Array(FormulaTests.pixels().prefix(w * h * 4))
        var generator = SystemRandomNumberGenerator.Seeded(state: 0xb1e9d)
        let extremes: [UInt8] = [0, 16, 128, 235, 255]
        // Luma: random codes, every fifth an extreme; chroma: random, every third pair extreme (gray where both are 128).
        var lumaCodes = (0..<(w * h)).map { $0 % 5 == 0 ? extremes[($0 / 5) % 5] : generator.byte() }
        var chromaPairs = (0..<(cw * ch)).map { i -> (UInt8, UInt8) in
            i % 3 == 0 ? (extremes[(i / 3) % 5], extremes[(i / 15) % 5]) : (generator.byte(), generator.byte())
        }
        // The first two blocks neutral, with black and white (16, 235), and codes beyond them (0, 255).
        (chromaPairs[0], chromaPairs[1]) = ((128, 128), (128, 128))
        for (index, code) in [(0, 235), (1, 16), (w, 255), (w + 1, 0), (2, 235), (3, 235), (w + 2, 16), (w + 3, 16)] { lumaCodes[index] = UInt8(code) }
        let i420 = RawFrames.frame(lumaCodes + chromaPairs.map(\.0) + chromaPairs.map(\.1), format: .i420, width: w, height: h)
        let nv12 = RawFrames.frame(lumaCodes + chromaPairs.flatMap { [$0.0, $0.1] }, format: .nv12, width: w, height: h)
        for mode in Self.perPixelModes {
            for hex in Self.edgeColors {
                let color = Self.color(hex: hex)
                for opacity in [1.0, 0.6] {
                    let chain = "\(mode)-blend:color=#\(hex):opacity=\(opacity)"
                    let worst = try Self.rgbaError(rgba, width: w, height: h, chain: chain, mode: mode, layer: (color, opacity))
                    XCTAssertLessThanOrEqual(worst, 1, "\(chain) on RGBA")
                    for frame in [i420, nv12] {
                        let (worst, skipped) = try Self.yuvError(frame, chain: chain, mode: mode) { _, _ in (color, opacity) }
                        XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(frame.format)")
                        XCTAssertLessThanOrEqual(skipped, w * h / 50, "\(chain) on \(frame.format): pixels near a step left out")
                    }
                }
            }
        }
    }

    /// The largest difference in codes between `chain` on the RGBA pixels `rgba` and `mode`'s definition in Double
    /// against `layer` (colour and opacity), over the three colour channels of every pixel.
    static func rgbaError(_ rgba: [UInt8], width: Int, height: Int, chain: String, mode: String, layer: (Color, Double)) throws -> Int {
        let output = RawFrames.bytes(try SpatialFixtures.apply(chain, to: RawFrames.frame(rgba, format: .rgba, width: width, height: height)))
        var worst = 0
        for p in stride(from: 0, to: rgba.count, by: 4) {
            let backdrop = Color(Double(rgba[p]), Double(rgba[p + 1]), Double(rgba[p + 2])) / 255
            let want = blended(mode, backdrop, layer) * 255
            for c in 0..<3 { worst = max(worst, abs(Int(output[p + c]) - Int(want[c].rounded()))) }
        }
        return worst
    }

    /// `rrggbb` as a colour in 0…1.
    static func color(hex: String) -> Color {
        Color(Double(Int(hex.prefix(2), radix: 16)!), Double(Int(hex.dropFirst(2).prefix(2), radix: 16)!),
              Double(Int(hex.suffix(2), radix: 16)!)) / 255
    }

    /// Soft light against a gradient and an image layer at the edges of its definition: backdrop channels of every
    /// byte (0, 63 and 64 around B = 0.25 where D(B) turns from the cubic to √B, 255) and layer channels of 0, 1 and
    /// around 0.5 (where the formula turns from darkening to lightening). The gradient runs from #00ff00 to #00ffff
    /// over 9 rows: red Cs = 0 and green Cs = 1 everywhere, blue (y + 0.5) / 9, 0.5 exactly in the middle row. The
    /// image's channels cycle through 0, 127, 128 and 255 (alpha 255, 128 and 0). On RGBA (every byte in red, green and
    /// blue, 259 columns, so that a last partial step runs too), opaque and at opacity 0.6, and on I420 and NV12 (every
    /// luma code, neutral chroma in every other block: grays from 0 to 1, codes 70 and 71 around 0.25; random chroma in
    /// the others). Tolerance 1 code, as above: the kernel computes in Float (√B to 5·10⁻⁶) and rounds once; D is
    /// continuous at 0.25 and the formula at Cs = 0.5, so no pixel sits at a step.
    func testSoftLightEdgesMatchTheDefinition() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-softlight-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (w, h) = (259, 9)
        let edges: [UInt8] = [0, 127, 128, 255], alphas: [UInt8] = [255, 255, 128, 0]
        let image = (0..<(w * h)).flatMap { i -> [UInt8] in
            let (x, y) = (i % w, i / w)
            return [edges[x % 4], edges[(x / 4 + y) % 4], edges[(x / 16 + 2 * y) % 4], alphas[(x + y) % 4]]
        }
        let imagePath = try Self.writePNG(image, width: w, height: h, named: "edges", in: folder)
        let rgba = (0..<(w * h)).flatMap { i -> [UInt8] in
            let (x, y) = (i % w, i / w)
            return [UInt8(x % 256), UInt8(255 - (x + 3 * y) % 256), UInt8((x * 7 + 64 * y) % 256), 255]
        }
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x50f7)
        let (cw, ch) = ((w + 1) / 2, (h + 1) / 2)
        let lumaCodes = (0..<(w * h)).map { UInt8(($0 % w + 29 * ($0 / w)) % 256) }
        let chromaPairs = (0..<(cw * ch)).map { i -> (UInt8, UInt8) in i % 2 == 0 ? (128, 128) : (generator.byte(), generator.byte()) }
        let i420 = RawFrames.frame(lumaCodes + chromaPairs.map(\.0) + chromaPairs.map(\.1), format: .i420, width: w, height: h)
        let nv12 = RawFrames.frame(lumaCodes + chromaPairs.flatMap { [$0.0, $0.1] }, format: .nv12, width: w, height: h)
        for opacity in [1.0, 0.6] {
            let layers: [(String, (Int, Int) -> (Color, Double))] = [
                ("layer=gradient:color=#00ff00:color2=#00ffff", { _, y in (Color(0, 1, (Double(y) + 0.5) / Double(h)), opacity) }),
                ("layer=image:image=\(imagePath)", { x, y in
                    let p = 4 * (y * w + x)
                    return (Color(Double(image[p]), Double(image[p + 1]), Double(image[p + 2])) / 255, Double(image[p + 3]) / 255 * opacity)
                }),
            ]
            for (parameters, source) in layers {
                let chain = "soft-light-blend:\(parameters):opacity=\(opacity)"
                let output = RawFrames.bytes(try SpatialFixtures.apply(chain, to: RawFrames.frame(rgba, format: .rgba, width: w, height: h)))
                var worst = 0
                for i in 0..<(w * h) {
                    let p = 4 * i
                    let backdrop = Color(Double(rgba[p]), Double(rgba[p + 1]), Double(rgba[p + 2])) / 255
                    let want = Self.blended("soft-light", backdrop, source(i % w, i / w)) * 255
                    for c in 0..<3 { worst = max(worst, abs(Int(output[p + c]) - Int(want[c].rounded()))) }
                }
                XCTAssertLessThanOrEqual(worst, 1, "\(chain) on RGBA")
                for frame in [i420, nv12] {
                    let (worst, skipped) = try Self.yuvError(frame, chain: chain, mode: "soft-light", source: source)
                    XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(frame.format)")
                    XCTAssertEqual(skipped, 0, "\(chain) on \(frame.format): soft light has no step to leave out")
                }
            }
        }
    }

    /// Saturation on gray backdrops: the definition leaves a gray as it is (SetSat of a gray is 0, whatever Sat(Cs)), and
    /// the kernels must too, though Lum of a gray, rounded in Float, misses its channels by an ulp for 65 of the 256 byte
    /// grays (a quotient of those ulps taken for the factor would turn the gray black or white). Every byte gray on RGBA
    /// (against the definition in Double), and every luma code with neutral chroma on I420 and NV12 (limited range: the
    /// codes below 16 and above 235 clamp to black and white), against saturated, half-saturated and gray layers, opaque
    /// and at opacity 0.6. Tolerance 0: the exact results are codes themselves, half a code away from any rounding edge.
    func testSaturationKeepsGrayBackdrops() throws {
        let (w, h) = (64, 4)
        let grays = (0..<(w * h)).map { UInt8($0) }
        let rgba = grays.flatMap { gray -> [UInt8] in [gray, gray, gray, 255] }
        let neutral = [UInt8](repeating: 128, count: w * h / 2)
        let i420 = RawFrames.frame(grays + neutral, format: .i420, width: w, height: h)
        let nv12 = RawFrames.frame(grays + neutral, format: .nv12, width: w, height: h)
        let clampedGrays = grays.map { min(max($0, 16), 235) }
        for hex in ["ff8000", "ff0000", "3366cc", "808080"] {
            let color = Self.color(hex: hex)
            for opacity in [1.0, 0.6] {
                let chain = "saturation-blend:color=#\(hex):opacity=\(opacity)"
                let worst = try Self.rgbaError(rgba, width: w, height: h, chain: chain, mode: "saturation", layer: (color, opacity))
                XCTAssertEqual(worst, 0, "\(chain) on RGBA grays")
                // With neutral chroma R' = G' = B' = Y' exactly (the Double conversion of `yuvError` leaves ulps between
                // them, which the definition's jump at gray would magnify): the result is Y' clamped, chroma 128.
                for frame in [i420, nv12] {
                    XCTAssertEqual(RawFrames.bytes(try SpatialFixtures.apply(chain, to: frame)), clampedGrays + neutral, "\(chain) on \(frame.format) grays")
                }
            }
        }
    }
}
