import Foundation
import VFXCore
@testable import VFXFilters
import VFXTestSupport
import XCTest

/// The second round's blurs against direct evaluations of their definitions on small frames.
final class BlurCatalogTests: XCTestCase {
    let width = 80, height = 56

    func photo(_ format: String) throws -> [UInt8] { try SpatialFixtures.decode("astronaut.png", pixelFormat: format, size: (width, height)) }

    /// Disc blur = the mean over the samples within the radius, rounded half up, exactly (tolerance 0: integer sums
    /// and an exact division). Every plane of gray, RGBA (all four channels), I420 and NV12 (chroma with half the
    /// radius), 83 pixels wide (rows that end in a partial 32-sample step), two and three slices (each slice fills its
    /// own ring of running sums), radii whose discs need one, several and many 16-bit groups of disc rows (45 px, the
    /// costliest reference, on the one-byte layouts), a disc of more than 2¹⁴ samples (the mean by division instead of
    /// the reciprocal), radii larger than the frame (every disc row clamps to the border), and 13×9 frames whose rows
    /// are shorter than one vector step.
    func testDiscBlurIsTheMeanOverADisc() throws {
        for (format, name) in [(PixelFormat.gray8, "gray"), (.rgba, "rgba"), (.i420, "yuv420p"), (.nv12, "nv12")] {
            // One decode (an FFmpeg run) per size, each frame blurred at several radii.
            let frame = try photoFrame(format, name, size: (83, 40))
            for radius in [4.5, 12] { try checkDiscBlur(frame, radius: radius, threads: 2) }
            if format != .rgba { try checkDiscBlur(frame, radius: 45, threads: 2) }
            let small = try photoFrame(format, name, size: (13, 9))
            try checkDiscBlur(small, radius: 6, threads: 1)
            try checkDiscBlur(small, radius: 100, threads: 2)
        }
        try checkDiscBlur(try photoFrame(.gray8, "gray", size: (40, 12)), radius: 80, threads: 3)
        try checkDiscBlur(try photoFrame(.i420, "yuv420p", size: (67, 31)), radius: 9.7, threads: 3)
    }

    private func photoFrame(_ format: PixelFormat, _ name: String, size: (Int, Int)) throws -> VideoFrame {
        RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: size), format: format, width: size.0, height: size.1)
    }

    /// `disc-blur` on `frame` against the integer mean over each sample's disc, plane by plane.
    private func checkDiscBlur(_ frame: VideoFrame, radius: Double, threads: Int) throws {
        let output = try TestSupport.apply("disc-blur:radius=\(radius)", to: frame, threads: threads)
        for index in 0..<frame.planeCount {
            let (source, result) = (SpatialFixtures.rows(frame, index), SpatialFixtures.rows(output, index))
            let c = frame.plane(index).bytesPerPixel, planeWidth = source[0].count / c
            let r = radius * Double(planeWidth) / Double(frame.width), reach = Int(r)
            var wrong = 0
            for y in source.indices {
                for i in source[y].indices {
                    let (x, k) = (i / c, i % c)
                    var sum = 0, count = 0
                    for dy in -reach...reach {
                        let row = source[min(max(y + dy, 0), source.count - 1)]
                        for dx in -reach...reach where Double(dx * dx + dy * dy) <= r * r {
                            sum += Int(row[min(max(x + dx, 0), planeWidth - 1) * c + k])
                            count += 1
                        }
                    }
                    if Int(result[y][i]) != (sum + count / 2) / count { wrong += 1 }
                }
            }
            XCTAssertEqual(wrong, 0, "\(frame.format) \(frame.width)×\(frame.height) plane \(index) radius \(radius), \(threads) slices")
        }
    }

    /// Sigma filter: the mean of the 5×5 neighbours within the threshold (exact integer arithmetic: ≤ 1 code).
    func testNoiseReductionAveragesOnlyCloseValues() throws {
        var image = try photo("gray")
        var generator = SystemRandomNumberGenerator.Seeded(state: 77)
        for i in image.indices { image[i] = UInt8(min(max(Int(image[i]) + Int(generator.byte() % 17) - 8, 0), 255)) }
        let output = RawFrames.bytes(try TestSupport.apply("noise-reduction:threshold=10:radius=2",
                                                           to: RawFrames.frame(image, format: .gray8, width: width, height: height)))
        var worst = 0
        for y in 0..<height {
            for x in 0..<width {
                let center = Int(image[y * width + x])
                var sum = 0, count = 0
                for dy in -2...2 {
                    for dx in -2...2 {
                        let value = Int(image[min(max(y + dy, 0), height - 1) * width + min(max(x + dx, 0), width - 1)])
                        if abs(value - center) <= 10 { sum += value; count += 1 }
                    }
                }
                worst = max(worst, abs(Int(output[y * width + x]) - Int((Double(sum) / Double(count)).rounded())))
            }
        }
        XCTAssertLessThanOrEqual(worst, 1)
        // It keeps a hard edge: a step of 100 codes stays a step.
        let step = (0..<(16 * 8)).map { UInt8($0 % 16 < 8 ? 50 : 150) }
        let kept = RawFrames.bytes(try TestSupport.apply("noise-reduction", to: RawFrames.frame(step, format: .gray8, width: 16, height: 8)))
        XCTAssertEqual(kept, step)
    }

    /// The sigma filter on every plane layout (gray, RGBA with alpha kept, I420, NV12's interleaved chroma), every radius,
    /// a width whose rows end in a partial 32-sample step (83 pixels), rows too short for one step (21 pixels), the
    /// thresholds 0 and 255 (the saturated ends of the closeness range) and two slices: the vector path and the border
    /// path against the definition in integers here, exactly (tolerance 0: the same integer mean, rounded half up).
    func testNoiseReductionMatchesItsDefinitionOnEveryLayout() throws {
        var generator = SystemRandomNumberGenerator.Seeded(state: 5)
        for (format, name) in [(PixelFormat.gray8, "gray"), (.rgba, "rgba"), (.i420, "yuv420p"), (.nv12, "nv12")] {
            for (w, h) in [(83, 30), (21, 9)] {
                var bytes = try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (w, h))
                for i in bytes.indices { bytes[i] = UInt8(min(max(Int(bytes[i]) + Int(generator.byte() % 25) - 12, 0), 255)) }
                let frame = RawFrames.frame(bytes, format: format, width: w, height: h)
                let cases = (1...4).map { (radius: $0, threshold: 9) } + [(radius: 2, threshold: 0), (radius: 3, threshold: 255)]
                for (radius, threshold) in cases {
                    try checkNoiseReduction(frame, radius: radius, threshold: threshold)
                }
            }
        }
    }

    /// The sigma filter's mean (`NoiseReductionProcessor.mean`: x = sum + ⌊count/2⌋ over count in Float, truncated)
    /// against ⌊x / count⌋ in integers for every pair that can occur: every count 1…81 (radius 4's square) with every
    /// sum 0…255·count, sixteen lanes at a time, exactly (tolerance 0). The frames above reach only the pairs their
    /// pictures have; this is the proof by exhaustion of the argument in `mean`'s comment.
    func testNoiseReductionMeanIsExactForEveryCountAndSum() {
        var sums: [Int16] = [], counts: [Int16] = []
        for count in 1...81 {
            for sum in 0...(255 * count) { sums.append(Int16(sum)); counts.append(Int16(count)) }
        }
        while sums.count % 16 != 0 { sums.append(0); counts.append(1) }
        var wrong = 0
        for start in stride(from: 0, to: sums.count, by: 16) {
            let sum = SIMD16<Int16>(sums[start..<(start + 16)]), count = SIMD16<Int16>(counts[start..<(start + 16)])
            let mean = Lanes16.lanes(NoiseReductionProcessor.mean(Lanes16.vector(sum), Lanes16.vector(count)))
            for lane in 0..<16 where Int(mean[lane]) != (Int(sum[lane]) + Int(count[lane]) / 2) / Int(count[lane]) { wrong += 1 }
        }
        XCTAssertEqual(sums.count, 846_944)
        XCTAssertEqual(wrong, 0)
    }

    /// `noise-reduction` on `frame` against the sigma filter's integer mean, plane by plane.
    private func checkNoiseReduction(_ frame: VideoFrame, radius: Int, threshold: Int) throws {
        let output = try TestSupport.apply("noise-reduction:threshold=\(threshold):radius=\(radius)", to: frame, threads: 2)
        for index in 0..<frame.planeCount {
            let (source, result) = (SpatialFixtures.rows(frame, index), SpatialFixtures.rows(output, index))
            let c = frame.plane(index).bytesPerPixel, planeWidth = source[0].count / c
            var wrong = 0
            for y in source.indices {
                for i in source[y].indices {
                    let (x, k) = (i / c, i % c)
                    var expected = Int(source[y][i])
                    if !(frame.format.isRGB && k == 3) {
                        var sum = 0, count = 0
                        for dy in -radius...radius {
                            let row = source[min(max(y + dy, 0), source.count - 1)]
                            for dx in -radius...radius {
                                let value = Int(row[min(max(x + dx, 0), planeWidth - 1) * c + k])
                                if abs(value - expected) <= threshold { sum += value; count += 1 }
                            }
                        }
                        expected = (sum + count / 2) / count
                    }
                    if Int(result[y][i]) != expected { wrong += 1 }
                }
            }
            XCTAssertEqual(wrong, 0, "\(frame.format) \(frame.width)×\(frame.height) plane \(index) radius \(radius) threshold \(threshold)")
        }
    }

    /// Tilt-shift and masked blur = original + w · (gaussian-blur − original), with `gaussian-blur` (tested against an
    /// exact Gaussian in SpatialGaussianBlurTests) as the blurred picture: ≤ 1 code (rounding of the mix).
    func testVariableBlursMixTheGaussianBlurByTheirWeights() throws {
        let image = try photo("gray")
        let frame = RawFrames.frame(image, format: .gray8, width: width, height: height)
        let blurred = RawFrames.bytes(try TestSupport.apply("gaussian-blur:radius=3", to: frame))
        let tilt = RawFrames.bytes(try TestSupport.apply("tilt-shift:center=0.4:width=0.2:falloff=0.3:radius=3", to: frame))
        var worst = 0
        for y in 0..<height {
            let v = (Double(y) + 0.5) / Double(height)
            let w = min(max((abs(v - 0.4) - 0.1) / 0.3, 0), 1)
            for x in 0..<width {
                let i = y * width + x
                // The stage mixes with the unrounded blur: allow the blur's own rounding too.
                let want = Double(image[i]) + w * (Double(blurred[i]) - Double(image[i]))
                worst = max(worst, Int(abs(Double(tilt[i]) - want).rounded(.up)))
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "tilt-shift")

        let folder = try TestSupport.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mask = (0..<(width * height)).flatMap { i -> [UInt8] in let g = UInt8((i % width) * 255 / (width - 1)); return [g, g, g, 255] }
        try Data(mask).write(to: URL(fileURLWithPath: folder + "/mask.rgba"))
        try TestSupport.ffmpeg(["-f", "rawvideo", "-pix_fmt", "rgba", "-s", "\(width)x\(height)", "-i", folder + "/mask.rgba", folder + "/mask.png"])
        let masked = RawFrames.bytes(try TestSupport.apply("masked-variable-blur:mask=\(folder)/mask.png:radius=3", to: frame))
        worst = 0
        for i in 0..<(width * height) {
            let w = Double(mask[4 * i]) / 255
            let want = Double(image[i]) + w * (Double(blurred[i]) - Double(image[i]))
            worst = max(worst, Int(abs(Double(masked[i]) - want).rounded(.up)))
        }
        XCTAssertLessThanOrEqual(worst, 1, "masked-variable-blur")
    }
}
