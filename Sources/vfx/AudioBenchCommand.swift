import VFXCore
import VFXPipeline
import Foundation
import VFXAudio
import VFXMedia

/// `vfx bench --audio-filter CHAIN --input FILE [--block N] [--repeats N] [--no-ffmpeg] [--json]`: times an
/// audio chain on one thread over the decoded audio of FILE (in memory, fed in blocks of N frames, as a
/// call app's audio thread does), and FFmpeg's nearest filter on the same file (`ffmpeg -threads 1 -af …
/// -f null -`, minus the same command without the filter). Times are CPU time (the filtering thread's;
/// FFmpeg's process's), best of the repeats, so a busy machine does not count other programs' turns;
/// speeds are in × real time. The filtering thread's wall-clock time (best of the repeats) and the load
/// average when the run ended are reported beside them: on a quiet machine wall and CPU time agree.
///
/// ```sh
/// vfx bench --audio-filter noise-suppression --input speech48k.wav --json
/// ```
enum AudioBenchCommand {
    struct Result: Encodable {
        let chain: String
        let input: String
        let sampleRate: Int
        let channels: Int
        let seconds: Double
        let block: Int
        let latencyMilliseconds: Double
        let vfxSeconds: Double
        let vfxRealTime: Double
        let vfxWallSeconds: Double
        let vfxWallRealTime: Double
        let loadAverage: Double?
        let ffmpegGraph: String?
        let ffmpegSeconds: Double?
        let ffmpegRealTime: Double?

        enum CodingKeys: String, CodingKey {
            case chain, input, block, channels, seconds
            case sampleRate = "sample_rate", latencyMilliseconds = "latency_ms", vfxSeconds = "vfx_seconds"
            case vfxRealTime = "vfx_realtime", ffmpegGraph = "ffmpeg_graph", ffmpegSeconds = "ffmpeg_seconds"
            case ffmpegRealTime = "ffmpeg_realtime", vfxWallSeconds = "vfx_wall_seconds", vfxWallRealTime = "vfx_wall_realtime"
            case loadAverage = "load_average"
        }
    }

    static func run(_ arguments: inout Arguments) throws {
        guard let text = try arguments.option("--audio-filter") else { throw UsageError("bench needs --audio-filter CHAIN") }
        guard let input = try arguments.option("--input", "-i") else { throw UsageError("bench --audio-filter needs --input FILE") }
        let block = try arguments.intOption("--block", range: 1...65_536) ?? 480
        let repeats = try arguments.intOption("--repeats", range: 1...100) ?? 3
        let compare = !arguments.flag("--no-ffmpeg")
        let json = arguments.flag("--json")
        try arguments.finish()
        let chain = try AudioChain(parsing: text)
        let filter = try chain.makeFilter()
        let probe = try AudioFileReader(path: input)
        let reader = try AudioFileReader(path: input, rate: filter.sampleRate(near: probe.sampleRate))
        let channels = reader.channelCount
        let rate = reader.rate
        // The whole stream in memory, one array per channel.
        var samples = Array(repeating: [Float](), count: channels)
        let chunk = AudioBuffer(channels: channels, capacity: 4096, sampleRate: rate)
        while try reader.read(into: chunk) {
            for channel in 0..<channels { samples[channel].append(contentsOf: chunk.samples(channel)) }
        }
        let frames = samples.first?.count ?? 0
        guard frames > 0 else { throw UsageError("\(input): the audio stream holds no samples") }
        let seconds = Double(frames) / Double(rate)
        let buffer = AudioBuffer(channels: channels, capacity: block, sampleRate: rate)
        var best = Double.infinity
        var bestWall = Double.infinity
        let clock = ContinuousClock()
        var latency = 0
        for _ in 0..<repeats {
            try filter.initialize(sampleRate: rate, channels: channels)
            latency = filter.latency
            let start = threadCPUSeconds()
            let wallStart = clock.now
            var position = 0
            while position < frames {
                let count = min(block, frames - position)
                buffer.frameCount = count
                for channel in 0..<channels {
                    samples[channel].withUnsafeBufferPointer { source in
                        buffer.channel(channel).update(from: source.baseAddress! + position, count: count)
                    }
                }
                filter.process(buffer)
                position += count
            }
            best = min(best, threadCPUSeconds() - start)
            let wall = clock.now - wallStart
            bestWall = min(bestWall, Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18)
            filter.release()
        }
        var graph: String?
        var ffmpegSeconds: Double?
        if compare {
            let graphs = try chain.filters.compactMap { description in try description.spec?.ffmpeg?(description.arguments()) }
            if graphs.count == chain.filters.count, !graphs.isEmpty {
                graph = graphs.joined(separator: ",")
                ffmpegSeconds = try ffmpegTime(input: input, graph: graphs.joined(separator: ","), repeats: repeats)
            }
        }
        let result = Result(chain: chain.description, input: input, sampleRate: rate, channels: channels, seconds: seconds, block: block,
                            latencyMilliseconds: Double(latency) / Double(rate) * 1000, vfxSeconds: best, vfxRealTime: seconds / best,
                            vfxWallSeconds: bestWall, vfxWallRealTime: seconds / bestWall, loadAverage: loadAverage(),
                            ffmpegGraph: graph, ffmpegSeconds: ffmpegSeconds, ffmpegRealTime: ffmpegSeconds.map { seconds / $0 })
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
            return
        }
        print("chain       \(result.chain)  (\(rate) Hz, \(channels) channel(s), \(String(format: "%.1f", seconds)) s, blocks of \(block), one thread)")
        print(String(format: "vfx         %.4f s CPU  %.0f× real time (wall %.4f s, %.0f×), latency %.1f ms", best, result.vfxRealTime,
                     bestWall, result.vfxWallRealTime, result.latencyMilliseconds))
        if let load = result.loadAverage { print(String(format: "load        %.2f (1-minute average)", load)) }
        if let graph, let ffmpegSeconds, let realTime = result.ffmpegRealTime {
            print(String(format: "ffmpeg      %.4f s CPU beyond decoding  %.0f× real time  (-af %@)", ffmpegSeconds, realTime, graph))
        }
    }

    /// FFmpeg's time for `graph` beyond the same command without it (best of `repeats` each).
    private static func ffmpegTime(input: String, graph: String, repeats: Int) throws -> Double? {
        func best(_ filterArguments: [String]) throws -> Double? {
            var fastest = Double.infinity
            for _ in 0..<repeats {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
                process.arguments = ["-v", "error", "-nostdin", "-threads", "1", "-filter_threads", "1", "-i", input, "-vn"]
                    + filterArguments + ["-f", "null", "-"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                let start = childrenCPUSeconds()
                do { try process.run() } catch { return nil }
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { return nil }
                fastest = min(fastest, childrenCPUSeconds() - start)
            }
            return fastest
        }
        guard let floor = try best([]), let filtered = try best(["-af", graph]) else { return nil }
        // Below 1 ms beyond decoding the difference is rusage's resolution, not the filter.
        return filtered - floor > 0.001 ? filtered - floor : nil
    }

    /// The 1-minute load average, when the system says.
    private static func loadAverage() -> Double? {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) >= 1 ? loads[0] : nil
    }

    /// CPU seconds the calling thread has used.
    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// CPU seconds (user + system) used by finished child processes.
    private static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
