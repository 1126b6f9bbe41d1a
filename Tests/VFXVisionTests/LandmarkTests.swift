import Foundation
import VFXCore
import VFXTestSupport
@testable import VFXVision
import XCTest

/// The face mesh against MediaPipe's face_mesh solution: pictures in static image mode, the carphone clip in
/// tracking mode. Tolerance: mean point distance ≤ 2 % of the face's width (MediaPipe's own landmarks move by
/// about that after a JPEG re-encode), z within 2 % of the width on average; the same frames have a face.
final class LandmarkTests: XCTestCase {
    private func meshes(_ json: Any?) throws -> [[LandmarkPoint]] {
        try XCTUnwrap(json as? [[String: Any]]).map { face in
            try XCTUnwrap(face["landmarks"] as? [[Double]]).map { LandmarkPoint(x: Float($0[0]), y: Float($0[1]), z: Float($0[2])) }
        }
    }

    /// Mean xy distance and mean |Δz|, over the reference face's width.
    private func errors(_ ours: [LandmarkPoint], _ theirs: [LandmarkPoint]) -> (xy: Float, z: Float) {
        let width = FaceLandmarks.bounds(of: theirs).width
        var xy: Float = 0, z: Float = 0
        for (a, b) in zip(ours, theirs) {
            xy += hypot(a.x - b.x, a.y - b.y)
            z += abs(a.z - b.z)
        }
        return (xy / Float(theirs.count) / width, z / Float(theirs.count) / width)
    }

    func testPicturesAgreeWithMediaPipe() throws {
        try VisionReference.require()
        let reference = try XCTUnwrap(try VisionReference.json("landmarks.json")["images"] as? [String: Any])
        let landmarker = try FaceLandmarker(staticImages: true)
        var compared = 0
        for name in VisionReference.pictures {
            let expected = try meshes(reference[name])
            let ours = landmarker.process(try VisionReference.picture(name))
            XCTAssertEqual(ours.count, expected.count, name)
            for (face, points) in zip(ours, expected) {
                XCTAssertEqual(face.points.count, 468)
                let (xy, z) = errors(face.points, points)
                XCTAssertLessThanOrEqual(xy, 0.02, name)
                XCTAssertLessThanOrEqual(z, 0.02, name)
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 7)
    }

    /// Tracking: the detector runs on the first frame only (the face stays in view), and every frame's mesh
    /// agrees with MediaPipe's tracked mesh.
    func testClipIsTrackedAndAgreesWithMediaPipe() throws {
        try VisionReference.require()
        let reference = try XCTUnwrap(try VisionReference.json("landmarks.json")["carphone"] as? [Any])
        let frames = try VisionReference.clip()
        let landmarker = try FaceLandmarker()
        var worst: Float = 0
        for (frame, expected) in zip(frames, reference) {
            let theirs = try meshes(expected)
            let ours = landmarker.process(frame)
            XCTAssertEqual(ours.count, theirs.count)
            if let face = ours.first, let points = theirs.first {
                worst = max(worst, errors(face.points, points).xy)
            }
        }
        XCTAssertLessThanOrEqual(worst, 0.02)
        XCTAssertEqual(landmarker.detectorRuns, 1, "tracking keeps the detector idle while the face stays")
        print("carphone mesh: worst mean point error \(worst) of the face width")
    }

    /// A blank frame loses the face; the next frame runs the detector again.
    func testLostFaceRunsTheDetectorAgain() throws {
        try VisionReference.require()
        let face = try VisionReference.picture("grace_hopper")
        var blank = VideoFrame(format: .rgba, width: face.width, height: face.height)
        blank.withMutablePlanes { $0[0].baseAddress.update(repeating: 200, count: $0[0].bytesPerRow * face.height) }
        let landmarker = try FaceLandmarker()
        XCTAssertEqual(landmarker.process(face).count, 1)
        XCTAssertEqual(landmarker.process(face).count, 1)
        XCTAssertEqual(landmarker.detectorRuns, 1)
        XCTAssertEqual(landmarker.process(blank).count, 0)
        XCTAssertEqual(landmarker.process(blank).count, 0)
        XCTAssertEqual(landmarker.process(face).count, 1)
        XCTAssertEqual(landmarker.detectorRuns, 3, "frames 1, 4 and 5 ran the detector (frame 3 lost the tracked face)")
        let tiny = VideoFrame(format: .i420, width: 1, height: 1)
        XCTAssertEqual(landmarker.process(tiny).count, 0)
    }
}
