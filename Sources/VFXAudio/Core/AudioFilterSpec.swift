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
public struct AudioFilterSpec: ParameterTable {
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
}

/// Every audio filter, listed once. Chain parsing, `vfx filters` and `docs/audio.md` read this list.
///
/// ```swift
/// AudioFilterRegistry.all.map(\.name)    // ["noise-suppression", "gain", …]
/// ```
public enum AudioFilterRegistry: FilterCatalog {
    public static let all: [AudioFilterSpec] = [.noiseSuppression, .gain, .agc, .highPass, .echo, .pitch, .robot]

    /// The filter called `name` (case-insensitive).
    public static func spec(named name: String) -> AudioFilterSpec? {
        let lower = name.lowercased()
        return all.first { $0.name == lower }
    }

    public static func unknownFilter(_ name: String) -> any Error { AudioFilterError.unknownFilter(name) }

    public static func unknownParameter(filter: String, key: String) -> any Error { AudioFilterError.unknownParameter(filter: filter, key: key) }

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
public struct AudioFilterDescription: Sendable, Hashable, CustomStringConvertible, CatalogEntry {
    public typealias Catalog = AudioFilterRegistry
    public let name: String
    /// The values given explicitly.
    public private(set) var values: [String: ParameterValue]

    public init(_ name: String, _ values: [String: ParameterValue] = [:]) throws {
        guard let spec = AudioFilterRegistry.spec(named: name) else { throw AudioFilterError.unknownFilter(name) }
        self.name = spec.name
        self.values = [:]
        for (key, value) in values { self.values[key] = try checkedValue(for: key, value) }
        _ = try arguments()
    }

    /// Values already checked against `spec`'s table (by the chain parser).
    init(checked spec: AudioFilterSpec, _ values: [String: ParameterValue]) {
        name = spec.name
        self.values = values
    }

    /// Sets `key` from text as the chain syntax gives it.
    public mutating func set(_ key: String, to text: String) throws {
        values[key] = try checkedValue(for: key, parsing: text)
    }

    /// A new filter for these values.
    public func makeFilter() throws -> any AudioFilter {
        guard let spec else { throw AudioFilterError.unknownFilter(name) }
        return spec.make(try arguments())
    }

    public var description: String { chainText }
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
        filters = try ChainSyntax.parse(text, in: AudioFilterRegistry.self).map { AudioFilterDescription(checked: $0.spec, $0.values) }
    }

    public var description: String { filters.map(\.description).joined(separator: ",") }

    /// The chain's filters, new and not yet initialized, as one filter.
    public func makeFilter() throws -> AudioFilterChain {
        AudioFilterChain(try filters.map { try $0.makeFilter() })
    }
}
