import Foundation
import VFXCore
import VFXPipeline
@testable import VFXFilters
import VFXTestSupport
import XCTest

/// Affine colour filters that keep luma and chroma apart run plane by plane on I420/NV12 (`PlanarYUVKernel`).
/// Checked against the per-plane formulas that `invert` and `hue` are.
final class PlanarYUVTests: XCTestCase, RandomYUVFrames {
    let size = 512
    var width: Int { size }
    var height: Int { size }

    func i420() throws -> [UInt8] { try SpatialFixtures.decode("astronaut.png", pixelFormat: "yuv420p") }

    /// RGB inversion on limited-range Y'CbCr is, per plane: Y → 16 + 235 − Y = 251 − Y and C → 256 − C (255 at most),
    /// exactly (integer results, no rounding). FFmpeg's `negate` (the benchmark's equivalent) does the same work per
    /// plane but on full-range codes (Y → 255 − Y, C → 255 − C): 4 codes apart on luma, 1 on chroma, as checked here.
    func testInvertIsPerPlaneNegation() throws {
        let input = try i420()
        let frame = RawFrames.frame(input, format: .i420, width: size, height: size)
        let ours = RawFrames.bytes(try TestSupport.apply("invert", to: frame))
        let theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(frame, name: "yuv420p", filter: "negate"))
        let luma = size * size
        for index in input.indices {
            let value = Int(input[index])
            let want = index < luma ? min(max(251 - value, 0), 255) : min(256 - value, 255)
            if Int(ours[index]) != want { XCTFail("sample \(index): \(ours[index]) for \(value), want \(want)"); break }
            if index < luma, (4...251).contains(value) { XCTAssertEqual(Int(theirs[index]) - Int(ours[index]), 4) }
        }
    }

    /// `hue` keeps luma and turns (Cb − 128, Cr − 128) by the angle: ≤ 1 code (rounding), on I420 and NV12.
    func testHueTurnsChromaPlaneByPlane() throws {
        let input = try i420()
        let luma = size * size, quarter = luma / 4
        let angle = 50 * Double.pi / 180
        let output = RawFrames.bytes(try TestSupport.apply("hue:angle=50", to: RawFrames.frame(input, format: .i420, width: size, height: size)))
        XCTAssertEqual(Array(output[..<luma]), Array(input[..<luma]))
        var worst = 0.0
        for i in 0..<quarter {
            let cb = Double(input[luma + i]) - 128, cr = Double(input[luma + quarter + i]) - 128
            let wantCb = min(max(128 + cos(angle) * cb - sin(angle) * cr, 0), 255)
            let wantCr = min(max(128 + sin(angle) * cb + cos(angle) * cr, 0), 255)
            worst = max(worst, abs(Double(output[luma + i]) - wantCb.rounded()), abs(Double(output[luma + quarter + i]) - wantCr.rounded()))
        }
        XCTAssertLessThanOrEqual(worst, 1)
        let nv12Input = Array(input[..<luma]) + (0..<quarter).flatMap { [input[luma + $0], input[luma + quarter + $0]] }
        let nv12 = RawFrames.bytes(try TestSupport.apply("hue:angle=50", to: RawFrames.frame(nv12Input, format: .nv12, width: size, height: size)))
        XCTAssertEqual((0..<quarter).map { nv12[luma + 2 * $0] }, Array(output[luma..<(luma + quarter)]))
        XCTAssertEqual((0..<quarter).map { nv12[luma + 2 * $0 + 1] }, Array(output[(luma + quarter)...]))
    }

    /// With AVX-512 VBMI a run's maps go through byte tables made by its own loops (`PlanarYUVFixedPoint.Tables`):
    /// the same bytes as the arithmetic, tolerance 0. Runs whose chroma steps keep Cb and Cr apart (both maps are tables),
    /// one that mixes them (luma only), luma bounds narrower than 0…255, and chroma steps folded with narrowed bounds; on
    /// the photo and a random frame, I420 and NV12, at widths whose rows end inside a vector.
    func testTablesGiveTheArithmeticBytes() throws {
        typealias Step = PlanarYUVKernel.ChromaStep
        let saturate = Step(cbFromCb: 1.3, cbFromCr: 0, cbOffset: 128, crFromCb: 0, crFromCr: 1.3, crOffset: 128)
        let invert = Step(cbFromCb: -1, cbFromCr: 0, cbOffset: 128, crFromCb: 0, crFromCr: -1, crOffset: 128)
        let turn = Step(cbFromCb: 0.64, cbFromCr: -0.77, cbOffset: 128, crFromCb: 0.77, crFromCr: 0.64, crOffset: 128)
        var narrowed = Step(cbFromCb: 2.5, cbFromCr: 0, cbOffset: 120, crFromCb: 0, crFromCr: 0.6, crOffset: 140)
        narrowed.bounds = (SIMD2(20, 40), SIMD2(230, 200))
        // `tables`: whether the chroma steps become tables (none of them mixes Cb with Cr).
        let runs: [(gain: Float, offset: Float, low: Float, high: Float, steps: [Step], tables: Bool)] = [
            (1.2, -25.6, 0, 255, [saturate], true), (-1, 251, 0, 255, [invert], true), (1, 0, 0, 255, [turn], false),
            (1.56, -10, 30, 220, [narrowed, invert], true), (0.8, 12, 0, 255, [], false),
        ]
        let photo = try i420()
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x7ab1e5)
        for (width, height) in [(size, size), (182, 98)] {
            let luma = width * height, quarter = ((width + 1) / 2) * ((height + 1) / 2)
            let random = (0..<(luma + 2 * quarter)).map { _ in generator.byte() }
            let inputs = width == size ? [photo, random] : [random]
            for input in inputs {
                let nv12 = Array(input[..<luma]) + (0..<quarter).flatMap { [input[luma + $0], input[luma + quarter + $0]] }
                for (format, bytes) in [(PixelFormat.i420, input), (.nv12, nv12)] {
                    for run in runs {
                        var outputs: [[UInt8]] = []
                        for wide in [false, true] {
                            let kernel = try XCTUnwrap(PlanarYUVFixedPoint(lumaGain: run.gain, offset: run.offset, low: run.low,
                                                                          high: run.high, chroma: run.steps,
                                                                          interleaved: format == .nv12, wide: wide))
                            XCTAssertEqual(kernel.tables?.cb != nil, wide && run.tables)
                            var frame = RawFrames.frame(bytes, format: format, width: width, height: height, padding: 255)
                            frame.withMutablePlanes { kernel.apply(to: $0, width: width, height: height, slices: SliceRunner(threads: 2)) }
                            outputs.append(RawFrames.bytes(frame))
                        }
                        XCTAssertEqual(outputs[0], outputs[1], "\(run), \(format), \(width)×\(height)")
                    }
                }
            }
        }
    }

    /// Chroma steps fold where the clamps between them allow (`PlanarYUVKernel.ChromaStep.followed(by:inputs:)`): into
    /// the step before, a step that keeps Cb and Cr apart always (its clamp takes the other's, mapped), any other step
    /// only after a step whose clamp cannot act. Every (Cb, Cr) pair, on I420 and NV12, against the filters' per-plane
    /// formulas applied one after the other in doubles, each clipped to 0…255: within 1 code (one rounding at the end,
    /// of a fixed point within 0.03 codes of the exact value), and exact for at least 99 % of samples.
    func testChromaStepsFoldWhereTheirClampsAllow() throws {
        typealias PerPlane = ColorRunKernelTests.PerPlane
        let invert = PerPlane(chroma: { (PerPlane.clip(256 - $0), PerPlane.clip(256 - $1)) })
        let cases: [(chain: String, steps: Int, filters: [PerPlane])] = [
            // Turn, then saturation and invert (each keeps Cb and Cr apart): one step.
            ("hue:angle=30,color-controls:saturation=1.3,invert", 1,
             [.hue(degrees: 30), .colorControls(saturation: 1.3), invert]),
            // Saturation 0.5 stays inside 0…255, so the turn after it folds too.
            ("color-controls:saturation=0.5,hue:angle=40", 1, [.colorControls(saturation: 0.5), .hue(degrees: 40)]),
            // Saturation 1.8 clips, and a turn mixes what it clipped: two steps.
            ("color-controls:saturation=1.8,hue:angle=40", 2, [.colorControls(saturation: 1.8), .hue(degrees: 40)]),
            // The first clip, carried through the second saturation, narrows the bounds to about ±51 codes.
            ("color-controls:saturation=2,color-controls:saturation=0.4", 1,
             [.colorControls(saturation: 2), .colorControls(saturation: 0.4)]),
            // (Angles whose sines put no value on a half code: at 60°, half the samples would be ties.)
            ("hue:angle=50,color-controls:saturation=1.5,hue:angle=-35,invert", 2,
             [.hue(degrees: 50), .colorControls(saturation: 1.5), .hue(degrees: -35), invert]),
        ]
        let luma = size * size, quarter = luma / 4, side = size / 2
        // Every pair once: Cb along x, Cr along y.
        let input = Array(try i420()[..<luma]) + (0..<quarter).map { UInt8($0 % side) } + (0..<quarter).map { UInt8($0 / side) }
        let format = FrameFormat(pixelFormat: .i420, width: size, height: size)
        for (chain, stepCount, filters) in cases {
            let matrices = try transforms(chain, format: format).map { transform -> ColorMatrix in
                guard case .affine(let matrix) = transform.kind else { throw XCTSkip("\(chain): not a matrix") }
                return matrix
            }
            let kernel = try XCTUnwrap(PlanarYUVKernel(matrices: matrices, coding: YUVCoding(format.color), chromaInterleaved: false))
            XCTAssertEqual(kernel.fixedPoint.chroma.count, stepCount, chain)
            let output = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(input, format: .i420, width: size, height: size)))
            var (worst, exact) = (0.0, 0)
            for i in 0..<quarter {
                var (cb, cr) = (Double(input[luma + i]), Double(input[luma + quarter + i]))
                for filter in filters { (cb, cr) = filter.chroma(cb, cr) }
                let errors = (abs(Double(output[luma + i]) - cb.rounded()), abs(Double(output[luma + quarter + i]) - cr.rounded()))
                worst = max(worst, errors.0, errors.1)
                exact += (errors.0 == 0 ? 1 : 0) + (errors.1 == 0 ? 1 : 0)
            }
            XCTAssertLessThanOrEqual(worst, 1, chain)
            XCTAssertGreaterThanOrEqual(Double(exact) / Double(2 * quarter), 0.99, chain)
            let nv12 = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(self.nv12(input), format: .nv12, width: size, height: size)))
            XCTAssertEqual(i420(fromNV12: nv12), output, chain)
        }
    }
}
