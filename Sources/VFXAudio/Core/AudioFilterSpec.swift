import VFXCore
import VFXPipeline
import VFXFilters

/// An audio filter declared once: name, what it does, its parameter table, an example, and how it becomes
/// an `AudioFilter`. The same table drives chain parsing, validation, `vfx filters` and the docs, exactly as
/// for video filters (`ParameterSpec` is shared).
///
/// ```swift
/// static let gain = AudioFilterSpec(
///     name: "gain", summary: "Changes the level by a fixed amount.",
///     parameters: [ParameterSpec("db", .number(-60...40, unit: "dB"), default: 0, "level change")],
///     example: "gain:db=-6", swift: "GainFilter(db: -6)"
/// ) { GainFilter(db: $0.float("db")) }
/// ```
public struct AudioFilterSpec: Sendable {
    public let name: String
    /// One or two sentences: what the filter does.
    public let summary: String
    public let parameters: [ParameterSpec]
    /// One chain string that uses it.
    public let example: String
    /// One line of Swift that makes it.
    public let swift: String
    /// FFmpeg's filter for comparable work (for `vfx bench` and the docs), when FFmpeg has one.
    public let ffmpeg: (@Sendable (FilterArguments) -> String?)?
    /// Makes the filter for resolved `arguments`.
    public let make: @Sendable (FilterArguments) -> any AudioFilter

    public init(name: String, summary: String, parameters: [ParameterSpec], example: String, swift: String,
                ffmpeg: (@Sendable (FilterArguments) -> String?)? = nil,
                make: @escaping @Sendable (FilterArguments) -> any AudioFilter) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.example = example
        self.swift = swift
        self.ffmpeg = ffmpeg
        self.make = make
    }

    /// The parameter named `key`.
    public func parameter(_ key: String) -> ParameterSpec? { parameters.first { $0.key == key } }
}

/// Every audio filter, listed once. Chain parsing, `vfx filters` and `docs/audio.md` read this list.
///
/// ```swift
/// AudioFilterRegistry.all.map(\.name)    // ["noise-suppression", "gain", …]
/// ```
public enum AudioFilterRegistry {
    public static let all: [AudioFilterSpec] = [.noiseSuppression, .gain, .agc, .highPass, .echo, .pitch, .robot]

    /// The filter called `name` (case-insensitive).
    public static func spec(named name: String) -> AudioFilterSpec? {
        let lower = name.lowercased()
        return all.first { $0.name == lower }
    }

    /// Up to three names close to `name`, for "did you mean".
    static func suggestions(for name: String) -> [String] {
        NameSuggestions.near(name, in: all.map(\.name))
    }
}

/// One audio filter with its parameter values, checked against its table (missing ones take the defaults).
///
/// ```swift
/// var echo = try AudioFilterDescription("echo")
/// try echo.set("delay", to: "300")
/// print(echo)                          // echo:delay=300
/// ```
public struct AudioFilterDescription: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    /// The values given explicitly.
    public private(set) var values: [String: ParameterValue]

    public init(_ name: String, _ values: [String: ParameterValue] = [:]) throws {
        guard let spec = AudioFilterRegistry.spec(named: name) else { throw AudioFilterError.unknownFilter(name) }
        self.name = spec.name
        self.values = [:]
        for (key, value) in values {
            guard let parameter = spec.parameter(key) else { throw AudioFilterError.unknownParameter(filter: spec.name, key: key) }
            self.values[key] = try parameter.validate(value, filter: spec.name)
        }
        _ = try arguments()
    }

    /// `spec` with no values yet (the chain parser fills them in, then checks for required ones).
    init(empty spec: AudioFilterSpec) {
        name = spec.name
        values = [:]
    }

    public var spec: AudioFilterSpec? { AudioFilterRegistry.spec(named: name) }

    /// Sets `key` from text as the chain syntax gives it.
    public mutating func set(_ key: String, to text: String) throws {
        guard let parameter = spec?.parameter(key) else { throw AudioFilterError.unknownParameter(filter: name, key: key) }
        values[key] = try parameter.parse(text, filter: name)
    }

    /// Every parameter's value (given or default), or an error naming a required parameter left out.
    public func arguments() throws -> FilterArguments {
        guard let spec else { throw AudioFilterError.unknownFilter(name) }
        var resolved: [String: ParameterValue] = [:]
        for parameter in spec.parameters {
            guard let value = values[parameter.key] ?? parameter.defaultValue else {
                throw FilterError.missingParameter(filter: name, key: parameter.key)
            }
            resolved[parameter.key] = value
        }
        return FilterArguments(filter: name, values: resolved)
    }

    /// A new filter for these values.
    public func makeFilter() throws -> any AudioFilter {
        guard let spec else { throw AudioFilterError.unknownFilter(name) }
        return spec.make(try arguments())
    }

    public var description: String {
        let order = spec?.parameters.map(\.key) ?? values.keys.sorted()
        let pairs = order.compactMap { key in values[key].map { "\(key)=\(FilterChain.quoted($0.description))" } }
        return pairs.isEmpty ? name : name + ":" + pairs.joined(separator: ":")
    }
}

/// A list of audio filters in the video chains' syntax: `name:key=value:key=value,name2` (bare values in
/// table order, quotes and `\` escapes as for `--filter`).
///
/// ```swift
/// let chain = try AudioChain(parsing: "high-pass:80,noise-suppression,gain:db=3")
/// let filter = try chain.makeFilter()        // an AudioFilterChain
/// ```
public struct AudioChain: Sendable, Hashable, CustomStringConvertible {
    public var filters: [AudioFilterDescription]

    public init(_ filters: [AudioFilterDescription]) {
        self.filters = filters
    }

    /// Parses `text`; an empty or blank string is the empty chain.
    public init(parsing text: String) throws {
        filters = try ChainSyntax.parse(text).map { parsed in
            guard let spec = AudioFilterRegistry.spec(named: parsed.name) else { throw AudioFilterError.unknownFilter(parsed.name) }
            var description = AudioFilterDescription(empty: spec)
            var positional = 0
            var seenKey = false
            var given: Set<String> = []
            for argument in parsed.arguments {
                let key: String
                if let named = argument.key {
                    key = named
                    seenKey = true
                } else {
                    if seenKey {
                        throw FilterError.syntax(chain: text, reason: "\(spec.name): a bare value '\(argument.value)' after key=value")
                    }
                    guard positional < spec.parameters.count else {
                        throw FilterError.tooManyValues(filter: spec.name, value: argument.value)
                    }
                    key = spec.parameters[positional].key
                    positional += 1
                }
                guard given.insert(key).inserted else { throw FilterError.duplicateParameter(filter: spec.name, key: key) }
                try description.set(key, to: argument.value)
            }
            _ = try description.arguments()
            return description
        }
    }

    public var description: String { filters.map(\.description).joined(separator: ",") }

    /// The chain's filters, new and not yet initialized, as one filter.
    public func makeFilter() throws -> AudioFilterChain {
        AudioFilterChain(try filters.map { try $0.makeFilter() })
    }
}
