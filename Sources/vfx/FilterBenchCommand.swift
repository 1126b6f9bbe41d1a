import Foundation
import VFXBench
import VFXCore
import VFXFilters

/// `vfx bench --filter CHAIN [--input X | --size WxH] [--frames N] [--threads N] [--pixel-format i420|nv12] [--ffmpeg GRAPH]
/// [--no-ffmpeg] [--json]`: times a chain and FFmpeg's equivalent on the same clip, and prints the ratio of their filtering
/// work. `--pixel-format nv12` times both on NV12 frames (what cameras deliver) instead of I420.
///
/// ```sh
/// vfx bench --filter sepia --size 1920x1080 --frames 60 --threads 1
/// vfx bench --filter 'hue:angle=20,invert' --pixel-format nv12
/// vfx bench --filter 'lut:file=grade.cube' --input clip.y4m --json
/// vfx bench --catalog --size 1280x720 --json
/// ```
enum FilterBenchCommand {
    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--catalog") { return try catalog(&arguments) }
        guard let chain = try arguments.option("--filter") else { throw UsageError("bench needs --filter CHAIN") }
        let input = try arguments.option("--input", "-i")
        let size = try arguments.option("--size").map(parseSize)
        let frames = try arguments.intOption("--frames", range: 1...10_000) ?? 60
        let threads = try arguments.intOption("--threads", range: 1...256) ?? 1
        let repeats = try arguments.intOption("--repeats", range: 1...100) ?? 3
        let graph = try arguments.option("--ffmpeg")
        let compare = !arguments.flag("--no-ffmpeg")
        let pixelFormat = try arguments.option("--pixel-format").map { name in
            guard let format = PixelFormat(name: name), FilterBenchmark.pixelFormats.contains(format) else {
                throw UsageError("--pixel-format \(name): the benchmark takes i420 or nv12")
            }
            return format
        } ?? .i420
        let json = arguments.flag("--json")
        try arguments.finish()

        let source: FilterBenchmark.Source
        if let input {
            source = .file(input, width: size?.width, height: size?.height)
        } else {
            let (width, height) = size ?? (1920, 1080)
            source = .generated(width: width, height: height)
        }
        let result = try FilterBenchmark.run(.init(chain: chain, source: source, frames: frames, threads: threads,
                                                   ffmpegGraph: graph, repeats: repeats, compare: compare,
                                                   pixelFormat: pixelFormat))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
            return
        }
        let perFrame = result.processingSeconds / Double(result.frames) * 1000
        print("chain       \(result.chain)  (\(result.width)x\(result.height) \(result.pixelFormat), \(result.frames) frames, \(result.threads) thread(s), \(result.kernels) kernels)")
        print(String(format: "vfx         %.2f ms/frame  %.0f fps (filtering only)", perFrame, result.vfxFramesPerSecond))
        print(String(format: "copy        %.2f ms/frame (a plain copy of the frame); the chain costs %.2f copies",
                     result.copySeconds / Double(result.frames) * 1000, result.copyRatio))
        if let floor = result.floorSeconds {
            print(String(format: "ffmpeg I/O  %.3f s floor", floor))
        }
        if let ffmpeg = result.ffmpegSeconds, let graph = result.ffmpegGraph, let fps = result.ffmpegFramesPerSecond {
            print(String(format: "ffmpeg      %.3f s total, %.2f ms/frame  %.0f fps beyond the floor  (-vf %@)",
                         ffmpeg, 1000 / fps, fps, graph))
        }
        if let ratio = result.ratio {
            print(String(format: "ratio       %.2f× FFmpeg  ((ffmpeg − floor) / (vfx − floor))", ratio))
        }
    }

    /// `vfx bench --catalog [--size WxH] [--frames N] [--max-frames M] [--threads N] [--repeats N] [--only a,b] [--json]`:
    /// one row per filter, printed as it is measured (a Markdown table), or one JSON array at the end. Every filter is
    /// timed on N frames at least; a fast one on more, up to M (`FilterBenchmark.catalogFrameCount`), and its row
    /// says how many.
    ///
    /// ```sh
    /// vfx bench --catalog --size 1920x1080 --frames 30 --max-frames 240 --only hue,gaussian-blur
    /// ```
    static func catalog(_ arguments: inout Arguments) throws {
        let (width, height) = try arguments.option("--size").map(parseSize) ?? (1920, 1080)
        let frames = try arguments.intOption("--frames", range: 1...10_000) ?? 20
        let maxFrames = try arguments.intOption("--max-frames", range: 1...10_000) ?? 240
        let threads = try arguments.intOption("--threads", range: 1...256) ?? 1
        let repeats = try arguments.intOption("--repeats", range: 1...100) ?? 2
        let only = try arguments.option("--only").map { $0.split(separator: ",").map(String.init) } ?? []
        let json = arguments.flag("--json")
        try arguments.finish()
        let options = FilterBenchmark.CatalogOptions(width: width, height: height, frames: frames, maxFrames: maxFrames,
                                                     threads: threads, repeats: repeats, only: only)
        if !json {
            let kernels = FilterKernels.name
            let header = "Catalog at \(width)x\(height), \(threads) thread(s), \(kernels) kernels, \(frames) frames per filter, "
                + "up to \(options.framesHeld) for "
                + "the fast ones (doubled until VideoFX's pass lasts \(FilterBenchmark.CatalogOptions.passSeconds) s); "
                + "ratio = FFmpeg's time beyond its I/O floor (on as many frames) / VideoFX's\n\n"
                + "| filter | family | frames | vfx ms/frame | FFmpeg ms/frame | ratio | FFmpeg graph |\n"
                + "| --- | --- | ---: | ---: | ---: | ---: | --- |\n"
            FileHandle.standardOutput.write(Data(header.utf8))
        }
        let skipped = { (filter: String, reason: String) in
            FileHandle.standardError.write(Data("vfx: \(filter) left out at \(width)x\(height): \(reason)\n".utf8))
        }
        let entries = try FilterBenchmark.catalog(options, skipped: skipped) { entry in
            guard !json else { return }
            let ffmpeg = entry.ffmpegMillisecondsPerFrame.map { String(format: "%.2f", $0) } ?? "—"
            let ratio = entry.ratio.map { String(format: "%.1f×", $0) } ?? "—"
            let graph = entry.ffmpegGraph.map { "`\($0.replacingOccurrences(of: "|", with: "\\|"))`" } ?? "—"
            let name = entry.pixelFormat == "i420" ? entry.name : "\(entry.name) (\(entry.pixelFormat))"
            let line = "| \(name) | \(entry.family) | \(entry.frames) | \(String(format: "%.2f", entry.vfxMillisecondsPerFrame)) "
                + "| \(ffmpeg) | \(ratio) | \(graph) |\n"
            FileHandle.standardOutput.write(Data(line.utf8))   // unbuffered: each row as soon as it is measured
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(entries), as: UTF8.self))
        }
    }

    private static func parseSize(_ text: String) throws -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0,
              width <= 16384, height <= 16384 else {
            throw UsageError("--size must be WIDTHxHEIGHT, got '\(text)'")
        }
        return (width, height)
    }
}
