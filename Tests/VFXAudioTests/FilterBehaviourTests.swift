import Foundation
import Testing
import VFXAudio
import VFXTestSupport

/// Each filter against a formula or an independent implementation, on real speech.
@Suite struct FilterBehaviourTests {
    /// The same output whatever the block size: a filter that buffers internally, keeps phases or state
    /// across blocks, must not depend on where the blocks are cut (no clicks at block edges). The
    /// arithmetic is the same per sample, so the outputs are equal to float precision (1e-6).
    @Test(arguments: AudioFilterRegistry.all.map(\.example) + ["noise-suppression:engine=spectral"])
    func outputDoesNotDependOnTheBlockSize(chain: String) throws {
        let speech = Array(try AudioFixtures.read(AudioFixtures.frontCenter, rate: 48_000)[0].prefix(48_000))
        let reference = try AudioFixtures.run(try AudioChain(parsing: chain).makeFilter(), on: speech, block: 4096)
        for block in [1, 17, 480] {
            let output = try AudioFixtures.run(try AudioChain(parsing: chain).makeFilter(), on: speech, block: block)
            let difference = zip(output, reference).map { abs($0 - $1) }.max() ?? 0
            #expect(difference <= 1e-6, "\(chain), blocks of \(block): differs by \(difference)")
        }
    }

    /// The lifecycle: initialize → process → release, then initialize again on the same instance starts
    /// from a clean state (a filter swapped out and back in mid-call behaves as a new one).
    @Test(arguments: AudioFilterRegistry.all.map(\.example) + ["noise-suppression:engine=spectral"])
    func reinitializingStartsAfresh(chain: String) throws {
        let speech = Array(try AudioFixtures.read(AudioFixtures.frontCenter, rate: 48_000)[0].prefix(24_000))
        let filter = try AudioChain(parsing: chain).makeFilter()
        let first = try AudioFixtures.run(filter, on: speech)
        let second = try AudioFixtures.run(filter, on: speech)
        #expect(first == second, "\(chain)")
    }

    /// FFmpeg's `highpass` is the same cookbook biquad: on the same speech the outputs agree within 2e-4
    /// (−74 dBFS): FFmpeg runs float samples through the biquad in float arithmetic and takes Q = 0.707
    /// where VideoFX takes 1/√2 in double; both differences stay near 1e-4.
    @Test func highPassMatchesFFmpeg() throws {
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let reference = folder.appendingPathComponent("ffmpeg.wav").path
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", AudioFixtures.frontCenter, "-af", "highpass=f=300",
                                                            "-c:a", "pcm_f32le", reference])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try AudioFixtures.read(reference)[0]
        let speech = try AudioFixtures.read(AudioFixtures.frontCenter)[0]
        let output = try AudioFixtures.run(HighPassFilter(frequency: 300), on: speech)
        #expect(output.count == expected.count)
        let difference = zip(output, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 2e-4, "largest difference \(difference)")
    }

    /// y[n] = x[n] + decay · y[n − delay]: an impulse comes back every `delay` with decay^k.
    @Test func echoRepeatsAnImpulseWithTheDecay() throws {
        var impulse = Array(repeating: Float(0), count: 48_000)
        impulse[0] = 1
        let output = try AudioFixtures.run(EchoFilter(delay: 100, decay: 0.5), on: impulse, block: 333)
        for k in 0..<10 {
            let expected = pow(Float(0.5), Float(k))
            #expect(abs(output[k * 4800] - expected) < 1e-6, "repeat \(k)")
        }
        let others = output.enumerated().filter { $0.offset % 4800 != 0 }.map { abs($0.element) }.max() ?? 1
        #expect(others == 0)
    }

    /// gain:db=-6 scales by 10^(−6/20) exactly.
    @Test func gainScalesByTheDecibels() throws {
        let speech = try AudioFixtures.read(AudioFixtures.frontCenter)[0]
        let output = try AudioFixtures.run(GainFilter(db: -6), on: speech)
        let change = AudioFixtures.decibels(AudioFixtures.power(output) / AudioFixtures.power(speech))
        #expect(abs(change + 6) < 0.001)
    }

    /// The same speech at −40 and −10 dBFS comes out of `agc:target=-20` within 3 dB of −20 dBFS over its
    /// active part (after the first second, while the gain settles): the window is the level the control
    /// loop aims for, measured on the output.
    @Test(arguments: [-40.0, -10.0])
    func agcBringsTheLevelToTheTarget(inputLevel: Double) throws {
        let speech = try AudioFixtures.speech(utterances: 3)
        let scale = Float((pow(10, inputLevel / 10) / AudioFixtures.power(speech)).squareRoot())
        let output = try AudioFixtures.run(AGCFilter(target: -20, attack: 20, release: 400, maxGain: 30), on: speech.map { $0 * scale })
        // Active frames: 20 ms where the input speech is within 15 dB of its mean power.
        let size = 960
        let mean = AudioFixtures.power(speech)
        var active = 0.0, count = 0
        for start in stride(from: 48_000, to: speech.count - size, by: size)
        where AudioFixtures.power(speech[start..<start + size]) > mean * 0.03 {
            active += AudioFixtures.power(output[start..<start + size])
            count += 1
        }
        let level = AudioFixtures.decibels(active / Double(count))
        #expect(abs(level + 20) < 3, "active speech at \(level) dBFS")
    }

    /// pitch:semitones=±5 on real speech: the fundamental frequency (autocorrelation, voiced 40 ms frames,
    /// output frames taken `latency` later) moves by 2^(±5/12) within 25 cents (median over frames); the
    /// latency is at most 30 ms.
    @Test(arguments: [5.0, -5.0])
    func pitchMovesTheFundamentalBySemitones(semitones: Double) throws {
        let speech = try AudioFixtures.speech(utterances: 2)
        let filter = PitchFilter(semitones: semitones)
        let output = try AudioFixtures.run(filter, on: speech)
        try filter.initialize(sampleRate: 48_000, channels: 1)
        let latency = filter.latency
        #expect(Double(latency) / 48 <= 30)
        var ratios: [Double] = []
        for start in stride(from: 0, to: speech.count - 4096 - latency, by: 1920) {
            guard let before = fundamental(speech, at: start), let after = fundamental(output, at: start + latency) else { continue }
            ratios.append(after / before)
        }
        #expect(ratios.count > 50, "\(ratios.count) voiced frames")
        let median = ratios.sorted()[ratios.count / 2]
        let cents = 1200 * log2(median / pow(2, semitones / 12))
        #expect(abs(cents) < 25, "median ratio \(median): \(cents) cents off")
    }

    /// The fundamental of 40 ms at `start` (70–400 Hz), nil when the frame is not clearly voiced
    /// (normalized autocorrelation peak below 0.6).
    private func fundamental(_ signal: [Float], at start: Int) -> Double? {
        let size = 1920
        let frame = signal[start..<start + size + 700].map(Double.init)
        let energy = frame.prefix(size).reduce(0) { $0 + $1 * $1 }
        guard energy > 1e-4 else { return nil }
        var correlation = [Double](repeating: 0, count: 700)
        for lag in 120..<690 {
            var sum = 0.0, shifted = 0.0
            for index in 0..<size {
                sum += frame[index] * frame[index + lag]
                shifted += frame[index + lag] * frame[index + lag]
            }
            correlation[lag] = sum / (energy * shifted).squareRoot()
        }
        guard let peak = (121..<689).max(by: { correlation[$0] < correlation[$1] }), correlation[peak] > 0.6 else { return nil }
        let (a, b, c) = (correlation[peak - 1], correlation[peak], correlation[peak + 1])
        let offset = (a - c) / (2 * (a - 2 * b + c))
        return 48_000 / (Double(peak) + (offset.isFinite ? offset : 0))
    }
}
