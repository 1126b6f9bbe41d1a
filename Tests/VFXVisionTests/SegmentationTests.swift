import Foundation
import VFXCore
import VFXNeural
import VFXTestSupport
@testable import VFXVision
import XCTest

/// Person segmentation against MediaPipe's selfie segmentation solution (its float mask at the picture's
/// size). Raw masks: IoU of the masks cut at 0.5 ≥ 0.95 and mean absolute difference ≤ 0.02 on every
/// picture and every carphone frame, both models (the figures; ours are stored in 8 bits, which alone
/// costs up to 1/510). Default (refined and smoothed) masks: IoU ≥ 0.93 with MediaPipe's, and on a still
/// picture with fresh noise every frame at most half of the raw model's frame-to-frame change.
final class SegmentationTests: XCTestCase {
    func testRawMasksAgreeWithMediaPipeOnPictures() throws {
        try VisionReference.require()
        for model in PersonSegmenter.Model.allCases {
            let segmenter = try PersonSegmenter(model: model, options: .raw)
            for name in VisionReference.pictures {
                let frame = try VisionReference.picture(name)
                let mask = segmenter.segment(frame)
                XCTAssertEqual(mask.width, frame.width)
                XCTAssertEqual(mask.height, frame.height)
                let reference = try NumPy.read(contentsOf: VisionReference.folder.appendingPathComponent("masks/\(name)_\(model).npy"))
                XCTAssertEqual(reference.shape, [frame.height, frame.width])
                let (iou, difference) = maskAgreement(maskValues(mask), reference.scalars[...])
                XCTAssertGreaterThanOrEqual(iou, 0.95, "\(name) \(model)")
                XCTAssertLessThanOrEqual(difference, 0.02, "\(name) \(model)")
            }
        }
    }

    func testRawMasksAgreeWithMediaPipeOnEveryClipFrame() throws {
        try VisionReference.require()
        let frames = try VisionReference.clip()
        for model in PersonSegmenter.Model.allCases {
            let segmenter = try PersonSegmenter(model: model, options: .raw)
            let reference = try NumPy.read(contentsOf: VisionReference.folder.appendingPathComponent("masks/carphone_\(model).npy"))
            XCTAssertEqual(reference.shape, [frames.count, 144, 176])
            var worstIoU: Float = 1, worstDifference: Float = 0
            for (index, frame) in frames.enumerated() {
                let size = 144 * 176
                let (iou, difference) = maskAgreement(maskValues(segmenter.segment(frame)),
                                                      reference.scalars[index * size..<(index + 1) * size])
                worstIoU = min(worstIoU, iou)
                worstDifference = max(worstDifference, difference)
            }
            XCTAssertGreaterThanOrEqual(worstIoU, 0.95, "\(model)")
            XCTAssertLessThanOrEqual(worstDifference, 0.02, "\(model)")
            print("carphone \(model) raw: worst IoU \(worstIoU), worst mean difference \(worstDifference)")
        }
    }

    func testDefaultMasksStillAgreeWithMediaPipe() throws {
        try VisionReference.require()
        for model in PersonSegmenter.Model.allCases {
            for name in ["astronaut", "camera", "grace_hopper", "astronaut_wide"] {
                let segmenter = try PersonSegmenter(model: model)
                let mask = segmenter.segment(try VisionReference.picture(name))
                let reference = try NumPy.read(contentsOf: VisionReference.folder.appendingPathComponent("masks/\(name)_\(model).npy"))
                let (iou, _) = maskAgreement(maskValues(mask), reference.scalars[...])
                XCTAssertGreaterThanOrEqual(iou, 0.93, "\(name) \(model)")
            }
        }
    }

    /// astronaut.png repeated 90 times with fresh Gaussian noise (σ = 3 levels) on every frame: the default
    /// mask's mean frame-to-frame change must be at most half of the raw general model's under MediaPipe
    /// (measured by the reference script on its own noisy frames), and every frame must still agree with
    /// MediaPipe's mask of the clean picture (IoU ≥ 0.93).
    func testDefaultMasksAreSteadyUnderNoise() throws {
        try VisionReference.require()
        let noise = try VisionReference.json("noise.json")
        let mediaPipeChange = Float(try XCTUnwrap(noise["mean_frame_change"] as? Double))
        let clean = try VisionReference.picture("astronaut")
        let reference = try NumPy.read(contentsOf: VisionReference.folder.appendingPathComponent("masks/astronaut_general.npy"))
        let segmenter = try PersonSegmenter(model: .general)
        var gaussian = Gaussian(seed: 8)
        var previous: [Float]?
        var changes: [Float] = []
        var worstIoU: Float = 1
        for _ in 0..<90 {
            let mask = maskValues(segmenter.segment(noisy(clean, sigma: 3, gaussian: &gaussian)))
            if let previous {
                changes.append(zip(mask, previous).map { abs($0 - $1) }.reduce(0, +) / Float(mask.count))
            }
            worstIoU = min(worstIoU, maskAgreement(mask, reference.scalars[...]).iou)
            previous = mask
        }
        let change = changes.reduce(0, +) / Float(changes.count)
        print("noise flicker: ours \(change), MediaPipe raw \(mediaPipeChange); worst IoU \(worstIoU)")
        XCTAssertLessThanOrEqual(change, mediaPipeChange / 2)
        XCTAssertGreaterThanOrEqual(worstIoU, 0.93)
    }

    /// Smoothing follows a person who moves: after a jump the mask is the new one within a few frames.
    func testSmoothedMaskFollowsAMove() throws {
        try VisionReference.require()
        let picture = try VisionReference.picture("astronaut_wide")
        let moved = picture.converted(to: .rgba)
        var shifted = VideoFrame(format: .rgba, width: picture.width, height: picture.height)
        shifted.withMutablePlanes { planes in
            for y in 0..<picture.height {
                let source = moved.plane(0).row(y), target = planes[0].row(y)
                for x in 0..<picture.width { for c in 0..<4 { target[4 * x + c] = source[4 * ((x + 128) % picture.width) + c] } }
            }
        }
        let smoothed = try PersonSegmenter(model: .landscape)
        let fresh = try PersonSegmenter(model: .landscape)
        for _ in 0..<10 { _ = smoothed.segment(picture) }
        var agreement: Float = 0
        for _ in 0..<3 { agreement = maskAgreement(maskValues(smoothed.segment(shifted)), maskValues(fresh.segment(shifted))[...]).iou }
        XCTAssertGreaterThanOrEqual(agreement, 0.95)
    }

    func testTinyFramesGiveMasksOfTheirSize() throws {
        let segmenter = try PersonSegmenter(model: .landscape)
        for (width, height) in [(1, 1), (3, 2), (300, 1)] {
            var frame = VideoFrame(format: .nv12, width: width, height: height)
            frame.withMutablePlanes { planes in for plane in planes { plane.baseAddress.update(repeating: 90, count: plane.bytesPerRow * plane.height) } }
            let mask = segmenter.segment(frame)
            XCTAssertEqual(mask.width, width)
            XCTAssertEqual(mask.height, height)
        }
    }

    func testMissingModelIsOneLineNamingTheFile() {
        let url = URL(fileURLWithPath: "/nonexistent/selfie.tflite")
        XCTAssertThrowsError(try PersonSegmenter(model: .general, modelURL: url)) { error in
            XCTAssertTrue("\(error)".contains("/nonexistent/selfie.tflite"))
        }
    }
}

/// A seeded generator (SplitMix64), so noisy frames are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Standard normal samples by Box–Muller (each pair of uniforms gives two samples).
struct Gaussian {
    var random: SplitMix64
    private var spare: Float?

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func next() -> Float {
        if let value = spare {
            spare = nil
            return value
        }
        let u1 = Float.random(in: Float.ulpOfOne..<1, using: &random), u2 = Float.random(in: 0..<1, using: &random)
        let radius = (-2 * log(u1)).squareRoot()
        spare = radius * sin(2 * .pi * u2)
        return radius * cos(2 * .pi * u2)
    }
}

/// `frame` (RGBA) with Gaussian noise of `sigma` levels added to R, G and B, rounded and clamped.
func noisy(_ frame: VideoFrame, sigma: Float, gaussian: inout Gaussian) -> VideoFrame {
    var copy = VideoFrame(format: .rgba, width: frame.width, height: frame.height)
    let source = frame.plane(0)
    copy.withMutablePlanes { planes in
        for y in 0..<frame.height {
            let input = source.row(y), output = planes[0].row(y)
            for x in 0..<frame.width {
                for c in 0..<3 {
                    output[4 * x + c] = UInt8(min(max((Float(input[4 * x + c]) + sigma * gaussian.next()).rounded(), 0), 255))
                }
                output[4 * x + 3] = 255
            }
        }
    }
    return copy
}
