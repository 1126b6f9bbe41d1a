import Foundation
import VFXCore
import VFXMedia
import VFXVision

/// `vfx bench --vision faces|faces-full|landmarks|segment|segment-landscape --input FILE [--threads N] [--json]`:
/// per-frame time of the analysis alone (from the decoded frame to the result in frame coordinates), median
/// and p90, beside MediaPipe's Python solution on the same frames when its reference environment is installed
/// (`.build/venv-mediapipe`, made by scripts/setup.sh --python; it runs pinned to one core with taskset).
/// `--frames N` limits the frames read (default 300); `--rounds N` alternates the two N times (default 3).
///
/// ```
/// $ ffmpeg -i media/carphone_pristine.mp4 -vf scale=1280:720 /dev/shm/carphone720.y4m
/// $ vfx bench --vision segment --input /dev/shm/carphone720.y4m
/// ```
enum VisionBenchCommand {
    static let kinds = ["faces", "faces-full", "landmarks", "segment", "segment-landscape"]

    struct Timing: Codable {
        var median: Double
        var p90: Double
        var frames: Int
    }

    static func run(_ arguments: inout Arguments) throws {
        guard let kind = try arguments.option("--vision") else { throw UsageError("--vision needs one of \(kinds.joined(separator: ", "))") }
        guard kinds.contains(kind) else { throw UsageError("--vision must be one of \(kinds.joined(separator: ", ")), got '\(kind)'") }
        guard let input = try arguments.option("--input") else { throw UsageError("bench --vision needs --input FILE") }
        let threads = try arguments.intOption("--threads", range: 1...64) ?? 1
        let limit = try arguments.intOption("--frames", range: 1...10_000) ?? 300
        let rounds = try arguments.intOption("--rounds", range: 1...20) ?? 3
        let json = arguments.flag("--json")
        try arguments.finish()

        var frames: [VideoFrame] = []
        let reader = try MediaReader(path: input)
        while frames.count < limit, let frame = try reader.nextFrame() { frames.append(frame) }
        guard let first = frames.first else { throw UsageError("\(input): no frames") }

        // The machine is shared: VideoFX and MediaPipe take turns for `rounds` rounds, and each keeps its
        // best round (lowest median), so a burst of load elsewhere does not decide the comparison.
        var ours: [String: Timing] = [:]
        var names: [String] = []
        var reference: (timing: Timing, version: String)?
        func keep(_ name: String, _ timing: Timing) {
            if !names.contains(name) { names.append(name) }
            if ours[name].map({ $0.median > timing.median }) ?? true { ours[name] = timing }
        }
        for _ in 0..<rounds {
            switch kind {
            case "faces", "faces-full":
                let detector = try FaceDetector(model: kind == "faces" ? .shortRange : .fullRange, threads: threads)
                keep("VideoFX", time(frames) { _ = detector.detect(in: $0) })
            case "landmarks":
                let landmarker = try FaceLandmarker(threads: threads)
                let timing = time(frames) { _ = landmarker.process($0) }
                keep("VideoFX (tracking; detector ran \(landmarker.detectorRuns)x)", timing)
            default:
                let model: PersonSegmenter.Model = kind == "segment" ? .general : .landscape
                let refined = try PersonSegmenter(model: model, threads: threads)
                let raw = try PersonSegmenter(model: model, options: .raw, threads: threads)
                keep("VideoFX refined + smoothed", time(frames) { _ = refined.segment($0) })
                keep("VideoFX --raw", time(frames) { _ = raw.segment($0) })
            }
            if let measured = try mediaPipe(kind: kind, input: input, frames: frames.count),
               reference.map({ $0.timing.median > measured.timing.median }) ?? true {
                reference = measured
            }
        }
        var results = names.compactMap { name in ours[name].map { (name, $0) } }
        if let reference { results.append(("MediaPipe \(reference.version) Python", reference.timing)) }

        if json {
            var fields: [String: Any] = ["kind": kind, "input": input, "width": first.width, "height": first.height,
                                         "frames": frames.count, "threads": threads, "rounds": rounds]
            fields["results"] = results.map { ["name": $0.0, "median_ms": $0.1.median, "p90_ms": $0.1.p90] }
            if let reference {
                fields["ratio"] = results[0].1.median / reference.timing.median
            }
            let data = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("\(kind) on \(input) (\(first.width)x\(first.height), \(frames.count) frames), \(threads) thread\(threads == 1 ? "" : "s"), "
              + "best of \(rounds) alternating rounds, ms per frame:")
        for (name, timing) in results {
            print("  " + name.padding(toLength: 48, withPad: " ", startingAt: 0)
                  + String(format: " median %7.3f   p90 %7.3f", timing.median, timing.p90))
        }
        if let reference {
            print(String(format: "  VideoFX / MediaPipe (median): %.2f×", results[0].1.median / reference.timing.median))
        } else {
            print("  (MediaPipe not measured: no .build/venv-mediapipe; run scripts/setup.sh --python)")
        }
    }

    /// Runs `body` on every frame after 5 untimed warm-up frames; median and p90 (nearest rank) in ms.
    static func time(_ frames: [VideoFrame], _ body: (VideoFrame) -> Void) -> Timing {
        for frame in frames.prefix(5) { body(frame) }
        var milliseconds: [Double] = []
        for frame in frames {
            let start = DispatchTime.now().uptimeNanoseconds
            body(frame)
            milliseconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        milliseconds.sort()
        func rank(_ fraction: Double) -> Double { milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * fraction))] }
        return Timing(median: rank(0.5), p90: rank(0.9), frames: milliseconds.count)
    }

    /// MediaPipe's time on the same input (scripts/reference/vision_bench.py), or nil without its environment.
    static func mediaPipe(kind: String, input: String, frames: Int) throws -> (timing: Timing, version: String)? {
        let root = VisionModels.directory.deletingLastPathComponent()
        let python = root.appendingPathComponent(".build/venv-mediapipe/bin/python").path
        let script = root.appendingPathComponent("scripts/reference/vision_bench.py").path
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: script) else { return nil }
        let process = Process()
        var command = [python, "-W", "ignore", script, kind, input, "--frames", String(frames)]
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") { command = ["/usr/bin/taskset", "-c", "0"] + command }
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let fields = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let median = fields["median_ms"] as? Double, let p90 = fields["p90_ms"] as? Double else {
            throw UsageError("MediaPipe's benchmark failed on \(input) (scripts/reference/vision_bench.py \(kind))")
        }
        return (Timing(median: median, p90: p90, frames: fields["frames"] as? Int ?? 0), fields["mediapipe"] as? String ?? "")
    }
}
