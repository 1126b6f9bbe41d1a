import Foundation
import VFXCore
import VFXMedia

/// Times media pass-through (read every frame, write it unchanged) with VideoFX and with the `ffmpeg`
/// command on the same files, one thread each.
///
/// ```swift
/// let result = try MediaBenchmark.compare(input: "/dev/shm/in.y4m", folder: "/dev/shm", repeats: 5)
/// print(result)   // VideoFX 700 fps, ffmpeg 450 fps, ratio 1.56 (by CPU time: …)
/// ```
public enum MediaBenchmark {
    /// Frames per second of one run, by wall-clock time and by CPU time (user + system; steadier than
    /// wall-clock time on a busy machine).
    public struct Timing: Sendable, CustomStringConvertible {
        public var frames: Int
        public var seconds: Double
        public var cpuSeconds: Double
        public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
        public var framesPerCPUSecond: Double { cpuSeconds > 0 ? Double(frames) / cpuSeconds : 0 }
        public var description: String {
            String(format: "%d frames in %.3f s = %.0f fps (%.0f per CPU second)", frames, seconds, framesPerSecond, framesPerCPUSecond)
        }
    }

    /// The best VideoFX and FFmpeg timings of a comparison, and their ratio (VideoFX fps / FFmpeg fps).
    public struct Comparison: Sendable, CustomStringConvertible {
        public var videoFX: Timing
        public var ffmpeg: Timing
        public var ratio: Double { ffmpeg.framesPerSecond > 0 ? videoFX.framesPerSecond / ffmpeg.framesPerSecond : 0 }
        /// The same ratio by CPU time.
        public var cpuRatio: Double {
            ffmpeg.framesPerCPUSecond > 0 ? videoFX.framesPerCPUSecond / ffmpeg.framesPerCPUSecond : 0
        }
        public var description: String {
            String(format: "VideoFX %.0f fps, ffmpeg %.0f fps, ratio %.2f (by CPU time: %.0f, %.0f, ratio %.2f)",
                   videoFX.framesPerSecond, ffmpeg.framesPerSecond, ratio, videoFX.framesPerCPUSecond,
                   ffmpeg.framesPerCPUSecond, cpuRatio)
        }
    }

    /// Reads `input` and writes every frame to `output` (its extension picks the format) on the calling
    /// thread; the output is removed afterwards.
    public static func passThrough(input: String, output: String) throws -> Timing {
        let start = DispatchTime.now()
        let cpuStart = threadCPUSeconds()
        let reader = try MediaReader(path: input, threads: 1)
        let writer = try MediaWriter(path: output, frameRate: reader.format.frameRate, audioFrom: reader, threads: 1)
        var frames = 0
        while let frame = try reader.nextFrame() {
            try writer.write(frame)
            frames += 1
        }
        try writer.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let cpuSeconds = threadCPUSeconds() - cpuStart
        unlink(output)
        return Timing(frames: frames, seconds: seconds, cpuSeconds: cpuSeconds)
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
        let cpuStart = childrenCPUSeconds()
        let start = DispatchTime.now()
        try process.run()
        process.waitUntilExit()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let cpuSeconds = childrenCPUSeconds() - cpuStart
        unlink(output)
        guard process.terminationStatus == 0 else {
            throw MediaBenchmarkError(message: "ffmpeg failed on \(input) (exit \(process.terminationStatus))")
        }
        return Timing(frames: frames, seconds: seconds, cpuSeconds: cpuSeconds)
    }

    /// CPU time of the calling thread.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// CPU time of the finished child processes.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
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
            next.videoFX.seconds = min(next.videoFX.seconds, videoFX.seconds)
            next.videoFX.cpuSeconds = min(next.videoFX.cpuSeconds, videoFX.cpuSeconds)
            next.ffmpeg.seconds = min(next.ffmpeg.seconds, ffmpeg.seconds)
            next.ffmpeg.cpuSeconds = min(next.ffmpeg.cpuSeconds, ffmpeg.cpuSeconds)
            best = next
        }
        let none = Timing(frames: 0, seconds: 0, cpuSeconds: 0)
        return best ?? Comparison(videoFX: none, ffmpeg: none)
    }
}

/// A benchmark that could not run; the message names the input.
public struct MediaBenchmarkError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
