import Foundation
import VFXCore
import VFXFilters
import VFXPipeline
import VFXVision

extension FilterSpec {
    /// `face-sticker`: a picture that follows each face.
    ///
    /// ```
    /// vfx apply call.mp4 -o logo.mp4 --filter face-sticker:file=logo.png:anchor=forehead:scale=0.4
    /// vfx apply call.mp4 -o cool.mp4 --filter face-sticker:sticker=glasses
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("face-sticker", ["file": .text("logo.png"), "anchor": .text("nose")])])
    /// ```
    public static let faceSticker = FilterSpec(
        name: "face-sticker",
        summary: "Draws a PNG (with its alpha) on every face: its centre on the anchor point plus the offset, its width "
            + "scale × the face width, turned with the face; positions smoothed (One Euro) so it does not jitter. "
            + "sticker= draws one of VideoFX's own (glasses, moustache, badge) instead of a file.",
        parameters: [
            ParameterSpec("file", .file(extensions: ["png"]), default: .text(""), "the sticker, a PNG with alpha",
                          only: .when("sticker", is: "none")),
            ParameterSpec("sticker", .choice(["none"] + StickerArt.allCases.map(\.rawValue)), default: .text("none"),
                          "one of the drawn stickers instead of a file (with its own anchor and scale unless given)"),
            ParameterSpec("anchor", .choice(StickerAnchor.allCases.map(\.rawValue)), default: .text("face"),
                          "the point the sticker's centre sits on"),
            ParameterSpec("scale", .number(0.05...5), default: 1, "the sticker's width in face widths"),
            ParameterSpec("offset-x", .number(-3...3), default: 0, "moves the sticker right, in face widths (turns with the face)"),
            ParameterSpec("offset-y", .number(-3...3), default: 0, "moves the sticker down, in face widths (turns with the face)"),
        ],
        example: "face-sticker:file=logo.png:anchor=forehead:scale=0.4",
        swift: "try FilterDescription(\"face-sticker\", [\"file\": .text(\"logo.png\"), \"anchor\": .text(\"nose\")])"
    ) { arguments, _ in
        let name = "face-sticker"
        let file = arguments.text("file")
        var anchor = StickerAnchor(rawValue: arguments.text("anchor")) ?? .face
        var scale = arguments.number("scale")
        let picture: VideoFrame
        // A file with a drawn sticker is refused when the chain is parsed (the table's condition on `file`).
        if let art = StickerArt(rawValue: arguments.text("sticker")) {
            picture = art.picture()
            // The drawn sticker's own placement, unless the chain gives one (even `anchor=face` or `scale=1`).
            if !arguments.given.contains("anchor") { anchor = StickerAnchor(rawValue: art.placement.anchor) ?? .face }
            if !arguments.given.contains("scale") { scale = art.placement.scale }
        } else {
            guard !file.isEmpty else { throw FilterError.missingParameter(filter: name, key: "file") }
            picture = try EffectFiles.loadPicture(file, filter: name, allowed: [.png])
        }
        return .processor(FaceStickerProcessor(picture: picture, anchor: anchor, scale: Float(scale),
                                               offset: (arguments.float("offset-x"), arguments.float("offset-y"))))
    }
}

/// Where on the face a sticker's centre goes (from the detector's six keypoints).
enum StickerAnchor: String, CaseIterable {
    /// The face box's centre.
    case face
    /// Halfway between the eyes.
    case eyes
    /// Above the eyes by 0.7 of the eyes-to-mouth distance.
    case forehead
    /// The nose tip.
    case nose
    /// The mouth's centre.
    case mouth

    /// The anchor in frame pixels.
    func point(of face: FaceObservation, width: Int, height: Int) -> (x: Float, y: Float) {
        let w = Float(width), h = Float(height)
        func pixels(_ p: NormalizedPoint) -> (x: Float, y: Float) { (p.x * w, p.y * h) }
        let right = pixels(face[.rightEye]), left = pixels(face[.leftEye]), mouth = pixels(face[.mouthCenter])
        let eyes = ((right.x + left.x) / 2, (right.y + left.y) / 2)
        switch self {
        case .face: return pixels(face.boundingBox.center)
        case .eyes: return eyes
        case .forehead: return (eyes.0 + (eyes.0 - mouth.x) * 0.7, eyes.1 + (eyes.1 - mouth.y) * 0.7)
        case .nose: return pixels(face[.noseTip])
        case .mouth: return mouth
        }
    }
}

/// Where a sticker is drawn: its centre and width in frame pixels, and its turn (radians, clockwise on screen).
struct StickerPose {
    var cx: Float, cy: Float, width: Float, angle: Float
}

/// A sticker in a frame's pixel format, ready to be drawn at any pose: per plane, a texel per sticker pixel
/// holding its alpha (0…255) and premultiplied samples as bytes, at the plane's resolution, with a transparent
/// border two texels wide so a bilinear tap never needs a bounds check.
///
/// Drawing walks, row by row, the frame pixels whose sample falls on the sticker, stepping the sticker
/// coordinates in 16.16 fixed point, mixes four texels with 8-bit weights and blends straight into the frame:
/// `out = I·(1 − α) + premultiplied sample`. On one-channel planes (luma, I420 chroma, gray) a texel's two bytes
/// are spread into the halves of a UInt64, so one multiply-add mixes alpha and sample together (each half stays
/// below 255·2¹⁶: no carry between them). Nothing is allocated per frame and the texture is small (2 bytes per
/// texel), so it stays in the cache while a turned sticker is read across many of its rows.
///
/// ```swift
/// let sticker = StickerPlanes(picture: StickerArt.glasses.picture(), format: .i420, color: .bt709)
/// frame.withMutablePlanes { sticker.draw(StickerPose(cx: 640, cy: 300, width: 400, angle: 0.1), on: $0, frameShapes: shapes) }
/// ```
final class StickerPlanes {
    let width: Int, height: Int
    private(set) var shapes: [PlaneShape] = []
    /// Texels of planes with one channel (alpha, sample) and of planes with more (alpha, samples…, unused lanes).
    private var narrow: [[SIMD2<UInt8>]] = []
    /// Per one-channel plane, one byte per 8×8 cell of padded texels: 0 when no bilinear sample whose top-left
    /// tap lies in the cell can see a texel with alpha (the cell and the texels right of and below it are
    /// transparent), so drawing skips those pixels without reading the texture.
    private var occupied: [[UInt8]] = []
    /// Cells per row of `occupied`.
    private var cellsPerRow: [Int] = []
    private var wide: [[SIMD8<UInt8>]] = []
    /// Per row of the plane being drawn: where its first pixel samples the sticker (padded texels, 16.16 fixed
    /// point) and the first and last pixel whose sample falls on the sticker.
    private var spans: [(u: Int, v: Int, low: Int, high: Int)] = []
    /// Texels of transparent border on each side.
    static let border = 2

    init(picture: VideoFrame, format: PixelFormat, color: ColorDescription) {
        let rgba = picture.converted(to: .rgba)
        width = rgba.width
        height = rgba.height
        let converted = rgba.converted(to: format, color: color)
        shapes = PlaneShape.shapes(of: format, width: width, height: height)
        let source = rgba.plane(0), border = Self.border
        for shape in shapes {
            let s = shape.subsampling, paddedWidth = shape.width + 2 * border
            let plane = converted.plane(shape.index)
            var texels = [SIMD8<UInt8>](repeating: .zero, count: paddedWidth * (shape.height + 2 * border))
            for y in 0..<shape.height {
                let row = plane.row(y)
                for x in 0..<shape.width {
                    var sum: Float = 0
                    for dy in 0..<s { for dx in 0..<s {
                        sum += Float(source.row(min(y * s + dy, height - 1))[4 * min(x * s + dx, width - 1) + 3])
                    } }
                    let alpha = sum / Float(s * s * 255)
                    var texel = SIMD8<UInt8>.zero
                    texel[0] = UInt8(alpha * 255 + 0.5)
                    for c in 0..<shape.channels { texel[1 + c] = UInt8(Float(row[x * shape.channels + c]) * alpha + 0.5) }
                    texels[(y + border) * paddedWidth + x + border] = texel
                }
            }
            if shape.channels == 1 {
                narrow.append(texels.map { SIMD2($0[0], $0[1]) })
                let rows = shape.height + 2 * border, cellsAcross = (paddedWidth + 7) / 8
                var cells = [UInt8](repeating: 0, count: cellsAcross * ((rows + 7) / 8))
                for y in 0..<rows {
                    for x in 0..<paddedWidth where texels[y * paddedWidth + x][0] != 0 {
                        // A sample sees this texel when its top-left tap is here or one texel up and/or left.
                        for ty in max(y - 1, 0)...y { for tx in max(x - 1, 0)...x { cells[(ty / 8) * cellsAcross + tx / 8] = 1 } }
                    }
                }
                occupied.append(cells)
                cellsPerRow.append(cellsAcross)
                wide.append([])
            } else {
                narrow.append([])
                occupied.append([])
                cellsPerRow.append(0)
                wide.append(texels)
            }
        }
    }

    /// Draws the sticker at `pose` over `planes` (bilinear, premultiplied: no dark fringe at its edge).
    func draw(_ pose: StickerPose, on planes: [Plane], frameShapes: [PlaneShape]) {
        guard pose.width >= 1 else { return }
        let pixelsPerFrame = Float(width) / pose.width          // sticker pixels per frame pixel
        let c = cos(pose.angle), s = sin(pose.angle)
        let halfW = pose.width / 2, halfH = pose.width * Float(height) / Float(width) / 2
        let extentX = abs(c) * halfW + abs(s) * halfH + 2, extentY = abs(s) * halfW + abs(c) * halfH + 2
        let fixed: Float = 65536
        for (index, shape) in frameShapes.enumerated() {
            let sub = Float(shape.subsampling)
            let own = shapes[index]
            let x0 = max(0, Int(((pose.cx - extentX) + 0.5) / sub - 0.5))
            let x1 = min(shape.width - 1, Int(((pose.cx + extentX) + 0.5) / sub + 0.5))
            let y0 = max(0, Int(((pose.cy - extentY) + 0.5) / sub - 0.5))
            let y1 = min(shape.height - 1, Int(((pose.cy + extentY) + 0.5) / sub + 0.5))
            guard x1 >= x0, y1 >= y0 else { continue }
            // Sticker coordinates (its pixels, centre convention) move by (du, dv) per plane pixel along a row.
            let du = c * pixelsPerFrame, dv = -s * pixelsPerFrame
            let ownWidth = Float(own.width), ownHeight = Float(own.height), border = Float(Self.border)
            spans.removeAll(keepingCapacity: true)
            for y in y0...y1 {
                let fy = (Float(y) + 0.5) * sub - 0.5 - pose.cy
                let fx0 = (Float(x0) + 0.5) * sub - 0.5 - pose.cx
                // Turn back by the face's roll, then into the sticker's pixels, at the row's first pixel.
                let uStart = ((c * fx0 + s * fy) * pixelsPerFrame + Float(width) / 2) / sub - 0.5
                let vStart = ((-s * fx0 + c * fy) * pixelsPerFrame + Float(height) / 2) / sub - 0.5
                // The pixels whose sample falls on the sticker or the first texel of its border:
                // −1 < u < width, −1 < v < height.
                var low = Float(0), high = Float(x1 - x0)
                func keepInside(_ start: Float, _ step: Float, _ limit: Float) {
                    if abs(step) < 1e-6 {
                        if start <= -1 || start >= limit { low = 1; high = 0 }
                    } else {
                        let a = (-1 - start) / step, b = (limit - start) / step
                        low = max(low, min(a, b).rounded(.down) + 1)
                        high = min(high, max(a, b).rounded(.up) - 1)
                    }
                }
                keepInside(uStart, du, ownWidth)
                keepInside(vStart, dv, ownHeight)
                guard low <= high else { spans.append((0, 0, 1, 0)); continue }
                // In padded texels at the span's first pixel (at least one texel inside the border: rounding in
                // the steps below cannot reach past the padding).
                spans.append((Int(((uStart + du * low) + border) * fixed), Int(((vStart + dv * low) + border) * fixed),
                              x0 + Int(low), x0 + Int(high)))
            }
            let step = (Int((du * fixed).rounded()), Int((dv * fixed).rounded()))
            let plane = planes[shape.index]
            if shape.channels == 1 {
                let cellsAcross = cellsPerRow[index]
                narrow[index].withUnsafeBufferPointer { texels in occupied[index].withUnsafeBufferPointer { cells in
                    Self.drawNarrow(UnsafeRawPointer(texels.baseAddress!), cells: cells.baseAddress!, cellsPerRow: cellsAcross,
                                    rowBytes: (own.width + 2 * Self.border) * 2,
                                    spans: spans, firstRow: y0, step: step, plane: plane)
                } }
            } else {
                wide[index].withUnsafeBufferPointer { texels in
                    Self.drawWide(texels.baseAddress!, paddedWidth: own.width + 2 * Self.border, channels: shape.channels,
                                  spans: spans, firstRow: y0, step: step, plane: plane)
                }
            }
        }
    }

    /// One-channel planes: texels are (alpha, premultiplied sample) byte pairs; pixels whose taps fall in a
    /// transparent cell are skipped (by the shapes' areas, about a third of the glasses' box).
    private static func drawNarrow(_ texels: UnsafeRawPointer, cells: UnsafePointer<UInt8>, cellsPerRow: Int, rowBytes: Int,
                                   spans: [(u: Int, v: Int, low: Int, high: Int)], firstRow: Int, step: (Int, Int), plane: Plane) {
        @inline(__always) func spread(_ offset: Int) -> UInt64 {
            let pair = texels.loadUnaligned(fromByteOffset: offset, as: UInt16.self)     // alpha, then sample
            return UInt64(pair & 0xFF) | UInt64(pair >> 8) << 32
        }
        for (k, span) in spans.enumerated() where span.low <= span.high {
            let row = plane.row(firstRow + k)
            var u = span.u, v = span.v
            for x in span.low...span.high {
                defer { u &+= step.0; v &+= step.1 }
                guard cells[(v >> 19) &* cellsPerRow &+ (u >> 19)] != 0 else { continue }
                let wu = UInt64(truncatingIfNeeded: (u >> 8) & 0xFF), wv = UInt64(truncatingIfNeeded: (v >> 8) & 0xFF)
                let i = (v >> 16) &* rowBytes &+ (u >> 16) &* 2
                let top = spread(i) &* (256 &- wu) &+ spread(i &+ 2) &* wu
                let bottom = spread(i &+ rowBytes) &* (256 &- wu) &+ spread(i &+ rowBytes &+ 2) &* wu
                let mixed = top &* (256 &- wv) &+ bottom &* wv           // alpha·255·2¹⁶ | sample·2¹⁶
                let alpha = UInt32(truncatingIfNeeded: mixed)
                guard alpha != 0 else { continue }
                let sample = UInt32(truncatingIfNeeded: mixed >> 32)
                // I·(1 − α) + sample, rounded: in units of 2¹⁶ / 255 of a level.
                let value = (UInt64(row[x]) &* UInt64(255 &* 65536 &- alpha) &+ UInt64(sample) &* 255 &+ 255 &* 32768) / (255 &* 65536)
                row[x] = UInt8(truncatingIfNeeded: min(value, 255))
            }
        }
    }

    /// Planes of several channels (NV12 chroma, RGB): texels are (alpha, premultiplied samples…) in 8 bytes.
    private static func drawWide(_ texels: UnsafePointer<SIMD8<UInt8>>, paddedWidth: Int, channels: Int,
                                 spans: [(u: Int, v: Int, low: Int, high: Int)], firstRow: Int, step: (Int, Int), plane: Plane) {
        for (k, span) in spans.enumerated() where span.low <= span.high {
            let row = plane.row(firstRow + k)
            var u = span.u, v = span.v
            for x in span.low...span.high {
                defer { u &+= step.0; v &+= step.1 }
                let tu = Float(u & 0xFFFF) * (1 / 65536), tv = Float(v & 0xFFFF) * (1 / 65536)
                let i = (v >> 16) * paddedWidth + (u >> 16)
                let t00 = SIMD8<Float>(texels[i]), t01 = SIMD8<Float>(texels[i + 1])
                let t10 = SIMD8<Float>(texels[i + paddedWidth]), t11 = SIMD8<Float>(texels[i + paddedWidth + 1])
                let top = t00 + (t01 - t00) * tu, bottom = t10 + (t11 - t10) * tu
                let sample = top + (bottom - top) * tv
                guard sample[0] > 0 else { continue }
                let keep = 1 - sample[0] * (1 / 255)
                for c in 0..<channels {
                    let out = Float(row[x * channels + c]) * keep + sample[1 + c]
                    row[x * channels + c] = UInt8(min(max(out + 0.5, 0), 255))
                }
            }
        }
    }
}

/// The stage behind `face-sticker`: each face's smoothed keypoints place, size and turn the sticker.
final class FaceStickerProcessor: VideoProcessor {
    let picture: VideoFrame
    let anchor: StickerAnchor
    let scale: Float
    let offset: (x: Float, y: Float)
    /// Short-range detector, One Euro smoothing, faces held 5 frames when missed.
    private let faces = FaceSource(farFaces: false, smoothing: true, hold: 5)
    private var sticker: StickerPlanes?
    private var shapes: [PlaneShape] = []

    init(picture: VideoFrame, anchor: StickerAnchor, scale: Float, offset: (x: Float, y: Float)) {
        self.picture = picture
        self.anchor = anchor
        self.scale = scale
        self.offset = offset
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        try faces.prepare(width: input.width, height: input.height)
        sticker = StickerPlanes(picture: picture, format: input.pixelFormat, color: input.color)
        shapes = PlaneShape.shapes(of: input.pixelFormat, width: input.width, height: input.height)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        guard let sticker else { return frame }
        let found = faces.faces(in: frame)
        guard !found.isEmpty else { return frame }
        let width = frame.width, height = frame.height, shapes = self.shapes
        frame.withMutablePlanes { planes in
            for face in found {
                let faceWidth = face.boundingBox.width * Float(width)
                let point = anchor.point(of: face, width: width, height: height)
                let c = cos(face.roll), s = sin(face.roll)
                let dx = offset.x * faceWidth, dy = offset.y * faceWidth
                sticker.draw(StickerPose(cx: point.x + c * dx - s * dy, cy: point.y + s * dx + c * dy, width: scale * faceWidth,
                                         angle: face.roll), on: planes, frameShapes: shapes)
            }
        }
        return frame
    }

    func release() { faces.reset() }
}
