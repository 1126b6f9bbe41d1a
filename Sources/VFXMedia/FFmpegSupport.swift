import CFFmpeg
import Foundation
import VFXCore

// Small bridges between FFmpeg's C types and VideoFX's Swift types, shared by the readers and writers.

/// FFmpeg's one-line message for an error code (`AVERROR(…)`).
func ffmpegMessage(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    av_strerror(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// FFmpeg's libraries log their own diagnostics on standard error. VideoFX reports problems as
/// `MediaError`s instead, so it installs its own log callback: nothing reaches standard error unless
/// `setVerbose(true)` was called, and the latest error line is kept so an error can say why an encoder or
/// muxer refused (`MediaError.encoderRefused` quotes x264's "width not divisible by 2").
///
/// ```swift
/// FFmpegLog.setVerbose(true)   // let FFmpeg print its warnings (for debugging a file)
/// ```
public enum FFmpegLog {
    public static func setVerbose(_ verbose: Bool) {
        configure()
        state.withLock { $0.verbose = verbose }
    }

    /// True after `setVerbose(true)`.
    static var isVerbose: Bool { state.withLock { $0.verbose } }

    /// Called by every reader and writer: installs the callback once.
    static func configure() {
        _ = installOnce
    }

    /// The latest error FFmpeg logged since `clearLastError`, one line without FFmpeg's `[libx264 @ 0x…]`
    /// prefix; nil when none.
    static func takeLastError() -> String? {
        state.withLock { state in
            defer { state.lastError = nil }
            return state.lastError
        }
    }

    /// Forgets the latest error, before a call whose failure should quote only its own.
    static func clearLastError() {
        state.withLock { $0.lastError = nil }
    }

    struct State {
        var verbose = false
        var lastError: String?
    }

    static let state = Locked(State())

    private static let installOnce: Void = {
        av_log_set_level(AV_LOG_INFO)
        av_log_set_callback { _, level, format, arguments in
            guard let format, let arguments, level <= AV_LOG_INFO else { return }
            let verbose = FFmpegLog.state.withLock { $0.verbose }
            guard verbose || level <= AV_LOG_ERROR else { return }
            var buffer = [CChar](repeating: 0, count: 1024)
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if verbose { vfx_write_stderr(line) }
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if level <= AV_LOG_ERROR, !trimmed.isEmpty {
                FFmpegLog.state.withLock { $0.lastError = trimmed }
            }
        }
    }()
}

extension MediaTime {
    /// A time from FFmpeg ticks in `timeBase`, nil when FFmpeg has none (`AV_NOPTS_VALUE`).
    init?(ticks: Int64, timeBase: AVRational) {
        guard ticks != vfx_nopts_value(), timeBase.num > 0, timeBase.den > 0 else { return nil }
        let (product, overflow) = ticks.multipliedReportingOverflow(by: Int64(timeBase.num))
        guard !overflow else { return nil }
        self.init(value: product, timescale: timeBase.den)
    }

    /// The time in ticks of `timeBase`, rounded to the nearest tick.
    func ticks(in timeBase: AVRational) -> Int64 {
        av_rescale_q_rnd(value, AVRational(num: 1, den: timescale), timeBase,
                         AVRounding(rawValue: AV_ROUND_NEAR_INF.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
    }
}

extension FrameRate {
    /// A frame rate from an FFmpeg rational, nil when it is unset or absurd.
    init?(_ rational: AVRational) {
        guard rational.num > 0, rational.den > 0, Double(rational.num) / Double(rational.den) <= 1000 else { return nil }
        self.init(Int(rational.num), Int(rational.den))
    }

    var rational: AVRational { AVRational(num: Int32(clamping: numerator), den: Int32(clamping: denominator)) }
}

extension PixelFormat {
    /// The FFmpeg pixel format with the same memory layout.
    var ffmpeg: AVPixelFormat {
        switch self {
        case .i420: AV_PIX_FMT_YUV420P
        case .nv12: AV_PIX_FMT_NV12
        case .bgra: AV_PIX_FMT_BGRA
        case .rgba: AV_PIX_FMT_RGBA
        case .gray8: AV_PIX_FMT_GRAY8
        }
    }
}

extension ColorDescription {
    /// The description FFmpeg's tags give, with `fallback` for what they leave unspecified.
    init(space: AVColorSpace, range: AVColorRange, fallback: ColorDescription) {
        let matrix: Matrix = switch space {
        case AVCOL_SPC_BT709: .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_FCC: .bt601
        default: fallback.matrix
        }
        let range: Range = switch range {
        case AVCOL_RANGE_JPEG: .full
        case AVCOL_RANGE_MPEG: .limited
        default: fallback.range
        }
        self.init(matrix: matrix, range: range)
    }

    var ffmpegSpace: AVColorSpace { matrix == .bt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M }
    var ffmpegPrimaries: AVColorPrimaries { matrix == .bt709 ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M }
    var ffmpegTransfer: AVColorTransferCharacteristic { matrix == .bt709 ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M }
    var ffmpegRange: AVColorRange { range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG }
    /// swscale's coefficient table index for this matrix.
    var swsColorspace: Int32 { matrix == .bt709 ? SWS_CS_ITU709 : SWS_CS_ITU601 }
}

extension Rotation {
    /// The clockwise rotation a display matrix (FFmpeg's 3×3 of 16.16 and 2.30 fixed point) describes,
    /// snapped to quarter turns.
    init(displayMatrix m: UnsafePointer<Int32>) {
        let degrees = atan2(Double(m[1]), Double(m[0])) * 180 / Double.pi
        let quarter = Int((degrees / 90).rounded()) & 3
        self = Rotation(rawValue: quarter * 90) ?? .none
    }

    /// Writes the display matrix for this rotation into `m` (nine values).
    func writeDisplayMatrix(_ m: UnsafeMutablePointer<Int32>) {
        let (cosine, sine): (Int32, Int32) = switch self {
        case .none: (1, 0)
        case .clockwise90: (0, 1)
        case .clockwise180: (-1, 0)
        case .clockwise270: (0, -1)
        }
        let one: Int32 = 1 << 16
        let values: [Int32] = [cosine * one, sine * one, 0, -sine * one, cosine * one, 0, 0, 0, 1 << 30]
        for (index, value) in values.enumerated() { m[index] = value }
    }
}

/// An `AVPacket` with one owner at a time.
final class Packet: @unchecked Sendable {
    // Sendable: a packet is filled by one thread and handed over whole (AudioPacketQueue); the sender
    // keeps no reference, so only one thread ever touches the pointer.
    let pointer: UnsafeMutablePointer<AVPacket>

    init?() {
        guard let pointer = av_packet_alloc() else { return nil }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&pointer)
    }
}

/// An `AVFrame` owned by the reader or writer that made it.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init?() {
        guard let pointer = av_frame_alloc() else { return nil }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&pointer)
    }

    /// Plane `index`'s first byte and bytes per row.
    func plane(_ index: Int) -> (data: UnsafeMutablePointer<UInt8>?, bytesPerRow: Int) {
        let data = withUnsafeBytes(of: pointer.pointee.data) { $0.load(fromByteOffset: index * 8, as: UnsafeMutablePointer<UInt8>?.self) }
        let stride = withUnsafeBytes(of: pointer.pointee.linesize) { $0.load(fromByteOffset: index * 4, as: Int32.self) }
        return (data, Int(stride))
    }

    /// Points the frame at `planes` (no copy, not reference counted: an encoder copies such a frame).
    func point(at planes: [Plane], format: PixelFormat, width: Int, height: Int) {
        av_frame_unref(pointer)
        pointer.pointee.format = format.ffmpeg.rawValue
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        withUnsafeMutableBytes(of: &pointer.pointee.data) { data in
            withUnsafeMutableBytes(of: &pointer.pointee.linesize) { linesize in
                for (index, plane) in planes.enumerated() {
                    data.storeBytes(of: Optional(plane.baseAddress), toByteOffset: index * 8, as: UnsafeMutablePointer<UInt8>?.self)
                    linesize.storeBytes(of: Int32(plane.bytesPerRow), toByteOffset: index * 4, as: Int32.self)
                }
            }
        }
    }
}

/// Image planes as swscale takes them: up to four base addresses and strides.
struct ScalePlanes {
    var data: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
    var strides: [Int32] = [0, 0, 0, 0]

    init(_ planes: [Plane]) {
        for (index, plane) in planes.enumerated() {
            data[index] = plane.baseAddress
            strides[index] = Int32(plane.bytesPerRow)
        }
    }

    init(_ frame: Frame) {
        for index in 0..<4 {
            let plane = frame.plane(index)
            data[index] = plane.data
            strides[index] = Int32(plane.bytesPerRow)
        }
    }
}

/// Converts images between pixel formats, sizes and color descriptions with swscale, reusing its context.
///
/// ```swift
/// let converter = ImageConverter()
/// try converter.convert(source, sourceFormat, …, into: target, …)
/// ```
final class ImageConverter {
    private var context: OpaquePointer?

    deinit { sws_freeContext(context) }

    struct Side {
        var planes: ScalePlanes
        var format: AVPixelFormat
        var width: Int
        var height: Int
        var color: ColorDescription
    }

    /// Converts `source` into `target`; false when swscale cannot do this conversion.
    func convert(_ source: Side, into target: Side) -> Bool {
        let flags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP
        context = sws_getCachedContext(context, Int32(source.width), Int32(source.height), source.format,
                                       Int32(target.width), Int32(target.height), target.format, flags, nil, nil, nil)
        guard let context else { return false }
        sws_setColorspaceDetails(context, sws_getCoefficients(source.color.swsColorspace), source.color.range == .full ? 1 : 0,
                                 sws_getCoefficients(target.color.swsColorspace), target.color.range == .full ? 1 : 0,
                                 0, 1 << 16, 1 << 16)
        let sourceData = source.planes.data.map { UnsafePointer<UInt8>($0) }
        let written = sourceData.withUnsafeBufferPointer { sourcePointers in
            source.planes.strides.withUnsafeBufferPointer { sourceStrides in
                target.planes.data.withUnsafeBufferPointer { targetPointers in
                    target.planes.strides.withUnsafeBufferPointer { targetStrides in
                        sws_scale(context, sourcePointers.baseAddress, sourceStrides.baseAddress, 0, Int32(source.height),
                                  targetPointers.baseAddress, targetStrides.baseAddress)
                    }
                }
            }
        }
        return written > 0
    }
}

/// FFmpeg's `AVERROR_DECODER_NOT_FOUND` (a tag macro Swift cannot import).
let averrorDecoderNotFound: Int32 = -Int32(bitPattern: 0xF8 | UInt32(UInt8(ascii: "D")) << 8 | UInt32(UInt8(ascii: "E")) << 16
    | UInt32(UInt8(ascii: "C")) << 24)

/// The FFmpeg libraries VideoFX runs on, for `vfx --version` and bug reports.
///
/// ```swift
/// print(MediaLibraries.description)   // FFmpeg 5.1.6-0+deb12u1: libavcodec 59.37.100, libavformat 59.27.100, …
/// ```
public enum MediaLibraries {
    public static var description: String {
        func version(_ packed: UInt32) -> String { "\(packed >> 16).\(packed >> 8 & 0xFF).\(packed & 0xFF)" }
        return "FFmpeg \(String(cString: av_version_info())): libavcodec \(version(avcodec_version())), "
            + "libavformat \(version(avformat_version())), libavutil \(version(avutil_version())), "
            + "libswscale \(version(swscale_version()))"
    }
}
