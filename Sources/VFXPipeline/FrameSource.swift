import VFXCore

/// Where frames come from: a file, a y4m pipe, an image, a camera.
///
/// ```swift
/// while let frame = try source.nextFrame() { … }
/// ```
public protocol FrameSource: AnyObject {
    /// The format of the frames `nextFrame` returns.
    var format: FrameFormat { get }
    /// How many frames the source will deliver, when the container says (for progress and ETA).
    var expectedFrameCount: Int? { get }
    /// The next frame in presentation order, or nil at the end.
    func nextFrame() throws -> VideoFrame?
}

/// Where frames go: a file, a y4m pipe, an image, a virtual camera.
///
/// A sink writes to a temporary name and makes the output visible only in `finish`; `cancel` removes
/// what was written, so a failed run leaves nothing behind.
public protocol FrameSink: AnyObject {
    /// Encodes and writes one frame.
    func write(_ frame: consuming VideoFrame) throws
    /// Flushes encoders, completes the file and moves it to its final name.
    func finish() throws
    /// Abandons the output and removes anything written so far.
    func cancel()
}
