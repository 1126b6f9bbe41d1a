
/// A block of audio: planar Float32 samples (one contiguous run per channel, nominally in −1…1), with its
/// sample rate, channel count, frame count and the timestamp of its first frame.
///
/// The storage is allocated once, for `capacity` frames per channel, and reused: a buffer that travels
/// through a chain of `AudioFilter`s is processed in place and never reallocated. `frameCount` may be
/// anything from 0 to `capacity` (the last block of a file is usually short).
///
/// ```swift
/// let buffer = AudioBuffer(channels: 2, capacity: 480, sampleRate: 48_000)
/// buffer.frameCount = 480
/// buffer.channel(0)[0] = 0.5            // left, first frame
/// try chain.initialize(sampleRate: 48_000, channels: 2)
/// chain.process(buffer)                 // in place
/// ```
public final class AudioBuffer {
    public let channelCount: Int
    /// Frames each channel can hold.
    public let capacity: Int
    public var sampleRate: Int
    /// Frames in use (0…capacity).
    public var frameCount: Int {
        didSet { frameCount = min(max(frameCount, 0), capacity) }
    }
    /// The time of the first frame, when known.
    public var timestamp: MediaTime?
    private let storage: UnsafeMutablePointer<Float>

    /// A zeroed buffer of `capacity` frames for `channels` channels; `frameCount` starts at 0.
    public init(channels: Int, capacity: Int, sampleRate: Int) {
        channelCount = max(channels, 1)
        self.capacity = max(capacity, 1)
        self.sampleRate = sampleRate
        frameCount = 0
        storage = .allocate(capacity: channelCount * self.capacity)
        storage.initialize(repeating: 0, count: channelCount * self.capacity)
    }

    deinit { storage.deallocate() }

    /// The first sample of `index`'s channel (valid for `capacity` samples).
    public func channel(_ index: Int) -> UnsafeMutablePointer<Float> {
        storage + min(max(index, 0), channelCount - 1) * capacity
    }

    /// The samples in use of `index`'s channel.
    public func samples(_ index: Int) -> UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: channel(index), count: frameCount)
    }

    /// Sets every sample in use to zero.
    public func clear() {
        for index in 0..<channelCount { channel(index).update(repeating: 0, count: frameCount) }
    }

    /// The duration of the frames in use, in seconds.
    public var seconds: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }
}
