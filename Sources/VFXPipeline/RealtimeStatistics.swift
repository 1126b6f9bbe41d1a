import Foundation

/// What a real-time run has done so far: frames in and out, drops, end-to-end latency and per-stage
/// timings as histograms (p50/p95/p99 within 1 %), and the rates over the last report interval.
///
/// ```swift
/// let stats = runner.snapshot
/// print(stats.json)    // {"frames_in": 300, "frames_out": 300, "drops": 0, "latency_ms": {"p50": 4.1, …}, …}
/// print(stats.statusLine)
/// ```
public struct RealtimeStatistics: Sendable {
    /// Seconds since the run started.
    public var elapsed: Double
    /// Frames the source delivered.
    public var framesIn: Int
    /// Frames handed to the sink.
    public var framesOut: Int
    /// Frames dropped to keep up: replaced by a newer one before processing, or lost while a sink reconnected.
    public var drops: Int
    /// Frames whose processing took longer than the budget.
    public var overBudget: Int
    /// Seconds per frame the source's rate allows.
    public var budget: Double
    /// Capture → handed to the sink, per output frame.
    public var latency: StageTiming
    /// `source` (reading or decoding), `process` (the whole chain), `sink` (encoding and writing), then each
    /// analysis that runs beside the chain, by its name.
    public var stages: [StageTiming]
    /// Frames per second in and out over the last interval (the whole run in the final report).
    public var fpsIn: Double
    public var fpsOut: Double
    /// True for the report made when the run ended.
    public var final: Bool

    /// One JSON object on one line: `frames_in`, `frames_out`, `drops`, `latency_ms` {`p50`, `p95`, `p99`},
    /// and per stage the same percentiles under `stages`.
    public var json: String {
        func percentiles(_ timing: StageTiming) -> String {
            String(format: "{\"p50\": %.3f, \"p95\": %.3f, \"p99\": %.3f}", timing.percentile(0.5) * 1000,
                   timing.percentile(0.95) * 1000, timing.percentile(0.99) * 1000)
        }
        let stageText = stages.map { "\"\($0.name)\": \(percentiles($0))" }.joined(separator: ", ")
        return String(format: "{\"time\": %.3f, \"frames_in\": %ld, \"frames_out\": %ld, \"drops\": %ld, \"over_budget\": %ld, "
                      + "\"fps_in\": %.2f, \"fps_out\": %.2f, \"budget_ms\": %.3f, ", elapsed, framesIn, framesOut, drops,
                      overBudget, fpsIn, fpsOut, budget * 1000)
            + "\"latency_ms\": \(percentiles(latency)), \"stages\": {\(stageText)}, \"final\": \(final)}"
    }

    /// A short status line: fps, drops, latency, the slowest stage.
    public var statusLine: String {
        let slowest = stages.max { $0.percentile(0.95) < $1.percentile(0.95) }
        var line = String(format: "in %.1f fps, out %.1f fps, %ld dropped, latency p50 %.1f ms p99 %.1f ms", fpsIn, fpsOut, drops,
                          latency.percentile(0.5) * 1000, latency.percentile(0.99) * 1000)
        if let slowest, slowest.count > 0 {
            line += String(format: ", slowest %@ p95 %.1f ms", slowest.name, slowest.percentile(0.95) * 1000)
        }
        return line
    }
}

/// The counters and histograms a run updates from its three threads, behind one lock.
final class RealtimeMonitor: @unchecked Sendable {
    // Sendable: every stored property is read and written only while holding `lock`.
    enum Stage: Int { case source, process, sink }
    private let lock = NSLock()
    private var started = DispatchTime.now().uptimeNanoseconds
    private var framesIn = 0
    private var framesOut = 0
    private var drops = 0
    private var overBudget = 0
    private var latency = StageTiming(name: "latency")
    private var stages = [StageTiming(name: "source"), StageTiming(name: "process"), StageTiming(name: "sink")]
    private var lastRates: (time: UInt64, framesIn: Int, framesOut: Int)?

    func start() {
        lock.lock()
        started = DispatchTime.now().uptimeNanoseconds
        lastRates = (started, 0, 0)
        lock.unlock()
    }

    /// Adds a stage (an analysis beside the chain) and returns its index for `record(stage:seconds:)`.
    func addStage(_ name: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        stages.append(StageTiming(name: name))
        return stages.count - 1
    }

    func record(stage index: Int, seconds: Double) {
        lock.lock()
        stages[index].record(seconds: seconds)
        lock.unlock()
    }

    func record(_ stage: Stage, seconds: Double, budget: Double?) {
        lock.lock()
        stages[stage.rawValue].record(seconds: seconds)
        if let budget, seconds > budget { overBudget += 1 }
        lock.unlock()
    }

    func noteCaptured() {
        lock.lock()
        framesIn += 1
        lock.unlock()
    }

    func noteDrop() {
        lock.lock()
        drops += 1
        lock.unlock()
    }

    func noteWritten(latency seconds: Double?) {
        lock.lock()
        framesOut += 1
        if let seconds { latency.record(seconds: seconds) }
        lock.unlock()
    }

    /// The statistics now; the rates cover the time since the previous `advancing` call (the whole run when
    /// `final`).
    func statistics(budget: Double, final: Bool = false, advancing: Bool = false) -> RealtimeStatistics {
        lock.lock()
        defer { lock.unlock() }
        let now = DispatchTime.now().uptimeNanoseconds
        let elapsed = Double(now - started) / 1e9
        let since = final ? (started, 0, 0) : (lastRates ?? (started, 0, 0))
        let interval = max(Double(now - since.0) / 1e9, 1e-9)
        let fpsIn = Double(framesIn - since.1) / interval
        let fpsOut = Double(framesOut - since.2) / interval
        if advancing { lastRates = (now, framesIn, framesOut) }
        return RealtimeStatistics(elapsed: elapsed, framesIn: framesIn, framesOut: framesOut, drops: drops,
                                  overBudget: overBudget, budget: budget, latency: latency, stages: stages,
                                  fpsIn: fpsIn, fpsOut: fpsOut, final: final)
    }
}
