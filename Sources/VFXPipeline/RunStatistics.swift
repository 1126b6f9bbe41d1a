import Foundation

/// Durations of one stage, one sample per frame.
///
/// ```swift
/// var t = StageTiming(name: "process")
/// t.record(seconds: 0.004)
/// t.percentile(0.95)   // 0.004
/// ```
public struct StageTiming: Sendable, CustomStringConvertible {
    public let name: String
    public private(set) var samples: [Double] = []

    public init(name: String) { self.name = name }

    public mutating func record(seconds: Double) { samples.append(seconds) }

    /// Sum of all samples in seconds.
    public var total: Double { samples.reduce(0, +) }
    public var mean: Double { samples.isEmpty ? 0 : total / Double(samples.count) }

    /// The `q` quantile (0…1) in seconds, nearest rank.
    public func percentile(_ q: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    public var description: String {
        String(format: "%@ %.2f ms/frame (p50 %.2f, p95 %.2f, p99 %.2f)", name, mean * 1000,
               percentile(0.5) * 1000, percentile(0.95) * 1000, percentile(0.99) * 1000)
    }
}

/// What a run did: frames in and out, wall time, and per-stage timings.
public struct RunStatistics: Sendable {
    public var framesRead = 0
    public var framesWritten = 0
    /// Frames a processor returned nil for.
    public var framesDropped = 0
    public var wallSeconds = 0.0
    public var decode = StageTiming(name: "decode")
    public var process = StageTiming(name: "process")
    public var encode = StageTiming(name: "encode")

    public init() {}

    /// Output frames per second of wall time.
    public var framesPerSecond: Double { wallSeconds > 0 ? Double(framesWritten) / wallSeconds : 0 }
}

/// Progress of a run, reported after each written frame.
public struct RunProgress: Sendable {
    public let framesWritten: Int
    /// Frames the source said it has, when known.
    public let expectedFrames: Int?
    public let elapsedSeconds: Double

    public var framesPerSecond: Double { elapsedSeconds > 0 ? Double(framesWritten) / elapsedSeconds : 0 }

    /// Seconds left at the current speed, when the total is known.
    public var estimatedSecondsLeft: Double? {
        guard let expectedFrames, framesWritten > 0 else { return nil }
        return Double(max(expectedFrames - framesWritten, 0)) / framesPerSecond
    }
}
