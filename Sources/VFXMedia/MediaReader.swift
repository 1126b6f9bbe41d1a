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
/// for JPEG…), from a buffer pool, with timestamps, durations, rotation and color from the stream.
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
    /// The codec of the audio stream (`aac`, `opus`…), nil without audio. A `MediaWriter` given this
    /// reader keeps that stream.
    public let audioCodec: String?
    private let reader: any FrameReading
    private let decoder: LibavDecoder?

    /// Opens `path` and reads the stream headers (for FFmpeg's containers also the first frame, so a
    /// broken file fails here). `threads` is the video decoder's thread count (0: FFmpeg's choice).
    public init(path: String, threads: Int = 0) throws {
        self.path = path
        if path == "-" {
            let input = FileInput(descriptor: 0, name: "standard input", ownsDescriptor: false)
            do {
                reader = try Y4MFrameReader(input: input, fileSize: nil)
            } catch MediaError.corrupt(_, Y4MHeader.missingSignature) {
                throw MediaError.unsupportedInput(path: "standard input", reason: "only y4m is read from standard input")
            }
            decoder = nil
            containerName = "yuv4mpegpipe"
            duration = nil
            audioCodec = nil
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
            containerName = "yuv4mpegpipe"
            duration = nil
            audioCodec = nil
            return
        }
        if try MediaReader.startsWithY4MSignature(path), let y4m = try MediaReader.openY4M(path, size: size ?? 0) {
            reader = y4m
            decoder = nil
            containerName = "yuv4mpegpipe"
            duration = y4m.expectedFrameCount.map {
                MediaTime(value: Int64($0) * Int64(y4m.header.frameRate.denominator),
                          timescale: Int32(y4m.header.frameRate.numerator))
            }
            audioCodec = nil
            return
        }
        // "file:" keeps libavformat from reading a colon in the name as a protocol ("take:2.mp4").
        let libav = try LibavFrameReader(url: "file:" + path, name: path, threads: threads)
        reader = libav
        decoder = libav.decoder
        containerName = libav.decoder.containerName
        duration = libav.decoder.duration
        audioCodec = libav.decoder.audioCodec
    }

    /// True when the file has an audio stream.
    public var hasAudio: Bool { audioCodec != nil }

    /// The clockwise rotation a player applies to show the video upright (the stream's display matrix);
    /// `.none` for y4m and files without one.
    public var rotation: Rotation { decoder?.rotation ?? .none }

    /// Pixel format, size, color and frame rate of the frames (no frame rate for still images).
    public var format: FrameFormat { reader.format }

    /// The number of frames the container declares (or its duration implies); nil when unknown (pipes).
    public var expectedFrameCount: Int? { reader.expectedFrameCount }

    /// The next frame, nil at the end. Throws `MediaError.truncated` or `.corrupt` when the file breaks
    /// off or cannot be decoded mid-stream.
    public func nextFrame() throws -> VideoFrame? { try reader.nextFrame() }

    /// Pixel buffers allocated so far (a steady state stops increasing it).
    var bufferAllocations: Int { reader.bufferAllocations }

    /// Hands the audio track to a writer; nil without audio or after the first `nextFrame`.
    func attachAudio() -> AudioTrack? { decoder?.attachAudio() }

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
