import Foundation
import VFXBench

/// `vfx bench`: times a filter chain (`--filter`), a model (`--model`) or media pass-through
/// (`--passthrough`), beside FFmpeg or LiteRT's numbers where there is an equivalent.
///
/// ```sh
/// vfx bench --filter sepia --size 1920x1080 --threads 1
/// vfx bench --model models/selfie_segmentation.tflite --runs 200 --json
/// vfx bench --passthrough /dev/shm/clip.y4m
/// ```
enum BenchCommand {
    static let help = """
        usage: vfx bench --filter CHAIN [--input X.y4m | --size WxH] [--frames N] [--threads N] [--pixel-format i420|nv12]
                         [--ffmpeg GRAPH | --no-ffmpeg] [--json]
               vfx bench --catalog [--size WxH] [--frames N] [--max-frames M] [--threads N] [--repeats N] [--only NAME,…] [--json]
               vfx bench --model MODEL.tflite [--threads N] [--runs N] [--warmup N] [--json]
               vfx bench --passthrough INPUT [--repeats N] [--json]
               vfx bench --vision faces|faces-full|landmarks|segment|segment-landscape --input FILE [--threads N] [--json]
               vfx bench --audio-filter CHAIN --input FILE [--block N] [--repeats N] [--no-ffmpeg] [--json]

          --filter       time a chain on a y4m clip or a generated frame, beside FFmpeg's equivalent graph
                         (--pixel-format nv12: both sides on NV12 frames, as cameras deliver them; default i420)
          --catalog      time every filter of the catalog (its example), beside FFmpeg's equivalent where it has one:
                         each on N frames (--frames, default 20), a fast one on more (N doubled until VideoFX's pass
                         lasts 0.1 s, at most M: --max-frames, default 240, and at most 1 GiB of frames in memory),
                         FFmpeg's floor on as many frames; each row says its count
          --model        time one invoke of a TFLite model on VideoFX's interpreter
          --passthrough  read every frame of INPUT and write it to y4m, beside `ffmpeg -i INPUT -f yuv4mpegpipe`
                         (one thread each, best of --repeats; files go to a private folder in /dev/shm,
                         removed on any exit)
          --vision       time face detection, face mesh tracking or segmentation per frame, beside MediaPipe
          --audio-filter time an audio chain on FILE's audio (× real time, one thread), beside FFmpeg's
                         nearest filter
        """

    static func run(_ arguments: inout Arguments) throws {
        // Benchmarks keep their files in private folders in /dev/shm: a signal removes them before exiting,
        // and errors remove them on the way out (`BenchWorkspace`).
        let interrupt = InterruptHandler(cleanup: { BenchWorkspace.removeAll() })
        defer { interrupt.restore() }
        let words = arguments.words
        func has(_ name: String) -> Bool { words.contains { $0 == name || $0.hasPrefix(name + "=") } }
        if has("--vision") {
            try VisionBenchCommand.run(&arguments)
        } else if has("--model") {
            try ModelBenchCommand.run(&arguments)
        } else if has("--passthrough") {
            try passThrough(&arguments)
        } else if has("--audio-filter") {
            try AudioBenchCommand.run(&arguments)
        } else if has("--filter") || has("--catalog") {
            try FilterBenchCommand.run(&arguments)
        } else if arguments.flag("--help", "-h") {
            print(help)
        } else {
            throw UsageError("bench needs --filter CHAIN, --catalog, --model MODEL, --passthrough INPUT or --vision KIND (vfx bench --help)")
        }
    }

    static func passThrough(_ arguments: inout Arguments) throws {
        guard let input = try arguments.option("--passthrough") else { throw UsageError("--passthrough needs an input") }
        let repeats = try arguments.intOption("--repeats", range: 1...100) ?? 5
        let json = arguments.flag("--json")
        try arguments.finish()
        let workspace = try BenchWorkspace()
        defer { workspace.remove() }
        let result = try MediaBenchmark.compare(input: input, folder: workspace.folder, repeats: repeats)
        if json {
            let fields: [String: Any] = [
                "input": input, "frames": result.videoFX.frames, "repeats": repeats,
                "vfx_fps": result.videoFX.framesPerSecond, "ffmpeg_fps": result.ffmpeg.framesPerSecond,
                "ratio": result.ratio, "cpu_ratio": result.cpuRatio,
            ]
            let data = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("pass-through of \(input), one thread each, best of \(repeats): \(result)")
        }
    }
}
