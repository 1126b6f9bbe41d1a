import VFXCore

/// Makes frames between two frames: bidirectional motion estimation, overlapped-block compensation and
/// occlusion handling.
///
/// For a pair (first, second): a symmetric field gives every block of the in-between image a vector (no
/// holes); forward and backward fields mark occlusions by their disagreement: a block of the first frame
/// whose forward vector does not come back (the backward vector where it lands is not its opposite) is
/// covered in the second frame, and a block of the second frame that the same test fails on is uncovered.
/// A block whose first-frame sample lies in a covered block is taken from the first frame only, one whose
/// second-frame sample lies in an uncovered block from the second only: each pixel from the side where it
/// is visible. Chroma uses the luma vectors halved.
///
/// ```swift
/// let interpolator = FrameInterpolator(width: 1280, height: 720, chroma: true)
/// interpolator.setPair(first: a.planes, second: b.planes)
/// interpolator.interpolate(phase: 0.5, into: output)
/// ```
public final class FrameInterpolator {
    public let width: Int
    public let height: Int
    private let chroma: Bool
    private var firstPyramid: PlanePyramid
    private var secondPyramid: PlanePyramid
    /// The motion search for all three fields.
    public var search = MotionSearch(range: 6, smoothness: 4)
    /// Whether occluded blocks take their pixels from one side only (true), or blend both like the rest.
    public var handlesOcclusions = true
    /// One per plane (each has its own scratch), so the planes can be made side by side.
    private let compensations: [OverlappedCompensation]
    /// Makes the planes of an in-between frame on its threads, split between them (the motion search
    /// stays on one).
    public let slices: SliceRunner
    private var first: [Plane] = []
    private var second: [Plane] = []
    /// The in-between field of the current pair.
    public private(set) var field: MotionField?
    private var sides: [SIMD2<Float>] = []
    /// Where a block's first-frame (x) or second-frame (y) sample is visible only on its own side.
    private var covered: [Bool] = []
    private var uncovered: [Bool] = []
    /// The layout of the occlusion masks, and how many full-size pixels one of its pixels is.
    private var occlusionGrid: MotionField?
    private var occlusionScale = 1
    /// A pair whose mean match error per pixel is above this (in code values) and more than twice the
    /// previous pair's is a scene cut: the frames between are copies of the nearer input instead.
    public var sceneCutError: Float = 20
    /// Whether the current pair straddles a scene cut.
    public private(set) var isSceneCut = false
    private var previousMatchError: Float = 0
    /// Disagreement, in pixels of the half-size plane, beyond which a forward and a backward vector do not come back to each other.
    public var consistency = 2

    public init(width: Int, height: Int, chroma: Bool, slices: SliceRunner = SliceRunner(threads: 1)) {
        self.width = width
        self.height = height
        self.chroma = chroma
        self.slices = slices
        firstPyramid = PlanePyramid(width: width, height: height, count: 3)
        secondPyramid = PlanePyramid(width: width, height: height, count: 3)
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        compensations = [OverlappedCompensation(width: width, height: height)]
            + (chroma ? [OverlappedCompensation(width: chromaWidth, height: chromaHeight),
                         OverlappedCompensation(width: chromaWidth, height: chromaHeight)] : [])
    }

    /// Takes the next pair. When `first` is the previous pair's second frame (the usual stream), its pyramid
    /// is reused. The planes must stay valid until the next call (the caller keeps the frames).
    public func setPair(first: [Plane], second: [Plane], continuing: Bool = false) {
        if continuing {
            swap(&firstPyramid, &secondPyramid)
        } else {
            firstPyramid.build(from: first[0])
        }
        secondPyramid.build(from: second[0])
        self.first = first
        self.second = second
        let previous = field
        let symmetric = search.estimate(from: firstPyramid, to: secondPyramid, mode: .symmetric, predictor: previous)
        // Occlusions at half resolution (16×16-pixel blocks): a quarter of the search work.
        let forward = search.estimate(from: firstPyramid, to: secondPyramid, mode: .forward, predictor: symmetric,
                                      finestLevel: 1)
        let backward = search.estimate(from: secondPyramid, to: firstPyramid, mode: .forward,
                                       predictor: negated(symmetric), finestLevel: 1)
        covered = occlusion(forward, backward)
        uncovered = occlusion(backward, forward)
        occlusionGrid = forward
        occlusionScale = max(1, width / max(forward.width, 1))
        field = symmetric
        let error = matchError
        isSceneCut = error > sceneCutError && error > 2 * previousMatchError
        previousMatchError = error
    }

    /// The mean absolute difference per pixel of the in-between field's matches (0 before the first pair).
    public var matchError: Float {
        guard let field, !field.costs.isEmpty else { return 0 }
        let total = field.costs.reduce(0) { $0 + Int($1) }
        return Float(total) / Float(field.costs.count * field.blockSize * field.blockSize)
    }

    /// Writes the frame at `phase` (0 = first, 1 = second) into `output` (planes in the input's order).
    public func interpolate(phase: Float, into output: [Plane]) {
        guard let field else { return }
        if isSceneCut {
            for (index, target) in output.enumerated() { (phase <= 0.5 ? first[index] : second[index]).copy(to: target) }
            return
        }
        sides = handlesOcclusions ? sideWeights(field, phase: phase) : []
        let sides = self.sides, first = self.first, second = self.second
        slices.forEachSlice(of: output.count, work: 60 * width * height) { planes, _ in
            for index in planes {
                compensations[index].predict(first: first[index], second: second[index], into: output[index], field: field,
                                             phase: phase, sides: sides, divisor: index == 0 ? 1 : 2)
            }
        }
    }

    private func negated(_ field: MotionField) -> MotionField {
        var result = field
        result.vectors = field.vectors.map { MotionVector(x: -$0.x, y: -$0.y) }
        return result
    }

    /// For each block of `there`: true when its vector, followed by `back`'s vector where it lands, does not
    /// return within `consistency` pixels.
    private func occlusion(_ there: MotionField, _ back: MotionField) -> [Bool] {
        var result = Array(repeating: false, count: there.vectors.count)
        for row in 0..<there.rows {
            for column in 0..<there.columns {
                let v = there[column, row]
                let cx = there.originX(column) + there.blockSize / 2 + v.x, cy = there.originY(row) + there.blockSize / 2 + v.y
                let w = back[back.column(ofX: cx), back.row(ofY: cy)]
                result[row * there.columns + column] = abs(v.x + w.x) + abs(v.y + w.y) > consistency
            }
        }
        return result
    }

    private func sideWeights(_ field: MotionField, phase: Float) -> [SIMD2<Float>] {
        var result = Array(repeating: SIMD2<Float>(1 - phase, phase), count: field.vectors.count)
        guard let grid = occlusionGrid else { return result }
        let scale = occlusionScale
        for row in 0..<field.rows {
            for column in 0..<field.columns {
                let v = field[column, row]
                let cx = Float(field.originX(column) + field.blockSize / 2), cy = Float(field.originY(row) + field.blockSize / 2)
                let ax = Int(cx - phase * Float(v.x)) / scale, ay = Int(cy - phase * Float(v.y)) / scale
                let bx = Int(cx + (1 - phase) * Float(v.x)) / scale, by = Int(cy + (1 - phase) * Float(v.y)) / scale
                let onlyFirst = covered[grid.row(ofY: ay) * grid.columns + grid.column(ofX: ax)]
                let onlySecond = uncovered[grid.row(ofY: by) * grid.columns + grid.column(ofX: bx)]
                if onlyFirst && !onlySecond { result[row * field.columns + column] = SIMD2(1, 0) }
                if onlySecond && !onlyFirst { result[row * field.columns + column] = SIMD2(0, 1) }
            }
        }
        return result
    }
}
