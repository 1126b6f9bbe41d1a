import CFFmpeg
import Foundation
import VFXPipeline
import VFXCore

/// Decodes the audio stream of a file (wav, flac, mp3, ogg/opus, m4a, or the audio track of a video) into
/// planar Float32 `AudioBuffer`s, resampled with libswresample to the rate a filter chain runs at.
///
/// ```swift
/// let reader = try AudioFileReader(path: "talk.m4a", rate: 48_000)
/// let buffer = AudioBuffer(channels: reader.channelCount, capacity: 1024, sampleRate: reader.rate)
/// while try reader.read(into: buffer) { chain.process(buffer) }
/// ```
///
/// `window` reads a part of the stream, sample-exact: from `start` seconds after the file's start (as
/// FFmpeg's `-ss`), for `duration` seconds; the reader seeks near the start first.
///
/// A reader is used by one thread at a time.
public final class AudioFileReader {
    public let path: String
    /// The stream's own sample rate and channel count.
    public let sampleRate: Int
    public let channelCount: Int
    /// The rate the buffers come at.
    public let rate: Int
    /// The codec's name (`aac`, `pcm_s16le`…).
    public let codecName: String
    /// Bits per sample of the decoded stream when it says (24 for 24-bit PCM or FLAC), else 0.
    let bitsPerSample: Int
    /// The stream's length in seconds, when the container says.
    public let durationSeconds: Double?
    /// The stream's channel layout (a default layout when the file names none).
    var layout = AVChannelLayout()
    /// The stream's codec (to re-encode with the same one when the output allows).
    let codecID: AVCodecID
    let timeBase: AVRational
    /// The timestamp of the first decoded samples, in `timeBase` (0 when the stream gives none).
    private(set) var startTimestamp: Int64?
    /// The part read (nil: all of it), and the file's start time in seconds (FFmpeg's `start_time`).
    public let window: AudioWindow?
    let origin: Double
    /// Every audio stream of the file, by index (the one read is `streamIndex`).
    public let audioStreams: [Int]
    /// With a window: frames still to drop before it and to keep inside it (set at the first decoded
    /// frame), and the time of the first kept sample on the file's time line.
    private var framesToSkip = 0
    private var framesToKeep = Int.max
    private(set) var firstSampleSeconds: Double?
    /// Frames handed out so far, at `rate`.
    public private(set) var framesRead = 0
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private let fifo: OpaquePointer
    /// The stream's index in the file.
    let streamIndex: Int32
    private let packet: Packet
    private let frame: Frame
    private var converted: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private var convertedCapacity = 0
    private let planes: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private var ended = false

    /// Opens `path` and its audio stream `stream` (nil: the best one); `rate` nil keeps the stream's rate.
    /// Throws a one-line `MediaError` for a missing, unreadable or corrupt file, a file with no audio, or
    /// an unknown codec.
    public init(path: String, rate: Int? = nil, stream wanted: Int? = nil, window: AudioWindow? = nil) throws {
        FFmpegLog.configure()
        self.path = path
        self.window = window
        var info = stat()
        guard stat(path, &info) == 0 else { throw MediaError.missingFile(path: path) }
        if info.st_mode & S_IFMT == S_IFREG && info.st_size == 0 { throw MediaError.emptyFile(path: path) }
        guard let packet = Packet(), let frame = Frame() else { throw MediaError.unreadable(path: path, reason: "out of memory") }
        self.packet = packet
        self.frame = frame
        var context: UnsafeMutablePointer<AVFormatContext>?
        var status = avformat_open_input(&context, "file:" + path, nil, nil)
        guard status >= 0, let context else { throw MediaError.corrupt(path: path, reason: ffmpegMessage(status)) }
        format = context
        status = avformat_find_stream_info(context, nil)
        guard status >= 0 else {
            avformat_close_input(&format)
            throw MediaError.corrupt(path: path, reason: ffmpegMessage(status))
        }
        audioStreams = (0..<Int(context.pointee.nb_streams)).filter {
            context.pointee.streams[$0]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        }
        var codec: UnsafePointer<AVCodec>?
        let index = wanted.map(Int32.init) ?? av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0)
        if wanted != nil, index >= 0, index < context.pointee.nb_streams, let parameters = context.pointee.streams[Int(index)]?.pointee.codecpar,
           parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            codec = avcodec_find_decoder(parameters.pointee.codec_id)
        }
        guard index >= 0, let codec, let stream = context.pointee.streams[Int(index)] else {
            let name = wanted.flatMap { $0 >= 0 && $0 < context.pointee.nb_streams ? context.pointee.streams[$0]?.pointee.codecpar : nil }
                .map { String(cString: avcodec_get_name($0.pointee.codec_id)) }
            let what = wanted.map { "audio stream #\($0)" } ?? "its audio codec"
            avformat_close_input(&format)
            throw MediaError.unsupportedInput(path: path, reason: audioStreams.isEmpty ? "no audio stream"
                                              : "no decoder for \(what)" + (name.map { " (\($0))" } ?? ""))
        }
        streamIndex = index
        codecID = stream.pointee.codecpar.pointee.codec_id
        codecName = String(cString: avcodec_get_name(codecID))
        timeBase = stream.pointee.time_base
        guard let decoder = avcodec_alloc_context3(codec) else {
            avformat_close_input(&format)
            throw MediaError.unreadable(path: path, reason: "out of memory")
        }
        self.decoder = decoder
        avcodec_parameters_to_context(decoder, stream.pointee.codecpar)
        decoder.pointee.pkt_timebase = timeBase
        status = avcodec_open2(decoder, codec, nil)
        guard status >= 0, decoder.pointee.sample_rate > 0, decoder.pointee.ch_layout.nb_channels > 0 else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&format)
            throw MediaError.unsupportedInput(path: path, reason: "cannot decode its \(codecName) audio")
        }
        sampleRate = Int(decoder.pointee.sample_rate)
        bitsPerSample = Int(decoder.pointee.bits_per_raw_sample)
        channelCount = Int(decoder.pointee.ch_layout.nb_channels)
        self.rate = rate ?? sampleRate
        if decoder.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&layout, Int32(channelCount))
        } else {
            av_channel_layout_copy(&layout, &decoder.pointee.ch_layout)
        }
        origin = context.pointee.start_time == vfx_nopts_value() ? 0 : Double(context.pointee.start_time) / Double(AV_TIME_BASE)
        if let window, window.start > 1 {
            // Seek a second early (before the window, whatever the container's seek accuracy); the
            // samples before the window are dropped by timestamp.
            let target = Int64(((origin + window.start - 1) * Double(AV_TIME_BASE)).rounded(.down))
            av_seek_frame(context, -1, target, AVSEEK_FLAG_BACKWARD)
        }
        if stream.pointee.duration > 0 {
            durationSeconds = Double(stream.pointee.duration) * av_q2d(timeBase)
        } else if context.pointee.duration > 0 {
            durationSeconds = Double(context.pointee.duration) / Double(AV_TIME_BASE)
        } else {
            durationSeconds = nil
        }
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, Int32(channelCount), 4096) else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&format)
            throw MediaError.unreadable(path: path, reason: "out of memory")
        }
        self.fifo = fifo
        converted = .allocate(capacity: channelCount)
        converted.initialize(repeating: nil, count: channelCount)
        planes = .allocate(capacity: channelCount)
        planes.initialize(repeating: nil, count: channelCount)
    }

    deinit {
        avcodec_free_context(&decoder)
        avformat_close_input(&format)
        swr_free(&resampler)
        av_audio_fifo_free(fifo)
        for channel in 0..<channelCount { converted[channel]?.deallocate() }
        converted.deallocate()
        planes.deallocate()
        av_channel_layout_uninit(&layout)
    }

    /// The expected number of frames at `rate` (of the window), when the container gives a duration.
    public var expectedFrames: Int? {
        guard let total = durationSeconds else { return window?.duration.map { Int(($0 * Double(rate)).rounded()) } }
        var seconds = total - (window?.start ?? 0)
        if let duration = window?.duration { seconds = min(seconds, duration) }
        return Int((max(seconds, 0) * Double(rate)).rounded())
    }

    /// Fills `buffer` (up to its capacity; its rate and timestamp are set) and returns true, or returns
    /// false at the end of the stream. Throws `MediaError.corrupt` when a packet cannot be decoded.
    public func read(into buffer: AudioBuffer) throws -> Bool {
        let wanted = Int32(buffer.capacity)
        while av_audio_fifo_size(fifo) < wanted && !ended { try decodeMore() }
        let available = min(av_audio_fifo_size(fifo), wanted)
        buffer.sampleRate = rate
        buffer.timestamp = MediaTime(value: Int64(framesRead), timescale: Int32(clamping: rate))
        guard available > 0 else {
            buffer.frameCount = 0
            return false
        }
        for channel in 0..<min(buffer.channelCount, channelCount) { planes[channel] = UnsafeMutableRawPointer(buffer.channel(channel)) }
        av_audio_fifo_read(fifo, planes, available)
        buffer.frameCount = Int(available)
        // A buffer with more channels than the stream repeats the last one.
        for channel in channelCount..<max(buffer.channelCount, channelCount) {
            buffer.channel(channel).update(from: buffer.channel(channelCount - 1), count: Int(available))
        }
        framesRead += Int(available)
        return true
    }

    /// Reads packets until some samples reach the FIFO or the stream ends.
    private func decodeMore() throws {
        guard let format, let decoder else { ended = true; return }
        let status = av_read_frame(format, packet.pointer)
        if status < 0 {
            guard status == vfx_averror_eof() else { throw MediaError.corrupt(path: path, reason: ffmpegMessage(status)) }
            avcodec_send_packet(decoder, nil)
            try drain()
            if resampler != nil { try resample(nil, count: 0) }
            ended = true
            return
        }
        defer { av_packet_unref(packet.pointer) }
        guard packet.pointer.pointee.stream_index == streamIndex else { return }
        let sent = avcodec_send_packet(decoder, packet.pointer)
        if sent < 0 && sent != vfx_averror_eagain() {
            throw MediaError.corrupt(path: path, reason: "audio: \(ffmpegMessage(sent))")
        }
        try drain()
    }

    private func drain() throws {
        guard let decoder else { return }
        while true {
            let status = avcodec_receive_frame(decoder, frame.pointer)
            if status == vfx_averror_eagain() || status == vfx_averror_eof() { return }
            guard status >= 0 else { throw MediaError.corrupt(path: path, reason: "audio: \(ffmpegMessage(status))") }
            defer { av_frame_unref(frame.pointer) }
            let source = frame.pointer
            if startTimestamp == nil {
                let stamp = source.pointee.best_effort_timestamp
                startTimestamp = stamp == vfx_nopts_value() ? 0 : stamp
                startWindow(at: Double(startTimestamp ?? 0) * av_q2d(timeBase))
            }
            if resampler == nil {
                var input = AVChannelLayout()
                defer { av_channel_layout_uninit(&input) }
                if source.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
                    av_channel_layout_default(&input, source.pointee.ch_layout.nb_channels)
                } else {
                    av_channel_layout_copy(&input, &source.pointee.ch_layout)
                }
                let status = swr_alloc_set_opts2(&resampler, &layout, AV_SAMPLE_FMT_FLTP, Int32(rate), &input,
                                                 AVSampleFormat(rawValue: source.pointee.format), source.pointee.sample_rate, 0, nil)
                guard status >= 0, swr_init(resampler) >= 0 else {
                    throw MediaError.unsupportedInput(path: path, reason: "cannot resample its audio to \(rate) Hz")
                }
            }
            let input = UnsafeMutableRawPointer(source.pointee.extended_data).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
            try resample(input, count: source.pointee.nb_samples)
        }
    }

    /// Converts `count` decoded samples (nil: the resampler's delayed tail) into the FIFO.
    private func resample(_ input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32) throws {
        let capacity = Int(swr_get_out_samples(resampler, count)) + 32
        if capacity > convertedCapacity {
            for channel in 0..<channelCount {
                converted[channel]?.deallocate()
                converted[channel] = .allocate(capacity: capacity)
            }
            convertedCapacity = capacity
        }
        let written = converted.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: channelCount) { output in
            swr_convert(resampler, output, Int32(capacity), input, count)
        }
        guard written >= 0 else { throw MediaError.corrupt(path: path, reason: "audio resampling: \(ffmpegMessage(written))") }
        // Drop what comes before the window, keep at most what it holds.
        let skipped = min(Int(written), framesToSkip)
        framesToSkip -= skipped
        let kept = min(Int(written) - skipped, framesToKeep)
        guard kept > 0 else { return }
        framesToKeep -= kept
        if framesToKeep == 0 { ended = true }
        for channel in 0..<channelCount { planes[channel] = converted[channel].map { UnsafeMutableRawPointer($0 + skipped) } }
        guard av_audio_fifo_write(fifo, planes, Int32(kept)) == Int32(kept) else {
            throw MediaError.unreadable(path: path, reason: "out of memory")
        }
    }

    /// Sets what to drop and keep once the first decoded samples' time (`first`, seconds on the file's
    /// time line) is known.
    private func startWindow(at first: Double) {
        guard let window else {
            firstSampleSeconds = first
            return
        }
        let start = origin + window.start
        framesToSkip = max(0, Int(((start - first) * Double(rate)).rounded()))
        let kept = max(first, start)
        firstSampleSeconds = kept
        if let duration = window.duration {
            framesToKeep = max(0, Int(((start + duration - kept) * Double(rate)).rounded()))
        }
    }

    /// Where the first sample read sits on the output's time line, in 1 / `sampleRate` (the stream's own
    /// rate): its timestamp, moved by the window's start when there is one. Known once reading began.
    var outputStartPts: Int64 {
        guard let window else {
            return av_rescale_q(startTimestamp ?? 0, timeBase, AVRational(num: 1, den: Int32(clamping: sampleRate)))
        }
        return Int64((((firstSampleSeconds ?? 0) - origin - window.start) * Double(sampleRate)).rounded())
    }
}

/// A part of an audio stream: `start` seconds after the file's start (FFmpeg's `-ss`), `duration`
/// seconds long (nil: to the end).
public struct AudioWindow: Sendable, Equatable {
    public var start: Double
    public var duration: Double?

    public init(start: Double = 0, duration: Double? = nil) {
        self.start = start
        self.duration = duration
    }
}
