import Foundation
import VFXPipeline

/// A one-line progress bar on standard error: frames, speed and time left, redrawn at most 10 times a
/// second, and only when standard error is a terminal.
///
/// ```swift
/// let bar = ProgressBar(label: "out.mp4")
/// bar.update(progress)   // [########------------]  120/250 frames  64.1 fps  ETA 0:02
/// bar.finish()
/// ```
final class ProgressBar {
    let label: String
    let enabled: Bool
    private var lastDraw = 0.0
    private var drawn = false

    init(label: String, enabled: Bool = Terminal.isInteractive) {
        self.label = label
        self.enabled = enabled
    }

    func update(_ progress: RunProgress) {
        guard enabled, progress.elapsedSeconds - lastDraw >= 0.1 || progress.framesWritten == progress.expectedFrames else { return }
        lastDraw = progress.elapsedSeconds
        var line = label + " "
        if let total = progress.expectedFrames, total > 0 {
            let width = 24
            let filled = min(width, progress.framesWritten * width / total)
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            line += "\(progress.framesWritten)/\(total) frames"
        } else {
            line += "\(progress.framesWritten) frames"
        }
        line += String(format: "  %.1f fps", progress.framesPerSecond)
        if let left = progress.estimatedSecondsLeft {
            line += "  ETA " + Self.clock(left)
        }
        Terminal.write("\r\u{1B}[K" + line)
        drawn = true
    }

    /// Clears the bar so the summary line starts clean.
    func finish() {
        if drawn { Terminal.write("\r\u{1B}[K") }
    }

    /// Seconds as m:ss (or h:mm:ss).
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
