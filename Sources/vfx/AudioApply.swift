import Foundation
import VFXAudio
import VFXFilters
import VFXMedia
import VFXPipeline

/// `vfx apply … --audio-filter CHAIN`: filters an audio file into an audio file, or a video's audio track
/// beside its (optionally filtered) video.
///
/// ```sh
/// vfx apply noisy.wav -o clean.flac --audio-filter noise-suppression
/// vfx apply talk.mp4 -o talk-quiet.mp4 --audio-filter gain:db=-6 --filter sepia
/// ```
enum AudioApply {
    static func run(input: String, output: String, videoChain: String, settings: ApplyCommand.Settings) throws {
        let quiet = settings.quiet
        let chain = try AudioChain(parsing: settings.audioChain ?? "")
        let video = try FilterChain(parsing: videoChain)
        let audioOnly = AudioFileKind(path: output) != nil
        if audioOnly, !video.filters.isEmpty { throw UsageError("--filter needs a video output; \(output) holds audio only") }
        if audioOnly, settings.trim.frames != nil || settings.trim.skipFrames > 0 {
            throw UsageError("--frames and --frame count video frames; \(output) holds audio only: cut it with --start and --duration")
        }
        if !settings.encoding.keepsAudio { throw UsageError("--audio-filter filters the audio that --no-audio leaves out: choose one") }
        let window = try window(of: input, settings: settings)
        let bar = AudioProgressBar(label: ApplyCommand.displayName(output), enabled: !quiet && Terminal.isInteractive)
        let interrupt = InterruptHandler()
        defer { interrupt.restore() }
        // Ctrl-C stops the audio pass between blocks; the partial file is removed.
        let progress: (Double) throws -> Void = { fraction in
            if interrupt.flag.isCancelled { throw RunCancelled() }
            bar.update(fraction)
        }
        if audioOnly {
            let summary: AudioRunSummary
            do {
                summary = try AudioFiltering.filterFile(input: input, output: output, filter: try chain.makeFilter(), window: window,
                                                        progress: progress)
            } catch {
                bar.finish()
                throw error
            }
            bar.finish()
            if !quiet { Terminal.error("vfx: wrote \(output): " + describe(summary, chain: chain)) }
            return
        }
        let filtered: [FilteredAudio]
        do {
            filtered = try AudioFiltering.filterTracks(of: input, for: output, makeFilter: { try chain.makeFilter() }, window: window,
                                                       progress: progress)
        } catch {
            bar.finish()
            throw error
        }
        bar.finish()
        interrupt.restore()
        let result = try ApplyCommand.transcode(input: input, output: output, chain: video, threads: settings.threads, quiet: quiet,
                                                encoding: settings.encoding, trim: settings.trim, filteredAudio: filtered)
        if !quiet {
            let audio = filtered.map { (filtered.count > 1 ? "#\($0.inputIndex) " : "") + describe($0.summary, chain: chain) }
            Terminal.error(ApplyCommand.summary(output: output, format: result.format, stats: result.stats, tracks: [],
                                                frames: result.framesWritten) + "; audio: " + audio.joined(separator: "; "))
        }
    }

    /// The part of the audio that goes with the trimmed video (or audio): from `--start` (plus `--frame`'s
    /// frames), for `--duration` or as long as `--frames` frames last at the video's rate (or `--fps`).
    static func window(of input: String, settings: ApplyCommand.Settings) throws -> AudioWindow? {
        let trim = settings.trim
        guard !trim.isEmpty || settings.encoding.frameLimit != nil else { return nil }
        var window = AudioWindow(start: trim.start ?? 0, duration: trim.duration)
        if trim.skipFrames > 0 || trim.frames != nil || settings.encoding.frameLimit != nil {
            let sourceRate = try MediaReader(path: input).format.frameRate
            guard let rate = sourceRate?.framesPerSecond, rate > 0 else {
                throw ApplyError("\(input): has no frame rate to count --frames and --frame by; cut with --start and --duration")
            }
            window.start += Double(trim.skipFrames) / rate
            var frames: Double?
            if let limit = settings.encoding.frameLimit, let output = settings.encoding.frameRate?.framesPerSecond {
                frames = Double(limit) / output
            } else if let count = trim.frames ?? settings.encoding.frameLimit {
                frames = Double(count) / rate
            }
            if let frames { window.duration = min(window.duration ?? .infinity, frames) }
        }
        return window
    }

    /// `20.00 s of 48000 Hz, 1 channel, pcm_s16le; filters noise-suppression at 48000 Hz: 310× real time, 1024 frames of latency compensated`
    static func describe(_ summary: AudioRunSummary, chain: AudioChain) -> String {
        var line = String(format: "%.2f s of %d Hz, %d channel%@, %@", summary.seconds, summary.sampleRate, summary.channels,
                          summary.channels == 1 ? "" : "s", summary.codec)
        if !chain.filters.isEmpty {
            line += "; filters \(chain) at \(summary.filterRate) Hz"
            if summary.filterSeconds > 0 { line += String(format: ": %.0f× real time", summary.seconds / summary.filterSeconds) }
            if summary.latency > 0 { line += ", \(summary.latency) frames of latency compensated" }
        }
        return line
    }
}

/// The progress bar of an audio pass: the fraction done and the time left, at most 10 times a second.
final class AudioProgressBar {
    let label: String
    let enabled: Bool
    private let started = Date()
    private var lastDraw = 0.0
    private var drawn = false

    init(label: String, enabled: Bool) {
        self.label = label
        self.enabled = enabled
    }

    func update(_ fraction: Double) {
        let elapsed = Date().timeIntervalSince(started)
        guard enabled, elapsed - lastDraw >= 0.1 || fraction >= 1 else { return }
        lastDraw = elapsed
        let width = 24
        let filled = min(width, Int(fraction * Double(width)))
        var line = "\(label) audio [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
        line += String(format: "%3.0f%%", fraction * 100)
        if fraction > 0.01 && fraction < 1 { line += "  ETA " + ProgressBar.clock(elapsed * (1 - fraction) / fraction) }
        Terminal.write("\r\u{1B}[K" + line)
        drawn = true
    }

    func finish() {
        if drawn { Terminal.write("\r\u{1B}[K") }
    }
}
