import Foundation
import VFXCore
import VFXPipeline
@testable import VFXFilters
import VFXTestSupport
import XCTest

/// The four halftone screens on every format (I420, NV12, RGBA, BGRA, GRAY8; odd sizes; one and two threads; in
/// place and into a new buffer), against the definition in Halftone.swift evaluated here in Double:
/// g = clamp(½ + (Y' − P)/(1 − sharpness), 0, 1), Y' the luma of the pixel's R'G'B' (YUV: decoded from its code and
/// its 2×2 block's chroma, clamped to the R'G'B' cube), P the pattern at the pixel centre turned by −angle.
///
/// Tolerance: each output code within 0.51 of the exact value (luma code off + scale·g, or byte 255·g): ½ for
/// rounding, plus the stage's Float error: P within 10⁻⁵ here (column tables, products, the circular screen's
/// polynomial and r/w ≤ 10 at these sizes), Y' within 10⁻⁶, over softness ≥ 0.4 times ≤ 255 codes: < 0.01.
/// Chroma of YUV output is exactly 128 (the chroma of every gray); alpha is kept exactly (GRAY8: 255).
final class HalftoneTests: XCTestCase {
    let width = 37, height = 23

    /// Deterministic bytes (a linear congruential generator): about two thirds of random Y'CbCr triples lie outside
    /// the R'G'B' cube.
    func noise(_ count: Int, seed: UInt32) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    struct Setting {
        let pattern: ScreenPattern
        let center: SIMD2<Double>, degrees: Double, period: Double, sharpness: Double

        var chain: String {
            let name = switch pattern {
            case .dot: "dot-screen"
            case .line: "line-screen"
            case .circular: "circular-screen"
            case .hatched: "hatched-screen"
            }
            // circular-screen takes no angle (its rings are the same turned; the reference below turns them anyway).
            let angle = pattern == .circular ? "" : ":angle=\(degrees)"
            return "\(name):center=\(center.x)x\(center.y)\(angle):width=\(period):sharpness=\(sharpness)"
        }

        /// g at pixel (x, y) of a `width`×`height` frame whose pixel has luma `luma`.
        func gray(_ luma: Double, x: Int, y: Int, width: Int, height: Int) -> Double {
            let a = degrees * .pi / 180, k = 2 * Double.pi / period
            let dx = Double(x) + 0.5 - center.x * Double(width), dy = Double(y) + 0.5 - center.y * Double(height)
            let u = dx * cos(a) + dy * sin(a), v = -dx * sin(a) + dy * cos(a)
            let p: Double = switch pattern {
            case .dot: 0.5 + 0.25 * (cos(k * u) + cos(k * v))
            case .line: 0.5 + 0.5 * cos(k * v)
            case .circular: 0.5 + 0.5 * cos(k * (u * u + v * v).squareRoot())
            case .hatched: min(0.5 + 0.5 * cos(k * u), 0.5 + 0.5 * cos(k * v))
            }
            return min(max(0.5 + (luma - p) / (1 - sharpness), 0), 1)
        }
    }

    let settings: [Setting] = [ScreenPattern.dot, .line, .circular, .hatched].flatMap { pattern in
        [Setting(pattern: pattern, center: [0.3, 0.6], degrees: 30, period: 7, sharpness: 0.6),
         Setting(pattern: pattern, center: [0.5, 0.5], degrees: -75, period: 3.5, sharpness: 0.2)]
    }

    /// `chain` on `frame`: through the public chain (the frame is shared, so the stage writes a new buffer) and
    /// through the stage alone with a frame it owns (written in place), on `threads` threads.
    func outputs(_ setting: Setting, _ bytes: [UInt8], format: PixelFormat, color: ColorDescription? = nil,
                 threads: Int) throws -> [[UInt8]] {
        let frame = RawFrames.frame(bytes, format: format, width: width, height: height, color: color)
        let shared = RawFrames.bytes(try TestSupport.apply(setting.chain, to: frame, threads: threads))
        let stage = ScreenProcessor(name: "screen", screen: Screen(pattern: setting.pattern, center: setting.center,
                                                                   angle: setting.degrees * .pi / 180, period: setting.period,
                                                                   softness: 1 - setting.sharpness),
                                    slices: SliceRunner(threads: threads))
        _ = try stage.configure(for: FrameFormat(of: frame))
        let owned = RawFrames.frame(bytes, format: format, width: width, height: height, color: color)
        let inPlace = RawFrames.bytes(try XCTUnwrap(try stage.process(consume owned)))
        return [shared, inPlace]
    }

    func testYUV() throws {
        let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
        let (lumaCount, quarter) = (width * height, chromaWidth * chromaHeight)
        let i420 = noise(lumaCount + 2 * quarter, seed: 7)
        var nv12 = Array(i420[..<lumaCount])
        for i in 0..<quarter { nv12 += [i420[lumaCount + i], i420[lumaCount + quarter + i]] }
        for color in [ColorDescription.bt601, ColorDescription(matrix: .bt709, range: .full)] {
            let (kr, kb) = (Double(color.matrix.weights.kr), Double(color.matrix.weights.kb))
            let kg = 1 - kr - kb
            let (offset, lumaScale, chromaScale): (Double, Double, Double) = color.range == .limited ? (16, 219, 224) : (0, 255, 255)
            var outside = 0
            // Y' of each pixel, and the exact output code per setting.
            let luma: [Double] = (0..<lumaCount).map { i in
                let (x, y) = (i % width, i / width), c = (y / 2) * chromaWidth + x / 2
                let l = (Double(i420[i]) - offset) / lumaScale
                let pb = (Double(i420[lumaCount + c]) - 128) / chromaScale, pr = (Double(i420[lumaCount + quarter + c]) - 128) / chromaScale
                let r = l + 2 * (1 - kr) * pr, b = l + 2 * (1 - kb) * pb
                let rgb = [r, (l - kr * r - kb * b) / kg, b]
                if rgb.contains(where: { $0 < 0 || $0 > 1 }) { outside += 1 }
                let clamped = rgb.map { min(max($0, 0), 1) }
                return kr * clamped[0] + kg * clamped[1] + kb * clamped[2]
            }
            XCTAssertGreaterThan(outside, lumaCount / 3, "the test image should reach outside the R'G'B' cube")
            for setting in settings {
                for (format, bytes) in [(PixelFormat.i420, i420), (.nv12, nv12)] {
                    for threads in [1, 2] {
                        for output in try outputs(setting, bytes, format: format, color: color, threads: threads) {
                            var worst = 0.0
                            for i in 0..<lumaCount {
                                let want = offset + lumaScale * setting.gray(luma[i], x: i % width, y: i / width, width: width, height: height)
                                worst = max(worst, abs(Double(output[i]) - want))
                            }
                            XCTAssertLessThanOrEqual(worst, 0.51, "\(setting.chain) on \(format) \(color), \(threads) thread(s)")
                            XCTAssertTrue(output[lumaCount...].allSatisfy { $0 == 128 }, "\(setting.chain) on \(format): chroma")
                        }
                    }
                }
            }
        }
    }

    func testPackedAndGray() throws {
        let count = width * height
        let rgba = noise(4 * count, seed: 11)
        var bgra = rgba
        for i in 0..<count { bgra.swapAt(4 * i, 4 * i + 2) }
        let gray = noise(count, seed: 13)
        let (kr, kb) = (0.299, 0.114)
        let rgbLuma: [Double] = (0..<count).map { i in
            let (r, g, b) = (Double(rgba[4 * i]), Double(rgba[4 * i + 1]), Double(rgba[4 * i + 2]))
            return (kr * r + (1 - kr - kb) * g + kb * b) / 255
        }
        for setting in settings {
            for threads in [1, 2] {
                for (format, bytes) in [(PixelFormat.rgba, rgba), (.bgra, bgra), (.gray8, gray)] {
                    for output in try outputs(setting, bytes, format: format, threads: threads) {
                        XCTAssertEqual(output.count, 4 * count)
                        var worst = 0.0, alphaKept = true
                        for i in 0..<count {
                            let luma = format == .gray8 ? Double(gray[i]) / 255 : rgbLuma[i]
                            let want = 255 * setting.gray(luma, x: i % width, y: i / width, width: width, height: height)
                            for channel in 0..<3 { worst = max(worst, abs(Double(output[4 * i + channel]) - want)) }
                            alphaKept = alphaKept && output[4 * i + 3] == (format == .gray8 ? 255 : bytes[4 * i + 3])
                        }
                        XCTAssertLessThanOrEqual(worst, 0.51, "\(setting.chain) on \(format), \(threads) thread(s)")
                        XCTAssertTrue(alphaKept, "\(setting.chain) on \(format): alpha")
                    }
                }
            }
        }
    }

    /// A wide frame (2001×3, the pattern's origin in a corner, period 2, so r/w reaches 1000): the column tables do
    /// not drift along the row (dot, line, hatched within 0.51 codes), and the circular screen stays within its
    /// stated bound, ½ + (219 / softness)·(2·10⁻⁶ + 10⁻⁶·r/w) codes (1.05 here).
    func testWideFrame() throws {
        let (wide, rows) = (2001, 3)
        let chroma = ((wide + 1) / 2) * ((rows + 1) / 2)
        let luma = noise(wide * rows, seed: 5)
        let frame = RawFrames.frame(luma + [UInt8](repeating: 128, count: 2 * chroma), format: .i420, width: wide, height: rows)
        for pattern in [ScreenPattern.dot, .line, .circular, .hatched] {
            let setting = Setting(pattern: pattern, center: [0, 0], degrees: 10, period: 2, sharpness: 0.6)
            let output = RawFrames.bytes(try TestSupport.apply(setting.chain, to: frame))
            var worst = 0.0
            for i in 0..<(wide * rows) {
                // Neutral chroma: R' = G' = B' = Y', clamped to 0…1 like every R'G'B'.
                let y = min(max((Double(luma[i]) - 16) / 219, 0), 1)
                let want = 16 + 219 * setting.gray(y, x: i % wide, y: i / wide, width: wide, height: rows)
                worst = max(worst, abs(Double(output[i]) - want))
            }
            let rMax = (Double(wide * wide + rows * rows)).squareRoot() / 2
            let bound = pattern == .circular ? 0.5 + 219 / 0.4 * (2e-6 + 1e-6 * rMax) : 0.51
            XCTAssertLessThanOrEqual(worst, bound, setting.chain)
        }
    }

    /// GRAY8 frames come out RGBA, full range, with the input's matrix, as `configure` says.
    func testGrayOutputFormat() throws {
        let frame = RawFrames.frame(noise(width * height, seed: 3), format: .gray8, width: width, height: height,
                                    color: ColorDescription(matrix: .bt709, range: .full))
        let processor = try FilterChain(parsing: "dot-screen").makeProcessor(threads: 1)
        let format = try processor.configure(for: FrameFormat(of: frame))
        let output = try XCTUnwrap(processor.frames(from: frame).first)
        XCTAssertEqual(format.pixelFormat, .rgba)
        XCTAssertEqual(output.format, .rgba)
        XCTAssertEqual(output.color, format.color)
        XCTAssertEqual(output.color, ColorDescription(matrix: .bt709, range: .full))
    }
}
