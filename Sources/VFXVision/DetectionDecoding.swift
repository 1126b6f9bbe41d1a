import Foundation

/// A decoded detection in normalized tensor coordinates (before the letterbox is removed).
public struct RawDetection: Sendable, Hashable {
    public var box: NormalizedRect
    public var score: Float
    public var keypoints: [NormalizedPoint]

    public init(box: NormalizedRect, score: Float, keypoints: [NormalizedPoint]) {
        self.box = box
        self.score = score
        self.keypoints = keypoints
    }
}

/// How raw regressor and classifier tensors become detections, as MediaPipe's `TensorsToDetectionsCalculator`
/// options describe it for BlazeFace: per anchor 4 box values (x centre, y centre, width, height, in that
/// order) then keypoint (x, y) pairs, all in tensor pixels relative to the anchor; one score logit.
///
/// ```swift
/// let decoding = DetectionDecoding.faceShortRange
/// let detections = decoding.decode(boxes: regressors, scores: logits, anchors: anchors)
/// let faces = weightedNonMaxSuppression(detections, iouThreshold: 0.3)
/// ```
public struct DetectionDecoding: Sendable, Hashable {
    public var valuesPerBox: Int
    public var keypointCount: Int
    /// Tensor size that the regressors are measured in (x, y, width, height).
    public var scale: Float
    /// Logits are clipped to ±this before the sigmoid.
    public var scoreClipping: Float
    /// Detections below this score (after the sigmoid) are dropped.
    public var minScore: Float

    public static let faceShortRange = DetectionDecoding(valuesPerBox: 16, keypointCount: 6, scale: 128, scoreClipping: 100,
                                                         minScore: 0.5)
    public static let faceFullRange = DetectionDecoding(valuesPerBox: 16, keypointCount: 6, scale: 192, scoreClipping: 100,
                                                        minScore: 0.6)

    /// Detections whose score reaches `minScore` and whose box has a non-negative size, in anchor order.
    public func decode(boxes: UnsafeBufferPointer<Float>, scores: UnsafeBufferPointer<Float>, anchors: [Anchor]) -> [RawDetection] {
        let count = min(anchors.count, scores.count, boxes.count / valuesPerBox)
        // sigmoid(x) ≥ minScore ⇔ x ≥ logit(minScore): skip the exponential for the many hopeless anchors.
        let logitThreshold = minScore > 0 && minScore < 1 ? log(minScore / (1 - minScore)) - 1e-3 : -Float.infinity
        var result: [RawDetection] = []
        for index in 0..<count where scores[index] >= logitThreshold || minScore <= 0 {
            let logit = min(max(scores[index], -scoreClipping), scoreClipping)
            let score = 1 / (1 + exp(-logit))
            guard score >= minScore else { continue }
            let anchor = anchors[index]
            let values = boxes.baseAddress! + index * valuesPerBox
            let centerX = values[0] / scale * anchor.width + anchor.centerX
            let centerY = values[1] / scale * anchor.height + anchor.centerY
            let width = values[2] / scale * anchor.width
            let height = values[3] / scale * anchor.height
            guard width >= 0, height >= 0 else { continue }   // also drops NaN
            var keypoints: [NormalizedPoint] = []
            keypoints.reserveCapacity(keypointCount)
            for k in 0..<keypointCount {
                keypoints.append(NormalizedPoint(x: values[4 + 2 * k] / scale * anchor.width + anchor.centerX,
                                                 y: values[5 + 2 * k] / scale * anchor.height + anchor.centerY))
            }
            result.append(RawDetection(box: NormalizedRect(x: centerX - width / 2, y: centerY - height / 2, width: width, height: height),
                                       score: score, keypoints: keypoints))
        }
        return result
    }
}

/// MediaPipe's weighted non-maximum suppression: take the best remaining detection, gather every remaining
/// detection whose IoU with it exceeds `iouThreshold` (itself included), and output the best one's score
/// with the box corners and keypoints averaged over the gathered ones, weighted by score. Ties in score
/// keep the input order. Output sorted by score, best first.
///
/// ```swift
/// let merged = weightedNonMaxSuppression(detections, iouThreshold: 0.3)
/// ```
public func weightedNonMaxSuppression(_ detections: [RawDetection], iouThreshold: Float,
                                      maxCount: Int = .max) -> [RawDetection] {
    var remaining = detections.indices.sorted { (detections[$0].score, $1) > (detections[$1].score, $0) }
    var output: [RawDetection] = []
    while let best = remaining.first, output.count < maxCount {
        let bestBox = detections[best].box
        var gathered: [Int] = []
        var kept: [Int] = []
        for index in remaining {
            if detections[index].box.intersectionOverUnion(with: bestBox) > iouThreshold {
                gathered.append(index)
            } else {
                kept.append(index)
            }
        }
        var merged = detections[best]
        var total: Float = 0, minX: Float = 0, minY: Float = 0, maxX: Float = 0, maxY: Float = 0
        var points = [NormalizedPoint](repeating: NormalizedPoint(x: 0, y: 0), count: merged.keypoints.count)
        for index in gathered {
            let candidate = detections[index]
            let weight = candidate.score
            total += weight
            minX += candidate.box.x * weight
            minY += candidate.box.y * weight
            maxX += candidate.box.maxX * weight
            maxY += candidate.box.maxY * weight
            for k in points.indices where k < candidate.keypoints.count {
                points[k].x += candidate.keypoints[k].x * weight
                points[k].y += candidate.keypoints[k].y * weight
            }
        }
        if total > 0 {
            merged.box = NormalizedRect(x: minX / total, y: minY / total, width: (maxX - minX) / total, height: (maxY - minY) / total)
            merged.keypoints = points.map { NormalizedPoint(x: $0.x / total, y: $0.y / total) }
        }
        output.append(merged)
        remaining = kept
    }
    return output
}
