import Foundation
import Testing
import VFXCore
import VFXTestSupport
@testable import VFXTemporal

/// Half-pixel refinement and cubic compensation against shifts and formulas made here, and the denoiser's
/// strip-by-strip passes against the same kernels run over whole planes.
@Suite final class HalfPixelTests {
    /// The frames whose planes the tests' views point into.
    var keep: [VideoFrame] = []
    var kept: [PlaneStorage] = []

    /// A bikes frame's luma (640×272).
    func bikesLuma() throws -> Plane {
        let frame = try Clip.frames("bikes.mp4", count: 1, width: 640, height: 272, rate: FrameRate(25))[0]
        keep.append(frame)
        return frame.plane(0)
    }

    /// The astronaut photograph's luma (512×512) through a 3×3 binomial blur `passes` times, as a softer
    /// lens would give it.
    func softPhoto(passes: Int) throws -> Plane {
        let frame = try Clip.frames("astronaut.png", count: 1, width: 512, height: 512, rate: FrameRate(25))[0]
        keep.append(frame)
        var source = frame.plane(0)
        for _ in 0..<passes {
            let soft = PlaneStorage(width: source.width, height: source.height)
            kept.append(soft)
            for y in 0..<source.height {
                for x in 0..<source.width {
                    var sum = 0
                    for (dy, wy) in [(-1, 1), (0, 2), (1, 1)] {
                        for (dx, wx) in [(-1, 1), (0, 2), (1, 1)] {
                            let sy = min(max(y + dy, 0), source.height - 1), sx = min(max(x + dx, 0), source.width - 1)
                            sum += wy * wx * Int(source.row(sy)[sx])
                        }
                    }
                    soft.plane.row(y)[x] = UInt8((sum + 8) / 16)
                }
            }
            source = soft.plane
        }
        return source
    }

    /// 2×2 averages of `source` taken from (dx, dy) on (0 or 1 each): the same picture at half size, moved by
    /// half a pixel of the small picture for each 1. An independent sub-pixel shift of a real picture.
    func halved(_ source: Plane, dx: Int, dy: Int) -> PlaneStorage {
        let out = PlaneStorage(width: source.width / 2 - 1, height: source.height / 2 - 1)
        for y in 0..<out.height {
            for x in 0..<out.width {
                let sx = 2 * x + dx, sy = 2 * y + dy
                let sum = Int(source.row(sy)[sx]) + Int(source.row(sy)[sx + 1]) + Int(source.row(sy + 1)[sx])
                    + Int(source.row(sy + 1)[sx + 1])
                out.plane.row(y)[x] = UInt8((sum + 2) / 4)
            }
        }
        return out
    }

    /// Mean absolute difference between horizontal and vertical neighbours over an 8×8 block.
    func texture(_ plane: Plane, x: Int, y: Int) -> Double {
        var sum = 0
        for j in y..<min(y + 8, plane.height - 1) {
            for i in x..<min(x + 8, plane.width - 1) {
                sum += abs(Int(plane.row(j)[i + 1]) - Int(plane.row(j)[i])) + abs(Int(plane.row(j + 1)[i]) - Int(plane.row(j)[i]))
            }
        }
        return Double(sum) / 64
    }

    /// How much a block's structure has one direction (0: the same in all, 1: a single straight edge), from
    /// the structure tensor of its central differences. A diagonal shift of a single edge is the same
    /// picture as a shift across it, so only blocks with two-dimensional structure tell them apart.
    func coherence(_ plane: Plane, x: Int, y: Int) -> Double {
        var (xx, yy, xy) = (0.0, 0.0, 0.0)
        for j in max(y, 1)..<min(y + 8, plane.height - 1) {
            for i in max(x, 1)..<min(x + 8, plane.width - 1) {
                let gx = Double(Int(plane.row(j)[i + 1]) - Int(plane.row(j)[i - 1]))
                let gy = Double(Int(plane.row(j + 1)[i]) - Int(plane.row(j - 1)[i]))
                (xx, yy, xy) = (xx + gx * gx, yy + gy * gy, xy + gx * gy)
            }
        }
        return ((xx - yy) * (xx - yy) + 4 * xy * xy).squareRoot() / max(xx + yy, 1)
    }

    /// Motion search plus refinement from `a` to `b`; the share of textured inner blocks whose vector lies
    /// within 0.25 px of `expected` (in pixels), among those the refinement can reach it from (and, with
    /// `twoDimensional`, whose structure is not a single edge).
    func refinedShare(_ a: PlaneStorage, _ b: PlaneStorage, expected: (x: Double, y: Double),
                      twoDimensional: Bool = false) -> (share: Double, counted: Int) {
        let first = PlanePyramid(width: a.width, height: a.height, count: 3)
        let second = PlanePyramid(width: b.width, height: b.height, count: 3)
        first.build(from: a.plane)
        second.build(from: b.plane)
        let field = MotionSearch().estimate(from: first, to: second, mode: .forward)
        let refined = refineToHalfPixel(field, from: a.plane, to: b.plane)
        var close = 0, counted = 0
        for row in 2..<(field.rows - 2) {
            for column in 2..<(field.columns - 2) {
                // Textured blocks whose whole-pixel vector is within half a pixel of the shift on both axes
                // (refinement moves a vector by half a pixel at most; the whole-pixel search is tested apart).
                let whole = field[column, row]
                guard texture(a.plane, x: field.originX(column), y: field.originY(row)) > 4,
                      abs(Double(whole.x) - expected.x) <= 0.5, abs(Double(whole.y) - expected.y) <= 0.5,
                      !twoDimensional || coherence(a.plane, x: field.originX(column), y: field.originY(row)) < 0.5 else { continue }
                counted += 1
                let v = refined[column, row].pixels
                if abs(v.x - expected.x) <= 0.25 && abs(v.y - expected.y) <= 0.25 { close += 1 }
            }
        }
        return (Double(close) / Double(max(counted, 1)), counted)
    }

    @Test func refinementFindsHalfPixelShiftsOfARealPicture() throws {
        let luma = try softPhoto(passes: 1)
        let base = halved(luma, dx: 0, dy: 0)
        // b(x) = a(x + ½) for a step of 1 at full size: the block of `a` at o is found in `b` at o − ½.
        // At least 85 % of the textured blocks must land within 0.25 px (whole-pixel vectors cannot: they
        // are 0.5 px off at best). Shifts along each axis, and one of 1.5 px (whole part plus half).
        for (dx, dy) in [(1, 0), (0, 1)] {
            let moved = halved(luma, dx: dx, dy: dy)
            let result = refinedShare(base, moved, expected: (-0.5 * Double(dx), -0.5 * Double(dy)))
            #expect(result.counted > 100 && result.share >= 0.85, "shift (\(dx), \(dy)): \(result)")
        }
        let far = PlaneStorage(width: base.width - 1, height: base.height)
        let near = PlaneStorage(width: base.width - 1, height: base.height)
        let shifted = halved(luma, dx: 1, dy: 0)
        for y in 0..<base.height {
            // near(x) = a(x), far(x) = shifted(x + 1) = a(x + 1.5): near's block at o is far's at o − 1.5.
            for x in 0..<(base.width - 1) {
                near.plane.row(y)[x] = base.plane.row(y)[x]
                far.plane.row(y)[x] = shifted.plane.row(y)[x + 1]
            }
        }
        let result = refinedShare(near, far, expected: (-1.5, 0))
        #expect(result.counted > 100 && result.share >= 0.85, "shift 1.5 px: \(result)")
    }

    @Test func refinementFindsDiagonalHalfPixelShifts() throws {
        // A diagonal half-pixel shift, on the blocks whose structure is two-dimensional (a lone edge moved
        // diagonally looks the same as moved across, and either vector predicts it as well).
        let luma = try softPhoto(passes: 1)
        let result = refinedShare(halved(luma, dx: 0, dy: 0), halved(luma, dx: 1, dy: 1), expected: (-0.5, -0.5),
                                  twoDimensional: true)
        #expect(result.counted > 50 && result.share >= 0.85, "\(result)")
    }

    @Test func refinementKeepsWholePixelVectorsOfWholeShifts() throws {
        let luma = try softPhoto(passes: 1)
        let a = halved(luma, dx: 0, dy: 0)
        let b = PlaneStorage(width: a.width, height: a.height)
        for y in 0..<a.height {
            for x in 0..<a.width { b.plane.row(y)[x] = a.plane.row(y)[max(x - 2, 0)] }   // b(x) = a(x − 2)
        }
        let result = refinedShare(a, b, expected: (2, 0))
        #expect(result.counted > 100 && result.share >= 0.95, "\(result)")
    }

    @Test func cubicCompensationMatchesTheFormula() throws {
        let luma = try bikesLuma()
        let source = PlaneStorage(width: luma.width, height: luma.height)
        luma.copy(to: source.plane)
        // One vector for every block: (1.5, −0.5) px; the prediction at (x, y) is the source at (x + 1.5, y − 0.5).
        var field = HalfPixelField(MotionField(width: luma.width, height: luma.height, blockSize: 8))
        for index in field.vectors.indices { field.vectors[index] = HalfPixelVector(x: 3, y: -1) }
        let target = PlaneStorage(width: luma.width, height: luma.height)
        compensateHalfPixel(source.plane, into: target.plane, field: field)
        // The separable cubic (−1, 9, 9, −1)/16 evaluated here on integers: across at x + 1…x + 2 on rows
        // y − 2…y + 1, then down between rows y − 1 and y; rounded and clamped. Exact, away from the edges
        // (where a displaced block is clamped inside the plane).
        func s(_ x: Int, _ y: Int) -> Int { Int(luma.row(y)[x]) }
        func cubic(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Int { (9 * (b + c) - a - d + 8) >> 4 }
        var mismatches = 0
        for y in 8..<(luma.height - 8) {
            for x in 0..<(luma.width - 16) {
                let across = (-2...1).map { dy in cubic(s(x, y + dy), s(x + 1, y + dy), s(x + 2, y + dy), s(x + 3, y + dy)) }
                let expected = min(max(cubic(across[0], across[1], across[2], across[3]), 0), 255)
                if Int(target.plane.row(y)[x]) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0, "\(mismatches) samples differ from the formula")
    }

    @Test func chromaCompensationHalvesTheVectors() throws {
        let luma = try bikesLuma()
        let chroma = PlaneStorage(width: luma.width / 2, height: luma.height / 2)
        for y in 0..<chroma.height { for x in 0..<chroma.width { chroma.plane.row(y)[x] = luma.row(2 * y)[2 * x] } }
        // Luma vector (3, 2) px = (6, 4) half pixels → chroma (1.5, 1) px: whole rows, half columns.
        var field = HalfPixelField(MotionField(width: luma.width, height: luma.height, blockSize: 8))
        for index in field.vectors.indices { field.vectors[index] = HalfPixelVector(x: 6, y: 4) }
        let target = PlaneStorage(width: chroma.width, height: chroma.height)
        compensateHalfPixel(chroma.plane, into: target.plane, field: field, divisor: 2)
        func s(_ x: Int, _ y: Int) -> Int { Int(chroma.plane.row(y)[x]) }
        var mismatches = 0
        for y in 4..<(chroma.height - 8) {
            for x in 4..<(chroma.width - 8) {
                let expected = min(max((9 * (s(x + 1, y + 1) + s(x + 2, y + 1)) - s(x, y + 1) - s(x + 3, y + 1) + 8) >> 4, 0), 255)
                if Int(target.plane.row(y)[x]) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0, "\(mismatches) samples differ from the formula")
    }

    /// The denoiser's passes run strip by strip; the same kernels over whole planes, composed here in the
    /// order the denoiser documents, must give the same frames byte for byte (an odd size, so strips,
    /// blocks and the plane's edges do not line up).
    @Test func stripPassesEqualWholePlanePasses() throws {
        let (width, height) = (230, 118)
        let clean = try Clip.frames("bikes.mp4", count: 4, width: 640, height: 272, rate: FrameRate(25)).map { frame in
            // A 230×118 window from (100, 60) (chroma from (50, 30)).
            var crop = VideoFrame(format: .i420, width: width, height: height)
            crop.withMutablePlanes { planes in
                for (index, target) in planes.enumerated() {
                    let source = frame.plane(index), shift = index == 0 ? 1 : 2
                    for y in 0..<target.height {
                        for x in 0..<target.width { target.row(y)[x] = source.row(y + 60 / shift)[x + 100 / shift] }
                    }
                }
            }
            return crop
        }
        var generator = SplitMix(state: 7)
        let noisy = clean.map { Clip.noisy($0, sigma: 12, generator: &generator) }
        let sigma: (luma: Float, chroma: Float) = (12, 11)
        let denoiser = TemporalDenoiser(width: width, height: height, chroma: true)
        var outputs: [VideoFrame] = []
        for frame in noisy {
            var out = VideoFrame(format: .i420, width: width, height: height)
            out.withMutablePlanes { planes in denoiser.denoise(frame.planes, into: planes, sigma: sigma) }
            outputs.append(out)
        }

        // The same steps over whole planes.
        let sizes = noisy[0].planes.map { ($0.width, $0.height) }
        func storage() -> [PlaneStorage] { sizes.map { PlaneStorage(width: $0.0, height: $0.1) } }
        var previous = storage(), history = storage()
        let scratch = UnsafeMutablePointer<UInt16>.allocate(capacity: width + 24)
        defer { scratch.deallocate() }
        let current = PlanePyramid(width: width, height: height, count: 3)
        let reference = PlanePyramid(width: width, height: height, count: 3)
        var field: MotionField?
        for (index, frame) in noisy.enumerated() {
            let expected = storage()
            if index == 0 {
                for p in sizes.indices {
                    let h = history[p].plane, once = PlaneStorage(width: sizes[p].0, height: sizes[p].1)
                    for y in 0..<h.height { h.row(y).update(repeating: 16, count: h.width) }
                    let level = p == 0 ? sigma.luma : sigma.chroma
                    SpatialSmoothing(sigma: level).apply(source: frame.plane(p), history: h, output: once.plane, row: scratch)
                    SpatialSmoothing(sigma: level * denoiser.firstFrameSecondPass)
                        .apply(source: once.plane, history: h, output: previous[p].plane, row: scratch)
                    previous[p].plane.copy(to: expected[p].plane)
                    for y in 0..<h.height { h.row(y).update(repeating: 32, count: h.width) }   // two frames
                }
            } else {
                current.build(from: frame.plane(0))
                reference.build(from: previous[0].plane)
                let found = denoiser.search.estimate(from: current, to: reference, mode: .forward, predictor: field)
                field = found
                let refined = refineToHalfPixel(found, from: frame.plane(0), to: previous[0].plane, margin: denoiser.halfPixelMargin)
                let next = storage(), nextHistory = storage()
                for p in sizes.indices {
                    let divisor = p == 0 ? 1 : 2
                    let prediction = PlaneStorage(width: sizes[p].0, height: sizes[p].1)
                    let moved = PlaneStorage(width: sizes[p].0, height: sizes[p].1)
                    compensateHalfPixel(previous[p].plane, into: prediction.plane, field: refined, divisor: divisor)
                    compensateHistory(history[p].plane, rows: 0..<sizes[p].1, into: StripRows(moved.plane), field: refined,
                                      divisor: divisor, limit: denoiser.blockLimit * sigma.luma)
                    var blend = denoiser.blend
                    blend.sigma = p == 0 ? sigma.luma : sigma.chroma
                    blend.apply(current: frame.plane(p), prediction: prediction.plane, history: moved.plane,
                                output: next[p].plane, newHistory: nextHistory[p].plane)
                    SpatialSmoothing(sigma: blend.sigma).apply(source: next[p].plane, history: nextHistory[p].plane,
                                                               output: expected[p].plane, row: scratch)
                }
                previous = next
                history = nextHistory
            }
            for p in sizes.indices {
                var differing = 0
                for y in 0..<sizes[p].1 {
                    for x in 0..<sizes[p].0 where outputs[index].plane(p).row(y)[x] != expected[p].plane.row(y)[x] { differing += 1 }
                }
                #expect(differing == 0, "frame \(index), plane \(p): \(differing) samples differ")
            }
        }
    }
}
