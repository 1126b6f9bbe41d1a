import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// Second-round filters against FFmpeg's filters of the same definition, on media/astronaut.png scaled to 128×96.
final class FFmpegCatalogTests: XCTestCase {
    let width = 128, height = 96

    func rgba() throws -> VideoFrame {
        RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: "rgba", size: (width, height)), format: .rgba, width: width, height: height)
    }

    /// Largest difference on the colour channels and PSNR between our chain and FFmpeg's graph on RGBA.
    func compare(_ chain: String, _ graph: String, on frame: VideoFrame) throws -> (worst: Int, psnr: Double) {
        let ours = RawFrames.bytes(try TestSupport.apply(chain, to: frame))
        let theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(frame, name: "rgba", filter: graph + ",format=rgba"))
        let worst = TestSupport.maxDifference(ours, theirs, skipEvery: 4)
        let psnr = Quality.psnr(ours, theirs, skipEvery: 4)
        print("\(chain) vs \(graph): max \(worst), \(psnr) dB")
        return (worst, psnr)
    }

    /// The same natural spline through the same points: FFmpeg's table and ours differ only by rounding (≤ 1 code).
    func testToneCurveMatchesCurves() throws {
        let (worst, _) = try compare("tone-curve:point1=0.25x0.15:point2=0.5x0.55:point3=0.8x0.9",
                                     "curves=all='0/0 0.25/0.15 0.5/0.55 0.8/0.9 1/1'", on: try rgba())
        XCTAssertLessThanOrEqual(worst, 1)
    }

    /// lutrgb evaluates the same cubic per code (and rounds the same way: +0.5 then truncation): ≤ 1 code.
    func testColorPolynomialMatchesLutrgb() throws {
        let spec = try XCTUnwrap(FilterRegistry.spec(named: "color-polynomial"))
        let arguments = try FilterChain(parsing: "color-polynomial:a0=0.05:a1=0.7:a2=0.6:a3=-0.4").filters[0].arguments()
        let graph = try XCTUnwrap(spec.ffmpeg?(arguments))
        let (worst, _) = try compare("color-polynomial:a0=0.05:a1=0.7:a2=0.6:a3=-0.4", graph, on: try rgba())
        XCTAssertLessThanOrEqual(worst, 1)
    }

    /// `posterize` and `solarize` on RGBA (their exact per-channel tables) against `lutrgb` with the graphs their specs
    /// record, on a frame holding every byte in each channel: identical bytes, except where a level's value
    /// n·255/(levels − 1) is a whole code and a half (7 levels: 42.5, 127.5, 212.5), which VideoFX's Float tables may
    /// round either way (n/(levels − 1) is not exact in Float) and lutrgb rounds up: ≤ 1 code there.
    func testPosterizeAndSolarizeMatchLutrgb() throws {
        // Row 0: red x, green 255 − x, blue 3x + 7 (mod 256); row 1: red 5x + 1, green 7x, blue 255 − x.
        let rows = [{ (x: Int) in [x, 255 - x, (3 * x + 7) % 256] }, { (x: Int) in [(5 * x + 1) % 256, (7 * x) % 256, 255 - x] }]
        let input: [UInt8] = rows.flatMap { row in (0..<256).flatMap { x in row(x).map { UInt8($0) } + [255] } }
        let frame = RawFrames.frame(input, format: .rgba, width: 256, height: 2)
        func check(_ chain: String, want: (Int) -> Double) throws {
            // `want`: the definition's output byte before rounding (ties are where it ends in a half).
            let description = try FilterChain(parsing: chain).filters[0]
            let spec = try XCTUnwrap(FilterRegistry.spec(named: description.name))
            let graph = try XCTUnwrap(spec.ffmpeg?(try description.arguments()), chain)
            let ours = RawFrames.bytes(try TestSupport.apply(chain, to: frame))
            let theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(frame, name: "rgba", filter: graph + ",format=rgba"))
            var ties = 0
            for index in input.indices where index % 4 != 3 {
                let value: Double = want(Int(input[index]))
                let isTie = abs(value - value.rounded(.down) - 0.5) < 1e-9
                let difference = abs(Int(ours[index]) - Int(theirs[index]))
                XCTAssertLessThanOrEqual(difference, isTie ? 1 : 0, "\(chain) at byte \(input[index]) (\(graph))")
                if difference > 0 { ties += 1 }
            }
            print("\(chain) vs \(graph): \(ties) tie(s) a code apart")
        }
        for levels in [2, 3, 4, 6, 7, 16, 256] {
            let steps = Double(levels - 1)
            try check("posterize:levels=\(levels)") { code in (Double(code) / 255 * steps).rounded() / steps * 255 }
        }
        for threshold in [0, 0.25, 0.5, 0.6, 1] {
            try check("solarize:threshold=\(threshold)") { code in Double(code) / 255 > threshold ? Double(255 - code) : Double(code) }
        }
    }

    /// FFmpeg's `blend` on planar RGB against a colour layer: the same per-channel formulas in 8-bit integers (FFmpeg
    /// divides by 255 with its own rounding): ≤ 2 codes.
    func testSeparableBlendsMatchFFmpegBlend() throws {
        let frame = try rgba()
        for mode in ["multiply", "screen", "overlay", "hard-light", "darken", "lighten", "difference", "exclusion"] {
            let spec = try XCTUnwrap(FilterRegistry.spec(named: "\(mode)-blend"))
            let arguments = try FilterChain(parsing: "\(mode)-blend:color=#c06030").filters[0].arguments()
            let graph = try XCTUnwrap(spec.ffmpeg?(arguments), mode)
            let (worst, _) = try compare("\(mode)-blend:color=#c06030", graph, on: frame)
            XCTAssertLessThanOrEqual(worst, 2, mode)
        }
    }

    /// Mirroring is a copy of samples: identical to FFmpeg's crop/flip/stack graph.
    func testMirrorMatchesCropFlipStack() throws {
        let frame = try rgba()
        for keep in ["left", "right", "top", "bottom"] {
            let spec = try XCTUnwrap(FilterRegistry.spec(named: "mirror"))
            let graph = try XCTUnwrap(spec.ffmpeg?(try FilterChain(parsing: "mirror:keep=\(keep)").filters[0].arguments()))
            let (worst, _) = try compare("mirror:keep=\(keep)", graph, on: frame)
            XCTAssertEqual(worst, 0, keep)
        }
    }

    /// The same lens model, on the 512×512 photo. FFmpeg 5.1's `i=bilinear` mode disagrees even with its own nearest
    /// mode (21.6 dB on this photo), so the reference is its default, nearest-sample mode: our bilinear result against
    /// FFmpeg's nearest samples (and its integer-corner rather than pixel-centre coordinates) is ≥ 30 dB (measured
    /// 32.5 dB), not equal to the code.
    func testLensDistortionMatchesLenscorrection() throws {
        let gray = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: "gray"), format: .gray8, width: 512, height: 512)
        let ours = RawFrames.bytes(try TestSupport.apply("lens-distortion:k1=-0.25:k2=0.05", to: gray))
        let theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(gray, name: "gray", filter: "lenscorrection=k1=-0.25:k2=0.05"))
        let psnr = Quality.psnr(ours, theirs)
        print("lens-distortion vs lenscorrection (nearest): \(psnr) dB")
        XCTAssertGreaterThanOrEqual(psnr, 30)
    }

    /// A logo with graded alpha over the photo: FFmpeg's `overlay` in RGB does the same straight-alpha mix: ≤ 1 code.
    func testOverlayMatchesFFmpegOverlay() throws {
        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var logo = [UInt8]()
        for y in 0..<40 {
            for x in 0..<50 { logo += [UInt8(x * 5), 200, UInt8(y * 6), UInt8((x + y) * 255 / 88)] }
        }
        try Data(logo).write(to: URL(fileURLWithPath: folder + "/logo.rgba"))
        try TestSupport.ffmpeg(["-f", "rawvideo", "-pix_fmt", "rgba", "-s", "50x40", "-i", folder + "/logo.rgba", folder + "/logo.png"])
        let (worst, _) = try compare("overlay:file=\(folder)/logo.png:position=0.25x0.5",
                                     "movie=\(folder)/logo.png[logo];[in][logo]overlay=x=32:y=48:format=rgb", on: try rgba())
        XCTAssertLessThanOrEqual(worst, 1)
    }

    /// Text through FreeType against FFmpeg's drawtext with the same font and size, white on black RGBA (on gray
    /// frames drawtext writes white as limited-range 235): the two place the line differently (each has its own idea
    /// of the box's top), so the red channel's ink is compared after aligning the bounding boxes of the lit pixels:
    /// same box size (± 1 px), ink totals within 2 %, ≥ 30 dB over the box (both rasterize with FreeType; what is left
    /// is blending rounding).
    func testTextMatchesDrawtext() throws {
        let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
        try XCTSkipUnless(FileManager.default.fileExists(atPath: font), "DejaVu Sans is not installed")
        let (w, h) = (320, 80)
        let black = RawFrames.frame((0..<(w * h)).flatMap { _ in [UInt8(0), 0, 0, 255] }, format: .rgba, width: w, height: h)
        func red(_ frame: VideoFrame) -> [UInt8] { let bytes = RawFrames.bytes(frame); return stride(from: 0, to: bytes.count, by: 4).map { bytes[$0] } }
        let ours = red(try TestSupport.apply("text:text=Hello 123:size=40:outline=0:position=0.05x0.1", to: black))
        let theirs = red(try SpatialFixtures.ffmpeg(black, name: "rgba",
                                                    filter: "drawtext=fontfile=\(font):text='Hello 123':fontsize=40:fontcolor=white:x=16:y=8"))
        func box(_ image: [UInt8]) -> (x: Int, y: Int, w: Int, h: Int) {
            var (x0, y0, x1, y1) = (w, h, -1, -1)
            for y in 0..<h { for x in 0..<w where image[y * w + x] > 0 { (x0, y0, x1, y1) = (min(x0, x), min(y0, y), max(x1, x), max(y1, y)) } }
            return (x0, y0, x1 - x0 + 1, y1 - y0 + 1)
        }
        let (a, b) = (box(ours), box(theirs))
        XCTAssertGreaterThan(a.w, 100)
        XCTAssertLessThanOrEqual(abs(a.w - b.w), 1)
        XCTAssertLessThanOrEqual(abs(a.h - b.h), 1)
        let inkA = ours.reduce(0) { $0 + Int($1) }, inkB = theirs.reduce(0) { $0 + Int($1) }
        XCTAssertLessThanOrEqual(abs(Double(inkA - inkB)) / Double(inkB), 0.02)
        var cropA: [UInt8] = [], cropB: [UInt8] = []
        for y in 0..<min(a.h, b.h) {
            for x in 0..<min(a.w, b.w) {
                cropA.append(ours[(a.y + y) * w + a.x + x])
                cropB.append(theirs[(b.y + y) * w + b.x + x])
            }
        }
        let psnr = Quality.psnr(cropA, cropB)
        print("text vs drawtext: box \(a) vs \(b), ink \(inkA) vs \(inkB), \(psnr) dB")
        XCTAssertGreaterThanOrEqual(psnr, 30)
    }

    /// The timecode field follows the frame's timestamp at the stream's rate.
    func testTimecodeFields() {
        XCTAssertEqual(TextFields.fill("{timecode}", seconds: 3725.5, frame: 0, rate: 30), "01:02:05:15")
        XCTAssertEqual(TextFields.fill("t={time} #{frame}", seconds: 61.25, frame: 7, rate: 25), "t=00:01:01.250 #7")
    }
}
