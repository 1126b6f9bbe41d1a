import Foundation
import VFXCore
import VFXFilters
import VFXPipeline
import XCTest

/// Helpers shared by the filter tests: FFmpeg as a subprocess, raw images, frames and PSNR.
enum TestSupport {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let astronaut = packageRoot.appendingPathComponent("media/astronaut.png").path

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "vfx-filters-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `ffmpeg` with `arguments` and fails the test with its message when it fails.
    static func ffmpeg(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-nostdin", "-hide_banner", "-v", "error", "-y"] + arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw NSError(domain: "ffmpeg", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: String(decoding: message, as: UTF8.self)])
        }
    }

    /// The image at `path` decoded by FFmpeg to raw `pixelFormat` bytes (FFmpeg's names: rgba, yuv420p).
    static func raw(_ path: String, pixelFormat: String, filter: String? = nil) throws -> [UInt8] {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = folder + "/out.raw"
        try ffmpeg(["-i", path] + (filter.map { ["-vf", $0] } ?? []) + ["-f", "rawvideo", "-pix_fmt", pixelFormat, output])
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// A frame holding tightly packed raw bytes (planes one after another, as FFmpeg's rawvideo writes them).
    static func frame(_ bytes: [UInt8], format: PixelFormat, width: Int, height: Int) -> VideoFrame {
        var frame = VideoFrame(format: format, width: width, height: height)
        frame.withMutablePlanes { planes in
            var cursor = 0
            for plane in planes {
                let rowBytes = plane.width * plane.bytesPerPixel
                for y in 0..<plane.height {
                    bytes.withUnsafeBufferPointer { plane.row(y).update(from: $0.baseAddress! + cursor, count: rowBytes) }
                    cursor += rowBytes
                }
            }
        }
        return frame
    }

    /// The visible bytes of `frame`, planes one after another.
    static func bytes(_ frame: VideoFrame) -> [UInt8] {
        var out: [UInt8] = []
        for plane in frame.planes {
            for y in 0..<plane.height {
                out.append(contentsOf: UnsafeBufferPointer(start: plane.row(y), count: plane.width * plane.bytesPerPixel))
            }
        }
        return out
    }

    /// `chain` applied to `frame` by a fresh processor (one thread unless `threads` says otherwise).
    static func apply(_ chain: String, to frame: VideoFrame, threads: Int = 1) throws -> VideoFrame {
        let processor = try FilterChain(parsing: chain).makeProcessor(threads: threads)
        _ = try processor.configure(for: FrameFormat(of: frame))
        return try XCTUnwrap(processor.process(frame))
    }

    /// Peak signal-to-noise ratio in dB of two byte arrays, skipping every `skip`-th byte (alpha) when asked.
    static func psnr(_ a: [UInt8], _ b: [UInt8], skipEvery skip: Int? = nil) -> Double {
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

    /// The largest absolute difference, skipping every `skip`-th byte when asked.
    static func maxDifference(_ a: [UInt8], _ b: [UInt8], skipEvery skip: Int? = nil) -> Int {
        var worst = 0
        for index in a.indices where skip.map({ index % $0 != $0 - 1 }) ?? true {
            worst = max(worst, abs(Int(a[index]) - Int(b[index])))
        }
        return worst
    }
}
