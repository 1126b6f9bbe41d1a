import Foundation
import VFXCore
import VFXFilters
import VFXMedia
import VFXPipeline

/// `vfx apply INPUT -o OUTPUT [--filter CHAIN] [encoding, trimming and file options]`: decodes, filters
/// and encodes, keeping the audio and subtitle streams, colour tags and pixel aspect ratio of the input.
///
/// ```sh
/// vfx apply talk.mp4 -o talk-sepia.mp4 --filter "sepia:intensity=0.8,vignette"
/// vfx apply talk.mp4 -o talk.mkv --codec hevc --crf 26 --preset slow --start 1:30 --duration 20
/// vfx apply talk.mp4 -o poster.png --frame 120
/// ffmpeg -i talk.mp4 -f yuv4mpegpipe - | vfx apply - -o - --filter mono > gray.y4m
/// ```
enum ApplyCommand {
    static let help = """
        usage: vfx apply INPUT -o OUTPUT [--filter CHAIN] [options]

          INPUT             a video (mp4, mkv, webm, mov, ts, avi, y4m…), an image (png, jpg), or - for y4m on stdin
          -o, --output FILE the output; its extension picks the container: .mp4 .mov .mkv .webm .ts .avi .gif
                            .y4m .png .jpg, or - for y4m on stdout
          --filter CHAIN    filters in FFmpeg's syntax, e.g. "sepia,gaussian-blur:radius=5" (see vfx filters);
                            without it frames pass through unchanged
          --audio-filter CHAIN  audio filters, e.g. "noise-suppression,gain:db=3", on an audio file (wav, flac,
                            mp3, ogg, opus, m4a) or every audio stream of a video; rate, channel layout and
                            length are kept, and so is the trimming below

        encoding (FFmpeg's -c:v, -crf, -b:v, -preset, -pix_fmt, -r):
          --codec NAME      h264, hevc, vp9, av1, prores, ffv1 (default: h264; vp9 for .webm; gif for .gif)
          --crf N           quality, lower is better: h264/hevc 0-51, vp9/av1 0-63
          --bitrate RATE    video bit rate: 800000, 2500k, 4M
          --preset NAME     x264/x265: ultrafast … veryslow; vp9/av1: speed 0-13; prores: proxy, lt, standard, hq, 4444
          --pix-fmt FMT     encoded pixel format: yuv420p, yuv422p, yuv444p, yuv420p10le… (default: the input's
                            when the encoder takes it)
          --fps RATE        output frame rate (25, 29.97, 30000/1001): frames are repeated or dropped
          --no-audio        leave the audio out (subtitles are still kept)

        trimming (FFmpeg's -ss, -t, -frames:v):
          --start TIME      begin at TIME: seconds (12.5) or [hh:]mm:ss[.fff]
          --duration TIME   keep TIME of the clip
          --frames N        write N frames
          --frame N         write only frame N (0 is the first): a still from a video

        files:
          -y                overwrite OUTPUT if it exists
          -n                never overwrite (without -y or -n, vfx asks on a terminal and refuses otherwise)
          --threads N       threads for filters and the encoder (default: every core)
          --quiet           no progress bar, no summary, no warnings

        The output keeps every audio and subtitle stream (copied, else re-encoded for the container), the
        colour tags (HDR stays HDR-tagged) and the pixel aspect ratio; a warning line names anything left out.
        """

    /// What `vfx apply` takes besides input, output and chain (room for more: audio filters go here).
    struct Settings {
        var encoding = EncodingOptions()
        var trim = Trim()
        var threads: Int?
        var quiet = false
        /// `--audio-filter`: the audio chain (AudioApply.swift).
        var audioChain: String?
    }

    /// What to do when the output already exists.
    enum Overwrite { case ask, always, never }

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") { print(help); return }
        let output = try arguments.option("-o", "--output")
        let chainText = try arguments.option("--filter", "-f") ?? ""
        var settings = Settings()
        settings.threads = try arguments.intOption("--threads", range: 1...256)
        settings.quiet = arguments.flag("--quiet", "-q")
        settings.audioChain = try arguments.option("--audio-filter", "-af")
        if let name = try arguments.option("--codec", "-c:v") {
            guard let codec = VideoCodec(name: name) else {
                throw UsageError("--codec must be one of \(VideoCodec.allCases.map(\.rawValue).joined(separator: ", ")), got '\(name)'")
            }
            settings.encoding.codec = codec
        }
        settings.encoding.crf = try arguments.numberOption("--crf", range: 0...63)
        settings.encoding.bitrate = try arguments.bitrateOption("--bitrate", "-b:v")
        settings.encoding.preset = try arguments.option("--preset")
        settings.encoding.pixelFormat = try arguments.option("--pix-fmt", "--pix_fmt")
        settings.encoding.frameRate = try arguments.frameRateOption("--fps", "-r").map { FrameRate($0.numerator, $0.denominator) }
        settings.encoding.keepsAudio = !arguments.flag("--no-audio", "-an")
        settings.trim.start = try arguments.timeOption("--start", "-ss")
        settings.trim.duration = try arguments.timeOption("--duration", "-t")
        settings.trim.frames = try arguments.intOption("--frames", range: 1...1_000_000_000)
        let still = try arguments.intOption("--frame", range: 0...1_000_000_000)
        let always = arguments.flag("-y"), never = arguments.flag("-n")
        let input = try arguments.positional("INPUT")
        try arguments.finish()
        guard let output else { throw UsageError("apply needs -o OUTPUT") }
        if always && never { throw UsageError("choose one of -y and -n") }
        if settings.trim.duration == 0 { throw UsageError("--duration must be above 0") }
        if let still {
            guard settings.trim.frames == nil else { throw UsageError("--frame picks one frame; leave out --frames") }
            settings.trim.skipFrames = still
            settings.trim.frames = 1
        }
        // --frames counts output frames; with --fps the reader's share is set once its rate is known.
        settings.encoding.frameLimit = settings.trim.frames
        if settings.encoding.frameRate != nil && still == nil { settings.trim.frames = nil }
        try checkOutput(output, input: input, overwrite: always ? .always : never ? .never : .ask)
        // Audio filters and audio-only outputs (AudioApply.swift).
        if settings.audioChain != nil || AudioFileKind(path: output) != nil {
            try AudioApply.run(input: input, output: output, videoChain: chainText, settings: settings)
            return
        }

        let result = try transcode(input: input, output: output, chain: try FilterChain(parsing: chainText), threads: settings.threads,
                                   quiet: settings.quiet, encoding: settings.encoding, trim: settings.trim)
        if !settings.quiet {
            Terminal.error(summary(output: output, format: result.format, stats: result.stats, tracks: result.tracks,
                                   frames: result.framesWritten))
            if result.droppedAlpha {
                Terminal.error("vfx: warning: \(displayPath(output)) has no alpha channel, so the frames' transparency was made opaque; "
                    + "keep it with .png, --codec ffv1 --pix-fmt yuva420p (.mkv), or --codec prores --pix-fmt yuva444p10le (.mov)")
            }
        }
    }

    /// Refuses to write over the input (even with -y), and over an existing file unless allowed or confirmed.
    static func checkOutput(_ output: String, input: String, overwrite: Overwrite) throws {
        guard output != "-" else { return }
        var outputInfo = stat()
        guard stat(output, &outputInfo) == 0 else { return }
        var inputInfo = stat()
        if input != "-", stat(input, &inputInfo) == 0, inputInfo.st_dev == outputInfo.st_dev, inputInfo.st_ino == outputInfo.st_ino {
            throw ApplyError("\(output): is the input file; write the output under another name")
        }
        switch overwrite {
        case .always:
            return
        case .never:
            throw ApplyError("\(output): already exists (-y overwrites it)")
        case .ask:
            guard isatty(0) != 0 else { throw ApplyError("\(output): already exists (-y overwrites it, -n never does)") }
            Terminal.write("vfx: \(output) already exists. Overwrite? [y/N] ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else { throw ApplyError("\(output): already exists; not overwritten") }
        }
    }

    /// What one transcode did.
    struct Outcome {
        let stats: RunStatistics
        let format: FrameFormat
        /// What happened to each audio and subtitle stream.
        let tracks: [TrackOutcome]
        /// Frames in the output (differs from the frames processed when `--fps` converts the rate).
        let framesWritten: Int
        /// Transparent frames went into an encoding without alpha (`MediaWriter.droppedAlpha`).
        let droppedAlpha: Bool
    }

    /// Decodes `input` (the `trim`med part), runs `chain` on every frame and encodes into `output` with
    /// `encoding` (audio, subtitles, colour tags and pixel aspect kept where the format allows). Everything
    /// a user can get wrong is checked before the first frame is decoded.
    static func transcode(input: String, output: String, chain: FilterChain, threads: Int?, quiet: Bool,
                          encoding: EncodingOptions = EncodingOptions(), trim: Trim = Trim(),
                          filteredAudio: [FilteredAudio] = []) throws -> Outcome {
        let reader = try MediaReader(path: input, threads: threads ?? 0, trim: trim)
        if trim.skipFrames > 0 && reader.expectedFrameCount == 0 {
            throw ApplyError("\(input): has no frame \(trim.skipFrames) (frames are counted from 0)")
        }
        if let start = trim.start, let length = reader.duration?.seconds, start >= length {
            throw ApplyError("\(input): --start is past the end of the clip (" + String(format: "%.2f", length) + " s long)")
        }
        // Like players (and FFmpeg), frames are turned upright first, so filters see what viewers see.
        var stages: [any FrameProcessor] = []
        var encoding = encoding
        encoding.threads = threads ?? 0
        if let limit = encoding.frameLimit, let output = encoding.frameRate, let rate = reader.format.frameRate, trim.frames == nil {
            reader.limitFrames(to: Int((Double(limit) * rate.framesPerSecond / output.framesPerSecond).rounded(.up)) + 1)
        }
        if reader.rotation != .none {
            stages.append(Upright(rotation: reader.rotation, threads: threads))
            if reader.rotation == .clockwise90 || reader.rotation == .clockwise270, let ratio = reader.sampleAspectRatio {
                encoding.sampleAspectRatio = ratio.swapped
            }
        }
        if !chain.filters.isEmpty { stages.append(chain.makeProcessor(threads: threads)) }
        let runner = OfflineRunner(source: reader, processor: stages.isEmpty ? nil : ProcessorChain(stages))
        let outputFormat = try runner.prepare()
        // The chain's rate, not the reader's: `interpolate` emits more frames per second than it reads.
        let writer = try MediaWriter(path: output, source: reader, frameRate: outputFormat.frameRate, options: encoding,
                                     filteredAudio: filteredAudio)
        if writer.kind.isImage, let count = reader.expectedFrameCount, count > 1 {
            throw MediaError.unsupportedFrame(path: output, reason: "an image holds one frame, but \(input) has \(count); "
                                              + "pick one with --frame N, or write a video (.mp4, .mkv, .webm, .gif, .y4m)")
        }
        if !quiet {
            for line in warnings(reader: reader, writer: writer, input: input, output: output, filtered: !chain.filters.isEmpty) {
                Terminal.error(line)
            }
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
        return Outcome(stats: stats, format: outputFormat, tracks: writer.tracks, framesWritten: writer.framesWritten,
                       droppedAlpha: writer.droppedAlpha)
    }

    /// One line for what the output leaves out (streams, bits), and one for HDR video run through filters.
    static func warnings(reader: MediaReader, writer: MediaWriter, input: String, output: String, filtered: Bool) -> [String] {
        var lines: [String] = []
        var dropped = writer.tracks.compactMap { track -> String? in
            guard case .dropped(let reason) = track.action, reason != "audio not wanted" else { return nil }
            return "\(track.kind.rawValue) stream #\(track.index) (\(track.codec): \(reason))"
        }
        dropped += reader.ignoredStreams.map { "\($0.kind.rawValue) stream #\($0.index) (\($0.codec))" }
        if !dropped.isEmpty {
            lines.append("vfx: warning: \(displayPath(output)) leaves out \(dropped.joined(separator: ", ")) of \(input)")
        }
        let tags = reader.colorTags
        if tags.isHDR && filtered {
            lines.append("vfx: warning: \(input) is HDR (\(tags.primaries ?? "?")/\(tags.transfer ?? "?")); the filters treat it as "
                + "8-bit SDR, so its colours change; the output keeps the HDR tags")
        } else if reader.sourceBitDepth > 8 {
            lines.append("vfx: warning: \(input) has \(reader.sourceBitDepth)-bit samples (\(reader.sourcePixelFormat)); VideoFX works "
                + "in 8 bits, so the output has 8 bits of detail" + (tags.isHDR ? "; the HDR tags are kept" : ""))
        }
        return lines
    }

    static func displayPath(_ path: String) -> String { path == "-" ? "standard output" : path }

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
}

/// A failure of `vfx apply` itself (an output it will not overwrite): one line, exit status 1.
struct ApplyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ApplyCommand {
    /// One line: where, how many frames, how fast, and where the time went.
    static func summary(output: String, format: FrameFormat, stats: RunStatistics, tracks: [TrackOutcome], frames: Int) -> String {
        var line = "vfx: wrote \(displayPath(output)): \(frames) frame\(frames == 1 ? "" : "s") \(format.width)x\(format.height)"
        line += String(format: " in %.2f s (%.1f fps); per frame: decode %.2f ms, process %.2f ms, encode %.2f ms",
                       stats.wallSeconds, stats.framesPerSecond, stats.decode.mean * 1000, stats.process.mean * 1000,
                       stats.encode.mean * 1000)
        if stats.framesDropped > 0 { line += "; \(stats.framesDropped) dropped by filters" }
        if !tracks.isEmpty { line += "; " + tracks.map(\.description).joined(separator: ", ") }
        return line
    }
}
