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

    /// One demo run: an input, a chain, and the file it makes.
    struct Job {
        let input: String
        let output: String
        let chain: String
    }

    static let jobs: [Job] = [
        Job(input: "carphone_pristine.mp4", output: "carphone-sepia-vignette.mp4", chain: "sepia,vignette"),
        Job(input: "bikes.mp4", output: "bikes-thermal.mp4", chain: "thermal"),
        Job(input: "bikes.mp4", output: "bikes-motion-blur.mp4", chain: "motion-blur:radius=12:angle=0"),
        Job(input: "bigbuckbunny.mp4", output: "bigbuckbunny-bloom.mp4", chain: "bloom:radius=12:intensity=0.8"),
        Job(input: "bigbuckbunny.mp4", output: "bigbuckbunny-soft-sepia.mp4", chain: "sepia,gaussian-blur:radius=5,vignette"),
        Job(input: "astronaut.png", output: "astronaut-x-ray.png", chain: "x-ray"),
        Job(input: "astronaut.png", output: "astronaut-comic.png", chain: "posterize:levels=6,sharpen"),
        Job(input: "astronaut.png", output: "astronaut-mono-blur.png", chain: "mono,gaussian-blur:radius=6"),
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
        var rows: [(before: VideoFrame, after: VideoFrame)] = []
        for job in jobs {
            let input = (mediaFolder as NSString).appendingPathComponent(job.input)
            let output = (outputFolder as NSString).appendingPathComponent(job.output)
            let chain = try FilterChain(parsing: job.chain)
            let outcome = try ApplyCommand.transcode(input: input, output: output, chain: chain, threads: threads, quiet: true)
            let stats = outcome.stats
            let frames = stats.framesWritten == 1 ? "1 frame " : "\(stats.framesWritten) frames"
            print("  " + pad(job.output, 30) + pad(job.chain, 40) + pad(frames, 11) + pad("\(outcome.format.width)x\(outcome.format.height)", 10)
                  + String(format: "%7.1f fps  (filters %.2f ms/frame)", stats.framesPerSecond, stats.process.mean * 1000))
            rows.append(try beforeAndAfter(input: input, chain: chain))
        }
        let sheetPath = (outputFolder as NSString).appendingPathComponent("contact-sheet.png")
        try writeContactSheet(rows, to: sheetPath)
        print("results: \(outputFolder)/ (contact sheet: \(sheetPath); each row is one chain above, before | after)")
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

    /// Lays the pairs out in rows (before | after), each scaled to `thumbnailHeight`, on a dark canvas.
    static func writeContactSheet(_ rows: [(before: VideoFrame, after: VideoFrame)], to path: String) throws {
        let gap = 8
        let thumbnails = try rows.map { row in (try thumbnail(row.before), try thumbnail(row.after)) }
        let width = gap + (thumbnails.map { $0.0.width + gap + $0.1.width }.max() ?? 0) + gap
        let height = gap + thumbnails.count * (thumbnailHeight + gap)
        var canvas = VideoFrame(format: .rgba, width: width, height: height)
        canvas.withMutablePlanes { planes in
            let plane = planes[0]
            for y in 0..<height {
                let row = plane.row(y)
                for x in 0..<width { row[4 * x] = 24; row[4 * x + 1] = 24; row[4 * x + 2] = 28; row[4 * x + 3] = 255 }
            }
            for (index, pair) in thumbnails.enumerated() {
                let top = gap + index * (thumbnailHeight + gap)
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
