import Foundation
import VFXCore
import VFXVision

/// The faces a face effect works on, frame after frame: the frame's attached `FaceObservations` when an
/// analysis stage put them there, otherwise its own detector run on the frame: the short-range model, or with
/// `farFaces` the full-range one on frames wider than 640 pixels and both on smaller frames (the short-range model
/// misses a far face in a small picture: a player 19 px wide in a 548×342 photo; the full-range one can miss a close
/// face; faces both find, overlapping by IoU > 0.3, are counted once). A face the detector misses is held
/// where it was last seen for `hold` frames, so a face is not left uncovered between detections; with
/// `smoothing`, positions are steadied by the One Euro filter (`FaceSmoother`).
///
/// ```swift
/// let source = FaceSource(farFaces: true, smoothing: false, hold: 15)
/// try source.prepare(width: 1280, height: 720)                // loads the full-range model
/// let faces = source.faces(in: frame)
/// ```
final class FaceSource {
    let farFaces: Bool
    let hold: Int
    private let smoother: FaceSmoother?
    private var detectors: [FaceDetector] = []
    private var tracks: [(face: FaceObservation, missed: Int)] = []
    private var index = 0

    init(farFaces: Bool, smoothing: Bool, hold: Int) {
        self.farFaces = farFaces
        self.hold = hold
        smoother = smoothing ? FaceSmoother() : nil
    }

    /// Chooses and loads the model for frames of this size; forgets the faces seen so far.
    func prepare(width: Int, height: Int) throws {
        let models: [FaceDetector.Model] = !farFaces ? [.shortRange] : width > 640 ? [.fullRange] : [.shortRange, .fullRange]
        if detectors.map(\.model) != models { detectors = try models.map { try FaceDetector(model: $0) } }
        reset()
    }

    func reset() {
        tracks = []
        index = 0
        smoother?.reset()
    }

    /// The faces of `frame` (normalized, origin top-left), held and smoothed as configured.
    func faces(in frame: VideoFrame) -> [FaceObservation] {
        defer { index += 1 }
        var found = frame.attachments[FaceObservations.self]?.faces ?? detect(in: frame)
        if let smoother {
            found = smoother.smooth(found, at: frameSeconds(frame, index: index), width: frame.width, height: frame.height)
        }
        var next: [(face: FaceObservation, missed: Int)] = found.map { ($0, 0) }
        for track in tracks where track.missed < hold {
            let seen = found.contains { $0.boundingBox.intersectionOverUnion(with: track.face.boundingBox) > 0.05 }
            if !seen { next.append((track.face, track.missed + 1)) }
        }
        tracks = next
        return tracks.map(\.face)
    }
}

extension FaceSource {
    /// Every detector's faces; those of a later detector only where no earlier one found the face.
    private func detect(in frame: VideoFrame) -> [FaceObservation] {
        var faces: [FaceObservation] = []
        for detector in detectors {
            for face in detector.detect(in: frame)
            where !faces.contains(where: { $0.boundingBox.intersectionOverUnion(with: face.boundingBox) > 0.3 }) {
                faces.append(face)
            }
        }
        return faces
    }
}

/// A rectangle in frame pixels, clipped to the frame, with even corners (so chroma planes line up).
struct PixelRect {
    var x: Int, y: Int, width: Int, height: Int

    /// The face box grown by `margin` (a fraction of the box's size on every side), in pixels.
    init?(face box: NormalizedRect, margin: Float, frameWidth: Int, frameHeight: Int) {
        let w = Float(frameWidth), h = Float(frameHeight)
        let left = (box.x - box.width * margin) * w, right = (box.maxX + box.width * margin) * w
        let top = (box.y - box.height * margin) * h, bottom = (box.maxY + box.height * margin) * h
        let x0 = max(0, Int(left.rounded(.down)) & ~1), y0 = max(0, Int(top.rounded(.down)) & ~1)
        let x1 = min(frameWidth, Int(right.rounded(.up))), y1 = min(frameHeight, Int(bottom.rounded(.up)))
        guard x1 > x0, y1 > y0, left.isFinite, top.isFinite else { return nil }
        (x, y, width, height) = (x0, y0, x1 - x0, y1 - y0)
    }

    /// The same rectangle on a plane with `subsampling`.
    func on(_ shape: PlaneShape) -> (x: Int, y: Int, width: Int, height: Int) {
        let s = shape.subsampling
        let x0 = x / s, y0 = y / s
        let x1 = min(shape.width, (x + width + s - 1) / s), y1 = min(shape.height, (y + height + s - 1) / s)
        return (x0, y0, max(x1 - x0, 0), max(y1 - y0, 0))
    }
}
