/// An exact time: `value / timescale` seconds, as media containers store it.
///
/// ```swift
/// let t = MediaTime(value: 3003, timescale: 30000)   // 0.1001 s
/// t.seconds                                          // 0.1001
/// ```
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int32

    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    /// Time zero in a microsecond timescale.
    public static let zero = MediaTime(value: 0, timescale: 1_000_000)

    /// The time in seconds.
    public var seconds: Double { Double(value) / Double(timescale) }

    /// The same time in another timescale, rounded to the nearest tick.
    public func converted(to newScale: Int32) -> MediaTime {
        if newScale == timescale { return self }
        let scaled = (Double(value) * Double(newScale) / Double(timescale)).rounded()
        return MediaTime(value: Int64(scaled), timescale: newScale)
    }

    public static func < (a: MediaTime, b: MediaTime) -> Bool {
        // Cross-multiplication is exact for the timescales media uses (at most 2^31).
        Int64(a.value).multipliedFullWidth(by: Int64(b.timescale)) < Int64(b.value).multipliedFullWidth(by: Int64(a.timescale))
    }

    public static func == (a: MediaTime, b: MediaTime) -> Bool {
        Int64(a.value).multipliedFullWidth(by: Int64(b.timescale)) == Int64(b.value).multipliedFullWidth(by: Int64(a.timescale))
    }

    /// The sum, in the finer of the two timescales.
    public static func + (a: MediaTime, b: MediaTime) -> MediaTime {
        let scale = max(a.timescale, b.timescale)
        return MediaTime(value: a.converted(to: scale).value + b.converted(to: scale).value, timescale: scale)
    }

    /// The difference, in the finer of the two timescales.
    public static func - (a: MediaTime, b: MediaTime) -> MediaTime {
        let scale = max(a.timescale, b.timescale)
        return MediaTime(value: a.converted(to: scale).value - b.converted(to: scale).value, timescale: scale)
    }

    /// The time multiplied by `numerator / denominator`, exact when the timescale allows it (halving a frame
    /// duration for interpolation: `duration.scaled(1, 2)`).
    public func scaled(_ numerator: Int64, _ denominator: Int64) -> MediaTime {
        precondition(denominator > 0, "MediaTime.scaled needs a positive denominator")
        let product = value * numerator
        if product % denominator == 0 { return MediaTime(value: product / denominator, timescale: timescale) }
        // Refine the timescale so the result stays exact, as long as it fits.
        let refined = Int64(timescale) * denominator
        if refined <= Int64(Int32.max) { return MediaTime(value: product, timescale: Int32(refined)) }
        return MediaTime(value: Int64((Double(product) / Double(denominator)).rounded()), timescale: timescale)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(seconds) }

    public var description: String { "\(value)/\(timescale)" }
}

/// Frames per second as an exact fraction (30000/1001 for NTSC's 29.97).
public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int
    public var denominator: Int

    public init(_ numerator: Int, _ denominator: Int = 1) {
        self.numerator = numerator
        self.denominator = denominator
    }

    public var framesPerSecond: Double { Double(numerator) / Double(denominator) }
    /// The duration of one frame.
    public var frameDuration: MediaTime { MediaTime(value: Int64(denominator), timescale: Int32(clamping: numerator)) }
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }
}
