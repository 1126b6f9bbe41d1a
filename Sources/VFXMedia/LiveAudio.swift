import CFFmpeg
import Foundation
import VFXCore
import VFXPipeline

/// A file's audio in a live run (`vfx live FILE --audio-filter CHAIN -o SINK`): read from the file's audio
/// stream, filtered through its own chain (an `AudioFilter`, at the rate it asks for), encoded for the sink's
/// container (AAC for mp4, mov, MPEG-TS, FLV/RTMP; Opus for mkv and WebM) and handed to the sink as a track
/// that it muxes with the video by timestamp. The audio keeps its own timestamps, on the same timeline as the
/// file's video frames, and the filter's delay is compensated (its first `latency` frames out are dropped and
/// it is flushed with as much silence at the end), so sound and picture stay in sync.
///
/// `RealtimeRunner` advances it on its audio thread to the end of each captured frame (`setAudio`).
///
/// ```swift
/// let audio = try LiveAudioTrack(path: "talk.mp4", filter: try AudioChain(parsing: "noise-suppression").makeFilter(),
///                                for: "out.mkv")
/// let sink = try MediaWriter(path: "out.mkv", frameRate: FrameRate(30), threads: 1, audio: audio)
/// runner.setAudio(audio)
/// ```
public final class LiveAudioTrack: RealtimeAudio, @unchecked Sendable {
    // Sendable: everything but `track` is used by one thread at a time (the runner's audio thread while it
    // runs, then the frame thread for `finish`/`cancel`, after the audio thread ended); `track` hands packets
    // to the sink thread through its locked queue.
    let track: SourceTrack
    public let path: String
    /// The sample rate and channel count of the file's audio, and the encoder's name.
    public let sampleRate: Int
    public let channels: Int
    public let encoderName: String
    private let reader: AudioFileReader
    private let aligned: AlignedAudioFilter
    private let encoder: AudioEncoder
    private let startSeconds: Double
    /// Whether a block read ahead waits in `aligned.buffer`.
    private var buffered: Bool
    private var readerEnded = false
    private var closed = false

    /// Opens the audio of `path` for the sink `sink` (a file path or a `udp://`, `srt://`, `rtmp://` URL) and
    /// initializes `filter` (which the track releases at its end). Throws a one-line `MediaError` for a file
    /// with no audio or a sink that holds none (y4m, images, a virtual camera).
    public init(path: String, filter: any AudioFilter, for sink: String) throws {
        let (muxer, encoders) = try LiveAudioTrack.container(for: sink)
        guard let format = av_guess_format(muxer, nil, nil) else { throw MediaError.writeFailed(path: sink, reason: "no \(muxer) muxer") }
        guard let codec = encoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw MediaError.encoderUnavailable(path: sink, encoder: encoders[0])
        }
        let reader = try AudioFileReader.opened(path, for: filter)
        self.path = path
        self.reader = reader
        sampleRate = reader.sampleRate
        channels = reader.channelCount
        let buffer = AudioBuffer(channels: reader.channelCount, capacity: AlignedAudioFilter.block, sampleRate: reader.rate)
        // The first block gives the stream's first timestamp, where the encoder's timestamps start.
        buffered = try reader.read(into: buffer)
        readerEnded = !buffered
        startSeconds = Double(reader.startTimestamp ?? 0) * av_q2d(reader.timeBase)
        let startPts = reader.outputStartPts
        encoder = try withUnsafePointer(to: &reader.layout) { layout in
            try AudioEncoder(codec: codec, rate: reader.sampleRate, layout: layout, preferredFormat: nil,
                             globalHeader: format.pointee.flags & AVFMT_GLOBALHEADER != 0, startPts: startPts, name: sink)
        }
        encoderName = encoder.encoderName
        track = try SourceTrack(audioEncodedBy: encoder, inputIndex: Int(reader.streamIndex), path: sink)
        try filter.initialize(sampleRate: reader.rate, channels: reader.channelCount)
        aligned = AlignedAudioFilter(filter, buffer: buffer)
    }

    /// The muxer a sink writes and the audio encoders to try for it (best first).
    static func container(for sink: String) throws -> (muxer: String, encoders: [String]) {
        let scheme = sink.split(separator: ":").first.map { $0.lowercased() } ?? ""
        if sink.contains("://") {
            switch scheme {
            case "rtmp": return ("flv", ["aac"])
            case "udp", "srt", "tcp": return ("mpegts", ["aac"])
            default: throw MediaError.unsupportedInput(path: sink, reason: "stream scheme '\(scheme)' (udp, srt, rtmp)")
            }
        }
        switch (sink as NSString).pathExtension.lowercased() {
        case "mp4", "m4v": return ("mp4", ["aac"])
        case "mov": return ("mov", ["aac"])
        case "ts": return ("mpegts", ["aac"])
        case "mkv": return ("matroska", ["libopus", "aac"])
        case "webm": return ("webm", ["libopus", "libvorbis"])
        default:
            throw MediaError.unsupportedFrame(path: sink, reason: "it holds no audio; send the audio to a file (.mp4, .mkv, .webm, .mov, .ts) "
                + "or a udp://, srt:// or rtmp:// stream")
        }
    }

    /// The media time (seconds, on the file's timeline) up to which audio has been read.
    public var position: Double { startSeconds + Double(aligned.read) / Double(reader.rate) }

    public func advance(to seconds: Double) throws -> Bool {
        while !readerEnded && position < seconds {
            try step()
        }
        return !readerEnded
    }

    public func finish(at seconds: Double?) throws {
        guard !closed else { return }
        defer { close() }
        while !readerEnded && position < (seconds ?? .infinity) {
            try step()
        }
        try aligned.drain(encode)
        try encoder.finish(emit: push)
    }

    public func cancel() {
        guard !closed else { return }
        close()
    }

    private func close() {
        closed = true
        aligned.filter.release()
    }

    /// Filters and encodes one block (the one read ahead first).
    private func step() throws {
        if !buffered {
            guard try reader.read(into: aligned.buffer) else {
                readerEnded = true
                return
            }
        }
        buffered = false
        try aligned.filterBuffer(encode)
    }

    private func encode(_ planes: UnsafePointer<UnsafeMutablePointer<Float>>, count: Int) throws {
        try encoder.encode(planes, count: count, inputRate: reader.rate, inputLayout: &reader.layout, emit: push)
    }

    /// A copy of an encoded packet for the sink's queue (the encoder reuses its own).
    private func push(_ packet: Packet) throws {
        guard let copy = Packet(), av_packet_ref(copy.pointer, packet.pointer) >= 0 else {
            throw MediaError.writeFailed(path: path, reason: "out of memory")
        }
        track.packets.push(copy)
    }
}

extension MediaWriter {
    /// A file sink for a live run that also holds `audio`'s track (muxed with the video by timestamp).
    public convenience init(path: String, frameRate: FrameRate?, threads: Int, audio: LiveAudioTrack) throws {
        try self.init(path: path, frameRate: frameRate, source: nil, options: EncodingOptions(threads: threads), liveTracks: [audio.track])
    }
}

extension StreamSink {
    /// A stream sink that also carries `audio`'s track (AAC, muxed with the video by timestamp).
    public convenience init(url: String, frameRate: FrameRate?, audio: LiveAudioTrack) throws {
        try self.init(url: url, frameRate: frameRate, tracks: [audio.track])
    }
}
