import CFFmpeg
import Foundation
import VFXFilters

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
    /// Every option and flag name asked about, for "did you mean" in `finish`.
    private var known: Set<String> = []

    init(_ words: [String]) { self.words = words }

    /// Takes the next word, whatever it is.
    mutating func next() -> String? { words.isEmpty ? nil : words.removeFirst() }

    /// True (and consumed) when any of `names` is present.
    mutating func flag(_ names: String...) -> Bool {
        known.formUnion(names)
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
        known.formUnion(names)
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

    /// A decimal option within `range`, reported as typed when it is not.
    mutating func numberOption(_ names: String..., range: ClosedRange<Double>) throws -> Double? {
        guard let text = try options(names).last else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw UsageError("\(names[0]) must be a number in \(Self.format(range.lowerBound))...\(Self.format(range.upperBound)), got '\(text)'")
        }
        return value
    }

    /// A time option: seconds (`90`, `1.5`) or `[hh:]mm:ss[.fff]`, as FFmpeg writes durations.
    mutating func timeOption(_ names: String...) throws -> Double? {
        guard let text = try options(names).last else { return nil }
        guard let seconds = Self.seconds(text) else {
            throw UsageError("\(names[0]) must be a time in seconds or [hh:]mm:ss[.fff], got '\(text)'")
        }
        return seconds
    }

    /// `text` as seconds: `90`, `1.5`, `1:30`, `0:01:30.5`; nil when it is none of these or negative.
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                  let value = Double(part), isLast || parts.count == 1 || value == value.rounded() else { return nil }
            if index > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        return total
    }

    /// A bit rate: `800000`, `2500k`, `4M`, `1.5M` (k = 1000, as FFmpeg's `-b:v`).
    mutating func bitrateOption(_ names: String...) throws -> Int? {
        guard let text = try options(names).last else { return nil }
        let multiplier: Double = switch text.last {
        case "k", "K": 1e3
        case "m", "M": 1e6
        case "g", "G": 1e9
        default: 1
        }
        let digits = multiplier == 1 ? Substring(text) : text.dropLast()
        guard let value = Double(digits), value.isFinite, value > 0, value * multiplier >= 1, value * multiplier <= 1e10 else {
            throw UsageError("\(names[0]) must be a bit rate such as 800000, 2500k or 4M, got '\(text)'")
        }
        return Int((value * multiplier).rounded())
    }

    /// A frame rate: `30`, `25`, `29.97` (taken as 30000/1001, as are 23.976 and 59.94), `30000/1001`.
    mutating func frameRateOption(_ names: String...) throws -> FrameRateValue? {
        guard let text = try options(names).last else { return nil }
        let parts = text.split(separator: "/")
        var rate: FrameRateValue?
        if parts.count == 2, let numerator = Int(parts[0]), let denominator = Int(parts[1]), numerator > 0, denominator > 0 {
            rate = FrameRateValue(numerator: numerator, denominator: denominator)
        } else if parts.count == 1, let value = Double(text), value.isFinite, value > 0 {
            let ntsc = [23.976: 24000, 29.97: 30000, 59.94: 60000, 119.88: 120000]
            if let numerator = ntsc[value] {
                rate = FrameRateValue(numerator: numerator, denominator: 1001)
            } else if value == value.rounded() {
                rate = FrameRateValue(numerator: Int(value), denominator: 1)
            } else {
                rate = FrameRateValue(numerator: Int((value * 1000).rounded()), denominator: 1000)
            }
        }
        guard let rate, rate.value >= 0.01, rate.value <= 1000 else {
            throw UsageError("\(names[0]) must be a frame rate such as 25, 29.97 or 30000/1001 (up to 1000), got '\(text)'")
        }
        return rate
    }

    /// Throws when words are left over: an unknown option (with the closest known one) or an extra argument.
    func finish() throws {
        guard let word = words.first else { return }
        guard word.hasPrefix("-") else { throw UsageError("unexpected argument '\(word)'") }
        let name = String(word.prefix { $0 != "=" })
        let close = Suggestions.closest(to: name, in: known)
        throw UsageError("unknown option '\(word)'" + (close.isEmpty ? "" : " (did you mean \(close.joined(separator: " or "))?)"))
    }

    /// `value` without a needless ".0".
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A frame rate as two integers (the command's own, so that `Arguments` needs no media module).
struct FrameRateValue: Equatable {
    let numerator: Int
    let denominator: Int
    var value: Double { Double(numerator) / Double(denominator) }
}

/// "Did you mean …": the known names closest to a mistyped one by edit distance.
enum Suggestions {
    /// The names within a third of the typed length (at least 1, at most 3 edits) of `typed`, closest first.
    static func closest(to typed: String, in names: some Collection<String>) -> [String] {
        let limit = min(3, max(1, typed.count / 3))
        let scored = names.map { ($0, NameSuggestions.distance(typed.lowercased(), $0.lowercased())) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return [] }
        return scored.filter { $0.1 == best }.map(\.0).sorted()
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
