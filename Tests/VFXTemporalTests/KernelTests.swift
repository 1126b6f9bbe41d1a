import Foundation
import Testing
import VFXCore
import VFXTestSupport
@testable import VFXTemporal

/// The kernels as pure functions on planes, against values computed here by formula.
@Suite final class KernelTests {
    /// The frames and planes the pyramids of a test point into.
    var keep: [VideoFrame] = []
    var kept: [PlaneStorage] = []

    /// A bikes frame's luma shifted by (dx, dy), edges repeated: second(x, y) = first(x − dx, y − dy).
    func shiftedPair(dx: Int, dy: Int) throws -> (PlanePyramid, PlanePyramid, Plane, Plane) {
        let frame = try Clip.frames("bikes.mp4", count: 1, width: 640, height: 272, rate: FrameRate(25))[0]
        let source = frame.plane(0)
        let shifted = PlaneStorage(width: source.width, height: source.height)
        for y in 0..<source.height {
            for x in 0..<source.width {
                let sx = min(max(x - dx, 0), source.width - 1), sy = min(max(y - dy, 0), source.height - 1)
                shifted.plane.row(y)[x] = source.row(sy)[sx]
            }
        }
        let a = PlanePyramid(width: source.width, height: source.height, count: 3)
        let b = PlanePyramid(width: source.width, height: source.height, count: 3)
        a.build(from: source)
        b.build(from: shifted.plane)
        // The planes stay valid: `frame` and `shifted` are kept alive by the pyramids' callers below.
        keep = [frame]
        kept = [shifted]
        return (a, b, source, shifted.plane)
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

    @Test func motionSearchFindsAGlobalShift() throws {
        let (a, b, first, _) = try shiftedPair(dx: 7, dy: -5)
        let field = MotionSearch().estimate(from: a, to: b, mode: .forward)
        // Blocks away from the frame's edge (where the shift repeats the border) and textured (a flat block
        // matches anywhere equally well): at least 95 % must find exactly (7, −5).
        var exact = 0, counted = 0
        for row in 2..<(field.rows - 2) {
            for column in 2..<(field.columns - 2) {
                guard texture(first, x: field.originX(column), y: field.originY(row)) > 3 else { continue }
                counted += 1
                if field[column, row] == MotionVector(x: 7, y: -5) { exact += 1 }
            }
        }
        #expect(counted > 200 && Double(exact) >= 0.95 * Double(counted), "\(exact) of \(counted) blocks found the shift")
    }

    @Test func symmetricSearchSplitsTheMotion() throws {
        let (a, b, first, _) = try shiftedPair(dx: 6, dy: 4)
        let field = MotionSearch().estimate(from: a, to: b, mode: .symmetric)
        var exact = 0, counted = 0
        for row in 2..<(field.rows - 2) {
            for column in 2..<(field.columns - 2) {
                guard texture(first, x: field.originX(column), y: field.originY(row)) > 3 else { continue }
                counted += 1
                if field[column, row] == MotionVector(x: 6, y: 4) { exact += 1 }
            }
        }
        #expect(Double(exact) >= 0.95 * Double(counted), "\(exact) of \(counted) blocks found the shift")
    }

    @Test func compensationUndoesTheShift() throws {
        let (a, b, first, second) = try shiftedPair(dx: 3, dy: 2)
        // Blocks of the shifted plane matched in the original: compensating the original must give the shifted.
        let field = MotionSearch().estimate(from: b, to: a, mode: .forward)
        let predicted = PlaneStorage(width: first.width, height: first.height)
        compensateHalfPixel(first, into: predicted.plane, field: HalfPixelField(field))   // whole-pixel vectors
        var equal = 0, counted = 0
        for y in 16..<(first.height - 16) {
            for x in 16..<(first.width - 16) {
                counted += 1
                if predicted.plane.row(y)[x] == second.row(y)[x] { equal += 1 }
            }
        }
        #expect(Double(equal) >= 0.97 * Double(counted), "\(equal) of \(counted) samples predicted exactly")
    }

    @Test func overlappedCompensationWithoutMotionAverages() throws {
        let (_, _, first, second) = try shiftedPair(dx: 2, dy: 1)
        let field = MotionField(width: first.width, height: first.height, blockSize: 8)
        let output = PlaneStorage(width: first.width, height: first.height)
        OverlappedCompensation(width: first.width, height: first.height)
            .predict(first: first, second: second, into: output.plane, field: field, phase: 0.5)
        // Zero motion at phase ½: every sample is (a + b) / 2 (window weights sum to one; ±1 for rounding).
        var worst = 0
        for y in 0..<first.height {
            for x in 0..<first.width {
                let expected = (Int(first.row(y)[x]) + Int(second.row(y)[x])) / 2
                worst = max(worst, abs(Int(output.plane.row(y)[x]) - expected))
            }
        }
        #expect(worst <= 1)
    }

    @Test func noiseEstimateOnSyntheticNoise() {
        var generator = SplitMix(state: 7)
        for sigma in [5.0, 10.0, 20.0] {
            let plane = PlaneStorage(width: 640, height: 360)
            for y in 0..<360 {
                for x in 0..<640 { plane.plane.row(y)[x] = UInt8(min(max((128 + sigma * generator.gaussian()).rounded(), 0), 255)) }
            }
            let estimate = Double(estimateNoise(plane.plane))
            // The quantile's spread over ~900 blocks: a few percent; rounding to integers adds 1/12 to the variance.
            #expect(abs(estimate - sigma) <= 0.05 * sigma + 0.2, "σ \(sigma): estimated \(estimate)")
        }
    }

    @Test func noiseEstimateOnARealClip() throws {
        var generator = SplitMix(state: 11)
        let frame = try Clip.frames("bikes.mp4", count: 1, width: 640, height: 272, rate: FrameRate(25))[0]
        let clean = Double(estimateNoise(frame.plane(0)))
        #expect(clean < 2.5, "a clean clip reads as nearly noise-free: \(clean)")
        for sigma in [10.0, 20.0] {
            let noisy = Clip.noisy(frame, sigma: sigma, generator: &generator)
            let estimate = Double(estimateNoise(noisy.plane(0)))
            // Picture texture in the flattest quarter adds a little: within 10 %.
            #expect(abs(estimate - sigma) <= 0.1 * sigma, "σ \(sigma): estimated \(estimate)")
        }
    }

    @Test func trainedTablesHaveEveryWeight() {
        for scale in 2...4 {
            let upscaler = EdgeDirectedUpscaler(scale: scale, maximumWidth: 16, maximumHeight: 16)
            #expect(upscaler.trainedWeightCount == 72 * 26 * scale * scale)
        }
    }

    @Test func classesMatchTheTrainingScriptsFormula() {
        // The script bins the doubled angle with arctan2; the upscaler reads the octant without it.
        var generator = SplitMix(state: 3)
        var same = 0
        for _ in 0..<10_000 {
            let gx = 20 * generator.gaussian(), gy = 20 * generator.gaussian(), spread = generator.uniform()
            let xx = gx * gx + spread * 40, yy = gy * gy + spread * 40, xy = gx * gy
            let halfTrace = (xx + yy) / 2, root = max(halfTrace * halfTrace - (xx * yy - xy * xy), 0).squareRoot()
            let l1 = halfTrace + root, l2 = max(halfTrace - root, 0)
            let angle = Int(((atan2(2 * xy, xx - yy) + .pi) / (2 * .pi) * 8).rounded(.down)) % 8
            let s1 = l1.squareRoot(), s2 = l2.squareRoot(), c = (s1 - s2) / (s1 + s2 + 1e-6)
            let expected = (angle * 3 + (s1 < 2 ? 0 : s1 < 6 ? 1 : 2)) * 3 + (c < 0.25 ? 0 : c < 0.5 ? 1 : 2)
            if Int(EdgeDirectedUpscaler.classOf(xx: Float(xx), yy: Float(yy), xy: Float(xy))) == expected { same += 1 }
        }
        // Float against Double rounding can only differ on a bin's boundary.
        #expect(same >= 9_990, "\(same) of 10000 classes agree")
    }

    @Test func upscalerKeepsFlatAreasAndRamps() {
        // A linear ramp is reproduced by any filter whose taps sum to one with the right centre: the trained
        // filters must reproduce the area-averaged ramp's values within 1.5 code values.
        let low = PlaneStorage(width: 40, height: 30), high = PlaneStorage(width: 80, height: 60)
        for y in 0..<30 {
            for x in 0..<40 { low.plane.row(y)[x] = UInt8(40 + 4 * x) }
        }
        EdgeDirectedUpscaler(scale: 2, maximumWidth: 40, maximumHeight: 30).upscale(low.plane, into: high.plane)
        var worst = 0.0
        for y in 4..<56 {
            for x in 4..<76 {
                let expected = 40 + 4 * (Double(x) - 0.5) / 2
                worst = max(worst, abs(Double(high.plane.row(y)[x]) - expected))
            }
        }
        #expect(worst <= 1.5, "largest error on a ramp: \(worst)")
    }
}
