/// One filter with its parameter values: a Sendable value that says what to do, not how.
///
/// Values are validated against the filter's parameter table when they are set; missing ones take the
/// table's defaults. Built-ins are also static members.
///
/// ```swift
/// let sepia = FilterDescription.sepia(intensity: 0.8)
/// var blur = try FilterDescription("gaussian-blur", ["radius": .number(5)])
/// try blur.set("radius", to: "7")
/// print(blur)   // gaussian-blur:radius=7
/// ```
public struct FilterDescription: Sendable, Hashable, CustomStringConvertible, CatalogEntry {
    public typealias Catalog = FilterRegistry
    public let name: String
    /// The values given explicitly (defaults are not stored, so `description` stays short).
    public private(set) var values: [String: ParameterValue]

    /// A filter from the registry with `values` checked against its table.
    public init(_ name: String, _ values: [String: ParameterValue] = [:]) throws {
        guard let spec = FilterRegistry.spec(named: name) else { throw FilterError.unknownFilter(name) }
        self.name = spec.name
        self.values = [:]
        for (key, value) in values { try set(key, value) }
        _ = try arguments()
    }

    /// A built-in with values from the Swift API: numbers outside their range are pulled in.
    init(builtIn name: String, _ values: [String: ParameterValue]) {
        self.name = name
        let spec = FilterRegistry.spec(named: name)
        self.values = values.reduce(into: [:]) { result, entry in
            result[entry.key] = spec?.parameter(entry.key)?.clamp(entry.value) ?? entry.value
        }
    }

    /// Sets `key` from text as the chain syntax gives it (`"0.5"`, `"#ff0000"`, `"0.5x0.5"`).
    public mutating func set(_ key: String, to text: String) throws {
        values[key] = try checkedValue(for: key, parsing: text)
    }

    /// Sets `key` to a typed value, checked against the table.
    public mutating func set(_ key: String, _ value: ParameterValue) throws {
        values[key] = try checkedValue(for: key, value)
    }

    /// The chain syntax for this filter: `name:key=value:key=value` in table order.
    public var description: String { chainText }
}
