import VFXCore

/// Runs a stage on planes the caller owns and leaves the result in those same planes: the shape of a call
/// SDK's raw-data pre-processor, which hands over I420 planes with their strides and expects them edited in
/// place.
///
/// When the planes have VideoFX's kernel layout (`hasKernelLayout`), the stage works on them directly and
/// nothing is copied when it works in place. Otherwise the pixels are copied into a pool buffer first and
/// the result copied back: the only copies made are those the kernels' padding needs. The stage must emit
/// exactly one frame of the same format and size per frame (a filter chain without temporal stages); one
/// that drops the frame leaves the planes as they were.
///
/// ```swift
/// let tint = InPlaceProcessor(try FilterChain(parsing: "sepia").makeProcessor(threads: 1))
/// // in the SDK's callback, with its I420 planes:
/// try tint.process(planes: [y, u, v], format: .i420, width: width, height: height)
/// ```
public final class InPlaceProcessor {
    public let stage: any FrameProcessor
    private var configured: FrameFormat?
    private var pool: BufferPool?

    public init(_ stage: any FrameProcessor) {
        self.stage = stage
    }

    /// Buffers the copies have needed so far (0 when every frame came with the kernel layout).
    public var copyBufferCount: Int { pool?.allocationCount ?? 0 }

    /// Processes the image in `planes` in place. `color` defaults to the usual guess for the size.
    public func process(planes: [Plane], format: PixelFormat, width: Int, height: Int, color: ColorDescription? = nil,
                        timestamp: MediaTime? = nil, hasKernelLayout: Bool = false) throws {
        // The frame holds the only reference to the wrapped planes, so a stage that works in place writes
        // straight into them.
        var frame = VideoFrame(buffer: try PixelBuffer(wrapping: planes, format: format, width: width, height: height,
                                                       hasKernelLayout: hasKernelLayout),
                               timestamp: timestamp, color: color)
        let frameFormat = FrameFormat(pixelFormat: format, width: width, height: height, color: color)
        if configured != frameFormat {
            let output = try stage.configure(for: frameFormat)
            guard output.pixelFormat == format, output.width == width, output.height == height else {
                throw InPlaceError.changesFormat(from: frameFormat, to: output)
            }
            configured = frameFormat
            pool = nil
        }
        if !hasKernelLayout {
            // Copy in: the kernels may read past row ends and after the last row.
            let pool = self.pool ?? BufferPool(format: format, width: width, height: height, capacity: 2)
            self.pool = pool
            let copy = pool.makeBuffer()
            for (source, target) in zip(planes, copy.planes) { source.copy(to: target) }
            frame.replaceBuffer(copy)
        }
        var outputs = 0
        try stage.process(consume frame) { output in
            outputs += 1
            guard outputs == 1 else { throw InPlaceError.severalFrames }
            guard output.format == format, output.width == width, output.height == height else {
                throw InPlaceError.changesFormat(from: frameFormat, to: FrameFormat(of: output))
            }
            // Copy out, unless the stage wrote straight into the caller's planes.
            if output.plane(0).baseAddress != planes[0].baseAddress {
                for (source, target) in zip(output.planes, planes) { source.copy(to: target) }
            }
        }
    }
}

/// A stage that cannot run in place.
public enum InPlaceError: Error, CustomStringConvertible, Equatable {
    case changesFormat(from: FrameFormat, to: FrameFormat)
    case severalFrames

    public var description: String {
        switch self {
        case .changesFormat(let from, let to): "an in-place stage must keep the frame's format and size (\(from) became \(to))"
        case .severalFrames: "an in-place stage must emit one frame per frame (a temporal stage cannot run in place)"
        }
    }
}
