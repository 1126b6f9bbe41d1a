/// A tensor of the arena that the caller sees: a graph input or output.
struct Slot {
    let name: String
    let shape: [Int]
    let offset: Int
    var count: Int { shape.reduce(1, *) }
}

/// A loaded model ready to run: its layers in order over one arena of floats that holds every
/// intermediate tensor (and the constants that layers read as operands).
///
/// ```swift
/// let program = try ProgramBuilder(model: file, kernels: baselineKernels, threads: 1).build()
/// program.run(inputs: inputs, outputs: &results)
/// ```
final class Program {
    let inputs: [Slot]
    let outputs: [Slot]
    let layers: [any Layer]
    let arena: AlignedFloats
    let summary: ModelSummary
    let kernelName: String

    init(inputs: [Slot], outputs: [Slot], layers: [any Layer], arena: AlignedFloats, summary: ModelSummary,
         kernelName: String) {
        self.inputs = inputs; self.outputs = outputs; self.layers = layers; self.arena = arena
        self.summary = summary; self.kernelName = kernelName
    }

    /// Copies the inputs in, runs every layer, copies the outputs out. Shapes were checked by the caller.
    func run(inputs tensors: [Tensor], outputs results: inout [Tensor]) {
        let base = arena.pointer
        for (tensor, slot) in zip(tensors, inputs) {
            tensor.scalars.withUnsafeBufferPointer { source in
                if let address = source.baseAddress { (base + slot.offset).update(from: address, count: slot.count) }
            }
        }
        for layer in layers { layer.run(base) }
        for index in results.indices {
            let slot = outputs[index]
            results[index].scalars.withUnsafeMutableBufferPointer { target in
                if let address = target.baseAddress { address.update(from: base + slot.offset, count: slot.count) }
            }
        }
    }
}

/// Places tensors in one arena so that tensors alive at the same time never overlap: largest first,
/// each at the lowest offset that is free during its whole lifetime (steps `first...last`).
///
/// ```swift
/// let (offsets, size) = planArena([ArenaItem(id: 7, count: 4096, first: 0, last: 3), ...])
/// ```
struct ArenaItem {
    var id: Int
    var count: Int
    var first: Int
    var last: Int
}

func planArena(_ items: [ArenaItem]) -> (offsets: [Int: Int], size: Int) {
    /// 64-byte granules, so every tensor starts on a cache line.
    func rounded(_ count: Int) -> Int { (count + 15) / 16 * 16 }
    var placed: [(item: ArenaItem, offset: Int)] = []
    var offsets: [Int: Int] = [:]
    var size = 0
    for item in items.sorted(by: { ($0.count, $1.id) > ($1.count, $0.id) }) {
        let conflicts = placed.filter { $0.item.first <= item.last && item.first <= $0.item.last }
            .sorted { $0.offset < $1.offset }
        var offset = 0
        for other in conflicts {
            if offset + rounded(item.count) <= other.offset { break }
            offset = max(offset, other.offset + rounded(other.item.count))
        }
        placed.append((item, offset))
        offsets[item.id] = offset
        size = max(size, offset + rounded(item.count))
    }
    return (offsets, size)
}
