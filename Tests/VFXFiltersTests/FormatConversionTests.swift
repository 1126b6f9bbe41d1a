import XCTest
import VFXCore
import VFXPipeline
import VFXTestSupport
@testable import VFXFilters

/// A filter that does not take the frames' layout gets them converted first (`FormatConversion`), as FFmpeg's graphs
/// insert a conversion: `mask-to-alpha` (RGBA, BGRA only) on I420, NV12 and gray frames gives exactly what converting
/// the frame to RGBA with `VideoFrame.converted(to:)` and then applying the filter gives (the reference is that
/// two-step path, itself tested in `ColorConversionTests` and `ColorReductionTests`), and the chain says RGBA comes out.
final class FormatConversionTests: XCTestCase {
    func testFilterGetsALayoutItTakes() throws {
        let (width, height) = (37, 23)
        for format in [PixelFormat.i420, .nv12, .gray8] {
            let count = (0..<format.planeCount).reduce(0) { total, plane in
                let size = format.planeSize(plane, width: width, height: height)
                return total + size.width * size.height * format.bytesPerPixel(plane: plane)
            }
            var generator = SystemRandomNumberGenerator.Seeded(state: 11)
            let frame = RawFrames.frame((0..<count).map { _ in generator.byte() }, format: format, width: width, height: height)
            let processor = try FilterChain(parsing: "sepia,mask-to-alpha").makeProcessor(threads: 1)
            let output = try processor.configure(for: FrameFormat(of: frame))
            XCTAssertEqual(output.pixelFormat, .rgba, "\(format)")
            let converted = try XCTUnwrap(processor.frames(from: frame).first)
            let sepia = try TestSupport.apply("sepia", to: frame)
            let expected = try TestSupport.apply("mask-to-alpha", to: sepia.converted(to: .rgba, color: ColorDescription(matrix: sepia.color.matrix, range: .full)))
            XCTAssertEqual(converted.format, .rgba, "\(format)")
            XCTAssertEqual(RawFrames.bytes(converted), RawFrames.bytes(expected), "\(format)")
        }
    }

    /// RGBA and BGRA frames stay as they are; a chain with no such filter has no conversion stage.
    func testNoConversionWhenTheLayoutFits() throws {
        XCTAssertEqual(FormatConversion.target(for: .i420, supported: [.rgba, .bgra]), .rgba)
        XCTAssertEqual(FormatConversion.target(for: .nv12, supported: [.i420, .gray8]), .i420)
        XCTAssertEqual(FormatConversion.target(for: .bgra, supported: [.i420, .gray8]), .i420)
        XCTAssertEqual(FormatConversion.target(for: .bgra, supported: [.rgba]), .rgba)
        let stages = try FilterChainProcessor.compile(try FilterChain(parsing: "sepia,mask-to-alpha"),
                                                       for: FrameFormat(pixelFormat: .bgra, width: 8, height: 8), slices: SliceRunner(threads: 1))
        XCTAssertFalse(stages.stages.contains { $0 is FormatConversion })
        XCTAssertEqual(stages.output.pixelFormat, .bgra)
    }
}
