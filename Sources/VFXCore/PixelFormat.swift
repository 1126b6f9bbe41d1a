/// The pixel layouts a `VideoFrame` can hold.
///
/// Planar YUV formats subsample chroma by two in both directions; odd sizes round the chroma plane up
/// (a 5×3 I420 frame has 3×2 chroma planes).
///
/// ```swift
/// let format = PixelFormat(name: "nv12")   // .nv12
/// format?.planeCount                        // 2
/// ```
public enum PixelFormat: String, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// Three planes: Y, then U and V at half width and half height (FFmpeg's `yuv420p`).
    case i420
    /// Two planes: Y, then interleaved U,V at half width and half height.
    case nv12
    /// One plane, 4 bytes per pixel in memory order B, G, R, A.
    case bgra
    /// One plane, 4 bytes per pixel in memory order R, G, B, A.
    case rgba
    /// One plane of luma (or gray), 1 byte per pixel.
    case gray8

    /// Parses a format name; FFmpeg's names (`yuv420p`, `gray`) are accepted too.
    public init?(name: String) {
        switch name.lowercased() {
        case "i420", "yuv420p": self = .i420
        case "nv12": self = .nv12
        case "bgra": self = .bgra
        case "rgba": self = .rgba
        case "gray8", "gray": self = .gray8
        default: return nil
        }
    }

    public var description: String { rawValue }

    /// Number of planes in memory.
    public var planeCount: Int {
        switch self {
        case .i420: 3
        case .nv12: 2
        case .bgra, .rgba, .gray8: 1
        }
    }

    /// True for the formats that carry luma and chroma (I420, NV12) rather than RGB.
    public var isYUV: Bool { self == .i420 || self == .nv12 }

    /// True for the packed four-channel formats.
    public var isRGB: Bool { self == .bgra || self == .rgba }

    /// Bytes of one sample group in `plane` (4 for packed RGB, 2 for NV12's UV plane, else 1).
    public func bytesPerPixel(plane: Int) -> Int {
        switch self {
        case .bgra, .rgba: 4
        case .nv12: plane == 0 ? 1 : 2
        case .i420, .gray8: 1
        }
    }

    /// Size in sample groups of `plane` for a frame of `width`×`height` pixels.
    public func planeSize(_ plane: Int, width: Int, height: Int) -> (width: Int, height: Int) {
        if plane == 0 || !isYUV { return (width, height) }
        return ((width + 1) / 2, (height + 1) / 2)
    }
}
