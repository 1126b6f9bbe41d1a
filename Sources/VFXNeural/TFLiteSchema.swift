/// The parts of the TFLite schema (`tflite::Model`, flatbuffer identifier "TFL3") that VideoFX reads,
/// decoded into plain values with every index and size checked.
///
/// ```swift
/// let file = try TFLiteFile(bytes: bytes)
/// print(file.operators.count, file.tensors[file.inputs[0]].shape)
/// ```
struct TFLiteFile: Sendable {
    var tensors: [TFLiteTensor]
    var operators: [TFLiteOperator]
    var inputs: [Int]
    var outputs: [Int]
    /// Byte ranges of the file's buffers (`Model.buffers`), empty for buffers without data.
    var buffers: [Range<Int>]
    let bytes: [UInt8]

    /// Largest element count accepted for one tensor (256 MiB of float32).
    static let maximumElements = 1 << 26

    init(bytes: [UInt8]) throws(FlatBufferError) {
        self.bytes = bytes
        let buffer = FlatBuffer(bytes: bytes)
        guard bytes.count >= 8, bytes[4..<8].elementsEqual("TFL3".utf8) else {
            throw FlatBufferError("not a TFLite model (no TFL3 identifier)")
        }
        let model = try buffer.rootTable()
        // Model: 0 version, 1 operator_codes, 2 subgraphs, 3 description, 4 buffers.
        let codes = try model.tables(field: 1).map { code throws(FlatBufferError) -> OperatorCode in
            // OperatorCode: 0 deprecated_builtin_code (int8), 1 custom_code, 2 version, 3 builtin_code (int32).
            let deprecated = Int32(try code.scalar(Int8.self, field: 0, default: 0))
            let builtin = try code.scalar(Int32.self, field: 3, default: 0)
            return OperatorCode(builtin: max(deprecated, builtin), custom: try code.string(field: 1))
        }
        buffers = try model.tables(field: 4).map { table throws(FlatBufferError) -> Range<Int> in
            // Buffer: 0 data [ubyte], 1 offset (uint64), 2 size (uint64) for data stored after the flatbuffer.
            if let data = try table.vector(field: 0, elementSize: 1) { return data.byteRange }
            let offset = try table.scalar(UInt64.self, field: 1, default: 0)
            let size = try table.scalar(UInt64.self, field: 2, default: 0)
            guard offset > 1 else { return 0..<0 }
            guard offset <= UInt64(bytes.count), size <= UInt64(bytes.count) - offset else {
                throw FlatBufferError("buffer at offset \(offset) of \(size) bytes is outside the file")
            }
            return Int(offset)..<Int(offset + size)
        }
        let subgraphs = try model.tables(field: 2)
        guard let graph = subgraphs.first else { throw FlatBufferError("the model has no subgraph") }
        // SubGraph: 0 tensors, 1 inputs, 2 outputs, 3 operators, 4 name.
        let bufferCount = buffers.count
        tensors = try graph.tables(field: 0).enumerated().map { index, table throws(FlatBufferError) in
            try TFLiteTensor(table: table, index: index, bufferCount: bufferCount)
        }
        let tensorCount = tensors.count
        func tensorIndices(_ values: [Int32], optional: Bool) throws(FlatBufferError) -> [Int] {
            try values.map { value throws(FlatBufferError) -> Int in
                guard (optional && value == -1) || (value >= 0 && Int(value) < tensorCount) else {
                    throw FlatBufferError("tensor index \(value) is out of range (\(tensorCount) tensors)")
                }
                return Int(value)
            }
        }
        inputs = try tensorIndices(graph.int32s(field: 1), optional: false)
        outputs = try tensorIndices(graph.int32s(field: 2), optional: false)
        operators = try graph.tables(field: 3).map { table throws(FlatBufferError) -> TFLiteOperator in
            // Operator: 0 opcode_index, 1 inputs, 2 outputs, 3 builtin_options_type, 4 builtin_options,
            // 5 custom_options [ubyte].
            let codeIndex = Int(try table.scalar(UInt32.self, field: 0, default: 0))
            guard codeIndex < codes.count else {
                throw FlatBufferError("operator code index \(codeIndex) is out of range (\(codes.count) codes)")
            }
            return TFLiteOperator(
                code: codes[codeIndex],
                inputs: try tensorIndices(table.int32s(field: 1), optional: true),
                outputs: try tensorIndices(table.int32s(field: 2), optional: false),
                options: try table.table(field: 4),
                customOptions: try table.vector(field: 5, elementSize: 1)?.byteRange ?? 0..<0)
        }
    }
}

/// An operator's kind: a builtin operator number from the schema's `BuiltinOperator`, or a custom name.
struct OperatorCode: Sendable, Hashable {
    var builtin: Int32
    var custom: String?

    /// The name LiteRT prints: the builtin's enum name, or the custom op's own name.
    var name: String {
        if builtin == BuiltinOperator.custom, let custom { return custom }
        return BuiltinOperator.names[builtin] ?? "BUILTIN_\(builtin)"
    }
}

/// Builtin operator numbers (schema `BuiltinOperator`) of the operators VideoFX runs.
enum BuiltinOperator {
    static let add: Int32 = 0, averagePool2D: Int32 = 1, concatenation: Int32 = 2, conv2D: Int32 = 3
    static let depthwiseConv2D: Int32 = 4, depthToSpace: Int32 = 5, dequantize: Int32 = 6
    static let fullyConnected: Int32 = 9, logistic: Int32 = 14, maxPool2D: Int32 = 17, mul: Int32 = 18
    static let relu: Int32 = 19, relu6: Int32 = 21, reshape: Int32 = 22, resizeBilinear: Int32 = 23
    static let custom: Int32 = 32, pad: Int32 = 34, mean: Int32 = 40, prelu: Int32 = 54
    static let hardSwish: Int32 = 117, densify: Int32 = 124

    static let names: [Int32: String] = [
        add: "ADD", averagePool2D: "AVERAGE_POOL_2D", concatenation: "CONCATENATION", conv2D: "CONV_2D",
        depthwiseConv2D: "DEPTHWISE_CONV_2D", depthToSpace: "DEPTH_TO_SPACE", dequantize: "DEQUANTIZE",
        fullyConnected: "FULLY_CONNECTED", logistic: "LOGISTIC", maxPool2D: "MAX_POOL_2D", mul: "MUL",
        relu: "RELU", relu6: "RELU6", reshape: "RESHAPE", resizeBilinear: "RESIZE_BILINEAR", custom: "CUSTOM",
        pad: "PAD", mean: "MEAN", prelu: "PRELU", hardSwish: "HARD_SWISH", densify: "DENSIFY",
    ]
}

/// Element types (schema `TensorType`) that VideoFX reads.
enum TensorType: Int8, Sendable {
    case float32 = 0, float16 = 1, int32 = 2, uint8 = 3, int64 = 4, int8 = 9
}

struct TFLiteTensor: Sendable {
    var name: String
    var shape: [Int]
    var type: TensorType
    /// Index into `TFLiteFile.buffers` (0 is the schema's empty buffer).
    var buffer: Int
    var sparsity: FlatTable?

    var elementCount: Int { shape.reduce(1, *) }

    init(table: FlatTable, index: Int, bufferCount: Int) throws(FlatBufferError) {
        // Tensor: 0 shape, 1 type, 2 buffer, 3 name, 4 quantization, 5 is_variable, 6 sparsity.
        name = try table.string(field: 3) ?? "tensor \(index)"
        let rawType = try table.scalar(Int8.self, field: 1, default: 0)
        guard let type = TensorType(rawValue: rawType) else {
            throw FlatBufferError("tensor '\(name)' has unsupported element type \(rawType)")
        }
        self.type = type
        buffer = Int(try table.scalar(UInt32.self, field: 2, default: 0))
        guard buffer < max(bufferCount, 1) else {
            throw FlatBufferError("tensor '\(name)' names buffer \(buffer) of \(bufferCount)")
        }
        shape = try table.int32s(field: 0).map { Int($0) }
        var elements = 1
        for dimension in shape {
            guard dimension >= 0, dimension <= TFLiteFile.maximumElements else {
                throw FlatBufferError("tensor '\(name)' has bad shape \(shape)")
            }
            elements *= max(dimension, 1)
            guard elements <= TFLiteFile.maximumElements else {
                throw FlatBufferError("tensor '\(name)' is too large (shape \(shape))")
            }
        }
        sparsity = try table.table(field: 6)
    }
}

struct TFLiteOperator: Sendable {
    var code: OperatorCode
    /// Tensor indices; -1 marks an omitted optional input.
    var inputs: [Int]
    var outputs: [Int]
    var options: FlatTable?
    var customOptions: Range<Int>

    func option<T: FixedWidthInteger>(_ field: Int, default value: T) throws(FlatBufferError) -> T {
        guard let options else { return value }
        return try options.scalar(T.self, field: field, default: value)
    }
}
