import Foundation
import VFXCore
import VFXMedia

/// Times media pass-through (read every frame, write it unchanged) with VideoFX and with the `ffmpeg`
/// command on the same files, one thread each.
///
/// ```swift
/// let result = try MediaBenchmark.compare(input: "/dev/shm/in.y4m", folder: "/dev/shm", repeats: 5)
/// print(result)   // VideoFX 3100 fps, ffmpeg 2900 fps, ratio 1.07
/// ```
public enum MediaBenchmark {
    /// Frames per second of one run.
    public struct Timing: Sendable, CustomStringConvertible {
        public var frames: Int
        public var seconds: Double
        public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
        public var description: String { String(format: "%d frames in %.3f s = %.0f fps", frames, seconds, framesPerSecond) }
    }

    /// The best VideoFX and FFmpeg timings of a comparison, and their ratio (VideoFX fps / FFmpeg fps).
    public struct Comparison: Sendable, CustomStringConvertible {
        public var videoFX: Timing
        public var ffmpeg: Timing
        public var ratio: Double { ffmpeg.framesPerSecond > 0 ? videoFX.framesPerSecond / ffmpeg.framesPerSecond : 0 }
        public var description: String {
            String(format: "VideoFX %.0f fps, ffmpeg %.0f fps, ratio %.2f", videoFX.framesPerSecond, ffmpeg.framesPerSecond, ratio)
        }
    }

    /// Reads `input` and writes every frame to `output` (its extension picks the format) on the calling
    /// thread; the output is removed afterwards.
    public static func passThrough(input: String, output: String) throws -> Timing {
        let start = DispatchTime.now()
        let reader = try MediaReader(path: input, threads: 1)
        let writer = try MediaWriter(path: output, frameRate: reader.format.frameRate, audioFrom: reader, threads: 1)
        var frames = 0
        while let frame = try reader.nextFrame() {
            try writer.write(frame)
            frames += 1
        }
        try writer.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        unlink(output)
        return Timing(frames: frames, seconds: seconds)
    }

    /// Runs `ffmpeg -threads 1 -i input -threads 1 -f yuv4mpegpipe output` (y4m outputs; other
    /// extensions let ffmpeg choose its default encoder) and times it; the output is removed afterwards.
    public static func ffmpegPassThrough(input: String, output: String, frames: Int) throws -> Timing {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        let format = output.hasSuffix(".y4m") ? ["-f", "yuv4mpegpipe"] : []
        process.arguments = ["-v", "error", "-nostdin", "-y", "-threads", "1", "-filter_threads", "1", "-i", input,
                             "-threads", "1"] + format + [output]
        process.standardInput = FileHandle.nullDevice
        let start = DispatchTime.now()
        try process.run()
        process.waitUntilExit()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        unlink(output)
        guard process.terminationStatus == 0 else {
            throw MediaBenchmarkError(message: "ffmpeg failed on \(input) (exit \(process.terminationStatus))")
        }
        return Timing(frames: frames, seconds: seconds)
    }

    /// Alternates VideoFX and FFmpeg pass-throughs of `input` into `folder`, `repeats` times each, and
    /// keeps the best of each (the machine is shared: the best run is the least disturbed one).
    public static func compare(input: String, folder: String, outputExtension: String = "y4m", repeats: Int = 5) throws -> Comparison {
        let ours = folder + "/vfx-bench-videofx.\(outputExtension)"
        let theirs = folder + "/vfx-bench-ffmpeg.\(outputExtension)"
        var best: Comparison?
        for _ in 0..<max(1, repeats) {
            let videoFX = try passThrough(input: input, output: ours)
            let ffmpeg = try ffmpegPassThrough(input: input, output: theirs, frames: videoFX.frames)
            var next = best ?? Comparison(videoFX: videoFX, ffmpeg: ffmpeg)
            if videoFX.seconds < next.videoFX.seconds { next.videoFX = videoFX }
            if ffmpeg.seconds < next.ffmpeg.seconds { next.ffmpeg = ffmpeg }
            best = next
        }
        return best ?? Comparison(videoFX: Timing(frames: 0, seconds: 0), ffmpeg: Timing(frames: 0, seconds: 0))
    }
}

/// A benchmark that could not run; the message names the input.
public struct MediaBenchmarkError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
