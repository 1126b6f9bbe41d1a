import Foundation
import VFXCore

/// One bilinear tap pair along an axis: two sample indices (already inside the plane) and their weights.
/// With a zero border a tap outside the plane keeps a clamped index but weight 0, so it adds black.
struct Taps {
    var first: Int32
    var second: Int32
    var firstWeight: Float
    var secondWeight: Float

    /// The taps for sample coordinate `position` (pixel centres at whole numbers) in a line of `count` samples.
    @inline(__always) init(position: Float, count: Int, border: TensorSampler.Border) {
        // Far outside the frame every tap is clamped (or zero) anyway: bound the position before converting.
        let bounded = min(max(position, -2), Float(count) + 1)
        let floor = bounded.rounded(.down)
        let fraction = bounded - floor
        let index = Int32(floor)
        let last = Int32(count - 1)
        first = min(max(index, 0), last)
        second = min(max(index + 1, 0), last)
        firstWeight = 1 - fraction
        secondWeight = fraction
        if border == .zero {
            if index < 0 || index > last { firstWeight = 0 }
            if index + 1 < 0 || index + 1 > last { secondWeight = 0 }
        }
    }

    var coverage: Float { firstWeight + secondWeight }
}

/// MediaPipe's image-to-tensor step done straight from a frame's own planes: the pixels of a (possibly
/// rotated) region are resampled bilinearly into an RGB float tensor (height × width × 3), with no
/// full-frame conversion copy. YUV frames are sampled in YUV (chroma at its own resolution) and converted
/// per tensor pixel with the frame's matrix and range; RGBA, BGRA and gray frames are read directly.
///
/// Pixel centres follow OpenCV's warp used by MediaPipe on the CPU: tensor pixel `i` reads the frame at
/// region coordinate `i / width` (the region's left edge maps to pixel index coordinate `left`).
///
/// ```swift
/// let sampler = TensorSampler(width: 128, height: 128, range: (-1, 1), border: .zero)
/// sampler.sample(frame, region: .frame(width: frame.width, height: frame.height, letterboxedTo: (128, 128)),
///                into: tensorPointer)
/// ```
final class TensorSampler {
    enum Border { case zero, replicate }

    let width: Int
    let height: Int
    let range: (min: Float, max: Float)
    let border: Border
    private var lumaColumns: [Taps]
    private var lumaRows: [Taps]
    private var chromaColumns: [Taps]
    private var chromaRows: [Taps]

    init(width: Int, height: Int, range: (min: Float, max: Float), border: Border) {
        self.width = width
        self.height = height
        self.range = range
        self.border = border
        let none = Taps(position: 0, count: 1, border: .replicate)
        lumaColumns = Array(repeating: none, count: width)
        chromaColumns = lumaColumns
        lumaRows = Array(repeating: none, count: height)
        chromaRows = lumaRows
    }

    /// Fills `tensor` (height × width × 3 floats, RGB, scaled to `range`) from `region` of `frame`. When
    /// `guide` is given (height × width floats) it also receives the frame's guide luma at the same points:
    /// the Y code for YUV frames, the gray value for gray frames, 0.299 R + 0.587 G + 0.114 B for RGB.
    func sample(_ frame: VideoFrame, region: PixelRegion, into tensor: UnsafeMutablePointer<Float>,
                guide: UnsafeMutablePointer<Float>? = nil) {
        let source = SourcePixels(frame)
        let scale = (range.max - range.min) / 255
        // Tensor pixel (i, j) reads frame index coordinates origin + i·stepX + j·stepY.
        let c = cos(region.rotation), s = sin(region.rotation)
        let unitX = region.width / Float(width), unitY = region.height / Float(height)
        let stepX = (c * unitX, s * unitX), stepY = (-s * unitY, c * unitY)
        let corner = region.framePoint(u: 0, v: 0)
        if region.rotation == 0 {
            for i in 0..<width {
                let x = corner.x + Float(i) * stepX.0
                lumaColumns[i] = Taps(position: x, count: source.width, border: border)
                chromaColumns[i] = Taps(position: (x - 0.5) / 2, count: source.chromaWidth, border: border)
            }
            for j in 0..<height {
                let y = corner.y + Float(j) * stepY.1
                lumaRows[j] = Taps(position: y, count: source.height, border: border)
                chromaRows[j] = Taps(position: (y - 0.5) / 2, count: source.chromaHeight, border: border)
            }
            // One loop per layout, so each inner loop is specialized for its planes.
            switch source.layout {
            case .yuv: fill(tensor: tensor, guide: guide, scale: scale) { source.yuv(columns: $0, rows: $1, chromaColumns: $2, chromaRows: $3) }
            case .packed: fill(tensor: tensor, guide: guide, scale: scale) { columns, rows, _, _ in source.packed(columns: columns, rows: rows) }
            case .gray: fill(tensor: tensor, guide: guide, scale: scale) { columns, rows, _, _ in source.gray(columns: columns, rows: rows) }
            }
            return
        }
        let origin = (corner.x, corner.y)
        switch source.layout {
        case .yuv:
            fillRotated(source: source, origin: origin, stepX: stepX, stepY: stepY, tensor: tensor, guide: guide, scale: scale) {
                source.yuv(columns: $0, rows: $1, chromaColumns: $2, chromaRows: $3)
            }
        case .packed:
            fillRotated(source: source, origin: origin, stepX: stepX, stepY: stepY, tensor: tensor, guide: guide, scale: scale) {
                columns, rows, _, _ in source.packed(columns: columns, rows: rows)
            }
        case .gray:
            fillRotated(source: source, origin: origin, stepX: stepX, stepY: stepY, tensor: tensor, guide: guide, scale: scale) {
                columns, rows, _, _ in source.gray(columns: columns, rows: rows)
            }
        }
    }

    /// The loop for a rotated region: taps computed per tensor pixel.
    @inline(__always) private func fillRotated(source: SourcePixels, origin: (Float, Float), stepX: (Float, Float),
                                               stepY: (Float, Float), tensor: UnsafeMutablePointer<Float>,
                                               guide: UnsafeMutablePointer<Float>?, scale: Float,
                                               pixel: (Taps, Taps, Taps, Taps) -> SIMD4<Float>) {
        let needsChroma = source.layout == .yuv
        let none = Taps(position: 0, count: 1, border: .replicate)
        for j in 0..<height {
            var x = origin.0 + Float(j) * stepY.0
            var y = origin.1 + Float(j) * stepY.1
            for i in 0..<width {
                let value = pixel(
                    Taps(position: x, count: source.width, border: border),
                    Taps(position: y, count: source.height, border: border),
                    needsChroma ? Taps(position: (x - 0.5) / 2, count: source.chromaWidth, border: border) : none,
                    needsChroma ? Taps(position: (y - 0.5) / 2, count: source.chromaHeight, border: border) : none)
                store(value, at: j * width + i, tensor: tensor, guide: guide, scale: scale)
                x += stepX.0
                y += stepX.1
            }
        }
    }

    /// The axis-aligned loop over the precomputed taps.
    @inline(__always) private func fill(tensor: UnsafeMutablePointer<Float>, guide: UnsafeMutablePointer<Float>?, scale: Float,
                                        pixel: (Taps, Taps, Taps, Taps) -> SIMD4<Float>) {
        lumaColumns.withUnsafeBufferPointer { lumaColumns in
            chromaColumns.withUnsafeBufferPointer { chromaColumns in
                for j in 0..<height {
                    let row = lumaRows[j], chromaRow = chromaRows[j]
                    for i in 0..<width {
                        store(pixel(lumaColumns[i], row, chromaColumns[i], chromaRow), at: j * width + i, tensor: tensor,
                              guide: guide, scale: scale)
                    }
                }
            }
        }
    }

    @inline(__always) private func store(_ value: SIMD4<Float>, at index: Int, tensor: UnsafeMutablePointer<Float>,
                                         guide: UnsafeMutablePointer<Float>?, scale: Float) {
        tensor[3 * index] = min(max(value.x, 0), 255) * scale + range.min
        tensor[3 * index + 1] = min(max(value.y, 0), 255) * scale + range.min
        tensor[3 * index + 2] = min(max(value.z, 0), 255) * scale + range.min
        guide?[index] = value.w
    }
}

/// Read access to a frame's planes for `TensorSampler`: RGB (0…255) and guide luma at bilinear taps.
struct SourcePixels {
    enum Layout { case yuv, packed, gray }
    let layout: Layout
    let width: Int
    let height: Int
    let chromaWidth: Int
    let chromaHeight: Int
    let luma: UnsafeMutablePointer<UInt8>
    let lumaStride: Int
    /// Packed RGB: the byte offsets of R, G and B in a pixel. YUV: U and V plane bases and their step.
    let first: UnsafeMutablePointer<UInt8>
    let second: UnsafeMutablePointer<UInt8>
    let chromaStride: Int
    let chromaStep: Int
    let redOffset: Int, greenOffset: Int, blueOffset: Int
    /// YUV to RGB: R = k·(Y − y0·c) + rv·(V − 128·c), G = k·(Y − y0·c) − gu·(U − 128·c) − gv·(V − 128·c),
    /// B = k·(Y − y0·c) + bu·(U − 128·c), where c is the taps' coverage (1 inside the frame).
    let k: Float, y0: Float, rv: Float, gu: Float, gv: Float, bu: Float

    init(_ frame: VideoFrame) {
        let y = frame.plane(0)
        width = frame.width
        height = frame.height
        luma = y.baseAddress
        lumaStride = y.bytesPerRow
        let (kr, kb) = frame.color.matrix.weights
        let kg = 1 - kr - kb
        let limited = frame.color.range == .limited
        k = limited ? 255 / 219 : 1
        y0 = limited ? 16 : 0
        let chromaScale: Float = limited ? 255 / 224 : 1
        rv = 2 * (1 - kr) * chromaScale
        bu = 2 * (1 - kb) * chromaScale
        gu = kb * 2 * (1 - kb) / kg * chromaScale
        gv = kr * 2 * (1 - kr) / kg * chromaScale
        switch frame.format {
        case .i420, .nv12:
            layout = .yuv
            let chroma = frame.plane(1)
            chromaWidth = chroma.width
            chromaHeight = chroma.height
            chromaStride = chroma.bytesPerRow
            if frame.format == .i420 {
                first = chroma.baseAddress
                second = frame.plane(2).baseAddress
                chromaStep = 1
            } else {
                first = chroma.baseAddress
                second = chroma.baseAddress + 1
                chromaStep = 2
            }
            (redOffset, greenOffset, blueOffset) = (0, 0, 0)
        case .rgba, .bgra:
            layout = .packed
            (chromaWidth, chromaHeight, chromaStride, chromaStep) = (1, 1, 0, 0)
            (first, second) = (y.baseAddress, y.baseAddress)
            (redOffset, greenOffset, blueOffset) = frame.format == .rgba ? (0, 1, 2) : (2, 1, 0)
        case .gray8:
            layout = .gray
            (chromaWidth, chromaHeight, chromaStride, chromaStep) = (1, 1, 0, 0)
            (first, second) = (y.baseAddress, y.baseAddress)
            (redOffset, greenOffset, blueOffset) = (0, 0, 0)
        }
    }

    @inline(__always) private static func bilinear(_ base: UnsafeMutablePointer<UInt8>, stride: Int, step: Int,
                                                   columns: Taps, rows: Taps) -> Float {
        let top = base + Int(rows.first) * stride, bottom = base + Int(rows.second) * stride
        let a = Int(columns.first) * step, b = Int(columns.second) * step
        let upper = columns.firstWeight * Float(top[a]) + columns.secondWeight * Float(top[b])
        let lower = columns.firstWeight * Float(bottom[a]) + columns.secondWeight * Float(bottom[b])
        return rows.firstWeight * upper + rows.secondWeight * lower
    }

    /// (R, G, B, guide luma) at the given taps, black outside the frame with a zero border.
    @inline(__always) func rgb(columns: Taps, rows: Taps, chromaColumns: Taps, chromaRows: Taps) -> SIMD4<Float> {
        switch layout {
        case .yuv: yuv(columns: columns, rows: rows, chromaColumns: chromaColumns, chromaRows: chromaRows)
        case .packed: packed(columns: columns, rows: rows)
        case .gray: gray(columns: columns, rows: rows)
        }
    }

    @inline(__always) func yuv(columns: Taps, rows: Taps, chromaColumns: Taps, chromaRows: Taps) -> SIMD4<Float> {
        let yValue = Self.bilinear(luma, stride: lumaStride, step: 1, columns: columns, rows: rows)
        let coverage = columns.coverage * rows.coverage
        // The chroma taps' own coverage can differ from luma's at the frame's edge: rescale to luma's.
        let chromaCoverage = chromaColumns.coverage * chromaRows.coverage
        let chromaScale = coverage == chromaCoverage ? 1 : chromaCoverage > 0 ? coverage / chromaCoverage : 0
        let u = Self.bilinear(first, stride: chromaStride, step: chromaStep, columns: chromaColumns, rows: chromaRows)
            * chromaScale - 128 * coverage
        let v = Self.bilinear(second, stride: chromaStride, step: chromaStep, columns: chromaColumns, rows: chromaRows)
            * chromaScale - 128 * coverage
        let l = k * (yValue - y0 * coverage)
        return SIMD4(l + rv * v, l - gu * u - gv * v, l + bu * u, yValue)
    }

    @inline(__always) func packed(columns: Taps, rows: Taps) -> SIMD4<Float> {
        let r = Self.bilinear(luma + redOffset, stride: lumaStride, step: 4, columns: columns, rows: rows)
        let g = Self.bilinear(luma + greenOffset, stride: lumaStride, step: 4, columns: columns, rows: rows)
        let b = Self.bilinear(luma + blueOffset, stride: lumaStride, step: 4, columns: columns, rows: rows)
        return SIMD4(r, g, b, 0.299 * r + 0.587 * g + 0.114 * b)
    }

    @inline(__always) func gray(columns: Taps, rows: Taps) -> SIMD4<Float> {
        let value = Self.bilinear(luma, stride: lumaStride, step: 1, columns: columns, rows: rows)
        return SIMD4(value, value, value, value)
    }
}
