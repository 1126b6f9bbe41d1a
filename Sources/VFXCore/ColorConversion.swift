/// Conversions between VideoFX's pixel formats, with the frame's color description (matrix and range).
///
/// YUV → RGB shares each chroma sample across its 2×2 block; RGB → YUV averages the block's chroma.
/// Accuracy against FFmpeg's swscale is measured in `ColorConversionTests` (PSNR per plane).
///
/// ```swift
/// let rgba = frame.converted(to: .rgba)                    // uses frame.color
/// let back = rgba.converted(to: .i420, color: .bt709)      // writes BT.709 limited-range YUV
/// ```
extension VideoFrame {
    /// This frame in `format`. YUV targets use `color` (default: the frame's own description when it is
    /// YUV, else the usual guess for the size); RGB and gray targets are full range. Returns `self` (no copy)
    /// when nothing changes.
    public func converted(to format: PixelFormat, color: ColorDescription? = nil, pool: BufferPool? = nil) -> VideoFrame {
        let targetColor = color ?? (format.isYUV && self.format.isYUV ? self.color
            : .typical(for: format, width: width, height: height))
        if format == self.format && (targetColor == self.color || !format.isYUV) { return self }
        let buffer = pool?.makeBuffer() ?? PixelBuffer(format: format, width: width, height: height)
        precondition(buffer.format == format && buffer.width == width && buffer.height == height,
                     "the pool's buffers do not match the conversion target")
        var output = VideoFrame(buffer: buffer, metadataFrom: self)
        output.color = format.isYUV ? targetColor : ColorDescription(matrix: targetColor.matrix, range: .full)
        ColorConversion.convert(self, into: &output)
        return output
    }
}

/// The conversion kernels (one per pair of format families).
enum ColorConversion {
    static func convert(_ source: VideoFrame, into target: inout VideoFrame) {
        let s = source.format, t = target.format
        switch (s.isYUV, t.isYUV) {
        case (true, true) where source.color == target.color:
            copyYUV(source, into: target)
        case (true, _), (_, true):
            // Between YUV and anything else, or between two YUV color descriptions: through RGBA rows.
            if s.isYUV && t.isRGB {
                yuvToRGB(source, into: target)
            } else if s.isRGB && t.isYUV {
                rgbToYUV(source, into: target)
            } else {
                let rgba = source.converted(to: .rgba)
                convert(rgba, into: &target)
            }
        case (false, false):
            packedOrGray(source, into: target)
        }
    }

    /// Fixed-point coefficients (×2^16) for one color description.
    struct Coefficients {
        let yOffset: Int32, yScale: Int32            // Y → Y' (full 0…255): (Y - yOffset) * yScale
        let crToR: Int32, cbToG: Int32, crToG: Int32, cbToB: Int32
        let rToY: Int32, gToY: Int32, bToY: Int32, yAdd: Int32
        let rToU: Int32, gToU: Int32, bToU: Int32
        let rToV: Int32, gToV: Int32, bToV: Int32

        init(_ color: ColorDescription) {
            let (kr, kb) = color.matrix.weights
            let kg = 1 - kr - kb
            let limited = color.range == .limited
            let ys: Float = limited ? 255.0 / 219.0 : 1
            let cs: Float = limited ? 255.0 / 224.0 : 1
            func fixed(_ v: Float) -> Int32 { Int32((v * 65536).rounded()) }
            yOffset = limited ? 16 : 0
            yScale = fixed(ys)
            crToR = fixed(2 * (1 - kr) * cs)
            cbToB = fixed(2 * (1 - kb) * cs)
            cbToG = fixed(2 * kb * (1 - kb) / kg * cs)
            crToG = fixed(2 * kr * (1 - kr) / kg * cs)
            let yo: Float = limited ? 219.0 / 255.0 : 1
            let co: Float = limited ? 224.0 / 255.0 : 1
            rToY = fixed(kr * yo); gToY = fixed(kg * yo); bToY = fixed(kb * yo)
            yAdd = (limited ? 16 : 0) << 16 + (1 << 15)
            // U = (B - Y') / (2(1 - Kb)), V = (R - Y') / (2(1 - Kr)), then scaled by `co`.
            let u = co / (2 * (1 - kb)), v = co / (2 * (1 - kr))
            rToU = fixed(-kr * u); gToU = fixed(-kg * u); bToU = fixed((1 - kb) * u)
            rToV = fixed((1 - kr) * v); gToV = fixed(-kg * v); bToV = fixed(-kb * v)
        }
    }

    @inline(__always) static func clamp8(_ v: Int32) -> UInt8 { UInt8(truncatingIfNeeded: min(max(v, 0), 255)) }

    /// Byte offsets of R, G, B, A in a packed pixel.
    static func channelOrder(_ format: PixelFormat) -> (r: Int, g: Int, b: Int) {
        format == .bgra ? (2, 1, 0) : (0, 1, 2)
    }

    /// Chroma pointers and step for a YUV frame: (U row, V row, bytes between samples).
    @inline(__always)
    static func chromaRows(_ frame: VideoFrame, row: Int) -> (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, Int) {
        if frame.format == .nv12 {
            let p = frame.plane(1).row(row)
            return (p, p + 1, 2)
        }
        return (frame.plane(1).row(row), frame.plane(2).row(row), 1)
    }

    static func yuvToRGB(_ source: VideoFrame, into target: VideoFrame) {
        let c = Coefficients(source.color)
        let order = channelOrder(target.format)
        let luma = source.plane(0), out = target.plane(0)
        for y in 0..<source.height {
            let yRow = luma.row(y), oRow = out.row(y)
            let (uRow, vRow, step) = chromaRows(source, row: y / 2)
            for x in 0..<source.width {
                let yy = (Int32(yRow[x]) - c.yOffset) * c.yScale + (1 << 15)
                let cb = Int32(uRow[(x / 2) * step]) - 128, cr = Int32(vRow[(x / 2) * step]) - 128
                let o = oRow + 4 * x
                o[order.r] = clamp8((yy + cr * c.crToR) >> 16)
                o[order.g] = clamp8((yy - cb * c.cbToG - cr * c.crToG) >> 16)
                o[order.b] = clamp8((yy + cb * c.cbToB) >> 16)
                o[3] = 255
            }
        }
    }

    static func rgbToYUV(_ source: VideoFrame, into target: VideoFrame) {
        let c = Coefficients(target.color)
        let order = channelOrder(source.format)
        let input = source.plane(0), luma = target.plane(0)
        for y in 0..<source.height {
            let iRow = input.row(y), yRow = luma.row(y)
            for x in 0..<source.width {
                let p = iRow + 4 * x
                let r = Int32(p[order.r]), g = Int32(p[order.g]), b = Int32(p[order.b])
                yRow[x] = clamp8((r * c.rToY + g * c.gToY + b * c.bToY + c.yAdd) >> 16)
            }
        }
        let chromaWidth = (source.width + 1) / 2, chromaHeight = (source.height + 1) / 2
        for cy in 0..<chromaHeight {
            let row0 = input.row(2 * cy), row1 = input.row(min(2 * cy + 1, source.height - 1))
            let (uRow, vRow, step) = chromaRows(target, row: cy)
            for cx in 0..<chromaWidth {
                let x0 = 4 * (2 * cx), x1 = 4 * min(2 * cx + 1, source.width - 1)
                let r = Int32(row0[x0 + order.r]) + Int32(row0[x1 + order.r]) + Int32(row1[x0 + order.r]) + Int32(row1[x1 + order.r])
                let g = Int32(row0[x0 + order.g]) + Int32(row0[x1 + order.g]) + Int32(row1[x0 + order.g]) + Int32(row1[x1 + order.g])
                let b = Int32(row0[x0 + order.b]) + Int32(row0[x1 + order.b]) + Int32(row1[x0 + order.b]) + Int32(row1[x1 + order.b])
                // Sums of four samples: divide by 4 inside the shift (>> 18), rounding at bit 17.
                uRow[cx * step] = clamp8((r * c.rToU + g * c.gToU + b * c.bToU + (128 << 18) + (1 << 17)) >> 18)
                vRow[cx * step] = clamp8((r * c.rToV + g * c.gToV + b * c.bToV + (128 << 18) + (1 << 17)) >> 18)
            }
        }
    }

    /// I420 ↔ NV12 (same color description): luma copied, chroma interleaved or split.
    static func copyYUV(_ source: VideoFrame, into target: VideoFrame) {
        source.plane(0).copy(to: target.plane(0))
        let chromaWidth = (source.width + 1) / 2, chromaHeight = (source.height + 1) / 2
        for cy in 0..<chromaHeight {
            let (su, sv, sStep) = chromaRows(source, row: cy)
            let (tu, tv, tStep) = chromaRows(target, row: cy)
            for cx in 0..<chromaWidth {
                tu[cx * tStep] = su[cx * sStep]
                tv[cx * tStep] = sv[cx * sStep]
            }
        }
    }

    /// Between RGBA, BGRA and GRAY8 (all full range). Gray from RGB uses the frame's matrix weights.
    static func packedOrGray(_ source: VideoFrame, into target: VideoFrame) {
        let input = source.plane(0), out = target.plane(0)
        let (kr, kb) = source.color.matrix.weights
        let wr = Int32((kr * 65536).rounded()), wb = Int32((kb * 65536).rounded()), wg = 65536 - wr - wb
        let so = channelOrder(source.format), to = channelOrder(target.format)
        for y in 0..<source.height {
            let i = input.row(y), o = out.row(y)
            for x in 0..<source.width {
                switch (source.format, target.format) {
                case (.gray8, _):
                    let v = i[x]
                    o[4 * x] = v; o[4 * x + 1] = v; o[4 * x + 2] = v; o[4 * x + 3] = 255
                case (_, .gray8):
                    let p = i + 4 * x
                    o[x] = clamp8((Int32(p[so.r]) * wr + Int32(p[so.g]) * wg + Int32(p[so.b]) * wb + (1 << 15)) >> 16)
                default:
                    let p = i + 4 * x, q = o + 4 * x
                    q[to.r] = p[so.r]; q[to.g] = p[so.g]; q[to.b] = p[so.b]; q[3] = p[3]
                }
            }
        }
    }
}
