import Foundation
import VFXCore
import VFXMedia
import VFXPipeline
import VFXVision

/// `vfx segment INPUT -o OUT [--model general|landscape] [--raw]`: the person mask of every frame.
///
/// ```
/// $ vfx segment media/astronaut.png -o mask.png
/// $ vfx segment media/carphone_pristine.mp4 -o mask.y4m --model landscape --raw
/// $ vfx segment media/carphone_pristine.mp4 -o mask.mkv          # FFV1, lossless
/// ```
///
/// A mask is data, not a picture to look at: every output keeps it exactly (`MaskEncoding`).
enum SegmentCommand {
    static let help = """
        usage: vfx segment INPUT -o OUT [--model general|landscape] [--raw]

          an 8-bit mask the size of the input, 255 = person: an image in gives a PNG (or any image), a video
          gives a video, always lossless: .mkv and .avi hold FFV1 (gray), .y4m raw gray; .mp4, .mov, .webm,
          .ts and .gif would alter the mask and are refused (write .mkv)
          --model   general (256x256, the default) or landscape (256x144, for 16:9 video)
          --raw     the model's output taken to the frame's size bilinearly, with no refinement and no
                    smoothing over time (what MediaPipe's Python solution returns); without it the mask is
                    fitted to the picture's edges and steadied over time (what background effects use)
        """

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") { print(help); return }
        guard let output = try arguments.option("-o", "--output") else { throw UsageError("segment needs -o OUT") }
        var model = PersonSegmenter.Model.general
        if let name = try arguments.option("--model") {
            guard let chosen = PersonSegmenter.Model(rawValue: name) else {
                throw UsageError("--model must be general or landscape, got '\(name)'")
            }
            model = chosen
        }
        let raw = arguments.flag("--raw")
        let input = try arguments.positional("INPUT")
        try arguments.finish()

        let segmenter = try PersonSegmenter(model: model, options: raw ? .raw : .default)
        let reader = try MediaReader(path: input)
        let upright = reader.rotation == .none ? nil : ApplyCommand.Upright(rotation: reader.rotation, threads: 1)
        if let upright { _ = try upright.configure(for: reader.format) }
        let writer = try MaskEncoding.writer(path: output, frameRate: reader.format.frameRate)
        if writer.kind == .png || writer.kind == .jpeg, let count = reader.expectedFrameCount, count > 1 {
            throw UsageError("\(output): an image holds one frame, but \(input) has \(count); write a video (.y4m, .mp4, .mkv)")
        }
        while let decoded = try reader.nextFrame() {
            for frame in try upright?.frames(from: decoded) ?? [decoded] {
                var mask = segmenter.segment(frame).frame
                mask.duration = frame.duration
                try writer.write(mask)
            }
        }
        try writer.finish()
    }
}

/// How `vfx segment` stores masks in each kind of output, so that what is read back is the mask itself:
/// a lossy codec would move the edge values (H.264 at its usual CRF 20 moved edge pixels by up to 42 levels
/// on the carphone clip) and a conversion to limited-range YUV would squeeze 0…255 into 16…235 (even H.264 at
/// CRF 0 gets its input as limited-range 4:2:0 here, so it is not exact either).
///
/// | output | codec |
/// | --- | --- |
/// | `.mkv`, `.avi` | FFV1, gray |
/// | `.y4m`, `.png` | raw gray (`.jpg` for one picture, when asked for, is JPEG's own) |
/// | `.mp4`, `.mov`, `.webm`, `.ts`, `.gif` | refused with a hint: their codecs here cannot keep the mask exactly |
///
/// ```swift
/// let writer = try MaskEncoding.writer(path: "mask.mkv", frameRate: reader.format.frameRate)
/// ```
enum MaskEncoding {
    static func writer(path: String, frameRate: FrameRate?) throws -> MediaWriter {
        let kind = MediaWriter.Kind(extension: (path as NSString).pathExtension)
        let options: EncodingOptions
        switch kind {
        case .mkv, .avi:
            options = EncodingOptions(codec: .ffv1, pixelFormat: "gray", keepsAudio: false)
        case .mp4, .mov, .webm, .ts, .gif:
            let name = (path as NSString).deletingPathExtension
            throw UsageError("\(path): a mask must be kept exactly and \(kind?.rawValue ?? "this format") would alter it; "
                + "write \(name).mkv (lossless FFV1) or \(name).y4m")
        case .y4m, .png, .jpeg, nil:
            // Raw outputs, pictures (a JPEG is asked for by name) and unknown extensions (the writer names them).
            return try MediaWriter(path: path, frameRate: frameRate)
        }
        // The frames' durations give the rate (the source's own rate is not passed as a conversion).
        return try MediaWriter(path: path, source: nil, options: options)
    }
}
