import Foundation
import VFXFilters

/// The audio filters as text for people (`vfx filters`), JSON for scripts (`--json`, each entry with
/// `"kind": "audio"`) and Markdown tables for `docs/audio.md`, all from the filters' parameter tables.
///
/// ```swift
/// print(AudioFilterListing.text(AudioFilterRegistry.all))
/// ```
public enum AudioFilterListing {
    public static func text(_ specs: [AudioFilterSpec]) -> String {
        var lines: [String] = []
        for spec in specs {
            lines.append("\(spec.name)  (audio)")
            lines.append("    \(spec.summary)")
            lines += spec.parameterLines
            lines.append("    e.g. --audio-filter \(spec.example)")
        }
        return lines.joined(separator: "\n")
    }

    /// A JSON array of the filters with their parameters (keys sorted).
    public static func json(_ specs: [AudioFilterSpec]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(specs.map(Entry.init)), as: UTF8.self)
    }

    /// The Markdown table of filters and one parameter table per filter.
    public static func markdown(_ specs: [AudioFilterSpec]) -> String {
        var out = "| filter | what it does |\n| --- | --- |\n"
        for spec in specs { out += "| `\(spec.name)` | \(spec.summary) |\n" }
        for spec in specs {
            out += "\n### \(spec.name)\n\n\(spec.summary)\n\n" + spec.parameterMarkdown
            out += "\n```sh\nvfx apply in.wav -o out.wav --audio-filter '\(spec.example)'\n```\n\n```swift\nlet filter = \(spec.swift)\n```\n"
        }
        return out
    }

    private struct Entry: Encodable {
        let kind = "audio"
        let name: String
        let summary: String
        let example: String
        let swift: String
        let parameters: [FilterListing.Parameter]

        init(_ spec: AudioFilterSpec) {
            name = spec.name
            summary = spec.summary
            example = spec.example
            swift = spec.swift
            parameters = spec.parameters.map(FilterListing.Parameter.init)
        }
    }
}
