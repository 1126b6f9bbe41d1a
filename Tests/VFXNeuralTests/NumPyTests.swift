import Foundation
import VFXNeural
import XCTest

/// The `.npy` reader and writer, checked against NumPy itself: files NumPy wrote (the reference inputs and the
/// samples in .build/reference/numpy, whose values are given by formulas in make_reference.py) and files we
/// wrote, read back by NumPy in the LiteRT virtual environment. Comparisons are exact: the format stores the
/// values bit for bit, and every sample value is exactly representable in float32.
final class NumPyTests: XCTestCase {
    private var temporary: URL!

    override func setUpWithError() throws {
        temporary = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-numpy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporary)
    }

    func testRoundTripKeepsShapeAndBits() throws {
        let special: [Float] = [0, -0.0, 1, -1, .pi, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .infinity, -.infinity]
        for shape in [[2, 3, 4], [5], [], [0, 3], [1, 1, 1, 1404], [9]] {
            let count = shape.reduce(1, *)
            let scalars = shape == [9] ? special : (0..<count).map { Float($0) * 0.37 - 11 }
            let data = try NumPy.encode(Tensor(shape: shape, scalars: scalars))
            let tensor = try NumPy.decode(data, file: "memory")
            XCTAssertEqual(tensor.shape, shape)
            XCTAssertEqual(tensor.scalars.map(\.bitPattern), scalars.map(\.bitPattern), "shape \(shape)")

            // The layout NumPy writes: signature, version 1.0, a header padded so the data starts at a multiple of 64.
            let bytes = [UInt8](data)
            XCTAssertEqual(Array(bytes[0..<8]), [0x93] + Array("NUMPY".utf8) + [1, 0])
            let dataStart = 10 + Int(bytes[8]) + Int(bytes[9]) << 8
            XCTAssertEqual(dataStart % 64, 0)
            XCTAssertEqual(bytes[dataStart - 1], UInt8(ascii: "\n"))
            XCTAssertEqual(bytes.count - dataStart, 4 * count)
        }
    }

    func testEncodeRefusesShapeThatDoesNotMatchTheValues() {
        XCTAssertThrowsError(try NumPy.encode(Tensor(shape: [2, 2], scalars: [1, 2, 3]), file: "x.npy")) { error in
            XCTAssertEqual("\(error)", "x.npy: shape [2, 2] does not match 3 values")
        }
    }

    func testReadsTheReferenceInputsNumPyWrote() throws {
        for model in Reference.models {
            let entry = try XCTUnwrap(Reference.manifest(model).inputs.first)
            let tensor = try NumPy.read(contentsOf: Reference.file("\(model)/\(entry.file)"))
            XCTAssertEqual(tensor.shape, entry.shape, model)
            // The manifest's numbers are NumPy's float64 views of these float32 values: exact after conversion.
            XCTAssertEqual(tensor.scalars.prefix(4).map(Double.init), entry.stats.first, model)
            XCTAssertEqual(tensor.scalars.suffix(4).map(Double.init), entry.stats.last, model)
            XCTAssertEqual(Double(tensor.scalars.min() ?? .nan), entry.stats.min, model)
            XCTAssertEqual(Double(tensor.scalars.max() ?? .nan), entry.stats.max, model)
            // A float64 sum of the same values in the same order (NumPy uses pairwise sums: a few ulps apart).
            let sum = tensor.scalars.reduce(0.0) { $0 + Double($1) }
            XCTAssertEqual(sum, entry.stats.sum, accuracy: 1e-9 * max(1, abs(entry.stats.sum)), model)
        }
    }

    func testReadsEveryElementTypeAndHeaderVersion() throws {
        func read(_ name: String) throws -> Tensor { try NumPy.read(contentsOf: Reference.file("numpy/\(name)")) }
        let ramp = (0..<24).map(Float.init)
        for name in ["float32.npy", "float32_v2.npy"] {
            let tensor = try read(name)
            XCTAssertEqual(tensor.shape, [2, 3, 4], name)
            XCTAssertEqual(tensor.scalars, ramp.map { 0.5 * $0 - 3 }, name)
        }
        let float64 = try read("float64.npy")
        XCTAssertEqual(float64.shape, [2, 3, 4])
        XCTAssertEqual(float64.scalars, ramp.map { 0.25 * $0 + 1 })
        let int32 = try read("int32.npy")
        XCTAssertEqual(int32.shape, [2, 3, 4])
        XCTAssertEqual(int32.scalars, ramp.map { 1000 * ($0 - 12) })
        let uint8 = try read("uint8.npy")
        XCTAssertEqual(uint8.shape, [16, 16])
        XCTAssertEqual(uint8.scalars, (0..<256).map(Float.init))
        let scalar = try read("scalar.npy")
        XCTAssertEqual(scalar.shape, [])
        XCTAssertEqual(scalar.scalars, [2.5])
        let vector = try read("vector.npy")
        XCTAssertEqual(vector.shape, [5])
        XCTAssertEqual(vector.scalars, [0, 1, 2, 3, 4])
        let empty = try read("empty.npy")
        XCTAssertEqual(empty.shape, [0, 3])
        XCTAssertEqual(empty.scalars, [])
    }

    func testRefusesWhatItCannotConvertWithOneLineNamingTheFile() throws {
        let expectations = [
            "refused_fortran.npy": "Fortran-order",
            "refused_big_endian.npy": "'>f4' is not supported",
            "refused_complex.npy": "'<c8' is not supported",
            "refused_int64.npy": "'<i8' is not supported",
        ]
        for (name, reason) in expectations {
            let url = try Reference.file("numpy/\(name)")
            assertOneLineError(try NumPy.read(contentsOf: url), file: url.path, mentions: reason)
        }
    }

    func testDamagedFilesAreOneLineErrors() throws {
        let good = try Data(contentsOf: Reference.file("numpy/float32.npy"))
        let dataStart = 10 + Int(good[8]) + Int(good[9]) << 8
        var cases: [(String, Data, String)] = [
            ("empty.npy", Data(), "not a NumPy .npy file"),
            ("text.npy", Data("hello, this is not numpy".utf8), "not a NumPy .npy file"),
            ("short-header.npy", good.prefix(30), "truncated .npy header"),
            ("short-data.npy", good.prefix(good.count - 3), "data truncated"),
            ("no-data.npy", good.prefix(dataStart), "data truncated"),
        ]
        var version9 = good
        version9[6] = 9
        cases.append(("version9.npy", version9, "unsupported .npy format version 9"))
        for (name, header, reason) in [
            ("huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }",
             "is too large"),
            ("negative.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }", "unreadable 'shape'"),
            ("noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", "no 'shape'"),
            ("garbled.npy", "{'descr': <f4, 'fortran_order': False, 'shape': (2, 2), }", "unreadable 'descr'"),
            ("maybe.npy", "{'descr': '<f4', 'fortran_order': maybe, 'shape': (2, 2), }", "unreadable 'fortran_order'"),
        ] {
            let text = Array(header.utf8) + [UInt8(ascii: "\n")]
            let bytes = [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(text.count), 0] + text + [UInt8](repeating: 0, count: 16)
            cases.append((name, Data(bytes), reason))
        }
        for (name, data, reason) in cases {
            let url = temporary.appendingPathComponent(name)
            try data.write(to: url)
            assertOneLineError(try NumPy.read(contentsOf: url), file: url.path, mentions: reason)
        }
        let missing = temporary.appendingPathComponent("missing.npy")
        assertOneLineError(try NumPy.read(contentsOf: missing), file: missing.path, mentions: "no such file")
    }

    /// Files we write, read by NumPy itself (the LiteRT virtual environment's NumPy 2).
    func testNumPyReadsWhatWeWrite() throws {
        let python = Reference.packageRoot.appendingPathComponent(".build/venv-litert/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Reference.Missing(path: python.path)
        }
        let url = temporary.appendingPathComponent("ours.npy")
        let scalars = (0..<60).map { Float($0) * 0.125 - 2 }
        try NumPy.write(Tensor(shape: [3, 4, 5], scalars: scalars), to: url)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary.path), ["ours.npy"],
                       "the write leaves no temporary file behind")

        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", """
            import sys, numpy as np
            a = np.load(sys.argv[1])
            print(a.dtype.str, a.shape, a.flags.c_contiguous, repr(float(a.astype(np.float64).sum())), repr(float(a[2, 3, 4])))
            """, url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let expectedSum = scalars.reduce(0.0) { $0 + Double($1) }
        XCTAssertEqual(output.trimmingCharacters(in: .whitespacesAndNewlines),
                       "<f4 (3, 4, 5) True \(expectedSum) \(Double(scalars[59]))")
    }

    private func assertOneLineError(_ expression: @autoclosure () throws -> Tensor, file path: String, mentions reason: String,
                                    line: UInt = #line) {
        XCTAssertThrowsError(try expression(), line: line) { error in
            let message = "\(error)"
            XCTAssertTrue(error is NumPyError, "\(type(of: error)): \(message)", line: line)
            XCTAssertTrue(message.hasPrefix(path + ": "), message, line: line)
            XCTAssertTrue(message.contains(reason), "'\(message)' should mention \(reason)", line: line)
            XCTAssertFalse(message.contains("\n"), message, line: line)
        }
    }
}
