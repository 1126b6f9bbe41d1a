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
/// ```
enum SegmentCommand {
    static let help = """
        usage: vfx segment INPUT -o OUT [--model general|landscape] [--raw]

          an 8-bit mask the size of the input, 255 = person: an image in gives a PNG (or any image), a video
          gives a video (.y4m keeps it exact; .mp4/.mkv/.webm are compressed)
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
        let writer = try MediaWriter(path: output, frameRate: reader.format.frameRate)
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
