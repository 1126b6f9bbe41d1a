import CFFmpeg
import VFXCore

/// Re-encodes an audio track whose codec the output container cannot hold (AAC into WebM becomes Opus):
/// decode, then `AudioEncoder` (resample, cut into the encoder's frame size, encode). The output keeps
/// every channel when the encoder takes them (AAC, Vorbis and Opus take up to 8), else becomes stereo, and
/// starts at the first decoded frame's timestamp.
final class AudioTranscoder {
    private let output: AudioEncoder
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private let sourceTimeBase: AVRational
    private let decoded: Frame
    private let name: String

    /// Prepares decoding `track` and encoding with `codec`; `globalHeader` when the container wants
    /// codec headers out of band (mp4, mkv, webm).
    init(track: SourceTrack, codec: UnsafePointer<AVCodec>, globalHeader: Bool, name: String) throws {
        self.name = name
        sourceTimeBase = track.timeBase
        guard let decoded = Frame(), let decoderCodec = avcodec_find_decoder(track.parameters.pointee.codec_id),
              let decoder = avcodec_alloc_context3(decoderCodec) else {
            throw MediaError.unsupportedInput(path: name, reason: "cannot decode the audio codec \(track.codecName)")
        }
        self.decoded = decoded
        self.decoder = decoder
        avcodec_parameters_to_context(decoder, track.parameters)
        decoder.pointee.pkt_timebase = track.timeBase
        guard avcodec_open2(decoder, decoderCodec, nil) >= 0 else {
            avcodec_free_context(&self.decoder)
            throw MediaError.unsupportedInput(path: name, reason: "cannot decode the audio codec \(track.codecName)")
        }
        let rate = Int(max(decoder.pointee.sample_rate, 8000))
        let channels = min(max(decoder.pointee.ch_layout.nb_channels, 1), 8)
        var encoder: AudioEncoder?
        for count in Set([channels, min(channels, 2)]).sorted(by: >) where encoder == nil {
            var layout = AVChannelLayout()
            defer { av_channel_layout_uninit(&layout) }
            av_channel_layout_default(&layout, count)
            encoder = try? AudioEncoder(codec: codec, rate: rate, layout: &layout, preferredFormat: nil, globalHeader: globalHeader,
                                        startPts: nil, name: name)
        }
        guard let encoder else {
            avcodec_free_context(&self.decoder)
            throw MediaError.encoderUnavailable(path: name, encoder: "\(String(cString: codec.pointee.name)) for \(channels) channels")
        }
        output = encoder
    }

    deinit {
        avcodec_free_context(&decoder)
    }

    /// The opened encoder (its parameters and time base describe the output stream).
    var encoder: UnsafeMutablePointer<AVCodecContext> { output.context }

    /// Decodes `source` (in the track's time base) and passes every packet the encoder completes to
    /// `emit` (in the encoder's time base).
    func transcode(_ source: Packet, emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        let sent = avcodec_send_packet(decoder, source.pointer)
        if sent < 0 && sent != vfx_averror_eagain() {
            throw MediaError.corrupt(path: name, reason: "audio: \(ffmpegMessage(sent))")
        }
        try drainDecoder(emit: emit)
    }

    /// Flushes the decoder and the encoder.
    func finish(emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        avcodec_send_packet(decoder, nil)
        try drainDecoder(emit: emit)
        try output.finish(emit: emit)
    }

    private func drainDecoder(emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        while avcodec_receive_frame(decoder, decoded.pointer) >= 0 {
            defer { av_frame_unref(decoded.pointer) }
            try output.encode(frame: decoded.pointer, timeBase: sourceTimeBase, emit: emit)
        }
    }
}
