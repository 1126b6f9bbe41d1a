import VFXCore
import VFXNeuralKernels

/// MAX_POOL_2D and AVERAGE_POOL_2D over NHWC windows; the average counts only the window's in-bounds
/// elements, as TFLite does.
final class PoolingLayer: Layer {
    enum Kind { case maximum, average }

    let kind: Kind
    let input: Int, output: Int
    let geometry: WindowGeometry
    let activation: Activation

    init(kind: Kind, input: Int, output: Int, geometry: WindowGeometry, activation: Activation) {
        self.kind = kind
        self.input = input; self.output = output
        self.geometry = geometry
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let g = geometry, channels = g.inputChannels
        for oy in 0..<g.outputHeight {
            let iy0 = oy * g.strideY - g.padTop
            let rows = max(0, iy0)..<min(g.inputHeight, iy0 + g.kernelHeight)
            for ox in 0..<g.outputWidth {
                let ix0 = ox * g.strideX - g.padLeft
                let columns = max(0, ix0)..<min(g.inputWidth, ix0 + g.kernelWidth)
                let out = arena + output + (oy * g.outputWidth + ox) * channels
                var c = 0
                while c + 16 <= channels {
                    pool(SIMD16<Float>.self, arena + input + c, rows, columns, out + c)
                    c += 16
                }
                if c + 8 <= channels {
                    pool(SIMD8<Float>.self, arena + input + c, rows, columns, out + c)
                    c += 8
                }
                if c + 4 <= channels {
                    pool(SIMD4<Float>.self, arena + input + c, rows, columns, out + c)
                    c += 4
                }
                while c < channels {
                    var value: Float = kind == .maximum ? -.infinity : 0
                    for y in rows {
                        for x in columns {
                            let v = arena[input + (y * g.inputWidth + x) * channels + c]
                            value = kind == .maximum ? max(value, v) : value + v
                        }
                    }
                    if kind == .average { value /= Float(max(rows.count * columns.count, 1)) }
                    out[c] = min(max(value, activation.lower), activation.upper)
                    c += 1
                }
            }
        }
    }

    /// One vector of channels of one output pixel over the window's in-bounds `rows` × `columns`.
    @inline(__always)
    private func pool<V: FloatVector>(_ vector: V.Type, _ source: UnsafePointer<Float>, _ rows: Range<Int>,
                                      _ columns: Range<Int>, _ out: UnsafeMutablePointer<Float>) {
        let width = geometry.inputWidth, channels = geometry.inputChannels
        var value = V(repeating: kind == .maximum ? -.infinity : 0)
        for y in rows {
            for x in columns {
                let v = V(loadingFrom: source + (y * width + x) * channels)
                value = kind == .maximum ? value.lanewiseMaximum(v) : value + v
            }
        }
        if kind == .average { value *= 1 / Float(max(rows.count * columns.count, 1)) }
        value.clamped(activation.lower, activation.upper).store(to: out)
    }
}

/// MEAN over a set of axes of a tensor of rank ≤ 4 (shapes padded to rank 4 at load).
final class MeanLayer: Layer {
    let input: Int, output: Int
    let shape: [Int]
    /// Output strides per input axis, 0 on the reduced axes.
    let outputStrides: [Int]
    let outputCount: Int
    let scale: Float

    init(input: Int, output: Int, shape: [Int], reduced: Set<Int>) {
        self.input = input; self.output = output
        self.shape = shape
        var strides = [0, 0, 0, 0], stride = 1
        for axis in (0..<4).reversed() where !reduced.contains(axis) {
            strides[axis] = stride
            stride *= shape[axis]
        }
        outputStrides = strides
        outputCount = stride
        scale = 1 / Float(max(reduced.reduce(1) { $0 * shape[$1] }, 1))
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input, y = arena + output, s = outputStrides
        y.update(repeating: 0, count: outputCount)
        var index = 0
        for i0 in 0..<shape[0] {
            for i1 in 0..<shape[1] {
                for i2 in 0..<shape[2] {
                    let base = i0 * s[0] + i1 * s[1] + i2 * s[2]
                    for i3 in 0..<shape[3] {
                        y[base + i3 * s[3]] += x[index]
                        index += 1
                    }
                }
            }
        }
        for i in 0..<outputCount { y[i] *= scale }
    }
}
