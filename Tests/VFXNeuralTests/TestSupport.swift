import Foundation
@testable import VFXNeural

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    mutating func floats(_ count: Int, in range: ClosedRange<Float> = -1...1) -> [Float] {
        (0..<count).map { _ in Float.random(in: range, using: &self) }
    }
}

/// A float arena for driving one layer: regions are appended and read back by offset.
final class TestArena {
    private(set) var regions: [(offset: Int, count: Int)] = []
    private var values: [Float] = []
    private(set) var storage = AlignedFloats(count: 0)

    /// Adds a region holding `contents`; returns its offset.
    func add(_ contents: [Float]) -> Int {
        let offset = (values.count + 15) / 16 * 16
        values += [Float](repeating: 0, count: offset - values.count) + contents
        regions.append((offset, contents.count))
        return offset
    }

    /// Adds a zero region of `count` floats.
    func reserve(_ count: Int) -> Int { add([Float](repeating: .nan, count: count)) }

    /// Copies the regions into aligned storage (with slack) and runs the layer.
    func run(_ layer: any Layer) {
        storage = AlignedFloats(values + [Float](repeating: 0, count: 64))
        layer.run(storage.pointer)
    }

    func read(_ offset: Int, _ count: Int) -> [Float] {
        (0..<count).map { storage.pointer[offset + $0] }
    }
}

/// Largest |a − b| / max(1, |b|).
func maximumError(_ actual: [Float], _ expected: [Double]) -> Double {
    precondition(actual.count == expected.count, "sizes differ: \(actual.count) vs \(expected.count)")
    return zip(actual, expected).map { abs(Double($0) - $1) / max(1, abs($1)) }.max() ?? 0
}

/// TFLite's SAME/VALID output size and leading padding, written out from the definition: SAME keeps
/// ⌈in/stride⌉ outputs and splits the needed padding with the smaller half first.
func referencePadding(input: Int, kernel: Int, stride: Int, same: Bool) -> (output: Int, before: Int) {
    if same {
        let output = (input + stride - 1) / stride
        let needed = max(0, (output - 1) * stride + kernel - input)
        return (output, needed / 2)
    }
    return ((input - kernel) / stride + 1, 0)
}
