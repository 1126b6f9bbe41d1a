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
            ParameterSpec("file", .file(extensions: ["png"]), default: .text(""), "the sticker, a PNG with alpha"),
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
        if let art = StickerArt(rawValue: arguments.text("sticker")) {
            guard file.isEmpty else { throw FilterError.badValue(filter: name, key: "sticker", value: art.rawValue,
                                                                 expected: "none when file is given") }
            picture = art.picture()
            // The drawn sticker's own placement, unless the chain sets one.
            if arguments.values["anchor"] == .text("face") { anchor = StickerAnchor(rawValue: art.placement.anchor) ?? .face }
            if scale == 1 { scale = art.placement.scale }
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

/// A sticker in a frame's pixel format: per plane, for each sticker pixel its alpha (0…1) followed by its
/// premultiplied samples, as floats at the plane's resolution, interleaved so one bilinear tap reads one place.
final class StickerPlanes {
    let width: Int, height: Int
    private(set) var texels: [[Float]] = []
    private(set) var shapes: [PlaneShape] = []

    init(picture: VideoFrame, format: PixelFormat, color: ColorDescription) {
        let rgba = picture.converted(to: .rgba)
        width = rgba.width
        height = rgba.height
        let converted = rgba.converted(to: format, color: color)
        shapes = PlaneShape.shapes(of: format, width: width, height: height)
        let source = rgba.plane(0)
        for shape in shapes {
            let s = shape.subsampling
            var alpha = [Float](repeating: 0, count: shape.width * shape.height)
            for y in 0..<shape.height {
                for x in 0..<shape.width {
                    var sum: Float = 0
                    for dy in 0..<s { for dx in 0..<s {
                        sum += Float(source.row(min(y * s + dy, height - 1))[4 * min(x * s + dx, width - 1) + 3])
                    } }
                    alpha[y * shape.width + x] = sum / Float(s * s * 255)
                }
            }
            let plane = converted.plane(shape.index)
            let stride = shape.channels + 1
            var texel = [Float](repeating: 0, count: shape.width * shape.height * stride)
            for y in 0..<shape.height {
                let row = plane.row(y)
                for x in 0..<shape.width {
                    let i = y * shape.width + x
                    texel[i * stride] = alpha[i]
                    for c in 0..<shape.channels { texel[i * stride + 1 + c] = Float(row[x * shape.channels + c]) * alpha[i] }
                }
            }
            texels.append(texel)
        }
    }

    /// Draws the sticker with its centre at (cx, cy) frame pixels, `stickerWidth` pixels wide, turned by
    /// `angle` radians (clockwise on screen), over `planes`: out = I·(1 − α) + premultiplied sample.
    func draw(on planes: [Plane], frameShapes: [PlaneShape], cx: Float, cy: Float, stickerWidth: Float, angle: Float) {
        guard stickerWidth >= 1 else { return }
        let pixelsPerFrame = Float(width) / stickerWidth          // sticker pixels per frame pixel
        let c = cos(angle), s = sin(angle)
        let halfW = stickerWidth / 2, halfH = stickerWidth * Float(height) / Float(width) / 2
        let extentX = abs(c) * halfW + abs(s) * halfH + 2, extentY = abs(s) * halfW + abs(c) * halfH + 2
        for (index, shape) in frameShapes.enumerated() {
            let sub = Float(shape.subsampling), channels = shape.channels, stride = channels + 1
            let own = shapes[index]
            let ownWidth = Float(own.width), ownHeight = Float(own.height)
            let x0 = max(0, Int(((cx - extentX) + 0.5) / sub - 0.5)), x1 = min(shape.width - 1, Int(((cx + extentX) + 0.5) / sub + 0.5))
            let y0 = max(0, Int(((cy - extentY) + 0.5) / sub - 0.5)), y1 = min(shape.height - 1, Int(((cy + extentY) + 0.5) / sub + 0.5))
            guard x1 >= x0, y1 >= y0 else { continue }
            let plane = planes[shape.index]
            // Sticker coordinates (its pixels, centre convention) move by (du, dv) per plane pixel along a row.
            let du = c * pixelsPerFrame, dv = -s * pixelsPerFrame
            texels[index].withUnsafeBufferPointer { texel in
                let texel = texel.baseAddress!
                for y in y0...y1 {
                    let row = plane.row(y)
                    let fy = (Float(y) + 0.5) * sub - 0.5 - cy
                    let fx0 = (Float(x0) + 0.5) * sub - 0.5 - cx
                    // Turn back by the face's roll, then into the sticker's pixels, at the row's first pixel.
                    let uStart = ((c * fx0 + s * fy) * pixelsPerFrame + Float(width) / 2) / sub - 0.5
                    let vStart = ((-s * fx0 + c * fy) * pixelsPerFrame + Float(height) / 2) / sub - 0.5
                    // The pixels of the row whose sample falls inside the sticker (−1 < u < width, −1 < v < height).
                    var low = Float(x0), high = Float(x1)
                    for (start, step, limit) in [(uStart, du, ownWidth), (vStart, dv, ownHeight)] {
                        if abs(step) < 1e-6 {
                            if start <= -1 || start >= limit { low = 1; high = 0 }
                        } else {
                            let a = Float(x0) + (-1 - start) / step, b = Float(x0) + (limit - start) / step
                            low = max(low, min(a, b).rounded(.down) + 1)
                            high = min(high, max(a, b).rounded(.up) - 1)
                        }
                    }
                    guard low <= high else { continue }
                    for x in Int(low)...Int(high) {
                        let u = uStart + du * Float(x - x0), v = vStart + dv * Float(x - x0)
                        guard u > -1, v > -1, u < ownWidth, v < ownHeight else { continue }
                        let u0 = Int(u + 1) - 1, v0 = Int(v + 1) - 1
                        let tu = u - Float(u0), tv = v - Float(v0)
                        // The four neighbours; those outside the sticker are transparent (weight 0).
                        let inX0 = u0 >= 0, inX1 = u0 + 1 < own.width, inY0 = v0 >= 0, inY1 = v0 + 1 < own.height
                        let xa = max(u0, 0), xb = min(u0 + 1, own.width - 1), ya = max(v0, 0), yb = min(v0 + 1, own.height - 1)
                        let p00 = texel + (ya * own.width + xa) * stride, p01 = texel + (ya * own.width + xb) * stride
                        let p10 = texel + (yb * own.width + xa) * stride, p11 = texel + (yb * own.width + xb) * stride
                        let w00 = inX0 && inY0 ? (1 - tu) * (1 - tv) : 0, w01 = inX1 && inY0 ? tu * (1 - tv) : 0
                        let w10 = inX0 && inY1 ? (1 - tu) * tv : 0, w11 = inX1 && inY1 ? tu * tv : 0
                        let a = p00[0] * w00 + p01[0] * w01 + p10[0] * w10 + p11[0] * w11
                        guard a > 0.002 else { continue }
                        for ch in 1...channels {
                            let premultiplied = p00[ch] * w00 + p01[ch] * w01 + p10[ch] * w10 + p11[ch] * w11
                            let out = Float(row[x * channels + ch - 1]) * (1 - a) + premultiplied
                            row[x * channels + ch - 1] = UInt8(min(max(out + 0.5, 0), 255))
                        }
                    }
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
                sticker.draw(on: planes, frameShapes: shapes, cx: point.x + c * dx - s * dy, cy: point.y + s * dx + c * dy,
                             stickerWidth: scale * faceWidth, angle: face.roll)
            }
        }
        return frame
    }

    func release() { faces.reset() }
}
