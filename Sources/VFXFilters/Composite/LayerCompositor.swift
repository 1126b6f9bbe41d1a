import VFXCore
import VFXPipeline

/// A straight-alpha RGBA picture placed over part of the frame (a logo, a caption), converted once into each plane's
/// own codes so that a frame costs one blend per covered byte and nothing elsewhere:
/// `out = (layer · a + frame · (255 − a)) / 255`, rounded, sixteen bytes per step in 16-bit lanes.
///
/// YUV frames: luma samples take the layer pixel's Y' and alpha; each chroma sample takes the alpha-weighted mean of
/// its 2×2 block's Cb, Cr and the block's mean alpha (uncovered pixels count as transparent). Gray frames take luma.
/// RGBA/BGRA frames keep their own alpha byte.
///
/// A layer that changes in part (a caption whose last digits change) is re-converted only on the columns that changed
/// (`update(columns:pixel:)`).
///
/// ```swift
/// var layer = LayerCompositor()
/// layer.prepare(image, x: 32, y: 32, format: format)
/// layer.blend(into: planes, slices: slices)
/// ```
struct LayerCompositor {
    /// One plane's part: the covered rectangle in samples, and per byte of it the layer's code and alpha.
    struct PlaneLayer {
        var x = 0, y = 0, width = 0, height = 0, channels = 1
        var codes: [UInt8] = []
        /// Per byte (not per sample): NV12's chroma pairs repeat their alpha, RGBA's alpha byte has 0 (kept).
        var alpha: [UInt8] = []
    }

    private(set) var planes: [PlaneLayer] = []
    /// Where the layer's top-left pixel lands in the frame, its size, its opacity and the frame's format.
    private var originX = 0, originY = 0, layerWidth = 0, layerHeight = 0
    private var opacity: Float = 1
    private var format: FrameFormat?

    /// Converts `image` (straight RGBA) placed with its top-left pixel at frame pixel (x, y), its alpha times
    /// `opacity`, for frames of `format`. Parts outside the frame are dropped.
    mutating func prepare(_ image: FilterImage, x: Int, y: Int, opacity: Float = 1, format: FrameFormat) {
        prepare(width: image.width, height: image.height, x: x, y: y, opacity: opacity, format: format)
        update(columns: 0..<image.width) { image.pixel($0, $1) }
    }

    /// Sizes the planes' parts for a `width`×`height` layer at frame pixel (x, y), all transparent until `update`.
    mutating func prepare(width: Int, height: Int, x originX: Int, y originY: Int, opacity: Float = 1, format: FrameFormat) {
        (self.originX, self.originY, layerWidth, layerHeight) = (originX, originY, width, height)
        self.opacity = opacity
        self.format = format
        let pixelFormat = format.pixelFormat
        planes = (0..<pixelFormat.planeCount).map { index in
            let size = pixelFormat.planeSize(index, width: format.width, height: format.height)
            let step = pixelFormat.isYUV && index > 0 ? 2 : 1
            var plane = PlaneLayer()
            plane.channels = pixelFormat.bytesPerPixel(plane: index)
            let x0 = max(0, originX) / step, y0 = max(0, originY) / step
            let x1 = min(size.width, (min(format.width, originX + width) + step - 1) / step)
            let y1 = min(size.height, (min(format.height, originY + height) + step - 1) / step)
            guard x1 > x0, y1 > y0 else { return plane }
            (plane.x, plane.y, plane.width, plane.height) = (x0, y0, x1 - x0, y1 - y0)
            plane.codes = [UInt8](repeating: 0, count: plane.width * plane.height * plane.channels)
            plane.alpha = [UInt8](repeating: 0, count: plane.width * plane.height * plane.channels)
            return plane
        }
    }

    /// Re-converts the samples that cover the layer's columns `columns` (layer pixels), reading the layer through
    /// `pixel(x, y)` (straight RGBA, 0…1, x and y inside the layer).
    mutating func update(columns: Range<Int>, pixel: (Int, Int) -> SIMD4<Float>) {
        guard let format else { return }
        let pixelFormat = format.pixelFormat
        let coding = YUVCoding(format.color), weights = LumaWeights(format.color.matrix)
        let (originX, originY, layerWidth, layerHeight, opacity) = (self.originX, self.originY, self.layerWidth, self.layerHeight, self.opacity)
        /// Straight colour (0…1) and alpha (0…1) of the layer at frame pixel (fx, fy); alpha 0 outside the layer.
        func layer(_ fx: Int, _ fy: Int) -> (SIMD3<Float>, Float) {
            let lx = fx - originX, ly = fy - originY
            guard lx >= 0, ly >= 0, lx < layerWidth, ly < layerHeight, fx < format.width, fy < format.height else { return (.zero, 0) }
            let p = pixel(lx, ly)
            return (SIMD3(p.x, p.y, p.z), p.w * opacity)
        }
        func byte(_ v: Float) -> UInt8 { UInt8(v.rounded().clamped(0, 255)) }
        for index in planes.indices where planes[index].width > 0 {
            let isChroma = pixelFormat.isYUV && index > 0
            let step = isChroma ? 2 : 1
            var plane = planes[index]
            planes[index] = PlaneLayer()   // unshared while it is written
            let c = plane.channels
            // Frame columns originX + columns, as this plane's samples.
            let x0 = max(plane.x, (originX + columns.lowerBound) / step)
            let x1 = min(plane.x + plane.width, (originX + columns.upperBound + step - 1) / step)
            for sy in plane.y..<(plane.y + plane.height) {
                for sx in x0..<max(x0, x1) {
                    let i = (sy - plane.y) * plane.width + (sx - plane.x)
                    if isChroma {
                        var weighted = SIMD3<Float>.zero, total: Float = 0
                        for dy in 0..<2 {
                            for dx in 0..<2 {
                                let (color, a) = layer(2 * sx + dx, 2 * sy + dy)
                                weighted += color * a
                                total += a
                            }
                        }
                        let codes = coding.codes(total > 0 ? weighted / total : .zero)
                        let alpha = byte(total / 4 * 255)
                        if c == 2 {
                            (plane.codes[2 * i], plane.codes[2 * i + 1]) = (byte(codes.y), byte(codes.z))
                            (plane.alpha[2 * i], plane.alpha[2 * i + 1]) = (alpha, alpha)
                        } else {
                            plane.codes[i] = byte(index == 1 ? codes.y : codes.z)
                            plane.alpha[i] = alpha
                        }
                        continue
                    }
                    let (color, a) = layer(sx, sy)
                    let alpha = byte(a * 255)
                    switch pixelFormat {
                    case .i420, .nv12:
                        plane.codes[i] = byte(coding.codes(color).x)
                        plane.alpha[i] = alpha
                    case .gray8:
                        plane.codes[i] = byte(weights.luma(color) * 255)
                        plane.alpha[i] = alpha
                    case .rgba, .bgra:
                        let rgb = color * 255
                        let (first, last) = pixelFormat == .rgba ? (rgb.x, rgb.z) : (rgb.z, rgb.x)
                        (plane.codes[4 * i], plane.codes[4 * i + 1], plane.codes[4 * i + 2]) = (byte(first), byte(rgb.y), byte(last))
                        (plane.codes[4 * i + 3], plane.alpha[4 * i + 3]) = (255, 0)
                        (plane.alpha[4 * i], plane.alpha[4 * i + 1], plane.alpha[4 * i + 2]) = (alpha, alpha, alpha)
                    }
                }
            }
            planes[index] = plane
        }
    }

    /// Blends the prepared layer into `targets` (the frame's planes, written in place).
    func blend(into targets: [Plane], slices: SliceRunner) {
        for (plane, target) in zip(planes, targets) where plane.width > 0 {
            let bytes = plane.width * plane.channels
            plane.codes.withUnsafeBufferPointer { codes in
                plane.alpha.withUnsafeBufferPointer { alpha in
                    guard let codes = codes.baseAddress, let alpha = alpha.baseAddress else { return }
                    slices.run(rows: plane.height) { rows in
                        for row in rows {
                            blendRow(codes: codes + row * bytes, alpha: alpha + row * bytes,
                                     into: target.row(plane.y + row) + plane.x * plane.channels, count: bytes)
                        }
                    }
                }
            }
        }
    }
}

/// `output[i] = (codes[i] · alpha[i] + output[i] · (255 − alpha[i]) + 127) / 255` for `count` bytes: sixteen at a
/// time in 16-bit lanes (t / 255 = (t + 1 + t >> 8) >> 8 for every t ≤ 65152, so it is exact), a block whose alpha is
/// all 0 skipped.
@inline(__always)
private func blendRow(codes: UnsafePointer<UInt8>, alpha: UnsafePointer<UInt8>, into output: UnsafeMutablePointer<UInt8>, count: Int) {
    var i = 0
    while i + 16 <= count {
        let a8 = UnsafeRawPointer(alpha + i).loadUnaligned(as: SIMD16<UInt8>.self)
        let halves = unsafeBitCast(a8, to: SIMD2<UInt64>.self)
        if halves[0] | halves[1] != 0 {
            let a = widened(a8)
            let code = widened(UnsafeRawPointer(codes + i).loadUnaligned(as: SIMD16<UInt8>.self))
            let frame = widened(UnsafeRawPointer(output + i).loadUnaligned(as: SIMD16<UInt8>.self))
            let t = code &* a &+ frame &* (255 &- a) &+ 127
            let q = (t &+ 1 &+ (t &>> 8)) &>> 8
            var bytes = SIMD16<UInt8>()
            for lane in 0..<16 { bytes[lane] = UInt8(truncatingIfNeeded: q[lane]) }
            (output + i).store(bytes)
        }
        i += 16
    }
    while i < count {
        let a = UInt32(alpha[i])
        output[i] = UInt8(truncatingIfNeeded: (UInt32(codes[i]) * a + UInt32(output[i]) * (255 - a) + 127) / 255)
        i += 1
    }
}
