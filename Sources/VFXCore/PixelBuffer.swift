import Foundation

/// One plane of pixels: a base address, the bytes between rows, and the size in sample groups.
///
/// ```swift
/// let y = frame.plane(0)
/// let firstPixel = y.baseAddress[0]
/// let belowIt = y.baseAddress[y.bytesPerRow]
/// ```
public struct Plane: @unchecked Sendable {
    // Sendable: a Plane is only a view; the frame that hands it out keeps the memory alive, and
    // writes go through `VideoFrame.withMutablePlanes`, which first makes the buffer unique.
    public let baseAddress: UnsafeMutablePointer<UInt8>
    /// Bytes from one row to the next (at least `width * bytesPerPixel`; a multiple of 64 in buffers VideoFX
    /// allocates, anything in planes a caller wraps).
    public let bytesPerRow: Int
    /// Width in sample groups (pixels for packed formats, U/V pairs for NV12's chroma plane).
    public let width: Int
    public let height: Int
    /// Bytes of one sample group.
    public let bytesPerPixel: Int

    public init(baseAddress: UnsafeMutablePointer<UInt8>, bytesPerRow: Int, width: Int, height: Int, bytesPerPixel: Int) {
        self.baseAddress = baseAddress
        self.bytesPerRow = bytesPerRow
        self.width = width
        self.height = height
        self.bytesPerPixel = bytesPerPixel
    }

    /// The first byte of row `y`.
    @inlinable public func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { baseAddress + y * bytesPerRow }
}

/// The memory behind a frame: all planes of one image in one 64-byte-aligned allocation, or planes a caller
/// owns (`init(wrapping:…)`).
///
/// A buffer that came from a `BufferPool` goes back to it when its last reference is released.
public final class PixelBuffer: @unchecked Sendable {
    // Sendable: the memory is written only by a holder of the single reference (VideoFrame checks
    // `isKnownUniquelyReferenced` before handing out writable planes); shared buffers are read-only.
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let planes: [Plane]
    /// True when the planes have the layout VideoFX's vector kernels assume: rows 64-byte aligned with
    /// strides a multiple of 64, and 64 readable bytes after the last row. Buffers VideoFX allocates always
    /// have it; wrapped planes have it only when their owner says so.
    public let hasKernelLayout: Bool
    let storage: UnsafeMutableRawPointer?
    let byteCount: Int
    let pool: BufferPool?
    private let onRelease: (@Sendable () -> Void)?

    /// Allocates a buffer for `format` at `width`×`height` (rows padded to 64 bytes).
    public convenience init(format: PixelFormat, width: Int, height: Int) {
        let layout = PixelBuffer.layout(format: format, width: width, height: height)
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(layout.byteCount, 64), alignment: 64)
        self.init(format: format, width: width, height: height, storage: storage, byteCount: layout.byteCount, pool: nil)
    }

    /// Wraps planes that the caller owns, with their own strides (a capture callback's or a call SDK's
    /// I420 planes): nothing is copied. The caller keeps the memory alive and unchanged by others until the
    /// buffer is released; `onRelease` is then called. `planes` must match `format` and the size
    /// (`PixelBufferError` otherwise). Pass `hasKernelLayout: true` only when rows are 64-byte aligned with
    /// strides a multiple of 64 and 64 bytes past the last row are readable; otherwise the runners copy the
    /// pixels into a pool buffer for kernels that need that layout (`InPlaceProcessor`).
    ///
    /// ```swift
    /// let y = Plane(baseAddress: yPointer, bytesPerRow: yStride, width: 640, height: 360, bytesPerPixel: 1)
    /// let buffer = try PixelBuffer(wrapping: [y, u, v], format: .i420, width: 640, height: 360)
    /// ```
    public init(wrapping planes: [Plane], format: PixelFormat, width: Int, height: Int, hasKernelLayout: Bool = false,
                onRelease: (@Sendable () -> Void)? = nil) throws {
        guard width > 0, height > 0 else { throw PixelBufferError.badSize(width: width, height: height) }
        guard planes.count == format.planeCount else {
            throw PixelBufferError.planeMismatch("\(format) has \(format.planeCount) planes, \(planes.count) were given")
        }
        for (index, plane) in planes.enumerated() {
            let size = format.planeSize(index, width: width, height: height)
            let bytes = format.bytesPerPixel(plane: index)
            guard plane.width == size.width, plane.height == size.height, plane.bytesPerPixel == bytes,
                  plane.bytesPerRow >= size.width * bytes else {
                throw PixelBufferError.planeMismatch("plane \(index) of a \(width)x\(height) \(format) frame must be "
                    + "\(size.width)x\(size.height) with at least \(size.width * bytes) bytes per row")
            }
        }
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.hasKernelLayout = hasKernelLayout
        storage = nil
        byteCount = 0
        pool = nil
        self.onRelease = onRelease
    }

    init(format: PixelFormat, width: Int, height: Int, storage: UnsafeMutableRawPointer, byteCount: Int, pool: BufferPool?) {
        precondition(width > 0 && height > 0, "a pixel buffer needs a positive size")
        self.format = format
        self.width = width
        self.height = height
        self.storage = storage
        self.byteCount = byteCount
        self.pool = pool
        hasKernelLayout = true
        onRelease = nil
        let layout = PixelBuffer.layout(format: format, width: width, height: height)
        let bytes = storage.assumingMemoryBound(to: UInt8.self)
        planes = layout.planes.enumerated().map { index, entry in
            let size = format.planeSize(index, width: width, height: height)
            return Plane(baseAddress: bytes + entry.offset, bytesPerRow: entry.stride, width: size.width, height: size.height,
                         bytesPerPixel: format.bytesPerPixel(plane: index))
        }
    }

    deinit {
        if let storage {
            if let pool { pool.recycle(storage, byteCount: byteCount) } else { storage.deallocate() }
        }
        onRelease?()
    }

    /// Offsets and strides of each plane, and the total size.
    static func layout(format: PixelFormat, width: Int, height: Int) -> (planes: [(offset: Int, stride: Int)], byteCount: Int) {
        var offset = 0
        var planes: [(offset: Int, stride: Int)] = []
        for index in 0..<format.planeCount {
            let size = format.planeSize(index, width: width, height: height)
            let stride = (size.width * format.bytesPerPixel(plane: index) + 63) & ~63
            planes.append((offset, stride))
            offset += stride * size.height
        }
        // Slack after the last row lets vector kernels read a whole 64-byte block past a row's end.
        return (planes, offset + 64)
    }
}

/// Planes that cannot make a buffer.
public enum PixelBufferError: Error, CustomStringConvertible, Equatable {
    case badSize(width: Int, height: Int)
    case planeMismatch(String)

    public var description: String {
        switch self {
        case .badSize(let width, let height): "a frame must be at least 1x1 (got \(width)x\(height))"
        case .planeMismatch(let reason): reason
        }
    }
}

/// Reuses pixel buffers of one format and size, so steady-state processing allocates nothing.
///
/// ```swift
/// let pool = BufferPool(format: .i420, width: 1280, height: 720)
/// let frame = VideoFrame(buffer: pool.makeBuffer())   // recycled when the frame is released
/// ```
public final class BufferPool: @unchecked Sendable {
    // Sendable: the free list is only touched under `lock`.
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    /// Buffers kept for reuse at most; more are freed when released.
    public let capacity: Int
    private let lock = NSLock()
    private var free: [UnsafeMutableRawPointer] = []
    private let byteCount: Int
    private var allocated = 0

    public init(format: PixelFormat, width: Int, height: Int, capacity: Int = 16) {
        self.format = format
        self.width = width
        self.height = height
        self.capacity = capacity
        byteCount = PixelBuffer.layout(format: format, width: width, height: height).byteCount
    }

    deinit {
        for pointer in free { pointer.deallocate() }
    }

    /// A buffer from the free list, or a new one when the list is empty. Contents are undefined.
    public func makeBuffer() -> PixelBuffer {
        lock.lock()
        let reused = free.popLast()
        if reused == nil { allocated += 1 }
        lock.unlock()
        let storage = reused ?? UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        return PixelBuffer(format: format, width: width, height: height, storage: storage, byteCount: byteCount, pool: self)
    }

    /// How many buffers this pool has allocated in all (a steady state stops increasing it).
    public var allocationCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return allocated
    }

    func recycle(_ storage: UnsafeMutableRawPointer, byteCount: Int) {
        lock.lock()
        if free.count < capacity {
            free.append(storage)
            lock.unlock()
        } else {
            lock.unlock()
            storage.deallocate()
        }
    }
}
