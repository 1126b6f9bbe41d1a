import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// Affine colour filters that keep luma and chroma apart run plane by plane on I420/NV12 (`PlanarYUVKernel`).
/// Checked against the per-plane formulas that `invert` and `hue` are.
final class PlanarYUVTests: XCTestCase {
    let size = 512

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
}
