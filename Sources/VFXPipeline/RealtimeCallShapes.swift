import Foundation
import VFXCore

// The shapes call SDKs give their video effects, so code written for them ports by renaming (docs/porting.md):
// - a closure filter with an identity, like Stream's `VideoFilter(id:name:filter:)`: `VideoFilter`;
// - a processor that returns the frame or nil to drop it, like LiveKit's: `VideoProcessor` (VideoProcessor.swift);
// - an in-place I420 pre-processor on planes with strides, like Zoom's raw-data one: `InPlaceProcessor`;
// - an audio filter with an initialize → process → release lifecycle, like Stream's: `AudioFilter` (AudioFilter.swift;
//   VFXAudio's chains are ones);
// - a session whose video and audio filters can be set from any thread: `CallSession`.

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

/// The video and audio sides of a call: the capture callback passes each frame through `process` and the
/// audio callback each buffer through `processAudio`, and the UI may call `setVideoFilter` and
/// `setAudioFilter` from any thread; a change applies from the next frame or buffer, with neither stalled by
/// compiling or allocating (a stage filter is configured, an audio filter initialized, on the thread that sets
/// it once the format is known; a replaced audio filter is released on the next setter's thread, not the
/// audio thread).
///
/// ```swift
/// let session = CallSession()
/// session.setVideoFilter(darken)                            // any thread
/// if let out = try session.process(cameraFrame) { send(out) } // the capture thread
/// session.setVideoFilter(nil)                               // frames pass unchanged from the next one
/// session.setAudioFilter(try AudioChain(parsing: "noise-suppression").makeFilter())
/// try session.processAudio(microphoneBuffer)                // the audio thread, in place
/// ```
public final class CallSession: @unchecked Sendable {
    // Sendable: `requested`, `pending`, `format`, and on the audio side `audioRequested`, `audioPending`,
    // `audioFormat`, `audioTicket` and `retired`, are read and written only under `lock`; `active`,
    // `activeStage`, `activeFormat`, `activeAudio` and `activeAudioFormat` are used only by the thread that calls
    // `process` (or `processAudio`), one at a time, as for any stage; a stage or audio filter made by a setter
    // is handed to that thread under the lock and not touched by the setter again, and one the audio thread
    // replaced comes back through `retired` under the lock, to be released by a setter.
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

    private var audioRequested: (any AudioFilter)?
    private var audioPending: AudioChange?
    private var audioFormat: AudioFormat?
    private var audioTicket = 0
    private var retired: [any AudioFilter] = []
    private var activeAudio: (any AudioFilter)?
    private var activeAudioFormat: AudioFormat?

    private struct AudioFormat: Equatable {
        let rate: Int
        let channels: Int
    }

    private struct AudioChange {
        let filter: (any AudioFilter)?
        let initializedFor: AudioFormat?
    }

    /// The audio filter set last (applied from the next buffer).
    public var audioFilter: (any AudioFilter)? {
        lock.lock()
        defer { lock.unlock() }
        return audioRequested
    }

    /// Sets the audio filter (nil: none), like Stream's `setAudioFilter(_:)`. Any thread; applies from the next
    /// buffer. Once the session has seen a buffer, the filter is initialized here for its rate and channels, so
    /// the audio thread only swaps it in; filters replaced since the last call are released here too.
    public func setAudioFilter(_ filter: (any AudioFilter)?) {
        lock.lock()
        let known = audioFormat
        audioTicket += 1
        let ticket = audioTicket
        audioRequested = filter
        lock.unlock()
        var ready: AudioFormat?
        if let filter, let known, filter.sampleRate(near: known.rate) == known.rate,
           (try? filter.initialize(sampleRate: known.rate, channels: known.channels)) != nil {
            ready = known
        }
        lock.lock()
        var done = retired
        retired = []
        if ticket == audioTicket {
            if let superseded = audioPending?.filter { done.append(superseded) }
            audioPending = AudioChange(filter: filter, initializedFor: ready)
        } else if let filter {
            done.append(filter)   // a later call won meanwhile
        }
        lock.unlock()
        for old in done { old.release() }
    }

    /// Runs the current audio filter on `buffer`, in place (the audio thread); unchanged without one. The
    /// buffers must come at a rate the filter takes (`AudioFilter.sampleRate(near:)`), else this throws
    /// `CallSessionError.audioRate`. A filter set before the first buffer is initialized here, once.
    public func processAudio(_ buffer: AudioBuffer) throws {
        let format = AudioFormat(rate: buffer.sampleRate, channels: buffer.channelCount)
        lock.lock()
        audioFormat = format
        let change = audioPending
        audioPending = nil
        if change != nil, let replaced = activeAudio { retired.append(replaced) }
        lock.unlock()
        if let change {
            activeAudio = change.filter
            activeAudioFormat = change.initializedFor
        }
        guard let filter = activeAudio else { return }
        if activeAudioFormat != format {
            let wanted = filter.sampleRate(near: format.rate)
            guard wanted == format.rate else { throw CallSessionError.audioRate(filter: filter.id, wants: wanted, got: format.rate) }
            try filter.initialize(sampleRate: format.rate, channels: format.channels)
            activeAudioFormat = format
        }
        filter.process(buffer)
    }

    deinit {
        activeAudio?.release()
        audioPending?.filter?.release()
        for old in retired { old.release() }
    }

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

/// Misuse of a `CallSession`. Each description is one line.
public enum CallSessionError: Error, Equatable, CustomStringConvertible {
    /// The audio comes at a rate the filter does not run at.
    case audioRate(filter: String, wants: Int, got: Int)

    public var description: String {
        switch self {
        case .audioRate(let filter, let wants, let got):
            "the audio filter \(filter) runs at \(wants) Hz, the buffers come at \(got) Hz: resample them first"
        }
    }
}
