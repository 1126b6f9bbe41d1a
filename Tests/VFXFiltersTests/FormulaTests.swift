import Foundation
import VFXCore
import VFXTestSupport
import VFXFilters
import XCTest

/// Each color filter on RGBA pixels against its formula, written again here from the documentation and evaluated in
/// double precision. The frame holds 4096 random colors plus the corners of the RGB cube. Frames of this size are
/// BT.601 (luma weights .299 .587 .114).
///
/// Tolerances, by the kernel the compiler picks:
/// - per-channel runs (gamma, exposure, levels, posterize…) are exact 256-entry tables: ≤ 1 code (rounding);
/// - luma-only runs (mono, brightness, threshold…) read luma in quarter codes: ≤ 1 code, and for a step function
///   (threshold) a pixel whose luma is within a quarter code of the step may flip (≤ 0.5 % of pixels);
/// - other runs go through a 33-node 3D table with tetrahedral interpolation: exact for affine maps except near the
///   clip at 0 or 1 (a kink between nodes), smooth curves are off by their curvature over a 1/32 cell: ≤ 6 codes
///   anywhere and ≥ 40 dB overall.
final class FormulaTests: XCTestCase {
    typealias Color = SIMD3<Double>
    static let weights = Color(0.299, 0.587, 0.114)
    static func luma(_ c: Color) -> Double { (c * weights).sum() }
    static func clamp(_ c: Color) -> Color { c.replacing(with: 0, where: c .< 0).replacing(with: 1, where: c .> 1) }

    struct Case: Sendable {
        let chain: String
        let formula: @Sendable (Color) -> Color
        var maxError = 1
        var minPSNR = 45.0
        var allowedFlips = 0.0
    }

    static let cases: [Case] = [
        Case(chain: "invert") { 1 - $0 },
        Case(chain: "gamma:power=0.5") { Color(pow($0.x, 0.5), pow($0.y, 0.5), pow($0.z, 0.5)) },
        Case(chain: "gamma:power=2.2") { Color(pow($0.x, 2.2), pow($0.y, 2.2), pow($0.z, 2.2)) },
        Case(chain: "exposure:ev=1") { c in
            func decode(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
            func encode(_ v: Double) -> Double { v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055 }
            return Color(encode(2 * decode(c.x)), encode(2 * decode(c.y)), encode(2 * decode(c.z)))
        },
        Case(chain: "posterize:levels=4") { ($0 * 3).rounded(.toNearestOrAwayFromZero) / 3 },
        Case(chain: "solarize:threshold=0.6") { c in c.replacing(with: 1 - c, where: c .> 0.6) },
        Case(chain: "levels:black=0.1:white=0.8:gamma=2") { c in
            let t = clamp((c - 0.1) / 0.7)
            return Color(pow(t.x, 0.5), pow(t.y, 0.5), pow(t.z, 0.5))
        },
        Case(chain: "temperature:amount=0.5") { $0 * Color(1.075, 1, 0.925) },
        Case(chain: "color-clamp:low=#202020:high=#e0c0a0") { c in
            let low = Color(32, 32, 32) / 255, high = Color(224, 192, 160) / 255
            return c.replacing(with: low, where: c .< low).replacing(with: high, where: c .> high)
        },
        Case(chain: "mono") { Color(repeating: luma($0)) },
        Case(chain: "brightness:amount=0.2") { c in c + (min(luma(c) + 0.2, 1) - luma(c)) },
        Case(chain: "luma-gamma:power=2") { c in c + (pow(luma(c), 2) - luma(c)) },
        Case(chain: "threshold:threshold=0.4", formula: { Color(repeating: luma($0) >= 0.4 ? 1 : 0) }, allowedFlips: 0.005),
        Case(chain: "photo-noir") { Color(repeating: 0.5 + (luma($0) - 0.5) * 1.5) },
        Case(chain: "sepia:intensity=0.6") { c in
            let sepia = Color(0.393 * c.x + 0.769 * c.y + 0.189 * c.z, 0.349 * c.x + 0.686 * c.y + 0.168 * c.z,
                              0.272 * c.x + 0.534 * c.y + 0.131 * c.z)
            return c * 0.4 + sepia * 0.6
        }.tolerant(),
        Case(chain: "color-controls:brightness=0.1:contrast=1.3:saturation=0.7") { c in
            let l = luma(c)
            return ((Color(repeating: l) + (c - l) * 0.7 + 0.1) - 0.5) * 1.3 + 0.5
        }.tolerant(),
        Case(chain: "hue:angle=120", formula: hueRotated).tolerant(),
        Case(chain: "tint:color=#ff0000:amount=0.5") { c in
            let red = Color(1, 0, 0)
            return luma(c) + (c - luma(c)) * 0.5 + (red - luma(red)) * 0.5
        }.tolerant(),
        Case(chain: "vibrance:amount=0.6") { c in
            let s = c.max() - c.min()
            return luma(c) + (c - luma(c)) * (1 + 0.6 * (1 - s))
        }.tolerant(),
        Case(chain: "channel-swap:order=gbr") { Color($0.y, $0.z, $0.x) }.tolerant(),
        Case(chain: "color-matrix:rr=0.5:rg=0.5:gb=0.3:blue-bias=0.1") { c in
            Color(0.5 * c.x + 0.5 * c.y, c.y + 0.3 * c.z, c.z + 0.1)
        }.tolerant(),
        Case(chain: "false-color:dark=#000080:light=#ffd700") { c in
            let dark = Color(0, 0, 128) / 255, light = Color(255, 215, 0) / 255
            return dark + (light - dark) * luma(c)
        }.tolerant(),
        Case(chain: "color-monochrome:color=#336699:intensity=0.7") { c in
            c + (Color(0.2, 0.4, 0.6) * luma(c) - c) * 0.7
        }.tolerant(),
        Case(chain: "photo-fade") { c in 0.1 + (luma(c) + (c - luma(c)) * 0.6) * 0.8 }.tolerant(),
    ]

    /// Luma kept, (Pb, Pr) turned by 120°.
    static func hueRotated(_ c: Color) -> Color {
        let l: Double = luma(c)
        let pb: Double = (c.z - l) / 1.772
        let pr: Double = (c.x - l) / 1.402
        let a: Double = cos(2 * Double.pi / 3)
        let b: Double = sin(2 * Double.pi / 3)
        let pb2: Double = a * pb - b * pr
        let pr2: Double = b * pb + a * pr
        let red: Double = l + 1.402 * pr2
        let blue: Double = l + 1.772 * pb2
        let green: Double = (l - 0.299 * red - 0.114 * blue) / 0.587
        return Color(red, green, blue)
    }

    static func pixels() -> [UInt8] {
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x5eed)
        var bytes: [UInt8] = []
        for corner in 0..<8 {
            bytes += [corner & 1 == 0 ? 0 : 255, corner & 2 == 0 ? 0 : 255, corner & 4 == 0 ? 0 : 255, 255]
        }
        while bytes.count < 64 * 64 * 4 { bytes += [generator.byte(), generator.byte(), generator.byte(), 255] }
        return bytes
    }

    func testColorFiltersMatchTheirFormulas() throws {
        let input = Self.pixels()
        let frame = RawFrames.frame(input, format: .rgba, width: 64, height: 64)
        for item in Self.cases {
            let output = RawFrames.bytes(try TestSupport.apply(item.chain, to: frame))
            var expected = output
            var worst = 0, flips = 0
            for pixel in stride(from: 0, to: input.count, by: 4) {
                let color = Color(Double(input[pixel]), Double(input[pixel + 1]), Double(input[pixel + 2])) / 255
                let value = Self.clamp(item.formula(color)) * 255
                var flipped = false
                for c in 0..<3 {
                    let want = Int(value[c].rounded())
                    expected[pixel + c] = UInt8(want)
                    let error = abs(Int(output[pixel + c]) - want)
                    if error > item.maxError && item.allowedFlips > 0 { flipped = true } else { worst = max(worst, error) }
                }
                if flipped { flips += 1 }
            }
            XCTAssertLessThanOrEqual(worst, item.maxError, item.chain)
            XCTAssertLessThanOrEqual(Double(flips) / Double(input.count / 4), item.allowedFlips, item.chain)
            if item.allowedFlips == 0 {
                XCTAssertGreaterThanOrEqual(Quality.psnr(output, expected, skipEvery: 4), item.minPSNR, item.chain)
            }
        }
    }

    /// Luma-only and chroma-removing filters on I420 touch only the planes they must, with Y' = 16 + 219·f(luma).
    func testLumaOnlyAndChromaOnlyOnI420() throws {
        let width = 34, height = 18
        let input = (0..<(width * height + 2 * (width / 2) * (height / 2))).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let frame = RawFrames.frame(input, format: .i420, width: width, height: height)
        let lumaCount = width * height

        let mono = RawFrames.bytes(try TestSupport.apply("mono", to: frame))
        XCTAssertEqual(Array(mono[..<lumaCount]), Array(input[..<lumaCount]), "mono keeps luma")
        XCTAssertTrue(mono[lumaCount...].allSatisfy { $0 == 128 }, "mono sets neutral chroma")

        let bright = RawFrames.bytes(try TestSupport.apply("brightness:amount=0.1", to: frame))
        XCTAssertEqual(Array(bright[lumaCount...]), Array(input[lumaCount...]), "brightness keeps chroma")
        for index in 0..<lumaCount {
            let luma = min(max((Double(input[index]) - 16) / 219, 0), 1)
            let want = Int((min(luma + 0.1, 1) * 219 + 16).rounded())
            XCTAssertLessThanOrEqual(abs(Int(bright[index]) - want), 1)
        }
    }
}

extension FormulaTests.Case {
    /// The tolerance of runs that go through the 3D table (see the class comment).
    func tolerant() -> Self {
        var copy = self
        copy.maxError = 6
        copy.minPSNR = 40
        return copy
    }
}

extension SystemRandomNumberGenerator {
    /// A small deterministic generator (xorshift64*) so the test colors are the same on every run.
    struct Seeded {
        var state: UInt64
        mutating func byte() -> UInt8 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return UInt8(truncatingIfNeeded: (state &* 0x2545F4914F6CDD1D) >> 56)
        }
    }
}
