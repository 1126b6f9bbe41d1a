import Foundation
import Testing
import VFXCore
import VFXFilters
import VFXPipeline
import VFXTestSupport
@testable import VFXTemporal

/// The three stages through the processor contract: frame counts, timestamps, durations, sizes, and
/// quality on short segments of the sample clips by the protocol.
@Suite struct ProcessorTests {
    /// Runs `frames` through `stage` (configure, process each, flush) and collects what it emits.
    func run(_ stage: any FrameProcessor, _ frames: [VideoFrame], rate: FrameRate) throws -> (FrameFormat, [VideoFrame]) {
        let first = frames[0]
        let format = try stage.configure(for: FrameFormat(pixelFormat: first.format, width: first.width, height: first.height,
                                                          color: first.color, frameRate: rate))
        var out: [VideoFrame] = []
        for frame in frames { try stage.process(frame) { out.append($0) } }
        try stage.flush { out.append($0) }
        return (format, out)
    }

    func expectIncreasing(_ frames: [VideoFrame]) {
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(a.timestamp! < b.timestamp!, "timestamps \(a.timestamp!) then \(b.timestamp!)")
        }
    }

    @Test func denoiseKeepsFramesAndBeatsTheNoise() throws {
        let clean = try Clip.frames("bikes.mp4", count: 24, width: 640, height: 272, rate: FrameRate(25))
        var generator = SplitMix(state: 10)
        let noisy = clean.map { Clip.noisy($0, sigma: 10, generator: &generator) }
        let stage = TemporalDenoiseProcessor(strength: nil)
        let (_, out) = try run(stage, noisy, rate: FrameRate(25))
        #expect(out.count == noisy.count)
        for (a, b) in zip(out, noisy) {
            #expect(a.timestamp == b.timestamp && a.duration == b.duration)
        }
        expectIncreasing(out)
        #expect(abs(stage.lastSigma.luma - 10) < 1, "estimated σ \(stage.lastSigma.luma)")
        let before = Clip.psnr(Array(zip(noisy, clean))), after = Clip.psnr(Array(zip(out, clean)))
        // Protocol of issue 11 on 24 frames of bikes at σ = 10: the noisy input is 28.1 dB; FFmpeg's nlmeans
        // (its best strength) reaches 36.2 on the whole clip. The bound leaves room for the short warm-up.
        #expect(before < 28.5)
        #expect(after > 34.5, "denoised PSNR-Y \(after) dB (noisy \(before))")
    }

    @Test func denoiseGivesTheSameFramesOnSeveralThreads() throws {
        // The planes go to different threads after the motion search; nothing is shared, so the frames are
        // the same byte for byte as on one thread.
        let clean = try Clip.frames("bikes.mp4", count: 6, width: 640, height: 272, rate: FrameRate(25))
        var generator = SplitMix(state: 3)
        let noisy = clean.map { Clip.noisy($0, sigma: 10, generator: &generator) }
        let (_, one) = try run(TemporalDenoiseProcessor(strength: nil), noisy, rate: FrameRate(25))
        let (_, two) = try run(TemporalDenoiseProcessor(strength: nil, slices: SliceRunner(threads: 2)), noisy, rate: FrameRate(25))
        #expect(one.count == 6 && two.count == 6)
        for (a, b) in zip(one, two) { #expect(RawFrames.bytes(a) == RawFrames.bytes(b)) }
    }

    @Test func denoiseFollowsMotionWithoutGhosts() throws {
        // Frames cut from a larger clean frame at a moving window: everything moves 3 px per frame. With no
        // noise the filter must keep the picture (a ghost would show as a large error).
        let base = try Clip.frames("bikes.mp4", count: 1, width: 640, height: 272, rate: FrameRate(25))[0]
        let frames = (0..<8).map { index -> VideoFrame in
            var frame = VideoFrame(format: .gray8, width: 320, height: 200)
            frame.timestamp = FrameRate(25).frameDuration.scaled(Int64(index), 1)
            frame.withMutablePlanes { planes in
                for y in 0..<200 { planes[0].row(y).update(from: base.plane(0).row(y + 40) + 100 + 3 * index, count: 320) }
            }
            return frame
        }
        let (_, out) = try run(TemporalDenoiseProcessor(strength: 4), frames, rate: FrameRate(25))
        #expect(Clip.psnr(Array(zip(out, frames))) > 38)
    }

    @Test func noiselessFlatPictureStaysUnchanged() throws {
        // A noiseless picture (flat areas and a ramp, as FFmpeg's testsrc2 has): the estimated σ is 0 and the
        // filter must leave it as it is. (The spatial pass once divided 0 by 0 there and wrote black.)
        let frames = (0..<6).map { index -> VideoFrame in
            var frame = VideoFrame(format: .i420, width: 96, height: 64)
            frame.timestamp = FrameRate(25).frameDuration.scaled(Int64(index), 1)
            frame.withMutablePlanes { planes in
                for (number, plane) in planes.enumerated() {
                    for y in 0..<plane.height {
                        for x in 0..<plane.width { plane.row(y)[x] = number > 0 ? 128 : x < plane.width / 2 ? 90 : UInt8(60 + x) }
                    }
                }
            }
            return frame
        }
        let stage = TemporalDenoiseProcessor(strength: nil)
        let (_, out) = try run(stage, frames, rate: FrameRate(25))
        #expect(stage.lastSigma.luma < 0.5, "estimated σ \(stage.lastSigma.luma)")
        for (a, b) in zip(out, frames) {
            let worst = zip(RawFrames.bytes(a), RawFrames.bytes(b)).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "largest change \(worst) code values")
        }
    }

    @Test func interpolateDoublesAndKeepsOriginals() throws {
        let rate = FrameRate(30000, 1001)
        let all = try Clip.frames("carphone_pristine.mp4", count: 60, width: 176, height: 144, rate: rate)
        // Every second frame dropped; the kept ones are the input at half the rate.
        let half = FrameRate(15000, 1001)
        let kept = stride(from: 0, to: all.count, by: 2).map { index -> VideoFrame in
            var frame = all[index]
            frame.timestamp = half.frameDuration.scaled(Int64(index / 2), 1)
            frame.duration = half.frameDuration
            return frame
        }
        let (format, out) = try run(InterpolateProcessor(factor: 2, fps: nil), kept, rate: half)
        #expect(format.frameRate == FrameRate(30000, 1001))
        #expect(out.count == 2 * kept.count)
        expectIncreasing(out)
        for (index, frame) in kept.enumerated() {
            #expect(RawFrames.bytes(out[2 * index]) == RawFrames.bytes(frame), "output \(2 * index) is input \(index)")
            #expect(out[2 * index].timestamp == frame.timestamp)
        }
        for frame in out { #expect(frame.duration == half.frameDuration.scaled(1, 2)) }
        // The duration is kept: the last output ends where the last input ended.
        let end = out.last!.timestamp! + out.last!.duration!
        #expect(end == kept.last!.timestamp! + kept.last!.duration!)
        // Quality: the made frames against the dropped originals, beside a plain blend of the neighbours
        // (computed here). On these 60 frames (little motion) the blend is 33.2 dB and ours 33.5; on the whole
        // clip 33.8 and 34.7 (docs/quality.md). The bound: clearly above the blend.
        var made: [(VideoFrame, VideoFrame)] = [], blended: [(VideoFrame, VideoFrame)] = []
        for index in 0..<(kept.count - 1) {
            made.append((out[2 * index + 1], all[2 * index + 1]))
            var blend = kept[index]
            blend.withMutablePlanes { planes in
                for (plane, other) in zip(planes, kept[index + 1].planes) {
                    for y in 0..<plane.height {
                        for x in 0..<plane.width { plane.row(y)[x] = UInt8((Int(plane.row(y)[x]) + Int(other.row(y)[x]) + 1) / 2) }
                    }
                }
            }
            blended.append((blend, all[2 * index + 1]))
        }
        let ours = Clip.psnr(made), blend = Clip.psnr(blended)
        #expect(ours > blend + 0.2, "interpolated \(ours) dB, blend \(blend) dB")
    }

    @Test func interpolateGivesTheSameFramesOnSeveralThreads() throws {
        let frames = try Clip.frames("bikes.mp4", count: 4, width: 640, height: 272, rate: FrameRate(25))
        let (_, one) = try run(InterpolateProcessor(factor: 2, fps: nil), frames, rate: FrameRate(25))
        let (_, two) = try run(InterpolateProcessor(factor: 2, fps: nil, slices: SliceRunner(threads: 2)), frames, rate: FrameRate(25))
        #expect(one.count == 8 && two.count == 8)
        for (a, b) in zip(one, two) { #expect(RawFrames.bytes(a) == RawFrames.bytes(b)) }
    }

    @Test func interpolateToAnotherRate() throws {
        let rate = FrameRate(25)
        let frames = try Clip.frames("bikes.mp4", count: 10, width: 640, height: 272, rate: rate)
        let (format, out) = try run(InterpolateProcessor(factor: 2, fps: 60), frames, rate: rate)
        #expect(format.frameRate?.framesPerSecond == 60)
        // 10 frames of 1/25 s = 0.4 s: 24 frames at 60 fps.
        #expect(out.count == 24)
        expectIncreasing(out)
        #expect(RawFrames.bytes(out[0]) == RawFrames.bytes(frames[0]))
        // Time 0.2 s at 60 fps (output 12) falls exactly on input 5.
        #expect(RawFrames.bytes(out[12]) == RawFrames.bytes(frames[5]))
    }

    /// With `fps` the output follows that rate's grid and `factor` is not used (factor 2 and 3 give the same frames),
    /// so a chain giving both is refused rather than dropping the factor without a word; either alone is taken, and
    /// so is a factor with fps=0.
    @Test func interpolateRefusesFactorWithFps() throws {
        TemporalFilters.register()
        let rate = FrameRate(25)
        let frames = try Clip.frames("bikes.mp4", count: 4, width: 640, height: 272, rate: rate)
        let (_, two) = try run(InterpolateProcessor(factor: 2, fps: 60), frames, rate: rate)
        let (_, three) = try run(InterpolateProcessor(factor: 3, fps: 60), frames, rate: rate)
        #expect(two.count == three.count)
        for (a, b) in zip(two, three) { #expect(RawFrames.bytes(a) == RawFrames.bytes(b)) }
        #expect {
            try FilterChain(parsing: "interpolate:factor=3:fps=60")
        } throws: { error in
            "\(error)" == "interpolate: fps must be 0 when factor is given, got '60'"
        }
        for chain in ["interpolate", "interpolate:factor=3", "interpolate:fps=60", "interpolate:factor=3:fps=0"] {
            #expect(throws: Never.self, "\(chain)") { try FilterChain(parsing: chain) }
        }
    }

    @Test func superResolutionBeatsLanczos() throws {
        let frames = try Clip.frames("bikes.mp4", count: 4, width: 640, height: 272, rate: FrameRate(25))
        // The protocol: 2× area downscale, then back up; FFmpeg does both the downscale and its Lanczos.
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-sr-\(getpid())")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temp) }
        let small = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", TestMedia.path("bikes.mp4"), "-frames:v", "4",
                                                          "-vf", "scale=320:136:flags=area", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let lanczos = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", TestMedia.path("bikes.mp4"), "-frames:v", "4",
                                                            "-vf", "scale=320:136:flags=area,scale=640:272:flags=lanczos",
                                                            "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let lowSize = 320 * 136 * 3 / 2, highSize = 640 * 272 * 3 / 2
        let stage = SuperResolutionProcessor(scale: 2)
        let format = try stage.configure(for: FrameFormat(pixelFormat: .i420, width: 320, height: 136))
        #expect(format.width == 640 && format.height == 272)
        var ours: [(VideoFrame, VideoFrame)] = [], theirs: [(VideoFrame, VideoFrame)] = []
        for index in 0..<4 {
            var low = RawFrames.frame(Array(small.stdout[index * lowSize..<(index + 1) * lowSize]), format: .i420, width: 320, height: 136)
            low.timestamp = frames[index].timestamp
            let up = try stage.frames(from: low)
            #expect(up.count == 1 && up[0].width == 640 && up[0].timestamp == low.timestamp && up[0].color == low.color)
            ours.append((up[0], frames[index]))
            theirs.append((RawFrames.frame(Array(lanczos.stdout[index * highSize..<(index + 1) * highSize]), format: .i420,
                                           width: 640, height: 272), frames[index]))
        }
        let gain = Clip.psnr(ours) - Clip.psnr(theirs)
        // The target is +0.3 dB over Lanczos on the whole clip; on these 4 frames the margin is larger.
        #expect(gain >= 0.3, "super resolution \(Clip.psnr(ours)) dB, Lanczos \(Clip.psnr(theirs)) dB")
    }

    @Test func superResolutionGivesTheSameFramesOnSeveralThreads() throws {
        // Slices split the rows of every pass; no pass reads what another slice of it writes, so the frames
        // are the same byte for byte as on one thread.
        let frame = try Clip.frames("bikes.mp4", count: 1, width: 640, height: 272, rate: FrameRate(25))[0]
        let one = SuperResolutionProcessor(scale: 2), two = SuperResolutionProcessor(scale: 2, slices: SliceRunner(threads: 2))
        _ = try one.configure(for: FrameFormat(of: frame))
        _ = try two.configure(for: FrameFormat(of: frame))
        let a = try one.frames(from: frame), b = try two.frames(from: frame)
        #expect(a.count == 1 && b.count == 1 && a[0].width == 1280)
        #expect(RawFrames.bytes(a[0]) == RawFrames.bytes(b[0]))
    }

    @Test func superResolutionHandlesOddChroma() throws {
        var frame = VideoFrame(format: .i420, width: 35, height: 21)
        frame.withMutablePlanes { planes in
            for plane in planes { for y in 0..<plane.height { plane.row(y).update(repeating: 90, count: plane.width) } }
        }
        let stage = SuperResolutionProcessor(scale: 3)
        _ = try stage.configure(for: FrameFormat(of: frame))
        let out = try stage.frames(from: frame)[0]
        #expect(out.width == 105 && out.height == 63)
        // A flat picture stays flat (every trained filter sums to one, within rounding).
        #expect(RawFrames.bytes(out).allSatisfy { abs(Int($0) - 90) <= 1 })
    }

    @Test func registeredInTheCatalog() throws {
        TemporalFilters.register()
        let names = FilterRegistry.all.map(\.name)
        #expect(names.contains("temporal-denoise") && names.contains("interpolate") && names.contains("super-resolution"))
        let chain = try FilterChain(parsing: "temporal-denoise:strength=8,interpolate:factor=2,super-resolution:scale=2")
        #expect(chain.filters.count == 3)
        #expect(throws: FilterError.self) { try FilterChain(parsing: "super-resolution:scale=5") }
    }

    @Test func refusesFormatsItCannotTake() {
        #expect(throws: TemporalFilterError.self) {
            try TemporalDenoiseProcessor(strength: nil).configure(for: FrameFormat(pixelFormat: .bgra, width: 64, height: 64))
        }
        #expect(throws: TemporalFilterError.self) {
            try InterpolateProcessor(factor: 2, fps: nil).configure(for: FrameFormat(pixelFormat: .i420, width: 8, height: 8))
        }
    }
}
