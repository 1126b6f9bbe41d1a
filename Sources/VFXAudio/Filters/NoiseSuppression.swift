import VFXCore
import VFXPipeline
import Foundation
import VFXFilters

/// `noise-suppression`: removes background noise (fans, hiss, hum, traffic, keyboards) from speech, with one
/// of two engines:
/// - `rnnoise` (default): Xiph's RNNoise, a recurrent network trained on speech and noise (BSD-3-Clause,
///   loaded at run time from `librnnoise.so`, see `RNNoiseSuppressor`); 48 kHz, 30 ms latency. The better
///   quality (docs/audio.md). VideoFX runs the network on the library's 8-bit weights and most of the frame
///   itself (≥ 100× real time on one core); the scores are the library's own run's.
/// - `rnnoise-library`: the same network, every frame run by the library's `rnnoise_process_frame` (the
///   reference: output within −50 dB of `rnnoise`'s, about 30× real time).
/// - `spectral`: VideoFX's own OM-LSA suppressor with MCRA noise tracking (`SpectralNoiseSuppressor`),
///   any rate up to 48 kHz, 21 ms latency, ≥ 150× real time; removes less noise and keeps less speech.
///
/// Parameters: `level` (0…60 dB, default 40): the most the noise is lowered; `engine` (`rnnoise`,
/// `rnnoise-library` or `spectral`, default `rnnoise`).
///
/// ```sh
/// vfx apply noisy-call.wav -o clean.wav --audio-filter noise-suppression:level=40:engine=rnnoise
/// ```
/// ```swift
/// let filter = NoiseSuppressionFilter(level: 40, engine: .rnnoise)
/// ```
public final class NoiseSuppressionFilter: AudioFilter {
    public enum Engine: String, Sendable, CaseIterable {
        case rnnoise
        case rnnoiseLibrary = "rnnoise-library"
        case spectral
    }

    public let level: Float
    public let engine: Engine
    private let implementation: any AudioFilter

    public init(level: Float, engine: Engine = .rnnoise) {
        self.level = level
        self.engine = engine
        implementation = switch engine {
        case .rnnoise: RNNoiseSuppressor(level: level)
        case .rnnoiseLibrary: RNNoiseSuppressor(level: level, runner: .library(.quantized))
        case .spectral: SpectralNoiseSuppressor(level: level)
        }
    }

    public var id: String { "noise-suppression:level=\(ParameterValue.number(Double(level))):engine=\(engine.rawValue)" }
    public var latency: Int { implementation.latency }
    public var preferredBlockSize: Int? { implementation.preferredBlockSize }
    public func sampleRate(near rate: Int) -> Int { implementation.sampleRate(near: rate) }
    public func initialize(sampleRate: Int, channels: Int) throws { try implementation.initialize(sampleRate: sampleRate, channels: channels) }
    public func process(_ buffer: AudioBuffer) { implementation.process(buffer) }
    public func release() { implementation.release() }
}

/// The `spectral` engine of `noise-suppression`: removes steady and slowly changing background noise
/// in the short-time spectrum.
///
/// The signal is cut into frames of about 20 ms (a power of two: 1024 at 48 kHz), half-overlapped, with
/// square-root Hann windows for analysis and synthesis. Per frequency bin:
/// - the noise power is tracked by minima-controlled recursive averaging (MCRA: the smoothed power is
///   compared with its minimum over the last second; where it stays near the minimum, speech is taken to
///   be absent and the noise estimate follows the power);
/// - the a priori SNR comes from the decision-directed rule, and the gain is the optimally-modified
///   log-spectral amplitude estimator (OM-LSA): the MMSE log-spectral amplitude gain where speech is
///   likely, falling to the floor set by `level` where it is not (the speech presence probability is
///   computed from the a priori and a posteriori SNRs).
///
/// The latency is one frame (1024 frames, 21.3 ms, at 48 kHz). Streams above 48 kHz are processed at
/// 48 kHz (files are resampled and back), below 8 kHz at 8 kHz. Channels are processed independently.
///
/// Parameters: `level` (0…60 dB, default 40): the most a bin is attenuated (the gain floor). The noise
/// reduction measured in speech pauses is lower (about 20 dB at the default), as the estimator lets
/// noise peaks through in part.
///
/// ```swift
/// let filter = NoiseSuppressionFilter(level: 40, engine: .spectral)
/// ```
final class SpectralNoiseSuppressor: AudioFilter {
    let level: Float
    private var frame = 1024
    private var hop = 512
    private var channels: [Channel] = []
    private var fft: RealFFT?
    private var window: SampleStorage<Float>?
    private var scratch: SampleStorage<Float>?
    private var tuning = Tuning(hopSeconds: 0.01, level: 40)

    init(level: Float) {
        self.level = level
    }

    var id: String { "noise-suppression:level=\(ParameterValue.number(Double(level))):engine=spectral" }
    var latency: Int { frame }
    var preferredBlockSize: Int? { hop }

    func sampleRate(near rate: Int) -> Int { min(max(rate, 8000), 48_000) }

    func initialize(sampleRate: Int, channels count: Int) throws {
        guard self.sampleRate(near: sampleRate) == sampleRate else {
            throw AudioFilterError.unsupportedRate(filter: id, rate: sampleRate)
        }
        // The power of two nearest 20 ms.
        let target = 0.02 * Double(sampleRate)
        frame = 1 << Int(log2(target).rounded())
        hop = frame / 2
        let fft = RealFFT(size: frame)
        self.fft = fft
        let window = SampleStorage<Float>(count: frame)
        for index in 0..<frame {
            // √(periodic Hann): analysis × synthesis sums to one at half overlap.
            window[index] = Float(sin(Double.pi * Double(index) / Double(frame)))
        }
        self.window = window
        scratch = SampleStorage(count: frame + 2 * (hop + 1))
        tuning = Tuning(hopSeconds: Double(hop) / Double(sampleRate), level: level)
        channels = (0..<max(count, 1)).map { _ in Channel(frame: frame) }
    }

    func process(_ buffer: AudioBuffer) {
        guard let fft, let window, let scratch else { return }
        let hop = self.hop, frame = self.frame
        for index in 0..<min(buffer.channelCount, channels.count) {
            let channel = channels[index]
            let samples = buffer.channel(index)
            var filled = channel.filled
            for position in 0..<buffer.frameCount {
                let input = samples[position]
                samples[position] = channel.ready[filled]
                channel.input[frame - hop + filled] = input
                filled += 1
                if filled == hop {
                    suppress(channel, fft: fft, window: window, scratch: scratch)
                    filled = 0
                }
            }
            channel.filled = filled
        }
    }

    func release() {
        channels = []
        fft = nil
        window = nil
        scratch = nil
    }

    /// One frame: analysis, noise tracking, gains, synthesis; then the input slides by a hop and the
    /// finished hop of output moves to `ready`.
    private func suppress(_ channel: Channel, fft: RealFFT, window: SampleStorage<Float>, scratch: SampleStorage<Float>) {
        let frame = self.frame, hop = self.hop, bins = hop + 1
        let time = scratch.pointer
        let real = scratch.pointer + frame
        let imaginary = real + bins
        let input = channel.input.pointer
        for index in 0..<frame { time[index] = input[index] * window[index] }
        fft.forward(time, real: real, imaginary: imaginary)
        let gains = channel.gains.pointer
        channel.estimate(real: real, imaginary: imaginary, bins: bins, tuning: tuning, gains: gains)
        for bin in 0..<bins {
            real[bin] *= gains[bin]
            imaginary[bin] *= gains[bin]
        }
        fft.inverse(real: real, imaginary: imaginary, into: time)
        let overlap = channel.overlap.pointer
        for index in 0..<frame { overlap[index] += time[index] * window[index] }
        let ready = channel.ready.pointer
        for index in 0..<hop { ready[index] = overlap[index] }
        overlap.update(from: overlap + hop, count: frame - hop)
        (overlap + frame - hop).update(repeating: 0, count: hop)
        input.update(from: input + hop, count: frame - hop)
    }

    /// The estimator's constants for one hop length.
    struct Tuning {
        /// Smoothing of the power over time (MCRA's αs), per hop.
        let powerSmoothing: Float
        /// Smoothing of the speech presence indicator (αp).
        let presenceSmoothing: Float
        /// The noise estimate's smoothing where speech is absent (αd).
        let noiseSmoothing: Float
        /// The smoothed power counts as speech above this multiple of its minimum (δ).
        let presenceThreshold: Float = 5
        /// Hops in one minimum-search window (about one second).
        let minimumWindow: Int
        /// The decision-directed weight of the previous frame's estimate.
        let decisionDirected: Float = 0.97
        /// The lowest a priori SNR (−30 dB).
        let minimumSNR: Float = 0.001
        /// The gain floor, 10^(−level/20).
        let floor: Float
        /// q / (1 − q) for the a priori speech absence probability q = 0.2 (a lower q keeps more of weak
        /// speech: measured on LibriVox speech, q = 0.5 lowered STOI by 0.01–0.03).
        let absenceOdds: Float = 0.25

        init(hopSeconds: Double, level: Float) {
            // Each constant is given for 10 ms hops and converted to the actual hop.
            func per(_ value: Double) -> Float { Float(pow(value, hopSeconds / 0.01)) }
            powerSmoothing = per(0.8)
            presenceSmoothing = per(0.2)
            noiseSmoothing = per(0.95)
            minimumWindow = max(8, Int((1.0 / hopSeconds).rounded()))
            floor = powf(10, -level / 20)
        }
    }

    /// One channel's buffers and estimator state, allocated at `initialize`.
    final class Channel {
        let input: SampleStorage<Float>
        let overlap: SampleStorage<Float>
        let ready: SampleStorage<Float>
        let gains: SampleStorage<Float>
        /// Per bin: smoothed power, its running minimum, the minimum of the current window, the speech
        /// presence estimate, the noise power, and the last frame's clean-speech power estimate.
        let smoothed, minimum, windowMinimum, presence, noise, previous: SampleStorage<Float>
        var filled = 0
        var frames = 0

        init(frame: Int) {
            let bins = frame / 2 + 1
            input = SampleStorage(count: frame)
            overlap = SampleStorage(count: frame)
            ready = SampleStorage(count: frame / 2)
            gains = SampleStorage(count: bins)
            smoothed = SampleStorage(count: bins)
            minimum = SampleStorage(count: bins)
            windowMinimum = SampleStorage(count: bins)
            presence = SampleStorage(count: bins)
            noise = SampleStorage(count: bins)
            previous = SampleStorage(count: bins)
        }

        /// Updates the noise estimate from this frame's spectrum and writes each bin's gain.
        func estimate(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>, bins: Int, tuning: Tuning,
                      gains: UnsafeMutablePointer<Float>) {
            let first = frames == 0
            frames += 1
            let newWindow = frames % tuning.minimumWindow == 0
            let tiny: Float = 1e-12
            for bin in 0..<bins {
                let power = real[bin] * real[bin] + imaginary[bin] * imaginary[bin] + tiny
                // Power smoothed across three neighbouring bins, then over time.
                let left = bin > 0 ? real[bin - 1] * real[bin - 1] + imaginary[bin - 1] * imaginary[bin - 1] : power
                let right = bin < bins - 1 ? real[bin + 1] * real[bin + 1] + imaginary[bin + 1] * imaginary[bin + 1] : power
                let local = 0.25 * left + 0.5 * power + 0.25 * right + tiny
                if first {
                    smoothed[bin] = local
                    minimum[bin] = local
                    windowMinimum[bin] = local
                    noise[bin] = power
                    previous[bin] = 0
                }
                var smooth = smoothed[bin]
                smooth = tuning.powerSmoothing * smooth + (1 - tuning.powerSmoothing) * local
                smoothed[bin] = smooth
                if newWindow {
                    minimum[bin] = min(windowMinimum[bin], smooth)
                    windowMinimum[bin] = smooth
                } else {
                    minimum[bin] = min(minimum[bin], smooth)
                    windowMinimum[bin] = min(windowMinimum[bin], smooth)
                }
                let speech: Float = smooth > tuning.presenceThreshold * minimum[bin] ? 1 : 0
                let likely = tuning.presenceSmoothing * presence[bin] + (1 - tuning.presenceSmoothing) * speech
                presence[bin] = likely
                let alpha = tuning.noiseSmoothing + (1 - tuning.noiseSmoothing) * likely
                let noisePower = alpha * noise[bin] + (1 - alpha) * power
                noise[bin] = noisePower

                // OM-LSA gain.
                let posterior = min(power / noisePower, 1e4)
                let prior = max(tuning.decisionDirected * previous[bin] / noisePower
                                + (1 - tuning.decisionDirected) * max(posterior - 1, 0), tuning.minimumSNR)
                let v = max(prior * posterior / (1 + prior), 1e-6)
                let speechGain = min(prior / (1 + prior) * expf(0.5 * exponentialIntegral(v)), 1)
                let presenceProbability = 1 / (1 + tuning.absenceOdds * (1 + prior) * expf(-v))
                previous[bin] = speechGain * speechGain * power
                let gain = expf(presenceProbability * logf(max(speechGain, 1e-6))
                                + (1 - presenceProbability) * logf(tuning.floor))
                gains[bin] = max(gain, tuning.floor)
            }
        }
    }
}

/// The exponential integral E1(x) = ∫ₓ^∞ e^(−t)/t dt for x > 0, from Abramowitz and Stegun's rational
/// approximations 5.1.53 (x ≤ 1, error < 2·10⁻⁷) and 5.1.56 (x > 1, relative error < 5·10⁻⁵).
@inline(__always)
func exponentialIntegral(_ x: Float) -> Float {
    if x <= 1 {
        let polynomial = -0.577_215_66 + x * (0.999_991_93 + x * (-0.249_910_55 + x * (0.055_199_68
                         + x * (-0.009_760_04 + x * 0.001_078_57))))
        return polynomial - logf(x)
    }
    let numerator = x * x + 2.334_733 * x + 0.250_621
    let denominator = x * x + 3.330_657 * x + 1.681_534
    return numerator / (denominator * x) * expf(-x)
}

extension AudioFilterSpec {
    static let noiseSuppression = AudioFilterSpec(
        name: "noise-suppression",
        summary: "Removes background noise from speech: RNNoise (default, 30 ms latency) or VideoFX's own spectral suppressor (21 ms).",
        parameters: [
            ParameterSpec("level", .number(0...60, unit: "dB"), default: 40, "the most the noise is lowered"),
            ParameterSpec("engine", .choice(NoiseSuppressionFilter.Engine.allCases.map(\.rawValue)), default: .text("rnnoise"),
                          "rnnoise: best quality, RNNoise's network run by VideoFX; rnnoise-library: the same run by librnnoise alone (slower); spectral: own OM-LSA suppressor"),
        ],
        example: "noise-suppression:level=40:engine=rnnoise", swift: "NoiseSuppressionFilter(level: 40, engine: .rnnoise)",
        ffmpeg: { _ in "afftdn" }
    ) { NoiseSuppressionFilter(level: $0.float("level"), engine: NoiseSuppressionFilter.Engine(rawValue: $0.text("engine")) ?? .rnnoise) }
}
