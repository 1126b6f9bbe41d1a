import VFXCore

/// An audio effect with the lifecycle call apps use for the microphone: an identity, `initialize` with
/// the stream's sample rate and channel count, `process` on each buffer in place, `release` at the end.
///
/// `process` is real-time safe: it does not allocate, lock, log or throw, and it takes blocks of any size
/// (1 frame or 4096; a filter that works on fixed frames buffers internally). Everything it needs is made
/// in `initialize`, which may throw (a cut-off above the Nyquist frequency…). A filter reports the delay
/// it adds (`latency`, in frames at its sample rate) so that files can be kept time-aligned, and the
/// block size it works best with.
///
/// ```swift
/// let filter = try AudioChain(parsing: "high-pass:frequency=100,noise-suppression").makeFilter()
/// try filter.initialize(sampleRate: 48_000, channels: 1)
/// filter.process(buffer)            // on the audio thread, every 10 ms
/// filter.release()
/// ```
public protocol AudioFilter: AnyObject {
    /// The filter's identity: its chain string (`gain:db=-6`).
    var id: String { get }
    /// The delay the filter adds, in frames at the sample rate it was initialized with.
    var latency: Int { get }
    /// The block size (frames) the filter works in internally, nil when it has none.
    var preferredBlockSize: Int? { get }
    /// The sample rate the filter runs at for a stream at `rate` (its own `rate` when it takes any);
    /// files are resampled to it and back.
    func sampleRate(near rate: Int) -> Int
    /// Prepares the filter (allocates its state) for a stream; clears any earlier state.
    func initialize(sampleRate: Int, channels: Int) throws
    /// Filters `buffer` in place. Real-time safe.
    func process(_ buffer: AudioBuffer)
    /// Frees what `initialize` allocated.
    func release()
}

extension AudioFilter {
    public var preferredBlockSize: Int? { nil }
    public func sampleRate(near rate: Int) -> Int { rate }
    public func release() {}
}
