import Foundation
import Testing
import VFXCore
import VFXPipeline

/// A source of `count` small gray frames whose first byte is the frame's index.
final class CountingSource: FrameSource {
    let count: Int
    let failAt: Int?
    var produced = 0
    let format = FrameFormat(pixelFormat: .gray8, width: 8, height: 4)
    var expectedFrameCount: Int? { count }

    init(count: Int, failAt: Int? = nil) {
        self.count = count
        self.failAt = failAt
    }

    func nextFrame() throws -> VideoFrame? {
        guard produced < count else { return nil }
        if produced == failAt { throw TestError(message: "source broke at \(produced)") }
        var frame = VideoFrame(format: .gray8, width: 8, height: 4, timestamp: MediaTime(value: Int64(produced), timescale: 30))
        let index = UInt8(truncatingIfNeeded: produced)
        frame.withMutablePlanes { $0[0].baseAddress[0] = index }
        produced += 1
        return frame
    }
}

final class CollectingSink: FrameSink {
    var firstBytes: [UInt8] = []
    var finished = false
    var cancelled = false
    let failAt: Int?

    init(failAt: Int? = nil) { self.failAt = failAt }

    func write(_ frame: consuming VideoFrame) throws {
        if firstBytes.count == failAt { throw TestError(message: "sink broke") }
        firstBytes.append(frame.plane(0).baseAddress[0])
    }
    func finish() throws { finished = true }
    func cancel() { cancelled = true }
}

/// Adds `amount` to the first byte, in place; records its lifecycle calls.
final class AddProcessor: VideoProcessor {
    let amount: UInt8
    var log: [String] = []
    var dropOdd = false
    init(_ amount: UInt8) { self.amount = amount }

    func configure(for input: FrameFormat) throws -> FrameFormat { log.append("configure"); return input }
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        if dropOdd && frame.plane(0).baseAddress[0] % 2 == 1 { return nil }
        frame.withMutablePlanes { $0[0].baseAddress[0] &+= amount }
        return frame
    }
    func release() { log.append("release") }
}

struct TestError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

@Suite struct OfflineRunnerTests {
    @Test func keepsEveryFrameInOrder() throws {
        let sink = CollectingSink()
        let stats = try OfflineRunner(source: CountingSource(count: 200), processor: nil, queueDepth: 2).run(into: sink)
        #expect(sink.firstBytes == (0..<200).map { UInt8(truncatingIfNeeded: $0) })
        #expect(stats.framesRead == 200 && stats.framesWritten == 200 && stats.framesDropped == 0)
        #expect(sink.finished && !sink.cancelled)
    }

    @Test func chainRunsStagesInOrderAndDropsSkipTheRest() throws {
        let first = AddProcessor(1), second = AddProcessor(10)
        first.dropOdd = true
        let sink = CollectingSink()
        let stats = try OfflineRunner(source: CountingSource(count: 10), processor: ProcessorChain([first, second])).run(into: sink)
        // Odd inputs are dropped by the first stage; even ones get +1 then +10.
        #expect(sink.firstBytes == [11, 13, 15, 17, 19])
        #expect(stats.framesDropped == 5)
        #expect(first.log == ["configure", "release"] && second.log == ["configure", "release"])
    }

    @Test func sourceErrorCancelsTheSink() throws {
        let sink = CollectingSink()
        #expect(throws: TestError.self) {
            try OfflineRunner(source: CountingSource(count: 50, failAt: 20), processor: AddProcessor(1)).run(into: sink)
        }
        #expect(sink.cancelled && !sink.finished)
    }

    @Test func sinkErrorStopsTheOtherThreads() throws {
        let sink = CollectingSink(failAt: 3)
        let source = CountingSource(count: 100_000)
        #expect(throws: TestError.self) {
            try OfflineRunner(source: source, processor: nil, queueDepth: 2).run(into: sink)
        }
        #expect(sink.cancelled && source.produced < 100)
    }

    /// The processor's time leaves out the time its frames wait for room in the encoder's queue: with an encoder that
    /// takes 20 ms a frame and a processor that takes almost nothing, the processor's mean stays far below 20 ms (it
    /// was the encoder's 20 ms when the wait was counted). 5 ms leaves room for a loaded machine's scheduling.
    @Test func processTimeLeavesOutTheEncodersQueue() throws {
        final class SlowSink: FrameSink {
            func write(_ frame: consuming VideoFrame) throws { Thread.sleep(forTimeInterval: 0.02) }
            func finish() throws {}
            func cancel() {}
        }
        let stats = try OfflineRunner(source: CountingSource(count: 12), processor: AddProcessor(1), queueDepth: 1)
            .run(into: SlowSink())
        #expect(stats.encode.mean >= 0.015)   // 12 writes of 20 ms and the finish, 13 records
        #expect(stats.process.mean < 0.005)
    }

    @Test func progressCountsUpToTheTotal() throws {
        var seen: [Int] = []
        _ = try OfflineRunner(source: CountingSource(count: 5), processor: nil).run(into: CollectingSink()) { progress in
            seen.append(progress.framesWritten)
            #expect(progress.expectedFrames == 5)
        }
        #expect(seen == [1, 2, 3, 4, 5])
    }

    @Test func inPlaceProcessingReusesTheBuffer() throws {
        // A frame handed over as its only reference is written in place (no copy).
        let frame = VideoFrame(format: .gray8, width: 4, height: 4)
        let before = frame.plane(0).baseAddress
        let output = try AddProcessor(1).process(consume frame)
        #expect(output?.plane(0).baseAddress == before)
    }

    @Test func sharedFramesAreCopiedBeforeWriting() throws {
        var frame = VideoFrame(format: .gray8, width: 4, height: 4)
        frame.withMutablePlanes { $0[0].baseAddress[0] = 7 }
        let kept = frame
        let output = try AddProcessor(1).process(frame)
        #expect(output?.plane(0).baseAddress != kept.plane(0).baseAddress)
        #expect(kept.plane(0).baseAddress[0] == 7 && output?.plane(0).baseAddress[0] == 8)
    }

    @Test func poolStopsAllocatingInSteadyState() {
        let pool = BufferPool(format: .i420, width: 64, height: 48, capacity: 4)
        for _ in 0..<100 {
            let frame = VideoFrame(buffer: pool.makeBuffer())
            _ = frame.width
        }
        #expect(pool.allocationCount == 1)
    }
}
