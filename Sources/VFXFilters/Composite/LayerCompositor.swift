import VFXCore
import VFXPipeline

/// A straight-alpha RGBA picture placed over part of the frame (a logo, a caption), converted once into each plane's
/// own codes so that a frame costs one blend per covered sample and nothing elsewhere:
/// `out = (layer · a + frame · (255 − a)) / 255`, rounded.
///
/// YUV frames: luma samples take the layer pixel's Y' and alpha; each chroma sample takes the alpha-weighted mean of
/// its 2×2 block's Cb, Cr and the block's mean alpha (uncovered pixels count as transparent). Gray frames take luma.
///
/// ```swift
/// var layer = LayerCompositor()
/// layer.prepare(image, x: 32, y: 32, format: format)
/// layer.blend(into: planes)
/// ```
struct LayerCompositor {
    /// One plane's part: the covered rectangle in samples, and per sample the codes (bytes per pixel) and alpha.
    struct PlaneLayer {
        var x = 0, y = 0, width = 0, height = 0, channels = 1
        var codes: [UInt8] = []
        var alpha: [UInt8] = []
    }

    private(set) var planes: [PlaneLayer] = []

    /// Converts `image` (straight RGBA) placed with its top-left pixel at frame pixel (x, y), its alpha times
    /// `opacity`, for frames of `format`. Parts outside the frame are dropped.
    mutating func prepare(_ image: FilterImage, x originX: Int, y originY: Int, opacity: Float = 1, format: FrameFormat) {
        let pixelFormat = format.pixelFormat
        let coding = YUVCoding(format.color), weights = LumaWeights(format.color.matrix)
        /// Straight colour (0…1) and alpha (0…1) of the layer at frame pixel (fx, fy); alpha 0 outside the image.
        func layer(_ fx: Int, _ fy: Int) -> (SIMD3<Float>, Float) {
            let lx = fx - originX, ly = fy - originY
            guard lx >= 0, ly >= 0, lx < image.width, ly < image.height, fx < format.width, fy < format.height else { return (.zero, 0) }
            let p = image.pixel(lx, ly)
            return (SIMD3(p.x, p.y, p.z), p.w * opacity)
        }
        func byte(_ v: Float) -> UInt8 { UInt8(v.rounded().clamped(0, 255)) }
        planes = (0..<pixelFormat.planeCount).map { index in
            let size = pixelFormat.planeSize(index, width: format.width, height: format.height)
            let isChroma = pixelFormat.isYUV && index > 0
            let step = isChroma ? 2 : 1
            var plane = PlaneLayer()
            plane.channels = pixelFormat.bytesPerPixel(plane: index)
            let x0 = max(0, originX) / step, y0 = max(0, originY) / step
            let x1 = min(size.width, (min(format.width, originX + image.width) + step - 1) / step)
            let y1 = min(size.height, (min(format.height, originY + image.height) + step - 1) / step)
            guard x1 > x0, y1 > y0 else { return plane }
            (plane.x, plane.y, plane.width, plane.height) = (x0, y0, x1 - x0, y1 - y0)
            plane.codes = [UInt8](repeating: 0, count: plane.width * plane.height * plane.channels)
            plane.alpha = [UInt8](repeating: 0, count: plane.width * plane.height)
            for sy in y0..<y1 {
                for sx in x0..<x1 {
                    let i = (sy - y0) * plane.width + (sx - x0)
                    if isChroma {
                        var weighted = SIMD3<Float>.zero, total: Float = 0
                        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                            let (color, a) = layer(2 * sx + dx, 2 * sy + dy)
                            weighted += color * a
                            total += a
                        }
                        let codes = coding.codes(total > 0 ? weighted / total : .zero)
                        plane.alpha[i] = byte(total / 4 * 255)
                        if plane.channels == 2 {
                            plane.codes[2 * i] = byte(codes.y)
                            plane.codes[2 * i + 1] = byte(codes.z)
                        } else {
                            plane.codes[i] = byte(index == 1 ? codes.y : codes.z)
                        }
                        continue
                    }
                    let (color, a) = layer(sx, sy)
                    plane.alpha[i] = byte(a * 255)
                    switch pixelFormat {
                    case .i420, .nv12: plane.codes[i] = byte(coding.codes(color).x)
                    case .gray8: plane.codes[i] = byte(weights.luma(color) * 255)
                    case .rgba, .bgra:
                        let rgb = color * 255
                        let ordered = pixelFormat == .rgba ? [rgb.x, rgb.y, rgb.z] : [rgb.z, rgb.y, rgb.x]
                        for k in 0..<3 { plane.codes[4 * i + k] = byte(ordered[k]) }
                        plane.codes[4 * i + 3] = 255
                    }
                }
            }
            return plane
        }
    }

    /// Blends the prepared layer into `targets` (the frame's planes, written in place). RGBA/BGRA alpha is kept.
    func blend(into targets: [Plane], slices: SliceRunner) {
        for (plane, target) in zip(planes, targets) where plane.width > 0 {
            let colorChannels = plane.channels == 4 ? 3 : plane.channels
            plane.codes.withUnsafeBufferPointer { codes in
                plane.alpha.withUnsafeBufferPointer { alpha in
                    slices.run(rows: plane.height) { rows in
                        for row in rows {
                            let output = target.row(plane.y + row) + plane.x * plane.channels
                            for x in 0..<plane.width {
                                let i = row * plane.width + x
                                let a = UInt32(alpha[i])
                                if a == 0 { continue }
                                for k in 0..<colorChannels {
                                    let o = x * plane.channels + k
                                    let mixed = UInt32(codes[i * plane.channels + k]) * a + UInt32(output[o]) * (255 - a)
                                    output[o] = UInt8(truncatingIfNeeded: (mixed + 127) / 255)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
