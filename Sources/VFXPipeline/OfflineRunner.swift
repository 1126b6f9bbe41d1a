import Foundation
import VFXCore

/// Runs source → processor → sink with decoding, processing and encoding on separate threads joined by
/// bounded queues, so at most a few frames are in flight whatever the clip's length. It never drops a frame
/// (only a processor can, by emitting nothing); at the end of the source the processor is flushed, so a stage
/// that holds frames loses none. Emitted timestamps must strictly increase (a stage that breaks this is named
/// in the error). An error in any stage stops the others, cancels the sink (nothing half-written stays) and
/// is rethrown. The statistics give each stage's own work: the waits on the queues between stages are left out.
///
/// ```swift
/// let runner = OfflineRunner(source: reader, processor: chain)
/// let outputFormat = try runner.prepare()          // configure the chain; size the writer with this
/// let stats = try runner.run(into: writer) { progress in print(progress.framesWritten) }
/// print(stats.process)   // process 2.10 ms/frame (p50 …)
/// ```
public final class OfflineRunner {
    let source: any FrameSource
    let processor: (any FrameProcessor)?
    let queueDepth: Int
    private var outputFormat: FrameFormat?

    /// `queueDepth` frames may wait between two stages (memory: about 2 × depth frames in flight).
    public init(source: any FrameSource, processor: (any FrameProcessor)?, queueDepth: Int = 4) {
        self.source = source
        self.processor = processor
        self.queueDepth = queueDepth
    }

    /// Configures the processor for the source's format and returns the format of the frames it will emit.
    @discardableResult
    public func prepare() throws -> FrameFormat {
        if let outputFormat { return outputFormat }
        let format = try processor?.configure(for: source.format) ?? source.format
        outputFormat = format
        return format
    }

    /// Runs to the end of the source (preparing first if needed) and finishes the sink.
    /// `progress` is called on the calling thread after each written frame. Setting `cancellation` stops the
    /// run after the frame being read: the sink is cancelled and `RunCancelled` is thrown.
    public func run(into sink: any FrameSink, cancellation: CancellationFlag? = nil,
                    progress: ((RunProgress) -> Void)? = nil) throws -> RunStatistics {
        let start = DispatchTime.now()
        do {
            try prepare()
            let stats = try runThreads(sink: sink, cancellation: cancellation, start: start, progress: progress)
            processor?.release()
            outputFormat = nil
            return stats
        } catch {
            processor?.release()
            outputFormat = nil
            sink.cancel()
            throw error
        }
    }

    private func runThreads(sink: any FrameSink, cancellation: CancellationFlag?, start: DispatchTime,
                            progress: ((RunProgress) -> Void)?) throws -> RunStatistics {
        let decoded = BoundedQueue<VideoFrame>(capacity: queueDepth)
        let processed = BoundedQueue<VideoFrame>(capacity: queueDepth)
        let state = RunState()
        let stages = Stages(source: source, processor: processor)
        let expected = source.expectedFrameCount

        let decodeThread = Thread {
            var timing = StageTiming(name: "decode")
            do {
                while true {
                    if cancellation?.isCancelled == true { throw RunCancelled() }
                    let t0 = DispatchTime.now()
                    guard let frame = try stages.source.nextFrame() else { break }
                    timing.record(seconds: seconds(since: t0))
                    if !decoded.push(frame) { break }
                }
            } catch {
                state.fail(error)
                processed.cancel()
            }
            decoded.close()
            state.finishDecode(timing)
        }
        let processThread = Thread {
            var timing = StageTiming(name: "process")
            var order = TimestampOrder()
            var received = 0, emitted = 0
            do {
                // What the processor emits goes on to the encoder, in order and with increasing timestamps. Time spent
                // waiting for room in the encoder's queue is the encoder's, not the processor's: it is left out.
                var waited = 0.0
                let forward: FrameEmitter = { frame in
                    try order.check(frame)
                    emitted += 1
                    let t0 = DispatchTime.now()
                    defer { waited += seconds(since: t0) }
                    if !processed.push(frame) { throw RunCancelled() }
                }
                if let processor = stages.processor {
                    while let frame = decoded.pop() {
                        received += 1
                        waited = 0
                        let t0 = DispatchTime.now()
                        try processor.process(consume frame, emit: forward)
                        timing.record(seconds: seconds(since: t0) - waited)
                    }
                    if !decoded.wasCancelled { try processor.flush(emit: forward) }
                } else {
                    while let frame = decoded.pop() {
                        received += 1
                        try forward(frame)
                    }
                }
            } catch is RunCancelled where state.error != nil {
                // The encoder stopped first; its error is the one to report.
            } catch {
                state.fail(error)
                decoded.cancel()
            }
            processed.close()
            state.finishProcess(timing, dropped: max(received - emitted, 0))
        }
        decodeThread.name = "vfx.decode"
        processThread.name = "vfx.process"
        decodeThread.start()
        processThread.start()

        // Encoding runs on the calling thread.
        var encodeTiming = StageTiming(name: "encode")
        var written = 0
        do {
            while let frame = processed.pop() {
                let t0 = DispatchTime.now()
                try sink.write(frame)
                encodeTiming.record(seconds: seconds(since: t0))
                written += 1
                progress?(RunProgress(framesWritten: written, expectedFrames: expected, elapsedSeconds: seconds(since: start)))
            }
        } catch {
            state.fail(error)
            decoded.cancel()
            processed.cancel()
        }
        state.waitForThreads()
        if let error = state.error { throw error }
        let t0 = DispatchTime.now()
        try sink.finish()
        encodeTiming.record(seconds: seconds(since: t0))

        var stats = state.statistics
        stats.framesWritten = written
        stats.encode = encodeTiming
        stats.wallSeconds = seconds(since: start)
        return stats
    }
}

/// Seconds elapsed since `start`.
func seconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

/// The source and processor as handed to the decode and process threads.
private final class Stages: @unchecked Sendable {
    // Sendable: `source` is used only by the decode thread and `processor` only by the process thread,
    // and `runThreads` waits for both threads before anyone else touches them again.
    let source: any FrameSource
    let processor: (any FrameProcessor)?

    init(source: any FrameSource, processor: (any FrameProcessor)?) {
        self.source = source
        self.processor = processor
    }
}

/// Checks that emitted frames' timestamps strictly increase (frames without one are not checked).
struct TimestampOrder {
    private var last: MediaTime?

    mutating func check(_ frame: borrowing VideoFrame) throws {
        guard let timestamp = frame.timestamp else { return }
        if let last, !(last < timestamp) {
            throw PipelineError.timestampsNotIncreasing(previous: last.seconds, next: timestamp.seconds)
        }
        last = timestamp
    }
}

/// What the worker threads report back, behind a lock.
private final class RunState: @unchecked Sendable {
    // Sendable: every stored property is read and written only while holding `condition`.
    private let condition = NSCondition()
    private var firstError: (any Error)?
    private var running = 2
    private var stats = RunStatistics()

    func fail(_ error: any Error) {
        condition.lock()
        if firstError == nil { firstError = error }
        condition.unlock()
    }

    func finishDecode(_ timing: StageTiming) {
        condition.lock()
        stats.decode = timing
        stats.framesRead = timing.count
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    func finishProcess(_ timing: StageTiming, dropped: Int) {
        condition.lock()
        stats.process = timing
        stats.framesDropped = dropped
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    func waitForThreads() {
        condition.lock()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    var error: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return firstError
    }

    var statistics: RunStatistics {
        condition.lock()
        defer { condition.unlock() }
        return stats
    }
}
