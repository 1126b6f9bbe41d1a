/// Clockwise rotation a player should apply when showing a frame.
public enum Rotation: Int, Sendable, Hashable, CaseIterable {
    case none = 0, clockwise90 = 90, clockwise180 = 180, clockwise270 = 270
}

/// A video image with its timing and color: a value type over a shared, reference-counted `PixelBuffer`.
///
/// Copies of a frame share pixels; the first write through `withMutablePlanes` copies the buffer only when
/// it is shared (copy on write), so a processor that owns its input works in place.
///
/// ```swift
/// var frame = VideoFrame(format: .i420, width: 640, height: 360)
/// frame.withMutablePlanes { planes in planes[0].baseAddress.update(repeating: 16, count: planes[0].bytesPerRow * 360) }
/// ```
public struct VideoFrame: Sendable {
    public private(set) var buffer: PixelBuffer
    /// Presentation time (nil when the source has none).
    public var timestamp: MediaTime?
    /// How long the frame is shown (nil when unknown).
    public var duration: MediaTime?
    public var rotation: Rotation
    public var color: ColorDescription
    /// Results attached by earlier stages or by analysis beside the chain (faces, masks), by type.
    public var attachments = FrameAttachments()

    /// Wraps a buffer. Color defaults to the usual guess for its size (see `ColorDescription.typical`),
    /// full range for RGB and gray.
    public init(buffer: PixelBuffer, timestamp: MediaTime? = nil, duration: MediaTime? = nil, rotation: Rotation = .none,
                color: ColorDescription? = nil) {
        self.buffer = buffer
        self.timestamp = timestamp
        self.duration = duration
        self.rotation = rotation
        self.color = color ?? .typical(for: buffer.format, width: buffer.width, height: buffer.height)
    }

    /// A frame with `buffer`'s pixels and everything else (timing, rotation, color, attachments) from
    /// `metadata`: the one place frame metadata is copied, so a stage that writes into a new buffer keeps it all.
    ///
    /// ```swift
    /// let output = VideoFrame(buffer: pool.makeBuffer(), metadataFrom: input)
    /// ```
    public init(buffer: PixelBuffer, metadataFrom metadata: borrowing VideoFrame) {
        self.buffer = buffer
        timestamp = metadata.timestamp
        duration = metadata.duration
        rotation = metadata.rotation
        color = metadata.color
        attachments = metadata.attachments
    }

    /// A new frame with its own (uninitialized) buffer.
    public init(format: PixelFormat, width: Int, height: Int, timestamp: MediaTime? = nil, color: ColorDescription? = nil) {
        self.init(buffer: PixelBuffer(format: format, width: width, height: height), timestamp: timestamp, color: color)
    }

    public var format: PixelFormat { buffer.format }
    public var width: Int { buffer.width }
    public var height: Int { buffer.height }
    public var planeCount: Int { buffer.planes.count }

    /// Plane `index` for reading. Do not write through it: use `withMutablePlanes`.
    public func plane(_ index: Int) -> Plane { buffer.planes[index] }

    /// All planes for reading.
    public var planes: [Plane] { buffer.planes }

    /// True when no other frame shares this frame's pixels (writing will not copy).
    public mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&buffer) }

    /// Runs `body` with writable planes, first copying the pixels into a buffer from `pool` (or a new
    /// buffer) when they are shared with another frame.
    public mutating func withMutablePlanes<R>(pool: BufferPool? = nil, _ body: ([Plane]) throws -> R) rethrows -> R {
        if !isKnownUniquelyReferenced(&buffer) {
            let copy = pool.map { $0.makeBuffer() } ?? PixelBuffer(format: format, width: width, height: height)
            precondition(copy.format == format && copy.width == width && copy.height == height,
                         "the pool's buffers do not match the frame")
            for (source, target) in zip(buffer.planes, copy.planes) { source.copy(to: target) }
            buffer = copy
        }
        return try body(buffer.planes)
    }

    /// A frame of the same format and timing whose buffer comes from `pool` (contents undefined).
    public func makeSibling(pool: BufferPool? = nil) -> VideoFrame {
        VideoFrame(buffer: pool?.makeBuffer() ?? PixelBuffer(format: format, width: width, height: height), metadataFrom: self)
    }

    /// Replaces the pixels with another buffer of the same format and size (used by processors that write
    /// their result into a pool buffer).
    public mutating func replaceBuffer(_ newBuffer: PixelBuffer) {
        buffer = newBuffer
    }
}

extension Plane {
    /// Copies the visible bytes of every row into `target` (which must be at least as large).
    public func copy(to target: Plane) {
        let rowBytes = width * bytesPerPixel
        for y in 0..<height {
            target.row(y).update(from: row(y), count: rowBytes)
        }
    }
}
