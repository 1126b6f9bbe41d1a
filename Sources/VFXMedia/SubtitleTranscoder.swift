import CFFmpeg
import Foundation

/// Rewrites a text subtitle stream in the text format the output container holds (SubRip in Matroska
/// becomes mov_text in mp4, mov_text becomes SubRip in Matroska, WebVTT in WebM): each packet is decoded
/// to FFmpeg's ASS events and encoded again, keeping its timestamp and duration.
final class SubtitleTranscoder {
    let encoder: UnsafeMutablePointer<AVCodecContext>
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoderPointer: UnsafeMutablePointer<AVCodecContext>?
    private let name: String
    private let timeBase: AVRational
    /// The encoder's output; a subtitle event larger than this is an error, not a crash.
    private var buffer = [UInt8](repeating: 0, count: 256 * 1024)

    init(track: SourceTrack, codec: UnsafePointer<AVCodec>, name: String) throws {
        self.name = name
        timeBase = track.timeBase
        let encoderName = String(cString: codec.pointee.name)
        guard let decoderCodec = avcodec_find_decoder(track.parameters.pointee.codec_id),
              let decoder = avcodec_alloc_context3(decoderCodec) else {
            throw MediaError.unsupportedInput(path: name, reason: "cannot decode the subtitle codec \(track.codecName)")
        }
        self.decoder = decoder
        avcodec_parameters_to_context(decoder, track.parameters)
        decoder.pointee.pkt_timebase = track.timeBase
        guard avcodec_open2(decoder, decoderCodec, nil) >= 0, let encoder = avcodec_alloc_context3(codec) else {
            avcodec_free_context(&self.decoder)
            throw MediaError.unsupportedInput(path: name, reason: "cannot decode the subtitle codec \(track.codecName)")
        }
        self.encoder = encoder
        encoderPointer = encoder
        encoder.pointee.time_base = track.timeBase
        // The ASS header (styles) the decoder made travels to the encoder, as FFmpeg's command does.
        if let header = decoder.pointee.subtitle_header, decoder.pointee.subtitle_header_size > 0,
           let copy = av_mallocz(Int(decoder.pointee.subtitle_header_size) + 1) {
            copy.copyMemory(from: header, byteCount: Int(decoder.pointee.subtitle_header_size))
            encoder.pointee.subtitle_header = copy.assumingMemoryBound(to: UInt8.self)
            encoder.pointee.subtitle_header_size = decoder.pointee.subtitle_header_size
        }
        FFmpegLog.clearLastError()
        let status = avcodec_open2(encoder, codec, nil)
        guard status >= 0 else {
            avcodec_free_context(&self.decoder)
            avcodec_free_context(&encoderPointer)
            throw MediaError.encoderRefused(path: name, encoder: encoderName,
                                            reason: "\(track.codecName) subtitles (\(FFmpegLog.takeLastError() ?? ffmpegMessage(status)))")
        }
    }

    deinit {
        avcodec_free_context(&decoder)
        avcodec_free_context(&encoderPointer)
    }

    /// Decodes `source` and passes the re-encoded event to `emit` (in the track's time base).
    func transcode(_ source: Packet, emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        let status = avcodec_decode_subtitle2(decoder, &subtitle, &got, source.pointer)
        guard status >= 0 else { throw MediaError.corrupt(path: name, reason: "subtitles: \(ffmpegMessage(status))") }
        guard got != 0 else { return }
        defer { avsubtitle_free(&subtitle) }
        guard subtitle.num_rects > 0 else { return }
        var start = source.pointer.pointee.pts
        var duration = source.pointer.pointee.duration
        // Encoders take events that start at their timestamp: fold a display delay into the timestamp.
        if subtitle.start_display_time > 0 {
            if start != vfx_nopts_value() {
                start += av_rescale_q(Int64(subtitle.start_display_time), AVRational(num: 1, den: 1000), timeBase)
            }
            if subtitle.end_display_time >= subtitle.start_display_time {
                subtitle.end_display_time -= subtitle.start_display_time
            }
            subtitle.start_display_time = 0
        }
        if duration <= 0 && subtitle.end_display_time > 0 && subtitle.end_display_time != UInt32.max {
            duration = av_rescale_q(Int64(subtitle.end_display_time), AVRational(num: 1, den: 1000), timeBase)
        }
        let size = buffer.withUnsafeMutableBufferPointer { bytes in
            avcodec_encode_subtitle(encoder, bytes.baseAddress, Int32(bytes.count), &subtitle)
        }
        guard size >= 0 else { throw MediaError.writeFailed(path: name, reason: "subtitle encoder: \(ffmpegMessage(size))") }
        guard size > 0, let packet = Packet(), av_new_packet(packet.pointer, size) >= 0 else { return }
        buffer.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { packet.pointer.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: Int(size)) }
        }
        packet.pointer.pointee.pts = start
        packet.pointer.pointee.dts = start
        packet.pointer.pointee.duration = duration
        try emit(packet)
    }
}
