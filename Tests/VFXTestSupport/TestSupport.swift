import Foundation
import VFXCore

/// Helpers every test target shares: the sample media, subprocesses (FFmpeg and `vfx` as references and
/// as users run them), raw frames in FFmpeg's rawvideo layout, and PSNR.

/// The sample media fetched by scripts/setup.sh.
public enum TestMedia {
    /// The package's root folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The path of `media/<name>`.
    public static func path(_ name: String) -> String { root.appendingPathComponent("media/\(name)").path }
}

/// Runs a program and collects what it printed.
public enum TestProcess {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: Data
        public let stderr: String
    }

    /// Runs `executable` with `arguments`, feeding `input` to standard input, and waits for it.
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> Result {
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
        let messages = LockedData()
        DispatchQueue.global().async { messages.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        messages.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: data, stderr: String(decoding: messages.data, as: UTF8.self))
    }
}

/// Bytes set once by one thread and read by another.
public final class LockedData: @unchecked Sendable {
    // Sendable: `stored` is only touched under `lock`; the semaphore is thread-safe.
    private let lock = NSLock()
    private let ready = DispatchSemaphore(value: 0)
    private var stored = Data()

    public init() {}

    public func set(_ data: Data) {
        lock.lock()
        stored = data
        lock.unlock()
        ready.signal()
    }

    /// Waits until `set` was called.
    public func wait() { ready.wait() }

    public var data: Data {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// Frames to and from tightly packed bytes, planes one after another (FFmpeg's rawvideo layout).
public enum RawFrames {
    /// A frame holding `bytes`; they must cover every plane.
    public static func frame(_ bytes: [UInt8], format: PixelFormat, width: Int, height: Int,
                             color: ColorDescription? = nil) -> VideoFrame {
        var frame = VideoFrame(format: format, width: width, height: height, color: color)
        frame.withMutablePlanes { planes in
            let needed = planes.reduce(0) { $0 + $1.width * $1.bytesPerPixel * $1.height }
            precondition(bytes.count >= needed, "raw frame too short: \(bytes.count) bytes for \(needed)")
            var offset = 0
            for plane in planes {
                let rowBytes = plane.width * plane.bytesPerPixel
                for y in 0..<plane.height {
                    bytes.withUnsafeBufferPointer { plane.row(y).update(from: $0.baseAddress! + offset, count: rowBytes) }
                    offset += rowBytes
                }
            }
        }
        return frame
    }

    /// A frame of `bytes` (as `frame(_:format:width:height:)`) with every byte past each row's end, its planes'
    /// padding, set to `padding`: what VideoFX never initialises, so no output may depend on it.
    public static func frame(_ bytes: [UInt8], format: PixelFormat, width: Int, height: Int, padding: UInt8) -> VideoFrame {
        var frame = self.frame(bytes, format: format, width: width, height: height)
        frame.withMutablePlanes { planes in
            for plane in planes {
                let used = plane.width * plane.bytesPerPixel
                for y in 0..<plane.height { (plane.row(y) + used).update(repeating: padding, count: plane.bytesPerRow - used) }
            }
        }
        return frame
    }

    /// The visible bytes of `frame`, planes one after another.
    public static func bytes(_ frame: VideoFrame) -> [UInt8] {
        var out: [UInt8] = []
        for plane in frame.planes {
            for y in 0..<plane.height {
                out.append(contentsOf: UnsafeBufferPointer(start: plane.row(y), count: plane.width * plane.bytesPerPixel))
            }
        }
        return out
    }
}

public enum Quality {
    /// Peak signal-to-noise ratio in dB of two byte arrays, skipping every `skip`-th byte (alpha) when asked.
    public static func psnr(_ a: [UInt8], _ b: [UInt8], skipEvery skip: Int? = nil) -> Double {
        precondition(a.count == b.count, "PSNR needs equal sizes")
        var sum = 0.0, count = 0
        for index in a.indices where skip.map({ index % $0 != $0 - 1 }) ?? true {
            let d = Double(a[index]) - Double(b[index])
            sum += d * d
            count += 1
        }
        let mse = sum / Double(max(count, 1))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
