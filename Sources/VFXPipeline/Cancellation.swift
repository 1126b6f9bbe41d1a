import Foundation

/// A flag another thread (a signal handler, a UI) sets to stop a run early.
///
/// ```swift
/// let stop = CancellationFlag()
/// DispatchQueue.global().asyncAfter(deadline: .now() + 5) { stop.cancel() }
/// try runner.run(into: writer, cancellation: stop)   // throws RunCancelled after at most one more frame
/// ```
public final class CancellationFlag: @unchecked Sendable {
    // Sendable: `cancelled` is only read and written under `lock`.
    private let lock = NSLock()
    private var cancelled = false

    public init() {}

    public func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
    }

    public var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }
}

/// Thrown by a run stopped through its `CancellationFlag`.
public struct RunCancelled: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "interrupted" }
}
