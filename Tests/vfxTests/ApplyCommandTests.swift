import Foundation
import Testing

/// `vfx apply` end to end on the sample media, checked with ffprobe and ffmpeg as the references.
@Suite struct ApplyCommandTests {
    @Test func clipKeepsFramesSizeDurationAndAudio() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = CommandLineRun.media("bigbuckbunny.mp4")
        let output = folder.appendingPathComponent("out.mkv").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--filter", "mono", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let before = try CommandLineRun.probe(input), after = try CommandLineRun.probe(output)
        #expect(after["video"]?["nb_read_frames"] == before["video"]?["nb_read_frames"])
        #expect(after["video"]?["width"] == "1280" && after["video"]?["height"] == "720")
        #expect(after["audio"]?["codec_name"] == "aac", "the AAC track is copied into Matroska")
        // Matroska stores durations in milliseconds; the clip's 5.28 s must survive within one frame (40 ms).
        let duration = try #require(Double(try CommandLineRun.probe(output)["video"]?["duration"] ?? "") ?? durationFromFormat(output))
        #expect(abs(duration - 5.28) <= 0.04)
    }

    func durationFromFormat(_ path: String) throws -> Double? {
        let result = try CommandLineRun.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        return Double(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func y4mPipesBothWays() throws {
        // ffmpeg decodes the clip to y4m; vfx reads it from stdin and writes y4m to stdout.
        let y4m = try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", CommandLineRun.media("carphone_pristine.mp4"),
                                                               "-f", "yuv4mpegpipe", "-"])
        #expect(y4m.status == 0)
        let result = try CommandLineRun.vfx(["apply", "-", "-o", "-", "--quiet"], input: y4m.stdout)
        #expect(result.status == 0, "\(result.stderr)")
        // Pass-through: the same frames, byte for byte.
        let expected = Self.frames(y4m.stdout), got = Self.frames(result.stdout)
        #expect(expected.count == 120 && got.count == 120)
        #expect(expected == got)
    }

    /// A phone-style clip whose display matrix says "turn me": vfx turns the frames upright, as FFmpeg does
    /// by default. Reference: ffmpeg's own auto-rotated decode of the same file, byte for byte.
    @Test(arguments: ["90", "180", "270"]) func rotatedClipsComeOutUpright(angle: String) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rotated = folder.appendingPathComponent("rotated.mp4").path
        let tagged = try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", CommandLineRun.media("carphone_pristine.mp4"),
                                                                "-c", "copy", "-metadata:s:v:0", "rotate=\(angle)", rotated])
        #expect(tagged.status == 0)
        let output = folder.appendingPathComponent("upright.y4m").path
        let result = try CommandLineRun.vfx(["apply", rotated, "-o", output, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let reference = try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", rotated, "-f", "yuv4mpegpipe", "-"])
        let ours = try Data(contentsOf: URL(fileURLWithPath: output))
        let expected = Self.frames(reference.stdout), got = Self.frames(ours)
        #expect(expected.count == 120 && got.count == 120)
        #expect(expected == got)
    }

    /// A camera JPEG whose EXIF orientation says "turn 90° clockwise" (6) or "turn 90° counterclockwise" (8)
    /// comes out upright. Reference: FFmpeg's decode of the same file, which applies the orientation too.
    /// Tolerance 40 dB: both decode the same JPEG, but FFmpeg's YUV→RGB upsamples chroma with a bicubic
    /// filter and VideoFX repeats each chroma sample (measured 44.9 dB).
    @Test(arguments: [6, 8]) func exifOrientedPhotosComeOutUpright(orientation: UInt8) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", CommandLineRun.media("astronaut.png"),
                                                               "-vf", "crop=512:300:0:0", "-f", "mjpeg", "-q:v", "2", "-"])
        // APP1 "Exif" segment: a little-endian TIFF header and one IFD entry, Orientation (0x0112) = SHORT n.
        var exif: [UInt8] = Array("Exif".utf8) + [0, 0, 0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0,
                                                  0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0]
        exif = [0xFF, 0xE1, UInt8((exif.count + 2) >> 8), UInt8((exif.count + 2) & 0xFF)] + exif
        let jpeg = Data(plain.stdout.prefix(2) + exif + plain.stdout.dropFirst(2))
        let input = folder.appendingPathComponent("camera.jpg")
        try jpeg.write(to: input)
        let output = folder.appendingPathComponent("upright.png").path
        let result = try CommandLineRun.vfx(["apply", input.path, "-o", output, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let video = try #require(try CommandLineRun.probe(output)["video"])
        #expect(video["width"] == "300" && video["height"] == "512")
        let rgb = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        let ours = try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", output] + rgb).stdout
        let reference = try CommandLineRun.run("/usr/bin/ffmpeg", ["-v", "error", "-i", input.path] + rgb).stdout
        #expect(ours.count == 300 * 512 * 3 && ours.count == reference.count)
        var squared = 0.0
        for (a, b) in zip(ours, reference) { squared += (Double(a) - Double(b)) * (Double(a) - Double(b)) }
        let psnr = 10 * log10(255 * 255 / max(squared / Double(ours.count), 1e-9))
        #expect(psnr >= 40, "\(psnr) dB")
    }

    /// The frames of a y4m stream (headers may differ in their optional tags).
    static func frames(_ data: Data) -> [Data] {
        let marker = Data("FRAME".utf8)
        var out: [Data] = []
        var start = data.range(of: marker)
        while let current = start {
            let next = data.range(of: marker, in: current.upperBound..<data.endIndex)
            out.append(data[current.lowerBound..<(next?.lowerBound ?? data.endIndex)])
            start = next
        }
        return out
    }

    @Test func pngStaysAnRGBImageOfTheSameSize() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("astronaut-sepia.png").path
        let result = try CommandLineRun.vfx(["apply", CommandLineRun.media("astronaut.png"), "-o", output, "--filter", "sepia", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let video = try #require(try CommandLineRun.probe(output)["video"])
        #expect(video["width"] == "512" && video["height"] == "512")
        #expect(video["pix_fmt"]?.hasPrefix("rgb") == true, "no chroma subsampling added: \(video["pix_fmt"] ?? "?")")
    }

    /// Every bad input: one `vfx: error:` line naming the culprit, the right exit status, nothing written.
    @Test func badInputsGiveOneLineErrorsAndLeaveNothing() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.mp4").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let clip = try Data(contentsOf: URL(fileURLWithPath: CommandLineRun.media("bikes.mp4")))
        let truncated = folder.appendingPathComponent("truncated.mp4").path
        _ = FileManager.default.createFile(atPath: truncated, contents: clip.prefix(clip.count / 3))
        let corrupt = folder.appendingPathComponent("corrupt.mp4").path
        var garbage = clip
        for i in stride(from: 64, to: garbage.count, by: 97) { garbage[i] ^= 0x5A }
        _ = FileManager.default.createFile(atPath: corrupt, contents: garbage)
        let photo = CommandLineRun.media("astronaut.png")
        let out = folder.appendingPathComponent("out.mp4").path

        let cases: [(arguments: [String], status: Int32, mentions: String)] = [
            (["apply", folder.appendingPathComponent("missing.mp4").path, "-o", out], 1, "missing.mp4"),
            (["apply", empty, "-o", out], 1, "empty.mp4"),
            (["apply", truncated, "-o", out], 1, "truncated.mp4"),
            (["apply", corrupt, "-o", out], 1, "corrupt.mp4"),
            (["apply", photo, "-o", out, "--filter", "no-such-filter"], 1, "no-such-filter"),
            (["apply", photo, "-o", out, "--filter", "sepia:intensity=7"], 1, "intensity"),
            (["apply", photo, "-o", folder.appendingPathComponent("out.xyz").path], 1, "out.xyz"),
            (["apply", photo, "-o", folder.appendingPathComponent("nowhere/out.png").path], 1, "nowhere"),
            (["apply", photo], 2, "-o"),
            (["apply", photo, "-o", out, "--bogus"], 2, "--bogus"),
            (["frobnicate"], 2, "frobnicate"),
        ]
        for item in cases {
            let result = try CommandLineRun.vfx(item.arguments + ["--quiet"].filter { _ in item.status == 1 })
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == item.status, "\(item.arguments): status \(result.status), \(result.stderr)")
            #expect(lines.first?.hasPrefix("vfx: error: ") == true && lines.first?.contains(item.mentions) == true,
                    "\(item.arguments): \(result.stderr)")
            if item.status == 1 { #expect(lines.count == 1, "one line: \(result.stderr)") }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["corrupt.mp4", "empty.mp4", "truncated.mp4"], "nothing written: \(left)")
    }
}
