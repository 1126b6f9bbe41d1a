/// What can go wrong reading or writing media. Every description is one line that names the file.
///
/// ```swift
/// do { _ = try MediaReader(path: "missing.mp4") }
/// catch let error as MediaError { print(error) }   // "missing.mp4: no such file"
/// ```
public enum MediaError: Error, Equatable, CustomStringConvertible {
    /// The input does not exist.
    case missingFile(path: String)
    /// The input exists but has no bytes.
    case emptyFile(path: String)
    /// The input cannot be opened (permissions, a folder instead of a file…).
    case unreadable(path: String, reason: String)
    /// The input ends before its last frame is complete.
    case truncated(path: String, reason: String)
    /// The input's bytes are not valid media (a broken header, undecodable packets).
    case corrupt(path: String, reason: String)
    /// The input has no video stream or image.
    case noVideoStream(path: String)
    /// The input is valid media, but in a form VideoFX does not read (named in `reason`).
    case unsupportedInput(path: String, reason: String)
    /// The output's extension names no format VideoFX writes.
    case unknownOutputExtension(path: String)
    /// The output's folder does not exist.
    case missingOutputFolder(path: String, folder: String)
    /// This FFmpeg build lacks the encoder the output needs.
    case encoderUnavailable(path: String, encoder: String)
    /// The encoder exists but refuses these frames or settings (a size, a pixel format, a preset).
    case encoderRefused(path: String, encoder: String, reason: String)
    /// The output's container cannot hold the chosen codec (H.264 in WebM).
    case codecNotInContainer(path: String, codec: String, container: String, supported: [String])
    /// An encoding setting the chosen encoder does not have or does not accept (`--crf` for ProRes).
    case invalidSetting(path: String, reason: String)
    /// A frame cannot go into this output (wrong size, a second frame for an image…).
    case unsupportedFrame(path: String, reason: String)
    /// Writing failed (disk full, a closed pipe, an encoder error).
    case writeFailed(path: String, reason: String)

    /// The file the error is about ("standard input" or "standard output" for `-`).
    public var path: String {
        switch self {
        case .missingFile(let path), .emptyFile(let path), .unreadable(let path, _), .truncated(let path, _),
             .corrupt(let path, _), .noVideoStream(let path), .unsupportedInput(let path, _),
             .unknownOutputExtension(let path), .missingOutputFolder(let path, _), .encoderUnavailable(let path, _),
             .encoderRefused(let path, _, _), .codecNotInContainer(let path, _, _, _), .invalidSetting(let path, _),
             .unsupportedFrame(let path, _), .writeFailed(let path, _):
            path
        }
    }

    public var description: String {
        let name = path
        return switch self {
        case .missingFile: "\(name): no such file"
        case .emptyFile: "\(name): the file is empty"
        case .unreadable(_, let reason): "\(name): cannot read: \(reason)"
        case .truncated(_, let reason): "\(name): the file is truncated (\(reason))"
        case .corrupt(_, let reason): "\(name): the file is corrupt (\(reason))"
        case .noVideoStream: "\(name): no video stream"
        case .unsupportedInput(_, let reason): "\(name): not supported: \(reason)"
        case .unknownOutputExtension:
            "\(name): unknown output extension (use .mp4, .mov, .mkv, .webm, .ts, .avi, .gif, .y4m, .png, .jpg, or - for y4m on standard output)"
        case .missingOutputFolder(_, let folder): "\(name): the folder \(folder) does not exist"
        case .encoderUnavailable(_, let encoder): "\(name): this FFmpeg has no \(encoder) encoder"
        case .encoderRefused(_, let encoder, let reason): "\(name): the \(encoder) encoder refuses \(reason)"
        case .codecNotInContainer(_, let codec, let container, let supported):
            "\(name): \(container) files cannot hold \(codec) video"
                + (supported.isEmpty ? "" : " (it takes \(supported.joined(separator: ", ")))")
        case .invalidSetting(_, let reason): "\(name): \(reason)"
        case .unsupportedFrame(_, let reason): "\(name): \(reason)"
        case .writeFailed(_, let reason): "\(name): cannot write: \(reason)"
        }
    }
}
