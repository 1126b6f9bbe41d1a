import Foundation
import VFXCore
import VFXTestSupport

/// Frames of the sample clips for the temporal tests, decoded by FFmpeg, and the measures the quality
/// protocol uses (Gaussian noise, PSNR of luma over a sequence from the mean squared error, as FFmpeg's
/// `psnr` filter reports it).
enum Clip {
    /// The first `count` frames of `media/<name>` as I420, timestamped at `rate` frames per second.
    static func frames(_ name: String, count: Int, width: Int, height: Int, rate: FrameRate) throws -> [VideoFrame] {
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", TestMedia.path(name), "-frames:v", "\(count)",
                                                           "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let bytes = [UInt8](result.stdout)
        let size = width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        return (0..<min(count, bytes.count / size)).map { index in
            var frame = RawFrames.frame(Array(bytes[index * size..<(index + 1) * size]), format: .i420, width: width, height: height)
            frame.timestamp = rate.frameDuration.scaled(Int64(index), 1)
            frame.duration = rate.frameDuration
            return frame
        }
    }

    /// `frame` with i.i.d. Gaussian noise of `sigma` code values added to every plane (rounded, clipped).
    static func noisy(_ frame: VideoFrame, sigma: Double, generator: inout SplitMix) -> VideoFrame {
        var copy = VideoFrame(format: frame.format, width: frame.width, height: frame.height)
        copy.timestamp = frame.timestamp
        copy.duration = frame.duration
        copy.withMutablePlanes { planes in
            for (source, target) in zip(frame.planes, planes) {
                for y in 0..<source.height {
                    for x in 0..<source.width {
                        let value = Double(source.row(y)[x]) + sigma * generator.gaussian()
                        target.row(y)[x] = UInt8(min(max(value.rounded(), 0), 255))
                    }
                }
            }
        }
        return copy
    }

    /// Sum of squared differences of two luma planes and their sample count.
    static func squaredError(_ a: VideoFrame, _ b: VideoFrame) -> (sum: Double, count: Int) {
        let p = a.plane(0), q = b.plane(0)
        var sum = 0.0
        for y in 0..<p.height {
            for x in 0..<p.width {
                let d = Double(p.row(y)[x]) - Double(q.row(y)[x])
                sum += d * d
            }
        }
        return (sum, p.width * p.height)
    }

    /// PSNR of luma over pairs of frames, from the mean squared error of all of them.
    static func psnr(_ pairs: [(VideoFrame, VideoFrame)]) -> Double {
        var sum = 0.0, count = 0
        for (a, b) in pairs {
            let e = squaredError(a, b)
            sum += e.sum
            count += e.count
        }
        return 10 * log10(255 * 255 / max(sum / Double(count), 1e-12))
    }
}

/// A small seeded generator (SplitMix64) with Box–Muller Gaussian samples: the same noise on every run.
struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) / Double(1 << 53) }

    mutating func gaussian() -> Double {
        (-2 * log(uniform())).squareRoot() * cos(2 * Double.pi * uniform())
    }
}
