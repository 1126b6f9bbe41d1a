import VFXCore
import VFXFilters
import VFXPipeline
import VFXTestSupport
import XCTest

/// Every filter's example, as `vfx filters` prints it, runs on every pixel format the filter lists: the kernel the chain
/// compiler picks for that format (a different one for I420, NV12, RGBA, gray) is built, run twice and torn down.
/// A 742×418 frame (room for `crop`'s example; odd chroma sizes, a width that is no multiple of 16) and a 182×98 one,
/// of varied bytes; what each filter computes is checked by its own tests, here that it runs, keeps the frame's format
/// (gray may become RGBA) and gives the same bytes whatever the input's row padding holds (VideoFX never initialises padding, so an output that read it would
/// change from machine to machine): a fresh processor on the frame with its padding filled with 255 gives exactly the
/// first output of the one whose frames had 0 there.
final class CatalogExampleTests: XCTestCase {
    func testEveryExampleRunsOnEveryPixelFormatItLists() throws {
        var generator = SystemRandomNumberGenerator.Seeded(state: 0xca7a)
        // A second, small size whose rows end elsewhere within a vector (182: 22 past a multiple of 32; its 91 chroma
        // samples 11 past a multiple of 16), where `crop`'s example does not fit.
        for (width, height) in [(742, 418), (182, 98)] {
            for spec in FilterRegistry.builtIns where !["file=", "mask="].contains(where: spec.example.contains)
                && (width > 200 || spec.name != "crop") {
                for format in spec.pixelFormats {
                    let count = switch format {
                    case .i420, .nv12: width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
                    case .bgra, .rgba: 4 * width * height
                    case .gray8: width * height
                    }
                    let bytes = (0..<count).map { _ in generator.byte() }
                    func frame(padding: UInt8) -> VideoFrame {
                        RawFrames.frame(bytes, format: format, width: width, height: height, padding: padding)
                    }
                    let processor = try FilterChain(parsing: spec.example).makeProcessor(threads: 1)
                    _ = try processor.configure(for: FrameFormat(of: frame(padding: 0)))
                    var first: [UInt8]?
                    for _ in 0..<2 {
                        // A fresh frame each time: colour filters work in place.
                        let output = try XCTUnwrap(try processor.frames(from: frame(padding: 0)).first, "\(spec.example) on \(format)")
                        // A colour filter on gray gives colour: RGBA.
                        XCTAssertTrue(output.format == format || (format == .gray8 && output.format == .rgba), "\(spec.example) on \(format)")
                        first = first ?? RawFrames.bytes(output)
                    }
                    let fresh = try FilterChain(parsing: spec.example).makeProcessor(threads: 1)
                    _ = try fresh.configure(for: FrameFormat(of: frame(padding: 255)))
                    let padded = try XCTUnwrap(try fresh.frames(from: frame(padding: 255)).first, "\(spec.example) on \(format)")
                    XCTAssertTrue(RawFrames.bytes(padded) == first,
                                  "\(spec.example) on \(format) at \(width)x\(height): the input's row padding changed the output")
                }
            }
        }
    }
}
