import Foundation
import Testing
import VFXTestSupport

/// `vfx apply --audio-filter` on videos: trimmed, with several audio streams, and with streams it cannot
/// read. Everything is checked with FFmpeg's own decoder (`ffmpeg`, `ffprobe`), not VideoFX's reader.
@Suite struct AudioTrackTests {
    /// Audio stream `stream` of `path` decoded by FFmpeg to mono float at 48 kHz (first channel), placed by
    /// its timestamps from 0 (`aresample=async=1:first_pts=0` pads or cuts the start), so a stream that
    /// starts late or early shows as a shift.
    static func decode(_ path: String, stream: Int = 0, extra: [String] = []) throws -> [Float] {
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error"] + extra + ["-i", path, "-map", "0:a:\(stream)",
            "-af", "aresample=async=1:first_pts=0,pan=mono|c0=c0", "-ar", "48000", "-f", "f32le", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static func probe(_ path: String, _ entries: String, select: String? = nil) throws -> [String] {
        let result = try TestProcess.run("/usr/bin/ffprobe", ["-v", "error"] + (select.map { ["-select_streams", $0] } ?? [])
            + ["-show_entries", entries, "-of", "csv=p=0", path])
        return String(decoding: result.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// `--start 1.6 --duration 2` with `gain:db=-6` on bigbuckbunny.mp4 (25 fps, 6-channel AAC): the same
    /// video frames as the trim without audio filter, and audio that is the input's from 1.6 s for 2 s at
    /// −6 dB: level within 0.2 dB (AAC re-encoding), placed at output time 0 within 2 ms (cross-correlation
    /// against FFmpeg's decoding of the whole input, cut by sample index), 2 s long within one AAC frame;
    /// and `--start 1.6 --frames 30`: 30 frames, 1.2 s of audio, aligned alike.
    @Test func trimKeepsAudioWithItsVideo() throws {
        let input = TestMedia.path("bigbuckbunny.mp4")
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("cut.mp4").path
        let plain = folder.appendingPathComponent("plain.mp4").path
        let trim = ["--start", "1.6", "--duration", "2", "--quiet"]
        let result = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", output, "--audio-filter", "gain:db=-6"] + trim)
        #expect(result.status == 0, "\(result.stderr)")
        let reference = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", plain] + trim)
        #expect(reference.status == 0, "\(reference.stderr)")
        let video = "stream=width,height,nb_frames,start_time"
        #expect(try Self.probe(output, video, select: "v") == (try Self.probe(plain, video, select: "v")))
        #expect(try Self.probe(output, "stream=channels,sample_rate", select: "a") == (try Self.probe(input, "stream=channels,sample_rate", select: "a")))

        let whole = try Self.decode(input)
        let expected = Array(whole[76_800..<(76_800 + 96_000)])
        let got = try Self.decode(output)
        #expect(abs(got.count - 96_000) <= 1024, "\(got.count) frames")
        let lag = AudioFixtures.lag(of: Array(got.prefix(96_000)), against: expected, range: 960)
        #expect(abs(lag) <= 96, "audio shifted by \(lag) frames against its video")
        let change = AudioFixtures.decibels(AudioFixtures.power(got.prefix(95_000)) / AudioFixtures.power(expected.prefix(95_000)))
        #expect(abs(change + 6) <= 0.2, "level changed by \(change) dB")

        // Cut by frame count: 30 frames from 1.6 s are 1.2 s of audio (within one AAC frame).
        let counted = folder.appendingPathComponent("counted.mp4").path
        let byFrames = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", counted, "--audio-filter", "gain:db=-6",
                                                              "--start", "1.6", "--frames", "30", "--quiet"])
        #expect(byFrames.status == 0, "\(byFrames.stderr)")
        #expect(try Self.probe(counted, "stream=nb_frames", select: "v") == ["30"])
        let short = try Self.decode(counted)
        #expect(abs(short.count - 57_600) <= 1024, "\(short.count) frames for 30 video frames")
        #expect(abs(AudioFixtures.lag(of: Array(short.prefix(48_000)), against: Array(expected.prefix(48_000)), range: 960)) <= 96)
    }

    /// A video with two audio streams (stereo AAC and mono FLAC in Matroska): both are filtered (−6 dB
    /// ± 0.2 each, against FFmpeg's decoding of the input stream), both keep their codec and channels.
    @Test func filtersEveryAudioStream() throws {
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("two.mkv").path
        let output = folder.appendingPathComponent("out.mkv").path
        let made = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", TestMedia.path("bigbuckbunny.mp4"), "-t", "2",
            "-map", "0:v", "-map", "0:a", "-map", "0:a", "-c:v", "copy", "-c:a:0", "aac", "-ac:a:0", "2", "-c:a:1", "flac",
            "-ac:a:1", "1", input])
        #expect(made.status == 0, "\(made.stderr)")
        let result = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", output, "--audio-filter", "gain:db=-6", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let streams = "stream=codec_name,channels"
        #expect(try Self.probe(output, streams, select: "a") == (try Self.probe(input, streams, select: "a")))
        for stream in 0..<2 {
            let before = try Self.decode(input, stream: stream)
            let after = try Self.decode(output, stream: stream)
            let change = AudioFixtures.decibels(AudioFixtures.power(after) / AudioFixtures.power(before))
            #expect(abs(change + 6) <= 0.2, "stream \(stream): level changed by \(change) dB")
        }
    }

    /// Audio VideoFX cannot decode: an unknown codec (a Matroska track whose codec id is renamed) and a
    /// corrupt stream (AAC frames overwritten in an mp4). With `--audio-filter`: one line naming the input,
    /// a non-zero exit, no output, nothing partial left. With only `--filter`, the unknown codec: the video
    /// is written, and a warning line names the audio stream left out.
    @Test func refusesAudioItCannotDecode() throws {
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pcm = folder.appendingPathComponent("pcm.mkv").path
        let made = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=2",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-c:v", "mpeg4", "-c:a", "pcm_s16le", pcm])
        #expect(made.status == 0, "\(made.stderr)")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: pcm))
        let codecID = Data("A_PCM/INT/LIT".utf8)
        let found = try #require(bytes.range(of: codecID))
        bytes.replaceSubrange(found, with: Data("A_VFX/UNKNOWN".utf8))
        let unknown = folder.appendingPathComponent("unknown.mkv").path
        try bytes.write(to: URL(fileURLWithPath: unknown))

        let aac = folder.appendingPathComponent("aac.mp4").path
        let encoded = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=16x16:rate=5:duration=2",
            "-f", "lavfi", "-i", "anoisesrc=sample_rate=48000:duration=2:seed=3", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "256k", aac])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        var broken = try Data(contentsOf: URL(fileURLWithPath: aac))
        // Noise at 256 kb/s: the AAC frames fill most of the file's media data (moov comes last, so the
        // sample table stays whole). Overwrite 3000 bytes in the middle: FFmpeg's decoder then reports
        // invalid data on that stream.
        let middle = broken.count / 2
        for index in middle..<(middle + 3000) { broken[index] = UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 7) }
        let corrupt = folder.appendingPathComponent("corrupt.mp4").path
        try broken.write(to: URL(fileURLWithPath: corrupt))

        for (input, message) in [(unknown, "no decoder"), (corrupt, "corrupt.mp4")] {
            let output = folder.appendingPathComponent("out.mkv").path
            let result = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", output, "--audio-filter", "gain:db=-6"])
            #expect(result.status != 0, "\(input)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("partial") }
        #expect(left.isEmpty)

        let videoOnly = folder.appendingPathComponent("video.mkv").path
        let result = try TestProcess.run(AudioFixtures.vfx, ["apply", unknown, "-o", videoOnly, "--filter", "sepia"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning") && result.stderr.contains("audio stream #1"), "\(result.stderr)")
        #expect(try Self.probe(videoOnly, "stream=codec_type") == ["video"])
    }

    /// Options that contradict `--audio-filter`: `--no-audio`, and `--frames` / `--frame` (video frames) for
    /// an audio-only output. Each is one usage line, a non-zero exit, and no output.
    @Test func refusesContradictoryOptions() throws {
        let folder = try AudioFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = TestMedia.path("bigbuckbunny.mp4")
        let cases: [(output: String, options: [String], message: String)] = [
            ("a.mp4", ["--no-audio"], "--no-audio"),
            ("b.wav", ["--frames", "10"], "--frames"),
            ("c.flac", ["--frame", "3"], "--frame"),
        ]
        for item in cases {
            let output = folder.appendingPathComponent(item.output).path
            let result = try TestProcess.run(AudioFixtures.vfx, ["apply", input, "-o", output, "--audio-filter", "gain:db=-6"] + item.options)
            #expect(result.status != 0, "\(item)")
            #expect(result.stderr.contains(item.message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
