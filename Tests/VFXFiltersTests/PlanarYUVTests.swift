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
