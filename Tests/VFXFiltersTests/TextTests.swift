import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// `text`'s outline and shadow against their documented definitions, computed here from the plain text's coverage F
/// (white text with no outline on black gives 255·F): the outline O(p) = max over neighbours q within the width w of
/// F(q)·clamp(w + ½ − |p − q|, 0, 1); white fill over a white outline gives alpha F + O·(1 − F); a shadow is the
/// coverage moved by its offset, under the fill. Coverage is stored in bytes, so ≤ 2 codes.
final class TextTests: XCTestCase {
    let (width, height) = (200, 60)

    func render(_ options: String) throws -> [Double] {
        let black = RawFrames.frame([UInt8](repeating: 0, count: width * height), format: .gray8, width: width, height: height)
        return RawFrames.bytes(try TestSupport.apply("text:text=Ag 42:size=32:position=0.1x0.1:" + options, to: black)).map { Double($0) / 255 }
    }

    func check(_ options: String, _ expected: ([Double]) -> [Double], file: StaticString = #filePath, line: UInt = #line) throws {
        let fill = try render("outline=0")
        let ours = try render(options)
        let want = expected(fill)
        let worst = zip(ours, want).map { abs($0 - $1) * 255 }.max() ?? 0
        XCTAssertLessThanOrEqual(worst, 2, options, file: file, line: line)
        XCTAssertGreaterThan(ours.reduce(0, +), fill.reduce(0, +) * 1.2, "\(options) adds ink", file: file, line: line)
    }

    func testOutlineIsTheDilatedCoverage() throws {
        let w = 2.0
        try check("outline=2:outline-color=white") { f in
            var out = f
            for y in 0..<height {
                for x in 0..<width {
                    var o = 0.0
                    for dy in -2...2 {
                        for dx in -2...2 {
                            let (sx, sy) = (x + dx, y + dy)
                            guard sx >= 0, sy >= 0, sx < width, sy < height else { continue }
                            let weight = min(max(w + 0.5 - Double(dx * dx + dy * dy).squareRoot(), 0), 1)
                            o = max(o, f[sy * width + sx] * weight)
                        }
                    }
                    let fill = f[y * width + x]
                    out[y * width + x] = fill + o * (1 - fill)
                }
            }
            return out
        }
    }

    /// A shadow offset is rounded to whole pixels: 0.5 px draws the coverage moved by one pixel (the least shadow
    /// whose colour counts, so `shadow-color` is taken from there on and refused below it).
    func testHalfPixelShadowIsMovedOnePixel() throws {
        try check("outline=0:shadow=0.5:shadow-color=white") { shadowed($0, by: 1) }
        XCTAssertThrowsError(try render("outline=0:shadow=0.4:shadow-color=white")) { error in
            XCTAssertEqual("\(error)", "text: shadow must be at least 0.5 when shadow-color is given, got '0.4'")
        }
    }

    func testShadowIsTheCoverageMoved() throws {
        try check("outline=0:shadow=3:shadow-color=white") { shadowed($0, by: 3) }
    }

    /// White text coverage `f` over its white shadow moved right and down by `offset` pixels.
    func shadowed(_ f: [Double], by offset: Int) -> [Double] {
        var out = f
        for y in 0..<height {
            for x in 0..<width {
                let s = x >= offset && y >= offset ? f[(y - offset) * width + x - offset] : 0
                let fill = f[y * width + x]
                out[y * width + x] = fill + s * (1 - fill)
            }
        }
        return out
    }
}
