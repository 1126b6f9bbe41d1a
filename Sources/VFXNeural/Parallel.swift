import Dispatch

/// Splits a layer's rows across threads when the model was loaded with `threads` > 1 and the layer is
/// big enough to pay for the hand-off; otherwise runs the whole range on the calling thread.
///
/// ```swift
/// Parallel(threads: 2).forEachChunk(of: outputHeight, work: multiplyAdds) { rows, chunk in ... }
/// ```
struct Parallel {
    let threads: Int

    /// Layers below this many multiply-adds run on one thread (a hand-off costs several microseconds).
    static let minimumWork = 2_000_000

    /// Calls `body` once per chunk of `0..<count` (chunk indices start at 0), concurrently when split.
    func forEachChunk(of count: Int, work: Int, _ body: (Range<Int>, Int) -> Void) {
        let chunks = min(threads, count)
        guard chunks > 1, work >= Parallel.minimumWork else {
            body(0..<count, 0)
            return
        }
        withoutActuallyEscaping(body) { body in
            let shared = ChunkBody(run: body)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                shared.run(chunk * count / chunks..<(chunk + 1) * count / chunks, chunk)
            }
        }
    }
}

/// The chunk body handed to the worker threads. `@unchecked Sendable` is safe here: `concurrentPerform`
/// returns only after every chunk has finished, so the body never outlives the call, and the layers give
/// each chunk disjoint output rows and its own scratch band while inputs and weights are only read.
private struct ChunkBody: @unchecked Sendable {
    let run: (Range<Int>, Int) -> Void
}
