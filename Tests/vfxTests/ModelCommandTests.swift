import Foundation
import VFXNeural
import XCTest

/// `vfx model info` and `vfx model run`, run as the built command would be by a user: a subprocess of the `vfx`
/// binary next to the test bundle (CommandLineRun). The reference is LiteRT (outputs) and LiteRT's schema module (operator
/// counts, multiply-adds), written by scripts/reference/make_reference.py to .build/reference.
final class ModelCommandTests: XCTestCase {
    static let referenceFolder = CommandLineRun.packageRoot.appendingPathComponent(".build/reference")
    static let models = [
        "face_detection_short_range", "face_detection_full_range_sparse", "face_landmark", "selfie_segmentation",
        "selfie_segmentation_landscape", "palm_detection_lite", "hand_landmark_lite",
    ]

    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) is missing: run `scripts/setup.sh --python` first (it makes the references)" }
    }

    /// The parts of `<model>/manifest.json` these tests use.
    struct Manifest: Decodable {
        struct Entry: Decodable { let name: String; let shape: [Int]; let file: String }
        struct Graph: Decodable { let operators: [String: Int]; let parameters: Int; let multiply_adds: Int }
        let inputs: [Entry]
        let outputs: [Entry]
        let graph: Graph
    }

    private var temporary: URL!

    override func setUpWithError() throws {
        temporary = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporary)
    }

    // MARK: model info

    func testInfoListsTensorsAndOperators() throws {
        let model = Self.modelPath("face_landmark")
        let manifest = try Self.manifest("face_landmark")
        let result = try vfx("model", "info", model)
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = result.stdout
        for entry in manifest.inputs + manifest.outputs {
            XCTAssertTrue(text.contains(entry.name), "info should name tensor \(entry.name):\n\(text)")
            XCTAssertTrue(text.contains(entry.shape.map(String.init).joined(separator: "x")), "shape of \(entry.name):\n\(text)")
        }
        for (name, count) in manifest.graph.operators {
            XCTAssertNotNil(text.range(of: "\(name) +\(count)\n", options: .regularExpression), "\(name) \(count):\n\(text)")
        }
        XCTAssertTrue(text.contains("parameters:") && text.contains("multiply-adds:"), text)
    }

    /// For every model: names, shapes and operator counts exactly as in the file; multiply-adds within 1 % of the
    /// count made from the file by LiteRT's schema module (convolutions and fully connected layers; the engine
    /// may also count the few multiplies of element-wise operators, which add well under 1 %).
    func testInfoJSONMatchesTheFileForEveryModel() throws {
        struct Info: Decodable {
            struct Entry: Decodable { let name: String; let shape: [Int] }
            let inputs: [Entry], outputs: [Entry]
            let operators: [String: Int]
            let parameters: Int, multiply_adds: Int, tensors: Int
        }
        for model in Self.models {
            let manifest = try Self.manifest(model)
            let result = try vfx("model", "info", Self.modelPath(model), "--json")
            XCTAssertEqual(result.status, 0, "\(model): \(result.stderr)")
            let info = try JSONDecoder().decode(Info.self, from: Data(result.stdout.utf8))
            XCTAssertEqual(info.inputs.map(\.name), manifest.inputs.map(\.name), model)
            XCTAssertEqual(info.inputs.map(\.shape), manifest.inputs.map(\.shape), model)
            XCTAssertEqual(info.outputs.map(\.name), manifest.outputs.map(\.name), model)
            XCTAssertEqual(info.outputs.map(\.shape), manifest.outputs.map(\.shape), model)
            XCTAssertEqual(info.operators, manifest.graph.operators, model)
            XCTAssertEqual(Double(info.multiply_adds), Double(manifest.graph.multiply_adds),
                           accuracy: 0.01 * Double(manifest.graph.multiply_adds), model)
            XCTAssertGreaterThan(info.parameters, 0, model)
            XCTAssertGreaterThan(info.tensors, 0, model)
        }
    }

    // MARK: model run

    /// `vfx model run` on LiteRT's input tensors writes one file per output, named as the references are, whose
    /// values are LiteRT's within 1e-3 relative to max(1, |reference|) (see ReferenceTests for why).
    func testRunWritesEveryOutputMatchingLiteRT() throws {
        for model in Self.models {
            let manifest = try Self.manifest(model)
            let output = temporary.appendingPathComponent(model)
            var arguments = ["model", "run", Self.modelPath(model), "--output-dir", output.path]
            for input in manifest.inputs { arguments += ["--input", try Self.referenceFile("\(model)/\(input.file)").path] }
            let result = try vfx(arguments)
            XCTAssertEqual(result.status, 0, "\(model): \(result.stderr)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted(),
                           manifest.outputs.map(\.file).sorted(), model)
            XCTAssertEqual(result.stdout.split(separator: "\n").map(String.init),
                           manifest.outputs.map { output.appendingPathComponent($0.file).path }, model)
            for entry in manifest.outputs {
                let ours = try NumPy.read(contentsOf: output.appendingPathComponent(entry.file))
                let reference = try NumPy.read(contentsOf: Self.referenceFile("\(model)/\(entry.file)"))
                XCTAssertEqual(ours.shape, reference.shape, "\(model) \(entry.name)")
                var worst: Float = 0
                for (a, b) in zip(ours.scalars, reference.scalars) {
                    worst = max(worst, a.isFinite ? abs(a - b) / max(1, abs(b)) : .infinity)
                }
                XCTAssertLessThanOrEqual(worst, 1e-3, "\(model) \(entry.name)")
            }
        }
    }

    // MARK: errors: one line `vfx: error: …` naming the file, exit status 1

    func testMissingModel() throws {
        let missing = temporary.appendingPathComponent("missing.tflite").path
        try assertOneLineError(vfx("model", "info", missing), naming: missing)
        try assertOneLineError(vfx("model", "run", missing, "--input", "x.npy", "--output-dir", temporary.path), naming: missing)
    }

    func testCorruptModels() throws {
        let real = try Data(contentsOf: URL(fileURLWithPath: Self.modelPath("face_detection_short_range")))
        let cases: [(String, Data)] = [
            ("text.tflite", Data("this is not a flatbuffer at all".utf8)),
            ("empty.tflite", Data()),
            ("truncated.tflite", real.prefix(real.count / 3)),
            ("header-only.tflite", real.prefix(64)),
        ]
        for (name, data) in cases {
            let url = temporary.appendingPathComponent(name)
            try data.write(to: url)
            try assertOneLineError(vfx("model", "info", url.path), naming: url.path)
        }
    }

    func testBadInputFiles() throws {
        let model = Self.modelPath("face_landmark")
        let out = temporary.appendingPathComponent("out").path
        let missing = temporary.appendingPathComponent("missing.npy").path
        try assertOneLineError(vfx("model", "run", model, "--input", missing, "--output-dir", out), naming: missing)

        let corrupt = temporary.appendingPathComponent("corrupt.npy")
        try Data("\u{93}NUMPY garbage".utf8).write(to: corrupt)
        try assertOneLineError(vfx("model", "run", model, "--input", corrupt.path, "--output-dir", out), naming: corrupt.path)

        let truncated = temporary.appendingPathComponent("truncated.npy")
        let input = try Data(contentsOf: Self.referenceFile("face_landmark/input_0.npy"))
        try input.prefix(input.count - 100).write(to: truncated)
        try assertOneLineError(vfx("model", "run", model, "--input", truncated.path, "--output-dir", out), naming: truncated.path)

        // The right format, the wrong shape: another model's input (128x128 instead of 192x192).
        let other = try Self.referenceFile("face_detection_short_range/input_0.npy").path
        try assertOneLineError(vfx("model", "run", model, "--input", other, "--output-dir", out), naming: other)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing is written when an input is refused")
    }

    func testUsageErrors() throws {
        let model = Self.modelPath("face_landmark")
        let input = try Self.referenceFile("face_landmark/input_0.npy").path
        for arguments in [["model", "run", model, "--input", input], ["model", "frobnicate", model],
                          ["model", "run", model, "--output-dir", temporary.path]] {
            let result = try vfx(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("vfx: error: "), result.stderr)
        }
    }

    // MARK: helpers

    static func modelPath(_ model: String) -> String {
        CommandLineRun.packageRoot.appendingPathComponent("models/\(model).tflite").path
    }

    static func referenceFile(_ relativePath: String) throws -> URL {
        let url = referenceFolder.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else { throw Missing(path: url.path) }
        return url
    }

    static func manifest(_ model: String) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: referenceFile("\(model)/manifest.json")))
    }

    struct Result { let status: Int32; let stdout: String; let stderr: String }

    func vfx(_ arguments: String...) throws -> Result { try vfx(arguments) }

    /// Runs the `vfx` built beside the test bundle.
    func vfx(_ arguments: [String]) throws -> Result {
        let result = try CommandLineRun.vfx(arguments)
        return Result(status: result.status, stdout: String(decoding: result.stdout, as: UTF8.self), stderr: result.stderr)
    }

    private func assertOneLineError(_ result: Result, naming file: String, line: UInt = #line) {
        XCTAssertEqual(result.status, 1, "exit status; stderr: \(result.stderr)", line: line)
        let message = result.stderr.hasSuffix("\n") ? String(result.stderr.dropLast()) : result.stderr
        XCTAssertTrue(message.hasPrefix("vfx: error: "), message, line: line)
        XCTAssertFalse(message.contains("\n"), "one line: \(message)", line: line)
        XCTAssertTrue(message.contains(file), "the message names \(file): \(message)", line: line)
    }
}
