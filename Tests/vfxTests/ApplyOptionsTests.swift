import Foundation
import Testing

/// `vfx apply`'s encoding, trimming and file options, each checked against ffprobe's view of the output
/// or against the ffmpeg command doing the same thing.
@Suite struct ApplyOptionsTests {
    static let clip = CommandLineRun.media("bigbuckbunny.mp4")   // 1280×720, 25 fps, 132 frames, AAC

    /// A 2 s 160×120 clip at 25 fps with AAC audio.
    static func smallClip(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("small.mp4").path
        try CommandLineRun.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
                                   "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", path])
        return path
    }

    /// Each codec in its container: ffprobe sees the codec, every frame and the expected pixel format
    /// (ProRes defaults to 4:2:2 10-bit, GIF to 8-bit RGB; the others keep the input's 4:2:0), and FFmpeg's
    /// libraries print nothing on standard error (x265 and SVT-AV1 print on their own unless told not to).
    @Test(arguments: [("h264", "mp4", "h264", "yuv420p"), ("hevc", "mkv", "hevc", "yuv420p"), ("vp9", "webm", "vp9", "yuv420p"),
                      ("av1", "mkv", "av1", "yuv420p"), ("prores", "mov", "prores", "yuv422p10le"), ("ffv1", "avi", "ffv1", "yuv420p"),
                      ("h264", "ts", "h264", "yuv420p"), ("gif", "gif", "gif", "bgra")])
    func codecs(codec: String, ext: String, expected: String, pixelFormat: String) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.smallClip(in: folder)
        let output = folder.appendingPathComponent("out.\(ext)").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--codec", codec, "--quiet"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(codec): \(result.stderr)")
        let video = try #require(try CommandLineRun.probe(output)["video"])
        #expect(video["codec_name"] == expected && video["nb_read_frames"] == "50", "\(video)")
        #expect(video["pix_fmt"] == pixelFormat, "\(video)")
    }

    /// The file size of an encode with `options`.
    static func size(_ input: String, _ options: [String], in folder: URL, ext: String = "mp4") throws -> Int {
        let output = folder.appendingPathComponent("\(UUID().uuidString).\(ext)").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--quiet", "--no-audio"] + options)
        #expect(result.status == 0, "\(options): \(result.stderr)")
        return (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
    }

    /// --crf: a higher CRF makes a smaller file (x264 and VP9). --bitrate: ffprobe's average video bit rate
    /// lands within 35 % of the target (x264's rate control on a 2 s clip). --preset: x264 writes its
    /// settings into the stream; ultrafast turns CABAC off (`cabac=0`), the default preset keeps it.
    @Test func qualityRateAndPreset() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.smallClip(in: folder)
        #expect(try Self.size(input, ["--crf", "40"], in: folder) < Self.size(input, ["--crf", "10"], in: folder))
        #expect(try Self.size(input, ["--codec", "vp9", "--crf", "60"], in: folder, ext: "webm")
                < Self.size(input, ["--codec", "vp9", "--crf", "15"], in: folder, ext: "webm"))

        let rated = folder.appendingPathComponent("rated.mkv").path
        #expect(try CommandLineRun.vfx(["apply", Self.clip, "-o", rated, "--bitrate", "400k", "--quiet", "--no-audio"]).status == 0)
        let bytes = Double((try FileManager.default.attributesOfItem(atPath: rated)[.size] as? Int) ?? 0)
        let bitrate = bytes * 8 / 5.28
        #expect(abs(bitrate / 400_000 - 1) < 0.35, "\(bitrate) bit/s")

        for (preset, cabac) in [("ultrafast", "cabac=0"), (nil, "cabac=1")] {
            let output = folder.appendingPathComponent("preset-\(preset ?? "default").mp4").path
            let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--quiet"] + (preset.map { ["--preset", $0] } ?? []))
            #expect(result.status == 0, "\(result.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(data.range(of: Data(cabac.utf8)) != nil, "\(preset ?? "default"): \(cabac)")
        }
    }

    /// --pix-fmt sets the encoded layout, as ffprobe reports it.
    @Test(arguments: ["yuv444p", "yuv422p", "yuv420p10le"]) func pixelFormat(name: String) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.smallClip(in: folder)
        let output = folder.appendingPathComponent("out.mkv").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--pix-fmt", name, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CommandLineRun.probe(output)["video"]?["pix_fmt"] == name)
    }

    /// --fps repeats or drops frames exactly as FFmpeg's `fps` filter does: the same frames, byte for byte.
    @Test(arguments: ["50", "10", "30000/1001"]) func frameRateMatchesFFmpeg(rate: String) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.smallClip(in: folder)
        let ours = folder.appendingPathComponent("ours.y4m").path, theirs = folder.appendingPathComponent("theirs.y4m").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", ours, "--fps", rate, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        try CommandLineRun.ffmpeg(["-i", input, "-vf", "fps=\(rate)", "-f", "yuv4mpegpipe", theirs])
        let got = try CommandLineRun.y4mFrames(ours), expected = try CommandLineRun.y4mFrames(theirs)
        #expect(!got.isEmpty && got == expected, "\(got.count) vs \(expected.count) frames")
    }

    /// --fps into mp4: ffprobe sees the new rate and the same length.
    @Test func frameRateInAContainer() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.smallClip(in: folder)
        let output = folder.appendingPathComponent("out.mp4").path
        #expect(try CommandLineRun.vfx(["apply", input, "-o", output, "--fps", "50", "--quiet"]).status == 0)
        let video = try #require(try CommandLineRun.streams(output, type: "video").first)
        #expect(video["avg_frame_rate"] as? String == "50/1")
        #expect(try CommandLineRun.probe(output)["video"]?["nb_read_frames"] == "100")
    }

    /// --start/--duration keep the frames FFmpeg's `trim` filter keeps (start ≤ t < start + duration),
    /// byte for byte; the audio is cut to the same range (ffprobe: within one AAC packet, 21.3 ms, plus the
    /// encoder delay FFmpeg's mp4 reading leaves in, so 50 ms).
    @Test func startAndDurationMatchFFmpegTrim() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let ours = folder.appendingPathComponent("ours.y4m").path, theirs = folder.appendingPathComponent("theirs.y4m").path
        let result = try CommandLineRun.vfx(["apply", Self.clip, "-o", ours, "--start", "1.5", "--duration", "0:02", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        try CommandLineRun.ffmpeg(["-i", Self.clip, "-vf", "trim=start=1.5:duration=2", "-vsync", "passthrough", "-f", "yuv4mpegpipe", theirs])
        let got = try CommandLineRun.y4mFrames(ours), expected = try CommandLineRun.y4mFrames(theirs)
        #expect(got.count == 50 && got == expected, "\(got.count) vs \(expected.count)")

        let clip = folder.appendingPathComponent("cut.mp4").path
        #expect(try CommandLineRun.vfx(["apply", Self.clip, "-o", clip, "--start", "1.5", "--duration", "2", "--quiet"]).status == 0)
        let audio = try #require(try CommandLineRun.streams(clip, type: "audio").first)
        let length = Double(audio["duration"] as? String ?? "") ?? 0
        #expect(abs(length - 2) < 0.05, "audio \(length) s")
        #expect(try CommandLineRun.probe(clip)["video"]?["nb_read_frames"] == "50")
    }

    /// --frames counts output frames (FFmpeg's -frames:v), with or without --fps.
    @Test func frameCount() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for extra in [[], ["--fps", "50"], ["--fps", "10"]] {
            let output = folder.appendingPathComponent("out-\(extra.count)-\(extra.last ?? "").mkv").path
            let result = try CommandLineRun.vfx(["apply", Self.clip, "-o", output, "--frames", "12", "--quiet"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try CommandLineRun.probe(output)["video"]?["nb_read_frames"] == "12", "\(extra)")
        }
    }

    /// --frame N writes frame N as a still: the same bytes as FFmpeg's `select=eq(n,N)` of the clip (y4m),
    /// and a PNG of the video's size; a frame past the end is a one-line error.
    @Test func stillFromAVideo() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let ours = folder.appendingPathComponent("still.y4m").path, theirs = folder.appendingPathComponent("theirs.y4m").path
        let result = try CommandLineRun.vfx(["apply", Self.clip, "-o", ours, "--frame", "60", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        try CommandLineRun.ffmpeg(["-i", Self.clip, "-vf", "select=eq(n\\,60)", "-frames:v", "1", "-f", "yuv4mpegpipe", theirs])
        let got = try CommandLineRun.y4mFrames(ours), expected = try CommandLineRun.y4mFrames(theirs)
        #expect(got.count == 1 && got == expected)
        let png = folder.appendingPathComponent("still.png").path
        #expect(try CommandLineRun.vfx(["apply", Self.clip, "-o", png, "--frame", "60", "--quiet"]).status == 0)
        let video = try CommandLineRun.probe(png)["video"]
        #expect(video?["width"] == "1280" && video?["height"] == "720")
        let beyond = try CommandLineRun.vfx(["apply", Self.clip, "-o", png, "-y", "--frame", "500", "--quiet"])
        #expect(beyond.status == 1 && beyond.stderr.contains("no frame 500") && beyond.stderr.split(separator: "\n").count == 1)
    }

    /// -y overwrites; -n and a non-interactive run without -y refuse and leave the file as it was; the input
    /// is never overwritten, not even with -y or through a link.
    @Test func overwriting() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.smallClip(in: folder)
        let output = folder.appendingPathComponent("out.y4m").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: output))
        for flags in [["-n"], []] {
            let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--quiet"] + flags)
            #expect(result.status == 1 && result.stderr.contains("already exists"), "\(flags): \(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("keep me".utf8))
        }
        #expect(try CommandLineRun.vfx(["apply", input, "-o", output, "-y", "--quiet"]).status == 0)
        #expect(try CommandLineRun.y4mFrames(output).count == 50)
        let link = folder.appendingPathComponent("link.mp4").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        for target in [input, link] {
            let result = try CommandLineRun.vfx(["apply", input, "-o", target, "-y", "--quiet"])
            #expect(result.status == 1 && result.stderr.contains("is the input file"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before)
        #expect(try CommandLineRun.vfx(["apply", input, "-o", output, "-y", "-n"]).status == 2)
    }
}
