import Foundation

/// A value behind a lock, for state that several threads share (the filter registry, FFmpeg's log callback on
/// encoder threads, the benchmark's list of folders to remove on exit).
///
/// ```swift
/// let names = Locked<Set<String>>([])
/// names.withLock { $0.insert("sepia") }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    // Sendable: `value` is read and written only inside `withLock`, while holding `lock`.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
