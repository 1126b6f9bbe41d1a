import Foundation
import VFXCore
import VFXTestSupport
@testable import VFXVision
import XCTest

/// The face detector: its numeric parts (anchors, decoding, weighted suppression) against the definitions
/// evaluated here, and the whole detector against MediaPipe's Python solution on every test picture and
/// every carphone frame, for both models, with the tolerances: mean IoU of matched boxes ≥ 0.95, at
/// most 5 % of faces missed or extra (faces within 0.1 of the threshold excepted), keypoints on average within
/// 5 % of the box width (MediaPipe against itself after a JPEG q90 re-encode: IoU 0.97, keypoints 1.3 %), and
/// no single keypoint off by more than 10 %.
final class FaceDetectionTests: XCTestCase {
    // MARK: anchors

    /// Fixed-size anchors: cell centres of a 16×16 map (2 per cell) then an 8×8 map (6 per cell: the three
    /// stride-16 layers share one map, two anchors each).
    func testShortRangeAnchorsAreTheFeatureMapCentres() {
        let anchors = SSDAnchorOptions.faceShortRange.anchors()
        var expected: [Anchor] = []
        for (cells, perCell) in [(16, 2), (8, 6)] {
            for y in 0..<cells {
                for x in 0..<cells {
                    for _ in 0..<perCell {
                        expected.append(Anchor(centerX: (Float(x) + 0.5) / Float(cells), centerY: (Float(y) + 0.5) / Float(cells),
                                               width: 1, height: 1))
                    }
                }
            }
        }
        XCTAssertEqual(anchors.count, 896)
        XCTAssertEqual(anchors, expected)
        XCTAssertEqual(anchors[0], Anchor(centerX: 0.03125, centerY: 0.03125, width: 1, height: 1))
        XCTAssertEqual(anchors[512], Anchor(centerX: 0.0625, centerY: 0.0625, width: 1, height: 1))
    }

    func testFullRangeAnchorsAreOnePerCellOfA48Map() {
        let anchors = SSDAnchorOptions.faceFullRange.anchors()
        XCTAssertEqual(anchors.count, 2304)
        for (index, anchor) in anchors.enumerated() {
            XCTAssertEqual(anchor.centerX, (Float(index % 48) + 0.5) / 48, accuracy: 1e-7)
            XCTAssertEqual(anchor.centerY, (Float(index / 48) + 0.5) / 48, accuracy: 1e-7)
        }
    }

    /// Sized anchors: scale linear in the layer index, aspect ratio r gives (s√r, s/√r), and the interpolated
    /// anchor √(s_i·s_{i+1}) (1 after the last layer).
    func testSizedAnchorsFollowTheScaleFormula() {
        var options = SSDAnchorOptions.faceShortRange
        options.fixedAnchorSize = false
        options.aspectRatios = [1, 2]
        options.strides = [8, 16]
        let anchors = options.anchors()
        XCTAssertEqual(anchors.count, 16 * 16 * 3 + 8 * 8 * 3)
        let s0: Float = 0.1484375, s1: Float = 0.75
        let first = Array(anchors[0..<3])
        XCTAssertEqual(first[0].width, s0, accuracy: 1e-6)
        XCTAssertEqual(first[1].width, s0 * Float(2).squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(first[1].height, s0 / Float(2).squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(first[2].width, (s0 * s1).squareRoot(), accuracy: 1e-6)
        let last = anchors[anchors.count - 1]
        XCTAssertEqual(last.width, s1.squareRoot(), accuracy: 1e-6)
        XCTAssertEqual(last.centerX, 7.5 / 8, accuracy: 1e-7)
    }

    // MARK: decoding and suppression

    func testDecodingFollowsTheRegressorFormula() {
        let anchors = [Anchor(centerX: 0.25, centerY: 0.75, width: 1, height: 1), Anchor(centerX: 0.5, centerY: 0.5, width: 1, height: 1),
                       Anchor(centerX: 0.5, centerY: 0.5, width: 1, height: 1)]
        var boxes = [Float](repeating: 0, count: 48)
        // Anchor 0: a 32×16 box 8 px right of and 4 px above the anchor, keypoint k at (k, -k) px.
        boxes[0] = 8; boxes[1] = -4; boxes[2] = 32; boxes[3] = 16
        for k in 0..<6 { boxes[4 + 2 * k] = Float(k); boxes[5 + 2 * k] = -Float(k) }
        // Anchor 2: negative width, dropped whatever its score.
        boxes[34] = -3; boxes[35] = 5
        let scores: [Float] = [2, -0.1, 500]
        let decoded = boxes.withUnsafeBufferPointer { b in
            scores.withUnsafeBufferPointer { DetectionDecoding.faceShortRange.decode(boxes: b, scores: $0, anchors: anchors) }
        }
        XCTAssertEqual(decoded.count, 1, "anchor 1 is below 0.5, anchor 2 has a negative width")
        let face = decoded[0]
        XCTAssertEqual(face.score, 1 / (1 + exp(-2)), accuracy: 1e-6)
        XCTAssertEqual(face.box.x, 0.25 + 8 / 128 - 16 / 128, accuracy: 1e-6)
        XCTAssertEqual(face.box.y, 0.75 - 4 / 128 - 8 / 128, accuracy: 1e-6)
        XCTAssertEqual(face.box.width, 32 / 128, accuracy: 1e-6)
        XCTAssertEqual(face.box.height, 16 / 128, accuracy: 1e-6)
        for k in 0..<6 {
            XCTAssertEqual(face.keypoints[k].x, 0.25 + Float(k) / 128, accuracy: 1e-6)
            XCTAssertEqual(face.keypoints[k].y, 0.75 - Float(k) / 128, accuracy: 1e-6)
        }
        // Logits are clipped at ±100 before the sigmoid: a huge logit scores exactly 1.
        var clipped = DetectionDecoding.faceShortRange
        clipped.scoreClipping = 1
        let clippedScores: [Float] = [50, -50, -50]
        let capped = boxes.withUnsafeBufferPointer { b in clippedScores.withUnsafeBufferPointer { clipped.decode(boxes: b, scores: $0, anchors: anchors) } }
        XCTAssertEqual(capped.first?.score ?? 0, 1 / (1 + exp(-1)), accuracy: 1e-6)
    }

    func testWeightedSuppressionAveragesOverlappingBoxesByScore() {
        func detection(_ x: Float, _ score: Float) -> RawDetection {
            RawDetection(box: NormalizedRect(x: x, y: 0.2, width: 0.2, height: 0.2), score: score,
                         keypoints: [NormalizedPoint(x: x, y: 0.3), NormalizedPoint(x: x + 0.1, y: 0.3)])
        }
        // Boxes 0.2 wide at x = 0.50, 0.52, 0.62 and 0.9: the best (0.9) overlaps nothing; the next (0.52)
        // overlaps 0.50 by IoU 0.82 and 0.62 by IoU 0.33, both above 0.3.
        let input = [detection(0.50, 0.6), detection(0.9, 0.95), detection(0.52, 0.8), detection(0.62, 0.7)]
        let output = weightedNonMaxSuppression(input, iouThreshold: 0.3)
        XCTAssertEqual(output.map(\.score), [0.95, 0.8], "the merged detection keeps its best score")
        XCTAssertEqual(output[0].box, input[1].box, "a lone detection is kept as it is")
        // The 0.8 detection gathers 0.52 (itself), 0.50 (IoU 0.82) and 0.62 (IoU 0.33 > 0.3).
        let gathered = [input[2], input[0], input[3]]
        let total = gathered.map(\.score).reduce(0, +)
        let x = gathered.map { $0.box.x * $0.score }.reduce(0, +) / total
        let maxX = gathered.map { $0.box.maxX * $0.score }.reduce(0, +) / total
        XCTAssertEqual(output[1].box.x, x, accuracy: 1e-6)
        XCTAssertEqual(output[1].box.width, maxX - x, accuracy: 1e-6)
        XCTAssertEqual(output[1].keypoints[1].x, gathered.map { ($0.box.x + 0.1) * $0.score }.reduce(0, +) / total, accuracy: 1e-6)
        XCTAssertEqual(output.count, 2, "everything else was merged into the 0.8 detection")
        XCTAssertTrue(weightedNonMaxSuppression([], iouThreshold: 0.3).isEmpty)
    }

    // MARK: against MediaPipe

    func testPicturesAgreeWithMediaPipe() throws {
        try VisionReference.require()
        let reference = try XCTUnwrap(try VisionReference.json("faces.json")["images"] as? [String: [String: Any]])
        for model in FaceDetector.Model.allCases {
            let detector = try FaceDetector(model: model)
            let key = model == .shortRange ? "short" : "full"
            var agreement = FaceAgreement()
            for name in VisionReference.pictures {
                let frame = try VisionReference.picture(name)
                let ours = detector.detect(in: frame).map(VisionReference.Face.init)
                let theirs = try VisionReference.faces(reference[name]?[key])
                agreement.add(ours: ours, reference: theirs, threshold: model.defaultMinScore)
                // Our own figures are far inside the issue's: same pixels, same arithmetic.
                for (a, b) in zip(ours, theirs) {
                    XCTAssertEqual(a.score, b.score, accuracy: 0.01, "\(name) \(key)")
                    XCTAssertGreaterThan(a.box.intersectionOverUnion(with: b.box), 0.98, "\(name) \(key)")
                }
            }
            XCTAssertGreaterThanOrEqual(agreement.meanIoU, 0.95, "\(key)")
            XCTAssertLessThanOrEqual(agreement.missedOrExtraFraction, 0.05, "\(key)")
            XCTAssertLessThanOrEqual(agreement.meanKeypointError, 0.05, "\(key)")
            XCTAssertLessThanOrEqual(agreement.worstKeypointError, 0.1, "\(key)")
            XCTAssertGreaterThanOrEqual(agreement.ious.count, 7, "\(key): faces compared")
        }
    }

    /// Group pictures (portraits shrunk into a 4×2 and a 6×3 grid on 1280×720, one face per tile): recall
    /// (tiles with a face found) and precision (faces found inside a tile, one per tile), ours beside
    /// MediaPipe's. The full-range model must find at least what MediaPipe's finds, less 5 %, at precision ≥ 0.95.
    func testGroupPicturesFindWhatMediaPipeFinds() throws {
        try VisionReference.require()
        let tiles = try XCTUnwrap(try VisionReference.json("groups.json")["tiles"] as? [String: [[Double]]])
        let reference = try XCTUnwrap(try VisionReference.json("faces.json")["images"] as? [String: [String: Any]])
        func score(_ faces: [VisionReference.Face], tiles: [[Double]]) -> (found: Int, correct: Int) {
            var used = Set<Int>()
            var correct = 0
            for face in faces {
                let centre = face.box.center
                if let tile = tiles.firstIndex(where: { Float($0[0]) <= centre.x && centre.x <= Float($0[0] + $0[2])
                    && Float($0[1]) <= centre.y && centre.y <= Float($0[1] + $0[3]) }), !used.contains(tile) {
                    used.insert(tile)
                    correct += 1
                }
            }
            return (used.count, correct)
        }
        for model in FaceDetector.Model.allCases {
            let key = model == .shortRange ? "short" : "full"
            let detector = try FaceDetector(model: model)
            var ours = (found: 0, correct: 0, detections: 0), theirs = (found: 0, correct: 0, detections: 0), total = 0
            for (name, rectangles) in tiles.sorted(by: { $0.key < $1.key }) {
                let mine = detector.detect(in: try VisionReference.picture(name)).map(VisionReference.Face.init)
                let mediaPipe = try VisionReference.faces(reference[name]?[key])
                let a = score(mine, tiles: rectangles), b = score(mediaPipe, tiles: rectangles)
                ours = (ours.found + a.found, ours.correct + a.correct, ours.detections + mine.count)
                theirs = (theirs.found + b.found, theirs.correct + b.correct, theirs.detections + mediaPipe.count)
                total += rectangles.count
            }
            let recall = Float(ours.found) / Float(total), mediaPipeRecall = Float(theirs.found) / Float(total)
            let precision = ours.detections == 0 ? 1 : Float(ours.correct) / Float(ours.detections)
            print("groups \(key): recall \(recall) (MediaPipe \(mediaPipeRecall)), precision \(precision)")
            XCTAssertGreaterThanOrEqual(recall, mediaPipeRecall - 0.05, key)
            XCTAssertGreaterThanOrEqual(precision, 0.95, key)
        }
    }

    /// Every frame of the clip, decoded by VideoFX (I420, sampled in YUV) while MediaPipe got FFmpeg's RGB.
    func testCarphoneClipAgreesWithMediaPipe() throws {
        try VisionReference.require()
        let reference = try XCTUnwrap(try VisionReference.json("faces.json")["carphone"] as? [String: [Any]])
        let frames = try VisionReference.clip()
        for model in FaceDetector.Model.allCases {
            let detector = try FaceDetector(model: model)
            let key = model == .shortRange ? "short" : "full"
            let expected = try XCTUnwrap(reference[key])
            XCTAssertEqual(frames.count, expected.count)
            var agreement = FaceAgreement()
            for (frame, faces) in zip(frames, expected) {
                agreement.add(ours: detector.detect(in: frame).map(VisionReference.Face.init),
                              reference: try VisionReference.faces(faces), threshold: model.defaultMinScore)
            }
            XCTAssertEqual(agreement.referenceCount, 120, key)
            XCTAssertGreaterThanOrEqual(agreement.meanIoU, 0.95, key)
            XCTAssertLessThanOrEqual(agreement.missedOrExtraFraction, 0.05, key)
            XCTAssertLessThanOrEqual(agreement.meanKeypointError, 0.05, key)
            XCTAssertLessThanOrEqual(agreement.worstKeypointError, 0.1, key)
            print("carphone \(key): mean IoU \(agreement.meanIoU), keypoint error mean \(agreement.meanKeypointError) "
                  + "worst \(agreement.worstKeypointError)")
        }
    }

    /// The same picture in every pixel format the detector reads gives the same faces.
    func testPixelFormatsGiveTheSameFaces() throws {
        try VisionReference.require()
        let rgba = try VisionReference.picture("grace_hopper")
        let detector = try FaceDetector(model: .shortRange)
        let expected = detector.detect(in: rgba)
        XCTAssertEqual(expected.count, 1)
        for format in [PixelFormat.i420, .nv12, .bgra] {
            let converted = rgba.converted(to: format, color: format.isYUV ? .jpeg : nil)
            let faces = detector.detect(in: converted)
            XCTAssertEqual(faces.count, 1, "\(format)")
            if let face = faces.first, let reference = expected.first {
                XCTAssertGreaterThan(face.boundingBox.intersectionOverUnion(with: reference.boundingBox), 0.97, "\(format)")
            }
        }
        let gray = rgba.converted(to: .gray8)
        XCTAssertEqual(detector.detect(in: gray).count, 1, "gray")
    }

    /// Roll is the angle of the right-eye → left-eye line in pixels, positive clockwise on screen: level on the
    /// upright photo, clearly clockwise on the photo turned a quarter clockwise (where the detector's own eye
    /// points, MediaPipe's as well as ours, give about 55°), and by the formula on a hand-made pair.
    func testRollFollowsTheEyes() throws {
        try VisionReference.require()
        let detector = try FaceDetector(model: .shortRange)
        let upright = try XCTUnwrap(detector.detect(in: try VisionReference.picture("astronaut")).first)
        let turned = try XCTUnwrap(detector.detect(in: try VisionReference.picture("astronaut_rot90")).first)
        XCTAssertLessThan(abs(upright.roll), 0.2)
        XCTAssertGreaterThan(turned.roll, 0.7)
        XCTAssertEqual(turned.roll, FaceObservation.roll(rightEye: turned[.rightEye], leftEye: turned[.leftEye], width: 512, height: 512))
        let roll = FaceObservation.roll(rightEye: NormalizedPoint(x: 0.4, y: 0.5), leftEye: NormalizedPoint(x: 0.5, y: 0.6),
                                        width: 200, height: 100)
        XCTAssertEqual(roll, atan2(10, 20), accuracy: 1e-6)
        XCTAssertEqual(upright.boundingBox.bottomLeftOrigin.y, 1 - upright.boundingBox.y - upright.boundingBox.height)
    }

    // MARK: bad input

    func testTinyAndBlankFramesGiveNoFaces() throws {
        let detector = try FaceDetector(model: .fullRange)
        for (width, height) in [(1, 1), (2, 3), (7, 1)] {
            var frame = VideoFrame(format: .i420, width: width, height: height)
            frame.withMutablePlanes { planes in for plane in planes { plane.baseAddress.update(repeating: 128, count: plane.bytesPerRow * plane.height) } }
            XCTAssertEqual(detector.detect(in: frame), [], "\(width)x\(height)")
        }
    }

    func testCorruptModelIsOneLineNamingTheFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).tflite")
        try Data("not a model at all".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertThrowsError(try FaceDetector(model: .shortRange, modelURL: url)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains(url.path), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
        // A valid model of the wrong kind is refused by its tensor shapes.
        XCTAssertThrowsError(try FaceDetector(model: .shortRange, modelURL: VisionModels.url(for: "face_landmark.tflite"))) { error in
            XCTAssertTrue("\(error)".contains("face_landmark.tflite"), "\(error)")
        }
        XCTAssertThrowsError(try FaceDetector(model: .shortRange, minScore: 1.5))
    }
}
