import Foundation

/// A filter declared by name and parameter table. The video catalog's `FilterSpec` and VFXAudio's
/// `AudioFilterSpec` both are one, so chains of either kind are parsed, checked, printed and listed by the
/// same code below.
///
/// ```swift
/// let gain = AudioFilterRegistry.spec(named: "gain")!
/// try gain.arguments(["db": .number(-6)])              // every value, defaults filled in
/// gain.chainText(["db": .number(-6)])                  // "gain:db=-6"
/// ```
public protocol ParameterTable: Sendable {
    var name: String { get }
    /// One or two sentences: what the filter does.
    var summary: String { get }
    /// One chain string that uses it.
    var example: String { get }
    var parameters: [ParameterSpec] { get }
}

extension ParameterTable {
    /// The parameter named `key`.
    public func parameter(_ key: String) -> ParameterSpec? { parameters.first { $0.key == key } }

    /// Every parameter's value (given in `values`, or the default), or an error naming a required
    /// parameter left out.
    public func arguments(_ values: [String: ParameterValue]) throws -> FilterArguments {
        var resolved: [String: ParameterValue] = [:]
        for parameter in parameters {
            guard let value = values[parameter.key] ?? parameter.defaultValue else {
                throw FilterError.missingParameter(filter: name, key: parameter.key)
            }
            resolved[parameter.key] = value
        }
        return FilterArguments(filter: name, values: resolved, given: Set(values.keys))
    }

    /// Refuses each parameter of `keys` (given by the chain, not defaulted) whose condition does not hold with
    /// `values` (the rest taking their defaults), since its value would be ignored without a word:
    /// `text: outline must be above 0 when outline-color is given, got '0'`. Checked in table order.
    public func checkConditions(_ values: [String: ParameterValue], given keys: Set<String>) throws {
        for parameter in parameters where keys.contains(parameter.key) {
            guard let condition = parameter.condition else { continue }
            let controlling = condition.keys.map { values[$0] ?? self.parameter($0)?.defaultValue }
            guard !controlling.contains(where: { $0.map(condition.holds) ?? false }) else { continue }
            throw FilterError.badValue(filter: name, key: condition.keys.joined(separator: " or "),
                                       value: controlling.first.flatMap { $0?.description } ?? "",
                                       expected: "\(condition.expected) when \(condition.subject ?? parameter.key) is given")
        }
    }

    /// The chain syntax for the filter with `values`: `name:key=value:key=value` in table order.
    public func chainText(_ values: [String: ParameterValue]) -> String {
        let pairs = parameters.compactMap { parameter in
            values[parameter.key].map { "\(parameter.key)=\(FilterChain.quoted($0.description))" }
        }
        return pairs.isEmpty ? name : name + ":" + pairs.joined(separator: ":")
    }

    /// The listing's lines for the parameters (`vfx filters`): key, kind, default and meaning.
    public var parameterLines: [String] {
        // Keys padded to a column of 12, or to the longest key (`outline-color`) so none is cut.
        let width = max(12, parameters.map(\.key.count).max() ?? 0)
        return parameters.map { parameter in
            let value = parameter.defaultValue.map { "default \($0)" } ?? "required"
            return "    \(parameter.key.padding(toLength: width, withPad: " ", startingAt: 0)) "
                + "\(parameter.kind.summary), \(value): \(parameter.listedSummary)"
        }
    }

    /// The parameters as a Markdown table (header included).
    public var parameterMarkdown: String {
        var out = "| parameter | kind | default | meaning |\n| --- | --- | --- | --- |\n"
        for parameter in parameters {
            let value = parameter.defaultValue.map { "`\($0)`" } ?? "required"
            out += "| `\(parameter.key)` | \(parameter.kind.summary) | \(value) | \(parameter.listedSummary) |\n"
        }
        return out
    }
}

/// A list of filters by name: the video registry (`FilterRegistry`) or the audio one
/// (`AudioFilterRegistry`), with the errors its chains report.
public protocol FilterCatalog {
    associatedtype Spec: ParameterTable
    /// The filter called `name` (case-insensitive), or nil.
    static func spec(named name: String) -> Spec?
    static func unknownFilter(_ name: String) -> any Error
    static func unknownParameter(filter: String, key: String) -> any Error
}

/// One filter of a catalog with the values given for its parameters (the defaults are not stored, so the
/// chain text stays short): `FilterDescription`, `AudioFilterDescription`.
public protocol CatalogEntry {
    associatedtype Catalog: FilterCatalog
    var name: String { get }
    var values: [String: ParameterValue] { get }
}

extension CatalogEntry {
    /// The filter's declaration.
    public var spec: Catalog.Spec? { Catalog.spec(named: name) }

    /// Every parameter's value (given or default), or an error naming a required parameter left out.
    public func arguments() throws -> FilterArguments {
        guard let spec else { throw Catalog.unknownFilter(name) }
        return try spec.arguments(values)
    }

    /// `values[key]` parsed from `text` (as the chain syntax gives it), checked against the table.
    public func checkedValue(for key: String, parsing text: String) throws -> ParameterValue {
        guard let parameter = spec?.parameter(key) else { throw Catalog.unknownParameter(filter: name, key: key) }
        return try parameter.parse(text, filter: name)
    }

    /// `values[key]` set to a typed value, checked against the table.
    public func checkedValue(for key: String, _ value: ParameterValue) throws -> ParameterValue {
        guard let parameter = spec?.parameter(key) else { throw Catalog.unknownParameter(filter: name, key: key) }
        return try parameter.validate(value, filter: name)
    }

    /// The chain syntax for this filter: `name:key=value:key=value` in table order.
    public var chainText: String {
        spec?.chainText(values) ?? (values.isEmpty ? name : name + ":" + values.keys.sorted().map {
            "\($0)=\(FilterChain.quoted(values[$0]?.description ?? ""))"
        }.joined(separator: ":"))
    }
}

extension ChainSyntax {
    /// Parses `text` against `catalog`: each filter's declaration and its values, by key or bare in the
    /// table's order, each checked against the table (required ones must be given).
    public static func parse<Catalog: FilterCatalog>(_ text: String, in catalog: Catalog.Type) throws
        -> [(spec: Catalog.Spec, values: [String: ParameterValue])] {
        try parse(text).map { parsed in
            guard let spec = Catalog.spec(named: parsed.name) else { throw Catalog.unknownFilter(parsed.name) }
            var values: [String: ParameterValue] = [:]
            var positional = 0
            var seenKey = false
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
                guard values[key] == nil else { throw FilterError.duplicateParameter(filter: spec.name, key: key) }
                guard let parameter = spec.parameter(key) else { throw Catalog.unknownParameter(filter: spec.name, key: key) }
                values[key] = try parameter.parse(argument.value, filter: spec.name)
            }
            _ = try spec.arguments(values)
            try spec.checkConditions(values, given: Set(values.keys))
            return (spec, values)
        }
    }
}
