import Foundation
import VFXCore

/// The newest result of work that runs beside the chain (face detection, segmentation): a worker publishes,
/// the frame thread reads, neither waits for the other beyond a short lock.
///
/// ```swift
/// let faces = LatestValue<[FaceObservation]>()
/// faces.publish(observations, timestamp: frame.timestamp)     // analysis thread
/// if let latest = faces.latest { draw(latest.value) }          // frame thread
/// ```
public final class LatestValue<Value: Sendable>: @unchecked Sendable {
    // Sendable: `current` and `count` are read and written only while holding `lock`.
    private let lock = NSLock()
    private var current: Timestamped<Value>?
    private var count = 0

    public init() {}

    /// Replaces the latest value; `timestamp` is that of the frame it was computed from.
    public func publish(_ value: Value, timestamp: MediaTime?) {
        lock.lock()
        current = Timestamped(value: value, timestamp: timestamp)
        count += 1
        lock.unlock()
    }

    /// The latest published value with its frame's timestamp, or nil before the first.
    public var latest: Timestamped<Value>? {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// How many values have been published: a reader can tell whether anything changed since it last looked.
    public var version: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    /// Forgets the latest value (a new stream starts).
    public func reset() {
        lock.lock()
        current = nil
        lock.unlock()
    }
}
