import Dispatch
import Foundation

/// Splits work over rows into contiguous slices, one per thread, and waits for all of them.
///
/// With one thread the body runs once on the calling thread (no queue, no synchronisation).
///
/// ```swift
/// let slices = SliceRunner(threads: 2)
/// slices.run(rows: plane.height) { rows in
///     for y in rows { /* work on row y */ }
/// }
/// ```
public struct SliceRunner: Sendable {
    public let threads: Int

    /// `threads` nil means one per active core.
    public init(threads: Int? = nil) {
        self.threads = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Runs `body` on `0..<rows` split into at most `threads` slices of whole multiples of `granularity` rows
    /// (e.g. 2 for the two luma rows of a 4:2:0 chroma row). Returns when every slice is done.
    public func run(rows: Int, granularity: Int = 1, _ body: (Range<Int>) -> Void) {
        let groups = (rows + granularity - 1) / granularity
        let count = min(threads, groups)
        if count <= 1 {
            if rows > 0 { body(0..<rows) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let slice = SliceBody(body: body)
            DispatchQueue.concurrentPerform(iterations: count) { index in
                let start = groups * index / count * granularity
                let end = min(rows, groups * (index + 1) / count * granularity)
                if start < end { slice.body(start..<end) }
            }
        }
    }
}

/// The slice body handed to the worker threads.
private struct SliceBody: @unchecked Sendable {
    // Sendable: `concurrentPerform` returns only when every iteration has finished, so the closure never
    // outlives `run`; each iteration gets a disjoint range of rows, and the contract of `run` is that a body
    // writes only the rows of its range.
    let body: (Range<Int>) -> Void
}
