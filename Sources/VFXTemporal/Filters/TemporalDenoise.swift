import VFXCore
import VFXFilters
import VFXPipeline

extension FilterSpec {
    /// Motion-compensated temporal noise filter (causal: no latency, for live use), luma and chroma.
    ///
    /// Each frame's luma is matched against the previous output (8×8 blocks, coarse to fine on a pyramid);
    /// the previous output is moved along the vectors and blended per pixel as a running average of the
    /// frames that match, with a weight that falls to zero where the moved pixels stop matching (moving
    /// edges never smear or ghost); what the average leaves noisy (new content) is smoothed spatially in
    /// proportion to the noise left. See `TemporalDenoiser`.
    /// - `strength`: number 0…50, the noise's standard deviation in 8-bit code values; 0 (default) estimates
    ///   it from the video itself (luma and chroma separately, on every 4th frame; the median of the last 9
    ///   estimates).
    /// - Formats: i420, gray8. Frames in: N; frames out: N, same timestamps.
    /// - Threads: the planes are filtered side by side on the chain's threads (`--threads`), same output.
    ///
    /// Chain: `temporal-denoise` · Swift: `try FilterDescription.temporalDenoise()`
    public static let temporalDenoise = FilterSpec(
        name: "temporal-denoise",
        summary: "Motion-compensated temporal noise filter, luma and chroma; strength estimated from the video by default.",
        parameters: [ParameterSpec("strength", .number(0...50), default: 0,
                                   "noise standard deviation in code values (0: estimated from the video)")],
        pixelFormats: [.i420, .gray8],
        example: "temporal-denoise", swift: "try FilterDescription.temporalDenoise()"
        // No FFmpeg graph: FFmpeg has no motion-compensated denoiser. Its nearest filters (hqdn3d, nlmeans,
        // atadenoise) do other work; docs/quality.md sets them beside this one for quality and speed.
    ) { arguments, context in
        let strength = arguments.float("strength")
        return .processor(TemporalDenoiseProcessor(strength: strength > 0 ? strength : nil, slices: context.slices))
    }
}

extension FilterDescription {
    /// `strength` 0: estimated from the video. Throws when it is outside 0…50.
    public static func temporalDenoise(strength: Double = 0) throws -> FilterDescription {
        try FilterDescription("temporal-denoise", ["strength": .number(strength)])
    }
}

/// The `temporal-denoise` stage: one frame in, one out, no latency.
public final class TemporalDenoiseProcessor: VideoProcessor {
    /// Fixed noise level, or nil to estimate it.
    public let strength: Float?
    /// The planes' passes are split between its threads (the motion search stays on one).
    public let slices: SliceRunner
    private var denoiser: TemporalDenoiser?
    private var pool: BufferPool?
    private var lumaNoise = NoiseTracker()
    private var chromaNoise = NoiseTracker()
    private var frameIndex = 0

    public init(strength: Float?, slices: SliceRunner = SliceRunner(threads: 1)) {
        self.strength = strength
        self.slices = slices
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        try checkTemporalInput(input, filter: "temporal-denoise")
        denoiser = TemporalDenoiser(width: input.width, height: input.height, chroma: input.pixelFormat == .i420, slices: slices)
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height)
        lumaNoise = NoiseTracker()
        chromaNoise = NoiseTracker()
        return input
    }

    /// The noise levels used for the last frame (luma, chroma).
    public private(set) var lastSigma: (luma: Float, chroma: Float) = (0, 0)

    public func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        let frame = frame
        guard let denoiser, denoiser.width == frame.width, denoiser.height == frame.height else {
            _ = try configure(for: FrameFormat(of: frame))
            return try process(frame)
        }
        let chroma = frame.planeCount == 3
        var sigma: (luma: Float, chroma: Float)
        if let strength {
            sigma = (strength, strength)
        } else if frameIndex % 4 == 0 || lumaNoise.level == nil {
            // The noise level changes slowly: measured on every 4th frame.
            let luma = lumaNoise.add(estimateNoise(frame.plane(0)))
            let color = chroma ? chromaNoise.add((estimateNoise(frame.plane(1)) + estimateNoise(frame.plane(2))) / 2) : 0
            sigma = (luma, color)
        } else {
            sigma = (lumaNoise.level ?? 0, chromaNoise.level ?? 0)
        }
        frameIndex += 1
        lastSigma = sigma
        var output = frame.makeSibling(pool: pool)
        output.withMutablePlanes(pool: pool) { planes in denoiser.denoise(frame.planes, into: planes, sigma: sigma) }
        return output
    }

    /// The next frame starts a new history (after a flush the stage is ready for a new stream).
    public func flush(emit: FrameEmitter) throws {
        denoiser?.reset()
        frameIndex = 0
        lumaNoise = NoiseTracker()
        chromaNoise = NoiseTracker()
    }

    public func release() {
        denoiser = nil
        pool = nil
    }
}
