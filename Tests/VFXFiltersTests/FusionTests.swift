import Foundation
import VFXCore
import VFXTestSupport
import VFXFilters
import VFXMedia
import VFXPipeline
import XCTest

/// The compiler: a fused chain against the same filters applied one by one, the YUV kernels against their
/// definition, threads, odd sizes, and `.cube` files that must be refused.
final class FusionTests: XCTestCase {
    static let chain = "sepia:0.7,hue:angle=40,gamma:power=1.3,tint:color=#3366cc:amount=0.3,vibrance:0.4"

    func astronaut(_ pixelFormat: String, _ format: PixelFormat) throws -> VideoFrame {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: TestSupport.astronaut), "media/astronaut.png is missing")
        return RawFrames.frame(try TestSupport.raw(TestSupport.astronaut, pixelFormat: pixelFormat), format: format,
                                 width: 512, height: 512)
    }

    /// One by one, each stage rounds to 8 bits (±½ code, amplified by the gains of the stages after it) and each
    /// filter's own kernel has its own interpolation; fused, the composite is interpolated once. "Within rounding"
    /// is therefore a few codes: ≥ 40 dB overall and 99.5 % of samples within 3 codes. On I420 a few samples differ
    /// more: at sharp edges inside a 2×2 block, one by one re-averages the block's chroma after every filter's clip,
    /// while the fused pass does it once.
    func testFusedChainEqualsFiltersOneByOne() throws {
        for (pixelFormat, format) in [("rgba", PixelFormat.rgba), ("yuv420p", .i420)] {
            let frame = try astronaut(pixelFormat, format)
            let fused = RawFrames.bytes(try TestSupport.apply(Self.chain, to: frame))
            var stepwise = frame
            for filter in try FilterChain(parsing: Self.chain).filters {
                stepwise = try TestSupport.apply(filter.description, to: stepwise)
            }
            let separate = RawFrames.bytes(stepwise)
            let skip = format == .rgba ? 4 : nil
            let psnr = Quality.psnr(fused, separate, skipEvery: skip)
            let worst = TestSupport.maxDifference(fused, separate, skipEvery: skip)
            let far = zip(fused, separate).filter { abs(Int($0) - Int($1)) > 3 }.count
            print("fused vs one by one, \(format): \(psnr) dB, max \(worst), \(far) samples off by more than 3")
            XCTAssertGreaterThanOrEqual(psnr, 40, "\(format)")
            XCTAssertLessThanOrEqual(Double(far) / Double(fused.count), 0.005, "\(format)")
        }
    }

    /// The I420/NV12 affine kernel against its definition evaluated here: each pixel's R'G'B' from its luma and its
    /// block's chroma (BT.601 limited range), the sepia matrix, the clip, its luma; each block's chroma from the mean
    /// of its pixels' clipped R'G'B'. Odd sizes exercise the one-column and one-row blocks. ≤ 1 code (rounding).
    func testAffineKernelOnOddSizesMatchesItsDefinition() throws {
        let (width, height) = (37, 19)
        let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        var generator = SystemRandomNumberGenerator.Seeded(state: 42)
        let input = (0..<(width * height + 2 * cw * ch)).map { _ in generator.byte() }
        let output = RawFrames.bytes(try TestSupport.apply("sepia", to: RawFrames.frame(input, format: .i420,
                                                                                             width: width, height: height)))
        let m = [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]
        func rgb(_ y: UInt8, _ u: UInt8, _ v: UInt8) -> [Double] {
            let l = (Double(y) - 16) / 219, pb = (Double(u) - 128) / 224, pr = (Double(v) - 128) / 224
            let r = l + 1.402 * pr, b = l + 1.772 * pb
            let g = (l - 0.299 * r - 0.114 * b) / 0.587
            return (0..<3).map { min(max(m[$0][0] * r + m[$0][1] * g + m[$0][2] * b, 0), 1) }
        }
        var worst = 0
        for by in 0..<ch {
            for bx in 0..<cw {
                let u = input[width * height + by * cw + bx], v = input[width * height + cw * ch + by * cw + bx]
                var sum = [0.0, 0.0, 0.0], count = 0.0
                for y in (2 * by)..<min(2 * by + 2, height) {
                    for x in (2 * bx)..<min(2 * bx + 2, width) {
                        let c = rgb(input[y * width + x], u, v)
                        let luma = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
                        worst = max(worst, abs(Int(output[y * width + x]) - Int((16 + 219 * luma).rounded())))
                        for k in 0..<3 { sum[k] += c[k] }
                        count += 1
                    }
                }
                let mean = sum.map { $0 / count }
                let luma = 0.299 * mean[0] + 0.587 * mean[1] + 0.114 * mean[2]
                let cb = 128 + 224 * (mean[2] - luma) / 1.772, cr = 128 + 224 * (mean[0] - luma) / 1.402
                worst = max(worst, abs(Int(output[width * height + by * cw + bx]) - Int(cb.rounded())))
                worst = max(worst, abs(Int(output[width * height + cw * ch + by * cw + bx]) - Int(cr.rounded())))
            }
        }
        XCTAssertLessThanOrEqual(worst, 1)
    }

    /// A lone smooth curve on I420/NV12 (`ColorRunYUVKernel` with the curve as its one step) against its definition
    /// evaluated here in doubles: each pixel's R'G'B' from its luma and its block's chroma (BT.601 limited range), clipped;
    /// `gamma:power=1.3` (x^1.3) and `gamma:power=0.6` (x^0.6, infinite slope at 0), their luma; each block's chroma
    /// from the mean of its pixels' output R'G'B'. Odd sizes exercise the one-column and one-row blocks. ≤ 1 code:
    /// rounding, plus the curve read at the nearest of 4096 entries (x^1.3: ≤ 1.3 × 0.5/4095 of full scale = 0.04
    /// codes; x^0.6: ≤ 0.25 codes, between the first two entries).
    func testChannelCurveKernelOnOddSizesMatchesItsDefinition() throws {
        let (width, height) = (37, 19)
        let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        var generator = SystemRandomNumberGenerator.Seeded(state: 7)
        let input = (0..<(width * height + 2 * cw * ch)).map { _ in generator.byte() }
        for (power, format) in [(1.3, PixelFormat.i420), (1.3, .nv12), (0.6, .i420)] {
            let chain = "gamma:power=\(power)"
            var frameBytes = input
            if format == .nv12 {
                // The same samples with Cb and Cr interleaved.
                var chroma: [UInt8] = []
                for index in 0..<(cw * ch) {
                    chroma.append(input[width * height + index])
                    chroma.append(input[width * height + cw * ch + index])
                }
                frameBytes = Array(input[0..<(width * height)]) + chroma
            }
            var output = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(frameBytes, format: format,
                                                                                          width: width, height: height)))
            if format == .nv12 {
                let chroma = Array(output[(width * height)...])
                let cb: [UInt8] = (0..<(cw * ch)).map { chroma[2 * $0] }
                let cr: [UInt8] = (0..<(cw * ch)).map { chroma[2 * $0 + 1] }
                output = Array(output[0..<(width * height)]) + cb + cr
            }
            func rgb(_ y: UInt8, _ u: UInt8, _ v: UInt8) -> [Double] {
                let l = (Double(y) - 16) / 219, pb = (Double(u) - 128) / 224, pr = (Double(v) - 128) / 224
                let r = l + 1.402 * pr, b = l + 1.772 * pb
                let g = (l - 0.299 * r - 0.114 * b) / 0.587
                return [r, g, b].map { pow(min(max($0, 0), 1), power) }
            }
            var worst = 0
            for by in 0..<ch {
                for bx in 0..<cw {
                    let u = input[width * height + by * cw + bx], v = input[width * height + cw * ch + by * cw + bx]
                    var sum = [0.0, 0.0, 0.0], count = 0.0
                    for y in (2 * by)..<min(2 * by + 2, height) {
                        for x in (2 * bx)..<min(2 * bx + 2, width) {
                            let c = rgb(input[y * width + x], u, v)
                            let luma = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
                            worst = max(worst, abs(Int(output[y * width + x]) - Int((16 + 219 * luma).rounded())))
                            for k in 0..<3 { sum[k] += c[k] }
                            count += 1
                        }
                    }
                    let mean = sum.map { $0 / count }
                    let luma = 0.299 * mean[0] + 0.587 * mean[1] + 0.114 * mean[2]
                    let cb = 128 + 224 * (mean[2] - luma) / 1.772, cr = 128 + 224 * (mean[0] - luma) / 1.402
                    worst = max(worst, abs(Int(output[width * height + by * cw + bx]) - Int(cb.rounded())))
                    worst = max(worst, abs(Int(output[width * height + cw * ch + by * cw + bx]) - Int(cr.rounded())))
                }
            }
            XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(format)")
        }
    }

    /// The YUV table kernel (used for runs with a transform that is neither a matrix nor a per-channel curve) against
    /// the exact affine kernel on the same matrix (`vibrance:amount=0` is the identity as a general function of RGB):
    /// the table samples luma at every code and interpolates chroma on a 33-node grid, and reads a block's chroma at
    /// its mean luma; on a real photo that stays within 40 dB of the exact result.
    func testYUVTableAgreesWithExactKernel() throws {
        let frame = try astronaut("yuv420p", .i420)
        let exact = RawFrames.bytes(try TestSupport.apply("sepia", to: frame))
        let table = RawFrames.bytes(try TestSupport.apply("sepia,vibrance:amount=0", to: frame))
        let psnr = Quality.psnr(exact, table)
        print("YUV table vs exact affine kernel: \(psnr) dB")
        XCTAssertGreaterThanOrEqual(psnr, 40)
    }

    /// Slices change nothing: two threads give the same bytes as one, for each kernel.
    func testThreadsGiveIdenticalResults() throws {
        for (pixelFormat, format) in [("rgba", PixelFormat.rgba), ("yuv420p", .i420), ("nv12", .nv12)] {
            let frame = try astronaut(pixelFormat, format)
            for chain in ["sepia", Self.chain, "mono", "brightness", "gamma:0.7", "threshold"] {
                let one = RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: 1))
                let two = RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: 2))
                XCTAssertEqual(one, two, "\(chain) on \(format)")
            }
        }
    }

    /// Every kernel on tiny and odd frames (a single pixel, one row, one column): chunks that run past a row end stay in
    /// the row padding, and the result does not depend on the thread count.
    func testTinyAndOddFrames() throws {
        for format in PixelFormat.allCases {
            for (width, height) in [(1, 1), (2, 2), (3, 5), (17, 1), (1, 9)] {
                let count = (0..<format.planeCount).reduce(0) { total, plane in
                    let size = format.planeSize(plane, width: width, height: height)
                    return total + size.width * size.height * format.bytesPerPixel(plane: plane)
                }
                let frame = RawFrames.frame((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 67 &+ 5) }, format: format,
                                              width: width, height: height)
                for chain in ["sepia", "sepia,hue:angle=10", "mono", "brightness", "gamma:0.7", "lut:file=\(try cubePath())"] {
                    let one = RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: 1))
                    let two = RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: 2))
                    XCTAssertEqual(one, two, "\(chain) on \(format) \(width)x\(height)")
                    // Gray frames through a run that makes colour come out RGBA (CatalogColorTests checks the values).
                    let output = try FilterChain(parsing: chain).makeProcessor(threads: 1).configure(for: FrameFormat(of: frame))
                    XCTAssertEqual(one.count, output.pixelFormat == format ? count : width * height * 4, "\(chain) on \(format)")
                    XCTAssertEqual(output.pixelFormat, format == .gray8 && chain != "mono" && chain != "brightness" && chain != "gamma:0.7"
                                   ? .rgba : format, "\(chain) on \(format)")
                }
            }
        }
    }

    private var cubeFolder: String?
    private func cubePath() throws -> String {
        let folder = try cubeFolder ?? TestSupport.temporaryFolder()
        let path = folder + "/grade.cube"
        if cubeFolder == nil {
            try FFmpegReferenceTests.cube3D(nodes: 5).write(toFile: path, atomically: true, encoding: .utf8)
            cubeFolder = folder
        }
        return path
    }

    override func tearDown() {
        if let cubeFolder { try? FileManager.default.removeItem(atPath: cubeFolder) }
        cubeFolder = nil
    }

    /// A vignette right after a colour run is applied inside the run's pass: on RGBA band by band after the kernel,
    /// the same, byte for byte, as the two stages one after the other; on I420/NV12 by the run kernel as it converts
    /// back to Y'CbCr, before rounding (the two stages round twice): within 1 code. Every format, one or two threads.
    func testVignetteFusedIntoTheColorPassEqualsTwoStages() throws {
        for (format, name) in [(PixelFormat.i420, "yuv420p"), (.nv12, "nv12"), (.rgba, "rgba")] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (250, 171)),
                                        format: format, width: 250, height: 171)
            let separate = try TestSupport.apply("vignette:radius=0.3:intensity=0.8", to: try TestSupport.apply("sepia,hue:angle=20", to: frame))
            for threads in [1, 2] {
                let fused = try TestSupport.apply("sepia,hue:angle=20,vignette:radius=0.3:intensity=0.8", to: frame, threads: threads)
                let worst = TestSupport.maxDifference(RawFrames.bytes(fused), RawFrames.bytes(separate))
                XCTAssertLessThanOrEqual(worst, format == .rgba ? 0 : 1, "\(format), \(threads) thread(s)")
            }
        }
    }

    /// A vignette right after a Gaussian blur is applied in the blur's last pass, to the blurred values before they
    /// are rounded: against the two stages one after the other (which round the blurred value, then the darkened
    /// one) every sample is within 1 code, on every format and with one or two threads; the vignette does darken.
    func testVignetteFusedIntoTheBlurMatchesTwoStages() throws {
        for (format, name) in [(PixelFormat.i420, "yuv420p"), (.nv12, "nv12"), (.rgba, "rgba")] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (250, 171)),
                                        format: format, width: 250, height: 171)
            let blurred = try TestSupport.apply("gaussian-blur:radius=5", to: frame)
            let separate = try TestSupport.apply("vignette:radius=0.3:intensity=0.8", to: blurred)
            XCTAssertGreaterThan(TestSupport.maxDifference(RawFrames.bytes(blurred), RawFrames.bytes(separate)), 20)
            for threads in [1, 2] {
                let fused = try TestSupport.apply("gaussian-blur:radius=5,vignette:radius=0.3:intensity=0.8", to: frame, threads: threads)
                XCTAssertLessThanOrEqual(TestSupport.maxDifference(RawFrames.bytes(fused), RawFrames.bytes(separate)), 1,
                                         "\(format), \(threads) thread(s)")
            }
        }
    }

    /// A frame whose pixels are shared is copied, not changed behind its other holder's back.
    func testSharedInputIsNotModified() throws {
        let frame = RawFrames.frame((0..<64).map { UInt8($0 * 3) }, format: .rgba, width: 4, height: 4)
        let before = RawFrames.bytes(frame)
        _ = try TestSupport.apply("invert", to: frame)
        XCTAssertEqual(RawFrames.bytes(frame), before)
    }

    /// Malformed `.cube` files: one line naming the file and the line.
    func testMalformedCubeFilesNameFileAndLine() throws {
        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cases: [(String, String)] = [
            ("LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 x\n1 1 1\n", ":8:"),
            ("LUT_3D_SIZE 2\n0 0 0\n1 0 0\n", ":3: the table has 2 entries"),
            ("LUT_3D_SIZE 1\n", ":1: LUT_3D_SIZE must be"),
            ("LUT_3D_SIZE 300\n", ":1:"),
            ("# no size\n0 0 0\n", ":2: table values before"),
            ("LUT_3D_SIZE 2\nFOO 1\n", ":2: unknown keyword 'FOO'"),
            ("LUT_1D_SIZE 2\n0 0\n1 1 1\n", ":2: a table entry needs 3 numbers"),
            ("DOMAIN_MIN 0 0\nLUT_1D_SIZE 2\n0 0 0\n1 1 1\n", ":1: DOMAIN_MIN needs 3 numbers"),
            ("", "no LUT_1D_SIZE or LUT_3D_SIZE"),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let path = folder + "/bad\(index).cube"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let processor = try FilterChain(parsing: "lut:file=\(path)").makeProcessor(threads: 1)
            XCTAssertThrowsError(try processor.configure(for: FrameFormat(pixelFormat: .rgba, width: 8, height: 8))) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.hasPrefix("lut: \(path)"), message)
                XCTAssertTrue(message.contains(expected), "'\(message)' should contain '\(expected)'")
                XCTAssertFalse(message.contains("\n"))
            }
        }
        XCTAssertThrowsError(try CubeFile(contentsOf: folder + "/missing.cube")) { error in
            XCTAssertTrue(String(describing: error).contains("missing.cube: cannot read the file"))
        }
    }
}
