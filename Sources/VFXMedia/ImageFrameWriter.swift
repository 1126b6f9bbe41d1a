import CFFmpeg
import Foundation
import VFXCore

/// Writes one frame as a PNG or JPEG image with FFmpeg's encoders.
///
/// PNG keeps RGB: RGBA frames whose alpha is all opaque become 8-bit RGB, others RGBA; gray stays gray;
/// YUV frames are converted to RGB (no chroma subsampling is added). JPEG takes 4:2:0 YUV and gray frames
/// as 4:2:0 and RGB frames as 4:4:4, full range, quality 2 (FFmpeg's `-q:v 2`).
final class ImageFrameWriter: FrameWriting {
    enum Kind { case png, jpeg }

    private let path: String
    private let name: String
    private let kind: Kind
    private let codec: UnsafePointer<AVCodec>
    private var written = false

    /// Prepares writing to `path` (the temporary file); `name` names the output in errors.
    init(path: String, name: String, kind: Kind) throws {
        FFmpegLog.configure()
        self.path = path
        self.name = name
        self.kind = kind
        let encoderName = kind == .png ? "png" : "mjpeg"
        guard let codec = avcodec_find_encoder_by_name(encoderName) else {
            throw MediaError.encoderUnavailable(path: name, encoder: encoderName)
        }
        self.codec = codec
    }

    func write(_ frame: VideoFrame) throws {
        guard !written else {
            throw MediaError.unsupportedFrame(path: name, reason: "an image holds one frame; write a video for more")
        }
        let (targetFormat, targetColor) = target(for: frame)
        guard let encoder = avcodec_alloc_context3(codec), let image = Frame(), let packet = Packet() else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        var encoderPointer: UnsafeMutablePointer<AVCodecContext>? = encoder
        defer { avcodec_free_context(&encoderPointer) }
        encoder.pointee.width = Int32(frame.width)
        encoder.pointee.height = Int32(frame.height)
        encoder.pointee.pix_fmt = targetFormat
        encoder.pointee.time_base = AVRational(num: 1, den: 25)
        encoder.pointee.color_range = AVCOL_RANGE_JPEG
        encoder.pointee.colorspace = targetColor.ffmpegSpace
        if kind == .jpeg {
            encoder.pointee.flags |= AV_CODEC_FLAG_QSCALE
            encoder.pointee.global_quality = 2 * FF_QP2LAMBDA
        }
        var status = avcodec_open2(encoder, codec, nil)
        guard status >= 0 else {
            let formatName = av_get_pix_fmt_name(targetFormat).map { String(cString: $0) } ?? "?"
            throw MediaError.writeFailed(path: name, reason: "the \(String(cString: codec.pointee.name)) encoder refuses "
                + "\(frame.width)x\(frame.height) \(formatName): \(ffmpegMessage(status))")
        }

        image.pointer.pointee.format = targetFormat.rawValue
        image.pointer.pointee.width = Int32(frame.width)
        image.pointer.pointee.height = Int32(frame.height)
        image.pointer.pointee.color_range = AVCOL_RANGE_JPEG
        image.pointer.pointee.colorspace = targetColor.ffmpegSpace
        guard av_frame_get_buffer(image.pointer, 0) >= 0 else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
        let converter = ImageConverter()
        guard converter.convert(.init(planes: ScalePlanes(frame.planes), format: frame.format.ffmpeg, width: frame.width,
                                      height: frame.height, color: frame.color),
                                into: .init(planes: ScalePlanes(image), format: targetFormat, width: frame.width,
                                            height: frame.height, color: targetColor)) else {
            throw MediaError.unsupportedFrame(path: name, reason: "cannot convert \(frame.format) frames for this image")
        }
        status = avcodec_send_frame(encoder, image.pointer)
        guard status >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(status)) }
        avcodec_send_frame(encoder, nil)
        var bytes = Data()
        while avcodec_receive_packet(encoder, packet.pointer) >= 0 {
            bytes.append(packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            av_packet_unref(packet.pointer)
        }
        guard !bytes.isEmpty else { throw MediaError.writeFailed(path: name, reason: "the encoder produced no image") }
        do {
            try bytes.write(to: URL(fileURLWithPath: path))
        } catch {
            throw MediaError.writeFailed(path: name, reason: error.localizedDescription)
        }
        written = true
    }

    func finish() throws {
        guard written else { throw MediaError.unsupportedFrame(path: name, reason: "no frame was written") }
    }

    func close() {}

    /// PNG keeps alpha; JPEG has none.
    var keepsAlpha: Bool { kind == .png }

    /// The encoder's pixel format and color for `frame`.
    private func target(for frame: VideoFrame) -> (AVPixelFormat, ColorDescription) {
        let full = ColorDescription(matrix: frame.color.matrix, range: .full)
        switch (kind, frame.format) {
        case (.png, .gray8):
            return (AV_PIX_FMT_GRAY8, full)
        case (.jpeg, .gray8):
            return (AV_PIX_FMT_YUVJ420P, full)   // FFmpeg's JPEG encoder has no gray mode: neutral chroma
        case (.png, .rgba), (.png, .bgra):
            return (frame.isOpaque ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA, full)
        case (.png, _):
            return (AV_PIX_FMT_RGB24, full)
        case (.jpeg, .i420), (.jpeg, .nv12):
            return (AV_PIX_FMT_YUVJ420P, full)
        case (.jpeg, _):
            return (AV_PIX_FMT_YUVJ444P, .jpeg)
        }
    }
}

extension VideoFrame {
    /// True when every alpha byte of a packed RGB frame is 255 (also for frames without alpha).
    var isOpaque: Bool {
        guard format.isRGB else { return true }
        let plane = plane(0)
        for y in 0..<plane.height {
            let row = plane.row(y)
            for x in 0..<plane.width where row[x * 4 + 3] != 255 { return false }
        }
        return true
    }
}
