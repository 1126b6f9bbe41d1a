/// A fixed-size, 64-byte-aligned float allocation owned by one object (weights, biases, the arena).
///
/// ```swift
/// let weights = AlignedFloats(packed)        // copies the array
/// kernels.gemm(GEMMArguments(..., packed: weights.pointer, ...))
/// ```
final class AlignedFloats {
    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    /// Zero-filled storage for `count` floats.
    init(count: Int) {
        self.count = count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 4, alignment: 64)
        pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        pointer.initialize(repeating: 0, count: max(count, 1))
    }

    convenience init(_ values: [Float]) {
        self.init(count: values.count)
        for (index, value) in values.enumerated() { pointer[index] = value }
    }

    deinit { pointer.deallocate() }
}
