import Foundation
import VFXNeural
import XCTest

/// The reference tensors that scripts/reference/make_reference.py writes to .build/reference: inputs made
/// from the sample media, and LiteRT's outputs for them (its default interpreter, XNNPACK, one thread).
enum Reference {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let folder = packageRoot.appendingPathComponent(".build/reference", isDirectory: true)
    static let models = [
        "face_detection_short_range", "face_detection_full_range_sparse", "face_landmark", "selfie_segmentation",
        "selfie_segmentation_landscape", "palm_detection_lite", "hand_landmark_lite",
    ]

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "\(path) is missing: the reference tensors are made by `scripts/setup.sh --python` (run it, then the tests)"
        }
    }

    /// NumPy's own numbers about an array, from the manifest.
    struct Stats: Decodable {
        let sum: Double, min: Double, max: Double
        let first: [Double], last: [Double]
    }

    struct Entry: Decodable {
        let index: Int
        let name: String
        let shape: [Int]
        let file: String
        let stats: Stats
    }

    /// `<model>/manifest.json`.
    struct Manifest: Decodable {
        let model: String
        let inputs: [Entry]
        let outputs: [Entry]
    }

    /// A file of the references; throws (the test fails) with the setup command when it is absent.
    static func file(_ relativePath: String) throws -> URL {
        let url = folder.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else { throw Missing(path: url.path) }
        return url
    }

    /// The pictures each model was run on: the folder `<model>/` itself, then `<model>/camera/`.
    static let cases = ["", "camera/"]

    static func manifest(_ model: String, case folder: String = "") throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: file("\(model)/\(folder)manifest.json")))
    }

    static func modelURL(_ model: String) throws -> URL {
        let url = packageRoot.appendingPathComponent("models/\(model).tflite")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw Missing(path: url.path + " (models come from `scripts/setup.sh`)")
        }
        return url
    }

    /// The largest |ours - reference| / max(1, |reference|) and where it is (non-finite values count as infinite).
    static func worstError(_ ours: [Float], _ reference: [Float]) -> (error: Float, index: Int) {
        var worst: (error: Float, index: Int) = (0, 0)
        for (index, (a, b)) in zip(ours, reference).enumerated() {
            let error = a.isFinite ? abs(a - b) / max(1, abs(b)) : .infinity
            if error > worst.error { worst = (error, index) }
        }
        return worst
    }
}

/// Every model's outputs against LiteRT's on the same input tensors, made from real photos and video frames
/// (two pictures per model), with one thread and with two.
///
/// Tolerance 1e-3 relative to max(1, |reference|): the weights are float16 widened to float32 on both sides, so
/// the only legitimate differences come from summation order and FMA contraction in float32 accumulations of up
/// to a few thousand terms. LiteRT's own reference kernels and XNNPACK differ by up to 2.4e-4 on these models;
/// 1e-3 leaves room for another valid order while any wrong kernel (padding, stride, activation, layout) is off
/// by 1e-2 or far more. Small values are compared absolutely (the max(1, ·)) because scores and coordinates near
/// zero carry no relative meaning.
final class ReferenceTests: XCTestCase {
    static let tolerance: Float = 1e-3

    func testFaceDetectionShortRange() throws { try compare("face_detection_short_range") }
    func testFaceDetectionFullRangeSparse() throws { try compare("face_detection_full_range_sparse") }
    func testFaceLandmark() throws { try compare("face_landmark") }
    func testSelfieSegmentation() throws { try compare("selfie_segmentation") }
    func testSelfieSegmentationLandscape() throws { try compare("selfie_segmentation_landscape") }
    func testPalmDetectionLite() throws { try compare("palm_detection_lite") }
    func testHandLandmarkLite() throws { try compare("hand_landmark_lite") }

    /// The list above covers every model the references were made for.
    func testEveryReferenceModelIsCompared() throws {
        struct Listing: Decodable { let models: [String: [String: [String]]] }
        let listing = try JSONDecoder().decode(Listing.self, from: Data(contentsOf: Reference.file("manifest.json")))
        XCTAssertEqual(Set(listing.models.keys), Set(Reference.models))
    }

    /// Several threads split the work differently, never the sums: the results are the same within the tolerance.
    func testTwoThreadsMatchLiteRT() throws {
        for name in Reference.models { try compare(name, threads: 2) }
    }

    private func compare(_ name: String, threads: Int = 1) throws {
        let model = try NeuralModel(contentsOf: Reference.modelURL(name), threads: threads)
        for folder in Reference.cases { try compare(model, name, folder, threads: threads) }
    }

    private func compare(_ model: NeuralModel, _ name: String, _ folder: String, threads: Int) throws {
        let manifest = try Reference.manifest(name, case: folder)
        let label = "\(name) on \(name)/\(folder)input_0.npy, \(threads) thread(s)"
        XCTAssertEqual(model.inputs.map(\.name), manifest.inputs.map(\.name), "\(label): input names")
        XCTAssertEqual(model.inputs.map(\.shape), manifest.inputs.map(\.shape), "\(label): input shapes")
        XCTAssertEqual(model.outputs.map(\.name), manifest.outputs.map(\.name), "\(label): output names and order")
        XCTAssertEqual(model.outputs.map(\.shape), manifest.outputs.map(\.shape), "\(label): output shapes")

        let inputs = try manifest.inputs.map { try NumPy.read(contentsOf: Reference.file("\(name)/\(folder)\($0.file)")) }
        let outputs = try model.run(inputs)
        XCTAssertEqual(outputs.count, manifest.outputs.count, "\(label): number of outputs")
        for (output, entry) in zip(outputs, manifest.outputs) {
            let reference = try NumPy.read(contentsOf: Reference.file("\(name)/\(folder)\(entry.file)"))
            XCTAssertEqual(output.shape, reference.shape, "\(label) output \(entry.index) '\(entry.name)': shape")
            guard output.scalars.count == reference.scalars.count else { continue }
            let (error, index) = Reference.worstError(output.scalars, reference.scalars)
            XCTAssertLessThanOrEqual(error, Self.tolerance, """
                \(label) output \(entry.index) '\(entry.name)': worst relative error \(error) at element \(index) \
                (ours \(output.scalars[index]), LiteRT \(reference.scalars[index]))
                """)
        }
    }
}
