import VFXCore
import VFXPipeline

/// The stage the chain compiler puts before a filter that does not take the frames' layout: `mask-to-alpha` (RGBA,
/// BGRA) after a decoder's I420, a temporal filter (I420, gray) on an NV12 camera or an RGBA picture. Frames are
/// converted with `VideoFrame.converted(to:)` into pool buffers: YUV keeps its colour description, RGB comes out full
/// range with the input's matrix.
///
/// ```swift
/// let stage = FormatConversion(to: .rgba)
/// let output = try stage.configure(for: FrameFormat(pixelFormat: .i420, width: 1920, height: 1080))   // rgba
/// ```
final class FormatConversion: VideoProcessor {
    let target: PixelFormat
    private var configured: FrameFormat?
    private var output: FrameFormat?
    private var pool: BufferPool?

    init(to target: PixelFormat) {
        self.target = target
    }

    /// The layout a filter that takes `supported` gets frames of `format` in: the same family when it can
    /// (I420 for YUV and gray, RGBA for BGRA), else the filter's first.
    static func target(for format: PixelFormat, supported: [PixelFormat]) -> PixelFormat? {
        let preferred: [PixelFormat] = format.isRGB ? [.rgba, .bgra, .i420, .nv12, .gray8] : [.i420, .nv12, .gray8, .rgba, .bgra]
        return preferred.first { supported.contains($0) }
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        // YUV keeps the input's description (or takes the usual one for the size, from RGB); RGB keeps its matrix.
        let color = target.isYUV
            ? (input.pixelFormat.isYUV ? input.color : .typical(for: target, width: input.width, height: input.height))
            : ColorDescription(matrix: input.color.matrix, range: .full)
        let output = FrameFormat(pixelFormat: target, width: input.width, height: input.height, color: color)
        configured = input
        self.output = output
        pool = BufferPool(format: target, width: input.width, height: input.height, capacity: 2)
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        guard let configured, let output else { throw FilterError.unsupportedFormat(filter: "format", format: "frames before configure") }
        try FrameCheck.require(frame, matches: configured, filter: "format conversion to \(target)")
        return frame.converted(to: target, color: output.color, pool: pool)
    }

    func release() {
        pool = nil
    }
}
