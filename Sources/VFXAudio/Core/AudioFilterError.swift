import VFXFilters

/// Why an audio chain or filter was refused. Each description is one line naming the filter.
///
/// ```swift
/// do { _ = try AudioChain(parsing: "gian:db=-6") }
/// catch { print(error) }    // unknown audio filter 'gian' (did you mean gain?)
/// ```
public enum AudioFilterError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFilter(String)
    case unknownParameter(filter: String, key: String)
    /// The filter cannot run at this sample rate (a cut-off above Nyquist…).
    case unsupportedRate(filter: String, rate: Int)
    case unsupportedChannels(filter: String, channels: Int)
    /// The engine a filter asked for cannot be used here (a library that is not installed).
    case engineUnavailable(filter: String, reason: String)

    public var description: String {
        switch self {
        case .unknownFilter(let name):
            let close = AudioFilterRegistry.suggestions(for: name)
            return "unknown audio filter '\(name)'"
                + (close.isEmpty ? " (vfx filters lists them)" : " (did you mean \(close.joined(separator: ", "))?)")
        case .unknownParameter(let filter, let key):
            let keys = AudioFilterRegistry.spec(named: filter)?.parameters.map(\.key) ?? []
            return "\(filter): unknown parameter '\(key)'" + (keys.isEmpty ? " (it takes none)" : " (it takes \(keys.joined(separator: ", ")))")
        case .unsupportedRate(let filter, let rate):
            return "\(filter): cannot run at \(rate) Hz"
        case .unsupportedChannels(let filter, let channels):
            return "\(filter): cannot take \(channels) channels"
        case .engineUnavailable(let filter, let reason):
            return "\(filter): \(reason)"
        }
    }
}
