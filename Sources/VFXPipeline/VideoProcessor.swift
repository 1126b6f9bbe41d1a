import VFXCore

/// What a stream of frames looks like: pixel format, size, color and (when known) frame rate.
public struct FrameFormat: Sendable, Hashable, CustomStringConvertible {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    public var color: ColorDescription
    /// Frames per second as a fraction (nil for still images or unknown rates).
    public var frameRate: FrameRate?

    public init(pixelFormat: PixelFormat, width: Int, height: Int, color: ColorDescription? = nil,
                frameRate: FrameRate? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.color = color ?? .typical(for: pixelFormat, width: width, height: height)
        self.frameRate = frameRate
    }

    /// The format of `frame` (no frame rate).
    public init(of frame: VideoFrame) {
        self.init(pixelFormat: frame.format, width: frame.width, height: frame.height, color: frame.color)
    }

    public var description: String { "\(pixelFormat) \(width)x\(height) \(color)" }
}

/// A stage that takes frames one at a time: configure → process… → release.
///
/// `process` returns the frame to pass on, or nil to drop it. It may write into its input in place
/// (`withMutablePlanes` copies only when the pixels are shared). A processor is used by one thread at a
/// time; the runners call it serially.
///
/// ```swift
/// final class Darken: VideoProcessor {
///     func configure(for format: FrameFormat) throws -> FrameFormat { format }
///     func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
///         var frame = frame
///         frame.withMutablePlanes { planes in /* halve the luma */ }
///         return frame
///     }
/// }
/// ```
public protocol VideoProcessor: AnyObject {
    /// Prepares for frames of `input` (tables, buffers, kernels) and returns the format of the frames it
    /// emits. Called again when the input format changes.
    func configure(for input: FrameFormat) throws -> FrameFormat
    /// Processes one frame; nil drops it.
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame?
    /// Frees what `configure` made. The processor may be configured again afterwards.
    func release()
}

extension VideoProcessor {
    public func release() {}
}

/// Processors run one after another: itself a processor. A frame dropped by one stage skips the rest.
///
/// ```swift
/// let chain = ProcessorChain([first, second])
/// let output = try chain.configure(for: format)
/// ```
public final class ProcessorChain: VideoProcessor {
    public private(set) var stages: [any VideoProcessor]

    public init(_ stages: [any VideoProcessor]) {
        self.stages = stages
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        var format = input
        for stage in stages { format = try stage.configure(for: format) }
        return format
    }

    public func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var current: VideoFrame? = frame
        for stage in stages {
            guard let next = current.take() else { return nil }
            current = try stage.process(next)
        }
        return current
    }

    public func release() {
        for stage in stages { stage.release() }
    }
}
