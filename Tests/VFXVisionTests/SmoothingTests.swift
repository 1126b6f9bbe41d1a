import Foundation
import VFXCore
import VFXPipeline
@testable import VFXVision
import XCTest

/// One Euro smoothing against the filter's definition evaluated here in Float64, and its effect on jitter;
/// the analysis runner's newest-frame-wins behaviour.
final class SmoothingTests: XCTestCase {
    /// The definition (Casiez et al. 2012), step by step, against the implementation on a noisy ramp.
    func testOneEuroFollowsItsDefinition() {
        let parameters = OneEuroParameters(minCutoff: 1.2, beta: 3, derivativeCutoff: 0.8)
        var filter = OneEuroFilter(parameters: parameters)
        func alpha(_ cutoff: Double, _ interval: Double) -> Double { 1 / (1 + 1 / (2 * .pi * cutoff) / interval) }
        var random = SplitMix64(seed: 3)
        var x̂: Double?, dx̂ = 0.0, lastTime = 0.0
        for step in 0..<200 {
            let time = Double(step) / 30 + (step % 3 == 0 ? 0.004 : 0)
            let value = Float(0.3 + 0.01 * Double(step) + Double.random(in: -0.02...0.02, using: &random))
            let scale: Float = 0.25
            let ours = filter.filter(value, at: time, scale: scale)
            let expected: Double
            if let previous = x̂ {
                let dt = time - lastTime
                let speed = (Double(value) - previous) / dt / Double(scale)
                dx̂ += alpha(parameters.derivativeCutoff, dt) * (speed - dx̂)
                expected = previous + alpha(parameters.minCutoff + parameters.beta * abs(dx̂), dt) * (Double(value) - previous)
            } else {
                expected = Double(value)
            }
            x̂ = expected
            lastTime = time
            XCTAssertEqual(Double(ours), expected, accuracy: 1e-5, "step \(step)")
        }
    }

    /// A still face with detector-like jitter: the smoothed box moves far less; a face that then moves
    /// steadily is followed with a lag of less than a tenth of its width.
    func testFaceSmootherSteadiesAndFollows() {
        let smoother = FaceSmoother()
        var random = SplitMix64(seed: 5)
        var rawSteps: [Float] = [], smoothSteps: [Float] = []
        var lastRaw: Float?, lastSmooth: Float?
        func face(_ x: Float) -> FaceObservation {
            FaceObservation(boundingBox: NormalizedRect(x: x, y: 0.3, width: 0.2, height: 0.2), score: 0.9,
                            keypoints: (0..<6).map { NormalizedPoint(x: x + 0.03 * Float($0), y: 0.35) }, roll: 0)
        }
        for step in 0..<90 {
            let x = 0.4 + Float.random(in: -0.004...0.004, using: &random)
            let smoothed = smoother.smooth([face(x)], at: Double(step) / 30, width: 640, height: 480)[0].boundingBox.x
            if let lastRaw, let lastSmooth, step > 10 {
                rawSteps.append(abs(x - lastRaw))
                smoothSteps.append(abs(smoothed - lastSmooth))
            }
            lastRaw = x
            lastSmooth = smoothed
        }
        let rawJitter = rawSteps.reduce(0, +) / Float(rawSteps.count), smoothJitter = smoothSteps.reduce(0, +) / Float(smoothSteps.count)
        XCTAssertLessThan(smoothJitter, rawJitter / 3)
        // Moving at 0.3 frame widths per second (1.5 face widths per second).
        var x: Float = 0.4, smoothed: Float = 0
        for step in 90..<120 {
            x += 0.01
            smoothed = smoother.smooth([face(x)], at: Double(step) / 30, width: 640, height: 480)[0].boundingBox.x
        }
        XCTAssertLessThan(abs(smoothed - x), 0.02)
        XCTAssertTrue(smoother.smooth([FaceObservation](), at: 5, width: 640, height: 480).isEmpty)
    }

    /// The runner analyses on its own thread, replaces a waiting frame by a newer one, and publishes each
    /// result with its frame's timestamp.
    func testRunnerTakesTheNewestFrame() throws {
        let gate = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let runner = AnalysisRunner<Int> { frame in
            if frame.width == 8 {                         // the first frame holds the worker
                started.signal()
                gate.wait()
            }
            return frame.width
        }
        func frame(_ width: Int, _ time: Int64) -> VideoFrame {
            VideoFrame(format: .gray8, width: width, height: 2, timestamp: MediaTime(value: time, timescale: 30))
        }
        runner.submit(frame(8, 0))
        started.wait()
        runner.submit(frame(9, 1))                        // waits …
        runner.submit(frame(10, 2))                       // … and is replaced by this one
        gate.signal()
        runner.waitUntilIdle()
        let latest = try XCTUnwrap(runner.results.latest)
        XCTAssertEqual(latest.value, 10)
        XCTAssertEqual(latest.timestamp, MediaTime(value: 2, timescale: 30))
        XCTAssertEqual(runner.counts.analysed, 2)
        XCTAssertEqual(runner.counts.replaced, 1)
        runner.stop()
        runner.submit(frame(11, 3))
        XCTAssertEqual(runner.results.latest?.value, 10, "nothing runs after stop")
    }

    func testRunnerPublishesSegmentationAsAttachment() throws {
        let segmenter = try PersonSegmenter(model: .landscape)
        let runner = AnalysisRunner<PersonMask> { segmenter.segment($0) }
        var frame = VideoFrame(format: .i420, width: 64, height: 36, timestamp: MediaTime(value: 7, timescale: 25))
        frame.withMutablePlanes { planes in for plane in planes { plane.baseAddress.update(repeating: 100, count: plane.bytesPerRow * plane.height) } }
        runner.submit(frame)
        runner.waitUntilIdle()
        runner.stop()
        let mask = try XCTUnwrap(runner.results.latest?.value)
        frame.attachments[PersonMask.self] = mask
        XCTAssertEqual(frame.attachments[PersonMask.self]?.width, 64)
        XCTAssertEqual(frame.attachments[PersonMask.self]?.timestamp, MediaTime(value: 7, timescale: 25))
    }

    /// The attaching stage, offline: every frame leaves with the faces found in that very frame.
    func testAttacherAttachesEachFramesOwnResult() throws {
        try VisionReference.require()
        let detector = try FaceDetector(model: .shortRange)
        let stage = AnalysisAttacher(runner: AnalysisRunner<FaceObservations> { frame in
            FaceObservations(faces: detector.detect(in: frame), timestamp: frame.timestamp)
        }, waitForEachFrame: true)
        let frames = try VisionReference.clip().prefix(10)
        _ = try stage.configure(for: FrameFormat(of: frames[frames.startIndex]))
        for frame in frames {
            let out = try stage.frames(from: frame)
            XCTAssertEqual(out.count, 1)
            let faces = try XCTUnwrap(out[0].attachments[FaceObservations.self])
            XCTAssertEqual(faces.timestamp, frame.timestamp)
            XCTAssertEqual(faces.faces.count, 1)
        }
        stage.release()
    }

    /// Releasing a runner without `stop()` ends its thread, which then releases the analysis and what it holds.
    func testReleasedRunnerEndsItsThread() throws {
        final class Token: Sendable {}
        weak var watched: Token?
        do {
            let token = Token()
            watched = token
            let runner = AnalysisRunner<Int> { frame in _ = token; return frame.width }
            runner.submit(VideoFrame(format: .gray8, width: 4, height: 4))
            runner.waitUntilIdle()
            XCTAssertEqual(runner.results.latest?.value, 4)
        }
        let deadline = Date().addingTimeInterval(2)
        while watched != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertNil(watched, "the worker thread still holds the analysis")
    }
}
