import Foundation
import VFXCore
@testable import VFXVision
import XCTest

/// The image-to-tensor step against formulas: bilinear sampling reproduces a linear ramp exactly at the
/// sampled coordinate (frame pixel `left + i · width / tensorWidth`, rotated about the region's centre), a zero
/// border reads black, and YUV is converted with the frame's matrix and range. Tolerance 1e-3 (float rounding).
final class TensorSamplerTests: XCTestCase {
    /// An RGBA frame with R = x, G = 2y, B = 100 (x + 2y < 256 inside the test's regions).
    private func ramp(width: Int, height: Int) -> VideoFrame {
        var frame = VideoFrame(format: .rgba, width: width, height: height)
        frame.withMutablePlanes { planes in
            for y in 0..<height {
                let row = planes[0].row(y)
                for x in 0..<width {
                    row[4 * x] = UInt8(x); row[4 * x + 1] = UInt8(2 * y); row[4 * x + 2] = 100; row[4 * x + 3] = 255
                }
            }
        }
        return frame
    }

    func testAxisAlignedAndRotatedRegionsSampleTheRamp() {
        let frame = ramp(width: 120, height: 100)
        let sampler = TensorSampler(width: 16, height: 12, range: (0, 255), border: .zero)
        var tensor = [Float](repeating: -1, count: 16 * 12 * 3)
        var guide = [Float](repeating: -1, count: 16 * 12)
        for rotation: Float in [0, 0.3, -1.1] {
            let region = PixelRegion(centerX: 60, centerY: 50, width: 48, height: 36, rotation: rotation)
            tensor.withUnsafeMutableBufferPointer { t in
                guide.withUnsafeMutableBufferPointer { sampler.sample(frame, region: region, into: t.baseAddress!, guide: $0.baseAddress!) }
            }
            for j in 0..<12 {
                for i in 0..<16 {
                    let point = region.framePoint(u: Float(i) / 16, v: Float(j) / 12)
                    let index = j * 16 + i
                    XCTAssertEqual(tensor[3 * index], point.x, accuracy: 1e-3, "rotation \(rotation) R at \(i),\(j)")
                    XCTAssertEqual(tensor[3 * index + 1], 2 * point.y, accuracy: 1e-3, "rotation \(rotation) G")
                    XCTAssertEqual(tensor[3 * index + 2], 100, accuracy: 1e-3)
                    XCTAssertEqual(guide[index], 0.299 * point.x + 0.587 * 2 * point.y + 0.114 * 100, accuracy: 1e-2)
                }
            }
        }
    }

    func testZeroBorderReadsBlackAndRangeScales() {
        let frame = ramp(width: 20, height: 20)
        let sampler = TensorSampler(width: 8, height: 8, range: (-1, 1), border: .zero)
        var tensor = [Float](repeating: 0, count: 8 * 8 * 3)
        // The frame sits in the left half of a region twice its width: the right half is outside.
        let region = PixelRegion(centerX: 20, centerY: 10, width: 40, height: 20)
        tensor.withUnsafeMutableBufferPointer { sampler.sample(frame, region: region, into: $0.baseAddress!) }
        for j in 0..<8 {
            XCTAssertEqual(tensor[3 * (j * 8 + 1)], Float(5) / 255 * 2 - 1, accuracy: 1e-4, "inside: x = 5")
            for i in 5..<8 { XCTAssertEqual(tensor[3 * (j * 8 + i) + 2], -1, "outside is black (range minimum)") }
        }
    }

    /// A flat I420 picture: full-range BT.601 gray maps to the same RGB; limited-range BT.709 red-ish codes
    /// follow the conversion formula.
    func testYUVConversionFollowsTheMatrix() {
        func flat(_ y: UInt8, _ u: UInt8, _ v: UInt8, color: ColorDescription) -> [Float] {
            var frame = VideoFrame(format: .i420, width: 10, height: 10, color: color)
            frame.withMutablePlanes { planes in
                for (plane, value) in zip(planes, [y, u, v]) { plane.baseAddress.update(repeating: value, count: plane.bytesPerRow * plane.height) }
            }
            let sampler = TensorSampler(width: 4, height: 4, range: (0, 255), border: .replicate)
            var tensor = [Float](repeating: 0, count: 48)
            tensor.withUnsafeMutableBufferPointer { sampler.sample(frame, region: .frame(width: 10, height: 10), into: $0.baseAddress!) }
            return Array(tensor[0..<3])
        }
        XCTAssertEqual(flat(90, 128, 128, color: .jpeg), [90, 90, 90])
        let (kr, kb): (Float, Float) = (0.2126, 0.0722)
        let y = (Float(100) - 16) * 255 / 219, cb = (Float(110) - 128) * 255 / 224, cr = (Float(170) - 128) * 255 / 224
        let r = y + 2 * (1 - kr) * cr, b = y + 2 * (1 - kb) * cb, g = (y - kr * r - kb * b) / (1 - kr - kb)
        let rgb = flat(100, 110, 170, color: .bt709)
        XCTAssertEqual(rgb[0], r, accuracy: 1e-3)
        XCTAssertEqual(rgb[1], g, accuracy: 1e-3)
        XCTAssertEqual(rgb[2], b, accuracy: 1e-3)
    }
}
