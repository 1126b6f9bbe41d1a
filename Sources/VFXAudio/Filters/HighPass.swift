import VFXCore
import VFXPipeline
import Foundation
import VFXFilters

/// `high-pass`: a second-order Butterworth high-pass filter (12 dB per octave below `frequency`; −3 dB at
/// it), the bilinear-transform biquad of the Audio EQ Cookbook with Q = 1/√2, the same filter as FFmpeg's
/// `highpass=f=…`. Removes rumble, hum and wind below the voice.
///
/// Parameters: `frequency` (10…5000 Hz, default 80; below half the sample rate). Any channel count, no latency.
///
/// ```sh
/// vfx apply call.wav -o clean.wav --audio-filter high-pass:frequency=100
/// ```
/// ```swift
/// let filter = HighPassFilter(frequency: 100)
/// ```
public final class HighPassFilter: AudioFilter {
    public let frequency: Double
    private var b0 = 0.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    /// Per channel: the last two inputs and outputs (direct form I, in Double: low cut-offs stay exact).
    private var state: SampleStorage<Double>?

    public init(frequency: Double) {
        self.frequency = frequency
    }

    public var id: String { "high-pass:frequency=\(ParameterValue.number(frequency))" }
    public var latency: Int { 0 }

    public func initialize(sampleRate: Int, channels: Int) throws {
        guard frequency < Double(sampleRate) / 2 else {
            throw AudioFilterError.unsupportedRate(filter: id, rate: sampleRate)
        }
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        let alpha = sin(omega) / (2 * (0.5).squareRoot())
        let a0 = 1 + alpha
        b0 = (1 + cos(omega)) / 2 / a0
        b1 = -(1 + cos(omega)) / a0
        b2 = b0
        a1 = -2 * cos(omega) / a0
        a2 = (1 - alpha) / a0
        state = SampleStorage(count: 4 * channels)
    }

    public func process(_ buffer: AudioBuffer) {
        guard let state else { return }
        for channel in 0..<min(buffer.channelCount, state.count / 4) {
            let samples = buffer.channel(channel)
            let memory = state.pointer + 4 * channel
            var x1 = memory[0], x2 = memory[1], y1 = memory[2], y2 = memory[3]
            for index in 0..<buffer.frameCount {
                let x0 = Double(samples[index])
                let y0 = b0 * x0 + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
                x2 = x1
                x1 = x0
                y2 = y1
                y1 = y0
                samples[index] = Float(y0)
            }
            memory[0] = x1
            memory[1] = x2
            memory[2] = y1
            memory[3] = y2
        }
    }

    public func release() { state = nil }
}

extension AudioFilterSpec {
    static let highPass = AudioFilterSpec(
        name: "high-pass", summary: "Second-order Butterworth high-pass: removes rumble and hum below the cut-off.",
        parameters: [ParameterSpec("frequency", .number(10...5000, unit: "Hz"), default: 80, "the cut-off (−3 dB)")],
        example: "high-pass:frequency=100", swift: "HighPassFilter(frequency: 100)",
        ffmpeg: { "highpass=f=\(ParameterValue.number($0.number("frequency")))" }
    ) { HighPassFilter(frequency: $0.number("frequency")) }
}
