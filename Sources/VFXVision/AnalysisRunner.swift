import Foundation
import VFXCore
import VFXPipeline

/// Runs an analysis (face detection, segmentation…) beside a frame chain, on its own thread and at its own
/// rate: `submit` hands it a frame without waiting; if the worker is still busy, the frame waiting for it is
/// replaced by the newer one (never queued), and each result is published with the timestamp of the frame
/// it came from through `results` (a `LatestValue`), where effects read the latest.
///
/// ```swift
/// let detector = try FaceDetector(model: .shortRange)
/// let smoother = FaceSmoother()
/// let faces = AnalysisRunner<FaceObservations> { frame in
///     let found = smoother.smooth(detector.detect(in: frame), at: frame.timestamp?.seconds ?? 0,
///                                 width: frame.width, height: frame.height)
///     return FaceObservations(faces: found, timestamp: frame.timestamp)
/// }
/// faces.submit(frame)                                  // frame thread: returns at once
/// if let latest = faces.results.latest { … }           // the newest smoothed faces and their frame's time
/// faces.stop()
/// ```
public final class AnalysisRunner<Result: Sendable>: Sendable {
    public let results: LatestValue<Result>
    private let worker: Worker<Result>

    /// Starts the worker thread. `analyse` runs only there.
    public init(analyse: @escaping (VideoFrame) throws -> Result) {
        results = LatestValue<Result>()
        worker = Worker(analyse: analyse, results: results)
        let worker = self.worker
        let thread = Thread { worker.work() }
        thread.name = "VFXVision analysis"
        thread.start()
    }

    /// Stops the worker when the runner is released without `stop()` (it finishes the frame in progress).
    deinit { worker.requestStop() }

    /// Offers `frame` for analysis and returns at once; a frame still waiting is dropped in its favour.
    public func submit(_ frame: VideoFrame) { worker.submit(frame) }

    /// Waits until every submitted frame has been analysed or replaced (for offline runs and tests).
    public func waitUntilIdle() { worker.waitUntilIdle() }

    /// Stops the worker after the analysis in progress and waits for it; later frames are ignored.
    public func stop() {
        worker.requestStop()
        worker.waitUntilFinished()
    }

    /// Frames analysed, and frames replaced by a newer one before the worker got to them.
    public var counts: (analysed: Int, replaced: Int) { worker.counts }

    /// The message of the last analysis that threw, if any (the runner carries on with the next frame).
    public var lastError: String? { worker.lastError }
}

/// The runner's shared state and its thread's loop. The thread holds this object, not the runner, so
/// releasing the runner stops the thread.
private final class Worker<Result: Sendable>: @unchecked Sendable {
    // Sendable: `pending`, `stopping`, `busy`, `finished`, the counters and `lastFailure` are only touched
    // while holding `condition`'s lock. `analyse` (and the detectors it captures, which are not thread-safe)
    // is called only by the one worker thread, never concurrently, and never after the thread finished.
    let analyse: (VideoFrame) throws -> Result
    let results: LatestValue<Result>
    private let condition = NSCondition()
    private var pending: VideoFrame?
    private var stopping = false
    private var busy = false
    private var finished = false
    private var analysed = 0
    private var replaced = 0
    private var lastFailure: String?

    init(analyse: @escaping (VideoFrame) throws -> Result, results: LatestValue<Result>) {
        self.analyse = analyse
        self.results = results
    }

    func submit(_ frame: VideoFrame) {
        condition.lock()
        if !stopping {
            if pending != nil { replaced += 1 }
            pending = frame
            condition.signal()
        }
        condition.unlock()
    }

    func waitUntilIdle() {
        condition.lock()
        while (pending != nil || busy) && !finished { condition.wait() }
        condition.unlock()
    }

    func requestStop() {
        condition.lock()
        stopping = true
        pending = nil
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilFinished() {
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    var counts: (analysed: Int, replaced: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (analysed, replaced)
    }

    var lastError: String? {
        condition.lock()
        defer { condition.unlock() }
        return lastFailure
    }

    func work() {
        while true {
            condition.lock()
            while pending == nil && !stopping { condition.wait() }
            guard !stopping, let frame = pending else {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            pending = nil
            busy = true
            condition.unlock()
            var failure: String?
            do {
                results.publish(try analyse(frame), timestamp: frame.timestamp)
            } catch {
                failure = "\(error)"
            }
            condition.lock()
            busy = false
            analysed += 1
            if let failure { lastFailure = failure }
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// A chain stage that hands each frame to an `AnalysisRunner` and passes the frame on with the runner's
/// latest result attached (`frame.attachments[Value.self]`; the value carries its own frame's timestamp).
/// Live, the frame never waits for the analysis (the result may be a frame or two old); offline
/// (`waitForEachFrame`), each frame waits for its own result, so a file run is the same every time.
///
/// ```swift
/// let segmenter = try PersonSegmenter(model: .landscape)
/// let masks = AnalysisAttacher(runner: AnalysisRunner<PersonMask> { segmenter.segment($0) })
/// let chain = ProcessorChain([masks, backgroundBlur])      // the blur reads frame.attachments[PersonMask.self]
/// ```
public final class AnalysisAttacher<Value: FrameAttachment>: FrameProcessor {
    public let runner: AnalysisRunner<Value>
    public let waitForEachFrame: Bool

    public init(runner: AnalysisRunner<Value>, waitForEachFrame: Bool = false) {
        self.runner = runner
        self.waitForEachFrame = waitForEachFrame
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat { input }

    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        var frame = frame
        runner.submit(frame)
        if waitForEachFrame { runner.waitUntilIdle() }
        if let latest = runner.results.latest { frame.attachments[Value.self] = latest.value }
        try emit(frame)
    }

    public func flush(emit: FrameEmitter) throws {}

    public func release() { runner.stop() }
}
