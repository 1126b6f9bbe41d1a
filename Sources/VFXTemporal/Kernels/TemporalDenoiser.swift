import VFXCore

/// Motion-compensated recursive noise filter over a stream of frames (causal: no latency).
///
/// For each frame: the luma is searched against the previous *output* (coarse to fine, 8×8 blocks, the
/// previous field as a predictor); the previous output and its per-pixel history are moved along the
/// vectors; each plane is blended with `TemporalBlend` (chroma with the luma vectors halved). The result is
/// kept as the next frame's reference.
///
/// ```swift
/// let denoiser = TemporalDenoiser(width: 1280, height: 720, chroma: true)
/// denoiser.denoise([y, u, v], into: [outY, outU, outV], sigma: (luma: 10, chroma: 10))
/// ```
public final class TemporalDenoiser {
    public let width: Int
    public let height: Int
    private let planeSizes: [(width: Int, height: Int)]
    private let search: MotionSearch = {
        var search = MotionSearch(range: 6, smoothness: 8)
        search.thoroughAtFullSize = false
        return search
    }()
    private let current: PlanePyramid
    private var reference: PlanePyramid
    private var previous: [PlaneStorage]
    private var state: [PlaneStorage]
    private let row: UnsafeMutablePointer<Float>
    private var history: [PlaneStorage]
    private var newHistory: [PlaneStorage]
    private let prediction: [PlaneStorage]
    private let movedHistory: [PlaneStorage]
    private var field: MotionField?
    private var started = false
    /// The blend's thresholds and history limit (its sigma is set per plane on every frame).
    public var blend = TemporalBlend(sigma: 0)
    /// A block whose match costs more than this many σ per pixel (mean absolute difference) starts a new
    /// history: a scene cut or an occlusion the per-pixel test alone would let through in flat areas.
    public var blockLimit: Float = 1.15
    /// The spatial pass after the blend (its sigma is set per plane on every frame).
    public var smoothing = SpatialSmoothing(sigma: 0)
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
        row = .allocate(capacity: 3 * (width + 16))   // a smoothing row for each slice (at most one per plane)
        history = planes()
        newHistory = planes()
        prediction = planes()
        movedHistory = planes()
    }

    deinit { row.deallocate() }

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
            let work = 40 * width * height
            let history = history, newHistory = newHistory, previous = previous, state = state
            // At most one slice per plane; each smooths with its own scratch row.
            slices.forEachSlice(of: planeSizes.count, work: work) { planes, slice in
            let row = self.row + slice * (width + 16)
            for index in planes {
                let divisor = index == 0 ? 1 : 2
                compensate(previous[index].plane, into: prediction[index].plane, field: field, divisor: divisor)
                compensate(history[index].plane, into: movedHistory[index].plane, field: field, divisor: divisor)
                forgetMismatchedBlocks(movedHistory[index].plane, field: field, divisor: divisor, sigma: sigma.luma)
                var blend = self.blend
                blend.sigma = index == 0 ? sigma.luma : sigma.chroma
                blend.apply(current: input[index], prediction: prediction[index].plane, history: movedHistory[index].plane,
                           output: state[index].plane, newHistory: newHistory[index].plane)
                var smoothing = self.smoothing
                smoothing.sigma = blend.sigma
                smoothing.apply(source: state[index].plane, history: newHistory[index].plane, output: output[index], row: row)
            }
            }
            swap(&self.history, &self.newHistory)
            swap(&self.previous, &self.state)
        } else {
            for index in planeSizes.indices {
                input[index].copy(to: previous[index].plane)
                let h = history[index].plane
                for y in 0..<h.height { h.row(y).update(repeating: 16, count: h.width) }   // one frame of history
                var smoothing = self.smoothing
                smoothing.sigma = index == 0 ? sigma.luma : sigma.chroma
                smoothing.apply(source: input[index], history: history[index].plane, output: output[index], row: row)
            }
            started = true
        }
        // The reference for the next frame: the temporal result, before spatial smoothing (so smoothing
        // never accumulates over frames).
        reference.build(from: previous[0].plane)
    }

    /// Clears the history of the blocks whose luma match is too poor to be the same content.
    private func forgetMismatchedBlocks(_ history: Plane, field: MotionField, divisor: Int, sigma: Float) {
        let limit = blockLimit * max(sigma, 1)
        let size = field.blockSize / divisor
        for row in 0..<field.rows {
            for column in 0..<field.columns where field.meanCost(column: column, row: row) > limit {
                let ox = field.originX(column) / divisor, oy = field.originY(row) / divisor
                for y in oy..<min(oy + size, history.height) {
                    history.row(y).advanced(by: ox).update(repeating: 0, count: min(size, history.width - ox))
                }
            }
        }
    }
}
