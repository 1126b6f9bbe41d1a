import Foundation
import VFXCore
import VFXFilters
import VFXMedia
import VFXVision

/// One plane of a frame as the effects see it: its size, interleaved channels and subsampling (2 for the
/// chroma planes of I420 and NV12, 1 otherwise). A plane pixel (x, y) sits at frame pixel
/// ((x + 0.5) · subsampling − 0.5, …).
struct PlaneShape {
    let index: Int
    let width: Int
    let height: Int
    let channels: Int
    let subsampling: Int

    static func shapes(of format: PixelFormat, width: Int, height: Int) -> [PlaneShape] {
        (0..<format.planeCount).map { index in
            let size = format.planeSize(index, width: width, height: height)
            return PlaneShape(index: index, width: size.width, height: size.height, channels: format.bytesPerPixel(plane: index),
                              subsampling: format.isYUV && index > 0 ? 2 : 1)
        }
    }
}

/// A coverage map (0…255) at the resolution of each plane of a frame: the full-size map itself for luma,
/// RGB and gray planes, and its 2×2 mean for YUV chroma. Effects keep one and refill it every frame, so
/// nothing is allocated per frame.
///
/// ```swift
/// let weights = PlaneWeights(format: .i420, width: 1280, height: 720)
/// weights.fill(inverting: mask.buffer.planes[0])              // 255 where the background is
/// let chromaRow = weights.row(plane: 1, y: 10)
/// ```
final class PlaneWeights {
    let width: Int, height: Int
    /// Full size, then (YUV only) chroma size.
    private let full: PixelBuffer
    private let chroma: PixelBuffer?

    init(format: PixelFormat, width: Int, height: Int) {
        self.width = width
        self.height = height
        full = PixelBuffer(format: .gray8, width: width, height: height)
        chroma = format.isYUV ? PixelBuffer(format: .gray8, width: (width + 1) / 2, height: (height + 1) / 2) : nil
    }

    /// Fills the map with 255 − `source` (gray, frame size): a person mask becomes the background's weight.
    func fill(inverting source: Plane) {
        let target = full.planes[0]
        for y in 0..<height {
            let input = source.row(y), output = target.row(y)
            for x in 0..<width { output[x] = 255 &- input[x] }
        }
        makeChroma()
    }

    /// Lets `body` write the full-size map (all zero beforehand when `clear`), then makes the chroma map.
    func fill(clear: Bool, _ body: (Plane) -> Void) {
        let target = full.planes[0]
        if clear { for y in 0..<height { target.row(y).update(repeating: 0, count: width) } }
        body(target)
        makeChroma()
    }

    private func makeChroma() {
        guard let chroma else { return }
        let source = full.planes[0], target = chroma.planes[0]
        for y in 0..<target.height {
            let top = source.row(min(2 * y, height - 1)), bottom = source.row(min(2 * y + 1, height - 1))
            let output = target.row(y)
            for x in 0..<target.width {
                let left = 2 * x, right = min(2 * x + 1, width - 1)
                output[x] = UInt8((Int(top[left]) + Int(top[right]) + Int(bottom[left]) + Int(bottom[right]) + 2) >> 2)
            }
        }
    }

    /// Row `y` of the map at the resolution of `plane` (a `PlaneShape`).
    func row(_ shape: PlaneShape, _ y: Int) -> UnsafeMutablePointer<UInt8> {
        shape.subsampling == 2 ? chroma!.planes[0].row(y) : full.planes[0].row(y)
    }
}

/// Files the effects read (stickers, backgrounds): checked by their content, never by their name, and
/// decoded once, before any frame is processed, so a bad file is a one-line error and no output is written.
enum EffectFiles {
    enum Kind: String {
        case png = "PNG"
        case jpeg = "JPEG"
    }

    /// The kind of picture in `path` from its first bytes, or a `FilterError.badFile` naming it.
    static func pictureKind(_ path: String, filter: String, allowed: [Kind]) throws -> Kind {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"
            throw FilterError.badFile(filter: filter, path: path, line: 0, reason: reason)
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 8)) ?? Data())
        let kind: Kind? = if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { .png }
            else if head.starts(with: [0xFF, 0xD8, 0xFF]) { .jpeg } else { nil }
        guard let kind, allowed.contains(kind) else {
            throw FilterError.badFile(filter: filter, path: path, line: 0,
                                      reason: "not a " + allowed.map(\.rawValue).joined(separator: " or ") + " file")
        }
        return kind
    }

    /// The first frame of the picture in `path` as RGBA (alpha kept from a PNG).
    static func loadPicture(_ path: String, filter: String, allowed: [Kind]) throws -> VideoFrame {
        _ = try pictureKind(path, filter: filter, allowed: allowed)
        do {
            let reader = try MediaReader(path: path, threads: 1)
            guard let frame = try reader.nextFrame() else {
                throw FilterError.badFile(filter: filter, path: path, line: 0, reason: "holds no picture")
            }
            return frame.converted(to: .rgba)
        } catch let error as FilterError {
            throw error
        } catch {
            throw FilterError.badFile(filter: filter, path: path, line: 0, reason: "cannot be decoded")
        }
    }
}

/// How a picture is placed on a frame of another size: `fill` covers the frame (cropping the overflow,
/// centred), `fit` shows all of it (black bars), `stretch` changes its aspect ratio to the frame's.
enum Fit: String, CaseIterable {
    case fill, fit, stretch
}

/// Bilinear resampling of an RGBA picture onto an RGBA frame of another size with a `Fit`; pixels the
/// picture does not reach are transparent black. Pixel centres at +0.5 (as FFmpeg's and OpenCV's bilinear
/// scalers): output pixel x samples the picture at u = (x + 0.5 − offsetX) / scale − 0.5, where fill scales by
/// max(W/w, H/h), fit by min(W/w, H/h), stretch by W/w across and H/h down, and offsetX = (W − w·scale) / 2
/// centres it. The taps are made once per pair of sizes, so a video background resamples without allocating.
///
/// ```swift
/// let resampler = Resampler(from: 640, 480, to: 1280, 720, fit: .fill)
/// let placed = resampler.place(picture, into: PixelBuffer(format: .rgba, width: 1280, height: 720))
/// ```
struct Resampler {
    let sourceWidth: Int, sourceHeight: Int, width: Int, height: Int
    /// Per output column: left and right source columns, the weight of the right one, and whether the
    /// column falls on the picture.
    private let columns: [(Int, Int, Float, Bool)]
    /// Per output row: top and bottom source rows and the weight of the bottom one, nil off the picture.
    private let rows: [(Int, Int, Float)?]

    init(from sourceWidth: Int, _ sourceHeight: Int, to width: Int, _ height: Int, fit: Fit) {
        (self.sourceWidth, self.sourceHeight, self.width, self.height) = (sourceWidth, sourceHeight, width, height)
        let sw = Float(sourceWidth), sh = Float(sourceHeight)
        var scaleX = Float(width) / sw, scaleY = Float(height) / sh
        switch fit {
        case .stretch: break
        case .fill: scaleX = max(scaleX, scaleY); scaleY = scaleX
        case .fit: scaleX = min(scaleX, scaleY); scaleY = scaleX
        }
        let offsetX = (Float(width) - sw * scaleX) / 2, offsetY = (Float(height) - sh * scaleY) / 2
        columns = (0..<width).map { x in
            let u = (Float(x) + 0.5 - offsetX) / scaleX - 0.5
            let inside = u >= -0.5 && u <= sw - 0.5
            let clamped = min(max(u, 0), sw - 1)
            let left = Int(clamped)
            return (left, min(left + 1, sourceWidth - 1), clamped - Float(left), inside)
        }
        rows = (0..<height).map { y in
            let v = (Float(y) + 0.5 - offsetY) / scaleY - 0.5
            guard v >= -0.5 && v <= sh - 0.5 else { return nil }
            let clamped = min(max(v, 0), sh - 1)
            let top = Int(clamped)
            return (top, min(top + 1, sourceHeight - 1), clamped - Float(top))
        }
    }

    /// True when `picture` has the size these taps were made for.
    func fits(_ picture: VideoFrame) -> Bool { picture.width == sourceWidth && picture.height == sourceHeight }

    /// `picture` (of the size given at init; converted to RGBA, in a buffer from `pool` when given, if it is
    /// not) placed into `buffer` (RGBA, the target size), returned as a full-range frame on that buffer.
    func place(_ picture: VideoFrame, into buffer: PixelBuffer, pool: BufferPool? = nil) -> VideoFrame {
        precondition(fits(picture) && buffer.format == .rgba && buffer.width == width && buffer.height == height)
        let source = picture.converted(to: .rgba, pool: pool)
        let input = source.plane(0), output = buffer.planes[0]
        let samples = 4 * sourceWidth, whole = samples / 16 * 16
        // Bilinear is separable: each output row mixes its two source rows once (sixteen samples at a time), then
        // each output pixel mixes two neighbours of that mixed row.
        withUnsafeTemporaryAllocation(of: Float.self, capacity: samples) { mixed in
            let mixed = mixed.baseAddress.unsafelyUnwrapped
            columns.withUnsafeBufferPointer { columns in
                for y in 0..<height {
                    let out = output.row(y)
                    guard let (top, bottom, t) = rows[y] else { out.update(repeating: 0, count: 4 * width); continue }
                    let row0 = input.row(top), row1 = input.row(bottom)
                    let weight = SIMD16<Float>(repeating: t)
                    for i in stride(from: 0, to: whole, by: 16) {
                        let a = loadBytes(row0 + i), b = loadBytes(row1 + i)
                        (a + (b - a) * weight).store(to: mixed + i)
                    }
                    for i in whole..<samples { mixed[i] = Float(row0[i]) + (Float(row1[i]) - Float(row0[i])) * t }
                    for x in 0..<width {
                        let (left, right, s, inside) = columns[x]
                        guard inside else { (out + 4 * x).initialize(repeating: 0, count: 4); continue }
                        let a = SIMD4<Float>(mixed[4 * left], mixed[4 * left + 1], mixed[4 * left + 2], mixed[4 * left + 3])
                        let b = SIMD4<Float>(mixed[4 * right], mixed[4 * right + 1], mixed[4 * right + 2], mixed[4 * right + 3])
                        let value = a + (b - a) * s + 0.5   // truncated below: rounded half up
                        for c in 0..<4 { out[4 * x + c] = UInt8(min(max(value[c], 0), 255)) }
                    }
                }
            }
        }
        return VideoFrame(buffer: buffer, color: ColorDescription(matrix: .bt601, range: .full))
    }
}

/// The frame's time in seconds for smoothing: its timestamp, or its index at 30 fps when it has none.
func frameSeconds(_ frame: VideoFrame, index: Int) -> Double {
    frame.timestamp?.seconds ?? Double(index) / 30
}
