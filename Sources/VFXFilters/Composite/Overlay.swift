import VFXCore
import VFXPipeline

extension FilterSpec {
    /// An image with alpha (a logo, a watermark) over the frame: its top-left corner at `position` (normalized), its
    /// size times `scale`, its alpha times `opacity`; `out = (image · a + frame · (255 − a)) / 255` on every plane
    /// (see `LayerCompositor`). Only the covered samples are touched: the cost follows the image's size, not the
    /// frame's. The image is decoded and scaled once, when the chain is compiled.
    /// - `file` image (PNG with alpha, JPEG), required; `position` (default 0.02x0.02); `scale` 0.01…20 (default 1);
    ///   `opacity` 0…1 (default 1). Formats: all.
    /// - Chain: `overlay:file=logo.png:position=0.85x0.05:scale=0.5` · Swift: `try FilterDescription("overlay", ["file": .text("logo.png")])`
    public static let overlay = FilterSpec(
        name: "overlay", family: .overlay, summary: "An image with alpha (logo, watermark) drawn over the frame.",
        coreImage: "CISourceOverCompositing",
        parameters: [ParameterSpec("file", .file(extensions: ["png", "jpg", "jpeg"]), "the image"),
                     ParameterSpec("position", .point, default: .point(FilterPoint(x: 0.02, y: 0.02)), "top-left corner of the image"),
                     ParameterSpec("scale", .number(0.01...20), default: 1, "size of the image relative to its pixels"),
                     ParameterSpec("opacity", .number(0...1), default: 1, "multiplies the image's alpha")],
        example: "overlay:file=logo.png:position=0.85x0.05:scale=0.5",
        swift: "try FilterDescription(\"overlay\", [\"file\": .text(\"logo.png\")])",
        ffmpeg: { arguments in
            let position = arguments.point("position"), scale = arguments.number("scale")
            let file = arguments.text("file").replacingOccurrences(of: "'", with: "\\\\'")
            return "movie='\(file)',scale=iw*\(ParameterValue.format(scale)):ih*\(ParameterValue.format(scale))[logo];"
                + "[in][logo]overlay=x=W*\(ParameterValue.format(position.x)):y=H*\(ParameterValue.format(position.y))"
        }
    ) { arguments, context in
        let image = try FilterImage(path: arguments.text("file"), filter: "overlay")
        let scale = arguments.number("scale")
        let scaled = image.resized(width: max(1, Int((Double(image.width) * scale).rounded())),
                                   height: max(1, Int((Double(image.height) * scale).rounded())))
        let position = arguments.point("position")
        return .processor(OverlayProcessor(image: scaled, x: Int((position.x * Double(context.format.width)).rounded(.down)),
                                           y: Int((position.y * Double(context.format.height)).rounded(.down)),
                                           opacity: arguments.float("opacity"), slices: context.slices))
    }
}

/// The stage of `overlay`: the layer is converted to the frame's planes at configure time and blended in place.
final class OverlayProcessor: VideoProcessor {
    let image: FilterImage
    let x: Int, y: Int
    let opacity: Float
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var layer = LayerCompositor()
    private var pool: BufferPool?

    init(image: FilterImage, x: Int, y: Int, opacity: Float, slices: SliceRunner) {
        self.image = image
        self.x = x
        self.y = y
        self.opacity = opacity
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        layer.prepare(image, x: x, y: y, opacity: opacity, format: input)
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "overlay")
        var frame = frame
        let (layer, slices) = (self.layer, self.slices)
        frame.withMutablePlanes(pool: pool) { planes in layer.blend(into: planes, slices: slices) }
        return frame
    }

    func release() { pool = nil }
}
