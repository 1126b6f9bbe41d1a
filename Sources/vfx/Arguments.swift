import CFFmpeg
import Foundation

/// Bad command-line usage: printed as `vfx: error: …`, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The words after the command name, consumed as options and positionals are recognised.
///
/// ```swift
/// var args = Arguments(["in.mp4", "-o", "out.mp4", "--quiet"])
/// let output = try args.option("-o", "--output")   // "out.mp4"
/// let quiet = args.flag("--quiet")                  // true
/// let input = try args.positional("INPUT")          // "in.mp4"
/// try args.finish()                                  // throws if anything is left
/// ```
struct Arguments {
    private(set) var words: [String]

    init(_ words: [String]) { self.words = words }

    /// Takes the next word, whatever it is.
    mutating func next() -> String? { words.isEmpty ? nil : words.removeFirst() }

    /// True (and consumed) when any of `names` is present.
    mutating func flag(_ names: String...) -> Bool {
        var found = false
        words.removeAll { word in
            if names.contains(word) { found = true; return true }
            return false
        }
        return found
    }

    /// The value of the last `--name VALUE` or `--name=VALUE`, or nil when absent.
    mutating func option(_ names: String...) throws -> String? {
        try options(names).last
    }

    /// Every value of a repeatable option, in order.
    mutating func options(_ names: String...) throws -> [String] { try options(names) }

    private mutating func options(_ names: [String]) throws -> [String] {
        var values: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if names.contains(word) {
                guard index + 1 < words.count else { throw UsageError("\(word) needs a value") }
                values.append(words[index + 1])
                words.removeSubrange(index...index + 1)
            } else if let name = names.first(where: { word.hasPrefix($0 + "=") }) {
                values.append(String(word.dropFirst(name.count + 1)))
                words.remove(at: index)
            } else {
                index += 1
            }
        }
        return values
    }

    /// An integer option within `range`.
    mutating func intOption(_ names: String..., range: ClosedRange<Int> = 1...Int.max) throws -> Int? {
        guard let text = try options(names).last else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(names[0]) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// The next positional argument (a word that is not an option), or a usage error naming it.
    mutating func positional(_ name: String) throws -> String {
        guard let value = optionalPositional() else { throw UsageError("missing \(name)") }
        return value
    }

    /// The next positional argument when there is one (`-` alone counts as positional: standard input).
    mutating func optionalPositional() -> String? {
        guard let index = words.firstIndex(where: { $0 == "-" || !$0.hasPrefix("-") }) else { return nil }
        return words.remove(at: index)
    }

    /// Throws when words are left over (an unknown option or an extra argument).
    func finish() throws {
        if let word = words.first {
            throw UsageError(word.hasPrefix("-") ? "unknown option '\(word)'" : "unexpected argument '\(word)'")
        }
    }
}

/// Standard error and terminal helpers.
enum Terminal {
    /// Writes `message` and a newline to standard error.
    static func error(_ message: String) {
        vfx_write_stderr(message + "\n")
    }

    /// Writes `text` to standard error as it is (no newline).
    static func write(_ text: String) {
        vfx_write_stderr(text)
    }

    /// True when standard error is a terminal (progress bars are drawn only then).
    static var isInteractive: Bool { vfx_stderr_is_terminal() != 0 }
}
