import VFXCore
import VFXPipeline
import Foundation
import VFXFilters

/// `echo`: repeats the sound after `delay`, each repeat `decay` times the one before (a feedback delay
/// line: y[n] = x[n] + decay · y[n − delay]), like a voice in a hall.
///
/// Parameters: `delay` (1…2000 ms, default 250), `decay` (0…0.95, default 0.4). Any channel count, no latency.
///
/// ```sh
/// vfx apply voice.wav -o hall.wav --audio-filter echo:delay=300:decay=0.5
/// ```
/// ```swift
/// let filter = EchoFilter(delay: 300, decay: 0.5)
/// ```
public final class EchoFilter: AudioFilter {
    public let delay: Double
    public let decay: Float
    private var lines: SampleStorage<Float>?
    private var length = 1
    private var position = 0

    public init(delay: Double, decay: Float) {
        self.delay = delay
        self.decay = decay
    }

    public var id: String { "echo:delay=\(ParameterValue.number(delay)):decay=\(ParameterValue.number(Double(decay)))" }
    public var latency: Int { 0 }

    public func initialize(sampleRate: Int, channels: Int) throws {
        length = max(1, Int((delay * 0.001 * Double(sampleRate)).rounded()))
        lines = SampleStorage(count: length * channels)
        position = 0
    }

    public func process(_ buffer: AudioBuffer) {
        guard let lines else { return }
        let channels = min(buffer.channelCount, lines.count / length)
        var start = position
        for channel in 0..<channels {
            let samples = buffer.channel(channel)
            let line = lines.pointer + channel * length
            var cursor = position
            for index in 0..<buffer.frameCount {
                let output = samples[index] + decay * line[cursor]
                line[cursor] = output
                samples[index] = output
                cursor += 1
                if cursor == length { cursor = 0 }
            }
            start = cursor
        }
        position = start
    }

    public func release() { lines = nil }
}

extension AudioFilterSpec {
    static let echo = AudioFilterSpec(
        name: "echo", summary: "Repeats the sound after a delay, each repeat quieter by the decay factor.",
        parameters: [
            ParameterSpec("delay", .number(1...2000, unit: "ms"), default: 250, "the time between repeats"),
            ParameterSpec("decay", .number(0...0.95), default: 0.4, "each repeat's level relative to the one before"),
        ],
        example: "echo:delay=300:decay=0.5", swift: "EchoFilter(delay: 300, decay: 0.5)",
        ffmpeg: { "aecho=1:1:\(ParameterValue.number($0.number("delay"))):\(ParameterValue.number($0.number("decay")))" }
    ) { EchoFilter(delay: $0.number("delay"), decay: $0.float("decay")) }
}
