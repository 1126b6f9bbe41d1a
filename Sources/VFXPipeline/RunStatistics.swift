import Foundation

/// Durations of one stage, kept as a histogram: memory stays the same however many frames run.
///
/// Durations fall into buckets 1 % wide on a log scale from 1 µs to 1000 s, so a percentile is within 1 % of
/// the true sample; the mean, minimum and maximum are exact.
///
/// ```swift
/// var t = StageTiming(name: "process")
/// t.record(seconds: 0.004)
/// t.percentile(0.95)   // 0.004 (within 1 %)
/// ```
public struct StageTiming: Sendable, CustomStringConvertible {
    public let name: String
    /// Samples recorded.
    public private(set) var count = 0
    /// Sum of all samples in seconds.
    public private(set) var total = 0.0
    public private(set) var minimum = Double.infinity
    public private(set) var maximum = 0.0
    private var buckets: [UInt32] = []

    private static let smallest = 1e-6
    private static let growth = 1.01
    private static let bucketCount = Int((log(1e9) / log(growth)).rounded(.up)) + 1

    public init(name: String) { self.name = name }

    public mutating func record(seconds: Double) {
        if buckets.isEmpty { buckets = Array(repeating: 0, count: Self.bucketCount) }
        let value = max(seconds, 0)
        count += 1
        total += value
        minimum = min(minimum, value)
        maximum = max(maximum, value)
        buckets[Self.bucket(of: value)] &+= 1
    }

    public var mean: Double { count == 0 ? 0 : total / Double(count) }

    /// The `q` quantile (0…1) in seconds, nearest rank, to within 1 % (exact at the minimum and maximum).
    public func percentile(_ q: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = min(max(Int((q * Double(count)).rounded(.up)), 1), count)
        if rank == 1 { return minimum }
        if rank == count { return maximum }
        var seen = 0
        for (index, n) in buckets.enumerated() {
            seen += Int(n)
            if seen >= rank {
                // The bucket's geometric middle, kept inside what was actually seen.
                let middle = Self.smallest * pow(Self.growth, Double(index) + 0.5)
                return min(max(middle, minimum), maximum)
            }
        }
        return maximum
    }

    private static func bucket(of seconds: Double) -> Int {
        guard seconds > smallest else { return 0 }
        return min(Int(log(seconds / smallest) / log(growth)), bucketCount - 1)
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
    /// Frames the processor consumed without emitting as many (frames in minus frames out, when positive).
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
