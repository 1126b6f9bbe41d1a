import Foundation
import VFXCore
import VFXPipeline

/// What a way of writing frames does for `MediaWriter`.
protocol FrameWriting: AnyObject {
    var audio: AudioOutcome { get }
    func write(_ frame: VideoFrame) throws
    /// Flushes and completes the file (still at its temporary name).
    func finish() throws
    /// Releases encoders and files; safe to call more than once.
    func close()
}

/// What happened to the source's audio track.
public enum AudioOutcome: Sendable, Equatable, CustomStringConvertible {
    /// No audio: the source has none, or none was given.
    case none
    /// The packets were copied unchanged.
    case copied(codec: String)
    /// The container cannot hold the codec, so it was re-encoded (AAC into WebM becomes Opus).
    case reencoded(from: String, to: String)
    /// The output format has no audio (y4m, images).
    case notStored(codec: String)

    public var description: String {
        switch self {
        case .none: "no audio"
        case .copied(let codec): "audio \(codec) copied"
        case .reencoded(let from, let to): "audio \(from) re-encoded to \(to)"
        case .notStored(let codec): "audio \(codec) dropped (the output format has no audio)"
        }
    }
}

/// Writes frames to a file chosen by its extension: `.mp4`/`.mov`/`.mkv` (H.264), `.webm` (VP9), `.y4m`
/// (own fast writer; `-` writes y4m to standard output), `.png`, `.jpg`/`.jpeg` (one frame).
///
/// The file is written under a temporary name in the same folder (`.name.partial-XXXXXX.ext`) and gets
/// its name in `finish`; `cancel` (or releasing an unfinished writer) removes it. Given the reader the
/// frames come from, the writer keeps its audio: copied when the container takes the codec, else
/// re-encoded. Attach before reading the first frame.
///
/// ```swift
/// let reader = try MediaReader(path: "media/bigbuckbunny.mp4")
/// let writer = try MediaWriter(path: "out.webm", frameRate: reader.format.frameRate, audioFrom: reader)
/// while let frame = try reader.nextFrame() { try writer.write(frame) }
/// try writer.finish()     // out.webm: VP9 video, the AAC audio re-encoded to Opus
/// ```
///
/// A writer is used by one thread at a time; the reader may run on another thread (audio packets travel
/// between them through a locked queue).
public final class MediaWriter: FrameSink {
    /// The output formats, by extension.
    public enum Kind: String, Sendable, CaseIterable {
        case mp4, mov, mkv, webm, y4m, png, jpeg

        /// The kind for a file extension (case-insensitive), nil when unknown.
        public init?(extension ext: String) {
            switch ext.lowercased() {
            case "mp4", "m4v": self = .mp4
            case "mov": self = .mov
            case "mkv": self = .mkv
            case "webm": self = .webm
            case "y4m": self = .y4m
            case "png": self = .png
            case "jpg", "jpeg": self = .jpeg
            default: return nil
            }
        }
    }

    /// The path given to `init` (`-` for standard output).
    public let path: String
    public let kind: Kind
    /// What happens to the source's audio.
    public let audio: AudioOutcome
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private let temporaryPath: String?
    private let writer: any FrameWriting
    private var done = false

    /// Checks the output (extension, folder, encoders) and prepares writing; nothing is created yet for
    /// video containers. `frameRate` defaults to what the frames' durations say (else 25);
    /// `threads` is the video encoder's thread count (0: the encoder's choice; y4m and images use none).
    ///
    /// `filteredAudio` (from `AudioFiltering.filterTrack`) replaces the source's audio track.
    public init(path: String, frameRate: FrameRate? = nil, audioFrom source: MediaReader? = nil, filteredAudio: FilteredAudio? = nil,
                threads: Int = 0) throws {
        self.path = path
        if path == "-" {
            kind = .y4m
            temporaryPath = nil
            signal(SIGPIPE, SIG_IGN)   // a closed pipe becomes a write error, not a silent exit
            writer = Y4MFrameWriter(descriptor: 1, ownsDescriptor: false, name: "standard output", frameRate: frameRate)
            audio = source?.audioCodec.map { .notStored(codec: $0) } ?? .none
            return
        }
        let url = URL(fileURLWithPath: path)
        guard let kind = Kind(extension: url.pathExtension) else { throw MediaError.unknownOutputExtension(path: path) }
        self.kind = kind
        let given = (path as NSString).deletingLastPathComponent
        let folder = given.isEmpty ? "." : given
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw MediaError.missingOutputFolder(path: path, folder: folder)
        }
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent).partial-\(suffix).\(url.pathExtension)").path
        temporaryPath = temporary
        switch kind {
        case .mp4, .mov, .mkv, .webm:
            let recipe: ContainerFrameWriter.Recipe = switch kind {
            case .mp4: ContainerFrameWriter.mp4
            case .mov: ContainerFrameWriter.mov
            case .mkv: ContainerFrameWriter.matroska
            default: ContainerFrameWriter.webm
            }
            let container = try ContainerFrameWriter(url: "file:" + temporary, name: path, recipe: recipe, frameRate: frameRate,
                                                     audio: filteredAudio?.track ?? source?.attachAudio(), threads: threads)
            writer = container
            audio = container.audio
        case .y4m:
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw MediaError.writeFailed(path: path, reason: String(cString: strerror(errno))) }
            writer = Y4MFrameWriter(descriptor: descriptor, ownsDescriptor: true, name: path, frameRate: frameRate)
            audio = source?.audioCodec.map { .notStored(codec: $0) } ?? .none
        case .png, .jpeg:
            writer = try ImageFrameWriter(path: temporary, name: path, kind: kind == .png ? .png : .jpeg)
            audio = source?.audioCodec.map { .notStored(codec: $0) } ?? .none
        }
    }

    deinit { cancel() }

    public func write(_ frame: consuming VideoFrame) throws {
        guard !done else { throw MediaError.unsupportedFrame(path: path, reason: "the output is already finished") }
        try writer.write(frame)
        framesWritten += 1
    }

    /// Completes the file and gives it its name (replacing an existing file).
    public func finish() throws {
        guard !done else { return }
        do {
            try writer.finish()
        } catch {
            cancel()
            throw error
        }
        done = true
        writer.close()
        if let temporaryPath, rename(temporaryPath, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw MediaError.writeFailed(path: path, reason: reason)
        }
    }

    /// Abandons the output and removes the temporary file.
    public func cancel() {
        guard !done else { return }
        done = true
        writer.close()
        if let temporaryPath { unlink(temporaryPath) }
    }
}
