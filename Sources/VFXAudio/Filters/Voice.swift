import VFXCore
import VFXPipeline
import Foundation
import VFXFilters

/// The time-domain pitch shifter behind `pitch` and `robot`: two read taps glide through a short delay
/// line at `ratio` times the speed the line is written, half a window apart, each faded in and out with a
/// Hann window (sin² of the tap's phase: the two fades always sum to one). Each tap replays the recent signal resampled by `ratio`,
/// so every frequency moves by the ratio while the duration stays the same; a tap jumps back only where
/// its fade is silent. The taps sit on average half a window behind the input: that is the latency.
struct GranularShifter {
    /// The window (grain) length in frames.
    let window: Double
    private let step: Double
    private var phase = 0.5
    private var written = 0
    private let mask: Int
    private let lines: SampleStorage<Float>
    private let channels: Int

    /// A shifter for `ratio` (2 raises an octave) with a `window` of frames, for `channels` channels.
    init(ratio: Double, window: Double, channels: Int) {
        self.window = window
        step = (1 - ratio) / window
        var size = 4
        while Double(size) < window + 4 { size *= 2 }
        mask = size - 1
        lines = SampleStorage(count: size * channels)
        self.channels = channels
    }

    /// The average delay of the taps, in frames.
    var latency: Int { Int((window / 2).rounded()) }

    /// Shifts the first `count` frames of `buffer`'s channels in place.
    mutating func process(_ buffer: AudioBuffer, count: Int) {
        let size = mask + 1
        let startPhase = phase
        let startWritten = written
        for channel in 0..<min(channels, buffer.channelCount) {
            let samples = buffer.channel(channel)
            let line = lines.pointer + channel * size
            var phase = startPhase
            var written = startWritten
            for index in 0..<count {
                line[written & mask] = samples[index]
                var second = phase + 0.5
                if second >= 1 { second -= 1 }
                // sin²(π·phase) and sin²(π·(phase + ½)) = 1 − sin²(π·phase): one cosine per frame.
                let fade = 0.5 - 0.5 * Float(cos(2 * Double.pi * phase))
                samples[index] = fade * tap(line, written: written, phase: phase)
                    + (1 - fade) * tap(line, written: written, phase: second)
                written &+= 1
                phase += step
                if phase >= 1 { phase -= 1 } else if phase < 0 { phase += 1 }
            }
            if channel == min(channels, buffer.channelCount) - 1 {
                self.phase = phase
                self.written = written & mask
            }
        }
    }

    /// The tap at `phase`: the line read `phase · window` frames back (linear interpolation).
    @inline(__always)
    private func tap(_ line: UnsafeMutablePointer<Float>, written: Int, phase: Double) -> Float {
        let position = Double(written) - phase * window
        let base = position.rounded(.down)
        let fraction = Float(position - base)
        let index = Int(base)
        return line[index & mask] + fraction * (line[(index + 1) & mask] - line[index & mask])
    }
}

/// `pitch`: raises or lowers the voice by `semitones` without changing its duration, with a low-latency
/// time-domain granular shifter (50 ms grains, 25 ms latency): suitable for live calls.
///
/// Parameters: `semitones` (−12…12, default 4). Any rate, any channel count.
///
/// ```sh
/// vfx apply voice.wav -o higher.wav --audio-filter pitch:semitones=5
/// ```
/// ```swift
/// let filter = PitchFilter(semitones: 5)
/// ```
public final class PitchFilter: AudioFilter {
    public let semitones: Double
    /// The grain length in seconds (twice the latency).
    public static let windowSeconds = 0.05
    private var shifter: GranularShifter?

    public init(semitones: Double) {
        self.semitones = semitones
    }

    public var id: String { "pitch:semitones=\(ParameterValue.number(semitones))" }
    public var latency: Int { shifter?.latency ?? 0 }

    public func initialize(sampleRate: Int, channels: Int) throws {
        shifter = GranularShifter(ratio: pow(2, semitones / 12), window: PitchFilter.windowSeconds * Double(sampleRate),
                                  channels: channels)
    }

    public func process(_ buffer: AudioBuffer) {
        shifter?.process(buffer, count: buffer.frameCount)
    }

    public func release() { shifter = nil }
}

/// `robot`: a robot voice. The voice is shifted by `pitch-shift` semitones (the granular shifter of
/// `pitch`) and ring-modulated by a sine at `frequency` Hz, which turns every harmonic into a pair of
/// inharmonic ones: the metallic buzz. The modulator's phase runs on across blocks, so block edges never click.
///
/// Parameters: `pitch-shift` (−12…12 semitones, default −3), `frequency` (10…500 Hz, default 50).
///
/// ```sh
/// vfx apply call.mp4 -o robot.mp4 --audio-filter robot:pitch-shift=-5:frequency=40
/// ```
/// ```swift
/// let filter = RobotFilter(pitchShift: -5, frequency: 40)
/// ```
public final class RobotFilter: AudioFilter {
    public let pitchShift: Double
    public let frequency: Double
    private var shifter: GranularShifter?
    /// The modulator as a unit phasor (cos, sin) turned by `step` each frame: no sine per frame.
    private var phasor = SIMD2<Double>(1, 0)
    private var step = SIMD2<Double>(1, 0)

    public init(pitchShift: Double, frequency: Double) {
        self.pitchShift = pitchShift
        self.frequency = frequency
    }

    public var id: String {
        "robot:pitch-shift=\(ParameterValue.number(pitchShift)):frequency=\(ParameterValue.number(frequency))"
    }

    public var latency: Int { shifter?.latency ?? 0 }

    public func initialize(sampleRate: Int, channels: Int) throws {
        guard frequency < Double(sampleRate) / 2 else { throw AudioFilterError.unsupportedRate(filter: id, rate: sampleRate) }
        shifter = GranularShifter(ratio: pow(2, pitchShift / 12), window: PitchFilter.windowSeconds * Double(sampleRate),
                                  channels: channels)
        phasor = SIMD2(1, 0)
        let angle = 2 * Double.pi * frequency / Double(sampleRate)
        step = SIMD2(cos(angle), sin(angle))
    }

    public func process(_ buffer: AudioBuffer) {
        shifter?.process(buffer, count: buffer.frameCount)
        let start = phasor
        for channel in 0..<buffer.channelCount {
            let samples = buffer.channel(channel)
            var phasor = start
            for index in 0..<buffer.frameCount {
                samples[index] *= Float(phasor.y)
                phasor = SIMD2(phasor.x * step.x - phasor.y * step.y, phasor.y * step.x + phasor.x * step.y)
            }
            // Back onto the unit circle once per block (rounding would otherwise drift over hours).
            if channel == buffer.channelCount - 1 { self.phasor = phasor / (phasor.x * phasor.x + phasor.y * phasor.y).squareRoot() }
        }
    }

    public func release() { shifter = nil }
}

extension AudioFilterSpec {
    static let pitch = AudioFilterSpec(
        name: "pitch", summary: "Raises or lowers the pitch without changing the duration; 25 ms latency, for live voice.",
        parameters: [ParameterSpec("semitones", .number(-12...12, unit: "semitones"), default: 4, "the shift (12 = one octave)")],
        example: "pitch:semitones=5", swift: "PitchFilter(semitones: 5)"
    ) { PitchFilter(semitones: $0.number("semitones")) }

    static let robot = AudioFilterSpec(
        name: "robot", summary: "A robot voice: pitch-shifted and ring-modulated, continuous across blocks.",
        parameters: [
            ParameterSpec("pitch-shift", .number(-12...12, unit: "semitones"), default: -3, "the pitch shift before modulation"),
            ParameterSpec("frequency", .number(10...500, unit: "Hz"), default: 50, "the ring modulator's frequency (the buzz)"),
        ],
        example: "robot:pitch-shift=-5:frequency=40", swift: "RobotFilter(pitchShift: -5, frequency: 40)"
    ) { RobotFilter(pitchShift: $0.number("pitch-shift"), frequency: $0.number("frequency")) }
}
