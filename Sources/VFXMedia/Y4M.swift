import Foundation
import VFXCore

/// A y4m (YUV4MPEG2) stream header: `YUV4MPEG2 W1280 H720 F25:1 Ip A1:1 C420jpeg XCOLORRANGE=LIMITED`.
///
/// ```swift
/// let header = try Y4MHeader(line: Array("YUV4MPEG2 W176 H144 F30000:1001 C420jpeg".utf8), name: "clip.y4m")
/// header.pixelFormat   // .i420
/// ```
struct Y4MHeader: Equatable {
    var width: Int
    var height: Int
    var frameRate: FrameRate
    var pixelFormat: PixelFormat
    /// From the `XCOLORRANGE` tag FFmpeg writes; nil when absent.
    var range: ColorDescription.Range?

    init(width: Int, height: Int, frameRate: FrameRate, pixelFormat: PixelFormat, range: ColorDescription.Range?) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.pixelFormat = pixelFormat
        self.range = range
    }

    /// The `MediaError.corrupt` reason for input that does not start with `YUV4MPEG2`.
    static let missingSignature = "no YUV4MPEG2 signature"

    /// Parses the header line (without its newline). `name` is the file, for errors.
    init(line: [UInt8], name: String) throws {
        let text = String(decoding: line, as: UTF8.self)
        var tokens = text.split(separator: " ", omittingEmptySubsequences: true)
        guard tokens.first == "YUV4MPEG2" else {
            throw MediaError.corrupt(path: name, reason: Y4MHeader.missingSignature)
        }
        tokens.removeFirst()
        var width: Int?
        var height: Int?
        var rate = FrameRate(25)
        var colorspace = "420jpeg"
        var range: ColorDescription.Range?
        for token in tokens {
            let value = token.dropFirst()
            switch token.first {
            case "W": width = Int(value)
            case "H": height = Int(value)
            case "F":
                let parts = value.split(separator: ":")
                guard parts.count == 2, let numerator = Int(parts[0]), let denominator = Int(parts[1]),
                      numerator > 0, denominator > 0, numerator <= Int(Int32.max), denominator <= Int(Int32.max) else {
                    throw MediaError.corrupt(path: name, reason: "bad y4m frame rate \(token)")
                }
                rate = FrameRate(numerator, denominator)
            case "C": colorspace = String(value)
            case "X":
                if value == "COLORRANGE=FULL" { range = .full }
                if value == "COLORRANGE=LIMITED" { range = .limited }
            default: break   // interlacing (I), aspect ratio (A) and other tags do not change the samples
            }
        }
        guard let width, let height, width > 0, height > 0, width <= 32768, height <= 32768 else {
            throw MediaError.corrupt(path: name, reason: "bad y4m frame size in header \"\(text.prefix(80))\"")
        }
        switch colorspace {
        case "420jpeg", "420paldv", "420mpeg2", "420": pixelFormat = .i420
        case "mono": pixelFormat = .gray8
        default: throw MediaError.unsupportedInput(path: name, reason: "y4m colorspace C\(colorspace)")
        }
        self.width = width
        self.height = height
        self.frameRate = rate
        self.range = range
    }

    /// The header line with its newline, as FFmpeg writes it for the same stream.
    var line: String {
        let colorspace = pixelFormat == .gray8 ? "mono" : "420jpeg XYSCSS=420JPEG"
        let rangeTag = range.map { $0 == .full ? " XCOLORRANGE=FULL" : " XCOLORRANGE=LIMITED" } ?? ""
        return "YUV4MPEG2 W\(width) H\(height) F\(frameRate.numerator):\(frameRate.denominator) Ip A1:1 C\(colorspace)\(rangeTag)\n"
    }

    /// Bytes of pixel data in one frame (all planes, rows unpadded).
    var frameByteCount: Int {
        (0..<pixelFormat.planeCount).reduce(0) { total, plane in
            let size = pixelFormat.planeSize(plane, width: width, height: height)
            return total + size.width * size.height * pixelFormat.bytesPerPixel(plane: plane)
        }
    }
}

/// A file descriptor read with a small look-ahead buffer for header lines; large reads go straight into
/// their target (no extra copy of the pixels).
final class FileInput {
    let descriptor: Int32
    let name: String
    private let ownsDescriptor: Bool
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity = 4096
    private var start = 0
    private var end = 0

    init(descriptor: Int32, name: String, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.ownsDescriptor = ownsDescriptor
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { close(descriptor) }
    }

    /// The bytes up to the next newline (not included); nil at the end of the input before any byte.
    func readLine(maxLength: Int) throws -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if start == end {
                end = try readSome(into: buffer, count: capacity)
                start = 0
                if end == 0 {
                    if line.isEmpty { return nil }
                    throw MediaError.truncated(path: name, reason: "the input ends inside a header line")
                }
            }
            let available = UnsafeBufferPointer(start: buffer + start, count: end - start)
            if let newline = available.firstIndex(of: 10) {
                line.append(contentsOf: available[..<newline])
                start += newline + 1
                return line
            }
            line.append(contentsOf: available)
            start = end
            if line.count > maxLength {
                throw MediaError.corrupt(path: name, reason: "a header line longer than \(maxLength) bytes")
            }
        }
    }

    /// Reads exactly `count` bytes unless the input ends first; returns how many were read.
    func read(into target: UnsafeMutableRawPointer, count: Int) throws -> Int {
        var done = min(count, end - start)
        if done > 0 {
            target.copyMemory(from: buffer + start, byteCount: done)
            start += done
        }
        while done < count {
            let got = try readSome(into: target + done, count: count - done)
            if got == 0 { break }
            done += got
        }
        return done
    }

    private func readSome(into target: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let got = Foundation.read(descriptor, target, count)
            if got >= 0 { return got }
            if errno == EINTR { continue }
            throw MediaError.unreadable(path: name, reason: String(cString: strerror(errno)))
        }
    }
}
