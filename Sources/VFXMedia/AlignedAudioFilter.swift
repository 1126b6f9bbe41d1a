import VFXCore
import VFXPipeline

/// An audio filter run block by block with its delay taken out, so that what comes out lines up with what went
/// in, sample for sample: the first `latency` frames the filter puts out are dropped, and `drain` feeds it
/// silence until as many frames came out as went in. Files (`AudioFiltering`) and live runs (`LiveAudioTrack`)
/// both filter through it.
///
/// ```swift
/// try filter.initialize(sampleRate: reader.rate, channels: reader.channelCount)
/// let aligned = AlignedAudioFilter(filter, buffer: AudioBuffer(channels: 2, capacity: 1024, sampleRate: 48_000))
/// while try reader.read(into: aligned.buffer) { try aligned.filterBuffer { planes, count in … } }
/// try aligned.drain { planes, count in … }
/// ```
final class AlignedAudioFilter {
    /// Frames per block read from a file.
    static let block = 1024

    /// Receives each run of output frames: one pointer per channel, and the frame count.
    typealias Sink = (UnsafePointer<UnsafeMutablePointer<Float>>, Int) throws -> Void

    let filter: any AudioFilter
    /// Where each block is read before `filterBuffer`.
    let buffer: AudioBuffer
    private let planes: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Output frames still to drop (the filter's delay).
    private var skip: Int
    /// Frames filtered from the input, and frames handed on.
    private(set) var read = 0
    private(set) var written = 0
    /// Time spent in the filter's `process`.
    private(set) var filterTime = Duration.zero
    private let clock = ContinuousClock()

    /// `filter` must be initialized already: its `latency` is read here.
    init(_ filter: any AudioFilter, buffer: AudioBuffer) {
        self.filter = filter
        self.buffer = buffer
        planes = .allocate(capacity: buffer.channelCount)
        skip = filter.latency
    }

    deinit { planes.deallocate() }

    /// Filters the block in `buffer` and hands on what of it is past the filter's delay.
    func filterBuffer(_ sink: Sink) throws {
        read += buffer.frameCount
        process()
        try emit(upTo: buffer.frameCount, sink)
    }

    /// Flushes what the filter still holds, with silence behind it, up to the length read.
    func drain(_ sink: Sink) throws {
        while written < read {
            buffer.frameCount = min(buffer.capacity, read - written + skip)
            buffer.clear()
            process()
            try emit(upTo: read - written, sink)
        }
    }

    private func process() {
        let started = clock.now
        filter.process(buffer)
        filterTime += clock.now - started
    }

    private func emit(upTo count: Int, _ sink: Sink) throws {
        let dropped = min(skip, buffer.frameCount)
        skip -= dropped
        let kept = min(buffer.frameCount - dropped, count)
        guard kept > 0 else { return }
        for channel in 0..<buffer.channelCount { planes[channel] = buffer.channel(channel) + dropped }
        try sink(planes, kept)
        written += kept
    }
}

extension AudioFileReader {
    /// A reader of `path`'s audio `stream` (nil: the best one) at the rate `filter` runs at for it.
    static func opened(_ path: String, stream: Int? = nil, window: AudioWindow? = nil, for filter: any AudioFilter) throws -> AudioFileReader {
        let probe = try AudioFileReader(path: path, stream: stream, window: window)
        let rate = filter.sampleRate(near: probe.sampleRate)
        return rate == probe.sampleRate ? probe : try AudioFileReader(path: path, rate: rate, stream: stream, window: window)
    }
}
