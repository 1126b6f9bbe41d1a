import Foundation
import VFXCore
import VFXPipeline

/// What `MediaReader` needs from a way of reading frames.
protocol FrameReading: AnyObject {
    var format: FrameFormat { get }
    var expectedFrameCount: Int? { get }
    var bufferAllocations: Int { get }
    func nextFrame() throws -> VideoFrame?
}

/// Reads the video frames of a file: any container FFmpeg opens (mp4, mkv, webm, mov, avi…), y4m (own fast
/// reader, also on standard input as `-`), and still images (PNG, JPEG: one frame).
///
/// Frames come in the nearest VideoFX pixel format (I420 for 4:2:0 video, RGBA for PNG, I420 full range
/// for JPEG…), from a buffer pool, with timestamps, durations, rotation and color from the stream. What the
/// frames cannot carry is kept on the reader for a writer: the colour tags (HDR included), the sample
/// aspect ratio, and every audio and subtitle stream.
///
/// With a `Trim`, reading starts at the key frame before `start` (frames before it are decoded and
/// skipped), stops after `duration` seconds or `frames` frames, and the timestamps (video, audio and
/// subtitles alike) count from `start`.
///
/// ```swift
/// let reader = try MediaReader(path: "media/bikes.mp4")
/// print(reader.format, reader.expectedFrameCount ?? 0)      // i420 640x272 bt601/limited, 250
/// while let frame = try reader.nextFrame() { … }
/// ```
///
/// A reader is used by one thread at a time (it may be handed from one thread to another).
public final class MediaReader: FrameSource {
    /// The path given to `init` (`-` for standard input).
    public let path: String
    /// FFmpeg's name for the container (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `png_pipe`,
    /// `yuv4mpegpipe`…).
    public let containerName: String
    /// The length of the video stream, when the container says.
    public let duration: MediaTime?
    /// The codec of the (first) audio stream (`aac`, `opus`…), nil without audio. A `MediaWriter` given
    /// this reader keeps every audio and subtitle stream.
    public let audioCodec: String?
    /// The part of the clip read.
    public private(set) var trim: Trim
    private let reader: any FrameReading
    private let decoder: LibavDecoder?
    private let libav: LibavFrameReader?
    /// Trimming state: the window in seconds of the frames' own time line, frames delivered, and the end.
    private var windowStart: Double = 0
    private var windowEnd: Double = .infinity
    private var delivered = 0
    private var skipped = 0
    private var deliveredEnd: Double?
    private var ended = false

    /// Opens `path` and reads the stream headers (for FFmpeg's containers also the first frame, so a
    /// broken file fails here). `threads` is the video decoder's thread count (0: FFmpeg's choice).
    public init(path: String, threads: Int = 0, trim: Trim = Trim()) throws {
        self.path = path
        self.trim = trim
        if path == "-" {
            let input = FileInput(descriptor: 0, name: "standard input", ownsDescriptor: false)
            do {
                reader = try Y4MFrameReader(input: input, fileSize: nil)
            } catch MediaError.corrupt(_, Y4MHeader.missingSignature) {
                throw MediaError.unsupportedInput(path: "standard input", reason: "only y4m is read from standard input")
            }
            decoder = nil
            libav = nil
            containerName = "yuv4mpegpipe"
            duration = nil
            audioCodec = nil
            setWindow(origin: 0)
            return
        }
        let size = try MediaReader.checkInput(path)
        if size == nil {
            // A named pipe or device (`/dev/stdin`, a shell's `<(…)`) cannot be peeked at and reopened: y4m.
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw MediaError.unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            do {
                reader = try Y4MFrameReader(input: FileInput(descriptor: descriptor, name: path, ownsDescriptor: true), fileSize: nil)
            } catch MediaError.corrupt(_, Y4MHeader.missingSignature) {
                throw MediaError.unsupportedInput(path: path, reason: "only y4m is read from a pipe")
            }
            decoder = nil
            libav = nil
            containerName = "yuv4mpegpipe"
            duration = nil
            audioCodec = nil
            setWindow(origin: 0)
            return
        }
        if try MediaReader.startsWithY4MSignature(path), let y4m = try MediaReader.openY4M(path, size: size ?? 0) {
            reader = y4m
            decoder = nil
            libav = nil
            containerName = "yuv4mpegpipe"
            duration = y4m.expectedFrameCount.map {
                MediaTime(value: Int64($0) * Int64(y4m.header.frameRate.denominator),
                          timescale: Int32(y4m.header.frameRate.numerator))
            }
            audioCodec = nil
            setWindow(origin: 0)
            return
        }
        // "file:" keeps libavformat from reading a colon in the name as a protocol ("take:2.mp4").
        let libav = try LibavFrameReader(url: "file:" + path, name: path, threads: threads, seekSeconds: trim.start)
        reader = libav
        self.libav = libav
        decoder = libav.decoder
        containerName = libav.decoder.containerName
        duration = libav.decoder.duration
        audioCodec = libav.decoder.audioCodec
        setWindow(origin: Double(libav.decoder.startMicroseconds) / 1e6)
    }

    /// Sets the trimmed window for a time line that starts at `origin` seconds.
    private func setWindow(origin: Double) {
        windowStart = origin + (trim.start ?? 0)
        windowEnd = trim.duration.map { windowStart + $0 } ?? .infinity
        guard !trim.isEmpty else { return }
        decoder?.limitTracks(from: Int64((windowStart * 1e6).rounded()),
                             until: windowEnd.isFinite ? Int64((windowEnd * 1e6).rounded()) : nil)
    }

    /// True when the file has an audio stream.
    public var hasAudio: Bool { audioCodec != nil }

    /// The clockwise rotation a player applies to show the video upright (the stream's display matrix);
    /// `.none` for y4m and files without one.
    public var rotation: Rotation { decoder?.rotation ?? .none }

    /// Pixel format, size, color and frame rate of the frames (no frame rate for still images).
    public var format: FrameFormat { reader.format }

    /// The number of frames the container declares (or its duration implies), within the trimmed part;
    /// nil when unknown (pipes).
    public var expectedFrameCount: Int? {
        guard var count = reader.expectedFrameCount else { return trim.frames }
        if let rate = format.frameRate {
            if let start = trim.start { count = max(0, count - Int((start * rate.framesPerSecond).rounded())) }
            if let duration = trim.duration { count = min(count, Int((duration * rate.framesPerSecond).rounded(.up))) }
        }
        count = max(0, count - trim.skipFrames)
        if let frames = trim.frames { count = min(count, frames) }
        return count
    }

    /// The colour tags of the video stream (all unspecified for y4m and images without them).
    public var colorTags: ColorTags { decoder?.colorTags ?? .unspecified }

    /// The sample aspect ratio the container or stream states, nil when it says nothing (square).
    public var sampleAspectRatio: SampleAspectRatio? { decoder?.sampleAspectRatio }

    /// The decoder's pixel format (`yuv420p10le`, `rgb48be`…); y4m's own reader reads 8-bit 4:2:0 and gray.
    public var sourcePixelFormat: String { libav?.sourcePixelFormat ?? (format.pixelFormat == .gray8 ? "gray" : "yuv420p") }

    /// The most bits per sample the source has (10 for HDR video, 16 for a 16-bit PNG). Frames have 8:
    /// above that, precision is lost (a writer keeps the tags, not the bits).
    public var sourceBitDepth: Int { libav?.sourceBitDepth ?? 8 }

    /// Streams of the file that no writer receives (data tracks, attachments, a second video).
    public var ignoredStreams: [StreamSummary] { decoder?.ignoredStreams ?? [] }

    /// The audio and subtitle streams a `MediaWriter` given this reader receives, in file order.
    public var passThroughStreams: [StreamSummary] { decoder?.passThroughStreams ?? [] }

    /// The next frame, nil at the end (of the file or of the trimmed part). Throws `MediaError.truncated`
    /// or `.corrupt` when the file breaks off or cannot be decoded mid-stream.
    public func nextFrame() throws -> VideoFrame? {
        guard !trim.isEmpty else { return try reader.nextFrame() }
        guard !ended else { return nil }
        if let limit = trim.frames, delivered >= limit { return stop() }
        while var frame = try reader.nextFrame() {
            let time = frame.timestamp?.seconds ?? format.frameRate.map { Double(delivered) / $0.framesPerSecond } ?? 0
            // A microsecond of slack: a frame at 1.0 s stored as 0.99999… still starts a range from 1 s.
            if time < windowStart - 1e-6 { continue }
            if time >= windowEnd - 1e-6 { return stop() }
            if skipped < trim.skipFrames {
                skipped += 1
                continue
            }
            if let timestamp = frame.timestamp, windowStart != 0 {
                let scale = timestamp.timescale
                frame.timestamp = MediaTime(value: timestamp.value - Int64((windowStart * Double(scale)).rounded()), timescale: scale)
            }
            delivered += 1
            deliveredEnd = time + (frame.duration?.seconds ?? format.frameRate.map { 1 / $0.framesPerSecond } ?? 0)
            return frame
        }
        ended = true
        return nil
    }

    /// Reads at most `count` frames (of what the trim leaves); for use before the first `nextFrame`.
    public func limitFrames(to count: Int) {
        trim.frames = min(trim.frames ?? .max, count)
    }

    /// Ends a trimmed read: the other streams are read up to the window's end.
    private func stop() -> VideoFrame? {
        ended = true
        if !windowEnd.isFinite, let deliveredEnd {
            // Cut by frame count: the other streams end where the last frame does.
            decoder?.limitTracks(from: Int64((windowStart * 1e6).rounded()), until: Int64((deliveredEnd * 1e6).rounded()))
        }
        decoder?.stopReading()
        return nil
    }

    /// Pixel buffers allocated so far (a steady state stops increasing it).
    var bufferAllocations: Int { reader.bufferAllocations }

    /// Hands the audio and subtitle streams to a writer; empty without them or after the first `nextFrame`.
    func attachTracks() -> [SourceTrack] { decoder?.attachTracks() ?? [] }

    /// Checks that `path` is readable and, for a regular file, not empty; returns the size of a regular
    /// file, nil for a pipe or device.
    private static func checkInput(_ path: String) throws -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw MediaError.missingFile(path: path) }
            throw MediaError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if info.st_mode & S_IFMT == S_IFDIR { throw MediaError.unreadable(path: path, reason: "it is a folder") }
        if info.st_mode & S_IFMT == S_IFREG && info.st_size == 0 { throw MediaError.emptyFile(path: path) }
        guard access(path, R_OK) == 0 else {
            throw MediaError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        return info.st_mode & S_IFMT == S_IFREG ? Int(info.st_size) : nil
    }

    /// The own y4m reader for `path`, nil for the chroma layouts it leaves to FFmpeg (4:2:2, 4:4:4, more
    /// than 8 bits), which the libav reader converts.
    private static func openY4M(_ path: String, size: Int) throws -> Y4MFrameReader? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw MediaError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        do {
            return try Y4MFrameReader(input: FileInput(descriptor: descriptor, name: path, ownsDescriptor: true), fileSize: size)
        } catch MediaError.unsupportedInput {
            return nil
        }
    }

    /// True when the file begins with `YUV4MPEG2` (y4m is recognized by its bytes, not its name).
    private static func startsWithY4MSignature(_ path: String) throws -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = try handle.read(upToCount: 9) ?? Data()
        return head == Data("YUV4MPEG2".utf8)
    }
}
