import CFreeType
import Foundation
import VFXCore
import VFXPipeline

extension FilterSpec {
    /// A caption, a running timecode or a clock drawn with a real font (FreeType), with an outline and a drop shadow.
    /// The text may hold `{timecode}` (HH:MM:SS:FF from the frame's timestamp and the stream's frame rate, 25 fps when
    /// unknown), `{time}` (HH:MM:SS.mmm), `{frame}` (frames seen by this stage, from 0) and `{clock}` (local wall
    /// time HH:MM:SS). Glyphs and their dilated outlines are rendered once per character and size; a frame costs laying
    /// out the string, redrawing the columns of the glyphs that changed since the previous frame, and one blend over
    /// the text's box (`LayerCompositor`).
    ///
    /// Layout: the pen starts at `position` (the top-left of the box); the baseline is one ascender below it; glyphs
    /// advance by FreeType's advance widths plus kerning. The outline is the fill's coverage dilated by `outline`
    /// pixels (a disc); the shadow is the outline (or the fill) moved right and down by `shadow` pixels. Layers are
    /// composited shadow, outline, fill (straight alpha "over").
    /// - `text` (default "{timecode}"), `font` (default DejaVu Sans), `size` 4…512 px (default 48), `color` (white),
    ///   `position` (default 0.04x0.04), `outline` 0…16 px (default 2), `outline-color` (black; only with an outline),
    ///   `shadow` 0…32 px, rounded to whole pixels (default 0: none), `shadow-color` (black; only with a shadow of at
    ///   least 0.5 px), `opacity` 0…1. A colour given for an outline or shadow that is not drawn is refused. Formats: all.
    /// - Chain: `text:text='Live {timecode}':size=36:position=0.05x0.9` · Swift: `try FilterDescription("text", ["text": .text("Hello")])`
    public static let text = FilterSpec(
        name: "text", family: .overlay, summary: "A caption, timecode or clock in a real font, with outline and shadow.",
        coreImage: "CITextImageGenerator",
        parameters: [ParameterSpec("text", .text, default: .text("{timecode}"), "the text; {timecode} {time} {frame} {clock} are replaced"),
                     ParameterSpec("font", .file(extensions: ["ttf", "otf", "ttc"]), default: .text(TextRenderer.defaultFont), "the font file"),
                     ParameterSpec("size", .number(4...512, unit: "px"), default: 48, "font size (pixels per em)"),
                     ParameterSpec("color", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "fill colour"),
                     ParameterSpec("position", .point, default: .point(FilterPoint(x: 0.04, y: 0.04)), "top-left of the text"),
                     ParameterSpec("outline", .number(0...16, unit: "px"), default: 2, "outline width"),
                     ParameterSpec("outline-color", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "outline colour",
                                   only: .when("outline", above: 0)),
                     ParameterSpec("shadow", .number(0...32, unit: "px"), default: 0, "shadow offset right and down (rounded to whole pixels)"),
                     ParameterSpec("shadow-color", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "shadow colour",
                                   only: .when("shadow", atLeast: 0.5)),
                     ParameterSpec("opacity", .number(0...1), default: 1, "opacity of the whole text")],
        example: "text:text='Live {timecode}':size=36:position=0.05x0.9",
        swift: "try FilterDescription(\"text\", [\"text\": .text(\"Hello\")])",
        ffmpeg: { arguments in
            let text = arguments.text("text")
            let position = arguments.point("position")
            let style = ":fontsize=\(ParameterValue.format(arguments.number("size")))"
                + ":fontcolor=0x\(arguments.color("color").description.dropFirst()):borderw=\(Int(arguments.number("outline")))"
                + ":bordercolor=0x\(arguments.color("outline-color").description.dropFirst())"
                + ":x=w*\(ParameterValue.format(position.x)):y=h*\(ParameterValue.format(position.y))"
            func escaped(_ text: String) -> String {
                text.replacingOccurrences(of: "\\", with: "\\\\\\\\").replacingOccurrences(of: ":", with: "\\\\:")
                    .replacingOccurrences(of: "'", with: "")
            }
            // drawtext draws a running timecode after an optional prefix.
            if text.hasSuffix("{timecode}"), !text.dropLast(10).contains("{") {
                let prefix = String(text.dropLast(10))
                return "drawtext=fontfile=\(arguments.text("font"))" + (prefix.isEmpty ? "" : ":text='\(escaped(prefix))'")
                    + ":timecode='00\\:00\\:00\\:00':rate=25" + style
            }
            guard !text.contains("{") else { return nil }
            return "drawtext=fontfile=\(arguments.text("font")):text='\(escaped(text))'" + style
        }
    ) { arguments, context in
        let style = TextStyle(size: arguments.number("size"), color: arguments.color("color").rgb, outline: arguments.number("outline"),
                              outlineColor: arguments.color("outline-color").rgb, shadow: Int(arguments.number("shadow").rounded()),
                              shadowColor: arguments.color("shadow-color").rgb, opacity: arguments.float("opacity"))
        let renderer = try TextRenderer(font: arguments.text("font"), style: style)
        let position = arguments.point("position")
        return .processor(TextProcessor(template: arguments.text("text"), renderer: renderer,
                                        x: Int((position.x * Double(context.format.width)).rounded(.down)),
                                        y: Int((position.y * Double(context.format.height)).rounded(.down)), slices: context.slices))
    }
}

/// How text is drawn.
struct TextStyle: Sendable {
    let size: Double
    let color: SIMD3<Float>
    let outline: Double
    let outlineColor: SIMD3<Float>
    let shadow: Int
    let shadowColor: SIMD3<Float>
    let opacity: Float
}

/// A glyph's coverage (0…255) and placement relative to the pen on the baseline, with its outline coverage
/// (0…1, the bitmap padded by the outline's reach on every side) made once when the glyph is first drawn.
struct Glyph {
    let width: Int, height: Int
    /// Offset of the bitmap's left column from the pen, and of its top row above the baseline.
    let left: Int, top: Int
    /// Pen advance in pixels.
    let advance: Int
    let coverage: [UInt8]
    /// The coverage dilated by the outline width, (width + 2·reach) × (height + 2·reach); empty without an outline.
    let outline: [Float]
}

/// Lays out and rasterizes text with FreeType into a straight-alpha RGBA picture. One font face at one size; glyphs
/// are cached by character. Used by one stage, on one thread at a time.
final class TextRenderer {
    static let defaultFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    let style: TextStyle
    private var library: FT_Library?
    private var face: FT_Face?
    private var glyphs: [Unicode.Scalar: (glyph: Glyph, index: UInt32)] = [:]
    /// Distance from the top of the box to the baseline, and the line's height, in pixels.
    let ascender: Int
    let lineHeight: Int

    init(font: String, style: TextStyle) throws {
        self.style = style
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else {
            throw FilterError.badFile(filter: "text", path: font, line: 0, reason: "FreeType could not start")
        }
        var face: FT_Face?
        guard FT_New_Face(library, font, 0, &face) == 0, let face else {
            FT_Done_FreeType(library)
            throw FilterError.badFile(filter: "text", path: font, line: 0, reason: "not a font FreeType can read")
        }
        guard FT_Set_Pixel_Sizes(face, 0, FT_UInt(style.size.rounded())) == 0 else {
            FT_Done_Face(face)
            FT_Done_FreeType(library)
            throw FilterError.badFile(filter: "text", path: font, line: 0, reason: "the font has no size \(Int(style.size))")
        }
        self.library = library
        self.face = face
        let metrics = face.pointee.size.pointee.metrics
        ascender = Int((metrics.ascender + 63) >> 6)
        lineHeight = Int((metrics.height + 63) >> 6)
    }

    deinit {
        if let face { FT_Done_Face(face) }
        if let library { FT_Done_FreeType(library) }
    }

    /// The glyph of `scalar` (rendered on first use) and its glyph index for kerning.
    private func glyph(_ scalar: Unicode.Scalar) -> (glyph: Glyph, index: UInt32)? {
        if let cached = glyphs[scalar] { return cached }
        guard let face else { return nil }
        let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))
        // 1 << 2 is FT_LOAD_RENDER: load the outline and render it to an 8-bit coverage bitmap.
        guard FT_Load_Glyph(face, index, FT_Int32(1 << 2)) == 0, let slot = face.pointee.glyph else { return nil }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width), height = Int(bitmap.rows), pitch = Int(bitmap.pitch)
        var coverage = [UInt8](repeating: 0, count: width * height)
        if let buffer = bitmap.buffer, pitch >= width {
            for y in 0..<height {
                for x in 0..<width { coverage[y * width + x] = buffer[y * pitch + x] }
            }
        }
        var outline: [Float] = []
        if style.outline > 0 {
            let reach = Int(style.outline.rounded(.up)), paddedWidth = width + 2 * reach, paddedHeight = height + 2 * reach
            var padded = [Float](repeating: 0, count: paddedWidth * paddedHeight)
            for y in 0..<height {
                for x in 0..<width { padded[(y + reach) * paddedWidth + x + reach] = Float(coverage[y * width + x]) / 255 }
            }
            outline = TextRenderer.dilate(padded, width: paddedWidth, height: paddedHeight, radius: style.outline)
        }
        let result = (Glyph(width: width, height: height, left: Int(slot.pointee.bitmap_left), top: Int(slot.pointee.bitmap_top),
                            advance: Int((slot.pointee.advance.x + 32) >> 6), coverage: coverage, outline: outline), index)
        glyphs[scalar] = result
        return result
    }

    /// One glyph of a laid-out line: its character, picture and pen position on the baseline.
    struct Placed {
        let scalar: Unicode.Scalar
        let glyph: Glyph
        let originX: Int
    }

    /// The current box: the laid-out line, the fill and outline coverage (0…1) and the composited straight-alpha RGBA
    /// picture, `boxWidth` × `boxHeight`, its top-left `margin` pixels left of and above the pen's starting corner.
    private var placed: [Placed] = []
    private var fill: [Float] = []
    private var outlineCoverage: [Float] = []
    private(set) var pixels: [UInt8] = []
    private(set) var boxWidth = 0, boxHeight = 0
    /// How far the outline reaches beyond the glyphs (the box's offset from the pen's starting corner, negated).
    var margin: Int { Int(style.outline.rounded(.up)) }

    /// What `draw` changed in the box.
    enum Change: Equatable {
        /// The box has a new size: every column is new.
        case resized
        /// Only these columns of the box changed (empty: nothing did).
        case columns(Range<Int>)
    }

    /// Glyphs of `text` with their pen positions on the baseline (advance widths plus kerning), and the pen's end.
    func layout(_ text: String) -> (glyphs: [Placed], width: Int) {
        var placed: [Placed] = []
        var pen = 0
        var previous: UInt32?
        for scalar in text.unicodeScalars {
            guard let (glyph, index) = glyph(scalar) else { continue }
            if let previous, let face {
                var kerning = FT_Vector()
                if FT_Get_Kerning(face, previous, index, 0, &kerning) == 0 { pen += Int((kerning.x + 32) >> 6) }
            }
            placed.append(Placed(scalar: scalar, glyph: glyph, originX: pen))
            pen += glyph.advance
            previous = index
        }
        return (placed, pen)
    }

    /// Draws `text` into the box (`pixels`), redrawing only the columns that differ from the text drawn before when
    /// the box keeps its size and its glyph count: the columns the outline (and shadow) of each changed glyph reaches,
    /// before and after. A redrawn column is the same as in a box drawn from scratch.
    func draw(_ text: String) -> Change {
        let (glyphs, pen) = layout(text)
        let margin = self.margin, shadow = max(0, style.shadow)
        let width = max(1, pen + 2 * margin + shadow + 2), height = max(1, lineHeight + 2 * margin + shadow + 2)
        let change: Change
        if width != boxWidth || height != boxHeight {
            (boxWidth, boxHeight) = (width, height)
            fill = [Float](repeating: 0, count: width * height)
            outlineCoverage = fill
            pixels = [UInt8](repeating: 0, count: width * height * 4)
            change = .resized
        } else if glyphs.count != placed.count {
            change = .columns(0..<width)
        } else {
            var low = width, high = 0
            for (old, new) in zip(placed, glyphs) where old.scalar != new.scalar || old.originX != new.originX {
                for item in [old, new] {
                    low = min(low, item.originX + item.glyph.left)
                    high = max(high, item.originX + item.glyph.left + item.glyph.width + 2 * margin)
                }
            }
            change = .columns(low < high ? max(0, low)..<min(width, high) : 0..<0)
        }
        placed = glyphs
        switch change {
        case .resized: redraw(columns: 0..<width)
        case .columns(let columns): redraw(columns: columns)
        }
        return change
    }

    /// Straight RGBA (0…1) of box pixel (x, y).
    func pixel(_ x: Int, _ y: Int) -> SIMD4<Float> {
        let i = (y * boxWidth + x) * 4
        return SIMD4(Float(pixels[i]), Float(pixels[i + 1]), Float(pixels[i + 2]), Float(pixels[i + 3])) / 255
    }

    /// Recomputes the fill and outline coverage on `columns` and the picture on those columns and the ones the
    /// shadow moves them to. The fill is the largest glyph coverage at each pixel (the pen starting at (margin,
    /// margin)); the outline the largest of the fill and each glyph's dilated coverage; composited shadow, outline,
    /// fill ("over", straight alpha).
    private func redraw(columns: Range<Int>) {
        guard !columns.isEmpty else { return }
        let (width, height) = (boxWidth, boxHeight)
        let margin = self.margin, shadow = max(0, style.shadow)
        for y in 0..<height {
            for x in columns { fill[y * width + x] = 0 }
        }
        for item in placed {
            let glyph = item.glyph
            let left = margin + item.originX + glyph.left
            let from = max(columns.lowerBound, left), to = min(columns.upperBound, left + glyph.width)
            guard from < to else { continue }
            for gy in 0..<glyph.height {
                let y = margin + ascender - glyph.top + gy
                guard y >= 0, y < height else { continue }
                for x in from..<to {
                    fill[y * width + x] = max(fill[y * width + x], Float(glyph.coverage[gy * glyph.width + x - left]) / 255)
                }
            }
        }
        for y in 0..<height {
            for x in columns { outlineCoverage[y * width + x] = fill[y * width + x] }
        }
        if style.outline > 0 {
            for item in placed {
                let glyph = item.glyph
                let paddedWidth = glyph.width + 2 * margin
                let left = item.originX + glyph.left
                let from = max(columns.lowerBound, left), to = min(columns.upperBound, left + paddedWidth)
                guard from < to else { continue }
                for gy in 0..<(glyph.height + 2 * margin) {
                    let y = ascender - glyph.top + gy
                    guard y >= 0, y < height else { continue }
                    for x in from..<to {
                        outlineCoverage[y * width + x] = max(outlineCoverage[y * width + x], glyph.outline[gy * paddedWidth + x - left])
                    }
                }
            }
        }
        let style = self.style
        for y in 0..<height {
            for x in columns.lowerBound..<min(width, columns.upperBound + shadow) {
                let i = (y * width + x) * 4
                let shadowCoverage = shadow > 0 && x >= shadow && y >= shadow ? outlineCoverage[(y - shadow) * width + x - shadow] : 0
                if shadowCoverage == 0 && outlineCoverage[y * width + x] == 0 && fill[y * width + x] == 0 {
                    (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]) = (0, 0, 0, 0)
                    continue
                }
                var color = SIMD3<Float>.zero, alpha: Float = 0
                func over(_ c: SIMD3<Float>, _ a: Float) {
                    guard a > 0 else { return }
                    let outAlpha = a + alpha * (1 - a)
                    color = (c * a + color * alpha * (1 - a)) / outAlpha
                    alpha = outAlpha
                }
                over(style.shadowColor, shadowCoverage)
                if style.outline > 0 { over(style.outlineColor, outlineCoverage[y * width + x]) }
                over(style.color, fill[y * width + x])
                pixels[i] = UInt8((color.x * 255).rounded().clamped(0, 255))
                pixels[i + 1] = UInt8((color.y * 255).rounded().clamped(0, 255))
                pixels[i + 2] = UInt8((color.z * 255).rounded().clamped(0, 255))
                pixels[i + 3] = UInt8((alpha * style.opacity * 255).rounded().clamped(0, 255))
            }
        }
    }

    /// The largest coverage within `radius` (a disc of sample centres), with a soft edge of one pixel: each neighbour
    /// at distance d counts as coverage · clamp(radius + ½ − d, 0, 1).
    static func dilate(_ coverage: [Float], width: Int, height: Int, radius: Double) -> [Float] {
        let reach = Int(radius.rounded(.up))
        var offsets: [(Int, Int, Float)] = []
        for dy in -reach...reach {
            for dx in -reach...reach {
                let weight = Float(radius + 0.5 - (Double(dx * dx + dy * dy)).squareRoot()).clamped(0, 1)
                if weight > 0 { offsets.append((dx, dy, weight)) }
            }
        }
        var out = [Float](repeating: 0, count: coverage.count)
        for y in 0..<height {
            for x in 0..<width {
                var best: Float = 0
                for (dx, dy, weight) in offsets {
                    let sx = x + dx, sy = y + dy
                    guard sx >= 0, sy >= 0, sx < width, sy < height else { continue }
                    best = max(best, coverage[sy * width + sx] * weight)
                }
                out[y * width + x] = best
            }
        }
        return out
    }
}

/// The stage of `text`: fills in the template for each frame, redraws (and re-converts to the frame's planes) only the
/// columns of the box whose glyphs changed since the last frame (a running timecode: its last digits), and blends
/// the text's box in place.
final class TextProcessor: VideoProcessor {
    let template: String
    let renderer: TextRenderer
    let x: Int, y: Int
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var layer = LayerCompositor()
    private var shown: String?
    private var frameNumber = 0
    private var pool: BufferPool?

    init(template: String, renderer: TextRenderer, x: Int, y: Int, slices: SliceRunner) {
        self.template = template
        self.renderer = renderer
        self.x = x
        self.y = y
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        shown = nil
        frameNumber = 0
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "text")
        guard let configured else { return frame }
        let rate = configured.frameRate?.framesPerSecond ?? 25
        let text = TextFields.fill(template, seconds: frame.timestamp?.seconds, frame: frameNumber, rate: rate > 0 ? rate : 25)
        frameNumber += 1
        if text != shown {
            let renderer = self.renderer
            let change = renderer.draw(text)
            if shown == nil || change == .resized {
                layer.prepare(width: renderer.boxWidth, height: renderer.boxHeight, x: x - renderer.margin, y: y - renderer.margin,
                              opacity: 1, format: configured)
                layer.update(columns: 0..<renderer.boxWidth) { renderer.pixel($0, $1) }
            } else if case .columns(let columns) = change {
                layer.update(columns: columns.lowerBound..<min(renderer.boxWidth, columns.upperBound + max(0, renderer.style.shadow))) {
                    renderer.pixel($0, $1)
                }
            }
            shown = text
        }
        var frame = frame
        let (layer, slices) = (self.layer, self.slices)
        frame.withMutablePlanes(pool: pool) { planes in layer.blend(into: planes, slices: slices) }
        return frame
    }

    func release() { pool = nil }
}

/// The fields a `text` template may hold, filled in for one frame.
///
/// ```swift
/// TextFields.fill("{timecode}", seconds: 3725.5, frame: 0, rate: 30)   // "01:02:05:15"
/// ```
public enum TextFields {
    /// The template with its fields filled in for a frame at `seconds` (nil: from the frame count).
    public static func fill(_ template: String, seconds: Double?, frame: Int, rate: Double) -> String {
        guard template.contains("{") else { return template }
        let time = max(0, seconds ?? Double(frame) / rate)
        let whole = Int(time.rounded(.down))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        let frames = Int(((time - Double(whole)) * rate).rounded(.down))
        let millis = Int(((time - Double(whole)) * 1000).rounded(.down))
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        func three(_ v: Int) -> String { v < 10 ? "00\(v)" : v < 100 ? "0\(v)" : "\(v)" }
        var text = template
        if text.contains("{timecode}") { text = text.replacingOccurrences(of: "{timecode}", with: "\(two(h)):\(two(m)):\(two(s)):\(two(frames))") }
        if text.contains("{time}") { text = text.replacingOccurrences(of: "{time}", with: "\(two(h)):\(two(m)):\(two(s)).\(three(millis))") }
        if text.contains("{frame}") { text = text.replacingOccurrences(of: "{frame}", with: String(frame)) }
        if text.contains("{clock}") {
            var now = time_t(Date().timeIntervalSince1970)
            var parts = tm()
            localtime_r(&now, &parts)
            text = text.replacingOccurrences(of: "{clock}", with: "\(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))):\(two(Int(parts.tm_sec)))")
        }
        return text
    }
}
