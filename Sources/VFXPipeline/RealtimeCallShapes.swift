import Foundation
import VFXCore

// The shapes call SDKs give their video effects, so code written for them ports by renaming (docs/porting.md):
// - a closure filter with an identity, like Stream's `VideoFilter(id:name:filter:)`: `VideoFilter`;
// - a processor that returns the frame or nil to drop it, like LiveKit's: `VideoProcessor` (VideoProcessor.swift);
// - an in-place I420 pre-processor on planes with strides, like Zoom's raw-data one: `InPlaceProcessor`;
// - a session whose filters can be set from any thread: `CallSession`.
// The audio filter shape (Stream's `AudioFilter`) belongs to VFXAudio: see `CallSession.setAudioFilter`'s place below.

/// A video effect with an identity: a closure from the original frame to the frame to send. Two filters are
/// the same filter when their ids match.
///
/// ```swift
/// let darken = VideoFilter(id: "darken", name: "Darken") { input in
///     var frame = input.originalFrame
///     frame.withMutablePlanes { planes in /* lower the luma */ }
///     return frame
/// }
/// session.setVideoFilter(darken)
/// ```
public struct VideoFilter: Sendable, Identifiable, Hashable {
    /// What the closure receives (Stream's `Input` carries the original image the same way).
    public struct Input: Sendable {
        public var originalFrame: VideoFrame
        public init(originalFrame: VideoFrame) { self.originalFrame = originalFrame }
    }

    public let id: String
    public let name: String
    let kind: Kind

    enum Kind: Sendable {
        case closure(@Sendable (Input) throws -> VideoFrame)
        case stage(@Sendable () -> any FrameProcessor)
    }

    /// A filter from a closure, called on the frame thread once per frame.
    public init(id: String, name: String, filter: @escaping @Sendable (Input) throws -> VideoFrame) {
        self.id = id
        self.name = name
        kind = .closure(filter)
    }

    /// A filter from a stage (a compiled filter chain, any `FrameProcessor`): `makeStage` makes the instance a
    /// session runs; the session configures it off the frame thread when it can.
    ///
    /// ```swift
    /// let sepia = VideoFilter(id: "sepia", name: "Sepia") { FilterChain([.sepia()]).makeProcessor(threads: 1) }
    /// ```
    public init(id: String, name: String, stage makeStage: @escaping @Sendable () -> any FrameProcessor) {
        self.id = id
        self.name = name
        kind = .stage(makeStage)
    }

    public static func == (a: VideoFilter, b: VideoFilter) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The video side of a call: the capture callback passes each frame through `process`, and the UI may call
/// `setVideoFilter` from any thread; the change applies from the next frame, with no frame stalled by
/// compiling (a stage filter is configured on the thread that sets it once the frame format is known).
///
/// ```swift
/// let session = CallSession()
/// session.setVideoFilter(darken)                            // any thread
/// if let out = try session.process(cameraFrame) { send(out) } // the capture thread
/// session.setVideoFilter(nil)                               // frames pass unchanged from the next one
/// ```
public final class CallSession: @unchecked Sendable {
    // Sendable: `requested`, `pending` and `format` are read and written only under `lock`; `active` and
    // `activeStage` are used only by the thread that calls `process` (one at a time, as for any stage); a
    // stage made by `setVideoFilter` is handed to that thread under the lock and not touched by the setter again.
    private let lock = NSLock()
    private var requested: VideoFilter?
    private var pending: Change?
    private var format: FrameFormat?
    private var active: VideoFilter?
    private var activeStage: (any FrameProcessor)?
    private var activeFormat: FrameFormat?

    private struct Change {
        let filter: VideoFilter?
        let stage: (any FrameProcessor)?
        let configuredFor: FrameFormat?
    }

    public init() {}

    /// The filter set last (applied from the next frame).
    public var videoFilter: VideoFilter? {
        lock.lock()
        defer { lock.unlock() }
        return requested
    }

    /// Sets the video filter (nil: none). Any thread; applies from the next frame. A stage filter is made and
    /// configured here when the session has seen a frame, so the frame thread only swaps it in.
    public func setVideoFilter(_ filter: VideoFilter?) {
        lock.lock()
        let known = format
        requested = filter
        lock.unlock()
        var stage: (any FrameProcessor)?
        var configured: FrameFormat?
        if case .stage(let make)? = filter?.kind {
            let made = make()
            if let known, (try? made.configure(for: known)) != nil { configured = known }
            stage = made
        }
        lock.lock()
        // A later call may have won meanwhile: keep only the change that matches the last request.
        if requested?.id == filter?.id { pending = Change(filter: filter, stage: stage, configuredFor: configured) }
        lock.unlock()
    }

    // The audio side, Stream's `setAudioFilter(_:)`, takes VFXAudio's `AudioFilter` (another module of the
    // package, built separately); it is added here once that module is part of the build.

    /// Runs the current filter on `frame` (the capture thread). nil when a stage drops the frame; a stage that
    /// emits several frames for one (a temporal effect) passes on the last.
    public func process(_ frame: VideoFrame) throws -> VideoFrame? {
        let frameFormat = FrameFormat(of: frame)
        lock.lock()
        format = frameFormat
        let change = pending
        pending = nil
        lock.unlock()
        if let change {
            activeStage?.release()
            active = change.filter
            activeStage = change.stage
            activeFormat = change.configuredFor
        }
        guard let active else { return frame }
        switch active.kind {
        case .closure(let filter):
            return try filter(VideoFilter.Input(originalFrame: frame))
        case .stage:
            guard let stage = activeStage else { return frame }
            if activeFormat != frameFormat {
                _ = try stage.configure(for: frameFormat)
                activeFormat = frameFormat
            }
            var last: VideoFrame?
            try stage.process(frame) { last = $0 }
            return last
        }
    }
}
