import Foundation
import Testing
import VFXCore
import VFXPipeline

/// Counts the frames it has seen since it was configured and stamps the count under its own number (in
/// `Counts`) and its number (as `Tag`) on each: a kept stage's count runs on across a change, a new one's
/// starts at 1. Records its lifecycle in `log`.
final class CountingStage: VideoProcessor, @unchecked Sendable {
    // Sendable: `seen` is used only by the frame thread; `log` locks itself.
    let number: Int
    let log: LifecycleLog
    private var seen = 0
    init(_ number: Int, log: LifecycleLog) { self.number = number; self.log = log }
    func configure(for input: FrameFormat) throws -> FrameFormat {
        seen = 0
        log.note("configure \(number)")
        return input
    }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        seen += 1
        var frame = frame
        var counts = frame.attachments[Counts.self] ?? Counts(values: [:])
        counts.values[number] = seen
        frame.attachments[Counts.self] = counts
        frame.attachments[Tag.self] = Tag(value: number)
        return frame
    }
    func release() { log.note("release \(number)") }
}

struct Counts: FrameAttachment { var values: [Int: Int] }

final class LifecycleLog: @unchecked Sendable {
    // Sendable: `events` is only touched under `lock`.
    private let lock = NSLock()
    private var events: [String] = []
    func note(_ event: String) { lock.lock(); events.append(event); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return events }
}

/// A filter that lowers every sample by `step` per buffer processed since `initialize`, so its state shows.
final class RampingGain: AudioFilter, @unchecked Sendable {
    // Sendable: used by one audio thread at a time; `log` locks itself.
    let id: String
    let log: LifecycleLog
    private(set) var buffers = 0
    init(id: String, log: LifecycleLog) { self.id = id; self.log = log }
    var latency: Int { 0 }
    func initialize(sampleRate: Int, channels: Int) throws {
        buffers = 0
        log.note("initialize \(id) on \(pthread_self())")
    }
    func process(_ buffer: AudioBuffer) {
        buffers += 1
        for channel in 0..<buffer.channelCount {
            for index in 0..<buffer.frameCount { buffer.channel(channel)[index] = Float(buffers) }
        }
    }
    func release() { log.note("release \(id) on \(pthread_self())") }
}

@Suite(.serialized) struct LiveChangeTests {
    /// A change through `KeyedStageChain` keeps the stages whose key and incoming format are unchanged: the
    /// kept stage's count runs on without a break across the change (its state survives), it is configured once
    /// and never released by the change; the changed stage is released and its replacement starts afresh from
    /// the answered frame on.
    @Test func changeKeepsTheStagesThatDidNotChange() throws {
        let log = LifecycleLog()
        @Sendable func chain(_ second: Int, replacing current: KeyedStageChain?) -> KeyedStageChain {
            KeyedStageChain([.init(key: "denoise") { CountingStage(1, log: log) },
                             .init(key: "look-\(second)") { CountingStage(second, log: log) }], replacing: current)
        }
        let first = chain(2, replacing: nil)
        let runner = RealtimeRunner(source: PacedCountingSource(count: 60, rate: 60), processor: first,
                                    options: RealtimeOptions(pacing: .timestamps))
        let sink = RecordingSink()
        let answer = LockedBox<Int>()
        let kept = LockedBox<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.4) {
            let next = chain(3, replacing: first)
            answer.value = try? runner.replaceProcessor(next)
            kept.value = next.keptCount
        }
        let stats = try runner.run(into: sink)
        let change = try #require(answer.value)
        #expect(kept.value == 1)
        #expect(stats.drops == 0, "the counts below assume every frame reached the chain")
        let frames = sink.received
        #expect(frames.count == 60)
        let looks = frames.map { $0.attachments[Tag.self]?.value }
        let counts = frames.map { $0.attachments[Counts.self]?.values ?? [:] }
        #expect(looks[..<change].allSatisfy { $0 == 2 } && looks[change...].allSatisfy { $0 == 3 })
        #expect(counts.map { $0[1] } == (1...60).map { Optional($0) }, "the kept stage counts on across the change")
        #expect(counts[..<change].map { $0[2] } == (1...change).map { Optional($0) })
        #expect(counts[change...].map { $0[3] } == (1...(60 - change)).map { Optional($0) }, "the new stage starts afresh")
        let events = log.all
        #expect(events.filter { $0 == "configure 1" }.count == 1, "the kept stage is configured once: \(events)")
        #expect(events.contains("release 2") && events.firstIndex(of: "release 2")! > events.firstIndex(of: "configure 3")!)
        #expect(events.filter { $0 == "release 1" }.count == 1 && events.last.map { ["release 1", "release 3"].contains($0) } == true,
                "the kept stage is released once, at the end: \(events)")
    }

    /// A stage is kept only for the same key and the same incoming format; a successor released before the
    /// hand-over (a change refused) leaves the kept stages to the chain that runs them.
    @Test func stagesAreKeptOnlyForTheSameFormat() throws {
        let log = LifecycleLog()
        let first = KeyedStageChain([.init(key: "a") { CountingStage(1, log: log) }])
        _ = try first.configure(for: FrameFormat(pixelFormat: .gray8, width: 16, height: 16))
        let sameKeyOtherSize = KeyedStageChain([.init(key: "a") { CountingStage(2, log: log) }], replacing: first)
        _ = try sameKeyOtherSize.configure(for: FrameFormat(pixelFormat: .gray8, width: 32, height: 16))
        #expect(sameKeyOtherSize.keptCount == 0, "a stage is kept only for the same incoming format")
        let same = KeyedStageChain([.init(key: "a") { CountingStage(3, log: log) }], replacing: first)
        _ = try same.configure(for: FrameFormat(pixelFormat: .gray8, width: 16, height: 16))
        #expect(same.keptCount == 1)
        // Released before it was handed over, the successor leaves the kept stage to its owner.
        same.release()
        #expect(!log.all.contains("release 1"))
        first.release()
        #expect(log.all.filter { $0 == "release 1" }.count == 1)
    }

    /// The session's audio filter set from another thread while buffers flow: each buffer goes through the old
    /// filter or the new one, never a mix, and from the setter's return on through the new one; the new filter
    /// was initialized on the setter's thread (the audio thread only swaps it in), and the old one is released
    /// by the next setter call, not on the audio thread.
    @Test func sessionSwitchesAudioFiltersFromAnyThread() throws {
        let log = LifecycleLog()
        let session = CallSession()
        let one = RampingGain(id: "one", log: log), two = RampingGain(id: "two", log: log)
        session.setAudioFilter(one)
        let buffer = AudioBuffer(channels: 2, capacity: 480, sampleRate: 48_000)
        buffer.frameCount = 480
        var seen: [Float] = []
        let switched = DispatchSemaphore(value: 0)
        let setterThread = LockedBox<UInt>()
        for index in 0..<400 {
            if index == 100 {
                Thread {
                    setterThread.value = UInt(pthread_self())
                    session.setAudioFilter(two)
                    switched.signal()
                }.start()
            }
            if index == 200 { switched.wait() }
            try session.processAudio(buffer)
            let first = buffer.channel(0)[0]
            #expect((0..<2).allSatisfy { channel in (0..<480).allSatisfy { buffer.channel(channel)[$0] == first } })
            seen.append(first)
        }
        // `one` counts 1, 2, 3…; `two` restarts at 1 where it takes over, and keeps counting.
        let switchAt = try #require(seen.indices.first { $0 > 0 && seen[$0] <= seen[$0 - 1] })
        #expect(switchAt >= 100 && switchAt <= 200)
        #expect(Array(seen[..<switchAt]) == (1...switchAt).map(Float.init))
        #expect(Array(seen[switchAt...]) == (1...(400 - switchAt)).map(Float.init))
        #expect(log.all.contains("initialize two on \(setterThread.value ?? 0)"), "initialized on the setter's thread: \(log.all)")
        #expect(!log.all.contains { $0.hasPrefix("release one") })
        session.setAudioFilter(nil)
        #expect(log.all.contains("release one on \(pthread_self())"), "released by the next setter: \(log.all)")
        buffer.channel(0)[0] = -1
        try session.processAudio(buffer)
        #expect(buffer.channel(0)[0] == -1, "no filter: the buffer passes unchanged")
    }

    /// Audio added to a run is advanced in step with the video's capture and finished, up to the video's end,
    /// before the sink is; its time is a stage of the statistics.
    @Test func audioFollowsTheVideoAndEndsBeforeTheSink() throws {
        let audio = RecordingAudio()
        let runner = RealtimeRunner(source: PacedCountingSource(count: 30, rate: 60), processor: nil,
                                    options: RealtimeOptions(pacing: .timestamps))
        runner.setAudio(audio)
        let sink = RecordingSink()
        let stats = try runner.run(into: sink)
        #expect(sink.finished)
        let targets = audio.targets
        #expect(!targets.isEmpty && targets == targets.sorted())
        #expect(targets.allSatisfy { $0 <= 0.5 + 1e-9 })
        #expect(audio.finishedAt.map { abs($0 - 0.5) < 1e-9 } == true, "finished at the video's end: \(String(describing: audio.finishedAt))")
        #expect(stats.stages.contains { $0.name == "audio" && $0.count > 0 })
    }
}

/// Records what the runner asks of the audio.
final class RecordingAudio: RealtimeAudio, @unchecked Sendable {
    // Sendable: every stored property is only touched under `lock`.
    private let lock = NSLock()
    private var asked: [Double] = []
    private var end: Double?
    func advance(to seconds: Double) throws -> Bool {
        lock.lock(); asked.append(seconds); lock.unlock()
        return true
    }
    func finish(at seconds: Double?) throws { lock.lock(); end = seconds; lock.unlock() }
    func cancel() {}
    var targets: [Double] { lock.lock(); defer { lock.unlock() }; return asked }
    var finishedAt: Double? { lock.lock(); defer { lock.unlock() }; return end }
}

/// Records the scheduling class and nice value of the thread that processes each frame.
final class PriorityRecorder: VideoProcessor, @unchecked Sendable {
    // Sendable: `values` is only touched under `lock`.
    private let lock = NSLock()
    private var values: [(policy: Int32, nice: Int32)] = []
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var policy: Int32 = -1
        var parameters = sched_param()
        _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        lock.lock(); values.append((policy, nice)); lock.unlock()
        return frame
    }
    var seen: [(policy: Int32, nice: Int32)] { lock.lock(); defer { lock.unlock() }; return values }
}

@Suite struct RealtimePriorityTests {
    /// `.raised` runs the frame thread in the round-robin real-time class, or at nice −10, where the system
    /// allows (the tests may run as root or not: where it refused, the runner says so and the thread keeps its
    /// priority), and gives the caller's thread its own class and priority back after the run.
    @Test func raisedPriorityAppliesToTheFrameThreadAndIsRestored() throws {
        let recorder = PriorityRecorder()
        let runner = RealtimeRunner(source: PacedCountingSource(count: 5, rate: 120), processor: recorder,
                                    options: RealtimeOptions(pacing: .timestamps, priority: .raised))
        let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        _ = try runner.run(into: RecordingSink())
        let seen = recorder.seen
        #expect(seen.count == 5)
        if runner.priorityTookEffect {
            #expect(seen.allSatisfy { $0.policy == Int32(SCHED_RR) || $0.nice == -10 }, "\(seen)")
        } else {
            #expect(seen.allSatisfy { $0.policy == Int32(SCHED_OTHER) && $0.nice == before }, "refused: the priority stays: \(seen)")
        }
        var policy: Int32 = -1
        var parameters = sched_param()
        _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
        #expect(policy == Int32(SCHED_OTHER) && getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before,
                "the caller's priority is given back")
    }
}
