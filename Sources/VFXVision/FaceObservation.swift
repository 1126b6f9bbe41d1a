import Foundation
import VFXCore

/// The six face keypoints of MediaPipe's face detectors, in the order the models give them. "Right" and
/// "left" are the subject's sides (the right eye appears on the left of an unmirrored picture).
public enum FaceKeypoint: Int, Sendable, CaseIterable {
    case rightEye, leftEye, noseTip, mouthCenter, rightEarTragion, leftEarTragion
}

/// A detected face in normalized frame coordinates (origin top-left, x right, y down, 0…1 across the frame).
///
/// ```swift
/// let faces = try FaceDetector(model: .shortRange).detect(in: frame)
/// if let face = faces.first {
///     print(face.boundingBox, face.score, face[.noseTip], face.roll * 180 / .pi)
///     let visionBox = face.boundingBox.bottomLeftOrigin        // Apple Vision's convention
/// }
/// ```
public struct FaceObservation: Sendable, Hashable {
    /// The face box: top-left corner and size.
    public var boundingBox: NormalizedRect
    /// The detector's confidence, 0…1.
    public var score: Float
    /// The six keypoints in `FaceKeypoint` order.
    public var keypoints: [NormalizedPoint]
    /// In-plane rotation of the face in radians, from the line through the eyes measured in pixels:
    /// 0 when the eyes are level, positive when the face is turned clockwise on screen.
    public var roll: Float

    public init(boundingBox: NormalizedRect, score: Float, keypoints: [NormalizedPoint], roll: Float) {
        self.boundingBox = boundingBox
        self.score = score
        self.keypoints = keypoints
        self.roll = roll
    }

    public subscript(_ keypoint: FaceKeypoint) -> NormalizedPoint { keypoints[keypoint.rawValue] }

    /// The roll of a face whose eyes are at `rightEye` and `leftEye` in a `width`×`height` frame.
    public static func roll(rightEye: NormalizedPoint, leftEye: NormalizedPoint, width: Int, height: Int) -> Float {
        atan2((leftEye.y - rightEye.y) * Float(height), (leftEye.x - rightEye.x) * Float(width))
    }
}

/// The faces found in one frame, attached to it (`frame.attachments[FaceObservations.self]`) with the
/// timestamp of the frame they were computed from.
public struct FaceObservations: Sendable, Hashable {
    public var faces: [FaceObservation]
    /// The timestamp of the analysed frame (nil when it had none).
    public var timestamp: MediaTime?

    public init(faces: [FaceObservation], timestamp: MediaTime?) {
        self.faces = faces
        self.timestamp = timestamp
    }
}
