import Foundation
import VFXNeural

/// How long one `NeuralModel.run` takes: the statistics of timed runs after untimed warm-up runs.
public struct ModelTiming: Sendable, Codable {
    /// The model's file name without `.tflite`.
    public let model: String
    /// Threads the model was loaded with.
    public let threads: Int
    /// Timed runs (warm-up runs excluded).
    public let runs: Int
    /// Untimed runs made first (weights and buffers warm in the caches).
    public let warmupRuns: Int
    /// Median time per run, in milliseconds.
    public let medianMilliseconds: Double
    /// 90th percentile (nearest rank) per run, in milliseconds.
    public let p90Milliseconds: Double
    /// Fastest run, in milliseconds.
    public let minimumMilliseconds: Double

    enum CodingKeys: String, CodingKey {
        case model, threads, runs
        case warmupRuns = "warmup_runs"
        case medianMilliseconds = "median_ms"
        case p90Milliseconds = "p90_ms"
        case minimumMilliseconds = "min_ms"
    }
}

/// Times a neural model's invoke, the way `vfx bench --model` and the LiteRT side of
/// `scripts/bench-neural.sh` both do: fixed inputs, warm-up runs, then `runs` timed runs, one at a time.
///
/// ```swift
/// let model = try NeuralModel(contentsOf: URL(fileURLWithPath: "models/face_landmark.tflite"))
/// let timing = try ModelBenchmark.measure(model, runs: 50)
/// print(timing.medianMilliseconds, timing.p90Milliseconds)
/// ```
public enum ModelBenchmark {
    /// Runs `model` `warmupRuns` times untimed, then `runs` times timed. `inputs` defaults to
    /// `ModelBenchmark.sampleInputs(for:)`.
    public static func measure(_ model: NeuralModel, threads: Int = 1, inputs: [Tensor]? = nil,
                               runs: Int = 50, warmupRuns: Int = 5) throws -> ModelTiming {
        let inputs = inputs ?? sampleInputs(for: model)
        // Outputs go to tensors allocated once, as an application running a model per frame does.
        var outputs = try model.run(inputs)
        for _ in 0..<max(0, warmupRuns) {
            try model.run(inputs, into: &outputs)
        }
        let clock = ContinuousClock()
        var milliseconds: [Double] = []
        milliseconds.reserveCapacity(max(1, runs))
        for _ in 0..<max(1, runs) {
            let start = clock.now
            try model.run(inputs, into: &outputs)
            let elapsed = clock.now - start
            milliseconds.append(Double(elapsed.components.seconds) * 1e3
                + Double(elapsed.components.attoseconds) * 1e-15)
        }
        milliseconds.sort()
        return ModelTiming(model: model.url.deletingPathExtension().lastPathComponent, threads: threads,
                           runs: milliseconds.count, warmupRuns: max(0, warmupRuns),
                           medianMilliseconds: percentile(milliseconds, 0.5),
                           p90Milliseconds: percentile(milliseconds, 0.9),
                           minimumMilliseconds: milliseconds[0])
    }

    /// One tensor per model input, filled with reproducible pseudo-random values in [0, 1): the value
    /// range MediaPipe feeds most of these models.
    public static func sampleInputs(for model: NeuralModel) -> [Tensor] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return model.inputs.map { info in
            let count = info.shape.reduce(1, *)
            let scalars = (0..<count).map { _ -> Float in
                // xorshift64*: the top 24 bits make a uniform float in [0, 1).
                state ^= state >> 12
                state ^= state << 25
                state ^= state >> 27
                return Float((state &* 0x2545_F491_4F6C_DD1D) >> 40) / Float(1 << 24)
            }
            return Tensor(shape: info.shape, scalars: scalars)
        }
    }

    /// The nearest-rank percentile of sorted values (the same rule as scripts/reference/litert_bench.py).
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let rank = max(1, Int((fraction * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }
}
