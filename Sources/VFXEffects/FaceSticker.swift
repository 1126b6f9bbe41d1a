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

/// A sticker in a frame's pixel format: per plane, its premultiplied samples and alpha (0…1) as floats at
/// the plane's resolution, ready for bilinear sampling.
final class StickerPlanes {
    let width: Int, height: Int
    private(set) var values: [[Float]] = []
    private(set) var alphas: [[Float]] = []
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
            var value = [Float](repeating: 0, count: shape.width * shape.height * shape.channels)
            for y in 0..<shape.height {
                let row = plane.row(y)
                for x in 0..<shape.width {
                    for c in 0..<shape.channels {
                        value[(y * shape.width + x) * shape.channels + c] = Float(row[x * shape.channels + c]) * alpha[y * shape.width + x]
                    }
                }
            }
            values.append(value)
            alphas.append(alpha)
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
            let sub = Float(shape.subsampling), channels = shape.channels
            let own = shapes[index]
            let x0 = max(0, Int(((cx - extentX) + 0.5) / sub - 0.5)), x1 = min(shape.width - 1, Int(((cx + extentX) + 0.5) / sub + 0.5))
            let y0 = max(0, Int(((cy - extentY) + 0.5) / sub - 0.5)), y1 = min(shape.height - 1, Int(((cy + extentY) + 0.5) / sub + 0.5))
            guard x1 >= x0, y1 >= y0 else { continue }
            let plane = planes[shape.index]
            values[index].withUnsafeBufferPointer { value in
                alphas[index].withUnsafeBufferPointer { alpha in
                    for y in y0...y1 {
                        let row = plane.row(y)
                        let fy = (Float(y) + 0.5) * sub - 0.5 - cy
                        for x in x0...x1 {
                            let fx = (Float(x) + 0.5) * sub - 0.5 - cx
                            // Turn back by the face's roll, then into the sticker's pixels (centre convention).
                            let lx = c * fx + s * fy, ly = -s * fx + c * fy
                            let u = ((lx * pixelsPerFrame + Float(width) / 2) ) / sub - 0.5
                            let v = ((ly * pixelsPerFrame + Float(height) / 2)) / sub - 0.5
                            guard u > -1, v > -1, u < Float(own.width), v < Float(own.height) else { continue }
                            let u0 = Int((u + 1).rounded(.down)) - 1, v0 = Int((v + 1).rounded(.down)) - 1
                            let tu = u - Float(u0), tv = v - Float(v0)
                            // The four neighbours; those outside the sticker are transparent (weight 0).
                            let inX0 = u0 >= 0, inX1 = u0 + 1 < own.width, inY0 = v0 >= 0, inY1 = v0 + 1 < own.height
                            let xa = max(u0, 0), xb = min(u0 + 1, own.width - 1), ya = max(v0, 0), yb = min(v0 + 1, own.height - 1)
                            let i00 = ya * own.width + xa, i01 = ya * own.width + xb, i10 = yb * own.width + xa, i11 = yb * own.width + xb
                            let w00 = inX0 && inY0 ? (1 - tu) * (1 - tv) : 0, w01 = inX1 && inY0 ? tu * (1 - tv) : 0
                            let w10 = inX0 && inY1 ? (1 - tu) * tv : 0, w11 = inX1 && inY1 ? tu * tv : 0
                            let a = alpha[i00] * w00 + alpha[i01] * w01 + alpha[i10] * w10 + alpha[i11] * w11
                            guard a > 0.002 else { continue }
                            for ch in 0..<channels {
                                let premultiplied = value[i00 * channels + ch] * w00 + value[i01 * channels + ch] * w01
                                    + value[i10 * channels + ch] * w10 + value[i11 * channels + ch] * w11
                                let out = Float(row[x * channels + ch]) * (1 - a) + premultiplied
                                row[x * channels + ch] = UInt8(min(max(out + 0.5, 0), 255))
                            }
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
