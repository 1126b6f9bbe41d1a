import Foundation
import Testing

/// The docs that are generated from the code stay in step with it.
@Suite struct DocsTests {
    @Test func filterCatalogMatchesTheFiltersTables() throws {
        let result = try CommandLineRun.vfx(["filters", "--markdown"])
        #expect(result.status == 0, "\(result.stderr)")
        let committed = try Data(contentsOf: CommandLineRun.packageRoot.appendingPathComponent("docs/filters.md"))
        #expect(result.stdout == committed, "docs/filters.md is stale: regenerate it with `vfx filters --markdown > docs/filters.md`")
    }

    @Test func everyFilterIsListedOnceAndTheCatalogHasAtLeastAHundred() throws {
        let result = try CommandLineRun.vfx(["filters", "--json"])
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: result.stdout)
        let entries = try #require(json as? [[String: Any]])
        let names = entries.filter { $0["kind"] as? String == "video" }.compactMap { $0["name"] as? String }
        #expect(names.count >= 100, "\(names.count) video filters")
        #expect(Set(names).count == names.count)
    }
}
