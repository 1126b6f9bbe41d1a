import VFXCore
import VFXFilters
import VFXPipeline

extension FilterSpec {
    /// Motion-compensated frame interpolation with one frame of latency (see `FrameInterpolator`).
    ///
    /// - `factor`: integer 2…8 (default 2): `factor − 1` frames are made between each two inputs. With 2,
    ///   output frame 2k is input frame k unchanged and frame 2k+1 lies halfway between inputs k and k+1; the
    ///   last input frame is repeated so the duration is kept (N frames in, 2N out).
    /// - `fps`: number 0…1000 (default 0: use `factor`): any output rate instead; each output time between
    ///   two inputs is made at its phase (an input frame itself where the time falls on it). `factor` is not used
    ///   then, so giving both is refused (`interpolate: fps must be 0 when factor is given, got '60'`).
    /// - Formats: i420, gray8. Every output frame has its own timestamp and a duration of one output frame.
    /// - Threads: the planes of a made frame are made side by side on the chain's threads, same output.
    ///
    /// Chain: `interpolate:factor=2` · Swift: `try FilterDescription.interpolate(factor: 2)`
    public static let interpolate = FilterSpec(
        name: "interpolate",
        summary: "Makes in-between frames: bidirectional motion, overlapped blocks, occlusions taken from the side where visible.",
        parameters: [ParameterSpec("factor", .integer(2...8), default: 2, "output frames per input frame", only: .when("fps", equals: 0)),
                     ParameterSpec("fps", .number(0...1000), default: 0, "output frame rate (0: input rate × factor)")],
        pixelFormats: [.i420, .gray8],
        example: "interpolate:factor=2", swift: "try FilterDescription.interpolate(factor: 2)",
        ffmpeg: { arguments in  // `source_fps` stands for the input's rate (`vfx bench` writes it in)
            let fps = arguments.number("fps")
            return "minterpolate=fps=\(fps > 0 ? "\(fps)" : "source_fps*\(arguments.integer("factor"))"):mi_mode=mci"
        }
    ) { arguments, context in
        let fps = arguments.number("fps")
        return .processor(InterpolateProcessor(factor: arguments.integer("factor"), fps: fps > 0 ? fps : nil,
                                               slices: context.slices))
    }
}

extension FilterDescription {
    public static func interpolate(factor: Int = 2) throws -> FilterDescription {
        try FilterDescription("interpolate", ["factor": .integer(factor)])
    }

    public static func interpolate(fps: Double) throws -> FilterDescription {
        try FilterDescription("interpolate", ["fps": .number(fps)])
    }
}

/// The `interpolate` stage: emits each input frame, and when the next one arrives the frames between them.
public final class InterpolateProcessor: FrameProcessor {
    public let factor: Int
    public let fps: Double?
    /// The planes of each made frame are split between its threads (the motion search stays on one).
    public let slices: SliceRunner
    private var interpolator: FrameInterpolator?
    private var pool: BufferPool?
    private var inputRate: FrameRate?
    private var previous: VideoFrame?
    /// The previous frame's pyramid is in the interpolator (the next pair can reuse it).
    private var continuing = false
    /// Output time grid for `fps`: the next output time to emit, in seconds.
    private var nextOutputTime: Double?
    private var outputStep: MediaTime?

    public init(factor: Int, fps: Double?, slices: SliceRunner = SliceRunner(threads: 1)) {
        self.factor = max(2, factor)
        self.fps = fps
        self.slices = slices
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        try checkTemporalInput(input, filter: "interpolate")
        interpolator = FrameInterpolator(width: input.width, height: input.height, chroma: input.pixelFormat == .i420,
                                         slices: slices)
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height)
        inputRate = input.frameRate
        previous = nil
        continuing = false
        nextOutputTime = nil
        var output = input
        if let fps {
            // Exact to a thousandth of a frame per second (29.97 → 29970/1000).
            let rate = FrameRate(Int((fps * 1000).rounded()), 1000)
            output.frameRate = rate
            outputStep = MediaTime(value: 1000, timescale: Int32(clamping: rate.numerator))
        } else if let rate = input.frameRate {
            output.frameRate = FrameRate(rate.numerator * factor, rate.denominator)
        }
        return output
    }

    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        let frame = frame
        if interpolator.map({ $0.width != frame.width || $0.height != frame.height }) ?? true {
            try flush(emit: emit)
            _ = try configure(for: FrameFormat(of: frame))
        }
        guard let previous else {
            self.previous = frame
            continuing = false
            if fps == nil { try emit(shortened(frame, interval: frameInterval(after: frame))) }
            return
        }
        let interval = interval(from: previous, to: frame)
        if let fps {
            try emitGrid(from: previous, to: frame, interval: interval, fps: fps, emit: emit)
        } else {
            try emitBetween(previous, frame, interval: interval, emit: emit)
            try emit(shortened(frame, interval: frameInterval(after: frame) ?? interval))
        }
        self.previous = frame
    }

    public func flush(emit: FrameEmitter) throws {
        defer {
            previous = nil
            continuing = false
            nextOutputTime = nil
        }
        guard let last = previous else { return }
        let interval = frameInterval(after: last)
        if let fps {
            // Output times up to the end of the last frame show the last frame.
            guard let start = last.timestamp, let interval, let step = outputStep else { return try emit(last) }
            let end = (start + interval).seconds
            var time = nextOutputTime ?? start.seconds
            while time < end - 1e-9 {
                var copy = last
                copy.timestamp = timestamp(seconds: time, step: step)
                copy.duration = step
                try emit(copy)
                time += 1 / fps
            }
            nextOutputTime = time
        } else {
            // The last frame repeated so the output lasts as long as the input.
            for index in 1..<factor {
                var copy = last
                if let start = last.timestamp, let interval {
                    copy.timestamp = start + interval.scaled(Int64(index), Int64(factor))
                    copy.duration = interval.scaled(1, Int64(factor))
                }
                try emit(copy)
            }
        }
    }

    public func release() {
        interpolator = nil
        pool = nil
        previous = nil
    }

    /// A frame's own duration, else one frame at the input rate.
    private func frameInterval(after frame: VideoFrame) -> MediaTime? {
        frame.duration ?? inputRate.map(\.frameDuration)
    }

    /// Time between two inputs: their timestamps' difference, else the first one's duration.
    private func interval(from first: VideoFrame, to second: VideoFrame) -> MediaTime? {
        if let a = first.timestamp, let b = second.timestamp, a < b { return b - a }
        return frameInterval(after: first)
    }

    /// `frame` lasting 1/factor of `interval`.
    private func shortened(_ frame: VideoFrame, interval: MediaTime?) -> VideoFrame {
        var frame = frame
        if let interval { frame.duration = interval.scaled(1, Int64(factor)) }
        return frame
    }

    /// The frames strictly between `first` and `second` at phases 1/factor … (factor−1)/factor.
    private func emitBetween(_ first: VideoFrame, _ second: VideoFrame, interval: MediaTime?, emit: FrameEmitter) throws {
        guard let interpolator else { return }
        interpolator.setPair(first: first.planes, second: second.planes, continuing: continuing)
        continuing = true
        for index in 1..<factor {
            var output = first.makeSibling(pool: pool)
            output.attachments = FrameAttachments()
            let phase = Float(index) / Float(factor)
            output.withMutablePlanes(pool: pool) { interpolator.interpolate(phase: phase, into: $0) }
            if let start = first.timestamp, let interval {
                output.timestamp = start + interval.scaled(Int64(index), Int64(factor))
                output.duration = interval.scaled(1, Int64(factor))
            } else {
                output.timestamp = nil
            }
            try emit(output)
        }
    }

    /// For `fps`: every output time in [first, second) — the first frame where the time falls on it,
    /// else a frame made at its phase.
    private func emitGrid(from first: VideoFrame, to second: VideoFrame, interval: MediaTime?, fps: Double,
                          emit: FrameEmitter) throws {
        guard let interpolator, let step = outputStep, let start = first.timestamp, let interval else {
            // Without timestamps there is no time grid: pass the frames through.
            try emit(first)
            return
        }
        let begin = start.seconds, span = interval.seconds
        var time = nextOutputTime ?? begin
        var paired = false
        while time < begin + span - 1e-9 {
            let phase = Float((time - begin) / span)
            var output: VideoFrame
            if phase < 1e-3 {
                output = first
            } else {
                if !paired {
                    interpolator.setPair(first: first.planes, second: second.planes, continuing: false)
                    paired = true
                }
                output = first.makeSibling(pool: pool)
                output.attachments = FrameAttachments()
                output.withMutablePlanes(pool: pool) { interpolator.interpolate(phase: phase, into: $0) }
            }
            output.timestamp = timestamp(seconds: time, step: step)
            output.duration = step
            try emit(output)
            time += 1 / fps
        }
        nextOutputTime = time
    }

    /// `seconds` on the output grid, in the grid's timescale.
    private func timestamp(seconds: Double, step: MediaTime) -> MediaTime {
        MediaTime(value: Int64((seconds * Double(step.timescale)).rounded()), timescale: step.timescale)
    }
}
