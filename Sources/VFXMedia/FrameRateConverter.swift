import VFXCore

/// Repeats or drops frames to fill a constant output rate, as FFmpeg's `fps` filter does (rounding to the
/// nearest slot): an input frame at `t` seconds after the first one owns output slots from
/// `round(t × rate)`, each slot shows the latest frame that owns it, and the last frame lasts its own
/// duration. 25 fps → 50 fps shows every frame twice; 50 fps → 25 fps keeps every other frame; the length
/// of the clip is kept.
///
/// ```swift
/// var converter = FrameRateConverter(rate: FrameRate(30))
/// try converter.push(frame) { try writer.write($0) }
/// try converter.finish { try writer.write($0) }
/// ```
struct FrameRateConverter {
    let rate: FrameRate
    private var held: VideoFrame?
    private var heldStart = 0.0
    private var origin: Double?
    private var next: Int64 = 0
    private var pushed = 0

    init(rate: FrameRate) { self.rate = rate }

    /// Takes `frame`; emits the output frames the previous one fills.
    mutating func push(_ frame: VideoFrame, emit: (VideoFrame) throws -> Void) throws {
        let start = frame.timestamp?.seconds ?? Double(pushed) / rate.framesPerSecond
        pushed += 1
        if origin == nil { origin = start }
        try emitHeld(until: start, emit: emit)
        held = frame
        heldStart = start
    }

    /// Emits what the last frame fills (its duration, else one output frame).
    mutating func finish(emit: (VideoFrame) throws -> Void) throws {
        guard let held else { return }
        let length = held.duration?.seconds ?? 1 / rate.framesPerSecond
        try emitHeld(until: heldStart + max(length, 1e-9), emit: emit)
        self.held = nil
    }

    /// Emits the held frame for every slot a frame starting at `end` would not own: slot n while
    /// `(end − origin) × rate ≥ n + ½` (halves round up, as FFmpeg's rounding does; 1e-6 of slack).
    private mutating func emitHeld(until end: Double, emit: (VideoFrame) throws -> Void) throws {
        guard let held, let origin else { return }
        while (end - origin) * rate.framesPerSecond >= Double(next) + 0.5 - 1e-6 {
            var frame = held
            frame.timestamp = MediaTime(value: next * Int64(rate.denominator), timescale: Int32(clamping: rate.numerator))
            frame.duration = rate.frameDuration
            try emit(frame)
            next += 1
        }
    }
}
