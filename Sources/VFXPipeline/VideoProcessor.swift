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

/// Receives the frames a stage emits, in order. Throwing stops the stage (and the run).
public typealias FrameEmitter = (VideoFrame) throws -> Void

/// A stage of the pipeline in its general form: configure → process… → flush → release.
///
/// For each frame in, `process` emits zero, one or several frames through `emit` (a stage that holds one
/// frame emits nothing for the first; frame interpolation emits two per input). At the end of the stream the
/// runner calls `flush`, and the stage emits what it still holds, so nothing is lost. Every emitted frame
/// carries its own timestamp and duration; timestamps strictly increase. A stage may emit frames of another
/// size or format than it receives (say so in the format `configure` returns). It is used by one thread at a
/// time: runners call it serially. Most stages are one-in, one-out: write those as a `VideoProcessor`.
///
/// ```swift
/// /// Emits each frame twice, each copy lasting half as long.
/// final class Doubler: FrameProcessor {
///     func configure(for input: FrameFormat) throws -> FrameFormat { input }
///     func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
///         var first = frame
///         let half = first.duration.map { $0 / 2 }
///         first.duration = half
///         var second = first
///         second.timestamp = zip(first.timestamp, half).map { $0 + $1 }
///         try emit(first)
///         try emit(second)
///     }
///     func flush(emit: FrameEmitter) throws {}
/// }
/// ```
public protocol FrameProcessor: AnyObject {
    /// Prepares for frames of `input` (tables, buffers, kernels) and returns the format of the frames it
    /// emits. Called again when the input format changes (after a `flush`).
    func configure(for input: FrameFormat) throws -> FrameFormat
    /// Takes one frame and emits zero or more frames through `emit`, in order.
    func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws
    /// End of the stream: emits the frames the stage still holds. The stage is then ready for a new stream.
    func flush(emit: FrameEmitter) throws
    /// Frees what `configure` made. The stage may be configured again afterwards.
    func release()
}

extension FrameProcessor {
    public func release() {}

    /// Every frame that one input frame yields (tests, stills); with `flush`, also what the stage still held
    /// (a still image through a stage with latency).
    ///
    /// ```swift
    /// guard let output = try processor.frames(from: photo, flush: true).first else { … }
    /// ```
    public func frames(from frame: consuming VideoFrame, flush: Bool = false) throws -> [VideoFrame] {
        var outputs: [VideoFrame] = []
        try process(frame) { outputs.append($0) }
        if flush { try self.flush { outputs.append($0) } }
        return outputs
    }
}

/// The simple form of a stage: one frame in, the frame to pass on (or nil to drop it) out. It may write into
/// its input in place (`withMutablePlanes` copies only when the pixels are shared).
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
public protocol VideoProcessor: FrameProcessor {
    /// Processes one frame; nil drops it.
    func process(_ frame: consuming VideoFrame) throws -> VideoFrame?
}

extension VideoProcessor {
    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        if let output = try process(frame) { try emit(output) }
    }

    /// A one-in, one-out stage holds nothing.
    public func flush(emit: FrameEmitter) throws {}
}

/// Stages run one after another: itself a stage. What a stage emits goes to the next one at once; a frame
/// dropped by one stage skips the rest; `flush` flushes each stage in order, passing what it emits through
/// the stages after it.
///
/// ```swift
/// let chain = ProcessorChain([first, second])
/// let output = try chain.configure(for: format)
/// try chain.process(frame) { try sink.write($0) }
/// try chain.flush { try sink.write($0) }
/// ```
public final class ProcessorChain: FrameProcessor {
    public private(set) var stages: [any FrameProcessor]

    public init(_ stages: [any FrameProcessor]) {
        self.stages = stages
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        var format = input
        for stage in stages { format = try stage.configure(for: format) }
        return format
    }

    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        try stages.run(frame, from: 0, emit: emit)
    }

    public func flush(emit: FrameEmitter) throws {
        try stages.flush(emit: emit)
    }

    public func release() {
        for stage in stages { stage.release() }
    }
}

/// The walk down a list of stages that `ProcessorChain` and `KeyedStageChain` share.
extension Array where Element == any FrameProcessor {
    /// Passes `frame` through the stages from `index` on, then to `emit`.
    func run(_ frame: consuming VideoFrame, from index: Int, emit: FrameEmitter) throws {
        guard index < count else { return try emit(frame) }
        try self[index].process(frame) { try run($0, from: index + 1, emit: emit) }
    }

    /// Flushes, in order, the stages at the indices `included` accepts: what each one still holds goes on
    /// through the stages after it, so nothing is lost.
    func flush(emit: FrameEmitter, where included: (Int) -> Bool = { _ in true }) throws {
        for index in indices where included(index) {
            try self[index].flush { try run($0, from: index + 1, emit: emit) }
        }
    }
}
