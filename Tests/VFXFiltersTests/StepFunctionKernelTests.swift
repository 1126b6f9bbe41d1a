import Foundation
import VFXCore
import VFXPipeline
@testable import VFXFilters
import VFXTestSupport
import XCTest

/// The step functions `FixedPointRunKernel` evaluates in its 16-bit lanes on I420/NV12 (`posterize`'s quantizing,
/// `solarize`'s compare and select, `maximum-component`'s and `minimum-component`'s choice of a channel), alone, after
/// a matrix and before a channel choice, against their definitions written again here and evaluated in doubles.
///
/// The definition (as `ColorRunKernelTests` states it): each pixel's R'G'B' from its luma and its block's chroma (limited
/// range, BT.601 and BT.709), the run's first matrix on it unclipped, then clipped; the run's steps; the output luma;
/// each block's chroma from the mean of its pixels' output R'G'B'.
///
/// Tolerance: every sample within 1 code of the definition rounded (the fixed point is within about 0.1 code before its
/// final rounding), except where the value a step reads lies within `margin` of one of its jumps: the fixed point's
/// R'G'B' is within a few 2⁻¹⁴ of the exact value, so such a value may land on the other side and take the next
/// level or the other branch (a luma sample of that pixel and its block's chroma may then be tens of codes apart).
/// Those samples are counted: at most 0.5 % of a frame's samples (measured: 1 to 11 of 10 235, 0.01–0.11 %), and none
/// elsewhere.
final class StepFunctionKernelTests: XCTestCase, RandomYUVFrames {
    typealias RGB = SIMD3<Double>
    /// Odd sizes: the last column and row of blocks hold one pixel.
    let (width, height) = (101, 67)
    /// A value this close to a jump (0.1 code) may take either side of it in the fixed point, whose R'G'B' before the
    /// step is within a few 2⁻¹⁴ (0.016 code) of the exact value: on these frames a margin of 0.05 code is enough and
    /// 0.01 code is not (samples tens of codes apart outside it).
    static let margin = 0.1 / 255

    struct Case: Sendable {
        let chain: String
        /// The run on a pixel's unclipped R'G'B' (first matrix, its clamp, the steps).
        let run: @Sendable (RGB) -> RGB
        /// How close the values the run's jumping step reads come to its jumps (`.infinity`: the run has no jump).
        let distanceToJump: @Sendable (RGB) -> Double
    }

    static func clamp(_ c: RGB) -> RGB { c.replacing(with: 0, where: c .< 0).replacing(with: 1, where: c .> 1) }

    static func posterized(_ c: RGB, levels: Int) -> RGB {
        let steps = Double(levels - 1)
        return (clamp(c) * steps).rounded(.toNearestOrAwayFromZero) / steps
    }

    /// Distance from each channel to the nearest level boundary (n + ½)/(levels − 1), the smallest of the three.
    static func distanceToLevelBoundary(_ c: RGB, levels: Int) -> Double {
        let steps = Double(levels - 1), v = clamp(c) * steps
        return (0..<3).map { abs(v[$0] - v[$0].rounded(.down) - 0.5) / steps }.min() ?? .infinity
    }

    static func solarized(_ c: RGB, threshold: Double) -> RGB {
        let v = clamp(c)
        return v.replacing(with: 1 - v, where: v .> threshold)
    }

    static func distanceToThreshold(_ c: RGB, threshold: Double) -> Double {
        let v = clamp(c)
        return (0..<3).map { abs(v[$0] - threshold) }.min() ?? .infinity
    }

    /// `sepia` at intensity 0.6 (the original blended with the sepia matrix), unclipped.
    static func sepia(_ c: RGB) -> RGB {
        let full = RGB(0.393 * c.x + 0.769 * c.y + 0.189 * c.z, 0.349 * c.x + 0.686 * c.y + 0.168 * c.z,
                       0.272 * c.x + 0.534 * c.y + 0.131 * c.z)
        return c * 0.4 + full * 0.6
    }

    static let cases: [Case] = [2, 4, 6, 17, 256].map { levels in
        Case(chain: "posterize:levels=\(levels)", run: { posterized($0, levels: levels) },
             distanceToJump: { distanceToLevelBoundary($0, levels: levels) })
    } + [0.3, 0.6].map { threshold in
        Case(chain: "solarize:threshold=\(threshold)", run: { solarized($0, threshold: threshold) },
             distanceToJump: { distanceToThreshold($0, threshold: threshold) })
    } + [
        Case(chain: "maximum-component", run: { RGB(repeating: clamp($0).max()) }, distanceToJump: { _ in .infinity }),
        Case(chain: "minimum-component", run: { RGB(repeating: clamp($0).min()) }, distanceToJump: { _ in .infinity }),
        Case(chain: "sepia:0.6,posterize:levels=5", run: { posterized(clamp(sepia($0)), levels: 5) },
             distanceToJump: { distanceToLevelBoundary(clamp(sepia($0)), levels: 5) }),
        Case(chain: "solarize:threshold=0.6,maximum-component", run: { RGB(repeating: solarized($0, threshold: 0.6).max()) },
             distanceToJump: { distanceToThreshold($0, threshold: 0.6) }),
        Case(chain: "posterize:levels=4,minimum-component", run: { RGB(repeating: posterized($0, levels: 4).min()) },
             distanceToJump: { distanceToLevelBoundary($0, levels: 4) }),
    ]

    /// The definition of `item` on the I420 planes `input` with luma weights (kr, kb): each sample's value, and whether
    /// it depends on a pixel whose step input lies within `margin` of a jump.
    func expected(_ input: [UInt8], _ item: Case, kr: Double, kb: Double) -> (values: [Double], nearJump: [Bool]) {
        let (cw, ch) = chromaSize
        let kg = 1 - kr - kb
        var values = [Double](repeating: 0, count: input.count), nearJump = [Bool](repeating: false, count: input.count)
        for by in 0..<ch {
            for bx in 0..<cw {
                let (cbIndex, crIndex) = (width * height + by * cw + bx, width * height + cw * ch + by * cw + bx)
                let pb = (Double(input[cbIndex]) - 128) / 224, pr = (Double(input[crIndex]) - 128) / 224
                var sum = RGB(), count = 0.0, blockNearJump = false
                for y in (2 * by)..<min(2 * by + 2, height) {
                    for x in (2 * bx)..<min(2 * bx + 2, width) {
                        let l = (Double(input[y * width + x]) - 16) / 219
                        let r = l + 2 * (1 - kr) * pr, b = l + 2 * (1 - kb) * pb
                        let rgb = RGB(r, (l - kr * r - kb * b) / kg, b)
                        let out = Self.clamp(item.run(rgb))
                        values[y * width + x] = 16 + 219 * (kr * out.x + kg * out.y + kb * out.z)
                        nearJump[y * width + x] = item.distanceToJump(rgb) < Self.margin
                        blockNearJump = blockNearJump || nearJump[y * width + x]
                        sum += out
                        count += 1
                    }
                }
                let mean = sum / count
                let luma = kr * mean.x + kg * mean.y + kb * mean.z
                values[cbIndex] = 128 + 224 * (mean.z - luma) / (2 * (1 - kb))
                values[crIndex] = 128 + 224 * (mean.x - luma) / (2 * (1 - kr))
                (nearJump[cbIndex], nearJump[crIndex]) = (blockNearJump, blockNearJump)
            }
        }
        return (values, nearJump)
    }

    /// Each case on I420 and NV12, BT.601 and BT.709, one and two threads: through `FixedPointRunKernel`, and within
    /// 1 code of the definition except next to a jump (see the class comment).
    func testStepFunctionsMatchTheirDefinitions() throws {
        let input = randomI420(seed: 29)
        for (color, kr, kb) in [(ColorDescription.bt601, 0.299, 0.114), (.bt709, 0.2126, 0.0722)] {
            let format = FrameFormat(pixelFormat: .i420, width: width, height: height, color: color)
            for item in Self.cases {
                let run = try transforms(item.chain, format: format)
                XCTAssertTrue(FusedColorProcessor.chooseKernel(for: run, format: format) is FixedPointRunKernel, item.chain)
                let (want, nearJump) = expected(input, item, kr: kr, kb: kb)
                for (pixelFormat, bytes) in [(PixelFormat.i420, input), (.nv12, nv12(input))] {
                    for threads in [1, 2] {
                        let frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height, color: color)
                        var output = RawFrames.bytes(try TestSupport.apply(item.chain, to: frame, threads: threads))
                        if pixelFormat == .nv12 { output = i420(fromNV12: output) }
                        var (worst, apart, near) = (0.0, 0, 0)
                        for index in output.indices {
                            let error = abs(Double(output[index]) - want[index].rounded())
                            if nearJump[index] {
                                near += 1
                                if error > 1 { apart += 1 }
                            } else {
                                worst = max(worst, error)
                            }
                        }
                        let label = "\(item.chain) on \(pixelFormat) \(color), \(threads) thread(s)"
                        XCTAssertLessThanOrEqual(worst, 1, label)
                        XCTAssertLessThanOrEqual(Double(apart), 0.005 * Double(output.count), label)
                        if pixelFormat == .i420 && threads == 1 && apart > 0 {
                            print("\(label): \(apart) of \(output.count) samples more than 1 code apart, all of them among the \(near) next to a jump")
                        }
                    }
                }
            }
        }
    }

    /// The jumps stay exact per channel on RGBA (`RGBChannelKernel`'s tables; `FormulaTests` checks their values), and
    /// a step function outside what the lanes take (a negative threshold, built here directly) is left to the other
    /// kernels.
    func testKernelChoice() throws {
        let rgba = FrameFormat(pixelFormat: .rgba, width: width, height: height)
        for chain in ["posterize:levels=4", "solarize:threshold=0.6", "posterize:levels=3,solarize"] {
            XCTAssertTrue(FusedColorProcessor.chooseKernel(for: try transforms(chain, format: rgba), format: rgba) is RGBChannelKernel, chain)
        }
        let i420 = FrameFormat(pixelFormat: .i420, width: width, height: height)
        XCTAssertNil(FixedPointRunKernel([.invertedAbove(-0.1)], coding: YUVCoding(i420.color), chromaInterleaved: false))
        // Four steps (three after a first matrix that cannot be multiplied with them) are more than the lanes take.
        let long = try transforms("sepia,posterize:levels=4,hue:angle=30,solarize", format: i420)
        XCTAssertTrue(FusedColorProcessor.chooseKernel(for: long, format: i420) is YUVTableKernel)
    }

}
