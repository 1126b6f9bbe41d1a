import VFXCore
import VFXPipeline
import Foundation
import VFXFilters

/// `gain`: multiplies every sample by a fixed factor given in decibels.
///
/// Parameters: `db` (−60…40 dB, default 0). Any rate, any channel count, no latency.
///
/// ```sh
/// vfx apply talk.mp4 -o quieter.mp4 --audio-filter gain:db=-6
/// ```
/// ```swift
/// let filter = GainFilter(db: -6)
/// ```
public final class GainFilter: AudioFilter {
    public let db: Float
    private let factor: Float

    public init(db: Float) {
        self.db = db
        factor = powf(10, db / 20)
    }

    public var id: String { "gain:db=\(ParameterValue.number(Double(db)))" }
    public var latency: Int { 0 }

    public func initialize(sampleRate: Int, channels: Int) throws {}

    public func process(_ buffer: AudioBuffer) {
        let count = buffer.frameCount
        for channel in 0..<buffer.channelCount {
            let samples = buffer.channel(channel)
            for index in 0..<count { samples[index] *= factor }
        }
    }
}

/// `agc`: automatic gain control. Measures the level (mean square over about 200 ms, all channels
/// together) and moves one gain so that the level reaches `target`, up to `max-gain`: down with the
/// `attack` time when the signal gets louder, up with the `release` time when it gets quieter. Below
/// −60 dBFS (silence, room noise) the gain holds instead of rising.
///
/// Parameters: `target` (−40…−3 dBFS, default −20), `attack` (1…1000 ms, default 20), `release`
/// (10…5000 ms, default 400), `max-gain` (0…40 dB, default 24). No latency.
///
/// ```sh
/// vfx apply lecture.wav -o even.wav --audio-filter agc:target=-18
/// ```
/// ```swift
/// let filter = AGCFilter(target: -18, attack: 20, release: 400, maxGain: 24)
/// ```
public final class AGCFilter: AudioFilter {
    public let target: Float
    public let attack: Float
    public let release: Float
    public let maxGain: Float
    private var attackCoefficient: Float = 0
    private var releaseCoefficient: Float = 0
    private var averaging: Float = 0
    private var level: Float = 0
    private var gain: Float = 1
    private let targetPower: Float
    private let gate: Float = 1e-6          // −60 dBFS mean square

    public init(target: Float, attack: Float, release: Float, maxGain: Float) {
        self.target = target
        self.attack = attack
        self.release = release
        self.maxGain = maxGain
        targetPower = powf(10, target / 10)
    }

    public var id: String {
        "agc:target=\(ParameterValue.number(Double(target))):attack=\(ParameterValue.number(Double(attack)))"
            + ":release=\(ParameterValue.number(Double(release))):max-gain=\(ParameterValue.number(Double(maxGain)))"
    }

    public var latency: Int { 0 }

    public func initialize(sampleRate: Int, channels: Int) throws {
        let rate = Float(sampleRate)
        attackCoefficient = 1 - expf(-1 / (attack * 0.001 * rate))
        releaseCoefficient = 1 - expf(-1 / (release * 0.001 * rate))
        averaging = 1 - expf(-1 / (0.2 * rate))
        level = 0
        gain = 1
    }

    public func process(_ buffer: AudioBuffer) {
        let channels = buffer.channelCount
        let scale = 1 / Float(channels)
        let ceiling = powf(10, maxGain / 20)
        for index in 0..<buffer.frameCount {
            var power: Float = 0
            for channel in 0..<channels {
                let sample = buffer.channel(channel)[index]
                power += sample * sample
            }
            level += averaging * (power * scale - level)
            if level > gate {
                let wanted = min((targetPower / level).squareRoot(), ceiling)
                gain += (wanted < gain ? attackCoefficient : releaseCoefficient) * (wanted - gain)
            }
            for channel in 0..<channels { buffer.channel(channel)[index] *= gain }
        }
    }
}

extension AudioFilterSpec {
    static let gain = AudioFilterSpec(
        name: "gain", summary: "Changes the level by a fixed number of decibels.",
        parameters: [ParameterSpec("db", .number(-60...40, unit: "dB"), default: 0, "the level change")],
        example: "gain:db=-6", swift: "GainFilter(db: -6)",
        ffmpeg: { "volume=\(ParameterValue.number($0.number("db")))dB" }
    ) { GainFilter(db: $0.float("db")) }

    static let agc = AudioFilterSpec(
        name: "agc",
        summary: "Automatic gain control: brings the level toward a target, following it with an attack and a release time.",
        parameters: [
            ParameterSpec("target", .number(-40...(-3), unit: "dBFS"), default: -20, "the level to reach (mean square)"),
            ParameterSpec("attack", .number(1...1000, unit: "ms"), default: 20, "how fast the level follows a louder signal"),
            ParameterSpec("release", .number(10...5000, unit: "ms"), default: 400, "how fast the level follows a quieter signal"),
            ParameterSpec("max-gain", .number(0...40, unit: "dB"), default: 24, "the most the gain may raise the level"),
        ],
        example: "agc:target=-18", swift: "AGCFilter(target: -18, attack: 20, release: 400, maxGain: 24)",
        ffmpeg: { _ in "dynaudnorm" }
    ) { AGCFilter(target: $0.float("target"), attack: $0.float("attack"), release: $0.float("release"), maxGain: $0.float("max-gain")) }
}
