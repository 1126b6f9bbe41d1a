import Foundation
import VFXCore
import VFXTestSupport
import VFXFilters
import VFXPipeline

/// Images and exact references shared by the spatial and geometry tests.
enum SpatialFixtures {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Decodes `media/<name>` with the ffmpeg command into tightly packed bytes of `pixelFormat`
    /// (an FFmpeg name: gray, rgba, yuv420p, nv12), optionally scaled to `size`.
    static func decode(_ name: String, pixelFormat: String, size: (Int, Int)? = nil) throws -> [UInt8] {
        var arguments = ["-v", "error", "-nostdin", "-i", TestMedia.path(name), "-frames:v", "1"]
        if let size { arguments += ["-vf", "scale=\(size.0):\(size.1):flags=bicubic"] }
        arguments += ["-f", "rawvideo", "-pix_fmt", pixelFormat, "-"]
        let result = try TestProcess.run("/usr/bin/ffmpeg", arguments)
        guard result.status == 0, !result.stdout.isEmpty else {
            throw Failure(description: "ffmpeg could not decode media/\(name)")
        }
        return [UInt8](result.stdout)
    }

    /// FFmpeg's `filter` applied to `frame` (one plane layout named `name` in FFmpeg's terms), as a frame of
    /// `size` (the input's size when nil).
    static func ffmpeg(_ frame: VideoFrame, name: String, filter: String, size: (Int, Int)? = nil) throws -> VideoFrame {
        let input = RawFrames.bytes(frame)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-spatial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("in.raw")
        try Data(input).write(to: source)
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt", name,
                                                             "-s", "\(frame.width)x\(frame.height)", "-i", source.path, "-vf", filter,
                                                             "-f", "rawvideo", "-pix_fmt", name, "-"])
        guard result.status == 0 else { throw Failure(description: "ffmpeg -vf \(filter) failed") }
        let (width, height) = size ?? (frame.format == .gray8 || frame.format.isRGB || !filter.contains("transpose")
            ? (frame.width, frame.height) : (frame.height, frame.width))
        return RawFrames.frame([UInt8](result.stdout), format: frame.format, width: width, height: height)
    }

    /// `chain` run on `frame` through the public chain API (`threads` slices).
    static func apply(_ chain: String, to frame: VideoFrame, threads: Int = 2) throws -> VideoFrame {
        try TestSupport.apply(chain, to: frame, threads: threads)
    }

    /// The visible bytes of plane `index` as a `[[UInt8]]` (rows of `width * bytesPerPixel`). Takes the
    /// frame, not a `Plane`, so that the frame's memory stays alive while it is read.
    static func rows(_ frame: VideoFrame, _ index: Int) -> [[UInt8]] {
        withExtendedLifetime(frame) {
            let plane = frame.plane(index)
            return (0..<plane.height).map { y in Array(UnsafeBufferPointer(start: plane.row(y), count: plane.width * plane.bytesPerPixel)) }
        }
    }

    /// A separable convolution in Double with clamped (repeated-border) edges: each channel of each row,
    /// then each column, with `weights` centred (odd count). The reference for the blurs.
    static func convolve(_ rows: [[Double]], channels: Int, weights: [Double]) -> [[Double]] {
        let radius = weights.count / 2
        let height = rows.count, width = rows[0].count / channels
        var horizontal = rows
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    var sum = 0.0
                    for k in -radius...radius {
                        sum += weights[k + radius] * rows[y][min(max(x + k, 0), width - 1) * channels + c]
                    }
                    horizontal[y][x * channels + c] = sum
                }
            }
        }
        var result = horizontal
        for y in 0..<height {
            for i in 0..<(width * channels) {
                var sum = 0.0
                for k in -radius...radius { sum += weights[k + radius] * horizontal[min(max(y + k, 0), height - 1)][i] }
                result[y][i] = sum
            }
        }
        return result
    }

    /// Normalized Gaussian weights of standard deviation `sigma`, truncated at `ceil(5σ)`.
    static func gaussianWeights(sigma: Double) -> [Double] {
        let radius = Int((5 * sigma).rounded(.up))
        let raw = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        return raw.map { $0 / total }
    }

    /// PSNR in dB between two images of bytes or values on the 0…255 scale.
    static func psnr(_ a: [[Double]], _ b: [[Double]]) -> Double {
        var sum = 0.0, count = 0
        for (rowA, rowB) in zip(a, b) {
            for (x, y) in zip(rowA, rowB) { sum += (x - y) * (x - y); count += 1 }
        }
        return sum == 0 ? .infinity : 10 * log10(255 * 255 / (sum / Double(count)))
    }

    /// The photo as one plane of `format` (gray8 or rgba), 512×512.
    static func photo(_ format: PixelFormat) throws -> VideoFrame {
        let name = format == .rgba ? "rgba" : format == .gray8 ? "gray" : format == .nv12 ? "nv12" : "yuv420p"
        return RawFrames.frame(try decode("astronaut.png", pixelFormat: name), format: format, width: 512, height: 512)
    }

    /// Largest absolute difference between two images.
    static func maxDifference(_ a: [[Double]], _ b: [[Double]]) -> Double {
        zip(a, b).map { zip($0, $1).map { abs($0 - $1) }.max() ?? 0 }.max() ?? 0
    }

    /// `value` rounded half up and clamped to a byte, as the kernels store.
    static func byte(_ value: Double) -> Double { min(max((value).rounded(), 0), 255) }

    static func doubles(_ rows: [[UInt8]]) -> [[Double]] { rows.map { $0.map(Double.init) } }
}
