import Foundation
import VFXCore
import VFXFilters
import VFXMedia
import VFXPipeline

/// `vfx demo`: runs a few filter chains over the sample media, writes the results and a before/after
/// contact sheet into `demo-output/`, and prints how fast each ran.
///
/// ```sh
/// vfx demo --media media --output demo-output
/// ```
enum DemoCommand {
    static let help = """
        usage: vfx demo [--media DIR] [--output DIR] [--threads N]

          --media DIR    the sample media fetched by scripts/setup.sh (default: media)
          --output DIR   where results go (default: demo-output)
          --threads N    threads for filters and encoders (default: every core)
        """

    /// One demo run: an input, a chain, and the file it makes. `{media}` in a chain stands for the media folder;
    /// an input made by the demo itself (the astronaut pan) is read from the output folder.
    struct Job {
        let input: String
        let output: String
        let chain: String
        var generated = false
    }

    /// The 720p clip the demo renders from astronaut.png (a slow pan and zoom), for the effects rows.
    static let panClip = "astronaut-pan-720p.mp4"

    static let jobs: [Job] = [
        Job(input: "carphone_pristine.mp4", output: "carphone-sepia-vignette.mp4", chain: "sepia,vignette"),
        Job(input: "bikes.mp4", output: "bikes-thermal.mp4", chain: "thermal"),
        Job(input: "bikes.mp4", output: "bikes-motion-blur.mp4", chain: "motion-blur:radius=12:angle=0"),
        Job(input: "bigbuckbunny.mp4", output: "bigbuckbunny-bloom.mp4", chain: "bloom:radius=12:intensity=0.8"),
        Job(input: "bigbuckbunny.mp4", output: "bigbuckbunny-soft-sepia.mp4", chain: "sepia,gaussian-blur:radius=5,vignette"),
        Job(input: "astronaut.png", output: "astronaut-x-ray.png", chain: "x-ray"),
        Job(input: "astronaut.png", output: "astronaut-comic.png", chain: "posterize:levels=6,sharpen"),
        Job(input: "astronaut.png", output: "astronaut-mono-blur.png", chain: "mono,gaussian-blur:radius=6"),
        // AI effects (VFXEffects): the person kept, the background blurred or replaced; stickers and makeup on the face.
        Job(input: "carphone_pristine.mp4", output: "carphone-background-blur.mp4", chain: "background-blur:radius=12"),
        Job(input: "carphone_pristine.mp4", output: "carphone-background-image.mp4", chain: "background-image:file={media}/camera.png"),
        Job(input: "carphone_pristine.mp4", output: "carphone-glasses.mp4", chain: "face-sticker:sticker=glasses"),
        Job(input: "carphone_pristine.mp4", output: "carphone-lipstick.mp4", chain: "lipstick:color=#c0143c:amount=0.7"),
        Job(input: panClip, output: "astronaut-pan-background-blur.mp4", chain: "background-blur:radius=20", generated: true),
        Job(input: panClip, output: "astronaut-pan-badge.mp4", chain: "face-sticker:sticker=badge", generated: true),
        Job(input: panClip, output: "astronaut-pan-lipstick.mp4", chain: "lipstick:amount=0.7", generated: true),
    ]

    /// Thumbnail height in the contact sheet.
    static let thumbnailHeight = 180

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") { print(help); return }
        let mediaFolder = try arguments.option("--media") ?? "media"
        let outputFolder = try arguments.option("--output", "-o") ?? "demo-output"
        let threads = try arguments.intOption("--threads", range: 1...256)
        try arguments.finish()

        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mediaFolder, isDirectory: &isFolder), isFolder.boolValue else {
            throw DemoError(message: "\(mediaFolder): no sample media here (run scripts/setup.sh first, or pass --media DIR)")
        }
        try FileManager.default.createDirectory(atPath: outputFolder, withIntermediateDirectories: true)

        print("VideoFX demo: \(jobs.count) chains over the sample media in \(mediaFolder)/")
        let pan = (outputFolder as NSString).appendingPathComponent(panClip)
        try writePanClip(from: (mediaFolder as NSString).appendingPathComponent("astronaut.png"), to: pan)
        var rows: [(label: String, before: VideoFrame, after: VideoFrame)] = []
        for job in jobs {
            let input = ((job.generated ? outputFolder : mediaFolder) as NSString).appendingPathComponent(job.input)
            let output = (outputFolder as NSString).appendingPathComponent(job.output)
            let chainText = job.chain.replacingOccurrences(of: "{media}", with: mediaFolder)
            let chain = try FilterChain(parsing: chainText)
            let outcome = try ApplyCommand.transcode(input: input, output: output, chain: chain, threads: threads, quiet: true)
            let stats = outcome.stats
            let frames = stats.framesWritten == 1 ? "1 frame " : "\(stats.framesWritten) frames"
            print("  " + pad(job.output, 30) + pad(chainText, 40) + pad(frames, 11) + pad("\(outcome.format.width)x\(outcome.format.height)", 10)
                  + String(format: "%7.1f fps  (filters %.2f ms/frame)", stats.framesPerSecond, stats.process.mean * 1000))
            let pair = try beforeAndAfter(input: input, chain: chain)
            rows.append((job.input + "  " + chainText, pair.before, pair.after))
        }
        let sheetPath = (outputFolder as NSString).appendingPathComponent("contact-sheet.png")
        try writeContactSheet(rows, to: sheetPath)
        print("results: \(outputFolder)/ (contact sheet: \(sheetPath); each row: its input and chain, then before | after)")
    }

    /// `text` padded with spaces to `width` characters (and one more space).
    static func pad(_ text: String, _ width: Int) -> String {
        text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) + " "
    }

    /// A frame from a third of the way into `input`, and the same frame through `chain`.
    static func beforeAndAfter(input: String, chain: FilterChain) throws -> (before: VideoFrame, after: VideoFrame) {
        let reader = try MediaReader(path: input)
        let target = (reader.expectedFrameCount ?? 1) / 3
        var frame = try reader.nextFrame()
        var index = 0
        while index < target, let next = try reader.nextFrame() {
            frame = next
            index += 1
        }
        guard let before = frame else { throw DemoError(message: "\(input): no frame to show") }
        let processor = chain.makeProcessor(threads: 1)
        _ = try processor.configure(for: FrameFormat(of: before))
        guard let after = try processor.frames(from: before, flush: true).first else { throw DemoError(message: "\(input): the chain dropped the frame") }
        return (before, after)
    }

    /// Lays the pairs out in rows (before | after), each scaled to `thumbnailHeight` under its label (the input
    /// and the chain, in `LabelFont`), on a dark canvas.
    static func writeContactSheet(_ rows: [(label: String, before: VideoFrame, after: VideoFrame)], to path: String) throws {
        let gap = 8, scale = 2
        let labelHeight = LabelFont.height(scale: scale) + 6
        let rowHeight = labelHeight + thumbnailHeight + gap
        let thumbnails = try rows.map { row in (try thumbnail(row.before), try thumbnail(row.after)) }
        let width = gap + max(thumbnails.map { $0.0.width + gap + $0.1.width }.max() ?? 0,
                              rows.map { LabelFont.width(of: $0.label, scale: scale) }.max() ?? 0) + gap
        let height = gap + thumbnails.count * rowHeight
        var canvas = VideoFrame(format: .rgba, width: width, height: height)
        canvas.withMutablePlanes { planes in
            let plane = planes[0]
            for y in 0..<height {
                let row = plane.row(y)
                for x in 0..<width { row[4 * x] = 24; row[4 * x + 1] = 24; row[4 * x + 2] = 28; row[4 * x + 3] = 255 }
            }
            for (index, pair) in thumbnails.enumerated() {
                let labelTop = gap + index * rowHeight
                LabelFont.draw(rows[index].label, into: plane, left: gap, top: labelTop, scale: scale)
                let top = labelTop + labelHeight
                blit(pair.0, into: plane, left: gap, top: top)
                blit(pair.1, into: plane, left: gap + pair.0.width + gap, top: top)
            }
        }
        let writer = try MediaWriter(path: path)
        do {
            try writer.write(canvas)
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
    }

    /// `frame` as RGBA, scaled to `thumbnailHeight` with the catalog's `scale` filter.
    static func thumbnail(_ frame: VideoFrame) throws -> VideoFrame {
        let rgba = frame.converted(to: .rgba)
        let width = max(2, (rgba.width * thumbnailHeight / rgba.height) & ~1)
        let scaler = try FilterChain(parsing: "scale:width=\(width):height=\(thumbnailHeight)").makeProcessor(threads: 1)
        _ = try scaler.configure(for: FrameFormat(of: rgba))
        guard let scaled = try scaler.frames(from: rgba).first else { throw DemoError(message: "scaling a thumbnail failed") }
        return scaled.converted(to: .rgba)
    }

    /// Renders a slow pan and zoom over the picture at `source` as a 1280×720, 30 fps, 4-second clip: a 16:9
    /// window that narrows from the picture's full width to 70 % of it while its centre drifts down and right,
    /// resampled bilinearly (pixel centres at +0.5).
    static func writePanClip(from source: String, to path: String) throws {
        guard let picture = try MediaReader(path: source).nextFrame()?.converted(to: .rgba) else {
            throw DemoError(message: "\(source): no picture")
        }
        let width = 1280, height = 720, frames = 120, rate = FrameRate(30)
        let writer = try MediaWriter(path: path, frameRate: rate)
        do {
            let input = picture.plane(0)
            let pw = Float(picture.width), ph = Float(picture.height)
            for index in 0..<frames {
                let t = Float(index) / Float(frames - 1)
                let eased = t * t * (3 - 2 * t)
                let windowWidth = pw * (1 - 0.3 * eased), windowHeight = windowWidth * 9 / 16
                let centerX = pw * (0.5 + 0.05 * eased)
                let centerY = min(max(ph * (0.3 + 0.12 * eased), windowHeight / 2), ph - windowHeight / 2)
                let frame = VideoFrame(format: .rgba, width: width, height: height)
                let output = frame.plane(0)
                let step = windowWidth / Float(width)
                let left = centerX - windowWidth / 2, top = centerY - windowHeight / 2
                for y in 0..<height {
                    let v = min(max(top + (Float(y) + 0.5) * step - 0.5, 0), ph - 1)
                    let y0 = Int(v), y1 = min(y0 + 1, picture.height - 1), ty = v - Float(y0)
                    let row0 = input.row(y0), row1 = input.row(y1), out = output.row(y)
                    for x in 0..<width {
                        let u = min(max(left + (Float(x) + 0.5) * step - 0.5, 0), pw - 1)
                        let x0 = Int(u), x1 = min(x0 + 1, picture.width - 1), tx = u - Float(x0)
                        for c in 0..<4 {
                            let a = Float(row0[4 * x0 + c]) + (Float(row0[4 * x1 + c]) - Float(row0[4 * x0 + c])) * tx
                            let b = Float(row1[4 * x0 + c]) + (Float(row1[4 * x1 + c]) - Float(row1[4 * x0 + c])) * tx
                            out[4 * x + c] = UInt8(a + (b - a) * ty + 0.5)
                        }
                    }
                }
                var yuv = frame.converted(to: .i420, color: .bt709)
                yuv.timestamp = MediaTime(value: Int64(index), timescale: 30)
                yuv.duration = rate.frameDuration
                try writer.write(yuv)
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
    }

    static func blit(_ frame: VideoFrame, into plane: Plane, left: Int, top: Int) {
        let source = frame.plane(0)
        for y in 0..<frame.height {
            (plane.row(top + y) + 4 * left).update(from: source.row(y), count: 4 * frame.width)
        }
    }
}

struct DemoError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
