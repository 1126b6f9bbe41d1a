/// Expands a sparse constant tensor (TFLite `SparsityParameters`: a traversal order, optional block map,
/// and per traversed dimension either DENSE with a size or SPARSE_CSR with segments and indices) into a
/// dense row-major array. Values are consumed in traversal order; every index is checked.
///
/// ```swift
/// let dense = try densify(values: stored, shape: [64, 1, 1, 32], sparsity: table)
/// ```
func densify(values: [Float], shape: [Int], sparsity: FlatTable) throws -> [Float] {
    // SparsityParameters: 0 traversal_order, 1 block_map, 2 dim_metadata.
    let order = try sparsity.int32s(field: 0).map(Int.init)
    let blockMap = try sparsity.int32s(field: 1).map(Int.init)
    let metadata = try sparsity.tables(field: 2)
    let rank = shape.count
    guard order.count <= 8, order.count == metadata.count, order.count == rank + blockMap.count, !order.isEmpty,
          Set(order) == Set(0..<order.count), order.prefix(rank).allSatisfy({ $0 < rank }),
          blockMap.allSatisfy({ $0 >= 0 && $0 < rank }) else {
        throw ModelError("inconsistent sparsity parameters for shape \(shape)")
    }
    // DimensionMetadata: 0 format (0 dense, 1 sparse CSR), 1 dense_size, 2/3 array_segments (union type,
    // value), 4/5 array_indices (union type, value). Index vector unions: 1 int32, 2 uint16, 3 uint8.
    struct Level { var sparse: Bool; var size: Int; var segments: [Int]; var indices: [Int] }
    func indexVector(_ table: FlatTable, typeField: Int) throws -> [Int] {
        let kind = try table.scalar(UInt8.self, field: typeField, default: 0)
        guard kind != 0 else { return [] }
        guard let vectorTable = try table.table(field: typeField + 1),
              let vector = try vectorTable.vector(field: 0, elementSize: kind == 1 ? 4 : kind == 2 ? 2 : 1) else {
            throw ModelError("sparse dimension without its index vector")
        }
        let buffer = vector.buffer
        return try (0..<vector.count).map { index -> Int in
            switch kind {
            case 1: return Int(try buffer.load(Int32.self, at: vector.start + 4 * index))
            case 2: return Int(try buffer.load(UInt16.self, at: vector.start + 2 * index))
            case 3: return Int(try buffer.load(UInt8.self, at: vector.start + index))
            default: throw ModelError("unknown sparse index vector type \(kind)")
            }
        }
    }
    let levels = try metadata.map { table -> Level in
        let sparse = try table.scalar(Int8.self, field: 0, default: 0) == 1
        return Level(sparse: sparse, size: Int(try table.scalar(Int32.self, field: 1, default: 0)),
                     segments: sparse ? try indexVector(table, typeField: 2) : [],
                     indices: sparse ? try indexVector(table, typeField: 4) : [])
    }
    var blockSizes: [Int] = []
    for (block, dimension) in blockMap.enumerated() {
        let level = levels[order.firstIndex(of: rank + block) ?? 0]
        guard !level.sparse, level.size > 0, shape[dimension] % level.size == 0 else {
            throw ModelError("bad sparse block size for shape \(shape)")
        }
        blockSizes.append(level.size)
    }
    let total = shape.reduce(1, *)
    var dense = [Float](repeating: 0, count: total)
    var strides = [Int](repeating: 1, count: rank)
    for axis in stride(from: rank - 2, through: 0, by: -1) { strides[axis] = strides[axis + 1] * shape[axis + 1] }
    var indices = [Int](repeating: 0, count: order.count)
    var consumed = 0
    var visits = 0
    let visitLimit = 4 * (total + values.count) + 1024

    func visit(level: Int, parent: Int) throws {
        visits += 1
        guard visits <= visitLimit else { throw ModelError("sparse tensor traversal does not match its shape \(shape)") }
        if level == order.count {
            var original = [Int](repeating: 0, count: rank)
            for position in 0..<rank { original[order[position]] = indices[position] }
            for position in rank..<order.count {
                let block = order[position] - rank
                original[blockMap[block]] = original[blockMap[block]] * blockSizes[block] + indices[position]
            }
            var flat = 0
            for axis in 0..<rank {
                guard original[axis] >= 0, original[axis] < shape[axis] else {
                    throw ModelError("sparse index \(original) is outside shape \(shape)")
                }
                flat += original[axis] * strides[axis]
            }
            guard consumed < values.count else { throw ModelError("sparse tensor has fewer values than its indices") }
            dense[flat] = values[consumed]
            consumed += 1
            return
        }
        let info = levels[level]
        if !info.sparse {
            guard info.size >= 0, info.size <= total else { throw ModelError("bad dense size \(info.size)") }
            for index in 0..<info.size {
                indices[level] = index
                try visit(level: level + 1, parent: parent * info.size + index)
            }
        } else {
            guard parent >= 0, parent + 1 < info.segments.count else { throw ModelError("sparse segment out of range") }
            let start = info.segments[parent], end = info.segments[parent + 1]
            guard start >= 0, start <= end, end <= info.indices.count else {
                throw ModelError("sparse segment \(start)..<\(end) out of range")
            }
            for position in start..<end {
                indices[level] = info.indices[position]
                try visit(level: level + 1, parent: position)
            }
        }
    }
    try visit(level: 0, parent: 0)
    return dense
}
