/// A bounds-checked view of a FlatBuffers file: every read checks its range first, so a truncated or
/// hostile file becomes a `FlatBufferError` instead of an out-of-bounds read.
///
/// ```swift
/// let buffer = FlatBuffer(bytes: try Array(Data(contentsOf: url)))
/// let root = try buffer.rootTable()
/// let version = try root.scalar(UInt32.self, field: 0, default: 0)
/// ```
struct FlatBuffer: Sendable {
    let bytes: [UInt8]

    /// Reads a little-endian scalar at `offset`, checking that all of its bytes lie in the file.
    func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) throws(FlatBufferError) -> T {
        let size = MemoryLayout<T>.size
        guard offset >= 0, offset <= bytes.count - size else {
            throw FlatBufferError("read of \(size) bytes at offset \(offset) is outside the file (\(bytes.count) bytes)")
        }
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    /// The table that the file's first word points at.
    func rootTable() throws(FlatBufferError) -> FlatTable {
        try table(at: Int(load(UInt32.self, at: 0)))
    }

    /// The table at an absolute position, with its vtable located and checked.
    func table(at position: Int) throws(FlatBufferError) -> FlatTable {
        let vtableOffset = Int(try load(Int32.self, at: position))
        let vtable = position - vtableOffset
        let vtableSize = Int(try load(UInt16.self, at: vtable))
        guard vtableSize >= 4, vtableSize % 2 == 0, vtable + vtableSize <= bytes.count else {
            throw FlatBufferError("bad vtable at offset \(vtable)")
        }
        return FlatTable(buffer: self, position: position, vtable: vtable, vtableSize: vtableSize)
    }

    /// Follows the unsigned 32-bit offset stored at `position` (offsets are relative to where they are stored).
    func indirect(at position: Int) throws(FlatBufferError) -> Int {
        position + Int(try load(UInt32.self, at: position))
    }

    /// A vector's element count and first element position, with its whole extent checked.
    func vector(at position: Int, elementSize: Int) throws(FlatBufferError) -> FlatVector {
        let count = Int(try load(UInt32.self, at: position))
        let start = position + 4
        guard count <= (bytes.count - start) / elementSize else {
            throw FlatBufferError("vector of \(count) elements at offset \(position) runs past the end of the file")
        }
        return FlatVector(buffer: self, start: start, count: count, elementSize: elementSize)
    }
}

/// One table: fields are looked up by their schema id through the vtable; absent fields give defaults.
struct FlatTable: Sendable {
    let buffer: FlatBuffer
    let position: Int
    let vtable: Int
    let vtableSize: Int

    /// The absolute position of a field's value, or nil when the field is absent.
    func fieldPosition(_ field: Int) throws(FlatBufferError) -> Int? {
        let entry = 4 + 2 * field
        guard entry + 2 <= vtableSize else { return nil }
        let offset = Int(try buffer.load(UInt16.self, at: vtable + entry))
        return offset == 0 ? nil : position + offset
    }

    func scalar<T: FixedWidthInteger>(_ type: T.Type, field: Int, default value: T) throws(FlatBufferError) -> T {
        guard let at = try fieldPosition(field) else { return value }
        return try buffer.load(T.self, at: at)
    }

    func table(field: Int) throws(FlatBufferError) -> FlatTable? {
        guard let at = try fieldPosition(field) else { return nil }
        return try buffer.table(at: buffer.indirect(at: at))
    }

    func vector(field: Int, elementSize: Int) throws(FlatBufferError) -> FlatVector? {
        guard let at = try fieldPosition(field) else { return nil }
        return try buffer.vector(at: buffer.indirect(at: at), elementSize: elementSize)
    }

    func string(field: Int) throws(FlatBufferError) -> String? {
        guard let vector = try vector(field: field, elementSize: 1) else { return nil }
        return String(decoding: buffer.bytes[vector.start..<vector.start + vector.count], as: UTF8.self)
    }

    /// The elements of a vector of tables; an absent field is an empty list.
    func tables(field: Int) throws(FlatBufferError) -> [FlatTable] {
        guard let vector = try vector(field: field, elementSize: 4) else { return [] }
        var result: [FlatTable] = []
        result.reserveCapacity(vector.count)
        for index in 0..<vector.count {
            let at = vector.start + 4 * index
            result.append(try buffer.table(at: buffer.indirect(at: at)))
        }
        return result
    }

    /// The elements of a vector of 32-bit integers; an absent field is an empty list.
    func int32s(field: Int) throws(FlatBufferError) -> [Int32] {
        guard let vector = try vector(field: field, elementSize: 4) else { return [] }
        return try (0..<vector.count).map { index throws(FlatBufferError) in
            try buffer.load(Int32.self, at: vector.start + 4 * index)
        }
    }
}

/// The checked extent of a vector inside the file.
struct FlatVector: Sendable {
    let buffer: FlatBuffer
    let start: Int
    let count: Int
    let elementSize: Int

    var byteRange: Range<Int> { start..<start + count * elementSize }
}

/// What went wrong while reading a FlatBuffers file (wrapped into a `NeuralError` naming the file).
struct FlatBufferError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
