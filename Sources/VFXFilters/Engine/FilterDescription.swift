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

    /// A filter from the registry with `values` checked against its table (a value that would be ignored, such as a
    /// blend's `color2` without `layer=gradient`, is refused).
    public init(_ name: String, _ values: [String: ParameterValue] = [:]) throws {
        guard let spec = FilterRegistry.spec(named: name) else { throw FilterError.unknownFilter(name) }
        self.name = spec.name
        self.values = [:]
        for (key, value) in values { self.values[key] = try checkedValue(for: key, value) }
        _ = try arguments()
        try spec.checkConditions(self.values, given: Set(values.keys))
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
        try setChecked(key, checkedValue(for: key, parsing: text))
    }

    /// Sets `key` to a typed value, checked against the table.
    public mutating func set(_ key: String, _ value: ParameterValue) throws {
        try setChecked(key, checkedValue(for: key, value))
    }

    /// Sets `key`, refusing it when it would not count with the other values (`text.shadow-color` while `shadow` is 0).
    /// Only `key` is checked: a live change of a blend's `layer` from gradient back to color is taken even though
    /// `color2` was given earlier (values cannot be taken out of a running chain).
    private mutating func setChecked(_ key: String, _ value: ParameterValue) throws {
        var next = values
        next[key] = value
        try spec?.checkConditions(next, given: [key])
        values = next
    }

    /// The chain syntax for this filter: `name:key=value:key=value` in table order.
    public var description: String { chainText }
}
