import Foundation
import VFXCore
import VFXTestSupport
import VFXFilters
import XCTest

/// `sepia` and `lut` against FFmpeg's own filters on a real photo (media/astronaut.png, 512×512).
final class FFmpegReferenceTests: XCTestCase {
    static let sepiaMixer = "colorchannelmixer=.393:.769:.189:0:.349:.686:.168:0:.272:.534:.131"
    let size = 512

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: TestSupport.astronaut), "media/astronaut.png is missing")
    }

    /// On RGBA: the fused table reproduces the matrix exactly except next to the clip at 1, where tetrahedral
    /// interpolation across the kink of a 33-node grid is off by up to a few codes: hence 40 dB, not exactness.
    func testSepiaOnRGBMatchesColorChannelMixer() throws {
        let input = try TestSupport.raw(TestSupport.astronaut, pixelFormat: "rgba")
        let expected = try TestSupport.raw(TestSupport.astronaut, pixelFormat: "rgba", filter: Self.sepiaMixer)
        let output = try TestSupport.apply("sepia", to: RawFrames.frame(input, format: .rgba, width: size, height: size))
        let psnr = Quality.psnr(RawFrames.bytes(output), expected, skipEvery: 4)
        XCTAssertGreaterThanOrEqual(psnr, 40, "sepia vs colorchannelmixer on RGB: \(psnr) dB")
        print("sepia vs colorchannelmixer, RGBA: \(psnr) dB")
    }

    /// On I420: our kernel converts each pixel to RGB with its block's chroma, applies the matrix and averages the
    /// block's output chroma; FFmpeg's path (swscale to planar RGB with interpolated chroma, mixer, back to 4:2:0)
    /// filters chroma differently, so luma and chroma are each held to 40 dB rather than to rounding.
    func testSepiaOnI420MatchesColorChannelMixer() throws {
        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let yuv = folder + "/in.yuv"
        try TestSupport.ffmpeg(["-i", TestSupport.astronaut, "-f", "rawvideo", "-pix_fmt", "yuv420p", yuv])
        let input = Array(try Data(contentsOf: URL(fileURLWithPath: yuv)))
        let reference = folder + "/ref.yuv"
        try TestSupport.ffmpeg(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(size)x\(size)", "-i", yuv,
                                "-vf", Self.sepiaMixer + ",format=yuv420p", "-f", "rawvideo", reference])
        let expected = Array(try Data(contentsOf: URL(fileURLWithPath: reference)))
        for format in [PixelFormat.i420, .nv12] {
            let frame = RawFrames.frame(format == .i420 ? input : Self.nv12(fromI420: input, size: size),
                                          format: format, width: size, height: size)
            var output = RawFrames.bytes(try TestSupport.apply("sepia", to: frame))
            if format == .nv12 { output = Self.i420(fromNV12: output, size: size) }
            let lumaCount = size * size
            let luma = Quality.psnr(Array(output[..<lumaCount]), Array(expected[..<lumaCount]))
            let chroma = Quality.psnr(Array(output[lumaCount...]), Array(expected[lumaCount...]))
            XCTAssertGreaterThanOrEqual(luma, 40, "\(format) luma: \(luma) dB")
            XCTAssertGreaterThanOrEqual(chroma, 40, "\(format) chroma: \(chroma) dB")
            print("sepia vs colorchannelmixer, \(format): luma \(luma) dB, chroma \(chroma) dB")
        }
    }

    /// `.cube` files written here (a smooth non-linear grade), 3D at 2, 17, 33 and 65 nodes and 1D at 2, 17, 33, 65
    /// and 1024 entries, against FFmpeg's lut3d (tetrahedral) and lut1d (linear). Our table's grid holds each
    /// cube's nodes, so the only differences are float rounding and FFmpeg's rounding: ≥ 40 dB (in practice far more).
    func testLUTMatchesFFmpeg() throws {
        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = try TestSupport.raw(TestSupport.astronaut, pixelFormat: "rgba")
        let frame = RawFrames.frame(input, format: .rgba, width: size, height: size)
        var cases: [(path: String, ffmpeg: String)] = []
        for nodes in [2, 17, 33, 65] {
            let path = folder + "/grade3d-\(nodes).cube"
            try Self.cube3D(nodes: nodes).write(toFile: path, atomically: true, encoding: .utf8)
            cases.append((path, "lut3d=file=\(path):interp=tetrahedral"))
        }
        for entries in [2, 17, 33, 65, 1024] {
            let path = folder + "/grade1d-\(entries).cube"
            try Self.cube1D(entries: entries).write(toFile: path, atomically: true, encoding: .utf8)
            cases.append((path, "lut1d=file=\(path):interp=linear"))
        }
        for (path, filter) in cases {
            let expected = try TestSupport.raw(TestSupport.astronaut, pixelFormat: "rgba", filter: filter)
            let output = try TestSupport.apply("lut:file=\(path)", to: frame)
            let psnr = Quality.psnr(RawFrames.bytes(output), expected, skipEvery: 4)
            XCTAssertGreaterThanOrEqual(psnr, 40, "\(filter): \(psnr) dB")
            print("lut vs FFmpeg \(filter.split(separator: "/").last ?? ""): \(psnr) dB")
        }
    }

    /// A 3D cube with DOMAIN_MIN/DOMAIN_MAX against the same grade evaluated in the test: inputs are mapped from the
    /// domain to the grid and clamped outside it. The cube is affine in its grid coordinates, so inside the domain only
    /// 8-bit rounding remains; the clamp at the domain's edges is a kink that falls between the nodes of the fused
    /// 33-node table, where interpolation is off by at most a few codes: ≤ 4 codes anywhere, ≥ 45 dB overall.
    func testLUTDomain() throws {
        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var lines = ["# affine grade over a narrowed domain", "TITLE \"domain\"", "DOMAIN_MIN 0.1 0.2 0.0",
                     "DOMAIN_MAX 0.9 0.8 0.5", "LUT_3D_SIZE 5"]
        for b in 0..<5 { for g in 0..<5 { for r in 0..<5 {
            let (x, y, z) = (Double(r) / 4, Double(g) / 4, Double(b) / 4)
            lines.append("\(0.8 * x + 0.2 * y) \(y) \(1 - z)")
        } } }
        let path = folder + "/domain.cube"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let input = try TestSupport.raw(TestSupport.astronaut, pixelFormat: "rgba")
        let output = RawFrames.bytes(try TestSupport.apply("lut:file=\(path)",
                                                             to: RawFrames.frame(input, format: .rgba, width: size, height: size)))
        var worst = 0
        var expectedBytes = output
        for pixel in stride(from: 0, to: input.count, by: 4) {
            func grid(_ value: UInt8, _ low: Double, _ high: Double) -> Double {
                min(max((Double(value) / 255 - low) / (high - low), 0), 1)
            }
            let (x, y, z) = (grid(input[pixel], 0.1, 0.9), grid(input[pixel + 1], 0.2, 0.8), grid(input[pixel + 2], 0, 0.5))
            let expected = [0.8 * x + 0.2 * y, y, 1 - z].map { Int(($0 * 255).rounded()) }
            for c in 0..<3 {
                worst = max(worst, abs(Int(output[pixel + c]) - expected[c]))
                expectedBytes[pixel + c] = UInt8(expected[c])
            }
        }
        XCTAssertLessThanOrEqual(worst, 4)
        XCTAssertGreaterThanOrEqual(Quality.psnr(output, expectedBytes, skipEvery: 4), 45)
    }

    /// A smooth non-linear grade: a different curve per channel plus cross-talk.
    static func grade(_ r: Double, _ g: Double, _ b: Double) -> (Double, Double, Double) {
        (0.9 * pow(r, 1.2) + 0.1 * g, 0.95 * pow(g, 0.8) + 0.05 * b, 0.5 + 0.45 * sin(.pi * (b - 0.5)) * (0.8 + 0.2 * r))
    }

    static func cube3D(nodes: Int) -> String {
        var lines = ["# written by the VideoFX tests", "TITLE \"grade \(nodes)\"", "LUT_3D_SIZE \(nodes)", ""]
        let step = 1 / Double(nodes - 1)
        for b in 0..<nodes { for g in 0..<nodes { for r in 0..<nodes {
            let (x, y, z) = grade(Double(r) * step, Double(g) * step, Double(b) * step)
            lines.append(String(format: "%.6f %.6f %.6f", x, y, z))
        } } }
        return lines.joined(separator: "\n") + "\n"
    }

    static func cube1D(entries: Int) -> String {
        var lines = ["TITLE \"curves \(entries)\"", "LUT_1D_SIZE \(entries)"]
        for index in 0..<entries {
            let v = Double(index) / Double(entries - 1)
            lines.append(String(format: "%.6f %.6f %.6f", pow(v, 0.7), v * v, 0.5 - 0.5 * cos(.pi * v)))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func nv12(fromI420 bytes: [UInt8], size: Int) -> [UInt8] {
        let luma = size * size, chroma = luma / 4
        var out = Array(bytes[..<luma])
        for index in 0..<chroma { out.append(bytes[luma + index]); out.append(bytes[luma + chroma + index]) }
        return out
    }

    static func i420(fromNV12 bytes: [UInt8], size: Int) -> [UInt8] {
        let luma = size * size, chroma = luma / 4
        let pairs = bytes[luma...]
        return Array(bytes[..<luma]) + stride(from: 0, to: 2 * chroma, by: 2).map { pairs[luma + $0] }
            + stride(from: 1, to: 2 * chroma, by: 2).map { pairs[luma + $0] }
    }
}
