import CFFmpeg
import VFXCore

/// The colour tags of a video stream, as the container or bitstream states them: primaries, transfer
/// characteristic, matrix and range, each nil when the file leaves it unspecified. Names are FFmpeg's
/// (`bt709`, `bt2020`, `smpte2084`, `arib-std-b67`, `bt2020nc`, `tv`, `pc`), as `ffprobe` prints them.
///
/// A `MediaWriter` given the reader writes the same tags, so an HDR clip (BT.2020 primaries, PQ transfer)
/// stays tagged as HDR instead of becoming BT.709.
///
/// ```swift
/// let reader = try MediaReader(path: "hdr.mkv")
/// print(reader.colorTags)          // bt2020/smpte2084/bt2020nc/tv
/// reader.colorTags.isHDR           // true
/// ```
public struct ColorTags: Sendable, Hashable, CustomStringConvertible {
    var primariesValue: AVColorPrimaries.RawValue
    var transferValue: AVColorTransferCharacteristic.RawValue
    var matrixValue: AVColorSpace.RawValue
    var rangeValue: AVColorRange.RawValue

    /// No tags (everything unspecified).
    public static let unspecified = ColorTags(primaries: AVCOL_PRI_UNSPECIFIED, transfer: AVCOL_TRC_UNSPECIFIED,
                                              matrix: AVCOL_SPC_UNSPECIFIED, range: AVCOL_RANGE_UNSPECIFIED)

    init(primaries: AVColorPrimaries, transfer: AVColorTransferCharacteristic, matrix: AVColorSpace, range: AVColorRange) {
        primariesValue = primaries.rawValue
        transferValue = transfer.rawValue
        matrixValue = matrix.rawValue
        rangeValue = range.rawValue
    }

    var ffmpegPrimaries: AVColorPrimaries { AVColorPrimaries(rawValue: primariesValue) }
    var ffmpegTransfer: AVColorTransferCharacteristic { AVColorTransferCharacteristic(rawValue: transferValue) }
    var ffmpegMatrix: AVColorSpace { AVColorSpace(rawValue: matrixValue) }
    var ffmpegRange: AVColorRange { AVColorRange(rawValue: rangeValue) }

    /// The colour primaries (`bt709`, `bt2020`…), nil when unspecified.
    public var primaries: String? {
        ffmpegPrimaries == AVCOL_PRI_UNSPECIFIED ? nil : av_color_primaries_name(ffmpegPrimaries).map { String(cString: $0) }
    }
    /// The transfer characteristic (`bt709`, `smpte2084` for PQ, `arib-std-b67` for HLG…), nil when unspecified.
    public var transfer: String? {
        ffmpegTransfer == AVCOL_TRC_UNSPECIFIED ? nil : av_color_transfer_name(ffmpegTransfer).map { String(cString: $0) }
    }
    /// The YUV matrix (`bt709`, `smpte170m`, `bt2020nc`…), nil when unspecified.
    public var matrix: String? {
        ffmpegMatrix == AVCOL_SPC_UNSPECIFIED ? nil : av_color_space_name(ffmpegMatrix).map { String(cString: $0) }
    }
    /// `tv` (limited) or `pc` (full), nil when unspecified.
    public var range: String? {
        ffmpegRange == AVCOL_RANGE_UNSPECIFIED ? nil : av_color_range_name(ffmpegRange).map { String(cString: $0) }
    }

    /// True for a high-dynamic-range transfer: PQ (SMPTE ST 2084) or HLG (ARIB STD-B67).
    public var isHDR: Bool { ffmpegTransfer == AVCOL_TRC_SMPTE2084 || ffmpegTransfer == AVCOL_TRC_ARIB_STD_B67 }

    /// True when the matrix is one VideoFX's own colour code handles (BT.601 or BT.709) or unspecified.
    var matrixIsNative: Bool {
        [AVCOL_SPC_UNSPECIFIED, AVCOL_SPC_BT709, AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_FCC].contains(ffmpegMatrix)
    }

    public var description: String {
        [primaries, transfer, matrix, range].map { $0 ?? "unknown" }.joined(separator: "/")
    }
}

/// The shape of one stored sample relative to a square: FFmpeg's sample (pixel) aspect ratio. Anamorphic
/// video (a 720×576 PAL DVD frame shown at 16:9) has 64:45; most video has 1:1.
///
/// ```swift
/// let ratio = SampleAspectRatio(64, 45)
/// ratio.swapped      // 45:64, for the frame turned a quarter
/// ```
public struct SampleAspectRatio: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int
    public var denominator: Int

    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Square samples.
    public static let square = SampleAspectRatio(1, 1)

    /// The ratio for the picture turned by 90° or 270°.
    public var swapped: SampleAspectRatio { SampleAspectRatio(denominator, numerator) }

    public var description: String { "\(numerator):\(denominator)" }

    var rational: AVRational { AVRational(num: Int32(clamping: numerator), den: Int32(clamping: denominator)) }

    /// The ratio of an FFmpeg rational, nil when unset (0:1) or invalid.
    init?(_ rational: AVRational) {
        guard rational.num > 0, rational.den > 0 else { return nil }
        var reduced = AVRational()
        av_reduce(&reduced.num, &reduced.den, Int64(rational.num), Int64(rational.den), Int64(Int32.max))
        self.init(Int(reduced.num), Int(reduced.den))
    }
}

/// A part of a clip to read: from `start` seconds (after the file's own start time), for `duration`
/// seconds, skipping `skipFrames` frames, then at most `frames` frames; nil fields do not limit. FFmpeg's
/// `-ss`, `-t`, `-vf select` and `-frames:v`.
///
/// ```swift
/// let reader = try MediaReader(path: "talk.mp4", trim: Trim(start: 2, duration: 1.5))
/// let still = try MediaReader(path: "talk.mp4", trim: Trim(skipFrames: 100, frames: 1))   // frame 100 only
/// ```
public struct Trim: Sendable, Hashable {
    public var start: Double?
    public var duration: Double?
    public var skipFrames: Int
    public var frames: Int?

    public init(start: Double? = nil, duration: Double? = nil, skipFrames: Int = 0, frames: Int? = nil) {
        self.start = start
        self.duration = duration
        self.skipFrames = skipFrames
        self.frames = frames
    }

    /// True when nothing is cut.
    public var isEmpty: Bool { (start ?? 0) == 0 && duration == nil && skipFrames == 0 && frames == nil }
}
