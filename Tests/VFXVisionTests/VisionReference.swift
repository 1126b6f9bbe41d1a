import Foundation
import VFXCore
import VFXMedia
import VFXNeural
import VFXTestSupport
@testable import VFXVision
import XCTest

/// MediaPipe's own outputs for the test pictures and the carphone clip, made by
/// scripts/reference/make_vision_reference.py into .build/reference-vision (`make test` runs it).
enum VisionReference {
    static let folder = TestMedia.root.appendingPathComponent(".build/reference-vision")

    /// Skips the test with a plain message when the references were not made.
    static func require() throws {
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("faces.json").path) else {
            throw XCTSkip("no MediaPipe references in .build/reference-vision (run scripts/setup.sh --python)")
        }
    }

    static let pictures = ["astronaut", "camera", "grace_hopper", "astronaut_rot90", "grace_hopper_rot180", "astronaut_wide",
                           "grace_hopper_crop", "grace_hopper_small", "camera_small", "group_4x2", "group_6x3"]

    static func json(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent(name))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The picture `name` as our reader decodes it (RGBA for these PNGs).
    static func picture(_ name: String) throws -> VideoFrame {
        let reader = try MediaReader(path: folder.appendingPathComponent("images/\(name).png").path)
        return try XCTUnwrap(reader.nextFrame())
    }

    /// Every frame of the carphone clip, decoded by VideoFX (I420).
    static func clip() throws -> [VideoFrame] {
        let reader = try MediaReader(path: TestMedia.path("carphone_pristine.mp4"))
        var frames: [VideoFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        return frames
    }

    /// A face as the reference JSON gives it: box [x, y, w, h], score, keypoints [[x, y]].
    struct Face {
        var box: NormalizedRect
        var score: Float
        var keypoints: [NormalizedPoint]

        init(box: NormalizedRect, score: Float, keypoints: [NormalizedPoint]) {
            self.box = box
            self.score = score
            self.keypoints = keypoints
        }

        init(json: Any) throws {
            let object = try XCTUnwrap(json as? [String: Any])
            let box = try XCTUnwrap(object["box"] as? [Double]).map(Float.init)
            self.box = NormalizedRect(x: box[0], y: box[1], width: box[2], height: box[3])
            score = Float(try XCTUnwrap(object["score"] as? Double))
            keypoints = try XCTUnwrap(object["keypoints"] as? [[Double]]).map { NormalizedPoint(x: Float($0[0]), y: Float($0[1])) }
        }

        init(_ observation: FaceObservation) {
            self.init(box: observation.boundingBox, score: observation.score, keypoints: observation.keypoints)
        }
    }

    static func faces(_ json: Any?) throws -> [Face] { try XCTUnwrap(json as? [Any]).map(Face.init(json:)) }
}

/// How two lists of faces agree: matched pairs (greedy by IoU > 0.3), and the unmatched on either side.
struct FaceAgreement {
    var ious: [Float] = []
    /// Keypoint distances over the reference box width, six per matched face.
    var keypointErrors: [Float] = []
    var missed = 0
    var extra = 0
    var referenceCount = 0

    /// Adds one frame. Faces within `margin` of `threshold` on the unmatched side are not counted.
    mutating func add(ours: [VisionReference.Face], reference: [VisionReference.Face], threshold: Float, margin: Float = 0.1) {
        var unmatched = Array(ours.indices)
        referenceCount += reference.count
        for face in reference {
            let best = unmatched.max { ours[$0].box.intersectionOverUnion(with: face.box) < ours[$1].box.intersectionOverUnion(with: face.box) }
            guard let best, ours[best].box.intersectionOverUnion(with: face.box) > 0.3 else {
                if face.score >= threshold + margin { missed += 1 }
                continue
            }
            unmatched.removeAll { $0 == best }
            ious.append(ours[best].box.intersectionOverUnion(with: face.box))
            let distances = zip(ours[best].keypoints, face.keypoints).map { hypot($0.x - $1.x, $0.y - $1.y) / face.box.width }
            keypointErrors += distances
        }
        extra += unmatched.filter { ours[$0].score >= threshold + margin }.count
    }

    var meanIoU: Float { ious.isEmpty ? 1 : ious.reduce(0, +) / Float(ious.count) }
    var meanKeypointError: Float { keypointErrors.isEmpty ? 0 : keypointErrors.reduce(0, +) / Float(keypointErrors.count) }
    var worstKeypointError: Float { keypointErrors.max() ?? 0 }
    var missedOrExtraFraction: Float { Float(missed + extra) / Float(max(referenceCount, 1)) }
}

/// The mask in 0…1 floats, row by row.
func maskValues(_ mask: PersonMask) -> [Float] {
    var values: [Float] = []
    values.reserveCapacity(mask.width * mask.height)
    for y in 0..<mask.height {
        for x in 0..<mask.width { values.append(Float(mask[x: x, y: y]) / 255) }
    }
    return values
}

/// IoU of the masks thresholded at 0.5 (1 when both are empty), and their mean absolute difference.
func maskAgreement(_ a: [Float], _ b: ArraySlice<Float>) -> (iou: Float, meanDifference: Float) {
    var intersection = 0, union = 0
    var difference: Float = 0
    for (x, y) in zip(a, b) {
        let inA = x > 0.5, inB = y > 0.5
        if inA && inB { intersection += 1 }
        if inA || inB { union += 1 }
        difference += abs(x - y)
    }
    return (union == 0 ? 1 : Float(intersection) / Float(union), difference / Float(max(a.count, 1)))
}
