import VFXCore
import VFXPipeline

/// Filters run one after another as one filter: its latency is the sum of theirs.
///
/// ```swift
/// let chain = AudioFilterChain([GainFilter(db: -6), EchoFilter(delay: 250, decay: 0.4)])
/// try chain.initialize(sampleRate: 48_000, channels: 2)
/// chain.process(buffer)
/// ```
public final class AudioFilterChain: AudioFilter {
    public let filters: [any AudioFilter]

    public init(_ filters: [any AudioFilter]) {
        self.filters = filters
    }

    public var id: String { filters.map(\.id).joined(separator: ",") }
    public var latency: Int { filters.reduce(0) { $0 + $1.latency } }
    public var preferredBlockSize: Int? { filters.compactMap(\.preferredBlockSize).max() }

    /// The first rate every filter accepts, starting from `rate`.
    public func sampleRate(near rate: Int) -> Int {
        filters.reduce(rate) { $1.sampleRate(near: $0) }
    }

    public func initialize(sampleRate: Int, channels: Int) throws {
        for filter in filters {
            guard filter.sampleRate(near: sampleRate) == sampleRate else {
                throw AudioFilterError.unsupportedRate(filter: filter.id, rate: sampleRate)
            }
            try filter.initialize(sampleRate: sampleRate, channels: channels)
        }
    }

    public func process(_ buffer: AudioBuffer) {
        for filter in filters { filter.process(buffer) }
    }

    public func release() {
        for filter in filters { filter.release() }
    }
}
