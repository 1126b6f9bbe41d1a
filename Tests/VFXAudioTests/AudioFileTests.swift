import Foundation
import Testing
import VFXAudio
import VFXMedia
import VFXTestSupport

/// Audio files and video tracks through `vfx apply --audio-filter`, checked with FFmpeg's ffprobe and
/// decoder.
@Suite struct AudioFileTests {
    static func probe(_ path: String, _ entries: String) throws -> [String] {
        let result = try TestProcess.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", entries, "-of", "csv=p=0", path])
        return String(decoding: result.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// A 96 kHz stereo FLAC through noise-suppression (which runs at 48 kHz): the output keeps 96 kHz,
    /// stereo and the length (within 1 ms), and the speech stays where it was (cross-correlation within 2 ms).
    @Test func keepsRateLayoutAndLengthThroughResampling() throws {
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.flac").path
        let output = folder.appendingPathComponent("out.flac").path
        let made = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", AudioFixtures.frontCenter, "-ar", "96000", "-ac", "2", input])
        #expect(made.status == 0, "\(made.stderr)")
        let result = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", output, "--audio-filter", "noise-suppression", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.probe(output, "stream=sample_rate,channels,channel_layout") == (try Self.probe(input, "stream=sample_rate,channels,channel_layout")))
        let before = try AudioFixtures.read(input)
        let after = try AudioFixtures.read(output)
        #expect(abs(before[0].count - after[0].count) <= 96, "\(before[0].count) → \(after[0].count) frames")
        #expect(abs(AudioFixtures.lag(of: after[0], against: before[0], range: 960)) <= 192)
    }

    /// gain:db=-6 on a video's AAC track: level −6 dB ± 0.2 (decoded, whole track), the video's frame
    /// count and size unchanged, the audio as long as before within one AAC frame (1024 frames).
    @Test func gainOnAVideoTrack() throws {
        let input = TestMedia.path("bigbuckbunny.mp4")
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.mp4").path
        let result = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", output, "--audio-filter", "gain:db=-6", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let video = "stream=width,height,nb_frames"
        #expect(try Self.probe(output, video).first == (try Self.probe(input, video).first))
        let before = try AudioFixtures.read(input)
        let after = try AudioFixtures.read(output)
        #expect(before.count == after.count)
        #expect(abs(before[0].count - after[0].count) <= 1024, "\(before[0].count) → \(after[0].count) frames")
        let change = AudioFixtures.decibels(AudioFixtures.power(after.joined()) / AudioFixtures.power(before.joined()))
        #expect(abs(change + 6) <= 0.2, "level changed by \(change) dB")
    }

    /// A video without audio, a corrupt file, a bad chain: one line naming the input, a non-zero exit and
    /// no output file.
    @Test func refusesWhatItCannotFilter() throws {
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let corrupt = folder.appendingPathComponent("broken.wav").path
        try Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVEjunkjunkjunk".utf8).write(to: URL(fileURLWithPath: corrupt))
        let cases: [(input: String, output: String, chain: String, message: String)] = [
            (TestMedia.path("bikes.mp4"), "a.mp4", "gain:db=-6", "no audio stream"),
            (corrupt, "b.wav", "gain", "broken.wav"),
            (AudioFixtures.frontCenter, "c.wav", "gain:db=99", "gain: db must be"),
            (AudioFixtures.frontCenter, "d.y4m", "gain", "holds no audio"),
        ]
        for item in cases {
            let output = folder.appendingPathComponent(item.output).path
            let result = try TestProcess.run(AudioFixtures.vfx, ["apply", item.input, "-o", output, "--audio-filter", item.chain])
            #expect(result.status != 0, "\(item)")
            #expect(result.stderr.contains(item.message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("partial") }
        #expect(left.isEmpty)
    }

    /// `vfx filters --json` lists both kinds; `vfx bench --audio-filter … --json` reports × real time.
    @Test func listingAndBench() throws {
        let listing = try TestProcess.run(AudioFixtures.vfx, ["filters", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: listing.stdout) as? [[String: Any]])
        let audio = entries.filter { $0["kind"] as? String == "audio" }.compactMap { $0["name"] as? String }
        #expect(Set(audio) == Set(AudioFilterRegistry.all.map(\.name)))
        #expect(entries.allSatisfy { ["audio", "video"].contains($0["kind"] as? String ?? "") })
        let bench = try TestProcess.run(AudioFixtures.vfx, ["bench", "--audio-filter", "gain:db=-6", "--input", AudioFixtures.frontCenter,
                                                           "--json", "--no-ffmpeg", "--repeats", "1"])
        #expect(bench.status == 0, "\(bench.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: bench.stdout) as? [String: Any])
        #expect((result["vfx_realtime"] as? Double ?? 0) > 1)
        #expect(result["sample_rate"] as? Int == 48_000)
    }
}
