import VFXNeuralKernels

/// Turns a decoded TFLite graph into a `Program`: folds constant DEQUANTIZE and DENSIFY operators, fuses
/// RELU/RELU6 into the operator before them and spatial PAD into the convolution after it, aliases
/// RESHAPE, checks every operator's shapes against what its kernel will touch, plans the arena, and
/// creates the layers.
///
/// ```swift
/// let program = try ProgramBuilder(model: file, kernels: selectedKernels(), threads: 1).build()
/// ```
struct ProgramBuilder {
    let model: TFLiteFile
    let kernels: KernelSet
    let threads: Int

    /// One runtime step before the arena is planned.
    struct Step {
        var inputs: [Int]
        var output: Int
        var scratch = 0
        /// RESHAPE: the output is the input's storage under another shape.
        var aliasesInput = false
        /// Steps that can absorb a following RELU/RELU6 carry their activation here.
        var activation: Activation?
        /// 1×1 convolutions can absorb a following residual ADD (as a second input).
        var acceptsResidual = false
        var removed = false
        /// Makes the layer from the planned offsets of `inputs`, `output`, scratch, and the final activation.
        var make: (_ inputs: [Int], _ output: Int, _ scratch: Int, _ activation: Activation) -> (any Layer)?
    }

    /// A spatial PAD that a following convolution may absorb.
    struct PendingPad { var step: Int; var source: Int; var before: [Int] }

    func build() throws -> Program {
        var state = BuildState(model: model)
        for (index, op) in model.operators.enumerated() {
            do {
                try buildOperator(op, state: &state)
            } catch let error as ModelError {
                throw ModelError("operator \(index) (\(op.code.name)): \(error.message)")
            } catch let error as FlatBufferError {
                throw ModelError("operator \(index) (\(op.code.name)): malformed: \(error.message)")
            }
        }
        return try finish(state)
    }

    /// What the builder knows so far: folded constants, steps, and which tensors are computed.
    struct BuildState {
        var constants: [Int: [Float]] = [:]
        var steps: [Step] = []
        var available: Set<Int>
        var producer: [Int: Int] = [:]
        var pads: [Int: PendingPad] = [:]
        var consumers: [Int: Int] = [:]
        var graphOutputs: Set<Int>
        /// Constants read as operands by layers (placed in the arena and filled at load).
        var arenaConstants: [Int: [Float]] = [:]
        var multiplyAdds = 0

        init(model: TFLiteFile) {
            available = Set(model.inputs)
            graphOutputs = Set(model.outputs)
            for op in model.operators {
                for input in op.inputs where input >= 0 { consumers[input, default: 0] += 1 }
            }
        }
    }

    // MARK: - Tensors and constants

    func shape(_ tensor: Int) -> [Int] { model.tensors[tensor].shape }

    func count(_ tensor: Int) -> Int { model.tensors[tensor].elementCount }

    func name(_ tensor: Int) -> String { model.tensors[tensor].name }

    /// The raw bytes of a tensor's buffer (empty when it has none).
    func bufferBytes(_ tensor: Int) -> ArraySlice<UInt8> {
        let index = model.tensors[tensor].buffer
        guard index < model.buffers.count else { return [] }
        return model.bytes[model.buffers[index]]
    }

    /// A float tensor's stored values, widened from float16 when needed.
    func storedFloats(_ tensor: Int, expected: Int?) throws -> [Float] {
        let bytes = bufferBytes(tensor)
        let type = model.tensors[tensor].type
        let size: Int
        switch type {
        case .float32: size = 4
        case .float16: size = 2
        default: throw ModelError("tensor '\(name(tensor))' is \(type), expected float")
        }
        guard bytes.count % size == 0, expected.map({ bytes.count == $0 * size }) ?? true else {
            throw ModelError("tensor '\(name(tensor))' has \(bytes.count) bytes of data for \(expected ?? 0) values")
        }
        return bytes.withUnsafeBytes { raw in
            (0..<bytes.count / size).map { index in
                size == 4 ? Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self)))
                    : Float(Float16(bitPattern: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))))
            }
        }
    }

    /// A constant float tensor: folded earlier, or stored in the file.
    func floatConstant(_ tensor: Int, _ state: BuildState) throws -> [Float] {
        if let values = state.constants[tensor] { return values }
        guard !bufferBytes(tensor).isEmpty, model.tensors[tensor].sparsity == nil else {
            throw ModelError("tensor '\(name(tensor))' must be a constant")
        }
        return try storedFloats(tensor, expected: count(tensor))
    }

    /// A constant integer tensor (int32 or int64), e.g. paddings or axes.
    func intConstant(_ tensor: Int) throws -> [Int] {
        let bytes = bufferBytes(tensor)
        let type = model.tensors[tensor].type
        guard type == .int32 || type == .int64 else { throw ModelError("tensor '\(name(tensor))' must be integer") }
        let size = type == .int32 ? 4 : 8
        guard bytes.count == count(tensor) * size else {
            throw ModelError("tensor '\(name(tensor))' must be a constant with \(count(tensor)) values")
        }
        return bytes.withUnsafeBytes { raw in
            (0..<count(tensor)).map { index in
                size == 4 ? Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self)))
                    : Int(truncatingIfNeeded: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 8 * index, as: Int64.self)))
            }
        }
    }

    /// An optional bias: zeros when the input is omitted.
    func bias(_ op: TFLiteOperator, index: Int, channels: Int, _ state: BuildState) throws -> [Float] {
        guard index < op.inputs.count, op.inputs[index] >= 0 else { return [Float](repeating: 0, count: channels) }
        let values = try floatConstant(op.inputs[index], state)
        guard values.count == channels else { throw ModelError("bias has \(values.count) values for \(channels) channels") }
        return values
    }

    /// Checks that a tensor is computed by the time this operator runs (or turns a constant into an arena operand).
    func runtime(_ tensor: Int, _ state: inout BuildState) throws -> Int {
        if state.available.contains(tensor) { return tensor }
        if model.tensors[tensor].type == .float32 || state.constants[tensor] != nil,
           let values = try? floatConstant(tensor, state), values.count == count(tensor) {
            state.arenaConstants[tensor] = values
            state.available.insert(tensor)
            return tensor
        }
        throw ModelError("tensor '\(name(tensor))' is used before it is computed")
    }

    /// A batch-1 NHWC shape: (height, width, channels).
    func image(_ tensor: Int) throws -> (height: Int, width: Int, channels: Int) {
        let s = shape(tensor)
        guard s.count == 4, s[0] == 1 else { throw ModelError("tensor '\(name(tensor))' must be 1×H×W×C, is \(s)") }
        return (s[1], s[2], s[3])
    }

    func expectShape(_ tensor: Int, _ expected: [Int]) throws {
        guard shape(tensor) == expected else {
            throw ModelError("output '\(name(tensor))' has shape \(shape(tensor)), the operator computes \(expected)")
        }
    }

    /// Pads a shape of rank ≤ 4 with leading ones to rank 4.
    func rank4(_ s: [Int]) throws -> [Int] {
        guard s.count <= 4 else { throw ModelError("rank \(s.count) is not supported") }
        return [Int](repeating: 1, count: 4 - s.count) + s
    }
}
