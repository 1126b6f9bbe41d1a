import VFXFilters
import VFXPipeline

/// The temporal filters' entry point: adds them to the filter catalog, so `vfx filters`, chain parsing and
/// `vfx apply --filter` know them.
///
/// ```swift
/// TemporalFilters.register()                       // once at startup
/// let chain = try FilterChain(parsing: "temporal-denoise,super-resolution:scale=2")
/// ```
public enum TemporalFilters {
    public static let specs: [FilterSpec] = [.temporalDenoise, .interpolate, .superResolution]

    public static func register() {
        FilterRegistry.register(specs)
    }
}

/// Why a temporal filter refused its input.
public enum TemporalFilterError: Error, Sendable, Equatable, CustomStringConvertible {
    case unsupportedFormat(filter: String, format: String)
    case tooSmall(filter: String, width: Int, height: Int)

    public var description: String {
        switch self {
        case .unsupportedFormat(let filter, let format): "\(filter): frames in \(format) are not supported (i420 or gray8)"
        case .tooSmall(let filter, let width, let height): "\(filter): \(width)x\(height) frames are too small (at least 16x16)"
        }
    }
}

/// Checks the format a temporal filter can take: I420 or gray, at least 16×16.
func checkTemporalInput(_ format: FrameFormat, filter: String) throws {
    guard format.pixelFormat == .i420 || format.pixelFormat == .gray8 else {
        throw TemporalFilterError.unsupportedFormat(filter: filter, format: format.pixelFormat.rawValue)
    }
    guard format.width >= 16 && format.height >= 16 else {
        throw TemporalFilterError.tooSmall(filter: filter, width: format.width, height: format.height)
    }
}
