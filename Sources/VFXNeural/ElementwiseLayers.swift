import VFXCore
import Foundation
import VFXNeuralKernels

/// ADD or MUL of two tensors with broadcasting, plus a fused activation.
final class BinaryLayer: Layer {
    enum Operation { case add, multiply }

    /// How the second operand lines up with the first (the operands are swapped at load so that the
    /// first one always has the output's shape, except for `general`).
    enum Broadcast: Equatable {
        /// Same element count.
        case none
        /// The second operand is one value per innermost channel, repeated over all pixels.
        case channels(Int)
        /// The second operand is a single value.
        case scalar
        /// Any NumPy-style broadcast over 4-D shapes: strides of each operand per output axis (0 = repeated).
        case general(shape: [Int], first: [Int], second: [Int])
    }

    let operation: Operation
    let first: Int, second: Int, output: Int, count: Int
    let broadcast: Broadcast
    let activation: Activation

    init(operation: Operation, first: Int, second: Int, output: Int, count: Int, broadcast: Broadcast,
         activation: Activation) {
        self.operation = operation
        self.first = first; self.second = second; self.output = output; self.count = count
        self.broadcast = broadcast
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let a = arena + first, b = arena + second, out = arena + output
        switch broadcast {
        case .none:
            elementwise(a, b, out, count, stride: 1)
        case .channels(let channels):
            var offset = 0
            while offset < count {
                elementwise(a + offset, b, out + offset, channels, stride: 1)
                offset += channels
            }
        case .scalar:
            elementwise(a, b, out, count, stride: 0)
        case .general(let shape, let strideA, let strideB):
            var index = 0
            for i0 in 0..<shape[0] {
                for i1 in 0..<shape[1] {
                    for i2 in 0..<shape[2] {
                        for i3 in 0..<shape[3] {
                            let x = a[i0 * strideA[0] + i1 * strideA[1] + i2 * strideA[2] + i3 * strideA[3]]
                            let y = b[i0 * strideB[0] + i1 * strideB[1] + i2 * strideB[2] + i3 * strideB[3]]
                            let value = operation == .add ? x + y : x * y
                            out[index] = min(max(value, activation.lower), activation.upper)
                            index += 1
                        }
                    }
                }
            }
        }
    }

    /// `out[i] = clamp(a[i] ∘ b[i·stride])`, 16 lanes at a time (stride 0 repeats `b[0]`).
    @inline(__always)
    private func elementwise(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
                             _ count: Int, stride: Int) {
        let lower = activation.lower, upper = activation.upper, add = operation == .add
        var i = 0
        while i + 16 <= count {
            let x = SIMD16<Float>(loadingFrom: a + i)
            let y = stride == 0 ? SIMD16(repeating: b[0]) : SIMD16(loadingFrom: b + i)
            (add ? x + y : x * y).clamped(lower, upper).store(to: out + i)
            i += 16
        }
        while i < count {
            let x = a[i], y = b[i * stride]
            out[i] = min(max(add ? x + y : x * y, lower), upper)
            i += 1
        }
    }
}

/// Elementwise activations: RELU, RELU6, HARD_SWISH, LOGISTIC.
final class ActivationLayer: Layer {
    enum Function { case clamp(Activation), hardSwish, logistic }

    let function: Function
    let input: Int, output: Int, count: Int

    init(function: Function, input: Int, output: Int, count: Int) {
        self.function = function
        self.input = input; self.output = output; self.count = count
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input, y = arena + output
        var i = 0
        switch function {
        case .clamp(let activation):
            while i + 16 <= count {
                SIMD16<Float>(loadingFrom: x + i).clamped(activation.lower, activation.upper).store(to: y + i)
                i += 16
            }
            while i < count {
                y[i] = min(max(x[i], activation.lower), activation.upper)
                i += 1
            }
        case .hardSwish:
            while i + 16 <= count {
                let v = SIMD16<Float>(loadingFrom: x + i)
                (v * (v + 3).clamped(0, 6) * (1 / 6)).store(to: y + i)
                i += 16
            }
            while i < count {
                y[i] = x[i] * min(max(x[i] + 3, 0), 6) / 6
                i += 1
            }
        case .logistic:
            while i + 16 <= count {
                (1 / (1 + exponential(-SIMD16<Float>(loadingFrom: x + i)))).store(to: y + i)
                i += 16
            }
            while i < count {
                y[i] = 1 / (1 + Foundation.exp(-x[i]))
                i += 1
            }
        }
    }
}
/// PRELU with one slope per channel: `x ≥ 0 ? x : slope·x`.
final class PReLULayer: Layer {
    let input: Int, output: Int, count: Int
    let slopes: AlignedFloats

    init(input: Int, output: Int, count: Int, slopes: [Float]) {
        self.input = input; self.output = output; self.count = count
        self.slopes = AlignedFloats(slopes)
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input, y = arena + output, channels = slopes.count, alpha = slopes.pointer
        var offset = 0
        while offset < count {
            var c = 0
            while c + 16 <= channels {
                let v = SIMD16<Float>(loadingFrom: x + offset + c)
                v.replacing(with: v * SIMD16(loadingFrom: alpha + c), where: v .< 0).store(to: y + offset + c)
                c += 16
            }
            while c < channels {
                let v = x[offset + c]
                y[offset + c] = v < 0 ? v * alpha[c] : v
                c += 1
            }
            offset += channels
        }
    }
}
