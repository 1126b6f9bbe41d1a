import VFXCore
import VFXTestSupport
import VFXPipeline
import XCTest
@testable import VFXFilters

/// The chain syntax, validation errors, the registry and the Swift API.
final class ChainSyntaxTests: XCTestCase {
    func testKeyedPositionalAndDefaults() throws {
        let chain = try FilterChain(parsing: "sepia:intensity=0.5, tint=#00ff00:0.25 ,mono")
        XCTAssertEqual(chain.filters.map(\.name), ["sepia", "tint", "mono"])
        XCTAssertEqual(chain.filters[0].values["intensity"], .number(0.5))
        XCTAssertEqual(chain.filters[1].values["color"], .color(FilterColor(red: 0, green: 1, blue: 0)))
        XCTAssertEqual(chain.filters[1].values["amount"], .number(0.25))
        XCTAssertEqual(try chain.filters[0].arguments().number("intensity"), 0.5)
        XCTAssertEqual(try chain.filters[2].arguments().values.count, 0)
        XCTAssertEqual(try FilterDescription("sepia").arguments().number("intensity"), 1, "default from the table")
        XCTAssertEqual(try FilterChain(parsing: "").filters.count, 0)
        XCTAssertEqual(try FilterChain(parsing: "  ").filters.count, 0)
    }

    func testQuotingAndEscapes() throws {
        let chain = try FilterChain(parsing: "lut:'/tmp/a:b,c.cube':0.5,lut:file=/tmp/x\\:y.cube")
        XCTAssertEqual(chain.filters[0].values["file"], .text("/tmp/a:b,c.cube"))
        XCTAssertEqual(chain.filters[0].values["intensity"], .number(0.5))
        XCTAssertEqual(chain.filters[1].values["file"], .text("/tmp/x:y.cube"))
    }

    func testDescriptionParsesBack() throws {
        let text = "sepia:intensity=0.8,tint:color=#336699:amount=0.3,lut:file='/a b/c:d.cube',hue:angle=-45"
        let chain = try FilterChain(parsing: text)
        XCTAssertEqual(try FilterChain(parsing: chain.description), chain)
        XCTAssertEqual(FilterChain([.sepia(intensity: 0.8)]).description, "sepia:intensity=0.8")
    }

    /// Every error is one line that names the filter and, where there is one, the key.
    func testErrorsNameFilterAndKey() {
        let cases: [(String, [String])] = [
            ("sepai", ["sepai", "sepia"]),
            ("sepia:strength=1", ["sepia", "strength", "intensity"]),
            ("sepia:intensity=3", ["sepia", "intensity", "3", "0…1"]),
            ("sepia:intensity=abc", ["sepia", "intensity", "abc"]),
            ("tint:color=notacolor", ["tint", "color", "notacolor"]),
            ("posterize:levels=2.5", ["posterize", "levels", "2.5"]),
            ("lut", ["lut", "file"]),
            ("sepia:1:2", ["sepia", "2"]),
            ("sepia:intensity=1:intensity=0", ["sepia", "intensity"]),
            ("sepia:intensity=0.5:0.2", ["sepia", "0.2"]),
            ("sepia:'open", ["unterminated"]),
            ("sepia,,mono", ["empty filter name"]),
            ("channel-swap:order=xyz", ["channel-swap", "order", "xyz"]),
        ]
        for (text, words) in cases {
            XCTAssertThrowsError(try FilterChain(parsing: text), text) { error in
                let message = String(describing: error)
                XCTAssertFalse(message.contains("\n"), "one line: \(message)")
                for word in words { XCTAssertTrue(message.contains(word), "'\(message)' should name '\(word)'") }
            }
        }
    }

    func testLevelsRefusesWhiteBelowBlack() throws {
        let chain = try FilterChain(parsing: "levels:black=0.6:white=0.4")
        let processor = chain.makeProcessor(threads: 1)
        XCTAssertThrowsError(try processor.configure(for: FrameFormat(pixelFormat: .rgba, width: 8, height: 8))) { error in
            XCTAssertTrue(String(describing: error).contains("levels: white"))
        }
    }

    func testRegistryAndDocumentation() throws {
        let specs = FilterRegistry.builtIns
        XCTAssertEqual(Set(specs.map(\.name)).count, specs.count, "names are unique")
        XCTAssertGreaterThanOrEqual(specs.count, 31)
        for name in ["sepia", "mono", "thermal", "x-ray", "invert", "color-controls", "exposure", "gamma", "hue", "vibrance",
                     "white-balance", "posterize", "tint", "lut"] {
            XCTAssertNotNil(FilterRegistry.spec(named: name), name)
        }
        for spec in specs {
            XCTAssertFalse(spec.summary.isEmpty, spec.name)
            XCTAssertTrue(spec.swift.contains("FilterDescription"), spec.name)
            if spec.name != "lut" {
                let chain = try FilterChain(parsing: spec.example)
                XCTAssertEqual(chain.filters.first?.name, spec.name, "the example uses the filter")
            }
        }
        XCTAssertTrue(try FilterListing.json(specs).contains("\"intensity\""))
        XCTAssertTrue(FilterListing.markdown(specs).contains("## sepia"))
    }

    func testStaticMembersMatchParsing() throws {
        XCTAssertEqual(FilterDescription.sepia(intensity: 0.8), try FilterChain(parsing: "sepia:0.8").filters[0])
        XCTAssertEqual(FilterDescription.hue(angle: 30), try FilterChain(parsing: "hue:angle=30").filters[0])
        XCTAssertEqual(FilterDescription.posterize(levels: 4), try FilterChain(parsing: "posterize:4").filters[0])
        XCTAssertEqual(FilterDescription.sepia(intensity: 7).values["intensity"], .number(1), "Swift values are clamped")
    }

    /// A parameter changed while frames flow applies from the next frame; a bad one is refused at once.
    func testChangingAParameterWhileRunning() throws {
        let processor = FilterChainProcessor(try FilterChain(parsing: "brightness:amount=0"), threads: 1)
        _ = try processor.configure(for: FrameFormat(pixelFormat: .gray8, width: 4, height: 2))
        func run() throws -> UInt8 {
            var frame = VideoFrame(format: .gray8, width: 4, height: 2)
            frame.withMutablePlanes { planes in planes[0].row(0).update(repeating: 100, count: 4) }
            return try XCTUnwrap(processor.frames(from: frame).first).plane(0).row(0)[0]
        }
        XCTAssertEqual(try run(), 100)
        try processor.set("amount", to: "0.2", filterAt: 0)
        XCTAssertEqual(try run(), 151, "100 + 0.2·255")
        XCTAssertThrowsError(try processor.set("amount", to: "9", filterAt: 0))
        XCTAssertThrowsError(try processor.set("amount", to: "0.1", filterAt: 3))
        XCTAssertEqual(processor.currentChain.description, "brightness:amount=0.2")
    }

    func testEmptyChainPassesFramesThrough() throws {
        let frame = RawFrames.frame((0..<48).map { UInt8($0 * 5) }, format: .rgba, width: 4, height: 3)
        let output = try TestSupport.apply("", to: frame)
        XCTAssertEqual(RawFrames.bytes(output), RawFrames.bytes(frame))
    }
}
