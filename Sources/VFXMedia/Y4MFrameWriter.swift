import Foundation
import VFXCore

/// Writes y4m straight from the frames' planes with `writev` (no copy into a staging buffer). I420 and
/// GRAY8 frames go out as they are; NV12 and RGB frames are converted to I420 first.
final class Y4MFrameWriter: FrameWriting {
    /// -1 once closed (closing twice could close a descriptor reused by another file).
    private var descriptor: Int32
    private let ownsDescriptor: Bool
    private let name: String
    private let frameRate: FrameRate?
    private var header: Y4MHeader?
    private var pool: BufferPool?
    private let converter = ImageConverter()
    private var vectors: [iovec] = []
    private static let frameLine: StaticString = "FRAME\n"

    init(descriptor: Int32, ownsDescriptor: Bool, name: String, frameRate: FrameRate?) {
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
        self.name = name
        self.frameRate = frameRate
    }

    deinit { close() }

    func write(_ frame: VideoFrame) throws {
        let header = try headerFor(frame)
        let output = try convertIfNeeded(frame, to: header.pixelFormat)
        vectors.removeAll(keepingCapacity: true)
        vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: Y4MFrameWriter.frameLine.utf8Start), iov_len: 6))
        for plane in output.planes {
            let rowBytes = plane.width * plane.bytesPerPixel
            if plane.bytesPerRow == rowBytes {
                vectors.append(iovec(iov_base: plane.baseAddress, iov_len: rowBytes * plane.height))
            } else {
                for y in 0..<plane.height { vectors.append(iovec(iov_base: plane.row(y), iov_len: rowBytes)) }
            }
        }
        try writeAll()
        withExtendedLifetime(output) {}
    }

    func finish() throws {
        guard header != nil else { throw MediaError.unsupportedFrame(path: name, reason: "no frames were written") }
        close()
    }

    /// Y4M holds Y'CbCr without alpha.
    var keepsAlpha: Bool { false }

    func close() {
        if ownsDescriptor && descriptor >= 0 { Foundation.close(descriptor) }
        descriptor = -1
    }

    /// The stream header (written with the first frame); later frames must match its size.
    private func headerFor(_ frame: VideoFrame) throws -> Y4MHeader {
        if let header {
            guard frame.width == header.width, frame.height == header.height else {
                throw MediaError.unsupportedFrame(path: name, reason: "a frame is \(frame.width)x\(frame.height), "
                    + "the stream is \(header.width)x\(header.height)")
            }
            return header
        }
        let rate = frameRate ?? frame.duration.flatMap { $0.value > 0 ? FrameRate(Int($0.timescale), Int($0.value)) : nil }
            ?? FrameRate(25)
        let pixelFormat: PixelFormat = frame.format == .gray8 ? .gray8 : .i420
        let range = frame.format.isYUV || frame.format == .gray8 ? frame.color.range : ColorDescription.Range.limited
        let header = Y4MHeader(width: frame.width, height: frame.height, frameRate: rate, pixelFormat: pixelFormat, range: range)
        self.header = header
        var line = Array(header.line.utf8)
        try line.withUnsafeMutableBytes { bytes in
            vectors = [iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)]
            try writeAll()
        }
        return header
    }

    private func convertIfNeeded(_ frame: VideoFrame, to format: PixelFormat) throws -> VideoFrame {
        if frame.format == format { return frame }
        let pool = self.pool ?? BufferPool(format: format, width: frame.width, height: frame.height, capacity: 2)
        self.pool = pool
        let target = pool.makeBuffer()
        let targetColor = frame.format.isYUV ? frame.color : ColorDescription(
            matrix: ColorDescription.typical(width: frame.width, height: frame.height).matrix, range: .limited)
        guard converter.convert(.init(planes: ScalePlanes(frame.planes), format: frame.format.ffmpeg, width: frame.width,
                                      height: frame.height, color: frame.color),
                                into: .init(planes: ScalePlanes(target.planes), format: format.ffmpeg, width: frame.width,
                                            height: frame.height, color: targetColor)) else {
            throw MediaError.unsupportedFrame(path: name, reason: "cannot convert \(frame.format) frames to \(format)")
        }
        var converted = VideoFrame(buffer: target, metadataFrom: frame)
        converted.color = targetColor
        return converted
    }

    /// Writes every byte `vectors` points at, in batches of at most 1024 vectors, resuming after short writes.
    private func writeAll() throws {
        var start = 0
        while start < vectors.count {
            let count = min(vectors.count - start, 1024)
            let written = vectors.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { writev(descriptor, $0 + start, Int32(count)) } ?? 0
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw MediaError.writeFailed(path: name, reason: String(cString: strerror(errno)))
            }
            var remaining = written
            while remaining > 0 && start < vectors.count {
                if remaining >= vectors[start].iov_len {
                    remaining -= vectors[start].iov_len
                    start += 1
                } else {
                    vectors[start].iov_base += remaining
                    vectors[start].iov_len -= remaining
                    remaining = 0
                }
            }
        }
    }
}
