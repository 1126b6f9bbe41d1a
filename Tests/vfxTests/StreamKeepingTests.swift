import Foundation
import Testing

/// Nothing silently lost: colour tags, sample aspect ratio, every audio and subtitle stream, and a warning
/// line for what an output cannot hold. The reference is ffprobe's view of input and output
/// (`ffprobe -show_streams -of json`).
@Suite struct StreamKeepingTests {
    /// The sample aspect ratio as a number (ffprobe writes "4:3").
    static func aspect(_ stream: [String: Any]) -> Double? {
        guard let text = stream["sample_aspect_ratio"] as? String else { return nil }
        let parts = text.split(separator: ":").compactMap { Double($0) }
        return parts.count == 2 && parts[1] > 0 ? parts[0] / parts[1] : nil
    }

    /// HDR tags, 4:3 samples, two audio tracks (one tagged French) and the subtitles survive into each
    /// container that holds them. Tolerance on the aspect ratio: 0.5 %, because WebM stores a display size
    /// in whole pixels (213×120 for 160×120 at 4:3 gives 213:160, 0.16 % off) instead of the ratio.
    @Test(arguments: ["mkv", "mp4", "webm", "mov"]) func everythingSurvives(ext: String) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestClips.everything(in: folder)
        let output = folder.appendingPathComponent("out.\(ext)").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let video = try #require(try CommandLineRun.streams(output, type: "video").first)
        #expect(video["color_primaries"] as? String == "bt2020")
        #expect(video["color_transfer"] as? String == "smpte2084")
        #expect(video["color_space"] as? String == "bt2020nc")
        #expect(video["color_range"] as? String == "tv")
        #expect(abs((Self.aspect(video) ?? 0) / (4.0 / 3.0) - 1) < 0.005, "\(video["sample_aspect_ratio"] ?? "none")")
        #expect(video["pix_fmt"] as? String == "yuv420p10le", "the 10-bit layout is kept")
        let audio = try CommandLineRun.streams(output, type: "audio")
        #expect(audio.count == 2)
        let french = audio.last?["tags"] as? [String: Any]
        #expect((french?["language"] ?? french?["LANGUAGE"]) as? String == "fra", "the second track keeps its language")
        #expect(try CommandLineRun.streams(output, type: "subtitle").count == 1)
        // The one warning: 8-bit processing of the 10-bit video, HDR tags kept; nothing was dropped.
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("vfx: warning: ") }
        #expect(warnings.count == 1 && warnings[0].contains("10-bit") && warnings[0].contains("HDR tags are kept"), "\(result.stderr)")
    }

    /// Tags a size-based guess would replace: a 1280×720 clip tagged BT.601 stays BT.601 (not BT.709),
    /// and its 64:45 samples stay 64:45, through a filter chain too.
    @Test func sdTagsAndAnamorphicSamplesSurviveAFilter() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestClips.anamorphic601(in: folder)
        let output = folder.appendingPathComponent("out.mkv").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--filter", "sepia", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let video = try #require(try CommandLineRun.streams(output, type: "video").first)
        #expect(video["color_space"] as? String == "smpte170m")
        #expect(video["color_primaries"] as? String == "smpte170m")
        #expect(video["color_transfer"] as? String == "smpte170m")
        #expect(video["sample_aspect_ratio"] as? String == "64:45")
    }

    /// HDR through a filter: the tags stay HDR and one warning line says the filters treat it as SDR.
    @Test func hdrThroughAFilterWarnsOnce() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestClips.everything(in: folder)
        let output = folder.appendingPathComponent("out.mp4").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--filter", "sepia"])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("vfx: warning: ") }
        #expect(warnings.count == 1 && warnings[0].contains("HDR") && warnings[0].contains("SDR"), "\(result.stderr)")
        let video = try #require(try CommandLineRun.streams(output, type: "video").first)
        #expect(video["color_transfer"] as? String == "smpte2084" && video["color_primaries"] as? String == "bt2020")
    }

    /// `mask-to-alpha` on a video (its I420 frames are converted to RGBA for it) makes transparent frames: H.264 has no
    /// alpha, so one warning line says the transparency was made opaque and how to keep it; FFV1 with `yuva420p` and ProRes
    /// with `yuva444p10le` keep it (FFmpeg reads the alpha plane back: not all opaque) and give no such warning.
    @Test func transparencyLostInAnEncodingWithoutAlphaWarns() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = CommandLineRun.media("bigbuckbunny.mp4")
        let mp4 = folder.appendingPathComponent("mask.mp4").path
        let lost = try CommandLineRun.vfx(["apply", input, "-o", mp4, "--filter", "mask-to-alpha", "--frames", "2"])
        #expect(lost.status == 0, "\(lost.stderr)")
        let warnings = lost.stderr.split(separator: "\n").filter { $0.hasPrefix("vfx: warning: ") }
        #expect(warnings.count == 1 && warnings[0].contains("\(mp4) has no alpha channel"), "\(lost.stderr)")
        let mkv = folder.appendingPathComponent("mask.mkv").path
        let kept = try CommandLineRun.vfx(["apply", input, "-o", mkv, "--filter", "mask-to-alpha", "--frames", "2",
                                           "--codec", "ffv1", "--pix-fmt", "yuva420p"])
        #expect(kept.status == 0 && !kept.stderr.contains("warning"), "\(kept.stderr)")
        // ProRes with a pixel format that has alpha takes its 4444 profile by itself, and keeps the alpha too.
        let mov = folder.appendingPathComponent("mask.mov").path
        let prores = try CommandLineRun.vfx(["apply", input, "-o", mov, "--filter", "mask-to-alpha", "--frames", "2",
                                             "--codec", "prores", "--pix-fmt", "yuva444p10le"])
        #expect(prores.status == 0 && !prores.stderr.contains("warning"), "\(prores.stderr)")
        for (index, path) in [mkv, mov].enumerated() {
            let alpha = folder.appendingPathComponent("alpha\(index).gray").path
            try CommandLineRun.ffmpeg(["-i", path, "-vf", "alphaextract", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", alpha])
            let bytes = try Data(contentsOf: URL(fileURLWithPath: alpha))
            #expect(!bytes.isEmpty && bytes.contains { $0 < 200 }, "alpha plane of \(path)")
        }
    }

    /// Containers that cannot hold a stream: one warning line names every stream left out.
    @Test(arguments: [("ts", ["subtitle stream #3 (subrip"]), ("y4m", ["audio stream #1 (aac", "audio stream #2 (opus", "subtitle stream #3"]),
                      ("gif", ["audio stream #1 (aac", "audio stream #2 (opus", "subtitle stream #3"])])
    func droppedStreamsAreNamed(ext: String, named: [String]) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestClips.everything(in: folder)
        let output = folder.appendingPathComponent("out.\(ext)").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let dropped = result.stderr.split(separator: "\n").filter { $0.hasPrefix("vfx: warning: ") && $0.contains("leaves out") }
        #expect(dropped.count == 1, "\(result.stderr)")
        for name in named { #expect(dropped.first?.contains(name) == true, "\(name): \(result.stderr)") }
        if ext == "ts" { #expect(try CommandLineRun.streams(output, type: "audio").count == 2) }
    }

    /// SubRip cannot go into mp4: it is rewritten as mov_text with the same words and times. Reference:
    /// FFmpeg's own conversion (`-c copy -c:s mov_text`), both exported as SubRip by FFmpeg. (Both start
    /// 23 ms late: the AAC track's priming samples start before zero, and mp4 moves every stream up.)
    @Test func subtitlesAreRewrittenForTheContainer() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestClips.everything(in: folder)
        let output = folder.appendingPathComponent("out.mp4").path, reference = folder.appendingPathComponent("reference.mp4").path
        #expect(try CommandLineRun.vfx(["apply", input, "-o", output, "--quiet"]).status == 0)
        try CommandLineRun.ffmpeg(["-i", input, "-map", "0", "-c", "copy", "-c:s", "mov_text", reference])
        #expect(try CommandLineRun.streams(output, type: "subtitle").first?["codec_name"] as? String == "mov_text")
        func export(_ path: String) throws -> String {
            String(decoding: try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-map", "0:s", "-f", "srt", "-"]).stdout,
                   as: UTF8.self)
        }
        let ours = try export(output), theirs = try export(reference)
        #expect(ours.contains("Hello") && ours.contains("World") && ours == theirs, "\(ours)")
    }

    /// `--no-audio` leaves out the audio tracks (FFmpeg's -an) and keeps the subtitles, without a warning.
    @Test func noAudio() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestClips.everything(in: folder)
        let output = folder.appendingPathComponent("out.mkv").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--no-audio"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CommandLineRun.streams(output, type: "audio").isEmpty)
        #expect(try CommandLineRun.streams(output, type: "subtitle").count == 1)
        #expect(!result.stderr.contains("leaves out"), "\(result.stderr)")
    }

    /// A 16-bit PNG is read at 8 bits: one warning line says so.
    @Test func sixteenBitPNGIsWarnedAbout() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("deep.png").path
        try CommandLineRun.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", "-pix_fmt", "rgb48be", input])
        let output = folder.appendingPathComponent("out.png").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("vfx: warning: ") }
        #expect(warnings.count == 1 && warnings[0].contains("16-bit"), "\(result.stderr)")
    }
}
