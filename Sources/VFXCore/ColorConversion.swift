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
public enum ColorConversion {
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

    /// Fixed-point coefficients (×2^16) for one color description: the one arithmetic of every YUV ↔ RGB conversion
    /// (`YUVRows`), public so that kernels working on YUV planes can reproduce the conversion's bytes exactly.
    ///
    /// ```swift
    /// let c = ColorConversion.Coefficients(.bt709)
    /// let l = (Int32(luma) - c.yOffset) * c.yScale + (1 << 15)   // R = clamp((l + (V − 128)·c.crToR) >> 16, 0, 255)
    /// ```
    public struct Coefficients: Sendable {
        public let yOffset: Int32, yScale: Int32            // Y → Y' (full 0…255): (Y - yOffset) * yScale
        public let crToR: Int32, cbToG: Int32, crToG: Int32, cbToB: Int32
        public let rToY: Int32, gToY: Int32, bToY: Int32, yAdd: Int32
        public let rToU: Int32, gToU: Int32, bToU: Int32
        public let rToV: Int32, gToV: Int32, bToV: Int32

        /// The coefficients of `YUVCoding(color)` in 16.16 fixed point on 0…255 values.
        public init(_ color: ColorDescription) {
            let coding = YUVCoding(color)
            let w = coding.weights
            let ys = 255 / coding.lumaScale, cs = 255 / coding.chromaScale
            func fixed(_ v: Float) -> Int32 { Int32((v * 65536).rounded()) }
            yOffset = Int32(coding.lumaOffset)
            yScale = fixed(ys)
            crToR = fixed(coding.redFromPr * cs)
            cbToB = fixed(coding.blueFromPb * cs)
            cbToG = fixed(w.blue * coding.blueFromPb / w.green * cs)
            crToG = fixed(w.red * coding.redFromPr / w.green * cs)
            let yo = coding.lumaScale / 255, co = coding.chromaScale / 255
            rToY = fixed(w.red * yo); gToY = fixed(w.green * yo); bToY = fixed(w.blue * yo)
            yAdd = Int32(coding.lumaOffset) << 16 + (1 << 15)
            // U = (B − Y') / (2(1 − Kb)), V = (R − Y') / (2(1 − Kr)), then scaled by `co`.
            let u = co / coding.blueFromPb, v = co / coding.redFromPr
            rToU = fixed(-w.red * u); gToU = fixed(-w.green * u); bToU = fixed((1 - w.blue) * u)
            rToV = fixed((1 - w.red) * v); gToV = fixed(-w.green * v); bToV = fixed(-w.blue * v)
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
        YUVRows(yuv: source.format, packed: target.format, color: source.color)
            .unpack(source.planes, rows: 0..<source.height, width: source.width, into: target.plane(0))
    }

    static func rgbToYUV(_ source: VideoFrame, into target: VideoFrame) {
        YUVRows(yuv: target.format, packed: source.format, color: target.color)
            .pack(source.plane(0), rows: 0..<source.height, width: source.width, height: source.height, into: target.planes)
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
