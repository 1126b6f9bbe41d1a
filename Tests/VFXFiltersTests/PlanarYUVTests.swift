import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// Affine colour filters that keep luma and chroma apart run plane by plane on I420/NV12 (`PlanarYUVKernel`).
/// Checked against FFmpeg's `negate` (the same per-plane definition) and the chroma rotation that `hue` is.
final class PlanarYUVTests: XCTestCase {
    let size = 512

    func i420() throws -> [UInt8] { try SpatialFixtures.decode("astronaut.png", pixelFormat: "yuv420p") }

    /// Limited-range negation: Y → 251 − Y, C → 256 − C (FFmpeg's negval = max + min − value). FFmpeg first clips
    /// samples to the legal range (16…235, 16…240) and we do not, so samples outside it are skipped; on the others
    /// the two agree to the code (≤ 1 where 256 − C = 256 is stored as 255).
    func testInvertMatchesFFmpegNegateOnI420() throws {
        let input = try i420()
        let frame = RawFrames.frame(input, format: .i420, width: size, height: size)
        let ours = RawFrames.bytes(try TestSupport.apply("invert", to: frame))
        let theirs = RawFrames.bytes(try SpatialFixtures.ffmpeg(frame, name: "yuv420p", filter: "negate"))
        var worst = 0, compared = 0
        for index in input.indices {
            let legal = index < size * size ? 16...235 : 16...240
            guard legal.contains(Int(input[index])) else { continue }
            worst = max(worst, abs(Int(ours[index]) - Int(theirs[index])))
            compared += 1
        }
        XCTAssertGreaterThan(compared, input.count * 9 / 10)
        XCTAssertLessThanOrEqual(worst, 1)
        let luma = size * size
        for index in stride(from: 0, to: luma, by: 97) { XCTAssertEqual(Int(ours[index]), 251 - Int(input[index])) }
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
