import Foundation
import Testing
import VFXAudio
import VFXFilters

@Suite struct AudioChainTests {
    @Test func parsesAChainFromTheParameterTables() throws {
        let chain = try AudioChain(parsing: "high-pass:100,noise-suppression:level=25,gain:db=-6")
        #expect(chain.filters.map(\.name) == ["high-pass", "noise-suppression", "gain"])
        #expect(chain.description == "high-pass:frequency=100,noise-suppression:level=25,gain:db=-6")
        #expect(try AudioChain(parsing: chain.description) == chain)
        #expect(try AudioChain(parsing: "  ").filters.isEmpty)
    }

    @Test func refusesBadChainsWithOneLine() {
        #expect(throws: AudioFilterError.unknownFilter("gian")) { try AudioChain(parsing: "gian:db=-6") }
        #expect("\(AudioFilterError.unknownFilter("gian"))" == "unknown audio filter 'gian' (did you mean gain?)")
        #expect(throws: AudioFilterError.unknownParameter(filter: "gain", key: "level")) { try AudioChain(parsing: "gain:level=3") }
        #expect(throws: FilterError.badValue(filter: "gain", key: "db", value: "90", expected: "number -60…40 dB")) {
            try AudioChain(parsing: "gain:db=90")
        }
        #expect(throws: FilterError.duplicateParameter(filter: "echo", key: "delay")) { try AudioChain(parsing: "echo:delay=3:delay=4") }
    }
}

/// docs/audio.md carries the filter tables generated from the parameter tables (`vfx filters --audio
/// --markdown`), so it cannot drift from the code.
@Suite struct AudioDocsTests {
    @Test func docsHoldTheGeneratedTables() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/audio.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(AudioFilterListing.markdown(AudioFilterRegistry.all)),
                "docs/audio.md is stale: paste `vfx filters --audio --markdown` into its filter section")
    }
}
