import Foundation
import VFXCore
import VFXFilters
import VFXPipeline
import VFXVision

// Face anonymizing: every detected face covered, with a margin, by blocks or a blur. The full-range model
// finds small faces on frames wider than 640 pixels; a face the detector misses on a frame stays covered
// where it was last seen (`FaceSource`, held for half a second at 30 fps).

extension FilterSpec {
    /// `face-pixelate`: every face turned into large blocks.
    ///
    /// ```
    /// vfx apply street.mp4 -o anonymous.mp4 --filter face-pixelate:block=4
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("face-pixelate", ["block": .integer(4)])])
    /// ```
    public static let facePixelate = FilterSpec(
        name: "face-pixelate",
        summary: "Covers every detected face (with a margin) with square blocks of its mean color; block is the number "
            + "of blocks across the covered width, so near and far faces are hidden alike.",
        parameters: [
            ParameterSpec("block", .integer(2...64), default: 4, "blocks across each covered face"),
            ParameterSpec("margin", .number(0...1), default: 0.5, "extra cover on every side, as a fraction of the face box"),
        ],
        example: "face-pixelate:block=4",
        swift: "try FilterDescription(\"face-pixelate\", [\"block\": .integer(4)])"
    ) { arguments, _ in
        .processor(FaceCoverProcessor(cover: .pixelate(blocks: arguments.integer("block")), margin: arguments.float("margin")))
    }

    /// `face-blur`: every face blurred.
    ///
    /// ```
    /// vfx apply street.mp4 -o anonymous.mp4 --filter face-blur:radius=24
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("face-blur", ["radius": .number(24)])])
    /// ```
    public static let faceBlur = FilterSpec(
        name: "face-blur",
        summary: "Blurs every detected face (with a margin) inside a soft-edged ellipse.",
        parameters: [
            ParameterSpec("radius", .number(1...100, unit: "px"), default: 20, "the blur's standard deviation"),
            // 0.8, not pixelate's 0.5: the blur fills the ellipse inside the grown box, and with 0.5 the blurred head's
            // outline was still a face to MediaPipe's short-range model on 5 carphone frames (0.8: on none).
            ParameterSpec("margin", .number(0...1), default: 0.8, "extra cover on every side, as a fraction of the face box"),
        ],
        example: "face-blur:radius=20",
        swift: "try FilterDescription(\"face-blur\", [\"radius\": .number(20)])"
    ) { arguments, _ in
        .processor(FaceCoverProcessor(cover: .blur(sigma: arguments.float("radius")), margin: arguments.float("margin")))
    }
}

/// The stage behind `face-pixelate` and `face-blur`.
final class FaceCoverProcessor: VideoProcessor {
    enum Cover {
        case pixelate(blocks: Int)
        case blur(sigma: Float)
    }

    let cover: Cover
    let margin: Float
    /// Faces held half a second (at 30 fps) after the detector last saw them.
    private let faces = FaceSource(farFaces: true, smoothing: false, hold: 15)
    private var shapes: [PlaneShape] = []
    private var weights: PlaneWeights?
    private var blurs: [NormalizedBlur] = []
    private var sums: [UInt32] = []

    init(cover: Cover, margin: Float) {
        self.cover = cover
        self.margin = margin
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        try faces.prepare(width: input.width, height: input.height)
        shapes = PlaneShape.shapes(of: input.pixelFormat, width: input.width, height: input.height)
        if case .blur = cover {
            weights = PlaneWeights(format: input.pixelFormat, width: input.width, height: input.height)
            blurs = shapes.map { NormalizedBlur(channels: $0.channels) }
        }
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        let width = frame.width, height = frame.height
        let rects = faces.faces(in: frame).compactMap { PixelRect(face: $0.boundingBox, margin: margin, frameWidth: width, frameHeight: height) }
        guard !rects.isEmpty else { return frame }
        let shapes = self.shapes
        switch cover {
        case .pixelate(let blocks):
            frame.withMutablePlanes { planes in
                for rect in rects {
                    // Even block sides, so each chroma block covers exactly its luma block.
                    let side = max(2, (rect.width + blocks - 1) / blocks + 1) & ~1
                    for shape in shapes { pixelate(planes[shape.index], shape: shape, rect: rect, side: side / shape.subsampling) }
                }
            }
        case .blur(let sigma):
            guard let weights else { return frame }
            weights.fill(clear: true) { plane in for rect in rects { Self.drawEllipse(rect, into: plane) } }
            frame.withMutablePlanes { planes in
                for rect in rects {
                    for shape in shapes {
                        let region = rect.on(shape)
                        guard region.width > 0, region.height > 0 else { continue }
                        let plane = planes[shape.index], blur = blurs[shape.index]
                        let s = Float(shape.subsampling)
                        blur.compute(plane: plane, region: region, cell: NormalizedBlur.cellSize(sigma: sigma) / shape.subsampling,
                                     sigma: sigma / s, weights: nil)
                        blur.blend(plane: plane, weights: WeightRows(weights, shape))
                    }
                }
            }
        }
        return frame
    }

    /// Fills each `side`×`side` block of the rectangle (on this plane) with its mean.
    private func pixelate(_ plane: Plane, shape: PlaneShape, rect: PixelRect, side: Int) {
        let region = rect.on(shape), channels = shape.channels
        guard region.width > 0, region.height > 0, side > 0 else { return }
        if sums.count < channels { sums = [UInt32](repeating: 0, count: channels) }
        var by = region.y
        while by < region.y + region.height {
            let y1 = min(by + side, region.y + region.height)
            var bx = region.x
            while bx < region.x + region.width {
                let x1 = min(bx + side, region.x + region.width)
                for c in 0..<channels { sums[c] = 0 }
                for y in by..<y1 {
                    let row = plane.row(y)
                    for x in bx..<x1 { for c in 0..<channels { sums[c] &+= UInt32(row[x * channels + c]) } }
                }
                let count = UInt32((y1 - by) * (x1 - bx))
                for c in 0..<channels { sums[c] = (sums[c] + count / 2) / count }
                for y in by..<y1 {
                    let row = plane.row(y)
                    for x in bx..<x1 { for c in 0..<channels { row[x * channels + c] = UInt8(sums[c]) } }
                }
                bx = x1
            }
            by = y1
        }
    }

    /// Draws the ellipse inscribed in `rect` into a coverage map (255 inside), its edge softened over the
    /// outer eighth of its radius.
    static func drawEllipse(_ rect: PixelRect, into plane: Plane) {
        let cx = Float(rect.x) + Float(rect.width) / 2, cy = Float(rect.y) + Float(rect.height) / 2
        let rx = Float(rect.width) / 2, ry = Float(rect.height) / 2
        let feather: Float = 0.125
        for y in rect.y..<(rect.y + rect.height) {
            let row = plane.row(y)
            let dy = (Float(y) + 0.5 - cy) / ry
            for x in rect.x..<(rect.x + rect.width) {
                let dx = (Float(x) + 0.5 - cx) / rx
                let distance = (dx * dx + dy * dy).squareRoot()
                let coverage = min(max((1 - distance) / feather, 0), 1)
                row[x] = max(row[x], UInt8(coverage * 255 + 0.5))
            }
        }
    }

    func release() { faces.reset() }
}
