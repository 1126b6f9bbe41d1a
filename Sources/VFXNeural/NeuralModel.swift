import Foundation
import VFXNeuralKernels

/// A tensor's name and shape as the model file declares them.
public struct TensorInfo: Sendable, Hashable {
    public let name: String
    public let shape: [Int]

    public init(name: String, shape: [Int]) {
        self.name = name
        self.shape = shape
    }
}

/// A float32 tensor in row-major order (NHWC for images).
///
/// ```swift
/// let image = Tensor(shape: [1, 128, 128, 3], scalars: pixels)
/// ```
public struct Tensor: Sendable {
    public var shape: [Int]
    public var scalars: [Float]

    public init(shape: [Int], scalars: [Float]) {
        self.shape = shape
        self.scalars = scalars
    }
}

/// Facts about a model: what it is made of and what one invoke costs.
public struct ModelSummary: Sendable {
    /// Builtin operator name (e.g. "CONV_2D") or custom operator name → how many the file has.
    public let operatorCounts: [String: Int]
    /// Number of weight and bias scalars stored in the file (float32 or float16; sparse ones as stored).
    public let parameterCount: Int
    /// Multiply-adds per invoke of the convolutions and fully connected layers.
    public let multiplyAdds: Int
    /// Number of tensors the file declares.
    public let tensorCount: Int
}

/// A model that cannot be read or run: one line that names the file (or the input tensor).
public struct NeuralError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}

/// A TFLite model loaded for inference: weights widened to float32 and packed for the kernels, constant
/// subgraphs folded, and one arena planned for all intermediate tensors, so that `run` allocates only
/// its results (`run(_:into:)` allocates nothing).
///
/// ```swift
/// let model = try NeuralModel(contentsOf: URL(fileURLWithPath: "models/face_detection_short_range.tflite"))
/// let outputs = try model.run([Tensor(shape: [1, 128, 128, 3], scalars: pixels)])
/// print(model.outputs.map(\.shape), outputs[1].scalars.max() ?? 0)
/// ```
///
/// An instance is not safe to run from two threads at once (its arena holds the intermediate tensors).
public final class NeuralModel {
    public let url: URL
    public let inputs: [TensorInfo]
    public let outputs: [TensorInfo]
    public let summary: ModelSummary
    /// Name of the kernel set chosen for this CPU ("avx512" or "baseline").
    public let kernelName: String

    let program: Program

    /// Loads and prepares a model; `threads` > 1 splits the largest convolutions across that many threads.
    public convenience init(contentsOf url: URL, threads: Int = 1) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw NeuralError("\(url.path): cannot read the model file (\(error.localizedDescription))")
        }
        try self.init(bytes: [UInt8](data), url: url, threads: threads, kernels: selectedKernels())
    }

    /// Prepares a model from the bytes of a .tflite file; `url` names it in errors.
    init(bytes: [UInt8], url: URL, threads: Int, kernels: KernelSet) throws {
        self.url = url
        let file = url.lastPathComponent
        guard threads >= 1 && threads <= 64 else {
            throw NeuralError("\(file): threads must be 1...64, got \(threads)")
        }
        do {
            let model = try TFLiteFile(bytes: bytes)
            let program = try ProgramBuilder(model: model, kernels: kernels, threads: threads).build()
            self.program = program
            inputs = program.inputs.map { TensorInfo(name: $0.name, shape: $0.shape) }
            outputs = program.outputs.map { TensorInfo(name: $0.name, shape: $0.shape) }
            summary = program.summary
            kernelName = program.kernelName
        } catch let error as FlatBufferError {
            throw NeuralError("\(file): malformed model: \(error.message)")
        } catch let error as ModelError {
            throw NeuralError("\(file): \(error.message)")
        } catch {
            throw NeuralError("\(file): \(error)")
        }
    }

    /// Runs the model once. Inputs must match `inputs` in count and shape.
    public func run(_ inputs: [Tensor]) throws -> [Tensor] {
        var results = outputs.map { Tensor(shape: $0.shape, scalars: [Float](repeating: 0, count: $0.shape.reduce(1, *))) }
        try run(inputs, into: &results)
        return results
    }

    /// Runs the model once, writing into caller-owned output tensors (shaped like `outputs`), which
    /// allocates nothing when the arrays are uniquely referenced.
    public func run(_ inputs: [Tensor], into results: inout [Tensor]) throws {
        let file = url.lastPathComponent
        guard inputs.count == program.inputs.count else {
            throw NeuralError("\(file): expected \(program.inputs.count) input tensors, got \(inputs.count)")
        }
        for (tensor, slot) in zip(inputs, program.inputs) where tensor.shape != slot.shape || tensor.scalars.count != slot.count {
            throw NeuralError("\(file): input '\(slot.name)' must have shape \(slot.shape), got \(tensor.shape) with \(tensor.scalars.count) values")
        }
        guard results.count == program.outputs.count,
              zip(results, program.outputs).allSatisfy({ $0.shape == $1.shape && $0.scalars.count == $1.count }) else {
            throw NeuralError("\(file): output tensors must have shapes \(program.outputs.map(\.shape))")
        }
        program.run(inputs: inputs, outputs: &results)
    }
}

extension NeuralModel {
    /// Runs `body` on input `index`'s storage inside the model's arena, so a caller can write the input
    /// tensor in place (row-major, shaped like `inputs[index]`) instead of building a `Tensor` that `run`
    /// copies. Write every value before each `invoke()`: the arena is reused between invokes.
    ///
    /// ```swift
    /// model.withInputBuffer(0) { pixels in fillTensor(pixels) }
    /// model.invoke()
    /// let best = model.withOutputBuffer(1) { $0.max() ?? 0 }
    /// ```
    public func withInputBuffer<R>(_ index: Int, _ body: (UnsafeMutableBufferPointer<Float>) throws -> R) rethrows -> R {
        precondition(program.inputs.indices.contains(index), "\(url.lastPathComponent) has no input \(index)")
        let slot = program.inputs[index]
        return try body(UnsafeMutableBufferPointer(start: program.arena.pointer + slot.offset, count: slot.count))
    }

    /// Runs the model once on what `withInputBuffer` wrote; the results stay in the arena until the next invoke.
    public func invoke() {
        let base = program.arena.pointer
        for layer in program.layers { layer.run(base) }
    }

    /// Runs `body` on output `index` of the last `invoke()`, read in place from the arena (valid only
    /// inside `body` and until the next invoke).
    public func withOutputBuffer<R>(_ index: Int, _ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        precondition(program.outputs.indices.contains(index), "\(url.lastPathComponent) has no output \(index)")
        let slot = program.outputs[index]
        return try body(UnsafeBufferPointer(start: program.arena.pointer + slot.offset, count: slot.count))
    }
}

/// The kernel set for this CPU: AVX-512 where the CPU has it, else the baseline build. The environment
/// variable `VFX_NEURAL_KERNELS=baseline` forces the baseline (for comparisons).
func selectedKernels() -> KernelSet {
    if ProcessInfo.processInfo.environment["VFX_NEURAL_KERNELS"] == "baseline" { return baselineKernels }
    return availableKernelSets().last ?? baselineKernels
}
