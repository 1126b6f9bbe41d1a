import Foundation
import VFXCore
import VFXPipeline

/// What a way of writing frames does for `MediaWriter`.
protocol FrameWriting: AnyObject {
    func write(_ frame: VideoFrame) throws
    /// Flushes and completes the file (still at its temporary name).
    func finish() throws
    /// Releases encoders and files; safe to call more than once.
    func close()
    /// Whether the encoded frames keep an alpha channel (known once the first frame is written).
    var keepsAlpha: Bool { get }
}

/// What happened to the source's (first) audio track.
public enum AudioOutcome: Sendable, Equatable, CustomStringConvertible {
    /// No audio: the source has none, or none was given.
    case none
    /// The packets were copied unchanged.
    case copied(codec: String)
    /// The container cannot hold the codec, so it was re-encoded (AAC into WebM becomes Opus).
    case reencoded(from: String, to: String)
    /// The output has no audio (y4m, images, GIF, or audio not wanted).
    case notStored(codec: String)

    public var description: String {
        switch self {
        case .none: "no audio"
        case .copied(let codec): "audio \(codec) copied"
        case .reencoded(let from, let to): "audio \(from) re-encoded to \(to)"
        case .notStored(let codec): "audio \(codec) dropped"
        }
    }
}

/// Writes frames to a file chosen by its extension: `.mp4`/`.m4v`, `.mov`, `.mkv` (H.264 unless
/// `EncodingOptions.codec` says otherwise), `.webm` (VP9), `.ts` (MPEG-TS, H.264), `.avi` (H.264),
/// `.gif`, `.y4m` (own fast writer; `-` writes y4m to standard output), `.png`, `.jpg`/`.jpeg` (one frame).
///
/// The file is written under a temporary name in the same folder (`.name.partial-XXXXXXXX.ext`, the name
/// shortened when needed so it stays within the file system's limit) and gets its name in `finish`;
/// `cancel` (or releasing an unfinished writer) removes it. Given the reader the frames come from, the
/// writer keeps what the frames cannot carry: every audio and subtitle stream (copied when the container
/// takes the codec, else re-encoded, else dropped and named in `tracks`), the colour tags (HDR stays HDR)
/// and the sample aspect ratio. Give the reader before reading its first frame.
///
/// ```swift
/// let reader = try MediaReader(path: "media/bigbuckbunny.mp4")
/// let writer = try MediaWriter(path: "out.webm", source: reader)
/// while let frame = try reader.nextFrame() { try writer.write(frame) }
/// try writer.finish()     // out.webm: VP9 video, the AAC audio re-encoded to Opus
/// ```
///
/// A writer is used by one thread at a time; the reader may run on another thread (audio and subtitle
/// packets travel between them through locked queues).
public final class MediaWriter: FrameSink {
    /// The output formats, by extension.
    public enum Kind: String, Sendable, CaseIterable {
        case mp4, mov, mkv, webm, ts, avi, gif, y4m, png, jpeg

        /// The kind for a file extension (case-insensitive), nil when unknown.
        public init?(extension ext: String) {
            switch ext.lowercased() {
            case "mp4", "m4v": self = .mp4
            case "mov": self = .mov
            case "mkv": self = .mkv
            case "webm": self = .webm
            case "ts", "m2ts", "mts": self = .ts
            case "avi": self = .avi
            case "gif": self = .gif
            case "y4m": self = .y4m
            case "png": self = .png
            case "jpg", "jpeg": self = .jpeg
            default: return nil
            }
        }

        /// True for the formats that hold one frame.
        public var isImage: Bool { self == .png || self == .jpeg }
    }

    /// The path given to `init` (`-` for standard output).
    public let path: String
    public let kind: Kind
    /// What happens to each audio and subtitle stream of the source, in file order.
    public let tracks: [TrackOutcome]
    /// Frames written so far (after frame-rate conversion).
    public private(set) var framesWritten = 0
    /// True once a frame with transparent pixels went into an encoding without alpha (H.264, JPEG…), which
    /// made them opaque: worth a warning, since `mask-to-alpha` and its like exist for the alpha.
    public private(set) var droppedAlpha = false
    private let temporaryPath: String?
    private let writer: any FrameWriting
    private var rateConverter: FrameRateConverter?
    private let frameLimit: Int
    private var done = false

    /// Checks the output (extension, folder, codec, encoder settings) and prepares writing; nothing is
    /// created yet for video containers.
    ///
    /// - Parameters:
    ///   - source: the reader the frames come from: its audio and subtitle streams, colour tags, sample
    ///     aspect ratio and pixel format are kept (give it before its first frame is read).
    ///   - frameRate: the frames' nominal rate when the filters change it (`interpolate` doubles it: give the
    ///     chain's output rate); nil: the source's.
    ///   - options: codec, quality and rate settings; `options.frameRate` converts the rate, while the
    ///     nominal rate above is the one the frames arrive at.
    ///   - filteredAudio: audio streams filtered by `AudioFiltering.filterTracks`, each written in place of
    ///     the source's stream it came from.
    public convenience init(path: String, source: MediaReader?, frameRate: FrameRate? = nil,
                            options: EncodingOptions = EncodingOptions(), filteredAudio: [FilteredAudio] = []) throws {
        try self.init(path: path, frameRate: frameRate ?? source?.format.frameRate, source: source, options: options,
                      filteredAudio: filteredAudio)
    }

    /// The writer with the default settings. `frameRate` defaults to what the frames' durations say
    /// (else 25); `threads` is the video encoder's thread count (0: the encoder's choice; y4m and images
    /// use none).
    public convenience init(path: String, frameRate: FrameRate? = nil, audioFrom source: MediaReader? = nil, threads: Int = 0) throws {
        try self.init(path: path, frameRate: frameRate, source: source, options: EncodingOptions(threads: threads))
    }

    /// `liveTracks`: tracks fed while the video is written (a live run's audio, `LiveAudioTrack`).
    init(path: String, frameRate nominalRate: FrameRate?, source: MediaReader?, options: EncodingOptions,
         filteredAudio: [FilteredAudio] = [], liveTracks: [SourceTrack] = []) throws {
        self.path = path
        rateConverter = options.frameRate.map { FrameRateConverter(rate: $0) }
        frameLimit = options.frameLimit ?? .max
        let frameRate = options.frameRate ?? nominalRate
        if path == "-" {
            if let first = options.encoderSettingsGiven.first {
                throw MediaError.invalidSetting(path: "standard output", reason: "\(first) applies to encoded video, not y4m")
            }
            kind = .y4m
            temporaryPath = nil
            signal(SIGPIPE, SIG_IGN)   // a closed pipe becomes a write error, not a silent exit
            writer = Y4MFrameWriter(descriptor: 1, ownsDescriptor: false, name: "standard output", frameRate: frameRate)
            tracks = MediaWriter.dropAll(source, reason: "y4m holds only video")
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
        let temporary = (folder as NSString).appendingPathComponent(MediaWriter.temporaryName(for: url.lastPathComponent))
        temporaryPath = temporary
        if kind == .y4m || kind.isImage, let first = options.encoderSettingsGiven.first {
            throw MediaError.invalidSetting(path: path, reason: "\(first) applies to encoded video (.mp4, .mkv, .webm…), not \(kind.rawValue)")
        }
        switch kind {
        case .mp4, .mov, .mkv, .webm, .ts, .avi, .gif:
            let recipe: ContainerFrameWriter.Recipe = switch kind {
            case .mp4: ContainerFrameWriter.mp4
            case .mov: ContainerFrameWriter.mov
            case .mkv: ContainerFrameWriter.matroska
            case .webm: ContainerFrameWriter.webm
            case .ts: ContainerFrameWriter.mpegts
            case .avi: ContainerFrameWriter.avi
            default: ContainerFrameWriter.gif
            }
            let container = try ContainerFrameWriter(
                url: "file:" + temporary, name: path, recipe: recipe, options: options, frameRate: frameRate,
                tracks: FilteredAudio.tracks(source?.attachTracks() ?? [], replacedBy: filteredAudio) + liveTracks, sourcePixelFormat: source?.sourcePixelFormat ?? "yuv420p",
                colorTags: source?.colorTags ?? .unspecified,
                sampleAspectRatio: options.sampleAspectRatio ?? source?.sampleAspectRatio ?? .square)
            writer = container
            tracks = container.tracks
        case .y4m:
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw MediaError.writeFailed(path: path, reason: String(cString: strerror(errno))) }
            writer = Y4MFrameWriter(descriptor: descriptor, ownsDescriptor: true, name: path, frameRate: frameRate)
            tracks = MediaWriter.dropAll(source, reason: "y4m holds only video")
        case .png, .jpeg:
            writer = try ImageFrameWriter(path: temporary, name: path, kind: kind == .png ? .png : .jpeg)
            tracks = MediaWriter.dropAll(source, reason: "an image holds only a picture")
        }
    }

    deinit { cancel() }

    /// What happened to the source's first audio stream.
    public var audio: AudioOutcome {
        guard let first = tracks.first(where: { $0.kind == .audio }) else { return .none }
        return switch first.action {
        case .copied: .copied(codec: first.codec)
        case .reencoded(let encoder): .reencoded(from: first.codec, to: encoder)
        case .dropped: .notStored(codec: first.codec)
        }
    }

    public func write(_ frame: consuming VideoFrame) throws {
        guard !done else { throw MediaError.unsupportedFrame(path: path, reason: "the output is already finished") }
        if rateConverter != nil {
            try rateConverter?.push(frame) { try writeOne($0) }
        } else {
            try writeOne(frame)
        }
    }

    private func writeOne(_ frame: VideoFrame) throws {
        guard framesWritten < frameLimit else { return }
        try writer.write(frame)
        framesWritten += 1
        if !droppedAlpha, frame.format.isRGB, !writer.keepsAlpha, !frame.isOpaque { droppedAlpha = true }
    }

    /// Completes the file and gives it its name (replacing an existing file).
    public func finish() throws {
        guard !done else { return }
        do {
            try rateConverter?.finish { try writeOne($0) }
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

    /// The hidden name the output is written under: `.STEM.partial-XXXXXXXX.EXT`, with STEM shortened (on a
    /// character boundary) so the whole name stays within NAME_MAX bytes (255) when the output's does.
    static func temporaryName(for fileName: String) -> String {
        let ext = (fileName as NSString).pathExtension
        let stem = (fileName as NSString).deletingPathExtension
        let suffix = ".partial-" + String(format: "%08x", UInt32.random(in: 0...UInt32.max)) + (ext.isEmpty ? "" : "." + ext)
        let room = max(0, Int(NAME_MAX) - 1 - suffix.utf8.count)
        var kept = ""
        for character in stem {
            guard kept.utf8.count + String(character).utf8.count <= room else { break }
            kept.append(character)
        }
        return "." + kept + suffix
    }

    /// Every stream of `source` as dropped, for outputs that hold only video.
    private static func dropAll(_ source: MediaReader?, reason: String) -> [TrackOutcome] {
        source?.passThroughStreams.map { TrackOutcome(kind: $0.kind, index: $0.index, codec: $0.codec, action: .dropped(reason: reason)) } ?? []
    }
}
