import Foundation

/// Runs the built `vfx` binary as a user would, and reference tools (ffprobe, ffmpeg) beside it.
enum CommandLineRun {
    struct Result {
        let status: Int32
        let stdout: Data
        let stderr: String
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func media(_ name: String) -> String { packageRoot.appendingPathComponent("media/\(name)").path }

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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe(), feed = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input == nil ? FileHandle.nullDevice : feed
        try process.run()
        if let input {
            DispatchQueue.global().async {
                try? feed.fileHandleForWriting.write(contentsOf: input)
                try? feed.fileHandleForWriting.close()
            }
        }
        // Drain stderr on another thread so neither pipe can fill up and block the child.
        let errorData = ErrorBox()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: data, stderr: String(decoding: errorData.get(), as: UTF8.self))
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

/// Bytes handed from a reading thread.
final class ErrorBox: @unchecked Sendable {
    // Sendable: `data` is only touched under `lock`.
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
