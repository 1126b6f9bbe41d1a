import Foundation
import VFXCore
import VFXFilters
import VFXMedia
import VFXPipeline

/// `vfx apply INPUT -o OUTPUT [--filter CHAIN] [--threads N] [--quiet]`: decodes, filters and encodes.
///
/// ```sh
/// vfx apply talk.mp4 -o talk-sepia.mp4 --filter "sepia:intensity=0.8,vignette"
/// ffmpeg -i talk.mp4 -f yuv4mpegpipe - | vfx apply - -o - --filter mono > gray.y4m
/// ```
enum ApplyCommand {
    static let help = """
        usage: vfx apply INPUT -o OUTPUT [--filter CHAIN] [--threads N] [--quiet]

          INPUT            a video (mp4, mkv, webm, mov, avi, y4m), an image (png, jpg), or - for y4m on stdin
          -o, --output     the output; its extension picks the format: .mp4 .mkv .webm .mov .y4m .png .jpg,
                           or - for y4m on stdout
          --filter CHAIN   filters in FFmpeg's syntax, e.g. "sepia,gaussian-blur:radius=5" (see vfx filters);
                           without it frames pass through unchanged
          --threads N      threads for filters and the encoder (default: every core)
          --quiet          no progress bar and no summary
        """

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") { print(help); return }
        guard let output = try arguments.option("-o", "--output") else { throw UsageError("apply needs -o OUTPUT") }
        let chainText = try arguments.option("--filter", "-f") ?? ""
        let threads = try arguments.intOption("--threads", range: 1...256)
        let quiet = arguments.flag("--quiet", "-q")
        let input = try arguments.positional("INPUT")
        try arguments.finish()

        let result = try transcode(input: input, output: output, chain: try FilterChain(parsing: chainText), threads: threads,
                                   quiet: quiet)
        if !quiet {
            Terminal.error(summary(output: output, format: result.format, stats: result.stats, audio: result.audio))
        }
    }

    /// What one transcode did.
    struct Outcome {
        let stats: RunStatistics
        let format: FrameFormat
        let audio: AudioOutcome
    }

    /// Decodes `input`, runs `chain` on every frame and encodes into `output` (audio kept where the format
    /// allows). Everything a user can get wrong is checked before the first frame is decoded.
    static func transcode(input: String, output: String, chain: FilterChain, threads: Int?, quiet: Bool) throws -> Outcome {
        let reader = try MediaReader(path: input, threads: threads ?? 0)
        // Like players (and FFmpeg), frames are turned upright first, so filters see what viewers see.
        var stages: [any FrameProcessor] = []
        if reader.rotation != .none { stages.append(Upright(rotation: reader.rotation, threads: threads)) }
        if !chain.filters.isEmpty { stages.append(chain.makeProcessor(threads: threads)) }
        let runner = OfflineRunner(source: reader, processor: stages.isEmpty ? nil : ProcessorChain(stages))
        let outputFormat = try runner.prepare()
        let writer = try MediaWriter(path: output, frameRate: reader.format.frameRate, audioFrom: reader, threads: threads ?? 0)
        if writer.kind == .png || writer.kind == .jpeg, let count = reader.expectedFrameCount, count > 1 {
            throw MediaError.unsupportedFrame(path: output, reason: "an image holds one frame, but \(input) has \(count); "
                                              + "write a video (.mp4, .mkv, .webm, .y4m)")
        }
        if case .notStored(let codec) = writer.audio, !quiet {
            Terminal.error("vfx: warning: \(output): the \(codec) audio of \(input) is not kept (\(writer.kind.rawValue) holds no audio)")
        }
        let bar = ProgressBar(label: displayName(output), enabled: !quiet && Terminal.isInteractive)
        let interrupt = InterruptHandler()
        defer { interrupt.restore() }
        let stats: RunStatistics
        do {
            stats = try runner.run(into: writer, cancellation: interrupt.flag) { bar.update($0) }
        } catch {
            bar.finish()
            throw error
        }
        bar.finish()
        return Outcome(stats: stats, format: outputFormat, audio: writer.audio)
    }

    /// Turns frames by their rotation with the catalog's exact `rotate` and clears the rotation, so no
    /// output (y4m and images have no rotation tag) shows them sideways.
    final class Upright: FrameProcessor {
        let rotate: FilterChainProcessor

        init(rotation: Rotation, threads: Int?) {
            rotate = FilterChain([.rotate(angle: Double(rotation.rawValue))]).makeProcessor(threads: threads)
        }

        func configure(for input: FrameFormat) throws -> FrameFormat { try rotate.configure(for: input) }

        func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
            try rotate.process(frame) { turned in
                var turned = turned
                turned.rotation = .none
                try emit(turned)
            }
        }

        func flush(emit: FrameEmitter) throws {}

        func release() { rotate.release() }
    }

    static func displayName(_ path: String) -> String { path == "-" ? "stdout" : (path as NSString).lastPathComponent }

    /// One line: where, how many frames, how fast, and where the time went.
    static func summary(output: String, format: FrameFormat, stats: RunStatistics, audio: AudioOutcome) -> String {
        var line = "vfx: wrote \(output == "-" ? "standard output" : output): \(stats.framesWritten) frame\(stats.framesWritten == 1 ? "" : "s") \(format.width)x\(format.height)"
        line += String(format: " in %.2f s (%.1f fps); per frame: decode %.2f ms, process %.2f ms, encode %.2f ms",
                       stats.wallSeconds, stats.framesPerSecond, stats.decode.mean * 1000, stats.process.mean * 1000,
                       stats.encode.mean * 1000)
        if stats.framesDropped > 0 { line += "; \(stats.framesDropped) dropped by filters" }
        if audio != .none { line += "; \(audio)" }
        return line
    }
}
