import Foundation
import VFXBench
import VFXNeural

/// `vfx bench --model MODEL [--threads N] [--runs N] [--warmup N] [--json]`: times one invoke of a
/// TFLite model (median and 90th percentile over the timed runs; warm-up runs are not counted).
///
/// ```
/// $ vfx bench --model models/face_landmark.tflite --runs 100 --json
/// {"median_ms":1.21,"min_ms":1.18,"model":"face_landmark","p90_ms":1.3,"runs":100,"threads":1,"warmup_runs":5}
/// ```
enum ModelBenchCommand {
    static let usage = """
        usage: vfx bench --model MODEL.tflite [--threads N] [--runs N] [--warmup N] [--json]

        Times NeuralModel.run on reproducible inputs in [0, 1): median and 90th percentile in ms.
          --threads N   threads for the model (default 1)
          --runs N      timed runs (default 50)
          --warmup N    untimed runs first (default 5)
          --json        one JSON object: model, threads, runs, warmup_runs, median_ms, p90_ms, min_ms
        """

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") {
            print(usage)
            return
        }
        let path = try arguments.option("--model") ?? arguments.positional("MODEL")
        let threads = try arguments.intOption("--threads", range: 1...256) ?? 1
        let runs = try arguments.intOption("--runs", range: 1...100_000) ?? 50
        let warmup = try arguments.intOption("--warmup", range: 0...100_000) ?? 5
        let json = arguments.flag("--json")
        try arguments.finish()

        let model = try ModelCommand.load(path, threads: threads)
        let timing = try ModelBenchmark.measure(model, threads: threads, runs: runs, warmupRuns: warmup)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(timing), as: UTF8.self))
        } else {
            func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
            print("\(timing.model): median \(ms(timing.medianMilliseconds)), p90 \(ms(timing.p90Milliseconds)), "
                + "min \(ms(timing.minimumMilliseconds)) (\(timing.runs) runs after \(timing.warmupRuns) warm-up, "
                + "\(timing.threads) thread\(timing.threads == 1 ? "" : "s"))")
        }
    }
}
