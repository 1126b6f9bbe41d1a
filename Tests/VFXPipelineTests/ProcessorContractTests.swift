import Foundation
import Testing
import VFXCore
import VFXPipeline

/// Holds one frame: emits frame k−1 when frame k arrives, and the last one at flush (one frame of latency,
/// as a causal temporal filter has).
final class DelayProcessor: FrameProcessor {
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

/// Emits each frame twice, the copy half a frame later with the first byte + 100 (as 2× interpolation does).
final class DoublingProcessor: FrameProcessor {
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        var first = frame
        let half = (first.duration ?? MediaTime(value: 1, timescale: 30)).scaled(1, 2)
        first.duration = half
        var second = first
        second.timestamp = first.timestamp.map { $0 + half }
        second.withMutablePlanes { $0[0].baseAddress[0] &+= 100 }
        try emit(first)
        try emit(second)
    }
    func flush(emit: FrameEmitter) throws {}
}

/// Emits frames with the timestamp of the first one it saw: breaks the contract.
final class StuckClockProcessor: VideoProcessor {
    var first: MediaTime?
    func configure(for input: FrameFormat) throws -> FrameFormat { input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        if first == nil { first = frame.timestamp }
        frame.timestamp = first
        return frame
    }
}

/// Records the timestamps it receives.
final class TimestampSink: FrameSink {
    var timestamps: [MediaTime] = []
    var firstBytes: [UInt8] = []
    func write(_ frame: consuming VideoFrame) throws {
        if let t = frame.timestamp { timestamps.append(t) }
        firstBytes.append(frame.plane(0).baseAddress[0])
    }
    func finish() throws {}
    func cancel() {}
}

@Suite struct ProcessorContractTests {
    static func strictlyIncreasing(_ times: [MediaTime]) -> Bool { zip(times, times.dropFirst()).allSatisfy { $0 < $1 } }

    @Test func latencyStageLosesNoFrameAtTheEnd() throws {
        let sink = TimestampSink()
        let stats = try OfflineRunner(source: CountingSource(count: 50), processor: DelayProcessor()).run(into: sink)
        #expect(stats.framesWritten == 50)
        #expect(sink.firstBytes == (0..<50).map { UInt8($0) })
        #expect(Self.strictlyIncreasing(sink.timestamps))
    }

    @Test func doublingStageEmitsTwiceAsManyInOrder() throws {
        let sink = TimestampSink()
        let stats = try OfflineRunner(source: CountingSource(count: 40), processor: DoublingProcessor()).run(into: sink)
        #expect(stats.framesRead == 40 && stats.framesWritten == 80 && stats.framesDropped == 0)
        #expect(sink.timestamps.count == 80 && Self.strictlyIncreasing(sink.timestamps))
        // Frame 2k is input k unchanged; 2k+1 lies half a frame (1/60 s) after it.
        for k in 0..<40 {
            #expect(sink.firstBytes[2 * k] == UInt8(k) && sink.firstBytes[2 * k + 1] == UInt8(k + 100))
            #expect(sink.timestamps[2 * k] == MediaTime(value: Int64(k), timescale: 30))
            #expect(sink.timestamps[2 * k + 1] - sink.timestamps[2 * k] == MediaTime(value: 1, timescale: 60))
        }
    }

    @Test func chainFlushesEachStageThroughTheStagesAfterIt() throws {
        // delay → double → delay: the held frames of both delays come out at the end, doubled where they pass
        // the doubling stage.
        let chain = ProcessorChain([DelayProcessor(), DoublingProcessor(), DelayProcessor()])
        let sink = TimestampSink()
        let stats = try OfflineRunner(source: CountingSource(count: 10), processor: chain).run(into: sink)
        #expect(stats.framesWritten == 20)
        let expected: [UInt8] = (0..<10).flatMap { k -> [UInt8] in [UInt8(k), UInt8(k + 100)] }
        #expect(sink.firstBytes == expected)
        #expect(Self.strictlyIncreasing(sink.timestamps))
    }

    @Test func simpleProcessorStillWorksAsAStage() throws {
        let sink = TimestampSink()
        let add = AddProcessor(3)
        add.dropOdd = true
        let stats = try OfflineRunner(source: CountingSource(count: 10), processor: ProcessorChain([add, DelayProcessor()]))
            .run(into: sink)
        #expect(sink.firstBytes == [3, 5, 7, 9, 11])
        #expect(stats.framesDropped == 5)
    }

    @Test func timestampsGoingBackwardsNameTheProblem() throws {
        let sink = CollectingSink()
        #expect(throws: PipelineError.self) {
            try OfflineRunner(source: CountingSource(count: 5), processor: StuckClockProcessor()).run(into: sink)
        }
        #expect(sink.cancelled)
    }

    @Test func framesFromFlushesOnRequest() throws {
        let frame = VideoFrame(format: .gray8, width: 4, height: 2, timestamp: .zero)
        let delay = DelayProcessor()
        #expect(try delay.frames(from: frame).isEmpty)
        #expect(try delay.frames(from: frame, flush: true).count == 2)
    }
}

/// A face count attached to frames (stands for any analysis result).
struct FaceCount: FrameAttachment, Equatable { var faces: Int }
struct MaskCoverage: FrameAttachment { var fraction: Double }

@Suite struct AttachmentTests {
    @Test func attachmentsAreTypedAndTravelWithTheFrame() throws {
        var frame = VideoFrame(format: .i420, width: 16, height: 8, timestamp: MediaTime(value: 7, timescale: 30))
        frame.attachments[FaceCount.self] = FaceCount(faces: 2)
        frame.attachments[Timestamped<MaskCoverage>.self] = Timestamped(value: MaskCoverage(fraction: 0.25),
                                                                        timestamp: MediaTime(value: 6, timescale: 30))
        #expect(frame.attachments[FaceCount.self] == FaceCount(faces: 2))
        #expect(frame.attachments[MaskCoverage.self] == nil)
        // A stage writing into a new buffer keeps them (the one metadata constructor), and so does conversion.
        let sibling = frame.makeSibling()
        #expect(sibling.attachments[FaceCount.self]?.faces == 2)
        let converted = frame.converted(to: .rgba)
        #expect(converted.attachments[Timestamped<MaskCoverage>.self]?.timestamp == MediaTime(value: 6, timescale: 30))
        #expect(converted.timestamp == frame.timestamp)
        frame.attachments[FaceCount.self] = nil
        #expect(frame.attachments.count == 1)
    }

    @Test func latestValueKeepsTheNewestWithItsTimestamp() async throws {
        let box = LatestValue<Int>()
        #expect(box.latest == nil && box.version == 0)
        // Publishers on several threads, a reader on this one: the reader always sees a whole value.
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for i in 0..<1000 { box.publish(worker * 1000 + i, timestamp: MediaTime(value: Int64(i), timescale: 30)) }
                }
            }
            for _ in 0..<1000 {
                if let latest = box.latest { #expect(Int64(latest.value % 1000) == latest.timestamp?.value) }
            }
        }
        #expect(box.version == 4000)
        box.publish(-1, timestamp: nil)
        #expect(box.latest?.value == -1 && box.latest?.timestamp == nil)
    }
}

@Suite struct StageTimingTests {
    @Test func percentilesFromTheHistogramAreWithinOnePercent() {
        var timing = StageTiming(name: "process")
        var samples: [Double] = []
        var state: UInt64 = 12345
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let u = Double(state >> 11) / Double(1 << 53)
            let value = 0.001 + 0.02 * u * u   // 1–21 ms, skewed
            samples.append(value)
            timing.record(seconds: value)
        }
        samples.sort()
        for q in [0.5, 0.9, 0.95, 0.99] {
            let exact = samples[Int((q * Double(samples.count)).rounded(.up)) - 1]
            #expect(abs(timing.percentile(q) - exact) / exact < 0.011, "q \(q)")
        }
        #expect(timing.count == 20_000)
        #expect(abs(timing.mean - samples.reduce(0, +) / 20_000) < 1e-12)
        #expect(timing.percentile(1) == samples.last && timing.percentile(0) == samples.first)
    }
}
