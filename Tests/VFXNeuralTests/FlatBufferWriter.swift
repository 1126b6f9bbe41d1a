/// A minimal FlatBuffers writer for tests: tables are written parent first and their children after
/// (so every unsigned offset points forward, as the format requires), with offsets patched once the
/// child's position is known.
///
/// ```swift
/// let writer = FlatBufferWriter()
/// let table = writer.table([0: .int32Vector([0, 1])])
/// ```
final class FlatBufferWriter {
    indirect enum Value {
        case int8(Int8), uint8(UInt8), int32(Int32)
        case table([Int: Value])
        case int32Vector([Int32]), uint16Vector([UInt16]), uint8Vector([UInt8])
        case tableVector([[Int: Value]])
    }

    private(set) var bytes: [UInt8] = []

    private func align(_ alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    private func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private func patch<T: FixedWidthInteger>(_ value: T, at position: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[position + index] = byte }
        }
    }

    /// Writes a table (vtable first, then the table, then its children); returns the table's position.
    @discardableResult
    func table(_ fields: [Int: Value]) -> Int {
        align(4)
        let fieldCount = (fields.keys.max() ?? -1) + 1
        let vtable = bytes.count
        append(UInt16(4 + 2 * fieldCount))
        append(UInt16(0))
        for _ in 0..<fieldCount { append(UInt16(0)) }
        align(4)
        let table = bytes.count
        append(Int32(table - vtable))
        var children: [(slot: Int, value: Value)] = []
        for (field, value) in fields.sorted(by: { $0.key < $1.key }) {
            let position = bytes.count
            switch value {
            case .int8(let v): append(v); align(4)
            case .uint8(let v): append(v); align(4)
            case .int32(let v): append(v)
            default:
                append(UInt32(0))
                children.append((position, value))
            }
            patch(UInt16(position - table), at: vtable + 4 + 2 * field)
        }
        patch(UInt16(bytes.count - table), at: vtable + 2)
        for (slot, value) in children { patch(UInt32(write(value) - slot), at: slot) }
        return table
    }

    /// Writes a non-scalar value; returns its position.
    private func write(_ value: Value) -> Int {
        switch value {
        case .table(let fields): return table(fields)
        case .int32Vector(let values): return vector(values)
        case .uint16Vector(let values): return vector(values)
        case .uint8Vector(let values): return vector(values)
        case .tableVector(let tables):
            align(4)
            let start = bytes.count
            append(UInt32(tables.count))
            let slots = tables.indices.map { start + 4 + 4 * $0 }
            for _ in tables { append(UInt32(0)) }
            for (slot, fields) in zip(slots, tables) { patch(UInt32(table(fields) - slot), at: slot) }
            return start
        case .int8, .uint8, .int32: preconditionFailure("scalars are written inline")
        }
    }

    private func vector<T: FixedWidthInteger>(_ values: [T]) -> Int {
        align(4)
        let start = bytes.count
        append(UInt32(values.count))
        for value in values { append(value) }
        return start
    }
}
