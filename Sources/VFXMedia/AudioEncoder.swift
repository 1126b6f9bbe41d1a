import CFFmpeg
import Foundation
import VFXCore

/// Encodes planar Float32 samples with one of libavcodec's audio encoders: resample (libswresample, to the
/// encoder's rate, layout and sample format) → cut into the encoder's frame size (an audio FIFO) → encode.
/// Packets come out in the encoder's time base (1 / its sample rate), starting at `startPts`.
final class AudioEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private var contextPointer: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private let fifo: OpaquePointer
    private let frameSize: Int32
    private let sendsShortLastFrame: Bool
    private let channels: Int
    private let converted: Frame
    private var convertedCapacity: Int32 = 0
    private let packet: Packet
    private let inputPlanes: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    private var nextPts: Int64
    private let name: String

    /// Opens `codec` for `layout` at `rate` (or the nearest rate it supports), taking `inputRate` planar
    /// float. `preferredFormat` is used when the encoder takes it (keeps 24-bit PCM 24-bit).
    init(codec: UnsafePointer<AVCodec>, rate: Int, layout: UnsafePointer<AVChannelLayout>, inputRate: Int,
         preferredFormat: AVSampleFormat?, globalHeader: Bool, startPts: Int64, name: String) throws {
        self.name = name
        guard let converted = Frame(), let packet = Packet() else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
        self.converted = converted
        self.packet = packet
        let codecName = String(cString: codec.pointee.name)
        let chosenRate = AudioEncoder.supportedRate(codec, near: Int32(clamping: rate))
        let format = AudioEncoder.sampleFormat(codec, preferred: preferredFormat)
        guard let opened = AudioEncoder.open(codec, rate: chosenRate, layout: layout, format: format, globalHeader: globalHeader) else {
            throw MediaError.encoderUnavailable(path: name, encoder: "\(codecName) for \(layout.pointee.nb_channels) channels at \(chosenRate) Hz")
        }
        context = opened
        contextPointer = opened
        channels = Int(layout.pointee.nb_channels)
        let capabilities = codec.pointee.capabilities
        frameSize = opened.pointee.frame_size > 0 && capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE == 0 ? opened.pointee.frame_size : 1024
        sendsShortLastFrame = capabilities & (AV_CODEC_CAP_SMALL_LAST_FRAME | AV_CODEC_CAP_VARIABLE_FRAME_SIZE) != 0
        guard let fifo = av_audio_fifo_alloc(opened.pointee.sample_fmt, opened.pointee.ch_layout.nb_channels, frameSize * 4) else {
            avcodec_free_context(&contextPointer)
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        self.fifo = fifo
        inputPlanes = .allocate(capacity: channels)
        inputPlanes.initialize(repeating: nil, count: channels)
        nextPts = av_rescale_q(startPts, AVRational(num: 1, den: Int32(clamping: rate)), opened.pointee.time_base)
        var status = swr_alloc_set_opts2(&resampler, &opened.pointee.ch_layout, opened.pointee.sample_fmt, opened.pointee.sample_rate,
                                         UnsafeMutablePointer(mutating: layout), AV_SAMPLE_FMT_FLTP, Int32(clamping: inputRate), 0, nil)
        if status >= 0 { status = swr_init(resampler) }
        guard status >= 0 else {
            throw MediaError.writeFailed(path: name, reason: "cannot resample the audio for \(codecName)")
        }
    }

    deinit {
        avcodec_free_context(&contextPointer)
        swr_free(&resampler)
        av_audio_fifo_free(fifo)
        inputPlanes.deallocate()
    }

    /// The encoder's name (`aac`, `flac`…).
    var encoderName: String { String(cString: context.pointee.codec.pointee.name) }

    /// Encodes `count` frames from `planes` (one pointer per channel, planar float at the input rate).
    func encode(_ planes: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int, emit: (Packet) throws -> Void) throws {
        guard count > 0 else { return }
        for channel in 0..<channels { inputPlanes[channel] = UnsafeRawPointer(planes[channel]).assumingMemoryBound(to: UInt8.self) }
        try convert(input: inputPlanes, count: Int32(count))
        try encodeQueued(final: false, emit: emit)
    }

    /// Flushes the resampler, the FIFO and the encoder.
    func finish(emit: (Packet) throws -> Void) throws {
        try convert(input: nil, count: 0)
        try encodeQueued(final: true, emit: emit)
        avcodec_send_frame(context, nil)
        try drain(emit: emit)
    }

    private func convert(input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32) throws {
        let capacity = swr_get_out_samples(resampler, count) + 32
        if capacity > convertedCapacity {
            av_frame_unref(converted.pointer)
            converted.pointer.pointee.nb_samples = capacity
            converted.pointer.pointee.format = context.pointee.sample_fmt.rawValue
            av_channel_layout_copy(&converted.pointer.pointee.ch_layout, &context.pointee.ch_layout)
            guard av_frame_get_buffer(converted.pointer, 0) >= 0 else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
            convertedCapacity = capacity
        }
        let written = swr_convert(resampler, converted.pointer.pointee.extended_data, capacity, input, count)
        guard written >= 0 else { throw MediaError.writeFailed(path: name, reason: "audio resampling: \(ffmpegMessage(written))") }
        guard written > 0 else { return }
        let planes = UnsafeMutableRawPointer(converted.pointer.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        guard av_audio_fifo_write(fifo, planes, written) == written else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
    }

    private func encodeQueued(final: Bool, emit: (Packet) throws -> Void) throws {
        while true {
            let queued = av_audio_fifo_size(fifo)
            guard queued >= frameSize || (final && queued > 0) else { return }
            guard let frame = Frame() else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
            let count = min(queued, frameSize)
            let samples = sendsShortLastFrame ? count : frameSize
            frame.pointer.pointee.nb_samples = samples
            frame.pointer.pointee.format = context.pointee.sample_fmt.rawValue
            frame.pointer.pointee.sample_rate = context.pointee.sample_rate
            av_channel_layout_copy(&frame.pointer.pointee.ch_layout, &context.pointee.ch_layout)
            guard av_frame_get_buffer(frame.pointer, 0) >= 0 else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
            av_samples_set_silence(frame.pointer.pointee.extended_data, 0, samples, context.pointee.ch_layout.nb_channels,
                                   context.pointee.sample_fmt)
            let planes = UnsafeMutableRawPointer(frame.pointer.pointee.extended_data).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            av_audio_fifo_read(fifo, planes, count)
            frame.pointer.pointee.pts = nextPts
            nextPts += Int64(count)
            let sent = avcodec_send_frame(context, frame.pointer)
            guard sent >= 0 else { throw MediaError.writeFailed(path: name, reason: "audio encoder: \(ffmpegMessage(sent))") }
            try drain(emit: emit)
        }
    }

    private func drain(emit: (Packet) throws -> Void) throws {
        while true {
            let received = avcodec_receive_packet(context, packet.pointer)
            if received == vfx_averror_eagain() || received == vfx_averror_eof() { return }
            guard received >= 0 else { throw MediaError.writeFailed(path: name, reason: "audio encoder: \(ffmpegMessage(received))") }
            try emit(packet)
            av_packet_unref(packet.pointer)
        }
    }

    private static func open(_ codec: UnsafePointer<AVCodec>, rate: Int32, layout: UnsafePointer<AVChannelLayout>,
                             format: AVSampleFormat, globalHeader: Bool) -> UnsafeMutablePointer<AVCodecContext>? {
        guard let encoder = avcodec_alloc_context3(codec) else { return nil }
        encoder.pointee.sample_rate = rate
        encoder.pointee.sample_fmt = format
        av_channel_layout_copy(&encoder.pointee.ch_layout, layout)
        let channels = Int64(max(layout.pointee.nb_channels, 1))
        encoder.pointee.bit_rate = 64_000 * min(channels, 6)
        encoder.pointee.time_base = AVRational(num: 1, den: rate)
        if globalHeader { encoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        if avcodec_open2(encoder, codec, nil) >= 0 { return encoder }
        var pointer: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&pointer)
        return nil
    }

    /// `preferred` when the encoder takes it, else its first sample format.
    private static func sampleFormat(_ codec: UnsafePointer<AVCodec>, preferred: AVSampleFormat?) -> AVSampleFormat {
        guard var entry = codec.pointee.sample_fmts else { return preferred ?? AV_SAMPLE_FMT_FLTP }
        let first = entry.pointee
        while entry.pointee != AV_SAMPLE_FMT_NONE {
            if let preferred, entry.pointee == preferred { return preferred }
            entry += 1
        }
        return first
    }

    /// The encoder's sample rate closest to `rate` (its own list, or `rate` when it takes any).
    static func supportedRate(_ codec: UnsafePointer<AVCodec>, near rate: Int32) -> Int32 {
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
