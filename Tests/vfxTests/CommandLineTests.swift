import Foundation
import Testing

/// The command as a user meets it: version, help, suggestions, one-line errors, refusals that say what
/// is wrong, and no files left behind after signals.
@Suite struct CommandLineTests {
    static let commands = ["apply", "filters", "model", "bench", "demo", "live"]

    @Test func versionNamesVideoFXAndFFmpeg() throws {
        let result = try CommandLineRun.vfx(["--version"])
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0 && text.hasPrefix("vfx 0.") && text.contains("FFmpeg") && text.contains("libavcodec"), "\(text)")
    }

    /// `vfx help CMD`, `vfx CMD --help` and `vfx CMD -h` print the same text, for every command, even with
    /// other arguments on the line.
    @Test func helpForEveryCommand() throws {
        for command in Self.commands {
            let help = try CommandLineRun.vfx(["help", command])
            #expect(help.status == 0 && !help.stdout.isEmpty, "\(command)")
            for form in [[command, "--help"], [command, "-h"], [command, "--bogus", "--help"]] {
                let other = try CommandLineRun.vfx(form)
                #expect(other.status == 0 && other.stdout == help.stdout, "\(form)")
            }
        }
    }

    /// Mistakes: one `vfx: error:` line, exit status 2, with the nearest name when one is close.
    @Test func usageErrorsAreOneLineWithSuggestions() throws {
        let cases: [(arguments: [String], mentions: String)] = [
            (["aply"], "did you mean apply"),
            (["filtres"], "did you mean filters"),
            (["help", "bnch"], "did you mean bench"),
            (["frobnicate"], "vfx help"),
            (["apply", "in.mp4", "-o", "out.mp4", "--crff", "20"], "did you mean --crf"),
            (["apply", "in.mp4", "-o", "out.mp4", "--fsp", "30"], "did you mean --fps"),
            (["model"], "model needs an action"),
            (["apply", "in.mp4", "-o", "out.mp4", "--crf", "070.0"], "'070.0'"),
            (["apply", "in.mp4", "-o", "out.mp4", "--start", "1:75"], "'1:75'"),
            (["apply", "in.mp4", "-o", "out.mp4", "--bitrate", "fast"], "'fast'"),
            (["apply", "in.mp4", "-o", "out.mp4", "--codec", "h266"], "h266"),
            (["apply", "in.mp4", "-o", "out.mp4", "--fps", "0"], "'0'"),
        ]
        for item in cases {
            let result = try CommandLineRun.vfx(item.arguments)
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 2 && lines.count == 1 && lines[0].hasPrefix("vfx: error: ") && lines[0].contains(item.mentions),
                    "\(item.arguments): \(result.stderr)")
        }
    }

    /// Filter chains: a bare "," is as empty as "sepia," (an error, not "no filter"), and numbers in
    /// messages come back as typed.
    @Test func chainErrors() throws {
        let photo = CommandLineRun.media("astronaut.png")
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out.png").path
        for (chain, mentions) in [(",", "empty filter name"), (",,", "empty filter name"), ("sepia,", "empty filter name"),
                                  ("sepia:intensity=1.50", "'1.50'"), ("gaussian-blur:radius=1e3", "'1e3'")] {
            let result = try CommandLineRun.vfx(["apply", photo, "-o", out, "--filter", chain, "--quiet"])
            #expect(result.status == 1 && result.stderr.contains(mentions) && result.stderr.split(separator: "\n").count == 1,
                    "\(chain): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A `.cube` file with Windows line ends (CRLF) loads and grades exactly like the same file with LF.
    @Test func cubeWithCRLFLoads() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A 2³ table that swaps red and blue.
        var lines = ["TITLE \"swap\"", "LUT_3D_SIZE 2"]
        for b in 0...1 { for g in 0...1 { for r in 0...1 { lines.append("\(b) \(g) \(r)") } } }
        var outputs: [Data] = []
        for (name, ending) in [("lf", "\n"), ("crlf", "\r\n")] {
            let cube = folder.appendingPathComponent("\(name).cube")
            try (lines.joined(separator: ending) + ending).write(to: cube, atomically: true, encoding: .utf8)
            let output = folder.appendingPathComponent("\(name).png").path
            let result = try CommandLineRun.vfx(["apply", CommandLineRun.media("astronaut.png"), "-o", output, "--filter",
                                                 "lut:file=\(cube.path)", "--quiet"])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        #expect(outputs.count == 2 && outputs[0] == outputs[1])
    }

    /// Output names up to the file system's limit (255 bytes) work: the temporary name is shortened, not
    /// made illegal. Also with multi-byte characters, cut on a character boundary.
    @Test(arguments: [String(repeating: "a", count: 251), String(repeating: "é", count: 125) + "x"])
    func longOutputNames(stem: String) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent(stem + ".mp4").path
        #expect((stem + ".mp4").utf8.count == 255)
        let result = try CommandLineRun.vfx(["apply", CommandLineRun.media("carphone_pristine.mp4"), "-o", output, "--frames", "5", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CommandLineRun.probe(output)["video"]?["nb_read_frames"] == "5")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [stem + ".mp4"])
    }

    /// Two MPEG-TS files joined with `cat` read as one clip: every frame, timestamps continuing across the
    /// join (ffprobe: strictly increasing, 4 s long within two frames).
    @Test func joinedTransportStreams() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let part = folder.appendingPathComponent("part.ts").path
        try CommandLineRun.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
                                   "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", part])
        var joined = try Data(contentsOf: URL(fileURLWithPath: part))
        joined.append(joined)
        let input = folder.appendingPathComponent("joined.ts")
        try joined.write(to: input)
        let output = folder.appendingPathComponent("out.mkv").path
        let result = try CommandLineRun.vfx(["apply", input.path, "-o", output, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try CommandLineRun.probe(output)["video"]?["nb_read_frames"] == "100")
        let times = try CommandLineRun.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time",
                                                                "-of", "csv=p=0", output])
        let values = String(decoding: times.stdout, as: UTF8.self).split(separator: "\n")
            .compactMap { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: ", "))) }
        #expect(values.count == 100 && zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
        #expect(abs((values.last ?? 0) - (values.first ?? 0) - 3.96) <= 0.08, "\(values.first ?? 0)…\(values.last ?? 0)")
    }

    /// An encoder that refuses the frame size says so (not "no such encoder"): x265 refuses 8×8, x264
    /// refuses odd sizes in 4:2:0. Nothing is left behind.
    @Test func encoderRefusalsNameTheReason() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (size, codec, mentions) in [("8:8", "hevc", "Image size is too small"), ("33:33", "h264", "even width and height")] {
            let input = folder.appendingPathComponent("tiny-\(size).png").path
            // lavfi's colour source rounds sizes to even numbers: scale to the odd size afterwards.
            try CommandLineRun.ffmpeg(["-f", "lavfi", "-i", "color=size=32x32", "-vf", "scale=\(size)", "-frames:v", "1", input])
            let output = folder.appendingPathComponent("out.mkv").path
            let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--codec", codec, "--quiet"])
            let line = result.stderr.trimmingCharacters(in: .newlines)
            #expect(result.status == 1 && line.contains("encoder refuses \(size.replacingOccurrences(of: ":", with: "x"))") && line.contains(mentions)
                    && !line.contains("has no") && !line.contains("\n"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["tiny-33:33.png", "tiny-8:8.png"])
    }

    /// SIGHUP (a closed terminal), SIGTERM and SIGINT stop `vfx apply` cleanly: status 130, one line, and
    /// the partial output removed.
    @Test(arguments: [SIGHUP, SIGTERM, SIGINT]) func signalsRemoveThePartialOutput(number: Int32) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.webm").path
        // VP9 at 720p is slow enough here that the run is still going when the partial file appears.
        let (status, stderr) = try CommandLineRun.vfx(["apply", ApplyOptionsTests.clip, "-o", output, "--quiet", "--threads", "1"],
                                                      signal: number) {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).contains { $0.contains(".partial-") }
        }
        #expect(status == 130 && stderr.contains("interrupted"), "\(status): \(stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// `vfx bench --filter` times a plain copy of the frames beside the chain (the memory floor): the JSON carries
    /// both times and their ratio, and the text output says it.
    @Test func benchTimesAPlainCopyBesideTheChain() throws {
        let arguments = ["bench", "--filter", "sepia", "--size", "64x48", "--frames", "3", "--repeats", "1", "--no-ffmpeg"]
        let json = try CommandLineRun.vfx(arguments + ["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        let processing = object?["processingSeconds"] as? Double ?? 0, copy = object?["copySeconds"] as? Double ?? 0
        let ratio = object?["copyRatio"] as? Double ?? 0
        #expect(processing > 0 && copy > 0)
        #expect(abs(ratio - processing / copy) <= 1e-9 * ratio)
        let text = try CommandLineRun.vfx(arguments)
        let output = String(decoding: text.stdout, as: UTF8.self)
        #expect(output.contains("a plain copy of the frame"), "\(output)")
    }

    /// `vfx bench --filter --pixel-format nv12` times VideoFX on NV12 frames and FFmpeg on the same frames as raw NV12
    /// (its floor and its graph both run, so their input and output options are right); the JSON says the format.
    /// Other formats are refused in one line that names the value.
    @Test func benchRunsBothSidesOnNV12() throws {
        let json = try CommandLineRun.vfx(["bench", "--filter", "invert", "--size", "64x48", "--frames", "3", "--repeats", "1",
                                           "--pixel-format", "nv12", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["pixelFormat"] as? String == "nv12", "\(object)")
        #expect(object["floorSeconds"] as? Double != nil && object["ffmpegSeconds"] as? Double != nil, "\(object)")
        #expect(object["ffmpegGraph"] as? String == "negate", "\(object)")
        let plain = try CommandLineRun.vfx(["bench", "--filter", "invert", "--size", "64x48", "--frames", "3", "--repeats", "1",
                                            "--no-ffmpeg", "--json"])
        let defaults = try #require(try JSONSerialization.jsonObject(with: plain.stdout) as? [String: Any])
        #expect(defaults["pixelFormat"] as? String == "i420", "\(defaults)")
        let refused = try CommandLineRun.vfx(["bench", "--filter", "invert", "--size", "64x48", "--pixel-format", "rgba"])
        let message = refused.stderr
        #expect(refused.status == 2 && message.contains("--pixel-format rgba") && message.split(separator: "\n").count == 1,
                "\(refused.status): \(message)")
    }

    /// `vfx bench --filter --input` names the input in its one-line error when the file is missing, empty or not
    /// video, and exits 1.
    @Test func benchErrorsNameTheInput() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.mp4").path, garbage = folder.appendingPathComponent("noise.mp4").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        FileManager.default.createFile(atPath: garbage, contents: Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        for input in [folder.appendingPathComponent("missing.mp4").path, empty, garbage] {
            let result = try CommandLineRun.vfx(["bench", "--filter", "sepia", "--input", input, "--frames", "2", "--repeats", "1"])
            #expect(result.status == 1 && result.stderr.contains(input) && result.stderr.split(separator: "\n").count == 1,
                    "\(result.status): \(result.stderr)")
        }
    }

    /// `vfx bench` keeps its files in a private folder (never a fixed name) and removes it on any exit: at the
    /// end of a run, on an error, and on SIGHUP or SIGTERM part-way.
    @Test func benchLeavesNothingBehind() throws {
        let parent = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let environment = ["VFX_BENCH_FOLDER": parent.path]
        func contents() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? [] }
        let finished = try CommandLineRun.vfx(["bench", "--filter", "sepia", "--size", "64x48", "--frames", "2", "--repeats", "1"],
                                              environment: environment)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(contents().isEmpty)
        let failed = try CommandLineRun.vfx(["bench", "--passthrough", "/nonexistent.mp4", "--repeats", "1"],
                                            environment: environment)
        #expect(failed.status == 1)
        #expect(contents().isEmpty)
        for number in [SIGHUP, SIGTERM] {
            var seen: [String] = []
            let (status, _) = try CommandLineRun.vfx(["bench", "--filter", "gaussian-blur:radius=20", "--size", "1920x1080", "--frames", "60",
                                                      "--repeats", "20"], environment: environment, signal: number) {
                seen = contents()
                return !seen.isEmpty
            }
            #expect(seen.count == 1 && seen[0].hasPrefix("vfx-bench-") && seen[0] != "vfx-bench-", "\(seen)")
            #expect(status == 128 + number, "exit \(status)")
            #expect(contents().isEmpty, "\(contents())")
        }
    }
}
