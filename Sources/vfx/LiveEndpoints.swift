import Foundation
import VFXCore
import VFXMedia
import VFXPipeline

/// Opens the sources and sinks `vfx live` names.
///
/// ```swift
/// let source = try LiveEndpoints.openSource("testsrc:size=640x360:rate=30", loop: false)
/// let sink = try LiveEndpoints.openSink("udp://127.0.0.1:5000", frameRate: source.frames.format.frameRate)
/// ```
enum LiveEndpoints {
    /// A source with how it is paced and what to call it in messages.
    struct Source {
        let frames: any FrameSource
        let pacing: RealtimePacing
        let name: String
        let rotation: Rotation
    }

    /// A sink and whether it is a network stream (which `--reconnect` may reopen).
    struct Sink {
        let frames: any FrameSink
        let isNetwork: Bool
    }

    static func openSource(_ text: String, loop: Bool) throws -> Source {
        if text == "-" {
            guard !loop else { throw UsageError("--loop needs a file source, not standard input") }
            enlargePipe(STDIN_FILENO)
            return Source(frames: try MediaReader(path: "-", threads: 1), pacing: .arrival, name: "standard input", rotation: .none)
        }
        if text == "testsrc" || text.hasPrefix("testsrc:") {
            return Source(frames: try TestPatternSource(parsing: text), pacing: .timestamps, name: "testsrc", rotation: .none)
        }
        if text.hasPrefix("v4l2:") {
            var parts = text.dropFirst(5).split(separator: ":").map(String.init)
            guard !parts.isEmpty else { throw UsageError("v4l2: needs a device, e.g. v4l2:/dev/video0") }
            let device = parts.removeFirst()
            var size: (width: Int, height: Int)?, rate: FrameRate?, pixelFormat: String?
            for part in parts {
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { throw UsageError("\(text): expected key=value, got '\(part)'") }
                switch pair[0] {
                case "size":
                    let dims = pair[1].lowercased().split(separator: "x").compactMap { Int($0) }
                    guard dims.count == 2, dims[0] > 0, dims[1] > 0 else { throw UsageError("\(text): size must be WxH") }
                    size = (dims[0], dims[1])
                case "rate":
                    guard let fps = Int(pair[1]), fps > 0 else { throw UsageError("\(text): rate must be a positive integer") }
                    rate = FrameRate(fps)
                case "format":
                    guard ["mjpeg", "yuyv422"].contains(pair[1]) else { throw UsageError("\(text): format must be mjpeg or yuyv422") }
                    pixelFormat = pair[1]
                default:
                    throw UsageError("\(text): unknown option '\(pair[0])' (size, rate, format)")
                }
            }
            let camera = try CameraSource(device: device, size: size, rate: rate, pixelFormat: pixelFormat)
            return Source(frames: camera, pacing: .arrival, name: device, rotation: .none)
        }
        let reader = try MediaReader(path: text, threads: 1)
        guard reader.format.frameRate != nil else {
            throw MediaError.unsupportedInput(path: text, reason: "a still image has no frame rate to play at")
        }
        let rotation = reader.rotation
        if loop {
            var first: MediaReader? = reader
            let looping = try LoopingSource {
                if let reader = first {
                    first = nil
                    return reader
                }
                return try MediaReader(path: text, threads: 1)
            }
            return Source(frames: looping, pacing: .timestamps, name: text, rotation: rotation)
        }
        return Source(frames: reader, pacing: .timestamps, name: text, rotation: rotation)
    }

    /// True when `text` names a media file rather than standard input, the test pattern or a camera.
    static func isFile(source text: String) -> Bool {
        text != "-" && text != "testsrc" && !text.hasPrefix("testsrc:") && !text.hasPrefix("v4l2:")
    }

    /// The sink `text` names; with `audio`, one that also carries that track (a file or a stream).
    static func openSink(_ text: String, frameRate: FrameRate?, audio: LiveAudioTrack? = nil) throws -> Sink {
        if let audio {
            if ["udp://", "srt://", "rtmp://", "tcp://"].contains(where: { text.hasPrefix($0) }) {
                return Sink(frames: try StreamSink(url: text, frameRate: frameRate, audio: audio), isNetwork: true)
            }
            return Sink(frames: try MediaWriter(path: text, frameRate: frameRate, threads: 1, audio: audio), isNetwork: false)
        }
        if text == "null" { return Sink(frames: NullSink(), isNetwork: false) }
        if text == "-" { enlargePipe(STDOUT_FILENO) }
        if text.hasPrefix("v4l2:") {
            return Sink(frames: try VirtualCameraSink(device: String(text.dropFirst(5))), isNetwork: false)
        }
        if ["udp://", "srt://", "rtmp://", "tcp://"].contains(where: { text.hasPrefix($0) }) {
            return Sink(frames: try StreamSink(url: text, frameRate: frameRate), isNetwork: true)
        }
        return Sink(frames: try MediaWriter(path: text, frameRate: frameRate, threads: 1), isNetwork: false)
    }

    static func displayName(sink text: String) -> String { text == "-" ? "standard output" : text }

    /// Makes the pipe on `descriptor` (when it is one) hold 1 MiB, the usual most an unprivileged program may
    /// ask for, instead of 64 KiB: a 720p frame then crosses it in two writes instead of twenty-two, each of
    /// which would wake the other side. Left as it is when the system refuses.
    static func enlargePipe(_ descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return }
        let setPipeSize: Int32 = 1031   // F_SETPIPE_SZ (Linux), which Glibc's module does not export
        _ = fcntl(descriptor, setPipeSize, Int32(1 << 20))
    }
}
