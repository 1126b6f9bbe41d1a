import VFXCore
import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// The generators (`checkerboard`, `linear-gradient`, `radial-gradient`) written straight into I420, NV12, RGBA and
/// BGRA frames, against their definitions evaluated here in Double: R'G'B' at each pixel centre (x + ½, y + ½), then
/// for YUV frames the Y'CbCr formulas of BT.601/BT.709 (Y' = Kr·R' + Kg·G' + Kb·B', Pb = (B' − Y')/(2(1 − Kb)),
/// Pr = (R' − Y')/(2(1 − Kr)), limited range 16 + 219·Y', 128 + 224·P, full range 255·Y', 128 + 255·P), luma per pixel
/// and each chroma sample from the mean R'G'B' of the frame pixels of its 2×2 block.
///
/// Tolerance 1 code against the rounded Double value: the stage computes in Float (t, then `base + gain·t`) and
/// rounds, so a value that sits within Float error of a half code may round the other way; anything wrong (a square
/// edge off by a pixel, a chroma block averaged over the wrong pixels, a swapped channel) is off by far more with
/// these colours.
final class GeneratorTests: XCTestCase {
    typealias RGB = SIMD3<Double>

    /// A chain and its definition: R'G'B' at pixel centre p of a width × height frame.
    struct Case: Sendable {
        let chain: String
        let formula: @Sendable (_ p: SIMD2<Double>, _ size: SIMD2<Double>) -> RGB
    }

    static func hex(_ value: Int) -> RGB { RGB(Double(value >> 16 & 255), Double(value >> 8 & 255), Double(value & 255)) / 255 }

    static func mix(_ first: RGB, _ second: RGB, _ t: Double) -> RGB { first + (second - first) * min(max(t, 0), 1) }

    static let cases: [Case] = [
        // Size 5 (odd): every other vertical and horizontal square edge falls inside a 2×2 chroma block.
        Case(chain: "checkerboard:size=5:first=#ff2000:second=#1040c0:origin=0.1x0.3") { p, size in
            let i = Int(((p.x - 0.1 * size.x) / 5).rounded(.down)), j = Int(((p.y - 0.3 * size.y) / 5).rounded(.down))
            return (i + j) & 1 == 0 ? hex(0xff2000) : hex(0x1040c0)
        },
        Case(chain: "checkerboard:size=3:first=#cccccc:second=#202020") { p, _ in
            let i = Int((p.x / 3).rounded(.down)), j = Int((p.y / 3).rounded(.down))
            return (i + j) & 1 == 0 ? hex(0xcccccc) : hex(0x202020)
        },
        Case(chain: "linear-gradient:start=0.2x0.1:end=0.7x0.9:first=#204060:second=#e0c0a0") { p, size in
            let a = SIMD2(0.2, 0.1) * size, b = SIMD2(0.7, 0.9) * size
            return mix(hex(0x204060), hex(0xe0c0a0), ((p - a) * (b - a)).sum() / ((b - a) * (b - a)).sum())
        },
        Case(chain: "linear-gradient:start=0.5x0:end=0.5x1:first=#000080:second=#008080") { p, size in
            mix(hex(0x000080), hex(0x008080), p.y / size.y)
        },
        // Centred: on even heights every row below the centre is copied from its mirror image above it.
        Case(chain: "radial-gradient:outer=0.7:first=#ffffff:second=#000080") { p, size in
            let d = p - size / 2
            return mix(hex(0xffffff), hex(0x000080), (d * d).sum().squareRoot() / (0.7 * size.y))
        },
        Case(chain: "radial-gradient:center=0.4x0.5:inner=0.1:outer=0.6:first=#ffffff:second=#102030") { p, size in
            let c = SIMD2(0.4, 0.5) * size, d = p - c
            return mix(hex(0xffffff), hex(0x102030), ((d * d).sum().squareRoot() - 0.1 * size.y) / (0.5 * size.y))
        },
    ]

    /// Y', Cb, Cr codes (not rounded) of an R'G'B' value, from the standards' constants written again here.
    static func codes(_ rgb: RGB, _ color: ColorDescription) -> RGB {
        let (kr, kb) = color.matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
        let luma = kr * rgb.x + (1 - kr - kb) * rgb.y + kb * rgb.z
        let pb = (rgb.z - luma) / (2 * (1 - kb)), pr = (rgb.x - luma) / (2 * (1 - kr))
        let (lumaScale, lumaOffset, chromaScale) = color.range == .limited ? (219.0, 16.0, 224.0) : (255.0, 0.0, 255.0)
        return RGB(lumaOffset + lumaScale * luma, 128 + chromaScale * pb, 128 + chromaScale * pr)
    }

    /// |stored − rounded expectation|.
    static func error(_ stored: UInt8, _ expected: Double) -> Int { abs(Int(stored) - Int(min(max(expected, 0), 255).rounded())) }

    /// A frame of `format` whose bytes are all 77 (the generators must not read them).
    static func input(_ format: PixelFormat, _ width: Int, _ height: Int, _ color: ColorDescription) -> VideoFrame {
        RawFrames.frame([UInt8](repeating: 77, count: 4 * width * height), format: format, width: width, height: height,
                        color: format.isYUV ? color : ColorDescription(matrix: color.matrix, range: .full))
    }

    /// The worst error of `output` against the case's definition.
    static func worstError(_ output: VideoFrame, _ formula: Case, color: ColorDescription) -> Int {
        let (width, height) = (output.width, output.height)
        let size = SIMD2(Double(width), Double(height))
        func rgb(_ x: Int, _ y: Int) -> RGB { formula.formula(SIMD2(Double(x) + 0.5, Double(y) + 0.5), size) }
        var worst = 0
        if output.format.isRGB {
            let order = output.format == .rgba ? [0, 1, 2] : [2, 1, 0]
            for y in 0..<height {
                let row = output.plane(0).row(y)
                for x in 0..<width {
                    let want = rgb(x, y) * 255
                    for channel in 0..<3 { worst = max(worst, error(row[4 * x + order[channel]], want[channel])) }
                    worst = max(worst, error(row[4 * x + 3], 255))
                }
            }
            return worst
        }
        for y in 0..<height {
            for x in 0..<width { worst = max(worst, error(output.plane(0).row(y)[x], codes(rgb(x, y), color).x)) }
        }
        for cy in 0..<(height + 1) / 2 {
            for cx in 0..<(width + 1) / 2 {
                var sum = RGB.zero, count = 0.0
                for y in (2 * cy)..<min(2 * cy + 2, height) {
                    for x in (2 * cx)..<min(2 * cx + 2, width) {
                        sum += rgb(x, y)
                        count += 1
                    }
                }
                let want = codes(sum / count, color)
                let (cb, cr) = output.format == .nv12
                    ? (output.plane(1).row(cy)[2 * cx], output.plane(1).row(cy)[2 * cx + 1])
                    : (output.plane(1).row(cy)[cx], output.plane(2).row(cy)[cx])
                worst = max(worst, error(cb, want.y), error(cr, want.z))
            }
        }
        return worst
    }

    func testEachFormatSizeAndThreadCountAgainstTheDefinition() throws {
        let colors = [ColorDescription.bt601, ColorDescription(matrix: .bt709, range: .full)]
        for test in Self.cases {
            for format in [PixelFormat.i420, .nv12, .rgba, .bgra] {
                for (width, height) in [(37, 23), (64, 48), (37, 22), (1, 1), (2, 3)] {
                    for threads in [1, 2] {
                        let color = colors[(width + threads) % 2]
                        let output = try TestSupport.apply(test.chain, to: Self.input(format, width, height, color), threads: threads)
                        let label = "\(test.chain) on \(format) \(width)x\(height) \(color), \(threads) thread(s)"
                        XCTAssertEqual(output.format, format, label)
                        XCTAssertLessThanOrEqual(Self.worstError(output, test, color: color), 1, label)
                    }
                }
            }
        }
    }

    /// Gray frames come out RGBA (full range, the input's matrix), as the generators make colour.
    func testGrayFramesComeOutRGBA() throws {
        for test in Self.cases {
            let input = Self.input(.gray8, 37, 23, .bt601)
            let output = try TestSupport.apply(test.chain, to: input, threads: 2)
            XCTAssertEqual(output.format, .rgba, test.chain)
            XCTAssertEqual(output.color, ColorDescription(matrix: .bt601, range: .full), test.chain)
            XCTAssertLessThanOrEqual(Self.worstError(output, test, color: output.color), 1, test.chain)
        }
    }

    /// The YUV output agrees with the RGBA output converted by `VideoFrame.converted(to:)` (what the generators gave
    /// before they wrote YUV planes themselves): within 1 code, as the conversion starts from rounded bytes.
    func testYUVAgreesWithTheFrameConversionOfTheRGBAOutput() throws {
        let color = ColorDescription.bt709
        for test in Self.cases {
            let rgba = try TestSupport.apply(test.chain, to: Self.input(.rgba, 37, 23, color), threads: 1)
            for format in [PixelFormat.i420, .nv12] {
                let direct = try TestSupport.apply(test.chain, to: Self.input(format, 37, 23, color), threads: 1)
                let converted = rgba.converted(to: format, color: color)
                XCTAssertLessThanOrEqual(TestSupport.maxDifference(RawFrames.bytes(direct), RawFrames.bytes(converted)), 1,
                                         "\(test.chain) on \(format)")
            }
        }
    }

    /// A frame the caller still holds is left as it was: the picture goes into another buffer.
    func testASharedInputIsNotWritten() throws {
        for format in [PixelFormat.i420, .rgba] {
            let input = Self.input(format, 37, 23, .bt601)
            _ = try TestSupport.apply(Self.cases[0].chain, to: input, threads: 1)
            XCTAssertTrue(RawFrames.bytes(input).allSatisfy { $0 == 77 }, "\(format)")
        }
    }
}
