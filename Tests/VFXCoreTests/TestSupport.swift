import Foundation
import VFXCore

/// The sample media fetched by scripts/setup.sh.
enum TestMedia {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func path(_ name: String) -> String { root.appendingPathComponent("media/\(name)").path }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs the `ffmpeg` command as the independent reference.
enum FFmpegCLI {
    static func run(_ arguments: [String], input: [UInt8]? = nil) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-v", "error", "-nostdin"].filter { input == nil || $0 != "-nostdin" } + arguments
        let output = Pipe(), errors = Pipe(), feed = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input == nil ? FileHandle.nullDevice : feed
        try process.run()
        if let input {
            DispatchQueue.global().async {
                feed.fileHandleForWriting.write(Data(input))
                try? feed.fileHandleForWriting.close()
            }
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let messages = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure(description: "ffmpeg \(arguments.joined(separator: " ")): \(String(decoding: messages, as: UTF8.self))")
        }
        return [UInt8](data)
    }

    /// FFmpeg options that make swscale use `color` on the output side and on a raw input.
    static func colorFlags(_ color: ColorDescription) -> (output: [String], input: [String]) {
        let space = color.matrix == .bt709 ? "bt709" : "bt470bg"
        let range = color.range == .full ? "pc" : "tv"
        let filter = "scale=out_color_matrix=\(color.matrix == .bt709 ? "bt709" : "bt601"):out_range=\(color.range == .full ? "full" : "limited")"
        return (["-vf", filter], ["-colorspace", space, "-color_range", range])
    }
}

/// Packs frames to and from tightly packed bytes (FFmpeg's rawvideo layout).
enum FrameBytes {
    static func frame(_ bytes: [UInt8], format: PixelFormat, width: Int, height: Int, color: ColorDescription? = nil) throws -> VideoFrame {
        var frame = VideoFrame(format: format, width: width, height: height, color: color)
        var offset = 0
        try frame.withMutablePlanes { planes in
            for plane in planes {
                let rowBytes = plane.width * plane.bytesPerPixel
                guard offset + rowBytes * plane.height <= bytes.count else {
                    throw TestFailure(description: "raw frame too short: \(bytes.count) bytes")
                }
                for y in 0..<plane.height {
                    bytes.withUnsafeBufferPointer { plane.row(y).update(from: $0.baseAddress! + offset, count: rowBytes) }
                    offset += rowBytes
                }
            }
        }
        return frame
    }

    static func bytes(_ frame: VideoFrame) -> [UInt8] {
        var out: [UInt8] = []
        for plane in frame.planes {
            for y in 0..<plane.height {
                out.append(contentsOf: UnsafeBufferPointer(start: plane.row(y), count: plane.width * plane.bytesPerPixel))
            }
        }
        return out
    }
}

enum Quality {
    /// Peak signal-to-noise ratio in dB between two byte arrays (optionally interleaved channels, one ignored).
    static func psnr(_ a: [UInt8], _ b: [UInt8], channels: Int = 1, ignoring: Int? = nil) -> Double {
        precondition(a.count == b.count, "PSNR of arrays of different sizes")
        var sum = 0.0, count = 0
        for i in 0..<a.count where ignoring == nil || i % channels != ignoring! {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
            count += 1
        }
        return sum == 0 ? .infinity : 10 * log10(255 * 255 / (sum / Double(count)))
    }
}
