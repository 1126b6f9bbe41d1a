import Foundation
import XCTest
@testable import VFXNeural

/// The reader on real and damaged files: the seven MediaPipe models load with the facts measured with
/// LiteRT (shapes, operator lists, multiply-adds), sparse tensors densify as the schema defines, and
/// mutated copies of the models are rejected with a one-line error or load and run, never crash.
final class ModelFileTests: XCTestCase {
    static let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models")

    struct Facts {
        var inputs: [[Int]]
        var outputs: [[Int]]
        /// Millions of multiply-adds (docs/FACTS: measured from the graphs).
        var megaMultiplyAdds: Double
        /// Operator counts as LiteRT 2.3.0's interpreter lists them (`_get_ops_details`).
        var operators: [String: Int]
    }

    static let facts: [String: Facts] = [
        "face_detection_short_range": Facts(
            inputs: [[1, 128, 128, 3]], outputs: [[1, 896, 16], [1, 896, 1]], megaMultiplyAdds: 31,
            operators: ["DEQUANTIZE": 74, "CONV_2D": 21, "RELU": 17, "DEPTHWISE_CONV_2D": 16, "ADD": 16, "PAD": 11,
                        "MAX_POOL_2D": 3, "RESHAPE": 4, "CONCATENATION": 2]),
        "face_detection_full_range_sparse": Facts(
            inputs: [[1, 192, 192, 3]], outputs: [[1, 2304, 16], [1, 2304, 1]], megaMultiplyAdds: 117,
            operators: ["PAD": 43, "DEQUANTIZE": 182, "CONV_2D": 49, "DEPTHWISE_CONV_2D": 42, "DENSIFY": 46, "ADD": 19,
                        "RESIZE_BILINEAR": 3, "DEPTH_TO_SPACE": 2, "RESHAPE": 2]),
        "face_landmark": Facts(
            inputs: [[1, 192, 192, 3]], outputs: [[1, 1, 1, 1404], [1, 1, 1, 1]], megaMultiplyAdds: 35,
            operators: ["DEQUANTIZE": 113, "CONV_2D": 25, "PRELU": 23, "DEPTHWISE_CONV_2D": 20, "ADD": 20,
                        "MAX_POOL_2D": 6, "PAD": 3]),
        "selfie_segmentation": Facts(
            inputs: [[1, 256, 256, 3]], outputs: [[1, 256, 256, 1]], megaMultiplyAdds: 59,
            operators: ["DEQUANTIZE": 110, "CONV_2D": 43, "HARD_SWISH": 11, "RELU": 22, "DEPTHWISE_CONV_2D": 11,
                        "AVERAGE_POOL_2D": 10, "LOGISTIC": 11, "MUL": 10, "ADD": 14, "RESIZE_BILINEAR": 3,
                        "Convolution2DTransposeBias": 1]),
        "selfie_segmentation_landscape": Facts(
            inputs: [[1, 144, 256, 3]], outputs: [[1, 144, 256, 1]], megaMultiplyAdds: 33,
            operators: ["DEQUANTIZE": 110, "CONV_2D": 43, "HARD_SWISH": 11, "RELU": 22, "DEPTHWISE_CONV_2D": 11,
                        "MEAN": 10, "LOGISTIC": 11, "MUL": 10, "ADD": 14, "RESIZE_BILINEAR": 3,
                        "Convolution2DTransposeBias": 1]),
        "palm_detection_lite": Facts(
            inputs: [[1, 192, 192, 3]], outputs: [[1, 2016, 18], [1, 2016, 1]], megaMultiplyAdds: 283,
            operators: ["DEQUANTIZE": 113, "CONV_2D": 30, "PRELU": 26, "DEPTHWISE_CONV_2D": 23, "ADD": 25,
                        "MAX_POOL_2D": 4, "PAD": 3, "RESIZE_BILINEAR": 2, "RESHAPE": 4, "CONCATENATION": 2]),
        "hand_landmark_lite": Facts(
            inputs: [[1, 224, 224, 3]], outputs: [[1, 63], [1, 1], [1, 1], [1, 63]], megaMultiplyAdds: 146,
            operators: ["DEQUANTIZE": 102, "CONV_2D": 31, "DEPTHWISE_CONV_2D": 16, "MAX_POOL_2D": 1, "ADD": 10,
                        "MEAN": 1, "FULLY_CONNECTED": 4, "LOGISTIC": 2]),
    ]

    static func url(_ name: String) -> URL { models.appendingPathComponent(name + ".tflite") }

    /// Shapes and operator lists exactly; multiply-adds within 3 % (the published figure is rounded and
    /// may count the few elementwise products differently).
    func testSevenModelsLoadWithMeasuredFacts() throws {
        for (name, facts) in Self.facts.sorted(by: { $0.key < $1.key }) {
            let model = try NeuralModel(contentsOf: Self.url(name))
            XCTAssertEqual(model.inputs.map(\.shape), facts.inputs, name)
            XCTAssertEqual(model.outputs.map(\.shape), facts.outputs, name)
            XCTAssertEqual(model.summary.operatorCounts, facts.operators, name)
            let mega = Double(model.summary.multiplyAdds) / 1e6
            XCTAssertEqual(mega, facts.megaMultiplyAdds, accuracy: facts.megaMultiplyAdds * 0.03, name)
            XCTAssertGreaterThan(model.summary.parameterCount, 50_000, name)
            XCTAssertGreaterThan(model.summary.tensorCount, model.summary.operatorCounts.values.reduce(0, +), name)
        }
    }

    /// Every model runs on a smooth test image, gives finite outputs, gives the same outputs when run
    /// again (the arena plan must not let a later layer overwrite a tensor still in use), and the
    /// baseline and AVX-512 kernels agree to 1e-4 (they only sum in a different order).
    func testModelsRunDeterministicallyWithEveryKernelSet() throws {
        for name in Self.facts.keys.sorted() {
            let bytes = try [UInt8](Data(contentsOf: Self.url(name)))
            var results: [[Tensor]] = []
            for kernels in availableKernelSets() {
                let model = try NeuralModel(bytes: bytes, url: Self.url(name), threads: 1, kernels: kernels)
                let inputs = model.inputs.map { info -> Tensor in
                    let count = info.shape.reduce(1, *)
                    return Tensor(shape: info.shape, scalars: (0..<count).map { Float(sin(Double($0) * 0.001)) })
                }
                let first = try model.run(inputs)
                let second = try model.run(inputs)
                for (a, b) in zip(first, second) {
                    XCTAssertEqual(a.scalars, b.scalars, "\(name) \(kernels.name) repeat")
                    XCTAssertTrue(a.scalars.allSatisfy(\.isFinite), "\(name) \(kernels.name) finite")
                }
                results.append(first)
            }
            for other in results.dropFirst() {
                for (a, b) in zip(results[0], other) {
                    let error = maximumError(a.scalars, b.scalars.map(Double.init))
                    XCTAssertLessThan(error, 1e-4, "\(name): kernel sets disagree")
                }
            }
        }
    }

    /// Splitting layers across threads only changes who computes which rows: results stay identical
    /// (each row's sums run in the same order), up to 1e-6 for safety.
    func testThreadsGiveTheSameOutputs() throws {
        for name in ["palm_detection_lite", "selfie_segmentation"] {
            var results: [[Tensor]] = []
            for threads in [1, 2, 3] {
                let model = try NeuralModel(contentsOf: Self.url(name), threads: threads)
                let inputs = model.inputs.map { info -> Tensor in
                    let count = info.shape.reduce(1, *)
                    return Tensor(shape: info.shape, scalars: (0..<count).map { Float(cos(Double($0) * 0.0007)) })
                }
                results.append(try model.run(inputs))
            }
            for other in results.dropFirst() {
                for (a, b) in zip(results[0], other) {
                    XCTAssertLessThan(maximumError(b.scalars, a.scalars.map(Double.init)), 1e-6, name)
                }
            }
        }
    }

    func testBadInputsAreNamedErrors() throws {
        let model = try NeuralModel(contentsOf: Self.url("face_detection_short_range"))
        XCTAssertThrowsError(try model.run([])) { error in
            XCTAssertTrue("\(error)".contains("face_detection_short_range.tflite"), "\(error)")
        }
        XCTAssertThrowsError(try model.run([Tensor(shape: [1, 64, 64, 3], scalars: [Float](repeating: 0, count: 12288))])) {
            XCTAssertTrue("\($0)".contains("input"), "\($0)")
        }
        XCTAssertThrowsError(try NeuralModel(contentsOf: URL(fileURLWithPath: "/nonexistent/model.tflite"))) {
            XCTAssertTrue("\($0)".contains("/nonexistent/model.tflite"), "\($0)")
        }
        XCTAssertThrowsError(try NeuralModel(contentsOf: Self.url("face_landmark"), threads: 0))
        let text = [UInt8]("this is not a model".utf8)
        XCTAssertThrowsError(try NeuralModel(bytes: text, url: URL(fileURLWithPath: "notes.tflite"), threads: 1,
                                             kernels: selectedKernels())) {
            XCTAssertTrue("\($0)".hasPrefix("notes.tflite: "), "\($0)")
        }
    }

    /// DENSIFY's definition on hand-made sparsity parameters: a CSR matrix (dense rows, sparse columns,
    /// uint8 indices) and a 2×2 block-sparse matrix (block map, int32 and uint16 index vectors).
    func testDensifyExpandsSparseTensors() throws {
        // [[1, 0, 0, 2], [0, 3, 0, 0], [0, 0, 4, 5]]
        let csr = FlatBufferWriter()
        let csrTable = csr.table([
            0: .int32Vector([0, 1]),
            2: .tableVector([
                [0: .int8(0), 1: .int32(3)],
                [0: .int8(1), 1: .int32(4), 2: .uint8(3), 3: .table([0: .uint8Vector([0, 2, 3, 5])]),
                 4: .uint8(3), 5: .table([0: .uint8Vector([0, 3, 1, 2, 3])])],
            ]),
        ])
        let sparsity = try FlatBuffer(bytes: csr.bytes).table(at: csrTable)
        XCTAssertEqual(try densify(values: [1, 2, 3, 4, 5], shape: [3, 4], sparsity: sparsity),
                       [1, 0, 0, 2, 0, 3, 0, 0, 0, 0, 4, 5])

        // 4×4 in 2×2 blocks; blocks (0,1) and (1,0) stored, each row-major.
        let blocks = FlatBufferWriter()
        let blockTable = blocks.table([
            0: .int32Vector([0, 1, 2, 3]),
            1: .int32Vector([0, 1]),
            2: .tableVector([
                [0: .int8(0), 1: .int32(2)],
                [0: .int8(1), 2: .uint8(1), 3: .table([0: .int32Vector([0, 1, 2])]),
                 4: .uint8(2), 5: .table([0: .uint16Vector([1, 0])])],
                [0: .int8(0), 1: .int32(2)],
                [0: .int8(0), 1: .int32(2)],
            ]),
        ])
        let blockSparsity = try FlatBuffer(bytes: blocks.bytes).table(at: blockTable)
        XCTAssertEqual(try densify(values: [1, 2, 3, 4, 5, 6, 7, 8], shape: [4, 4], sparsity: blockSparsity),
                       [0, 0, 1, 2,
                        0, 0, 3, 4,
                        5, 6, 0, 0,
                        7, 8, 0, 0])
        // Fewer stored values than the indices name is an error, not a read past the end.
        XCTAssertThrowsError(try densify(values: [1, 2], shape: [3, 4], sparsity: sparsity))
    }

    /// Fuzzing: byte flips in the flatbuffer structure (outside the weight buffers, where a flip only
    /// changes a number), overwritten 32-bit words (offsets, lengths, indices), byte flips anywhere,
    /// and truncations. Each copy must either load (and then run) or fail with a one-line NeuralError
    /// that names the file.
    func testMutatedModelsFailCleanly() throws {
        var random = SeededGenerator(seed: 12)
        var rejected = 0, loaded = 0
        for name in ["face_detection_short_range", "face_detection_full_range_sparse", "selfie_segmentation"] {
            let original = try [UInt8](Data(contentsOf: Self.url(name)))
            let weights = try TFLiteFile(bytes: original).buffers.filter { !$0.isEmpty }
            func structurePosition() -> Int {
                for _ in 0..<1000 {
                    let position = Int.random(in: 0..<original.count, using: &random)
                    if !weights.contains(where: { $0.contains(position) }) { return position }
                }
                return 0
            }
            for iteration in 0..<100 {
                var bytes = original
                switch iteration % 4 {
                case 0:
                    for _ in 0..<Int.random(in: 1...8, using: &random) {
                        bytes[structurePosition()] ^= UInt8.random(in: 1...255, using: &random)
                    }
                case 1:
                    let position = min(structurePosition() & ~3, bytes.count - 4)
                    let word: UInt32 = [0, 1, 0xFFFF_FFFF, 0x7FFF_FFFF, UInt32(original.count), UInt32.random(in: 0...UInt32.max, using: &random)]
                        .randomElement(using: &random)!
                    withUnsafeBytes(of: word.littleEndian) { for (i, b) in $0.enumerated() { bytes[position + i] = b } }
                case 2:
                    for _ in 0..<16 { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
                default:
                    bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
                }
                let url = URL(fileURLWithPath: "mutated-\(name).tflite")
                do {
                    let model = try NeuralModel(bytes: bytes, url: url, threads: 1, kernels: selectedKernels())
                    loaded += 1
                    let counts = model.inputs.map { $0.shape.reduce(1, *) }
                    if counts.reduce(0, +) <= 1 << 20 {
                        let inputs = zip(model.inputs, counts).map { Tensor(shape: $0.shape, scalars: [Float](repeating: 0.5, count: $1)) }
                        _ = try model.run(inputs)
                    }
                } catch let error as NeuralError {
                    rejected += 1
                    XCTAssertTrue(error.description.hasPrefix("mutated-\(name).tflite: "), error.description)
                    XCTAssertFalse(error.description.contains("\n"), error.description)
                }
            }
        }
        XCTAssertGreaterThan(rejected, 100, "most structural mutations must be detected")
        XCTAssertGreaterThan(loaded, 0, "flips inside numbers leave loadable models")
    }
}
