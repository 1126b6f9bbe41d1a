import Foundation

/// What kind of value a filter parameter takes, with its unit and range.
///
/// The kind drives parsing (`sepia:intensity=0.5`), validation, the listing (`vfx filters`) and the API.
///
/// ```swift
/// let intensity = ParameterSpec("intensity", .number(0...1), default: 1, "how much of the effect to blend in")
/// ```
public enum ParameterKind: Sendable, Hashable {
    /// A real number in `range`, measured in `unit` ("" when unitless, "px", "EV", "K"…).
    case number(ClosedRange<Double>, unit: String = "")
    /// A whole number in `range`.
    case integer(ClosedRange<Int>)
    /// An sRGB color: `#rrggbb`, `0xrrggbb`, `rrggbb` or a name (`red`, `white`…).
    case color
    /// A point in normalized coordinates (origin top-left, x right, y down, 0…1 across the frame): `0.5x0.5`.
    case point
    /// An angle in degrees within `range`.
    case angle(ClosedRange<Double>)
    /// A path to a file with one of `extensions` (lowercase, no dot).
    case file(extensions: [String])
    /// One word out of `choices`.
    case choice([String])
    /// A boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
    case flag
    /// Free text (a caption); quote it in a chain when it holds `:` or `,`.
    case text

    /// How the listing shows the kind: `number 0…1`, `color`, `one of horizontal|vertical`…
    public var summary: String {
        switch self {
        case .number(let range, let unit):
            "number \(ParameterValue.format(range.lowerBound))…\(ParameterValue.format(range.upperBound))"
                + (unit.isEmpty ? "" : " \(unit)")
        case .integer(let range): "integer \(range.lowerBound)…\(range.upperBound)"
        case .color: "color"
        case .point: "point (normalized, top-left origin)"
        case .angle(let range): "angle \(ParameterValue.format(range.lowerBound))…\(ParameterValue.format(range.upperBound))°"
        case .file(let extensions): "file (" + extensions.map { "." + $0 }.joined(separator: ", ") + ")"
        case .choice(let choices): "one of " + choices.joined(separator: "|")
        case .flag: "flag (0|1)"
        case .text: "text"
        }
    }

    /// A short machine name for `--json`.
    public var typeName: String {
        switch self {
        case .number: "number"
        case .integer: "integer"
        case .color: "color"
        case .point: "point"
        case .angle: "angle"
        case .file: "file"
        case .choice: "enum"
        case .flag: "bool"
        case .text: "string"
        }
    }
}

/// An sRGB color with components in 0…1 (gamma-encoded, as the hex code says).
///
/// ```swift
/// let red = FilterColor(parsing: "#ff0000")   // FilterColor(red: 1, green: 0, blue: 0)
/// ```
public struct FilterColor: Sendable, Hashable, CustomStringConvertible {
    public var red: Double
    public var green: Double
    public var blue: Double

    public init(red: Double, green: Double, blue: Double) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    static let names: [String: UInt32] = [
        "black": 0x000000, "white": 0xffffff, "red": 0xff0000, "green": 0x00ff00, "blue": 0x0000ff,
        "yellow": 0xffff00, "cyan": 0x00ffff, "magenta": 0xff00ff, "gray": 0x808080, "grey": 0x808080,
        "orange": 0xffa500, "purple": 0x800080, "brown": 0xa52a2a, "pink": 0xffc0cb, "navy": 0x000080,
        "teal": 0x008080, "gold": 0xffd700, "sepia": 0x704214,
    ]

    /// Parses `#rrggbb`, `0xrrggbb`, `rrggbb` or a color name; nil when it is none of these.
    public init?(parsing text: String) {
        let lower = text.lowercased()
        var hex = lower
        if hex.hasPrefix("#") { hex.removeFirst() } else if hex.hasPrefix("0x") { hex.removeFirst(2) }
        let code: UInt32
        if let named = FilterColor.names[lower] {
            code = named
        } else if hex.count == 6, let value = UInt32(hex, radix: 16) {
            code = value
        } else {
            return nil
        }
        self.init(red: Double((code >> 16) & 0xff) / 255, green: Double((code >> 8) & 0xff) / 255,
                  blue: Double(code & 0xff) / 255)
    }

    /// The color as a vector of gamma-encoded R, G, B.
    public var rgb: SIMD3<Float> { SIMD3(Float(red), Float(green), Float(blue)) }

    public var description: String {
        let code = [red, green, blue].map { Int(($0 * 255).rounded()).clamped(0, 255) }
        return "#" + code.map { String(format: "%02x", $0) }.joined()
    }
}

/// A point in normalized frame coordinates: origin top-left, x right, y down, (1, 1) the bottom-right corner.
/// (Vision's convention puts the origin bottom-left: `visionPoint` converts.)
///
/// ```swift
/// let center = FilterPoint(x: 0.5, y: 0.5)
/// ```
public struct FilterPoint: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Parses `XxY`, `X,Y` or `X Y` (each a number); nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(whereSeparator: { $0 == "x" || $0 == "," || $0 == " " || $0 == "/" })
        guard parts.count == 2, let x = Double(parts[0]), let y = Double(parts[1]), x.isFinite, y.isFinite else { return nil }
        self.init(x: x, y: y)
    }

    /// The same point with the origin at the bottom-left (Vision's convention).
    public var visionPoint: FilterPoint { FilterPoint(x: x, y: 1 - y) }

    public var description: String { "\(ParameterValue.format(x))x\(ParameterValue.format(y))" }
}

/// A parameter's value.
public enum ParameterValue: Sendable, Hashable, CustomStringConvertible {
    /// A number or an angle in degrees.
    case number(Double)
    case integer(Int)
    case color(FilterColor)
    case point(FilterPoint)
    /// A file path or a choice.
    case text(String)
    case flag(Bool)

    public var description: String {
        switch self {
        case .number(let value): ParameterValue.format(value)
        case .integer(let value): String(value)
        case .color(let color): color.description
        case .point(let point): point.description
        case .text(let text): text
        case .flag(let value): value ? "1" : "0"
        }
    }

    /// A number or an integer as a Double; nil for other values.
    var numeric: Double? {
        switch self {
        case .number(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// Shortest text for a number: `1`, `0.5`, `-2.25`.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}

/// What another parameter must be for a parameter to count: `color2` only colours a blend's gradient, so it needs
/// `layer=gradient`. A chain that gives the parameter without it is refused (the value would be ignored without a
/// word): `multiply-blend: layer must be gradient when color2 is given, got 'color'`. Defaults never are.
///
/// ```swift
/// ParameterSpec("color2", .color, default: .color(white), "the gradient's bottom colour", only: .when("layer", is: "gradient"))
/// ParameterSpec("shadow-color", .color, default: .color(black), "shadow colour", only: .when("shadow", atLeast: 0.5))
/// ```
public struct ParameterCondition: Sendable {
    /// The parameters it depends on (the condition holds when one of them passes).
    public let keys: [String]
    /// What they must be, in words, for the error: "gradient", "above 0".
    public let expected: String
    /// How the listing says it: "layer=gradient", "layer=color or gradient", "outline above 0".
    public let listing: String
    /// How the error names the parameter being given, when not by its key ("an image").
    let subject: String?
    let holds: @Sendable (ParameterValue) -> Bool

    init(keys: [String], expected: String, listing: String, subject: String? = nil, holds: @escaping @Sendable (ParameterValue) -> Bool) {
        self.keys = keys
        self.expected = expected
        self.listing = listing
        self.subject = subject
        self.holds = holds
    }

    /// `key` is one of `choices` (a choice parameter).
    public static func when(_ key: String, is choices: String...) -> ParameterCondition {
        ParameterCondition(keys: [key], expected: choices.joined(separator: " or "), listing: "\(key)=" + choices.joined(separator: " or ")) {
            if case .text(let text) = $0 { choices.contains(text) } else { false }
        }
    }

    /// One of `keys` is a number above `bound`.
    public static func when(_ keys: String..., above bound: Double) -> ParameterCondition {
        let names = keys.joined(separator: " or ")
        return ParameterCondition(keys: keys, expected: "above \(ParameterValue.format(bound))",
                                  listing: "\(names) above \(ParameterValue.format(bound))") { $0.numeric.map { $0 > bound } ?? false }
    }

    /// `key` is a number of at least `bound`.
    public static func when(_ key: String, atLeast bound: Double) -> ParameterCondition {
        ParameterCondition(keys: [key], expected: "at least \(ParameterValue.format(bound))",
                           listing: "\(key) at least \(ParameterValue.format(bound))") { $0.numeric.map { $0 >= bound } ?? false }
    }

    /// `key` is the number `value`.
    public static func when(_ key: String, equals value: Double) -> ParameterCondition {
        ParameterCondition(keys: [key], expected: ParameterValue.format(value), listing: "\(key)=\(ParameterValue.format(value))") {
            $0.numeric == value
        }
    }

    /// The same condition, the given parameter named `subject` in the error ("an image" for `image`).
    public func naming(_ subject: String) -> ParameterCondition {
        ParameterCondition(keys: keys, expected: expected, listing: listing, subject: subject, holds: holds)
    }
}

/// One entry of a filter's parameter table: key, kind, default and what it does.
///
/// ```swift
/// ParameterSpec("amount", .number(0...1), default: 0.5, "how far chroma moves toward the color")
/// ParameterSpec("file", .file(extensions: ["cube"]), "the .cube file")        // required: no default
/// ```
public struct ParameterSpec: Sendable {
    public let key: String
    public let kind: ParameterKind
    /// The value used when the chain does not give one; nil makes the parameter required.
    public let defaultValue: ParameterValue?
    public let summary: String
    /// What another parameter must be for this one to count (nil: it always counts).
    public let condition: ParameterCondition?

    public init(_ key: String, _ kind: ParameterKind, default defaultValue: ParameterValue? = nil, _ summary: String,
                only condition: ParameterCondition? = nil) {
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        self.condition = condition
    }

    /// A numeric parameter with a numeric default.
    public init(_ key: String, _ kind: ParameterKind, default number: Double, _ summary: String, only condition: ParameterCondition? = nil) {
        let value: ParameterValue = if case .integer = kind { .integer(Int(number)) } else { .number(number) }
        self.init(key, kind, default: value, summary, only: condition)
    }

    /// The summary as listed (`vfx filters`, `--json`, `--markdown`): with the condition, when there is one.
    public var listedSummary: String {
        condition.map { "\(summary) (only with \($0.listing))" } ?? summary
    }

    /// Parses `text` for this parameter of `filter`, or throws a one-line error naming both.
    public func parse(_ text: String, filter: String) throws -> ParameterValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func bad(_ expected: String) -> FilterError {
            .badValue(filter: filter, key: key, value: text, expected: expected)
        }
        switch kind {
        // Out-of-range numbers are reported as typed ('1.50', '1e3'), not as Swift prints them.
        case .number, .angle:
            guard let value = Double(trimmed), value.isFinite,
                  let valid = try? validate(.number(value), filter: filter) else { throw bad(kind.summary) }
            return valid
        case .integer:
            guard let value = Int(trimmed), let valid = try? validate(.integer(value), filter: filter) else { throw bad(kind.summary) }
            return valid
        case .color:
            guard let color = FilterColor(parsing: trimmed) else { throw bad("a color like #ff8800 or red") }
            return .color(color)
        case .point:
            guard let point = FilterPoint(parsing: trimmed) else { throw bad("a point like 0.5x0.5") }
            return .point(point)
        case .file:
            guard !trimmed.isEmpty else { throw bad("a file path") }
            return .text(trimmed)
        case .choice(let choices):
            guard choices.contains(trimmed.lowercased()) else { throw bad(kind.summary) }
            return .text(trimmed.lowercased())
        case .text:
            return .text(text)
        case .flag:
            switch trimmed.lowercased() {
            case "1", "true", "yes", "on": return .flag(true)
            case "0", "false", "no", "off": return .flag(false)
            default: throw bad("0 or 1")
            }
        }
    }

    /// Checks that `value` fits this parameter (kind and range) and returns it, or throws naming the filter and key.
    public func validate(_ value: ParameterValue, filter: String) throws -> ParameterValue {
        func bad() -> FilterError { .badValue(filter: filter, key: key, value: value.description, expected: kind.summary) }
        switch (kind, value) {
        case (.number(let range, _), .number(let number)), (.angle(let range), .number(let number)):
            guard number.isFinite, range.contains(number) else { throw bad() }
        case (.number(let range, _), .integer(let number)), (.angle(let range), .integer(let number)):
            guard range.contains(Double(number)) else { throw bad() }
            return .number(Double(number))
        case (.integer(let range), .integer(let number)):
            guard range.contains(number) else { throw bad() }
        case (.integer(let range), .number(let number)):
            guard number == number.rounded(), range.contains(Int(exactly: number) ?? Int.min) else { throw bad() }
            return .integer(Int(number))
        case (.color, .color), (.point, .point), (.flag, .flag), (.file, .text), (.text, .text): break
        case (.choice(let choices), .text(let text)):
            guard choices.contains(text) else { throw bad() }
        default:
            throw bad()
        }
        return value
    }

    /// `value` pulled into range (used by the Swift static members, which take plain numbers).
    func clamp(_ value: ParameterValue) -> ParameterValue {
        switch (kind, value) {
        case (.number(let range, _), .number(let number)), (.angle(let range), .number(let number)):
            return .number(number.isFinite ? min(max(number, range.lowerBound), range.upperBound) : range.lowerBound)
        case (.integer(let range), .integer(let number)):
            return .integer(min(max(number, range.lowerBound), range.upperBound))
        default:
            return value
        }
    }
}

extension Comparable {
    func clamped(_ low: Self, _ high: Self) -> Self { min(max(self, low), high) }
}
