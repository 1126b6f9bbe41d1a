import Foundation
import Testing
import VFXCore
import VFXFilters
import VFXPipeline
@testable import vfx

/// A filter from outside VFXFilters: brightens luma by `amount` code values, as a plain processor.
final class LiftProcessor: VideoProcessor {
    let amount: UInt8
    init(amount: UInt8) { self.amount = amount }
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        let amount = self.amount
        frame.withMutablePlanes { planes in
            let luma = planes[0]
            for y in 0..<luma.height { for x in 0..<luma.width { luma.row(y)[x] = luma.row(y)[x] &+ amount } }
        }
        return frame
    }
}

extension FilterSpec {
    static let testLift = FilterSpec(
        name: "test-lift", summary: "Adds a constant to luma (registered by a test target).",
        parameters: [ParameterSpec("amount", .number(0...50, unit: "code values"), default: 5, "what is added")],
        pixelFormats: [.i420], example: "test-lift:amount=3", swift: "FilterDescription(\"test-lift\")"
    ) { arguments, _ in .processor(LiftProcessor(amount: UInt8(arguments.number("amount")))) }
}

@Suite struct OpenRegistryTests {
    @Test func aFilterRegisteredOutsideTheCatalogIsListedParsedAndRun() throws {
        FilterRegistry.register([.testLift])
        FilterRegistry.register([.testLift])   // twice is harmless
        #expect(FilterRegistry.all.filter { $0.name == "test-lift" }.count == 1)

        var arguments = Arguments(["--json"])
        let json = try FiltersCommand.listing(&arguments)
        let names = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
            .compactMap { $0["name"] as? String }
        #expect(names.contains("test-lift") && names.contains("sepia"))
        var one = Arguments(["test-lift"])
        #expect(try FiltersCommand.listing(&one).contains("Adds a constant to luma"))

        // Chains parse it, with its parameter table, and run it beside the built-ins.
        let chain = try FilterChain(parsing: "test-lift:amount=7,invert")
        let processor = chain.makeProcessor(threads: 1)
        _ = try processor.configure(for: FrameFormat(pixelFormat: .i420, width: 4, height: 2))
        var frame = VideoFrame(format: .i420, width: 4, height: 2)
        frame.withMutablePlanes { planes in
            for plane in planes { for y in 0..<plane.height { plane.row(y).update(repeating: 128, count: plane.width) } }
        }
        let output = try #require(try processor.frames(from: frame).first)
        // 128 + 7 = 135 in limited range, inverted: 16 + 235 − 135 = 116 (±1 for the table's rounding).
        #expect(abs(Int(output.plane(0).row(0)[0]) - 116) <= 1)
        #expect(throws: FilterError.self) { try FilterChain(parsing: "test-lift:amount=99") }
    }
}
