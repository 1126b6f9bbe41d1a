import Foundation
import Testing
import VFXCore
import VFXTestSupport
import VFXFilters

/// crop, flip, rotate and scale: exact index mappings checked sample by sample, FFmpeg's output for quarter
/// turns and scaling, the bilinear rotation against its formula.
@Suite struct GeometryTests {
    /// Every plane of `frame` as rows of bytes.
    static func planes(_ frame: VideoFrame) -> [[[UInt8]]] { (0..<frame.planeCount).map { SpatialFixtures.rows(frame, $0) } }

    @Test(arguments: [PixelFormat.i420, .nv12, .rgba, .gray8])
    func flipMirrorsExactly(format: PixelFormat) throws {
        let frame = try SpatialFixtures.photo(format)
        let original = Self.planes(frame)
        let vertical = Self.planes(try SpatialFixtures.apply("flip:vertical", to: frame))
        let horizontal = Self.planes(try SpatialFixtures.apply("flip", to: frame))
        for (index, plane) in original.enumerated() {
            let c = frame.plane(index).bytesPerPixel
            #expect(vertical[index] == plane.reversed())
            let mirrored = plane.map { row in
                stride(from: row.count - c, through: 0, by: -c).flatMap { row[$0..<($0 + c)] }
            }
            #expect(horizontal[index] == mirrored)
        }
    }

    /// Quarter turns equal FFmpeg's transpose/hflip+vflip exactly (tolerance 0: both only move samples).
    @Test(arguments: [(90, "transpose=clock"), (180, "hflip,vflip"), (270, "transpose=cclock"), (-90, "transpose=cclock")])
    func quarterTurnsMatchFFmpeg(degrees: Int, ffmpeg: String) throws {
        for (format, name) in [(PixelFormat.i420, "yuv420p"), (.rgba, "rgba")] {
            let frame = try SpatialFixtures.photo(format)
            let ours = try SpatialFixtures.apply("rotate:angle=\(degrees)", to: frame)
            let reference = try SpatialFixtures.ffmpeg(frame, name: name, filter: ffmpeg)
            #expect(ours.width == 512 && ours.height == 512)
            #expect(Self.planes(ours) == Self.planes(reference), "\(degrees)° \(format)")
        }
    }

    /// A non-square frame: 90° swaps the size; four quarter turns give the original back.
    @Test func quarterTurnsOfAWideFrame() throws {
        let bytes = try SpatialFixtures.decode("astronaut.png", pixelFormat: "yuv420p", size: (320, 180))
        let frame = RawFrames.frame(bytes, format: .i420, width: 320, height: 180)
        let turned = try SpatialFixtures.apply("rotate:angle=90", to: frame)
        #expect(turned.width == 180 && turned.height == 320)
        let back = try SpatialFixtures.apply("rotate:angle=90,rotate:angle=90,rotate:angle=90,rotate:angle=90", to: frame)
        #expect(Self.planes(back) == Self.planes(frame))
    }

    /// Other angles: bilinear sampling about the centre, evaluated here in Double. Tolerance 1 (Float vs Double
    /// rounding); samples whose source lies within 0.01 px of the frame's edge are skipped (inside vs fill).
    @Test func arbitraryAngleIsBilinear() throws {
        let frame = try SpatialFixtures.photo(.gray8)
        let image = SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0))
        let output = SpatialFixtures.doubles(SpatialFixtures.rows(try SpatialFixtures.apply("rotate:angle=30", to: frame), 0))
        let angle = 30.0 * .pi / 180
        var worst = 0.0
        for y in 0..<512 {
            for x in 0..<512 {
                let u = Double(x) + 0.5 - 256, v = Double(y) + 0.5 - 256
                let sx = u * cos(angle) + v * sin(angle) + 255.5, sy = -u * sin(angle) + v * cos(angle) + 255.5
                let margin = min(sx + 0.5, sy + 0.5, 511.5 - sx, 511.5 - sy)
                if abs(margin) < 0.01 { continue }
                var expected = 0.0
                if margin > 0 {
                    let cx = min(max(sx, 0), 511), cy = min(max(sy, 0), 511)
                    let x0 = Int(cx), y0 = Int(cy), x1 = min(x0 + 1, 511), y1 = min(y0 + 1, 511)
                    let fx = cx - Double(x0), fy = cy - Double(y0)
                    let top = image[y0][x0] + (image[y0][x1] - image[y0][x0]) * fx
                    let bottom = image[y1][x0] + (image[y1][x1] - image[y1][x0]) * fx
                    expected = top + (bottom - top) * fy
                }
                worst = max(worst, abs(output[y][x] - expected))
            }
        }
        #expect(worst <= 1, "\(worst)")
    }

    @Test(arguments: [PixelFormat.i420, .nv12, .rgba])
    func cropCopiesTheRectangle(format: PixelFormat) throws {
        let frame = try SpatialFixtures.photo(format)
        let output = try SpatialFixtures.apply("crop:x=101:y=40:width=200:height=151", to: frame)
        #expect(output.width == 200 && output.height == 151)
        let original = Self.planes(frame), cropped = Self.planes(output)
        for index in 0..<frame.planeCount {
            // YUV: the corner is rounded down to even (100, 40); chroma starts at half of it.
            let sub = format.isYUV && index > 0 ? 2 : 1
            let left = (format.isYUV ? 100 : 101) / sub, top = 40 / sub
            let c = frame.plane(index).bytesPerPixel
            let expected = (0..<output.plane(index).height).map { y in
                Array(original[index][top + y][(left * c)..<((left + output.plane(index).width) * c)])
            }
            #expect(cropped[index] == expected, "plane \(index)")
        }
    }

    @Test func cropOutsideTheFrameIsAnErrorNamingTheKey() throws {
        let frame = try SpatialFixtures.photo(.gray8)
        #expect {
            try SpatialFixtures.apply("crop:x=400:width=200", to: frame)
        } throws: { error in
            "\(error)" == "crop: width must be at most 112 (the frame is 512 wide), got '200'"
        }
    }

    /// Scaling against FFmpeg's swscale with the same kernel (bicubic with B = 0, C = 0.5, i.e. Keys a = −0.5;
    /// bilinear), on gray so no chroma siting is involved. swscale works in 14-bit fixed point and sizes its
    /// shrinking filter slightly differently; tolerance PSNR ≥ 40 dB (a ±1 difference everywhere is 48 dB).
    @Test(arguments: [(768, 640, "bicubic"), (200, 300, "bicubic"), (900, 900, "bilinear"), (256, 256, "bilinear"),
                      (256, 256, "bicubic"), (1024, 768, "bicubic")])
    func scaleMatchesSwscale(width: Int, height: Int, kernel: String) throws {
        let frame = try SpatialFixtures.photo(.gray8)
        let ours = try SpatialFixtures.apply("scale:width=\(width):height=\(height):kernel=\(kernel)", to: frame)
        #expect(ours.width == width && ours.height == height)
        let flags = kernel == "bicubic" ? "bicubic+accurate_rnd:param0=0:param1=0.5" : "bilinear+accurate_rnd"
        let reference = try SpatialFixtures.ffmpeg(frame, name: "gray", filter: "scale=\(width):\(height):flags=\(flags)",
                                                   size: (width, height))
        let psnr = SpatialFixtures.psnr(SpatialFixtures.doubles(SpatialFixtures.rows(ours, 0)),
                                        SpatialFixtures.doubles(SpatialFixtures.rows(reference, 0)))
        #expect(psnr >= 40, "\(width)x\(height) \(kernel): \(psnr) dB")
    }

    /// Halving with the area kernel is the exact 2×2 mean (tolerance 0.5 + float error: ties round to even), with both
    /// sides given and with one (the other from the aspect ratio: the kernel counts then too, not the default bicubic).
    @Test(arguments: ["scale:width=256:height=256:kernel=area", "scale:height=256:kernel=area"])
    func areaHalvingIsTheBlockMean(chain: String) throws {
        let frame = try SpatialFixtures.photo(.gray8)
        let image = SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0))
        let scaled = try SpatialFixtures.apply(chain, to: frame)
        #expect(scaled.width == 256 && scaled.height == 256)
        let output = SpatialFixtures.doubles(SpatialFixtures.rows(scaled, 0))
        var worst = 0.0
        for y in 0..<256 {
            for x in 0..<256 {
                let mean = (image[2 * y][2 * x] + image[2 * y][2 * x + 1] + image[2 * y + 1][2 * x] + image[2 * y + 1][2 * x + 1]) / 4
                worst = max(worst, abs(output[y][x] - mean))
            }
        }
        #expect(worst <= 0.501)
    }

    /// With no size at all the frame passes through and a kernel would be ignored, so it is refused.
    @Test func kernelWithoutSizeIsRefused() throws {
        let frame = try SpatialFixtures.photo(.gray8)
        #expect {
            try SpatialFixtures.apply("scale:kernel=area", to: frame)
        } throws: { error in
            "\(error)" == "scale: width or height must be above 0 when kernel is given, got '0'"
        }
    }

    /// A zero size keeps the aspect ratio (even for YUV).
    @Test func scaleKeepsAspectRatio() throws {
        let bytes = try SpatialFixtures.decode("astronaut.png", pixelFormat: "yuv420p", size: (640, 360))
        let frame = RawFrames.frame(bytes, format: .i420, width: 640, height: 360)
        let output = try SpatialFixtures.apply("scale:width=427", to: frame)
        #expect(output.width == 427 && output.height == 240)
        let other = try SpatialFixtures.apply("scale:height=101", to: frame)
        #expect(other.width == 180 && other.height == 101)
    }
}
