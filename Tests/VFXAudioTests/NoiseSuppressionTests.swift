import Foundation
import Testing
@testable import VFXAudio
import VFXTestSupport

/// `noise-suppression` on LibriVox speech mixed with noise at a known SNR (48 kHz), measured against the
/// clean speech: the noise left in the pauses between sentences, the level of the speech, the alignment.
@Suite struct NoiseSuppressionTests {
    struct Measured {
        let reduction: Double
        let speechLevel: Double
        let lag: Int
    }

    /// Runs the filter (default level) on speech + `noise` at `snr` and measures it in 20 ms frames: pauses
    /// are frames where the clean speech is 25 dB below its mean power, active frames within 10 dB of it.
    /// The output is shifted back by the reported latency before measuring, as files are.
    static func measure(noise: [Float], snr: Double, engine: NoiseSuppressionFilter.Engine) throws -> Measured {
        let speech = try AudioFixtures.speech(utterances: 3)
        let mixed = AudioFixtures.mix(speech, noise, snr: snr)
        let filter = NoiseSuppressionFilter(level: 40, engine: engine)
        try filter.initialize(sampleRate: 48_000, channels: 1)
        let latency = filter.latency
        filter.release()
        let raw = try AudioFixtures.run(filter, on: mixed.mixture + Array(repeating: 0, count: latency))
        let output = Array(raw.dropFirst(latency))
        let size = 960, mean = AudioFixtures.power(speech)
        var noiseIn = 0.0, noiseOut = 0.0, speechIn = 0.0, speechOut = 0.0
        for start in stride(from: 0, to: speech.count - size, by: size) {
            let range = start..<start + size
            let clean = AudioFixtures.power(speech[range])
            if clean < mean * pow(10, -2.5) {
                noiseIn += AudioFixtures.power(mixed.mixture[range])
                noiseOut += AudioFixtures.power(output[range])
            } else if clean > mean * 0.1 {
                speechIn += clean
                speechOut += AudioFixtures.power(output[range])
            }
        }
        return Measured(reduction: AudioFixtures.decibels(noiseIn / noiseOut), speechLevel: AudioFixtures.decibels(speechOut / speechIn),
                        lag: AudioFixtures.lag(of: output, against: speech, range: 480))
    }

    /// The default engine (RNNoise) on white noise and pink noise (the recorded ALSA test noise, looped) at
    /// 0 and 10 dB SNR: at least 20 dB less noise in the pauses, the speech within 3 dB, the output aligned
    /// within 2 ms (96 frames) once the reported latency is removed. (All nine cases of the goal, with
    /// generated pink noise too, are in docs/audio.md, from scripts/reference/measure_noise_suppression.sh.)
    @Test(arguments: [0.0, 10.0])
    func rnnoiseMeetsTheGoals(snr: Double) throws {
        let recorded = try AudioFixtures.read(AudioFixtures.recordedNoise, rate: 48_000)[0]
        for (name, noise) in [("white", AudioFixtures.whiteNoise(count: 48_000 * 30)), ("recorded pink", recorded)] {
            let result = try Self.measure(noise: noise, snr: snr, engine: .rnnoise)
            #expect(result.reduction >= 20, "\(name): noise lowered by \(result.reduction) dB")
            #expect(abs(result.speechLevel) <= 3, "\(name): speech changed by \(result.speechLevel) dB")
            #expect(abs(result.lag) <= 96, "\(name): lag \(result.lag) frames")
        }
    }

    /// The RNNoise engine runs the library's 8-bit weights (a model rebuilt from its weight list): its output
    /// on speech + white noise at 5 dB SNR is the library's own float model's within −30 dB (the power of
    /// the difference against the power of the float output; measured −33 dB), so the rebuilt model is the
    /// same network, differing by the weights' rounding only.
    @Test func quantizedWeightsMatchTheFloatModel() throws {
        let speech = try AudioFixtures.speech(utterances: 2)
        let mixed = AudioFixtures.mix(speech, AudioFixtures.whiteNoise(count: speech.count), snr: 5).mixture
        let quantized = try AudioFixtures.run(RNNoiseSuppressor(level: 60, runner: .library(.quantized)), on: mixed)
        let float = try AudioFixtures.run(RNNoiseSuppressor(level: 60, runner: .library(.float)), on: mixed)
        let difference = zip(quantized, float).map { $0 - $1 }
        let ratio = AudioFixtures.decibels(AudioFixtures.power(difference) / AudioFixtures.power(float))
        #expect(ratio <= -30, "the 8-bit model's output differs by \(ratio) dB")
        #expect(ratio > -200, "the two models gave identical output: the 8-bit one was not used")
    }

    /// The spectral engine on the same material. Measured (docs/audio.md): 20 dB in the pauses on white
    /// noise, 18.7 dB on the recorded noise, speech −0.5…−4 dB; the test holds those (≥ 19.5 and ≥ 18 dB,
    /// speech within 3 dB at 5 and 10 dB SNR) so a regression shows.
    @Test(arguments: [5.0, 10.0])
    func spectralEngineHoldsItsMeasuredQuality(snr: Double) throws {
        let recorded = try AudioFixtures.read(AudioFixtures.recordedNoise, rate: 48_000)[0]
        for (name, noise, floor) in [("white", AudioFixtures.whiteNoise(count: 48_000 * 30), 19.5), ("recorded pink", recorded, 18.0)] {
            let result = try Self.measure(noise: noise, snr: snr, engine: .spectral)
            #expect(result.reduction >= floor, "\(name): noise lowered by \(result.reduction) dB")
            #expect(abs(result.speechLevel) <= 3, "\(name): speech changed by \(result.speechLevel) dB")
            #expect(abs(result.lag) <= 96, "\(name): lag \(result.lag) frames")
        }
    }

    /// Wide-band PESQ and STOI (the reference implementations from PyPI, in .build/venv-audio, run by
    /// scripts/reference/speech_quality.py) on speech + pink noise at 0 dB through `vfx apply` with the
    /// default engine: PESQ rises by at least 0.15 and STOI does not fall.
    @Test func raisesPESQAndKeepsSTOI() throws {
        let python = TestMedia.root.appendingPathComponent(".build/venv-audio/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("no .build/venv-audio: run scripts/reference/setup-venvs.sh")
            return
        }
        let script = TestMedia.root.appendingPathComponent("scripts/reference/speech_quality.py").path
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clean = folder.appendingPathComponent("clean.wav").path
        let noisy = folder.appendingPathComponent("noisy.wav").path
        let enhanced = folder.appendingPathComponent("enhanced.wav").path
        let files = try FileManager.default.contentsOfDirectory(atPath: AudioFixtures.librivox).filter { $0.hasSuffix(".wav") }.sorted()
        let list = folder.appendingPathComponent("list.txt").path
        try files.prefix(3).map { "file '\(AudioFixtures.librivox)/\($0)'" }.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let steps: [(String, [String])] = [
            ("/usr/bin/ffmpeg", ["-v", "error", "-f", "concat", "-safe", "0", "-i", list, "-ar", "48000", "-c:a", "pcm_f32le", clean]),
            (python, [script, "mix", clean, "pink", "0", noisy]),
            (AudioFixtures.vfx, ["apply", noisy, "-o", enhanced, "--audio-filter", "noise-suppression", "--quiet"]),
        ]
        for (program, arguments) in steps {
            let result = try TestProcess.run(program, arguments)
            #expect(result.status == 0, "\(program): \(result.stderr)")
        }
        let scored = try TestProcess.run(python, [script, "score", clean, noisy, enhanced])
        let json = try #require(try JSONSerialization.jsonObject(with: scored.stdout) as? [String: Double], "\(scored.stderr)")
        let pesqGain = (json["pesq_enhanced"] ?? 0) - (json["pesq_noisy"] ?? 0)
        let stoiChange = (json["stoi_enhanced"] ?? 0) - (json["stoi_noisy"] ?? 0)
        #expect(pesqGain >= 0.15, "PESQ \(json)")
        #expect(stoiChange >= 0, "STOI \(json)")
        #expect(abs(json["alignment_ms"] ?? 99) <= 2)
    }
}
