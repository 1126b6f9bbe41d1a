import Foundation
import VFXTestSupport

/// Runs the built `vfx` binary as a user would, and reference tools (ffprobe, ffmpeg) beside it.
enum CommandLineRun {
    typealias Result = TestProcess.Result

    static let packageRoot = TestMedia.root

    static func media(_ name: String) -> String { TestMedia.path(name) }

    /// The `vfx` built next to the test bundle (the same build configuration).
    static var vfx: String {
        var folder = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("vfx")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder.deleteLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/release/vfx").path
    }

    /// Runs `executable` with `arguments`, feeding `input` to standard input, and waits for it.
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> Result {
        try TestProcess.run(executable, arguments, input: input)
    }

    static func vfx(_ arguments: [String], input: Data? = nil) throws -> Result { try run(vfx, arguments, input: input) }

    /// ffprobe's view of a file's streams: codec type → (frames, width, height, duration).
    static func probe(_ path: String) throws -> [String: [String: String]] {
        let result = try run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                    "stream=codec_type,codec_name,width,height,nb_read_frames,duration,pix_fmt",
                                                    "-of", "compact=p=0", path])
        var streams: [String: [String: String]] = [:]
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") {
            var fields: [String: String] = [:]
            for pair in line.split(separator: "|") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            if let type = fields["codec_type"] { streams[type] = fields }
        }
        return streams
    }

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

extension CommandLineRun {
    /// ffprobe's full view of a file's streams (`ffprobe -show_streams -of json`), in file order.
    static func streams(_ path: String) throws -> [[String: Any]] {
        let result = try run("/usr/bin/ffprobe", ["-v", "error", "-show_streams", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        return json?["streams"] as? [[String: Any]] ?? []
    }

    /// The streams of one type (`video`, `audio`, `subtitle`).
    static func streams(_ path: String, type: String) throws -> [[String: Any]] {
        try streams(path).filter { $0["codec_type"] as? String == type }
    }

    /// Runs ffmpeg (errors only) and throws with its message when it fails: test material is made with it.
    static func ffmpeg(_ arguments: [String]) throws {
        let result = try run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-y"] + arguments)
        guard result.status == 0 else { throw CommandFailure(description: "ffmpeg \(arguments.joined(separator: " ")): \(result.stderr)") }
    }

    /// The frames of a y4m file, each as its bytes (headers aside).
    static func y4mFrames(_ path: String) throws -> [Data] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let marker = Data("FRAME".utf8)
        var frames: [Data] = []
        var start = data.range(of: marker)
        while let current = start {
            let next = data.range(of: marker, in: current.upperBound..<data.endIndex)
            frames.append(data[current.lowerBound..<(next?.lowerBound ?? data.endIndex)])
            start = next
        }
        return frames
    }

    /// Runs `vfx` with extra environment variables and waits for it.
    static func vfx(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String) {
        try vfx(arguments, environment: environment, signal: 0) { false }
    }

    /// Starts `vfx` with `arguments` (and extra environment), waits until `ready` says so (polled every
    /// 20 ms, at most 60 s), sends `signal`, and returns the exit status and standard error.
    static func vfx(_ arguments: [String], environment: [String: String] = [:], signal number: Int32,
                    when ready: () -> Bool) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: vfx)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let messages = LockedData()
        DispatchQueue.global().async { messages.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        let deadline = Date().addingTimeInterval(60)
        while !ready() && process.isRunning && Date() < deadline { usleep(20_000) }
        if number != 0 && process.isRunning { kill(process.processIdentifier, number) }
        messages.wait()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: messages.data, as: UTF8.self))
    }
}

struct CommandFailure: Error, CustomStringConvertible {
    let description: String
}

/// Test clips made with the ffmpeg command: small (160×120, 2 s) so every test stays fast.
enum TestClips {
    /// A Matroska clip with everything a writer could lose: 10-bit H.264 tagged HDR (BT.2020 primaries, PQ
    /// transfer, BT.2020 matrix, limited range) with a 4:3 sample aspect ratio, two audio tracks (AAC, and
    /// Opus tagged French) and a SubRip subtitle stream with two cues.
    static func everything(in folder: URL) throws -> String {
        let subtitles = folder.appendingPathComponent("cues.srt")
        try "1\n00:00:00,000 --> 00:00:00,800\nHello\n\n2\n00:00:01,000 --> 00:00:01,500\nWorld\n"
            .write(to: subtitles, atomically: true, encoding: .utf8)
        let path = folder.appendingPathComponent("everything.mkv").path
        try CommandLineRun.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
            "-f", "lavfi", "-i", "sine=frequency=660:duration=2:sample_rate=44100", "-i", subtitles.path,
            "-map", "0", "-map", "1", "-map", "2", "-map", "3",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020",
            "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-color_range", "tv", "-aspect", "16:9",
            "-c:a:0", "aac", "-c:a:1", "libopus", "-metadata:s:a:1", "language=fra", "-c:s", "subrip", path,
        ])
        return path
    }

    /// An 8-bit SD-style clip at 1280×720 tagged BT.601 (smpte170m), anamorphic (SAR 64:45), with AAC audio:
    /// the size alone would suggest BT.709, so only carried tags keep BT.601.
    static func anamorphic601(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("anamorphic.mp4").path
        try CommandLineRun.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=0.4", "-f", "lavfi", "-i", "sine=duration=0.4",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-color_primaries", "smpte170m",
            "-color_trc", "smpte170m", "-colorspace", "smpte170m", "-color_range", "tv", "-vf", "setsar=64/45",
            "-c:a", "aac", path,
        ])
        return path
    }
}
