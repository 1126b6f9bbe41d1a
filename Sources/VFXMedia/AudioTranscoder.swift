import CFFmpeg
import VFXCore

/// Re-encodes an audio track whose codec the output container cannot hold (AAC into WebM becomes Opus):
/// decode → resample (swresample) → cut into the encoder's frame size (an audio FIFO) → encode.
final class AudioTranscoder {
    let encoder: UnsafeMutablePointer<AVCodecContext>
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoderPointer: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private var fifo: OpaquePointer?
    private let name: String
    private let sourceTimeBase: AVRational
    private let decoded: Frame
    private let converted: Frame
    private let packet: Packet
    private var convertedCapacity: Int32 = 0
    private var nextPts: Int64?
    private let frameSize: Int32
    private let sendsShortLastFrame: Bool

    /// Prepares decoding `track` and encoding with `codec`; `globalHeader` when the container wants
    /// codec headers out of band (mp4, mkv, webm).
    init(track: SourceTrack, codec: UnsafePointer<AVCodec>, globalHeader: Bool, name: String) throws {
        self.name = name
        sourceTimeBase = track.timeBase
        guard let decoded = Frame(), let converted = Frame(), let packet = Packet(),
              let decoderCodec = avcodec_find_decoder(track.parameters.pointee.codec_id),
              let decoder = avcodec_alloc_context3(decoderCodec) else {
            throw MediaError.unsupportedInput(path: name, reason: "cannot decode the audio codec \(track.codecName)")
        }
        self.decoded = decoded
        self.converted = converted
        self.packet = packet
        self.decoder = decoder
        avcodec_parameters_to_context(decoder, track.parameters)
        decoder.pointee.pkt_timebase = track.timeBase
        let status = avcodec_open2(decoder, decoderCodec, nil)
        guard status >= 0 else {
            avcodec_free_context(&self.decoder)
            throw MediaError.unsupportedInput(path: name, reason: "cannot decode the audio codec \(track.codecName)")
        }
        // Keep every channel when the encoder takes them (AAC, Vorbis and Opus take up to 8); else stereo.
        let rate = AudioTranscoder.supportedRate(codec, near: max(decoder.pointee.sample_rate, 8000))
        let channels = min(max(decoder.pointee.ch_layout.nb_channels, 1), 8)
        guard let encoder = AudioTranscoder.openEncoder(codec, rate: rate, channels: channels, globalHeader: globalHeader)
                ?? AudioTranscoder.openEncoder(codec, rate: rate, channels: min(channels, 2), globalHeader: globalHeader) else {
            avcodec_free_context(&self.decoder)
            throw MediaError.encoderUnavailable(path: name, encoder: "\(String(cString: codec.pointee.name)) for \(channels) channels")
        }
        self.encoder = encoder
        encoderPointer = encoder
        let capabilities = codec.pointee.capabilities
        frameSize = encoder.pointee.frame_size > 0 && capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE == 0
            ? encoder.pointee.frame_size : 1024
        sendsShortLastFrame = capabilities & (AV_CODEC_CAP_SMALL_LAST_FRAME | AV_CODEC_CAP_VARIABLE_FRAME_SIZE) != 0
        fifo = av_audio_fifo_alloc(encoder.pointee.sample_fmt, encoder.pointee.ch_layout.nb_channels, frameSize * 4)
        guard fifo != nil else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
    }

    deinit {
        avcodec_free_context(&decoder)
        avcodec_free_context(&encoderPointer)
        swr_free(&resampler)
        if let fifo { av_audio_fifo_free(fifo) }
    }

    /// The encoder's name (`libopus`, `aac`…).
    var encoderName: String { String(cString: encoder.pointee.codec.pointee.name) }

    /// Decodes `source` (in the track's time base) and passes every packet the encoder completes to
    /// `emit` (in the encoder's time base).
    func transcode(_ source: Packet, emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        let sent = avcodec_send_packet(decoder, source.pointer)
        if sent < 0 && sent != vfx_averror_eagain() {
            throw MediaError.corrupt(path: name, reason: "audio: \(ffmpegMessage(sent))")
        }
        try drainDecoder(emit: emit)
        try encodeQueuedSamples(final: false, emit: emit)
    }

    /// Flushes the decoder, the resampler, the FIFO and the encoder.
    func finish(emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        avcodec_send_packet(decoder, nil)
        try drainDecoder(emit: emit)
        if resampler != nil { try resample(input: nil, count: 0) }
        try encodeQueuedSamples(final: true, emit: emit)
        avcodec_send_frame(encoder, nil)
        try drainEncoder(emit: emit)
    }

    private func drainDecoder(emit: (Packet) throws -> Void) throws {
        guard let decoder else { return }
        while avcodec_receive_frame(decoder, decoded.pointer) >= 0 {
            defer { av_frame_unref(decoded.pointer) }
            let frame = decoded.pointer
            if nextPts == nil {
                let start = frame.pointee.best_effort_timestamp == vfx_nopts_value() ? 0 : frame.pointee.best_effort_timestamp
                nextPts = av_rescale_q(start, sourceTimeBase, encoder.pointee.time_base)
            }
            if resampler == nil {
                let status = swr_alloc_set_opts2(&resampler, &encoder.pointee.ch_layout, encoder.pointee.sample_fmt,
                                                 encoder.pointee.sample_rate, &frame.pointee.ch_layout,
                                                 AVSampleFormat(rawValue: frame.pointee.format), frame.pointee.sample_rate, 0, nil)
                guard status >= 0, swr_init(resampler) >= 0 else {
                    throw MediaError.unsupportedInput(path: name, reason: "cannot resample the audio")
                }
            }
            let input = UnsafeMutableRawPointer(frame.pointee.extended_data).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
            try resample(input: input, count: frame.pointee.nb_samples)
        }
    }

    /// Converts `count` samples (nil input: the resampler's delayed tail) into the FIFO.
    private func resample(input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32) throws {
        let capacity = swr_get_out_samples(resampler, count) + 32
        if capacity > convertedCapacity {
            av_frame_unref(converted.pointer)
            converted.pointer.pointee.nb_samples = capacity
            converted.pointer.pointee.format = encoder.pointee.sample_fmt.rawValue
            av_channel_layout_copy(&converted.pointer.pointee.ch_layout, &encoder.pointee.ch_layout)
            guard av_frame_get_buffer(converted.pointer, 0) >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "out of memory")
            }
            convertedCapacity = capacity
        }
        let written = swr_convert(resampler, converted.pointer.pointee.extended_data, capacity, input, count)
        guard written >= 0 else { throw MediaError.writeFailed(path: name, reason: "audio resampling: \(ffmpegMessage(written))") }
        let planes = UnsafeMutableRawPointer(converted.pointer.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        guard av_audio_fifo_write(fifo, planes, written) == written else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
    }

    /// Encodes whole frames from the FIFO (and at the end, the rest).
    private func encodeQueuedSamples(final: Bool, emit: (Packet) throws -> Void) throws {
        while true {
            let queued = av_audio_fifo_size(fifo)
            guard queued >= frameSize || (final && queued > 0) else { return }
            guard let frame = Frame() else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
            let count = min(queued, frameSize)
            let samples = sendsShortLastFrame ? count : frameSize
            frame.pointer.pointee.nb_samples = samples
            frame.pointer.pointee.format = encoder.pointee.sample_fmt.rawValue
            frame.pointer.pointee.sample_rate = encoder.pointee.sample_rate
            av_channel_layout_copy(&frame.pointer.pointee.ch_layout, &encoder.pointee.ch_layout)
            guard av_frame_get_buffer(frame.pointer, 0) >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "out of memory")
            }
            av_samples_set_silence(frame.pointer.pointee.extended_data, 0, samples, encoder.pointee.ch_layout.nb_channels,
                                   encoder.pointee.sample_fmt)
            let planes = UnsafeMutableRawPointer(frame.pointer.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            av_audio_fifo_read(fifo, planes, count)
            frame.pointer.pointee.pts = nextPts ?? 0
            nextPts = (nextPts ?? 0) + Int64(count)
            let sent = avcodec_send_frame(encoder, frame.pointer)
            guard sent >= 0 else { throw MediaError.writeFailed(path: name, reason: "audio encoder: \(ffmpegMessage(sent))") }
            try drainEncoder(emit: emit)
        }
    }

    private func drainEncoder(emit: (Packet) throws -> Void) throws {
        while true {
            let received = avcodec_receive_packet(encoder, packet.pointer)
            if received == vfx_averror_eagain() || received == vfx_averror_eof() { return }
            guard received >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "audio encoder: \(ffmpegMessage(received))")
            }
            try emit(packet)
            av_packet_unref(packet.pointer)
        }
    }

    /// An opened encoder for `channels` channels in the default layout, nil when the encoder refuses.
    private static func openEncoder(_ codec: UnsafePointer<AVCodec>, rate: Int32, channels: Int32,
                                    globalHeader: Bool) -> UnsafeMutablePointer<AVCodecContext>? {
        guard let encoder = avcodec_alloc_context3(codec) else { return nil }
        encoder.pointee.sample_rate = rate
        encoder.pointee.sample_fmt = codec.pointee.sample_fmts?.pointee ?? AV_SAMPLE_FMT_FLTP
        av_channel_layout_default(&encoder.pointee.ch_layout, channels)
        encoder.pointee.bit_rate = Int64(channels == 1 ? 64_000 : 64_000 * min(Int(channels), 6))
        encoder.pointee.time_base = AVRational(num: 1, den: rate)
        if globalHeader { encoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        if avcodec_open2(encoder, codec, nil) >= 0 { return encoder }
        var pointer: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&pointer)
        return nil
    }

    /// The encoder's sample rate closest to `rate` (its own list, or `rate` when it takes any).
    private static func supportedRate(_ codec: UnsafePointer<AVCodec>, near rate: Int32) -> Int32 {
        guard var entry = codec.pointee.supported_samplerates else { return rate }
        var best: Int32 = 0
        while entry.pointee != 0 {
            let candidate = entry.pointee
            if best == 0 || abs(Int(candidate) - Int(rate)) < abs(Int(best) - Int(rate)) { best = candidate }
            entry += 1
        }
        return best == 0 ? rate : best
    }
}
