import VFXCore
import VFXPipeline
import Foundation
import Testing
import VFXAudio
import VFXMedia
import VFXTestSupport

/// Real speech and noise from Debian packages (scripts/setup.sh installs them): LibriVox recordings from
/// `pocketsphinx-testdata` (16 kHz, public domain) and ALSA's 48 kHz spoken words and recorded pink noise
/// from `alsa-utils`.
enum AudioFixtures {
    static let librivox = "/usr/share/pocketsphinx/test/data/librivox"
    static let frontCenter = "/usr/share/sounds/alsa/Front_Center.wav"
    static let recordedNoise = "/usr/share/sounds/alsa/Noise.wav"

    /// The LibriVox utterances in order, each followed by 0.6 s of silence (the pauses between sentences
    /// of a talk), resampled to `rate` with libswresample, as one mono signal.
    static func speech(rate: Int = 48_000, utterances: Int = 5) throws -> [Float] {
        let files = try FileManager.default.contentsOfDirectory(atPath: librivox).filter { $0.hasSuffix(".wav") }.sorted()
        var signal: [Float] = []
        for file in files.prefix(utterances) {
            signal += try read("\(librivox)/\(file)", rate: rate)[0]
            signal += Array(repeating: 0, count: rate * 6 / 10)
        }
        return signal
    }

    /// Every channel of `path`'s audio at `rate`.
    static func read(_ path: String, rate: Int? = nil) throws -> [[Float]] {
        let reader = try AudioFileReader(path: path, rate: rate)
        let buffer = AudioBuffer(channels: reader.channelCount, capacity: 4096, sampleRate: reader.rate)
        var channels = Array(repeating: [Float](), count: reader.channelCount)
        while try reader.read(into: buffer) {
            for channel in 0..<reader.channelCount { channels[channel] += buffer.samples(channel) }
        }
        return channels
    }

    /// `signal` run through `filter` in blocks of `block` frames (mono).
    static func run(_ filter: any AudioFilter, on signal: [Float], rate: Int = 48_000, block: Int = 480) throws -> [Float] {
        try filter.initialize(sampleRate: rate, channels: 1)
        defer { filter.release() }
        let buffer = AudioBuffer(channels: 1, capacity: block, sampleRate: rate)
        var output: [Float] = []
        output.reserveCapacity(signal.count)
        var position = 0
        while position < signal.count {
            let count = min(block, signal.count - position)
            buffer.frameCount = count
            for index in 0..<count { buffer.channel(0)[index] = signal[position + index] }
            filter.process(buffer)
            output += buffer.samples(0)
            position += count
        }
        return output
    }

    /// Gaussian white noise with unit variance from a fixed seed (a linear congruential generator and
    /// Box–Muller), so every run mixes the same noise.
    static func whiteNoise(count: Int, seed: UInt64 = 1) -> [Float] {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        return (0..<count).map { _ in Float((-2 * log(uniform())).squareRoot() * cos(2 * Double.pi * uniform())) }
    }

    /// `noise` (looped) scaled so that the power of `speech` over it is `snr` dB, added to `speech`.
    static func mix(_ speech: [Float], _ noise: [Float], snr: Double) -> (mixture: [Float], noise: [Float]) {
        let looped = (0..<speech.count).map { noise[$0 % noise.count] }
        let scale = Float((power(speech) / power(looped) / pow(10, snr / 10)).squareRoot())
        let scaled = looped.map { $0 * scale }
        return (zip(speech, scaled).map { $0 + $1 }, scaled)
    }

    static func power(_ signal: some Collection<Float>) -> Double {
        signal.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(signal.count, 1))
    }

    static func decibels(_ ratio: Double) -> Double { 10 * log10(ratio) }

    /// The lag (frames, −range…range) at which `output` best matches `reference` (cross-correlation peak).
    static func lag(of output: [Float], against reference: [Float], range: Int) -> Int {
        var best = (lag: 0, score: -Double.infinity)
        let count = min(output.count, reference.count)
        for lag in -range...range {
            var score = 0.0
            var index = max(0, -lag)
            while index < count - max(0, lag) {
                score += Double(output[index + lag]) * Double(reference[index])
                index += 4   // every fourth frame: enough for speech, four times faster
            }
            if score > best.score { best = (lag, score) }
        }
        return best.lag
    }

    /// The `vfx` built beside the tests (the same configuration).
    static var vfx: String {
        var folder = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("vfx")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder.deleteLastPathComponent()
        }
        return TestMedia.root.appendingPathComponent(".build/release/vfx").path
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
