import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// The four ink effects (edge-work, line-overlay, comic-effect, cartoon) on every format (I420, NV12, RGBA, BGRA, GRAY8)
/// at an odd size (37×23), on one and two threads, against the definition in InkEffects.swift evaluated here in Double:
/// e = √(gx² + gy²)/4 of the Sobel responses on Y' (edges repeated); hard ink k = 0 where e ≥ threshold, soft ink
/// k = 1 − clamp((e − threshold)·contrast, 0, 1); output = paint(R'G'B')·k with paint white, the colour, or the colour
/// posterized (round(v·(L − 1))/(L − 1), halves away from zero). YUV: R'G'B' decoded from each pixel's luma code and its
/// block's chroma, clamped to 0…1; output luma per pixel, chroma from the mean of the block's pixels.
///
/// Tolerance: every output code within 0.51 of the exact value: ½ for rounding to a code, plus the stage's Float error
/// (luma and q in Float to ~10⁻⁷ relative, √q from a 12-bit estimate and a Newton step to 3·10⁻⁷: k within 10⁻⁵, under
/// 0.01 codes). A pixel whose e lies within 10⁻⁴ of a hard threshold, or a channel within 10⁻⁴ (of a level step,
/// in units of v·(L − 1)) of halfway between two levels, may go either way in Float: such pixels (and their chroma
/// blocks) are counted as undecided and skipped; they must stay under 2 % of the pixels so that the test still checks.
final class InkEffectTests: XCTestCase {
    let width = 37, height = 23

    struct Effect {
        let chain: String
        let hard: Bool
        let threshold: Double, contrast: Double
        /// Posterize levels; 0: the colour itself; nil: white.
        let levels: Int?
    }

    let effects = [
        Effect(chain: "edge-work:threshold=0.06", hard: true, threshold: 0.06, contrast: 0, levels: nil),
        Effect(chain: "line-overlay:threshold=0.04:contrast=25", hard: false, threshold: 0.04, contrast: 25, levels: 0),
        Effect(chain: "comic-effect:threshold=0.1", hard: true, threshold: 0.1, contrast: 0, levels: 5),
        Effect(chain: "cartoon:levels=4:threshold=0.05:contrast=12", hard: false, threshold: 0.05, contrast: 12, levels: 4),
    ]

    /// The exact output colour (R'G'B' in 0…1) of every pixel of a picture, and whether it is undecided.
    func reference(_ effect: Effect, rgb: [SIMD3<Double>], weights: SIMD3<Double>) -> (colors: [SIMD3<Double>], undecided: [Bool]) {
        let luma = rgb.map { ($0 * weights).sum() }
        func l(_ x: Int, _ y: Int) -> Double { luma[min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)] }
        var colors: [SIMD3<Double>] = [], undecided: [Bool] = []
        for i in 0..<rgb.count {
            let (x, y) = (i % width, i / width)
            let gx = l(x + 1, y - 1) + 2 * l(x + 1, y) + l(x + 1, y + 1) - l(x - 1, y - 1) - 2 * l(x - 1, y) - l(x - 1, y + 1)
            let gy = l(x - 1, y + 1) + 2 * l(x, y + 1) + l(x + 1, y + 1) - l(x - 1, y - 1) - 2 * l(x, y - 1) - l(x + 1, y - 1)
            let e = (gx * gx + gy * gy).squareRoot() / 4
            let k = effect.hard ? (e >= effect.threshold ? 0 : 1) : 1 - min(max((e - effect.threshold) * effect.contrast, 0), 1)
            var close = effect.hard && abs(e - effect.threshold) < 1e-4
            var paint = SIMD3<Double>(repeating: 1)
            if let levels = effect.levels {
                paint = rgb[i]
                if levels > 0 {
                    let steps = paint * Double(levels - 1)
                    close = close || (0..<3).contains { abs(steps[$0] - steps[$0].rounded(.down) - 0.5) < 1e-4 }
                    paint = steps.rounded(.toNearestOrAwayFromZero) / Double(levels - 1)
                }
            }
            colors.append(paint * k)
            undecided.append(close)
        }
        return (colors, undecided)
    }

    func run(_ chain: String, _ bytes: [UInt8], format: PixelFormat, color: ColorDescription, threads: Int) throws -> [UInt8] {
        let frame = RawFrames.frame(bytes, format: format, width: width, height: height, color: color)
        return RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: threads))
    }

    /// Deterministic bytes (a linear congruential generator).
    func noise(_ count: Int, seed: UInt32) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    func testPackedAndGray() throws {
        let count = width * height
        let photo = try SpatialFixtures.decode("astronaut.png", pixelFormat: "rgba", size: (width, height))
        var (rgba, bgra) = (photo, photo)
        for i in 0..<count {
            bgra.swapAt(4 * i, 4 * i + 2)
            // Alpha varies, to see that it is kept.
            (rgba[4 * i + 3], bgra[4 * i + 3]) = (UInt8(i % 251), UInt8(i % 241))
        }
        let gray = try SpatialFixtures.decode("astronaut.png", pixelFormat: "gray", size: (width, height))
        let color = ColorDescription.bt601
        let weights = SIMD3(0.299, 0.587, 0.114)
        for effect in effects {
            for (format, bytes) in [(PixelFormat.rgba, rgba), (.bgra, bgra), (.gray8, gray)] {
                let rgb: [SIMD3<Double>] = (0..<count).map { i in
                    switch format {
                    case .gray8: SIMD3(repeating: Double(gray[i]) / 255)
                    case .bgra: SIMD3(Double(bytes[4 * i + 2]), Double(bytes[4 * i + 1]), Double(bytes[4 * i])) / 255
                    default: SIMD3(Double(bytes[4 * i]), Double(bytes[4 * i + 1]), Double(bytes[4 * i + 2])) / 255
                    }
                }
                // Gray: R' = G' = B', so Y' = (Kr + Kg + Kb)·v = v.
                let (colors, undecided) = reference(effect, rgb: rgb, weights: weights)
                XCTAssertLessThan(Double(undecided.filter { $0 }.count), 0.02 * Double(count), "\(effect.chain) on \(format)")
                for threads in [1, 2] {
                    let output = try run(effect.chain, bytes, format: format, color: color, threads: threads)
                    XCTAssertEqual(output.count, 4 * count)
                    var worst = 0.0, alphaKept = true
                    for i in 0..<count where !undecided[i] {
                        var want = colors[i] * 255
                        if format == .bgra { want = SIMD3(want.z, want.y, want.x) }
                        for channel in 0..<3 { worst = max(worst, abs(Double(output[4 * i + channel]) - want[channel])) }
                        alphaKept = alphaKept && output[4 * i + 3] == (format == .gray8 ? 255 : bytes[4 * i + 3])
                    }
                    XCTAssertLessThanOrEqual(worst, 0.51, "\(effect.chain) on \(format), \(threads) thread(s)")
                    XCTAssertTrue(alphaKept, "\(effect.chain) on \(format): alpha")
                }
            }
        }
    }

    func testYUV() throws {
        let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
        let (lumaCount, quarter) = (width * height, chromaWidth * chromaHeight)
        let photo = try SpatialFixtures.decode("astronaut.png", pixelFormat: "yuv420p", size: (width, height))
        // The photo's own chroma (inside the R'G'B' cube), and random chroma under its luma (most pixels outside the cube,
        // where the clamped colour's luma differs from the luma code).
        let pictures = [photo, Array(photo[..<lumaCount]) + noise(2 * quarter, seed: 9)]
        for (index, i420) in pictures.enumerated() {
            var nv12 = Array(i420[..<lumaCount])
            for i in 0..<quarter { nv12 += [i420[lumaCount + i], i420[lumaCount + quarter + i]] }
            for color in [ColorDescription.bt601, ColorDescription(matrix: .bt709, range: .full)] {
                let (kr, kb) = (Double(color.matrix.weights.kr), Double(color.matrix.weights.kb))
                let kg = 1 - kr - kb
                let (offset, lumaScale, chromaScale): (Double, Double, Double) = color.range == .limited ? (16, 219, 224) : (0, 255, 255)
                let rgb: [SIMD3<Double>] = (0..<lumaCount).map { i in
                    let c = (i / width / 2) * chromaWidth + (i % width) / 2
                    let l = (Double(i420[i]) - offset) / lumaScale
                    let pb = (Double(i420[lumaCount + c]) - 128) / chromaScale, pr = (Double(i420[lumaCount + quarter + c]) - 128) / chromaScale
                    let r = l + 2 * (1 - kr) * pr, b = l + 2 * (1 - kb) * pb
                    let value = SIMD3(r, (l - kr * r - kb * b) / kg, b)
                    return value.replacing(with: 0, where: value .< 0).replacing(with: 1, where: value .> 1)
                }
                for effect in effects {
                    let (colors, undecided) = reference(effect, rgb: rgb, weights: SIMD3(kr, kg, kb))
                    XCTAssertLessThan(Double(undecided.filter { $0 }.count), 0.02 * Double(lumaCount), "\(effect.chain), picture \(index)")
                    // Exact codes: luma per pixel; Cb, Cr from the block's mean colour (skipped when a pixel of it is undecided).
                    let lumaCodes = colors.map { offset + lumaScale * ($0 * SIMD3(kr, kg, kb)).sum() }
                    var chroma: [(Double, Double)?] = []
                    for cy in 0..<chromaHeight {
                        for cx in 0..<chromaWidth {
                            let block = [(2 * cx, 2 * cy), (2 * cx + 1, 2 * cy), (2 * cx, 2 * cy + 1), (2 * cx + 1, 2 * cy + 1)]
                                .filter { $0.0 < width && $0.1 < height }.map { $0.1 * width + $0.0 }
                            if block.contains(where: { undecided[$0] }) {
                                chroma.append(nil)
                                continue
                            }
                            let mean = block.map { colors[$0] }.reduce(SIMD3<Double>.zero, +) / Double(block.count)
                            let y = (mean * SIMD3(kr, kg, kb)).sum()
                            let cb = 128 + chromaScale * (mean.z - y) / (2 * (1 - kb)), cr = 128 + chromaScale * (mean.x - y) / (2 * (1 - kr))
                            chroma.append((min(max(cb, 0), 255), min(max(cr, 0), 255)))
                        }
                    }
                    for (format, bytes) in [(PixelFormat.i420, i420), (.nv12, nv12)] {
                        for threads in [1, 2] {
                            let output = try run(effect.chain, bytes, format: format, color: color, threads: threads)
                            XCTAssertEqual(output.count, lumaCount + 2 * quarter)
                            var worst = 0.0
                            for i in 0..<lumaCount where !undecided[i] { worst = max(worst, abs(Double(output[i]) - lumaCodes[i])) }
                            for c in 0..<quarter {
                                guard let (cb, cr) = chroma[c] else { continue }
                                let (u, v) = format == .nv12 ? (output[lumaCount + 2 * c], output[lumaCount + 2 * c + 1])
                                    : (output[lumaCount + c], output[lumaCount + quarter + c])
                                worst = max(worst, abs(Double(u) - cb), abs(Double(v) - cr))
                            }
                            XCTAssertLessThanOrEqual(worst, 0.51, "\(effect.chain) on \(format) \(color), picture \(index), \(threads) thread(s)")
                        }
                    }
                }
            }
        }
    }
}
