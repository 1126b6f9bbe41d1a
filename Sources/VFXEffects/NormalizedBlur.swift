import Foundation
import VFXCore

/// A Gaussian blur of one plane region that leaves chosen pixels out (normalized convolution), at reduced
/// resolution, and its blend back into the plane.
///
/// With weights w (0…255 per pixel: how much a pixel belongs to what is blurred), the blurred value is
/// `G(I·w) / G(w)`: a pixel with w = 0 (the person, for a background blur) contributes nothing, so it cannot
/// smear into its surroundings as a halo. Both sums are first taken over square cells of `cell` pixels (a box
/// average: the blur hides the lost resolution), the cell grid is blurred with a Gaussian of
/// σ_cells = √(σ² − (cell² − 1)/12) / cell (the box's own variance taken off), the ratio taken per cell, and
/// the result is brought back bilinearly (cell centres at (j + 0.5)·cell − 0.5). Outside the region counts as
/// weight 0, so edges are renormalized rather than darkened. Then `blend` writes
/// `I + (w/255)·(blurred − I)` in place: where w = 0 the pixel is not touched.
///
/// ```swift
/// let blur = NormalizedBlur(channels: 1)
/// let rows = WeightRows(weights, shape)                   // a PlaneWeights map at the plane's resolution
/// blur.compute(plane: y, region: (0, 0, 1280, 720), cell: 8, sigma: 20, weights: rows)
/// blur.blend(plane: y, weights: rows)
/// ```
///
/// Cost: one pass over the region to sum, a Gaussian on a grid `cell²` times smaller, and one pass to blend.
/// Every buffer (grids, column sums, taps, the widened rows) is kept and reused while the region's size, the
/// cell and σ stay the same, so steady-state processing allocates nothing.
final class NormalizedBlur {
    let channels: Int
    private(set) var region = (x: 0, y: 0, width: 0, height: 0)
    private(set) var cell = 2
    private var gridWidth = 0, gridHeight = 0
    /// Channel sums then the weight sum, each gridWidth × gridHeight (planar): channels + 1 grids.
    private var grids: [Float] = []
    private var scratch: [Float] = []
    private var columnProducts: [UInt32] = []
    private var columnWeights: [UInt32] = []
    /// The blurred grid's rows widened to the region's width (gridHeight × width × channels, interleaved).
    private var widened: [Float] = []
    private var columns: [(Int32, Int32, Float)] = []
    private var columnsKey = (0, 0)
    private var rows: [(Int32, Int32, Float)] = []
    private var rowsKey = (0, 0)
    private var taps: [Float] = []
    private var tapsKey: (sigma: Float, cell: Int) = (0, 0)

    init(channels: Int) { self.channels = channels }

    /// The cell size (even, at least 2) for a blur of standard deviation `sigma` pixels: about σ/2.5 cells
    /// per σ, so the grid Gaussian spans ±7 cells.
    static func cellSize(sigma: Float) -> Int { 2 * max(1, Int((sigma / 5).rounded())) }

    /// Sums the region's pixels and weights into cells and blurs the grid. `weights` holds the plane's weight
    /// map (0…255, indexed by plane x and y); nil weights count every pixel fully.
    func compute(plane: Plane, region: (x: Int, y: Int, width: Int, height: Int), cell: Int, sigma: Float,
                 weights: WeightRows?) {
        precondition(cell >= 1 && region.width > 0 && region.height > 0)
        self.region = region
        self.cell = cell
        let gw = (region.width + cell - 1) / cell, gh = (region.height + cell - 1) / cell
        let count = gw * gh
        if gw != gridWidth || gh != gridHeight || grids.count != (channels + 1) * count {
            (gridWidth, gridHeight) = (gw, gh)
            grids = [Float](repeating: 0, count: (channels + 1) * count)
            scratch = [Float](repeating: 0, count: count)
        }
        if columnProducts.count < region.width * channels {
            columnProducts = [UInt32](repeating: 0, count: region.width * channels)
            columnWeights = [UInt32](repeating: 0, count: region.width)
        }
        let channels = self.channels, width = region.width
        // Sums over each cell's rows per column first (plain loops over a row, which vectorize), then over each
        // cell's columns. UInt32 holds cell² · 255² for cells up to 64 pixels.
        grids.withUnsafeMutableBufferPointer { grids in
            columnProducts.withUnsafeMutableBufferPointer { products in
                columnWeights.withUnsafeMutableBufferPointer { weightSums in
                    let grids = grids.baseAddress!, products = products.baseAddress!, weightSums = weightSums.baseAddress!
                    for gy in 0..<gh {
                        products.update(repeating: 0, count: width * channels)
                        weightSums.update(repeating: 0, count: width)
                        let y0 = region.y + gy * cell, y1 = min(y0 + cell, region.y + region.height)
                        for y in y0..<y1 {
                            let row = UnsafePointer(plane.row(y)) + region.x * channels
                            if let weights {
                                let w = weights(y) + region.x
                                if channels == 1 {
                                    for x in 0..<width {
                                        products[x] &+= UInt32(row[x]) &* UInt32(w[x])
                                        weightSums[x] &+= UInt32(w[x])
                                    }
                                } else {
                                    for x in 0..<width {
                                        let weight = UInt32(w[x])
                                        weightSums[x] &+= weight
                                        for c in 0..<channels { products[x * channels + c] &+= UInt32(row[x * channels + c]) &* weight }
                                    }
                                }
                            } else {
                                for i in 0..<(width * channels) { products[i] &+= UInt32(row[i]) &* 255 }
                                for x in 0..<width { weightSums[x] &+= 255 }
                            }
                        }
                        for gx in 0..<gw {
                            let x0 = gx * cell, x1 = min(x0 + cell, width)
                            var weightSum: UInt32 = 0
                            for x in x0..<x1 { weightSum &+= weightSums[x] }
                            grids[channels * count + gy * gw + gx] = Float(weightSum)
                            for c in 0..<channels {
                                var sum: UInt32 = 0
                                for x in x0..<x1 { sum &+= products[x * channels + c] }
                                grids[c * count + gy * gw + gx] = Float(sum)
                            }
                        }
                    }
                }
            }
        }
        // Gaussian on every grid, zero outside (normalized convolution renormalizes the edges).
        if tapsKey != (sigma, cell) {
            let variance = max(sigma * sigma - Float(cell * cell - 1) / 12, 0.01)
            let sigmaCells = variance.squareRoot() / Float(cell)
            let radius = max(1, Int((3 * sigmaCells).rounded(.up)))
            taps = (-radius...radius).map { exp(-Float($0 * $0) / (2 * sigmaCells * sigmaCells)) }
            tapsKey = (sigma, cell)
        }
        for k in 0...channels { blurGrid(offset: k * count, radius: taps.count / 2) }
        // The ratio per cell, then each grid row widened to the region's width.
        grids.withUnsafeMutableBufferPointer { grids in
            let g = grids.baseAddress!
            let weightGrid = g + channels * count
            for i in 0..<count {
                let inverse = 1 / max(weightGrid[i], 1e-3)
                for c in 0..<channels { g[c * count + i] = min(max(g[c * count + i] * inverse, 0), 255) }
            }
        }
        if columnsKey != (width, cell) {
            columns = Self.taps(outputs: width, cell: cell, cells: gw)
            columnsKey = (width, cell)
        }
        if widened.count != gh * width * channels { widened = [Float](repeating: 0, count: gh * width * channels) }
        grids.withUnsafeBufferPointer { grids in
            widened.withUnsafeMutableBufferPointer { widened in
                columns.withUnsafeBufferPointer { columns in
                    for gy in 0..<gh {
                        let out = widened.baseAddress! + gy * width * channels
                        for c in 0..<channels {
                            let source = grids.baseAddress! + c * count + gy * gw
                            for x in 0..<width {
                                let (a, b, t) = columns[x]
                                let left = source[Int(a)]
                                out[x * channels + c] = left + (source[Int(b)] - left) * t
                            }
                        }
                    }
                }
            }
        }
    }

    /// Writes `I + (w/255)·(blurred − I)` over the region; `weights` as in `compute` (nil: w = 255).
    func blend(plane: Plane, weights: WeightRows?) {
        let channels = self.channels, width = region.width
        if rowsKey != (region.height, cell) {
            rows = Self.taps(outputs: region.height, cell: cell, cells: gridHeight)
            rowsKey = (region.height, cell)
        }
        let rows = self.rows
        widened.withUnsafeBufferPointer { widened in
            for y in 0..<region.height {
                let (a, b, t) = rows[y]
                let top = widened.baseAddress! + Int(a) * width * channels
                let bottom = widened.baseAddress! + Int(b) * width * channels
                let row = plane.row(region.y + y) + region.x * channels
                if let weights, channels == 1 {
                    // Branch-free (w = 0 gives back the pixel exactly), so the loop vectorizes.
                    let w = weights(region.y + y) + region.x
                    for x in 0..<width {
                        let blurred = top[x] + (bottom[x] - top[x]) * t
                        let value = Float(row[x])
                        row[x] = UInt8(value + (blurred - value) * (Float(w[x]) * (1 / 255)) + 0.5)
                    }
                } else if let weights {
                    let w = weights(region.y + y) + region.x
                    for x in 0..<width where w[x] != 0 {
                        let amount = Float(w[x]) * (1 / 255)
                        for c in 0..<channels {
                            let i = x * channels + c
                            let blurred = top[i] + (bottom[i] - top[i]) * t
                            let value = Float(row[i])
                            row[i] = UInt8(value + (blurred - value) * amount + 0.5)
                        }
                    }
                } else {
                    for i in 0..<(width * channels) {
                        row[i] = UInt8(top[i] + (bottom[i] - top[i]) * t + 0.5)
                    }
                }
            }
        }
    }

    /// Separable Gaussian (unnormalized taps; the ratio cancels the scale) on one grid, zero outside.
    private func blurGrid(offset: Int, radius: Int) {
        let gw = gridWidth, gh = gridHeight
        grids.withUnsafeMutableBufferPointer { grids in
            scratch.withUnsafeMutableBufferPointer { scratch in
                taps.withUnsafeBufferPointer { taps in
                    let grid = grids.baseAddress! + offset, temp = scratch.baseAddress!
                    let k = taps.baseAddress! + radius
                    for y in 0..<gh {
                        let row = grid + y * gw, out = temp + y * gw
                        for x in 0..<gw {
                            var sum: Float = 0
                            for d in max(-radius, -x)...min(radius, gw - 1 - x) { sum += k[d] * row[x + d] }
                            out[x] = sum
                        }
                    }
                    for y in 0..<gh {
                        let out = grid + y * gw
                        for x in 0..<gw { out[x] = 0 }
                        for d in max(-radius, -y)...min(radius, gh - 1 - y) {
                            let weight = k[d], row = temp + (y + d) * gw
                            for x in 0..<gw { out[x] += weight * row[x] }
                        }
                    }
                }
            }
        }
    }

    /// Bilinear taps from `outputs` pixels to `cells` cells of `cell` pixels: cell centres at (j + 0.5)·cell − 0.5.
    static func taps(outputs: Int, cell: Int, cells: Int) -> [(Int32, Int32, Float)] {
        (0..<outputs).map { index in
            let position = min(max((Float(index) + 0.5) / Float(cell) - 0.5, 0), Float(cells - 1))
            let first = min(Int(position), cells - 1)
            return (Int32(first), Int32(min(first + 1, cells - 1)), position - Float(first))
        }
    }
}

/// The rows of a `PlaneWeights` map at one plane's resolution, as `NormalizedBlur` reads them (a value: passing
/// it allocates nothing, unlike a closure).
struct WeightRows {
    let weights: PlaneWeights
    let shape: PlaneShape

    init(_ weights: PlaneWeights, _ shape: PlaneShape) {
        self.weights = weights
        self.shape = shape
    }

    /// Row `y` of the map, indexed by plane x.
    func callAsFunction(_ y: Int) -> UnsafePointer<UInt8> { UnsafePointer(weights.row(shape, y)) }
}
