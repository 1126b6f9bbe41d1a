import Foundation
import Testing
import VFXCore
import VFXFilters
import VFXTestSupport
import VFXPipeline

/// unsharp-mask, bloom, gloom, vignette, pixellate, motion-blur and zoom-blur against their definitions
/// evaluated here in Double on media/astronaut.png (gray), and constant images through every blur.
@Suite struct SpatialEffectsTests {
    static func gray() throws -> (VideoFrame, [[Double]]) {
        let frame = try SpatialFixtures.photo(.gray8)
        return (frame, SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0)))
    }

    static func output(_ chain: String, _ frame: VideoFrame) throws -> [[Double]] {
        SpatialFixtures.doubles(SpatialFixtures.rows(try SpatialFixtures.apply(chain, to: frame), 0))
    }

    /// Blur-based effects with the exact Gaussian in place of the recursive one. Tolerance: PSNR ≥ 40 dB; the
    /// only difference is the blur's (≥ 45 dB alone), scaled by the effect's gain on the blur (≤ 1 here).
    @Test func unsharpBloomAndGloomFollowTheirFormulas() throws {
        let (frame, image) = try Self.gray()
        let blur = SpatialFixtures.convolve(image, channels: 1, weights: SpatialFixtures.gaussianWeights(sigma: 3))
        func expect(_ chain: String, _ formula: (Double, Double) -> Double) throws {
            let expected = zip(image, blur).map { zip($0, $1).map { SpatialFixtures.byte(formula($0 / 255, $1 / 255) * 255) } }
            let psnr = SpatialFixtures.psnr(try Self.output(chain, frame), expected)
            #expect(psnr >= 40, "\(chain): \(psnr) dB")
        }
        try expect("unsharp-mask:radius=3:intensity=0.8") { x, b in x + 0.8 * (x - b) }
        try expect("bloom:radius=3:intensity=0.6") { x, b in 1 - (1 - x) * (1 - 0.6 * b) }
        try expect("gloom:radius=3:intensity=0.6") { x, b in x * (1 - 0.6 + 0.6 * b) }
    }

    /// Vignette is point-wise: tolerance 1 (Float vs Double near a rounding boundary).
    @Test func vignetteFollowsItsFormula() throws {
        let (frame, image) = try Self.gray()
        let radius = 0.3, intensity = 0.7
        let halfDiagonal = (2.0 * 512 * 512).squareRoot() / 2
        let expected = image.enumerated().map { y, row in
            row.enumerated().map { x, value -> Double in
                let d2 = (pow(Double(x) + 0.5 - 256, 2) + pow(Double(y) + 0.5 - 256, 2)) / (halfDiagonal * halfDiagonal)
                let t = min(max((d2 - radius * radius) / (1 - radius * radius), 0), 1)
                return SpatialFixtures.byte(value * (1 - intensity * t * t * (3 - 2 * t)))
            }
        }
        #expect(SpatialFixtures.maxDifference(try Self.output("vignette:radius=0.3:intensity=0.7", frame), expected) <= 1)
    }

    /// Pixellate: block means rounded half up, exact (tolerance 0). 512 is not a multiple of 24 or 300, so the last
    /// blocks are partial; 300-row bands are taller than 16-bit column sums can hold (257 rows).
    @Test(arguments: [24, 300])
    func pixellateAveragesBlocks(scale: Int) throws {
        let (frame, image) = try Self.gray()
        var expected = image
        for by in stride(from: 0, to: 512, by: scale) {
            for bx in stride(from: 0, to: 512, by: scale) {
                let ys = by..<min(by + scale, 512), xs = bx..<min(bx + scale, 512)
                let total = ys.flatMap { y in xs.map { image[y][$0] } }.reduce(0, +)
                let mean = (total / Double(ys.count * xs.count) + 1e-9).rounded()
                for y in ys { for x in xs { expected[y][x] = mean } }
            }
        }
        #expect(SpatialFixtures.maxDifference(try Self.output("pixellate:scale=\(scale)", frame), expected) == 0)
    }

    /// Against FFmpeg's `pixelize` (mode avg) with the same blocks: FFmpeg truncates each block's mean where
    /// VideoFX rounds it, so every sample is FFmpeg's or one more, never anything else. I420 at 318×178 (chroma
    /// 159×89: partial blocks on every plane), NV12 and RGBA, two slices.
    @Test(arguments: [(PixelFormat.i420, "yuv420p"), (.nv12, "nv12"), (.rgba, "rgba")])
    func pixellateMatchesFFmpegPixelize(format: PixelFormat, name: String) throws {
        let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (318, 178)),
                                    format: format, width: 318, height: 178)
        let ours = RawFrames.bytes(try SpatialFixtures.apply("pixellate:scale=16", to: frame, threads: 2))
        let theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(frame, name: name, filter: "pixelize=w=16:h=16"))
        #expect(ours.count == theirs.count)
        let differences = Set(zip(ours, theirs).map { Int($0) - Int($1) })
        #expect(differences.isSubset(of: [0, 1]), "\(format): \(differences.sorted())")
        #expect(differences.contains(1), "\(format): the rounding differs somewhere")
    }

    /// The motion-blur definition: the mean of 2K+1 samples one pixel apart along x (or y for steep angles),
    /// linear across, coordinates clamped.
    static func motionBlur(_ image: [[Double]], radius: Double, degrees: Double) -> [[Double]] {
        let height = image.count, width = image[0].count
        let angle = degrees * .pi / 180
        let horizontal = abs(cos(angle)) >= abs(sin(angle))
        let t = horizontal ? tan(angle) : 1 / tan(angle)
        let steps = Int((radius / (1 + t * t).squareRoot()).rounded())
        func sample(_ major: Int, _ minor: Double) -> Double {
            let m = min(max(major, 0), (horizontal ? width : height) - 1)
            let limit = Double((horizontal ? height : width) - 1)
            let p = min(max(minor, 0), limit)
            let lower = Int(p), upper = min(lower + 1, Int(limit))
            let f = p - Double(lower)
            let a = horizontal ? image[lower][m] : image[m][lower], b = horizontal ? image[upper][m] : image[m][upper]
            return a + (b - a) * f
        }
        return (0..<height).map { y in
            (0..<width).map { x in
                let (major, minor) = horizontal ? (x, Double(y)) : (y, Double(x))
                let total = (-steps...steps).map { sample(major + $0, minor + Double($0) * t) }.reduce(0, +)
                return SpatialFixtures.byte(total / Double(2 * steps + 1))
            }
        }
    }

    /// Tolerance 1 at every angle: the kernel sums every sample of the definition exactly in integers, with integer
    /// weights that put the sum within 0.07 of a code of the exact mean, so only a value that close to a rounding
    /// boundary can round the other way.
    @Test(arguments: [0.0, 30, -70, 45])
    func motionBlurFollowsItsDefinition(degrees: Double) throws {
        let (frame, image) = try Self.gray()
        let expected = Self.motionBlur(image, radius: 12, degrees: degrees)
        let output = try Self.output("motion-blur:radius=12:angle=\(degrees)", frame)
        #expect(SpatialFixtures.maxDifference(output, expected) <= 1, "angle \(degrees)")
    }

    /// The zoom-blur definition: the mean of 2ⁿ bilinear samples at centre + (p − centre)·sᵐ. The kernel
    /// composes n bilinear passes instead, which adds interpolation blur away from the centre. Tolerance:
    /// PSNR ≥ 40 dB (measured 47.7).
    @Test func zoomBlurFollowsItsDefinition() throws {
        let (frame, image) = try Self.gray()
        let amount = 15.0
        let halfDiagonal = (2.0 * 512 * 512).squareRoot() / 2
        var count = 1
        while count < Int(amount) + 1 { count *= 2 }
        let step = pow(1 - amount / halfDiagonal, 1 / Double(count - 1))
        let cx = 0.4 * 512 - 0.5, cy = 0.5 * 512 - 0.5
        func bilinear(_ x: Double, _ y: Double) -> Double {
            let sx = min(max(x, 0), 511), sy = min(max(y, 0), 511)
            let x0 = Int(sx), y0 = Int(sy), x1 = min(x0 + 1, 511), y1 = min(y0 + 1, 511)
            let fx = sx - Double(x0), fy = sy - Double(y0)
            let top = image[y0][x0] + (image[y0][x1] - image[y0][x0]) * fx
            let bottom = image[y1][x0] + (image[y1][x1] - image[y1][x0]) * fx
            return top + (bottom - top) * fy
        }
        let expected = (0..<512).map { y in
            (0..<512).map { x in
                let total = (0..<count).map { m -> Double in
                    let s = pow(step, Double(m))
                    return bilinear(cx + (Double(x) - cx) * s, cy + (Double(y) - cy) * s)
                }.reduce(0, +)
                return SpatialFixtures.byte(total / Double(count))
            }
        }
        let psnr = SpatialFixtures.psnr(try Self.output("zoom-blur:center=0.4x0.5:amount=15", frame), expected)
        #expect(psnr >= 40, "\(psnr) dB")
    }

    /// No dark borders and no drift: a constant image stays exactly constant through every blur (tolerance 0).
    @Test(arguments: ["gaussian-blur:radius=7", "gaussian-blur:radius=40", "box-blur:radius=9", "motion-blur:radius=15:angle=25",
                      "motion-blur:radius=15:angle=100", "zoom-blur:amount=40", "median", "pixellate:scale=7",
                      "unsharp-mask:radius=4:intensity=2"])
    func constantImageStaysConstant(chain: String) throws {
        for format in [PixelFormat.i420, .nv12, .rgba, .gray8] {
            var frame = VideoFrame(format: format, width: 99, height: 61)
            frame.withMutablePlanes { planes in
                for (index, plane) in planes.enumerated() {
                    for y in 0..<plane.height { plane.row(y).update(repeating: UInt8(77 + 60 * index), count: plane.width * plane.bytesPerPixel) }
                }
            }
            let output = try SpatialFixtures.apply(chain, to: frame)
            for index in 0..<frame.planeCount {
                #expect(SpatialFixtures.rows(output, index) == SpatialFixtures.rows(frame, index), "\(chain) \(format) plane \(index)")
            }
        }
    }
}

/// Every spatial and geometric filter on tiny and odd frames, in every format: it must run (no crash, no
/// out-of-bounds access) and keep a constant image within its own value range.
@Suite struct SpatialTinyFrameTests {
    @Test(arguments: ["gaussian-blur:radius=30", "gaussian-blur:radius=3", "box-blur:radius=5", "motion-blur:radius=9:angle=60",
                      "zoom-blur:amount=50", "bloom", "gloom", "unsharp-mask", "sharpen", "edges", "emboss", "median", "vignette",
                      "pixellate:scale=5", "crop", "scale:width=3:height=5", "flip:vertical", "flip", "rotate:angle=90",
                      "rotate:angle=45"])
    func tinyFramesRun(chain: String) throws {
        for format in PixelFormat.allCases {
            for (width, height) in [(1, 1), (2, 3), (3, 1), (1, 7), (33, 2)] {
                var frame = VideoFrame(format: format, width: width, height: height)
                frame.withMutablePlanes { planes in
                    for plane in planes {
                        for y in 0..<plane.height { plane.row(y).update(repeating: 128, count: plane.width * plane.bytesPerPixel) }
                    }
                }
                let output = try SpatialFixtures.apply(chain, to: frame)
                #expect(output.width > 0 && output.height > 0, "\(chain) \(format) \(width)x\(height)")
            }
        }
    }
}

/// A frame of another size than the stage was configured for is refused with a one-line error naming the
/// filter, never read or written out of bounds.
@Suite struct SpatialFormatCheckTests {
    @Test func frameOfAnotherSizeIsAnError() throws {
        let processor = try FilterChain(parsing: "box-blur:radius=3").makeProcessor(threads: 1)
        _ = try processor.configure(for: FrameFormat(pixelFormat: .i420, width: 64, height: 64))
        let frame = VideoFrame(format: .i420, width: 32, height: 32)
        #expect {
            _ = try processor.frames(from: frame)
        } throws: { error in
            "\(error)" == "box-blur: frames in i420 32x32 (configured for i420 64x64) are not supported"
        }
    }
}
