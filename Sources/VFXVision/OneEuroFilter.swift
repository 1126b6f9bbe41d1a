import Foundation

/// The One Euro filter's parameters (Casiez, Roussel and Vogel, CHI 2012): a low-pass filter whose cutoff
/// rises with the signal's speed, so a still value is held steady and a moving one followed without lag.
///
/// cutoff = `minCutoff` + `beta` · |smoothed speed|, speed measured in `scale` units per second (VideoFX
/// passes the face's width, so the same parameters suit near and far faces); the speed itself is low-passed
/// at `derivativeCutoff`.
///
/// ```swift
/// var filter = OneEuroFilter(parameters: .faces)
/// let steady = filter.filter(0.42, at: 1.0 / 30, scale: 0.2)
/// ```
public struct OneEuroParameters: Sendable, Hashable {
    /// Cutoff frequency at rest, Hz: lower is steadier.
    public var minCutoff: Double
    /// How fast the cutoff rises with speed (per scale unit per second): higher follows motion sooner.
    public var beta: Double
    /// Cutoff frequency of the speed estimate, Hz.
    public var derivativeCutoff: Double

    public init(minCutoff: Double, beta: Double, derivativeCutoff: Double = 1) {
        self.minCutoff = minCutoff
        self.beta = beta
        self.derivativeCutoff = derivativeCutoff
    }

    /// Face boxes, keypoints and landmarks: 1 Hz at rest, +10 Hz per face width per second.
    public static let faces = OneEuroParameters(minCutoff: 1, beta: 10, derivativeCutoff: 1)
}

/// One value smoothed over time by the One Euro filter (see `OneEuroParameters`).
public struct OneEuroFilter: Sendable {
    public var parameters: OneEuroParameters
    private var previousValue: Double?
    private var previousSpeed: Double = 0
    private var previousTime: Double = 0

    public init(parameters: OneEuroParameters = .faces) { self.parameters = parameters }

    /// The weight of a new sample in an exponential low-pass with cutoff `cutoff` Hz after `interval` seconds.
    public static func smoothingFactor(cutoff: Double, interval: Double) -> Double {
        let tau = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + tau / interval)
    }

    /// Smooths `value` observed at `time` seconds. The first value passes through; a time that does not advance
    /// returns the current estimate; a time that goes back or a non-finite value restarts the filter.
    public mutating func filter(_ value: Float, at time: Double, scale: Float = 1) -> Float {
        let x = Double(value)
        guard x.isFinite, let last = previousValue, time >= previousTime else {
            previousValue = x.isFinite ? x : nil
            previousSpeed = 0
            previousTime = time
            return value
        }
        let interval = time - previousTime
        guard interval > 0 else { return Float(last) }
        let unit = Double(scale) > 0 ? Double(scale) : 1
        let speed = (x - last) / interval / unit
        let smoothedSpeed = previousSpeed + Self.smoothingFactor(cutoff: parameters.derivativeCutoff, interval: interval) * (speed - previousSpeed)
        let cutoff = parameters.minCutoff + parameters.beta * abs(smoothedSpeed)
        let smoothed = last + Self.smoothingFactor(cutoff: cutoff, interval: interval) * (x - last)
        previousValue = smoothed
        previousSpeed = smoothedSpeed
        previousTime = time
        return Float(smoothed)
    }
}

/// A fixed-length series of values (a face's box and keypoints, or its mesh) smoothed together.
struct SeriesSmoother {
    var filters: [OneEuroFilter]

    init(count: Int, parameters: OneEuroParameters) {
        filters = Array(repeating: OneEuroFilter(parameters: parameters), count: count)
    }

    mutating func smooth(_ values: [Float], at time: Double, scale: Float) -> [Float] {
        var result = values
        for index in values.indices where index < filters.count {
            result[index] = filters[index].filter(values[index], at: time, scale: scale)
        }
        return result
    }
}

/// Steadies faces from frame to frame: each face is matched to the previous frame's by box overlap
/// (IoU > 0.3) and its box corners and keypoints go through One Euro filters whose speed is measured in
/// face widths per second. A face that appears starts fresh; one that disappears is forgotten.
///
/// ```swift
/// let smoother = FaceSmoother()
/// let steady = smoother.smooth(detector.detect(in: frame), at: frame.timestamp?.seconds ?? 0,
///                              width: frame.width, height: frame.height)
/// ```
public final class FaceSmoother {
    public let parameters: OneEuroParameters
    private var tracks: [(box: NormalizedRect, smoother: SeriesSmoother)] = []

    public init(parameters: OneEuroParameters = .faces) { self.parameters = parameters }

    public func reset() { tracks = [] }

    /// The faces smoothed; `width` and `height` (the frame's) give the roll its pixel geometry.
    public func smooth(_ faces: [FaceObservation], at time: Double, width: Int, height: Int) -> [FaceObservation] {
        var previous = tracks
        var next: [(box: NormalizedRect, smoother: SeriesSmoother)] = []
        var result: [FaceObservation] = []
        for face in faces {
            let values = [face.boundingBox.x, face.boundingBox.y, face.boundingBox.maxX, face.boundingBox.maxY]
                + face.keypoints.flatMap { [$0.x, $0.y] }
            let match = previous.indices.max { previous[$0].box.intersectionOverUnion(with: face.boundingBox)
                < previous[$1].box.intersectionOverUnion(with: face.boundingBox) }
            var smoother: SeriesSmoother
            if let match, previous[match].box.intersectionOverUnion(with: face.boundingBox) > 0.3,
               previous[match].smoother.filters.count == values.count {
                smoother = previous.remove(at: match).smoother
            } else {
                smoother = SeriesSmoother(count: values.count, parameters: parameters)
            }
            let smoothed = smoother.smooth(values, at: time, scale: face.boundingBox.width)
            let box = NormalizedRect(x: smoothed[0], y: smoothed[1], width: smoothed[2] - smoothed[0], height: smoothed[3] - smoothed[1])
            let keypoints = stride(from: 4, to: smoothed.count - 1, by: 2).map { NormalizedPoint(x: smoothed[$0], y: smoothed[$0 + 1]) }
            let roll = keypoints.count >= 2
                ? FaceObservation.roll(rightEye: keypoints[0], leftEye: keypoints[1], width: width, height: height) : face.roll
            result.append(FaceObservation(boundingBox: box, score: face.score, keypoints: keypoints, roll: roll))
            next.append((box, smoother))
        }
        tracks = next
        return result
    }

    /// Face meshes smoothed the same way (every point's x, y and z; speed in face widths per second).
    public func smooth(_ meshes: [FaceLandmarks], at time: Double, width: Int, height: Int) -> [FaceLandmarks] {
        var previous = tracks
        var next: [(box: NormalizedRect, smoother: SeriesSmoother)] = []
        var result: [FaceLandmarks] = []
        for mesh in meshes {
            let values = mesh.points.flatMap { [$0.x, $0.y, $0.z] }
            let match = previous.indices.max { previous[$0].box.intersectionOverUnion(with: mesh.boundingBox)
                < previous[$1].box.intersectionOverUnion(with: mesh.boundingBox) }
            var smoother: SeriesSmoother
            if let match, previous[match].box.intersectionOverUnion(with: mesh.boundingBox) > 0.3,
               previous[match].smoother.filters.count == values.count {
                smoother = previous.remove(at: match).smoother
            } else {
                smoother = SeriesSmoother(count: values.count, parameters: parameters)
            }
            let smoothed = smoother.smooth(values, at: time, scale: mesh.boundingBox.width)
            let points = stride(from: 0, to: smoothed.count - 2, by: 3).map {
                LandmarkPoint(x: smoothed[$0], y: smoothed[$0 + 1], z: smoothed[$0 + 2])
            }
            let roll = points.count > 263
                ? FaceObservation.roll(rightEye: points[33].xy, leftEye: points[263].xy, width: width, height: height) : mesh.roll
            let steady = FaceLandmarks(points: points, presence: mesh.presence, roll: roll)
            result.append(steady)
            next.append((steady.boundingBox, smoother))
        }
        tracks = next
        return result
    }
}
