import Foundation
import VFXNeural

/// `vfx model info MODEL [--json]` and `vfx model run MODEL --input X.npy [--input Y.npy] --output-dir DIR`:
/// inspect a TFLite model, or run it on NumPy tensors.
///
/// ```
/// $ vfx model info models/face_landmark.tflite
/// $ vfx model run models/face_landmark.tflite --input face.npy --output-dir out
/// out/output_0_conv2d_21.npy
/// out/output_1_conv2d_31.npy
/// ```
enum ModelCommand {
    static let usage = """
        usage: vfx model info MODEL.tflite [--json]
               vfx model run MODEL.tflite --input X.npy [--input Y.npy ...] --output-dir DIR [--threads N]

        info   inputs and outputs (names, shapes), operator counts, parameters, multiply-adds
        run    runs the model on .npy tensors (float32, float64, int32 or uint8; one --input per model
               input, in order) and writes one float32 .npy per output: DIR/output_<index>_<name>.npy
        """

    static func run(_ arguments: inout Arguments) throws {
        guard let action = arguments.next() else { throw UsageError("model needs an action: info or run\n\(usage)") }
        if action == "--help" || action == "-h" {
            print(usage)
            return
        }
        switch action {
        case "info": try info(&arguments)
        case "run": try runModel(&arguments)
        default: throw UsageError("unknown model action '\(action)' (info or run)")
        }
    }

    /// Loads a model; every failure names the file.
    static func load(_ path: String, threads: Int = 1) throws -> NeuralModel {
        guard FileManager.default.fileExists(atPath: path) else { throw ModelCommandError("\(path): no such file") }
        do {
            return try NeuralModel(contentsOf: URL(fileURLWithPath: path), threads: threads)
        } catch {
            // The engine names the file by its last component: name it as the user wrote it.
            let message = "\(error)"
            let shortName = URL(fileURLWithPath: path).lastPathComponent + ": "
            if message.contains(path) { throw ModelCommandError(message) }
            throw ModelCommandError(path + ": " + (message.hasPrefix(shortName) ? String(message.dropFirst(shortName.count)) : message))
        }
    }

    /// The name of output `index` on disk: `output_<index>_<name>.npy`, where any character of the tensor
    /// name other than an ASCII letter, digit, `.`, `_` or `-` becomes `_`.
    static func outputFileName(index: Int, tensorName: String) -> String {
        let safe = tensorName.unicodeScalars.map { scalar -> String in
            let allowed = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
            return allowed ? String(scalar) : "_"
        }.joined()
        return "output_\(index)_\(safe).npy"
    }

    private static func info(_ arguments: inout Arguments) throws {
        let path = try arguments.positional("MODEL")
        let json = arguments.flag("--json")
        try arguments.finish()
        let model = try load(path)
        let summary = model.summary
        if json {
            let document = ModelInfo(
                model: path, inputs: model.inputs.map(ModelInfo.TensorEntry.init),
                outputs: model.outputs.map(ModelInfo.TensorEntry.init), operators: summary.operatorCounts,
                parameters: summary.parameterCount, multiplyAdds: summary.multiplyAdds, tensors: summary.tensorCount)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(document), as: UTF8.self))
            return
        }
        func shape(_ dimensions: [Int]) -> String { dimensions.map(String.init).joined(separator: "x") }
        func tensorLines(_ tensors: [TensorInfo]) -> [String] {
            let width = tensors.map(\.name.count).max() ?? 0
            return tensors.enumerated().map { index, tensor in
                "  \(index)  \(tensor.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(shape(tensor.shape))"
            }
        }
        let operators = summary.operatorCounts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let nameWidth = operators.map(\.key.count).max() ?? 0
        var lines = ["model: \(path)", "inputs:"] + tensorLines(model.inputs) + ["outputs:"] + tensorLines(model.outputs)
        lines.append("operators (\(operators.reduce(0) { $0 + $1.value }) in all):")
        lines += operators.map { "  \($0.key.padding(toLength: nameWidth, withPad: " ", startingAt: 0))  \($0.value)" }
        lines.append("parameters: \(grouped(summary.parameterCount))")
        lines.append("multiply-adds: \(grouped(summary.multiplyAdds)) per run "
            + "(\(String(format: "%.1f", Double(summary.multiplyAdds) / 1e6)) M)")
        lines.append("tensors: \(summary.tensorCount)")
        print(lines.joined(separator: "\n"))
    }

    private static func runModel(_ arguments: inout Arguments) throws {
        let inputPaths = try arguments.options("--input", "-i")
        guard let outputDirectory = try arguments.option("--output-dir", "-o") else {
            throw UsageError("model run needs --output-dir DIR")
        }
        let threads = try arguments.intOption("--threads", range: 1...256) ?? 1
        let path = try arguments.positional("MODEL")
        try arguments.finish()

        let model = try load(path, threads: threads)
        guard inputPaths.count == model.inputs.count else {
            throw UsageError("\(path) has \(model.inputs.count) input(s), got \(inputPaths.count) --input file(s)")
        }
        var inputs: [Tensor] = []
        for (inputPath, info) in zip(inputPaths, model.inputs) {
            let tensor = try NumPy.read(contentsOf: URL(fileURLWithPath: inputPath))
            guard tensor.shape == info.shape else {
                throw ModelCommandError("\(inputPath): shape \(tensor.shape) does not match input '\(info.name)' "
                    + "of \(path), which is \(info.shape)")
            }
            inputs.append(tensor)
        }
        let outputs = try model.run(inputs)

        let directory = URL(fileURLWithPath: outputDirectory, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ModelCommandError("\(outputDirectory): cannot create the output folder")
        }
        for (index, (output, info)) in zip(outputs, model.outputs).enumerated() {
            let file = directory.appendingPathComponent(outputFileName(index: index, tensorName: info.name))
            try NumPy.write(output, to: file)
            print(file.path)
        }
    }

    private static func grouped(_ value: Int) -> String {
        let digits = String(value)
        return digits.enumerated().map { index, digit in
            (index > 0 && (digits.count - index) % 3 == 0 ? "," : "") + String(digit)
        }.joined()
    }
}

/// A `vfx model` failure; the message names the file.
struct ModelCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The JSON document of `vfx model info --json`.
private struct ModelInfo: Encodable {
    struct TensorEntry: Encodable {
        let name: String
        let shape: [Int]
        init(_ info: TensorInfo) { (name, shape) = (info.name, info.shape) }
    }

    let model: String
    let inputs: [TensorEntry]
    let outputs: [TensorEntry]
    let operators: [String: Int]
    let parameters: Int
    let multiplyAdds: Int
    let tensors: Int

    enum CodingKeys: String, CodingKey {
        case model, inputs, outputs, operators, parameters, tensors
        case multiplyAdds = "multiply_adds"
    }
}
