import VFXCore
import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// Every filter's example, as `vfx filters` prints it, runs on every pixel format the filter lists: the kernel the chain
/// compiler picks for that format (a different one for I420, NV12, RGBA, gray) is built, run twice and torn down.
/// A 742×418 frame (room for `crop`'s example; odd chroma sizes, a width that is no multiple of 16) of varied bytes; what each filter computes
/// is checked by its own tests, here that it runs and keeps the frame's format (gray
/// may become RGBA).
final class CatalogExampleTests: XCTestCase {
    func testEveryExampleRunsOnEveryPixelFormatItLists() throws {
        let (width, height) = (742, 418)
        var generator = SystemRandomNumberGenerator.Seeded(state: 0xca7a)
        for spec in FilterRegistry.builtIns where !["file=", "mask="].contains(where: spec.example.contains) {
            for format in spec.pixelFormats {
                let count = switch format {
                case .i420, .nv12: width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
                case .bgra, .rgba: 4 * width * height
                case .gray8: width * height
                }
                let bytes = (0..<count).map { _ in generator.byte() }
                let processor = try FilterChain(parsing: spec.example).makeProcessor(threads: 1)
                _ = try processor.configure(for: FrameFormat(of: RawFrames.frame(bytes, format: format, width: width, height: height)))
                for _ in 0..<2 {
                    // A fresh frame each time: colour filters work in place.
                    let frame = RawFrames.frame(bytes, format: format, width: width, height: height)
                    let output = try XCTUnwrap(try processor.frames(from: frame).first, "\(spec.example) on \(format)")
                    // A colour filter on gray gives colour: RGBA.
                    XCTAssertTrue(output.format == format || (format == .gray8 && output.format == .rgba), "\(spec.example) on \(format)")
                }
            }
        }
    }
}
