import CFFmpeg
import Foundation

/// One audio or subtitle stream of a `MediaReader` as a `MediaWriter` receives it: the stream's codec
/// parameters, time base, metadata (language, title) and disposition, and a queue of its packets.
///
/// Video goes through the processing thread(s) while these streams need no processing: the reader puts
/// every packet it demuxes for them into `packets` (in file order, so they arrive roughly in step with the
/// video frames), and the writer takes them out each time it writes a frame and hands them to the muxer,
/// which interleaves everything by timestamp. The queues are closed when the reader reaches the end of its
/// file (or of the trimmed range). The queue holds at most what the reader demuxed ahead of the writer,
/// which the bounded frame queue between them limits to a few frames' worth.
final class SourceTrack: @unchecked Sendable {
    // Sendable: `parameters` and `metadata` are private copies written only in init and read-only
    // afterwards; the packets travel through the locked queue.
    let parameters: UnsafeMutablePointer<AVCodecParameters>
    let timeBase: AVRational
    /// The stream's index in the input file.
    let inputIndex: Int
    let kind: TrackKind
    let disposition: Int32
    private(set) var metadata: OpaquePointer?
    let packets = PacketQueue()

    init?(copying stream: UnsafeMutablePointer<AVStream>, kind: TrackKind) {
        guard let parameters = avcodec_parameters_alloc() else { return nil }
        guard avcodec_parameters_copy(parameters, stream.pointee.codecpar) >= 0 else {
            var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&pointer)
            return nil
        }
        self.parameters = parameters
        timeBase = stream.pointee.time_base
        inputIndex = Int(stream.pointee.index)
        self.kind = kind
        disposition = stream.pointee.disposition
        av_dict_copy(&metadata, stream.pointee.metadata, 0)
    }

    /// An audio stream VideoFX encoded (a filtered audio stream, see `FilteredAudio`; a live run's audio) that
    /// takes the place of input stream `inputIndex`: `encoder`'s codec parameters and time base, no metadata or
    /// disposition. `path` names the output in the error.
    init(audioEncodedBy encoder: AudioEncoder, inputIndex: Int, path: String) throws {
        guard let parameters = avcodec_parameters_alloc() else { throw MediaError.writeFailed(path: path, reason: "out of memory") }
        guard avcodec_parameters_from_context(parameters, encoder.context) >= 0 else {
            var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&pointer)
            throw MediaError.writeFailed(path: path, reason: "out of memory")
        }
        self.parameters = parameters
        timeBase = encoder.context.pointee.time_base
        self.inputIndex = inputIndex
        kind = .audio
        disposition = 0
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
        avcodec_parameters_free(&pointer)
        av_dict_free(&metadata)
    }

    /// The codec's name (`aac`, `opus`, `subrip`…).
    var codecName: String { String(cString: avcodec_get_name(parameters.pointee.codec_id)) }

    /// True for subtitles stored as text (SubRip, ASS, WebVTT, mov_text), which can be rewritten into
    /// another text format; bitmap subtitles (DVD, PGS) cannot.
    var isTextSubtitle: Bool {
        guard let descriptor = avcodec_descriptor_get(parameters.pointee.codec_id) else { return false }
        return descriptor.pointee.props & AV_CODEC_PROP_TEXT_SUB != 0
    }
}

/// What kind of stream a track is.
public enum TrackKind: String, Sendable {
    case audio, subtitle, data, attachment, video
}

/// A thread-safe first-in first-out queue of packets from one producer to one consumer.
final class PacketQueue: @unchecked Sendable {
    // Sendable: `packets` and `closed` are only touched under `lock`.
    private let lock = NSLock()
    private var packets: [Packet] = []

    /// Adds a packet (the caller gives it up).
    func push(_ packet: Packet) {
        lock.lock()
        packets.append(packet)
        lock.unlock()
    }

    /// Takes every packet queued so far, oldest first.
    func takeAll() -> [Packet] {
        lock.lock()
        defer { lock.unlock() }
        let taken = packets
        packets = []
        return taken
    }
}
