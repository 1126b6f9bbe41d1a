import VFXCore

/// Plays a source again from the start each time it ends (`vfx live clip.mp4 --loop`): `open` makes a fresh
/// source, and each pass's timestamps continue after the previous pass's last frame, so they keep increasing.
///
/// ```swift
/// let looping = try LoopingSource { try MediaReader(path: "media/bikes.mp4") }
/// let runner = RealtimeRunner(source: looping, processor: chain, options: .init(pacing: .timestamps))
/// ```
public final class LoopingSource: FrameSource {
    private let open: () throws -> any FrameSource
    private var current: any FrameSource
    /// Added to the timestamps of the current pass (nil on the first).
    private var offset: MediaTime?
    private var end: MediaTime?
    private var framesThisPass = 0

    public init(open: @escaping () throws -> any FrameSource) throws {
        self.open = open
        current = try open()
    }

    public var format: FrameFormat { current.format }
    public var expectedFrameCount: Int? { nil }

    public func nextFrame() throws -> VideoFrame? {
        if var frame = try current.nextFrame() {
            framesThisPass += 1
            shift(&frame)
            return frame
        }
        // A source that yields nothing would loop forever without a frame.
        guard framesThisPass > 0 else { return nil }
        current = try open()
        framesThisPass = 0
        guard var frame = try current.nextFrame() else { return nil }
        framesThisPass = 1
        shift(&frame)
        return frame
    }

    /// Moves `frame` after the previous passes and remembers where it ends.
    private func shift(_ frame: inout VideoFrame) {
        guard let timestamp = frame.timestamp else { return }
        // A later pass starts where the previous one ended.
        if framesThisPass == 1, let end { offset = end - timestamp }
        let shifted = offset.map { timestamp + $0 } ?? timestamp
        frame.timestamp = shifted
        let duration = frame.duration ?? format.frameRate?.frameDuration ?? MediaTime(value: 1, timescale: 30)
        end = shifted + duration
    }
}
