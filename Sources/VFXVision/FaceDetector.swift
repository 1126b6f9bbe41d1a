import Foundation
import VFXCore
import VFXNeural

/// Finds faces with MediaPipe's BlazeFace models, as MediaPipe's face detection graph does: the whole frame
/// letterboxed into the model's square input (aspect ratio kept, black bars), SSD anchors, box and keypoint
/// decoding, weighted non-maximum suppression (IoU 0.3), then the letterbox removed.
///
/// Results are in normalized frame coordinates, origin top-left (see `FaceObservation`). The detector reads
/// the frame's own planes (I420, NV12, RGBA, BGRA, gray) and allocates nothing large per frame. One
/// instance is used by one thread at a time.
///
/// ```swift
/// let detector = try FaceDetector(model: .shortRange)          // faces within about 2 m
/// let faces = detector.detect(in: frame)                        // [FaceObservation], best first
/// let far = try FaceDetector(model: .fullRange, minScore: 0.5)  // small faces, group photos
/// ```
public final class FaceDetector {
    public enum Model: String, Sendable, CaseIterable {
        /// `face_detection_short_range.tflite`: 128×128, 896 anchors, default minimum score 0.5.
        case shortRange
        /// `face_detection_full_range_sparse.tflite`: 192×192, 2304 anchors, default minimum score 0.6.
        case fullRange

        public var fileName: String {
            self == .shortRange ? "face_detection_short_range.tflite" : "face_detection_full_range_sparse.tflite"
        }
        public var anchorOptions: SSDAnchorOptions { self == .shortRange ? .faceShortRange : .faceFullRange }
        public var decoding: DetectionDecoding { self == .shortRange ? .faceShortRange : .faceFullRange }
        /// MediaPipe's score threshold for this model.
        public var defaultMinScore: Float { decoding.minScore }
        var inputSize: Int { anchorOptions.inputWidth }
    }

    public let model: Model
    /// Detections scoring below this (0…1) are dropped before suppression.
    public let minScore: Float
    /// IoU above which two detections are merged (MediaPipe's 0.3).
    public let iouThreshold: Float = 0.3
    private let network: NeuralModel
    private let anchors: [Anchor]
    private let sampler: TensorSampler
    private let boxesOutput: Int
    private let scoresOutput: Int

    /// Loads the model (`modelURL` defaults to `VisionModels.url(for: model.fileName)`).
    public init(model: Model = .shortRange, minScore: Float? = nil, modelURL: URL? = nil, threads: Int = 1) throws {
        self.model = model
        let score = minScore ?? model.defaultMinScore
        guard score >= 0 && score <= 1 else { throw VisionError("face detector: minimum score must be 0…1, got \(score)") }
        self.minScore = score
        anchors = model.anchorOptions.anchors()
        let size = model.inputSize
        let url = modelURL ?? VisionModels.url(for: model.fileName)
        network = try VisionModels.load(url, threads: threads, inputs: [[1, size, size, 3]],
                                        outputs: [[1, anchors.count, 16], [1, anchors.count, 1]])
        boxesOutput = 0
        scoresOutput = 1
        sampler = TensorSampler(width: size, height: size, range: (-1, 1), border: .zero)
    }

    /// The faces in `frame`, best score first. An empty frame region or a frame without faces gives `[]`.
    public func detect(in frame: VideoFrame) -> [FaceObservation] {
        let size = model.inputSize
        let region = PixelRegion.frame(width: frame.width, height: frame.height, letterboxedTo: (size, size))
        return detect(in: frame, region: region)
    }

    /// The faces inside `region` of `frame` (pixels; rotation 0), in normalized frame coordinates.
    func detect(in frame: VideoFrame, region: PixelRegion) -> [FaceObservation] {
        network.withInputBuffer(0) { sampler.sample(frame, region: region, into: $0.baseAddress!) }
        network.invoke()
        var decoding = model.decoding
        decoding.minScore = minScore
        let raw = network.withOutputBuffer(boxesOutput) { boxes in
            network.withOutputBuffer(scoresOutput) { scores in decoding.decode(boxes: boxes, scores: scores, anchors: anchors) }
        }
        let merged = weightedNonMaxSuppression(raw, iouThreshold: iouThreshold)
        let width = Float(frame.width), height = Float(frame.height)
        func project(_ point: NormalizedPoint) -> NormalizedPoint {
            let pixel = region.framePoint(u: point.x, v: point.y)
            return NormalizedPoint(x: pixel.x / width, y: pixel.y / height)
        }
        return merged.map { detection in
            let topLeft = project(NormalizedPoint(x: detection.box.x, y: detection.box.y))
            let bottomRight = project(NormalizedPoint(x: detection.box.maxX, y: detection.box.maxY))
            let keypoints = detection.keypoints.map(project)
            return FaceObservation(
                boundingBox: NormalizedRect(x: topLeft.x, y: topLeft.y, width: bottomRight.x - topLeft.x,
                                            height: bottomRight.y - topLeft.y),
                score: detection.score, keypoints: keypoints,
                roll: FaceObservation.roll(rightEye: keypoints[0], leftEye: keypoints[1], width: frame.width, height: frame.height))
        }
    }
}
