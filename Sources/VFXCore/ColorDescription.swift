/// How YUV samples map to RGB: the matrix and the range of the codes.
///
/// ```swift
/// let hd = ColorDescription(matrix: .bt709, range: .limited)
/// let guess = ColorDescription.typical(width: 1280, height: 720)   // BT.709, limited
/// ```
public struct ColorDescription: Sendable, Hashable, CustomStringConvertible {
    /// The luma/chroma matrix.
    public enum Matrix: String, Sendable, Hashable, CaseIterable {
        /// ITU-R BT.601 (standard definition): Kr = 0.299, Kb = 0.114.
        case bt601
        /// ITU-R BT.709 (high definition): Kr = 0.2126, Kb = 0.0722.
        case bt709

        /// Red and blue luma weights (Kr, Kb).
        public var weights: (kr: Float, kb: Float) {
            switch self {
            case .bt601: (0.299, 0.114)
            case .bt709: (0.2126, 0.0722)
            }
        }
    }

    /// The range of 8-bit codes.
    public enum Range: String, Sendable, Hashable, CaseIterable {
        /// Luma 16…235, chroma 16…240 ("TV" or "MPEG" range).
        case limited
        /// 0…255 for all components ("PC" or "JPEG" range).
        case full
    }

    public var matrix: Matrix
    public var range: Range

    public init(matrix: Matrix, range: Range) {
        self.matrix = matrix
        self.range = range
    }

    /// BT.601 limited range: what SD video and y4m without tags use.
    public static let bt601 = ColorDescription(matrix: .bt601, range: .limited)
    /// BT.709 limited range: what HD video uses.
    public static let bt709 = ColorDescription(matrix: .bt709, range: .limited)
    /// BT.601 full range: what JPEG uses.
    public static let jpeg = ColorDescription(matrix: .bt601, range: .full)

    /// The usual guess when a file does not say: BT.709 from 720 lines up, BT.601 below, limited range.
    public static func typical(width: Int, height: Int) -> ColorDescription {
        height >= 720 || width >= 1280 ? .bt709 : .bt601
    }

    /// The usual guess for a frame of `format`: `typical(width:height:)` for YUV, full range for RGB and gray.
    public static func typical(for format: PixelFormat, width: Int, height: Int) -> ColorDescription {
        let guess = typical(width: width, height: height)
        return format.isYUV ? guess : ColorDescription(matrix: guess.matrix, range: .full)
    }

    public var description: String { "\(matrix.rawValue)/\(range.rawValue)" }
}
