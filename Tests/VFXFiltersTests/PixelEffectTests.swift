import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// Filters that depend on the pixel's position or neighbours (halftone screens, dither, ink effects, generators,
/// blend layers, colour maps, mask to alpha) on a 96×64 RGBA photo, each against its formula written again here in
/// Double. The stage computes in Float and stores rounded bytes: ≤ 1 code, except where a formula has a step (dither,
/// hard edges, checkerboard borders) and a value sits on it: those pixels are counted and held to a small share.
final class PixelEffectTests: XCTestCase {
    typealias Color = SIMD3<Double>
    let width = 96, height = 64

    func photo() throws -> [UInt8] { try SpatialFixtures.decode("astronaut.png", pixelFormat: "rgba", size: (width, height)) }

    func pixel(_ image: [UInt8], _ x: Int, _ y: Int) -> Color {
        let i = (min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)) * 4
        return Color(Double(image[i]), Double(image[i + 1]), Double(image[i + 2])) / 255
    }

    func luma(_ c: Color) -> Double { 0.299 * c.x + 0.587 * c.y + 0.114 * c.z }

    /// Runs `chain` on the photo and compares R, G, B (and alpha when `alpha` gives it) with the formula.
    func check(_ chain: String, maxError: Int = 1, allowedOff: Double = 0, file: StaticString = #filePath, line: UInt = #line,
               alpha: ((Int, Int) -> Double)? = nil, _ formula: (Int, Int, [UInt8]) -> Color) throws {
        let image = try photo()
        let output = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(image, format: .rgba, width: width, height: height)))
        var worst = 0, off = 0
        for y in 0..<height {
            for x in 0..<width {
                let want = FormulaTests.clamp(formula(x, y, image)) * 255
                let i = (y * width + x) * 4
                var error = (0..<3).map { abs(Int(output[i + $0]) - Int(want[$0].rounded())) }.max() ?? 0
                if let alpha { error = max(error, abs(Int(output[i + 3]) - Int((alpha(x, y) * 255).rounded()))) }
                if error > maxError { off += 1 } else { worst = max(worst, error) }
            }
        }
        XCTAssertLessThanOrEqual(worst, maxError, chain, file: file, line: line)
        XCTAssertLessThanOrEqual(Double(off) / Double(width * height), allowedOff, "\(chain): \(off) pixels off", file: file, line: line)
    }

    func testHalftoneScreens() throws {
        func screen(_ chain: String, _ pattern: @escaping (Double, Double) -> Double) throws {
            // center 0.5x0.5, angle 30° (circular-screen takes none: its rings are the same turned), width 7, sharpness 0.6.
            try check("\(chain)\(chain == "circular-screen" ? "" : ":angle=30"):width=7:sharpness=0.6") { x, y, image in
                let d = SIMD2(Double(x) + 0.5 - 48, Double(y) + 0.5 - 32), a = Double.pi / 6
                let u = d.x * cos(a) + d.y * sin(a), v = -d.x * sin(a) + d.y * cos(a)
                return Color(repeating: 0.5 + (luma(pixel(image, x, y)) - pattern(u, v)) / 0.4)
            }
        }
        let k = 2 * Double.pi / 7
        try screen("dot-screen") { u, v in 0.5 + 0.25 * (cos(k * u) + cos(k * v)) }
        try screen("line-screen") { _, v in 0.5 + 0.5 * cos(k * v) }
        try screen("circular-screen") { u, v in 0.5 + 0.5 * cos(k * (u * u + v * v).squareRoot()) }
        try screen("hatched-screen") { u, v in min(0.5 + 0.5 * cos(k * u), 0.5 + 0.5 * cos(k * v)) }
    }

    func testDither() throws {
        // Bayer index from the bits of x ⊕ y and y, lowest bits most significant.
        func bayer(_ x: Int, _ y: Int) -> Int {
            var value = 0
            for bit in 0..<3 { value |= (((x ^ y) >> bit) & 1) << (2 * (2 - bit) + 1) | ((y >> bit) & 1) << (2 * (2 - bit)) }
            return value
        }
        try check("dither:levels=3", maxError: 0, allowedOff: 0.002) { x, y, image in
            let t = (Double(bayer(x & 7, y & 7)) + 0.5) / 64
            let c = pixel(image, x, y)
            return Color(floor(c.x * 2 + t), floor(c.y * 2 + t), floor(c.z * 2 + t)) / 2
        }
    }

    /// Sobel on luma (edges repeated), e = |∇| / 4.
    func edge(_ image: [UInt8], _ x: Int, _ y: Int) -> Double {
        func l(_ dx: Int, _ dy: Int) -> Double { luma(pixel(image, x + dx, y + dy)) }
        let gx = l(1, -1) + 2 * l(1, 0) + l(1, 1) - l(-1, -1) - 2 * l(-1, 0) - l(-1, 1)
        let gy = l(-1, 1) + 2 * l(0, 1) + l(1, 1) - l(-1, -1) - 2 * l(0, -1) - l(1, -1)
        return (gx * gx + gy * gy).squareRoot() / 4
    }

    func testInkEffects() throws {
        try check("edge-work:threshold=0.06", maxError: 0, allowedOff: 0.003) { x, y, image in Color(repeating: edge(image, x, y) >= 0.06 ? 0 : 1) }
        try check("line-overlay:threshold=0.04:contrast=25") { x, y, image in
            pixel(image, x, y) * (1 - min(max((edge(image, x, y) - 0.04) * 25, 0), 1))
        }
        try check("comic-effect:threshold=0.1", allowedOff: 0.003) { x, y, image in
            edge(image, x, y) >= 0.1 ? Color(0, 0, 0) : (pixel(image, x, y) * 4).rounded(.toNearestOrAwayFromZero) / 4
        }
        try check("cartoon:levels=4:threshold=0.05:contrast=12", allowedOff: 0.003) { x, y, image in
            (pixel(image, x, y) * 3).rounded(.toNearestOrAwayFromZero) / 3 * (1 - min(max((edge(image, x, y) - 0.05) * 12, 0), 1))
        }
    }

    func testGenerators() throws {
        try check("checkerboard:size=10:first=#ff0000:second=#0000ff:origin=0.1x0.25", maxError: 0) { x, y, _ in
            let i = Int(floor((Double(x) + 0.5 - 9.6) / 10)), j = Int(floor((Double(y) + 0.5 - 16) / 10))
            return (i + j) % 2 == 0 ? Color(1, 0, 0) : Color(0, 0, 1)
        }
        try check("linear-gradient:start=0.2x0.1:end=0.7x0.9:first=#204060:second=#e0c0a0") { x, y, _ in
            let a = SIMD2(19.2, 6.4), b = SIMD2(67.2, 57.6), p = SIMD2(Double(x) + 0.5, Double(y) + 0.5)
            let t = min(max(((p - a) * (b - a)).sum() / ((b - a) * (b - a)).sum(), 0), 1)
            return Color(0x20, 0x40, 0x60) / 255 + (Color(0xe0, 0xc0, 0xa0) - Color(0x20, 0x40, 0x60)) / 255 * t
        }
        try check("radial-gradient:center=0.4x0.5:inner=0.1:outer=0.6:first=white:second=#102030") { x, y, _ in
            let d = SIMD2(Double(x) + 0.5 - 38.4, Double(y) + 0.5 - 32)
            let t = min(max(((d * d).sum().squareRoot() - 6.4) / (38.4 - 6.4), 0), 1)
            return Color(1, 1, 1) + (Color(0x10, 0x20, 0x30) / 255 - Color(1, 1, 1)) * t
        }
    }

    func testMaskToAlpha() throws {
        let image = try photo()
        try check("mask-to-alpha", alpha: { x, y in self.luma(self.pixel(image, x, y)) }) { _, _, _ in Color(1, 1, 1) }
    }

    /// Writes `pixels` (RGBA) as a PNG with FFmpeg.
    func png(_ pixels: [UInt8], width: Int, height: Int, in folder: String, name: String) throws -> String {
        let raw = folder + "/\(name).rgba", path = folder + "/\(name).png"
        try Data(pixels).write(to: URL(fileURLWithPath: raw))
        try TestSupport.ffmpeg(["-f", "rawvideo", "-pix_fmt", "rgba", "-s", "\(width)x\(height)", "-i", raw, "-frames:v", "1", path])
        return path
    }

    func testLayersAndColorMap() throws {
        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A gradient layer: top #204080 to bottom #f0e0a0, multiply.
        let top = Color(0x20, 0x40, 0x80) / 255, bottom = Color(0xf0, 0xe0, 0xa0) / 255
        try check("multiply-blend:layer=gradient:color=#204080:color2=#f0e0a0") { x, y, image in
            pixel(image, x, y) * (top + (bottom - top) * ((Double(y) + 0.5) / Double(height)))
        }
        // An image layer at the frame's size with alpha: screen, weighted by the layer's alpha.
        var layer = [UInt8]()
        for y in 0..<height {
            for x in 0..<width { layer += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), 128, UInt8((x + y) * 255 / (width + height - 2))] }
        }
        let path = try png(layer, width: width, height: height, in: folder, name: "layer")
        try check("screen-blend:layer=image:image=\(path)") { x, y, image in
            let i = (y * width + x) * 4
            let s = Color(Double(layer[i]), Double(layer[i + 1]), Double(layer[i + 2])) / 255, a = Double(layer[i + 3]) / 255
            let b = pixel(image, x, y)
            return b + (1 - (1 - b) * (1 - s) - b) * a
        }
        // A colour map from a 5-pixel ramp (2 rows; the middle row, row 1, is used). The map is fused into a 33-node
        // 3D table: exact at nodes, ≤ 6 codes where luma is smooth, more across the ramp's four kinks (≤ 1 % of pixels).
        let ramp: [UInt8] = [0, 0, 0, 255, 0, 0, 255, 255, 255, 0, 0, 255, 255, 255, 0, 255, 255, 255, 255, 255]
        let mapPath = try png(Array(repeating: 9, count: 20) + ramp, width: 5, height: 2, in: folder, name: "ramp")
        try check("color-map:file=\(mapPath)", maxError: 6, allowedOff: 0.01) { x, y, image in
            let position = luma(pixel(image, x, y)) * 4
            let i = min(Int(position), 3), t = position - Double(i)
            func stop(_ k: Int) -> Color { Color(Double(ramp[4 * k]), Double(ramp[4 * k + 1]), Double(ramp[4 * k + 2])) / 255 }
            return stop(i) + (stop(i + 1) - stop(i)) * t
        }
    }

    /// A missing or unreadable image is a one-line error naming the filter and the file.
    func testBadImageFile() throws {
        XCTAssertThrowsError(try TestSupport.apply("color-map:file=/nonexistent/ramp.png",
                                                   to: RawFrames.frame([UInt8](repeating: 0, count: 64), format: .rgba, width: 4, height: 4))) { error in
            let text = "\(error)"
            XCTAssertEqual(text, "color-map: /nonexistent/ramp.png: no such file")
        }
    }

    /// A blend given an image but left on the default colour layer is refused, not blended with the colour.
    func testBlendImageWithoutImageLayerIsRefused() throws {
        let frame = RawFrames.frame([UInt8](repeating: 0, count: 64), format: .rgba, width: 4, height: 4)
        XCTAssertThrowsError(try TestSupport.apply("hue-blend:image=/tmp/logo.png", to: frame)) { error in
            XCTAssertEqual("\(error)", "hue-blend: layer must be image when an image is given, got 'color'")
        }
        XCTAssertThrowsError(try TestSupport.apply("multiply-blend:layer=gradient:image=/tmp/logo.png", to: frame)) { error in
            XCTAssertEqual("\(error)", "multiply-blend: layer must be image when an image is given, got 'gradient'")
        }
    }
}
