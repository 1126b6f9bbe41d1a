/// Why a filter chain, a parameter or a filter's file was refused. Each description is one line naming the
/// filter and key (or the file and line).
///
/// ```swift
/// do { _ = try FilterChain(parsing: "sepia:intensity=3") }
/// catch { print(error) }   // sepia: intensity must be number 0…1, got '3'
/// ```
public enum FilterError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFilter(String)
    case unknownParameter(filter: String, key: String)
    case badValue(filter: String, key: String, value: String, expected: String)
    case missingParameter(filter: String, key: String)
    case tooManyValues(filter: String, value: String)
    case duplicateParameter(filter: String, key: String)
    case syntax(chain: String, reason: String)
    /// A file a filter reads (a `.cube`) is missing or malformed; `line` is 0 when the whole file is at fault.
    case badFile(filter: String, path: String, line: Int, reason: String)
    /// The filter cannot take frames of this pixel format.
    case unsupportedFormat(filter: String, format: String)
    case noSuchFilterIndex(Int, count: Int)

    public var description: String {
        switch self {
        case .unknownFilter(let name):
            let close = FilterRegistry.suggestions(for: name)
            return "unknown filter '\(name)'" + (close.isEmpty ? " (vfx filters lists them)" : " (did you mean \(close.joined(separator: ", "))?)")
        case .unknownParameter(let filter, let key):
            let keys = FilterRegistry.spec(named: filter)?.parameters.map(\.key) ?? []
            return "\(filter): unknown parameter '\(key)'" + (keys.isEmpty ? " (it takes none)" : " (it takes \(keys.joined(separator: ", ")))")
        case .badValue(let filter, let key, let value, let expected):
            return "\(filter): \(key) must be \(expected), got '\(value)'"
        case .missingParameter(let filter, let key):
            return "\(filter): missing required parameter '\(key)'"
        case .tooManyValues(let filter, let value):
            return "\(filter): too many values (extra '\(value)')"
        case .duplicateParameter(let filter, let key):
            return "\(filter): parameter '\(key)' given twice"
        case .syntax(let chain, let reason):
            return "bad filter chain '\(chain)': \(reason)"
        case .badFile(let filter, let path, let line, let reason):
            return line > 0 ? "\(filter): \(path):\(line): \(reason)" : "\(filter): \(path): \(reason)"
        case .unsupportedFormat(let filter, let format):
            return "\(filter): frames in \(format) are not supported"
        case .noSuchFilterIndex(let index, let count):
            return "no filter at index \(index) (the chain has \(count))"
        }
    }
}
