import Testing
import VFXCore
@testable import vfx

/// The contact sheet's pixel font: letters with descenders sit on the baseline like the others (same x-height) and
/// reach two rows below it, inside the cell `LabelFont.height` reserves, so nothing is clipped or raised.
@Suite struct LabelFontTests {
    /// The rows with ink when `text` is drawn alone at scale 1 on a canvas exactly one cell high.
    static func inkRows(_ text: String) -> [Int] {
        let height = LabelFont.height(scale: 1)
        var canvas = VideoFrame(format: .rgba, width: LabelFont.width(of: text, scale: 1), height: height)
        return canvas.withMutablePlanes { planes in
            let plane = planes[0]
            for y in 0..<height { for x in 0..<(plane.width * 4) { plane.row(y)[x] = 0 } }
            LabelFont.draw(text, into: plane, left: 0, top: 0, scale: 1)
            return (0..<height).filter { y in (0..<plane.width).contains { plane.row(y)[4 * $0] != 0 } }
        }
    }

    @Test func descendersReachBelowTheBaselineInsideTheCell() {
        #expect(LabelFont.height(scale: 2) == 18)
        let body = Self.inkRows("o")   // x-height letter: rows 2…6, the baseline at row 6
        #expect(body.first == 2 && body.last == 6, "\(body)")
        for letter in ["g", "p", "q", "y"] {
            let rows = Self.inkRows(letter)
            #expect(rows.first == body.first && rows.last == 8, "\(letter): \(rows)")
        }
        #expect(Self.inkRows("j").last == 8)
        for letter in ["a", "b", "e", "h", "k", "n", "x", "z", "0", "="] {
            #expect((Self.inkRows(letter).last ?? 0) <= 6, "\(letter) reaches below the baseline")
        }
    }

    @Test func everyGlyphIsFiveColumnsAndFitsTheCell() {
        for (character, rows) in LabelFont.glyphs {
            #expect(rows.count == 7 || rows.count == LabelFont.cellRows, "\(character)")
            #expect(rows.allSatisfy { $0.count == 5 }, "\(character)")
        }
    }
}
