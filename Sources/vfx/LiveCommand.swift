import Foundation
import VFXAudio
import VFXCore
import VFXFilters
import VFXMedia
import VFXPipeline

/// `vfx live SOURCE [-o SINK] [--filter CHAIN] [--audio-filter CHAIN] [--stats] [--stats-json FILE]
/// [--control PATH] [--loop] [--reconnect] [--priority raised|normal]`: runs a filter chain in real time from a camera, a file, a y4m pipe or a test pattern to a
/// virtual camera, a stream, a file or y4m on stdout, dropping late frames instead of queueing them.
///
/// ```sh
/// vfx live v4l2:/dev/video0 -o v4l2:/dev/video10 --filter "sepia,vignette" --stats
/// vfx live testsrc:size=1920x1080:rate=30 --filter "sepia,gaussian-blur:radius=5,vignette" --stats-json run.jsonl
/// ffmpeg -i talk.mp4 -f yuv4mpegpipe - | vfx live - -o - --filter mono | ffplay -
/// vfx live talk.mp4 -o talk-live.mkv --filter sepia --audio-filter "high-pass:frequency=100,noise-suppression"
/// ```
enum LiveCommand {
    static let help = """
        usage: vfx live SOURCE [-o SINK] [--filter CHAIN] [--audio-filter CHAIN] [--stats] [--stats-json FILE]
                              [--control PATH] [--loop] [--reconnect] [--priority raised|normal]

          SOURCE             testsrc[:size=WxH][:rate=N][:frames=N]   a generated test pattern
                             v4l2:/dev/videoN[:size=WxH][:rate=N][:format=mjpeg|yuyv422]   a camera
                             FILE                a video played at its own rate (--loop repeats it)
                             -                   y4m on standard input, taken as it arrives
          -o, --output SINK  null (default: only measure), - (y4m on stdout), a file (.y4m .mp4 .mkv …),
                             v4l2:/dev/videoN (a v4l2loopback virtual camera), udp://… srt://… rtmp://… (H.264)
          --filter CHAIN     the filter chain (see vfx filters); changeable while running
          --stats            a live status line on a terminal (fps, drops, latency, the slowest stage)
          --stats-json FILE  append one JSON object per second and a final one
          --control PATH     also take commands on a Unix socket at PATH
          --loop             play a file source again from the start when it ends
          --reconnect        reopen a network sink that went away instead of stopping
          --priority P       raised (default): run the capture, chain, sink and audio threads ahead of other
                             work where the system allows (real-time class, else nice -10); normal: as any program
          --audio-filter CHAIN   the audio chain (see vfx filters --audio) for a file source's audio, kept in sync
                             with the video, into a file (.mp4 .mkv .webm .mov .ts) or a stream sink

        commands (one per line on stdin when stdin is not the source, and on the --control socket):
          set CHAIN          replace the chain            param NAME.KEY=VALUE   change one parameter
          stats              the statistics so far        quit                   stop cleanly
        each is answered with one JSON line: {"ok": true, "frame": N} (the first output frame with the change)
        or {"ok": false, "error": "…"}; answers to stdin commands go to stdout (stderr when the sink is -).
        """

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") { print(help); return }
        let sinkText = try arguments.option("-o", "--output") ?? "null"
        let chainText = try arguments.option("--filter", "-f") ?? ""
        let statsLine = arguments.flag("--stats")
        let statsJSON = try arguments.option("--stats-json")
        let controlPath = try arguments.option("--control")
        let loop = arguments.flag("--loop")
        let reconnect = arguments.flag("--reconnect")
        let priorityText = try arguments.option("--priority") ?? "raised"
        guard let priority = ["raised": RealtimePriority.raised, "normal": .normal][priorityText] else {
            throw UsageError("--priority must be raised or normal, not '\(priorityText)'")
        }
        let audioChainText = try arguments.option("--audio-filter")
        let sourceText = try arguments.positional("SOURCE")
        try arguments.finish()

        let chain = try FilterChain(parsing: chainText)
        let audioChain = try audioChainText.map { try AudioChain(parsing: $0) }
        if audioChain != nil {
            guard LiveEndpoints.isFile(source: sourceText) else {
                throw UsageError("--audio-filter needs a file source with audio; \(sourceText) has none")
            }
            guard !loop else { throw UsageError("--audio-filter: the audio of a looped file is not repeated; leave out --loop") }
            guard !reconnect else { throw UsageError("--audio-filter: a reconnected stream carries no audio; leave out --reconnect") }
        }
        let source = try LiveEndpoints.openSource(sourceText, loop: loop)
        let statsFile = try statsJSON.map { try LiveStatsFile(path: $0) }
        let stages = LiveStages.chain(chain, rotation: source.rotation, replacing: nil)
        let runner = RealtimeRunner(source: source.frames, processor: stages, options: RealtimeOptions(pacing: source.pacing, priority: priority))
        let outputFormat = try runner.prepare()
        let audio = try audioChain.map { try LiveAudioTrack(path: sourceText, filter: try $0.makeFilter(), for: sinkText) }
        let sink = try LiveEndpoints.openSink(sinkText, frameRate: outputFormat.frameRate, audio: audio)
        if let audio { runner.setAudio(audio) }
        let reopen: (() throws -> any FrameSink)? = reconnect && sink.isNetwork
            ? { try LiveEndpoints.openSink(sinkText, frameRate: outputFormat.frameRate).frames } : nil

        let control = LiveControl(runner: runner, chain: chain, stages: stages, rotation: source.rotation)
        let answersToStderr = sinkText == "-"
        if sourceText != "-" {
            control.serve(input: 0, output: answersToStderr ? 2 : 1)
        }
        let socket = try controlPath.map { try LiveControlSocket(path: $0, control: control) }
        defer { socket?.close() }
        let stopper = LiveSignals(runner: runner)
        defer { stopper.restore() }

        let showStatus = statsLine && Terminal.isInteractive
        let stats: RealtimeStatistics
        do {
            stats = try runner.run(into: sink.frames, reopenSink: reopen, report: { snapshot in
                statsFile?.append(snapshot)
                if showStatus { Terminal.write("\r\u{1B}[K" + snapshot.statusLine) }
            }, notice: { message in Terminal.error("vfx: warning: \(sinkText): \(message)") })
        } catch {
            statsFile?.append(runner.snapshot.finalized)
            if showStatus { Terminal.write("\n") }
            throw LiveError.describe(error, source: source.name, sink: LiveEndpoints.displayName(sink: sinkText))
        }
        statsFile?.append(stats)
        if showStatus { Terminal.write("\n") }
        if statsLine || !Terminal.isInteractive {
            Terminal.error(String(format: "vfx: live: %ld frames in, %ld out, %ld dropped; latency p50 %.1f ms, p99 %.1f ms",
                                  stats.framesIn, stats.framesOut, stats.drops, stats.latency.percentile(0.5) * 1000,
                                  stats.latency.percentile(0.99) * 1000))
        }
    }
}

/// A fault of a live run, named after the source or sink it concerns: one line.
struct LiveError: Error, CustomStringConvertible {
    let description: String

    static func describe(_ error: any Error, source: String, sink: String) -> any Error {
        switch error {
        case RealtimeError.sourceStalled: LiveError(description: "\(source): \(error)")
        case RealtimeError.sinkBlocked: LiveError(description: "\(sink): \(error)")
        default: error
        }
    }
}

extension RealtimeStatistics {
    /// The same numbers marked as the final report.
    var finalized: RealtimeStatistics {
        var copy = self
        copy.final = true
        return copy
    }
}

/// `--stats-json FILE`: one JSON object per line, appended.
final class LiveStatsFile: @unchecked Sendable {
    // Sendable: `handle` is written only under `lock`.
    private let lock = NSLock()
    private let handle: FileHandle

    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw MediaError.writeFailed(path: path, reason: "cannot create the file")
            }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw MediaError.writeFailed(path: path, reason: "cannot open the file for writing")
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    func append(_ stats: RealtimeStatistics) {
        lock.lock()
        defer { lock.unlock() }
        try? handle.write(contentsOf: Data((stats.json + "\n").utf8))
    }
}

/// SIGINT and SIGTERM stop the run cleanly (flushed, the sink finished); a second one exits at once.
final class LiveSignals {
    private var sources: [any DispatchSourceSignal] = []
    private static let signals = [SIGINT, SIGTERM]

    init(runner: RealtimeRunner) {
        let seen = LiveFlag()
        for number in Self.signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if seen.setOnce() { runner.stop() } else { exit(130) }
            }
            source.resume()
            sources.append(source)
        }
    }

    func restore() {
        for source in sources { source.cancel() }
        for number in Self.signals { signal(number, SIG_DFL) }
    }
}

/// A flag set once from any thread.
final class LiveFlag: @unchecked Sendable {
    // Sendable: `set` is only touched under `lock`.
    private let lock = NSLock()
    private var set = false

    /// True the first time.
    func setOnce() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if set { return false }
        set = true
        return true
    }
}
