import Dispatch
import Foundation

/// Splits work over rows (or any range of items) into contiguous slices, one per thread, and waits for all
/// of them: the one slice-threading helper of VideoFX, used by filters, conversions and the neural layers.
///
/// With one thread, or work too small to pay for the hand-off, the body runs once on the calling thread (no
/// queue, no synchronisation).
///
/// ```swift
/// let slices = SliceRunner(threads: 2)
/// slices.run(rows: plane.height) { rows in
///     for y in rows { /* work on row y */ }
/// }
/// slices.forEachSlice(of: outputRows, work: multiplyAdds) { rows, slice in /* slice's own scratch */ }
/// ```
public struct SliceRunner: Sendable {
    public let threads: Int

    /// `threads` nil means one per active core.
    public init(threads: Int? = nil) {
        self.threads = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Below this much work (in multiply-adds or pixel operations) a job runs on one thread: a hand-off to
    /// the workers costs several microseconds.
    public static let minimumParallelWork = 2_000_000

    /// Runs `body` on `0..<rows` split into at most `threads` slices of whole multiples of `granularity` rows
    /// (e.g. 2 for the two luma rows of a 4:2:0 chroma row). Returns when every slice is done.
    public func run(rows: Int, granularity: Int = 1, _ body: (Range<Int>) -> Void) {
        forEachSlice(of: rows, granularity: granularity) { range, _ in body(range) }
    }

    /// Runs `body(range, slice)` on `0..<count` split into at most `threads` contiguous slices (whole multiples of
    /// `granularity`), numbered from 0 so each can use its own scratch memory. With `work` below
    /// `minimumParallelWork` everything runs as slice 0 on the calling thread. Returns when every slice is done.
    public func forEachSlice(of count: Int, granularity: Int = 1, work: Int = .max, _ body: (Range<Int>, Int) -> Void) {
        let groups = (count + granularity - 1) / granularity
        let parts = work < SliceRunner.minimumParallelWork ? 1 : min(threads, groups)
        if parts <= 1 {
            if count > 0 { body(0..<count, 0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let slice = SliceBody(body: body)
            DispatchQueue.concurrentPerform(iterations: parts) { index in
                let start = groups * index / parts * granularity
                let end = min(count, groups * (index + 1) / parts * granularity)
                if start < end { slice.body(start..<end, index) }
            }
        }
    }
}

/// The slice body handed to the worker threads.
private struct SliceBody: @unchecked Sendable {
    // Sendable: `concurrentPerform` returns only when every iteration has finished, so the closure never
    // outlives `run`; each iteration gets a disjoint range of rows, and the contract of `run` is that a body
    // writes only the rows of its range.
    let body: (Range<Int>, Int) -> Void
}
