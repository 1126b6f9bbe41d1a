import Foundation
import Testing
import VFXTestSupport

/// `vfx live` with audio, and changes that keep the stages they do not touch, checked from outside.
@Suite(.serialized) struct LiveAudioTests {
    /// The 5.3 s clip with 5.1 AAC audio (scaled to 320x180) played live into an mp4, its audio through `gain:db=-6`: the file
    /// has the video and an AAC track; decoded, the audio equals FFmpeg's `volume=-6dB` of the source's audio
    /// at lag 0 (SNR ≥ 20 dB: both are AAC-encoded; measured 35–39 dB) and is at least 15 dB
    /// worse 10 ms either way (so the test sees a sync error of 10 ms), and the audio lasts as long as the
    /// video (within one AAC frame and one video frame).
    @Test func audioGoesThroughItsChainInSync() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The clip at 320x180 (its audio copied as it is), so that encoding the video keeps up and no frame is dropped.
        let clip = folder.appendingPathComponent("small.mp4").path
        try CommandLineRun.ffmpeg(["-i", CommandLineRun.media("bigbuckbunny.mp4"), "-vf", "scale=320:180", "-c:v", "libx264",
                                   "-preset", "ultrafast", "-c:a", "copy", clip])
        let output = folder.appendingPathComponent("live.mp4").path
        let result = try CommandLineRun.vfx(["live", clip, "-o", output, "--filter", "sepia", "--audio-filter", "gain:db=-6"])
        #expect(result.status == 0, "\(result.stderr)")
        let streams = try CommandLineRun.probe(output)
        let video = try #require(streams["video"]), audio = try #require(streams["audio"])
        #expect(audio["codec_name"] == "aac" && video["codec_name"] == "h264")
        let videoSeconds = try #require(Double(video["duration"] ?? "")), audioSeconds = try #require(Double(audio["duration"] ?? ""))
        #expect(abs(audioSeconds - videoSeconds) <= 1024.0 / 48_000 + 1.0 / 25, "audio \(audioSeconds) s, video \(videoSeconds) s")

        let reference = folder.appendingPathComponent("reference.wav").path
        try CommandLineRun.ffmpeg(["-i", clip, "-vn", "-af", "volume=-6dB", "-c:a", "pcm_f32le", reference])
        let live = folder.appendingPathComponent("live.wav").path
        try CommandLineRun.ffmpeg(["-i", output, "-vn", "-c:a", "pcm_f32le", live])
        let expected = try Self.samples(reference), got = try Self.samples(live)
        let atZero = Self.snr(got, expected, lag: 0)
        let early = Self.snr(got, expected, lag: -480 * 6), late = Self.snr(got, expected, lag: 480 * 6)
        print(String(format: "live audio gain:db=-6 against FFmpeg volume=-6dB: %.1f dB at lag 0, %.1f / %.1f dB at ∓10 ms", atZero, early, late))
        #expect(atZero >= 20)
        #expect(atZero - max(early, late) >= 15)
    }

    /// Audio needs a file source and a sink that holds audio: one line each, status 2, nothing written.
    @Test func audioNeedsAFileAndASinkThatHoldsIt() throws {
        let onPattern = try CommandLineRun.vfx(["live", "testsrc:frames=5", "--audio-filter", "gain:db=-6", "-o", "/tmp/never.mp4"])
        #expect(onPattern.status == 2 && onPattern.stderr.contains("has none"), "\(onPattern.stderr)")
        let toY4M = try CommandLineRun.vfx(["live", CommandLineRun.media("bigbuckbunny.mp4"), "--audio-filter", "gain:db=-6", "-o", "-"])
        #expect(toY4M.status != 0 && toY4M.stderr.contains("holds no audio") && toY4M.stdout.isEmpty, "\(toY4M.stderr)")
        let noAudio = try CommandLineRun.vfx(["live", CommandLineRun.media("bikes.mp4"), "--audio-filter", "gain:db=-6", "-o", "/tmp/never.mp4"])
        #expect(noAudio.status != 0 && noAudio.stderr.contains("no audio stream"), "\(noAudio.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never.mp4"))
    }

    /// `set` keeps the stages that did not change: a temporal denoiser followed by sepia, changed to the same
    /// denoiser followed by mono mid-run. Every frame from the change on equals (≥ 45 dB) `vfx apply` of
    /// `temporal-denoise:strength=8,mono` over the whole clip (the denoiser's history kept), and the first one
    /// does not equal what a fresh denoiser would give there (`vfx apply --frame N`, checked to be more than the
    /// tolerance away, so the test can tell the two apart).
    @Test func setKeepsTheDenoiserHistory() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = CommandLineRun.media("carphone_pristine.mp4")
        let output = folder.appendingPathComponent("live.y4m").path
        let statsPath = folder.appendingPathComponent("stats.jsonl").path
        let live = try LiveProcess(vfx: ["live", clip, "-o", output, "--filter", "temporal-denoise:strength=8,sepia", "--stats-json", statsPath])
        let answers = PipeReader(live.stdout)
        Thread.sleep(forTimeInterval: 1.5)
        live.send("set temporal-denoise:strength=8,mono")
        let answer = try #require(answers.line())
        let json = try #require(JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
        let change = try #require(json["frame"] as? Int, "\(answer)")
        #expect(live.wait(timeout: 15))
        #expect(live.status == 0, "\(live.stderr)")
        let final = try #require(try String(contentsOfFile: statsPath, encoding: .utf8).split(separator: "\n").last)
        let stats = try #require(JSONSerialization.jsonObject(with: Data(final.utf8)) as? [String: Any])
        try #require(stats["drops"] as? Int == 0, "frame k is source frame k only without drops: \(final)")

        let got = Y4MStream.frames(try Data(contentsOf: URL(fileURLWithPath: output))).frames
        let kept = try CommandLineRun.vfx(["apply", clip, "-o", "-", "--filter", "temporal-denoise:strength=8,mono", "--quiet"])
        let withHistory = Y4MStream.frames(kept.stdout).frames
        try #require(got.count == withHistory.count && change > 0 && change < got.count, "\(got.count) frames, change at \(change)")
        for k in change..<got.count {
            let quality = Y4MStream.psnr(got[k], withHistory[k])
            #expect(quality >= 45, "frame \(k): \(quality) dB against the denoiser with its history")
            if quality < 45 { break }
        }
        // What a denoiser made afresh at the change would give: the chain on that frame alone.
        let fresh = try CommandLineRun.vfx(["apply", clip, "-o", "-", "--frame", String(change), "--filter",
                                            "temporal-denoise:strength=8,mono", "--quiet"])
        let restarted = try #require(Y4MStream.frames(fresh.stdout).frames.first)
        let apart = Y4MStream.psnr(restarted, withHistory[change])
        print(String(format: "live set: denoiser kept across the change at frame %ld; a fresh one would be %.1f dB from it", change, apart))
        #expect(apart < 45, "a fresh denoiser's frame must differ for this test to tell them apart: \(apart) dB")
        #expect(Y4MStream.psnr(got[change], restarted) < 45)
    }

    /// Interleaved float samples of a WAV file FFmpeg wrote (the data chunk after its header).
    static func samples(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let range = data.range(of: Data("data".utf8)) else { return [] }
        let start = range.upperBound + 4
        return data[start...].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The signal-to-noise ratio (dB) of `got` against `expected` shifted by `lag` samples, over their overlap.
    static func snr(_ got: [Float], _ expected: [Float], lag: Int) -> Double {
        var signal = 0.0, noise = 0.0
        let count = min(got.count, expected.count) - abs(lag)
        for index in 0..<max(0, count) {
            let a = Double(got[lag >= 0 ? index + lag : index]), b = Double(expected[lag >= 0 ? index : index - lag])
            signal += b * b
            noise += (a - b) * (a - b)
        }
        return 10 * log10(signal / max(noise, 1e-20))
    }
}
