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

    /// A parameter that only counts with some value of another one (the table's `only:` condition) is refused when
    /// given without it, since its value would be ignored without a word: one line naming the parameter it depends
    /// on and that one's value, from the chain parser and the Swift API alike. Defaults are never refused, and the
    /// combinations that do count are taken.
    func testParametersThatWouldBeIgnoredAreRefused() throws {
        let refused: [(String, String)] = [
            ("hue-blend:image=/tmp/logo.png", "hue-blend: layer must be image when an image is given, got 'color'"),
            ("multiply-blend:color2=#ff0000", "multiply-blend: layer must be gradient when color2 is given, got 'color'"),
            ("screen-blend:layer=image:image=/tmp/logo.png:color=#ff0000",
             "screen-blend: layer must be color or gradient when color is given, got 'image'"),
            ("darken-blend:layer=image:image=/tmp/logo.png:color2=navy", "darken-blend: layer must be gradient when color2 is given, got 'image'"),
            ("text:outline=0:outline-color=red", "text: outline must be above 0 when outline-color is given, got '0'"),
            ("text:shadow-color=white", "text: shadow must be at least 0.5 when shadow-color is given, got '0'"),
            ("scale:kernel=area", "scale: width or height must be above 0 when kernel is given, got '0'"),
            ("scale:width=0:height=0:kernel=bilinear", "scale: width or height must be above 0 when kernel is given, got '0'"),
            // Not a condition: concentric circles are the same turned, so circular-screen has no angle at all.
            ("circular-screen:angle=30", "circular-screen: unknown parameter 'angle' (it takes center, width, sharpness)"),
        ]
        for (chain, message) in refused {
            XCTAssertThrowsError(try FilterChain(parsing: chain), chain) { XCTAssertEqual("\($0)", message) }
        }
        XCTAssertThrowsError(try FilterDescription("multiply-blend", ["color2": .color(FilterColor(red: 1, green: 0, blue: 0))])) {
            XCTAssertEqual("\($0)", "multiply-blend: layer must be gradient when color2 is given, got 'color'")
        }
        let accepted = ["multiply-blend", "multiply-blend:layer=color:color=#ff8800", "multiply-blend:layer=gradient:color=navy:color2=teal",
                        "multiply-blend:layer=image:image=/tmp/logo.png:opacity=0.5", "text", "text:outline=0", "text:outline=0.5:outline-color=red",
                        "text:shadow=0.5:shadow-color=red", "text:outline=0:shadow=3", "scale:width=64:kernel=area",
                        "scale:height=64:kernel=bilinear", "scale:width=0:height=0"]
        for chain in accepted { XCTAssertNoThrow(try FilterChain(parsing: chain), chain) }
        // The Swift API checks the values together, in whatever order the dictionary holds them.
        XCTAssertNoThrow(try FilterDescription("multiply-blend", ["color2": .color(FilterColor(red: 1, green: 0, blue: 0)),
                                                                  "layer": .text("gradient")]))
    }

    /// A live change is checked for the key it sets: a value that would not count is refused and leaves the filter
    /// as it was; changing the parameter others depend on is taken (values cannot be taken out of a running chain,
    /// so refusing it would lock `layer` once `color2` was given).
    func testChangesAreCheckedForTheKeyTheySet() throws {
        var text = try FilterDescription("text")
        XCTAssertThrowsError(try text.set("shadow-color", to: "red")) {
            XCTAssertEqual("\($0)", "text: shadow must be at least 0.5 when shadow-color is given, got '0'")
        }
        XCTAssertNil(text.values["shadow-color"])
        try text.set("shadow", to: "2")
        try text.set("shadow-color", to: "red")
        try text.set("shadow", to: "0")
        XCTAssertEqual(text.description, "text:shadow=0:shadow-color=#ff0000")
        let processor = FilterChainProcessor(try FilterChain(parsing: "multiply-blend:layer=gradient:color2=#ffcc00"), threads: 1)
        _ = try processor.configure(for: FrameFormat(pixelFormat: .rgba, width: 4, height: 4))
        XCTAssertThrowsError(try processor.set("image", to: "/tmp/logo.png", filterAt: 0)) {
            XCTAssertEqual("\($0)", "multiply-blend: layer must be image when an image is given, got 'gradient'")
        }
        try processor.set("layer", to: "color", filterAt: 0)
        XCTAssertEqual(processor.currentChain.description, "multiply-blend:layer=color:color2=#ffcc00")
    }

    /// Every parameter's key appears whole in the listing, its meaning in one column per filter (keys longer than the
    /// 12-character column, such as `text`'s `outline-color`, were cut to it).
    func testListingShowsWholeKeys() {
        for spec in FilterRegistry.builtIns {
            var columns: Set<Int> = []
            for (parameter, line) in zip(spec.parameters, spec.parameterLines) {
                XCTAssertTrue(line.hasPrefix("    \(parameter.key) "), "\(spec.name): \(line)")
                let afterKey = line.dropFirst(4 + parameter.key.count)
                columns.insert(4 + parameter.key.count + (afterKey.firstIndex { $0 != " " }.map { afterKey.distance(from: afterKey.startIndex, to: $0) } ?? 0))
            }
            XCTAssertLessThanOrEqual(columns.count, 1, "\(spec.name): the kinds start in different columns")
        }
    }

    /// The listing says which choice a parameter needs, in the text, the Markdown and the JSON summary; the JSON keeps
    /// its shape (the same keys for every parameter).
    func testListingNamesTheConditions() throws {
        let blend = try XCTUnwrap(FilterRegistry.spec(named: "multiply-blend"))
        XCTAssertTrue(blend.parameterLines.contains { $0.contains("color2") && $0.hasSuffix("the gradient's bottom colour (only with layer=gradient)") })
        XCTAssertTrue(blend.parameterMarkdown.contains("the image layer (scaled to the frame) (only with layer=image)"))
        let json = try FilterListing.json(FilterRegistry.builtIns)
        let filters = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let allowed: Set<String> = ["key", "type", "summary", "default", "minimum", "maximum", "unit", "choices"]
        for filter in filters {
            for parameter in try XCTUnwrap(filter["parameters"] as? [[String: Any]]) {
                XCTAssertTrue(Set(parameter.keys).isSubset(of: allowed), "\(parameter.keys)")
            }
        }
        let text = try XCTUnwrap(filters.first { $0["name"] as? String == "text" }?["parameters"] as? [[String: Any]])
        XCTAssertEqual(text.first { $0["key"] as? String == "shadow-color" }?["summary"] as? String,
                       "shadow colour (only with shadow at least 0.5)")
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
