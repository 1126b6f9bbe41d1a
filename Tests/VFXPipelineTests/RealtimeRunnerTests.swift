import Foundation
import Testing
import VFXCore
import VFXPipeline

/// Small gray frames at `rate`, numbered by their first byte… and by their timestamps.
final class PacedCountingSource: FrameSource {
    let format: FrameFormat
    let count: Int
    /// After this many frames the source blocks (a stalled camera) or throws.
    let stallAfter: Int?
    let failAfter: Int?
    private var index = 0

    init(count: Int, rate: Int, stallAfter: Int? = nil, failAfter: Int? = nil) {
        format = FrameFormat(pixelFormat: .gray8, width: 16, height: 16, frameRate: FrameRate(rate))
        self.count = count
        self.stallAfter = stallAfter
        self.failAfter = failAfter
    }

    var expectedFrameCount: Int? { count }

    func nextFrame() throws -> VideoFrame? {
        if let stallAfter, index >= stallAfter { Thread.sleep(forTimeInterval: 30) }
        if let failAfter, index >= failAfter { throw TestFault.sourceBroke }
        guard index < count else { return nil }
        let rate = format.frameRate ?? FrameRate(30)
        var frame = VideoFrame(format: .gray8, width: 16, height: 16,
                               timestamp: MediaTime(value: Int64(index), timescale: Int32(rate.numerator)))
        frame.duration = rate.frameDuration
        frame.attachments[SourceIndex.self] = SourceIndex(value: index)
        index += 1
        return frame
    }
}

struct SourceIndex: FrameAttachment { var value: Int }
struct Tag: FrameAttachment { var value: Int }
enum TestFault: Error, Equatable { case sourceBroke, sinkBroke }

/// Waits `delay` seconds per frame and tags it.
final class SlowTagger: VideoProcessor {
    let delay: Double
    let tag: Int
    init(delay: Double, tag: Int = 0) { self.delay = delay; self.tag = tag }
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        var frame = frame
        frame.attachments[Tag.self] = Tag(value: tag)
        return frame
    }
}

/// Holds one frame: emits frame k−1 when frame k arrives, the last one at flush.
final class OneFrameDelay: FrameProcessor {
    private var held: VideoFrame?
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        if let previous = held.take() { try emit(previous) }
        held = frame
    }
    func flush(emit: FrameEmitter) throws {
        if let previous = held.take() { try emit(previous) }
    }
}

/// Keeps what it receives; may block or fail on a given write.
final class RecordingSink: FrameSink, @unchecked Sendable {
    // Sendable: `frames` and `finished` are touched under `lock` only.
    private let lock = NSLock()
    private var frames: [VideoFrame] = []
    private var finishedFlag = false
    let blockAt: Int?
    let failAt: Int?

    init(blockAt: Int? = nil, failAt: Int? = nil) { self.blockAt = blockAt; self.failAt = failAt }

    func write(_ frame: consuming VideoFrame) throws {
        lock.lock()
        let n = frames.count
        lock.unlock()
        if n == blockAt { Thread.sleep(forTimeInterval: 30) }
        if n == failAt { throw TestFault.sinkBroke }
        lock.lock()
        frames.append(frame)
        lock.unlock()
    }
    func finish() throws { lock.lock(); finishedFlag = true; lock.unlock() }
    func cancel() {}
    var received: [VideoFrame] { lock.lock(); defer { lock.unlock() }; return frames }
    var finished: Bool { lock.lock(); defer { lock.unlock() }; return finishedFlag }
}

@Suite(.serialized) struct RealtimeRunnerTests {
    /// Processing fast enough: frames come out in order, every frame is either passed on or counted as a drop,
    /// and the run is paced at the source's rate. (Whether none is dropped and the latency stays under a frame
    /// are speed targets, measured by the commands in docs/live.md on a quiet machine, not here.)
    @Test func keepsUpWithoutDrops() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 45, rate: 30), processor: SlowTagger(delay: 0),
                                    options: RealtimeOptions(pacing: .timestamps))
        let sink = RecordingSink()
        let stats = try runner.run(into: sink)
        let indices = sink.received.compactMap { $0.attachments[SourceIndex.self]?.value }
        #expect(indices == indices.sorted() && stats.framesIn == 45 && stats.framesOut + stats.drops == 45)
        #expect(sink.finished)
        // Paced at 30 fps, 45 frames take about 1.5 s (the first is due at once).
        #expect(stats.elapsed >= 44.0 / 30 && stats.elapsed < 4)
        #expect(stats.latency.count == stats.framesOut)
    }

    /// Processing takes 25 ms per frame while frames come every 10 ms: the newest frame wins. The formula:
    /// about 1000/25 = 40 frames out per second of 100 in; tolerance ±35 % for a loaded machine. Whatever is
    /// dropped is counted, and what comes out is in order.
    @Test func dropsTheOlderFrameWhenLate() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 150, rate: 100), processor: SlowTagger(delay: 0.025),
                                    options: RealtimeOptions(pacing: .timestamps))
        let sink = RecordingSink()
        let stats = try runner.run(into: sink)
        let indices = sink.received.compactMap { $0.attachments[SourceIndex.self]?.value }
        #expect(indices == indices.sorted() && Set(indices).count == indices.count)
        #expect(stats.framesIn == 150)
        #expect(stats.framesOut + stats.drops == stats.framesIn)
        let expected = 150.0 * 10 / 25
        #expect(Double(stats.framesOut) > expected * 0.65 && Double(stats.framesOut) < expected * 1.35, "\(stats.framesOut) out")
        // No queue builds up: a frame waits at most one processing time before its own (25 + 25 ms, margin 3×).
        #expect(stats.latency.percentile(0.5) < 0.15, "\(stats.latency)")
        #expect(stats.overBudget > 0)
    }

    /// A stage that holds a frame is flushed at the end: nothing lost.
    @Test func flushesHeldFramesAtTheEnd() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 20, rate: 50), processor: OneFrameDelay(),
                                    options: RealtimeOptions(pacing: .timestamps))
        let sink = RecordingSink()
        let stats = try runner.run(into: sink)
        let indices = sink.received.compactMap { $0.attachments[SourceIndex.self]?.value }
        #expect(indices.last == 19, "the held last frame came out at the flush")
        #expect(indices == indices.sorted() && stats.framesOut + stats.drops == 20)
    }

    /// A processor replaced mid-run: every frame numbered before the answer has the old tag, every frame
    /// from it on the new one.
    @Test func replacementAppliesFromTheAnsweredFrame() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 90, rate: 60), processor: SlowTagger(delay: 0, tag: 1),
                                    options: RealtimeOptions(pacing: .timestamps))
        let sink = RecordingSink()
        let answer = LockedBox<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
            answer.value = try? runner.replaceProcessor(SlowTagger(delay: 0, tag: 2))
        }
        _ = try runner.run(into: sink)
        let first = try #require(answer.value)
        let tags = sink.received.map { $0.attachments[Tag.self]?.value }
        #expect(first > 5 && first < 85)
        #expect(tags[..<first].allSatisfy { $0 == 1 } && tags[first...].allSatisfy { $0 == 2 })
    }

    /// An analysis slower than the frame rate (40 ms per frame at 60 fps) runs beside the chain on the newest
    /// frame: the chain keeps up, the analysis skips frames, and each frame carries the latest result, which is
    /// never from a later frame and never goes back in time.
    @Test func analysisRunsBesideTheChainOnTheNewestFrame() throws {
        let latest = LatestValue<Int>()
        let analysed = LockedBox<Int>()
        let reader = LatestReader(latest)
        let runner = RealtimeRunner(source: PacedCountingSource(count: 60, rate: 60), processor: reader,
                                    options: RealtimeOptions(pacing: .timestamps))
        runner.addAnalysis(name: "slow-analysis") { frame in
            Thread.sleep(forTimeInterval: 0.04)
            analysed.value = (analysed.value ?? 0) + 1
            latest.publish(frame.attachments[SourceIndex.self]?.value ?? -1, timestamp: frame.timestamp)
        }
        let sink = RecordingSink()
        let stats = try runner.run(into: sink)
        let pairs = sink.received.compactMap { frame in
            frame.attachments[SourceIndex.self].map { ($0.value, frame.attachments[Tag.self]?.value ?? -1) }
        }
        #expect(pairs.allSatisfy { $0.1 <= $0.0 }, "a result is never from a later frame")
        #expect(pairs.map(\.1) == pairs.map(\.1).sorted(), "results never go back in time")
        #expect(pairs.contains { $0.1 >= 0 }, "results arrive")
        // About one analysis per 40 ms over one second: far fewer than the 60 frames (formula: 25, ±60 %).
        let runs = analysed.value ?? 0
        #expect(runs >= 5 && runs <= 40, "\(runs) analyses")
        #expect(stats.stages.map(\.name) == ["source", "process", "sink", "slow-analysis"])
    }

    @Test func sourceStallEndsTheRunWithinTwoSeconds() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 100, rate: 30, stallAfter: 5), processor: nil,
                                    options: RealtimeOptions(pacing: .timestamps, sourceStallTimeout: 1))
        let sink = RecordingSink()
        let start = Date()
        #expect(throws: RealtimeError.self) { try runner.run(into: sink) }
        #expect(Date().timeIntervalSince(start) < 2.5)
        #expect((1...5).contains(sink.received.count) && sink.finished, "a file sink keeps what was written")
    }

    @Test func sourceErrorEndsTheRun() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 100, rate: 30, failAfter: 5), processor: nil)
        #expect(throws: TestFault.sourceBroke) { try runner.run(into: RecordingSink()) }
    }

    @Test func blockedSinkEndsTheRunWithinTwoSeconds() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 300, rate: 30), processor: nil,
                                    options: RealtimeOptions(pacing: .timestamps, sinkStallTimeout: 1))
        let start = Date()
        #expect(throws: RealtimeError.self) { try runner.run(into: RecordingSink(blockAt: 3)) }
        #expect(Date().timeIntervalSince(start) < 2.5)
    }

    /// A sink that fails is reopened when a reopen is given: the run goes on, the lost frames are drops.
    @Test func failedSinkIsReopened() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 60, rate: 60), processor: nil,
                                    options: RealtimeOptions(pacing: .timestamps))
        let second = RecordingSink()
        let notices = LockedBox<Int>()
        let stats = try runner.run(into: RecordingSink(failAt: 10), reopenSink: { second },
                                   notice: { _ in notices.value = (notices.value ?? 0) + 1 })
        #expect(notices.value == 1)
        // Reopened half a second after the failure (at frame 10 of 60 at 60 fps): about 20 frames remain.
        #expect(second.received.count >= 10 && second.finished, "\(second.received.count) frames after reopening")
        #expect(stats.framesOut == 10 + second.received.count)
        #expect(stats.framesOut + stats.drops == 60)
    }

    @Test func failedSinkWithoutReopenStops() throws {
        let runner = RealtimeRunner(source: PacedCountingSource(count: 60, rate: 60), processor: nil,
                                    options: RealtimeOptions(pacing: .timestamps))
        #expect(throws: TestFault.sinkBroke) { try runner.run(into: RecordingSink(failAt: 10)) }
    }

    @Test func loopingSourceKeepsTimestampsIncreasing() throws {
        let looping = try LoopingSource { PacedCountingSource(count: 3, rate: 30) }
        var times: [Double] = []
        for _ in 0..<9 { times.append(try #require(try looping.nextFrame()?.timestamp?.seconds)) }
        for (index, time) in times.enumerated() { #expect(abs(time - Double(index) / 30) < 1e-6) }
    }

    /// The session's filter may be set from another thread while frames flow; every frame has either the old
    /// or the new filter, and once the setter returned, the next frame has the new one.
    @Test func sessionSwitchesFiltersFromAnyThread() throws {
        let session = CallSession()
        let one = VideoFilter(id: "one", name: "One") { input in
            var frame = input.originalFrame
            frame.attachments[Tag.self] = Tag(value: 1)
            return frame
        }
        let two = VideoFilter(id: "two", name: "Two", stage: { SlowTagger(delay: 0, tag: 2) })
        let source = PacedCountingSource(count: 400, rate: 30)
        var tags: [Int?] = []
        session.setVideoFilter(one)
        let switched = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            session.setVideoFilter(two)
            switched.signal()
        }
        while let frame = try source.nextFrame() {
            tags.append(try session.process(frame)?.attachments[Tag.self]?.value)
            if tags.count == 200 {
                switched.wait()
            }
        }
        #expect(tags.allSatisfy { $0 == 1 || $0 == 2 })
        let firstTwo = try #require(tags.firstIndex(of: 2))
        #expect(firstTwo <= 200 && tags[firstTwo...].allSatisfy { $0 == 2 })
        session.setVideoFilter(nil)
        #expect(try session.process(VideoFrame(format: .gray8, width: 16, height: 16))?.attachments[Tag.self] == nil)
    }
}

/// Tags each frame with the latest analysis result (the frame thread reading what the worker published).
final class LatestReader: VideoProcessor {
    let latest: LatestValue<Int>
    init(_ latest: LatestValue<Int>) { self.latest = latest }
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        frame.attachments[Tag.self] = Tag(value: latest.latest?.value ?? -1)
        return frame
    }
}

/// A value set by one thread and read by another.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // Sendable: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value?
    var value: Value? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
