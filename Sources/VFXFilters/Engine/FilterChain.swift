import Foundation
import VFXPipeline

/// A list of filters applied in order, parsed from FFmpeg's chain syntax or built in Swift.
///
/// Syntax: filters separated by `,`; each is `name`, then optionally `:` (or `=`) and `:`-separated values,
/// each `key=value` or a bare value taken in the table's parameter order. Quote a value containing `:` or `,`
/// with single quotes, or escape one character with `\`.
///
/// ```swift
/// let chain = try FilterChain(parsing: "sepia:0.8,gaussian-blur:radius=5,lut:file='my grade.cube'")
/// let same = FilterChain([.sepia(intensity: 0.8)])
/// let processor = chain.makeProcessor()         // an empty chain passes frames through
/// ```
public struct FilterChain: Sendable, Hashable, CustomStringConvertible {
    public var filters: [FilterDescription]

    public init(_ filters: [FilterDescription]) {
        self.filters = filters
    }

    /// Parses `text`; an empty or blank string is the empty chain.
    public init(parsing text: String) throws {
        filters = try ChainSyntax.parse(text, in: FilterRegistry.self).map { FilterDescription(builtIn: $0.spec.name, $0.values) }
    }

    /// The chain in its syntax (parses back to the same chain).
    public var description: String { filters.map(\.description).joined(separator: ",") }

    /// A processor that runs the chain, compiled when it is configured for a frame format.
    /// `threads` nil uses every core; 1 runs everything on the calling thread.
    public func makeProcessor(threads: Int? = nil) -> FilterChainProcessor {
        FilterChainProcessor(self, threads: threads)
    }

    /// `text` quoted for the chain syntax when it holds a separator or quote.
    public static func quoted(_ text: String) -> String {
        if !text.contains(where: { ":,'\\=".contains($0) }) && !text.isEmpty { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// The chain syntax's tokenizer: filters, their names and their raw arguments (shared by the video and
/// audio chains).
public enum ChainSyntax {
    public struct Parsed {
        public var name: String
        public var arguments: [(key: String?, value: String)]
    }

    /// A character and whether it came from a quote or an escape (then it separates nothing).
    private typealias Piece = (character: Character, literal: Bool)

    public static func parse(_ text: String) throws -> [Parsed] {
        var filters: [[[Piece]]] = []     // filters → segments (split on ':') → pieces
        var segments: [[Piece]] = [[]]
        var quoted = false
        var escaped = false
        var nameEnded = false
        for character in text {
            if escaped {
                segments[segments.count - 1].append((character, true))
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "'" {
                quoted.toggle()
            } else if quoted {
                segments[segments.count - 1].append((character, true))
            } else if character == "," {
                filters.append(segments)
                segments = [[]]
                nameEnded = false
            } else if character == ":" || (character == "=" && !nameEnded && segments.count == 1) {
                segments.append([])
                nameEnded = true
            } else {
                segments[segments.count - 1].append((character, false))
            }
        }
        if quoted { throw FilterError.syntax(chain: text, reason: "unterminated quote") }
        if escaped { throw FilterError.syntax(chain: text, reason: "trailing backslash") }
        filters.append(segments)

        // Only a wholly blank chain is "no filter"; a bare "," has empty names, like "sepia,".
        let blank = filters.count == 1 && filters[0].count == 1 && string(filters[0][0]).trimmingCharacters(in: .whitespaces).isEmpty
        if blank { return [] }
        return try filters.map { segments in
            let name = string(segments[0]).trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty else { throw FilterError.syntax(chain: text, reason: "empty filter name") }
            let arguments: [(key: String?, value: String)] = try segments.dropFirst().filter { !$0.isEmpty }.map { pieces in
                if let equals = pieces.firstIndex(where: { $0.character == "=" && !$0.literal }) {
                    let key = string(pieces[..<equals]).trimmingCharacters(in: .whitespaces).lowercased()
                    guard !key.isEmpty else { throw FilterError.syntax(chain: text, reason: "\(name): '=' without a key") }
                    return (key, string(pieces[(equals + 1)...]))
                }
                return (nil, string(pieces[...]))
            }
            return Parsed(name: name, arguments: arguments)
        }
    }

    private static func string(_ pieces: some Collection<Piece>) -> String { String(pieces.map(\.character)) }
}
