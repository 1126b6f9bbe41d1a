import VFXCore

/// Motion-compensated recursive noise filter over a stream of frames (causal: no latency).
///
/// For each frame: the luma is searched against the previous *output* (coarse to fine, 8×8 blocks, the
/// previous field as a predictor), and the vectors are refined to half pixels (`refineToHalfPixel`); the
/// previous output is moved along them (`compensateHalfPixel`, cubic between pixels) and its per-pixel
/// history along their whole part; each plane is blended with `TemporalBlend` (chroma with the luma vectors
/// halved) and smoothed where the blend left noise (`SpatialSmoothing`), a strip of rows at a time. The
/// blend's result is kept as the next frame's reference. The first frame of a stream is smoothed twice.
///
/// ```swift
/// let denoiser = TemporalDenoiser(width: 1280, height: 720, chroma: true)
/// denoiser.denoise([y, u, v], into: [outY, outU, outV], sigma: (luma: 10, chroma: 10))
/// ```
public final class TemporalDenoiser {
    public let width: Int
    public let height: Int
    private let planeSizes: [(width: Int, height: Int)]
    /// The motion search's settings (the exhaustive level searches ±2 around zero once a previous field exists).
    let search: MotionSearch = {
        var search = MotionSearch(range: 6, smoothness: 8)
        search.thoroughAtFullSize = false
        search.trackingRange = 2
        return search
    }()
    private let current: PlanePyramid
    private var reference: PlanePyramid
    private var previous: [PlaneStorage]
    private var state: [PlaneStorage]
    /// A smoothing row per plane (the planes may run side by side).
    private let rows: [UnsafeMutablePointer<UInt16>]
    private var history: [PlaneStorage]
    private var newHistory: [PlaneStorage]
    /// Per plane: the moved previous output of one strip (with a row above and below) and its moved history.
    private let predictionStrips: [PlaneStorage]
    private let historyStrips: [PlaneStorage]
    /// Luma rows per strip (chroma: half); 2 block rows keep a strip's 7 rows of passes well inside the L2 cache.
    let stripHeight = 16
    private var field: MotionField?
    private var started = false
    /// The blend's thresholds and history limit (its sigma is set per plane on every frame).
    public var blend = TemporalBlend(sigma: 0)
    /// A block whose match costs more than this many σ per pixel (mean absolute difference) starts a new
    /// history: a scene cut or an occlusion the per-pixel test alone would let through in flat areas.
    public var blockLimit: Float = 1.15
    /// Whether the vectors are refined to half pixels (`refineToHalfPixel`) before compensation.
    public var halfPixel = true
    /// How much better per pixel a half-pixel match must be than the whole-pixel one (see `refineToHalfPixel`).
    public var halfPixelMargin: Float = 0.25
    /// The spatial pass after the blend (its sigma is set per plane on every frame).
    public var smoothing = SpatialSmoothing(sigma: 0)
    /// The first frame of a stream is smoothed twice, the second time with this fraction of the noise level;
    /// the result is its output and the next frame's reference, with a history of two frames.
    public var firstFrameSecondPass: Float = 0.6
    /// The last frame's motion field (nil before the second frame).
    public var lastField: MotionField? { field }

    /// Runs the planes' passes on its threads after the (serial) motion search, the planes split between
    /// them (with two: luma on one, chroma on the other); the planes share nothing but the field.
    public let slices: SliceRunner

    /// A filter for `width`×`height` luma, plus two 4:2:0 chroma planes when `chroma` is true.
    public init(width: Int, height: Int, chroma: Bool, slices: SliceRunner = SliceRunner(threads: 1)) {
        self.width = width
        self.height = height
        self.slices = slices
        var sizes = [(width, height)]
        if chroma { sizes += [((width + 1) / 2, (height + 1) / 2), ((width + 1) / 2, (height + 1) / 2)] }
        planeSizes = sizes
        current = PlanePyramid(width: width, height: height, count: 3)
        reference = PlanePyramid(width: width, height: height, count: 3)
        func planes() -> [PlaneStorage] { sizes.map { PlaneStorage(width: $0.0, height: $0.1) } }
        previous = planes()
        state = planes()
        rows = sizes.map { _ in .allocate(capacity: width + 24) }
        history = planes()
        newHistory = planes()
        predictionStrips = sizes.map { PlaneStorage(width: $0.0, height: 16 + 2) }
        historyStrips = sizes.map { PlaneStorage(width: $0.0, height: 16) }
    }

    deinit { rows.forEach { $0.deallocate() } }

    /// Forgets the past: the next frame starts a new history.
    public func reset() {
        started = false
        field = nil
    }

    /// Filters one frame. `input` and `output` hold the planes in order (Y, then U and V when made with chroma)
    /// and must not be the same memory. `sigma` is the noise level of luma and of chroma in code values.
    public func denoise(_ input: [Plane], into output: [Plane], sigma: (luma: Float, chroma: Float)) {
        precondition(input.count == planeSizes.count && output.count == planeSizes.count, "plane count mismatch")
        current.build(from: input[0])
        if started {
            let field = search.estimate(from: current, to: reference, mode: .forward, predictor: self.field)
            self.field = field
            let refined = halfPixel ? refineToHalfPixel(field, from: input[0], to: previous[0].plane, margin: halfPixelMargin)
                : HalfPixelField(field)
            let work = 40 * width * height
            // At most one slice per plane; each has its own strips and smoothing row.
            slices.forEachSlice(of: planeSizes.count, work: work) { planes, _ in
                for index in planes {
                    self.filterPlane(index, input: input[index], output: output[index], field: refined,
                                     sigma: index == 0 ? sigma.luma : sigma.chroma, blockSigma: sigma.luma)
                }
            }
            swap(&history, &newHistory)
            swap(&previous, &state)
        } else {
            for index in planeSizes.indices {
                let h = history[index].plane
                for y in 0..<h.height { h.row(y).update(repeating: 16, count: h.width) }   // one frame of history
                var smoothing = self.smoothing
                smoothing.sigma = index == 0 ? sigma.luma : sigma.chroma
                smoothing.apply(source: input[index], history: h, output: state[index].plane, row: rows[index])
                // A second, gentler pass (no frame has been averaged yet), whose result is also the first
                // reference: the next frames then average with a cleaner picture than the noisy first one.
                smoothing.sigma *= firstFrameSecondPass
                smoothing.apply(source: state[index].plane, history: h, output: previous[index].plane, row: rows[index])
                previous[index].plane.copy(to: output[index])
                // Twice smoothed, the reference holds less noise than one frame: it counts as two.
                for y in 0..<h.height { h.row(y).update(repeating: 32, count: h.width) }
            }
            started = true
        }
        // The reference for the next frame: the temporal result, before spatial smoothing (so smoothing
        // never accumulates over frames; only the first frame's reference is smoothed).
        reference.build(from: previous[0].plane)
    }

    /// One plane's passes, a strip of rows at a time so that each strip's samples are still in the cache
    /// from one pass to the next: the previous output and the history moved along the vectors (into the
    /// strip buffers), the blend (into the next reference and history), and the spatial pass two rows
    /// behind (it reads two rows below the row it writes).
    private func filterPlane(_ index: Int, input: Plane, output: Plane, field: HalfPixelField, sigma: Float, blockSigma: Float) {
        let divisor = index == 0 ? 1 : 2
        let height = input.height
        let strip = stripHeight / divisor
        let source = previous[index].plane, counts = history[index].plane
        let target = state[index].plane, targetCounts = newHistory[index].plane
        let predicted = predictionStrips[index].plane, moved = historyStrips[index].plane
        var blend = self.blend
        blend.sigma = sigma
        var smoothing = self.smoothing
        smoothing.sigma = sigma
        let limit = blockLimit * max(blockSigma, 1)
        var smoothed = 0
        for top in stride(from: 0, to: height, by: strip) {
            let bottom = min(top + strip, height)
            // The prediction from one row above the strip to one below it (the blend's 3×3 test reads them).
            let first = max(top - 1, 0), last = min(bottom + 1, height)
            let prediction = StripRows(predicted, first: first), movedCounts = StripRows(moved, first: top)
            compensateHalfPixel(source, rows: first..<last, into: prediction, field: field, divisor: divisor)
            compensateHistory(counts, rows: top..<bottom, into: movedCounts, field: field, divisor: divisor, limit: limit)
            blend.apply(rows: top..<bottom, current: input, prediction: prediction, history: movedCounts,
                        output: target, newHistory: targetCounts)
            let ready = bottom == height ? height : max(bottom - 2, smoothed)
            smoothing.apply(rows: smoothed..<ready, source: target, history: targetCounts, output: output, row: rows[index])
            smoothed = ready
        }
    }
}
