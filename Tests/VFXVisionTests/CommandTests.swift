import Foundation
import VFXCore
import VFXMedia
import VFXNeural
import VFXTestSupport
@testable import VFXVision
import XCTest

/// `vfx detect` and `vfx segment` as users run them: the JSON shapes of the issue, outputs against MediaPipe's
/// references, and one-line errors with a non-zero status on bad input.
final class CommandTests: XCTestCase {
    /// The `vfx` built next to the test bundle (the same build configuration).
    static var vfx: String {
        var folder = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("vfx")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder.deleteLastPathComponent()
        }
        return TestMedia.root.appendingPathComponent(".build/release/vfx").path
    }

    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-vision-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func run(_ arguments: [String]) throws -> TestProcess.Result { try TestProcess.run(Self.vfx, arguments) }

    private func image(_ name: String) -> String { VisionReference.folder.appendingPathComponent("images/\(name).png").path }

    func testDetectFacesJSONHasTheIssueShape() throws {
        try VisionReference.require()
        let result = try run(["detect", "faces", image("grace_hopper"), "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(text.hasPrefix("{\"frame\": 0, \"time\": 0.0, \"faces\": [{\"box\": ["), text)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        let faces = try XCTUnwrap(object["faces"] as? [[String: Any]])
        XCTAssertEqual(faces.count, 1)
        let box = try XCTUnwrap(faces[0]["box"] as? [Double])
        let keypoints = try XCTUnwrap(faces[0]["keypoints"] as? [[Double]])
        XCTAssertEqual(keypoints.count, 6)
        XCTAssertTrue(keypoints.allSatisfy { $0.count == 2 })
        let reference = try XCTUnwrap(try VisionReference.json("faces.json")["images"] as? [String: [String: Any]])
        let expected = try VisionReference.faces(reference["grace_hopper"]?["short"])[0]
        XCTAssertEqual(box.count, 4)
        let ours = NormalizedRect(x: Float(box[0]), y: Float(box[1]), width: Float(box[2]), height: Float(box[3]))
        XCTAssertGreaterThan(ours.intersectionOverUnion(with: expected.box), 0.98)
        XCTAssertEqual(Float(try XCTUnwrap(faces[0]["score"] as? Double)), expected.score, accuracy: 0.01)
    }

    func testDetectFacesOnTheClipWritesOneLinePerFrame() throws {
        let output = folder.appendingPathComponent("faces.jsonl").path
        let result = try run(["detect", "faces", TestMedia.path("carphone_pristine.mp4"), "--model", "full", "--min-score", "0.7",
                              "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 120)
        var lastTime = -1.0
        for (index, line) in lines.enumerated() {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(object["frame"] as? Int, index)
            let time = try XCTUnwrap(object["time"] as? Double)
            XCTAssertGreaterThan(time, lastTime)
            lastTime = time
            let faces = try XCTUnwrap(object["faces"] as? [[String: Any]])
            XCTAssertTrue(faces.allSatisfy { ($0["score"] as? Double ?? 0) >= 0.7 })
        }
    }

    func testAnnotatedImageAndLandmarks() throws {
        try VisionReference.require()
        let annotated = folder.appendingPathComponent("faces.png").path
        XCTAssertEqual(try run(["detect", "faces", image("astronaut"), "-o", annotated]).status, 0)
        let frame = try XCTUnwrap(try MediaReader(path: annotated).nextFrame())
        XCTAssertEqual(frame.width, 512)
        XCTAssertEqual(frame.height, 512)
        let result = try run(["detect", "landmarks", image("astronaut"), "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let faces = try XCTUnwrap(object["faces"] as? [[String: Any]])
        let points = try XCTUnwrap(faces.first?["landmarks"] as? [[Double]])
        XCTAssertEqual(points.count, 468)
        XCTAssertTrue(points.allSatisfy { $0.count == 3 })
        XCTAssertEqual((faces.first?["box"] as? [Double])?.count, 4)
    }

    func testSegmentRawImageMatchesMediaPipe() throws {
        try VisionReference.require()
        for model in ["general", "landscape"] {
            let output = folder.appendingPathComponent("mask-\(model).png").path
            let result = try run(["segment", image("camera"), "-o", output, "--model", model, "--raw"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let mask = try XCTUnwrap(try MediaReader(path: output).nextFrame())
            XCTAssertEqual(mask.width, 512)
            XCTAssertEqual(mask.height, 512)
            let gray = mask.format == .gray8 ? mask : mask.converted(to: .gray8)
            var values: [Float] = []
            for y in 0..<512 { for x in 0..<512 { values.append(Float(gray.plane(0).row(y)[x]) / 255) } }
            let reference = try NumPy.read(contentsOf: VisionReference.folder.appendingPathComponent("masks/camera_\(model).npy"))
            let (iou, difference) = maskAgreement(values, reference.scalars[...])
            XCTAssertGreaterThanOrEqual(iou, 0.95, model)
            XCTAssertLessThanOrEqual(difference, 0.02, model)
        }
    }

    func testSegmentVideoWritesAMaskPerFrame() throws {
        let output = folder.appendingPathComponent("mask.y4m").path
        let result = try run(["segment", TestMedia.path("carphone_pristine.mp4"), "-o", output, "--model", "landscape"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let reader = try MediaReader(path: output)
        var count = 0
        while let frame = try reader.nextFrame() {
            XCTAssertEqual(frame.width, 176)
            XCTAssertEqual(frame.height, 144)
            count += 1
        }
        XCTAssertEqual(count, 120)
    }

    /// Masks in video containers are stored losslessly: FFmpeg decodes the .mkv and .avi masks (FFV1, gray) to
    /// exactly the bytes of the .y4m one (bound: 0 differing bytes). An .mp4 or .webm (whose codecs would alter the
    /// mask) is refused with one line naming it and the .mkv to write instead, exit 2, nothing written.
    func testSegmentVideoMasksAreLosslessInEveryContainer() throws {
        let input = TestMedia.path("carphone_pristine.mp4")
        func decoded(_ path: String) throws -> Data {
            let run = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-"])
            XCTAssertEqual(run.status, 0, run.stderr)
            return run.stdout
        }
        let raw = folder.appendingPathComponent("mask.y4m").path
        XCTAssertEqual(try run(["segment", input, "-o", raw]).status, 0)
        let reference = try decoded(raw)
        XCTAssertEqual(reference.count, 176 * 144 * 120)
        for (name, codec) in [("mask.mkv", "ffv1"), ("mask.avi", "ffv1")] {
            let output = folder.appendingPathComponent(name).path
            let result = try run(["segment", input, "-o", output])
            XCTAssertEqual(result.status, 0, result.stderr)
            let probe = try TestProcess.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                 "stream=codec_name,pix_fmt", "-of", "csv=p=0", output])
            XCTAssertEqual(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                           "\(codec),gray", name)
            let bytes = try decoded(output)
            XCTAssertEqual(bytes.count, reference.count, name)
            let differing = zip(bytes, reference).filter { $0 != $1 }.count
            XCTAssertEqual(differing, 0, "\(name): the mask should come back exactly")
        }
        for name in ["mask.mp4", "mask.webm"] {
            let lossy = folder.appendingPathComponent(name).path
            let refused = try run(["segment", input, "-o", lossy])
            XCTAssertEqual(refused.status, 2, name)
            XCTAssertTrue(refused.stderr.contains(lossy) && refused.stderr.contains("mask.mkv"), refused.stderr)
            XCTAssertEqual(refused.stderr.trimmingCharacters(in: .newlines).split(separator: "\n").count, 1, refused.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: lossy), name)
        }
    }

    func testBadInputIsOneLineAndNonZero() throws {
        let cases: [([String], Int32)] = [
            (["detect", "faces", "/nonexistent/picture.png"], 1),
            (["detect", "faces", TestMedia.path("astronaut.png"), "--model", "medium"], 2),
            (["detect", "faces", TestMedia.path("astronaut.png"), "--min-score", "2"], 2),
            (["detect", "eyes", TestMedia.path("astronaut.png")], 2),
            (["segment", TestMedia.path("astronaut.png")], 2),
            (["segment", TestMedia.path("astronaut.png"), "-o", folder.appendingPathComponent("m.png").path, "--model", "x"], 2),
            (["segment", TestMedia.path("carphone_pristine.mp4"), "-o", folder.appendingPathComponent("m.png").path], 2),
            (["bench", "--vision", "hands", "--input", TestMedia.path("astronaut.png")], 2),
        ]
        for (arguments, status) in cases {
            let result = try run(arguments)
            XCTAssertEqual(result.status, status, arguments.joined(separator: " ") + ": " + result.stderr)
            XCTAssertEqual(result.stderr.trimmingCharacters(in: .newlines).split(separator: "\n").count, 1,
                           arguments.joined(separator: " ") + ": " + result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("m.png").path))
        // A corrupt model: one line naming the file.
        let models = folder.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 300).write(to: models.appendingPathComponent("face_detection_short_range.tflite"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.vfx)
        process.arguments = ["detect", "faces", TestMedia.path("astronaut.png")]
        process.environment = ["VFX_MODELS": models.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1)
        XCTAssertTrue(message.contains("face_detection_short_range.tflite"), message)
        XCTAssertEqual(message.trimmingCharacters(in: .newlines).split(separator: "\n").count, 1, message)
    }
}
