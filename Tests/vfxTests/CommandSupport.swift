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
