import VFXCore
import VFXPipeline

/// Reads y4m frames from a file or a pipe straight into pool buffers: the header and `FRAME` lines are
/// parsed here, the planes are read with one `read` per frame when the pool's rows are unpadded.
final class Y4MFrameReader: FrameReading {
    let header: Y4MHeader
    let color: ColorDescription
    let expectedFrameCount: Int?
    private let input: FileInput
    private let pool: BufferPool
    /// True when the pool's planes lie back to back without row padding, like the file's.
    private let contiguous: Bool
    private let staging: UnsafeMutableRawPointer?
    private var index = 0

    /// Reads the header from `input`. `fileSize` (nil for a pipe) gives the frame count.
    init(input: FileInput, fileSize: Int?) throws {
        guard let line = try input.readLine(maxLength: 4096) else { throw MediaError.emptyFile(path: input.name) }
        header = try Y4MHeader(line: line, name: input.name)
        self.input = input
        color = ColorDescription(matrix: ColorDescription.typical(width: header.width, height: header.height).matrix,
                                 range: header.range ?? (header.pixelFormat == .gray8 ? .full : .limited))
        pool = BufferPool(format: header.pixelFormat, width: header.width, height: header.height)
        let probe = pool.makeBuffer()
        var contiguous = true
        var next = probe.planes[0].baseAddress
        for plane in probe.planes {
            contiguous = contiguous && plane.baseAddress == next && plane.bytesPerRow == plane.width * plane.bytesPerPixel
            next = plane.baseAddress + plane.bytesPerRow * plane.height
        }
        self.contiguous = contiguous
        staging = contiguous ? nil : UnsafeMutableRawPointer.allocate(byteCount: header.frameByteCount, alignment: 64)
        if let fileSize {
            // FFmpeg and VideoFX write bare "FRAME\n" lines; a file with frame parameters is counted low.
            expectedFrameCount = max(0, fileSize - line.count - 1) / (header.frameByteCount + 6)
        } else {
            expectedFrameCount = nil
        }
    }

    deinit { staging?.deallocate() }

    var bufferAllocations: Int { pool.allocationCount }

    var format: FrameFormat {
        FrameFormat(pixelFormat: header.pixelFormat, width: header.width, height: header.height, color: color,
                    frameRate: header.frameRate)
    }

    func nextFrame() throws -> VideoFrame? {
        guard let line = try input.readLine(maxLength: 4096) else { return nil }
        guard line.starts(with: "FRAME".utf8) else {
            throw MediaError.corrupt(path: input.name, reason: "frame \(index + 1) does not start with FRAME")
        }
        let buffer = pool.makeBuffer()
        let byteCount = header.frameByteCount
        let got: Int
        if contiguous {
            got = try input.read(into: buffer.planes[0].baseAddress, count: byteCount)
        } else if let staging {
            got = try input.read(into: staging, count: byteCount)
            var source = staging.assumingMemoryBound(to: UInt8.self)
            for plane in buffer.planes {
                let rowBytes = plane.width * plane.bytesPerPixel
                for y in 0..<plane.height {
                    plane.row(y).update(from: source, count: rowBytes)
                    source += rowBytes
                }
            }
        } else {
            got = 0
        }
        guard got == byteCount else {
            throw MediaError.truncated(path: input.name, reason: "frame \(index + 1) has \(got) of \(byteCount) bytes")
        }
        let rate = header.frameRate
        let timestamp = MediaTime(value: Int64(index) * Int64(rate.denominator), timescale: Int32(rate.numerator))
        index += 1
        return VideoFrame(buffer: buffer, timestamp: timestamp, duration: rate.frameDuration, color: color)
    }
}
