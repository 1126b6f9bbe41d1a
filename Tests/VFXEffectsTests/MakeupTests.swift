import Foundation
import VFXCore
import VFXEffects
import VFXMedia
import VFXTestSupport
import XCTest

/// Lipstick and skin smoothing, judged against the lips and eyes of MediaPipe's own face mesh for the same
/// pictures (.build/reference-vision/landmarks.json, made by scripts/reference/make_vision_reference.py).
final class MakeupTests: XCTestCase {
    static let references = TestMedia.root.appendingPathComponent(".build/reference-vision")

    /// The picture and MediaPipe's mesh of its first face (x, y in pixels).
    static func pictureAndMesh(_ name: String) throws -> (VideoFrame, [(x: Double, y: Double)]) {
        let file = references.appendingPathComponent("landmarks.json")
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw XCTSkip("no MediaPipe references in .build/reference-vision (run scripts/setup.sh --python)")
        }
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let images = try XCTUnwrap(json["images"] as? [String: Any])
        let faces = try XCTUnwrap(images[name] as? [[String: Any]])
        let points = try XCTUnwrap(faces.first?["landmarks"] as? [[Double]])
        let frame = try XCTUnwrap(Effects.read(references.appendingPathComponent("images/\(name).png").path).first)
        return (frame, points.map { ($0[0] * Double(frame.width), $0[1] * Double(frame.height)) })
    }

    /// Signed distance (pixels, positive inside) from a pixel centre to a polygon.
    static func distance(_ x: Double, _ y: Double, to polygon: [(x: Double, y: Double)]) -> Double {
        var inside = false, nearest = Double.infinity
        var j = polygon.count - 1
        for i in polygon.indices {
            let a = polygon[j], b = polygon[i]
            if (b.y > y) != (a.y > y) && x < (a.x - b.x) * (y - b.y) / (a.y - b.y) + b.x { inside.toggle() }
            let ex = b.x - a.x, ey = b.y - a.y
            let t = min(max(((x - a.x) * ex + (y - a.y) * ey) / max(ex * ex + ey * ey, 1e-12), 0), 1)
            nearest = min(nearest, hypot(a.x + t * ex - x, a.y + t * ey - y))
            j = i
        }
        return inside ? nearest : -nearest
    }

    static let lipsOuter = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185]
    static let rightEye = [33, 246, 161, 160, 159, 158, 157, 173, 133, 155, 154, 153, 145, 144, 163, 7]
    static let leftEye = [362, 398, 384, 385, 386, 387, 388, 466, 263, 249, 390, 373, 374, 380, 381, 382]

    /// lipstick changes nothing farther than 4 pixels outside MediaPipe's outer lip outline, and does change the lips.
    func testLipstickStaysOnTheLips() throws {
        for name in ["astronaut", "grace_hopper"] {
            let (picture, mesh) = try Self.pictureAndMesh(name)
            let lips = Self.lipsOuter.map { mesh[$0] }
            let before = Effects.rgb(picture), after = Effects.rgb(try Effects.apply("lipstick:color=#d0103a:amount=0.8", to: picture))
            var worst = -Double.infinity, insideChange = 0.0, insideCount = 0
            for y in 0..<picture.height {
                for x in 0..<picture.width {
                    let i = 3 * (y * picture.width + x)
                    let change = (0..<3).map { abs(Double(before[i + $0]) - Double(after[i + $0])) }.max()!
                    let d = Self.distance(Double(x) + 0.5, Double(y) + 0.5, to: lips)
                    if change > 0 { worst = max(worst, -d) }
                    if d > 2 { insideChange += change; insideCount += 1 }
                }
            }
            print("lipstick on \(name): farthest change \(worst) px outside the lips; mean change inside \(insideChange / Double(max(insideCount, 1)))")
            XCTAssertLessThanOrEqual(worst, 4, name)
            XCTAssertGreaterThan(insideChange / Double(max(insideCount, 1)), 10, "\(name): the lips should change")
        }
    }

    /// skin-smooth leaves the eyes and lips (MediaPipe's outlines) unchanged, PSNR ≥ 45 dB inside them, and
    /// does smooth the skin.
    func testSkinSmoothLeavesEyesAndLips() throws {
        for name in ["astronaut", "grace_hopper"] {
            let (picture, mesh) = try Self.pictureAndMesh(name)
            let parts = [Self.rightEye, Self.leftEye, Self.lipsOuter].map { outline in outline.map { mesh[$0] } }
            let before = Effects.rgb(picture), after = Effects.rgb(try Effects.apply("skin-smooth:amount=1", to: picture))
            var kept: [Int] = [], skin: [Int] = []
            let cheek = [mesh[50], mesh[280]]      // cheek points of the mesh
            for y in 0..<picture.height {
                for x in 0..<picture.width {
                    let px = Double(x) + 0.5, py = Double(y) + 0.5
                    if parts.contains(where: { Self.distance(px, py, to: $0) >= 0 }) { kept.append(y * picture.width + x) }
                    if cheek.contains(where: { hypot($0.x - px, $0.y - py) < 6 }) { skin.append(y * picture.width + x) }
                }
            }
            func values(_ bytes: [UInt8], _ pixels: [Int]) -> [UInt8] { pixels.flatMap { Array(bytes[(3 * $0)..<(3 * $0 + 3)]) } }
            let eyesAndLips = Quality.psnr(values(before, kept), values(after, kept))
            let cheeks = Quality.psnr(values(before, skin), values(after, skin))
            print("skin-smooth on \(name): eyes and lips \(eyesAndLips) dB, cheeks \(cheeks) dB")
            XCTAssertGreaterThan(kept.count, 200)
            XCTAssertGreaterThanOrEqual(eyesAndLips, 45, name)
            XCTAssertLessThan(cheeks, 60, "\(name): the skin should be smoothed")
        }
    }
}
