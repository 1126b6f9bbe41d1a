import CFFmpeg
import VFXCore

/// The video codecs `MediaWriter` encodes, each with the FFmpeg encoders that make it (best first) and
/// the settings used when the caller gives none.
///
/// | codec | encoders | defaults |
/// | --- | --- | --- |
/// | `h264` | libx264 | preset faster, CRF 20 |
/// | `hevc` | libx265 | preset faster, CRF 24 |
/// | `vp9` | libvpx-vp9 | CRF 32, cpu-used 4, row-mt |
/// | `av1` | libsvtav1, libaom-av1 | CRF 35 (SVT preset 8; aom cpu-used 6) |
/// | `prores` | prores_ks | profile HQ, 4:2:2 10-bit |
/// | `ffv1` | ffv1 | lossless |
/// | `gif` | gif | 8-bit RGB palette (the `.gif` container's only codec) |
public enum VideoCodec: String, Sendable, CaseIterable, CustomStringConvertible {
    case h264, hevc, vp9, av1, prores, ffv1, gif

    /// The codec for a name as FFmpeg or users write it (`h264`, `avc`, `x264`, `h265`, `hevc`…).
    public init?(name: String) {
        switch name.lowercased() {
        case "h264", "avc", "x264", "libx264": self = .h264
        case "hevc", "h265", "x265", "libx265": self = .hevc
        case "vp9", "libvpx-vp9": self = .vp9
        case "av1", "libsvtav1", "libaom-av1", "svtav1", "aom": self = .av1
        case "prores", "prores_ks": self = .prores
        case "ffv1": self = .ffv1
        case "gif": self = .gif
        default: return nil
        }
    }

    public var description: String { rawValue }

    /// FFmpeg's encoders for the codec, best first.
    var encoders: [String] {
        switch self {
        case .h264: ["libx264"]
        case .hevc: ["libx265"]
        case .vp9: ["libvpx-vp9"]
        case .av1: ["libsvtav1", "libaom-av1"]
        case .prores: ["prores_ks"]
        case .ffv1: ["ffv1"]
        case .gif: ["gif"]
        }
    }

    /// The encoder options used unless the caller sets them (`crf`, `preset`, `b`), per encoder.
    static func defaults(for encoder: String) -> [(String, String)] {
        switch encoder {
        case "libx264": [("preset", "faster"), ("crf", "20")]
        // x265 prints its own banner and statistics on standard error unless told not to.
        case "libx265": [("preset", "faster"), ("crf", "24"), ("x265-params", "log-level=none")]
        case "libvpx-vp9": [("crf", "32"), ("b", "0"), ("deadline", "good"), ("cpu-used", "4"), ("row-mt", "1")]
        case "libsvtav1": [("crf", "35"), ("preset", "8")]
        case "libaom-av1": [("crf", "35"), ("b", "0"), ("cpu-used", "6"), ("row-mt", "1")]
        case "prores_ks": [("profile", "hq")]
        case "ffv1": [("level", "3"), ("slicecrc", "1")]
        default: []
        }
    }
}

/// How `MediaWriter` encodes video: FFmpeg's `-c:v`, `-crf`, `-b:v`, `-preset`, `-pix_fmt`, `-r` and `-an`.
/// Every field left nil takes the container's or codec's default (`VideoCodec`).
///
/// ```swift
/// var options = EncodingOptions()
/// options.codec = .hevc
/// options.crf = 26
/// options.pixelFormat = "yuv420p10le"
/// let writer = try MediaWriter(path: "out.mkv", source: reader, options: options)
/// ```
public struct EncodingOptions: Sendable, Hashable {
    /// The video codec; nil: the container's usual one (H.264 for mp4, mov, mkv, ts and avi; VP9 for WebM).
    public var codec: VideoCodec?
    /// Constant rate factor (quality; lower is better): 0–51 for H.264 and HEVC, 0–63 for VP9 and AV1.
    public var crf: Double?
    /// Target video bit rate in bits per second (with a CRF: the cap for VP9 and AV1, ignored by x264's CRF).
    public var bitrate: Int?
    /// The encoder's speed preset (`ultrafast`…`veryslow` for x264/x265, 0–13 for SVT-AV1, `cpu-used`
    /// 0–8 for VP9 and libaom, a ProRes profile such as `proxy`, `lt`, `standard`, `hq`, `4444`).
    public var preset: String?
    /// FFmpeg's name of the encoded pixel format (`yuv420p`, `yuv444p`, `yuv420p10le`…); nil: the source's
    /// when the encoder takes it (a 10-bit HDR clip stays 10-bit), else the codec's usual one.
    public var pixelFormat: String?
    /// The output frame rate: frames are repeated or dropped to fill it (FFmpeg's `-r` on the output).
    public var frameRate: FrameRate?
    /// At most this many frames are written; later ones are ignored (FFmpeg's `-frames:v`).
    public var frameLimit: Int?
    /// False drops the audio streams (FFmpeg's `-an`); subtitles are kept.
    public var keepsAudio: Bool
    /// The sample aspect ratio to write; nil: the source's (its reader's), else square.
    public var sampleAspectRatio: SampleAspectRatio?
    /// The video encoder's thread count (0: its own choice).
    public var threads: Int

    public init(codec: VideoCodec? = nil, crf: Double? = nil, bitrate: Int? = nil, preset: String? = nil,
                pixelFormat: String? = nil, frameRate: FrameRate? = nil, frameLimit: Int? = nil, keepsAudio: Bool = true,
                sampleAspectRatio: SampleAspectRatio? = nil, threads: Int = 0) {
        self.codec = codec
        self.crf = crf
        self.bitrate = bitrate
        self.preset = preset
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.frameLimit = frameLimit
        self.keepsAudio = keepsAudio
        self.sampleAspectRatio = sampleAspectRatio
        self.threads = threads
    }
}
