import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Keeps the rectangle `width`×`height` whose top-left corner is (`x`, `y`), in pixels.
    /// - `x`, `y`: integer 0…16384, default 0. `width`, `height`: integer 0…16384, default 0 = up to the
    ///   right/bottom edge. The rectangle must lie inside the frame (else a one-line error naming the key).
    /// - Formats: all. I420/NV12: `x` and `y` are rounded down to even so chroma stays aligned.
    ///
    /// Chain: `crop:x=100:y=50:width=640:height=360` · Swift: `FilterDescription.crop(x: 100, y: 50, width: 640, height: 360)`
    public static let crop = FilterSpec(
        name: "crop", summary: "Keeps a width×height rectangle whose top-left corner is (x, y).", coreImage: "CICrop",
        parameters: [ParameterSpec("x", .integer(0...16384), default: 0, "left edge in pixels"),
                     ParameterSpec("y", .integer(0...16384), default: 0, "top edge in pixels"),
                     ParameterSpec("width", .integer(0...16384), default: 0, "width in pixels (0: up to the right edge)"),
                     ParameterSpec("height", .integer(0...16384), default: 0, "height in pixels (0: up to the bottom edge)")],
        example: "crop:x=100:y=50:width=640:height=360", swift: "FilterDescription.crop(x: 100, y: 50, width: 640, height: 360)",
        ffmpeg: { "crop=\($0.integer("width")):\($0.integer("height")):\($0.integer("x")):\($0.integer("y"))" }
    ) { arguments, _ in
        .processor(CropProcessor(x: arguments.integer("x"), y: arguments.integer("y"),
                                 width: arguments.integer("width"), height: arguments.integer("height")))
    }
}

extension FilterDescription {
    public static func crop(x: Int = 0, y: Int = 0, width: Int = 0, height: Int = 0) -> FilterDescription {
        FilterDescription(builtIn: "crop", ["x": .integer(x), "y": .integer(y), "width": .integer(width), "height": .integer(height)])
    }
}

/// The stage of `crop`: copies the rectangle's rows of every plane into a buffer of the new size.
final class CropProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let x: Int, y: Int, width: Int, height: Int
    private var origin = (x: 0, y: 0)
    private var pool: BufferPool?

    init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let even = input.pixelFormat.isYUV
        let left = even ? x & ~1 : x, top = even ? y & ~1 : y
        guard left < input.width else { throw FilterError.badValue(filter: "crop", key: "x", value: String(x), expected: "less than the frame width \(input.width)") }
        guard top < input.height else { throw FilterError.badValue(filter: "crop", key: "y", value: String(y), expected: "less than the frame height \(input.height)") }
        let outWidth = width == 0 ? input.width - left : width
        let outHeight = height == 0 ? input.height - top : height
        guard left + outWidth <= input.width else {
            throw FilterError.badValue(filter: "crop", key: "width", value: String(width), expected: "at most \(input.width - left) (the frame is \(input.width) wide)")
        }
        guard top + outHeight <= input.height else {
            throw FilterError.badValue(filter: "crop", key: "height", value: String(height), expected: "at most \(input.height - top) (the frame is \(input.height) high)")
        }
        origin = (left, top)
        pool = BufferPool(format: input.pixelFormat, width: outWidth, height: outHeight, capacity: 4)
        var output = input
        output.width = outWidth
        output.height = outHeight
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "crop")
        guard let pool else { return frame }
        let source = frame
        let format = source.format
        var output = VideoFrame(buffer: pool.makeBuffer(), metadataFrom: source)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() {
                let plane = source.plane(index)
                let scaleX = format.isYUV && index > 0 ? 2 : 1
                let left = origin.x / scaleX * plane.bytesPerPixel, top = origin.y / scaleX
                let bytes = target.width * target.bytesPerPixel
                for row in 0..<target.height { target.row(row).update(from: plane.row(top + row) + left, count: bytes) }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() { pool = nil }
}
