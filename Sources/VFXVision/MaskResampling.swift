import Foundation

/// Bilinear upsampling of a small float grid (the model's mask, or the guided filter's coefficients) to a
/// frame's size, with OpenCV's `INTER_LINEAR` geometry as MediaPipe's mask resize uses it: pixel centres at
/// +0.5, edges replicated. Rows of the grid are first widened to the frame's width, then each frame row
/// blends two of them, so the cost per frame pixel is one multiply-add.
///
/// ```swift
/// let upsampler = GridUpsampler()
/// upsampler.prepare(grid: (256, 256), frame: (1280, 720))
/// upsampler.widen(grid: maskPointer)                     // once per grid
/// upsampler.row(y) { top, bottom, weight in … }          // per frame row
/// ```
final class GridUpsampler {
    private(set) var gridWidth = 0, gridHeight = 0, frameWidth = 0, frameHeight = 0
    private var columns: [(Int32, Int32, Float)] = []
    private var rows: [(Int32, Int32, Float)] = []
    /// The grid's rows widened to the frame's width (gridHeight × frameWidth), one buffer per channel.
    private(set) var widened: [[Float]] = []

    static func taps(outputs: Int, inputs: Int) -> [(Int32, Int32, Float)] {
        let scale = Float(inputs) / Float(outputs)
        return (0..<outputs).map { index in
            let position = max((Float(index) + 0.5) * scale - 0.5, 0)
            let first = min(Int(position), inputs - 1)
            let second = min(first + 1, inputs - 1)
            return (Int32(first), Int32(second), position - Float(first))
        }
    }

    /// Sets the sizes; tables are rebuilt only when they change.
    func prepare(grid: (width: Int, height: Int), frame: (width: Int, height: Int), channels: Int) {
        if (gridWidth, gridHeight, frameWidth, frameHeight) != (grid.width, grid.height, frame.width, frame.height) {
            (gridWidth, gridHeight, frameWidth, frameHeight) = (grid.width, grid.height, frame.width, frame.height)
            columns = Self.taps(outputs: frame.width, inputs: grid.width)
            rows = Self.taps(outputs: frame.height, inputs: grid.height)
            widened = []
        }
        while widened.count < channels { widened.append([Float](repeating: 0, count: gridHeight * frameWidth)) }
    }

    /// Widens every row of `grid` (gridHeight × gridWidth floats) into channel `channel`.
    func widen(grid: UnsafePointer<Float>, channel: Int) {
        let width = frameWidth, gridWidth = self.gridWidth
        columns.withUnsafeBufferPointer { columns in
            widened[channel].withUnsafeMutableBufferPointer { target in
                for y in 0..<gridHeight {
                    let source = grid + y * gridWidth
                    let out = target.baseAddress! + y * width
                    for x in 0..<width {
                        let (a, b, t) = columns[x]
                        let left = source[Int(a)]
                        out[x] = left + (source[Int(b)] - left) * t
                    }
                }
            }
        }
    }

    /// Widens two grids at once into channels 0 and 1 (one read of the column taps for both).
    func widen(first: UnsafePointer<Float>, second: UnsafePointer<Float>) {
        let width = frameWidth, gridWidth = self.gridWidth, gridHeight = self.gridHeight
        columns.withUnsafeBufferPointer { columns in
            widened[0].withUnsafeMutableBufferPointer { firstTarget in
                widened[1].withUnsafeMutableBufferPointer { secondTarget in
                    for y in 0..<gridHeight {
                        let a = first + y * gridWidth, b = second + y * gridWidth
                        let outA = firstTarget.baseAddress! + y * width, outB = secondTarget.baseAddress! + y * width
                        for x in 0..<width {
                            let (left, right, t) = columns[x]
                            let a0 = a[Int(left)], b0 = b[Int(left)]
                            outA[x] = a0 + (a[Int(right)] - a0) * t
                            outB[x] = b0 + (b[Int(right)] - b0) * t
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with, for frame row `y`, the two widened rows of `channel` to blend and the weight of the second.
    @inline(__always) func row<R>(_ y: Int, channel: Int,
                                  _ body: (UnsafePointer<Float>, UnsafePointer<Float>, Float) -> R) -> R {
        let (a, b, t) = rows[y]
        return widened[channel].withUnsafeBufferPointer { buffer in
            body(buffer.baseAddress! + Int(a) * frameWidth, buffer.baseAddress! + Int(b) * frameWidth, t)
        }
    }
}

/// He, Sun and Tang's guided filter on a small grid: the output is locally `a · guide + b`, with `a` and `b`
/// fitted in every (2r+1)² window by least squares and then averaged; `epsilon` (in guide units squared)
/// keeps `a` small where the guide is flat. Applied to a mask with the image's luma as guide, the mask's
/// edges move onto the image's edges. Returns the averaged `a` and `b`, so that they can be upsampled and
/// applied to the full-resolution guide (He and Sun's fast guided filter).
///
/// ```swift
/// let filter = GuidedFilter(width: 256, height: 144, radius: 2, epsilon: 0.01)
/// filter.coefficients(guide: luma, input: mask)      // then filter.a, filter.b
/// ```
final class GuidedFilter {
    let width: Int
    let height: Int
    let radius: Int
    let epsilon: Float
    /// One allocation for every plane below (count floats each), owned here and freed in deinit.
    private let storage: UnsafeMutablePointer<Float>
    /// The averaged coefficients after `coefficients(guide:input:)`.
    let a: UnsafeMutablePointer<Float>
    let b: UnsafeMutablePointer<Float>
    private let meanGuide: UnsafeMutablePointer<Float>, meanInput: UnsafeMutablePointer<Float>
    private let meanGuideSquared: UnsafeMutablePointer<Float>, meanProduct: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>, products: UnsafeMutablePointer<Float>
    private let intercepts: UnsafeMutablePointer<Float>, columnSums: UnsafeMutablePointer<Float>

    init(width: Int, height: Int, radius: Int, epsilon: Float) {
        self.width = width
        self.height = height
        self.radius = radius
        self.epsilon = epsilon
        let count = width * height
        storage = .allocate(capacity: 9 * count + width)
        storage.initialize(repeating: 0, count: 9 * count + width)
        (a, b, meanGuide, meanInput) = (storage, storage + count, storage + 2 * count, storage + 3 * count)
        (meanGuideSquared, meanProduct, scratch) = (storage + 4 * count, storage + 5 * count, storage + 6 * count)
        (products, intercepts, columnSums) = (storage + 7 * count, storage + 8 * count, storage + 9 * count)
    }

    deinit { storage.deallocate() }

    /// Mean over the (2r+1)² window around each cell, clipped at the grid's edges (divided by the cells inside).
    func boxMean(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
        let width = self.width, height = self.height, radius = self.radius
        let rows = scratch
        // Horizontal pass: inside the row the window sum as 2r+1 shifted loads, eight outputs at a time;
        // the r cells at each end average what the window holds of the row.
        let inverse = 1 / Float(2 * radius + 1)
        let leftEnd = min(radius, width), rightStart = max(width - radius, leftEnd)
        for y in 0..<height {
            let input = source + y * width, output = rows + y * width
            var x = leftEnd
            while x + 8 <= rightStart {
                var sum = UnsafeRawPointer(input + x - radius).loadUnaligned(as: SIMD8<Float>.self)
                for k in 1..<(2 * radius + 1) { sum += UnsafeRawPointer(input + x - radius + k).loadUnaligned(as: SIMD8<Float>.self) }
                UnsafeMutableRawPointer(output + x).storeBytes(of: sum * inverse, as: SIMD8<Float>.self)
                x += 8
            }
            while x < rightStart {
                var sum: Float = 0
                for k in (x - radius)...(x + radius) { sum += input[k] }
                output[x] = sum * inverse
                x += 1
            }
            for range in [0..<leftEnd, rightStart..<width] {
                for x in range {
                    let low = max(x - radius, 0), high = min(x + radius, width - 1)
                    var sum: Float = 0
                    for k in low...high { sum += input[k] }
                    output[x] = sum / Float(high - low + 1)
                }
            }
        }
        // Vertical pass a row at a time, with one running sum per column, so memory is read in order.
        let running = columnSums
        for x in 0..<width { running[x] = 0 }
        for y in 0..<min(radius, height) { let row = rows + y * width; for x in 0..<width { running[x] += row[x] } }
        for y in 0..<height {
            if y + radius < height { let row = rows + (y + radius) * width; for x in 0..<width { running[x] += row[x] } }
            if y - radius - 1 >= 0 { let row = rows + (y - radius - 1) * width; for x in 0..<width { running[x] -= row[x] } }
            let inverse = 1 / Float(min(y + radius, height - 1) - max(y - radius, 0) + 1)
            let output = target + y * width
            for x in 0..<width { output[x] = running[x] * inverse }
        }
    }

    /// Fits `a` and `b` for `input` (width × height) guided by `guide` (same size).
    func coefficients(guide: UnsafePointer<Float>, input: UnsafePointer<Float>) {
        let count = width * height
        boxMean(guide, into: meanGuide)
        boxMean(input, into: meanInput)
        for i in 0..<count { products[i] = guide[i] * guide[i] }
        boxMean(products, into: meanGuideSquared)
        for i in 0..<count { products[i] = guide[i] * input[i] }
        boxMean(products, into: meanProduct)
        for i in 0..<count {
            let variance = meanGuideSquared[i] - meanGuide[i] * meanGuide[i]
            let covariance = meanProduct[i] - meanGuide[i] * meanInput[i]
            let slope = covariance / (variance + epsilon)
            products[i] = slope
            intercepts[i] = meanInput[i] - slope * meanGuide[i]
        }
        // Average the coefficients of every window covering a cell.
        boxMean(products, into: a)
        boxMean(intercepts, into: b)
    }
}
