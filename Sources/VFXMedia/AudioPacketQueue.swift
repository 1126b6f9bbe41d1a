import CFFmpeg
import Foundation

/// The audio track of a `MediaReader` as a `MediaWriter` receives it: the stream's codec parameters and
/// time base, and a queue of its packets.
///
/// Video goes through the processing thread(s) while audio needs no processing: the reader puts every
/// audio packet it demuxes into `packets` (in file order, so they arrive roughly in step with the video
/// frames), and the writer takes them out each time it writes a frame and hands both to the muxer, which
/// interleaves them by timestamp. The queue is closed when the reader reaches the end of its file.
final class AudioTrack: @unchecked Sendable {
    // Sendable: `parameters` is a private copy written only in init and read-only afterwards; the packets
    // travel through the locked queue.
    let parameters: UnsafeMutablePointer<AVCodecParameters>
    let timeBase: AVRational
    let packets = AudioPacketQueue()

    init?(copying source: UnsafePointer<AVCodecParameters>, timeBase: AVRational) {
        guard let parameters = avcodec_parameters_alloc() else { return nil }
        guard avcodec_parameters_copy(parameters, source) >= 0 else {
            var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&pointer)
            return nil
        }
        self.parameters = parameters
        self.timeBase = timeBase
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
        avcodec_parameters_free(&pointer)
    }

    /// The codec's name (`aac`, `opus`…).
    var codecName: String { String(cString: avcodec_get_name(parameters.pointee.codec_id)) }
}

/// A thread-safe first-in first-out queue of packets from one producer to one consumer.
final class AudioPacketQueue: @unchecked Sendable {
    // Sendable: `packets` and `closed` are only touched under `lock`.
    private let lock = NSLock()
    private var packets: [Packet] = []
    private var closed = false

    /// Adds a packet (the caller gives it up).
    func push(_ packet: Packet) {
        lock.lock()
        packets.append(packet)
        lock.unlock()
    }

    /// Marks the end of the track: no more packets will come.
    func close() {
        lock.lock()
        closed = true
        lock.unlock()
    }

    /// True when the producer has closed the queue.
    var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
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
