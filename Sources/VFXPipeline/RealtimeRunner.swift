import Foundation
import VFXCore

/// Runs source → processor → sink in real time: frames are processed as they arrive (or as their
/// timestamps fall due, for a file), and when processing runs late the newest frame wins: a frame that has
/// waited a whole frame period while a newer one arrived is dropped instead of queued, so latency stays
/// bounded by about one frame. The frame budget is the source's frame period (`budgetSeconds`).
///
/// Three threads: capture (reads and paces the source), the frame thread (the caller of `run`, which
/// processes), and the sink thread (encodes and writes), plus one for the audio (`setAudio`) and one per
/// analysis (`addAnalysis`); `options.priority` may run the first four ahead of other work. `RealtimeStatistics` keeps per-stage timings
/// (p50/p95/p99), the end-to-end latency from capture to the moment a frame is handed to the sink, fps in
/// and out, and drops. At the end of the source (or after `stop()`) the processor is flushed and the sink
/// finished, so a file sink is complete. Faults end the run with a `RealtimeError` (or the source's or
/// sink's own error) within `sourceStallTimeout` / `sinkStallTimeout`; a network sink given `reopenSink`
/// is reopened instead of failing. A read or write that never returns cannot be interrupted: `run` returns
/// without waiting for it, and that thread keeps the source (or sink) until the call returns. A runner runs once.
///
/// ```swift
/// let runner = RealtimeRunner(source: camera, processor: chain, options: .init(pacing: .arrival))
/// try runner.prepare()
/// DispatchQueue.global().async { _ = try? runner.replaceProcessor(otherChain) }   // next frame boundary
/// let stats = try runner.run(into: virtualCamera) { snapshot in print(snapshot.json) }
/// ```
public final class RealtimeRunner: @unchecked Sendable {
    // Sendable: `processor` and `outputSequence` are touched only by the frame thread (the caller of `run`)
    // and by `prepare` before it; everything other threads reach (`pending`, `installed`, `state`) is
    // guarded by `control`; the monitor and the slots lock themselves; the source is touched only by the
    // capture thread once `run` has started.
    public let source: any FrameSource
    public let options: RealtimeOptions
    private var processor: (any FrameProcessor)?
    private let monitor = RealtimeMonitor()
    private let inbox: NewestFrameSlot
    private let control = NSCondition()
    private var pending: (any FrameProcessor)?
    private var installedTicket = 0
    private var pendingTicket = 0
    private var installedFrame: [Int: Int] = [:]
    private var runState = RunPhase.idle
    private var stopRequested = false
    private let changeLock = NSLock()
    private var outputSequence = 0
    private var formats: (input: FrameFormat, output: FrameFormat)?
    private var analyses: [AnalysisWorker] = []
    private var audio: AudioWorker?
    private var raisedPriority = false

    public init(source: any FrameSource, processor: (any FrameProcessor)?, options: RealtimeOptions = RealtimeOptions()) {
        self.source = source
        self.processor = processor
        self.options = options
        let rate = options.frameRate ?? source.format.frameRate
        inbox = NewestFrameSlot(budget: rate.map { 1 / $0.framesPerSecond } ?? 1.0 / 30, monitor: monitor)
    }

    /// Seconds per frame: the period of `options.frameRate`, else of the source's rate, else 1/30.
    public var budgetSeconds: Double {
        let rate = options.frameRate ?? source.format.frameRate
        return rate.map { 1 / $0.framesPerSecond } ?? 1.0 / 30
    }

    /// Configures the processor for the source's format (on the calling thread) and returns the output format.
    @discardableResult
    public func prepare() throws -> FrameFormat {
        if let formats { return formats.output }
        let input = source.format
        var output = try processor?.configure(for: input) ?? input
        output.frameRate = input.frameRate
        control.lock()
        formats = (input, output)
        control.unlock()
        return output
    }

    /// Whether `options.priority` took effect for the run's threads (false for `.raised` where the system refused);
    /// known once `run` has started.
    public var priorityTookEffect: Bool {
        control.lock()
        defer { control.unlock() }
        return raisedPriority
    }

    /// The statistics so far (any thread).
    public var snapshot: RealtimeStatistics { monitor.statistics(budget: budgetSeconds) }

    /// Adds work that runs beside the chain on a thread of its own (face detection, segmentation), always on
    /// the newest frame: while it is busy, the frames it has not taken are skipped for it, never for the chain.
    /// It publishes its results itself (a `LatestValue` the chain's stages read). Its timings appear as the stage
    /// `name` in the statistics. Call before `run`.
    ///
    /// ```swift
    /// let masks = LatestValue<PersonMask>()
    /// runner.addAnalysis(name: "segmentation") { frame in masks.publish(segmenter.mask(for: frame), timestamp: frame.timestamp) }
    /// ```
    public func addAnalysis(name: String, _ analyze: @escaping @Sendable (VideoFrame) -> Void) {
        analyses.append(AnalysisWorker(name: name, stage: monitor.addStage(name), monitor: monitor, analyze: analyze))
    }

    /// Adds the source's audio: it goes through its own filter chain (inside `audio`) on a thread of its own,
    /// kept in step with the video: after each captured frame it is advanced to that frame's end (its media
    /// time), so the sink, which muxes both by timestamp, gets the audio for a frame about when it gets the
    /// frame. At the end of the run it is finished (the rest up to the video's end, its filter flushed) before
    /// the sink is; after a fault it is cancelled. Its timings appear as the stage "audio". Call before `run`.
    ///
    /// ```swift
    /// runner.setAudio(try LiveAudioTrack(path: "talk.mp4", filter: chain.makeFilter(), for: "out.mp4"))
    /// ```
    public func setAudio(_ audio: any RealtimeAudio) {
        let worker = AudioWorker(audio: audio, stage: monitor.addStage("audio"), monitor: monitor)
        worker.onFailure = { [weak self] in self?.stop() }
        self.audio = worker
    }

    /// Asks the run to end as at the end of the source: flush, finish the sink, return. Any thread.
    public func stop() {
        control.lock()
        stopRequested = true
        control.broadcast()
        control.unlock()
        inbox.wake()
    }

    /// Replaces the processor while frames flow. `next` is configured here, on the calling thread (so the
    /// frame thread never stalls on compiling), for the run's input format, and must emit the same size and
    /// pixel format as the current one. The frame thread swaps it in at the next frame boundary after
    /// flushing the old processor into the sink (a `KeyedStageChain` keeps the stages that did not change, with
    /// their state, and flushes only the others). Returns the number (from 0) of the first output frame that
    /// `next` emits. Changes from several threads are applied one at a time, in the order they arrive.
    @discardableResult
    public func replaceProcessor(_ next: any FrameProcessor) throws -> Int {
        changeLock.lock()
        defer { changeLock.unlock() }
        control.lock()
        let known = formats
        control.unlock()
        guard let known else { throw RealtimeError.notRunning }
        var output = try next.configure(for: known.input)
        output.frameRate = known.input.frameRate
        guard output.pixelFormat == known.output.pixelFormat, output.width == known.output.width,
              output.height == known.output.height else {
            next.release()
            throw RealtimeError.outputFormatChanges(from: known.output, to: output)
        }
        control.lock()
        defer { control.unlock() }
        // A command may come before the frames start to flow: it waits for the run.
        while runState == .idle { control.wait() }
        guard runState == .running else {
            next.release()
            throw RealtimeError.notRunning
        }
        pendingTicket += 1
        let ticket = pendingTicket
        pending = next
        while installedTicket < ticket && runState == .running { control.wait() }
        guard let frame = installedFrame.removeValue(forKey: ticket) else {
            throw RealtimeError.stoppedBeforeChange
        }
        return frame
    }

    /// Runs until the source ends, `stop()` is called, or a fault; then flushes the processor and finishes
    /// the sink (a file sink is complete up to the last frame written; after a sink fault it is cancelled).
    /// `report` is called on the frame thread every `options.reportInterval` seconds; `notice` receives
    /// one-line messages about recoverable events (a sink being reconnected).
    public func run(into sink: any FrameSink, reopenSink: (() throws -> any FrameSink)? = nil,
                    report: ((RealtimeStatistics) -> Void)? = nil,
                    notice: (@Sendable (String) -> Void)? = nil) throws -> RealtimeStatistics {
        try prepare()
        control.lock()
        runState = .running
        control.broadcast()
        control.unlock()
        monitor.start()
        let outbox = BoundedQueue<VideoFrame>(capacity: 2)
        let sinkWorker = SinkWorker(sink: sink, reopen: reopenSink, monitor: monitor, notice: notice)
        let sinkDone = DispatchSemaphore(value: 0)
        let priority = options.priority
        let callerNice = RealtimePriority.currentNice
        let applied = priority.apply()
        control.lock()
        raisedPriority = applied
        control.unlock()
        defer { if priority == .raised { RealtimePriority.restore(to: callerNice) } }
        let sinkThread = Thread {
            priority.apply()
            sinkWorker.drain(outbox)
            sinkDone.signal()
        }
        sinkThread.name = "vfx.live.sink"
        let capture = CaptureWorker(source: source, inbox: inbox, monitor: monitor, pacing: options.pacing, audio: audio)
        let captureThread = Thread {
            priority.apply()
            capture.run()
        }
        captureThread.name = "vfx.live.capture"
        // The watchdog: a sink stuck in a write also blocks the frame thread once the queue is full.
        let finished = CancellationFlag()
        let sinkTimeout = options.sinkStallTimeout
        let watchdog = Thread {
            while !finished.isCancelled {
                if sinkWorker.blockedSeconds > sinkTimeout {
                    sinkWorker.declareBlocked()
                    outbox.cancel()
                    return
                }
                usleep(50_000)
            }
        }
        watchdog.name = "vfx.live.watchdog"
        sinkThread.start()
        captureThread.start()
        watchdog.start()
        for analysis in analyses { analysis.start() }
        audio?.start(priority: priority)

        var failure: (any Error)?
        do {
            try frameLoop(outbox: outbox, sinkWorker: sinkWorker, report: report)
        } catch {
            failure = error
        }
        finished.cancel()
        for analysis in analyses { analysis.slot.end(nil) }
        capture.stop()
        inbox.wake()
        if failure == nil {
            outbox.close()
        } else {
            outbox.cancel()
        }
        // A sink blocked in a write cannot be interrupted: wait for it only while it is not stuck.
        var sinkStuck = sinkWorker.isBlocked
        if !sinkStuck {
            while sinkDone.wait(timeout: .now() + 0.1) == .timedOut {
                if sinkWorker.blockedSeconds > options.sinkStallTimeout {
                    sinkWorker.declareBlocked()
                    sinkStuck = true
                    break
                }
            }
        }
        if let error = sinkWorker.error { failure = SinkFault(underlying: error) }
        if failure == nil, let audio, let audioError = audio.finish() { failure = audioError }
        if failure != nil { audio?.cancel() }
        processor?.release()
        control.lock()
        pending?.release()
        pending = nil
        runState = .finished
        control.broadcast()
        control.unlock()
        if let failure {
            if !sinkStuck { sinkWorker.close(finishing: !(failure is SinkFault) && sinkWorker.error == nil) }
            if let fault = failure as? SinkFault { throw fault.underlying }
            throw failure
        }
        try sinkWorker.finish()
        let final = monitor.statistics(budget: budgetSeconds, final: true)
        report?(final)
        return final
    }

    /// The frame thread: take the newest frame, apply a pending change, process, hand on.
    private func frameLoop(outbox: BoundedQueue<VideoFrame>, sinkWorker: SinkWorker,
                           report: ((RealtimeStatistics) -> Void)?) throws {
        var order = TimestampOrder()
        var lastFrame = DispatchTime.now()
        var nextReport = DispatchTime.now().uptimeNanoseconds + UInt64(options.reportInterval * 1e9)
        let forward: FrameEmitter = { [self] frame in
            try order.check(frame)
            var frame = frame
            frame.attachments[OutputSequence.self] = OutputSequence(number: outputSequence)
            outputSequence += 1
            if !outbox.push(frame) { throw SinkFault(underlying: sinkWorker.error ?? RealtimeError.notRunning) }
        }
        loop: while true {
            if isStopRequested { break }
            if let error = sinkWorker.error { throw SinkFault(underlying: error) }
            let now = DispatchTime.now().uptimeNanoseconds
            if let report, now >= nextReport {
                report(monitor.statistics(budget: budgetSeconds, advancing: true))
                nextReport = now + UInt64(options.reportInterval * 1e9)
            }
            switch inbox.take(timeout: 0.05) {
            case .frame(let frame):
                lastFrame = DispatchTime.now()
                for analysis in analyses { analysis.slot.put(frame) }
                try installPending(emit: forward)
                let t0 = DispatchTime.now()
                if let processor {
                    try processor.process(frame, emit: forward)
                } else {
                    try forward(frame)
                }
                monitor.record(.process, seconds: seconds(since: t0), budget: budgetSeconds)
            case .empty:
                let idle = seconds(since: lastFrame)
                if idle > options.sourceStallTimeout { throw RealtimeError.sourceStalled(seconds: idle) }
            case .ended:
                break loop
            case .failed(let error):
                throw error
            }
        }
        try installPending(emit: forward)
        try processor?.flush(emit: forward)
    }

    private var isStopRequested: Bool {
        control.lock()
        defer { control.unlock() }
        return stopRequested
    }

    /// Swaps in a processor handed over by `replaceProcessor`, after flushing the old one (or, for a
    /// `StageHandover`, the stages of it that the new one does not keep).
    private func installPending(emit: FrameEmitter) throws {
        control.lock()
        let next = pending
        let ticket = pendingTicket
        pending = nil
        control.unlock()
        guard let next else { return }
        if let current = processor as? any StageHandover {
            try current.retire(replacedBy: next, emit: emit)
        } else {
            try processor?.flush(emit: emit)
            processor?.release()
        }
        processor = next
        control.lock()
        installedFrame[ticket] = outputSequence
        installedTicket = ticket
        control.broadcast()
        control.unlock()
    }

    private enum RunPhase { case idle, running, finished }
}

/// How the capture thread paces the source.
public enum RealtimePacing: Sendable {
    /// Frames are taken as fast as the source delivers them (a camera, a pipe: paced by arrival).
    case arrival
    /// Each frame is released when its timestamp falls due on the wall clock (a file, a test pattern).
    case timestamps
}

/// Settings of a real-time run.
public struct RealtimeOptions: Sendable {
    public var pacing: RealtimePacing
    /// The budget's rate; nil takes the source's.
    public var frameRate: FrameRate?
    /// No frame from the source for this long is a stall: the run ends with `RealtimeError.sourceStalled`.
    public var sourceStallTimeout: Double
    /// A sink write that has not returned after this long ends the run with `RealtimeError.sinkBlocked`.
    public var sinkStallTimeout: Double
    /// Seconds between reports.
    public var reportInterval: Double
    /// The scheduling priority of the run's threads (capture, the frame thread, the sink, the audio).
    public var priority: RealtimePriority

    public init(pacing: RealtimePacing = .arrival, frameRate: FrameRate? = nil, sourceStallTimeout: Double = 1,
                sinkStallTimeout: Double = 1, reportInterval: Double = 1, priority: RealtimePriority = .normal) {
        self.pacing = pacing
        self.frameRate = frameRate
        self.sourceStallTimeout = sourceStallTimeout
        self.sinkStallTimeout = sinkStallTimeout
        self.reportInterval = reportInterval
        self.priority = priority
    }
}

/// Faults and misuse of a real-time run. Each description is one line.
public enum RealtimeError: Error, Equatable, CustomStringConvertible {
    case sourceStalled(seconds: Double)
    case sinkBlocked(seconds: Double)
    case outputFormatChanges(from: FrameFormat, to: FrameFormat)
    case notRunning
    case stoppedBeforeChange

    public var description: String {
        switch self {
        case .sourceStalled(let seconds): String(format: "the source stalled: no frame for %.1f s", seconds)
        case .sinkBlocked(let seconds): String(format: "the sink blocked: a write has not returned for %.1f s", seconds)
        case .outputFormatChanges(let from, let to): "the new chain would change the output from \(from) to \(to)"
        case .notRunning: "the live run is not running"
        case .stoppedBeforeChange: "the run stopped before the change reached a frame"
        }
    }
}

/// When a frame entered the pipeline: the moment the source delivered it (monotonic clock, nanoseconds).
public struct CaptureTime: FrameAttachment {
    public var uptimeNanoseconds: UInt64
    public init(uptimeNanoseconds: UInt64) { self.uptimeNanoseconds = uptimeNanoseconds }
}

/// The number (from 0) of an output frame of a real-time run, as `replaceProcessor` answers it.
public struct OutputSequence: FrameAttachment {
    public var number: Int
}

/// A sink error carried through the frame thread.
struct SinkFault: Error {
    let underlying: any Error
}

/// Where captured frames wait for the frame thread. The newest frame wins once processing runs late: a frame
/// that has waited longer than one frame period (`budget`) while a newer one waits too is dropped, and at most
/// two frames wait. Scheduling jitter shorter than a frame period drops nothing.
final class NewestFrameSlot: @unchecked Sendable {
    // Sendable: every stored property is read and written only while holding `condition`.
    enum Taken { case frame(VideoFrame), empty, ended, failed(any Error) }
    private let condition = NSCondition()
    private var frames: [VideoFrame] = []
    private var ended = false
    private var error: (any Error)?
    private let budget: UInt64
    /// Counts the drops (nil for an analysis slot, where skipping frames is the point).
    private let monitor: RealtimeMonitor?

    init(budget: Double, monitor: RealtimeMonitor?) {
        self.budget = UInt64(max(budget, 0) * 1e9)
        self.monitor = monitor
    }

    /// Stores `frame`; a third waiting frame pushes out the oldest (a drop).
    func put(_ newFrame: VideoFrame) {
        condition.lock()
        defer { condition.unlock() }
        frames.append(newFrame)
        if frames.count > 2 {
            frames.removeFirst()
            monitor?.noteDrop()
        }
        condition.broadcast()
    }

    func end(_ failure: (any Error)?) {
        condition.lock()
        ended = true
        error = failure
        condition.broadcast()
        condition.unlock()
    }

    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// The frame to process next, waiting up to `timeout` seconds for one. Frames that waited longer than the
    /// budget while a newer one is there are dropped first. The end is reported once the last frame is taken.
    func take(timeout: Double) -> Taken {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while frames.isEmpty && !ended {
            if !condition.wait(until: deadline) { break }
        }
        let now = DispatchTime.now().uptimeNanoseconds
        while frames.count > 1, let captured = frames[0].attachments[CaptureTime.self]?.uptimeNanoseconds,
              now > captured &+ budget {
            frames.removeFirst()
            monitor?.noteDrop()
        }
        if !frames.isEmpty { return .frame(frames.removeFirst()) }
        if ended { return error.map { .failed($0) } ?? .ended }
        return .empty
    }
}

/// A worker beside the chain: takes the newest frame, runs the analysis, records its time.
private final class AnalysisWorker: @unchecked Sendable {
    // Sendable: every stored property is immutable and itself thread-safe (the slot and monitor lock
    // themselves; `analyze` is a Sendable closure).
    let name: String
    let slot = NewestFrameSlot(budget: 0, monitor: nil)
    let stage: Int
    let monitor: RealtimeMonitor
    let analyze: @Sendable (VideoFrame) -> Void

    init(name: String, stage: Int, monitor: RealtimeMonitor, analyze: @escaping @Sendable (VideoFrame) -> Void) {
        self.name = name
        self.stage = stage
        self.monitor = monitor
        self.analyze = analyze
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                switch slot.take(timeout: 0.1) {
                case .frame(let frame):
                    let t0 = DispatchTime.now()
                    analyze(frame)
                    monitor.record(stage: stage, seconds: seconds(since: t0))
                case .empty:
                    continue
                case .ended, .failed:
                    return
                }
            }
        }
        thread.name = "vfx.live.\(name)"
        thread.start()
    }
}

/// The source's audio in a live run: read, filtered through its own chain and handed to the sink (which muxes
/// it with the video by timestamp) up to a media time the runner gives, on the runner's audio thread.
/// `VFXMedia`'s `LiveAudioTrack` is one: a file's audio track into a file or stream sink.
public protocol RealtimeAudio: AnyObject {
    /// Reads, filters and hands on the audio up to media time `seconds` (on the video's timeline). Returns
    /// false once the audio has ended.
    func advance(to seconds: Double) throws -> Bool
    /// Hands on the rest up to `seconds` (the end of the video; nil: to the audio's end), flushes the filter's
    /// delay and ends the stream, before the sink is finished.
    func finish(at seconds: Double?) throws
    /// Ends the stream after a fault, keeping what was handed on.
    func cancel()
}

/// The audio thread: advances the audio to the newest captured frame's end, records its time.
final class AudioWorker: @unchecked Sendable {
    // Sendable: `target`, `stopping`, `ended`, `failure` and `finishedThread` are only touched under
    // `condition`; `audio` is used by the audio thread until it has ended (`finish` waits for that), then
    // by the frame thread.
    private let audio: any RealtimeAudio
    private let stage: Int
    private let monitor: RealtimeMonitor
    private let condition = NSCondition()
    private var target: Double?
    private var reached: Double?
    private var stopping = false
    private var ended = false
    private var finishedThread = false
    private var failure: (any Error)?
    /// Called once when the audio fails (the runner stops).
    var onFailure: (@Sendable () -> Void)?

    init(audio: any RealtimeAudio, stage: Int, monitor: RealtimeMonitor) {
        self.audio = audio
        self.stage = stage
        self.monitor = monitor
    }

    /// The capture thread: the video has reached media time `seconds`.
    func advance(to seconds: Double) {
        condition.lock()
        if target.map({ seconds > $0 }) ?? true { target = seconds }
        condition.signal()
        condition.unlock()
    }

    func start(priority: RealtimePriority) {
        let thread = Thread { [self] in
            priority.apply()
            while true {
                condition.lock()
                while !stopping && (ended || target == nil || target == reached) { condition.wait() }
                guard !stopping, let goal = target else {
                    finishedThread = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                condition.unlock()
                let t0 = DispatchTime.now()
                var failed: (any Error)?
                var more = true
                do {
                    more = try audio.advance(to: goal)
                } catch {
                    failed = error
                }
                monitor.record(stage: stage, seconds: seconds(since: t0))
                condition.lock()
                reached = goal
                if !more { ended = true }
                if let failed, failure == nil {
                    failure = failed
                    ended = true
                }
                let report = failed != nil ? onFailure : nil
                condition.unlock()
                report?()
            }
        }
        thread.name = "vfx.live.audio"
        thread.start()
    }

    /// Stops the thread (after its current block) and finishes the audio up to the video's end; returns the
    /// audio's error, if it had one.
    func finish() -> (any Error)? {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finishedThread { condition.wait() }
        let end = target
        let earlier = failure
        condition.unlock()
        if let earlier { return earlier }
        do {
            try audio.finish(at: end)
        } catch {
            return error
        }
        return nil
    }

    /// Stops the thread and ends the audio after a fault.
    func cancel() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finishedThread { condition.wait() }
        condition.unlock()
        audio.cancel()
    }
}

/// The capture thread: reads the source, paces it, stamps the capture time, drops what is not taken in time.
private final class CaptureWorker: @unchecked Sendable {
    // Sendable: `source` is used only by the capture thread; `stopped` is guarded by `lock`; the audio worker
    // locks itself.
    let source: any FrameSource
    let inbox: NewestFrameSlot
    let monitor: RealtimeMonitor
    let pacing: RealtimePacing
    private let lock = NSLock()
    private var stopped = false

    let audio: AudioWorker?

    init(source: any FrameSource, inbox: NewestFrameSlot, monitor: RealtimeMonitor, pacing: RealtimePacing, audio: AudioWorker?) {
        self.source = source
        self.inbox = inbox
        self.monitor = monitor
        self.pacing = pacing
        self.audio = audio
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func run() {
        var origin: (wall: UInt64, media: Double)?
        do {
            while !isStopped {
                let t0 = DispatchTime.now()
                guard var frame = try source.nextFrame() else { break }
                monitor.record(.source, seconds: seconds(since: t0), budget: nil)
                if pacing == .timestamps, let timestamp = frame.timestamp?.seconds {
                    let start = origin ?? (DispatchTime.now().uptimeNanoseconds, timestamp)
                    origin = start
                    let due = start.wall &+ UInt64(max(0, timestamp - start.media) * 1e9)
                    while !isStopped {
                        let now = DispatchTime.now().uptimeNanoseconds
                        if now >= due { break }
                        usleep(UInt32(min(due - now, 20_000_000) / 1000))
                    }
                }
                frame.attachments[CaptureTime.self] = CaptureTime(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds)
                monitor.noteCaptured()
                if let audio, let start = frame.timestamp?.seconds {
                    audio.advance(to: start + (frame.duration?.seconds ?? 0))
                }
                inbox.put(frame)
            }
            inbox.end(nil)
        } catch {
            inbox.end(error)
        }
    }
}

/// The sink thread: writes frames, records latency, reopens a lost sink when it can.
private final class SinkWorker: @unchecked Sendable {
    // Sendable: `sink` and `reopen` are used only by the sink thread while it runs and by the frame thread
    // after it ended (or, for a sink stuck in a write, never again); `failure`, `writeStarted` and `sink`
    // swaps are guarded by `lock`.
    private var sink: (any FrameSink)?
    private let reopen: (() throws -> any FrameSink)?
    private let monitor: RealtimeMonitor
    private let notice: (@Sendable (String) -> Void)?
    private let lock = NSLock()
    private var failure: (any Error)?
    private var writeStarted: UInt64?
    private var retryAt: UInt64 = 0

    init(sink: any FrameSink, reopen: (() throws -> any FrameSink)?, monitor: RealtimeMonitor,
         notice: (@Sendable (String) -> Void)?) {
        self.sink = sink
        self.reopen = reopen
        self.monitor = monitor
        self.notice = notice
    }

    var error: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return failure
    }

    /// Marks the sink as stuck in its current write: the run ends with `RealtimeError.sinkBlocked`.
    func declareBlocked() {
        lock.lock()
        if failure == nil {
            failure = RealtimeError.sinkBlocked(seconds: writeStarted.map { Double(DispatchTime.now().uptimeNanoseconds - $0) / 1e9 } ?? 0)
        }
        lock.unlock()
    }

    /// True once `declareBlocked` was called.
    var isBlocked: Bool {
        lock.lock()
        defer { lock.unlock() }
        if case RealtimeError.sinkBlocked? = failure { return true }
        return false
    }

    /// Seconds the current write has been running (0 when none is).
    var blockedSeconds: Double {
        lock.lock()
        defer { lock.unlock() }
        guard let writeStarted else { return 0 }
        return Double(DispatchTime.now().uptimeNanoseconds - writeStarted) / 1e9
    }

    func drain(_ outbox: BoundedQueue<VideoFrame>) {
        while let frame = outbox.pop() {
            let now = DispatchTime.now().uptimeNanoseconds
            if sink == nil, let reopen, now >= retryAt {
                sink = try? reopen()
                if sink == nil { retryAt = now + 500_000_000 }
            }
            guard let current = sink else {
                monitor.noteDrop()
                continue
            }
            let captured = frame.attachments[CaptureTime.self]?.uptimeNanoseconds
            lock.lock()
            writeStarted = now
            lock.unlock()
            do {
                try current.write(frame)
                let done = DispatchTime.now().uptimeNanoseconds
                monitor.record(.sink, seconds: Double(done - now) / 1e9, budget: nil)
                monitor.noteWritten(latency: captured.map { Double(now - min($0, now)) / 1e9 })
            } catch {
                if reopen != nil {
                    notice?("\(error); reconnecting")
                    current.cancel()
                    sink = nil
                    retryAt = DispatchTime.now().uptimeNanoseconds + 500_000_000
                    monitor.noteDrop()
                } else {
                    lock.lock()
                    failure = error
                    writeStarted = nil
                    lock.unlock()
                    outbox.cancel()
                    return
                }
            }
            lock.lock()
            writeStarted = nil
            lock.unlock()
        }
    }

    /// Completes the sink after the sink thread ended normally.
    func finish() throws {
        try sink?.finish()
        sink = nil
    }

    /// After a fault: keep what was written (`finishing`), or abandon it.
    func close(finishing: Bool) {
        if finishing {
            do { try sink?.finish() } catch { sink?.cancel() }
        } else {
            sink?.cancel()
        }
        sink = nil
    }
}
