import VFXCore
/// PAD with zeros of a rank-4 tensor (lower ranks are padded to 4 at load).
final class PadLayer: Layer {
    let input: Int, output: Int
    let inputShape: [Int], outputShape: [Int]
    /// Zeros before each axis.
    let before: [Int]

    init(input: Int, output: Int, inputShape: [Int], outputShape: [Int], before: [Int]) {
        self.input = input; self.output = output
        self.inputShape = inputShape; self.outputShape = outputShape; self.before = before
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input, y = arena + output
        y.update(repeating: 0, count: outputShape.reduce(1, *))
        let inner = inputShape[3]
        var source = x
        for i0 in 0..<inputShape[0] {
            for i1 in 0..<inputShape[1] {
                for i2 in 0..<inputShape[2] {
                    let o = ((i0 + before[0]) * outputShape[1] + i1 + before[1]) * outputShape[2] + i2 + before[2]
                    (y + o * outputShape[3] + before[3]).update(from: source, count: inner)
                    source += inner
                }
            }
        }
    }
}

/// CONCATENATION along one axis: each input contributes a contiguous run per outer index.
final class ConcatenationLayer: Layer {
    let inputs: [Int], output: Int
    let outer: Int
    /// Elements each input contributes per outer index.
    let runs: [Int]
    let activation: Activation

    init(inputs: [Int], output: Int, outer: Int, runs: [Int], activation: Activation) {
        self.inputs = inputs; self.output = output; self.outer = outer; self.runs = runs
        self.activation = activation
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        var y = arena + output
        for o in 0..<outer {
            for (input, run) in zip(inputs, runs) {
                let x = arena + input + o * run
                if activation == .none {
                    y.update(from: x, count: run)
                } else {
                    for i in 0..<run { y[i] = min(max(x[i], activation.lower), activation.upper) }
                }
                y += run
            }
        }
    }
}

/// RESIZE_BILINEAR of an NHWC tensor (batch 1), with TFLite's align_corners and half_pixel_centers rules;
/// the source rows, columns and weights are computed at load.
final class ResizeBilinearLayer: Layer {
    struct Tap { var low: Int; var high: Int; var fraction: Float }

    let input: Int, output: Int
    let inputWidth: Int, channels: Int
    let rows: [Tap], columns: [Tap]

    init(input: Int, output: Int, inputHeight: Int, inputWidth: Int, outputHeight: Int, outputWidth: Int, channels: Int,
         alignCorners: Bool, halfPixelCenters: Bool) {
        self.input = input; self.output = output
        self.inputWidth = inputWidth; self.channels = channels
        func taps(_ inputSize: Int, _ outputSize: Int) -> [Tap] {
            let scale = alignCorners && outputSize > 1
                ? Float(inputSize - 1) / Float(outputSize - 1) : Float(inputSize) / Float(outputSize)
            return (0..<outputSize).map { index in
                let position = halfPixelCenters ? (Float(index) + 0.5) * scale - 0.5 : Float(index) * scale
                let low = max(Int(position.rounded(.down)), 0)
                let high = min(Int(position.rounded(.up)), inputSize - 1)
                return Tap(low: min(low, inputSize - 1), high: max(high, 0), fraction: position - Float(low))
            }
        }
        rows = taps(inputHeight, outputHeight)
        columns = taps(inputWidth, outputWidth)
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input
        var y = arena + output
        for row in rows {
            let top = x + row.low * inputWidth * channels, bottom = x + row.high * inputWidth * channels
            let fy = row.fraction
            for column in columns {
                let fx = column.fraction
                let w00 = (1 - fy) * (1 - fx), w01 = (1 - fy) * fx, w10 = fy * (1 - fx), w11 = fy * fx
                let p00 = top + column.low * channels, p01 = top + column.high * channels
                let p10 = bottom + column.low * channels, p11 = bottom + column.high * channels
                var c = 0
                while c + 16 <= channels {
                    var v = SIMD16<Float>(loadingFrom: p00 + c) * w00
                    v = v.addingProduct(SIMD16(loadingFrom: p01 + c), w01)
                    v = v.addingProduct(SIMD16(loadingFrom: p10 + c), w10)
                    v = v.addingProduct(SIMD16(loadingFrom: p11 + c), w11)
                    v.store(to: y + c)
                    c += 16
                }
                while c < channels {
                    y[c] = p00[c] * w00 + p01[c] * w01 + p10[c] * w10 + p11[c] * w11
                    c += 1
                }
                y += channels
            }
        }
    }
}

/// DEPTH_TO_SPACE (NHWC, batch 1): channel block (by, bx) of each input pixel becomes output pixel
/// (y·b + by, x·b + bx).
final class DepthToSpaceLayer: Layer {
    let input: Int, output: Int
    let height: Int, width: Int, block: Int, outputChannels: Int

    init(input: Int, output: Int, height: Int, width: Int, block: Int, outputChannels: Int) {
        self.input = input; self.output = output
        self.height = height; self.width = width; self.block = block; self.outputChannels = outputChannels
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        var x = arena + input
        let y = arena + output, outputWidth = width * block
        for iy in 0..<height {
            for ix in 0..<width {
                for by in 0..<block {
                    for bx in 0..<block {
                        let pixel = (iy * block + by) * outputWidth + ix * block + bx
                        (y + pixel * outputChannels).update(from: x, count: outputChannels)
                        x += outputChannels
                    }
                }
            }
        }
    }
}
