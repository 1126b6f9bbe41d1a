import CFFmpeg
import Foundation
import VFXPipeline
import VFXCore

/// The audio-only formats VideoFX writes, by extension, with the encoder each uses.
public enum AudioFileKind: String, Sendable, CaseIterable {
    case wav, flac, mp3, ogg, opus, m4a

    /// The kind for `path`'s extension (case-insensitive), nil when it is not an audio-only format.
    public init?(path: String) {
        switch (path as NSString).pathExtension.lowercased() {
        case "wav": self = .wav
        case "flac": self = .flac
        case "mp3": self = .mp3
        case "ogg", "oga": self = .ogg
        case "opus": self = .opus
        case "m4a", "aac": self = .m4a
        default: return nil
        }
    }

    var muxer: String {
        switch self {
        case .wav: "wav"
        case .flac: "flac"
        case .mp3: "mp3"
        case .ogg: "ogg"
        case .opus: "opus"
        case .m4a: "ipod"
        }
    }

    /// The encoders to try, best first (WAV keeps a PCM input's own sample format).
    var encoders: [String] {
        switch self {
        case .wav: ["pcm_s16le"]
        case .flac: ["flac"]
        case .mp3: ["libmp3lame"]
        case .ogg: ["libvorbis", "libopus"]
        case .opus: ["libopus"]
        case .m4a: ["aac"]
        }
    }
}

/// What filtering a file's audio did.
public struct AudioRunSummary: Sendable {
    /// The encoder used (`aac`, `pcm_s16le`…).
    public let codec: String
    public let sampleRate: Int
    public let channels: Int
    /// The rate the filters ran at (the stream's own, or the one they needed).
    public let filterRate: Int
    /// Frames read at `filterRate`; the output has as many (each filter's latency is compensated).
    public let frames: Int
    /// The frames of delay the chain added and the file path removed.
    public let latency: Int
    /// Time spent in the filters only, and the whole run.
    public let filterSeconds: Double
    public let wallSeconds: Double

    /// The length of the audio in seconds.
    public var seconds: Double { filterRate > 0 ? Double(frames) / Double(filterRate) : 0 }
}

/// A video file's audio stream after filtering, encoded for a given container: give it to `MediaWriter`
/// (`filteredAudio:`), which writes it in place of the source's stream it came from (the file's
/// subtitle streams, and audio streams not filtered, are kept as they are).
public final class FilteredAudio {
    let track: SourceTrack
    public let summary: AudioRunSummary

    init(track: SourceTrack, summary: AudioRunSummary) {
        self.track = track
        self.summary = summary
    }

    /// The input stream it replaces.
    public var inputIndex: Int { track.inputIndex }

    /// `tracks` with the ones `filtered` replace swapped for them.
    static func tracks(_ tracks: [SourceTrack], replacedBy filtered: [FilteredAudio]) -> [SourceTrack] {
        tracks.map { track in
            filtered.first { track.kind == .audio && track.inputIndex == $0.track.inputIndex }?.track ?? track
        }
    }
}

/// Runs an `AudioFilter` over the audio of a file: into an audio-only file, or into an encoded track for a
/// video output. The output keeps the input's sample rate, channel layout and length: the filters run at
/// the rate they need (resampled with libswresample and back), and their latency is compensated (the
/// first `latency` frames out are dropped and the chain is flushed with as many frames of silence).
///
/// ```swift
/// let chain = try AudioChain(parsing: "noise-suppression").makeFilter()
/// let summary = try AudioFiltering.filterFile(input: "noisy.wav", output: "clean.flac", filter: chain)
/// ```
public enum AudioFiltering {
    /// Filters the audio of `input` (an audio file or a video's best audio track; `window`: a part of it)
    /// into the audio-only file `output` (its extension picks the format). Written under a temporary name
    /// and renamed when complete. `progress` gets the fraction done (0…1) about once per second of audio;
    /// what it throws (a cancellation) stops the run and removes the temporary file.
    public static func filterFile(input: String, output: String, filter: any AudioFilter, window: AudioWindow? = nil,
                                  progress: (Double) throws -> Void = { _ in }) throws -> AudioRunSummary {
        guard let kind = AudioFileKind(path: output) else {
            throw MediaError.unknownOutputExtension(path: output)
        }
        let url = URL(fileURLWithPath: output)
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw MediaError.missingOutputFolder(path: output, folder: folder)
        }
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent).partial-\(suffix).\(url.pathExtension)").path
        let reader = try AudioFileReader.opened(input, window: window, for: filter)
        var muxer: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&muxer, nil, kind.muxer, "file:" + temporary) >= 0, let context = muxer else {
            throw MediaError.writeFailed(path: output, reason: "no \(kind.muxer) muxer")
        }
        var headerWritten = false
        defer {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
        }
        var completed = false
        defer { if !completed { unlink(temporary) } }
        let codec = try encoderCodec(for: reader, kind: kind, output: output)
        var stream: UnsafeMutablePointer<AVStream>?
        var encoder: AudioEncoder?
        let summary = try run(reader, filter: filter, progress: progress) { planes, count in
            if encoder == nil {
                let made = try makeEncoder(codec, reader: reader, globalHeader: context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0,
                                           name: output)
                guard let newStream = avformat_new_stream(context, nil) else { throw MediaError.writeFailed(path: output, reason: "out of memory") }
                avcodec_parameters_from_context(newStream.pointee.codecpar, made.context)
                newStream.pointee.time_base = made.context.pointee.time_base
                var io: UnsafeMutablePointer<AVIOContext>?
                let opened = avio_open(&io, context.pointee.url, AVIO_FLAG_WRITE)
                guard opened >= 0 else { throw MediaError.writeFailed(path: output, reason: ffmpegMessage(opened)) }
                context.pointee.pb = io
                let written = avformat_write_header(context, nil)
                guard written >= 0 else { throw MediaError.writeFailed(path: output, reason: ffmpegMessage(written)) }
                headerWritten = true
                stream = newStream
                encoder = made
            }
            guard let encoder, let stream else { return }
            let write: (Packet) throws -> Void = { packet in
                packet.pointer.pointee.stream_index = stream.pointee.index
                av_packet_rescale_ts(packet.pointer, encoder.context.pointee.time_base, stream.pointee.time_base)
                let status = av_interleaved_write_frame(context, packet.pointer)
                guard status >= 0 else { throw MediaError.writeFailed(path: output, reason: ffmpegMessage(status)) }
            }
            if let planes {
                try encoder.encode(planes, count: count, inputRate: reader.rate, inputLayout: &reader.layout, emit: write)
            } else {
                try encoder.finish(emit: write)
            }
        }
        guard headerWritten, let encoder else { throw MediaError.corrupt(path: input, reason: "the audio stream holds no samples") }
        let status = av_write_trailer(context)
        guard status >= 0 else { throw MediaError.writeFailed(path: output, reason: ffmpegMessage(status)) }
        avio_closep(&context.pointee.pb)
        guard rename(temporary, output) == 0 else { throw MediaError.writeFailed(path: output, reason: String(cString: strerror(errno))) }
        completed = true
        return summary.encoded(with: encoder)
    }

    /// Filters every audio stream of `input` (each through its own filter from `makeFilter`; `window`: a
    /// part of it) and encodes each for the video file `output` (its container picks the codec: the
    /// input's own when the container takes it and FFmpeg can encode it, else AAC for mp4 and mov, Opus
    /// for mkv and WebM). Throws when the file has no audio stream or one cannot be decoded: an output
    /// never leaves out audio the input has.
    public static func filterTracks(of input: String, for output: String, makeFilter: () throws -> any AudioFilter,
                                    window: AudioWindow? = nil,
                                    progress: (Double) throws -> Void = { _ in }) throws -> [FilteredAudio] {
        guard let kind = MediaWriter.Kind(extension: (output as NSString).pathExtension) else {
            throw MediaError.unknownOutputExtension(path: output)
        }
        let (muxer, fallbacks): (String, [String]) = switch kind {
        case .mp4: ("mp4", ["aac"])
        case .mov: ("mov", ["aac"])
        case .mkv: ("matroska", ["libopus", "aac"])
        case .webm: ("webm", ["libopus", "libvorbis"])
        case .ts: ("mpegts", ["aac"])
        case .avi: ("avi", ["libmp3lame"])
        case .gif, .y4m, .png, .jpeg:
            throw MediaError.unsupportedFrame(path: output, reason: "\(kind.rawValue) holds no audio; write .mp4, .mkv, .webm, .mov, .ts or .avi")
        }
        guard let format = av_guess_format(muxer, nil, nil) else { throw MediaError.writeFailed(path: output, reason: "no \(muxer) muxer") }
        let first = try AudioFileReader.opened(input, window: window, for: makeFilter())
        // Every stream is opened (and so checked) before any is filtered.
        let readers = try first.audioStreams.map { index in
            index == Int(first.streamIndex) ? (first, try makeFilter()) : try {
                let filter = try makeFilter()
                return (try AudioFileReader.opened(input, stream: index, window: window, for: filter), filter)
            }()
        }
        var results: [FilteredAudio] = []
        for (position, (reader, filter)) in readers.enumerated() {
            let share = 1 / Double(readers.count)
            results.append(try filterTrack(reader, filter: filter, format: format, fallbacks: fallbacks, output: output) { fraction in
                try progress((Double(position) + fraction) * share)
            })
        }
        return results
    }

    /// One stream of `filterTracks`.
    private static func filterTrack(_ reader: AudioFileReader, filter: any AudioFilter, format: UnsafePointer<AVOutputFormat>,
                                    fallbacks: [String], output: String, progress: (Double) throws -> Void) throws -> FilteredAudio {
        let own = avcodec_find_encoder(reader.codecID).flatMap { codec in
            codec.pointee.capabilities & AV_CODEC_CAP_EXPERIMENTAL == 0
                && avformat_query_codec(format, reader.codecID, FF_COMPLIANCE_NORMAL) == 1 ? codec : nil
        }
        guard let codec = own ?? fallbacks.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw MediaError.encoderUnavailable(path: output, encoder: fallbacks[0])
        }
        var encoder: AudioEncoder?
        var packets: [Packet] = []
        let summary = try run(reader, filter: filter, progress: progress) { planes, count in
            if encoder == nil {
                encoder = try makeEncoder(codec, reader: reader, globalHeader: format.pointee.flags & AVFMT_GLOBALHEADER != 0, name: output)
            }
            guard let encoder else { return }
            let keep: (Packet) throws -> Void = { packet in
                guard let copy = Packet(), av_packet_ref(copy.pointer, packet.pointer) >= 0 else {
                    throw MediaError.writeFailed(path: output, reason: "out of memory")
                }
                packets.append(copy)
            }
            if let planes {
                try encoder.encode(planes, count: count, inputRate: reader.rate, inputLayout: &reader.layout, emit: keep)
            } else {
                try encoder.finish(emit: keep)
            }
        }
        guard let encoder else {
            throw MediaError.corrupt(path: reader.path, reason: "audio stream #\(reader.streamIndex) holds no samples"
                                     + (reader.window == nil ? "" : " in the trimmed part"))
        }
        let track = try SourceTrack(audioEncodedBy: encoder, inputIndex: Int(reader.streamIndex), path: output)
        for packet in packets { track.packets.push(packet) }
        return FilteredAudio(track: track, summary: summary.encoded(with: encoder))
    }

    private static func encoderCodec(for reader: AudioFileReader, kind: AudioFileKind, output: String) throws -> UnsafePointer<AVCodec> {
        if kind == .wav, String(cString: avcodec_get_name(reader.codecID)).hasPrefix("pcm_"), let own = avcodec_find_encoder(reader.codecID) {
            return own
        }
        if kind == .ogg, reader.codecName == "opus", let opus = avcodec_find_encoder_by_name("libopus") { return opus }
        guard let codec = kind.encoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw MediaError.encoderUnavailable(path: output, encoder: kind.encoders[0])
        }
        return codec
    }

    /// An encoder at the stream's own rate and layout, starting at the stream's first timestamp.
    private static func makeEncoder(_ codec: UnsafePointer<AVCodec>, reader: AudioFileReader, globalHeader: Bool,
                                    name: String) throws -> AudioEncoder {
        let start = reader.outputStartPts
        let preferred: AVSampleFormat? = String(cString: codec.pointee.name).hasPrefix("pcm_") ? nil
            : (reader.bitsPerSample > 16 ? AV_SAMPLE_FMT_S32 : nil)
        return try withUnsafePointer(to: &reader.layout) { layout in
            try AudioEncoder(codec: codec, rate: reader.sampleRate, layout: layout, preferredFormat: preferred,
                             globalHeader: globalHeader, startPts: start, name: name)
        }
    }

    /// Reads every block, filters it and hands the output to `sink` (planes and count; nil planes once at
    /// the end), compensating the filter's latency.
    private static func run(_ reader: AudioFileReader, filter: any AudioFilter, progress: (Double) throws -> Void,
                            sink: (UnsafePointer<UnsafeMutablePointer<Float>>?, Int) throws -> Void) throws -> AudioRunSummary {
        let clock = ContinuousClock()
        let started = clock.now
        try filter.initialize(sampleRate: reader.rate, channels: reader.channelCount)
        defer { filter.release() }
        let aligned = AlignedAudioFilter(filter, buffer: AudioBuffer(channels: reader.channelCount, capacity: AlignedAudioFilter.block,
                                                                     sampleRate: reader.rate))
        let expected = reader.expectedFrames
        var lastReport = 0
        while try reader.read(into: aligned.buffer) {
            try aligned.filterBuffer { try sink($0, $1) }
            if let expected, expected > 0, aligned.read - lastReport >= reader.rate {
                lastReport = aligned.read
                try progress(min(Double(aligned.read) / Double(expected), 1))
            }
        }
        try aligned.drain { try sink($0, $1) }
        try sink(nil, 0)
        try progress(1)
        return AudioRunSummary(codec: "", sampleRate: reader.sampleRate, channels: reader.channelCount, filterRate: reader.rate,
                               frames: aligned.read, latency: filter.latency, filterSeconds: aligned.filterTime.seconds,
                               wallSeconds: (clock.now - started).seconds)
    }
}

extension AudioRunSummary {
    func encoded(with encoder: AudioEncoder) -> AudioRunSummary {
        AudioRunSummary(codec: encoder.encoderName, sampleRate: Int(encoder.context.pointee.sample_rate), channels: channels,
                        filterRate: filterRate, frames: frames, latency: latency, filterSeconds: filterSeconds, wallSeconds: wallSeconds)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
