import Foundation
import VFXBench
import VFXNeural

/// `bench`: the benchmark suite behind docs/performance.md. Each section runs VideoFX and its reference
/// (FFmpeg) side by side in the same run and prints a markdown table.
///
///     bench [filters] [media] [models] [--frames N] [--repeats N]
///
/// With no section named, all three run. The models section times VideoFX only; LiteRT's column comes from
/// scripts/bench-neural.sh (it needs the Python reference environment).
struct BenchSuite {
    var sections: Set<String> = []
    var frames = 60
    var repeats = 3

    static let usage = "usage: bench [filters] [media] [models] [--frames N] [--repeats N]"

    init(arguments: [String]) throws {
        var words = arguments[...]
        while let word = words.popFirst() {
            switch word {
            case "filters", "media", "models": sections.insert(word)
            case "--frames", "--repeats":
                guard let text = words.popFirst(), let value = Int(text), value > 0 else {
                    throw BenchUsage(message: "\(word) needs a positive integer")
                }
                if word == "--frames" { frames = value } else { repeats = value }
            default: throw BenchUsage(message: "unknown argument '\(word)'")
            }
        }
        if sections.isEmpty { sections = ["filters", "media", "models"] }
    }

    /// The target rows: 1080p, one thread, the same y4m clip.
    func filters() throws {
        let clip = try Clips.bigBuckBunny1080p()
        let cube = try Clips.gradeCube()
        let rows: [(chain: String, target: Double)] = [
            ("sepia", 4), ("lut:file=\(cube)", 8), ("gaussian-blur:radius=20", 1.5),
            ("sepia,gaussian-blur:radius=5,vignette", 4),
        ]
        print("| chain (1080p, 1 thread) | VideoFX fps | FFmpeg fps | ratio | target |")
        print("| --- | --- | --- | --- | --- |")
        for row in rows {
            let result = try FilterBenchmark.run(.init(chain: row.chain, source: .file(clip, width: nil, height: nil),
                                                       frames: frames, threads: 1, repeats: repeats))
            let name = row.chain.replacingOccurrences(of: cube, with: "grade33.cube")
            print(String(format: "| `%@` | %.0f | %.0f | %.1f× | %.1f× |", name as NSString, result.vfxFramesPerSecond,
                         result.ffmpegFramesPerSecond ?? 0, result.ratio ?? 0, row.target))
        }
    }

    func media() throws {
        let clip = try Clips.bigBuckBunny720p()
        let result = try MediaBenchmark.compare(input: clip, folder: Clips.folder, repeats: repeats)
        print("| pass-through, 720p y4m → y4m, 1 thread | VideoFX fps | FFmpeg fps | ratio | target |")
        print("| --- | --- | --- | --- | --- |")
        print(String(format: "| bigbuckbunny 1280×720, %d frames | %.0f | %.0f | %.2f× | ≥ 0.5× |", result.videoFX.frames,
                     result.videoFX.framesPerSecond, result.ffmpeg.framesPerSecond, result.ratio))
    }

    func models() throws {
        print("| model (1 thread) | median ms | p90 ms |")
        print("| --- | --- | --- |")
        for name in ["face_detection_short_range", "face_detection_full_range_sparse", "face_landmark", "selfie_segmentation",
                     "selfie_segmentation_landscape", "palm_detection_lite", "hand_landmark_lite"] {
            let model = try NeuralModel(contentsOf: URL(fileURLWithPath: "models/\(name).tflite"))
            let timing = try ModelBenchmark.measure(model, threads: 1, runs: 100)
            print(String(format: "| %@ | %.2f | %.2f |", name as NSString, timing.medianMilliseconds, timing.p90Milliseconds))
        }
    }
}

struct BenchUsage: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The clips the suite runs on, made once with the `ffmpeg` command from the sample media (in RAM).
enum Clips {
    static let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()

    static func bigBuckBunny720p() throws -> String {
        try make("vfx-bench-bbb-720p.y4m", ["-i", "media/bigbuckbunny.mp4", "-f", "yuv4mpegpipe"])
    }

    static func bigBuckBunny1080p() throws -> String {
        try make("vfx-bench-bbb-1080p.y4m", ["-i", "media/bigbuckbunny.mp4", "-vf", "scale=1920:1080", "-frames:v", "60",
                                            "-f", "yuv4mpegpipe"])
    }

    /// A 33³ `.cube` color grade (warm highlights, cool shadows, a gentle S-curve).
    static func gradeCube() throws -> String {
        let path = folder + "/vfx-bench-grade33.cube"
        var text = "TITLE \"bench grade\"\nLUT_3D_SIZE 33\n"
        for b in 0..<33 { for g in 0..<33 { for r in 0..<33 {
            let rgb = [r, g, b].map { Double($0) / 32 }
            let luma = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
            let curve = { (v: Double) in v * v * (3 - 2 * v) * 0.6 + v * 0.4 }
            let out = [curve(rgb[0]) + 0.04 * luma, curve(rgb[1]), curve(rgb[2]) + 0.05 * (1 - luma)].map { min(max($0, 0), 1) }
            text += String(format: "%.6f %.6f %.6f\n", out[0], out[1], out[2])
        } } }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func make(_ name: String, _ arguments: [String]) throws -> String {
        let path = folder + "/" + name
        if !FileManager.default.fileExists(atPath: path) {
            try FilterBenchmark.runFFmpeg(["-v", "error", "-y"] + arguments + [path])
        }
        return path
    }
}

do {
    let suite = try BenchSuite(arguments: Array(CommandLine.arguments.dropFirst()))
    for section in ["media", "filters", "models"] where suite.sections.contains(section) {
        print("\n## \(section)\n")
        switch section {
        case "media": try suite.media()
        case "filters": try suite.filters()
        default: try suite.models()
        }
    }
} catch let error as BenchUsage {
    print("bench: error: \(error)\n\(BenchSuite.usage)")
    exit(2)
} catch {
    print("bench: error: \(error)")
    exit(1)
}
