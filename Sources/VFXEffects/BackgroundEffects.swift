import Foundation
import VFXCore
import VFXFilters
import VFXMedia
import VFXPipeline
import VFXVision

// Background effects: the person kept, the background blurred or replaced, through the person mask that
// `vfx segment` writes by default (the refined, smoothed mask of `PersonSegmenter`).

extension FilterSpec {
    /// `background-blur`: the background blurred without the person in it.
    ///
    /// ```
    /// vfx apply call.mp4 -o blurred.mp4 --filter background-blur:radius=20
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("background-blur", ["radius": .number(12)])])
    /// ```
    public static let backgroundBlur = FilterSpec(
        name: "background-blur",
        summary: "Blurs the background behind the person (Gaussian, the person left out of the blur so no halo), "
            + "composited through the refined, smoothed person mask.",
        parameters: [
            ParameterSpec("radius", .number(1...100, unit: "px"), default: 20, "the blur's standard deviation (as Core Image's)"),
            BackgroundQuality.parameter,
        ],
        example: "background-blur:radius=20:quality=balanced",
        swift: "try FilterDescription(\"background-blur\", [\"radius\": .number(20)])"
    ) { arguments, _ in
        let quality = BackgroundQuality(rawValue: arguments.text("quality")) ?? .balanced
        return .processor(BackgroundProcessor(masks: try MaskSource(quality: quality),
                                              background: .blur(sigma: arguments.float("radius"))))
    }

    /// `background-image`: the person over a picture.
    ///
    /// ```
    /// vfx apply call.mp4 -o beach.mp4 --filter background-image:file=beach.jpg:fit=fill
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("background-image", ["file": .text("beach.jpg")])])
    /// ```
    public static let backgroundImage = FilterSpec(
        name: "background-image",
        summary: "Puts the person over a picture (PNG or JPEG), placed by fit: fill crops to cover the frame, fit shows "
            + "all of it with black bars, stretch changes its shape to the frame's.",
        parameters: [
            ParameterSpec("file", .file(extensions: ["png", "jpg", "jpeg"]), "the background picture"),
            ParameterSpec("fit", .choice(Fit.allCases.map(\.rawValue)), default: .text("fill"), "how the picture is placed"),
            BackgroundQuality.parameter,
        ],
        example: "background-image:file=beach.jpg:fit=fill",
        swift: "try FilterDescription(\"background-image\", [\"file\": .text(\"beach.jpg\")])"
    ) { arguments, _ in
        let name = "background-image"
        let picture = try EffectFiles.loadPicture(arguments.text("file"), filter: name, allowed: [.png, .jpeg])
        let quality = BackgroundQuality(rawValue: arguments.text("quality")) ?? .balanced
        return .processor(BackgroundProcessor(masks: try MaskSource(quality: quality),
                                              background: .picture(picture, Fit(rawValue: arguments.text("fit")) ?? .fill)))
    }

    /// `background-video`: the person over a video, looped or held on its last frame.
    ///
    /// ```
    /// vfx apply call.mp4 -o sea.mp4 --filter background-video:file=waves.mp4:loop=1
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("background-video", ["file": .text("waves.mp4")])])
    /// ```
    public static let backgroundVideo = FilterSpec(
        name: "background-video",
        summary: "Puts the person over a video (fill: cropped to cover the frame); at its end it starts again (loop=1) "
            + "or holds its last frame.",
        parameters: [
            ParameterSpec("file", .file(extensions: ["mp4", "mkv", "webm", "mov", "avi", "y4m"]), "the background video"),
            ParameterSpec("loop", .flag, default: .flag(true), "start again at the end"),
            BackgroundQuality.parameter,
        ],
        example: "background-video:file=waves.mp4:loop=1",
        swift: "try FilterDescription(\"background-video\", [\"file\": .text(\"waves.mp4\")])"
    ) { arguments, _ in
        let video = try BackgroundVideo(path: arguments.text("file"), loop: arguments.flag("loop"))
        let quality = BackgroundQuality(rawValue: arguments.text("quality")) ?? .balanced
        return .processor(BackgroundProcessor(masks: try MaskSource(quality: quality), background: .video(video)))
    }

    /// `background-color`: the person over a flat color.
    ///
    /// ```
    /// vfx apply call.mp4 -o green.mp4 --filter background-color:color=#00b140
    /// ```
    /// ```swift
    /// let chain = FilterChain([try FilterDescription("background-color", ["color": .color(FilterColor(red: 0, green: 0.7, blue: 0.25))])])
    /// ```
    public static let backgroundColor = FilterSpec(
        name: "background-color",
        summary: "Puts the person over a flat color (a name such as green, or #rrggbb).",
        parameters: [
            ParameterSpec("color", .color, default: .color(FilterColor(red: 0, green: 177.0 / 255, blue: 64.0 / 255)),
                          "the background color"),
            BackgroundQuality.parameter,
        ],
        example: "background-color:color=#00b140",
        swift: "try FilterDescription(\"background-color\", [\"color\": .color(FilterColor(parsing: \"#00b140\")!)])"
    ) { arguments, _ in
        let quality = BackgroundQuality(rawValue: arguments.text("quality")) ?? .balanced
        return .processor(BackgroundProcessor(masks: try MaskSource(quality: quality), background: .color(arguments.color("color"))))
    }
}

/// Which person mask the background effects use.
/// - `fast`: the landscape model (256×144), segmented every other frame (the mask in between is the previous one).
/// - `balanced`: the general model, every frame, the mask `vfx segment` writes by default.
/// - `accurate`: the general model with a tighter guided filter (ε 0.01 instead of 0.03), so the edge follows
///   hair and headsets more closely.
enum BackgroundQuality: String, CaseIterable {
    case fast, balanced, accurate

    static let parameter = ParameterSpec("quality", .choice(allCases.map(\.rawValue)), default: .text("balanced"),
                                         "fast: landscape model, every other frame; balanced: vfx segment's mask; accurate: finer edges")
}

/// Where a background effect gets the person mask: the frame's attached `PersonMask` when an analysis stage
/// put one there for this frame size (`AnalysisAttacher`), otherwise its own segmenter, run on the frame.
final class MaskSource {
    let segmenter: PersonSegmenter
    /// Segment every `interval` frames (1: every frame).
    let interval: Int
    private var previous: PersonMask?
    private var index = 0

    init(quality: BackgroundQuality) throws {
        switch quality {
        case .fast:
            segmenter = try PersonSegmenter(model: .landscape)
            interval = 2
        case .balanced:
            segmenter = try PersonSegmenter(model: .general)
            interval = 1
        case .accurate:
            segmenter = try PersonSegmenter(model: .general, options: PersonSegmenter.Options(guidedEpsilon: 0.01))
            interval = 1
        }
    }

    func mask(for frame: VideoFrame) -> PersonMask {
        defer { index += 1 }
        if let attached = frame.attachments[PersonMask.self], attached.width == frame.width, attached.height == frame.height {
            return attached
        }
        if let previous, previous.width == frame.width, previous.height == frame.height, index % interval != 0 {
            return previous
        }
        let mask = segmenter.segment(frame)
        previous = mask
        return mask
    }

    func reset() {
        segmenter.reset()
        previous = nil
        index = 0
    }
}

/// A background video, read frame by frame in step with the frames it goes behind; at its end it starts
/// again (`loop`) or holds its last frame.
final class BackgroundVideo {
    let path: String
    let loop: Bool
    private var reader: MediaReader
    private var current: VideoFrame
    private var started = false

    init(path: String, loop: Bool) throws {
        self.path = path
        self.loop = loop
        let name = "background-video"
        guard FileManager.default.fileExists(atPath: path) else {
            throw FilterError.badFile(filter: name, path: path, line: 0, reason: "no such file")
        }
        do {
            reader = try MediaReader(path: path, threads: 1)
            guard let first = try reader.nextFrame() else {
                throw FilterError.badFile(filter: name, path: path, line: 0, reason: "holds no frames")
            }
            current = first
        } catch let error as FilterError {
            throw error
        } catch {
            throw FilterError.badFile(filter: name, path: path, line: 0, reason: "cannot be decoded as video")
        }
    }

    /// The background for the next frame.
    func next() throws -> VideoFrame {
        if !started {
            started = true
        } else if let upcoming = try reader.nextFrame() {
            current = upcoming
        } else if loop {
            reader = try MediaReader(path: path, threads: 1)
            if let first = try reader.nextFrame() { current = first }
        }
        return current
    }
}

/// What goes behind the person.
enum Background {
    case blur(sigma: Float)
    case picture(VideoFrame, Fit)
    case video(BackgroundVideo)
    case color(FilterColor)
}

/// The background effects' stage: the mask of each frame, then the background blurred (normalized
/// convolution, `NormalizedBlur`) or replaced, composited as `mask·frame + (1 − mask)·background` in the
/// frame's own pixel format, in place.
final class BackgroundProcessor: VideoProcessor {
    let masks: MaskSource
    let background: Background
    private var shapes: [PlaneShape] = []
    private var weights: PlaneWeights?
    private var blurs: [NormalizedBlur] = []
    /// The replacement background in the frame's format and size (pictures and colors: made once).
    private var prepared: VideoFrame?
    private var placed: PixelBuffer?
    private var format: FrameFormat?
    /// For video backgrounds: the resampling taps (made again only if the video's frame size changes) and the
    /// buffers its frames are converted into (RGBA at its size; the frame's format at the frame's size).
    private var placer: Resampler?
    private var sourcePool: BufferPool?
    private var pool: BufferPool?

    init(masks: MaskSource, background: Background) {
        self.masks = masks
        self.background = background
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        format = input
        shapes = PlaneShape.shapes(of: input.pixelFormat, width: input.width, height: input.height)
        weights = PlaneWeights(format: input.pixelFormat, width: input.width, height: input.height)
        blurs = shapes.map { NormalizedBlur(channels: $0.channels) }
        let placed = PixelBuffer(format: .rgba, width: input.width, height: input.height)
        self.placed = placed
        placer = nil
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 2)
        masks.reset()
        switch background {
        case .blur, .video: prepared = nil
        case .picture(let picture, let fit):
            prepared = Resampler(from: picture.width, picture.height, to: input.width, input.height, fit: fit)
                .place(picture, into: placed).converted(to: input.pixelFormat, color: input.color)
        case .color(let color):
            let frame = VideoFrame(format: .rgba, width: input.width, height: input.height)
            let rgba = [color.red, color.green, color.blue, 1].map { UInt8(($0 * 255).rounded()) }
            let plane = frame.plane(0)
            for y in 0..<input.height {
                let row = plane.row(y)
                for x in 0..<input.width { for c in 0..<4 { row[4 * x + c] = rgba[c] } }
            }
            prepared = frame.converted(to: input.pixelFormat, color: input.color)
        }
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        var frame = frame
        guard let weights, let format else { return frame }
        let mask = masks.mask(for: frame)
        weights.fill(inverting: mask.buffer.planes[0])
        var replacement = prepared
        if case .video(let video) = background, let placed {
            // Placed into the one RGBA buffer, converted into a buffer from the pool: nothing allocated per frame
            // once the pool holds a buffer (the previous background is released before this one is made).
            let next = try video.next()
            if placer?.fits(next) != true {
                placer = Resampler(from: next.width, next.height, to: frame.width, frame.height, fit: .fill)
                sourcePool = BufferPool(format: .rgba, width: next.width, height: next.height, capacity: 1)
            }
            replacement = placer?.place(next, into: placed, pool: sourcePool).converted(to: format.pixelFormat, color: frame.color, pool: pool)
        }
        let shapes = self.shapes, blurs = self.blurs
        frame.withMutablePlanes { planes in
            for shape in shapes {
                let plane = planes[shape.index]
                let rows = WeightRows(weights, shape)
                if case .blur(let sigma) = background {
                    let blur = blurs[shape.index]
                    let cell = NormalizedBlur.cellSize(sigma: sigma) / shape.subsampling
                    blur.compute(plane: plane, region: (0, 0, shape.width, shape.height), cell: cell,
                                 sigma: sigma / Float(shape.subsampling), weights: rows)
                    blur.blend(plane: plane, weights: rows)
                } else if let replacement {
                    Self.composite(plane: plane, over: replacement.plane(shape.index), shape: shape, weights: rows)
                }
            }
        }
        return frame
    }

    /// `I + (w/255)·(B − I)` per sample, w the background weight.
    static func composite(plane: Plane, over background: Plane, shape: PlaneShape, weights: WeightRows) {
        let channels = shape.channels
        for y in 0..<shape.height {
            let row = plane.row(y), back = background.row(y), w = weights(y)
            if channels == 1 {
                // Branch-free (w = 0 keeps the pixel exactly), so the loop vectorizes.
                for x in 0..<shape.width {
                    let value = Int32(row[x])
                    row[x] = UInt8(truncatingIfNeeded: value + ((Int32(back[x]) - value) * Int32(w[x]) * 257 + 32768) >> 16)
                }
                continue
            }
            for x in 0..<shape.width where w[x] != 0 {
                let weight = Int32(w[x])
                for c in 0..<channels {
                    let i = x * channels + c
                    let value = Int32(row[i])
                    row[i] = UInt8(truncatingIfNeeded: value + ((Int32(back[i]) - value) * weight * 257 + 32768) >> 16)
                }
            }
        }
    }

    func release() { masks.reset() }
}

extension VFXEffects {
    /// The background effects: the filters that composite through the person mask.
    static let personMaskFilters: Set<String> = Set([FilterSpec.backgroundBlur, .backgroundImage, .backgroundVideo,
                                                     .backgroundColor].map(\.name))

    /// The mask quality the first background effect of `chain` asks for (`fast`, `balanced`, `accurate`), or nil
    /// when no filter of `chain` uses the person mask.
    public static func personMaskQuality(in chain: FilterChain) -> String? {
        guard let filter = chain.filters.first(where: { personMaskFilters.contains($0.name) }) else { return nil }
        return (try? filter.arguments().text("quality")) ?? BackgroundQuality.balanced.rawValue
    }

    /// For a live run: a stage to put before the background effects that segments the person beside the
    /// chain (`PersonMaskAnalysis`), with the model `quality` picks.
    ///
    /// ```swift
    /// let masks = try VFXEffects.makePersonMaskAnalysis(quality: "balanced")
    /// let stages = ProcessorChain([masks, FilterChain(parsing: "background-blur").makeProcessor(threads: 1)])
    /// ```
    public static func makePersonMaskAnalysis(quality: String) throws -> PersonMaskAnalysis {
        PersonMaskAnalysis(masks: try MaskSource(quality: BackgroundQuality(rawValue: quality) ?? .balanced))
    }
}

/// A live stage that hands each frame to the person segmenter on a thread of its own (an `AnalysisRunner`)
/// and attaches the newest mask to the frame (`frame.attachments[PersonMask.self]`), which the background
/// effects after it read instead of segmenting themselves: the chain's thread only blurs and composites, the
/// segmentation runs beside it on the newest frame, and the mask may be a frame or two old. Only the first
/// frame waits for its mask. `configure` runs the model once on a blank frame of the new format (then forgets
/// it), so the first real frames do not pay for first-run allocations.
///
/// ```swift
/// let masks = try VFXEffects.makePersonMaskAnalysis(quality: "balanced")
/// _ = try masks.configure(for: format)
/// try masks.process(frame) { blurStage.process($0, emit: send) }
/// ```
public final class PersonMaskAnalysis: FrameProcessor {
    private let masks: MaskSource
    private var runner: AnalysisRunner<PersonMask>?

    init(masks: MaskSource) { self.masks = masks }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        runner?.stop()
        runner = nil
        _ = masks.segmenter.segment(VideoFrame(format: input.pixelFormat, width: input.width, height: input.height))
        masks.reset()
        let masks = self.masks
        // From here on only the runner's thread uses `masks`.
        runner = AnalysisRunner<PersonMask> { masks.segmenter.segment($0) }
        return input
    }

    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        var frame = frame
        if let runner {
            runner.submit(frame)
            if runner.results.latest == nil { runner.waitUntilIdle() }
            if let latest = runner.results.latest { frame.attachments[PersonMask.self] = latest.value }
        }
        try emit(frame)
    }

    public func flush(emit: FrameEmitter) throws {}

    public func release() {
        runner?.stop()
        runner = nil
    }
}
