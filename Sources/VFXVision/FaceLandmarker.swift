import Foundation
import VFXCore
import VFXNeural

/// One face mesh point: x, y in normalized frame coordinates (origin top-left, y down), z a relative depth
/// on the scale of x (MediaPipe's: negative toward the camera, about 0 at the face's centre plane).
public struct LandmarkPoint: Sendable, Hashable {
    public var x: Float
    public var y: Float
    public var z: Float

    public init(x: Float, y: Float, z: Float) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// The 468-point mesh of one face, in MediaPipe's point order.
public struct FaceLandmarks: Sendable, Hashable {
    public var points: [LandmarkPoint]
    /// The smallest box holding every point (normalized, origin top-left).
    public var boundingBox: NormalizedRect
    /// The model's face-presence confidence, 0…1.
    public var presence: Float
    /// In-plane rotation of the face in radians (from the outer eye corners, points 33 and 263), positive
    /// clockwise on screen.
    public var roll: Float

    public init(points: [LandmarkPoint], presence: Float, roll: Float) {
        self.points = points
        self.presence = presence
        self.roll = roll
        boundingBox = FaceLandmarks.bounds(of: points)
    }

    static func bounds(of points: [LandmarkPoint]) -> NormalizedRect {
        guard let first = points.first else { return NormalizedRect(x: 0, y: 0, width: 0, height: 0) }
        var minX = first.x, maxX = first.x, minY = first.y, maxY = first.y
        for point in points {
            minX = min(minX, point.x); maxX = max(maxX, point.x)
            minY = min(minY, point.y); maxY = max(maxY, point.y)
        }
        return NormalizedRect(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }
}

/// The faces' meshes of one frame, attached to it with the timestamp of the frame they came from.
public struct FaceMeshes: Sendable, Hashable {
    public var faces: [FaceLandmarks]
    public var timestamp: MediaTime?

    public init(faces: [FaceLandmarks], timestamp: MediaTime?) {
        self.faces = faces
        self.timestamp = timestamp
    }
}

/// MediaPipe's face mesh (`face_landmark.tflite`, 468 points) as its face mesh graph runs it: the short-range
/// detector finds a face; a square region 1.5× the face box, turned so the eyes are level, is resampled to
/// 192×192; the model gives the points and a presence score. On the next frame the region comes from the
/// previous points (their box, turned by the outer eye corners), so the detector runs again only when a
/// face is lost (presence below `minPresence`) or fewer than `maxFaces` are tracked.
///
/// ```swift
/// let landmarker = try FaceLandmarker()
/// for frame in frames {
///     let meshes = landmarker.process(frame)          // [FaceLandmarks]
///     print(meshes.first?.points[1] as Any)           // the nose tip
/// }
/// ```
public final class FaceLandmarker {
    /// Faces tracked at most.
    public let maxFaces: Int
    /// Below this presence (0…1) a face is lost and the detector runs on the next frame.
    public let minPresence: Float
    /// True: every frame is a new picture (the detector always runs), as MediaPipe's static image mode.
    public let staticImages: Bool
    /// How many times the detector has run (tracking keeps this from growing).
    public private(set) var detectorRuns = 0
    private let detector: FaceDetector
    private let network: NeuralModel
    private let sampler = TensorSampler(width: 192, height: 192, range: (0, 1), border: .replicate)
    private var tracked: [PixelRegion] = []
    private var trackedSize: (width: Int, height: Int) = (0, 0)

    public init(maxFaces: Int = 1, minDetectionScore: Float = 0.5, minPresence: Float = 0.5, staticImages: Bool = false,
                modelURL: URL? = nil, detectorModelURL: URL? = nil, threads: Int = 1) throws {
        guard maxFaces >= 1 else { throw VisionError("face landmarker: maxFaces must be at least 1, got \(maxFaces)") }
        self.maxFaces = maxFaces
        self.minPresence = minPresence
        self.staticImages = staticImages
        detector = try FaceDetector(model: .shortRange, minScore: minDetectionScore, modelURL: detectorModelURL, threads: threads)
        network = try VisionModels.load(modelURL ?? VisionModels.url(for: "face_landmark.tflite"), threads: threads,
                                        inputs: [[1, 192, 192, 3]], outputs: [[1, 1, 1, 1404], [1, 1, 1, 1]])
    }

    /// Forgets the tracked faces (the next frame runs the detector).
    public func reset() { tracked = [] }

    /// The meshes of the faces in `frame`, tracked from the previous call's.
    public func process(_ frame: VideoFrame) -> [FaceLandmarks] {
        if staticImages || trackedSize != (frame.width, frame.height) { tracked = [] }
        trackedSize = (frame.width, frame.height)
        var regions = tracked
        if regions.count < maxFaces {
            detectorRuns += 1
            for face in detector.detect(in: frame) where regions.count < maxFaces {
                let region = Self.region(box: face.boundingBox, from: face[.rightEye], to: face[.leftEye],
                                         width: frame.width, height: frame.height)
                let overlaps = regions.contains { Self.axisBox($0).intersectionOverUnion(with: Self.axisBox(region)) > 0.5 }
                if !overlaps { regions.append(region) }
            }
        }
        var results: [FaceLandmarks] = []
        tracked = []
        for region in regions {
            guard let mesh = landmarks(in: frame, region: region) else { continue }
            results.append(mesh)
            tracked.append(Self.region(box: mesh.boundingBox, from: mesh.points[33].xy, to: mesh.points[263].xy,
                                       width: frame.width, height: frame.height))
        }
        return results
    }

    /// Runs the mesh model on one region; nil when the face is not there.
    func landmarks(in frame: VideoFrame, region: PixelRegion) -> FaceLandmarks? {
        network.withInputBuffer(0) { sampler.sample(frame, region: region, into: $0.baseAddress!) }
        network.invoke()
        let logit = network.withOutputBuffer(1) { $0[0] }
        let presence = 1 / (1 + exp(-logit))
        guard presence >= minPresence, presence.isFinite else { return nil }
        let width = Float(frame.width), height = Float(frame.height)
        let points = network.withOutputBuffer(0) { values in
            (0..<468).map { index -> LandmarkPoint in
                let p = region.framePoint(u: values[3 * index] / 192, v: values[3 * index + 1] / 192)
                return LandmarkPoint(x: p.x / width, y: p.y / height, z: values[3 * index + 2] / 192 * region.width / width)
            }
        }
        let roll = FaceObservation.roll(rightEye: points[33].xy, leftEye: points[263].xy, width: frame.width, height: frame.height)
        return FaceLandmarks(points: points, presence: presence, roll: roll)
    }

    /// MediaPipe's face region: centred on `box`, turned by the line `from` → `to` (right eye to left eye),
    /// squared on its longer side in pixels and scaled 1.5×.
    static func region(box: NormalizedRect, from: NormalizedPoint, to: NormalizedPoint, width: Int, height: Int) -> PixelRegion {
        let w = Float(width), h = Float(height)
        let rotation = normalizedAngle(atan2((to.y - from.y) * h, (to.x - from.x) * w))
        let side = max(box.width * w, box.height * h) * 1.5
        return PixelRegion(centerX: box.center.x * w, centerY: box.center.y * h, width: side, height: side, rotation: rotation)
    }

    /// The region's extent ignoring its rotation (for overlap tests).
    static func axisBox(_ region: PixelRegion) -> NormalizedRect {
        NormalizedRect(x: region.centerX - region.width / 2, y: region.centerY - region.height / 2, width: region.width,
                       height: region.height)
    }
}

extension LandmarkPoint {
    var xy: NormalizedPoint { NormalizedPoint(x: x, y: y) }
}
