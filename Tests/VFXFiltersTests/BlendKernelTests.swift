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
/// Float's error of a half code may round the other way (the Double value is never more than 1 code away). Saturation
/// on YUV frames leaves out the few pixels within 10⁻³ of gray, whose hue Float rounding decides (see below).
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
    static let perPixelModes = ["color-dodge", "color-burn", "saturation", "color"]

    /// The layer image's straight RGBA bytes at frame size: a pattern in every channel, alpha from 0 to 255.
    static let imageBytes: [UInt8] = (0..<(width * height)).flatMap { i -> [UInt8] in
        let (x, y) = (i % width, i / width)
        return [UInt8((x * 37 + y * 11) & 255), UInt8((x * 5 + y * 53 + 90) & 255), UInt8((x * y * 7 + 30) & 255),
                UInt8([0, 255, 128, 40, 255, 200][(x + 2 * y) % 6])]
    }

    /// Writes `imageBytes` as a PNG with FFmpeg (rawvideo in, PNG out), in a folder removed by the caller.
    static func writeImage(in folder: URL) throws -> String {
        let raw = folder.appendingPathComponent("layer.raw"), png = folder.appendingPathComponent("layer.png")
        try Data(imageBytes).write(to: raw)
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

    /// The same on I420 and NV12 frames (the astronaut, 45×27), through `BlendYUVKernel`.
    func testYUVFramesMatchTheDefinition() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-blend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (w, h) = (Self.width, Self.height)
        for (format, name) in [(PixelFormat.i420, "yuv420p"), (.nv12, "nv12")] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (w, h)), format: format, width: w, height: h)
            let coding = YUVCoding(frame.color)
            let (kr, kb) = (Double(coding.weights.red), Double(coding.weights.blue)), kg = 1 - kr - kb
            let (scale, offset, chromaScale) = (Double(coding.lumaScale), Double(coding.lumaOffset), Double(coding.chromaScale))
            let (redFromPr, blueFromPb) = (2 * (1 - kr), 2 * (1 - kb))
            let luma = SpatialFixtures.rows(frame, 0)
            let chroma = (1..<frame.planeCount).map { SpatialFixtures.rows(frame, $0) }
            func chromaCodes(_ rows: [[[UInt8]]], _ cx: Int, _ cy: Int) -> (Int, Int) {
                format == .nv12 ? (Int(rows[0][cy][2 * cx]), Int(rows[0][cy][2 * cx + 1])) : (Int(rows[0][cy][cx]), Int(rows[1][cy][cx]))
            }
            // Each pixel's R'G'B' from its luma and its block's chroma, clamped, in Double.
            let backdrop: [[Color]] = (0..<h).map { y in
                (0..<w).map { x in
                    let (cb, cr) = chromaCodes(chroma, x / 2, y / 2)
                    let yp = (Double(luma[y][x]) - offset) / scale
                    let (pb, pr) = ((Double(cb) - 128) / chromaScale, (Double(cr) - 128) / chromaScale)
                    let (r, b) = (yp + redFromPr * pr, yp + blueFromPb * pb)
                    return FormulaTests.clamp(Color(r, (yp - kr * r - kb * b) / kg, b))
                }
            }
            for layer in Self.layers(imagePath: try Self.writeImage(in: folder)) {
                for mode in layer.name == "color" ? Self.perPixelModes : Self.allModes {
                    let chain = "\(mode)-blend:\(layer.parameters)"
                    let output = try SpatialFixtures.apply(chain, to: frame)
                    let result = (0..<h).map { y in (0..<w).map { x in Self.blended(mode, backdrop[y][x], layer.source(x, y)) } }
                    // Saturation rescales any colour that is not gray to the layer's saturation: for a colour within
                    // 10⁻³ of gray (here: highlights with two channels clipped to 1 and the third just below) its
                    // hue is set by Float rounding, so those pixels (and their blocks' chroma) are left out, and counted.
                    let nearGray = { (y: Int, x: Int) in mode == "saturation" && backdrop[y][x].max() - backdrop[y][x].min() < 1e-3
                        && backdrop[y][x].max() > backdrop[y][x].min() }
                    var skipped = 0
                    var worst = 0
                    for (y, row) in SpatialFixtures.rows(output, 0).enumerated() {
                        for x in 0..<w {
                            if nearGray(y, x) { skipped += 1; continue }
                            let rgb = result[y][x]
                            worst = max(worst, abs(Int(row[x]) - Int((offset + scale * (kr * rgb.x + kg * rgb.y + kb * rgb.z)).rounded())))
                        }
                    }
                    let outputChroma = (1..<output.planeCount).map { SpatialFixtures.rows(output, $0) }
                    for cy in 0..<((h + 1) / 2) {
                        for cx in 0..<((w + 1) / 2) {
                            let positions = [(2 * cy, 2 * cx), (2 * cy, 2 * cx + 1), (2 * cy + 1, 2 * cx), (2 * cy + 1, 2 * cx + 1)]
                                .filter { $0.0 < h && $0.1 < w }
                            if positions.contains(where: { nearGray($0.0, $0.1) }) { continue }
                            let block = positions.map { result[$0.0][$0.1] }
                            let mean = block.reduce(Color(), +) / Double(block.count)
                            let y = kr * mean.x + kg * mean.y + kb * mean.z
                            let (cb, cr) = chromaCodes(outputChroma, cx, cy)
                            worst = max(worst, abs(cb - Int((128 + chromaScale * (mean.z - y) / blueFromPb).rounded())),
                                        abs(cr - Int((128 + chromaScale * (mean.x - y) / redFromPr).rounded())))
                        }
                    }
                    XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(format)")
                    XCTAssertLessThanOrEqual(skipped, w * h / 50, "\(chain) on \(format): near-gray pixels left out")
                }
            }
        }
    }
}
